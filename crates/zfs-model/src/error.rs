//! Errors of the model. Each message names the offending input and, where there
//! is a fixed set of choices, the accepted values, so the binary can print it as
//! a one-line diagnostic.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum ModelError {
    #[error("'{input}': {reason}")]
    InvalidSize { input: String, reason: String },

    #[error("'{input}': unknown unit '{unit}'; accepted: B, KB, MB, GB, TB, PB (decimal), KiB, MiB, GiB, TiB, PiB or K, M, G, T, P (binary)")]
    UnknownUnit { input: String, unit: String },

    #[error("no disks given; describe them as COUNTxSIZE, e.g. 24x8TB")]
    NoDisks,

    #[error("'{input}': unknown disk class; accepted: {accepted}")]
    UnknownDiskClass { input: String, accepted: String },

    #[error("'{input}': {reason}")]
    InvalidDiskGroup { input: String, reason: String },

    #[error("'{input}': {reason}")]
    InvalidLayout { input: String, reason: String },

    #[error("layout {layout} does not fit the disks: {reason}")]
    LayoutDoesNotFit { layout: String, reason: String },

    #[error("no mirror or raidz layout fits: {reason}")]
    NoLayoutFits { reason: String },

    #[error("'{input}': unknown {what}; accepted: {accepted}")]
    UnknownChoice {
        what: &'static str,
        input: String,
        accepted: String,
    },

    #[error("'{input}': {reason}")]
    InvalidValue { input: String, reason: String },
}

pub type Result<T> = std::result::Result<T, ModelError>;

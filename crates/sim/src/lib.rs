//! Predict what a `sysbench fileio` run would measure on a system that is not
//! at hand: a client (protocol, CPU), a network link, a ZFS server (RAM/ARC,
//! CPU, ZIL, txg) and a pool of modelled disks.
//!
//! The workload is fileio's own validated [`fileio::options::RunSpec`] and its
//! request generator, so one seed gives the same request stream as a real run;
//! the disks are zfs-model's [`zfs_model::diskmodel`] models, the ones the
//! lab's FUSE disks use. The output is fileio's [`fileio::result::RunResult`]
//! marked [`fileio::result::ResultKind::Predicted`].
//!
//! Parameters, defaults and their sources: `docs/prediction.md`.

pub mod calibrate;
pub mod components;
pub mod engine;
pub mod limits;
pub mod matrix;
pub mod plan_model;
pub mod profile;
pub mod queue;
pub mod report;
pub mod system;

pub use engine::{
    simulate, simulate_traced, simulate_with_utilisation, simulate_within, Issued, Utilisation,
};
pub use limits::{Budget, LimitError};
pub use system::{System, SystemModel};

/// Why a prediction could not be made. Each message is one line naming the
/// field or option and what is accepted.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SimError {
    #[error("system model: {0}")]
    System(String),
    #[error("system model is not valid TOML: {0}")]
    Toml(String),
    #[error("{0}")]
    Unsupported(String),
    /// Beyond what the simulator takes on (threads, time, events, cells).
    #[error("{0}")]
    Limit(#[from] LimitError),
    /// Simulated time stopped advancing: the requests cost nothing.
    #[error("simulate: simulated time stopped at {at_s:.6} s: {events} fileio events in a row cost 0 ns ({fields}); give the system's requests a cost above 0")]
    Stalled {
        at_s: f64,
        events: u64,
        fields: String,
    },
}

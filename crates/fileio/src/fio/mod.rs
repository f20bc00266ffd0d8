//! fio's job language, run with fileio's own engines (`tankbench fio`).
//!
//! Data flows one way through the modules:
//!
//! - [`parse`]: job files and command-line words to sections of settings
//!   as written (fio's ini rules, `include`, `${VAR}`);
//! - [`settings`]: the supported options, one row each, and the typed
//!   settings of a job; [`value`]: fio's size, time and number syntax;
//! - [`job`]: sections to typed jobs in reporting groups;
//! - [`error`]: why a job is refused, one line each.

pub mod command;
pub mod error;
pub mod execute;
pub mod job;
pub mod layout;
pub mod parse;
pub mod plan;
pub mod predict;
pub mod report;
pub mod settings;
pub mod value;

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
//! Parameters, defaults and their sources: docs/model-reference.md (its table is generated from crate::params).

pub mod baseline;
pub mod calibrate;
pub mod components;
pub mod convergence;
pub mod engine;
mod event;
pub mod from_result;
pub mod limits;
pub mod matrix;
pub mod notes;
pub mod params;
pub mod plan_model;
pub mod profile;
pub mod queue;
pub mod run_to_run;
mod server;
pub mod sourced_ranges;
pub mod structural;
pub mod system;
pub mod uncertainty;

pub use convergence::RunOptions;
pub use engine::{Issued, Simulated, Simulation, Utilisation};
pub use limits::{Budget, LimitError};
pub use system::{System, SystemModel};

pub use matrix::MatrixError;

/// One refused field of a system file: the dotted field (`pool.layout`,
/// `server.cores`, `log`) and what is wrong with its value, naming the value
/// and what is accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct FieldError {
    pub field: String,
    pub problem: String,
}

impl FieldError {
    pub(crate) fn new(field: impl Into<String>, problem: impl Into<String>) -> FieldError {
        FieldError {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

/// A workload the simulator does not model; `option` is the fileio option
/// (or system field) to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct NotModelled {
    pub option: &'static str,
    pub message: String,
}

/// Why calibration refused its input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrateError {
    #[error("stopped after {max} simulations without an answer; fit fewer parameters (--fit) or give fewer runs")]
    TooManySimulations { max: usize },
    #[error("{runs} different runs given; at most {max} are fitted at once (each step of the fit simulates every run); give the runs that differ most")]
    TooManyRuns { runs: usize, max: usize },
    #[error("no parameter to fit; accepted: {accepted}")]
    NoParameters { accepted: String },
    #[error("no measured runs given (RESULTS: result files or store directories)")]
    NoRuns,
}

/// Why a prediction could not be made. Each message is one line naming the
/// field or option and what is accepted, without the command's own prefix
/// (`simulate: `), which the caller adds; callers match on the variant (the
/// field, the option) rather than reading the text.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SimError {
    /// A field of the system model is refused.
    #[error("system model: {0}")]
    Field(FieldError),
    #[error("system model is not valid TOML: {0}")]
    Toml(String),
    /// A profile names a parameter calibration does not fit.
    #[error("system model: profile: unknown parameter '{name}'; accepted: {accepted}")]
    UnknownParameter { name: String, accepted: String },
    /// A profile's fitted value of `parameter` is refused.
    #[error("system model: profile: {parameter}: {problem}")]
    Profile { parameter: String, problem: String },
    /// A matrix file, its axes or one of its cells.
    #[error("system model: matrix: {0}")]
    Matrix(#[from] MatrixError),
    /// The workload's options are refused by fileio.
    #[error("{0}")]
    Workload(#[from] fileio::workload::WorkloadError),
    /// A workload the simulator does not model.
    #[error("{0}")]
    NotModelled(#[from] NotModelled),
    /// A measured run (named by `id`, its file) calibration cannot fit.
    #[error("{id}: {reason}")]
    Measurement { id: String, reason: String },
    /// Calibration's input.
    #[error("calibrate: {0}")]
    Calibrate(#[from] CalibrateError),
    /// Beyond what the simulator takes on (threads, time, events, cells).
    #[error("{0}")]
    Limit(#[from] LimitError),
    /// Simulated time stopped advancing: the requests cost nothing.
    #[error("simulated time stopped at {at_s:.6} s: {events} fileio events in a row cost 0 ns ({fields}); give the system's requests a cost above 0")]
    Stalled {
        at_s: f64,
        events: u64,
        fields: String,
    },
    /// A measured run refused as the baseline of a prediction from a
    /// measurement (named by `id`, as given).
    #[error("baseline {id}: {problem}")]
    Baseline {
        id: String,
        problem: baseline::BaselineError,
    },
    /// A matrix cell's prediction did not come back (its thread panicked).
    #[error("a matrix cell was not predicted (its thread failed)")]
    CellLost,
}

impl From<FieldError> for SimError {
    fn from(e: FieldError) -> SimError {
        SimError::Field(e)
    }
}

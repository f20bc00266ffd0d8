//! Why a fio job is refused, or could not run: each a typed value whose
//! message is one line naming where (file and line, or the command line),
//! the option, and what is accepted.

use crate::text::printable;
use std::path::PathBuf;

/// Where a setting was written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Origin {
    /// The job file, or `None` for the command line.
    pub file: Option<PathBuf>,
    /// 1-based line in the file (0 on the command line).
    pub line: usize,
}

impl Origin {
    pub fn command_line() -> Origin {
        Origin::default()
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.file {
            Some(path) => write!(
                f,
                "{}:{}",
                printable(&path.display().to_string()),
                self.line
            ),
            None => f.write_str("command line"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FioError {
    /// The job file's layout: a setting outside a section, a section in an
    /// included file, an unreadable include.
    #[error("{origin}: {message}")]
    Syntax { origin: Origin, message: String },
    /// A job file that cannot be read.
    #[error("{}: cannot read the job file: {reason}", printable(&path.display().to_string()))]
    Unreadable { path: PathBuf, reason: String },
    /// An option outside the supported subset.
    #[error("{origin}: option '{}' is not supported{} (tankbench fio runs a subset of fio's options, listed by `tankbench fio --help` and in docs/fio.md)", printable(option), reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Unsupported {
        origin: Origin,
        option: String,
        reason: Option<String>,
    },
    /// A value the option does not take.
    #[error("{0}")]
    Value(Box<ValueRefusal>),
    /// A job whose settings together cannot run as fio would run them.
    #[error("job '{}': {problem}", printable(job))]
    Job { job: String, problem: String },
    /// Nothing to run.
    #[error("{0}")]
    Usage(String),
    /// Files, threads or the report: what went wrong while running.
    #[error("{0}")]
    Run(String),
}

/// A value an option does not take: where, the option, the value as
/// written, what is wrong and what the option accepts.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{origin}: {option}={}: {problem} (accepted: {accepted})",
    printable(value)
)]
pub struct ValueRefusal {
    pub origin: Origin,
    pub option: String,
    pub value: String,
    pub problem: String,
    pub accepted: String,
}

impl FioError {
    pub(crate) fn value(
        origin: Origin,
        option: impl Into<String>,
        value: impl Into<String>,
        problem: impl Into<String>,
        accepted: impl Into<String>,
    ) -> FioError {
        FioError::Value(Box::new(ValueRefusal {
            origin,
            option: option.into(),
            value: value.into(),
            problem: problem.into(),
            accepted: accepted.into(),
        }))
    }
}

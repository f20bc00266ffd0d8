//! The lab's error: one variant per kind of failure, with the fields a
//! caller (the `tankbench` binary, a matrix that records a cell's error, a
//! test) can look at, so that nobody reads a lab failure by parsing its text.
//! Each Display is one line naming what failed and, where there is one, what
//! to do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The spec (or a matrix file) is invalid; the message names the option.
    #[error("{0}")]
    Spec(String),
    /// A field of the spec holds a value outside what it accepts.
    #[error("{field}: invalid value '{value}'{}; accepted: {accepted}", reason_suffix(.reason))]
    Invalid {
        field: String,
        value: String,
        /// Why the value was refused, where the reader's parser said more
        /// than "out of range".
        reason: Option<String>,
        accepted: String,
    },
    /// The workload's fileio options are refused (`context`: where they came
    /// from, "fileio options" of a run or "workload" of a matrix); the
    /// refusal is fileio's own, typed, naming the option.
    #[error("{context}: {source}")]
    Workload {
        context: &'static str,
        #[source]
        source: fileio::workload::WorkloadError,
    },
    /// Something the lab needs is not installed or not permitted.
    #[error("{0}")]
    Missing(String),
    #[error("`{command}` failed (exit {status}): {stderr}")]
    Command {
        command: String,
        status: i32,
        stderr: String,
    },
    #[error("cannot run `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// A file the lab reads (its state, a daemon's configuration, a report
    /// a program left) does not parse.
    #[error("{what} is damaged: {message}")]
    Damaged { what: String, message: String },
    /// `tankbench lab __daemon` called with the wrong words.
    #[error("usage: {0}")]
    Usage(&'static str),
    #[error("interrupted")]
    Interrupted,

    /// `lab up` of a lab that has a state file already.
    #[error("lab {lab} is already up (state {}); run `tankbench lab down {name}` first", .state.display())]
    AlreadyUp {
        lab: String,
        name: String,
        state: PathBuf,
    },
    /// No state file for the lab named.
    #[error("no lab named '{name}' is up (no state in {})", .dir.display())]
    NotUp { name: String, dir: PathBuf },
    /// The lab's build did not finish (its state has no info).
    #[error("lab {lab} did not finish building; `tankbench lab down {name}` removes it")]
    NotBuilt { lab: String, name: String },
    /// Something in the lab's way that the lab did not make: never adopted,
    /// never removed.
    #[error("{what}")]
    NotOurs { what: String },
    /// The build failed, and tearing down what it had made failed too.
    #[error("{build}; teardown also failed: {teardown}")]
    BuildAndTeardown {
        build: Box<LabError>,
        teardown: Box<LabError>,
    },
    /// Objects teardown could not remove (they stay in the state file).
    #[error("teardown left objects behind (run `tankbench lab down` again): {}", .left.join("; "))]
    Teardown { left: Vec<String> },

    /// A daemon or helper the lab started did not come up.
    #[error("{what} did not start{how}: {last_line}")]
    NotStarted {
        what: String,
        how: NotStarted,
        /// The last line of its log.
        last_line: String,
    },
    /// A process the lab depends on is not running (any more).
    #[error("{what} (pid {pid}) is not running{hint}")]
    NotRunning {
        what: String,
        pid: i32,
        /// What to do, from "; " on, or empty.
        hint: String,
    },
    /// A process the lab stopped is still there.
    #[error("process {pid} did not exit")]
    StillRunning { pid: i32 },
    /// A program the lab waits for ended before it did its part.
    #[error("{what} ended ({status}) {before}: {last_line}")]
    EndedEarly {
        what: String,
        /// Its exit status as the system says it.
        status: String,
        /// What it ended before ("before the crash", "without a result").
        before: &'static str,
        last_line: String,
    },
    /// A helper daemon stopped for a reason of its own.
    #[error("{what}: {why}")]
    DaemonEnded { what: String, why: String },
    /// Something did not happen within its time limit.
    #[error("{what} within {seconds} s{}", detail_suffix(.detail))]
    Timeout {
        what: String,
        seconds: u64,
        /// What was seen at the limit, or empty.
        detail: String,
    },
    /// A mount that should be there is not.
    #[error("{what} is not mounted at {}", .path.display())]
    NotMounted { what: String, path: PathBuf },
    /// `tankbench fileio` printed no result document.
    #[error("{program} printed no JSON RunResult ({reason}); its output began: {output}")]
    NoResult {
        program: &'static str,
        reason: String,
        /// The first non-empty line of its output (at most 200 characters).
        output: String,
    },
    /// The crash took place but the pool did not come back.
    #[error(
        "{source}; the power cut reverted {lost_bytes} bytes of acknowledged writes ({per_disk})"
    )]
    NotRecovered {
        #[source]
        source: Box<LabError>,
        lost_bytes: u64,
        /// Each disk's loss, "NAME BYTES" joined by ", ".
        per_disk: String,
    },
    /// `lab crash` of a lab without a zfs-fuse daemon of its own.
    #[error("lab {lab} has no zfs-fuse daemon of its own (its pool is served by the machine's ZFS, which other pools share): it cannot crash; only its disks could lose power")]
    NoOwnDaemon { lab: String },
    /// A path holds a NUL byte, which no system call takes.
    #[error("path with NUL: {}", .path.display())]
    NulInPath { path: PathBuf },
    /// A child's process id that does not fit the kernel's pid type.
    #[error("pid {pid} out of range")]
    PidOutOfRange { pid: i64 },
    /// A worker thread of the lab panicked.
    #[error("{what} panicked")]
    Panicked { what: &'static str },
    /// The nfs crate's host side (ganesha, mount namespaces) failed.
    #[error("{what}: {source}")]
    Nfs {
        what: &'static str,
        #[source]
        source: ::nfs::host::HostError,
    },
}

/// How a daemon did not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotStarted {
    /// It exited.
    Exited,
    /// It was still not ready after this many seconds.
    Within(u64),
}

impl std::fmt::Display for NotStarted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotStarted::Exited => f.write_str(" (it exited)"),
            NotStarted::Within(s) => write!(f, " within {s} s"),
        }
    }
}

fn reason_suffix(reason: &Option<String>) -> String {
    reason
        .as_ref()
        .map_or_else(String::new, |r| format!(" ({r})"))
}

fn detail_suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::Lab;
    use crate::spec::LabSpec;

    /// A caller reads the fields, not the text; the text stays one line
    /// naming what failed.
    #[test]
    fn errors_carry_their_fields_and_read_as_one_line() {
        let root = tempfile::tempdir().unwrap();
        match Lab::open(root.path(), "nosuch") {
            Err(e @ LabError::NotUp { .. }) => {
                let LabError::NotUp { name, dir } = &e else {
                    unreachable!()
                };
                assert_eq!(name, "nosuch");
                assert_eq!(dir, &root.path().join("tb-nosuch"));
                assert!(e.to_string().starts_with("no lab named 'nosuch' is up"));
            }
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("a lab that is not up was opened"),
        }
        let e = LabSpec::from_toml(
            "name = \"e\"\n[pool]\nlayout = \"mirror-2\"\ndisk_size = \"12 parsecs\"\n",
        )
        .unwrap_err();
        match &e {
            LabError::Invalid {
                field,
                value,
                reason,
                ..
            } => {
                assert_eq!(field, "pool.disk_size");
                assert_eq!(value, "12 parsecs");
                assert_eq!(reason.as_deref(), Some("unknown unit 'parsecs'"));
            }
            other => panic!("{other:?}"),
        }
        let timeout = LabError::Timeout {
            what: "`zfs snapshot tb-x@s` did not succeed".into(),
            seconds: 60,
            detail: String::new(),
        };
        assert_eq!(
            timeout.to_string(),
            "`zfs snapshot tb-x@s` did not succeed within 60 s"
        );
        let started = LabError::NotStarted {
            what: "relay".into(),
            how: NotStarted::Within(20),
            last_line: "no output".into(),
        };
        assert_eq!(
            started.to_string(),
            "relay did not start within 20 s: no output"
        );
        for e in [&e, &timeout, &started] {
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }
}

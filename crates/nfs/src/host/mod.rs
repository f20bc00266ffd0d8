//! Running an nfs-ganesha server on this machine, for the lab and for tests:
//! [`ganesha`] starts rpcbind and ganesha in a private mount namespace,
//! [`mountns`] keeps such namespaces free of other programs' FUSE mounts
//! (the lab's zfs-fuse namespace uses it too). Nothing here is used by the
//! client; it only needs root and the Debian packages named in its errors.

pub mod ganesha;
pub mod mountns;

use std::path::{Path, PathBuf};

/// Why a local step of running the server failed.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// A file, namespace or process step failed.
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("program `{name}` not found (apt-get install {packages})")]
    MissingProgram {
        name: &'static str,
        packages: &'static str,
    },
    /// A daemon exited or did not report ready in time; `log` holds the
    /// last errors of its log.
    #[error("{daemon} did not start{}: {log}", if *.exited { " (it exited)" } else { " in time" })]
    DidNotStart {
        daemon: &'static str,
        exited: bool,
        log: String,
    },
    /// A helper command (such as `ip`) failed; `stderr` is what it said.
    #[error("{command}: {stderr}")]
    Command { command: String, stderr: String },
}

/// For `map_err`: an I/O error of the step `what`.
pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> HostError {
    let what = what.into();
    move |source| HostError::Io { what, source }
}

/// Where program `name` is installed, or an error naming the Debian
/// packages that provide it (`packages`).
pub(crate) fn program(name: &'static str, packages: &'static str) -> Result<PathBuf, HostError> {
    [
        "/usr/bin",
        "/usr/sbin",
        "/sbin",
        "/bin",
        "/usr/local/bin",
        "/usr/local/sbin",
    ]
    .iter()
    .map(|d| Path::new(d).join(name))
    .find(|p| p.is_file())
    .ok_or(HostError::MissingProgram { name, packages })
}

//! One error type for the library; the binary adds context and maps it to exit 1.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: not a tankbench result ({source})")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    #[error(
        "{path}: schema_version {found} is newer than this tankbench reads ({supported}); \
         upgrade tankbench to read it"
    )]
    Schema {
        path: PathBuf,
        found: u32,
        supported: u32,
    },

    /// A `KEY=VALUE,...` list that does not parse; `option` names the flag it came
    /// from (`--label`, or a selector argument) so the message points at it.
    #[error(
        "{option}: {message} (expected KEY=VALUE[,KEY=VALUE...], e.g. layout=2xraidz2,slog=yes)"
    )]
    Labels { option: String, message: String },

    #[error("{0}")]
    NoMatch(String),

    /// `-o` names an existing file we may not replace; `reason` says why.
    #[error(
        "refusing to overwrite {path}: {reason} (choose another -o path or move the file away)"
    )]
    WouldOverwrite { path: PathBuf, reason: String },

    #[error("{0}")]
    Render(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attach a path to an I/O error; almost every I/O error here is about one file.
pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.into();
    move |source| Error::Io { path, source }
}

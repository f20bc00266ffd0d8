//! A refusal as the sysbench front end prints it: the lines, the stream
//! each goes to, and the exit code. One process's run (`crate::run`) fails
//! with one too, so the front end prints a run's failure like sysbench.

/// Where a message goes. sysbench's logger writes to stdout; its command-line
/// parser writes to stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Whether this process was started under the name `sysbench` (a copy or a
/// symlink of the binary): then the texts where sysbench 1.0.20 and
/// tankbench's own differ are sysbench's.
pub(crate) fn invoked_as_sysbench() -> bool {
    std::env::args_os()
        .next()
        .is_some_and(|a| std::path::Path::new(&a).file_name() == Some("sysbench".as_ref()))
}

/// sysbench's exit code after a forced shutdown (sysbench.c at 1.0.20).
pub const FORCED_SHUTDOWN_EXIT_CODE: i32 = 2;

/// How sysbench marks a fatal line. The front end prints it; everywhere
/// else a refusal is shown by [`Failure::summary`], without it.
const FATAL_MARK: &str = "FATAL: ";

/// A refusal: the lines to print (in order) and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub lines: Vec<(Stream, String)>,
    pub exit_code: i32,
    /// Print the fileio option list after the lines (missing --file-test-mode).
    pub show_fileio_help: bool,
}

impl Failure {
    pub fn fatal(msg: impl Into<String>) -> Failure {
        Failure {
            lines: vec![(Stream::Stdout, format!("{FATAL_MARK}{}", msg.into()))],
            exit_code: 1,
            show_fileio_help: false,
        }
    }
    pub fn stderr(msg: impl Into<String>) -> Failure {
        Failure {
            lines: vec![(Stream::Stderr, msg.into())],
            exit_code: 1,
            show_fileio_help: false,
        }
    }
    /// The `--forced-shutdown` deadline passed. The observer has already
    /// printed sysbench's FATAL line and report, so there is nothing more to
    /// print: only sysbench's exit code, 2, for the caller to return.
    pub fn forced_shutdown() -> Failure {
        Failure {
            lines: Vec::new(),
            exit_code: FORCED_SHUTDOWN_EXIT_CODE,
            show_fileio_help: false,
        }
    }
    /// Whether this is [`Failure::forced_shutdown`].
    pub fn is_forced_shutdown(&self) -> bool {
        self.exit_code == FORCED_SHUTDOWN_EXIT_CODE && self.lines.is_empty()
    }
    pub fn then(mut self, stream: Stream, msg: impl Into<String>) -> Failure {
        self.lines.push((stream, msg.into()));
        self
    }
    /// The lines as one, for errors shown outside the sysbench front end:
    /// joined by "; ", without sysbench's `FATAL: ` mark, blank lines or a
    /// line's closing ';'.
    pub fn summary(&self) -> String {
        self.lines
            .iter()
            .map(|(_, l)| {
                let l = l.trim();
                l.strip_prefix(FATAL_MARK)
                    .unwrap_or(l)
                    .trim_end_matches(';')
            })
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.summary())
    }
}

impl std::error::Error for Failure {}

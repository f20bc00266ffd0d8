//! The durability check's errors: one enum, [`DurabilityError`], with a
//! variant per kind of refusal or failure and the values it is about as
//! fields. Callers match on the variant; nobody reads the text.
//!
//! `Display` is one line. A command-line refusal names its command
//! (`durability write: --commit 'x' is not accepted; accepted: …`), because
//! the command is part of what was refused; every other error is the bare
//! problem, and the binary adds the command in front of it.

use crate::journal::JournalError;
use crate::record::RunId;
use crate::wire::{KeyError, WireError};

use crate::record::FILESET_MARKER;
use fileio::text::printable;
use fileio::workload::WorkloadError;
use std::path::PathBuf;

/// The three commands, as their refusals name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Write,
    Record,
    Verify,
}

impl Command {
    pub fn name(self) -> &'static str {
        match self {
            Command::Write => "write",
            Command::Record => "record",
            Command::Verify => "verify",
        }
    }
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a durability command was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum DurabilityError {
    // --- The command lines: refused before anything is touched.
    /// A word starting with `--` that is no option of the command.
    #[error("durability {command}: unknown option '{}'; accepted: {}", printable(option), accepted.join(", "))]
    UnknownOption {
        command: Command,
        option: String,
        accepted: Vec<String>,
    },
    #[error("durability {command}: --{option} needs a value")]
    MissingValue {
        command: Command,
        option: &'static str,
    },
    #[error("durability {command}: --{option} takes no value")]
    UnexpectedValue {
        command: Command,
        option: &'static str,
    },
    #[error("durability {command}: --{option} is given more than once")]
    RepeatedOption {
        command: Command,
        option: &'static str,
    },
    #[error("durability {command}: --{option}: the value is not UTF-8 text")]
    NotText {
        command: Command,
        option: &'static str,
    },
    /// An option's value outside what it accepts.
    #[error(
        "durability {command}: --{option} '{}' is not accepted; accepted: {accepted}",
        printable(value)
    )]
    Option {
        command: Command,
        option: &'static str,
        value: String,
        accepted: &'static str,
    },
    /// An option (or the directory) that must be given.
    #[error("durability {command}: {what} is required ({why})")]
    Required {
        command: Command,
        /// The option and its value's form, e.g. `--listen ADDR:PORT`.
        what: &'static str,
        why: &'static str,
    },
    /// Two options of which at most one may be given.
    #[error("durability {command}: give {first} or {second}, not both ({why})")]
    Conflict {
        command: Command,
        first: &'static str,
        second: &'static str,
        why: &'static str,
    },
    #[error(
        "durability {command}: unexpected argument '{}'; {accepted}",
        printable(word)
    )]
    UnexpectedArgument {
        command: Command,
        word: String,
        accepted: &'static str,
    },
    #[error("durability {command}: DIR {} is not a directory", dir.display())]
    NotADirectory { command: Command, dir: PathBuf },
    #[error("durability {command}: --{option} '{}' is not ADDR:PORT (e.g. 192.0.2.7:7878 or recorder.example:7878)", printable(value))]
    Address {
        command: Command,
        option: &'static str,
        value: String,
    },
    #[error("durability verify: --from {}: no such journal file, and not ADDR:PORT", path.display())]
    NoSuchJournal { path: PathBuf },
    /// A fileio option of `write` that fileio refuses (its own message).
    #[error("durability write: {0}")]
    Workload(#[from] WorkloadError),
    #[error("durability write: --file-block-size {block_size} is not accepted; accepted: a multiple of {sector} bytes from {sector} to {max} (every sector carries the record header)")]
    BlockSize {
        block_size: u64,
        sector: usize,
        max: u64,
    },
    #[error("durability write: --file-total-size / --file-num gives files of {file_size} bytes, smaller than one block ({block_size}); accepted: at least one block per file")]
    FileSmallerThanBlock { file_size: u64, block_size: u64 },
    #[error("durability write: --file-total-size / --file-num gives files of {file_size} bytes, not a whole number of {block_size}-byte blocks; accepted: a total size that is --file-num x a multiple of --file-block-size")]
    FilesNotWholeBlocks { file_size: u64, block_size: u64 },
    #[error(
        "durability write: --file-num {file_num} is too large; accepted: up to {}",
        u32::MAX
    )]
    TooManyFiles { file_num: u64 },
    /// More writer threads than the memory-map limit holds (fileio's own
    /// check, the one `fileio` refuses the same count with).
    #[error("durability write: Invalid value for --threads: {0}")]
    Threads(#[from] fileio::run::runner::ThreadBudgetError),

    // --- Running: the binary puts `durability <command>: ` in front.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--listen {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error("{what}: {source}")]
    System {
        what: &'static str,
        source: std::io::Error,
    },
    /// A file read through the result store's checks (a regular file, not
    /// too large).
    #[error("{0}")]
    Read(#[from] report::Error),
    /// `verify --from FILE` that cannot be read.
    #[error("--from {0}")]
    From(report::Error),
    #[error("--key: {0}")]
    Key(#[from] KeyError),
    /// A journal file (`--journal`) that is not one, or cannot be used.
    #[error("journal {}: {problem}", path.display())]
    JournalFile {
        path: PathBuf,
        problem: JournalFileProblem,
    },
    /// A journal's bytes (from a file or a recorder) that are not a journal.
    #[error("{0}")]
    Journal(#[from] JournalError),
    #[error("recorder {addr}: {problem}")]
    Recorder {
        addr: String,
        problem: RecorderProblem,
    },
    #[error(transparent)]
    FileSet(#[from] FileSetError),
    #[error(transparent)]
    Verify(#[from] VerifyError),
}

/// What is wrong with a journal file.
#[derive(Debug, thiserror::Error)]
pub enum JournalFileProblem {
    #[error("exists and is not a durability journal; it is left alone")]
    NotAJournal,
    #[error("{0}")]
    Io(std::io::Error),
    #[error("{0}")]
    Content(JournalError),
    /// An earlier write or flush failed (the recorder's account of it).
    #[error("{0}")]
    Failed(String),
}

/// What went wrong with a recorder, seen from a writer or verify.
#[derive(Debug, thiserror::Error)]
pub enum RecorderProblem {
    #[error("{0}")]
    Connect(std::io::Error),
    #[error("no address")]
    NoAddress,
    #[error("no greeting: {0} (is it a tankbench {version} recorder?)", version = crate::wire::PROTOCOL_VERSION)]
    NoGreeting(WireError),
    #[error(
        "speaks protocol {theirs}; this tankbench speaks {}",
        crate::wire::PROTOCOL_VERSION
    )]
    Protocol { theirs: String },
    #[error("a greeting without a nonce")]
    NoNonce,
    #[error("not a tankbench durability recorder")]
    NotARecorder,
    /// The recorder's `ERR` line (unauthenticated ones are said so).
    #[error("refused: {}", printable(reason))]
    Refused { reason: String },
    /// The recorder's `ERR` line in answer to the session line.
    #[error("refused the session: {}", printable(reason))]
    RefusedSession { reason: String },
    #[error("closed the connection at the session line")]
    ClosedAtSession,
    #[error("no answer to the session line: {0}")]
    NoSessionAnswer(WireError),
    #[error("answered '{}' to the session line; expected OK", printable(answer))]
    NotOk { answer: String },
    #[error("an unexpected line")]
    UnexpectedLine,
    /// A line whose tag does not verify (and is no refusal).
    #[error("{0}; refused")]
    Unauthenticated(WireError),
    #[error("{0}")]
    Wire(WireError),
    #[error("stopped taking acknowledgements (a batch was not taken by its deadline)")]
    StoppedTaking,
    #[error("stopped by a signal while the recorder was not taking acknowledgements")]
    StoppedWhileWaiting,
    #[error("an answer that is not a journal")]
    NotAJournalAnswer,
    #[error("the journal is {bytes} bytes, more than --max-journal-size {max}; refused (give a larger --max-journal-size to fetch it)")]
    JournalTooLarge { bytes: u64, max: u64 },
    #[error("the journal did not arrive by its deadline ({got} of {bytes} bytes)")]
    JournalLate { got: usize, bytes: usize },
    #[error("the connection closed after {got} of the journal's {bytes} bytes")]
    JournalCut { got: usize, bytes: usize },
    #[error("the journal's bytes do not match their authenticated hash; refused")]
    JournalHash,
    #[error("not connected")]
    NotConnected,
}

/// Why the file set in the directory under test is refused.
#[derive(Debug, thiserror::Error)]
pub enum FileSetError {
    #[error("{}: not a durability file set marker", path.display())]
    NotAMarker { path: PathBuf },
    #[error("{} holds a durability file set of another layout ({file_num} files of {file_size} bytes, blocks of {block_size}); use the same --file-num, --file-total-size and --file-block-size, or another directory", dir.display())]
    OtherLayout {
        dir: PathBuf,
        file_num: u64,
        file_size: u64,
        block_size: u64,
    },
    #[error("{} exists but was not created by tankbench durability (no {} marker); it is left alone: use another directory", path.display(), FILESET_MARKER)]
    NotOurs { path: PathBuf },
    #[error("{} is not a regular file (a symbolic link, a directory or a device where a durability file belongs); nothing was written: use another directory", path.display())]
    NotAFile { path: PathBuf },
    #[error("{} changed while the session was announced (another writer on the same directory?); nothing was written", dir.display())]
    Changed { dir: PathBuf },
}

/// Why `verify` cannot judge the file set.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("{} holds no durability file set (no {} marker); nothing to verify", dir.display(), FILESET_MARKER)]
    NoFileSet { dir: PathBuf },
    #[error("nothing to verify: the journal holds no writer session of the file set in {} (file set {fileset}; {other_sessions} other session(s)); this is not a success", dir.display())]
    NoSession {
        dir: PathBuf,
        fileset: RunId,
        other_sessions: usize,
    },
    #[error("nothing to verify: the journal holds {sessions} session(s) of this file set but no acknowledged write; this is not a success")]
    NoAcknowledgedWrite { sessions: usize },
    #[error("session {run} wrote another layout than the file set's marker; the journal and {} disagree", dir.display())]
    OtherLayout { run: RunId, dir: PathBuf },
    /// A file that exists but cannot be opened: a problem of the check, not
    /// of the data, so no block is judged.
    #[error("cannot open {}: {source}{}", path.display(), if *direct { " (with --direct: the file system may not support O_DIRECT)" } else { "" })]
    Open {
        path: PathBuf,
        source: std::io::Error,
        direct: bool,
    },
}

impl DurabilityError {
    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> DurabilityError {
        let path = path.into();
        move |source| DurabilityError::Io { path, source }
    }

    /// getrandom(2) failed.
    pub(crate) fn getrandom(source: std::io::Error) -> DurabilityError {
        DurabilityError::System {
            what: "getrandom",
            source,
        }
    }

    /// A problem with the recorder at `addr`.
    pub(crate) fn recorder(addr: &str, problem: RecorderProblem) -> DurabilityError {
        DurabilityError::Recorder {
            addr: addr.to_string(),
            problem,
        }
    }

    /// A problem with the journal file `path`.
    pub(crate) fn journal_file(
        path: &std::path::Path,
        problem: JournalFileProblem,
    ) -> DurabilityError {
        DurabilityError::JournalFile {
            path: path.to_path_buf(),
            problem,
        }
    }

    /// The option a command-line refusal is about (without `--`), if it is one.
    pub fn option(&self) -> Option<&str> {
        match self {
            DurabilityError::MissingValue { option, .. }
            | DurabilityError::UnexpectedValue { option, .. }
            | DurabilityError::RepeatedOption { option, .. }
            | DurabilityError::NotText { option, .. }
            | DurabilityError::Option { option, .. }
            | DurabilityError::Address { option, .. } => Some(option),
            DurabilityError::Workload(e) => e.option(),
            DurabilityError::BlockSize { .. } => Some("file-block-size"),
            DurabilityError::FileSmallerThanBlock { .. }
            | DurabilityError::FilesNotWholeBlocks { .. } => Some("file-total-size"),
            DurabilityError::TooManyFiles { .. } => Some("file-num"),
            DurabilityError::Key(_) => Some("key"),
            _ => None,
        }
    }

    /// Whether the error is a command-line refusal (nothing was touched).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            DurabilityError::UnknownOption { .. }
                | DurabilityError::MissingValue { .. }
                | DurabilityError::UnexpectedValue { .. }
                | DurabilityError::RepeatedOption { .. }
                | DurabilityError::NotText { .. }
                | DurabilityError::Option { .. }
                | DurabilityError::Required { .. }
                | DurabilityError::Conflict { .. }
                | DurabilityError::UnexpectedArgument { .. }
                | DurabilityError::NotADirectory { .. }
                | DurabilityError::Address { .. }
                | DurabilityError::NoSuchJournal { .. }
                | DurabilityError::Workload(_)
                | DurabilityError::Threads(_)
                | DurabilityError::BlockSize { .. }
                | DurabilityError::FileSmallerThanBlock { .. }
                | DurabilityError::FilesNotWholeBlocks { .. }
                | DurabilityError::TooManyFiles { .. }
        )
    }
}

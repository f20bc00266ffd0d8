//! The journal as a file: checking that a path can be a journal, and
//! opening one for appending (the recorder's, or `durability write
//! --journal`'s local one).

use crate::error::{DurabilityError, JournalFileProblem};
use crate::journal::JOURNAL_HEADER;
use std::fs::{File, OpenOptions};
use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// Whether `path` can be a journal: an existing journal, or a new file in a
/// directory where files can be created. Creates nothing.
pub(crate) fn check_journal(path: &Path) -> Result<(), DurabilityError> {
    let problem = |p| DurabilityError::journal_file(path, p);
    match open_existing(path, OpenOptions::new().read(true)) {
        Ok(f) => is_journal(f).map_err(problem),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            report::atomic::check_can_create_in(report::atomic::parent_dir(path))
                .map_err(|e| problem(JournalFileProblem::Io(e)))
        }
        Err(e) => Err(problem(JournalFileProblem::Io(e))),
    }
}

/// Open an existing file without blocking on it: a FIFO or a device named
/// like the journal would block open(2) or read(2) for ever. O_NONBLOCK
/// changes nothing for a regular file, the only kind accepted.
fn open_existing(path: &Path, options: &mut OpenOptions) -> std::io::Result<File> {
    options
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// Whether an open file is a regular file starting with the journal's
/// header line.
fn is_journal(f: File) -> Result<(), JournalFileProblem> {
    if !f.metadata().map_err(JournalFileProblem::Io)?.is_file() {
        return Err(JournalFileProblem::NotAJournal);
    }
    let mut first = String::new();
    BufReader::new(f)
        .read_line(&mut first)
        .map_err(JournalFileProblem::Io)?;
    if first.trim_end() == JOURNAL_HEADER {
        Ok(())
    } else {
        Err(JournalFileProblem::NotAJournal)
    }
}

/// existing file must already be a journal: anything else is not ours.
pub(crate) fn open_journal(path: &Path) -> Result<File, DurabilityError> {
    let err = |e: std::io::Error| DurabilityError::journal_file(path, JournalFileProblem::Io(e));
    match OpenOptions::new()
        .append(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(mut f) => {
            f.write_all(format!("{JOURNAL_HEADER}\n").as_bytes())
                .and_then(|()| f.sync_all())
                .map_err(err)?;
            if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                File::open(dir).and_then(|d| d.sync_all()).map_err(err)?;
            }
            Ok(f)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            is_journal(open_existing(path, OpenOptions::new().read(true)).map_err(err)?)
                .map_err(|p| DurabilityError::journal_file(path, p))?;
            open_existing(path, OpenOptions::new().append(true)).map_err(err)
        }
        Err(e) => Err(err(e)),
    }
}

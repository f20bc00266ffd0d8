//! The jobs' files: checked, created and, when the command ends, removed.
//!
//! fio writes into whatever file a job names (a user's data, a device) and
//! keeps the files it lays out. tankbench never writes a file it did not
//! create: every file of every job must be new, all are checked before the
//! first is created (so a refusal leaves nothing behind), each is created
//! exclusively (`O_EXCL`, so a file that appears meanwhile is not taken
//! over), and every file created is removed when [`CreatedFiles`] is
//! dropped: at the end, after a failure, or after Ctrl-C. Like fio, a file
//! is allocated (`posix_fallocate`, fio's default `fallocate=native`) and,
//! when a job reads it, written full and synced before the jobs start.

use super::error::FioError;
use super::plan::LayoutFile;
use crate::rng::Xoroshiro;
use crate::run::pattern::fill_random;
use crate::spec::DataPattern;
use crate::text::printable;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Bytes per write while filling a file.
const FILL_CHUNK: usize = 1 << 20;

/// The files this command created; dropping it removes them.
#[derive(Debug, Default)]
pub struct CreatedFiles {
    paths: Vec<PathBuf>,
}

impl Drop for CreatedFiles {
    fn drop(&mut self) {
        for p in &self.paths {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn run_error(path: &Path, what: &str, e: impl std::fmt::Display) -> FioError {
    FioError::Run(format!(
        "{}: {what}: {e}",
        printable(&path.display().to_string())
    ))
}

/// Refuse the plan's files unless every one is new and its directory
/// exists; nothing is created.
pub fn check_new(files: &[LayoutFile]) -> Result<(), FioError> {
    for f in files {
        if std::fs::symlink_metadata(&f.path).is_ok() {
            return Err(FioError::Run(format!(
                "{} exists: tankbench fio writes only files it creates (and removes them at the end); remove it, or name a new file with filename= or directory=",
                printable(&f.path.display().to_string())
            )));
        }
        let dir = match f.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(FioError::Run(format!(
                "{}: the directory does not exist (fio does not create it either)",
                printable(&dir.display().to_string())
            )));
        }
    }
    Ok(())
}

impl CreatedFiles {
    /// Create every file of the plan (after [`check_new`]); `say` hears a
    /// line per file, like fio's "Laying out IO file".
    pub fn lay_out(
        files: &[LayoutFile],
        say: &mut dyn FnMut(&str),
    ) -> Result<CreatedFiles, FioError> {
        check_new(files)?;
        let mut created = CreatedFiles::default();
        let mut rng = Xoroshiro::from_state(0x05ee_df10, 0x2545_f491_4f6c_dd1d);
        let mut buf = vec![0u8; FILL_CHUNK];
        for f in files {
            let c = CString::new(f.path.as_os_str().as_bytes())
                .map_err(|_| run_error(&f.path, "a file name", "holds a NUL byte"))?;
            // SAFETY: plain open(2) of a new file.
            let fd = unsafe {
                libc::open(
                    c.as_ptr(),
                    libc::O_CREAT
                        | libc::O_EXCL
                        | libc::O_WRONLY
                        | libc::O_CLOEXEC
                        | libc::O_NOFOLLOW,
                    0o644,
                )
            };
            if fd < 0 {
                return Err(run_error(
                    &f.path,
                    "cannot create it",
                    std::io::Error::last_os_error(),
                ));
            }
            created.paths.push(f.path.clone());
            say(&format!(
                "Laying out IO file {} ({} bytes{})",
                f.path.display(),
                f.size,
                if f.fill { ", written full" } else { "" }
            ));
            let result = fill(fd, f, &mut buf, &mut rng);
            // SAFETY: closing our descriptor.
            unsafe { libc::close(fd) };
            result.map_err(|e| run_error(&f.path, "laying it out", e))?;
        }
        Ok(created)
    }
}

fn fill(
    fd: libc::c_int,
    f: &LayoutFile,
    buf: &mut [u8],
    rng: &mut Xoroshiro,
) -> std::io::Result<()> {
    let size = libc::off_t::try_from(f.size)
        .map_err(|_| std::io::Error::other("larger than a file offset holds"))?;
    // SAFETY: allocation of our own new file; a file system without it
    // (EOPNOTSUPP) gets the size by ftruncate, as fio falls back.
    let rc = unsafe { libc::posix_fallocate(fd, 0, size) };
    if rc != 0 {
        // SAFETY: as above.
        if unsafe { libc::ftruncate(fd, size) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    if !f.fill {
        return Ok(());
    }
    if f.data == DataPattern::Random {
        fill_random(buf, rng);
    }
    let mut written: u64 = 0;
    while written < f.size {
        if crate::signals::stop_requested() {
            return Err(std::io::Error::other("interrupted"));
        }
        let len = usize::try_from((f.size - written).min(buf.len() as u64)).unwrap_or(buf.len());
        // SAFETY: writing our buffer to our descriptor at an offset within
        // the file.
        let n = unsafe {
            libc::pwrite(
                fd,
                buf.as_ptr().cast(),
                len,
                libc::off_t::try_from(written).unwrap_or(libc::off_t::MAX),
            )
        };
        let Ok(n) = u64::try_from(n) else {
            return Err(std::io::Error::last_os_error());
        };
        if n == 0 {
            return Err(std::io::Error::other("the write wrote nothing"));
        }
        written += n;
    }
    // SAFETY: our descriptor.
    if unsafe { libc::fsync(fd) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, fill: bool) -> LayoutFile {
        LayoutFile {
            path: dir.join(name),
            size: 100_000,
            fill,
            data: DataPattern::Random,
        }
    }

    #[test]
    fn files_are_created_full_or_allocated_and_removed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            file(dir.path(), "a.0.0", true),
            file(dir.path(), "b.0.0", false),
        ];
        let created = CreatedFiles::lay_out(&files, &mut |_| {}).unwrap();
        let a = std::fs::read(dir.path().join("a.0.0")).unwrap();
        assert_eq!(a.len(), 100_000);
        assert!(a.iter().filter(|&&b| b == 0).count() < 2000, "random data");
        assert_eq!(
            std::fs::metadata(dir.path().join("b.0.0")).unwrap().len(),
            100_000
        );
        drop(created);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_existing_file_is_refused_before_anything_is_created() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine"), b"user data").unwrap();
        let files = [
            file(dir.path(), "new", true),
            file(dir.path(), "mine", false),
        ];
        let e = CreatedFiles::lay_out(&files, &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("mine exists: tankbench fio writes only files it creates"),
            "{e}"
        );
        assert!(!dir.path().join("new").exists(), "nothing created");
        assert_eq!(
            std::fs::read(dir.path().join("mine")).unwrap(),
            b"user data"
        );
        let missing = [file(&dir.path().join("nope"), "x", false)];
        assert!(check_new(&missing)
            .unwrap_err()
            .to_string()
            .contains("does not exist"));
    }
}

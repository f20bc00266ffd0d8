//! Publishing a file whole or not at all.
//!
//! The bytes go to a hidden temporary file in the target's directory, are
//! flushed to the device (fsync), and only then receive the target's name with
//! rename(2), after which the directory itself is flushed so the new name
//! survives a crash. A full file system, an I/O error or a crash therefore
//! leaves either the complete file or nothing under the target name, never a
//! truncated one; on failure the temporary file is removed again.
//!
//! Every file tankbench writes as a result or a report goes through
//! [`write_atomically`] or [`Staged`]: stored results (`store`), `-o` reports and
//! charts (`output`) and `--json=FILE`. Temporary names start with `.`, which
//! the store's listing skips, so a half-written file is never read as a run.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// What to do when the target name is already taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Fail with [`io::ErrorKind::AlreadyExists`]. The check and the rename are
    /// one step (`RENAME_NOREPLACE`), so a file that appears in between is kept.
    Keep,
    /// Replace it; the caller has checked that it may.
    Replace,
}

/// Bytes written and flushed under a temporary name, not yet given the target's
/// name. Dropping it unpublished removes the temporary file.
#[derive(Debug)]
pub struct Staged {
    /// The temporary file (`tempfile` made its unique name and removes it
    /// on drop); None once published.
    tmp: Option<tempfile::TempPath>,
}

/// The directory a path's file lives in ("." for a bare file name).
pub fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

impl Staged {
    /// Write `bytes` to a new temporary file beside `target` and flush them to
    /// the device. Nothing is visible under `target` yet.
    pub fn new(target: &Path, bytes: &[u8]) -> io::Result<Staged> {
        // `.NAME.` + random characters + `.tmp`: hidden, so a store listing
        // skips it, and under NAME_MAX (255 bytes) whatever the length of
        // the target's name.
        let name = target.file_name().unwrap_or_default().as_bytes();
        let mut prefix = b".".to_vec();
        prefix.extend_from_slice(&name[..name.len().min(100)]);
        prefix.push(b'.');
        let prefix = OsString::from_vec(prefix);
        let mut file = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            // As a plain new file would be made (the umask applies), not
            // tempfile's 0600: a report is written to be shared.
            .permissions(fs::Permissions::from_mode(0o666))
            .tempfile_in(parent_dir(target))?;
        file.write_all(bytes)?;
        file.as_file().sync_all()?;
        Ok(Staged {
            tmp: Some(file.into_temp_path()),
        })
    }

    /// Give the staged file the name `target` (in the same directory it was
    /// staged for), then flush the directory. On `AlreadyExists` with
    /// [`Existing::Keep`] the staged file stays, so the caller can try another
    /// name.
    pub fn publish(&mut self, target: &Path, existing: Existing) -> io::Result<()> {
        let tmp = self
            .tmp
            .as_ref()
            .ok_or_else(|| io::Error::other("staged file already published"))?;
        match existing {
            Existing::Replace => fs::rename(tmp, target)?,
            Existing::Keep => rename_noreplace(tmp, target)?,
        }
        // The name is the target's now: nothing is left to remove.
        if let Some(published) = self.tmp.take() {
            let _ = published.keep();
        }
        sync_dir(parent_dir(target))
    }
}

/// Write `bytes` to `target` as one step: the whole file or, on any error,
/// nothing (and no temporary file) left behind.
pub fn write_atomically(target: &Path, bytes: &[u8], existing: Existing) -> io::Result<()> {
    Staged::new(target, bytes)?.publish(target, existing)
}

/// Whether this process may create files in `dir` (search and write
/// permission, and not a read-only mount), by the effective user's rights
/// (access(2) with `AT_EACCESS`), without creating anything.
fn check_writable_dir(dir: &Path) -> io::Result<()> {
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
    // SAFETY: a valid NUL-terminated path that outlives the call.
    let r = unsafe {
        libc::faccessat(
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::W_OK | libc::X_OK,
            libc::AT_EACCESS,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        let e = io::Error::last_os_error();
        Err(io::Error::new(
            e.kind(),
            format!("cannot create files in {}: {e}", dir.display()),
        ))
    }
}

/// Whether files can be created in `dir`, or, if it does not exist yet, whether
/// `create_dir_all(dir)` could create it: its nearest existing ancestor must be
/// a writable directory. Checked before a long run so that a typo in a
/// destination costs nothing; creates nothing.
pub fn check_can_create_in(dir: &Path) -> io::Result<()> {
    let mut probe = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    loop {
        match fs::metadata(probe) {
            Ok(m) if m.is_dir() => return check_writable_dir(probe),
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "{} exists and is not a directory",
                    probe.display()
                )))
            }
            // ENOTDIR: a component is a file; walking up finds and names it.
            Err(e)
                if e.kind() == io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(libc::ENOTDIR) =>
            {
                match probe.parent() {
                    Some(p) if !p.as_os_str().is_empty() => probe = p,
                    Some(_) if probe != Path::new(".") => probe = Path::new("."),
                    _ => return Err(e),
                }
            }
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("{}: {e}", probe.display()),
                ))
            }
        }
    }
}

/// Whether a new file can be created at `path` without replacing anything:
/// nothing may exist there (not even a dangling symbolic link), and its
/// directory must exist and be writable.
pub fn check_new_file(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "refusing to overwrite an existing file (this is written only as a new file; \
                 choose another name or move the file away)",
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let dir = parent_dir(path);
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => check_writable_dir(dir),
        Ok(_) => Err(io::Error::other(format!(
            "{} is not a directory",
            dir.display()
        ))),
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!("directory {}: {e}", dir.display()),
        )),
    }
}

/// rename(2) that fails with `AlreadyExists` instead of replacing `to`.
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let c = |p: &Path| {
            std::ffi::CString::new(p.as_os_str().as_bytes())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))
        };
        let (cfrom, cto) = (c(from)?, c(to)?);
        // SAFETY: both arguments are valid NUL-terminated strings that outlive
        // the call; AT_FDCWD makes relative paths relative to the current
        // directory, as for rename(2).
        let r = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                cfrom.as_ptr(),
                libc::AT_FDCWD,
                cto.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        // renameat2(2): EINVAL when the file system does not support the flag
        // (older FUSE and network file systems); fall back below.
        if !matches!(
            e.raw_os_error(),
            Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)
        ) {
            return Err(e);
        }
    }
    // link(2) fails with EEXIST rather than replace, and is atomic too.
    match fs::hard_link(from, to) {
        Ok(()) => {
            let _ = fs::remove_file(from);
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(e),
        // No hard links on this file system either: check, then rename. Only
        // here can a file created in between be replaced.
        Err(_) => match fs::symlink_metadata(to) {
            Ok(_) => Err(io::Error::from(io::ErrorKind::AlreadyExists)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => fs::rename(from, to),
            Err(e) => Err(e),
        },
    }
}

/// fsync a directory, so a rename in it is on the device.
fn sync_dir(dir: &Path) -> io::Result<()> {
    match fs::File::open(dir).and_then(|d| d.sync_all()) {
        // Some file systems (several FUSE ones) cannot fsync a directory; the
        // rename is done, and there is nothing more to flush through them.
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EINVAL | libc::EOPNOTSUPP | libc::ENOSYS)
            ) =>
        {
            Ok(())
        }
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn keep_never_replaces_and_leaves_no_temporary_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        write_atomically(&p, b"one", Existing::Keep).unwrap();
        let e = write_atomically(&p, b"two", Existing::Keep).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&p).unwrap(), b"one");
        write_atomically(&p, b"three", Existing::Replace).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"three");
        assert_eq!(names(d.path()), ["a.json"]);
    }

    #[test]
    fn a_staged_file_can_try_several_names() {
        let d = tempfile::tempdir().unwrap();
        let taken = d.path().join("x-001");
        fs::write(&taken, "theirs").unwrap();
        let mut s = Staged::new(&taken, b"ours").unwrap();
        assert!(s.publish(&taken, Existing::Keep).is_err());
        s.publish(&d.path().join("x-002"), Existing::Keep).unwrap();
        assert_eq!(fs::read(&taken).unwrap(), b"theirs");
        assert_eq!(fs::read(d.path().join("x-002")).unwrap(), b"ours");
        assert_eq!(names(d.path()), ["x-001", "x-002"]);
        drop(Staged::new(&taken, b"dropped").unwrap());
        assert_eq!(names(d.path()), ["x-001", "x-002"]);
    }

    #[test]
    fn destinations_are_checked_without_creating_anything() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("file");
        fs::write(&file, "x").unwrap();
        check_can_create_in(d.path()).unwrap();
        check_can_create_in(&d.path().join("new/deeper")).unwrap();
        let e = check_can_create_in(&file.join("sub")).unwrap_err();
        assert!(e.to_string().contains("is not a directory"), "{e}");
        check_can_create_in(&file).unwrap_err();

        check_new_file(&d.path().join("new.json")).unwrap();
        let e = check_new_file(&file).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        std::os::unix::fs::symlink(d.path().join("gone"), d.path().join("dangling")).unwrap();
        check_new_file(&d.path().join("dangling")).unwrap_err();
        let e = check_new_file(&d.path().join("missing/x.json")).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
        assert_eq!(names(d.path()), ["dangling", "file"]);
    }

    #[test]
    fn a_published_file_gets_the_mode_a_plain_new_file_gets() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let plain = d.path().join("plain");
        fs::File::create(&plain).unwrap();
        let ours = d.path().join("ours.json");
        write_atomically(&ours, b"{}", Existing::Keep).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&ours), mode(&plain));
    }

    #[test]
    fn long_names_still_get_a_temporary_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("n".repeat(250));
        write_atomically(&p, b"x", Existing::Keep).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"x");
    }
}

//! The durability file set: `durability.N` files in the directory under test
//! and the marker file that says tankbench created them.
//!
//! tankbench never writes to a file it did not create. The marker is created
//! first (O_EXCL), so files named in it are ours even when a prepare was cut
//! short; files of that name without a marker are someone else's and refused.

use crate::error::{DurabilityError, FileSetError};
use crate::record::RunId;
use report::atomic::{write_atomically, Existing};
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{FileExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

pub(crate) use crate::record::FILESET_MARKER as MARKER;
const MARKER_HEADER: &str = "tankbench-durability-fileset 1";

/// The file layout a marker records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub file_num: u64,
    pub file_size: u64,
    pub block_size: u64,
}

impl Layout {
    /// The layout of fileio's file set.
    pub fn of(files: &fileio::spec::FileSet) -> Layout {
        Layout {
            file_num: files.file_num,
            file_size: files.file_size,
            block_size: files.block_size,
        }
    }

    pub fn blocks_per_file(&self) -> u64 {
        self.file_size / self.block_size
    }
}

/// The marker's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub id: RunId,
    pub layout: Layout,
    /// Writer sessions so far (the generation the last one wrote).
    pub generation: u32,
    /// Whether every file was created and filled with zeros.
    pub ready: bool,
}

impl Marker {
    fn text(&self) -> String {
        format!(
            "{MARKER_HEADER}\nfileset={} file_num={} file_size={} block_size={} generation={} state={}\n",
            self.id,
            self.layout.file_num,
            self.layout.file_size,
            self.layout.block_size,
            self.generation,
            if self.ready { "ready" } else { "preparing" }
        )
    }

    fn parse(text: &str) -> Option<Marker> {
        let mut lines = text.lines();
        if lines.next()? != MARKER_HEADER {
            return None;
        }
        let mut id = None;
        let (mut file_num, mut file_size, mut block_size, mut generation, mut ready) =
            (None, None, None, None, None);
        for word in lines.next()?.split(' ') {
            let (k, v) = word.split_once('=')?;
            match k {
                "fileset" => id = RunId::parse_hex(v),
                "file_num" => file_num = v.parse().ok(),
                "file_size" => file_size = v.parse().ok(),
                "block_size" => block_size = v.parse().ok(),
                "generation" => generation = v.parse().ok(),
                "state" => ready = Some(v == "ready"),
                _ => {}
            }
        }
        let layout = Layout {
            file_num: file_num?,
            file_size: file_size?,
            block_size: block_size?,
        };
        if layout.block_size == 0 || layout.file_num == 0 || layout.file_size < layout.block_size {
            return None;
        }
        Some(Marker {
            id: id?,
            layout,
            generation: generation?,
            ready: ready?,
        })
    }
}

/// `DIR/durability.N`.
pub fn file_path(dir: &Path, index: u64) -> PathBuf {
    dir.join(format!("durability.{index}"))
}

/// Read the marker of `dir`: None when there is none.
pub fn read_marker(dir: &Path) -> Result<Option<Marker>, DurabilityError> {
    let path = dir.join(MARKER);
    match std::fs::read_to_string(&path) {
        Ok(text) => match Marker::parse(&text) {
            Some(m) => Ok(Some(m)),
            None => Err(FileSetError::NotAMarker { path }.into()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(DurabilityError::io(path)(e)),
    }
}

fn write_marker(dir: &Path, m: &Marker) -> Result<(), DurabilityError> {
    let path = dir.join(MARKER);
    write_atomically(&path, m.text().as_bytes(), Existing::Replace)
        .map_err(DurabilityError::io(path))
}

/// The marker a new writer session of `layout` will leave in `dir`, found
/// without creating or changing anything: the existing file set's id and its
/// next generation, or a new id at generation 1. Refuses files it did not
/// create and a file set of another layout. The session is announced with
/// this marker first; [`prepare`] makes it true only once the recorder has
/// accepted the session.
pub fn plan(dir: &Path, layout: Layout) -> Result<Marker, DurabilityError> {
    // A directory the session cannot write (a read-only mount) is refused
    // before the session is announced: a journal must not record a session
    // that never wrote.
    report::atomic::check_can_create_in(dir).map_err(DurabilityError::io(dir))?;
    match read_marker(dir)? {
        Some(m) if m.layout != layout => Err(FileSetError::OtherLayout {
            dir: dir.to_path_buf(),
            file_num: m.layout.file_num,
            file_size: m.layout.file_size,
            block_size: m.layout.block_size,
        }
        .into()),
        Some(mut m) => {
            check_files(dir, &layout)?;
            m.generation = m.generation.saturating_add(1);
            Ok(m)
        }
        None => {
            for i in 0..layout.file_num {
                let p = file_path(dir, i);
                if p.symlink_metadata().is_ok() {
                    return Err(FileSetError::NotOurs { path: p }.into());
                }
            }
            Ok(Marker {
                id: RunId::random().map_err(DurabilityError::getrandom)?,
                layout,
                generation: 1,
                ready: false,
            })
        }
    }
}

/// Make `dir` hold the ready file set `planned` describes (from [`plan`]),
/// creating it when there is none, and record the session's generation.
/// Refuses when the directory changed since the plan (another writer).
pub fn prepare(
    dir: &Path,
    planned: &Marker,
    say: &mut dyn FnMut(&str),
) -> Result<Marker, DurabilityError> {
    let layout = planned.layout;
    let changed = || {
        DurabilityError::from(FileSetError::Changed {
            dir: dir.to_path_buf(),
        })
    };
    let mut marker = match read_marker(dir)? {
        Some(m) => {
            if m.id != planned.id
                || m.layout != layout
                || m.generation.saturating_add(1) != planned.generation
            {
                return Err(changed());
            }
            m
        }
        None => {
            if planned.generation != 1 {
                return Err(changed());
            }
            let m = Marker {
                generation: 0,
                ready: false,
                ..planned.clone()
            };
            // Created with O_EXCL: a concurrent writer's marker is never replaced.
            let path = dir.join(MARKER);
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(DurabilityError::io(&path))?;
            f.write_all(m.text().as_bytes())
                .and_then(|()| f.sync_all())
                .map_err(DurabilityError::io(&path))?;
            sync_dir(dir)?;
            m
        }
    };
    if !marker.ready || !files_complete(dir, &layout) {
        say(&format!(
            "Creating {} files of {} bytes in {} ...",
            layout.file_num,
            layout.file_size,
            dir.display()
        ));
        // Every file is checked before any is written: a link where
        // durability.1 belongs must not cost durability.0 its contents.
        check_files(dir, &layout)?;
        for i in 0..layout.file_num {
            fill_zeros(&file_path(dir, i), layout.file_size)?;
        }
        sync_dir(dir)?;
        marker.ready = true;
    }
    marker.generation = planned.generation;
    write_marker(dir, &marker)?;
    Ok(marker)
}

/// Each file of a marked file set is missing (to be made) or a regular file
/// that can be written: a symbolic link, a directory or a device there is
/// refused, and so is a file the process may not write.
fn check_files(dir: &Path, layout: &Layout) -> Result<(), DurabilityError> {
    for i in 0..layout.file_num {
        let path = file_path(dir, i);
        match path.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(DurabilityError::io(path)(e)),
            Ok(m) if !m.is_file() => return Err(FileSetError::NotAFile { path }.into()),
            Ok(_) => writable(&path)?,
        }
    }
    Ok(())
}

/// Whether this process may write the file at `path` (access(2) with the
/// effective ids: also false on a read-only mount, even for root).
fn writable(path: &Path) -> Result<(), DurabilityError> {
    use std::os::unix::ffi::OsStrExt as _;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        DurabilityError::io(path)(std::io::Error::from(std::io::ErrorKind::InvalidInput))
    })?;
    // SAFETY: a NUL-terminated path that outlives the call.
    let r = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    if r == 0 {
        Ok(())
    } else {
        Err(DurabilityError::io(path)(std::io::Error::last_os_error()))
    }
}

fn files_complete(dir: &Path, layout: &Layout) -> bool {
    (0..layout.file_num).all(|i| {
        file_path(dir, i)
            .symlink_metadata()
            .is_ok_and(|m| m.is_file() && m.len() == layout.file_size)
    })
}

/// Write zeros over the whole file (so the blocks exist before the first
/// timed write) and flush them.
fn fill_zeros(path: &Path, size: u64) -> Result<(), DurabilityError> {
    let err = |e: std::io::Error| DurabilityError::io(path)(e);
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(err)?;
    let chunk = vec![0u8; 1 << 20];
    let mut pos = 0u64;
    while pos < size {
        let n = usize::try_from((size - pos).min(chunk.len() as u64)).unwrap_or(chunk.len());
        f.write_all_at(&chunk[..n], pos).map_err(err)?;
        pos += n as u64;
    }
    f.set_len(size).map_err(err)?;
    f.sync_all().map_err(err)
}

fn sync_dir(dir: &Path) -> Result<(), DurabilityError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(DurabilityError::io(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYOUT: Layout = Layout {
        file_num: 2,
        file_size: 8192,
        block_size: 4096,
    };

    #[test]
    fn prepare_creates_then_reuses_and_counts_generations() {
        let d = tempfile::tempdir().unwrap();
        let planned = plan(d.path(), LAYOUT).unwrap();
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "a plan creates nothing"
        );
        let m1 = prepare(d.path(), &planned, &mut |_| {}).unwrap();
        assert_eq!((m1.id, m1.generation, m1.ready), (planned.id, 1, true));
        assert_eq!(
            std::fs::metadata(file_path(d.path(), 1)).unwrap().len(),
            8192
        );
        let next = plan(d.path(), LAYOUT).unwrap();
        let m2 = prepare(d.path(), &next, &mut |_| {}).unwrap();
        assert_eq!((m2.id, m2.generation), (m1.id, 2));
        assert_eq!(read_marker(d.path()).unwrap(), Some(m2));
        // A plan made stale by another session is refused, nothing changed.
        let e = prepare(d.path(), &next, &mut |_| {}).unwrap_err();
        assert!(
            matches!(e, DurabilityError::FileSet(FileSetError::Changed { .. })),
            "{e}"
        );
        assert!(e.to_string().contains("changed while"), "{e}");
    }

    #[test]
    fn foreign_files_and_other_layouts_are_refused() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(file_path(d.path(), 1), b"mine").unwrap();
        let e = plan(d.path(), LAYOUT).unwrap_err();
        assert!(e.to_string().contains("not created by tankbench"), "{e}");
        assert_eq!(std::fs::read(file_path(d.path(), 1)).unwrap(), b"mine");
        assert!(!d.path().join(MARKER).exists());

        let d = tempfile::tempdir().unwrap();
        prepare(d.path(), &plan(d.path(), LAYOUT).unwrap(), &mut |_| {}).unwrap();
        let other = Layout {
            file_num: 3,
            ..LAYOUT
        };
        let e = plan(d.path(), other).unwrap_err();
        assert!(
            matches!(
                e,
                DurabilityError::FileSet(FileSetError::OtherLayout { file_num: 2, .. })
            ),
            "{e}"
        );
    }
}

//! The test files on an NFSv3 export (`--file-dir=nfs://HOST/EXPORT`, a
//! tankbench extension): prepare, open and cleanup over tankbench's own NFS
//! client (no kernel mount). The engine that runs requests on them is
//! `crate::engine::nfs`.
//!
//! Write durability follows the open flags as the Linux NFS client does:
//! `--file-extra-flags=sync` sends every WRITE FILE_SYNC (what VMware ESXi
//! sends for every write of a virtual disk), `dsync` DATA_SYNC, and without
//! them WRITEs are UNSTABLE and an fsync/fdatasync sends COMMIT if the file has
//! unstable data (a file written only stably needs none, as on Linux).

use super::{format_size, ChunkWriter, OpenFiles, PrepareObserver, PrepareSummary};
use crate::failure::{Failure, Stream};
use crate::spec::{FileSet, Mode, RunSpec};
use nfs::{Client, Fh, Stable, Target};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// The run's files on the export: handles shared by all threads, each thread
/// with its own connection.
pub struct NfsFiles {
    pub(crate) client: Client,
    pub handles: Vec<Fh>,
    pub(crate) stable: Stable,
    /// Per file: written unstably since the last COMMIT.
    pub(crate) dirty: Vec<AtomicBool>,
}

fn stable_of(files: &FileSet) -> Stable {
    if files.extra_flags.sync {
        Stable::FileSync
    } else if files.extra_flags.dsync {
        Stable::DataSync
    } else {
        Stable::Unstable
    }
}

fn mount(target: &Target) -> Result<Client, Failure> {
    Client::mount(target).map_err(|e| Failure::fatal(format!("Cannot mount {target}: {e}")))
}

fn nfs_failure(what: &str, e: &nfs::Error) -> Failure {
    Failure::fatal(format!("{what}: {e}"))
}

/// `prepare` on the export: create or extend each file with whole blocks,
/// then make it durable (COMMIT), as the local prepare ends with fsync.
pub fn prepare(
    target: &Target,
    files: &FileSet,
    say: &mut dyn FnMut(&str),
    observer: &mut dyn PrepareObserver,
) -> Result<PrepareSummary, Failure> {
    let mut c = mount(target)?;
    let root = c.root().clone();
    let stable = stable_of(files);
    // Whole blocks per call, as many as prepare's local chunk and the
    // server's largest WRITE allow (a block larger than that is one chunk,
    // which the server then refuses with a clear error).
    let mut writer = ChunkWriter::new(files, super::NFS_PREPARE_CHUNK);
    let block = writer.block();
    let per_call = ((c.max_write() as usize).min(writer.max_len()) / block).max(1) * block;
    let start = Instant::now();
    let mut total = 0u64;
    let mut stopped = false;
    'files: for i in 0..files.file_num {
        if observer.stop_requested() {
            stopped = true;
            break;
        }
        observer.file_started(i, files.file_num);
        let name = crate::spec::file_name(files.first_file + i);
        let (fh, mut size) = match c.lookup(&root, &name) {
            Ok(Some((fh, attr))) => (fh, attr.size),
            Ok(None) => (
                c.create(&root, &name, false)
                    .map_err(|e| nfs_failure("Can't open file", &e))?,
                0,
            ),
            Err(e) => return Err(nfs_failure("Can't open file", &e)),
        };
        if size >= files.file_size {
            say(&format!("Reusing existing file {name}"));
        } else if size > 0 {
            say(&format!("Extending existing file {name}"));
        } else {
            say(&format!("Creating file {name}"));
        }
        while size < files.file_size {
            let want = usize::try_from(files.file_size - size)
                .unwrap_or(usize::MAX)
                .div_ceil(block)
                * block;
            let len = want.min(per_call);
            // Every byte or an error: a server that takes none, or keeps
            // taking a few, fails the prepare instead of holding it for ever.
            c.write_all(&fh, size, writer.chunk(size, len), stable)
                .map_err(|e| nfs_failure("Failed to write file!", &e))?;
            size += len as u64;
            total += len as u64;
            observer.bytes_written(total);
            if observer.stop_requested() {
                stopped = true;
                break 'files;
            }
        }
        if stable == Stable::Unstable {
            c.commit(&fh)
                .map_err(|e| nfs_failure("Failed to fsync file!", &e))?;
        }
    }
    Ok(PrepareSummary::finish(total, start, stopped, say))
}

/// `cleanup` on the export: remove the test files, ignoring errors as the
/// local cleanup does (a failed mount is said, since nothing was removed).
pub fn cleanup(target: &Target, files: &FileSet, say: &mut dyn FnMut(&str)) {
    say("Removing test files...");
    match Client::mount(target) {
        Ok(mut c) => {
            let root = c.root().clone();
            for i in 0..files.file_num {
                let _ = c.remove(&root, &crate::spec::file_name(files.first_file + i));
            }
        }
        Err(e) => say(&format!("Cannot mount {target}: {e}")),
    }
}

/// Open the run's files on the export (seqwr starts from empty files, as the
/// local open does).
pub fn open_for_run(
    target: &Target,
    w: &RunSpec,
    debug: &mut dyn FnMut(&str),
) -> Result<OpenFiles, Failure> {
    let mut c = mount(target)?;
    let root = c.root().clone();
    let mut handles = Vec::new();
    for i in 0..w.files.file_num {
        let name = crate::spec::file_name(w.files.first_file + i);
        if w.mode == Mode::SeqWr {
            c.remove(&root, &name)
                .map_err(|e| nfs_failure(&format!("Cannot create file '{name}'"), &e))?;
            c.create(&root, &name, true)
                .map_err(|e| nfs_failure(&format!("Cannot create file '{name}'"), &e))?;
        }
        debug(&format!("Opening file: {name}"));
        let Some((fh, attr)) = c
            .lookup(&root, &name)
            .map_err(|e| nfs_failure(&format!("Cannot open file '{name}'"), &e))?
        else {
            return Err(Failure::fatal(format!(
                "Cannot open file '{name}' errno = 2 (No such file or directory)"
            ))
            .then(
                Stream::Stdout,
                "WARNING: Did you forget to run the prepare step?",
            ));
        };
        if w.mode != Mode::SeqWr && attr.size < w.files.file_size {
            return Err(Failure::fatal(format!(
                "Size of file '{name}' is {}B, but at least {}B is expected.",
                format_size(attr.size),
                format_size(w.files.file_size)
            ))
            .then(
                Stream::Stdout,
                "WARNING: Did you run 'prepare' with different --file-total-size or --file-num values?",
            ));
        }
        handles.push(fh);
    }
    let dirty = handles.iter().map(|_| AtomicBool::new(false)).collect();
    Ok(OpenFiles {
        fds: Vec::new(),
        maps: Vec::new(),
        nfs: Some(NfsFiles {
            client: c,
            handles,
            stable: stable_of(&w.files),
            dirty,
        }),
    })
}

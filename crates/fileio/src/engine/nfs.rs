//! The test files on an NFSv3 export (`--file-dir=nfs://HOST/EXPORT`, a
//! tankbench extension): prepare, open and cleanup over tankbench's own NFS
//! client, and the engine that turns each request into READ/WRITE calls and
//! each fsync into a COMMIT. There is no client cache, so every request is a
//! call the server sees, as with a hypervisor's datastore client.
//!
//! Write durability follows the open flags as the Linux NFS client does:
//! `--file-extra-flags=sync` sends every WRITE FILE_SYNC (what VMware ESXi
//! sends for every write of a virtual disk), `dsync` DATA_SYNC, and without
//! them WRITEs are UNSTABLE and an fsync/fdatasync sends COMMIT if the file has
//! unstable data (a file written only stably needs none, as on Linux).

use crate::engine::{AlignedBuf, Engine, IoError, OpenFiles, Submitted};
use crate::failure::{Failure, Stream};
use crate::spec::{FileSet, FsyncMode, Mode, RunSpec};
use crate::run::fileset::{format_size, ChunkWriter, PrepareObserver, PrepareSummary};
use crate::run::generator::{Op, Request};
use nfs::{Client, Fh, Stable, Target};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The run's files on the export: handles shared by all threads, each thread
/// with its own connection.
pub struct NfsFiles {
    client: Client,
    pub handles: Vec<Fh>,
    stable: Stable,
    /// Per file: written unstably since the last COMMIT.
    dirty: Vec<AtomicBool>,
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
    let mut writer = ChunkWriter::new(files);
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

/// READ/WRITE per request (split at the server's transfer size), COMMIT per
/// fsync of a file with unstable data; one connection per thread.
pub struct NfsEngine {
    files: Arc<OpenFiles>,
    /// Boxed: the runner holds engines in one enum, sized by its largest.
    client: Box<Client>,
    buf: AlignedBuf,
}

fn io_error(op: Op, file: u32, pos: u64, e: &nfs::Error) -> IoError {
    IoError {
        op,
        fd: i32::try_from(file).unwrap_or(i32::MAX),
        pos,
        errno: e.errno(),
        short: None,
    }
}

impl NfsEngine {
    /// A new connection to the export of `files` (which must be on NFS).
    pub fn new(files: Arc<OpenFiles>, buf: AlignedBuf) -> Result<NfsEngine, Failure> {
        let nfs = files
            .nfs
            .as_ref()
            .ok_or_else(|| Failure::fatal("the NFS engine needs files on an NFS export"))?;
        let client =
            Box::new(nfs.client.another().map_err(|e| {
                Failure::fatal(format!("nfs: cannot connect a worker thread: {e}"))
            })?);
        Ok(NfsEngine { files, client, buf })
    }

    /// Calls this engine's connection made so far.
    pub fn counts(&self) -> nfs::Counts {
        self.client.counts()
    }

    fn nfs(&self) -> &NfsFiles {
        self.files.nfs.as_ref().expect("checked in new")
    }
}

impl Engine for NfsEngine {
    fn name(&self) -> &'static str {
        "nfs"
    }
    fn buffer_mut(&mut self) -> &mut [u8] {
        self.buf.as_mut_slice()
    }
    fn submit(&mut self, req: &Request) -> Result<Submitted, IoError> {
        let files = Arc::clone(&self.files);
        let nfs = files.nfs.as_ref().expect("checked in new");
        let fh = &nfs.handles[req.file as usize];
        let len = req.transfer_len();
        if req.op != Op::Read {
            // Short WRITEs are sent again, a bounded number of times, and a
            // WRITE of which the server takes nothing is an error.
            let committed = self
                .client
                .write_all(fh, req.pos, &self.buf.as_slice()[..len], nfs.stable)
                .map_err(|e| io_error(req.op, req.file, req.pos, &e))?;
            if committed == Stable::Unstable {
                nfs.dirty[req.file as usize].store(true, Ordering::Release);
            }
            return Ok(Submitted::Done(req.size));
        }
        let max_read = self.client.max_read() as usize;
        let most = len.div_ceil(max_read) + nfs::MAX_SHORT_RESENDS as usize;
        let mut done = 0usize;
        let mut calls = 0;
        // A READ may return fewer bytes than asked; the rest is asked again,
        // but not for ever: at end of file (0 bytes) or after `most` calls
        // the request is a short read.
        while done < len && calls < most {
            let pos = req.pos + done as u64;
            let chunk = (len - done).min(max_read);
            let buf = &mut self.buf.as_mut_slice()[done..done + chunk];
            let n = self
                .client
                .read(fh, pos, buf)
                .map_err(|e| io_error(req.op, req.file, pos, &e))?;
            calls += 1;
            if n == 0 {
                break;
            }
            done += n;
        }
        if done == len {
            Ok(Submitted::Done(req.size))
        } else {
            Err(IoError {
                op: req.op,
                fd: i32::try_from(req.file).unwrap_or(i32::MAX),
                pos: req.pos,
                errno: 0,
                short: Some((done as u64, req.size)),
            })
        }
    }
    fn sync(&mut self, file: u32, _mode: FsyncMode) -> Result<(), IoError> {
        // fsync and fdatasync both COMMIT (the Linux client's nfs_file_fsync
        // makes no difference either), and only when unstable data is there.
        if !self.nfs().dirty[file as usize].swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        let files = Arc::clone(&self.files);
        let fh = &files.nfs.as_ref().expect("checked in new").handles[file as usize];
        self.client
            .commit(fh)
            .map_err(|e| io_error(Op::Fsync, file, 0, &e))
    }
}

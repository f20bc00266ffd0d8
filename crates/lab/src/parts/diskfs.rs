//! The disk file system: a FUSE mount with one regular file per emulated disk.
//! Each file is backed by a sparse file; every read, write and fsync is done on
//! the backing file at once and its reply is held back until the disk model says
//! the operation would have completed.
//!
//! Power cuts: for every write the model does not yet call durable, the
//! backing file's previous content is kept ([`crate::parts::undo`]). Writing
//! `power-cut` to the control file [`CONTROL_FILE`] in the mount cuts the
//! power of every disk at once: replies still held are never sent as success
//! (the kernel gets EIO), each disk reverts what its model says a cut loses,
//! and the file system goes on serving (the power is back). `power-off` cuts
//! the same way but leaves the disks dark: every request fails with EIO and
//! changes nothing until `power-on` (so a dying client's last requests cannot
//! reach a disk that has no power, however long it takes to die). Reading the
//! control file returns the last cut's losses as JSON. The file is not listed
//! in the directory (so `zpool import -d` never opens it), only root may open
//! it, and any other content is refused with EINVAL.
//!
//! zfs-fuse (and kernel OpenZFS) use these files as vdevs: a vdev cache flush
//! becomes `fsync` on the file, which the model charges as a disk cache flush.
//! Files are opened with FOPEN_DIRECT_IO so the kernel page cache never answers
//! for the disk: every access reaches the model.

use crate::parts::undo::{CutLoss, UndoLog};
use fuser::{
    AccessFlags, BsdFileFlags, Config, Errno, FileAttr, FileHandle, FileType, Filesystem,
    FopenFlags, Generation, INodeNo, LockOwner, MountOption, OpenFlags, ReplyAttr, ReplyData,
    ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request,
    WriteFlags,
};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};
use zfs_model::diskmodel::{Disk, DiskRequest, ModelParams, Nanos, Op};

/// Name of the control file in the mount (hidden, unlisted).
pub const CONTROL_FILE: &str = ".tankbench-power";
/// The one command the control file takes.
pub(crate) const POWER_CUT: &str = "power-cut";
/// Cut the power and keep it off (see the module comment).
pub(crate) const POWER_OFF: &str = "power-off";
/// Power back after `power-off`.
pub(crate) const POWER_ON: &str = "power-on";
/// Inode of the control file: far above the disks' (2, 3, ...).
const CONTROL_INO: u64 = 1 << 40;

/// One emulated disk.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DiskConfig {
    /// File name inside the mount (`tb-d00`, `tb-log0`, ...).
    pub name: String,
    /// Sparse backing file.
    pub backing: PathBuf,
    pub size: u64,
    pub model: ModelParams,
}

/// Everything the disk server needs; written as JSON by the lab, read by the
/// daemon process.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DiskSetConfig {
    pub mountpoint: PathBuf,
    /// FUSE file system name shown in the mount table (carries the lab prefix).
    pub fsname: String,
    /// Per-disk counters are written here about once a second.
    #[serde(default)]
    pub stats_file: Option<PathBuf>,
    /// Every request is recorded here as it arrives (`lab up
    /// --disk-trace`): one line each, `arrival_ns disk op bytes done_ns
    /// offset`, the times on the daemon's model clock (ns since it
    /// started), the disk as its index in `disks`, the op `R`, `W` or `F`,
    /// `done_ns` when its model completes it, the byte offset of a read or
    /// write (`-` for a flush): where the platform places its blocks. How
    /// a platform spends its time between device requests is read from it
    /// (docs/lab.md, "Tracing the disks").
    #[serde(default)]
    pub trace_file: Option<PathBuf>,
    pub disks: Vec<DiskConfig>,
}

const TTL: Duration = Duration::from_secs(1);
const ROOT_INO: u64 = 1;

type Job = Box<dyn FnOnce() + Send>;

struct Timed {
    at: Nanos,
    seq: u64,
    job: Job,
}

impl PartialEq for Timed {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Timed {}
impl PartialOrd for Timed {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Timed {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest first.
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// Pending jobs, the last sequence number, and whether to stop.
type Queue = Mutex<(BinaryHeap<Timed>, u64, bool)>;

/// Runs jobs (FUSE replies) at given instants on one thread.
#[derive(Clone)]
pub(crate) struct Delayer {
    inner: Arc<(Queue, Condvar)>,
    epoch: Instant,
}

impl Delayer {
    pub fn start() -> Delayer {
        let d = Delayer {
            inner: Arc::new((Mutex::new((BinaryHeap::new(), 0, false)), Condvar::new())),
            epoch: Instant::now(),
        };
        let worker = d.clone();
        std::thread::Builder::new()
            .name("tb-delayer".into())
            .spawn(move || worker.run())
            .expect("spawn delayer thread");
        d
    }

    pub fn now(&self) -> Nanos {
        // Saturates after 584 years of uptime rather than wrapping.
        Nanos::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(Nanos::MAX)
    }

    pub fn at(&self, at: Nanos, job: Job) {
        let (lock, cv) = &*self.inner;
        let mut g = lock.lock().unwrap();
        g.1 += 1;
        let seq = g.1;
        g.0.push(Timed { at, seq, job });
        cv.notify_one();
    }

    /// A power cut at the returned instant: replies due by then are sent,
    /// the others are dropped unsent (fuser answers a dropped reply with EIO),
    /// so nothing completing later is acknowledged.
    pub fn cut(&self) -> Nanos {
        let (lock, _) = &*self.inner;
        let (now, pending) = {
            let mut g = lock.lock().unwrap();
            let now = self.now();
            (now, std::mem::take(&mut g.0).into_sorted_vec())
        };
        // into_sorted_vec is ascending by Ord, which is reversed time:
        // latest first.
        let (due, never): (Vec<Timed>, Vec<Timed>) = pending.into_iter().partition(|t| t.at <= now);
        for t in due.into_iter().rev() {
            (t.job)();
        }
        drop(never);
        now
    }

    fn run(&self) {
        crate::parts::sys::precise_timers();
        let (lock, cv) = &*self.inner;
        let mut g = lock.lock().unwrap();
        loop {
            if g.2 && g.0.is_empty() {
                return;
            }
            let now = self.now();
            match g.0.peek().map(|t| t.at) {
                Some(at) if at <= now => {
                    let t = g.0.pop().unwrap();
                    drop(g);
                    (t.job)();
                    g = lock.lock().unwrap();
                }
                Some(at) => {
                    g = cv
                        .wait_timeout(g, Duration::from_nanos(at - now))
                        .unwrap()
                        .0;
                }
                None => {
                    g = cv.wait(g).unwrap();
                }
            }
        }
    }
}

struct DiskState {
    cfg: DiskConfig,
    file: File,
    model: Disk,
    /// Previous content of the writes not yet durable (empty for `none`,
    /// whose writes are durable the instant they complete).
    undo: UndoLog,
    tracks_writes: bool,
    stats: DiskStats,
}

/// Per-disk counters, written to the stats file so tests and users can see
/// what the pool did to each disk.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DiskStats {
    pub name: String,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Sum of modelled latencies (completion minus arrival), ms.
    pub model_ms: f64,
    /// Bytes of previous content held for writes not yet durable: at most
    /// what a power cut now would revert.
    #[serde(default)]
    pub volatile_bytes: u64,
    /// Writes counted as destaged early because the records reached the
    /// model's cache size (a full cache).
    #[serde(default)]
    pub bound_destaged: u64,
    #[serde(default)]
    pub power_cuts: u64,
    /// Totals over every power cut (see [`CutLoss`]).
    #[serde(default)]
    pub lost_writes: u64,
    #[serde(default)]
    pub lost_bytes: u64,
    #[serde(default)]
    pub torn_writes: u64,
    #[serde(default)]
    pub torn_bytes_lost: u64,
}

/// What one power cut did to one disk (the control file's report).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct DiskCut {
    pub name: String,
    #[serde(flatten)]
    pub loss: CutLoss,
}

/// The FUSE file system of one lab's disks.
pub struct DiskFs {
    disks: Vec<DiskState>,
    /// The last power cut's report (JSON), what reading the control file
    /// returns.
    last_cut: Vec<u8>,
    /// Powered off: every disk request fails with EIO.
    dark: bool,
    stats_file: Option<PathBuf>,
    stats_written: Instant,
    delayer: Delayer,
    uid: u32,
    gid: u32,
    started: SystemTime,
    /// The request trace (`DiskSetConfig::trace_file`), buffered and
    /// written out with the counters.
    trace: Option<std::io::BufWriter<std::fs::File>>,
}

impl DiskFs {
    /// Open (creating if needed) every backing file as a sparse file of the
    /// configured size.
    pub fn new(cfg: &DiskSetConfig) -> std::io::Result<DiskFs> {
        let mut disks = Vec::new();
        for d in &cfg.disks {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&d.backing)?;
            // set_len on a new file makes it sparse: no blocks are allocated.
            if file.metadata()?.len() != d.size {
                file.set_len(d.size)?;
            }
            let mut model = d.model.instantiate(d.size);
            model.track_writes();
            disks.push(DiskState {
                cfg: d.clone(),
                file,
                model,
                undo: UndoLog::new(d.model.power_loss().cache_bytes),
                tracks_writes: !matches!(d.model, ModelParams::None),
                stats: DiskStats {
                    name: d.name.clone(),
                    ..Default::default()
                },
            });
        }
        // create_new: the trace is a new file; one already there is not
        // ours and is left alone (`lab up` refuses it before building).
        let trace = match &cfg.trace_file {
            Some(p) => Some(std::io::BufWriter::with_capacity(
                1 << 20,
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(p)?,
            )),
            None => None,
        };
        Ok(DiskFs {
            trace,
            disks,
            last_cut: b"[]\n".to_vec(),
            dark: false,
            stats_file: cfg.stats_file.clone(),
            stats_written: Instant::now(),
            delayer: Delayer::start(),
            // SAFETY: getuid(2) and getgid(2) take no arguments, cannot fail
            // and touch no memory of ours.
            uid: unsafe { libc::getuid() },
            // SAFETY: as for getuid above.
            gid: unsafe { libc::getgid() },
            started: SystemTime::now(),
        })
    }

    fn disk_index(ino: u64) -> Option<usize> {
        ino.checked_sub(2).and_then(|i| usize::try_from(i).ok())
    }

    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let (kind, size, perm, nlink) = if ino == ROOT_INO {
            (FileType::Directory, 0, 0o755, 2)
        } else if ino == CONTROL_INO {
            (FileType::RegularFile, self.last_cut.len() as u64, 0o600, 1)
        } else {
            let d = self.disks.get(Self::disk_index(ino)?)?;
            (FileType::RegularFile, d.cfg.size, 0o600, 1)
        };
        Some(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: size.div_ceil(512),
            atime: self.started,
            mtime: self.started,
            ctime: self.started,
            crtime: self.started,
            kind,
            perm,
            nlink,
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    /// Charge `op` on disk `idx` and run `reply` when the model says it is done.
    fn complete_at_model_time(&mut self, idx: usize, op: Op, reply: Job) {
        let (now, done) = self.charge(idx, op);
        self.settle(idx, now);
        self.reply_at(now, done, reply);
    }

    /// Forget the undo records of writes that became durable.
    fn settle(&mut self, idx: usize, now: Nanos) {
        let d = &mut self.disks[idx];
        let durable = d.model.take_durable();
        d.undo.durable(&durable, now);
        d.undo.settle(now);
        d.stats.volatile_bytes = d.undo.bytes();
        d.stats.bound_destaged = d.undo.bound_destaged;
    }

    fn reply_at(&mut self, now: Nanos, done: Nanos, reply: Job) {
        self.maybe_write_stats();
        if done <= now {
            reply();
        } else {
            self.delayer.at(done, reply);
        }
    }

    /// Submit `op` to disk `idx`'s model and count it: (now, completion).
    fn charge(&mut self, idx: usize, op: Op) -> (Nanos, Nanos) {
        let now = self.delayer.now();
        let done = self.disks[idx].model.submit(now, op);
        let st = &mut self.disks[idx].stats;
        match op {
            Op::Read { len, .. } => {
                st.reads += 1;
                st.bytes_read += len;
            }
            Op::Write { len, .. } => {
                st.writes += 1;
                st.bytes_written += len;
            }
            Op::Flush => st.flushes += 1,
        }
        st.model_ms += done.saturating_sub(now) as f64 / 1e6;
        if let Some(trace) = self.trace.as_mut() {
            let request = DiskRequest {
                at: now,
                disk: idx,
                op,
                done,
            };
            // A full disk ends the trace, not the lab: the trace is a
            // diagnostic, the disks are what the pool runs on.
            if writeln!(trace, "{request}").is_err() {
                self.trace = None;
            }
        }
        (now, done)
    }

    /// Cut the power of every disk at once (see the module comment).
    pub(crate) fn power_cut(&mut self) -> std::io::Result<Vec<DiskCut>> {
        let now = self.delayer.cut();
        let mut report = Vec::new();
        for d in &mut self.disks {
            d.model.power_cut(now);
            let durable = d.model.take_durable();
            d.undo.durable(&durable, now);
            let DiskState {
                undo, model, file, ..
            } = d;
            let loss = undo.cut(file, now, |off, len| model.tear(off, len))?;
            let st = &mut d.stats;
            st.power_cuts += 1;
            st.lost_writes += loss.lost_writes;
            st.lost_bytes += loss.lost_bytes;
            st.torn_writes += loss.torn_writes;
            st.torn_bytes_lost += loss.torn_bytes_lost;
            st.volatile_bytes = 0;
            report.push(DiskCut {
                name: d.cfg.name.clone(),
                loss,
            });
        }
        self.last_cut =
            (serde_json::to_string_pretty(&report).expect("serializes") + "\n").into_bytes();
        self.write_stats();
        Ok(report)
    }
}

impl DiskFs {
    /// A write to the control file: `power-cut` (a trailing newline
    /// allowed) cuts the power; anything else is refused.
    fn control(&mut self, data: &[u8], reply: ReplyWrite) {
        let Ok(n) = u32::try_from(data.len()) else {
            return reply.error(Errno::EINVAL);
        };
        let command = data.strip_suffix(b"\n").unwrap_or(data);
        let result = match std::str::from_utf8(command) {
            Ok(POWER_CUT) if !self.dark => self.power_cut().map(|_| ()),
            Ok(POWER_OFF) if !self.dark => self.power_cut().map(|_| self.dark = true),
            Ok(POWER_ON) => {
                self.dark = false;
                Ok(())
            }
            // A cut while the power is off changes nothing: say so.
            Ok(POWER_CUT | POWER_OFF) => Err(std::io::Error::from_raw_os_error(libc::EALREADY)),
            _ => Err(std::io::Error::from_raw_os_error(libc::EINVAL)),
        };
        match result {
            Ok(()) => reply.written(n),
            Err(e) => reply.error(Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))),
        }
    }

    pub fn stats(&self) -> Vec<DiskStats> {
        self.disks.iter().map(|d| d.stats.clone()).collect()
    }

    fn maybe_write_stats(&mut self) {
        if self.stats_written.elapsed() < Duration::from_secs(1) {
            return;
        }
        self.write_stats();
    }

    fn write_stats(&mut self) {
        self.stats_written = Instant::now();
        if let Some(trace) = self.trace.as_mut() {
            if trace.flush().is_err() {
                self.trace = None;
            }
        }
        if let Some(p) = &self.stats_file {
            let tmp = p.with_extension("tmp");
            let text = serde_json::to_string_pretty(&self.stats()).expect("serializes");
            if std::fs::write(&tmp, text).is_ok() {
                let _ = std::fs::rename(&tmp, p);
            }
        }
    }
}

/// What fuser mounts: since fuser 0.17 the file system's methods take `&self`
/// (a session may run several event loops), so the state sits behind a mutex.
/// The lab runs one event loop, so the lock is never contended; it is held
/// while a request is charged and queued, never while a reply waits.
pub struct DiskFsServer(Mutex<DiskFs>);

impl DiskFsServer {
    pub fn new(fs: DiskFs) -> DiskFsServer {
        DiskFsServer(Mutex::new(fs))
    }

    fn disks(&self) -> std::sync::MutexGuard<'_, DiskFs> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Filesystem for DiskFsServer {
    /// Asynchronous direct I/O (FUSE_ASYNC_DIO): without it the kernel
    /// completes an AIO write on a FUSE file inside `io_submit`, so
    /// zfs-fuse (which issues its vdev I/O with Linux AIO) has one disk
    /// request in flight at a time, where a block device takes many. With
    /// it, a write goes to the daemon and `io_submit` returns, as it does on
    /// a disk.
    fn init(&mut self, _req: &Request, config: &mut fuser::KernelConfig) -> std::io::Result<()> {
        // A kernel without it (before Linux 3.13) keeps the synchronous
        // behaviour: the lab still works, with fewer requests in flight.
        let _ = config.add_capabilities(fuser::InitFlags::FUSE_ASYNC_DIO);
        // The counters from the start: a reader that finds the file
        // unchanged over a run knows no request reached the disks. Written
        // only after requests, a pool whose requests all came within the
        // first second (quicker now that they overlap) had no file at all.
        self.0
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .write_stats();
        Ok(())
    }

    fn destroy(&mut self) {
        // Final counters when the file system is unmounted.
        self.0
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .write_stats();
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let fs = self.disks();
        let parent = parent.0;
        if parent != ROOT_INO {
            return reply.error(Errno::ENOENT);
        }
        if name == OsStr::new(CONTROL_FILE) {
            return reply.entry(&TTL, &fs.attr(CONTROL_INO).expect("control"), Generation(0));
        }
        match fs
            .disks
            .iter()
            .position(|d| OsStr::new(&d.cfg.name) == name)
        {
            Some(i) => reply.entry(&TTL, &fs.attr(i as u64 + 2).unwrap(), Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        let fs = self.disks();
        match fs.attr(ino.0) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let fs = self.disks();
        let ino = ino.0;
        // A disk's size is fixed; accept only a no-op size change (open with
        // O_TRUNC is refused rather than silently wiping a disk).
        let Some(a) = fs.attr(ino) else {
            return reply.error(Errno::ENOENT);
        };
        // The control file takes O_TRUNC (a shell's `>`): its size is the
        // report's and not stored.
        if ino != CONTROL_INO && size.is_some_and(|s| s != a.size) {
            return reply.error(Errno::EPERM);
        }
        reply.attr(&TTL, &a)
    }

    fn open(&self, req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let fs = self.disks();
        let ino = ino.0;
        if ino == CONTROL_INO {
            // Only root cuts the power, whatever the mount's permissions.
            if req.uid() != 0 {
                return reply.error(Errno::EACCES);
            }
            return reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
        }
        if DiskFs::disk_index(ino)
            .and_then(|i| fs.disks.get(i))
            .is_none()
        {
            return reply.error(Errno::EISDIR);
        }
        reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO)
    }

    #[allow(clippy::too_many_arguments)]
    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let mut fs = self.disks();
        let ino = ino.0;
        if ino == CONTROL_INO {
            let from = usize::try_from(offset)
                .unwrap_or(usize::MAX)
                .min(fs.last_cut.len());
            let to = from.saturating_add(size as usize).min(fs.last_cut.len());
            return reply.data(&fs.last_cut[from..to]);
        }
        let Some(idx) = DiskFs::disk_index(ino).filter(|i| *i < fs.disks.len()) else {
            return reply.error(Errno::ENOENT);
        };
        if fs.dark {
            return reply.error(Errno::EIO);
        }
        let disk_size = fs.disks[idx].cfg.size;
        let len = u64::from(size).min(disk_size.saturating_sub(offset));
        // len <= size, a u32, so it fits a usize on every target fuser builds for.
        let Ok(buf_len) = usize::try_from(len) else {
            return reply.error(Errno::EINVAL);
        };
        let mut buf = vec![0u8; buf_len];
        let mut got = 0usize;
        while got < buf.len() {
            match fs.disks[idx]
                .file
                .read_at(&mut buf[got..], offset + got as u64)
            {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return reply.error(Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO)))
                }
            }
        }
        // Sparse holes past the backing file's end read as zeros.
        if len == 0 {
            return reply.data(&[]);
        }
        fs.complete_at_model_time(
            idx,
            Op::Read { offset, len },
            Box::new(move || reply.data(&buf)),
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut fs = self.disks();
        let ino = ino.0;
        if ino == CONTROL_INO {
            return fs.control(data, reply);
        }
        let Some(idx) = DiskFs::disk_index(ino).filter(|i| *i < fs.disks.len()) else {
            return reply.error(Errno::ENOENT);
        };
        if fs.dark {
            return reply.error(Errno::EIO);
        }
        // The kernel sends at most max_write bytes per request, far below 4 GiB;
        // anything larger is refused before a byte is written.
        let Ok(n) = u32::try_from(data.len()) else {
            return reply.error(Errno::EINVAL);
        };
        let len = u64::from(n);
        if offset + len > fs.disks[idx].cfg.size {
            // A disk does not grow.
            return reply.error(Errno::ENOSPC);
        }
        let (now, done) = fs.charge(idx, Op::Write { offset, len });
        let d = &mut fs.disks[idx];
        if d.tracks_writes {
            // Before the write changes them: what a power cut restores.
            let id = d.model.last_write_id();
            if let Err(e) = d.undo.save(&d.file, id, offset, len, done) {
                return reply.error(Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO)));
            }
        }
        if let Err(e) = d.file.write_all_at(data, offset) {
            return reply.error(Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO)));
        }
        fs.settle(idx, now);
        fs.reply_at(now, done, Box::new(move || reply.written(n)));
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let mut fs = self.disks();
        let ino = ino.0;
        if ino == CONTROL_INO {
            return reply.ok();
        }
        let Some(idx) = DiskFs::disk_index(ino).filter(|i| *i < fs.disks.len()) else {
            return reply.error(Errno::ENOENT);
        };
        if fs.dark {
            return reply.error(Errno::EIO);
        }
        // The backing file is not synced: what a flush makes durable is the
        // model's business (the undo records); a host crash loses the lab
        // anyway.
        fs.complete_at_model_time(idx, Op::Flush, Box::new(move || reply.ok()));
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // close(2), not a cache flush: free.
        reply.ok()
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let fs = self.disks();
        let ino = ino.0;
        if ino != ROOT_INO {
            return reply.error(Errno::ENOTDIR);
        }
        let mut entries: Vec<(u64, FileType, String)> = vec![
            (ROOT_INO, FileType::Directory, ".".into()),
            (ROOT_INO, FileType::Directory, "..".into()),
        ];
        for (i, d) in fs.disks.iter().enumerate() {
            entries.push((i as u64 + 2, FileType::RegularFile, d.cfg.name.clone()));
        }
        for (i, (ino, kind, name)) in entries
            .into_iter()
            .enumerate()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        {
            if reply.add(INodeNo(ino), (i + 1) as u64, kind, name) {
                break;
            }
        }
        reply.ok()
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let mut fs = self.disks();
        // Counters are published on I/O at most once a second, so the last
        // second of a workload would stay unpublished until the next I/O; a
        // statfs(2) of the mount asks for them (see `Lab::disk_stats_now`).
        fs.maybe_write_stats();
        let total: u64 = fs.disks.iter().map(|d| d.cfg.size).sum::<u64>() / 4096;
        reply.statfs(total, 0, 0, fs.disks.len() as u64 + 1, 0, 4096, 255, 4096)
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: AccessFlags, reply: ReplyEmpty) {
        reply.ok()
    }
}

/// Ask the disk file system mounted at `mount` to publish its counters now
/// (statfs(2) of the mount; at most once a second, like publishing on I/O).
pub(crate) fn ask_to_publish(mount: &Path) -> std::io::Result<()> {
    let c = std::ffi::CString::new(mount.as_os_str().as_encoded_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: `c` is a NUL-terminated path and `st` a buffer of the struct
    // statfs(2) fills; it is not read afterwards.
    if unsafe { libc::statfs(c.as_ptr(), st.as_mut_ptr()) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Mount the disk file system and serve it until it is unmounted. Runs in the
/// lab's disk daemon process.
pub(crate) fn serve(cfg: &DiskSetConfig) -> std::io::Result<()> {
    let fs = DiskFsServer::new(DiskFs::new(cfg)?);
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName(cfg.fsname.clone()),
        MountOption::Subtype("tankbench-lab".into()),
        MountOption::NoAtime,
        MountOption::NoExec,
        MountOption::NoSuid,
        MountOption::NoDev,
    ];
    fuser::Session::new(fs, &cfg.mountpoint, &config)?.run()
}

/// Whether `path` is the mount point of a FUSE file system right now.
pub fn is_fuse_mount(path: &Path) -> bool {
    crate::parts::sys::mounts()
        .iter()
        .any(|m| m.target == path && m.fstype.starts_with("fuse"))
}

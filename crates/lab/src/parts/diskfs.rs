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
    FileAttr, FileType, Filesystem, MountOption, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request,
};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};
use zfs_model::diskmodel::{Disk, ModelParams, Nanos, Op};

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
    pub disks: Vec<DiskConfig>,
}

const TTL: Duration = Duration::from_secs(1);
const ROOT_INO: u64 = 1;
/// FOPEN_DIRECT_IO: bypass the page cache for this open file.
const FOPEN_DIRECT_IO: u32 = 1;

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
        Ok(DiskFs {
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
            ino,
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
            return reply.error(libc::EINVAL);
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
            Err(e) => reply.error(e.raw_os_error().unwrap_or(libc::EIO)),
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
        if let Some(p) = &self.stats_file {
            let tmp = p.with_extension("tmp");
            let text = serde_json::to_string_pretty(&self.stats()).expect("serializes");
            if std::fs::write(&tmp, text).is_ok() {
                let _ = std::fs::rename(&tmp, p);
            }
        }
    }
}

impl Filesystem for DiskFs {
    fn destroy(&mut self) {
        // Final counters when the file system is unmounted.
        self.write_stats();
    }

    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        if parent != ROOT_INO {
            return reply.error(libc::ENOENT);
        }
        if name == OsStr::new(CONTROL_FILE) {
            return reply.entry(&TTL, &self.attr(CONTROL_INO).expect("control"), 0);
        }
        match self
            .disks
            .iter()
            .position(|d| OsStr::new(&d.cfg.name) == name)
        {
            Some(i) => reply.entry(&TTL, &self.attr(i as u64 + 2).unwrap(), 0),
            None => reply.error(libc::ENOENT),
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(libc::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        // A disk's size is fixed; accept only a no-op size change (open with
        // O_TRUNC is refused rather than silently wiping a disk).
        let Some(a) = self.attr(ino) else {
            return reply.error(libc::ENOENT);
        };
        // The control file takes O_TRUNC (a shell's `>`): its size is the
        // report's and not stored.
        if ino != CONTROL_INO && size.is_some_and(|s| s != a.size) {
            return reply.error(libc::EPERM);
        }
        reply.attr(&TTL, &a)
    }

    fn open(&mut self, req: &Request<'_>, ino: u64, _flags: i32, reply: ReplyOpen) {
        if ino == CONTROL_INO {
            // Only root cuts the power, whatever the mount's permissions.
            if req.uid() != 0 {
                return reply.error(libc::EACCES);
            }
            return reply.opened(0, FOPEN_DIRECT_IO);
        }
        if Self::disk_index(ino)
            .and_then(|i| self.disks.get(i))
            .is_none()
        {
            return reply.error(libc::EISDIR);
        }
        reply.opened(0, FOPEN_DIRECT_IO)
    }

    #[allow(clippy::too_many_arguments)]
    fn read(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        size: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyData,
    ) {
        if ino == CONTROL_INO {
            let from = usize::try_from(offset.max(0))
                .unwrap_or(usize::MAX)
                .min(self.last_cut.len());
            let to = from.saturating_add(size as usize).min(self.last_cut.len());
            return reply.data(&self.last_cut[from..to]);
        }
        let Some(idx) = Self::disk_index(ino).filter(|i| *i < self.disks.len()) else {
            return reply.error(libc::ENOENT);
        };
        if self.dark {
            return reply.error(libc::EIO);
        }
        let disk_size = self.disks[idx].cfg.size;
        // A negative offset reads from the start, as before.
        let offset = u64::try_from(offset).unwrap_or(0);
        let len = u64::from(size).min(disk_size.saturating_sub(offset));
        // len <= size, a u32, so it fits a usize on every target fuser builds for.
        let Ok(buf_len) = usize::try_from(len) else {
            return reply.error(libc::EINVAL);
        };
        let mut buf = vec![0u8; buf_len];
        let mut got = 0usize;
        while got < buf.len() {
            match self.disks[idx]
                .file
                .read_at(&mut buf[got..], offset + got as u64)
            {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return reply.error(e.raw_os_error().unwrap_or(libc::EIO)),
            }
        }
        // Sparse holes past the backing file's end read as zeros.
        if len == 0 {
            return reply.data(&[]);
        }
        self.complete_at_model_time(
            idx,
            Op::Read { offset, len },
            Box::new(move || reply.data(&buf)),
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        data: &[u8],
        _write_flags: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyWrite,
    ) {
        if ino == CONTROL_INO {
            return self.control(data, reply);
        }
        let Some(idx) = Self::disk_index(ino).filter(|i| *i < self.disks.len()) else {
            return reply.error(libc::ENOENT);
        };
        if self.dark {
            return reply.error(libc::EIO);
        }
        let offset = u64::try_from(offset).unwrap_or(0);
        // The kernel sends at most max_write bytes per request, far below 4 GiB;
        // anything larger is refused before a byte is written.
        let Ok(n) = u32::try_from(data.len()) else {
            return reply.error(libc::EINVAL);
        };
        let len = u64::from(n);
        if offset + len > self.disks[idx].cfg.size {
            // A disk does not grow.
            return reply.error(libc::ENOSPC);
        }
        let (now, done) = self.charge(idx, Op::Write { offset, len });
        let d = &mut self.disks[idx];
        if d.tracks_writes {
            // Before the write changes them: what a power cut restores.
            let id = d.model.last_write_id();
            if let Err(e) = d.undo.save(&d.file, id, offset, len, done) {
                return reply.error(e.raw_os_error().unwrap_or(libc::EIO));
            }
        }
        if let Err(e) = d.file.write_all_at(data, offset) {
            return reply.error(e.raw_os_error().unwrap_or(libc::EIO));
        }
        self.settle(idx, now);
        self.reply_at(now, done, Box::new(move || reply.written(n)));
    }

    fn fsync(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        if ino == CONTROL_INO {
            return reply.ok();
        }
        let Some(idx) = Self::disk_index(ino).filter(|i| *i < self.disks.len()) else {
            return reply.error(libc::ENOENT);
        };
        if self.dark {
            return reply.error(libc::EIO);
        }
        // The backing file is not synced: what a flush makes durable is the
        // model's business (the undo records); a host crash loses the lab
        // anyway.
        self.complete_at_model_time(idx, Op::Flush, Box::new(move || reply.ok()));
    }

    fn flush(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        _lock_owner: u64,
        reply: ReplyEmpty,
    ) {
        // close(2), not a cache flush: free.
        reply.ok()
    }

    fn readdir(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        mut reply: ReplyDirectory,
    ) {
        if ino != ROOT_INO {
            return reply.error(libc::ENOTDIR);
        }
        let mut entries: Vec<(u64, FileType, String)> = vec![
            (ROOT_INO, FileType::Directory, ".".into()),
            (ROOT_INO, FileType::Directory, "..".into()),
        ];
        for (i, d) in self.disks.iter().enumerate() {
            entries.push((i as u64 + 2, FileType::RegularFile, d.cfg.name.clone()));
        }
        for (i, (ino, kind, name)) in entries
            .into_iter()
            .enumerate()
            .skip(usize::try_from(offset.max(0)).unwrap_or(usize::MAX))
        {
            if reply.add(ino, (i + 1) as i64, kind, name) {
                break;
            }
        }
        reply.ok()
    }

    fn statfs(&mut self, _req: &Request<'_>, _ino: u64, reply: ReplyStatfs) {
        // Counters are published on I/O at most once a second, so the last
        // second of a workload would stay unpublished until the next I/O; a
        // statfs(2) of the mount asks for them (see `Lab::disk_stats_now`).
        self.maybe_write_stats();
        let total: u64 = self.disks.iter().map(|d| d.cfg.size).sum::<u64>() / 4096;
        reply.statfs(total, 0, 0, self.disks.len() as u64 + 1, 0, 4096, 255, 4096)
    }

    fn access(&mut self, _req: &Request<'_>, _ino: u64, _mask: i32, reply: ReplyEmpty) {
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
    let fs = DiskFs::new(cfg)?;
    let options = [
        MountOption::FSName(cfg.fsname.clone()),
        MountOption::Subtype("tankbench-lab".into()),
        MountOption::NoAtime,
        MountOption::NoExec,
        MountOption::NoSuid,
        MountOption::NoDev,
    ];
    let mut session = fuser::Session::new(fs, &cfg.mountpoint, &options)?;
    session.run()
}

/// Whether `path` is the mount point of a FUSE file system right now.
pub fn is_fuse_mount(path: &Path) -> bool {
    crate::parts::sys::mounts()
        .iter()
        .any(|m| m.target == path && m.fstype.starts_with("fuse"))
}

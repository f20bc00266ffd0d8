//! The ZFS server of a simulation: its CPUs, the ARC, the ZIL, the txg
//! pipeline with its write throttle, and the pool's vdev queues and disks.
//! It is told when a client's message arrives ([`ZfsServer::arrive`]) and
//! handles its own events (CPU done, throttle over, ZIL batch, txg timeout,
//! txg writes done, txg synced); when a request is done it schedules the
//! client's [`Event::Reply`]. Read and testable without the clients.

use std::collections::HashSet;

use fileio::options::RunSpec;
use fileio::rng::SeededStream;
use fileio::run::generator::Request;

use crate::components::{Arc, Cpu, LogDevice, Pool, LR_WRITE_BYTES, SECTOR};
use crate::event::Event;
use crate::limits::MAX_MODELLED_BLOCKS as MAX_RECORDS;
use crate::queue::{EventQueue, Nanos};
use crate::system::{
    service_time, LogWriteRule, Logbias, Protocol, SyncProperty, System, ZilBatching,
};
use crate::{NotModelled, SimError};
use zfs_model::diskmodel::DiskRequest;

/// Stream of the run seed the server CPU's draws come from.
const CPU_STREAM: u64 = (1 << 32) + 1;

/// Size of a journal block the guest writes for an fsync (ext4's block).
pub(crate) const JOURNAL_BLOCK: u64 = 4096;

/// The request size `server.cpu_us` was measured at (PS-009's 4 KiB
/// cached requests): `server.cpu_us_per_mib` is charged beyond it.
pub(crate) const CPU_US_MEASURED_AT: u64 = 4096;

/// `zfs_immediate_write_sz` (zfs_log.c) and `zvol_immediate_write_sz`
/// (zvol.c), 32 KiB in every release: under `logbias=latency` on a pool
/// without a log device, writes from this size up are WR_INDIRECT.
pub(crate) const IMMEDIATE_WRITE_SZ: u64 = 32 << 10;

/// What one message to the server asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rpc {
    Read,
    Write,
    /// NFS COMMIT, or fsync on the server itself.
    Commit,
    /// A guest journal block (a stable write outside the file set).
    Journal,
}

/// What a client's message asks of the server: the request and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Message {
    pub(crate) rpc: Rpc,
    pub(crate) req: Request,
}

/// The txg pipeline's state: one txg open, at most one syncing (a third,
/// quiesced, waits for it).
pub(crate) struct TxgState {
    /// Bytes dirtied in the open txg (a record counts whole: dbuf_dirty
    /// charges the dirty buffer's size).
    open_dirty: u64,
    /// Bytes of the txg being synced, released when it completes.
    syncing_dirty: u64,
    syncing: bool,
    /// The open txg asked to sync while another was syncing.
    sync_wanted: bool,
    /// dmu_tx_delay's dp_last_wakeup.
    last_wakeup: Nanos,
    /// Writers blocked at `zfs_dirty_data_max` until the sync completes.
    blocked: Vec<u32>,
    /// Throttle waits and blocks, for the result's notes.
    pub(crate) delayed: u64,
    delay_ns: u64,
    pub(crate) blocks: u64,
    pub(crate) syncs: u64,
    /// When the AsyncDone event in the queue fires, and its number.
    async_event_at: Nanos,
    async_generation: u32,
}

/// The block a WR_INDIRECT record's `dmu_sync` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Synced {
    /// The file record the model tracks.
    Record(u32),
    /// A further block of a write spanning several (the model tracks one
    /// record a write).
    Spanned,
    /// A guest journal block.
    Journal,
}

/// The ZIL's state between commits.
struct Zil {
    /// Log record bytes written since the last commit or txg sync.
    pending: u64,
    /// When the last log block issued completes (pipelined).
    last_done: Nanos,
    /// When the batch in flight completes (one-in-flight).
    in_flight_until: Nanos,
    batch_scheduled: bool,
    waiting: Vec<u32>,
    /// WR_INDIRECT records logged since the last commit: the bytes of the
    /// block `dmu_sync` writes for each (the whole block the write is in),
    /// and which block it is.
    indirect: Vec<(u64, Synced)>,
    /// Per vdev: whether the commit being written touched it (scratch).
    touched: Vec<bool>,
}

impl TxgState {
    fn new(threads: usize) -> TxgState {
        TxgState {
            open_dirty: 0,
            syncing_dirty: 0,
            syncing: false,
            sync_wanted: false,
            last_wakeup: 0,
            blocked: Vec::with_capacity(threads),
            delayed: 0,
            delay_ns: 0,
            blocks: 0,
            syncs: 0,
            async_event_at: Nanos::MAX,
            async_generation: 0,
        }
    }
}

/// The server: every part a request meets after the link.
pub(crate) struct ZfsServer<'a> {
    sys: &'a System,
    pub(crate) cpu: Cpu,
    cpu_jitter: SeededStream,
    arc: Arc,
    pub(crate) pool: Pool,
    pub(crate) log: Option<LogDevice>,
    zil: Zil,
    pub(crate) txg: TxgState,
    records_per_file: u64,
    /// Every data write waits for a commit: the protocol sends it stable, or
    /// the file is open O_SYNC/O_DSYNC (which a Linux NFS client turns into
    /// FILE_SYNC WRITEs, an iSCSI initiator into FUA writes, and ZFS itself
    /// into a zil_commit per write).
    stable_writes: bool,
    dirty_per_vdev: Vec<u64>,
    journal_dirty: u64,
    /// Records of the open txg already written by `dmu_sync` (their dirty
    /// record's `dr_override_state` is DR_OVERRIDDEN): the txg sync writes
    /// only their block pointer (`dbuf_write` -> `zio_write_override`), not
    /// the data again. Dirtying one again undoes it (`dbuf_unoverride`).
    overridden: HashSet<u32>,
    /// Journal bytes of the open txg written by `dmu_sync` the same way.
    journal_overridden: u64,
    /// The message each client thread has at the server.
    ops: Vec<Message>,
}

impl<'a> ZfsServer<'a> {
    /// The server of `sys` for `spec`'s file set and `threads` clients,
    /// its ARC holding what `prepare` wrote last.
    pub(crate) fn new(
        spec: &RunSpec,
        sys: &'a System,
        threads: usize,
    ) -> Result<ZfsServer<'a>, SimError> {
        let records_per_file = spec.files.file_size.div_ceil(sys.recordsize).max(1);
        let records = spec.files.file_num.saturating_mul(records_per_file);
        if records > MAX_RECORDS {
            return Err(SimError::from(NotModelled {
                option: "pool.recordsize",
                message: format!(
                "the file set is {records} records of pool.recordsize (pool.volblocksize for iscsi); at most {MAX_RECORDS} are modelled (raise it or lower --file-total-size)"
            ),
            }));
        }
        let arc_records = (sys.arc_bytes / sys.recordsize).min(records);
        // Both at most MAX_RECORDS (2^28), within u32.
        #[allow(clippy::cast_possible_truncation)]
        // `prepare` wrote the files in order just before the run, so the ARC
        // starts with the last records written (as many as it holds).
        let arc = Arc::holding(
            records as u32,
            arc_records as u32,
            (records - arc_records) as u32,
        );
        let pool = Pool::new(
            sys.shape,
            &sys.disk,
            sys.disk_bytes,
            sys.recordsize,
            spec.rand_seed,
        )
        .flushing_in_turn(sys.flush_in_turn);
        let vdevs = pool.vdevs();
        Ok(ZfsServer {
            sys,
            cpu: Cpu::new(sys.cores, sys.cpu_contention),
            cpu_jitter: SeededStream::new(spec.rand_seed, CPU_STREAM),
            arc,
            pool,
            log: sys.log.as_ref().map(|m| {
                let members: Vec<_> = std::iter::once(m).chain(sys.log_mirror.as_ref()).collect();
                LogDevice::mirrored(&members, sys.disk_bytes, spec.rand_seed)
            }),
            zil: Zil {
                pending: 0,
                last_done: 0,
                in_flight_until: 0,
                batch_scheduled: false,
                waiting: Vec::with_capacity(threads),
                indirect: Vec::with_capacity(threads),
                touched: vec![false; vdevs],
            },
            txg: TxgState::new(threads),
            records_per_file,
            stable_writes: (sys.stable_writes
                || spec.files.extra_flags.sync
                || spec.files.extra_flags.dsync)
                && (sys.nfs_sync_honoured || !sys.protocol.is_nfs()),
            dirty_per_vdev: vec![0; vdevs],
            journal_dirty: 0,
            overridden: HashSet::new(),
            journal_overridden: 0,
            ops: vec![
                Message {
                    rpc: Rpc::Read,
                    req: Request {
                        op: fileio::run::generator::Op::Read,
                        file: 0,
                        pos: 0,
                        size: 0,
                    },
                };
                threads
            ],
        })
    }

    /// Record every disk request from now on: the pool's children, then
    /// the log device's members ([`ZfsServer::take_disk_trace`]).
    pub(crate) fn start_disk_trace(&mut self) {
        self.pool.start_trace();
        let first = self.pool.disks();
        if let Some(log) = &mut self.log {
            log.start_trace(first);
        }
    }

    /// The disk requests recorded since [`ZfsServer::start_disk_trace`], by
    /// arrival time, then disk.
    pub(crate) fn take_disk_trace(&mut self) -> Vec<DiskRequest> {
        let mut all = self.pool.take_trace();
        if let Some(log) = &mut self.log {
            all.extend(log.take_trace());
        }
        all.sort_by_key(|r| (r.at, r.disk));
        all
    }

    /// Client `w`'s message reaches the server: its CPU takes it.
    pub(crate) fn arrive(
        &mut self,
        now: Nanos,
        w: u32,
        message: Message,
        q: &mut EventQueue<Event>,
    ) {
        let mean = self.sys.server_cpu_ns + self.copy_ns(&message);
        self.ops[w as usize] = message;
        let cost = service_time(&mut self.cpu_jitter, self.sys.cpu_service, mean);
        let done = self.cpu.run(now, cost);
        q.schedule(done, Event::Served(w));
    }

    /// The CPU time of moving a read's or write's data beyond the 4 KiB
    /// `server.cpu_us` already holds (`server.cpu_us_per_mib`).
    fn copy_ns(&self, message: &Message) -> Nanos {
        match message.rpc {
            Rpc::Read | Rpc::Write => {
                let beyond = message.req.size.saturating_sub(CPU_US_MEASURED_AT);
                let ns = u128::from(beyond) * u128::from(self.sys.server_cpu_ns_per_mib)
                    / u128::from(zfs_model::units::MIB);
                Nanos::try_from(ns).unwrap_or(Nanos::MAX)
            }
            Rpc::Journal | Rpc::Commit => 0,
        }
    }

    fn record_of(&self, req: &Request) -> u32 {
        let r = u64::from(req.file) * self.records_per_file + req.pos / self.sys.recordsize;
        // Below the record count, which new() held to MAX_RECORDS.
        #[allow(clippy::cast_possible_truncation)]
        let r = r as u32;
        r
    }

    /// The server has the request: a write first passes the write
    /// throttle (dmu_tx_assign, before it touches any data).
    pub(crate) fn served(&mut self, now: Nanos, w: u32, q: &mut EventQueue<Event>) {
        match self.ops[w as usize].rpc {
            Rpc::Write | Rpc::Journal => self.throttle(now, w, q),
            Rpc::Read | Rpc::Commit => self.apply(now, w, q),
        }
    }

    /// dmu_tx_delay: with dirty data above `zfs_delay_min_dirty_percent`
    /// each write waits its share of the delay curve after the previous
    /// delayed write's wakeup; at `zfs_dirty_data_max` it waits for the
    /// syncing txg to complete.
    pub(crate) fn throttle(&mut self, now: Nanos, w: u32, q: &mut EventQueue<Event>) {
        let tuning = self.sys.txg;
        let dirty = self.txg.open_dirty + self.txg.syncing_dirty;
        if dirty >= tuning.dirty_max {
            self.txg.blocks += 1;
            self.txg.blocked.push(w);
            self.request_sync(now, q);
            return;
        }
        let delay = tuning.delay_ns(dirty);
        if delay == 0 {
            self.apply(now, w, q);
            return;
        }
        let wakeup = (now + delay).max(self.txg.last_wakeup + delay);
        self.txg.last_wakeup = wakeup;
        self.txg.delayed += 1;
        self.txg.delay_ns += wakeup - now;
        q.schedule(wakeup, Event::Throttled(w));
    }

    pub(crate) fn apply(&mut self, now: Nanos, w: u32, q: &mut EventQueue<Event>) {
        let worker = self.ops[w as usize];
        let ready = match worker.rpc {
            Rpc::Read | Rpc::Write => {
                let record = self.record_of(&worker.req);
                // A write covering the whole record needs no old data; any
                // other write of an uncached record reads it first
                // (read-modify-write).
                let needs_data = worker.rpc == Rpc::Read || worker.req.size < self.sys.recordsize;
                if self.arc.lookup(record) || !needs_data {
                    self.arc.insert(record);
                    now
                } else {
                    let done = self.pool.read_record(now, record);
                    self.arc.insert(record);
                    done
                }
            }
            Rpc::Commit | Rpc::Journal => now,
        };
        q.schedule(ready, Event::Ready(w));
    }

    pub(crate) fn ready(&mut self, now: Nanos, w: u32, q: &mut EventQueue<Event>) {
        let worker = self.ops[w as usize];
        let sync = self.sys.sync;
        let logged = sync != SyncProperty::Disabled;
        let commit = match worker.rpc {
            Rpc::Read => false,
            Rpc::Write => {
                let record = self.record_of(&worker.req);
                if self.arc.mark_dirty(record) {
                    self.dirtied(now, self.sys.recordsize, q);
                }
                if !self.overridden.is_empty() {
                    // dbuf_dirty of a record dmu_sync wrote in this txg
                    // undoes the override: the txg writes it again.
                    self.overridden.remove(&record);
                }
                if logged {
                    self.log_write(worker.req.pos, worker.req.size, Synced::Record(record));
                }
                logged && (sync == SyncProperty::Always || self.stable_writes)
            }
            Rpc::Journal => {
                self.journal_dirty += JOURNAL_BLOCK;
                self.dirtied(now, JOURNAL_BLOCK, q);
                if logged {
                    self.log_write(0, JOURNAL_BLOCK, Synced::Journal);
                }
                // The guest's journal block is a stable NFS WRITE.
                logged && self.sys.nfs_sync_honoured
            }
            Rpc::Commit => logged,
        };
        if commit && self.writer_runs_commit_software() {
            // A committer waits for the writer, and the zil_commit software
            // (copying the records it takes from the itx list into the lwb,
            // allocating and issuing it, waiting for it) runs in the
            // writer, once a block (`writer_software_ns`).
            self.commit(now, w, q);
        } else if commit && self.commit_has_work(now) {
            // The zil_commit path's software time, on a core, before its
            // log block is issued.
            let cost = service_time(
                &mut self.cpu_jitter,
                self.sys.cpu_service,
                self.sys.commit_cpu_ns,
            );
            let at = self.cpu.run(now, cost);
            q.schedule(at, Event::Commit(w));
        } else if commit {
            self.commit(now, w, q);
        } else {
            q.schedule(now, Event::Reply(w));
        }
    }

    /// zfs_log_write (zvol_log_write for a zvol): the log record of a
    /// write of `size` bytes at `pos`. WR_COPIED carries the data in the
    /// log; WR_INDIRECT only a block pointer (`lr_write_t`), the data block
    /// being written at the commit by `dmu_sync`, one record per block the
    /// write touches. Which one, per code base ([`LogWriteRule`]):
    /// zfs_log.c / zvol.c `zfs_log_write` / `zvol_log_write`.
    fn log_write(&mut self, pos: u64, size: u64, block: Synced) {
        let blocks = self.indirect_blocks(pos, size);
        if blocks == 0 {
            self.zil.pending += size + LR_WRITE_BYTES;
            return;
        }
        self.zil.pending += blocks * LR_WRITE_BYTES;
        // dmu_sync writes the whole block holding the data (zfs_get_data
        // aligns the offset to z_blksz and syncs that dbuf).
        self.zil.indirect.push((self.sys.recordsize, block));
        for _ in 1..blocks {
            self.zil
                .indirect
                .push((self.sys.recordsize, Synced::Spanned));
        }
    }

    /// The WR_INDIRECT records a write of `size` bytes at `pos` makes; 0
    /// for a WR_COPIED record.
    fn indirect_blocks(&self, pos: u64, size: u64) -> u64 {
        let block = self.sys.recordsize;
        let throughput = self.sys.logbias == Logbias::Throughput;
        let zvol = self.sys.protocol == Protocol::Iscsi;
        let has_log = self.sys.log.is_some();
        let aligned_whole = size >= block && pos.is_multiple_of(block);
        match self.sys.log_write_rule {
            LogWriteRule::Before7578 => {
                // immediate_write_sz is 0 under throughput; `slogging` is a
                // log device under latency.
                let immediate = if throughput { 0 } else { IMMEDIATE_WRITE_SZ };
                let slogging = has_log && !throughput;
                if slogging {
                    0
                } else if zvol {
                    // Whole aligned blocks only (`blocksize >
                    // immediate_write_sz && resid >= blocksize && off %
                    // blocksize == 0`), one record each; a partial block
                    // is copied.
                    if block > immediate && aligned_whole {
                        size / block
                    } else {
                        0
                    }
                } else {
                    // One record for the whole write, if it fits a block
                    // (`resid > immediate_write_sz && resid <= z_blksz`).
                    u64::from(size > immediate && size <= block)
                }
            }
            LogWriteRule::Since7578 => {
                let indirect = throughput
                    || (!has_log
                        && if zvol {
                            size >= block && block > IMMEDIATE_WRITE_SZ
                        } else {
                            size >= IMMEDIATE_WRITE_SZ
                        });
                if indirect {
                    // Split at block boundaries (`len = MIN(blocksize -
                    // P2PHASE(off, blocksize), resid)`).
                    (pos + size.max(1) - 1) / block - pos / block + 1
                } else {
                    0
                }
            }
        }
    }

    /// Whether log blocks go to the log device: always with one since 7578
    /// (`zio_alloc_zil` tries the log class first); before it only under
    /// `logbias=latency` (`USE_SLOG`), so `throughput` bypasses it.
    fn log_on_device(&self) -> bool {
        self.log.is_some()
            && (self.sys.logbias == Logbias::Latency
                || self.sys.log_write_rule == LogWriteRule::Since7578)
    }

    /// Write `bytes` of log records of `commits` commits as one log block, on
    /// the log device or in the pool, with the data blocks of its
    /// WR_INDIRECT records; returns when all are written and flushed.
    fn write_log_block(&mut self, now: Nanos, bytes: u64, commits: u64) -> Nanos {
        let issue = self.log_block_issue_ns(bytes, commits);
        if !self.zil.indirect.is_empty() {
            return self.write_indirect_commit(now, bytes) + issue;
        }
        let on_device = self.log_on_device();
        issue
            + match &mut self.log {
                Some(log) if on_device => log.write_log_block(now, bytes),
                _ => self.pool.write_log_block(now, bytes),
            }
    }

    /// A commit with WR_INDIRECT records. zil_lwb_commit hands each record
    /// to zfs_get_data, whose `dmu_sync` issues the record's data block
    /// write at once as a child of the log block's write zio (dmu.c:
    /// `arc_write(pio, ..., ZIO_PRIORITY_SYNC_WRITE, ...)`), and the log
    /// block, holding the block pointers, is issued after them. The log
    /// block's zio completes only with its children, and zfs_get_done adds
    /// each data block's vdev to the set the commit flushes
    /// (`zil_add_block` / `zil_lwb_add_block`); the vdevs are flushed once
    /// the writes are done (ZoL 0.6: `zil_flush_vdevs` after
    /// `zio_wait(zl_root_zio)` in zil_commit_writer; since 8585:
    /// `zil_lwb_write_done` -> `zio_flush` of each vdev), and the commit
    /// returns when the flushes have. A log block on the log device is
    /// flushed when it is written (the device's own path), not after the
    /// data writes: on a flash log device the flush costs the same either
    /// way. Returns when the commit is stable.
    fn write_indirect_commit(&mut self, now: Nanos, bytes: u64) -> Nanos {
        let mut touched = std::mem::take(&mut self.zil.touched);
        touched.iter_mut().for_each(|t| *t = false);
        let mut blocks = std::mem::take(&mut self.zil.indirect);
        let mut written = now;
        for &(size, block) in &blocks {
            let (done, vdev) = self.pool.write_data_block(now, size);
            written = written.max(done);
            touched[vdev] = true;
            match block {
                Synced::Record(r) => {
                    self.overridden.insert(r);
                }
                // The model charges a journal block its 4 KiB of txg
                // writes; dmu_sync wrote the block holding it.
                Synced::Journal => self.journal_overridden += JOURNAL_BLOCK,
                Synced::Spanned => {}
            }
        }
        blocks.clear();
        self.zil.indirect = blocks;
        let mut done = now;
        let on_device = self.log_on_device();
        match &mut self.log {
            Some(log) if on_device => done = log.write_log_block(now, bytes),
            _ => {
                let (at, vdev) = self.pool.write_log_block_unflushed(now, bytes);
                written = written.max(at);
                touched[vdev] = true;
            }
        }
        let flushed_vdevs = touched
            .iter()
            .enumerate()
            .filter(|(_, &t)| t)
            .map(|(v, _)| v);
        done = done.max(self.pool.flush_vdevs(written, written, flushed_vdevs));
        self.zil.touched = touched;
        done
    }

    /// The log block writer's own time beyond its devices' (0 for kernel
    /// ZFS): `server.log_block_us`, `server.device_request_us` for each
    /// device request a block of `bytes` makes, its writes and flushes on
    /// the log device, or in the pool with the data blocks of its
    /// WR_INDIRECT records, and `server.log_commit_us` for each of its
    /// `commits` beyond the first. One writer at a time issues a block and
    /// waits for it (zil_commit_writer), so a batch of commits pays the
    /// block once; the commits it carries are woken together when it is
    /// done (cv_broadcast), and each passes the log's lock before the next
    /// writer can start.
    fn log_block_issue_ns(&self, bytes: u64, commits: u64) -> Nanos {
        let writer = self.sys.log_writer;
        if writer.is_free() {
            return 0;
        }
        let data: u64 = self
            .zil
            .indirect
            .iter()
            .map(|&(size, _)| self.pool.data_block_requests(size))
            .sum();
        let requests = data
            + match &self.log {
                Some(log) if self.log_on_device() => log.log_block_requests(),
                _ => self.pool.log_block_requests(bytes),
            };
        writer.block + writer.request * requests + writer.commit * commits.saturating_sub(1)
    }

    /// Whether the log block's writer runs the commit software: a platform
    /// whose writer does, with one writer at a time (a pipelined ZIL has
    /// each committer issue its own block).
    fn writer_runs_commit_software(&self) -> bool {
        self.sys.log_writer.runs_commit_software && self.sys.zil == ZilBatching::OneInFlight
    }

    /// The zil_commit software of one log block's writer
    /// (`server.commit_cpu_us`, drawn as the server's CPU work is) on a
    /// platform whose writer runs it once a block
    /// ([`LogWriterNs::runs_commit_software`](crate::system::LogWriterNs));
    /// 0 where each committer spends it before its commit.
    fn writer_software_ns(&mut self) -> Nanos {
        if !self.writer_runs_commit_software() {
            return 0;
        }
        service_time(
            &mut self.cpu_jitter,
            self.sys.cpu_service,
            self.sys.commit_cpu_ns,
        )
    }

    /// Whether a zil_commit now has records to write or a log block to
    /// wait for; one with neither returns at once and costs nothing
    /// (`server.commit_cpu_us` is not charged).
    fn commit_has_work(&self, now: Nanos) -> bool {
        self.zil.pending > 0 || self.zil.last_done > now || self.zil.in_flight_until > now
    }

    /// zil_commit: wait until every record written so far is on stable
    /// storage.
    pub(crate) fn commit(&mut self, now: Nanos, w: u32, q: &mut EventQueue<Event>) {
        match self.sys.zil {
            ZilBatching::Pipelined => {
                if self.zil.pending > 0 {
                    let bytes = self.zil.pending.max(SECTOR);
                    self.zil.pending = 0;
                    let done = self.write_log_block(now, bytes, 1);
                    // Blocks complete in order: a commit waits for every
                    // block before its own.
                    self.zil.last_done = self.zil.last_done.max(done);
                }
                let at = self.zil.last_done.max(now);
                q.schedule(at, Event::Reply(w));
            }
            ZilBatching::OneInFlight => {
                if self.zil.in_flight_until > now {
                    self.zil.waiting.push(w);
                    if !self.zil.batch_scheduled {
                        self.zil.batch_scheduled = true;
                        q.schedule(self.zil.in_flight_until, Event::ZilBatch);
                    }
                } else if self.zil.pending > 0 {
                    let bytes = self.zil.pending;
                    self.zil.pending = 0;
                    let done = self.writer_software_ns() + self.write_log_block(now, bytes, 1);
                    self.zil.in_flight_until = done;
                    q.schedule(done, Event::Reply(w));
                } else {
                    q.schedule(now, Event::Reply(w));
                }
            }
        }
    }

    /// One-in-flight: the block in flight is done, and one of the commits
    /// waiting for it writes what has been logged since as the next block
    /// (its software, then the devices), which answers them all; with
    /// nothing left to log they return at once (`seq < zl_commit_seq` in
    /// zil_commit).
    pub(crate) fn zil_batch(&mut self, now: Nanos, q: &mut EventQueue<Event>) {
        self.zil.batch_scheduled = false;
        let done = if self.zil.pending > 0 {
            let bytes = self.zil.pending;
            self.zil.pending = 0;
            let commits = self.zil.waiting.len() as u64;
            self.writer_software_ns() + self.write_log_block(now, bytes, commits)
        } else {
            now
        };
        self.zil.in_flight_until = done;
        for i in 0..self.zil.waiting.len() {
            let w = self.zil.waiting[i];
            q.schedule(done, Event::Reply(w));
        }
        self.zil.waiting.clear();
    }

    /// `bytes` more dirty data in the open txg; past
    /// `zfs_dirty_data_sync_percent` the txg syncs early.
    fn dirtied(&mut self, now: Nanos, bytes: u64, q: &mut EventQueue<Event>) {
        self.txg.open_dirty += bytes;
        if self.txg.open_dirty >= self.sys.txg.sync_bytes {
            self.request_sync(now, q);
        }
    }

    pub(crate) fn txg_timeout(
        &mut self,
        now: Nanos,
        clients_active: bool,
        q: &mut EventQueue<Event>,
    ) {
        if self.txg.open_dirty > 0 {
            self.request_sync(now, q);
        }
        if clients_active {
            q.schedule(now + self.sys.txg_timeout_ns, Event::Txg);
        }
    }

    /// Sync the open txg now, or as soon as the syncing one completes.
    fn request_sync(&mut self, now: Nanos, q: &mut EventQueue<Event>) {
        if self.txg.syncing {
            self.txg.sync_wanted = true;
        } else if self.txg.open_dirty > 0 || self.journal_dirty > 0 {
            self.start_sync(now, q);
        }
    }

    /// The open txg closes and syncs: its dirty records go to the vdev
    /// queues as async writes.
    fn start_sync(&mut self, now: Nanos, q: &mut EventQueue<Event>) {
        self.txg.syncing = true;
        self.txg.sync_wanted = false;
        self.txg.syncs += 1;
        self.txg.syncing_dirty = std::mem::take(&mut self.txg.open_dirty);
        let vdevs = self.dirty_per_vdev.len();
        self.dirty_per_vdev.iter_mut().for_each(|d| *d = 0);
        let per_vdev = &mut self.dirty_per_vdev;
        // A record dmu_sync already wrote costs the txg no data write.
        let overridden = std::mem::take(&mut self.overridden);
        self.arc.take_dirty(|r| {
            if !overridden.contains(&r) {
                per_vdev[r as usize % vdevs] += 1;
            }
        });
        let mut overridden = overridden;
        overridden.clear();
        self.overridden = overridden;
        let journal = std::mem::take(&mut self.journal_dirty)
            .saturating_sub(std::mem::take(&mut self.journal_overridden));
        // Records of a txg being synced need no log any more (zil_clean
        // drops them once it is; the model drops them as it starts).
        self.zil.pending = 0;
        self.zil.indirect.clear();
        if self.pool.queue_txg(&self.dirty_per_vdev, journal) {
            let tuning = self.sys.txg;
            let active = tuning.async_active(self.txg.open_dirty + self.txg.syncing_dirty);
            for d in 0..self.pool.disks() {
                self.pool.issue_async(now, d, active, tuning.aggregation);
            }
            self.schedule_async_done(q);
        }
        if self.pool.txg_written() {
            let done = self.pool.flush_written(now);
            q.schedule(done, Event::TxgSynced);
        }
    }

    /// One event stands for every txg write in flight: it fires when the
    /// earliest completes (a few hundred pending events would make every
    /// queue operation dearer).
    fn schedule_async_done(&mut self, q: &mut EventQueue<Event>) {
        if let Some(at) = self.pool.next_async_done() {
            if at < self.txg.async_event_at {
                self.txg.async_event_at = at;
                self.txg.async_generation = self.txg.async_generation.wrapping_add(1);
                q.schedule(at, Event::AsyncDone(self.txg.async_generation));
            }
        }
    }

    pub(crate) fn async_done(&mut self, now: Nanos, generation: u32, q: &mut EventQueue<Event>) {
        if generation != self.txg.async_generation {
            return;
        }
        self.txg.async_event_at = Nanos::MAX;
        let tuning = self.sys.txg;
        let active = tuning.async_active(self.txg.open_dirty + self.txg.syncing_dirty);
        self.pool.retire_async(now, active, tuning.aggregation);
        self.schedule_async_done(q);
        if self.pool.txg_written() {
            let done = self.pool.flush_written(now);
            q.schedule(done, Event::TxgSynced);
        }
    }

    pub(crate) fn txg_synced(&mut self, now: Nanos, q: &mut EventQueue<Event>) {
        self.txg.syncing = false;
        self.txg.syncing_dirty = 0;
        let blocked = std::mem::take(&mut self.txg.blocked);
        for &w in &blocked {
            self.throttle(now, w, q);
        }
        let mut blocked = blocked;
        blocked.clear();
        if self.txg.blocked.is_empty() {
            self.txg.blocked = blocked;
        }
        if self.txg.sync_wanted {
            self.request_sync(now, q);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::SystemModel;
    use fileio::run::generator::Op;

    fn spec() -> RunSpec {
        RunSpec::from_words(&[
            "--file-total-size=16M",
            "--file-num=4",
            "--file-test-mode=rndwr",
            "--file-block-size=4K",
            "--threads=2",
            "--rand-seed=1",
        ])
        .unwrap()
    }

    fn system(extra: &str) -> System {
        let text = format!(
            "name = \"t\"\n[client]\nprotocol = \"local\"\n[pool]\nlayout = \"1xmirror-2\"\ndisk = \"ssd-sata\"\nrecordsize = \"4K\"\n[server]\nram = \"4G\"\n{extra}"
        );
        SystemModel::from_toml(&text).unwrap().resolve().unwrap()
    }

    fn write(w: u32) -> Message {
        Message {
            rpc: Rpc::Write,
            req: Request {
                op: Op::Write,
                file: 0,
                pos: u64::from(w) * 4096,
                size: 4096,
            },
        }
    }

    /// Runs one server event; a reply goes to `replies` as (time, client).
    fn handle(
        server: &mut ZfsServer<'_>,
        q: &mut EventQueue<Event>,
        (now, e): (Nanos, Event),
        replies: &mut Vec<(Nanos, u32)>,
    ) {
        match e {
            Event::Served(w) => server.served(now, w, q),
            Event::Ready(w) => server.ready(now, w, q),
            Event::Throttled(w) => server.apply(now, w, q),
            Event::ZilBatch => server.zil_batch(now, q),
            Event::Commit(w) => server.commit(now, w, q),
            Event::Txg => server.txg_timeout(now, false, q),
            Event::AsyncDone(g) => server.async_done(now, g, q),
            Event::TxgSynced => server.txg_synced(now, q),
            Event::Reply(w) => replies.push((now, w)),
            other => panic!("not a server event: {other:?}"),
        }
    }

    /// Runs the server's events until the queue is empty; returns the
    /// replies (time, client) it sent.
    fn drain(server: &mut ZfsServer<'_>, q: &mut EventQueue<Event>) -> Vec<(Nanos, u32)> {
        let mut replies = Vec::new();
        while let Some(event) = q.pop() {
            handle(server, q, event, &mut replies);
        }
        replies
    }

    #[test]
    fn a_txg_timeout_syncs_the_dirty_records_to_the_pool() {
        let (spec, sys) = (spec(), system(""));
        let mut server = ZfsServer::new(&spec, &sys, 2).unwrap();
        let mut q = EventQueue::with_capacity(8);
        server.arrive(0, 0, write(0), &mut q);
        assert_eq!(drain(&mut server, &mut q).len(), 1, "the write is answered");
        assert_eq!(server.txg.open_dirty, 4096);
        server.txg_timeout(5_000_000_000, false, &mut q);
        assert!(server.txg.syncing);
        assert_eq!(server.txg.syncs, 1);
        drain(&mut server, &mut q);
        assert!(!server.txg.syncing, "the txg sync completes");
        assert_eq!(server.txg.open_dirty + server.txg.syncing_dirty, 0);
    }

    #[test]
    fn one_in_flight_zil_commits_waiting_writes_as_one_batch() {
        let spec = spec();
        let sys = system("sync = \"always\"\nzil = \"one-in-flight\"");
        let mut server = ZfsServer::new(&spec, &sys, 3).unwrap();
        let mut q = EventQueue::with_capacity(8);
        // The first write commits alone; two more arrive while its log block
        // is in flight, wait for it, and go to the log as one batch.
        server.arrive(0, 0, write(0), &mut q);
        let mut replies = Vec::new();
        let mut now = 0;
        while server.zil.in_flight_until == 0 {
            let event = q.pop().expect("the first commit issues its block");
            now = event.0;
            handle(&mut server, &mut q, event, &mut replies);
        }
        assert!(replies.is_empty());
        for w in 1..3 {
            server.arrive(now, w, write(w), &mut q);
        }
        replies.extend(drain(&mut server, &mut q));
        assert_eq!(replies.len(), 3);
        let at = |client: u32| replies.iter().find(|r| r.1 == client).unwrap().0;
        assert!(at(0) > now, "a commit takes the log write's time");
        assert_eq!(at(1), at(2), "the batch completes together");
        assert!(at(1) > at(0), "after the block in flight, its own block");
    }

    fn esxi_system(extra: &str) -> System {
        let text = format!(
            "name = \"t\"\n[client]\nprotocol = \"esxi-nfs\"\n[pool]\nlayout = \"1xmirror-2\"\ndisk = \"ssd-sata\"\nrecordsize = \"4K\"\n[server]\nram = \"4G\"\ncpu_service = \"fixed\"\n{extra}"
        );
        SystemModel::from_toml(&text).unwrap().resolve().unwrap()
    }

    /// When one stable write from client 0 is answered.
    fn one_stable_write(sys: &System) -> Nanos {
        let spec = spec();
        let mut server = ZfsServer::new(&spec, sys, 1).unwrap();
        let mut q = EventQueue::with_capacity(8);
        server.arrive(0, 0, write(0), &mut q);
        let replies = drain(&mut server, &mut q);
        assert_eq!(replies.len(), 1);
        replies[0].0
    }

    #[test]
    fn a_stable_nfs_write_commits_unless_the_platform_ignores_nfs_sync() {
        let honoured = one_stable_write(&esxi_system("platform = \"openzfs-2.2\""));
        let ignored = one_stable_write(&esxi_system("platform = \"zol-0.7\""));
        let cpu = esxi_system("").server_cpu_ns;
        assert_eq!(ignored, cpu, "ZoL 0.7: only the request's CPU time");
        assert!(
            honoured > cpu + 100_000,
            "a commit: its software time and the log block"
        );
    }

    #[test]
    fn a_commit_costs_its_software_time_before_the_log_block() {
        let base = one_stable_write(&esxi_system("commit_cpu_us = 0"));
        let with = one_stable_write(&esxi_system("commit_cpu_us = 100"));
        assert_eq!(
            with - base,
            100_000,
            "server.commit_cpu_us, on the core, first"
        );
    }

    /// The replies (time, client) to `writes` stable writes arriving
    /// together on `sys`.
    fn stable_writes_together(sys: &System, writes: u32) -> Vec<(Nanos, u32)> {
        let spec = spec();
        let mut server = ZfsServer::new(&spec, sys, writes as usize).unwrap();
        let mut q = EventQueue::with_capacity(8);
        for w in 0..writes {
            server.arrive(0, w, write(w), &mut q);
        }
        let mut replies = drain(&mut server, &mut q);
        replies.sort_by_key(|r| r.1);
        replies
    }

    #[test]
    fn a_log_blocks_writer_pays_its_time_and_each_device_request_once_a_batch() {
        let sync = "sync = \"always\"\nzil = \"one-in-flight\"\ncommit_cpu_us = 100\n";
        let costs = "log_block_us = 100\ndevice_request_us = 10\n";
        let delay = |log: &str| {
            let plain = stable_writes_together(&system(&format!("{sync}{log}")), 3);
            let slowed = stable_writes_together(&system(&format!("{sync}{costs}{log}")), 3);
            assert_eq!(plain.len(), 3);
            plain
                .iter()
                .zip(&slowed)
                .map(|(p, s)| s.0 - p.0)
                .collect::<Vec<_>>()
        };
        // Three writes that arrive together are one block: each waits for
        // one writer's time, not three. In the pool of one 2-way mirror the
        // block is written to both children and both are flushed: 100 us
        // and 4 requests.
        assert_eq!(delay(""), vec![140_000; 3]);
        // On a log device of one member: a write and a flush.
        let on_device = "[log]\nkind = \"flash\"\nwrite_ms = 0.05\nflush_ms = 0.1\n";
        assert_eq!(delay(on_device), vec![120_000; 3]);
    }

    /// The delays (client order) that `extra` adds to three stable writes
    /// arriving together on a one-in-flight server whose writer's software
    /// takes 100 us.
    fn one_in_flight_delays(extra: &str) -> Vec<Nanos> {
        // One core: commit software spent by each committer would queue.
        // zfs-fuse: its writer runs the commit software.
        let base = "platform = \"zfs-fuse\"\nsync = \"always\"\nzil = \"one-in-flight\"\ncpu_service = \"fixed\"\ncores = 1\n";
        let plain = stable_writes_together(&system(&format!("{base}commit_cpu_us = 100\n")), 3);
        let other = stable_writes_together(&system(&format!("{base}{extra}")), 3);
        assert_eq!(plain.len(), 3);
        assert_eq!(other.len(), 3);
        plain
            .iter()
            .zip(&other)
            .map(|(p, o)| o.0.saturating_sub(p.0))
            .collect()
    }

    #[test]
    fn a_log_block_carrying_more_commits_costs_its_writer_more_for_each() {
        // The first write's commit writes its block alone; the other two
        // wait for it and share the next: one commit beyond the first, 50 us.
        assert_eq!(
            one_in_flight_delays("commit_cpu_us = 100\nlog_commit_us = 50\n"),
            vec![0, 50_000, 50_000]
        );
    }

    #[test]
    fn one_writer_at_a_time_spends_the_commit_software_once_a_block() {
        // 300 us a commit instead of 100: each block's writer spends it once
        // and the commits waiting for it nothing. Two blocks (the first
        // write's, then the other two's): 200 us later for the first, 400
        // for the others (spent by each committer on the one core: 200,
        // about 317 and 600).
        assert_eq!(
            one_in_flight_delays("commit_cpu_us = 300\n"),
            vec![200_000, 400_000, 400_000]
        );
    }

    fn fsync() -> Message {
        Message {
            rpc: Rpc::Commit,
            req: Request {
                op: Op::Fsync,
                file: 0,
                pos: 0,
                size: 0,
            },
        }
    }

    /// Records the txg sync writes after client 0's messages, one at a
    /// time, each answered before the next.
    fn txg_records_after(sys: &System, messages: &[Message]) -> u64 {
        let spec = spec();
        let mut server = ZfsServer::new(&spec, sys, 1).unwrap();
        let mut q = EventQueue::with_capacity(8);
        let mut now = 0;
        for &m in messages {
            server.arrive(now, 0, m, &mut q);
            let replies = drain(&mut server, &mut q);
            now = replies.last().expect("answered").0;
        }
        server.txg_timeout(now + 1, false, &mut q);
        let records = server.dirty_per_vdev.iter().sum();
        drain(&mut server, &mut q);
        records
    }

    #[test]
    fn the_txg_does_not_rewrite_a_record_dmu_sync_wrote_unless_it_is_dirtied_again() {
        // logbias=throughput: the fsync's commit writes the record's block
        // (dmu_sync, DR_OVERRIDDEN), so the txg writes only its pointer; a
        // later write to the record undoes that (dbuf_unoverride).
        let throughput = system("logbias = \"throughput\"");
        let latency = system("");
        let (w, f) = (write(0), fsync());
        assert_eq!(txg_records_after(&latency, &[w, f]), 1, "WR_COPIED");
        assert_eq!(txg_records_after(&throughput, &[w, f]), 0, "overridden");
        assert_eq!(
            txg_records_after(&throughput, &[w, f, w]),
            1,
            "dirtied again"
        );
        assert_eq!(txg_records_after(&throughput, &[w]), 1, "never committed");
    }

    #[test]
    fn writes_are_delayed_above_the_throttles_dirty_level() {
        let (spec, sys) = (spec(), system(""));
        let mut server = ZfsServer::new(&spec, &sys, 2).unwrap();
        let mut q = EventQueue::with_capacity(8);
        let tuning = sys.txg;
        // Dirty data just below zfs_dirty_data_max: the next write waits its
        // share of the delay curve.
        server.txg.open_dirty = tuning.dirty_max - 4096;
        let expected = tuning.delay_ns(server.txg.open_dirty);
        assert!(expected > 0);
        server.ops[0] = write(0);
        server.throttle(1_000, 0, &mut q);
        assert_eq!(server.txg.delayed, 1);
        assert_eq!(server.txg.delay_ns, expected);
        assert_eq!(q.pop(), Some((1_000 + expected, Event::Throttled(0))));
        // At zfs_dirty_data_max it blocks until the syncing txg completes.
        server.txg.open_dirty = tuning.dirty_max;
        server.throttle(2_000, 1, &mut q);
        assert_eq!(server.txg.blocks, 1);
        assert!(server.txg.syncing, "a sync is asked for at once");
    }
}

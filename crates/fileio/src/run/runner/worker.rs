//! One worker thread: its loop of requests (sysbench's worker loop and
//! fileio's event accounting at 1.0.20), the open-loop arrivals, the
//! `--validate` blocks and the end-of-thread fsyncs.
//!
//! Workers count into single-writer atomics ([`ThreadCounters`]) that the main
//! thread reads without stopping anyone; per-op HDR histograms stay
//! thread-local and are handed back at the end.

use crate::engine::{Completion, Engine, IoError, Submitted};
use crate::failure::{Failure, Stream};
use crate::rng::Xoroshiro;
use crate::run::clock::now_ns;
use crate::run::generator::{file_index, Op, Request, SyncEveryWrites};
use crate::run::histograms::{LatencyKind, ThreadCounters, ThreadHistograms};
use crate::run::pattern::{check_block, fill_checked_block, fill_random};
use crate::spec::{DataPattern, RateProcess, RunSpec};
use std::sync::atomic::Ordering::{Acquire, Relaxed};
use std::time::{Duration, Instant};

use super::engines::AnyEngine;
use super::interface::{RunObserver, RunSettings};
use super::shared::{count_transfer, fail, io_failure, Shared, StartGate};

/// What every worker of a run shares: the workload, the shared state, the
/// start gate, the observer and how latencies are recorded.
#[derive(Clone, Copy)]
pub(super) struct WorkerContext<'a> {
    pub(super) spec: &'a RunSpec,
    pub(super) shared: &'a Shared,
    pub(super) gate: &'a StartGate,
    pub(super) observer: &'a dyn RunObserver,
    pub(super) recording: Recording,
    /// `--debug`: a DEBUG line per request.
    pub(super) debug: bool,
    /// `--warmup`: the event limit counts from its end, as the time limit
    /// does, so no ticket is taken before it.
    pub(super) warmup: bool,
}

/// What a worker hands back when it ends.
pub(super) struct WorkerResult {
    pub(super) histograms: ThreadHistograms,
    pub(super) end: Instant,
}

impl Recording {
    pub(super) fn of(w: &RunSpec, settings: &RunSettings) -> Recording {
        let engine = crate::engine::capabilities(w.io_mode, w.async_backlog);
        Recording {
            event_is_op: !w.fsync_all && !engine.queued,
            live_sysbench_histogram: settings.report_interval_s > 0
                || !settings.checkpoints_s.is_empty(),
            queued: engine.queued,
            reap_batch: reap_batch(engine.queue_depth),
        }
    }
}

/// How many completions a full queue waits for: a quarter of the depth.
/// sysbench waits for one; with io_uring that wakes the submitting thread
/// for nearly every completion, and each wake-up costs both the thread that
/// completes (buffered reads of page cache run in io_uring's worker thread)
/// and the one woken. Measured on this box (rndrd 4K, QD 32, tmpfs, CPU time
/// per request of the whole process): 3.3-3.7 µs waiting for 1, 2.6-3.4 µs
/// for 8 (docs/performance.md). The queue stays between 3/4 full and full,
/// and a request's latency still runs from its submission to its reaping.
fn reap_batch(depth: u32) -> usize {
    usize::try_from(depth / 4).unwrap_or(1).max(1)
}

/// How latencies are recorded on the hot path.
#[derive(Clone, Copy)]
pub(super) struct Recording {
    /// Every event is exactly one operation timed end to end (synchronous
    /// engine, no fsync after writes): record only the per-operation histogram
    /// and derive the event histogram at the end (one record per event).
    pub(super) event_is_op: bool,
    /// Keep sysbench's histogram live (interval lines and checkpoints read it);
    /// otherwise it is derived from the event histogram at the end.
    pub(super) live_sysbench_histogram: bool,
    /// The engine queues requests (io_uring): a transfer is timed from its
    /// submission to its completion by the engine, never around `submit`.
    pub(super) queued: bool,
    /// Completions to wait for when the queue is full (see [`reap_batch`]).
    pub(super) reap_batch: usize,
}

/// Run worker `tid` on its engine, the loop monomorphised for that engine.
pub(super) fn run_worker(
    ctx: WorkerContext<'_>,
    tid: usize,
    engine: AnyEngine,
    rng: Xoroshiro,
) -> WorkerResult {
    match engine {
        AnyEngine::Psync(e) => Worker::new(ctx, tid, e).run(rng),
        AnyEngine::Mmap(e) => Worker::new(ctx, tid, e).run(rng),
        AnyEngine::Uring(e) => Worker::new(ctx, tid, *e).run(rng),
        AnyEngine::Injected(e) => Worker::new(ctx, tid, e).run(rng),
        AnyEngine::Nfs(e) => Worker::new(ctx, tid, e).run(rng),
    }
}

/// One worker thread's own state: its engine, its counters (which the main
/// thread reads) and its histograms (which only it writes).
struct Worker<'a, E: Engine> {
    ctx: WorkerContext<'a>,
    tid: usize,
    counters: &'a ThreadCounters,
    engine: E,
    hist: ThreadHistograms,
}

impl<'a, E: Engine> Worker<'a, E> {
    fn new(ctx: WorkerContext<'a>, tid: usize, engine: E) -> Self {
        Worker {
            ctx,
            tid,
            counters: &ctx.shared.counters[tid],
            engine,
            hist: ThreadHistograms::default(),
        }
    }

    fn done(self) -> WorkerResult {
        WorkerResult {
            histograms: self.hist,
            end: Instant::now(),
        }
    }

    fn run(mut self, mut rng: Xoroshiro) -> WorkerResult {
        let WorkerContext {
            spec: w,
            shared,
            gate,
            observer,
            debug,
            ..
        } = self.ctx;
        let tid = self.tid;
        let stripe_draw = w.percentile > 0;
        let events_limit = w.events;
        // Lossless on 64-bit targets; on 32-bit ones too, because the block size
        // is a C int (the option parser refuses more than i32::MAX).
        #[allow(clippy::cast_possible_truncation)]
        let block = w.files.block_size as usize;
        let mut data_rng = Xoroshiro::from_state(0xdead_beef ^ tid as u64, 0x5851_f42d_4c95_7f2d);
        let random_data = w.files.data == DataPattern::Random && !w.files.validate;
        if random_data {
            fill_random(self.engine.buffer_mut(), &mut data_rng);
        }
        let refill = random_data && w.refill_buffers;
        let mut syncs = SyncEveryWrites::new(w.sync_every_writes);
        // DEBUG level, printed at --verbosity=5 with or without --debug, as
        // sysbench's worker threads do.
        observer.debug(&format!("DEBUG: Worker thread (#{tid}) started"));
        if let Err(e) = self.engine.start_on_this_thread() {
            // Still arrive at the start gate (the main thread waits for every
            // worker there); the loop below then stops at once on the failure.
            fail(shared, engine_start_failure(self.engine.name(), tid, &e));
        }
        observer.debug(&format!("DEBUG: Worker thread (#{tid}) initialized"));
        if !gate.arrive_and_wait() {
            return self.done();
        }
        let start_ns = match shared.start.get() {
            Some(s) => s.1,
            // The gate opens only after the clock is set.
            None => now_ns(),
        };
        let mut epoch = 0;
        loop {
            if shared.failed.load(Relaxed) {
                break;
            }
            self.mark_warmup_end(&mut epoch);
            if shared.stop.load(Acquire) {
                if shared.time_up.load(Relaxed) {
                    observer.info("Time limit exceeded, exiting...");
                }
                break;
            }
            // With a warm-up, `epoch` is 0 until it ends: the requests before
            // are not events of the run and take no ticket.
            let counting = !self.ctx.warmup || epoch > 0;
            if events_limit > 0 && counting && shared.tickets.fetch_add(1, Relaxed) >= events_limit
            {
                observer.info("Event limit exceeded, exiting...");
                break;
            }
            let arrival_ns = if w.rate > 0 {
                Some(next_arrival(shared, w.rate, w.rate_process, start_ns))
            } else {
                None
            };
            if let Some(file) = syncs.due() {
                // fio's fsync=N: a sync of its own before this request.
                if let Err(f) = self.sync_due(file) {
                    fail(shared, f);
                    break;
                }
            }
            let Some(req) = shared
                .generator
                .next_unless_stopped(&mut rng, tid, &shared.stop)
            else {
                // Stopped while waiting for a free --validate block: the loop's
                // stop check says why.
                continue;
            };
            syncs.issued(&req);
            if debug {
                observer.debug(&req.debug_line());
            }
            if refill && req.op == Op::Write {
                let len = req.transfer_len();
                fill_random(&mut self.engine.buffer_mut()[..len], &mut data_rng);
            }
            if w.files.validate && req.op == Op::Write {
                fill_checked_blocks(self.engine.buffer_mut(), &req, block, &mut rng);
            }
            let t0 = now_ns();
            let result = self.execute(&req);
            let t1 = now_ns();
            if let Err(f) = result {
                fail(shared, f);
                break;
            }
            self.record(&req, t1 - t0, t1, arrival_ns);
            if stripe_draw {
                // sysbench picks a histogram stripe with one draw per event; drawing
                // too keeps offsets bit-exact with it.
                rng.next_u64();
            }
            if w.files.validate && req.op == Op::Read {
                if let Err(f) = check_blocks(self.engine.buffer_mut(), &req, block) {
                    fail(shared, f);
                }
            }
        }
        self.finish();
        self.done()
    }

    /// Record one finished event: its service time (and its response time
    /// after the scheduled arrival of an open loop) in the histograms and
    /// the counters the main thread reads.
    fn record(&mut self, req: &Request, service_ns: u64, t1: u64, arrival_ns: Option<u64>) {
        let recording = self.ctx.recording;
        if recording.event_is_op {
            self.hist
                .record(LatencyKind::of_transfer(req.op), service_ns);
        } else {
            self.hist.record(LatencyKind::Event, service_ns);
        }
        let event_ns = match arrival_ns {
            Some(at) => {
                let response = t1.saturating_sub(at);
                self.hist.record(LatencyKind::Response, response);
                response
            }
            None => service_ns,
        };
        self.counters
            .record_event(event_ns, recording.live_sysbench_histogram);
    }

    /// Wait for at least `min` queued completions and record them.
    fn reap(&mut self, min: usize) -> Result<(), IoError> {
        let Worker {
            ctx,
            counters,
            engine,
            hist,
            ..
        } = self;
        engine.reap(min, &mut |comp: Completion| {
            hist.record(
                LatencyKind::of_transfer(comp.op),
                now_ns() - comp.submitted_ns,
            );
            count_transfer(ctx.shared, counters, comp.op, comp.bytes);
        })
    }

    /// fsync `file` and record it (as an operation of the event when `timed`).
    fn fsync(&mut self, file: u32, timed: bool) -> Result<(), Failure> {
        let t = timed.then(now_ns);
        self.engine
            .sync(file, self.ctx.spec.fsync_mode)
            .map_err(|e| io_failure(&e))?;
        if let Some(t) = t {
            self.hist.record(LatencyKind::Fsync, now_ns() - t);
        }
        self.counters.fsyncs.add(1);
        Ok(())
    }

    /// The warm-up is over (the shared epoch moved on): what was recorded so
    /// far is left out, and the counters are marked where measuring starts.
    fn mark_warmup_end(&mut self, epoch: &mut u64) {
        let shared = self.ctx.shared;
        let now_epoch = shared.measuring_since.load(Acquire);
        if now_epoch == *epoch {
            return;
        }
        *epoch = now_epoch;
        self.hist = ThreadHistograms::default();
        let mark = (self.counters.snapshot(), self.counters.histogram.snapshot());
        if let Some(slot) = shared
            .measured_from
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(self.tid)
        {
            *slot = Some(mark);
        }
    }

    /// fio's `fsync=N` sync before the next request: what is in flight
    /// lands first, so the sync covers it.
    fn sync_due(&mut self, file: u32) -> Result<(), Failure> {
        if self.engine.in_flight() > 0 {
            let n = self.engine.in_flight();
            self.reap(n).map_err(|e| io_failure(&e))?;
        }
        self.fsync(file, true)
    }

    /// Execute one event and count it. Per-operation latency is recorded here
    /// only where an event holds more than one operation (fsync after a write)
    /// or completes later (async); otherwise the caller records the event time.
    #[inline]
    fn execute(&mut self, req: &Request) -> Result<(), Failure> {
        let recording = self.ctx.recording;
        let fsync_after = req.op == Op::Write && self.ctx.spec.fsync_all;
        match req.op {
            Op::Fsync => self.fsync(req.file, !recording.event_is_op),
            op => {
                // Only a transfer done inside `submit` is timed around it.
                let t = (!recording.event_is_op && !recording.queued).then(now_ns);
                match self.engine.submit(req).map_err(|e| io_failure(&e))? {
                    Submitted::Done(bytes) => {
                        if let Some(t) = t {
                            self.hist.record(LatencyKind::of_transfer(op), now_ns() - t);
                        }
                        if fsync_after {
                            self.fsync(req.file, true)?;
                        }
                        // Counted after its --file-fsync-all fsync, as
                        // sysbench 1.0.20 counts write_ops (sb_fileio.c,
                        // file_execute_request): rndrw's read/write choice
                        // reads these counts, and a write counted while its
                        // fsync is still running opens its read quota to
                        // whichever thread is free (one that is reading).
                        count_transfer(self.ctx.shared, self.counters, op, bytes);
                    }
                    Submitted::Queued => {
                        // With fsync after every write, wait for the write to land
                        // first (sysbench may fsync before it does: its async
                        // mode, sb_fileio.c at 1.0.20, queues the write and fsyncs at once).
                        let min = if fsync_after {
                            self.engine.in_flight()
                        } else if self.engine.in_flight() >= self.engine.depth() {
                            recording.reap_batch
                        } else {
                            0
                        };
                        self.reap(min).map_err(|e| io_failure(&e))?;
                        if fsync_after {
                            self.fsync(req.file, true)?;
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// After the loop: drain what is still in flight, then the end-of-thread
    /// fsyncs: each thread syncs every file (T x N), before the clock stops.
    /// They are not events, so they go to their own histogram. Skipped once
    /// the run has failed.
    fn finish(&mut self) {
        let shared = self.ctx.shared;
        if self.engine.in_flight() > 0 && !shared.failed.load(Relaxed) {
            let n = self.engine.in_flight();
            if let Err(e) = self.reap(n) {
                fail(shared, io_failure(&e));
            }
        }
        let w = self.ctx.spec;
        if w.fsync_end && w.mode.writes() && !shared.failed.load(Relaxed) {
            if let Err(e) = self.sync_every_file() {
                fail(shared, io_failure(&e));
            }
        }
    }

    /// The end-of-thread fsyncs (`--file-fsync-end`): every file, in order,
    /// stopping at the first failure.
    fn sync_every_file(&mut self) -> Result<(), IoError> {
        let w = self.ctx.spec;
        for f in 0..w.files.file_num {
            let t = now_ns();
            self.engine.sync(file_index(f), w.fsync_mode)?;
            self.hist.record(LatencyKind::FsyncEnd, now_ns() - t);
            self.counters.fsyncs.add(1);
        }
        Ok(())
    }
}

/// Fill a write's buffer with `--validate` blocks (each carries its offset).
#[inline]
fn fill_checked_blocks(buf: &mut [u8], req: &Request, block: usize, rng: &mut Xoroshiro) {
    for (k, b) in buf[..req.transfer_len()].chunks_mut(block).enumerate() {
        fill_checked_block(b, req.pos + (k * block) as u64, rng);
    }
}

/// Check the `--validate` blocks a read brought in; on the first bad one,
/// sysbench's FATAL lines about it.
#[inline]
fn check_blocks(buf: &[u8], req: &Request, block: usize) -> Result<(), Failure> {
    for (k, b) in buf[..req.transfer_len()].chunks(block).enumerate() {
        if let Err(lines) = check_block(b, req.pos + (k * block) as u64, req.file) {
            let mut f = Failure::fatal(lines[0].clone());
            for l in &lines[1..] {
                f = f.then(Stream::Stdout, format!("FATAL: {l}"));
            }
            return Err(f);
        }
    }
    Ok(())
}

/// Open loop: take the next scheduled arrival (at `rate`/s, Poisson or evenly
/// spaced) and
/// wait for it; a late worker starts at once and the delay shows in the
/// response time, so coordinated omission is visible. Returns the arrival time
/// on the [`now_ns`] clock.
fn next_arrival(shared: &Shared, rate: u64, process: RateProcess, start_ns: u64) -> u64 {
    let offset_ns = {
        let mut a = shared.arrivals.lock().expect("arrival lock");
        let gap_ns = match process {
            RateProcess::Poisson => {
                let u = a.1.next_f64();
                -(1.0 - u).ln() / rate as f64 * 1e9
            }
            RateProcess::Linear => 1e9 / rate as f64,
        };
        a.0 += gap_ns;
        a.0
    };
    // A sum of gaps -ln(1 - u)/rate with 0 <= u < 1: finite and not negative,
    // and u64 nanoseconds last 584 years; the cast drops the fraction.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let at = start_ns + offset_ns as u64;
    let now = now_ns();
    if at > now {
        std::thread::sleep(Duration::from_nanos(at - now));
    }
    at
}

/// One line naming the engine, the thread and the OS error.
fn engine_start_failure(engine: &str, tid: usize, e: &std::io::Error) -> Failure {
    Failure::fatal(format!(
        "{engine}: cannot start the engine on worker thread #{tid}: {e} (try --file-io-mode=sync)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_start_failure_is_one_line_naming_the_engine_and_the_os_error() {
        let e = std::io::Error::from_raw_os_error(libc::EBADFD);
        let f = engine_start_failure("io_uring", 3, &e);
        assert_eq!(f.exit_code, 1);
        assert_eq!(f.lines.len(), 1);
        let line = &f.lines[0].1;
        assert!(line.starts_with("FATAL: io_uring: "), "{line}");
        assert!(line.contains("worker thread #3"), "{line}");
        assert!(line.contains(&e.to_string()), "{line}");
        assert!(!line.contains('\n'), "{line}");
    }
}

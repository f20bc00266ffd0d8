//! The runner: worker threads, stop conditions, open-loop arrivals, interval
//! samples, and the end-of-thread fsyncs (the worker loop of src/sysbench.c and
//! the event accounting of src/tests/fileio/sb_fileio.c at sysbench 1.0.20).
//!
//! Workers count into single-writer atomics ([`ThreadCounters`]) that the main
//! thread reads for `--report-interval` lines without stopping anyone; per-op HDR
//! histograms stay thread-local and are merged once at the end.

use crate::engine::injected::InjectedEngine;
use crate::engine::mmap::MmapEngine;
use crate::engine::nfs::NfsEngine;
use crate::engine::psync::PsyncEngine;
use crate::engine::uring::UringEngine;
use crate::engine::{AlignedBuf, Engine, IoError, Submitted};
use crate::failure::{Failure, Stream};
/// Where the threads' generators are seeded (the simulator names it here).
pub use crate::rng::worker_seeds;
use crate::rng::Xoroshiro;
use crate::run::clock::now_ns;
use crate::run::fileset::OpenFiles;
use crate::run::generator::{file_index, Generator, Op, Request};
use crate::run::histograms::{
    sb_percentile_ms, CountSnapshot, LatencyKind, OpHistograms, ThreadCounters, ThreadHistograms,
    SB_BUCKETS,
};
use crate::run::pattern::{check_block, fill_checked_block, fill_random};
use crate::spec::{DataPattern, IoMode, RunSpec};
use std::sync::atomic::{
    AtomicBool, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How the main thread reports while a run goes on.
pub trait RunObserver: Sync {
    /// A DEBUG-level line from a worker: thread start-up, and with `--debug`
    /// one per request (the console filters by verbosity).
    fn debug(&self, _line: &str) {}
    /// An INFO-level line from a worker (`Time limit exceeded, exiting...`).
    fn info(&self, _line: &str) {}
    /// The workers are up and about to be released; the clock starts when this
    /// returns. A distributed job holds its cross-process start barrier here.
    fn before_start(&self) {}
    /// All threads passed the start barrier; the clock runs.
    fn started(&self) {}
    /// Polled by the main thread during the run: true stops the workers as the
    /// time limit does (a distributed job's stonewall).
    fn stop_requested(&self) -> bool {
        false
    }
    /// One `--report-interval` sample.
    fn interval(&self, _sample: &IntervalStats) {}
    /// A `--report-checkpoints` report of the period that just ended.
    fn checkpoint(&self, _at_s: u64, _period: &PeriodStats) {}
    /// Called a few times a second (live progress).
    fn tick(&self, _elapsed: Duration, _totals: &CountSnapshot) {}
    /// The forced-shutdown deadline passed; `period` holds what was counted.
    /// The run then stops its workers and ends with
    /// [`Failure::forced_shutdown`] (sysbench's exit code 2).
    fn forced_shutdown(&self, _period: &PeriodStats) {}
}

/// Rates over one report interval.
#[derive(Debug, Clone)]
pub struct IntervalStats {
    pub elapsed_s: f64,
    pub seconds: f64,
    pub delta: CountSnapshot,
    /// Event latency at the sysbench percentile, ms, over the interval.
    pub latency_ms: f64,
    pub percentile: u32,
}

/// Figures of a period (a checkpoint's or, at the end, the whole run's since the
/// last checkpoint).
#[derive(Debug, Clone)]
pub struct PeriodStats {
    pub seconds: f64,
    /// Run time from the start (sysbench measures "total time" from the start).
    pub total_time_s: f64,
    pub counts: CountSnapshot,
    pub histogram: Vec<u64>,
    pub min_ns: u64,
    pub max_ns: u64,
    /// Per thread: (events, busy ns).
    pub threads: Vec<(u64, u64)>,
    /// Per thread: (min, max) event latency in ns, (0, 0) without events (for
    /// `--debug`'s per-thread statistics).
    pub thread_extremes_ns: Vec<(u64, u64)>,
}

/// Everything a finished run produced.
pub struct RunOutcome {
    pub period: PeriodStats,
    pub histograms: OpHistograms,
    /// Each thread's histograms (their bucket-wise sum is `histograms`).
    pub thread_histograms: Vec<ThreadHistograms>,
    pub intervals: Vec<IntervalStats>,
    pub interrupted: bool,
    pub forced: bool,
    pub engine: &'static str,
}

/// Settings of the runner beyond the workload.
#[derive(Debug, Clone, Default)]
pub struct RunSettings {
    pub report_interval_s: u64,
    pub checkpoints_s: Vec<u64>,
    pub forced_shutdown_s: Option<u64>,
    pub debug: bool,
    /// Background threads sysbench would start before the workers; each draws 4
    /// values from the seeding stream, which shifts the workers' seeds.
    pub background_threads: u32,
    /// With an injected latency model: collects every wait actually produced.
    pub injected_trace: Option<Arc<Mutex<Vec<u64>>>>,
}

struct Shared {
    generator: Generator,
    counters: Vec<ThreadCounters>,
    stop: AtomicBool,
    /// The stop came from the time limit (workers then say so at INFO level).
    time_up: AtomicBool,
    failure: Mutex<Option<Failure>>,
    failed: AtomicBool,
    tickets: AtomicU64,
    /// The clock's start, as an `Instant` and on the [`now_ns`] clock.
    start: OnceLock<(Instant, u64)>,
    /// Open loop: next arrival, ns from start, and the RNG of the arrival process.
    arrivals: Mutex<(f64, Xoroshiro)>,
    finished: Mutex<usize>,
    finished_cv: Condvar,
}

impl Shared {
    fn new(w: &RunSpec) -> Shared {
        Shared {
            generator: Generator::new(w),
            counters: (0..w.threads).map(|_| ThreadCounters::new()).collect(),
            stop: AtomicBool::new(false),
            time_up: AtomicBool::new(false),
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
            tickets: AtomicU64::new(0),
            start: OnceLock::new(),
            arrivals: Mutex::new((
                0.0,
                Xoroshiro::from_state(0x2545_f491_4f6c_dd1d, 0x1234_5678_9abc_def1),
            )),
            finished: Mutex::new(0),
            finished_cv: Condvar::new(),
        }
    }
}

/// Where the workers wait for the start. Unlike `std::sync::Barrier` it can
/// be cancelled: when a thread cannot be created, or Ctrl-C comes while they
/// start, the ones already waiting are sent home instead of waiting forever.
#[derive(Default)]
struct StartGate {
    state: Mutex<GateState>,
    cv: Condvar,
}

#[derive(Default)]
struct GateState {
    /// Workers that have arrived.
    ready: usize,
    /// None while closed; Some(true) to run, Some(false) when cancelled.
    open: Option<bool>,
}

impl StartGate {
    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A worker arrives and waits; true when the run starts.
    fn arrive_and_wait(&self) -> bool {
        let mut st = self.lock();
        st.ready += 1;
        self.cv.notify_all();
        while st.open.is_none() {
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.open == Some(true)
    }

    /// Wait until `n` workers have arrived; false if `stop()` turned true
    /// first (checked a few times a second).
    fn wait_until_ready(&self, n: usize, stop: impl Fn() -> bool) -> bool {
        let mut st = self.lock();
        while st.ready < n {
            if stop() {
                return false;
            }
            st = self
                .cv
                .wait_timeout(st, Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    fn open(&self) {
        self.lock().open = Some(true);
        self.cv.notify_all();
    }

    fn cancel(&self) {
        self.lock().open = Some(false);
        self.cv.notify_all();
    }
}

/// sysbench's message when a worker thread cannot be created (its log_errno
/// format; observed: `FATAL: sb_thread_create() for thread #199 failed. errno =
/// 11 (Resource temporarily unavailable)` under RLIMIT_NPROC 200).
fn spawn_failure(tid: usize, e: &std::io::Error) -> Failure {
    let errno = e.raw_os_error().unwrap_or(libc::EAGAIN);
    Failure::fatal(format!(
        "sb_thread_create() for thread #{tid} failed. errno = {errno} ({})",
        crate::engine::strerror(errno)
    ))
}

/// Ctrl-C while the workers were starting: nothing was measured.
fn interrupted_before_start() -> Failure {
    Failure {
        lines: vec![(
            Stream::Stdout,
            "Run interrupted (SIGINT) while the worker threads were starting; nothing was measured."
                .to_string(),
        )],
        exit_code: 130,
        show_fileio_help: false,
    }
}

struct WorkerResult {
    histograms: ThreadHistograms,
    end: Instant,
}

/// Memory maps each worker thread adds: its stack and guard page, and the
/// signal stack and guard page the Rust runtime gives every thread (counted
/// on Linux 6.18: 1000 workers added 4024 maps), and what its engine maps.
fn maps_per_thread(w: &RunSpec) -> usize {
    4 + crate::engine::capabilities(w.io_mode, w.async_backlog).maps_per_thread
}

/// Maps that are not per worker and come on top of those already there:
/// malloc arenas (glibc makes up to 8 per core) and what the engine maps per
/// file (the mmap engine maps them all).
fn spare_maps(w: &RunSpec) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_file = crate::engine::capabilities(w.io_mode, w.async_backlog).maps_per_file;
    // --file-num is a C int, which fits usize; saturating all the same, so
    // that no count could ever wrap into a budget that looks sufficient.
    let files = usize::try_from(w.files.file_num).unwrap_or(usize::MAX);
    (64 + 2 * 8 * cores).saturating_add(per_file.saturating_mul(files))
}

/// How many worker threads fit under the map limit, given the maps in use.
fn threads_that_fit(max_maps: usize, maps_in_use: usize, per_thread: usize, spare: usize) -> usize {
    max_maps.saturating_sub(maps_in_use + spare) / per_thread.max(1)
}

/// Refuse a thread count that would run the process out of memory maps
/// (vm.max_map_count). sysbench then gets EAGAIN from pthread_create, but a
/// Rust thread that gets its stack and then fails to map its signal stack
/// aborts the whole process, before any code of ours runs in it: so the limit
/// is checked before the first thread starts. RLIMIT_NPROC and the kernel's
/// thread limit make the thread creation itself fail, which `run` reports.
fn check_map_budget(w: &RunSpec) -> Result<(), Failure> {
    let Some(max_maps) = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
    else {
        return Ok(());
    };
    let in_use = std::fs::read_to_string("/proc/self/maps")
        .map(|s| s.lines().count())
        .unwrap_or(0);
    let per_thread = maps_per_thread(w);
    let fit = threads_that_fit(max_maps, in_use, per_thread, spare_maps(w));
    if (w.threads as usize) > fit {
        return Err(Failure::fatal(format!(
            "Invalid value for --threads: {}: each worker thread needs {per_thread} memory maps and vm.max_map_count allows {max_maps}, so at most {fit} threads fit (lower --threads, or raise vm.max_map_count)",
            w.threads
        )));
    }
    Ok(())
}

/// Run the workload on open files.
pub fn run(
    w: &RunSpec,
    files: OpenFiles,
    settings: &RunSettings,
    observer: &dyn RunObserver,
) -> Result<RunOutcome, Failure> {
    let threads = w.threads as usize;
    w.validate_threads()?;
    check_map_budget(w)?;
    let files = Arc::new(files);
    let seeds = worker_seeds(w, settings.background_threads);
    let shared = Arc::new(Shared::new(w));
    let gate = StartGate::default();
    // Engines are built before the threads start so a setup error (io_uring
    // unavailable, say) is reported before anything runs.
    let mut engines: Vec<AnyEngine> = Vec::with_capacity(threads);
    for t in 0..threads {
        engines.push(make_engine(w, &files, t, settings)?);
    }
    let engine_name = engines.first().map(|e| e.name()).unwrap_or("psync");
    let recording = Recording::of(w, settings);

    let outcome = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for (tid, (engine, rng)) in engines.into_iter().zip(seeds).enumerate() {
            let shared = Arc::clone(&shared);
            let gate = &gate;
            let debug = settings.debug;
            // The fallible spawn: the OS can refuse a thread (RLIMIT_NPROC, the
            // kernel's thread or map limits), and that must end the run with
            // sysbench's message, not a panic that leaves the started threads
            // waiting for a start that never comes.
            let spawned = std::thread::Builder::new()
                .name(format!("worker-{tid}"))
                .spawn_scoped(scope, move || {
                    let r = match engine {
                        AnyEngine::Psync(e) => {
                            worker(w, &shared, gate, tid, e, rng, debug, observer, recording)
                        }
                        AnyEngine::Mmap(e) => {
                            worker(w, &shared, gate, tid, e, rng, debug, observer, recording)
                        }
                        AnyEngine::Uring(e) => {
                            worker(w, &shared, gate, tid, *e, rng, debug, observer, recording)
                        }
                        AnyEngine::Injected(e) => {
                            worker(w, &shared, gate, tid, e, rng, debug, observer, recording)
                        }
                        AnyEngine::Nfs(e) => {
                            worker(w, &shared, gate, tid, e, rng, debug, observer, recording)
                        }
                    };
                    let mut n = shared.finished.lock().unwrap_or_else(|e| e.into_inner());
                    *n += 1;
                    shared.finished_cv.notify_all();
                    r
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // The threads already started are waiting at the gate:
                    // cancelling it lets them return, and the scope joins them.
                    gate.cancel();
                    return Err(spawn_failure(tid, &e));
                }
            }
            if crate::signals::stop_requested() {
                gate.cancel();
                return Err(interrupted_before_start());
            }
        }
        if !gate.wait_until_ready(threads, crate::signals::stop_requested) {
            gate.cancel();
            return Err(interrupted_before_start());
        }
        observer.before_start();
        // As sysbench does when the last thread reaches its start barrier: start
        // the clock, print "Threads started!", and only then let the workers go,
        // so no request line can come before it.
        let start = Instant::now();
        let _ = shared.start.set((start, now_ns()));
        observer.started();
        gate.open();
        let control = supervise(w, settings, &shared, start, observer);
        if control.forced {
            stop_at_forced_shutdown(&shared, &control, start, observer);
        }
        let mut finished = Finished {
            histograms: OpHistograms::default(),
            thread_histograms: Vec::with_capacity(threads),
            end: start,
        };
        for h in handles {
            let r = match h.join() {
                Ok(r) => r,
                // A worker's panic is a bug; carry it on with its own message.
                Err(panic) => std::panic::resume_unwind(panic),
            };
            finished.add(r);
        }
        if let Some(f) = shared.failure.lock().expect("failure lock").take() {
            return Err(f);
        }
        Ok(outcome_of(
            w,
            &shared,
            finished,
            control,
            start,
            recording,
            engine_name,
        ))
    });
    outcome
}

/// The forced-shutdown deadline passed. Report what was counted now, as
/// sysbench does when its deadline passes (sysbench.c at 1.0.20 prints the
/// report and exits with code 2 from its shutdown thread). Then stop the
/// workers: marking the run failed skips their end-of-test fsyncs and the
/// drain of queued requests, so they return after their current request.
fn stop_at_forced_shutdown(
    shared: &Shared,
    control: &Control,
    start: Instant,
    observer: &dyn RunObserver,
) {
    let (period, _) = period_since(
        shared,
        &control.baseline,
        control.period_start,
        Instant::now(),
        start,
        false,
    );
    observer.forced_shutdown(&period);
    fail(shared, Failure::forced_shutdown());
    shared.stop.store(true, Relaxed);
}

/// What the workers handed back, summed.
struct Finished {
    histograms: OpHistograms,
    thread_histograms: Vec<ThreadHistograms>,
    /// When the last of them finished.
    end: Instant,
}

impl Finished {
    fn add(&mut self, r: WorkerResult) {
        self.histograms.add_thread(&r.histograms);
        self.thread_histograms.push(r.histograms);
        self.end = self.end.max(r.end);
    }
}

/// The outcome of a run whose workers all finished without a failure.
fn outcome_of(
    w: &RunSpec,
    shared: &Shared,
    finished: Finished,
    control: Control,
    start: Instant,
    recording: Recording,
    engine: &'static str,
) -> RunOutcome {
    let Finished {
        mut histograms,
        thread_histograms,
        end,
    } = finished;
    if recording.event_is_op {
        histograms.derive_event_from_operations();
    }
    let (mut period, _) = period_since(
        shared,
        &control.baseline,
        control.period_start,
        end,
        start,
        false,
    );
    if !recording.live_sysbench_histogram {
        period.histogram =
            crate::run::histograms::sysbench_histogram_of(histograms.get(if w.rate > 0 {
                LatencyKind::Response
            } else {
                LatencyKind::Event
            }));
    }
    RunOutcome {
        period,
        histograms,
        thread_histograms,
        intervals: control.intervals,
        interrupted: control.interrupted,
        forced: control.forced,
        engine,
    }
}

/// What the main thread saw while supervising.
struct Control {
    intervals: Vec<IntervalStats>,
    interrupted: bool,
    forced: bool,
    /// Counters at the last checkpoint (zero without checkpoints).
    baseline: Baseline,
    period_start: Instant,
}

/// The counters at the last checkpoint (empty before the first one).
#[derive(Clone, Default)]
struct Baseline {
    counts: Vec<CountSnapshot>,
    /// Per thread: sysbench histogram counts.
    histograms: Vec<Vec<u64>>,
}

fn sum_counts(shared: &Shared) -> (Vec<CountSnapshot>, CountSnapshot) {
    let per: Vec<CountSnapshot> = shared
        .counters
        .iter()
        .map(ThreadCounters::snapshot)
        .collect();
    let mut total = CountSnapshot::default();
    for c in &per {
        total.add(c);
    }
    (per, total)
}

fn sum_histogram(shared: &Shared) -> Vec<u64> {
    let mut h = vec![0u64; SB_BUCKETS];
    for c in &shared.counters {
        for (d, s) in h.iter_mut().zip(c.histogram.snapshot()) {
            *d += s;
        }
    }
    h
}

/// The values (ns) of the lowest and highest non-empty buckets: bounds of the
/// extremes when the exact ones are not kept (after a checkpoint).
fn bucket_extremes_ns(h: &[u64]) -> (u64, u64) {
    let first = h.iter().position(|&c| c > 0);
    let last = h.iter().rposition(|&c| c > 0);
    // Bucket values are 0.001 ms to 100 s: 1e3 to 1e11 ns, positive and well
    // inside u64; the cast drops the fraction of a nanosecond.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let ns = |bucket: usize| (crate::run::histograms::sb_bucket_value_ms(bucket) * 1e6) as u64;
    match (first, last) {
        (Some(f), Some(l)) => (ns(f), ns(l)),
        _ => (0, 0),
    }
}

/// The figures since `base`. With `next_baseline` (a checkpoint), also the
/// counters they were computed from, the next period's baseline, so no event
/// falls between two periods; otherwise an empty baseline (the per-thread
/// histograms are not worth keeping when nothing follows).
fn period_since(
    shared: &Shared,
    base: &Baseline,
    period_start: Instant,
    end: Instant,
    start: Instant,
    next_baseline: bool,
) -> (PeriodStats, Baseline) {
    let n = shared.counters.len();
    let fresh = base.counts.is_empty();
    let mut now = Baseline::default();
    let mut counts = CountSnapshot::default();
    let mut threads = Vec::with_capacity(n);
    let mut thread_extremes_ns = Vec::with_capacity(n);
    let mut histogram = vec![0u64; SB_BUCKETS];
    for (t, c) in shared.counters.iter().enumerate() {
        let snap = c.snapshot();
        let d = match base.counts.get(t) {
            Some(b) => snap.minus(b),
            None => snap,
        };
        let hist = c.histogram.snapshot();
        let since_base: Vec<u64>;
        let delta = match base.histograms.get(t) {
            Some(b) => {
                since_base = hist.iter().zip(b).map(|(a, b)| a - b).collect();
                &since_base
            }
            None => &hist,
        };
        for (sum, v) in histogram.iter_mut().zip(delta) {
            *sum += v;
        }
        let extremes = if d.events == 0 {
            (0, 0)
        } else if fresh {
            // Read while the worker may still write them: a minimum not yet
            // lowered from its initial u64::MAX must not show.
            let max = c.latency_max_ns.get();
            (c.latency_min_ns.get().min(max), max)
        } else {
            // After a checkpoint the exact extremes of the period are not
            // kept; the histogram's outermost buckets bound them.
            bucket_extremes_ns(delta)
        };
        threads.push((d.events, d.latency_sum_ns));
        thread_extremes_ns.push(extremes);
        counts.add(&d);
        if next_baseline {
            now.counts.push(snap);
            now.histograms.push(hist);
        }
    }
    let busy = threads
        .iter()
        .zip(&thread_extremes_ns)
        .filter(|((events, _), _)| *events > 0);
    let min_ns = busy.clone().map(|(_, e)| e.0).min().unwrap_or(0);
    let max_ns = busy.map(|(_, e)| e.1).max().unwrap_or(0);
    let period = PeriodStats {
        seconds: end.saturating_duration_since(period_start).as_secs_f64(),
        total_time_s: end.saturating_duration_since(start).as_secs_f64(),
        counts,
        histogram,
        min_ns,
        max_ns,
        threads,
        thread_extremes_ns,
    };
    (period, now)
}

/// The main thread's loop: time limit, interval lines, checkpoints, SIGINT,
/// forced shutdown; returns when every worker has finished.
fn supervise(
    w: &RunSpec,
    settings: &RunSettings,
    shared: &Shared,
    start: Instant,
    observer: &dyn RunObserver,
) -> Control {
    let threads = w.threads as usize;
    let time_limit = (w.time_s > 0).then(|| start + Duration::from_secs(w.time_s));
    let forced_at = settings
        .forced_shutdown_s
        .map(|s| start + Duration::from_secs(w.time_s + s));
    let interval =
        (settings.report_interval_s > 0).then(|| Duration::from_secs(settings.report_interval_s));
    let mut next_interval = interval.map(|d| start + d);
    let mut checkpoints = settings.checkpoints_s.iter().copied().peekable();
    let mut last_interval = IntervalBase {
        counts: CountSnapshot::default(),
        histogram: vec![0u64; SB_BUCKETS],
        at: start,
    };
    let mut control = Control {
        intervals: Vec::new(),
        interrupted: false,
        forced: false,
        baseline: Baseline::default(),
        period_start: start,
    };
    let tick = Duration::from_millis(100);
    loop {
        let now = Instant::now();
        let mut wake = now + tick;
        for t in [time_limit, next_interval, forced_at].into_iter().flatten() {
            wake = wake.min(t);
        }
        if let Some(&c) = checkpoints.peek() {
            wake = wake.min(start + Duration::from_secs(c));
        }
        if all_finished_by(shared, threads, wake) {
            break;
        }
        let now = Instant::now();
        if time_limit.is_some_and(|t| now >= t) {
            shared.time_up.store(true, Relaxed);
            // Release: a worker that sees the stop also sees why.
            shared.stop.store(true, Release);
        }
        if crate::signals::stop_requested() && !control.interrupted {
            control.interrupted = true;
            shared.stop.store(true, Relaxed);
        }
        if observer.stop_requested() {
            shared.stop.store(true, Relaxed);
        }
        if let Some(t) = next_interval {
            if now >= t {
                let sample = interval_sample(w, shared, start, now, &mut last_interval);
                observer.interval(&sample);
                control.intervals.push(sample);
                next_interval = interval.map(|d| t + d);
            }
        }
        if let Some(&c) = checkpoints.peek() {
            if now >= start + Duration::from_secs(c) {
                checkpoints.next();
                let (period, counted) = period_since(
                    shared,
                    &control.baseline,
                    control.period_start,
                    now,
                    start,
                    true,
                );
                observer.checkpoint(c, &period);
                control.baseline = counted;
                control.period_start = now;
                shared.generator.reset_completions();
            }
        }
        if forced_at.is_some_and(|t| now >= t) {
            control.forced = true;
            return control;
        }
        let (_, total) = sum_counts(shared);
        observer.tick(now.duration_since(start), &total);
    }
    control
}

/// Wait until every worker has finished or `wake` comes; true when they have.
fn all_finished_by(shared: &Shared, threads: usize, wake: Instant) -> bool {
    let n = shared.finished.lock().expect("finished lock");
    if *n == threads {
        return true;
    }
    let timeout = wake.saturating_duration_since(Instant::now());
    let (n, _) = shared
        .finished_cv
        .wait_timeout(n, timeout)
        .expect("finished lock");
    *n == threads
}

/// The counters at the last `--report-interval` line, which the next line's
/// figures are the difference from.
struct IntervalBase {
    counts: CountSnapshot,
    histogram: Vec<u64>,
    at: Instant,
}

/// The `--report-interval` sample of the interval ending `now`; `base` moves
/// on to `now`.
fn interval_sample(
    w: &RunSpec,
    shared: &Shared,
    start: Instant,
    now: Instant,
    base: &mut IntervalBase,
) -> IntervalStats {
    let (_, total) = sum_counts(shared);
    let hist = sum_histogram(shared);
    let delta_hist: Vec<u64> = hist
        .iter()
        .zip(&base.histogram)
        .map(|(a, b)| a - b)
        .collect();
    let sample = IntervalStats {
        elapsed_s: now.duration_since(start).as_secs_f64(),
        seconds: now.duration_since(base.at).as_secs_f64(),
        delta: total.minus(&base.counts),
        latency_ms: if w.percentile > 0 {
            sb_percentile_ms(&delta_hist, w.percentile as f64)
        } else {
            0.0
        },
        percentile: w.percentile,
    };
    *base = IntervalBase {
        counts: total,
        histogram: hist,
        at: now,
    };
    sample
}

/// The engines a run can use; each worker gets its own and runs a loop
/// monomorphised for it. (Boxing the large io_uring one keeps the enum small.)
enum AnyEngine {
    Psync(PsyncEngine),
    Mmap(MmapEngine),
    Uring(Box<UringEngine>),
    Injected(InjectedEngine),
    Nfs(NfsEngine),
}

impl AnyEngine {
    fn name(&self) -> &'static str {
        match self {
            AnyEngine::Psync(e) => e.name(),
            AnyEngine::Mmap(e) => e.name(),
            AnyEngine::Uring(e) => e.name(),
            AnyEngine::Injected(e) => e.name(),
            AnyEngine::Nfs(e) => e.name(),
        }
    }
}

fn make_engine(
    w: &RunSpec,
    files: &Arc<OpenFiles>,
    tid: usize,
    settings: &RunSettings,
) -> Result<AnyEngine, Failure> {
    // sysbench's message when a thread's buffer cannot be allocated.
    let buf = AlignedBuf::try_new(w.buffer_size())
        .ok_or_else(|| Failure::fatal(format!("Failed to allocate buffer for thread #{tid}!")))?;
    if let Some(model) = w.inject_latency {
        return Ok(AnyEngine::Injected(InjectedEngine::new(
            model,
            tid as u64 + 1,
            buf,
            settings.injected_trace.clone(),
        )));
    }
    if files.nfs.is_some() {
        // Options refuse every other --file-io-mode with an nfs:// file set.
        return Ok(AnyEngine::Nfs(NfsEngine::new(Arc::clone(files), buf)?));
    }
    Ok(match w.io_mode {
        IoMode::Sync => AnyEngine::Psync(PsyncEngine::new(Arc::clone(files), buf)),
        IoMode::Mmap => AnyEngine::Mmap(MmapEngine::new(Arc::clone(files), buf)),
        IoMode::Async => AnyEngine::Uring(Box::new(
            UringEngine::new(Arc::clone(files), buf, w.async_backlog).map_err(|e| {
                Failure::fatal(format!(
                    "io_uring is not available ({e}); --file-io-mode=async needs Linux 5.6 or later with io_uring enabled (try --file-io-mode=sync)"
                ))
            })?,
        )),
    })
}

/// One line naming the engine, the thread and the OS error.
fn engine_start_failure(engine: &str, tid: usize, e: &std::io::Error) -> Failure {
    Failure::fatal(format!(
        "{engine}: cannot start the engine on worker thread #{tid}: {e} (try --file-io-mode=sync)"
    ))
}

fn fail(shared: &Shared, f: Failure) {
    let mut slot = shared.failure.lock().expect("failure lock");
    if slot.is_none() {
        *slot = Some(f);
    }
    shared.failed.store(true, Relaxed);
}

fn io_failure(e: &IoError) -> Failure {
    Failure::fatal(e.message())
}

/// Record a finished read or write in counters and histograms.
#[inline]
fn count_transfer(shared: &Shared, c: &ThreadCounters, op: Op, bytes: u64) {
    match op {
        Op::Read => {
            c.reads.add(1);
            c.bytes_read.add(bytes);
        }
        Op::Write => {
            c.writes.add(1);
            c.bytes_written.add(bytes);
        }
        Op::Fsync => c.fsyncs.add(1),
    }
    if shared.generator.tracks_completions() {
        shared.generator.complete(op);
    }
}

impl Recording {
    fn of(w: &RunSpec, settings: &RunSettings) -> Recording {
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
struct Recording {
    /// Every event is exactly one operation timed end to end (synchronous
    /// engine, no fsync after writes): record only the per-operation histogram
    /// and derive the event histogram at the end (one record per event).
    event_is_op: bool,
    /// Keep sysbench's histogram live (interval lines and checkpoints read it);
    /// otherwise it is derived from the event histogram at the end.
    live_sysbench_histogram: bool,
    /// The engine queues requests (io_uring): a transfer is timed from its
    /// submission to its completion by the engine, never around `submit`.
    queued: bool,
    /// Completions to wait for when the queue is full (see [`reap_batch`]).
    reap_batch: usize,
}

#[allow(clippy::too_many_arguments)]
fn worker<E: Engine>(
    w: &RunSpec,
    shared: &Shared,
    gate: &StartGate,
    tid: usize,
    mut engine: E,
    mut rng: Xoroshiro,
    debug: bool,
    observer: &dyn RunObserver,
    recording: Recording,
) -> WorkerResult {
    let c = &shared.counters[tid];
    let mut hist = ThreadHistograms::default();
    let stripe_draw = w.percentile > 0;
    let events_limit = w.events;
    // Lossless on 64-bit targets; on 32-bit ones too, because the block size
    // is a C int (the option parser refuses more than i32::MAX).
    #[allow(clippy::cast_possible_truncation)]
    let block = w.files.block_size as usize;
    if w.files.data == DataPattern::Random && !w.files.validate {
        let mut data_rng = Xoroshiro::from_state(0xdead_beef ^ tid as u64, 0x5851_f42d_4c95_7f2d);
        fill_random(engine.buffer_mut(), &mut data_rng);
    }
    // DEBUG level, printed at --verbosity=5 with or without --debug, as
    // sysbench's worker threads do.
    observer.debug(&format!("DEBUG: Worker thread (#{tid}) started"));
    if let Err(e) = engine.start_on_this_thread() {
        // Still arrive at the start gate (the main thread waits for every
        // worker there); the loop below then stops at once on the failure.
        fail(shared, engine_start_failure(engine.name(), tid, &e));
    }
    observer.debug(&format!("DEBUG: Worker thread (#{tid}) initialized"));
    let depth = engine.depth();
    if !gate.arrive_and_wait() {
        return WorkerResult {
            histograms: hist,
            end: Instant::now(),
        };
    }
    let start_ns = match shared.start.get() {
        Some(s) => s.1,
        // The gate opens only after the clock is set.
        None => now_ns(),
    };
    loop {
        if shared.failed.load(Relaxed) {
            break;
        }
        if shared.stop.load(Acquire) {
            if shared.time_up.load(Relaxed) {
                observer.info("Time limit exceeded, exiting...");
            }
            break;
        }
        if events_limit > 0 && shared.tickets.fetch_add(1, Relaxed) >= events_limit {
            observer.info("Event limit exceeded, exiting...");
            break;
        }
        let arrival_ns = if w.rate > 0 {
            Some(next_arrival(shared, w.rate, start_ns))
        } else {
            None
        };
        let Some(req) = shared
            .generator
            .next_unless_stopped(&mut rng, tid, &shared.stop)
        else {
            // Stopped while waiting for a free --validate block: the loop's
            // stop check says why.
            continue;
        };
        if debug {
            observer.debug(&req.debug_line());
        }
        if w.files.validate && req.op == Op::Write {
            fill_checked_blocks(engine.buffer_mut(), &req, block, &mut rng);
        }
        let t0 = now_ns();
        let result = execute(w, shared, c, &mut engine, &mut hist, &req, depth, recording);
        let t1 = now_ns();
        if let Err(f) = result {
            fail(shared, f);
            break;
        }
        let service_ns = t1 - t0;
        if recording.event_is_op {
            hist.record(LatencyKind::of_transfer(req.op), service_ns);
        } else {
            hist.record(LatencyKind::Event, service_ns);
        }
        let event_ns = match arrival_ns {
            Some(at) => {
                let response = t1.saturating_sub(at);
                hist.record(LatencyKind::Response, response);
                response
            }
            None => service_ns,
        };
        c.record_event(event_ns, recording.live_sysbench_histogram);
        if stripe_draw {
            // sysbench picks a histogram stripe with one draw per event; drawing
            // too keeps offsets bit-exact with it.
            rng.next_u64();
        }
        if w.files.validate && req.op == Op::Read {
            if let Err(f) = check_blocks(engine.buffer_mut(), &req, block) {
                fail(shared, f);
            }
        }
    }
    finish_thread(w, shared, c, &mut engine, &mut hist);
    WorkerResult {
        histograms: hist,
        end: Instant::now(),
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

/// After the loop: drain what is still in flight, then the end-of-thread
/// fsyncs: each thread syncs every file (T x N), before the clock stops. They
/// are not events, so they go to their own histogram. Skipped once the run
/// has failed.
fn finish_thread<E: Engine>(
    w: &RunSpec,
    shared: &Shared,
    c: &ThreadCounters,
    engine: &mut E,
    hist: &mut ThreadHistograms,
) {
    if engine.in_flight() > 0 && !shared.failed.load(Relaxed) {
        let n = engine.in_flight();
        let mut done = |comp: crate::engine::Completion| {
            hist.record(
                LatencyKind::of_transfer(comp.op),
                now_ns() - comp.submitted_ns,
            );
            count_transfer(shared, c, comp.op, comp.bytes);
        };
        if let Err(e) = engine.reap(n, &mut done) {
            fail(shared, io_failure(&e));
        }
    }
    if w.fsync_end && w.mode.writes() && !shared.failed.load(Relaxed) {
        if let Err(e) = sync_every_file(w, c, engine, hist) {
            fail(shared, io_failure(&e));
        }
    }
}

/// The end-of-thread fsyncs (`--file-fsync-end`): every file, in order,
/// stopping at the first failure.
fn sync_every_file<E: Engine>(
    w: &RunSpec,
    c: &ThreadCounters,
    engine: &mut E,
    hist: &mut ThreadHistograms,
) -> Result<(), IoError> {
    for f in 0..w.files.file_num {
        let t = now_ns();
        engine.sync(file_index(f), w.fsync_mode)?;
        hist.record(LatencyKind::FsyncEnd, now_ns() - t);
        c.fsyncs.add(1);
    }
    Ok(())
}

/// Open loop: take the next scheduled arrival (Poisson process at `rate`/s) and
/// wait for it; a late worker starts at once and the delay shows in the
/// response time, so coordinated omission is visible. Returns the arrival time
/// on the [`now_ns`] clock.
fn next_arrival(shared: &Shared, rate: u64, start_ns: u64) -> u64 {
    let offset_ns = {
        let mut a = shared.arrivals.lock().expect("arrival lock");
        let u = a.1.next_f64();
        let gap_ns = -(1.0 - u).ln() / rate as f64 * 1e9;
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

/// Execute one event and count it. Per-operation latency is recorded here only
/// where an event holds more than one operation (fsync after a write) or
/// completes later (async); otherwise the caller records the event time.
#[allow(clippy::too_many_arguments)]
#[inline]
fn execute<E: Engine>(
    w: &RunSpec,
    shared: &Shared,
    c: &ThreadCounters,
    engine: &mut E,
    hist: &mut ThreadHistograms,
    req: &Request,
    depth: usize,
    recording: Recording,
) -> Result<(), Failure> {
    match req.op {
        Op::Fsync => {
            let t = (!recording.event_is_op).then(now_ns);
            engine
                .sync(req.file, w.fsync_mode)
                .map_err(|e| io_failure(&e))?;
            if let Some(t) = t {
                hist.record(LatencyKind::Fsync, now_ns() - t);
            }
            c.fsyncs.add(1);
            Ok(())
        }
        op => {
            // Only a transfer done inside `submit` is timed around it.
            let t = (!recording.event_is_op && !recording.queued).then(now_ns);
            match engine.submit(req).map_err(|e| io_failure(&e))? {
                Submitted::Done(bytes) => {
                    count_transfer(shared, c, op, bytes);
                    if let Some(t) = t {
                        let mid = now_ns();
                        hist.record(LatencyKind::of_transfer(op), mid - t);
                        if op == Op::Write && w.fsync_all {
                            engine
                                .sync(req.file, w.fsync_mode)
                                .map_err(|e| io_failure(&e))?;
                            hist.record(LatencyKind::Fsync, now_ns() - mid);
                            c.fsyncs.add(1);
                        }
                    }
                }
                Submitted::Queued => {
                    let mut done = |comp: crate::engine::Completion| {
                        hist.record(
                            LatencyKind::of_transfer(comp.op),
                            now_ns() - comp.submitted_ns,
                        );
                        count_transfer(shared, c, comp.op, comp.bytes);
                    };
                    // With fsync after every write, wait for the write to land
                    // first (sysbench may fsync before it does: its async
                    // mode, sb_fileio.c at 1.0.20, queues the write and fsyncs at once).
                    let min = if op == Op::Write && w.fsync_all {
                        engine.in_flight()
                    } else if engine.in_flight() >= depth {
                        recording.reap_batch
                    } else {
                        0
                    };
                    engine.reap(min, &mut done).map_err(|e| io_failure(&e))?;
                    if op == Op::Write && w.fsync_all {
                        let t = now_ns();
                        engine
                            .sync(req.file, w.fsync_mode)
                            .map_err(|e| io_failure(&e))?;
                        hist.record(LatencyKind::Fsync, now_ns() - t);
                        c.fsyncs.add(1);
                    }
                }
            }
            Ok(())
        }
    }
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

    #[test]
    fn thread_budget_leaves_room_for_the_maps_in_use() {
        // 65530 is Linux's default vm.max_map_count.
        assert_eq!(threads_that_fit(65530, 42, 4, 96), 16348);
        assert_eq!(threads_that_fit(100, 200, 4, 10), 0);
        assert_eq!(threads_that_fit(1000, 0, 0, 0), 1000);
    }

    #[test]
    fn a_cancelled_gate_sends_the_waiting_workers_home() {
        let gate = StartGate::default();
        let results = std::thread::scope(|s| {
            let waiting: Vec<_> = (0..3).map(|_| s.spawn(|| gate.arrive_and_wait())).collect();
            assert!(gate.wait_until_ready(3, || false));
            gate.cancel();
            waiting
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        });
        assert_eq!(results, vec![false; 3]);
    }

    #[test]
    fn an_open_gate_starts_the_workers_and_waiting_can_be_stopped() {
        let gate = StartGate::default();
        let results = std::thread::scope(|s| {
            let waiting: Vec<_> = (0..2).map(|_| s.spawn(|| gate.arrive_and_wait())).collect();
            assert!(gate.wait_until_ready(2, || false));
            gate.open();
            waiting
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        });
        assert_eq!(results, vec![true; 2]);
        // Nobody arrives: the stop condition ends the wait.
        assert!(!StartGate::default().wait_until_ready(1, || true));
    }
}

//! The runner: worker threads, stop conditions, open-loop arrivals, interval
//! samples, and the end-of-thread fsyncs (the worker loop of src/sysbench.c and
//! the event accounting of src/tests/fileio/sb_fileio.c at sysbench 1.0.20).
//!
//! [`run`] builds the engines, starts the workers ([`worker`]) behind a start
//! gate, supervises them from the calling thread ([`supervisor`]) and sums
//! what they hand back. What the two sides share is in [`shared`].

mod engines;
mod interface;
mod limits;
mod shared;
mod supervisor;
mod worker;

/// Where the threads' generators are seeded (the simulator names it here).
pub use crate::rng::worker_seeds;
pub use interface::{IntervalStats, PeriodStats, RunObserver, RunOutcome, RunSettings};

use crate::failure::{Failure, Stream};
use crate::run::clock::now_ns;
use crate::run::fileset::OpenFiles;
use crate::run::histograms::{LatencyKind, OpHistograms, ThreadHistograms};
use crate::spec::RunSpec;
use std::sync::Arc;
use std::time::Instant;

use engines::{make_engine, AnyEngine};
use limits::check_map_budget;
pub use limits::{check_thread_budget, ThreadBudgetError};
use shared::{Shared, StartGate};
use supervisor::{period_since, stop_at_forced_shutdown, supervise, Control};
use worker::{run_worker, Recording, WorkerContext, WorkerResult};

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
    let shared = Shared::new(w);
    let gate = StartGate::default();
    // Engines are built before the threads start so a setup error (io_uring
    // unavailable, say) is reported before anything runs.
    let mut engines: Vec<AnyEngine> = Vec::with_capacity(threads);
    for t in 0..threads {
        engines.push(make_engine(w, &files, t, settings)?);
    }
    let engine_name = engines.first().map(|e| e.name()).unwrap_or("psync");
    let recording = Recording::of(w, settings);

    let ctx = WorkerContext {
        spec: w,
        shared: &shared,
        gate: &gate,
        observer,
        recording,
        debug: settings.debug,
        warmup: settings.warmup_s > 0,
    };

    let outcome = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for (tid, (engine, rng)) in engines.into_iter().zip(seeds).enumerate() {
            // The fallible spawn: the OS can refuse a thread (RLIMIT_NPROC, the
            // kernel's thread or map limits), and that must end the run with
            // sysbench's message, not a panic that leaves the started threads
            // waiting for a start that never comes.
            let spawned = std::thread::Builder::new()
                .name(format!("worker-{tid}"))
                .spawn_scoped(scope, move || {
                    let r = run_worker(ctx, tid, engine, rng);
                    let shared = ctx.shared;
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
            stop_at_forced_shutdown(&shared, &control, observer);
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
            recording,
            engine_name,
        ))
    });
    outcome
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
    let mut baseline = control.baseline.clone();
    let marks = shared
        .measured_from
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    for (t, mark) in marks.into_iter().enumerate() {
        if let Some((counts, histogram)) = mark {
            baseline.set_thread(t, counts, histogram);
        }
    }
    let (mut period, _) = period_since(
        shared,
        &baseline,
        control.period_start,
        end,
        control.measure_start,
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

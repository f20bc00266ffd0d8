//! The runner's interface: what a caller sets beyond the workload, what it
//! watches while the run goes on, and what it gets back.

use crate::run::histograms::{CountSnapshot, OpHistograms, ThreadHistograms};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
    /// Called a few times a second (live progress): the time since the
    /// start, the counts so far, and the last whole second's figures
    /// (None during the first second), so a live line shows what the
    /// storage does now rather than an average since the start.
    fn tick(
        &self,
        _elapsed: Duration,
        _totals: &CountSnapshot,
        _last_second: Option<&IntervalStats>,
    ) {
    }
    /// The forced-shutdown deadline passed; `period` holds what was counted.
    /// The run then stops its workers and ends with
    /// [`crate::failure::Failure::forced_shutdown`] (sysbench's exit code 2).
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
    /// `--warmup`: seconds the workers run before the measured `time_s`;
    /// every figure leaves them out (the workers drop their histograms and
    /// the counters are read from its end).
    pub warmup_s: u64,
}

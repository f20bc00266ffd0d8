//! The main thread while the workers run: the time limit, interval lines,
//! checkpoints, Ctrl-C and the forced shutdown, and the figures of a period
//! summed from the workers' counters.

use crate::failure::Failure;
use crate::run::histograms::{sb_percentile_ms, CountSnapshot, ThreadCounters, SB_BUCKETS};
use crate::spec::RunSpec;
use std::sync::atomic::Ordering::{Relaxed, Release};
use std::time::{Duration, Instant};

use super::interface::{IntervalStats, PeriodStats, RunObserver, RunSettings};
use super::shared::{fail, Shared};

/// The forced-shutdown deadline passed. Report what was counted now, as
/// sysbench does when its deadline passes (sysbench.c at 1.0.20 prints the
/// report and exits with code 2 from its shutdown thread). Then stop the
/// workers: marking the run failed skips their end-of-test fsyncs and the
/// drain of queued requests, so they return after their current request.
pub(super) fn stop_at_forced_shutdown(
    shared: &Shared,
    control: &Control,
    observer: &dyn RunObserver,
) {
    let (period, _) = period_since(
        shared,
        &control.baseline,
        control.period_start,
        Instant::now(),
        control.measure_start,
        false,
    );
    observer.forced_shutdown(&period);
    fail(shared, Failure::forced_shutdown());
    shared.stop.store(true, Relaxed);
}

/// What the main thread saw while supervising.
pub(super) struct Control {
    pub(super) intervals: Vec<IntervalStats>,
    pub(super) interrupted: bool,
    pub(super) forced: bool,
    /// Counters at the last checkpoint (zero without checkpoints).
    pub(super) baseline: Baseline,
    pub(super) period_start: Instant,
    /// When the measured period began: the start, or the end of the
    /// warm-up. Total time counts from here.
    pub(super) measure_start: Instant,
}

/// The counters at the last checkpoint (empty before the first one).
#[derive(Clone, Default)]
pub(super) struct Baseline {
    pub(super) counts: Vec<CountSnapshot>,
    /// Per thread: sysbench histogram counts.
    pub(super) histograms: Vec<Vec<u64>>,
}

impl Baseline {
    /// Thread `t`'s own reading at the end of the warm-up replaces the
    /// main thread's: a worker reads its counters where it drops its
    /// histograms, so the two leave out exactly the same events.
    pub(super) fn set_thread(&mut self, t: usize, counts: CountSnapshot, histogram: Vec<u64>) {
        if let (Some(c), Some(h)) = (self.counts.get_mut(t), self.histograms.get_mut(t)) {
            *c = counts;
            *h = histogram;
        }
    }
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
pub(super) fn period_since(
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
pub(super) fn supervise(
    w: &RunSpec,
    settings: &RunSettings,
    shared: &Shared,
    start: Instant,
    observer: &dyn RunObserver,
) -> Control {
    let threads = w.threads as usize;
    // With --warmup the measured --time follows the warm-up (fio's
    // ramp_time): the limits count from its end.
    let warmup = Duration::from_secs(settings.warmup_s);
    let mut warmup_end = (settings.warmup_s > 0).then(|| start + warmup);
    let time_limit = (w.time_s > 0).then(|| start + warmup + Duration::from_secs(w.time_s));
    let forced_at = settings
        .forced_shutdown_s
        .map(|s| start + warmup + Duration::from_secs(w.time_s + s));
    let interval =
        (settings.report_interval_s > 0).then(|| Duration::from_secs(settings.report_interval_s));
    let mut next_interval = interval.map(|d| start + d);
    let mut checkpoints = settings.checkpoints_s.iter().copied().peekable();
    let mut last_interval = IntervalBase::starting(start);
    let mut control = Control {
        intervals: Vec::new(),
        interrupted: false,
        forced: false,
        baseline: Baseline::default(),
        period_start: start,
        measure_start: start,
    };
    let tick = Duration::from_millis(100);
    // The live line's window: the last whole second, apart from the
    // --report-interval samples (which keep their own base).
    let mut live_base = IntervalBase::starting(start);
    let mut last_second: Option<IntervalStats> = None;
    loop {
        let now = Instant::now();
        let mut wake = now + tick;
        for t in [time_limit, next_interval, forced_at, warmup_end]
            .into_iter()
            .flatten()
        {
            wake = wake.min(t);
        }
        if let Some(&c) = checkpoints.peek() {
            wake = wake.min(start + Duration::from_secs(c));
        }
        if all_finished_by(shared, threads, wake) {
            break;
        }
        let now = Instant::now();
        if warmup_end.is_some_and(|t| now >= t) {
            // The measured period starts: counters are read from here, and
            // the workers drop their histograms (Release: with the baseline
            // taken first, no event falls between the two).
            warmup_end = None;
            let (_, counted) = period_since(shared, &control.baseline, now, now, now, true);
            control.baseline = counted;
            control.period_start = now;
            control.measure_start = now;
            shared.measuring_since.fetch_add(1, Release);
        }
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
                    control.measure_start,
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
        if now.duration_since(live_base.at) >= LIVE_WINDOW {
            last_second = Some(interval_sample(w, shared, start, now, &mut live_base));
        }
        let (_, total) = sum_counts(shared);
        observer.tick(now.duration_since(start), &total, last_second.as_ref());
    }
    control
}

/// How much of the run the live line's rates and latency cover.
const LIVE_WINDOW: Duration = Duration::from_secs(1);

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

impl IntervalBase {
    /// Nothing counted yet, at the start of the run.
    fn starting(start: Instant) -> IntervalBase {
        IntervalBase {
            counts: CountSnapshot::default(),
            histogram: vec![0u64; SB_BUCKETS],
            at: start,
        }
    }
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

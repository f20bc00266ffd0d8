//! The summarising steps from a run's figures to a [`RunResult`], shared by
//! every producer: measured runs ([`measured_result`]), the simulator and
//! durability checks (each through [`RunResult::new`] and these helpers), so
//! a measured and a predicted result are made the same way.

use crate::result::{
    Environment, IntervalSample, LatencyKey, LatencySummary, Percentile, Rates, ResultKind,
    RunResult, Warning,
};
use crate::run::histograms::LatencyKind;
use crate::run::runner::{IntervalStats, RunOutcome};
use crate::spec::RunSpec;
use hdrhistogram::Histogram;

/// Summarise one HDR histogram (nanoseconds) at `percentiles`; an empty one
/// gives zeros at each asked percentile.
pub fn summarize(h: &Histogram<u64>, percentiles: &[f64]) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary {
            percentiles: percentiles
                .iter()
                .map(|&p| Percentile { p, ms: 0.0 })
                .collect(),
            ..LatencySummary::default()
        };
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    // One walk over the buckets gives the histogram; the mean and the
    // deviation are folds over it, where `Histogram::mean` and `stdev`
    // would walk the buckets three more times (the deviation through the
    // mean again). Same formulas in the same order as theirs (hdrhistogram
    // 7.6), each bucket at its median equivalent (the same for any value
    // in the bucket, so for its highest one), so the same figures to the
    // bit: the tests check it against both.
    let total = h.len() as f64;
    let histogram: Vec<(u64, u64)> = h
        .iter_recorded()
        .map(|v| {
            (
                h.highest_equivalent(v.value_iterated_to()),
                v.count_at_value(),
            )
        })
        .collect();
    let median = |highest: u64| h.median_equivalent(highest) as f64;
    let mean = histogram.iter().fold(0.0_f64, |sum, &(highest, count)| {
        sum + median(highest) * count as f64 / total
    });
    let deviations = histogram.iter().fold(0.0_f64, |sum, &(highest, count)| {
        let dev = median(highest) - mean;
        sum + (dev * dev) * count as f64
    });
    let mut summary = LatencySummary {
        count: h.len(),
        min_ms: ms(h.min()),
        mean_ms: mean / 1e6,
        max_ms: ms(h.max()),
        stddev_ms: (deviations / total).sqrt() / 1e6,
        sum_ms: mean * total / 1e6,
        percentiles: percentiles
            .iter()
            .map(|&p| Percentile {
                p,
                ms: ms(h.value_at_percentile(p)),
            })
            .collect(),
        histogram,
    };
    clamp_percentiles(&mut summary);
    summary
}

/// The exact event figures kept by counters beside the histograms (the
/// histograms' buckets round): what sysbench's report prints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ExactEvents {
    pub count: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u64,
}

impl LatencySummary {
    /// This summary with the count, min, max, sum and mean of `exact` (the
    /// mean in whole nanoseconds, as sysbench computes its avg), its
    /// percentiles kept within the exact min and max.
    pub(crate) fn with_exact(mut self, exact: ExactEvents) -> LatencySummary {
        self.count = exact.count;
        self.min_ms = exact.min_ns as f64 / 1e6;
        self.max_ms = exact.max_ns as f64 / 1e6;
        self.sum_ms = exact.sum_ns as f64 / 1e6;
        self.mean_ms = exact.sum_ns.checked_div(exact.count).unwrap_or(0) as f64 / 1e6;
        clamp_percentiles(&mut self);
        self
    }
}

/// `v` brought within `[lo, hi]`; unlike `f64::clamp` it never panics (an
/// empty range, `lo > hi`, leaves `v` at `hi`).
pub fn within(v: f64, lo: f64, hi: f64) -> f64 {
    v.max(lo).min(hi)
}

/// Keep a summary's percentiles within its min and max. HDR buckets report a
/// bucket's highest equivalent value, which can lie above the exact maximum
/// kept by the event counters (on a one-event run, p50 came out above max).
pub fn clamp_percentiles(l: &mut LatencySummary) {
    if l.count == 0 {
        return;
    }
    for p in &mut l.percentiles {
        p.ms = within(p.ms, l.min_ms, l.max_ms);
    }
}

/// A `--report-interval` sample as a result records it.
pub(crate) fn interval_sample(i: &IntervalStats) -> IntervalSample {
    let r = Rates::of(&i.delta.as_counts(), i.seconds);
    IntervalSample {
        t_s: i.elapsed_s,
        reads_per_s: r.reads_per_s,
        writes_per_s: r.writes_per_s,
        fsyncs_per_s: r.fsyncs_per_s,
        read_mib_per_s: r.read_mib_per_s,
        written_mib_per_s: r.written_mib_per_s,
        latency_ms: i.latency_ms,
        latency_percentile: f64::from(i.percentile),
    }
}

/// The result of a measured run of `w`.
pub(crate) fn measured_result(
    w: &RunSpec,
    outcome: &RunOutcome,
    started_at: String,
    environment: Environment,
    warnings: Vec<Warning>,
) -> RunResult {
    let p = &outcome.period;
    let c = &p.counts;
    let pcts = &w.percentiles;
    // The event summary keeps sysbench's exact min/avg/max/sum (ns counters), with
    // HDR percentiles and histogram. Like sysbench's, it is the response time
    // with --rate (the counters count queueing then too, see runner.rs).
    let event = summarize(
        if w.rate > 0 {
            outcome.histograms.get(LatencyKind::Response)
        } else {
            outcome.histograms.get(LatencyKind::Event)
        },
        pcts,
    )
    .with_exact(ExactEvents {
        count: c.events,
        min_ns: p.min_ns,
        max_ns: p.max_ns,
        sum_ns: c.latency_sum_ns,
    });
    let mut r = RunResult::new(ResultKind::Measured, w.summary(outcome.engine))
        .with_started_at(started_at)
        .with_interrupted(outcome.interrupted)
        .with_figures(c.as_counts(), p.total_time_s, p.seconds)
        .with_latency(LatencyKey::Event, event)
        .with_latency(
            LatencyKey::Read,
            summarize(outcome.histograms.get(LatencyKind::Read), pcts),
        )
        .with_latency(
            LatencyKey::Write,
            summarize(outcome.histograms.get(LatencyKind::Write), pcts),
        )
        .with_latency(
            LatencyKey::Fsync,
            summarize(&outcome.histograms.all_fsyncs(), pcts),
        )
        .with_threads(
            p.threads
                .iter()
                .map(|&(events, busy_ns)| (events, busy_ns as f64 / 1e9)),
        )
        .with_environment(environment)
        .with_warnings(warnings);
    if w.rate > 0 {
        r = r.with_latency(
            LatencyKey::EventService,
            summarize(outcome.histograms.get(LatencyKind::Event), pcts),
        );
    }
    r.intervals = outcome.intervals.iter().map(interval_sample).collect();
    r
}

// Exact comparisons: the values compared are copies or exact ratios of small
// integers.
#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::result::{Counts, SCHEMA_VERSION, TOOL_VERSION};
    use crate::spec::Mode;

    fn hdr(values_ns: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1000, 3_600_000_000_000, 3).unwrap();
        for &v in values_ns {
            h.record(v).unwrap();
        }
        h
    }

    /// What the simulator and durability build: a result from parts.
    #[test]
    fn a_result_from_parts_has_the_schema_tool_and_figures() {
        let workload = RunSpec::builder()
            .mode(Mode::RndWr)
            .build()
            .unwrap()
            .summary("simulated");
        let counts = Counts {
            events: 10,
            writes: 8,
            fsyncs: 2,
            bytes_written: 8 * 16384,
            ..Counts::default()
        };
        let r = RunResult::new(ResultKind::Predicted, workload.clone())
            .with_label("layout", "2xraidz2")
            .with_figures(counts, 2.5, 2.0)
            .with_threads([(10, 0.5)])
            .with_latency(
                LatencyKey::Event,
                summarize(&hdr(&[1_000_000, 3_000_000]), &[50.0]).with_exact(ExactEvents {
                    count: 2,
                    min_ns: 1_000_000,
                    max_ns: 3_000_000,
                    sum_ns: 4_000_001,
                }),
            );
        assert_eq!(r.schema_version, SCHEMA_VERSION);
        assert_eq!(
            (r.tool.name.as_str(), r.tool.version.as_str()),
            ("tankbench", TOOL_VERSION)
        );
        assert_eq!(r.kind, ResultKind::Predicted);
        assert_eq!(r.workload, workload);
        assert_eq!(r.started_at.len(), 20, "{}", r.started_at);
        assert_eq!(r.labels["layout"], "2xraidz2");
        assert_eq!((r.total_time_s, r.counts), (2.5, counts));
        // Rates over the rate period, not the total time.
        assert_eq!(r.rates.writes_per_s, 4.0);
        assert_eq!(r.rates.fsyncs_per_s, 1.0);
        assert_eq!(r.threads[0].events, 10);
        let e = &r.latency[&LatencyKey::Event];
        assert_eq!((e.count, e.min_ms, e.max_ms), (2, 1.0, 3.0));
        assert_eq!(e.mean_ms, 2.0, "whole nanoseconds, as sysbench's avg");
        assert_eq!(e.sum_ms, 4.000001);
        assert!(e.percentiles.iter().all(|p| p.ms >= 1.0 && p.ms <= 3.0));
        // The JSON document reads back as the same result.
        let back: RunResult = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn the_one_walk_summary_is_the_histograms_own_mean_and_deviation_to_the_bit() {
        let mut h = crate::run::histograms::new_hdr();
        for k in 1..30_000u64 {
            // Three modes and a tail, so the buckets span many octaves.
            let v = match k % 7 {
                0..=2 => 30_000 + 17 * k,
                3..=5 => 4_000_000 + 311 * k,
                _ => 1_000 + k * k * 3,
            };
            h.record(v).unwrap();
        }
        let s = summarize(&h, &[50.0, 95.0]);
        assert_eq!(s.mean_ms.to_bits(), (h.mean() / 1e6).to_bits());
        assert_eq!(s.stddev_ms.to_bits(), (h.stdev() / 1e6).to_bits());
        assert_eq!(
            s.sum_ms.to_bits(),
            (h.mean() * h.len() as f64 / 1e6).to_bits()
        );
        let buckets: Vec<(u64, u64)> = h
            .iter_recorded()
            .map(|v| {
                (
                    h.highest_equivalent(v.value_iterated_to()),
                    v.count_at_value(),
                )
            })
            .collect();
        assert_eq!(s.histogram, buckets);
    }

    #[test]
    fn an_empty_histogram_summarises_to_zeros_at_each_percentile() {
        let s = summarize(&hdr(&[]), &[50.0, 99.0]);
        assert_eq!(s.count, 0);
        assert_eq!(s.percentiles.len(), 2);
        assert!(s.percentiles.iter().all(|p| p.ms == 0.0));
        let s = summarize(&hdr(&[2_000_000]), &[50.0]);
        assert_eq!(s.count, 1);
        assert!(s.percentiles[0].ms <= s.max_ms, "kept within the max");
    }
}

//! A run's figures in the formats other tools read, beside the JSON document
//! ([`crate::result::RunResult`]): `--csv=FILE` ([`csv`]: one row per run,
//! appended), `--intervals=FILE` ([`intervals`]: one JSON object per line per
//! report interval, written while the run goes) and `--openmetrics=FILE`
//! ([`openmetrics`]: Prometheus' text format, for node_exporter's textfile
//! collector). docs/exports.md describes each file.
//!
//! This crate formats and checks; the binary publishes the CSV and OpenMetrics
//! files after a run, with the labels the result store would give the run
//! (they are worked out in a crate that depends on this one). The intervals
//! stream is written here, by the front end, while the run goes on.

pub mod csv;
pub mod intervals;
pub mod openmetrics;

/// A number as the exports write it: the shortest text that reads back as the
/// same `f64` (Rust's `Display`, which never uses an exponent), or `None` for
/// NaN and the infinities, which CSV has no spelling for.
pub(crate) fn finite_number(v: f64) -> Option<String> {
    v.is_finite().then(|| v.to_string())
}

/// The period the result's rates are taken over, seconds: the whole run, or
/// the time since the last `--report-checkpoints` report (sysbench's rule).
/// A result records the rates, not that period, but each rate is a count over
/// it, so a count and its rate give it back. A run that did no I/O at all has
/// no events either; its total time stands in.
pub(crate) fn rate_period_s(r: &crate::result::RunResult) -> f64 {
    let c = &r.counts;
    let rates = &r.rates;
    [
        (c.reads, rates.reads_per_s),
        (c.writes, rates.writes_per_s),
        (c.fsyncs, rates.fsyncs_per_s),
    ]
    .into_iter()
    .find(|&(n, rate)| n > 0 && rate > 0.0)
    .map_or(r.total_time_s, |(n, rate)| n as f64 / rate)
}

/// Events per second over [`rate_period_s`], like the other rates (sysbench's
/// fileio report has no events/s line; this is its events over the same
/// period as its reads/s).
pub(crate) fn events_per_s(r: &crate::result::RunResult) -> f64 {
    let t = rate_period_s(r);
    if t > 0.0 {
        r.counts.events as f64 / t
    } else {
        0.0
    }
}

/// The measured result every export's tests start from: an rndrw run with
/// sysbench's defaults on psync, no figures yet.
#[cfg(test)]
pub(crate) fn test_result() -> crate::result::RunResult {
    let w = crate::spec::RunSpec::builder()
        .mode(crate::spec::Mode::RndRw)
        .build()
        .expect("a run")
        .summary("psync");
    crate::result::RunResult::new(crate::result::ResultKind::Measured, w)
}

#[cfg(test)]
// Exact comparisons: ratios of small integers that binary floating point holds exactly.
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::result::{Counts, RunResult};

    fn result(counts: Counts, total_time_s: f64, rate_seconds: f64) -> RunResult {
        test_result().with_figures(counts, total_time_s, rate_seconds)
    }

    #[test]
    fn events_per_second_use_the_period_of_the_other_rates() {
        let c = Counts {
            events: 300,
            reads: 200,
            writes: 100,
            ..Counts::default()
        };
        // No checkpoints: the rates are over the total time.
        let r = result(c, 4.0, 4.0);
        assert_eq!(rate_period_s(&r), 4.0);
        assert_eq!(events_per_s(&r), 75.0);
        // After a checkpoint at 6 s of a 10 s run the rates cover the last 4 s.
        let r = result(c, 10.0, 4.0);
        assert_eq!(events_per_s(&r), 75.0);
        // Only writes: their rate gives the period.
        let c = Counts {
            events: 10,
            writes: 10,
            ..Counts::default()
        };
        assert_eq!(events_per_s(&result(c, 2.0, 2.0)), 5.0);
        // Nothing done: zero, not a division by zero.
        assert_eq!(events_per_s(&result(Counts::default(), 0.0, 0.0)), 0.0);
    }

    #[test]
    fn only_finite_numbers_are_written() {
        assert_eq!(finite_number(0.25).as_deref(), Some("0.25"));
        assert_eq!(finite_number(1e-7).as_deref(), Some("0.0000001"));
        assert_eq!(finite_number(f64::NAN), None);
        assert_eq!(finite_number(f64::INFINITY), None);
    }
}

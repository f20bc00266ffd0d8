//! Stopping a `--time` run when its throughput is known: the method of batch
//! means over the completed fileio events. A prediction is of a steady
//! state, so once the mean rate is pinned down to 1 % (95 % confidence),
//! simulating the rest of `--time` only costs host time; the result's counts
//! are then the converged rate times the time asked, and its notes say so
//! (`predicted_converged`).
//!
//! The batches start after a warm-up, are of equal simulated width and are
//! kept between [`MIN_BATCHES`] and twice that many: when the slots are
//! full, neighbours merge and the width doubles, so the batches grow with
//! the run until they are long enough to be nearly independent (a txg cycle
//! makes short batches of a write workload correlated; the lag-1
//! correlation test refuses to stop on those).

use crate::notes::SimNote;
use fileio::result::{Counts, Warning};

use crate::limits::Budget;
use crate::queue::Nanos;

/// How a prediction runs: its budget of events, whether a `--time` run may
/// stop once its throughput is known (`simulate --no-early-stop` turns that
/// off), and how well it must be known: the 95 % relative half-width of the
/// mean rate ([`RELATIVE_HALF_WIDTH`] for a prediction,
/// [`SAMPLE_HALF_WIDTH`] for an interval's samples).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunOptions {
    pub budget: Budget,
    pub early_stop: bool,
    pub half_width: f64,
    /// Count only from the end of the first txg sync, after at most this
    /// many events of warm-up (`simulate --count-after-first-sync`, and
    /// every `plan` prediction): before the first sync nothing competes
    /// with a write workload's writes, so a short run that counted from the
    /// start would report a faster phase than the steady state. A workload
    /// that writes then counts `--events` and at least one txg timeout of
    /// simulated time (its rate moves by ±10 % over seconds, so a count
    /// shorter than that reports one phase). A run that
    /// warms up does not also stop early (the batch means have a warm-up
    /// of their own, in simulated time).
    pub warmup_events: Option<u64>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            budget: Budget::default(),
            early_stop: true,
            half_width: RELATIVE_HALF_WIDTH,
            warmup_events: None,
        }
    }
}

impl RunOptions {
    /// The options of an interval's sample: the same budget and switch, and
    /// the sample's looser stopping rule ([`SAMPLE_HALF_WIDTH`]).
    pub fn for_sample(&self) -> RunOptions {
        RunOptions {
            half_width: SAMPLE_HALF_WIDTH.max(self.half_width),
            ..*self
        }
    }
}

/// `n` scaled by `factor`, rounded.
pub(crate) fn scale(n: u64, factor: f64) -> u64 {
    // A full-length run keeps its exact counts.
    #[allow(clippy::float_cmp)]
    if factor == 1.0 {
        return n;
    }
    // Counts of a run within the limits: far below 2^53.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let scaled = (n as f64 * factor).round() as u64;
    scaled
}

/// A converged run's counts over the time asked: its rates times `--time`.
pub(crate) fn scale_counts(c: Counts, factor: f64) -> Counts {
    Counts {
        events: scale(c.events, factor),
        reads: scale(c.reads, factor),
        writes: scale(c.writes, factor),
        fsyncs: scale(c.fsyncs, factor),
        bytes_read: scale(c.bytes_read, factor),
        bytes_written: scale(c.bytes_written, factor),
    }
}

/// The note of a run that stopped at `at` (its last event completing at
/// `end`) of the `asked` seconds. It names the prediction's rule: an
/// interval's samples stop at a looser one, but only their figures are
/// kept, never their notes.
pub(crate) fn note(at: Nanos, end: Nanos, asked: u64) -> Warning {
    SimNote::Converged.warning(
        format!(
            "converged after {:.1} simulated s of {asked} (throughput known within {:.0} % at 95 %, batch means); the counts are the rates times {asked} s",
            end.max(at) as f64 / 1e9,
            RELATIVE_HALF_WIDTH * 100.0
        ),
        "the figures are rates of the steady state; --no-early-stop simulates every second of --time".into(),
    )
}

/// Batches the test needs at least (and half the slots kept).
pub(crate) const MIN_BATCHES: usize = 20;
const SLOTS: usize = 2 * MIN_BATCHES;

/// The stopping rule: relative half-width of the 95 % interval of the mean
/// rate.
pub const RELATIVE_HALF_WIDTH: f64 = 0.01;

/// The stopping rule of an interval's sample (crate::uncertainty). A
/// sample's own simulation error (sd about half this, 2.5 %) adds in
/// quadrature to the spread the parameter ranges make: against the 10–29 %
/// below and 11–17 % above of the reference matrix's intervals of writes/s
/// (docs/model-reference.md, "Intervals and early stopping") it
/// widens them by well under 1 % of their width, less than the percentiles
/// of 16 samples move between draws. At 1 % a sample of a system whose throughput swings
/// for seconds (the reference NAS with its log device) runs the whole
/// `--time`; at 5 % it stops within a few txg cycles.
pub const SAMPLE_HALF_WIDTH: f64 = 0.05;

/// Batch means whose lag-1 correlation is above this are taken as not yet
/// independent: the batches must grow before the interval means anything.
const MAX_LAG1: f64 = 0.3;

/// First batch width: short enough that a fast run fills its slots within a
/// simulated second, doubling as the run goes on.
const FIRST_WIDTH_NS: Nanos = 25_000_000;

/// Simulated time before a run may stop, whatever its batches say: two txg
/// cycles after the warm-up, so that the write throttle and the syncs the
/// ZIL competes with are in the figures, and never under 10 s.
pub(crate) fn minimum_ns(warmup_ns: Nanos, txg_timeout_ns: Nanos) -> Nanos {
    (warmup_ns + 2 * txg_timeout_ns).max(10_000_000_000)
}

/// The warm-up left out of the batches: the first txg cycle (cold ARC,
/// empty dirty data), at most a tenth of the run.
pub(crate) fn warmup_ns(run_ns: Nanos, txg_timeout_ns: Nanos) -> Nanos {
    txg_timeout_ns.min(run_ns / 10)
}

/// Batch means of completions over simulated time.
#[derive(Debug, Clone)]
pub(crate) struct BatchMeans {
    /// The stopping rule's relative half-width.
    half_width: f64,
    warmup_ns: Nanos,
    minimum_ns: Nanos,
    width_ns: Nanos,
    /// Start of the batch being filled.
    start_ns: Nanos,
    filling: u64,
    closed: Vec<u64>,
}

impl BatchMeans {
    pub fn new(warmup_ns: Nanos, minimum_ns: Nanos) -> BatchMeans {
        BatchMeans {
            half_width: RELATIVE_HALF_WIDTH,
            warmup_ns,
            minimum_ns,
            width_ns: FIRST_WIDTH_NS,
            start_ns: warmup_ns,
            filling: 0,
            closed: Vec::with_capacity(SLOTS),
        }
    }

    /// The same batches, stopping at a relative half-width of `half_width`.
    pub fn within(self, half_width: f64) -> BatchMeans {
        BatchMeans { half_width, ..self }
    }

    /// One event completed at `now`. True when the run's rate is known
    /// (checked each time a batch closes).
    pub fn complete(&mut self, now: Nanos) -> bool {
        if now < self.warmup_ns {
            return false;
        }
        let mut closed_one = false;
        while now >= self.start_ns + self.width_ns {
            self.closed.push(self.filling);
            self.filling = 0;
            self.start_ns += self.width_ns;
            closed_one = true;
            if self.closed.len() == SLOTS {
                self.merge();
            }
        }
        self.filling += 1;
        closed_one && now >= self.minimum_ns && self.converged()
    }

    /// Neighbouring batches merge; the batch being filled keeps its start
    /// and grows to the new width.
    fn merge(&mut self) {
        let merged: Vec<u64> = self.closed.chunks(2).map(|c| c.iter().sum()).collect();
        self.closed = merged;
        // SLOTS is even, so the open batch starts on a boundary of the
        // doubled width too and keeps what it has counted.
        self.width_ns *= 2;
    }

    /// The mean rate's 95 % relative half-width and lag-1 correlation of
    /// the closed batches (None below [`MIN_BATCHES`] or with no events).
    pub(crate) fn relative_half_width(&self) -> Option<(f64, f64)> {
        let n = self.closed.len();
        if n < MIN_BATCHES {
            return None;
        }
        let xs: Vec<f64> = self.closed.iter().map(|&c| c as f64).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        if mean <= 0.0 {
            return None;
        }
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let half = student_t_975(n - 1) * (var / n as f64).sqrt();
        let lag1 = if var > 0.0 {
            xs.windows(2)
                .map(|w| (w[0] - mean) * (w[1] - mean))
                .sum::<f64>()
                / ((n - 1) as f64 * var)
        } else {
            0.0
        };
        Some((half / mean, lag1))
    }

    fn converged(&self) -> bool {
        self.relative_half_width()
            .is_some_and(|(rel, lag1)| rel <= self.half_width && lag1 <= MAX_LAG1)
    }
}

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (the
/// table values from 19 to 39, the normal's beyond).
fn student_t_975(df: usize) -> f64 {
    match df {
        0..=19 => 2.093,
        20..=24 => 2.064,
        25..=29 => 2.045,
        30..=39 => 2.023,
        _ => 1.96,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_stream_converges_and_a_short_one_does_not() {
        // 1000 events a second, evenly spaced: every batch the same.
        let mut b = BatchMeans::new(1_000_000_000, minimum_ns(1_000_000_000, 5_000_000_000));
        let mut stopped = None;
        for i in 0..100_000u64 {
            let now = i * 1_000_000;
            if b.complete(now) {
                stopped = Some(now);
                break;
            }
        }
        let at = stopped.expect("a constant rate converges");
        assert!(at >= 11_000_000_000, "not before the minimum: {at}");
        assert!(at < 12_000_000_000, "soon after it: {at}");
    }

    #[test]
    fn alternating_bursts_do_not_pass_as_independent() {
        // 2 s on at 1000/s, 2 s off: short batches are correlated, so the
        // rule waits for the batches to span the cycle.
        let mut b = BatchMeans::new(0, minimum_ns(0, 5_000_000_000));
        let mut now = 0u64;
        let mut stop = None;
        while now < 400_000_000_000 {
            if (now / 2_000_000_000).is_multiple_of(2) && b.complete(now) {
                stop = Some(now);
                break;
            }
            now += 1_000_000;
        }
        if let Some(at) = stop {
            assert!(
                b.width_ns >= 2_000_000_000,
                "stopped at {at} with batches of {} ns",
                b.width_ns
            );
        }
    }
}

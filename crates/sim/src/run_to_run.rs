//! How far a second run of one configuration lands from the first: the
//! spread a prediction of the baseline's own configuration carries.
//!
//! An anchored prediction (crate::baseline) of a configuration the model
//! sees as the baseline's own (the same system and workload, or a change
//! the model does not tell apart) is the measured figure itself. A user who
//! measured it again would not get that figure: sync-write runs move from
//! run to run (txg syncs fall at other moments, a disk's heads are
//! elsewhere, the machine is busy with something else). Printing the
//! measurement as a point claims a certainty no measurement has.
//!
//! The spread is data: `crates/sim/data/run-to-run.toml` holds figures of
//! one configuration measured in separate sessions (the lab's pair cells,
//! each run on a freshly built lab, on the day each was measured). Each
//! repeat scores `|ln(second / first)|`; the 80 % two-sided half-width is
//! the ⌈(n + 1) · 0.8⌉-th smallest score (split-conformal, as
//! crate::structural), so a re-measurement lands within `exp(±h)` of the
//! first with probability at least 80 % under exchangeability. The
//! published rows are not used: they are what the intervals are checked on.

use std::sync::OnceLock;

use serde::Deserialize;

/// One configuration measured twice.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    /// The configuration and the figure.
    pub what: String,
    pub first: f64,
    pub second: f64,
    /// Where both figures are recorded.
    pub source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DataFile {
    repeat: Vec<Repeat>,
}

const DATA: &str = include_str!("../data/run-to-run.toml");

/// The two-sided coverage of the spread.
const COVERAGE: f64 = 0.8;

/// The run-to-run spread in force.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunToRun {
    /// Natural-log half-width: a re-measurement lands in `exp(±h)` of the
    /// first in 80 % of repeats.
    pub half_width: f64,
    /// Repeats it was scored on.
    pub repeats: usize,
}

impl RunToRun {
    /// The spread of the repeats shipped with this build.
    pub fn current() -> RunToRun {
        static PARSED: OnceLock<RunToRun> = OnceLock::new();
        *PARSED.get_or_init(|| {
            let file: DataFile = toml::from_str(DATA)
                .unwrap_or_else(|e| panic!("crates/sim/data/run-to-run.toml: {e}"));
            RunToRun::of(&file.repeat)
                .unwrap_or_else(|e| panic!("crates/sim/data/run-to-run.toml: {e}"))
        })
    }

    /// The conformal half-width of `repeats`.
    pub fn of(repeats: &[Repeat]) -> Result<RunToRun, String> {
        let mut scores = Vec::with_capacity(repeats.len());
        for r in repeats {
            if !(r.first > 0.0 && r.second > 0.0 && r.first.is_finite() && r.second.is_finite()) {
                return Err(format!("{}: figures must be finite and above 0", r.what));
            }
            scores.push((r.second / r.first).ln().abs());
        }
        scores.sort_by(f64::total_cmp);
        let n = scores.len();
        // ⌈(n + 1) · 0.8⌉, at most n: a count of a few dozen repeats.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let rank = (((n + 1) as f64 * COVERAGE).ceil() as usize).min(n);
        if rank == 0 {
            return Err("no repeats".into());
        }
        Ok(RunToRun {
            half_width: scores[rank - 1],
            repeats: n,
        })
    }

    /// The interval of a re-measurement of `measured`.
    pub fn around(&self, measured: f64) -> (f64, f64) {
        (
            measured * (-self.half_width).exp(),
            measured * self.half_width.exp(),
        )
    }

    /// How the spread reads in a prediction's method line.
    pub fn describe(&self) -> String {
        format!(
            "the baseline's own configuration: the measurement, within x{:.2} either way (the run-to-run spread of {} lab cells measured in separate sessions)",
            self.half_width.exp(),
            self.repeats
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeat(first: f64, second: f64) -> Repeat {
        Repeat {
            what: "x".into(),
            first,
            second,
            source: "test".into(),
        }
    }

    #[test]
    fn the_half_width_is_the_conformal_rank_of_the_scores() {
        // Scores ln 1.1, ln 1.2, ..., ln 1.9 (either direction): n = 9, rank
        // ⌈10 · 0.8⌉ = 8, ln 1.8.
        let repeats: Vec<Repeat> = (1..=9)
            .map(|k| {
                let r = 1.0 + f64::from(k) / 10.0;
                if k % 2 == 0 {
                    repeat(100.0, 100.0 * r)
                } else {
                    repeat(100.0 * r, 100.0)
                }
            })
            .collect();
        let s = RunToRun::of(&repeats).unwrap();
        assert!((s.half_width - 1.8_f64.ln()).abs() < 1e-12, "{s:?}");
        let (lo, hi) = s.around(180.0);
        assert!((lo - 100.0).abs() < 1e-9 && (hi - 324.0).abs() < 1e-9);
    }

    #[test]
    fn the_shipped_repeats_give_a_spread() {
        let s = RunToRun::current();
        assert!(s.repeats >= 8, "{s:?}");
        assert!(s.half_width > 0.0 && s.half_width < 1.0, "{s:?}");
    }

    #[test]
    fn a_figure_of_zero_is_refused() {
        assert!(RunToRun::of(&[repeat(0.0, 1.0)]).is_err());
        assert!(RunToRun::of(&[]).is_err());
    }
}

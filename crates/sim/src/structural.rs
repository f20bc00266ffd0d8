//! The model's structural error: how far real systems land outside the
//! interval the parameters' ranges alone give. Sampling the parameters
//! (crate::uncertainty) says what the figures would be if the model's
//! equations were right and only its inputs unknown; published measurements
//! show they are not always right (the fast sync path is under-predicted),
//! so an 80 % interval from the parameters alone holds far fewer than 80 %
//! of real figures on systems the model has not seen.
//!
//! The term is a split-conformal one, in the form of conformalized quantile
//! regression (Romano, Patterson, Candès, "Conformalized Quantile
//! Regression", NeurIPS 2019), on log figures and with each side scored on
//! its own: for each published case with measured figure y and parameter
//! interval [L, H] (both as rates: a latency is turned into its reciprocal),
//! the scores are `ln(L / y)` (how far below the interval it fell) and
//! `ln(y / H)` (how far above). Each side's widening is the
//! ⌈(n + 1)(1 − α/2)⌉-th smallest of its n scores with α = 0.2, never below
//! zero (the interval never narrows below the parameters' spread). Under
//! exchangeability of the published cases and a new system, the widened
//! interval then holds the new figure with probability at least 80 %.
//!
//! The two widenings are data, not code: `crates/sim/data/structural-error.toml`,
//! written by `scripts/validate-published --cross-validate --write-record`
//! from every published case, and read here. The script checks the method
//! out of sample: it leaves one source out at a time and widens that
//! source's intervals by the terms the other sources give
//! (docs/validation.md).

use std::sync::OnceLock;

use serde::Deserialize;

/// The widenings in force, as the data file gives them.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StructuralError {
    /// Natural-log widening below the parameters' interval of a rate
    /// (above it for a latency).
    pub below: f64,
    /// Natural-log widening above the parameters' interval of a rate
    /// (below it for a latency).
    pub above: f64,
    /// Published cases the widenings were scored on.
    pub cases: usize,
    /// Sources (compare groups or single sources) among them.
    pub sources: usize,
}

/// What the data file holds: the widenings under `[structural_error]`, so
/// that the file can say where it came from beside them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DataFile {
    generated_by: String,
    structural_error: StructuralError,
}

const DATA: &str = include_str!("../data/structural-error.toml");

/// A figure's direction: a rate is higher on a faster system, a latency
/// lower, so a rate's "below" is a latency's "above".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Rate,
    Latency,
}

impl Direction {
    /// A result figure's direction by its name (`writes_per_s`,
    /// `event_mean_ms`, `latency.write.p95_ms`...): the latencies end in
    /// `_ms`.
    pub fn of_figure(name: &str) -> Direction {
        if name.ends_with("_ms") {
            Direction::Latency
        } else {
            Direction::Rate
        }
    }
}

impl StructuralError {
    /// The widenings shipped with this build.
    pub fn current() -> StructuralError {
        static PARSED: OnceLock<StructuralError> = OnceLock::new();
        *PARSED.get_or_init(|| {
            let file: DataFile = toml::from_str(DATA)
                .unwrap_or_else(|e| panic!("crates/sim/data/structural-error.toml: {e}"));
            debug_assert!(!file.generated_by.is_empty());
            file.structural_error
        })
    }

    /// `[low, high]` (the parameters' interval of a figure going
    /// `direction`) widened by the structural error.
    pub fn widen(&self, low: f64, high: f64, direction: Direction) -> (f64, f64) {
        let (down, up) = match direction {
            Direction::Rate => (self.below, self.above),
            Direction::Latency => (self.above, self.below),
        };
        (low * (-down).exp(), high * up.exp())
    }

    /// How the widening reads in a prediction's method line.
    pub fn describe(&self) -> String {
        format!(
            "widened by the model's structural error (split-conformal on {} published cases from {} sources: rates x{:.2} down, x{:.2} up)",
            self.cases,
            self.sources,
            self.below.exp(),
            self.above.exp()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_widenings_are_finite_and_never_narrow() {
        let s = StructuralError::current();
        assert!(s.below.is_finite() && s.below >= 0.0, "{s:?}");
        assert!(s.above.is_finite() && s.above >= 0.0, "{s:?}");
        assert!(
            s.cases >= 10 && s.sources >= 5 && s.sources <= s.cases,
            "{s:?}"
        );
    }

    #[test]
    fn a_rate_widens_down_by_below_and_a_latency_by_above() {
        let s = StructuralError {
            below: 1.25_f64.ln(),
            above: 2.0_f64.ln(),
            cases: 20,
            sources: 10,
        };
        let (lo, hi) = s.widen(100.0, 200.0, Direction::Rate);
        assert!(
            (lo - 80.0).abs() < 1e-9 && (hi - 400.0).abs() < 1e-9,
            "{lo} {hi}"
        );
        // A latency is a reciprocal rate: a system faster than the model
        // (a rate above) has a latency below.
        let (lo, hi) = s.widen(1.0, 2.0, Direction::Latency);
        assert!(
            (lo - 0.5).abs() < 1e-9 && (hi - 2.5).abs() < 1e-9,
            "{lo} {hi}"
        );
    }
}

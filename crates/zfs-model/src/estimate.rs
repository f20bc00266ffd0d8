//! A figure with its spread. Every performance and risk figure of the model is a
//! range, because the inputs (disk seek times, network round trips, how
//! fragmented a pool is) are ranges; one number would claim a precision the
//! model does not have.

use serde::Serialize;

/// `low` ≤ `typical` ≤ `high` in the figure's own unit. "Low" is the smaller
/// number, which is the better one for latencies and the worse one for rates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Estimate {
    pub low: f64,
    pub typical: f64,
    pub high: f64,
}

impl Estimate {
    pub const fn new(low: f64, typical: f64, high: f64) -> Self {
        Estimate { low, typical, high }
    }

    /// A value with no spread of its own (a user-supplied measurement).
    pub const fn exact(value: f64) -> Self {
        Estimate::new(value, value, value)
    }

    /// Apply `f` to each bound and re-sort, so a decreasing function (such as
    /// 1/x, turning a latency into a rate) still yields low ≤ typical ≤ high.
    pub fn map(self, f: impl Fn(f64) -> f64) -> Self {
        let mut values = [f(self.low), f(self.typical), f(self.high)];
        values.sort_by(|a, b| a.total_cmp(b));
        Estimate::new(values[0], values[1], values[2])
    }

    /// Combine two independent figures bound by bound (both grow together).
    pub fn zip(self, other: Estimate, f: impl Fn(f64, f64) -> f64) -> Self {
        Estimate::new(
            f(self.low, other.low),
            f(self.typical, other.typical),
            f(self.high, other.high),
        )
        .sorted()
    }

    pub fn scale(self, factor: f64) -> Self {
        self.map(|v| v * factor)
    }

    pub fn plus(self, other: Estimate) -> Self {
        self.zip(other, |a, b| a + b)
    }

    fn sorted(self) -> Self {
        let mut values = [self.low, self.typical, self.high];
        values.sort_by(|a, b| a.total_cmp(b));
        Estimate::new(values[0], values[1], values[2])
    }
}

//! The notes a prediction carries (in its result's `warnings`, beside the
//! measured run's), as a type: the simulator makes them by kind, and a
//! caller asks a result's warning which kind it is instead of matching its
//! code as text (as fileio's `RunWarning` is to a measured run).

use fileio::result::Warning;

/// What a prediction's note says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimNote {
    /// How busy each resource was, txg syncs and throttled writes.
    Utilisation,
    /// The run stopped at its event budget before `--time`.
    BudgetReached,
    /// The run was counted from the end of its warm-up.
    AfterWarmup,
    /// A warm-up was asked for and never ended.
    WarmupUnfinished,
    /// The run stopped once its throughput was known (early stop).
    Converged,
    /// One resource was saturated.
    Saturation,
}

impl SimNote {
    pub const ALL: [SimNote; 6] = [
        SimNote::Utilisation,
        SimNote::BudgetReached,
        SimNote::AfterWarmup,
        SimNote::WarmupUnfinished,
        SimNote::Converged,
        SimNote::Saturation,
    ];

    /// The code in a result's JSON.
    pub fn code(self) -> &'static str {
        match self {
            SimNote::Utilisation => "predicted_utilisation",
            SimNote::BudgetReached => "predicted_budget_reached",
            SimNote::AfterWarmup => "predicted_after_warmup",
            SimNote::WarmupUnfinished => "predicted_warmup_unfinished",
            SimNote::Converged => "predicted_converged",
            SimNote::Saturation => "predicted_saturation",
        }
    }

    /// The kind of a result's warning, if the simulator made it.
    pub fn of(w: &Warning) -> Option<SimNote> {
        SimNote::ALL.into_iter().find(|n| n.code() == w.code)
    }

    /// Whether it says how the run was cut or counted (printed on stderr
    /// beside the report, not only in its notes).
    pub fn is_about_the_run_length(self) -> bool {
        matches!(
            self,
            SimNote::BudgetReached
                | SimNote::Converged
                | SimNote::AfterWarmup
                | SimNote::WarmupUnfinished
        )
    }

    /// The note as a result's warning.
    pub(crate) fn warning(self, message: String, hint: String) -> Warning {
        Warning {
            code: self.code().into(),
            message,
            hint,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_read_back() {
        for n in SimNote::ALL {
            let w = n.warning("m".into(), "h".into());
            assert_eq!(SimNote::of(&w), Some(n));
        }
        let other = Warning {
            code: "page_cache_reads".into(),
            message: String::new(),
            hint: String::new(),
        };
        assert_eq!(SimNote::of(&other), None);
    }
}

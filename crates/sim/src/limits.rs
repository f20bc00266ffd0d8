//! What the simulator takes on, checked before anything is simulated or
//! allocated: threads, simulated time, simulated events, matrix cells. Each
//! refusal is one line naming the option and the accepted values; the event
//! budget is the one limit with an override, because it is a cost (host
//! time), not a modelling bound. Documented in docs/prediction.md, "Limits".

use fileio::options::RunSpec;

/// Most simulated threads (fileio workers) in one run. Each is a closed-loop
/// worker of the simulation; past a few thousand the prediction is of a
/// queue no ZFS box serves, and the state grows with the count.
pub(crate) const MAX_THREADS: u32 = 4096;

/// Most simulated seconds (`--time`) in one run: one day. A prediction is
/// of the steady state, which a run reaches within a few txg syncs; a
/// longer run only costs host time.
pub(crate) const MAX_SECONDS: u64 = 86_400;

/// Fileio events one run simulates at most unless told otherwise
/// (`--max-sim-events`): about 20 to 100 s of host time in a release build.
/// A `--time` run reaching it stops there and says so in its notes.
pub(crate) const DEFAULT_RUN_EVENTS: u64 = 100_000_000;

/// Fileio events a whole matrix simulates at most unless told otherwise,
/// shared out evenly over its cells.
pub const DEFAULT_MATRIX_EVENTS: u64 = 1_000_000_000;

/// Cells a matrix may have unless told otherwise (`--max-cells`).
pub const DEFAULT_MAX_CELLS: u64 = 10_000;

/// Fileio events completed at one simulated instant after which simulated
/// time is taken not to advance (every request on the path costs 0 ns).
/// At most [`MAX_THREADS`] workers start together, so a real system never
/// comes near it.
pub(crate) const STALLED_EVENTS: u64 = 100_000;

/// Blocks (or records) one cache map of the simulation models at most: the
/// ARC's and the client page cache's maps take about 8 bytes each per block,
/// so both at this bound stay near 0.5 GiB. 32 Mi blocks is a 128 GiB file
/// set at 4 KiB, or 16 GiB at 512 B.
pub(crate) const MAX_MODELLED_BLOCKS: u64 = 1 << 25;

/// Why a workload or a matrix is not simulated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LimitError {
    #[error("--threads={threads}: the simulator models at most {max} threads; accepted: 1 to {max}", max = MAX_THREADS)]
    Threads { threads: u32 },
    #[error("--time={seconds}: the simulator predicts at most {max} simulated seconds (a day; the steady state comes within a minute); accepted: 1 to {max}, or 0 with --events", max = MAX_SECONDS)]
    Time { seconds: u64 },
    #[error("--events={events}: above the simulation budget of {budget} events {scope}; lower --events, or raise the budget with --max-sim-events")]
    Events {
        events: u64,
        budget: u64,
        scope: &'static str,
    },
    #[error("--max-sim-events={0}: accepted: a count of events from 1 up")]
    ZeroBudget(u64),
    #[error("the matrix has {cells} cells (the product of its axes' lengths), above the limit of {max}; remove axis values, or raise the limit with --max-cells")]
    Cells { cells: String, max: u64 },
}

/// How many fileio events a run may simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub events: u64,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            events: DEFAULT_RUN_EVENTS,
        }
    }
}

impl Budget {
    /// A budget of `events` (`--max-sim-events`), refused at 0.
    pub fn of(events: u64) -> Result<Budget, LimitError> {
        if events == 0 {
            return Err(LimitError::ZeroBudget(events));
        }
        Ok(Budget { events })
    }

    /// Each cell's share of a matrix budget of `total` events over `cells`
    /// cells (at least one event), no more than a run's default.
    pub fn per_cell(total: u64, cells: usize) -> Budget {
        let cells = u64::try_from(cells.max(1)).unwrap_or(u64::MAX);
        Budget {
            events: (total / cells).max(1),
        }
    }
}

/// Check `spec` against the simulator's bounds and `budget`, before any
/// state is allocated. `cells` is how many runs share the budget (1 for a
/// single run; a matrix's cells each have their share), for the message.
pub fn check_workload(spec: &RunSpec, budget: Budget, cells: u64) -> Result<(), LimitError> {
    if spec.threads > MAX_THREADS {
        return Err(LimitError::Threads {
            threads: spec.threads,
        });
    }
    if spec.time_s > MAX_SECONDS {
        return Err(LimitError::Time {
            seconds: spec.time_s,
        });
    }
    if spec.events > budget.events {
        return Err(LimitError::Events {
            events: spec.events,
            budget: budget.events,
            scope: if cells > 1 {
                "per cell of the matrix"
            } else {
                "per run"
            },
        });
    }
    Ok(())
}

/// Cells of a matrix whose axes have `lengths` values, refused above `max`
/// before anything is expanded. An overflowing product is named as such.
pub(crate) fn check_cells(
    lengths: impl IntoIterator<Item = usize>,
    max: u64,
) -> Result<u64, LimitError> {
    let mut cells: Option<u64> = Some(1);
    for n in lengths {
        cells = cells.and_then(|c| c.checked_mul(u64::try_from(n).ok()?));
    }
    match cells {
        Some(c) if c <= max => Ok(c),
        Some(c) => Err(LimitError::Cells {
            cells: c.to_string(),
            max,
        }),
        None => Err(LimitError::Cells {
            cells: "more than 2^64".into(),
            max,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_counted_before_expansion_and_overflow_is_named() {
        assert_eq!(check_cells([3, 2, 2], 12), Ok(12));
        assert_eq!(check_cells([], 1), Ok(1));
        let e = check_cells([100, 100, 24], 10_000).unwrap_err();
        assert!(
            e.to_string().starts_with("the matrix has 240000 cells"),
            "{e}"
        );
        let e = check_cells([usize::MAX, usize::MAX, 2], 10_000).unwrap_err();
        assert!(e.to_string().contains("more than 2^64"), "{e}");
    }

    #[test]
    fn a_matrix_budget_is_shared_out() {
        assert_eq!(Budget::per_cell(1000, 10).events, 100);
        assert_eq!(Budget::per_cell(5, 10).events, 1);
        assert_eq!(
            Budget::per_cell(DEFAULT_MATRIX_EVENTS, 1).events,
            DEFAULT_MATRIX_EVENTS
        );
        assert!(Budget::of(0).is_err());
    }
}

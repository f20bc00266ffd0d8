//! Measure A, predict B from it, measure B (issue 36): over the finished
//! cells of one or more lab matrices, every ordered pair of cells that
//! differ in one thing (a label of the lab: layout, log device, link,
//! access; or the workload's thread count, across matrices whose workloads
//! are otherwise the same) is a what-if. B is predicted from A's
//! measurement (`sim::baseline`: A's measured figure times the simulated
//! change, with A's and B's systems as `lab predict` describes lab cells)
//! and outright (the simulator alone), and both are set beside B's
//! measurement. The figure is the writes/s of the pair's workload.

use std::collections::BTreeMap;

use fileio::result::RunResult;
use report::table::{Cell, Table};
use sim::baseline::Baseline;
use sim::matrix::{CellRuns, MatrixCell};

use crate::experiments::matrix::{CellResult, Matrix};
use crate::experiments::predict::{run_spec, system_for, BuiltMeasurements, Host};
use crate::parts::net::LinkMeasurement;
use crate::spec::LabSpec;
use crate::LabError;
use fileio::zfs_facts::WritePathMeasurement;

/// The labels that name a lab, not what it is: never the change of a pair.
const NAME_LABELS: [&str; 1] = ["lab"];

/// The label a pair's thread count goes under.
const THREADS: &str = "threads";

/// How the pairs are predicted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairsOptions {
    /// Samples of each relative prediction's interval (None: points).
    pub intervals: Option<usize>,
    /// Simulations run at once.
    pub parallel: usize,
    /// Parameters fitted to A's measurement alone (`simulate calibrate`)
    /// before B is predicted from it, the fit applied to both: what the
    /// model cannot know about the box (zfs-fuse's CPU per request) is
    /// taken from the one run a user has. Empty: none.
    pub fit: Vec<sim::profile::Param>,
    /// Of a matrix measured in several rounds, this round's cells alone
    /// (None: each cell the median of its rounds, A as B).
    pub round: Option<u32>,
}

/// One finished cell: what it is and what it measured.
struct Measured {
    labels: BTreeMap<String, String>,
    spec: fileio::spec::RunSpec,
    /// The lab of its median round (of its one round, or the round asked).
    built: BuiltLab,
    /// Its system with its own lab's measurements: the outright prediction.
    system: sim::SystemModel,
    /// Its rounds as one baseline: each figure their median.
    baseline: Baseline,
    /// How many rounds it was measured in.
    rounds: usize,
}

/// A cell's lab and what it measured of itself when it was built.
struct BuiltLab {
    lab: LabSpec,
    link: Option<LinkMeasurement>,
    write_path: Option<WritePathMeasurement>,
    host: Host,
}

impl BuiltLab {
    /// The system of lab `b` as predicted from this one: `b` with what this
    /// lab measured (its pool's write path, and its link when `b` has the
    /// same one), never `b`'s own measurements: a user who asks what-if has
    /// measured A only.
    fn system_of(&self, b: &LabSpec) -> Result<sim::SystemModel, LabError> {
        let measured = BuiltMeasurements {
            link: self.link.as_ref().filter(|_| self.lab.link == b.link),
            write_path: self.write_path.as_ref(),
        };
        system_for(b, measured, self.host)
    }
}

/// One what-if: B predicted from A's measurement and outright, beside B's
/// measurement (writes/s).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Pair {
    /// The one label that differs, with A's and B's values.
    pub changed: String,
    pub from: String,
    pub to: String,
    /// A's labels (B's are A's with the change).
    pub baseline: BTreeMap<String, String>,
    pub measured_baseline: f64,
    pub measured: f64,
    /// Rounds A's and B's figures are the median of (1: one run each).
    pub baseline_rounds: usize,
    pub measured_rounds: usize,
    /// From A's measurement: the point and its interval.
    pub relative: f64,
    pub relative_low: Option<f64>,
    pub relative_high: Option<f64>,
    /// The simulator alone, on B's own lab: B's description with what B's
    /// lab measured of itself when it was built (its write probe, its
    /// link), as `lab predict` takes a cell.
    pub absolute: f64,
    /// The simulator alone, on what the prediction from A has: B's
    /// description with what A's lab measured (the system the change is
    /// simulated on). A user who asks what-if has measured A only, so this
    /// is the outright prediction with the same information.
    pub absolute_from_a_lab: f64,
    /// A's write probe (`lab up`): its time of a buffered write, us, by
    /// which the simulator scales zfs-fuse's costs in every prediction
    /// from A (None: A's lab did not measure it).
    pub baseline_write_path_us: Option<f64>,
}

impl Pair {
    /// predicted / measured − 1 of the prediction from A.
    pub fn relative_error(&self) -> f64 {
        self.relative / self.measured - 1.0
    }

    /// predicted / measured − 1 of the outright prediction on B's own lab.
    pub fn absolute_error(&self) -> f64 {
        self.absolute / self.measured - 1.0
    }

    /// predicted / measured − 1 of the outright prediction on A's lab.
    pub fn absolute_from_a_lab_error(&self) -> f64 {
        self.absolute_from_a_lab / self.measured - 1.0
    }

    /// Whether B's measurement is inside the relative prediction's interval.
    pub fn inside(&self) -> Option<bool> {
        Some(self.relative_low? <= self.measured && self.measured <= self.relative_high?)
    }
}

/// The finished cells of `matrices`, each with its lab system.
fn measured_cells(matrices: &[Matrix], round: Option<u32>) -> Result<Vec<Measured>, LabError> {
    let mut out = Vec::new();
    for m in matrices {
        let spec = run_spec(&m.workload)?;
        for cell in m.cells()? {
            let lab = cell.raw.validate()?;
            // Its finished rounds (each with an outcome), or the one asked.
            let kept = m.finished_rounds(&cell)?;
            let finished: Vec<(&CellResult, &RunResult)> = kept
                .iter()
                .filter(|c| round.is_none_or(|r| c.round == r))
                .filter_map(|c| Some((c, &c.outcome.as_ref()?.result)))
                .collect();
            if finished.is_empty() {
                continue;
            }
            let results: Vec<&RunResult> = finished.iter().map(|(_, r)| *r).collect();
            let median = finished[sim::baseline::median_run(&results)].0;
            let runs = finished
                .iter()
                .map(|(c, r)| Baseline::new(format!("round {}", c.round), (*r).clone()))
                .collect::<Result<Vec<_>, _>>()
                .and_then(Baseline::median_of)
                .map_err(|e| LabError::Spec(format!("pairs: {e}")))?;
            let host = Host::of_result(&runs.measured);
            let system = system_for(&lab, BuiltMeasurements::of_cell(Some(median)), host)?;
            let mut labels = lab.labels();
            for name in NAME_LABELS {
                labels.remove(name);
            }
            labels.insert(THREADS.into(), spec.threads.to_string());
            out.push(Measured {
                labels,
                spec: spec.clone(),
                built: BuiltLab {
                    lab,
                    link: median.link.clone(),
                    write_path: median.write_path,
                    host,
                },
                system,
                rounds: finished.len(),
                baseline: runs,
            });
        }
    }
    Ok(out)
}

/// A round asked for is one the matrices have.
fn check_round(matrices: &[Matrix], round: Option<u32>) -> Result<(), LabError> {
    let most = matrices.iter().map(|m| m.rounds).max().unwrap_or(1);
    match round {
        Some(r) if r > most => Err(LabError::Spec(format!(
            "pairs: --round {r}: the matrices are measured in {most} round(s); accepted: 1 to {most}"
        ))),
        _ => Ok(()),
    }
}

/// The one label in which `a` and `b` differ, if exactly one does.
fn one_change(
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
) -> Option<(String, String, String)> {
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let mut changes = keys.into_iter().filter(|k| a.get(*k) != b.get(*k));
    let k = changes.next()?;
    if changes.next().is_some() {
        return None;
    }
    let value = |m: &BTreeMap<String, String>| m.get(k).cloned().unwrap_or_else(|| "-".into());
    Some((k.clone(), value(a), value(b)))
}

/// Every pair of finished cells of `matrices` that differ in one thing,
/// each predicted from its baseline and outright.
pub fn pairs(matrices: &[Matrix], options: &PairsOptions) -> Result<Vec<Pair>, LabError> {
    check_round(matrices, options.round)?;
    let cells = measured_cells(matrices, options.round)?;
    let runs = CellRuns {
        parallel: options.parallel,
        events: sim::limits::DEFAULT_MATRIX_EVENTS,
        early_stop: false,
        warmup_events: None,
        intervals: options.intervals,
        progress: None,
    };
    // The outright figure is a point, as the simulator alone gives it.
    let points = CellRuns {
        intervals: None,
        progress: None,
        ..runs
    };
    // Each baseline's fit, once.
    let profiles = cells
        .iter()
        .map(|a| fitted_on(a, &options.fit))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::new();
    // Each cell's outright figure without a fitted profile, once: it does
    // not depend on the baseline then.
    let mut unfitted_outright: Vec<Option<f64>> = vec![None; cells.len()];
    for (a, profile) in cells.iter().zip(&profiles) {
        for (b_index, b) in cells.iter().enumerate() {
            crate::parts::sys::check_interrupted()?;
            let Some((changed, from, to)) = one_change(&a.labels, &b.labels) else {
                continue;
            };
            let baseline = &a.baseline;
            // Workloads that differ in more than the thread count are no pair.
            if baseline.check_workload(&b.spec).is_err() {
                continue;
            }
            let cell = |system: &sim::SystemModel| -> Result<MatrixCell, LabError> {
                let mut system = system.clone();
                if let Some(p) = profile {
                    sim::profile::apply_profile(&mut system, p)
                        .map_err(|e| LabError::Spec(format!("pairs: profile: {e}")))?;
                }
                Ok(MatrixCell {
                    choices: Vec::new(),
                    system,
                    profile: profile.clone(),
                })
            };
            let anchored = sim::baseline::predict::predict(
                baseline,
                &cell(&a.system)?,
                &b.spec,
                &[cell(&a.built.system_of(&b.built.lab)?)?],
                &runs,
            )
            .map_err(|e| LabError::Spec(format!("pairs: {e}")))?;
            let (Some(r), Some(simulated_b)) =
                (anchored.results.first(), anchored.simulated.first())
            else {
                continue;
            };
            // Outright: B's own lab as `lab predict` takes it.
            let known = profile
                .is_none()
                .then(|| unfitted_outright[b_index])
                .flatten();
            let outright = match known {
                Some(writes) => writes,
                None => {
                    let runs = sim::matrix::run_cells_with(&b.spec, &[cell(&b.system)?], &points)
                        .map_err(|e| LabError::Spec(format!("pairs: {e}")))?;
                    let Some(result) = runs.first() else {
                        continue;
                    };
                    let writes = result.rates.writes_per_s;
                    if profile.is_none() {
                        unfitted_outright[b_index] = Some(writes);
                    }
                    writes
                }
            };
            let interval = r
                .prediction
                .as_ref()
                .and_then(|p| p.figures.get("writes_per_s"));
            out.push(Pair {
                changed,
                from,
                to,
                baseline: a.labels.clone(),
                measured_baseline: a.baseline.measured.rates.writes_per_s,
                measured: b.baseline.measured.rates.writes_per_s,
                baseline_rounds: a.rounds,
                measured_rounds: b.rounds,
                relative: r.rates.writes_per_s,
                relative_low: interval.map(|i| i.low),
                relative_high: interval.map(|i| i.high),
                absolute: outright,
                absolute_from_a_lab: simulated_b.rates.writes_per_s,
                baseline_write_path_us: a.built.write_path.map(|w| w.request_us()),
            });
        }
    }
    Ok(out)
}

/// `params` fitted to `a`'s measurement alone, as a profile (None when
/// nothing is to be fitted).
fn fitted_on(
    a: &Measured,
    params: &[sim::profile::Param],
) -> Result<Option<sim::profile::Profile>, LabError> {
    if params.is_empty() {
        return Ok(None);
    }
    let refuse = |e: sim::SimError| LabError::Spec(format!("pairs: fit on A: {e}"));
    let m = sim::calibrate::Measurement::from_result("A", &a.baseline.measured).map_err(refuse)?;
    let c = sim::calibrate::calibrate_with_probe(&a.system, None, &[m], params).map_err(refuse)?;
    Ok(Some(c.profile()))
}

/// How far from the other baselines' a baseline's write probe may be
/// before the table says so: the lab's cells of one matrix run probe within
/// about ×1.25 of each other (36-50 us on 2026-12-07); one probe that met a
/// burst of the host's other work measured ×2.5 (108 us against 41-44) and
/// halved its predictions with a log device (docs/what-if.md section 6).
const PROBE_OUTLIER: f64 = 1.3;

/// A note for each baseline whose write probe is more than
/// [`PROBE_OUTLIER`] times off the median of all baselines' probes (each
/// baseline counted once): every prediction from it carries that factor.
fn probe_outliers(pairs: &[Pair]) -> Vec<String> {
    let probes: BTreeMap<&BTreeMap<String, String>, f64> = pairs
        .iter()
        .filter_map(|p| {
            let us = p.baseline_write_path_us?;
            (us.is_finite() && us > 0.0).then_some((&p.baseline, us))
        })
        .collect();
    if probes.len() < 3 {
        return Vec::new();
    }
    let mut sorted: Vec<f64> = probes.values().copied().collect();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    probes
        .iter()
        .filter(|(_, us)| (*us / median).max(median / *us) > PROBE_OUTLIER)
        .map(|(labels, us)| {
            let name = labels_text(labels, None);
            format!(
                "A's write probe off the others': {name} probed {us:.0} us a write against a median of {median:.0} us over the {} baselines; every prediction from it scales zfs-fuse's costs by that (measure the cell again: remove its result from the matrix's cells and run the matrix)",
                probes.len()
            )
        })
        .collect()
}

/// `labels` as `key=value` words, leaving out `except`.
fn labels_text(labels: &BTreeMap<String, String>, except: Option<&str>) -> String {
    labels
        .iter()
        .filter(|(k, _)| Some(k.as_str()) != except)
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Share of `pairs` for which `test` holds, as "n of N (p %)".
fn share(pairs: &[Pair], test: impl Fn(&Pair) -> bool) -> String {
    let n = pairs.iter().filter(|p| test(p)).count();
    format!(
        "{n} of {} ({:.0} %)",
        pairs.len(),
        100.0 * n as f64 / pairs.len().max(1) as f64
    )
}

/// The pairs as one table: the change, the baseline, B measured, B from A
/// (with its interval) and outright, with their errors side by side; the
/// notes count the pairs within ±15 % and those where the prediction from
/// A is the closer one.
pub fn pairs_table(workload: &[String], pairs: &[Pair]) -> Table {
    let mut t = Table::new(&[
        ("change", false),
        ("baseline (A)", false),
        ("A writes/s", true),
        ("B measured", true),
        ("B from A", true),
        ("error", true),
        ("outright, A's lab", true),
        ("error ", true),
        ("outright, B's lab", true),
        ("error  ", true),
    ]);
    for p in pairs {
        let baseline = labels_text(&p.baseline, Some(&p.changed));
        t.rows.push(vec![
            Cell::Text(format!("{}: {} -> {}", p.changed, p.from, p.to)),
            Cell::Text(baseline),
            Cell::Num(Some(p.measured_baseline)),
            Cell::Num(Some(p.measured)),
            Cell::Range(Some(p.relative), p.relative_low.zip(p.relative_high)),
            Cell::Percent(Some(p.relative_error())),
            Cell::Num(Some(p.absolute_from_a_lab)),
            Cell::Percent(Some(p.absolute_from_a_lab_error())),
            Cell::Num(Some(p.absolute)),
            Cell::Percent(Some(p.absolute_error())),
        ]);
    }
    t.notes.push(format!(
        "Measured A, predicted B from A (A's measured writes/s times the simulated change) and outright (the simulator alone), measured B; workload: fileio {} run. Outright on A's lab: B's description with what A's lab measured of itself (its write probe, its link where B's is the same), the information the prediction from A has; on B's lab: with B's own probes, which a user asking what-if has not measured",
        workload.join(" ")
    ));
    // Cells measured in rounds: what the figures are.
    let most = pairs
        .iter()
        .flat_map(|p| [p.baseline_rounds, p.measured_rounds])
        .max()
        .unwrap_or(1);
    if most > 1 {
        let fewest = pairs
            .iter()
            .flat_map(|p| [p.baseline_rounds, p.measured_rounds])
            .min()
            .unwrap_or(1);
        let rounds = if fewest == most {
            most.to_string()
        } else {
            format!("{fewest} to {most}")
        };
        t.notes.push(format!(
            "Each cell's figure is the median of its {rounds} rounds, A's as B's (--round N: one round's cells alone)"
        ));
    }
    if !pairs.is_empty() {
        t.notes.push(format!(
            "From A within ±15 %: {}; outright within ±15 %: {} on A's lab, {} on B's lab; from A closer than outright: {} against A's lab, {} against B's lab",
            share(pairs, |p| p.relative_error().abs() <= 0.15),
            share(pairs, |p| p.absolute_from_a_lab_error().abs() <= 0.15),
            share(pairs, |p| p.absolute_error().abs() <= 0.15),
            share(pairs, |p| p.relative_error().abs()
                < p.absolute_from_a_lab_error().abs()),
            share(pairs, |p| p.relative_error().abs()
                < p.absolute_error().abs())
        ));
        if pairs.iter().any(|p| p.inside().is_some()) {
            t.notes.push(format!(
                "B measured inside the 80 % interval of the prediction from A: {}",
                share(pairs, |p| p.inside() == Some(true))
            ));
        }
        t.notes.extend(probe_outliers(pairs));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn b_from_a_takes_as_measured_only_what_a_measured() {
        let lab = |extra: &str| {
            LabSpec::from_toml(&format!(
                "name = \"t\"\n[pool]\nlayout = \"raidz2-6\"\ndisk = \"hdd\"\n{extra}"
            ))
            .unwrap()
        };
        let host = Host {
            cpus: 2,
            mem_bytes: 16 << 30,
        };
        let a = BuiltLab {
            lab: lab(""),
            link: None,
            // 40 us a write, one at a time.
            write_path: Some(WritePathMeasurement {
                one_thread_writes_per_s: 25_000.0,
                two_threads_writes_per_s: 15_000.0,
            }),
            host,
        };
        let b = lab("log = \"ssd-plp:16GB\"");
        let system = a.built_system(&b);
        assert_eq!(system.server_cpu_ns, 40_000, "A's write path");
        assert_eq!(system.cores, 1);
        assert!(system.log.is_some(), "B's log device");
        // Unmeasured, B would have had the kernel's defaults.
        let unmeasured = BuiltLab {
            write_path: None,
            ..a
        };
        assert_ne!(unmeasured.built_system(&b).server_cpu_ns, 40_000);
    }

    impl BuiltLab {
        fn built_system(&self, b: &LabSpec) -> sim::System {
            self.system_of(b).unwrap().resolve().unwrap()
        }
    }

    /// A pair from the baseline `layout`, whose write probe took `us`.
    fn probed(layout: &str, us: Option<f64>) -> Pair {
        Pair {
            changed: "slog".into(),
            from: "none".into(),
            to: "ssd-sata".into(),
            baseline: labels(&[("layout", layout), ("slog", "none")]),
            measured_baseline: 180.0,
            measured: 3_500.0,
            relative: 3_400.0,
            relative_low: None,
            relative_high: None,
            absolute: 3_600.0,
            absolute_from_a_lab: 3_700.0,
            baseline_write_path_us: us,
            baseline_rounds: 1,
            measured_rounds: 1,
        }
    }

    #[test]
    fn the_table_says_when_figures_are_medians_of_rounds() {
        let one = vec![probed("1xraidz2-6", None)];
        let note = |pairs: &[Pair]| pairs_table(&[], pairs).notes.join("\n");
        assert!(!note(&one).contains("median of its"));
        let three = vec![Pair {
            baseline_rounds: 3,
            measured_rounds: 3,
            ..probed("1xraidz2-6", None)
        }];
        assert!(
            note(&three).contains("median of its 3 rounds"),
            "{}",
            note(&three)
        );
        let mixed = vec![Pair {
            baseline_rounds: 2,
            measured_rounds: 3,
            ..probed("1xraidz2-6", None)
        }];
        assert!(note(&mixed).contains("median of its 2 to 3 rounds"));
    }

    #[test]
    fn closer_than_outright_is_counted_against_both_outright_predictions() {
        // Measured 3,500, from A 3,400 (-2.9 %). One pair: outright on B's
        // lab 3,550 (+1.4 %, closer than from A), on A's lab 3,700 (+5.7 %,
        // further). The other: both outright closer than from A.
        let mut tie = probed("1xraidz2-6", None);
        tie.absolute = 3_550.0;
        let mut far = probed("3xmirror-2", None);
        far.absolute_from_a_lab = 3_450.0;
        far.absolute = 3_480.0;
        let notes = pairs_table(&[], &[tie, far]).notes.join("\n");
        assert!(
            notes.contains("outright within ±15 %: 2 of 2 (100 %) on A's lab, 2 of 2 (100 %) on B's lab")
                && notes.contains(
                    "from A closer than outright: 1 of 2 (50 %) against A's lab, 0 of 2 (0 %) against B's lab"
                ),
            "{notes}"
        );
    }

    #[test]
    fn a_baseline_whose_probe_is_off_the_others_is_named_once() {
        // The probes of 2026-12-07's sixth run: one of 108 us among 41-44.
        let mut pairs = vec![
            probed("1xraidz3-24", Some(44.0)),
            probed("2xraidz2-12", Some(41.0)),
            probed("3xraidz2-8", Some(108.0)),
            probed("3xraidz2-8", Some(108.0)),
            probed("1xraidz3-24", Some(44.0)),
        ];
        let notes = probe_outliers(&pairs);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("layout=3xraidz2-8")
                && notes[0].contains("108 us")
                && notes[0].contains("median of 44 us over the 3 baselines"),
            "{}",
            notes[0]
        );
        assert!(pairs_table(&[], &pairs).notes.contains(&notes[0]));
        // Within the spread of one run's cells (36-50 us): nothing to say.
        pairs[2].baseline_write_path_us = Some(50.0);
        pairs[3].baseline_write_path_us = Some(50.0);
        assert!(probe_outliers(&pairs).is_empty());
        // Unmeasured probes, or too few to have a median, say nothing.
        let few = [
            probed("a", Some(40.0)),
            probed("b", Some(120.0)),
            probed("c", None),
        ];
        assert!(probe_outliers(&few).is_empty());
    }

    #[test]
    fn a_pair_changes_one_thing() {
        let a = labels(&[("layout", "1xraidz2-6"), ("slog", "none"), ("threads", "4")]);
        let b = labels(&[
            ("layout", "1xraidz2-6"),
            ("slog", "ssd-sata"),
            ("threads", "4"),
        ]);
        let c = labels(&[
            ("layout", "3xmirror-2"),
            ("slog", "ssd-sata"),
            ("threads", "4"),
        ]);
        assert_eq!(
            one_change(&a, &b),
            Some(("slog".into(), "none".into(), "ssd-sata".into()))
        );
        assert_eq!(one_change(&a, &c), None, "two changes");
        assert_eq!(one_change(&a, &a), None, "no change");
    }
}

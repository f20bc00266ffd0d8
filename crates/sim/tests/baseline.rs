//! Predictions from a measurement (sim::baseline): the baseline's measured
//! figures times the simulated change, with common random numbers.
//!
//! The "measurement" here is the simulator's own outright prediction of A,
//! marked measured: then anchoring must give back the outright prediction
//! of B, to rounding (the same seed, the same draws, the same stopping
//! rule), whatever B is, and a baseline twice as fast gives figures twice
//! as high.

use fileio::options::RunSpec;
use fileio::result::{ResultKind, RunResult};
use sim::baseline::predict::predict;
use sim::baseline::{Baseline, BaselineError};
use sim::limits::DEFAULT_MAX_CELLS;
use sim::matrix::{CellRuns, MatrixCell, MatrixSpec};
use sim::SimError;
use std::path::PathBuf;

fn words(threads: u32) -> Vec<String> {
    [
        "--file-total-size=64M",
        "--file-test-mode=rndrw",
        "--file-fsync-all",
        "--events=3000",
        "--rand-seed=5",
    ]
    .iter()
    .map(|w| w.to_string())
    .chain([format!("--threads={threads}")])
    .collect()
}

fn spec(threads: u32) -> RunSpec {
    RunSpec::from_words(&words(threads)).unwrap()
}

fn reference_text() -> String {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/systems/reference-nas.toml");
    std::fs::read_to_string(path).unwrap()
}

/// The reference box with the command line's overrides, as cells.
fn cells(axes: &[(&str, Vec<String>)]) -> Vec<MatrixCell> {
    MatrixSpec::from_system_text(&reference_text(), words(4), axes, DEFAULT_MAX_CELLS)
        .unwrap()
        .cells()
        .unwrap()
}

fn runs(intervals: Option<usize>) -> CellRuns<'static> {
    CellRuns {
        intervals,
        ..CellRuns::new(2)
    }
}

/// The simulator's prediction of `cell` at `threads`, run as predict runs
/// A and B (the budget of a table of `share` cells), marked measured.
fn simulated(cell: &MatrixCell, threads: u32, share: usize) -> RunResult {
    let budget = sim::limits::Budget::per_cell(sim::limits::DEFAULT_MATRIX_EVENTS, share);
    let options = sim::RunOptions {
        budget,
        early_stop: false,
        ..sim::RunOptions::default()
    };
    let mut r = sim::Simulation::new(&spec(threads), &cell.system)
        .options(&options)
        .run()
        .unwrap()
        .result;
    r.kind = ResultKind::Measured;
    r
}

#[test]
fn anchored_to_the_model_itself_it_gives_the_model_back() {
    let a = cells(&[("log", vec!["none".into()]), ("link", vec!["2x1G".into()])]).remove(0);
    let what_if = cells(&[
        ("log", vec!["none".into(), "ssd-sata".into()]),
        ("link", vec!["2x1G".into(), "2x10G".into()]),
    ]);
    let measured = simulated(&a, 4, what_if.len() + 1);
    let baseline = Baseline::new("a.json", measured.clone()).unwrap();
    let out = predict(&baseline, &a, &spec(4), &what_if, &runs(None)).unwrap();
    assert_eq!(out.baseline_cell, Some(0), "log=none link=2x1G is A");
    for (cell, r) in what_if.iter().zip(&out.results) {
        let outright = simulated(cell, 4, what_if.len() + 1);
        for (got, want) in [
            (r.rates.writes_per_s, outright.rates.writes_per_s),
            (r.rates.reads_per_s, outright.rates.reads_per_s),
            (r.rates.written_mib_per_s, outright.rates.written_mib_per_s),
        ] {
            assert!(
                (got / want - 1.0).abs() < 1e-9,
                "{}: {got} against {want}",
                cell.choices_text()
            );
        }
        let anchor = r.anchor.as_ref().unwrap();
        assert_eq!(anchor.baseline, "a.json");
        assert_eq!(r.labels["baseline"], "a.json");
        assert_eq!(r.kind, ResultKind::Predicted);
    }
    // The baseline's own cell is the measurement, figure for figure.
    let own = &out.results[0];
    assert!(own.anchor.as_ref().unwrap().is_baseline);
    assert_eq!(own.rates, measured.rates);
    // A log device is the change the model is surest of on this box.
    assert!(out.results[2].rates.writes_per_s > 3.0 * own.rates.writes_per_s);
}

#[test]
fn the_measured_level_carries_over_and_the_interval_is_the_changes() {
    let a = cells(&[("log", vec!["none".into()])]).remove(0);
    let what_if = cells(&[("log", vec!["none".into(), "ssd-sata".into()])]);
    let mut measured = simulated(&a, 4, 3);
    // A box twice as fast as the model says, in every rate.
    let rates = &mut measured.rates;
    for v in [
        &mut rates.reads_per_s,
        &mut rates.writes_per_s,
        &mut rates.fsyncs_per_s,
        &mut rates.read_mib_per_s,
        &mut rates.written_mib_per_s,
    ] {
        *v *= 2.0;
    }
    let model = simulated(&what_if[1], 4, 3);
    let baseline = Baseline::new("fast.json", measured).unwrap();
    // Without samples the change is the one at the typical parameters.
    let typical = predict(&baseline, &a, &spec(4), &what_if, &runs(None)).unwrap();
    let b = &typical.results[1];
    assert!((b.rates.writes_per_s / model.rates.writes_per_s - 2.0).abs() < 1e-9);
    // With samples it is their median, inside their spread.
    let out = predict(&baseline, &a, &spec(4), &what_if, &runs(Some(8))).unwrap();
    let b = &out.results[1];
    let change = b.anchor.as_ref().unwrap().figures["writes_per_s"];
    assert!((b.rates.writes_per_s / (change.measured * change.ratio) - 1.0).abs() < 1e-9);
    let spread = change.ratio_interval.unwrap();
    assert!(
        spread.low < change.ratio && change.ratio < spread.high,
        "{change:?}"
    );
    let p = b.prediction.as_ref().unwrap();
    let w = &p.figures["writes_per_s"];
    assert!(
        w.low <= w.point && w.point <= w.high && w.low < w.high,
        "{w:?}"
    );
    let ratio = b.anchor.as_ref().unwrap().figures["writes_per_s"];
    let i = ratio.ratio_interval.unwrap();
    // The parameters' part is the ratio's interval; the printed one adds
    // the model's structural error around it.
    let parameters_low = w.parameters_low.unwrap();
    assert!((parameters_low / ratio.measured - i.low).abs() < 1e-9);
    assert!(w.low < parameters_low, "{w:?}");
    // At the baseline's own configuration the change is 1 in every sample,
    // and the interval is where a second run of it lands.
    let own = out.results[0].prediction.as_ref().unwrap();
    let o = &own.figures["writes_per_s"];
    assert_eq!(
        (o.parameters_low, o.parameters_high),
        (Some(o.point), Some(o.point))
    );
    assert_eq!(
        (o.low, o.high),
        sim::run_to_run::RunToRun::current().around(o.point)
    );
}

#[test]
fn a_change_the_model_sees_as_none_still_carries_the_structural_error() {
    // Beside a log device the model has these layouts flat for this
    // workload (every sample's ratio 1); the lab measured -11 % to +13 %
    // there. A changed configuration is never printed as the measurement.
    let a = cells(&[
        ("layout", vec!["3xraidz2-8".into()]),
        ("log", vec!["ssd-sata".into()]),
    ])
    .remove(0);
    let what_if = cells(&[
        ("layout", vec!["3xraidz2-8".into(), "2xraidz2-12".into()]),
        ("log", vec!["ssd-sata".into()]),
    ]);
    let measured = simulated(&a, 4, 3);
    let baseline = Baseline::new("a.json", measured).unwrap();
    let out = predict(&baseline, &a, &spec(4), &what_if, &runs(Some(8))).unwrap();
    let own = &out.results[0].prediction.as_ref().unwrap().figures["writes_per_s"];
    assert_eq!(
        (own.low, own.high),
        sim::run_to_run::RunToRun::current().around(own.point),
        "A is its measurement, give or take a second run of it"
    );
    let other = &out.results[1];
    assert!(!other.anchor.as_ref().unwrap().is_baseline);
    let w = &other.prediction.as_ref().unwrap().figures["writes_per_s"];
    // The model's own change is none here...
    assert_eq!(
        (w.parameters_low, w.parameters_high),
        (Some(w.point), Some(w.point)),
        "{w:?}"
    );
    // ...and the printed interval is its structural error around it.
    assert!(w.low < w.point && w.point < w.high, "{w:?}");
}

#[test]
fn another_thread_count_is_predicted_from_the_baseline() {
    let a = cells(&[]).remove(0);
    let measured = simulated(&a, 4, 2);
    let baseline = Baseline::new("a.json", measured).unwrap();
    let out = predict(
        &baseline,
        &a,
        &spec(16),
        std::slice::from_ref(&a),
        &runs(None),
    )
    .unwrap();
    assert_eq!(
        out.baseline_cell, None,
        "16 threads is not the baseline's 4"
    );
    let outright = simulated(&a, 16, 2);
    let r = &out.results[0];
    assert_eq!(r.workload.threads, 16);
    assert_eq!(r.anchor.as_ref().unwrap().baseline_threads, 4);
    assert!((r.rates.writes_per_s / outright.rates.writes_per_s - 1.0).abs() < 1e-9);
}

#[test]
fn a_workload_other_than_the_baselines_is_refused_naming_the_option() {
    let a = cells(&[]).remove(0);
    let baseline = Baseline::new("a.json", simulated(&a, 4, 2)).unwrap();
    let mut other = words(4);
    other.push("--file-block-size=8K".into());
    let asked = RunSpec::from_words(&other).unwrap();
    match predict(&baseline, &a, &asked, std::slice::from_ref(&a), &runs(None)).unwrap_err() {
        SimError::Baseline {
            problem: BaselineError::WorkloadDiffers { field, .. },
            ..
        } => assert_eq!(field.option(), "--file-block-size"),
        e => panic!("{e}"),
    }
}

#[test]
fn a_run_without_zfs_facts_has_no_system() {
    let a = cells(&[]).remove(0);
    let baseline = Baseline::new("a.json", simulated(&a, 4, 2)).unwrap();
    match baseline.system().unwrap_err() {
        SimError::Baseline {
            problem: BaselineError::NoSystem { reason },
            ..
        } => assert!(reason.contains("no ZFS facts"), "{reason}"),
        e => panic!("{e}"),
    }
}

#[test]
fn a_mirrored_log_of_two_unknown_devices_is_never_faster_than_one() {
    // Two consumer SSDs of one class are two devices drawn apart, and a
    // mirror waits for the slower: at the typical parameters both members
    // are the class's typical device and the mirror is one device (change
    // 1); in the samples it is that device or slower, never faster. In
    // about half the samples the second member is the faster one, so the
    // median change stays near 1: the interval, not the point, carries
    // PS-104's mirror measured at 0.61 of PS-105's single member.
    let a = cells(&[("log", vec!["ssd-sata-noplp".into()])]).remove(0);
    let what_if = cells(&[
        ("log", vec!["ssd-sata-noplp".into()]),
        ("log_mirror", vec!["ssd-sata-noplp".into()]),
    ]);
    let measured = simulated(&a, 4, 2);
    let baseline = Baseline::new("single.json", measured.clone()).unwrap();
    let typical = predict(&baseline, &a, &spec(4), &what_if, &runs(None)).unwrap();
    let at_typical = typical.results[0].rates.writes_per_s / measured.rates.writes_per_s;
    assert!((at_typical - 1.0).abs() < 0.02, "{at_typical}");
    let out = predict(&baseline, &a, &spec(4), &what_if, &runs(Some(8))).unwrap();
    let change = out.results[0].anchor.as_ref().unwrap().figures["writes_per_s"];
    let spread = change.ratio_interval.unwrap();
    assert!(change.ratio <= 1.0 + 1e-9, "{change:?}");
    assert!(spread.high <= 1.0 + 1e-9 && spread.low < 0.8, "{change:?}");
}

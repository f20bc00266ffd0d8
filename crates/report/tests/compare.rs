//! `compare`: changes with their confidence intervals, directions and the
//! significance verdicts, in every rendering.

mod common;

use report::compare::{Comparison, Verdict};
use report::select::Selection;
use report::store::StoredRun;

fn selection(name: &str, runs: Vec<fileio::result::RunResult>) -> Selection {
    Selection {
        name: name.into(),
        runs: runs
            .into_iter()
            .enumerate()
            .map(|(i, result)| StoredRun {
                path: format!("/nowhere/{name}-{i}.json").into(),
                id: format!("{name}-{i}"),
                result,
            })
            .collect(),
        skipped: vec![],
    }
}

fn row<'a>(c: &'a Comparison, metric: &str) -> &'a report::compare::CompareRow {
    c.rows
        .iter()
        .find(|r| r.metric == metric)
        .unwrap_or_else(|| panic!("no row {metric}"))
}

#[test]
fn one_sample_each_is_not_tested_and_says_so() {
    let a = selection("a", vec![common::run(&[], 50.0, 20.0, 1)]);
    let b = selection("b", vec![common::run(&[], 55.0, 10.0, 2)]);
    let c = Comparison::new(&a, &b, 0.05);
    let w = row(&c, "write MiB/s");
    assert_eq!(c.verdict(w), Verdict::Untested);
    assert!((w.change.unwrap() + 0.5).abs() < 1e-12, "20 -> 10 is -50%");
    assert!(
        w.difference.is_none() && w.change_interval.is_err(),
        "{w:?}"
    );
    let text = c.table().to_terminal();
    assert!(
        text.contains("One sample each: no significance and no confidence interval"),
        "{text}"
    );
    assert!(
        text.contains("-50.0%  "),
        "no interval beside the change: {text}"
    );
    assert!(!text.contains('…'), "{text}");
    assert!(text.contains("not tested"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&c.to_json()).unwrap();
    let w = json_row(&json, "write MiB/s");
    assert_eq!(w["difference"], -10.0);
    assert!(
        w["ci_low"].is_null() && w["change_ci_high"].is_null(),
        "{w}"
    );
    assert_eq!(w["verdict"], "not_tested");
    assert!(
        w["no_interval"]
            .as_str()
            .unwrap()
            .contains("fewer than 2 runs"),
        "{w}"
    );
}

fn json_row<'a>(doc: &'a serde_json::Value, metric: &str) -> &'a serde_json::Value {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {metric} in {doc}"))
}

fn close(got: &serde_json::Value, want: f64, tol: f64) {
    let got = got
        .as_f64()
        .unwrap_or_else(|| panic!("{got} is not a number"));
    assert!(
        (got - want).abs() <= tol * want.abs(),
        "got {got}, want {want}"
    );
}

/// A: three runs, B: five, reading the MiB/s of the stats unit tests' case, so
/// the reference numbers (SciPy, see src/stats.rs) apply: B − A = −3.86 MiB/s,
/// 95 % CI (−5.324, −2.396); change −3.84 %, Fieller 95 % CI (−5.25 %, −2.41 %).
fn three_against_five() -> Comparison {
    let a = [101.2, 99.8, 100.5];
    let b = [96.1, 97.9, 95.4, 96.8, 97.0];
    let runs = |reads: &[f64], seed: u64| {
        reads
            .iter()
            .zip(seed..)
            .map(|(r, s)| common::run(&[], *r, 20.0, s))
            .collect::<Vec<_>>()
    };
    Comparison::new(
        &selection("a", runs(&a, 0)),
        &selection("b", runs(&b, 10)),
        0.05,
    )
}

#[test]
fn the_change_has_its_confidence_interval_in_every_rendering() {
    let c = three_against_five();
    let read = row(&c, "read MiB/s");
    let d = read.difference.unwrap();
    assert!((d.low + 5.323989498217458).abs() < 1e-8, "{d:?}");
    assert!((d.high + 2.396010501782541).abs() < 1e-8, "{d:?}");
    let ci = read.change_interval.unwrap();
    assert!((ci.low + 0.05250494534588812).abs() < 1e-9, "{ci:?}");
    assert!((ci.high + 0.02406066008406671).abs() < 1e-9, "{ci:?}");
    assert_eq!(c.verdict(read), Verdict::Worse);

    let text = c.table().to_terminal();
    assert!(text.contains("change (95% CI)"), "{text}");
    let line = text.lines().find(|l| l.starts_with("read MiB/s")).unwrap();
    assert!(line.contains("-3.8% (-5.3 … -2.4%)"), "{line}");
    assert!(text.contains("Fieller's method"), "{text}");

    let md = c.table().to_markdown();
    assert!(md.contains("| -3.8% (-5.3 … -2.4%) |"), "{md}");

    let csv = c.table().to_csv();
    let header = csv.lines().next().unwrap();
    assert!(
        header
            .contains("\"change (95% CI) %\",\"change (95% CI) low %\",\"change (95% CI) high %\""),
        "{header}"
    );
    let fields: Vec<&str> = csv
        .lines()
        .find(|l| l.starts_with("\"read MiB/s\""))
        .unwrap()
        .split(',')
        .collect();
    let low: f64 = fields[6].parse().unwrap();
    assert!((low + 5.250494534588812).abs() < 1e-7, "{fields:?}");

    let json: serde_json::Value = serde_json::from_str(&c.to_json()).unwrap();
    assert_eq!(json["kind"], "tankbench compare");
    assert_eq!(json["confidence"], 0.95);
    let r = json_row(&json, "read MiB/s");
    close(&r["difference"], -3.8599999999999994, 1e-12);
    close(&r["ci_low"], -5.323989498217458, 1e-9);
    close(&r["ci_high"], -2.396010501782541, 1e-9);
    close(&r["df"], 5.485681320355838, 1e-10);
    close(&r["change"], -0.03840796019900494, 1e-12);
    close(&r["change_ci_low"], -0.05250494534588812, 1e-9);
    close(&r["change_ci_high"], -0.02406066008406671, 1e-9);
    assert_eq!(r["confidence"], 0.95);
    assert_eq!(
        (&r["method"], &r["change_method"]),
        (&"welch".into(), &"fieller".into())
    );
    assert_eq!(r["verdict"], "worse");
    assert!(r["no_interval"].is_null());
    assert_eq!(r["a"]["n"], 3);
    assert_eq!(r["b"]["n"], 5);
}

#[test]
fn alpha_sets_the_confidence_level() {
    let a = selection(
        "a",
        vec![
            common::run(&[], 101.2, 20.0, 1),
            common::run(&[], 99.8, 20.0, 2),
            common::run(&[], 100.5, 20.0, 3),
        ],
    );
    let b = selection(
        "b",
        [96.1, 97.9, 95.4, 96.8, 97.0]
            .iter()
            .zip(10..)
            .map(|(r, s)| common::run(&[], *r, 20.0, s))
            .collect(),
    );
    let c = Comparison::new(&a, &b, 0.01);
    let text = c.table().to_terminal();
    assert!(text.contains("change (99% CI)"), "{text}");
    // SciPy reference for 99 %: (−5.99 %, −1.63 %).
    let line = text.lines().find(|l| l.starts_with("read MiB/s")).unwrap();
    assert!(line.contains("-3.8% (-6.0 … -1.6%)"), "{line}");
}

#[test]
fn a_baseline_within_the_noise_of_zero_has_no_interval_and_says_why() {
    // fsyncs/s stays 0 +- noise on A in this made-up case: the ratio is unbounded.
    let run = |fsyncs: f64, s: u64| {
        let mut r = common::run(&[], 50.0, 20.0, s);
        r.rates.fsyncs_per_s = fsyncs;
        r
    };
    let a = selection("a", vec![run(0.0, 1), run(1.0, 2), run(0.0, 3)]);
    let b = selection("b", vec![run(40.0, 4), run(42.0, 5), run(41.0, 6)]);
    let c = Comparison::new(&a, &b, 0.05);
    let f = row(&c, "fsyncs/s");
    assert!(
        f.difference.is_some(),
        "the difference still has its interval"
    );
    assert!(f.change_interval.is_err());
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("No interval for fsyncs/s: A's mean is within the noise of 0")),
        "{:?}",
        c.notes
    );
    let json: serde_json::Value = serde_json::from_str(&c.to_json()).unwrap();
    let r = json_row(&json, "fsyncs/s");
    assert!(
        r["change_ci_low"].is_null() && r["ci_low"].is_number(),
        "{r}"
    );
    assert!(r["no_interval"].as_str().unwrap().contains("noise of 0"));
}

#[test]
fn repeats_separate_real_changes_from_noise() {
    let noisy = |base: f64, seeds: std::ops::Range<u64>, jitter: &[f64]| {
        seeds
            .zip(jitter)
            .map(|(s, j)| common::run(&[], base * j, 20.0 * j, s))
            .collect::<Vec<_>>()
    };
    let jitter = [1.0, 1.02, 0.98, 1.01, 0.99];
    // B reads 30% faster: far beyond 2% noise. Writes equal but for the noise.
    let a = selection("a", noisy(50.0, 0..5, &jitter));
    let b = selection("b", noisy(65.0, 10..15, &[0.99, 1.0, 1.02, 0.98, 1.01]));
    let c = Comparison::new(&a, &b, 0.05);

    let read = row(&c, "read MiB/s");
    assert_eq!(c.verdict(read), Verdict::Better);
    let t = read.test.unwrap();
    assert!(t.p < 0.001 && t.t < 0.0, "{t:?}");
    assert_eq!(read.a.n, 5);

    let write = row(&c, "write MiB/s");
    assert_eq!(c.verdict(write), Verdict::WithinNoise, "{:?}", write.test);

    // Latency: lower is better, so B's lower read latency is "better" too.
    let lat = row(&c, "read latency mean ms");
    assert!(lat.b.mean < lat.a.mean);
    assert_eq!(c.verdict(lat), Verdict::Better);

    // The other way round, B is worse.
    let back = Comparison::new(&b, &a, 0.05);
    assert_eq!(back.verdict(row(&back, "read MiB/s")), Verdict::Worse);

    let md = c.table().to_markdown();
    assert!(md.contains("Welch's t-test"), "{md}");
    assert!(md.contains("| read MiB/s |"), "{md}");
}

#[test]
fn uneven_sides_and_mixed_workloads_are_noted() {
    let a = selection(
        "a",
        vec![
            common::run(&[], 50.0, 20.0, 1),
            common::run(&[], 51.0, 21.0, 2),
        ],
    );
    let mut other = common::run(&[], 50.0, 20.0, 3);
    other.workload.mode = fileio::spec::Mode::SeqWr;
    let b = selection("b", vec![other]);
    let c = Comparison::new(&a, &b, 0.05);
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("A has 2 runs, B has 1: no significance and no confidence")),
        "{:?}",
        c.notes
    );
    assert!(
        c.notes.iter().any(|n| n.contains("different workloads")),
        "{:?}",
        c.notes
    );
}

#[test]
fn all_zero_metrics_are_left_out() {
    let mut ra = common::run(&[], 50.0, 20.0, 1);
    let mut rb = common::run(&[], 60.0, 20.0, 2);
    for r in [&mut ra, &mut rb] {
        r.rates.written_mib_per_s = 0.0;
    }
    let c = Comparison::new(&selection("a", vec![ra]), &selection("b", vec![rb]), 0.05);
    assert!(c.rows.iter().all(|r| r.metric != "write MiB/s"));
    assert!(c.rows.iter().any(|r| r.metric == "read MiB/s"));
}

#[test]
fn two_predictions_are_compared_by_their_intervals() {
    use fileio::result::{FigureInterval, PredictionInterval};
    let predicted = |read_mib: f64, low: f64, high: f64, seed: u64| {
        let mut r = common::run(&[], read_mib, 10.0, seed);
        r.kind = fileio::result::ResultKind::Predicted;
        r.prediction = Some(PredictionInterval {
            figures: [(
                "read_mib_per_s".to_string(),
                FigureInterval {
                    point: read_mib,
                    low,
                    high,
                    parameters_low: None,
                    parameters_high: None,
                },
            )]
            .into_iter()
            .collect(),
            confidence: 0.8,
            samples: 8,
            method: "test".into(),
            sensitivity: vec![],
        });
        r
    };
    // Apart: B's interval lies above A's.
    let a = selection("a", vec![predicted(50.0, 45.0, 55.0, 1)]);
    let b = selection("b", vec![predicted(500.0, 400.0, 600.0, 2)]);
    let c = Comparison::new(&a, &b, 0.05);
    assert_eq!(c.verdict(row(&c, "read MiB/s")), Verdict::Better);
    let text = c.table().to_terminal();
    assert!(
        text.contains("Predictions: compared by their intervals"),
        "{text}"
    );
    assert!(!text.contains("One sample each"), "{text}");
    // Overlapping: the models' uncertainty covers the difference.
    let b = selection("b", vec![predicted(58.0, 50.0, 66.0, 2)]);
    let c = Comparison::new(&a, &b, 0.05);
    let r = row(&c, "read MiB/s");
    assert_eq!(c.verdict(r), Verdict::IntervalsOverlap);
    assert!(c.table().to_terminal().contains("intervals overlap"));
    // A figure without an interval stays untested.
    assert_eq!(c.verdict(row(&c, "write MiB/s")), Verdict::Untested);
}

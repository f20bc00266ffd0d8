//! `compare`: changes, directions and the significance verdicts.

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
    let text = c.table().to_terminal();
    assert!(text.contains("One sample each: no significance"), "{text}");
    assert!(text.contains("-50.0%"), "{text}");
    assert!(text.contains("not tested"), "{text}");
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
    other.workload.mode = fileio::options::Mode::SeqWr;
    let b = selection("b", vec![other]);
    let c = Comparison::new(&a, &b, 0.05);
    assert!(
        c.notes.iter().any(|n| n.contains("A has 2 runs, B has 1")),
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

//! The matrix form: axes expanded over a base system, every cell predicted,
//! one table row per cell.

use fileio::options::RunSpec;
use sim::limits::DEFAULT_MAX_CELLS;
use sim::matrix::{results_table, run_cells, run_cells_with, CellRuns, MatrixSpec, FIGURE_COLUMNS};
use std::path::{Path, PathBuf};

fn spec(extra: &[&str]) -> RunSpec {
    let mut words = vec![
        "--file-total-size=64M",
        "--file-test-mode=rndrw",
        "--file-fsync-all",
        "--threads=4",
        "--rand-seed=3",
    ];
    words.extend_from_slice(extra);
    RunSpec::from_words(&words).unwrap_or_else(|e| panic!("{words:?}: {e}"))
}

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/systems")
}

const REFERENCE_AXES: &str = r#"
[[axis]]
key = "layout"
values = ["1xraidz3-24", "2xraidz2-12", "3xraidz2-8"]
[[axis]]
key = "log"
values = ["none", "ssd-sata"]
[[axis]]
key = "link.link"
values = ["2x1G", "2x10G"]
"#;

fn reference_matrix() -> MatrixSpec {
    let text =
        format!("system = \"reference-nas.toml\"\nworkload = [\"--time=2\"]\n{REFERENCE_AXES}");
    MatrixSpec::from_toml(&text, &examples(), DEFAULT_MAX_CELLS).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn axes_expand_first_axis_slowest_over_the_base() {
    let m = reference_matrix();
    let cells = m.cells().unwrap();
    assert_eq!(cells.len(), 12);
    let names: Vec<&str> = cells[0].choices.iter().map(|(k, _)| k.as_str()).collect();
    // A dotted field that has a short name is shown by it.
    assert_eq!(names, ["layout", "log", "link"]);
    let row =
        |i: usize| -> Vec<&str> { cells[i].choices.iter().map(|(_, v)| v.as_str()).collect() };
    assert_eq!(row(0), ["1xraidz3-24", "none", "2x1G"]);
    assert_eq!(row(1), ["1xraidz3-24", "none", "2x10G"]);
    assert_eq!(row(2), ["1xraidz3-24", "ssd-sata", "2x1G"]);
    assert_eq!(row(11), ["3xraidz2-8", "ssd-sata", "2x10G"]);
    // The values land in the system; what no axis sets is the base's.
    assert_eq!(cells[4].system.pool.layout, "2xraidz2-12");
    assert_eq!(cells[4].system.link.link, "2x1G");
    assert_eq!(cells[4].system.name, "reference-nas");
    assert_eq!(cells[4].system.server.ram, "32G");
    // The workload's `run` is the command, not an option.
    assert_eq!(m.workload, ["--time=2"]);
}

#[test]
fn a_bad_value_is_named_with_its_axis_and_the_accepted_values() {
    let bad = |axis: &str, values: &str| -> String {
        let text = format!(
            "system = \"reference-nas.toml\"\nworkload = [\"--time=1\"]\n[[axis]]\nkey = \"{axis}\"\nvalues = {values}\n"
        );
        MatrixSpec::from_toml(&text, &examples(), DEFAULT_MAX_CELLS)
            .unwrap_err()
            .to_string()
    };
    let e = bad("layout", "[\"3xraidz2-8\", \"9xraidz9-3\"]");
    assert!(e.contains("axis layout value '9xraidz9-3'"), "{e}");
    assert!(e.contains("raidz2-WIDTH"), "{e}");
    let e = bad("client", "[\"nfs\"]");
    assert!(
        e.contains("axis client value 'nfs'") && e.contains("esxi-nfs"),
        "{e}"
    );
    let e = bad("log", "[\"ssd-sata\", \"floppy\"]");
    assert!(
        e.contains("axis log value 'floppy'") && e.contains("nvme"),
        "{e}"
    );
    let e = bad("ram", "[]");
    assert!(e.contains("axis ram: values must not be empty"), "{e}");
    let e = bad("server.bogus", "[1]");
    assert!(
        e.contains("axis server.bogus value '1'") && e.contains("bogus"),
        "{e}"
    );
    for e in [e, bad("layout", "[\"x\"]")] {
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

#[test]
fn an_inline_system_and_comma_lists_build_the_same_cells() {
    let system = std::fs::read_to_string(examples().join("reference-nas.toml")).unwrap();
    let from_flags = MatrixSpec::from_system_text(
        &system,
        vec!["--time=2".into()],
        &[
            ("layout", vec!["1xraidz3-24".into(), "3xraidz2-8".into()]),
            ("ram", vec!["8G".into(), "64G".into()]),
        ],
        DEFAULT_MAX_CELLS,
    )
    .unwrap();
    let cells = from_flags.cells().unwrap();
    assert_eq!(cells.len(), 4);
    assert_eq!(cells[3].system.server.ram, "64G");
    assert_eq!(cells[3].system.pool.layout, "3xraidz2-8");
    let inline = "workload = [\"--time=2\"]\n[system]\nname = \"inline\"\n[system.pool]\nlayout = \"2xmirror-2\"\n";
    let m = MatrixSpec::from_toml(inline, Path::new("/nonexistent"), DEFAULT_MAX_CELLS).unwrap();
    let cells = m.cells().unwrap();
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].system.name, "inline");
    assert!(cells[0].choices.is_empty());
}

#[test]
fn cells_run_in_order_with_distinct_labels_whatever_the_thread_count() {
    let m = reference_matrix();
    let cells = m.cells().unwrap();
    let s = spec(&["--time=2"]);
    let one = run_cells(&s, &cells, 1).unwrap();
    let two = run_cells(&s, &cells, 2).unwrap();
    assert_eq!(one.len(), 12);
    for (a, b) in one.iter().zip(&two) {
        assert_eq!(a.counts, b.counts);
        assert_eq!(a.labels, b.labels);
    }
    let mut labels: Vec<_> = one.iter().map(|r| r.labels.clone()).collect();
    labels.sort();
    labels.dedup();
    assert_eq!(labels.len(), 12, "labels identify the cells");
    assert_eq!(one[2].labels["log"], "ssd-sata");
    assert_eq!(one[2].labels["slog"], "yes");
    assert_eq!(one[11].labels["layout"], "3xraidz2-8");
    // Each cell is the prediction of its system on its own.
    let alone = sim::Simulation::new(&s, &cells[7].system)
        .run()
        .unwrap()
        .result;
    assert_eq!(alone.counts, one[7].counts);
}

#[test]
fn the_table_has_a_row_per_cell_with_the_reference_figures() {
    let m = reference_matrix();
    let cells = m.cells().unwrap();
    let results = run_cells(&spec(&["--time=2"]), &cells, 2).unwrap();
    let t = results_table(&m.workload_text(), &cells, &results);
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    let mut want = vec!["layout", "log", "link"];
    want.extend(FIGURE_COLUMNS);
    assert_eq!(names, want);
    assert_eq!(t.rows.len(), 12);
    let text = t.to_terminal();
    assert!(
        text.contains("PREDICTION (simulated, not measured)"),
        "{text}"
    );
    // A log device is the reference user's big win: every SLOG row writes
    // more than the same row without one.
    let writes = |i: usize| match &t.rows[i][4] {
        report::table::Cell::Num(Some(v)) => *v,
        other => panic!("{other:?}"),
    };
    for i in (0..12).step_by(4) {
        assert!(writes(i + 2) > writes(i), "{}", text);
        assert!(writes(i + 3) > writes(i + 1), "{}", text);
    }
    let md = t.to_markdown();
    assert_eq!(md.matches("| 2x10G |").count(), 6, "{md}");
}

fn flush_and_cpu_profile() -> sim::profile::Profile {
    let text = r#"
system = "measured-box"
method = "test"
runs = ["a.json"]

[parameters."commit_device.flush_ms"]
value = 3.5
uncertainty = 0.1

[parameters."server.cpu_us"]
value = 400.0
uncertainty = 5.0
"#;
    sim::profile::Profile::from_toml(text).unwrap_or_else(|e| panic!("{e}"))
}

fn matrix_over(axis: &str, values: &str, profile: Option<sim::profile::Profile>) -> MatrixSpec {
    let text = format!(
        "system = \"reference-nas.toml\"\nworkload = [\"--time=2\"]\n[[axis]]\nkey = \"{axis}\"\nvalues = {values}\n"
    );
    let mut m = MatrixSpec::from_toml(&text, &examples(), DEFAULT_MAX_CELLS)
        .unwrap_or_else(|e| panic!("{e}"));
    m.profile = profile;
    m
}

#[test]
fn a_profile_reaches_every_cell_of_a_matrix() {
    let plain = matrix_over("link", r#"["2x1G", "2x10G"]"#, None)
        .cells()
        .unwrap();
    let calibrated = matrix_over(
        "link",
        r#"["2x1G", "2x10G"]"#,
        Some(flush_and_cpu_profile()),
    )
    .cells()
    .unwrap();
    for (p, c) in plain.iter().zip(&calibrated) {
        let mut expected = p.system.clone();
        sim::profile::apply_profile(&mut expected, &flush_and_cpu_profile()).unwrap();
        assert_ne!(p.system, c.system, "the profile changed nothing");
        assert_eq!(c.system, expected);
    }
}

/// The fitted flush of the commit device in `c`.
fn flush_of(c: &sim::matrix::MatrixCell) -> f64 {
    sim::profile::current_value(&c.system, sim::profile::Param::CommitFlushMs)
        .unwrap()
        .expect("a flash commit device")
}

#[test]
fn a_log_axis_moves_the_fitted_flush_by_the_classes_ratio() {
    // The profile fitted the base's log device (ssd-sata, whose model
    // flushes in 0.1 ms) at 3.5 ms: ×35 its class. The ssd-sata cell is the
    // calibrated system and takes the fit as it is; the nvme cell (a 0.01 ms
    // model) keeps the ×35 on its own class; the server's CPU, which no
    // axis touches, applies to both.
    let values = r#"["ssd-sata", "nvme"]"#;
    let cells = matrix_over("log", values, Some(flush_and_cpu_profile()))
        .cells()
        .unwrap();
    let plain = matrix_over("log", values, None).cells().unwrap();
    let class = |i: usize| flush_of(&plain[i]);
    assert!((flush_of(&cells[0]) - 3.5).abs() < 1e-12);
    let want = 3.5 * class(1) / class(0);
    assert!(
        (flush_of(&cells[1]) - want).abs() < 1e-9,
        "{} vs {want}",
        flush_of(&cells[1])
    );
    assert!(
        flush_of(&cells[1]) < flush_of(&cells[0]),
        "nvme is the faster class"
    );
    for c in &cells {
        let cpu = sim::profile::current_value(&c.system, sim::profile::Param::ServerCpuUs)
            .unwrap()
            .unwrap();
        assert!((cpu - 400.0).abs() < 1e-9, "{}", c.choices_text());
    }
    // A cell whose commit device is a hard disk has no flush to carry to.
    let none = matrix_over("log", r#"["none"]"#, Some(flush_and_cpu_profile()))
        .cells()
        .unwrap();
    let p = none[0].profile.as_ref().unwrap();
    assert!(!p.parameters.contains_key("commit_device.flush_ms"));
}

#[test]
fn a_link_axis_moves_the_fitted_round_trip_by_the_classes_difference() {
    // Fitted on 2x10G (a 0.04 ms class) at 0.1 ms: the hosts add 0.06 ms,
    // which a 2x1G cell (0.15 ms) keeps on top of its own class.
    let profile = sim::profile::Profile::from_toml(
        "system = \"measured-box\"\nmethod = \"test\"\nruns = []\n[parameters.\"link.rtt_ms\"]\nvalue = 0.1\nuncertainty = 0.005\n",
    )
    .unwrap();
    let values = r#"["2x10G", "2x1G"]"#;
    let cells = matrix_over("link", values, Some(profile)).cells().unwrap();
    let plain = matrix_over("link", values, None).cells().unwrap();
    let rtt = |c: &sim::matrix::MatrixCell| {
        sim::profile::current_value(&c.system, sim::profile::Param::RttMs)
            .unwrap()
            .unwrap()
    };
    assert!((rtt(&cells[0]) - 0.1).abs() < 1e-9);
    let want = 0.1 + rtt(&plain[1]) - rtt(&plain[0]);
    assert!((rtt(&cells[1]) - want).abs() < 1e-9, "{}", rtt(&cells[1]));
    assert!(rtt(&cells[1]) > rtt(&cells[0]));
    let carried = &cells[1].profile.as_ref().unwrap().parameters["link.rtt_ms"];
    assert!(carried.carried && !carried.narrows());
    assert!(cells[0].profile.as_ref().unwrap().parameters["link.rtt_ms"].narrows());
}

#[test]
fn the_calibrated_cell_predicts_what_the_profile_predicts_and_another_moves_as_its_class() {
    // A matrix over the base's log and link: the cell with the base's own
    // (ssd-sata, 2x10G) is the calibrated system, and gives the figure
    // `simulate --system reference-nas.toml --profile` gives; a slower link
    // writes less, a faster log device more.
    let text = "system = \"reference-nas.toml\"\nworkload = [\"--time=2\"]\n[[axis]]\nkey = \"log\"\nvalues = [\"ssd-sata\", \"nvme\"]\n[[axis]]\nkey = \"link\"\nvalues = [\"2x10G\", \"2x1G\"]\n";
    let mut m = MatrixSpec::from_toml(text, &examples(), DEFAULT_MAX_CELLS).unwrap();
    let profile = sim::profile::Profile::from_toml(
        "system = \"reference-nas\"\nmethod = \"test\"\nruns = []\n[parameters.\"commit_device.flush_ms\"]\nvalue = 0.3\nuncertainty = 0.01\n[parameters.\"link.rtt_ms\"]\nvalue = 0.09\nuncertainty = 0.005\n[parameters.\"server.cpu_us\"]\nvalue = 30.0\nuncertainty = 1.0\n",
    )
    .unwrap();
    m.profile = Some(profile.clone());
    let cells = m.cells().unwrap();
    let s = RunSpec::from_words(
        &[
            "--file-total-size=64M",
            "--file-test-mode=rndwr",
            "--file-fsync-all",
            "--threads=4",
            "--events=3000",
            "--rand-seed=5",
        ]
        .map(String::from),
    )
    .unwrap();
    let results = run_cells(&s, &cells, 2).unwrap();
    let mut calibrated = sim::SystemModel::from_toml(
        &std::fs::read_to_string(examples().join("reference-nas.toml")).unwrap(),
    )
    .unwrap();
    let notes = sim::profile::apply_profile(&mut calibrated, &profile).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    let alone = sim::Simulation::new(&s, &calibrated).run().unwrap().result;
    let writes = |i: usize| results[i].rates.writes_per_s;
    assert_eq!(cells[0].choices_text(), "log=ssd-sata link=2x10G");
    assert_eq!(cells[0].system, calibrated);
    assert_eq!(writes(0).to_bits(), alone.rates.writes_per_s.to_bits());
    assert_eq!(results[0].counts, alone.counts);
    // log=ssd-sata link=2x1G: a longer round trip.
    assert!(writes(1) < writes(0), "{} vs {}", writes(1), writes(0));
    // log=nvme link=2x10G: a faster flush.
    assert!(writes(2) > writes(0), "{} vs {}", writes(2), writes(0));
}

/// A matrix over the link of the reference NAS with its log device, the
/// first link repeated: a cell twice, and two cells that differ only in the
/// link.
fn link_matrix() -> (RunSpec, Vec<sim::matrix::MatrixCell>) {
    let m = matrix_over("link", r#"["2x1G", "2x10G", "2x1G"]"#, None);
    let cells = m.cells().unwrap();
    assert_eq!(cells.len(), 3);
    // rndwr with an fsync after each write: the log device's commits, which
    // the link's round trip is part of.
    let s = RunSpec::from_words(
        &[
            "--file-total-size=64M",
            "--file-test-mode=rndwr",
            "--file-fsync-all",
            "--threads=4",
            "--time=3",
            "--rand-seed=5",
        ]
        .map(String::from),
    )
    .unwrap();
    (s, cells)
}

fn with_intervals(parallel: usize, samples: Option<usize>) -> CellRuns<'static> {
    CellRuns {
        early_stop: true,
        intervals: samples,
        ..CellRuns::new(parallel)
    }
}

#[test]
fn every_cell_gets_an_interval_from_the_same_samples() {
    let (s, cells) = link_matrix();
    let results = run_cells_with(&s, &cells, &with_intervals(2, Some(8))).unwrap();
    let p = |i: usize| results[i].prediction.as_ref().expect("an interval");
    for (i, r) in results.iter().enumerate() {
        let pr = p(i);
        assert_eq!(pr.samples, 8);
        assert_eq!(pr.figures.len(), FIGURE_COLUMNS.len());
        for (name, f) in &pr.figures {
            assert!(
                f.low <= f.point && f.point <= f.high,
                "cell {i} {name}: {f:?}"
            );
        }
        // The interval's typical value is the cell's own prediction.
        assert_eq!(
            pr.figures["writes_per_s"].point.to_bits(),
            r.rates.writes_per_s.to_bits()
        );
        assert!(!pr.sensitivity.is_empty());
    }
    // The same cell twice: the same samples, so the same interval.
    assert_eq!(p(0), p(2));
    assert_eq!(results[0].counts, results[2].counts);
    // Two cells that differ only in the link: the faster link writes more at
    // the typical values, and with common random numbers its interval is
    // above the slower one's at both ends.
    let (slow, fast) = (p(0).figures["writes_per_s"], p(1).figures["writes_per_s"]);
    assert!(fast.point > slow.point, "{slow:?} {fast:?}");
    assert!(
        fast.low > slow.low && fast.high > slow.high,
        "{slow:?} {fast:?}"
    );
    let (slow, fast) = (p(0).figures["event_mean_ms"], p(1).figures["event_mean_ms"]);
    assert!(fast.point < slow.point, "{slow:?} {fast:?}");
    assert!(
        fast.low < slow.low && fast.high < slow.high,
        "{slow:?} {fast:?}"
    );

    // Deterministic for a seed, whatever the thread count.
    let again = run_cells_with(&s, &cells, &with_intervals(1, Some(8))).unwrap();
    for (a, b) in again.iter().zip(&results) {
        assert_eq!(
            (&a.counts, &a.labels, &a.prediction),
            (&b.counts, &b.labels, &b.prediction)
        );
    }
    // Another seed draws other samples.
    let mut other = s.clone();
    other.rand_seed = 6;
    let moved = run_cells_with(&other, &cells, &with_intervals(2, Some(8))).unwrap();
    assert_ne!(moved[0].prediction, results[0].prediction);
}

#[test]
fn the_table_shows_ranges_and_names_what_to_measure_first() {
    let (s, cells) = link_matrix();
    let workload = vec!["--time=3".to_string()];
    let results = run_cells_with(&s, &cells, &with_intervals(2, Some(6))).unwrap();
    let t = results_table(
        &sim::matrix::fileio_workload_text(&workload),
        &cells,
        &results,
    );
    for row in &t.rows {
        for cell in &row[1..] {
            match cell {
                report::table::Cell::Range(Some(v), Some((low, high))) => {
                    assert!(low <= v && v <= high, "{cell:?}");
                }
                other => panic!("not a range: {other:?}"),
            }
        }
    }
    let text = t.to_terminal();
    assert!(text.contains("80 % interval"), "{text}");
    let first = sim::matrix::measure_first(&results);
    assert!(!first.is_empty());
    assert!(first
        .windows(2)
        .all(|w| w[0].mean_abs_rank_correlation >= w[1].mean_abs_rank_correlation));
    assert_eq!(first[0].cells, 3);
    let note = text
        .lines()
        .find(|l| l.starts_with("Measure this first"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(note.contains(&first[0].parameter), "{note}");
    let csv = t.to_csv();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .contains("\"writes/s low\",\"writes/s high\""),
        "{csv}"
    );

    // Without intervals: today's point table, no ranges and no notes of them.
    let points = run_cells_with(&s, &cells, &with_intervals(2, None)).unwrap();
    assert!(points.iter().all(|r| r.prediction.is_none()));
    for (a, b) in points.iter().zip(&results) {
        assert_eq!(a.counts, b.counts, "the typical value is the point");
    }
    let t = results_table(
        &sim::matrix::fileio_workload_text(&workload),
        &cells,
        &points,
    );
    assert!(t.rows.iter().all(|r| r[1..]
        .iter()
        .all(|c| matches!(c, report::table::Cell::Num(_)))));
    assert!(!t.to_terminal().contains("Measure this first"));
    assert!(sim::matrix::measure_first(&points).is_empty());
}

#[test]
fn a_flush_carried_to_another_log_device_keeps_a_range_and_the_measured_one_narrows() {
    // The profile fitted the base's log device: the ssd-sata cell is that
    // device and narrows to the fit's ±2σ; the nvme cell's flush is the fit
    // carried to a device nobody measured, sampled over its whole range
    // around the carried value. The CPU narrows in both.
    let cells = matrix_over(
        "log",
        r#"["ssd-sata", "nvme"]"#,
        Some(flush_and_cpu_profile()),
    )
    .cells()
    .unwrap();
    let span = |c: &sim::matrix::MatrixCell, p: sim::profile::Param| {
        sim::uncertainty::spans(&c.system, c.profile.as_ref())
            .unwrap()
            .into_iter()
            .find(|s| s.param == p)
            .unwrap_or_else(|| panic!("{p:?} sampled in {}", c.choices_text()))
    };
    let measured = span(&cells[0], sim::profile::Param::CommitFlushMs);
    assert!(
        (measured.low - 3.3).abs() < 1e-9 && (measured.high - 3.7).abs() < 1e-9,
        "{measured:?}"
    );
    let carried = span(&cells[1], sim::profile::Param::CommitFlushMs);
    assert!(carried.low < carried.typical && carried.typical < carried.high);
    assert!(
        carried.high / carried.low > 5.0,
        "a whole range: {carried:?}"
    );
    for c in &cells {
        let cpu = span(c, sim::profile::Param::ServerCpuUs);
        assert!(
            (cpu.low - 390.0).abs() < 1e-9 && (cpu.high - 410.0).abs() < 1e-9,
            "{cpu:?}"
        );
    }
    let plain = matrix_over("log", r#"["ssd-sata"]"#, None).cells().unwrap();
    assert!(plain[0].profile.is_none());
}

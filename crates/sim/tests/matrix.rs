//! The matrix form: axes expanded over a base system, every cell predicted,
//! one table row per cell.

use fileio::options::RunSpec;
use sim::limits::DEFAULT_MAX_CELLS;
use sim::matrix::{results_table, run_cells, MatrixSpec, FIGURE_COLUMNS};
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
    let alone = sim::simulate(&s, &cells[7].system).unwrap();
    assert_eq!(alone.counts, one[7].counts);
}

#[test]
fn the_table_has_a_row_per_cell_with_the_reference_figures() {
    let m = reference_matrix();
    let cells = m.cells().unwrap();
    let results = run_cells(&spec(&["--time=2"]), &cells, 2).unwrap();
    let t = results_table(&m.workload, &cells, &results);
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

#[test]
fn a_profile_leaves_the_component_an_axis_varies_alone() {
    // The log axis chooses the log device: its own flush applies, not the one
    // the profile fitted on the measured box; the server's CPU still does.
    let only_cpu = {
        let mut p = flush_and_cpu_profile();
        p.parameters.remove("commit_device.flush_ms");
        p
    };
    let values = r#"["ssd-sata", "nvme"]"#;
    let calibrated = matrix_over("log", values, Some(flush_and_cpu_profile()))
        .cells()
        .unwrap();
    let cpu_only = matrix_over("log", values, Some(only_cpu)).cells().unwrap();
    assert_eq!(calibrated, cpu_only);
    let plain = matrix_over("log", values, None).cells().unwrap();
    assert_ne!(calibrated, plain);
}

//! `tankbench lab predict` through the binary: a lab matrix predicted cell
//! by cell (no lab is built: a matrix with no measured cells yet).

mod common;

use common::{listing, mkfifo, refused_naming, scratch, tb};

const MATRIX: &str = r#"
output = "out/m"
workload = ["--file-total-size=16M", "--file-num=4", "--file-test-mode=rndrw",
            "--file-block-size=4K", "--threads=2", "--file-fsync-all", "--time=2"]
[base]
name = "t"
[base.pool]
layout = "2x raidz2-6"
disk = "hdd"
[base.server]
arc = "256M"
[[axis]]
key = "pool.log"
values = ["none", "ssd-plp:10GB"]
"#;

/// A fresh directory holding [`MATRIX`] as m.toml.
fn with_matrix() -> tempfile::TempDir {
    let d = scratch();
    std::fs::write(d.path().join("m.toml"), MATRIX).unwrap();
    d
}

/// `tankbench lab predict <file> <opts>` in `dir`.
fn lab_predict(dir: &std::path::Path, file: &str, opts: &[&str]) -> common::Run {
    let mut args = vec!["lab", "predict", file];
    args.extend_from_slice(opts);
    tb(dir, &args)
}

fn column(stdout: &str, row: usize, col: usize) -> String {
    stdout
        .lines()
        .nth(2 + row)
        .and_then(|l| l.split_whitespace().nth(col))
        .unwrap_or_else(|| panic!("no row {row} column {col}:\n{stdout}"))
        .to_string()
}

#[test]
fn every_cell_is_predicted_and_the_systems_are_written_once() {
    let d = with_matrix();
    let r = lab_predict(d.path(), "m.toml", &["--systems", "sys"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    // layout, SLOG, link, then writes/s lab (none measured: "–") and sim.
    assert_eq!(column(&r.stdout, 0, 1), "none");
    assert_eq!(column(&r.stdout, 1, 1), "ssd-sata");
    assert_eq!(column(&r.stdout, 0, 3), "–");
    let sim = |row| -> f64 { column(&r.stdout, row, 4).parse().unwrap() };
    assert!(
        sim(1) > 3.0 * sim(0),
        "a log device: {} vs {}",
        sim(1),
        sim(0)
    );
    for f in ["cell-1.toml", "cell-2.toml"] {
        let text = std::fs::read_to_string(d.path().join("sys").join(f)).unwrap();
        assert!(text.contains("zil = \"one-in-flight\""), "{text}");
    }
    // The written system predicts what the table says.
    let args = [
        "simulate",
        "--system",
        "sys/cell-2.toml",
        "--",
        "--file-total-size=16M",
        "--file-num=4",
        "--file-test-mode=rndrw",
        "--file-block-size=4K",
        "--threads=2",
        "--file-fsync-all",
        "--time=2",
        "--rand-seed=1",
        "--format=json",
        "run",
    ];
    let s = tb(d.path(), &args);
    assert_eq!(s.code, 0, "{}", s.stderr);
    let doc: serde_json::Value = serde_json::from_str(&s.stdout).unwrap();
    let w = doc["rates"]["writes_per_s"].as_f64().unwrap();
    assert!((w / sim(1) - 1.0).abs() < 0.01, "{w} vs {}", sim(1));
    // Existing files are never replaced: refused before anything is written.
    let before = listing(&d.path().join("sys"));
    let again = lab_predict(d.path(), "m.toml", &["--systems", "sys"]);
    assert_eq!(again.code, 1, "{}", again.stdout);
    assert_eq!(again.stderr.lines().count(), 1, "{}", again.stderr);
    assert!(again.stderr.contains("cell-1.toml"), "{}", again.stderr);
    assert_eq!(listing(&d.path().join("sys")), before);
}

#[test]
fn every_predicted_cell_has_an_interval_and_nothing_unmeasured_is_judged() {
    let d = with_matrix();
    let r = lab_predict(d.path(), "m.toml", &["--samples", "4"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    // writes/s sim is "typical (low–high)": the point, then the range.
    for row in 0..2 {
        let range = column(&r.stdout, row, 5);
        assert!(
            range.starts_with('(') && range.contains('–') && range.ends_with(')'),
            "row {row}: {range}\n{}",
            r.stdout
        );
    }
    assert!(
        r.stdout.contains("80 % interval from 4 samples"),
        "{}",
        r.stdout
    );
    // As JSON: every figure with its low and high around the point; no
    // cell was measured, so none is judged inside or outside.
    let j = lab_predict(d.path(), "m.toml", &["--samples", "4", "--format", "json"]);
    assert_eq!(j.code, 0, "{}", j.stderr);
    let doc: serde_json::Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(doc["confidence"], 0.8);
    assert_eq!(doc["samples"], 4);
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    for c in cells {
        for f in c["figures"].as_array().unwrap() {
            let (low, high) = (f["low"].as_f64().unwrap(), f["high"].as_f64().unwrap());
            assert!(low <= high, "{f}");
            assert!(f["measured"].is_null() && f["inside"].is_null(), "{f}");
        }
    }
    // The points are the ones without intervals: the same runs.
    let off = lab_predict(
        d.path(),
        "m.toml",
        &["--intervals", "off", "--format", "json"],
    );
    assert_eq!(off.code, 0, "{}", off.stderr);
    let off: serde_json::Value = serde_json::from_str(&off.stdout).unwrap();
    for (a, b) in cells.iter().zip(off["cells"].as_array().unwrap()) {
        assert_eq!(a["figures"][0]["predicted"], b["figures"][0]["predicted"]);
        assert!(b["figures"][0]["low"].is_null(), "{b}");
    }
    // An interval needs two samples: one line naming the option.
    let bad = lab_predict(d.path(), "m.toml", &["--samples", "1"]);
    assert_eq!(bad.code, 1, "{}", bad.stdout);
    assert!(bad.stderr.contains("--samples"), "{}", bad.stderr);
}

#[test]
fn a_runaway_workload_is_refused_before_any_cell_is_predicted() {
    let d = scratch();
    let m = MATRIX.replace("\"--time=2\"", "\"--time=1000000000\"");
    std::fs::write(d.path().join("m.toml"), m).unwrap();
    let r = lab_predict(d.path(), "m.toml", &[]);
    refused_naming(&r, &["workload", "--time=1000000000", "at most 86400"]);
    let m = MATRIX.replace("\"--threads=2\"", "\"--threads=1000000000\"");
    std::fs::write(d.path().join("t.toml"), m).unwrap();
    let r = lab_predict(d.path(), "t.toml", &[]);
    refused_naming(&r, &["--threads=1000000000", "at most 4096"]);
}

#[test]
fn a_matrix_of_300000_cells_is_refused_before_it_is_expanded() {
    let d = scratch();
    let arcs: Vec<String> = (1..=300).map(|m| format!("\"{m}M\"")).collect();
    let cores: Vec<String> = (0..500).map(|_| "2".to_string()).collect();
    let m = format!(
        "{MATRIX}\n[[axis]]\nkey = \"server.arc\"\nvalues = [{}]\n[[axis]]\nkey = \"server.cores\"\nvalues = [{}]\n",
        arcs.join(","),
        cores.join(",")
    );
    std::fs::write(d.path().join("m.toml"), m).unwrap();
    let started = std::time::Instant::now();
    let r = lab_predict(d.path(), "m.toml", &[]);
    refused_naming(&r, &["m.toml", "300000 cells", "limit of 10000"]);
    assert!(started.elapsed().as_secs() < 10);
}

#[test]
fn a_fifo_as_the_matrix_or_its_base_is_refused_at_once() {
    let d = scratch();
    mkfifo(&d.path().join("fifo"));
    let r = lab_predict(d.path(), "fifo", &[]);
    refused_naming(&r, &["fifo", "not a regular file"]);
    std::fs::write(
        d.path().join("m.toml"),
        "base = \"fifo\"\nworkload = [\"--file-test-mode=rndrd\"]\n",
    )
    .unwrap();
    let r = lab_predict(d.path(), "m.toml", &[]);
    refused_naming(&r, &["fifo", "not a regular file"]);
}

#[test]
fn lab_up_refuses_a_disk_trace_file_that_exists_before_building_anything() {
    // `lab up --disk-trace FILE` writes a new file only: an existing one is
    // refused with one line, left as it was, and no lab is built (the
    // refusal comes before the lab's root is touched, so it needs no root).
    let d = scratch();
    std::fs::write(
        d.path().join("lab.toml"),
        "name = \"trtest\"\n[pool]\nlayout = \"raidz1-3\"\ndisk = \"hdd\"\n",
    )
    .unwrap();
    std::fs::write(d.path().join("mine.txt"), "my notes\n").unwrap();
    let before = listing(d.path());
    let r = tb(
        d.path(),
        &["lab", "up", "--disk-trace", "mine.txt", "lab.toml"],
    );
    refused_naming(
        &r,
        &["--disk-trace", "mine.txt", "exists", "does not exist yet"],
    );
    assert_eq!(listing(d.path()), before);
    assert_eq!(
        std::fs::read_to_string(d.path().join("mine.txt")).unwrap(),
        "my notes\n"
    );
    assert!(!std::path::Path::new("/var/tmp/tb-lab/tb-trtest").exists());
}

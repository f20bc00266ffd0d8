//! `tankbench lab predict` through the binary: a lab matrix predicted cell
//! by cell (no lab is built: a matrix with no measured cells yet).

mod common;

use common::{listing, scratch, tb};

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
    let d = scratch();
    std::fs::write(d.path().join("m.toml"), MATRIX).unwrap();
    let r = tb(d.path(), &["lab", "predict", "m.toml", "--systems", "sys"]);
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
    let again = tb(d.path(), &["lab", "predict", "m.toml", "--systems", "sys"]);
    assert_eq!(again.code, 1, "{}", again.stdout);
    assert_eq!(again.stderr.lines().count(), 1, "{}", again.stderr);
    assert!(again.stderr.contains("cell-1.toml"), "{}", again.stderr);
    assert_eq!(listing(&d.path().join("sys")), before);
}

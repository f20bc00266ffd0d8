//! `tankbench plan`'s default output: the decision in 120 columns, the
//! sync columns as commit latency (a write and its fsync), and the same
//! table as Markdown-free plain text whose figures are the JSON's.

mod common;

use common::tb;

fn widest_line(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn the_default_output_fits_120_columns_for_24_and_200_disks() {
    let d = common::scratch();
    for disks in ["24x8TB", "200x8TB"] {
        for extra in [&[][..], &["--log", "10GB", "--link", "2x1G"][..]] {
            let mut args = vec!["plan", "--disks", disks];
            args.extend_from_slice(extra);
            let r = tb(d.path(), &args);
            assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
            assert!(
                widest_line(&r.stdout) <= 120,
                "{args:?}: a line of {} columns:\n{}",
                widest_line(&r.stdout),
                r.stdout
            );
            assert!(r.stdout.contains("Commit ms"), "{}", r.stdout);
        }
    }
}

#[test]
fn the_sync_column_is_the_commit_latency_not_the_write_alone() {
    // 12 x 8 TB 7200 rpm mirrors without a log device: the write() returns
    // from the ARC in microseconds, the fsync waits for the in-pool ZIL on
    // the disks, milliseconds. The table shows the sum.
    let d = common::scratch();
    let args = ["plan", "--disks", "24x8TB", "--layout", "12xmirror-2"];
    let json = tb(d.path(), &[&args[..], &["--format", "json"]].concat());
    assert_eq!(json.code, 0, "{}", json.stderr);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let predicted = &doc["entries"][0]["performance"]["predicted"];
    let write = predicted["write_latency_ms"].as_f64().unwrap();
    let commit = predicted["commit_latency_ms"].as_f64().unwrap();
    assert!(write < 0.5, "write() alone: {write} ms");
    assert!(commit > 2.0, "write + fsync on HDD mirrors: {commit} ms");
    // The text table's Commit ms cell is that figure.
    let text = tb(d.path(), &args);
    assert_eq!(text.code, 0, "{}", text.stderr);
    let header = text.stdout.lines().next().unwrap();
    let row = text
        .stdout
        .lines()
        .find(|l| l.contains("12xmirror-2"))
        .unwrap();
    let titles: Vec<&str> = header
        .split("  ")
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    let cells: Vec<&str> = row.split_whitespace().collect();
    let at = titles.iter().position(|t| *t == "Commit ms").unwrap();
    let shown: f64 = cells[at].parse().unwrap();
    assert!(
        (shown - commit).abs() / commit < 0.01,
        "table {shown} ms vs JSON {commit} ms"
    );
}

#[test]
fn the_table_comes_as_csv_and_markdown_and_columns_are_chosen_by_key() {
    let d = common::scratch();
    let base = ["plan", "--disks", "24x8TB", "--top", "3"];
    let csv = tb(d.path(), &[&base[..], &["--format", "csv"]].concat());
    assert_eq!(csv.code, 0, "{}", csv.stderr);
    let lines: Vec<&str> = csv.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "a header and three rows: {}", csv.stdout);
    assert!(lines[0].contains("\"Commit ms\""), "{}", lines[0]);
    // The wide CSV carries the ranges as their own columns, numbers bare.
    let wide = tb(
        d.path(),
        &[&base[..], &["--format", "csv", "--wide"]].concat(),
    );
    assert!(wide
        .stdout
        .lines()
        .next()
        .unwrap()
        .contains("\"Read IOPS low\""));
    let md = tb(d.path(), &[&base[..], &["--format", "markdown"]].concat());
    assert!(md.stdout.contains("| 1 | "), "{}", md.stdout);
    let chosen = tb(
        d.path(),
        &[&base[..], &["--columns", "layout,commit"]].concat(),
    );
    let header = chosen.stdout.lines().next().unwrap();
    assert_eq!(
        header
            .split("  ")
            .filter(|t| !t.is_empty())
            .map(str::trim)
            .collect::<Vec<_>>(),
        ["Layout", "Commit ms"]
    );
    // An unknown key: one line naming the option and the accepted keys, exit 1.
    let bad = tb(
        d.path(),
        &[&base[..], &["--columns", "layout,bogus"]].concat(),
    );
    assert_eq!(bad.code, 1);
    assert_eq!(bad.stderr.trim().lines().count(), 1, "{}", bad.stderr);
    assert!(bad.stderr.contains("--columns") && bad.stderr.contains("accepted: rank, layout"));
}

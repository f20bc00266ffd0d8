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
    // Named layouts carry intervals by default: two `typical (low–high)`
    // cells, still within 120 columns.
    let named = [
        "plan",
        "--disks",
        "24x8TB",
        "--layout",
        "1xraidz3-24,2xraidz2-12,3xraidz2-8,12xmirror-2",
        "--log",
        "10GB",
        "--link",
        "2x1G",
        "--samples=2",
    ];
    let r = tb(d.path(), &named);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains('–'), "no interval shown:\n{}", r.stdout);
    assert!(
        widest_line(&r.stdout) <= 120,
        "a line of {} columns:\n{}",
        widest_line(&r.stdout),
        r.stdout
    );
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

/// The fields of one CSV record (titles such as "Commit ms, log" are quoted
/// and hold a comma; no field here holds a quote).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

/// The named layouts of the reference question: intervals on by default.
const NAMED: [&str; 10] = [
    "plan",
    "--disks",
    "24x8TB",
    "--layout",
    "3xraidz2-8",
    "--log",
    "10GB",
    "--link",
    "2x10G",
    "--samples=4",
];

#[test]
fn the_sync_columns_carry_an_interval_in_every_format() {
    let d = common::scratch();
    let json = tb(d.path(), &[&NAMED[..], &["--format", "json"]].concat());
    assert_eq!(json.code, 0, "{}", json.stderr);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let perf = &doc["entries"][0]["performance"];
    for (point, interval) in [
        ("predicted", "predicted_interval"),
        ("predicted_with_log", "predicted_with_log_interval"),
    ] {
        let i = &perf[interval];
        assert_eq!(i["samples"], 4, "{perf}");
        for figure in ["writes_per_s", "commit_latency_ms"] {
            let p = perf[point][figure].as_f64().unwrap();
            let (lo, hi) = (
                i[figure]["low"].as_f64().unwrap(),
                i[figure]["high"].as_f64().unwrap(),
            );
            assert!(
                lo <= p && p <= hi,
                "{interval} {figure}: {p} not in {lo}..{hi}"
            );
            assert!(hi > lo, "{interval} {figure}: no width");
        }
    }
    let commit = perf["predicted_with_log"]["commit_latency_ms"]
        .as_f64()
        .unwrap();
    let commit_low = perf["predicted_with_log_interval"]["commit_latency_ms"]["low"]
        .as_f64()
        .unwrap();

    // CSV: the point, then its low and high columns, numbers bare.
    let csv = tb(d.path(), &[&NAMED[..], &["--format", "csv"]].concat());
    assert_eq!(csv.code, 0, "{}", csv.stderr);
    let mut lines = csv.stdout.lines();
    let header = csv_fields(lines.next().unwrap());
    let row = csv_fields(lines.next().unwrap());
    let at = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{name} not in {header:?}"))
    };
    let value = |name: &str| row[at(name)].parse::<f64>().unwrap();
    // serde_json reads the last digit of some doubles one ulp off.
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
    assert!(same(value("Commit ms, log"), commit));
    assert!(same(value("Commit ms, log low"), commit_low));
    assert!(value("Commit ms, log high") >= commit);
    assert!(value("Commit ms low") <= value("Commit ms"));

    // Text and Markdown: typical (low–high), and a note saying what it is.
    for format in ["text", "markdown"] {
        let out = tb(d.path(), &[&NAMED[..], &["--format", format]].concat());
        assert_eq!(out.code, 0, "{}", out.stderr);
        let row = out
            .stdout
            .lines()
            .find(|l| l.contains("3xraidz2-8"))
            .unwrap();
        assert!(row.contains('–') && row.contains('('), "{format}: {row}");
        assert!(
            out.stdout.contains("80 % interval"),
            "{format}: {}",
            out.stdout
        );
    }
    // Off: points only.
    let off = tb(d.path(), &[&NAMED[..], &["--intervals=off"]].concat());
    let row = off
        .stdout
        .lines()
        .find(|l| l.contains("3xraidz2-8"))
        .unwrap();
    assert!(!row.contains('–'), "{row}");
}

#[test]
fn an_enumerated_plan_has_no_intervals_unless_asked() {
    // Each interval costs its samples' simulations: auto leaves them out
    // of a plan of every layout, --intervals=on asks for them.
    let d = common::scratch();
    let base = ["plan", "--disks", "8x8TB", "--format", "json"];
    let auto = tb(d.path(), &base);
    assert_eq!(auto.code, 0, "{}", auto.stderr);
    let doc: serde_json::Value = serde_json::from_str(&auto.stdout).unwrap();
    let ignored = tb(d.path(), &[&base[..], &["--samples=4"]].concat());
    assert!(
        ignored.stderr.contains("--samples 4 changes nothing"),
        "{}",
        ignored.stderr
    );
    assert!(doc["entries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["performance"]["predicted_interval"].is_null()));
    let on = tb(
        d.path(),
        &[&base[..], &["--intervals=on", "--samples=2"]].concat(),
    );
    assert_eq!(on.code, 0, "{}", on.stderr);
    let doc: serde_json::Value = serde_json::from_str(&on.stdout).unwrap();
    for e in doc["entries"].as_array().unwrap() {
        let p = e["performance"]["predicted"]["writes_per_s"]
            .as_f64()
            .unwrap();
        let i = &e["performance"]["predicted_interval"]["writes_per_s"];
        assert!(
            i["low"].as_f64().unwrap() <= p && p <= i["high"].as_f64().unwrap(),
            "{}: {p} {i}",
            e["layout"]
        );
    }
}

#[test]
fn ten_thousand_disks_plan_in_bounded_time() {
    // Every layout of 10,000 disks, above MAX_PREDICTED_LAYOUTS of them:
    // the predicted columns are left out and the warning says so, in
    // seconds of a debug build rather than hours.
    let d = common::scratch();
    let started = std::time::Instant::now();
    let r = tb(
        d.path(),
        &[
            "plan",
            "--disks",
            "10000x8TB",
            "--max-idle",
            "10000",
            "--top",
            "3",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("left out above 64"), "{}", r.stderr);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn sequential_cells_show_what_one_client_gets_over_the_link() {
    // 24 HDDs stream GB/s locally; one 1 GbE link carries ~118 MB/s. The
    // cell says what the client gets, marked, with the pool's figure beside.
    let d = common::scratch();
    let args = [
        "plan",
        "--disks",
        "24x8TB",
        "--link",
        "1G",
        "--layout",
        "3xraidz2-8",
        "--columns",
        "layout,seq",
        "--intervals=off",
    ];
    let r = tb(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let row = r.stdout.lines().find(|l| l.contains("3xraidz2-8")).unwrap();
    assert!(row.contains("118*/118* ("), "{row}");
    assert!(
        r.stdout
            .contains("* = cut to the 118 MB/s one link carries"),
        "{}",
        r.stdout
    );
    // Without a link there is nothing to cut: the pool's figures, unmarked.
    let no_link: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| *a != "--link" && *a != "1G")
        .collect();
    let local = tb(d.path(), &no_link);
    assert_eq!(local.code, 0, "{}", local.stderr);
    let row = local
        .stdout
        .lines()
        .find(|l| l.contains("3xraidz2-8"))
        .unwrap();
    assert!(!row.contains('*') && !row.contains('('), "{row}");
}

#[test]
fn plan_answers_whether_a_log_device_is_worth_it_in_a_sentence() {
    let d = common::scratch();
    let base = [
        "plan",
        "--disks",
        "24x8TB",
        "--link",
        "2x10G",
        "--layout",
        "3xraidz2-8",
        "--intervals=off",
    ];
    let with = tb(d.path(), &[&base[..], &["--log", "10GB"]].concat());
    assert_eq!(with.code, 0, "{}", with.stderr);
    let sentence = with
        .stdout
        .lines()
        .find(|l| l.starts_with("Log device"))
        .unwrap_or_else(|| panic!("no log sentence:\n{}", with.stdout));
    assert!(
        sentence.contains("10 GB")
            && sentence.contains("worth it")
            && sentence.contains("x faster"),
        "{sentence}"
    );
    let without = tb(d.path(), &base);
    assert_eq!(without.code, 0, "{}", without.stderr);
    assert!(
        without.stdout.contains("Log device: none given") && without.stdout.contains("--log"),
        "{}",
        without.stdout
    );
}

#[test]
fn layouts_that_predict_alike_tie_and_long_lists_and_notes_stay_short() {
    // With a log device every layout commits at the log's speed: no layout
    // is "best" at sync writes, and the note says they tie.
    let d = common::scratch();
    let r = tb(
        d.path(),
        &[
            "plan", "--disks", "24x8TB", "--log", "10GB", "--link", "2x10G", "--wide",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("best sync writes"), "{}", r.stdout);
    assert!(r.stdout.contains("sync writes tie"), "{}", r.stdout);
    // The sequential tie across twenty layouts is counted, not spelled out.
    let best = r
        .stdout
        .lines()
        .find(|l| l.starts_with("best sequential"))
        .unwrap();
    assert!(
        best.chars().count() <= 120 && best.contains("more"),
        "{best}"
    );
    // The wide-raidz note is said once, naming its layouts.
    let wide: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains("OpenZFS advises against"))
        .collect();
    assert_eq!(wide.len(), 1, "{}", r.stdout);
    let notes = &r.stdout[r.stdout.find("\nNotes:").unwrap()..];
    assert!(
        notes.contains("1xraidz3-24") && notes.contains("1xraidz1-22"),
        "{notes}"
    );
}

#[test]
fn a_disk_size_without_a_unit_says_the_unit_is_missing() {
    let d = common::scratch();
    let r = tb(d.path(), &["plan", "--disks", "24x8"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("--disks")
            && r.stderr.contains("no unit")
            && !r.stderr.contains("64 MiB"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

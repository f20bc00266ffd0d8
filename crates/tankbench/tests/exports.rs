//! The exports of `tankbench fileio … run` read by the tools a pipeline would
//! read them with: `--csv` by Python's csv module, `--openmetrics` by the
//! Prometheus client library's parser, `--intervals` line by line with
//! json.loads while the run is still going, and the `--json` document checked
//! against docs/run-result.schema.json with the `jsonschema` package. Each is
//! the real binary on a small file set in a scratch directory.
//!
//! The Python packages come from PyPI: scripts/test installs them, and a test
//! installs them itself when they are missing (pip reaches PyPI where the
//! tests run); without python3 or pip the tests skip under the one rule for
//! peers (a failure with TANKBENCH_REQUIRE_PEERS=1).

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const FILES: [&str; 3] = ["fileio", "--file-total-size=4M", "--file-num=2"];

/// A scratch directory with a prepared file set.
fn prepared() -> tempfile::TempDir {
    let dir = scratch();
    let mut args = FILES.to_vec();
    args.push("prepare");
    let r = tb(dir.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    dir
}

/// `tankbench fileio` on the prepared files with `extra` and `run`.
fn run(dir: &Path, extra: &[&str]) -> Run {
    let mut args = FILES.to_vec();
    args.extend_from_slice(extra);
    args.push("run");
    tb(dir, &args)
}

/// python3 with the packages the tests read the exports with, installed once
/// per test binary when missing; None after the rule for peers.
fn python() -> Option<PathBuf> {
    static READY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let ready = READY.get_or_init(|| {
        let python = testkit::which("python3").ok_or("python3 (apt-get install python3)")?;
        let has = || {
            Command::new(&python)
                .args(["-c", "import prometheus_client, jsonschema"])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if !has() {
            let _ = testkit::output(Command::new(&python).args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "prometheus_client",
                "jsonschema",
            ]));
        }
        if has() {
            Ok(python)
        } else {
            Err("the Python packages prometheus_client and jsonschema \
                 (python3 -m pip install prometheus_client jsonschema)"
                .to_string())
        }
    });
    match ready {
        Ok(p) => Some(p.clone()),
        Err(reason) => {
            testkit::skip_or_fail(&format!("needs {reason}"));
            None
        }
    }
}

/// Run a Python script with `args`; its stdout, after asserting success.
fn py(python: &Path, script: &str, args: &[&Path]) -> String {
    let o = testkit::output(Command::new(python).arg("-c").arg(script).args(args))
        .expect("run python3");
    assert!(
        o.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// One line on stderr that names `option`, and nothing run.
fn assert_refused(r: &Run, option: &str) {
    assert_eq!(r.code, 1, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {lines:?}");
    assert!(lines[0].contains(option), "{}", lines[0]);
    assert!(
        !r.stdout.contains("Threads started!"),
        "the run must not start:\n{}",
        r.stdout
    );
}

#[test]
fn csv_rows_parse_with_pythons_csv_module_one_per_run() {
    let Some(python) = python() else { return };
    let dir = prepared();
    let csv = dir.path().join("runs.csv");
    let csv_arg = format!("--csv={}", csv.display());
    let base = ["--file-test-mode=rndrw", "--time=1", csv_arg.as_str()];
    let r = run(
        dir.path(),
        &[&base[..], &["--label=layout=mirror"]].concat(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run(dir.path(), &base);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // --repeat adds one row per run.
    let r = run(dir.path(), &[&base[..], &["--repeat=2"]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let script = r#"
import csv, json, sys
with open(sys.argv[1], newline="") as f:
    rows = list(csv.reader(f, strict=True))
print(json.dumps(rows))
"#;
    let rows: Vec<Vec<String>> =
        serde_json::from_str(&py(&python, script, &[&csv])).expect("rows as JSON");
    assert_eq!(rows.len(), 1 + 4, "a header and one row per run: {rows:?}");
    let header = &rows[0];
    assert_eq!(&header[..3], ["tool", "tool_version", "started_at"]);
    assert_eq!(
        &header[header.len() - 4..],
        [
            "latency_p50_ms",
            "latency_p95_ms",
            "latency_p99_ms",
            "latency_p99.9_ms"
        ]
    );
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    for row in &rows[1..] {
        assert_eq!(row.len(), header.len(), "{row:?}");
        assert_eq!(row[col("tool")], "tankbench");
        assert_eq!(row[col("mode")], "rndrw");
        assert_eq!(row[col("threads")], "1");
        assert_eq!(row[col("block_size_bytes")], "16384");
        assert_eq!(row[col("total_size_bytes")], "4194304");
        assert_eq!(row[col("time_limit_s")], "1");
        let num = |name: &str| -> f64 {
            row[col(name)]
                .parse()
                .unwrap_or_else(|e| panic!("{name} = {:?}: {e}", row[col(name)]))
        };
        assert!(num("reads_per_s") > 0.0 && num("writes_per_s") > 0.0);
        assert!(num("time_s") >= 1.0);
        // Events over the period of the other rates: their sum, give or take
        // the fsyncs that are not events (at the end of each thread).
        let ops = num("reads_per_s") + num("writes_per_s") + num("fsyncs_per_s");
        assert!(
            num("events_per_s") <= ops * 1.0001 && num("events_per_s") >= num("reads_per_s"),
            "{row:?}"
        );
        assert!(num("latency_min_ms") <= num("latency_avg_ms"));
        assert!(num("latency_avg_ms") <= num("latency_max_ms"));
        assert!(num("latency_p50_ms") <= num("latency_p99.9_ms"));
    }
    assert_eq!(rows[1][col("labels")], "layout=mirror");
    assert_eq!(rows[2][col("labels")], "");
    // The first report of the --repeat invocation (its first run, row 3)
    // and the CSV agree, to the report's two decimals.
    let reported = report_value(&r.stdout, "reads/s:");
    let exported: f64 = rows[3][col("reads_per_s")].parse().unwrap();
    assert!(
        (reported - exported).abs() <= 0.005 + 1e-9,
        "{reported} vs {exported}"
    );
}

#[test]
fn a_csv_file_with_another_header_is_refused_before_the_run() {
    let dir = prepared();
    let foreign = dir.path().join("theirs.csv");
    std::fs::write(&foreign, "name,score\r\nann,3\r\n").unwrap();
    let r = run(
        dir.path(),
        &[
            "--file-test-mode=rndrd",
            "--time=1",
            &format!("--csv={}", foreign.display()),
        ],
    );
    assert_refused(&r, "--csv=");
    assert_eq!(
        std::fs::read_to_string(&foreign).unwrap(),
        "name,score\r\nann,3\r\n"
    );
    // Other percentiles are other columns: refused too.
    let ours = dir.path().join("ours.csv");
    let csv_arg = format!("--csv={}", ours.display());
    let r = run(
        dir.path(),
        &["--file-test-mode=rndrd", "--time=1", &csv_arg],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let before = std::fs::read(&ours).unwrap();
    let r = run(
        dir.path(),
        &[
            "--file-test-mode=rndrd",
            "--time=1",
            "--percentiles=50,99",
            &csv_arg,
        ],
    );
    assert_refused(&r, "--csv=");
    assert_eq!(std::fs::read(&ours).unwrap(), before);
    // An empty value names the option.
    let r = run(dir.path(), &["--file-test-mode=rndrd", "--csv="]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("--csv needs a file name"), "{}", r.stdout);
}

/// The Prometheus text format, not OpenMetrics (docs/exports.md): the last
/// line of the file is a sample with its newline, not `# EOF`.
fn assert_ends_with_a_sample(prom: &Path) {
    let text = std::fs::read_to_string(prom).unwrap();
    assert!(text.ends_with('\n'), "{text}");
    let last = text.lines().last().unwrap();
    assert!(last.starts_with("tankbench_latency_max_seconds{"), "{last}");
    assert!(!text.contains("# EOF"), "{text}");
}

#[test]
fn the_openmetrics_file_parses_with_the_prometheus_client_parser() {
    let Some(python) = python() else { return };
    let dir = prepared();
    let prom = dir.path().join("tankbench.prom");
    let prom_arg = format!("--openmetrics={}", prom.display());
    let r = run(
        dir.path(),
        &[
            "--file-test-mode=rndrw",
            "--time=1",
            "--threads=2",
            "--label=layout=mirror,link.speed=10G",
            &prom_arg,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let script = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
out = {}
for family in text_string_to_metric_families(text):
    out[family.name] = {
        "type": family.type,
        "samples": [[s.name, s.labels, s.value] for s in family.samples],
    }
print(json.dumps(out))
"#;
    let families: Value = serde_json::from_str(&py(&python, script, &[&prom])).unwrap();
    assert_ends_with_a_sample(&prom);
    let info = &families["tankbench_run_info"];
    assert_eq!(info["type"], "gauge");
    let labels = &info["samples"][0][1];
    assert_eq!(labels["mode"], "rndrw");
    assert_eq!(labels["threads"], "2");
    assert_eq!(labels["block_size"], "16384");
    assert_eq!(labels["label_layout"], "mirror");
    assert_eq!(labels["label_link_speed"], "10G");
    assert_eq!(labels["tool"], "tankbench");
    assert_eq!(info["samples"][0][2], 1.0);
    let gauge = |name: &str| {
        let f = &families[name];
        assert_eq!(f["type"], "gauge", "{name}: {f}");
        f["samples"][0][2].as_f64().unwrap()
    };
    let reported = report_value(&r.stdout, "reads/s:");
    assert!((gauge("tankbench_reads_per_second") - reported).abs() <= 0.005 + 1e-9);
    assert!(gauge("tankbench_written_bytes_per_second") > 0.0);
    assert!(gauge("tankbench_run_duration_seconds") >= 1.0);
    let summary = &families["tankbench_latency_seconds"];
    assert_eq!(summary["type"], "summary");
    let samples = summary["samples"].as_array().unwrap();
    let event_quantiles: Vec<&str> = samples
        .iter()
        .filter(|s| s[0] == "tankbench_latency_seconds" && s[1]["op"] == "event")
        .map(|s| s[1]["quantile"].as_str().unwrap())
        .collect();
    assert_eq!(event_quantiles, ["0.5", "0.95", "0.99", "0.999"]);
    let count = samples
        .iter()
        .find(|s| s[0] == "tankbench_latency_seconds_count" && s[1]["op"] == "event")
        .expect("the event count");
    assert!(count[2].as_f64().unwrap() > 0.0);
    // Every series has the run's labels.
    for family in families.as_object().unwrap().values() {
        for s in family["samples"].as_array().unwrap() {
            assert_eq!(s[1]["label_layout"], "mirror", "{s}");
        }
    }
    // The next run replaces the file (it has tankbench's marker), leaving no
    // temporary file; a file tankbench did not write is refused.
    let first = std::fs::read_to_string(&prom).unwrap();
    let r = run(
        dir.path(),
        &["--file-test-mode=rndrd", "--time=1", &prom_arg],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let second = std::fs::read_to_string(&prom).unwrap();
    assert_ne!(first, second);
    assert!(second.contains("mode=\"rndrd\""), "{second}");
    let hidden: Vec<String> = listing(dir.path())
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
    let foreign = dir.path().join("node.prom");
    std::fs::write(&foreign, "node_custom 1\n").unwrap();
    let r = run(
        dir.path(),
        &[
            "--file-test-mode=rndrd",
            "--time=1",
            &format!("--openmetrics={}", foreign.display()),
        ],
    );
    assert_refused(&r, "--openmetrics=");
    assert_eq!(
        std::fs::read_to_string(&foreign).unwrap(),
        "node_custom 1\n"
    );
}

#[test]
fn the_intervals_file_is_read_line_by_line_while_the_run_goes() {
    let Some(python) = python() else { return };
    let dir = prepared();
    let lines_path = dir.path().join("intervals.jsonl");
    let mut args: Vec<String> = FILES.iter().map(|s| s.to_string()).collect();
    args.extend(
        [
            "--file-test-mode=rndrw",
            "--time=4",
            "--report-interval=1",
            &format!("--intervals={}", lines_path.display()),
            "run",
        ]
        .map(String::from),
    );
    let started = Instant::now();
    let mut child = Command::new(tankbench_bin())
        .args(&args)
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tankbench");
    std::thread::sleep(Duration::from_millis(2500));
    let script = r#"
import json, sys
with open(sys.argv[1]) as f:
    lines = [json.loads(line) for line in f]
print(json.dumps(lines))
"#;
    let during: Vec<Value> = serde_json::from_str(&py(&python, script, &[&lines_path])).unwrap();
    let still_running = child.try_wait().expect("poll the run").is_none();
    let read_at = started.elapsed();
    let out = child.wait_with_output().expect("the run ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        still_running,
        "the run ended before the file was read ({read_at:?})"
    );
    assert!(
        during.len() >= 2,
        "two intervals after 2.5 s of a run with --report-interval=1: {during:?}"
    );
    let after: Vec<Value> = serde_json::from_str(&py(&python, script, &[&lines_path])).unwrap();
    assert!(after.len() >= 3 && after.len() <= 4, "{after:?}");
    assert_eq!(
        &after[..during.len()],
        &during[..],
        "lines are only appended"
    );
    let mut last = 0.0;
    for line in &after {
        for field in [
            "elapsed_s",
            "seconds",
            "events_per_s",
            "reads_per_s",
            "writes_per_s",
            "fsyncs_per_s",
            "read_mib_per_s",
            "written_mib_per_s",
            "latency_ms",
        ] {
            assert!(line[field].is_number(), "{field} in {line}");
        }
        assert_eq!(line["run"], 1);
        assert_eq!(line["latency_percentile"], 95);
        let t = line["elapsed_s"].as_f64().unwrap();
        assert!(t > last, "{after:?}");
        last = t;
        assert!(line["reads_per_s"].as_f64().unwrap() > 0.0);
    }
    // The same samples as sysbench's interval lines on stdout.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let printed = stdout.lines().filter(|l| l.starts_with("[ ")).count();
    assert_eq!(printed, after.len(), "{stdout}");
}

#[test]
fn intervals_alone_sample_every_second_and_print_nothing_more() {
    let dir = prepared();
    let lines_path = dir.path().join("iv.jsonl");
    let arg = format!("--intervals={}", lines_path.display());
    let r = run(dir.path(), &["--file-test-mode=rndrd", "--time=3", &arg]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !r.stdout.lines().any(|l| l.starts_with("[ ")),
        "no interval lines without --report-interval:\n{}",
        r.stdout
    );
    let text = std::fs::read_to_string(&lines_path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!((2..=3).contains(&lines.len()), "{text}");
    for l in &lines {
        let s = l["seconds"].as_f64().unwrap();
        assert!((0.9..1.5).contains(&s), "one-second samples: {text}");
    }
    // The file exists now: a second run refuses it and leaves it alone.
    let r = run(dir.path(), &["--file-test-mode=rndrd", "--time=1", &arg]);
    assert_refused(&r, "--intervals=");
    assert_eq!(std::fs::read_to_string(&lines_path).unwrap(), text);
    // A run that fails before its first interval leaves no file.
    let empty = scratch();
    let gone = empty.path().join("iv.jsonl");
    let r = tb(
        empty.path(),
        &[
            "fileio",
            "--file-total-size=4M",
            "--file-num=2",
            "--file-test-mode=rndrd",
            &format!("--intervals={}", gone.display()),
            "run",
        ],
    );
    assert_eq!(r.code, 1, "no prepared files: {}", r.stdout);
    assert!(!gone.exists());
}

#[test]
fn the_schema_validates_real_json_output_and_rejects_a_mutated_document() {
    let Some(python) = python() else { return };
    let dir = prepared();
    let schema = testkit::workspace_root().join("docs/run-result.schema.json");
    let line_schema = testkit::workspace_root().join("docs/interval-line.schema.json");
    // A document with most parts: --rate (event_service latency) and
    // report intervals.
    let doc = dir.path().join("result.json");
    let lines = dir.path().join("intervals.jsonl");
    let r = run(
        dir.path(),
        &[
            "--file-test-mode=rndrw",
            "--time=2",
            "--rate=200",
            "--report-interval=1",
            &format!("--json={}", doc.display()),
            &format!("--intervals={}", lines.display()),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let script = r#"
import copy, json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
validator = jsonschema.Draft202012Validator(schema)
jsonschema.Draft202012Validator.check_schema(schema)
errors = [e.message for e in validator.iter_errors(doc)]
mutations = {
    "events as a string": lambda d: d["counts"].__setitem__("events", str(d["counts"]["events"])),
    "an unknown latency key": lambda d: d["latency"].__setitem__("bogus", d["latency"]["event"]),
    "no workload": lambda d: d.pop("workload"),
    "an unknown mode": lambda d: d["workload"].__setitem__("mode", "rndxx"),
}
rejected = {}
for name, mutate in mutations.items():
    d = copy.deepcopy(doc)
    mutate(d)
    rejected[name] = not validator.is_valid(d)
line_validator = jsonschema.Draft202012Validator(json.load(open(sys.argv[3])))
lines = [json.loads(l) for l in open(sys.argv[4])]
errors += [e.message for l in lines for e in line_validator.iter_errors(l)]
bad = dict(lines[0], run="1")
rejected["a line with run as a string"] = not line_validator.is_valid(bad)
print(json.dumps({"errors": errors, "rejected": rejected, "lines": len(lines)}))
"#;
    let out: Value =
        serde_json::from_str(&py(&python, script, &[&schema, &doc, &line_schema, &lines])).unwrap();
    assert!(out["lines"].as_u64().unwrap() >= 1, "{out}");
    assert_eq!(out["errors"], Value::Array(vec![]), "{out}");
    for (name, rejected) in out["rejected"].as_object().unwrap() {
        assert_eq!(rejected, &Value::Bool(true), "{name} was accepted");
    }
    // The document had what the test meant it to have.
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&doc).unwrap()).unwrap();
    assert!(v["latency"]["event_service"].is_object());
    assert!(!v["intervals"].as_array().unwrap().is_empty());
}

#[test]
fn sysbenchs_report_is_the_same_with_every_export() {
    let dir = prepared();
    let plain = run(dir.path(), &["--file-test-mode=seqwr", "--events=200"]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let d = dir.path();
    let exported = run(
        d,
        &[
            "--file-test-mode=seqwr",
            "--events=200",
            &format!("--csv={}", d.join("a.csv").display()),
            &format!("--openmetrics={}", d.join("a.prom").display()),
            &format!("--intervals={}", d.join("a.jsonl").display()),
            &format!("--json={}", d.join("a.json").display()),
        ],
    );
    assert_eq!(exported.code, 0, "{}", exported.stderr);
    assert_eq!(
        mask(&sysbench_part(&exported.stdout)),
        mask(&sysbench_part(&plain.stdout))
    );
    assert_eq!(exported.stderr, plain.stderr);
    for name in ["a.csv", "a.prom", "a.jsonl", "a.json"] {
        assert!(d.join(name).is_file(), "{name}");
    }
}

#[test]
fn two_exports_cannot_share_a_file() {
    let dir = prepared();
    let r = run(
        dir.path(),
        &["--file-test-mode=rndrd", "--csv=x", "--openmetrics=x"],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stdout
            .contains("--csv and --openmetrics name the same file"),
        "{}",
        r.stdout
    );
    assert!(!dir.path().join("x").exists());
}

//! The validation cases on published measurements
//! (`examples/validation/cases.toml`, run by `scripts/validate-published`):
//! every case is well formed and `tankbench simulate` accepts its system and
//! its fileio options. Accuracy is measured by the script and written in
//! docs/validation.md, never asserted here.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script() -> PathBuf {
    testkit::workspace_root().join("scripts/validate-published")
}

fn cases() -> PathBuf {
    testkit::workspace_root().join("examples/validation/cases.toml")
}

fn run(python: &Path, args: &[&str]) -> Output {
    Command::new(python)
        .arg(script())
        .arg("--bin")
        .arg(env!("CARGO_BIN_EXE_tankbench"))
        .args(args)
        .output()
        .expect("run scripts/validate-published")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn every_case_is_accepted_by_tankbench_simulate() {
    let python = testkit::require!("python3");
    let cases = cases();
    let o = run(&python, &["--check", "--cases", cases.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("55 rows") && out.contains("every case accepted"),
        "{out}"
    );
}

/// The published rows, kept in the repository so that a clone on its own
/// runs every check.
fn published_rows() -> PathBuf {
    testkit::workspace_root().join("examples/validation/published-sync.jsonl")
}

#[test]
fn the_cases_classify_every_published_row() {
    let python = testkit::require!("python3");
    let rows = published_rows();
    let o = run(
        &python,
        &[
            "--check",
            "--only",
            "PS-005",
            "--rows",
            rows.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The rows' home upstream: the folder `shared/validation/` beside the
/// checkout, where the project's measurements arrive (developers' machines
/// and CI have it; a clone on its own does not, and has nothing to compare).
fn upstream_rows() -> Option<PathBuf> {
    let path = testkit::workspace_root().join("../shared/validation/published-sync.jsonl");
    path.is_file().then_some(path)
}

/// Each line of a rows file by its id.
fn rows_by_id(path: &Path) -> std::collections::BTreeMap<String, serde_json::Value> {
    let text = std::fs::read_to_string(path).expect("read the rows");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON row");
            (v["id"].as_str().expect("an id").to_string(), v)
        })
        .collect()
}

#[test]
fn the_repository_holds_every_upstream_row_as_published() {
    let Some(upstream) = upstream_rows() else {
        eprintln!("no ../shared/validation beside the checkout: nothing to compare the copy with");
        return;
    };
    let ours = rows_by_id(&published_rows());
    let theirs = rows_by_id(&upstream);
    let missing: Vec<&String> = theirs.keys().filter(|id| !ours.contains_key(*id)).collect();
    assert!(
        missing.is_empty(),
        "examples/validation/published-sync.jsonl lacks rows of {}: {missing:?}; copy them in and classify them in cases.toml",
        upstream.display()
    );
    for (id, row) in &theirs {
        assert_eq!(&ours[id], row, "{id} differs from {}", upstream.display());
    }
}

#[test]
fn a_case_run_prints_its_prediction_beside_the_measured_figure() {
    let python = testkit::require!("python3");
    let o = run(&python, &["--only", "PS-043", "--no-interval", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let case = &v["cases"][0];
    assert_eq!(case["id"], "PS-043");
    assert_eq!(case["measured"], 18600);
    let predicted = case["predicted"].as_f64().expect("a predicted figure");
    let ratio = case["ratio"].as_f64().expect("a ratio");
    assert!(predicted > 0.0);
    assert!((ratio - predicted / 18600.0).abs() < 1e-9, "{case}");
}

/// A cases file in a temporary directory, with the system files it names.
fn bad_cases(dir: &Path, case_fields: &str, system: &str) -> PathBuf {
    std::fs::write(dir.join("sys.toml"), system).unwrap();
    let text = format!(
        r#"
[[row]]
id = "X-1"
status = "in"
reason = "test"

[[case]]
id = "X-1"
row = "X-1"
kind = "single-device"
system = "sys.toml"
measured_field = "write_iops"
source = "test"
{case_fields}
"#
    );
    let path = dir.join("cases.toml");
    std::fs::write(&path, text).unwrap();
    path
}

const GOOD_SYSTEM: &str =
    "[client]\nprotocol = \"local\"\n[pool]\nlayout = \"1xstripe\"\ndisk = \"nvme\"\n";
const GOOD_FIELDS: &str = r#"fileio = ["--file-num=1", "--file-total-size=1M", "--file-test-mode=rndwr", "--file-fsync-freq=1", "--events=100", "--time=0"]
metric = "writes_per_s"
measured = 100"#;

#[test]
fn a_malformed_case_or_a_refused_system_fails_the_check() {
    let python = testkit::require!("python3");
    let dir = tempfile::tempdir().unwrap();
    // The control: the same file with a good system and good fields passes.
    let good = bad_cases(dir.path(), GOOD_FIELDS, GOOD_SYSTEM);
    let o = run(&python, &["--check", "--cases", good.to_str().unwrap()]);
    assert!(o.status.success(), "control: {}", stderr(&o));

    let refused = [
        (
            GOOD_FIELDS.replace("writes_per_s", "iops"),
            GOOD_SYSTEM.to_string(),
            "metric 'iops'",
        ),
        (
            GOOD_FIELDS.replace("measured = 100", "measured = -1"),
            GOOD_SYSTEM.to_string(),
            "measured must be a positive number",
        ),
        (
            GOOD_FIELDS.to_string(),
            GOOD_SYSTEM.replace("nvme", "floppy"),
            "refused",
        ),
        (
            GOOD_FIELDS.replace("rndwr", "sideways"),
            GOOD_SYSTEM.to_string(),
            "refused",
        ),
    ];
    for (fields, system, expect) in refused {
        let path = bad_cases(dir.path(), &fields, &system);
        let o = run(&python, &["--check", "--cases", path.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{fields} / {system}");
        let err = stderr(&o);
        assert!(err.contains(expect), "{expect}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
}

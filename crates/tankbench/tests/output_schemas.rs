//! The JSON Schemas of the documents `plan`, `slog`, `probe` and `compare`
//! print with `--format=json`, as docs/run-result.schema.json is for a run:
//! each derived from the Rust type that serializes the document
//! (`schemars`), committed under docs/, and checked two ways here: the
//! committed file is what the type derives today, and real output of the
//! binary validates against it with Python's `jsonschema` package (the
//! tool a pipeline would check it with), while a document with a field
//! broken does not.
//!
//! After a change of one of the types, write the new schemas with
//! `TANKBENCH_WRITE_SCHEMA=1 cargo test -p tankbench --test output_schemas`
//! and commit them with the change.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const REGENERATE: &str = "TANKBENCH_WRITE_SCHEMA=1 cargo test -p tankbench --test output_schemas";

/// The documents: committed file name, its type's schema, the type's name.
fn schemas() -> [(&'static str, schemars::Schema, &'static str); 4] {
    [
        (
            "plan.schema.json",
            schemars::schema_for!(zfs_model::plan::Plan),
            "zfs_model::plan::Plan",
        ),
        (
            "slog-result.schema.json",
            schemars::schema_for!(fileio::slog::SlogResult),
            "fileio::slog::SlogResult",
        ),
        (
            "probe-result.schema.json",
            schemars::schema_for!(fileio::probe::ProbeResult),
            "fileio::probe::ProbeResult",
        ),
        (
            "compare.schema.json",
            schemars::schema_for!(report::compare::CompareDocument),
            "report::compare::CompareDocument",
        ),
    ]
}

fn docs(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(name)
}

/// A schema as the committed files hold it: pretty JSON, one final newline.
fn text(schema: &schemars::Schema) -> String {
    let mut text = serde_json::to_string_pretty(schema).expect("a schema serializes");
    text.push('\n');
    text
}

#[test]
fn the_committed_schemas_are_the_ones_the_types_derive() {
    for (name, schema, of) in schemas() {
        let path = docs(name);
        let derived = text(&schema);
        if std::env::var_os("TANKBENCH_WRITE_SCHEMA").is_some_and(|v| v == "1") {
            std::fs::write(&path, &derived).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            continue;
        }
        let committed = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (write it with {REGENERATE})", path.display()));
        assert!(
            committed == derived,
            "{} is not the schema of {of}; regenerate it with {REGENERATE} and commit it with \
             the change of the types",
            path.display()
        );
    }
}

/// python3 with `jsonschema`, installed once when missing; None after the
/// rule for peers.
fn python() -> Option<PathBuf> {
    let python = testkit::which("python3");
    let has = |p: &Path| {
        Command::new(p)
            .args(["-c", "import jsonschema"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if let Some(p) = &python {
        if !has(p) {
            let _ = testkit::output(Command::new(p).args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "jsonschema",
            ]));
        }
    }
    match python {
        Some(p) if has(&p) => Some(p),
        _ => {
            testkit::skip_or_fail(
                "needs python3 with the jsonschema package (python3 -m pip install jsonschema)",
            );
            None
        }
    }
}

/// Validate each (schema file, document file, field to break) with
/// jsonschema: the errors of the real documents (none expected), and
/// whether each document with its field set to a string of nonsense, or
/// removed when it is `-name`, is rejected.
const VALIDATE: &str = r#"
import copy, json, sys
import jsonschema
out = []
args = sys.argv[1:]
for schema_path, doc_path, field in zip(args[0::3], args[1::3], args[2::3]):
    schema = json.load(open(schema_path))
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    doc = json.load(open(doc_path))
    errors = [e.message for e in v.iter_errors(doc)]
    broken = copy.deepcopy(doc)
    if field.startswith("-"):
        broken.pop(field[1:])
    else:
        broken[field] = "nonsense"
    out.append({"doc": doc_path, "errors": errors, "broken_rejected": not v.is_valid(broken)})
print(json.dumps(out))
"#;

/// `tankbench ARGS` in `dir`, its stdout (asserting exit 0) saved as `file`.
fn saved_output(dir: &Path, args: &[&str], file: &str) -> PathBuf {
    let r = tb(dir, args);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    let path = dir.join(file);
    std::fs::write(&path, &r.stdout).unwrap();
    path
}

/// `compare --format=json` of two configurations of a real run, two
/// repeats each, saved as compare.json in `w`.
fn saved_compare(w: &Path) -> PathBuf {
    let files = [
        "--file-total-size=4M",
        "--file-num=2",
        "--file-block-size=4K",
    ];
    let r = tb(w, &[&["fileio"][..], &files, &["prepare"]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (sync, flag) in [
        ("each", "--file-fsync-all=on"),
        ("none", "--file-fsync-all=off"),
    ] {
        let label = format!("--label=fsync={sync}");
        let run = [
            "--file-test-mode=rndwr",
            "--time=1",
            "--progress=off",
            "--save",
            &label,
            "--repeat=2",
            flag,
            "run",
        ];
        let r = tb(w, &[&["fileio"][..], &files, &run].concat());
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let compare = saved_output(
        w,
        &["compare", "fsync=each", "fsync=none", "--format=json"],
        "compare.json",
    );
    let _ = tb(w, &[&["fileio"][..], &files, &["cleanup"]].concat());
    compare
}

#[test]
fn real_plan_slog_probe_and_compare_output_validates_against_the_schemas() {
    let d = scratch();
    let w = d.path();
    // plan: every layout (no intervals), and named layouts with a log
    // device, a link and intervals (every optional block present).
    let plan = saved_output(
        w,
        &["plan", "--disks", "24x8TB", "--format=json"],
        "plan.json",
    );
    let plan_full = saved_output(
        w,
        &[
            "plan",
            "--disks",
            "24x8TB",
            "--layout",
            "3xraidz2-8,12xmirror-2",
            "--log",
            "10GB",
            "--link",
            "2x10G",
            "--samples",
            "3",
            "--format=json",
        ],
        "plan-full.json",
    );
    std::fs::create_dir(w.join("target")).unwrap();
    let slog = saved_output(
        w,
        &[
            "slog",
            "target",
            "--count",
            "20",
            "--max-size",
            "8K",
            "--format=json",
        ],
        "slog.json",
    );
    let probe = saved_output(
        w,
        &["probe", "target", "--samples", "10", "--format=json"],
        "probe.json",
    );
    let compare = saved_compare(w);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&compare).unwrap()).unwrap();
    assert_eq!(doc["a"]["runs"], 2, "{doc}");
    assert!(doc["rows"][0]["t"].is_number(), "{doc}");

    // The documents hold what the test means them to hold.
    let full: Value = serde_json::from_str(&std::fs::read_to_string(&plan_full).unwrap()).unwrap();
    let perf = &full["entries"][0]["performance"];
    assert!(perf["predicted_with_log_interval"].is_object(), "{perf}");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&slog).unwrap()).unwrap();
    assert_eq!(s["sizes"].as_array().map(Vec::len), Some(5), "{s}");

    let Some(python) = python() else { return };
    let mut args: Vec<PathBuf> = Vec::new();
    for (schema, doc, field) in [
        ("plan.schema.json", &plan, "entries"),
        ("plan.schema.json", &plan_full, "-request"),
        ("slog-result.schema.json", &slog, "sizes"),
        ("probe-result.schema.json", &probe, "transport"),
        ("compare.schema.json", &compare, "rows"),
    ] {
        args.extend([docs(schema), doc.clone(), PathBuf::from(field)]);
    }
    let o = testkit::output(Command::new(&python).arg("-c").arg(VALIDATE).args(&args))
        .expect("run python3");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    for r in out.as_array().unwrap() {
        assert_eq!(r["errors"], Value::Array(vec![]), "{r}");
        assert_eq!(r["broken_rejected"], true, "a broken document passed: {r}");
    }
}

//! docs/run-result.schema.json is the JSON Schema of the result document, and
//! docs/interval-line.schema.json that of one line of `--intervals=FILE`,
//! both derived from the Rust types that serialize them (`schemars`). This
//! test derives them again and fails when a committed file differs, so the
//! schemas a pipeline checks tankbench's output against cannot drift from
//! what tankbench writes.
//!
//! After a change of `fileio::result::RunResult` (or a type inside it) or of
//! `fileio::export::intervals::IntervalLine`, write the new schemas with
//! `TANKBENCH_WRITE_SCHEMA=1 cargo test -p fileio --test run_result_schema`
//! and commit them with the change.

use fileio::export::intervals::IntervalLine;
use fileio::result::RunResult;
use std::path::PathBuf;

const REGENERATE: &str = "TANKBENCH_WRITE_SCHEMA=1 cargo test -p fileio --test run_result_schema";

/// A schema as the committed files hold it: pretty JSON, one final newline.
fn text(schema: &schemars::Schema) -> String {
    let mut text = serde_json::to_string_pretty(schema).expect("a schema serializes");
    text.push('\n');
    text
}

/// Compare the committed `docs/NAME` with `derived`, or write it with
/// TANKBENCH_WRITE_SCHEMA=1.
fn committed_is(name: &str, derived: &str, of: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(name);
    if std::env::var_os("TANKBENCH_WRITE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(&path, derived).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let committed = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (write it with {REGENERATE})", path.display()));
    if committed != derived {
        let first = committed
            .lines()
            .zip(derived.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(derived.lines().count()));
        panic!(
            "{} is not the schema of {of}: they differ from line {}; regenerate it with \
             {REGENERATE} and commit it with the change of the types",
            path.display(),
            first + 1
        );
    }
}

#[test]
fn the_committed_result_schema_is_the_one_the_types_derive() {
    committed_is(
        "run-result.schema.json",
        &text(&schemars::schema_for!(RunResult)),
        "fileio::result::RunResult",
    );
}

#[test]
fn the_committed_interval_line_schema_is_the_one_the_type_derives() {
    committed_is(
        "interval-line.schema.json",
        &text(&schemars::schema_for!(IntervalLine)),
        "fileio::export::intervals::IntervalLine",
    );
}

/// The check can fail: a schema with one change is not the committed one.
#[test]
fn a_changed_schema_is_told_apart() {
    let derived = text(&schemars::schema_for!(IntervalLine));
    let changed = derived.replacen("\"run\"", "\"run_number\"", 1);
    assert_ne!(derived, changed);
    let result = std::panic::catch_unwind(|| {
        if std::env::var_os("TANKBENCH_WRITE_SCHEMA").is_none() {
            committed_is("interval-line.schema.json", &changed, "a changed schema");
        } else {
            panic!("not compared while writing");
        }
    });
    assert!(result.is_err());
}

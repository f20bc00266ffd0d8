//! docs/run-result.schema.json is the JSON Schema of the result document,
//! derived from the Rust types that serialize it (`schemars`). This test
//! derives it again and fails when the committed file differs, so the schema a
//! pipeline checks results against cannot drift from what tankbench writes.
//!
//! After a change of `fileio::result::RunResult` (or a type inside it), write
//! the new schema with `TANKBENCH_WRITE_SCHEMA=1 cargo test -p fileio --test
//! run_result_schema` and commit it with the change.

use fileio::result::RunResult;
use std::path::PathBuf;

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/run-result.schema.json")
}

/// The schema as the committed file holds it: pretty JSON, one final newline.
fn derived() -> String {
    let schema = schemars::schema_for!(RunResult);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    text.push('\n');
    text
}

#[test]
fn the_committed_schema_is_the_one_the_types_derive() {
    let path = committed_path();
    let now = derived();
    if std::env::var_os("TANKBENCH_WRITE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(&path, &now).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (write it with TANKBENCH_WRITE_SCHEMA=1 cargo test -p fileio --test run_result_schema)",
            path.display()
        )
    });
    if committed != now {
        let first = committed
            .lines()
            .zip(now.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(now.lines().count()));
        panic!(
            "{} is not the schema of fileio::result::RunResult: they differ from line {}; \
             regenerate it with TANKBENCH_WRITE_SCHEMA=1 cargo test -p fileio --test run_result_schema \
             and commit it with the change of the types",
            path.display(),
            first + 1
        );
    }
}

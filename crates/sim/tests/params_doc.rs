//! docs/model-reference.md's parameter table is generated from the
//! parameter table in crates/sim/src/params.rs: this test fails when the two
//! disagree. `TANKBENCH_BLESS=1 cargo test -p sim --test params_doc`
//! rewrites the section from the code.

use std::path::PathBuf;

const BEGIN: &str = "<!-- BEGIN GENERATED: parameters";
const END: &str = "<!-- END GENERATED: parameters -->";

fn doc_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/model-reference.md")
}

/// The document with its generated section replaced by `table`.
fn with_table(doc: &str, table: &str) -> String {
    let start = doc
        .find(BEGIN)
        .expect("the BEGIN marker in docs/model-reference.md");
    let begin_end = start + doc[start..].find('\n').expect("a line after BEGIN") + 1;
    let end = doc
        .find(END)
        .expect("the END marker in docs/model-reference.md");
    assert!(begin_end <= end, "END before BEGIN");
    format!("{}{}{}", &doc[..begin_end], table, &doc[end..])
}

#[test]
fn the_documented_parameter_table_is_the_codes() {
    let path = doc_path();
    let doc = std::fs::read_to_string(&path).expect("read docs/model-reference.md");
    let expected = with_table(&doc, &sim::params::markdown_table());
    if std::env::var_os("TANKBENCH_BLESS").is_some() {
        if expected != doc {
            std::fs::write(&path, &expected).expect("write docs/model-reference.md");
        }
        return;
    }
    assert!(
        expected == doc,
        "docs/model-reference.md's parameter table differs from crates/sim/src/params.rs; \
         regenerate it with TANKBENCH_BLESS=1 cargo test -p sim --test params_doc"
    );
}

#[test]
fn a_changed_row_would_be_caught() {
    // The check above compares whole text: a table that differs in one
    // character is a different document.
    let doc = format!("a\n{BEGIN} x -->\nold\n{END}\nb\n");
    let new = with_table(&doc, "new\n");
    assert_ne!(new, doc);
    assert!(new.contains("\nnew\n<!-- END"));
}

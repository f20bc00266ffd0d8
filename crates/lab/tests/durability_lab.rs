//! The durability matrix from real parts (issue #15's proof): each cell is a
//! lab with its own zfs-fuse, a client mounting the pool over sshfs, and a
//! recorder in a third network namespace; `durability write` runs on the
//! client and the lab crashes at seeded random moments of the write phase.
//!
//! - The protected configurations (HDDs that honour flushes, with and
//!   without a log device with power-loss protection) must lose no
//!   acknowledged write over three crashes each.
//! - The negative controls (an export that acknowledges fsync without doing
//!   it; a log device whose flush lies) must lose acknowledged writes: if
//!   they lose none, the check cannot tell, and this test fails.
//!
//! Nothing of any lab may remain afterwards.

mod common;

use lab::experiments::durability::{DurabilityMatrix, Expect};
use std::path::{Path, PathBuf};

/// What the matrix's labs left behind: mounts, processes, network
/// namespaces (by the cells' name), the root directory.
fn leftovers(root: &Path) -> Vec<String> {
    let mut found = common::mounts_and_processes_under(root);
    for ns in std::fs::read_dir("/run/netns")
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = ns.file_name().to_string_lossy().into_owned();
        if name.starts_with(&format!("tb-{}-", common::run_name("d"))) {
            found.push(format!("network namespace {name}"));
        }
    }
    if root.exists() {
        found.push(format!("directory {}", root.display()));
    }
    found
}

/// Small and short: a mirror of two sparse HDDs, 2 x 4 MiB files written by
/// two threads, crashes 1 to 3 s after the first acknowledgement. The
/// controls crash twice: the lying log loses what its last 700 ms held, so
/// a writer stalled that long by a loaded machine right before one crash
/// could lose nothing there.
fn matrix(dir: &Path, root: &Path, seed: u64) -> PathBuf {
    let p = dir.join("durability.toml");
    std::fs::write(
        &p,
        format!(
            r#"
output = "{out}"
write = ["--file-num=2", "--file-total-size=8M", "--threads=2", "--commit=fsync"]
crashes = 3
seed = {seed}
crash_window_s = [1.0, 3.0]
[base]
name = "{name}"
root = "{root}"
[base.pool]
layout = "mirror"
disk = "hdd"
disk_size = "1GB"
[base.link]
kind = "1G"

[[cell]]
name = "PLP log on HDDs"
expect = "intact"
set = {{ "pool.log" = "ssd-sata:1GB" }}

[[cell]]
name = "no log, HDDs honour flushes"
expect = "intact"

[[cell]]
name = "export drops fsync"
expect = "loss"
export = "no-fsync"
crashes = 2

[[cell]]
name = "lying log on HDDs"
expect = "loss"
set = {{ "pool.log" = "ssd-sata-lying:1GB" }}
crashes = 2
"#,
            out = dir.join("durability").display(),
            name = common::run_name("d"),
            root = root.display(),
        ),
    )
    .unwrap();
    p
}

#[test]
fn protected_configurations_keep_acknowledged_writes_and_the_controls_lose_them() {
    testkit::require!(
        "root",
        "/dev/fuse",
        "zfs-fuse",
        "ip",
        "sshd",
        "ssh",
        "ssh-keygen",
        "sshfs"
    );
    let tankbench = common::tankbench();
    let root = common::lab_root("tb-durtest");
    let dir = tempfile::Builder::new()
        .prefix("tb-durtest-")
        .tempdir()
        .unwrap();
    // A fresh seed each run: the crash moments differ from run to run, and
    // the seed is printed so a failure can be repeated.
    let seed = u64::from(std::process::id());
    eprintln!("seed {seed}");
    let m = DurabilityMatrix::load(&matrix(dir.path(), &root, seed), None, None).unwrap();
    let opts = common::up_options(&tankbench, false);
    let results = m
        .run(&opts, &|s| eprintln!("{s}"))
        .expect("durability matrix");
    eprint!("{}", m.table(&results).to_terminal());
    assert_eq!(results.len(), 4);
    for r in &results {
        assert!(r.complete(), "{}: did not run to the end: {r:?}", r.name);
        let t = r.totals();
        assert_eq!(
            t.verified,
            m.cells.iter().find(|c| c.name == r.name).unwrap().crashes
        );
        match r.expect {
            Expect::Intact => {
                assert_eq!(t.verified, 3, "{}", r.name);
                assert!(t.acknowledged_writes > 0, "{}: nothing was acknowledged", r.name);
                assert_eq!(
                    (t.lost, t.torn, t.corrupt),
                    (0, 0, 0),
                    "{}: acknowledged writes lost (seed {seed})",
                    r.name
                );
            }
            Expect::Loss => assert!(
                t.lost + t.torn + t.corrupt > 0,
                "{}: the negative control lost no acknowledged write: the check is broken (seed {seed})",
                r.name
            ),
        }
        assert!(r.as_expected(), "{}: {}", r.name, r.verdict());
        // Every crash ended the writer through the storage's failure
        // (exit 2), not by the lab stopping it.
        for c in &r.crashes {
            assert_eq!(c.writer_exit, Some(2), "{}: {}", r.name, c.writer_line);
        }
    }
    // Every verify result is kept in the JSON document.
    let [md, json] = m.output_files();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let verifies = doc["cells"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["crashes"].as_array().unwrap().iter())
        .filter(|c| c["verify"]["durability"]["verdict"].is_string())
        .count();
    assert_eq!(verifies, 3 + 3 + 2 + 2);
    let table = std::fs::read_to_string(&md).unwrap();
    assert!(table.contains("| lying log on HDDs |"), "{table}");
    common::assert_nothing_left(&leftovers(&root));
}

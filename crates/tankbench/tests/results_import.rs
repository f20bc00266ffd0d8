//! `tankbench results import` through the binary (issue 21, item 5): fio
//! JSON and sysbench fileio reports go into the store as measured results,
//! `simulate calibrate` fits on them, and a file that is not a report, or
//! one already imported, is refused with one line and nothing stored.

mod common;

use common::{example_system, listing, refused_naming, scratch, tb, Run};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/data/import")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

const FIO: &str = "fio-randrw-4jobs-fsync1-group.json";
const SYSBENCH: &str = "sysbench-rndrw-4threads-fsyncall.txt";

/// `tankbench results import --store <store> <args>` in `dir`.
fn import(dir: &Path, store: &Path, args: &[&str]) -> Run {
    let mut words = vec!["results", "import", "--store", store.to_str().unwrap()];
    words.extend_from_slice(args);
    tb(dir, &words)
}

/// The JSON documents in a store directory, by name.
fn stored(dir: &Path) -> Vec<(String, serde_json::Value)> {
    listing(dir)
        .into_iter()
        .map(|(name, _)| {
            let doc = serde_json::from_slice(&std::fs::read(dir.join(&name)).unwrap()).unwrap();
            (name, doc)
        })
        .collect()
}

/// Refused: exit 1, one line on stderr naming each of `words`, the store as
/// it was.
#[track_caller]
fn refused(r: &Run, store: &Path, before: &[(String, u64)], words: &[&str]) {
    refused_naming(r, words);
    if before.is_empty() {
        assert!(!store.exists() || listing(store).is_empty(), "stored");
    } else {
        assert_eq!(listing(store), before, "the store changed");
    }
}

#[test]
fn fio_and_sysbench_reports_are_stored_as_measured_runs() {
    let d = scratch();
    let store = d.path().join("store");
    let (fio, sysbench) = (fixture(FIO), fixture(SYSBENCH));
    let r = import(
        d.path(),
        &store,
        &[
            "--label",
            "host=vm1",
            "--label=tool-run=imported",
            &fio,
            &sysbench,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr.matches("saved ").count(), 2, "{}", r.stderr);
    let docs = stored(&store);
    assert_eq!(docs.len(), 2, "{docs:?}");
    let fio_doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&fio).unwrap()).unwrap();
    let by_tool = |name: &str| {
        &docs
            .iter()
            .find(|(_, d)| d["tool"]["name"] == name)
            .unwrap_or_else(|| panic!("no {name} result"))
            .1
    };
    let f = by_tool("fio");
    assert_eq!(f["kind"], "measured");
    assert_eq!(f["labels"]["host"], "vm1");
    assert_eq!(f["labels"]["tool-run"], "imported");
    assert_eq!(
        f["rates"]["writes_per_s"],
        fio_doc["jobs"][0]["write"]["iops"]
    );
    assert_eq!(f["workload"]["mode"], "rndrw");
    assert_eq!(f["workload"]["threads"], 4);
    let s = by_tool("sysbench");
    assert_eq!(s["tool"]["version"], "1.0.20");
    let text = std::fs::read_to_string(&sysbench).unwrap();
    assert!(text.contains(&format!(
        "writes/s:                     {}",
        s["rates"]["writes_per_s"]
    )));

    // The store lists them like any run.
    let r = tb(
        d.path(),
        &["results", store.to_str().unwrap(), "--format=csv"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 3, "{}", r.stdout);

    // Importing the same report again would make a false repeat.
    let before = listing(&store);
    let r = import(d.path(), &store, &[&fio]);
    refused(&r, &store, &before, &[FIO, "already in"]);
}

#[test]
fn a_file_that_is_not_a_report_stores_nothing() {
    let d = scratch();
    let store = d.path().join("store");
    let notes = d.path().join("notes.txt");
    std::fs::write(&notes, "not a benchmark report\n").unwrap();
    let r = import(d.path(), &store, &[&fixture(FIO), notes.to_str().unwrap()]);
    refused(&r, &store, &[], &["notes.txt", "fio JSON", "sysbench"]);

    // A fio job fileio cannot run, in an existing store: left as it was.
    let r = import(d.path(), &store, &[&fixture(SYSBENCH)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let before = listing(&store);
    let r = import(
        d.path(),
        &store,
        &[&fixture("fio-readwrite-sequential-mixed.json")],
    );
    refused(&r, &store, &before, &["'mixed'", "rw=readwrite"]);

    // A bad label, a missing file, a store that is a file.
    let r = tb(
        d.path(),
        &["results", "import", "--label", "novalue", &fixture(FIO)],
    );
    refused(&r, &d.path().join("tankbench-results"), &[], &["--label"]);
    let r = import(d.path(), &store, &["missing.json"]);
    refused(&r, &store, &before, &["missing.json"]);
    let r = import(d.path(), &notes, &[&fixture(FIO)]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("not a directory"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "not a benchmark report\n"
    );
}

#[test]
fn calibrate_fits_on_imported_runs() {
    let d = scratch();
    let store = d.path().join("store");
    let r = import(d.path(), &store, &[&fixture(FIO), &fixture(SYSBENCH)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let system = example_system("this-machine-ext4.toml");
    let r = tb(
        d.path(),
        &[
            "simulate",
            "calibrate",
            "--system",
            &system,
            "--fit",
            "commit_device.flush_ms",
            "--save-profile",
            "fitted.toml",
            store.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert!(r.stdout.contains("writes/s"), "{}", r.stdout);
    let profile = std::fs::read_to_string(d.path().join("fitted.toml")).unwrap();
    assert!(profile.contains("commit_device.flush_ms"), "{profile}");
}

#[test]
fn live_fio_output_imports_through_the_binary() {
    let fio = testkit::require!("fio");
    let d = scratch();
    let out = std::process::Command::new(fio)
        .args([
            "--name=live",
            &format!("--directory={}", d.path().display()),
            "--rw=randwrite",
            "--bs=4k",
            "--fsync=1",
            "--size=4M",
            "--runtime=1",
            "--time_based=1",
            "--output-format=json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let report = d.path().join("live.json");
    std::fs::write(&report, &out.stdout).unwrap();
    let store = d.path().join("store");
    let r = import(d.path(), &store, &[report.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let fio_doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let docs = stored(&store);
    assert_eq!(docs.len(), 1);
    let doc = &docs[0].1;
    assert_eq!(
        doc["rates"]["writes_per_s"],
        fio_doc["jobs"][0]["write"]["iops"]
    );
    assert_eq!(
        doc["counts"]["fsyncs"],
        fio_doc["jobs"][0]["sync"]["lat_ns"]["N"]
    );
    assert_eq!(doc["workload"]["fsync_all"], true);
}

/// Issue 37: eight imports of one fio report at the same moment store it
/// once; each of the others is refused in one line naming the stored id.
#[test]
fn concurrent_imports_of_one_report_store_it_once() {
    let d = scratch();
    let store = d.path().join("store");
    let fio = fixture(FIO);
    let children: Vec<_> = (0..8)
        .map(|_| {
            std::process::Command::new(common::tankbench_bin())
                .current_dir(d.path())
                .args([
                    "results",
                    "import",
                    "--store",
                    store.to_str().unwrap(),
                    &fio,
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let docs = stored(&store);
    assert_eq!(docs.len(), 1, "stored {} times", docs.len());
    let id = docs[0].0.trim_end_matches(".json");
    let ok = outputs.iter().filter(|o| o.status.success()).count();
    assert_eq!(ok, 1);
    for o in outputs.iter().filter(|o| !o.status.success()) {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("already in") && err.contains(id), "{err}");
    }
}

//! ZFS facts of real runs on a zfs-fuse pool (a raidz of three files with a
//! log file): what the result records is what `zpool status` and `zfs get`
//! print; zfs-fuse records why it has no iostat samples.
//!
//! Needs root, /dev/fuse and zfs-fuse; otherwise skipped with the reason
//! (failed under TANKBENCH_REQUIRE_PEERS=1), by testkit's one rule.

use fileio::result::RunResult;
use fileio::zfs_facts::{Platform, VdevKind, ZfsFacts};
use std::path::Path;
use std::process::Command;

fn run(program: &str, args: &[&str]) -> String {
    let out = testkit::output(Command::new(program).args(args))
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `tankbench fileio` through the library front end, in `dir`; the results.
fn fileio(dir: &Path, words: &[&str]) -> Vec<RunResult> {
    let mut all: Vec<String> = vec![format!("--file-dir={}", dir.display())];
    all.extend(words.iter().map(|w| w.to_string()));
    let inv = fileio::sysbench::cli::execute(&all);
    assert_eq!(inv.exit_code, 0, "fileio {words:?}");
    inv.results
}

const SET: [&str; 2] = ["--file-total-size=32M", "--file-num=2"];

/// The dataset and its properties against `zfs get`.
fn check_dataset(zfs: &ZfsFacts, name: &str, r: &RunResult) {
    // The dataset and its properties: what `zfs get` prints, one by one.
    let dataset = zfs.dataset.as_ref().expect("the dataset");
    assert_eq!(dataset.name, name);
    for p in [
        "recordsize",
        "logbias",
        "primarycache",
        "compression",
        "atime",
        "copies",
    ] {
        let line = run("zfs", &["get", "-H", "-p", "-o", "value,source", p, name]);
        let (value, source) = line.trim_end().split_once('\t').unwrap();
        let recorded = &dataset.properties[p];
        assert_eq!(
            (recorded.value.as_str(), recorded.source.as_str()),
            (value, source),
            "{p}"
        );
    }
    // zfs-fuse has no sync property and behaves as sync=standard.
    assert_eq!(dataset.properties["sync"].value, "standard");
    assert_eq!(dataset.properties["sync"].source, "implied");
    assert_eq!(
        r.environment.compression.as_deref(),
        dataset.property("compression")
    );
}

/// The layout against the vdevs the pool was made of and `zpool status`.
fn check_layout(zfs: &ZfsFacts, name: &str, files: &[String]) {
    // The layout: the vdevs it was created with, as `zpool status` lists them.
    let layout = zfs.pool.as_ref().expect("the pool layout");
    let status = run("zpool", &["status", name]);
    assert_eq!(layout.name, name);
    assert_eq!(layout.state, "ONLINE");
    assert_eq!(layout.version, Some(23));
    assert_eq!(layout.data.len(), 1);
    let raidz = &layout.data[0];
    assert_eq!((raidz.kind, raidz.parity), (VdevKind::Raidz, Some(1)));
    assert!(
        status.contains(&format!("\t  {}  ", raidz.name)),
        "{status}"
    );
    assert_eq!(
        raidz.devices(),
        files[..3].iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert_eq!(layout.logs.len(), 1);
    assert_eq!(layout.logs[0].name, files[3]);
    assert!(layout.cache.is_empty() && layout.special.is_empty());
    for f in files {
        let line = status.lines().find(|l| l.contains(f.as_str())).unwrap();
        assert!(line.contains("ONLINE"), "{line}");
    }
    assert_eq!(zfs.version.as_deref(), Some("zfs-fuse, pool version 23"));
}

#[test]
fn a_run_on_zfs_fuse_records_the_pool_the_dataset_and_iostat() {
    testkit::require!("root", "/dev/fuse", "zfs-fuse");
    let pool = testkit::ZfsPool::new("facts");
    let (mount, files) = pool.create_raidz_with_log();
    let name = pool.name().to_string();
    fileio(&mount, &[SET[0], SET[1], "fileio", "prepare"]);
    let results = fileio(
        &mount,
        &[
            SET[0],
            SET[1],
            "--file-test-mode=rndwr",
            "--file-fsync-freq=10",
            "--file-data=random",
            "--time=4",
            "fileio",
            "run",
        ],
    );
    let r = &results[0];
    let zfs: &ZfsFacts = r.environment.zfs.as_ref().expect("zfs facts");
    assert_eq!(zfs.absent, None);
    assert_eq!(zfs.platform, Some(Platform::ZfsFuse));

    check_dataset(zfs, &name, r);
    check_layout(zfs, &name, &files);
    // What zfs-fuse cannot tell, with the reasons.
    assert!(zfs.arc.is_none());
    assert!(
        zfs.missing["arc"].contains("zfs-fuse publishes no ARC statistics"),
        "{:?}",
        zfs.missing
    );
    assert!(
        zfs.missing["txg_timeout_s"].contains("zfs-fuse"),
        "{:?}",
        zfs.missing
    );

    // iostat is not sampled on zfs-fuse (it stalled a run's FUSE requests
    // here); the reason is recorded instead. The sample parsers are checked on
    // recorded output (zfs_formats.rs).
    assert!(zfs.iostat.is_empty());
    assert!(
        zfs.missing["iostat"].contains("not sampled on zfs-fuse"),
        "{:?}",
        zfs.missing
    );

    // 4 s of writes is less than 3 x the 5 s txg timeout.
    let codes: Vec<&str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
    assert!(codes.contains(&"shorter_than_txg_syncs"), "{codes:?}");
    assert!(!codes.contains(&"sync_disabled"), "{codes:?}");

    // The JSON round trip keeps every fact.
    let back: RunResult = serde_json::from_str(&serde_json::to_string(r).unwrap()).unwrap();
    assert_eq!(back.environment.zfs.as_ref(), Some(zfs));
    fileio(&mount, &[SET[0], SET[1], "fileio", "cleanup"]);
}

#[test]
fn a_run_on_another_file_system_has_no_zfs_facts() {
    let dir = tempfile::tempdir().unwrap();
    let env = fileio::environment::capture(dir.path(), false);
    if env.fs_type.contains("zfs") {
        return; // the temp dir is on ZFS here: nothing to show
    }
    assert_eq!(env.zfs, None);
    let json = serde_json::to_value(&env).unwrap();
    assert!(json.get("zfs").is_none(), "{json}");
}

#[test]
fn an_nfs_target_says_the_servers_zfs_is_not_visible() {
    let env = fileio::environment::capture(Path::new("nfs://127.0.0.1/export"), false);
    assert_eq!(
        env.zfs.unwrap().absent.as_deref(),
        Some("remote NFS target: the server's ZFS is not visible from the client")
    );
}

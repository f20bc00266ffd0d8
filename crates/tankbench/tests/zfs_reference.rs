//! The reference user's two sysbench commands, scaled down, on a real ZFS pool
//! (zfs-fuse, sparse files as vdevs, one of them a separate log device).

mod common;

use common::*;
use std::path::PathBuf;
use std::process::Command;

/// A zfs-fuse pool on sparse files, destroyed on drop (even when a test fails)
/// by the shared guard.
struct Pool {
    _guard: testkit::ZfsPool,
    mountpoint: PathBuf,
}

impl Pool {
    /// The pool, or None when this machine cannot build one: skipped with the
    /// reason printed, or failed under TANKBENCH_REQUIRE_PEERS=1 (CI).
    fn create(tag: &str) -> Option<Pool> {
        testkit::require(["root", "/dev/fuse", "zfs-fuse"])?;
        let guard = testkit::ZfsPool::new(&format!("fileio-{tag}"));
        let dir = guard.dir().to_path_buf();
        let mut vdevs = Vec::new();
        for i in 0..3 {
            let f = dir.join(format!("disk{i}"));
            std::fs::File::create(&f).unwrap().set_len(2 << 30).unwrap();
            vdevs.push(f.to_string_lossy().into_owned());
        }
        let log = dir.join("log");
        std::fs::File::create(&log)
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        let mountpoint = dir.join("mnt");
        let status = Command::new("zpool")
            .args(["create", "-f", "-m"])
            .arg(&mountpoint)
            .arg(guard.name())
            .arg("raidz")
            .args(&vdevs)
            .arg("log")
            .arg(&log)
            .status()
            .expect("run zpool");
        assert!(status.success(), "zpool create {}", guard.name());
        Some(Pool {
            _guard: guard,
            mountpoint,
        })
    }
}

#[test]
fn reference_workload_on_zfs_with_a_log_device() {
    let Some(pool) = Pool::create("ref") else {
        return;
    };
    let dir = &pool.mountpoint;
    let prepare = tb(dir, &["--test=fileio", "--file-total-size=256M", "prepare"]);
    assert_eq!(prepare.code, 0, "{}{}", prepare.stdout, prepare.stderr);
    assert!(prepare
        .stdout
        .contains("128 files, 2048Kb each, 256Mb total"));
    let run = tb(
        dir,
        &[
            "--test=fileio",
            "--file-total-size=256M",
            "--file-test-mode=rndrw",
            "--max-time=5",
            "--max-requests=0",
            "--file-block-size=4K",
            "--num-threads=4",
            "--file-fsync-all",
            "--json=result.json",
            "run",
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let reads = report_value(&run.stdout, "reads/s:");
    let writes = report_value(&run.stdout, "writes/s:");
    let fsyncs = report_value(&run.stdout, "fsyncs/s:");
    assert!(writes > 0.0, "{}", run.stdout);
    // Four threads read stale completion counts, so the ratio is near, not at, 1.5.
    assert!(
        (reads / writes - 1.5).abs() < 0.1,
        "reads/writes = {}",
        reads / writes
    );
    // Equal counts over the same time print the same text, which parses to the
    // same f64: exact equality is the check.
    #[allow(clippy::float_cmp)]
    let same_rate = fsyncs == writes;
    assert!(
        same_rate,
        "one fsync per write, no other fsyncs: {fsyncs} vs {writes}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(v["counts"]["fsyncs"], v["counts"]["writes"]);
    // The report explains why reads follow writes here.
    let codes: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(
        codes.contains(&"reads_paced_by_writes"),
        "{codes:?}\n{}",
        run.stdout
    );
    assert!(codes.contains(&"reads_from_page_cache"), "{codes:?}");
    let cleanup = tb(dir, &["--test=fileio", "--file-total-size=256M", "cleanup"]);
    assert_eq!(cleanup.code, 0);
    assert_eq!(
        listing(dir),
        vec![(
            "result.json".to_string(),
            std::fs::metadata(dir.join("result.json")).unwrap().len()
        )]
    );
}

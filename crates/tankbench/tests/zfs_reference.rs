//! The reference user's two sysbench commands, scaled down, on a real ZFS pool
//! (zfs-fuse, sparse files as vdevs, one of them a separate log device).

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A zfs-fuse pool on sparse files, destroyed on drop (even when a test fails).
struct Pool {
    name: String,
    mountpoint: PathBuf,
    _dir: tempfile::TempDir,
}

impl Pool {
    fn create(tag: &str) -> Option<Pool> {
        if !is_root() {
            eprintln!("SKIP: building a ZFS pool needs root (CI runs as root)");
            return None;
        }
        if !Path::new("/dev/fuse").exists() {
            eprintln!("SKIP: /dev/fuse is missing; zfs-fuse needs FUSE");
            return None;
        }
        let up = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/zfs-fuse-up");
        let ok = Command::new(&up)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            eprintln!("SKIP: zfs-fuse is not available (scripts/test installs it: apt-get install zfs-fuse)");
            return None;
        }
        let dir = scratch();
        let name = format!("tb-fileio-{tag}-{}", std::process::id());
        let mut vdevs = Vec::new();
        for i in 0..3 {
            let f = dir.path().join(format!("disk{i}"));
            std::fs::File::create(&f).unwrap().set_len(2 << 30).unwrap();
            vdevs.push(f.to_string_lossy().into_owned());
        }
        let log = dir.path().join("log");
        std::fs::File::create(&log)
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        let mountpoint = dir.path().join("mnt");
        let status = Command::new("zpool")
            .args(["create", "-f", "-m"])
            .arg(&mountpoint)
            .arg(&name)
            .arg("raidz")
            .args(&vdevs)
            .arg("log")
            .arg(&log)
            .status()
            .expect("run zpool");
        assert!(status.success(), "zpool create {name}");
        Some(Pool {
            name,
            mountpoint,
            _dir: dir,
        })
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // zfs-fuse refuses a destroy while it is still busy with the pool
        // (syncing after the run): retry, and say so if the pool stays, so a
        // leak never goes unnoticed.
        let mut last_error = String::new();
        for _ in 0..40 {
            match Command::new("zpool")
                .args(["destroy", "-f", &self.name])
                .output()
            {
                Ok(out) if out.status.success() && !self.listed() => return,
                Ok(out) => last_error = String::from_utf8_lossy(&out.stderr).into_owned(),
                Err(e) => last_error = e.to_string(),
            }
            if !self.listed() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        eprintln!(
            "WARNING: could not destroy pool {}: {last_error}",
            self.name
        );
    }
}

impl Pool {
    fn listed(&self) -> bool {
        Command::new("zpool")
            .args(["list", "-H", "-o", "name"])
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .any(|l| l == self.name)
            })
            .unwrap_or(true)
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
    assert_eq!(fsyncs, writes, "one fsync per write, no other fsyncs");
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

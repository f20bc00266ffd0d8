//! NFS access from real parts: a pool with a log device on the lab's FUSE
//! disks, nfs-ganesha exporting it in the server namespace, and fileio's NFS
//! client in the client namespace. The trace of a commit is the log device:
//! ZFS writes and flushes it for every synchronous write it is asked for
//! (zil_commit), and not at all for asynchronous writes. So stable writes (the
//! `nfs-stable` access, ESXi's semantics) must each reach the log device, and
//! unstable writes without fsync must not.

mod common;

use lab::lab::Lab;
use lab::spec::LabSpec;
use std::path::Path;

fn spec(root: &Path) -> LabSpec {
    let text = format!(
        r#"
name = "n{pid}"
root = "{root}"
access = "nfs"
[pool]
layout = "mirror"
disk = "hdd"
disk_size = "1TB"
recordsize = "4K"
log = "ssd-plp:1GB"
[link]
kind = "10G"
"#,
        root = root.display(),
        // Unique per test process (names are at most 8 characters), so a
        // run beside another never meets its pool.
        pid = std::process::id() % 1_000_000,
    );
    LabSpec::from_toml(&text).unwrap()
}

/// Writes of the run, and the log device's (writes, flushes) over the whole
/// workload (prepare, run, cleanup).
fn log_traffic(lab: &Lab, tankbench: &Path, extra: &[&str]) -> (u64, u64, u64) {
    let log = |lab: &Lab| {
        let s = lab.disk_stats_now();
        let l = s
            .iter()
            .find(|d| d.name == "tb-log0")
            .expect("log disk stats");
        (l.writes, l.flushes)
    };
    let before = log(lab);
    let mut args: Vec<String> = [
        "--file-total-size=8M",
        "--file-num=1",
        "--file-test-mode=rndwr",
        "--file-block-size=4K",
        "--threads=1",
        "--events=300",
        "--time=0",
        "--file-fsync-freq=0",
        "--file-fsync-end=off",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = lab::experiments::run::run_workload(lab, tankbench, &args).expect("workload");
    let after = log(lab);
    (
        out.result.counts.writes,
        after.0 - before.0,
        after.1 - before.1,
    )
}

/// Whether the lab's ganesha has (the export, the lab's disk mount) in its
/// mount namespace.
fn ganesha_sees(lab: &Lab, root: &Path) -> (bool, bool) {
    let info = lab.info().unwrap();
    let root = root.display().to_string();
    let Some(ganesha) = lab::parts::sys::all_pids().into_iter().find(|&p| {
        let cmd = lab::parts::sys::pid_cmdline(p);
        cmd.first().is_some_and(|c| c.ends_with("ganesha.nfsd"))
            && cmd.iter().any(|a| a.starts_with(&root))
    }) else {
        return (false, false);
    };
    let mounts = std::fs::read_to_string(format!("/proc/{ganesha}/mountinfo")).unwrap_or_default();
    let has = |p: &Path| {
        let p = p.display().to_string();
        mounts
            .lines()
            .any(|l| l.split(' ').nth(4) == Some(p.as_str()))
    };
    (has(&info.pool_mountpoint), has(&info.disk_mount))
}

#[test]
fn stable_nfs_writes_each_reach_the_log_device_and_unstable_ones_do_not() {
    testkit::require!(
        "root",
        "/dev/fuse",
        "zfs-fuse",
        "ip",
        "tc",
        "rpcbind",
        "ganesha.nfsd"
    );
    let tankbench = common::tankbench();
    let root = common::lab_root("tb-nfslabtest");
    let opts = common::up_options(&tankbench, false);
    let lab = Lab::up(&spec(&root), &opts).expect("lab up");
    assert!(lab
        .info()
        .unwrap()
        .nfs_url
        .as_deref()
        .unwrap()
        .starts_with("nfs://10.77.0.2/"));
    let (export_there, disks_there) = ganesha_sees(&lab, &root);
    let stable = log_traffic(&lab, &tankbench, &["--file-extra-flags=sync"]);
    let unstable = log_traffic(&lab, &tankbench, &[]);
    lab.down().expect("lab down");
    assert!(
        !root.exists(),
        "lab root {} was not removed",
        root.display()
    );
    // ganesha's private mount namespace holds the export and no other FUSE
    // mount: a copy of one (here the lab's own disks) would keep that file
    // system alive after its owner unmounts it, and zfs-fuse would then
    // refuse to destroy its pool as busy.
    assert!(export_there, "the export is in ganesha's namespace");
    assert!(
        !disks_there,
        "the lab's disk mount was copied into ganesha's namespace"
    );
    eprintln!("stable (writes, log writes, log flushes): {stable:?}; unstable: {unstable:?}");
    let (writes, _, flushes) = stable;
    assert_eq!(writes, 300);
    assert!(
        flushes >= writes,
        "every FILE_SYNC write is a ZIL commit: {stable:?}"
    );
    let (writes, log_writes, _) = unstable;
    assert_eq!(writes, 300);
    assert!(
        log_writes * 10 < writes,
        "unstable writes without fsync commit nothing: {unstable:?}"
    );
}

//! `--forced-shutdown` ends a run whose requests would not end by themselves,
//! as sysbench's shutdown thread does: the binary exits with code 2 right
//! after the report, without waiting for the stuck request.

mod common;

use common::{scratch, tb};
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn a_stuck_request_does_not_delay_the_forced_shutdown() {
    let d = scratch();
    let set = ["fileio", "--file-total-size=1M", "--file-num=1"];
    assert_eq!(tb(d.path(), &[&set[..], &["prepare"]].concat()).code, 0);
    // Every request takes 60 s (an injected delay stands in for a hung NFS
    // server); the deadline is --time + 1 s.
    let start = Instant::now();
    let out = Command::new(common::tankbench_bin())
        .current_dir(d.path())
        .args(set)
        .args([
            "--file-test-mode=rndrd",
            "--threads=2",
            "--time=1",
            "--forced-shutdown=1",
            "--tb-inject-latency=fixed:60s",
            "run",
        ])
        .output()
        .expect("run tankbench");
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("FATAL: The --max-time limit has expired, forcing shutdown..."),
        "{stdout}"
    );
    // Not a timing assertion of the run: only that the process did not wait
    // for the 60 s request (the deadline is at 2 s).
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert_eq!(tb(d.path(), &[&set[..], &["cleanup"]].concat()).code, 0);
}

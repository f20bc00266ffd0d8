//! `--forced-shutdown` through the sysbench front end, against the real
//! sysbench 1.0.20: the FATAL line, the report, exit code 2 and nothing after
//! the report. The invocation runs in this process, so it must return its
//! exit code rather than end the process.

use fileio::sysbench::cli;
use std::path::Path;
use std::process::Command;

const FATAL: &str = "FATAL: The --max-time limit has expired, forcing shutdown...";

/// One request a second on average: the worker is still waiting for an
/// arrival when the deadline (the 1 s time limit plus 0 s) passes.
fn words(dir: &Path) -> Vec<String> {
    [
        "fileio",
        "--file-total-size=1M",
        "--file-num=2",
        "--file-test-mode=rndrd",
        "--threads=1",
        "--time=1",
        "--rate=1",
        "--forced-shutdown=0",
        "run",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(std::iter::once(format!("--file-dir={}", dir.display())))
    .collect()
}

fn prepare(dir: &Path) {
    let mut w = words(dir);
    w.retain(|s| s != "run");
    w.push("prepare".into());
    assert_eq!(cli::execute(&w).exit_code, 0);
}

#[test]
fn forced_shutdown_returns_exit_code_two_like_sysbench() {
    let d = tempfile::tempdir().unwrap();
    prepare(d.path());
    let invocation = cli::execute(&words(d.path()));
    assert_eq!(invocation.exit_code, 2);
    assert!(invocation.results.is_empty());

    let sysbench = testkit::require!("sysbench");
    let s = tempfile::tempdir().unwrap();
    let mut w = words(s.path());
    w.retain(|a| !a.starts_with("--file-dir="));
    let prepared = Command::new(&sysbench)
        .current_dir(s.path())
        .args(w.iter().filter(|a| *a != "run"))
        .arg("prepare")
        .output()
        .unwrap();
    assert!(prepared.status.success());
    let out = Command::new(&sysbench)
        .current_dir(s.path())
        .args(&w)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(invocation.exit_code));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // What tankbench's observer prints (the FATAL line, then the report) and
    // what its front end leaves out after a forced shutdown ("Done.").
    assert!(stdout.contains(FATAL), "{stdout}");
    assert!(!stdout.contains("Done."), "{stdout}");
}

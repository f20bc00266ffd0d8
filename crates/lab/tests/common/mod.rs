//! Shared helpers of the lab's integration tests: prerequisites (with a clear
//! reason when skipping) and the tankbench binary.

#![allow(dead_code)]

use std::path::PathBuf;

/// `Some(reason)` when this machine cannot run real-parts lab tests. With
/// `TANKBENCH_LAB_REQUIRED=1` (set in CI, which runs as root) a missing
/// prerequisite fails the test instead of skipping it.
pub fn skip_reason(programs: &[&str]) -> Option<String> {
    let mut missing = Vec::new();
    if unsafe { libc::geteuid() } != 0 {
        missing.push("root".to_string());
    }
    if !std::path::Path::new("/dev/fuse").exists() {
        missing.push("/dev/fuse".to_string());
    }
    for p in programs {
        if lab::sys::which(p).is_none() {
            missing.push(format!("program {p}"));
        }
    }
    if missing.is_empty() {
        return None;
    }
    let reason = format!("needs {}", missing.join(", "));
    if std::env::var("TANKBENCH_LAB_REQUIRED").is_ok_and(|v| v == "1") {
        panic!("TANKBENCH_LAB_REQUIRED=1 but this machine cannot run the lab: {reason}");
    }
    Some(reason)
}

#[allow(unused_macros)]
macro_rules! require_lab {
    ($($p:expr),*) => {
        if let Some(reason) = common::skip_reason(&[$($p),*]) {
            eprintln!("SKIP {}: {reason}", module_path!());
            return;
        }
    };
}
#[allow(unused_imports)]
pub(crate) use require_lab;

/// The tankbench binary, built if needed: `TANKBENCH_BIN`, else
/// `cargo build -p tankbench` and target/debug/tankbench.
pub fn tankbench() -> PathBuf {
    if let Some(p) = std::env::var_os("TANKBENCH_BIN") {
        return PathBuf::from(p);
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().unwrap().parent().unwrap();
    let st = std::process::Command::new(cargo)
        .args(["build", "-q", "-p", "tankbench"])
        .current_dir(workspace)
        .status()
        .expect("run cargo build -p tankbench");
    assert!(st.success(), "cargo build -p tankbench failed");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    let bin = target.join("debug").join("tankbench");
    assert!(bin.is_file(), "{} missing after build", bin.display());
    bin
}

//! Shared helpers of the lab's integration tests: the tankbench binary.
//! Prerequisites (root, /dev/fuse, programs) go through `testkit::require!`.

#![allow(dead_code)]

use std::path::PathBuf;

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

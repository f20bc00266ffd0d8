//! Shared helpers of the lab's integration tests: the tankbench binary, lab
//! roots and options, the checks that nothing is left behind, and mounted
//! FUSE disks. Prerequisites (root, /dev/fuse, programs) go through
//! `testkit::require!` in each test.

#![allow(dead_code)]

use lab::parts::diskfs::{is_fuse_mount, DiskConfig, DiskFs, DiskFsServer, DiskSetConfig};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

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

/// A lab name unique to this test process: `prefix` and the process id in
/// base 36 (a lab name holds at most 8 characters). Network namespaces and
/// kernel pools are named after the lab and are global to the machine: a
/// fixed name meets the leftovers of a run that was killed before its
/// teardown (or a run beside it) and fails for a reason that is not the
/// test's.
pub fn run_name(prefix: &str) -> String {
    let mut pid = std::process::id();
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit(pid % 36, 36).unwrap());
        pid /= 36;
        if pid == 0 {
            break;
        }
    }
    let name: String = prefix.chars().chain(digits.into_iter().rev()).collect();
    assert!(
        name.len() <= 8,
        "lab name {name} is longer than 8 characters"
    );
    name
}

/// Where a test's labs live: `/var/tmp/<name>-<pid>`, so a run beside
/// another never meets its labs.
pub fn lab_root(name: &str) -> PathBuf {
    PathBuf::from(format!("/var/tmp/{name}-{}", std::process::id()))
}

/// How the tests bring a lab up: with `tankbench`, progress on stderr.
pub fn up_options(tankbench: &Path, measure: bool) -> lab::lab::UpOptions {
    lab::lab::UpOptions {
        tankbench: tankbench.to_path_buf(),
        measure,
        disk_trace: None,
        progress: Box::new(|s| eprintln!("{s}")),
    }
}

/// What of a lab under `root` is still there that every lab leaves the same
/// way: mounts below `root`, live processes whose command line names it.
pub fn mounts_and_processes_under(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for m in lab::parts::sys::mounts() {
        if m.target.starts_with(root) {
            found.push(format!("mount {}", m.target.display()));
        }
    }
    let root_s = root.display().to_string();
    for pid in lab::parts::sys::all_pids() {
        let cmd = lab::parts::sys::pid_cmdline(pid);
        if lab::parts::sys::pid_alive(pid) && cmd.iter().any(|a| a.contains(&root_s)) {
            found.push(format!("process {pid}: {}", cmd.join(" ")));
        }
    }
    found
}

/// Fails the test, listing them, if any leftovers were found.
#[track_caller]
pub fn assert_nothing_left(leftovers: &[String]) {
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
}

/// A set of the lab's FUSE disks mounted at `<dir>/disks`, served by a
/// background session; unmounted when dropped, and the session's thread
/// joined before the directory goes: the file system writes its final
/// counters (stats.json) as it is unmounted, and a directory removed while
/// that write is on its way is left behind with the file in it.
pub struct MountedDisks {
    session: Option<fuser::BackgroundSession>,
    pub dir: tempfile::TempDir,
}

impl Drop for MountedDisks {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            if let Err(e) = session.umount_and_join() {
                eprintln!("unmounting the test disks: {e}");
            }
        }
    }
}

impl MountedDisks {
    /// Unmount (the daemon writes its last counters and trace) and keep
    /// the directory.
    pub fn unmount(mut self) -> tempfile::TempDir {
        if let Some(session) = self.session.take() {
            session.umount_and_join().expect("unmount the test disks");
        }
        let empty = tempfile::tempdir().expect("a placeholder directory");
        std::mem::replace(&mut self.dir, empty)
    }

    /// A disk file (or the control file) of the mount.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join("disks").join(name)
    }

    /// A disk opened for reading and writing.
    pub fn open(&self, name: &str) -> File {
        OpenOptions::new()
            .read(true)
            .write(true)
            .open(self.path(name))
            .unwrap()
    }
}

/// Mount disks in a fresh directory (named `<prefix>...`) as the file system
/// `fsname`; `disks` makes their configurations, backing files in the
/// directory it is given. With `stats`, the disks' stats file is
/// `<dir>/stats.json`; with `trace`, their request trace is
/// `<dir>/trace.txt`. Needs root and /dev/fuse (the caller checks).
pub fn mount_disks(
    prefix: &str,
    fsname: &str,
    (stats, trace): (bool, bool),
    disks: impl FnOnce(&Path) -> Vec<DiskConfig>,
) -> MountedDisks {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
    let mp = dir.path().join("disks");
    std::fs::create_dir(&mp).unwrap();
    let cfg = DiskSetConfig {
        mountpoint: mp.clone(),
        fsname: fsname.into(),
        stats_file: stats.then(|| dir.path().join("stats.json")),
        trace_file: trace.then(|| dir.path().join("trace.txt")),
        disks: disks(dir.path()),
    };
    let fs = DiskFs::new(&cfg).unwrap();
    let mut config = fuser::Config::default();
    config.mount_options = vec![fuser::MountOption::FSName(fsname.into())];
    let session = fuser::Session::new(DiskFsServer::new(fs), &mp, &config)
        .unwrap()
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if is_fuse_mount(&mp) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(is_fuse_mount(&mp), "disk fs did not mount");
    MountedDisks {
        session: Some(session),
        dir,
    }
}

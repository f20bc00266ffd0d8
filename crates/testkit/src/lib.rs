//! Test support shared by the integration tests of every crate.
//!
//! # One rule for peers
//!
//! Some tests need what a developer's machine may lack: a peer program (the
//! real sysbench 1.0.20, zfs-fuse, Chromium, mpirun, fio, the lab's network
//! tools), root, or `/dev/fuse`. Every such test asks for them through
//! [`require!`] (or [`require`] / [`skip_or_fail`] where a helper decides):
//!
//! - by default a missing peer **skips** the test: it prints
//!   `SKIPPED <test>: needs <what> (<how to get it>)` and passes;
//! - with `TANKBENCH_REQUIRE_PEERS=1` a missing peer **fails** the test.
//!   `scripts/test` sets it when it runs as root or under CI (`.ci/run`), where
//!   it has installed every peer, so nothing passes there by skipping.
//!
//! `TANKBENCH_LAB_REQUIRED=1`, the variable the lab and store tests used
//! before, is read as an alias, so tests written against it keep working.
//!
//! The skip line is written to the process's stderr directly, not through
//! `eprintln!`, which the test harness captures and shows only for failing
//! tests: a skip must be visible in a plain `cargo test` run.

mod deadline;
pub use deadline::{command_timeout, output, output_within, COMMAND_TIMEOUT_VAR};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// Set to 1 to make a missing peer a test failure instead of a skip.
pub const REQUIRE_PEERS: &str = "TANKBENCH_REQUIRE_PEERS";

/// The earlier name of [`REQUIRE_PEERS`], still honoured.
pub const REQUIRE_PEERS_ALIAS: &str = "TANKBENCH_LAB_REQUIRED";

/// Whether a missing peer fails the test (`TANKBENCH_REQUIRE_PEERS=1` or its
/// alias). Unset, empty or `0` means skip. Any other value panics: a typo such
/// as `=yes` must not quietly turn CI's failures back into skips.
pub fn peers_required() -> bool {
    let mut required = false;
    for var in [REQUIRE_PEERS, REQUIRE_PEERS_ALIAS] {
        match std::env::var_os(var) {
            None => {}
            Some(v) if v.is_empty() || v == "0" => {}
            Some(v) if v == "1" => required = true,
            Some(v) => panic!(
                "{var}={}: accepted values are 1 (a missing peer fails the test) and 0 or unset (it skips)",
                v.to_string_lossy()
            ),
        }
    }
    required
}

/// The running test's name: libtest runs each test on a thread named after it.
pub fn test_name() -> String {
    std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .unwrap_or("this test")
        .to_string()
}

/// A line on the real stderr, past the harness's capture (see the crate docs).
fn say(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// The rule itself, for a reason a helper found: under
/// `TANKBENCH_REQUIRE_PEERS=1` panic (fail the test), otherwise print the skip
/// line. The caller returns from the test after this.
pub fn skip_or_fail(reason: &str) {
    let test = test_name();
    if peers_required() {
        panic!("{test} cannot run: {reason} ({REQUIRE_PEERS}=1: a missing peer is a failure)");
    }
    say(&format!(
        "SKIPPED {test}: {reason}; {REQUIRE_PEERS}=1 makes this a failure"
    ));
}

/// Check every peer; `Some(paths)` in the order asked when all are present,
/// else `None` after [`skip_or_fail`] with everything missing in one line.
///
/// Peers: `"root"`; an absolute path such as `"/dev/fuse"` (must exist);
/// `"sysbench"` (the real 1.0.20 at /usr/bin/sysbench); `"zfs-fuse"` (root,
/// /dev/fuse, `zpool`, and the daemon, started by scripts/zfs-fuse-up; the path
/// is `zpool`'s); `"chromium"` (`$CHROMIUM` or the usual install paths); any
/// other word is a program on `PATH` or in the sbin directories. The path of
/// `"root"` is `/`.
pub fn require<const N: usize>(peers: [&str; N]) -> Option<[PathBuf; N]> {
    let mut missing: Vec<String> = Vec::new();
    let found = peers.map(|peer| match find(peer) {
        Ok(path) => path,
        Err(reasons) => {
            for r in reasons {
                if !missing.contains(&r) {
                    missing.push(r);
                }
            }
            PathBuf::new()
        }
    });
    if missing.is_empty() {
        return Some(found);
    }
    skip_or_fail(&format!("needs {}", missing.join(", ")));
    None
}

/// Require peers at the top of a test: evaluates to the peer's path (one
/// peer) or an array of paths (several), or returns from the test under the
/// rule of [`skip_or_fail`].
///
/// ```no_run
/// fn parity_test() {
///     let sysbench = testkit::require!("sysbench");
///     let [_, _, zpool] = testkit::require!("root", "/dev/fuse", "zfs-fuse");
/// }
/// ```
#[macro_export]
macro_rules! require {
    ($peer:expr $(,)?) => {
        match $crate::require([$peer]) {
            Some([path]) => path,
            None => return,
        }
    };
    ($($peer:expr),+ $(,)?) => {
        match $crate::require([$($peer),+]) {
            Some(paths) => paths,
            None => return,
        }
    };
}

/// One peer: its path, or every reason it is unusable (each with how to fix it).
pub fn find(peer: &str) -> Result<PathBuf, Vec<String>> {
    match peer {
        "root" => {
            if is_root() {
                Ok(PathBuf::from("/"))
            } else {
                Err(vec!["root (CI runs as root)".into()])
            }
        }
        "sysbench" => sysbench().clone().map_err(|r| vec![r]),
        "zfs-fuse" => zfs_fuse(),
        "chromium" => chromium().map_err(|r| vec![r]),
        path if path.starts_with('/') => {
            if Path::new(path).exists() {
                Ok(PathBuf::from(path))
            } else if path == "/dev/fuse" {
                Err(vec![
                    "/dev/fuse (modprobe fuse; in a container, pass --device /dev/fuse)".into(),
                ])
            } else {
                Err(vec![format!("{path} (missing)")])
            }
        }
        program => which(program).ok_or_else(|| vec![missing_program(program)]),
    }
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The workspace's root directory (scripts/ lives there).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root of crates/testkit")
}

/// The names in `dir`, sorted: what a test compares when it checks that a
/// command left a directory as it found it.
pub fn dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| {
            e.unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// `program` on `PATH`, else in the sbin and bin directories: `ip`, `sshd` and
/// `zpool` live in sbin, which a non-login root shell may not have on `PATH`.
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// The Debian package that provides a program the tests use.
fn package_of(program: &str) -> Option<&'static str> {
    Some(match program {
        "sysbench" => "sysbench",
        "fio" => "fio",
        "zpool" | "zfs" | "zdb" | "zfs-fuse" => "zfs-fuse",
        "mpirun" => "openmpi-bin",
        "sshfs" => "sshfs",
        "ganesha.nfsd" => "nfs-ganesha nfs-ganesha-vfs",
        "rpcbind" => "rpcbind",
        "sshd" => "openssh-server",
        "ssh" | "ssh-keygen" => "openssh-client",
        "ip" | "tc" => "iproute2",
        "chromium" => "chromium",
        _ => return None,
    })
}

fn missing_program(program: &str) -> String {
    match package_of(program) {
        Some(p) => format!("program {program} (apt-get install {p}; scripts/test installs it)"),
        None => format!("program {program}"),
    }
}

/// The real sysbench 1.0.20, looked up once per test process.
///
/// Only /usr/bin/sysbench (where the Debian package puts it) counts: a copy or
/// symlink of tankbench named `sysbench` on `PATH` prints the same version
/// line, and parity tests would then compare tankbench with itself.
fn sysbench() -> &'static Result<PathBuf, String> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let path = PathBuf::from("/usr/bin/sysbench");
        if !path.exists() {
            return Err(missing_program("sysbench"));
        }
        let out = Command::new(&path)
            .arg("--version")
            .output()
            .map_err(|e| format!("sysbench 1.0.20 (cannot run {}: {e})", path.display()))?;
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if version == "sysbench 1.0.20" {
            Ok(path)
        } else {
            Err(format!(
                "sysbench 1.0.20 ({} says '{version}')",
                path.display()
            ))
        }
    })
}

/// zfs-fuse with its daemon answering: root, /dev/fuse and `zpool` first (each
/// reason said once when several are missing), then scripts/zfs-fuse-up,
/// which starts the shared daemon if needed.
fn zfs_fuse() -> Result<PathBuf, Vec<String>> {
    let mut missing = Vec::new();
    for peer in ["root", "/dev/fuse"] {
        if let Err(r) = find(peer) {
            missing.extend(r);
        }
    }
    let zpool = which("zpool");
    if zpool.is_none() {
        missing.push(missing_program("zfs-fuse"));
    }
    if !missing.is_empty() {
        return Err(missing);
    }
    let up = workspace_root().join("scripts/zfs-fuse-up");
    match Command::new(&up).output() {
        Ok(out) if out.status.success() => Ok(zpool.expect("checked above")),
        Ok(out) => Err(vec![format!(
            "a running zfs-fuse ({} failed: {})",
            up.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )]),
        Err(e) => Err(vec![format!(
            "a running zfs-fuse (cannot run {}: {e})",
            up.display()
        )]),
    }
}

/// `$CHROMIUM`, else the usual Debian and Google install paths.
fn chromium() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "Chromium at CHROMIUM={} (no such file)",
                p.display()
            ))
        };
    }
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
    .ok_or_else(|| {
        "Chromium (apt-get install chromium, or set CHROMIUM=/path/to/chrome)".to_string()
    })
}

/// A 64 KiB tmpfs mounted for one test and filled to the last block, so that
/// any write of data fails with ENOSPC. Unmounted on drop.
pub struct FullFs {
    dir: tempfile::TempDir,
}

impl FullFs {
    /// The mount, or `None` under the rule of [`skip_or_fail`] when this
    /// machine cannot mount one (mounting needs root). `prepare` runs on the
    /// empty file system before it is filled.
    pub fn mount(prepare: impl FnOnce(&Path)) -> Option<FullFs> {
        require(["root"])?;
        let dir = tempfile::tempdir().expect("a temp dir for the tmpfs mount");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                skip_or_fail(&format!(
                    "a small tmpfs (mount -t tmpfs failed: {})",
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
                return None;
            }
            Err(e) => {
                skip_or_fail(&format!("a small tmpfs (cannot run mount: {e})"));
                return None;
            }
        }
        let fs = FullFs { dir };
        prepare(fs.path());
        let mut filler = std::fs::File::create(fs.path().join("filler")).unwrap();
        let block = [0u8; 4096];
        loop {
            match filler.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("filling the tmpfs: {e}"),
            }
        }
        Some(fs)
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Every name under the mount (recursively), filler included, sorted.
    pub fn names(&self) -> Vec<String> {
        fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                out.push(p.strip_prefix(base).unwrap().display().to_string());
                if p.is_dir() {
                    walk(base, &p, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(self.path(), self.path(), &mut out);
        out.sort();
        out
    }
}

impl Drop for FullFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Destroy a zfs-fuse pool that a test or benchmark created, through
/// scripts/zfs-pool-destroy, the one implementation that the Rust tests and
/// benches/compare.py share (retries while zfs-fuse calls the pool busy, and
/// only believes a destroy once `zpool list` no longer shows the pool).
pub fn destroy_zfs_pool(name: &str) -> Result<(), String> {
    let script = workspace_root().join("scripts/zfs-pool-destroy");
    let out = output(Command::new(&script).arg(name))
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// Give the stop signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT) their default
/// action in this test process if it inherited them ignored, once: the
/// programs it starts inherit the dispositions, and tankbench keeps an
/// ignored stop signal ignored (as a program under `nohup` must). A suite
/// started from a script's background job or a CI runner that ignores
/// SIGINT would otherwise make every test that stops tankbench with Ctrl-C
/// wait for the run's own time limit and fail. Tests of the ignore policy
/// itself set the disposition they test on their own child.
pub fn default_stop_signals() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            // SAFETY: signal(2) with SIG_DFL or SIG_IGN installs no handler
            // of ours; reading the old disposition back is the only way to
            // learn it without sigaction's struct.
            unsafe {
                let old = libc::signal(sig, libc::SIG_DFL);
                if old != libc::SIG_IGN {
                    libc::signal(sig, old);
                }
            }
        }
    });
}

/// Start `cmd`, a program this test has just written (a copy of a binary
/// under another name). While another test's fork still holds the copy's
/// write descriptor, before its exec, starting it fails with ETXTBSY; the
/// usual answer is to try again a moment later (up to 2 s).
pub fn spawn_fresh_copy(cmd: &mut Command) -> std::process::Child {
    for _ in 0..100 {
        match cmd.spawn() {
            Ok(child) => return child,
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => panic!("start {cmd:?}: {e}"),
        }
    }
    panic!("{cmd:?} stayed busy (ETXTBSY) for 2 s");
}

static POOL_COUNTER: AtomicU32 = AtomicU32::new(0);

/// The guard of a zfs-fuse pool a test builds: a unique `tb-` name and a temp
/// dir for its vdev files (and mount points). Make the guard before
/// `zpool create`, so that a test failing anywhere after it still destroys the
/// pool on drop. If the pool cannot be destroyed, a warning names it and the
/// temp dir is kept: deleting the files under a live pool would leave it
/// unusable and impossible to export cleanly.
pub struct ZfsPool {
    name: String,
    dir: Option<tempfile::TempDir>,
    /// Held for the pool's life: the tests of one binary use the shared
    /// daemon one pool at a time (see [`ZfsPool::new`]).
    _turn: std::sync::MutexGuard<'static, ()>,
}

/// One pool at a time per test binary. zfs-fuse serves every pool from one
/// process, and a run's fsync was seen to wait for ever while another
/// command worked on the same daemon; pools of concurrent tests add nothing
/// the suite needs but that risk. (Binaries run one after another.)
static ZFS_TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl ZfsPool {
    /// `tb-<tag>-<pid>-<n>-<nanoseconds>`: unique among concurrent tests and
    /// unlike any pool an earlier, crashed run of the same pid left behind.
    pub fn new(tag: &str) -> ZfsPool {
        // A test that failed while holding the turn has dropped its pool
        // (the guard outlives nothing): the poison carries no state.
        let turn = ZFS_TURN.lock().unwrap_or_else(|e| e.into_inner());
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!(
            "tb-{tag}-{}-{}-{nanos}",
            std::process::id(),
            POOL_COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        let dir = tempfile::Builder::new()
            .prefix(&format!("{name}-"))
            .tempdir()
            .expect("a temp dir for the pool's files");
        ZfsPool {
            name,
            dir: Some(dir),
            _turn: turn,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The pool's own directory, for its vdev files and mount points.
    pub fn dir(&self) -> &Path {
        self.dir.as_ref().expect("present until drop").path()
    }

    /// Creates the pool as `raidz d1 d2 d3 log l1` on 128 MiB sparse files in
    /// its directory, mounted at `mnt` there; returns the mount point and the
    /// vdev files (the log file last). `failmode=continue`: an I/O failure
    /// then fails the call instead of suspending the pool, where every later
    /// fsync would wait for ever. Panics with the command's output if a step
    /// fails.
    pub fn create_raidz_with_log(&self) -> (PathBuf, Vec<String>) {
        let files: Vec<String> = ["d1", "d2", "d3", "l1"]
            .iter()
            .map(|n| self.dir().join(n).to_string_lossy().into_owned())
            .collect();
        for f in &files {
            std::fs::File::create(f)
                .and_then(|file| file.set_len(128 << 20))
                .unwrap_or_else(|e| panic!("sparse vdev file {f}: {e}"));
        }
        let mount = self.dir().join("mnt");
        let m = mount.to_string_lossy().into_owned();
        let mut create = Command::new(which("zpool").unwrap_or_else(|| "zpool".into()));
        create.args([
            "create",
            "-o",
            "failmode=continue",
            "-m",
            &m,
            &self.name,
            "raidz",
        ]);
        create.args(&files[..3]).arg("log").arg(&files[3]);
        let out = output(&mut create).unwrap_or_else(|e| panic!("zpool create: {e}"));
        assert!(
            out.status.success(),
            "zpool create {}: {}",
            self.name,
            String::from_utf8_lossy(&out.stderr)
        );
        (mount, files)
    }
}

impl Drop for ZfsPool {
    fn drop(&mut self) {
        if let Err(e) = destroy_zfs_pool(&self.name) {
            let kept = self.dir.take().map(|d| d.keep());
            say(&format!(
                "WARNING: could not destroy zfs pool {}: {e}; its files stay in {}",
                self.name,
                kept.map(|p| p.display().to_string()).unwrap_or_default()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The variables are process-wide: one test changes them, serially.
    #[test]
    fn the_variable_and_its_alias_decide_skip_or_fail() {
        let clear = || {
            std::env::remove_var(REQUIRE_PEERS);
            std::env::remove_var(REQUIRE_PEERS_ALIAS);
        };
        clear();
        assert!(!peers_required());
        for (var, value, required) in [
            (REQUIRE_PEERS, "1", true),
            (REQUIRE_PEERS, "0", false),
            (REQUIRE_PEERS, "", false),
            (REQUIRE_PEERS_ALIAS, "1", true),
            (REQUIRE_PEERS_ALIAS, "0", false),
        ] {
            clear();
            std::env::set_var(var, value);
            assert_eq!(peers_required(), required, "{var}={value}");
        }
        clear();
        std::env::set_var(REQUIRE_PEERS, "yes");
        let err = std::panic::catch_unwind(peers_required).unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert!(msg.contains("TANKBENCH_REQUIRE_PEERS=yes"), "{msg}");
        assert!(msg.contains("accepted values are 1"), "{msg}");

        // A peer that cannot exist: skipped without the variable, a failure
        // naming it with the variable.
        clear();
        assert!(require(["/nonexistent/tankbench-peer"]).is_none());
        std::env::set_var(REQUIRE_PEERS, "1");
        let err = std::panic::catch_unwind(|| require(["no-such-program-tb"])).unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert!(msg.contains("needs program no-such-program-tb"), "{msg}");
        clear();
    }

    #[test]
    fn missing_peers_are_named_once_with_how_to_get_them() {
        let err = find("no-such-program-tb").unwrap_err();
        assert_eq!(err, vec!["program no-such-program-tb".to_string()]);
        assert!(missing_program("sshd").contains("apt-get install openssh-server"));
        assert_eq!(find("/").unwrap(), PathBuf::from("/"));
        assert!(find("sh").unwrap().ends_with("sh"));
    }
}

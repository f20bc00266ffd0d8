//! Each zfs-fuse lab runs its own daemon, with the ARC its spec asks for, in
//! a mount namespace of its own: two labs at once keep to their own ARC and
//! pool, `lab down --all` stops the labs' daemons and nothing else, and a
//! matrix keeps its finished cells when one fails and runs only what is
//! missing when it is run again. Small pools on the SSD model, local access,
//! runs of a few seconds.

mod common;

use lab::experiments::matrix::Matrix;
use lab::lab::{down_all, Lab, UpOptions};
use lab::parts::zfsd::Zfsd;
use lab::spec::LabSpec;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Tears down everything under the test's lab root, also when a test fails.
struct RootGuard(PathBuf);

impl Drop for RootGuard {
    fn drop(&mut self) {
        let sweep = down_all(&self.0);
        if !sweep.kept.is_empty() {
            eprintln!("left behind under {}: {:?}", self.0.display(), sweep.kept);
        }
        let _ = std::fs::remove_dir_all(self.0.join("matrix"));
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn root(test: &str) -> RootGuard {
    RootGuard(PathBuf::from(format!(
        "/var/tmp/tb-zfsdtest-{test}-{}",
        std::process::id()
    )))
}

fn spec(name: &str, root: &Path, arc: &str) -> LabSpec {
    LabSpec::from_toml(&format!(
        "name = \"{name}\"\nroot = \"{}\"\n[pool]\nlayout = \"mirror-2\"\ndisk = \"ssd-sata\"\ndisk_size = \"1G\"\n[server]\narc = \"{arc}\"\n",
        root.display()
    ))
    .unwrap()
}

fn options() -> UpOptions {
    common::up_options(&common::tankbench(), false)
}

fn daemon(lab: &Lab) -> Zfsd {
    lab.info()
        .and_then(|i| i.zfsd.clone())
        .expect("a zfs-fuse lab records its own daemon")
}

fn pools_of(d: &Zfsd) -> Vec<String> {
    let mut cmd = d.command("zpool").unwrap();
    lab::parts::sys::run_cmd(cmd.args(["list", "-H", "-o", "name"]))
        .unwrap()
        .lines()
        .map(|l| l.trim().to_string())
        .collect()
}

fn workload(mode: &str) -> Vec<String> {
    [
        "--file-total-size=48M",
        "--file-num=2",
        mode,
        "--file-block-size=4K",
        "--threads=2",
        "--time=3",
        "--max-requests=0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The system's zfs-fuse daemon, if one runs: not started with a lab's mark.
fn system_zfs_fuse() -> Option<i32> {
    lab::parts::sys::all_pids().into_iter().find(|pid| {
        let cmd = lab::parts::sys::pid_cmdline(*pid);
        lab::parts::sys::pid_alive(*pid)
            && cmd.first().is_some_and(|a| a.ends_with("zfs-fuse"))
            && !cmd.iter().any(|a| a.contains("/tb-"))
    })
}

/// Two labs at once, each with its own daemon and ARC ceiling; a file set
/// that fits the ARC is read back without disk reads; each daemon sees only
/// its own pool; `lab down --all` stops both daemons and leaves a daemon
/// that is not a lab's alone.
#[test]
fn each_lab_has_its_own_daemon_and_arc() {
    testkit::require!("root", "/dev/fuse", "zfs-fuse", "zpool");
    let guard = root("own");
    let system_before = system_zfs_fuse();
    // A process named zfs-fuse outside the lab root, as the machine's
    // daemon would be: down --all must not touch it.
    let decoy_dir = tempfile::tempdir().unwrap();
    let decoy = decoy_dir.path().join("zfs-fuse");
    std::fs::copy("/bin/sleep", &decoy).unwrap();
    let mut decoy = testkit::spawn_fresh_copy(Command::new(&decoy).arg("600"));

    let big = Lab::up(&spec("zbig", &guard.0, "256M"), &options()).expect("lab up zbig");
    let small = Lab::up(&spec("zsmall", &guard.0, "16M"), &options()).expect("lab up zsmall");
    let (db, ds) = (daemon(&big), daemon(&small));
    assert_ne!(db.pid, ds.pid);
    assert!(db.alive() && ds.alive());
    if let Some(sys_pid) = system_before {
        assert!(sys_pid != db.pid && sys_pid != ds.pid);
    }
    // The ARC ceiling each spec asked for (zfs-fuse -m).
    assert_eq!(db.arc_stats().expect("arcstats").c_max, 256 << 20);
    assert_eq!(ds.arc_stats().expect("arcstats").c_max, 16 << 20);
    // `lab status` names the lab's daemon and its ARC.
    let status =
        lab::experiments::server::status_lines(&big, std::time::Duration::from_millis(200))
            .join("\n");
    assert!(
        status.contains(&format!(
            "zfs-fuse pid {} (the lab's own): ARC max 256 MiB",
            db.pid
        )) && status.contains("reads/s"),
        "{status}"
    );
    // Each daemon serves its own pool only.
    assert_eq!(pools_of(&db), ["tb-zbig"]);
    assert_eq!(pools_of(&ds), ["tb-zsmall"]);
    // The pool's mount reaches the host's mount table (where sshd and
    // local workloads look), as a zfs-fuse file system.
    for l in [&big, &small] {
        let mp = &l.info().unwrap().pool_mountpoint;
        assert!(
            lab::parts::sys::mounts()
                .iter()
                .any(|m| &m.target == mp && m.fstype == "fuse.zfs"),
            "{} is not a zfs-fuse mount in the host",
            mp.display()
        );
    }

    // Random reads of a 48 MiB file set: written by prepare, so in the
    // 256 MiB ARC, read without going to the disks.
    let tb = common::tankbench();
    let o = lab::experiments::run::run_workload(&big, &tb, &workload("--file-test-mode=rndrd"))
        .expect("run");
    let s = o.server.expect("server activity");
    eprintln!("256M ARC: {} reads/s, {s:?}", o.result.rates.reads_per_s);
    assert!(o.result.rates.reads_per_s > 0.0);
    assert!(s.arc_hit_percent().unwrap() > 99.0, "{s:?}");
    let disk_reads = s.disk_reads_per_s.unwrap();
    assert!(
        disk_reads < 0.01 * o.result.rates.reads_per_s,
        "{disk_reads} disk reads/s for {} reads/s",
        o.result.rates.reads_per_s
    );
    // The same in a 16 MiB ARC, a third of the file set: the ARC misses and
    // records come from the disks. (How many of the client's reads reach
    // the disks depends on zfs-fuse's dbuf and vdev caches, which answer
    // repeated reads of a block without an ARC lookup, so the check is on
    // misses and disk reads, not on their share of the client's reads.)
    let o = lab::experiments::run::run_workload(&small, &tb, &workload("--file-test-mode=rndrd"))
        .expect("run");
    let s = o.server.expect("server activity");
    eprintln!("16M ARC: {} reads/s, {s:?}", o.result.rates.reads_per_s);
    assert!(s.arc_hit_percent().unwrap() < 90.0, "{s:?}");
    assert!(s.arc_misses.unwrap() > 100, "{s:?}");
    assert!(s.disk_reads_per_s.unwrap() > 100.0, "{s:?}");

    let sweep = down_all(&guard.0);
    assert!(sweep.kept.is_empty(), "{:?}", sweep.kept);
    for d in [&db, &ds] {
        assert!(!d.alive(), "lab daemon {} still runs", d.pid);
    }
    assert!(
        decoy.try_wait().unwrap().is_none(),
        "down --all stopped a zfs-fuse that is not a lab's"
    );
    let _ = decoy.kill();
    let _ = decoy.wait();
    if let Some(pid) = system_before {
        assert!(
            lab::parts::sys::pid_alive(pid),
            "the system's zfs-fuse {pid} was stopped"
        );
    }
    assert!(!guard.0.exists(), "{} remains", guard.0.display());
}

/// FUSE mount points in the mount namespace of process `pid`.
fn fuse_mounts_seen_by(pid: i32) -> Vec<PathBuf> {
    std::fs::read_to_string(format!("/proc/{pid}/mountinfo"))
        .unwrap()
        .lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let fuse = right.starts_with("fuse ") || right.starts_with("fuse.");
            let point = left.split(' ').nth(4)?;
            fuse.then(|| PathBuf::from(point))
        })
        .collect()
}

/// A lab's daemon namespace holds its own disks but not another lab's: a
/// copy of lab A's disk mount in lab B's namespace would keep A's disk file
/// system alive after A unmounts it. With B still up, A comes down cleanly
/// and nothing of A remains in B's namespace.
#[test]
fn a_labs_daemon_holds_no_other_labs_disks() {
    testkit::require!("root", "/dev/fuse", "zfs-fuse", "zpool");
    let guard = root("foreign");
    let a = Lab::up(&spec("zfa", &guard.0, "64M"), &options()).expect("lab up zfa");
    let b = Lab::up(&spec("zfb", &guard.0, "64M"), &options()).expect("lab up zfb");
    let (a_disks, a_pool) = {
        let i = a.info().unwrap();
        (i.disk_mount.clone(), i.pool_mountpoint.clone())
    };
    let b_disks = b.info().unwrap().disk_mount.clone();
    let db = daemon(&b);
    let seen = fuse_mounts_seen_by(db.pid);
    assert!(seen.contains(&b_disks), "B's own disks are gone: {seen:?}");
    assert!(
        !seen.contains(&a_disks),
        "lab B's zfs-fuse namespace holds lab A's disks: {seen:?}"
    );
    a.down().expect("lab A comes down while lab B is up");
    let seen = fuse_mounts_seen_by(db.pid);
    assert!(
        !seen.iter().any(|m| m == &a_disks || m == &a_pool),
        "lab A's mounts remain in lab B's namespace after A is down: {seen:?}"
    );
    assert_eq!(pools_of(&db), ["tb-zfb"]);
    b.down().expect("lab B comes down");
    assert!(!guard.0.join("tb-zfa").exists() && !guard.0.join("tb-zfb").exists());
}

/// A network namespace made for the test, removed when dropped.
struct Netns(String);

impl Netns {
    fn add(name: String, owner: Option<&Path>) -> Netns {
        let ip = |args: &[&str]| {
            let st = Command::new("ip").args(args).status().unwrap();
            assert!(st.success(), "ip {args:?}");
        };
        ip(&["netns", "add", &name]);
        let ns = Netns(name);
        if let Some(dir) = owner {
            ip(&[
                "-n",
                &ns.0,
                "link",
                "set",
                "dev",
                "lo",
                "alias",
                dir.to_str().unwrap(),
            ]);
        }
        ns
    }

    fn exists(&self) -> bool {
        Path::new("/run/netns").join(&self.0).exists()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        if self.exists() {
            let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
        }
    }
}

/// Namespace names are global, lab roots are not: `lab down --all ROOT`
/// removes a `tb-*-client`/`tb-*-server` namespace only when its owner mark
/// names a lab directory under ROOT whose state is gone. One marked as a lab
/// under another root (which may be up: another user's, another test's) and
/// an unmarked one stay.
#[test]
fn down_all_removes_only_leftover_namespaces_of_its_root() {
    testkit::require!("root", "ip");
    let guard = root("netns");
    std::fs::create_dir_all(&guard.0).unwrap();
    let pid = std::process::id();
    let leftover = Netns::add(
        format!("tb-nsl{pid}-client"),
        Some(&guard.0.join(format!("tb-nsl{pid}"))),
    );
    let elsewhere = Netns::add(
        format!("tb-nso{pid}-server"),
        Some(&PathBuf::from(format!(
            "/var/tmp/tb-zfsdtest-elsewhere-{pid}/tb-nso{pid}"
        ))),
    );
    let unmarked = Netns::add(format!("tb-nsu{pid}-client"), None);
    let sweep = down_all(&guard.0);
    assert!(!leftover.exists(), "the leftover stays: {sweep:?}");
    assert!(
        sweep
            .removed
            .contains(&format!("network namespace {}", leftover.0)),
        "{sweep:?}"
    );
    assert!(
        elsewhere.exists(),
        "down --all removed another root's namespace: {sweep:?}"
    );
    assert!(
        unmarked.exists(),
        "down --all removed an unmarked namespace: {sweep:?}"
    );
    assert!(sweep.kept.is_empty(), "{sweep:?}");
}

/// A matrix whose second cell fails keeps the first; run again, it runs
/// only the failed cell and leaves the finished cell's file as it was.
#[test]
fn a_matrix_keeps_finished_cells_and_reruns_only_the_rest() {
    testkit::require!("root", "/dev/fuse", "zfs-fuse", "zpool");
    if Path::new("/sys/module/zfs").exists() {
        // The failing cell relies on zfs-fuse refusing sync=always.
        testkit::skip_or_fail("kernel OpenZFS is loaded: the lab would use it");
        return;
    }
    let guard = root("matrix");
    let dir = guard.0.join("matrix");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("m.toml");
    // Cell 2 asks zfs-fuse for sync=always, which pool version 23 lacks: it
    // fails when it is built, after cell 1 finished.
    std::fs::write(
        &file,
        format!(
            r#"workload = ["--file-total-size=16M", "--file-num=2", "--file-test-mode=rndwr", "--time=2", "--max-requests=0"]
output = "out/m"
[base]
name = "zmx"
root = "{}"
[base.pool]
layout = "mirror-2"
disk = "ssd-sata"
disk_size = "1G"
[base.server]
arc = "64M"
[[axis]]
key = "pool.sync"
values = ["standard", "always"]
"#,
            guard.0.display()
        ),
    )
    .unwrap();
    let m = Matrix::load(&file).unwrap();
    m.check_outputs().unwrap();
    let lines = std::cell::RefCell::new(Vec::<String>::new());
    let say = |s: &str| {
        eprintln!("{s}");
        lines.borrow_mut().push(s.to_string());
    };
    let first = m.run(&options(), &say).unwrap();
    assert_eq!(first.len(), 2);
    assert!(first[0].error.is_none() && first[0].outcome.is_some());
    assert!(
        first[1]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("pool.sync")),
        "{:?}",
        first[1].error
    );
    let cells = m.cells().unwrap();
    let kept = std::fs::read(m.cell_file(&cells[0], 1)).unwrap();
    let progress = lines.borrow().join("\n");
    assert!(
        progress.contains("cell 1/2: layout 1xmirror-2"),
        "{progress}"
    );
    assert!(progress.contains("cell 2/2"), "{progress}");
    lines.borrow_mut().clear();

    // Again: only the failed cell runs.
    let m = Matrix::load(&file).unwrap();
    m.check_outputs().unwrap();
    let second = m.run(&options(), &say).unwrap();
    let progress = lines.borrow().join("\n");
    assert!(
        progress.contains("1 of 2 cells finished before"),
        "{progress}"
    );
    assert!(!progress.contains("cell 1/2:"), "{progress}");
    assert!(progress.contains("cell 2/2:"), "{progress}");
    assert_eq!(std::fs::read(m.cell_file(&cells[0], 1)).unwrap(), kept);
    assert_eq!(second.len(), 2);
    assert_eq!(
        second[0]
            .outcome
            .as_ref()
            .map(|o| o.result.rates.writes_per_s),
        first[0]
            .outcome
            .as_ref()
            .map(|o| o.result.rates.writes_per_s)
    );
    // The tables hold both cells.
    let json = std::fs::read_to_string(m.output_files()[1].clone()).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["cells"].as_array().unwrap().len(), 2);
    assert!(doc["cells"][0]["outcome"]["server"]["arc_max_bytes"].is_u64());
    let sweep = down_all(&guard.0);
    assert!(
        sweep.kept.iter().all(|k| k.contains("matrix")),
        "{:?}",
        sweep.kept
    );
}

/// A run in a lab records the lab pool's ZFS facts, read through the lab's
/// own daemon (the host's `zpool` cannot reach it): the pool's layout with
/// the lab's disks, the dataset's properties, zfs-fuse's version; so the
/// system of a lab run is known (`simulate --system-from`, `--baseline`),
/// with the disks' class from the lab's labels.
#[test]
fn a_lab_run_records_the_lab_pools_zfs_facts() {
    testkit::require!("root", "/dev/fuse", "zfs-fuse", "zpool");
    let guard = root("facts");
    let l = Lab::up(&spec("zfacts", &guard.0, "64M"), &options()).expect("lab up");
    let o = lab::experiments::run::run_workload(
        &l,
        &common::tankbench(),
        &workload("--file-test-mode=rndwr"),
    )
    .expect("run");
    let facts = o
        .result
        .environment
        .zfs
        .as_ref()
        .expect("facts of a zfs-fuse run");
    assert_eq!(facts.platform, Some(fileio::zfs_facts::Platform::ZfsFuse));
    let pool = facts
        .pool
        .as_ref()
        .unwrap_or_else(|| panic!("no pool: {:?}", facts.missing));
    assert_eq!(pool.name, "tb-zfacts");
    let disks = l.info().unwrap().disk_mount.clone();
    let devices: Vec<&str> = pool.data.iter().flat_map(|v| v.devices()).collect();
    assert_eq!(devices.len(), 2, "{devices:?}");
    assert!(
        devices.iter().all(|d| Path::new(d).starts_with(&disks)),
        "{devices:?} are not the lab's disks under {}",
        disks.display()
    );
    let dataset = facts.dataset.as_ref().expect("dataset");
    assert_eq!(dataset.name, "tb-zfacts");
    assert_eq!(dataset.recordsize_bytes(), Some(128 << 10));
    assert!(facts
        .version
        .as_deref()
        .is_some_and(|v| v.contains("zfs-fuse")));
    for fact in ["pool", "dataset", "version"] {
        assert!(!facts.missing.contains_key(fact), "{:?}", facts.missing);
    }
    // The system it describes: the lab's layout, its disks' class.
    let derived = sim::from_result::system_from_result("run", &o.result).expect("a system");
    assert_eq!(derived.model.pool.layout, "1xmirror-2");
    assert_eq!(
        derived.model.pool.disk,
        sim::system::DeviceSpec::Name("ssd-sata".into())
    );
    assert!(derived.model.log.is_none());
    l.down().expect("lab down");
}

/// `lab down` while a workload runs in the pool and a shell holds one of
/// its files: the pool may be kept as busy, and then the error names only
/// those processes, and once they are gone the next `lab down` finishes;
/// either way nothing is left.
#[test]
fn a_lab_torn_down_under_a_running_workload_comes_down() {
    testkit::require!("root", "/dev/fuse", "zfs-fuse", "zpool");
    let guard = root("busy");
    let l = Lab::up(&spec("zbusy", &guard.0, "64M"), &options()).expect("lab up");
    let pool = l.info().unwrap().pool_mountpoint.clone();
    let fileio = |words: &[&str]| {
        let mut c = Command::new(common::tankbench());
        c.current_dir(&pool)
            .arg("fileio")
            .arg("--file-total-size=16M")
            .args(words)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        c
    };
    assert!(fileio(&["prepare"]).status().expect("prepare").success());
    let mut run = fileio(&[
        "--file-test-mode=rndwr",
        "--file-fsync-all",
        "--time=8",
        "run",
    ])
    .spawn()
    .expect("start a workload");
    // A shell left in the pool's directory with a file of it open, as a
    // user's may be.
    let mut shell = Command::new("sh")
        .args(["-c", "exec 3<test_file.0; exec sleep 12"])
        .current_dir(&pool)
        .spawn()
        .expect("a process in the pool");
    std::thread::sleep(std::time::Duration::from_secs(2));
    let first = l.down();
    let _ = run.wait();
    let shell_pid = shell.id();
    let fileio_pid = run.id();
    let _ = shell.wait();
    if let Err(e) = first {
        // Kept because something used it: what the error names as holding
        // the pool is the shell or the workload, never the host's other
        // processes.
        let e = e.to_string();
        assert!(e.contains("pool tb-zbusy"), "{e}");
        if let Some((_, held)) = e.split_once("in use by ") {
            for pid in held.split("pid ").skip(1) {
                let pid: u32 = pid.split(' ').next().unwrap().parse().unwrap();
                assert!(pid == shell_pid || pid == fileio_pid, "{e}");
            }
        }
        // Once nothing uses it, the next `lab down` finishes (zfs-fuse had
        // gone on calling such a pool busy, so none could).
        Lab::open(&guard.0, "zbusy")
            .expect("open again")
            .down()
            .expect("the second lab down finishes once nothing uses the pool");
    }
    common::assert_nothing_left(&common::mounts_and_processes_under(&guard.0));
}

/// `zpool list`'s time limit (30 s), SIGTERM's grace (30 s) and the rest.
const WEDGED_DOWN_LIMIT: std::time::Duration = std::time::Duration::from_secs(150);

/// `lab down` of a lab whose zfs-fuse no longer answers (stopped here with
/// SIGSTOP, as a wedged daemon is seen from outside): the lab's own daemon
/// serves only its pool, so `lab down` stops it rather than waiting on it,
/// and nothing is left. (Seen: three wedged labs held `lab down --all` for
/// 13 minutes in `zpool destroy -f`.)
#[test]
fn a_lab_whose_zfs_fuse_stopped_answering_comes_down() {
    testkit::require!("root", "/dev/fuse", "zfs-fuse", "zpool");
    let guard = root("wedged");
    let l = Lab::up(&spec("zwedge", &guard.0, "64M"), &options()).expect("lab up");
    let daemon = l
        .info()
        .unwrap()
        .zfsd
        .clone()
        .expect("a zfs-fuse lab runs its own daemon");
    // SAFETY: kill(2) with a pid this lab started and recorded.
    assert_eq!(unsafe { libc::kill(daemon.pid, libc::SIGSTOP) }, 0);
    // Were lab down to wait on the daemon, resume it after a while so the
    // test ends (and fails on the time below) instead of hanging.
    let pid = daemon.pid;
    let (done, waited) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if waited.recv_timeout(WEDGED_DOWN_LIMIT).is_err() {
            // SAFETY: kill(2) with the pid this lab started.
            unsafe { libc::kill(pid, libc::SIGCONT) };
        }
    });
    let started = std::time::Instant::now();
    let down = l.down();
    let took = started.elapsed();
    let _ = done.send(());
    watchdog.join().unwrap();
    // SAFETY: as above; resumes it if lab down left it stopped.
    unsafe { libc::kill(daemon.pid, libc::SIGCONT) };
    down.expect("lab down stops the lab's own daemon that does not answer");
    assert!(
        took < WEDGED_DOWN_LIMIT,
        "lab down waited {took:?} on a daemon that does not answer"
    );
    assert!(
        !daemon.alive(),
        "the lab's zfs-fuse (pid {}) is still running",
        daemon.pid
    );
    eprintln!("lab down of a stopped daemon took {took:?}");
    common::assert_nothing_left(&common::mounts_and_processes_under(&guard.0));
}

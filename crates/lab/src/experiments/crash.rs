//! `lab crash`: the power of the lab's server fails. The pool's zfs-fuse
//! daemon dies without a clean export (SIGKILL: no transaction group is
//! written, no log is closed), every disk of the lab loses what its model
//! says a power cut loses ([`crate::parts::diskfs`], [`crate::parts::undo`]), then the
//! power comes back: the daemon starts again and brings the pool back, which
//! replays its intent log (ZIL) when the dataset is mounted.
//!
//! Only a lab with its own zfs-fuse daemon ([`crate::parts::zfsd`]) can crash: the
//! machine's shared daemon (or kernel OpenZFS) serves other pools, which a
//! kill would take down with it.

use crate::lab::{zfs_command, Lab};
use crate::parts::diskfs::{DiskCut, CONTROL_FILE, POWER_OFF, POWER_ON};
use crate::parts::sys;
use crate::parts::zfsd::{self, Zfsd};
use crate::state::Resource;
use crate::LabError;
use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// `lab status`'s line about power cuts, from the disks' counters: none
/// before the first cut.
pub fn power_status_line(stats: &[crate::parts::diskfs::DiskStats]) -> Option<String> {
    let cuts = stats.iter().map(|d| d.power_cuts).max().unwrap_or(0);
    if cuts == 0 {
        return None;
    }
    let lost: u64 = stats.iter().map(|d| d.lost_bytes).sum();
    let torn: u64 = stats.iter().map(|d| d.torn_writes).sum();
    let per_disk: Vec<String> = stats
        .iter()
        .filter(|d| d.lost_bytes > 0)
        .map(|d| format!("{} {}", d.name, d.lost_bytes))
        .collect();
    Some(format!(
        "  power    {cuts} cut{}: {lost} bytes of acknowledged writes reverted{}, {torn} writes in flight torn",
        if cuts == 1 { "" } else { "s" },
        if per_disk.is_empty() {
            String::new()
        } else {
            format!(" ({})", per_disk.join(", "))
        }
    ))
}

/// What one crash did.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct CrashReport {
    pub pool: String,
    /// The daemon killed, and the one that brought the pool back.
    pub killed_pid: i32,
    pub new_pid: i32,
    /// What each disk lost.
    pub disks: Vec<DiskCut>,
    /// From the restart of the daemon to the pool mounted again (includes
    /// the log replay).
    pub recovery_s: f64,
}

/// How long a killed daemon may take to disappear, and a restarted one to
/// answer and bring its pool back.
const DAEMON_LIMIT: Duration = Duration::from_secs(30);

/// Send one command to the disk file system's control file.
fn control(disk_mount: &Path, command: &str) -> Result<(), LabError> {
    let control = disk_mount.join(CONTROL_FILE);
    let io = |what: &str, e: std::io::Error| LabError::Io {
        what: format!("{what} {}", control.display()),
        source: e,
    };
    if !crate::parts::diskfs::is_fuse_mount(disk_mount) {
        return Err(LabError::NotMounted {
            what: "the disk file system".into(),
            path: disk_mount.to_path_buf(),
        });
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(&control)
        .and_then(|mut f| f.write_all(format!("{command}\n").as_bytes()))
        .map_err(|e| io(&format!("{command} through"), e))
}

/// The last power cut's losses, from the control file.
fn last_cut(disk_mount: &Path) -> Result<Vec<DiskCut>, LabError> {
    let control = disk_mount.join(CONTROL_FILE);
    let io = |what: &str, e: std::io::Error| LabError::Io {
        what: format!("{what} {}", control.display()),
        source: e,
    };
    let mut text = String::new();
    std::fs::File::open(&control)
        .and_then(|mut f| f.read_to_string(&mut text))
        .map_err(|e| io("read the power cut's report from", e))?;
    serde_json::from_str(&text).map_err(|e| LabError::Damaged {
        what: format!("the power cut's report in {}", control.display()),
        message: e.to_string(),
    })
}

/// Crash the lab: kill its zfs-fuse daemon, cut the power of its disks,
/// restart the daemon and bring the pool back. Refused (nothing done) unless
/// the lab runs its own daemon.
pub fn crash(lab: &mut Lab, say: &dyn Fn(&str)) -> Result<CrashReport, LabError> {
    let info = lab.built()?.clone();
    let Some(old) = info.zfsd.clone() else {
        return Err(LabError::NoOwnDaemon {
            lab: lab.state.id.clone(),
        });
    };
    if !old.alive() {
        return Err(LabError::NotRunning {
            what: format!("the zfs-fuse daemon of lab {}", lab.state.id),
            pid: old.pid,
            hint: format!(
                "; `tankbench lab down {}` and up again",
                lab.state.spec.name
            ),
        });
    }
    // Everything the restart needs is checked before anything is killed.
    let bin = sys::which("zfs-fuse")
        .ok_or_else(|| LabError::Missing("program `zfs-fuse` (apt-get install zfs-fuse)".into()))?;
    let ddir = lab.dir.join("zfsd");
    let arc_mib = lab.state.spec.server.arc.and_then(zfsd::arc_mib);
    // Another lab's daemon that exited may have removed one of the fixed
    // paths its binds cover (zfs-fuse removes /zfs-kstat on exit).
    zfsd::ensure_fixed_paths()?;

    say(&format!(
        "power cut: zfs-fuse (pid {}) killed, disks off",
        old.pid
    ));
    // The server and its disks lose power together: the kill first, so the
    // daemon issues nothing new, the disks' cut right after it (a killed
    // zfs-fuse takes a second or more to be gone, time in which a disk
    // would otherwise destage its cache), and the disks stay dark until
    // the daemon is gone, so nothing it still had queued lands on them.
    signal_kill(&old);
    let off = control(&info.disk_mount, POWER_OFF);
    let gone = wait_gone(&old);
    off?;
    gone?;
    let disks = last_cut(&info.disk_mount)?;
    let lost: u64 = disks.iter().map(|d| d.loss.lost_bytes).sum();
    say(&format!(
        "{} disks: {lost} bytes of acknowledged writes reverted",
        disks.len()
    ));
    detach_dead_pool_mount(&info.pool_mountpoint)?;
    control(&info.disk_mount, POWER_ON)?;

    let started = Instant::now();
    let (new, mut child) = start_daemon(&bin, &ddir, arc_mib)?;
    say(&format!("zfs-fuse restarted (pid {})", new.pid));
    adopt_daemon(lab, &old, &new)?;
    // Recorded first: if this fails, `lab down` still stops the daemon.
    new.detach_foreign_mounts()?;
    wait_answering(&new, &mut child, &ddir.join("zfs-fuse.log"))?;
    bring_back_pool(&new, &info.pool, &info.disk_mount, &info.pool_mountpoint).map_err(|e| {
        LabError::NotRecovered {
            source: Box::new(e),
            lost_bytes: lost,
            per_disk: disks
                .iter()
                .map(|d| format!("{} {}", d.name, d.loss.lost_bytes))
                .collect::<Vec<_>>()
                .join(", "),
        }
    })?;
    let recovery_s = started.elapsed().as_secs_f64();
    say(&format!(
        "pool {} is back at {} ({recovery_s:.1} s)",
        info.pool,
        info.pool_mountpoint.display()
    ));
    Ok(CrashReport {
        pool: info.pool,
        killed_pid: old.pid,
        new_pid: new.pid,
        disks,
        recovery_s,
    })
}

/// SIGKILL the lab's daemon (checked to be it: pid, start time and command
/// line).
fn signal_kill(d: &Zfsd) {
    if !d.alive() {
        return;
    }
    // SAFETY: kill(2) takes two integers and touches no memory of ours; the
    // pid was just checked to be the lab's own daemon (Zfsd::alive).
    unsafe {
        libc::kill(d.pid, libc::SIGKILL);
    }
}

/// Wait until the killed daemon is gone.
fn wait_gone(d: &Zfsd) -> Result<(), LabError> {
    // A zombie leader is not gone while its other threads still exit: they
    // hold the process's files (zfs-fuse's lock among them) until the last
    // one is done. A zombie with no threads left is gone (its parent, maybe
    // this very process when it built the lab, reaps it when it will).
    let gone = || zfsd::start_time(d.pid) != Some(d.start_time) || zombie_without_threads(d.pid);
    let deadline = Instant::now() + DAEMON_LIMIT;
    while !gone() {
        if Instant::now() > deadline {
            let status =
                std::fs::read_to_string(format!("/proc/{}/status", d.pid)).unwrap_or_default();
            let field = |name: &str| {
                status
                    .lines()
                    .find(|l| l.starts_with(name))
                    .unwrap_or_default()
                    .split_whitespace()
                    .skip(1)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            return Err(LabError::Timeout {
                what: format!("zfs-fuse (pid {}) did not go after SIGKILL", d.pid),
                seconds: DAEMON_LIMIT.as_secs(),
                detail: format!("state {}, {} threads", field("State:"), field("Threads:")),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// The dataset's FUSE mount of the dead daemon, still on the pool's mount
/// point in the host (the lab's shared bind stays under it): lazily
/// detached, since a workload may still hold files open there and its
/// server is gone anyway.
fn detach_dead_pool_mount(pool_mp: &Path) -> Result<(), LabError> {
    loop {
        let top = sys::mounts()
            .into_iter()
            .rev()
            .find(|m| m.target == pool_mp);
        // Only zfs-fuse's own mount ("fuse.zfs"); the lab's bind under it
        // stays for the next daemon.
        if !top.is_some_and(|m| m.fstype.starts_with("fuse")) {
            return Ok(());
        }
        let c = sys::c_path(pool_mp)?;
        // SAFETY: `c` is a NUL-terminated string that outlives the call, and
        // umount2(2) only reads it.
        if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } != 0 {
            return Err(LabError::Io {
                what: format!("detach the dead pool mount {}", pool_mp.display()),
                source: std::io::Error::last_os_error(),
            });
        }
    }
}

/// Whether `pid` is a zombie whose threads have all exited (proc(5):
/// `State` and `Threads` of /proc/PID/status).
fn zombie_without_threads(pid: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return true;
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .unwrap_or("")
    };
    field("State:").starts_with('Z') && field("Threads:") == "1"
}

/// Start the lab's daemon again, as `lab up` does (its namespace, zfsrc,
/// socket and pool cache), in a session of its own, appending to its log.
fn start_daemon(
    bin: &Path,
    ddir: &Path,
    arc_mib: Option<u64>,
) -> Result<(Zfsd, std::process::Child), LabError> {
    let mut cmd: Command = zfsd::daemon_command(bin, ddir, arc_mib)?;
    sys::log_output_to(&mut cmd, &ddir.join("zfs-fuse.log"), true)?;
    sys::own_session(&mut cmd);
    let child = sys::spawn(&mut cmd)?;
    let pid = sys::child_pid(&child)?;
    let d = Zfsd {
        pid,
        start_time: zfsd::start_time(pid).unwrap_or_default(),
        tag: ddir.display().to_string(),
    };
    Ok((d, child))
}

/// Record the new daemon where the old one was, so `lab down` stops it (and
/// destroys the pool through it) in the same order as before.
fn adopt_daemon(lab: &mut Lab, old: &Zfsd, new: &Zfsd) -> Result<(), LabError> {
    for r in &mut lab.state.resources {
        match r {
            Resource::Process {
                pid,
                what,
                start_time,
                ..
            } if *pid == old.pid && what == zfsd::WHAT => {
                *pid = new.pid;
                *start_time = Some(new.start_time);
            }
            Resource::Pool { zfsd: Some(z), .. } if z == old => *z = new.clone(),
            _ => {}
        }
    }
    if let Some(info) = &mut lab.state.info {
        info.zfsd = Some(new.clone());
    }
    lab.state.save(&lab.dir)
}

/// Wait until the restarted daemon answers `zpool list`. Its child handle
/// is dropped afterwards, not waited for: `lab down` stops it by its record.
fn wait_answering(d: &Zfsd, child: &mut std::process::Child, log: &Path) -> Result<(), LabError> {
    let deadline = Instant::now() + DAEMON_LIMIT;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(LabError::EndedEarly {
                what: format!("the restarted zfs-fuse (pid {})", d.pid),
                status: status.to_string(),
                before: "before it answered",
                last_line: sys::last_line(log),
            });
        }
        let mut c = d.command("zpool")?;
        if sys::status_within(c.arg("list"), Duration::from_secs(10)) == sys::Within::Succeeded {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(LabError::Timeout {
                what: format!(
                    "the restarted zfs-fuse (pid {}) did not answer `zpool list`",
                    d.pid
                ),
                seconds: DAEMON_LIMIT.as_secs(),
                detail: String::new(),
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The pool after the restart: opened again from the daemon's pool cache,
/// or imported from the disks; then its datasets mounted, which replays the
/// intent log.
fn bring_back_pool(
    d: &Zfsd,
    pool: &str,
    disk_mount: &Path,
    pool_mp: &Path,
) -> Result<(), LabError> {
    let mut list = zfs_command(Some(d), "zpool")?;
    let known = sys::status_within(
        list.args(["list", "-H", "-o", "name", pool]),
        Duration::from_secs(30),
    ) == sys::Within::Succeeded;
    if !known {
        let mut import = zfs_command(Some(d), "zpool")?;
        // -f: the pool was never exported, so it looks in use by a host.
        sys::run_cmd(
            import
                .arg("import")
                .arg("-f")
                .arg("-d")
                .arg(disk_mount)
                .arg(pool),
        )?;
    }
    let deadline = Instant::now() + DAEMON_LIMIT;
    while !sys::is_mounted(pool_mp)
        || !sys::mounts()
            .iter()
            .rev()
            .find(|m| m.target == pool_mp)
            .is_some_and(|m| m.fstype.starts_with("fuse"))
    {
        let mut mount = zfs_command(Some(d), "zfs")?;
        let _ = sys::status_within(mount.args(["mount", "-a"]), Duration::from_secs(30));
        if Instant::now() > deadline {
            let mut health = zfs_command(Some(d), "zpool")?;
            let health = sys::run_cmd(health.args(["list", "-H", "-o", "health", pool]))
                .map(|h| h.trim().to_string())
                .unwrap_or_else(|e| e.to_string());
            return Err(LabError::Timeout {
                what: format!(
                    "pool {pool} did not come back at {} after the crash",
                    pool_mp.display()
                ),
                seconds: DAEMON_LIMIT.as_secs(),
                detail: format!("health {health}"),
            });
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Backend, LabSpec};
    use crate::state::{LabInfo, State};

    #[test]
    fn the_status_line_sums_the_cuts_of_every_disk() {
        use crate::parts::diskfs::DiskStats;
        let disk = |name: &str, cuts, lost, torn| DiskStats {
            name: name.into(),
            power_cuts: cuts,
            lost_bytes: lost,
            torn_writes: torn,
            ..DiskStats::default()
        };
        assert_eq!(power_status_line(&[disk("tb-d00", 0, 0, 0)]), None);
        assert_eq!(power_status_line(&[]), None);
        assert_eq!(
            power_status_line(&[disk("tb-d00", 2, 0, 1), disk("tb-log0", 2, 4096, 0)]).unwrap(),
            "  power    2 cuts: 4096 bytes of acknowledged writes reverted (tb-log0 4096), 1 writes in flight torn"
        );
    }

    /// A lab whose pool the machine's ZFS serves (no daemon of its own):
    /// crash refuses before touching anything, and says why.
    #[test]
    fn a_lab_without_its_own_daemon_is_not_crashed() {
        let root = tempfile::Builder::new()
            .prefix("tb-h24-crash-")
            .tempdir()
            .unwrap();
        let spec = LabSpec::from_toml(&format!(
            "name = \"nodaemon\"\nroot = \"{}\"\n[pool]\nlayout = \"mirror\"\ndisk = \"hdd\"\ndisk_size = \"1GB\"\n",
            root.path().display()
        ))
        .unwrap();
        let dir = root.path().join("tb-nodaemon");
        std::fs::create_dir(&dir).unwrap();
        // Its disk mount does not exist: had crash gone on, the power cut
        // would have failed with another message.
        let state = State {
            id: "tb-nodaemon".into(),
            spec,
            resources: vec![Resource::Dir { path: dir.clone() }],
            info: Some(LabInfo {
                backend: Backend::OpenZfs,
                pool: "tb-nodaemon".into(),
                pool_mountpoint: dir.join("pool"),
                workdir: dir.join("pool"),
                client_netns: None,
                nfs_url: None,
                disk_mount: dir.join("disks"),
                disks: vec!["tb-d00".into(), "tb-d01".into()],
                log_disks: Vec::new(),
                link: None,
                write_path: None,
                built_in_s: 0.0,
                zfsd: None,
            }),
        };
        state.save(&dir).unwrap();
        let before = std::fs::read_to_string(State::path(&dir)).unwrap();
        let mut lab = Lab::open(root.path(), "nodaemon").unwrap();
        let said = std::cell::RefCell::new(Vec::new());
        let err = crash(&mut lab, &|s| said.borrow_mut().push(s.to_string()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("no zfs-fuse daemon of its own"), "{err}");
        assert!(!err.contains('\n'), "one line: {err}");
        assert!(said.borrow().is_empty(), "nothing was done: {said:?}");
        assert_eq!(std::fs::read_to_string(State::path(&dir)).unwrap(), before);
    }
}

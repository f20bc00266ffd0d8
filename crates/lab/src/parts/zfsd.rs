//! A lab's own zfs-fuse daemon.
//!
//! zfs-fuse keeps its configuration, control socket, lock and pool cache at
//! fixed paths (`/etc/zfs/zfsrc`, `/var/run/zfs/zfs_socket`,
//! `/var/lock/zfs/zfs_lock`, `/var/lib/zfs/zpool.cache`; strings of the
//! zfs-fuse binary), and a second daemon on the same paths refuses to start
//! ("Error locking /var/lock/zfs/zfs_lock"). Each lab therefore starts its
//! daemon in a mount namespace of its own where lab directories are bound over
//! those paths: the daemon reads the lab's zfsrc (not Debian's, whose
//! `max-arc-size = 100` starved the shared daemon's ARC), listens on the lab's
//! socket and caches the lab's pool only. The lab's `zpool` and `zfs` commands
//! enter the same namespace to reach it.
//!
//! The pool's mount point is a bind mount made shared in the host before the
//! daemon starts, so the dataset zfs-fuse mounts on it inside its namespace
//! propagates to the host (mount_namespaces(7), shared subtrees), where sshd
//! and local workloads see it. The mounts that hold the bound paths (`/`,
//! and `/run` where it is a mount of its own) are made slaves in the daemon's
//! namespace first, so on a host whose mounts are shared (systemd) the binds
//! do not leak out to the host.
//!
//! ARC statistics come from zfs-fuse's kstat file system, which it mounts at
//! `/zfs-kstat` in its own namespace (one file per counter under
//! `zfs/arcstats/`); the host reads them through `/proc/PID/root`.

use crate::parts::sys;
use crate::LabError;
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The fixed paths zfs-fuse uses, each replaced by a lab directory of the
/// given name in the daemon's namespace. `/zfs-kstat` gets one too: zfs-fuse
/// removes that directory when it exits, which would unmount another lab's
/// statistics while it still runs.
pub(crate) const PRIVATE_PATHS: [(&str, &str); 5] = [
    ("/etc/zfs", "etc"),
    ("/var/run/zfs", "run"),
    ("/var/lock/zfs", "lock"),
    ("/var/lib/zfs", "lib"),
    ("/zfs-kstat", "kstat"),
];

/// How the lab's state names its zfs-fuse daemon.
pub(crate) const WHAT: &str = "zfs-fuse";

/// Files zfs-fuse makes in the lab's directories (relative to the daemon
/// directory): its socket, lock and pool cache.
pub(crate) const DAEMON_FILES: [&str; 3] = ["run/zfs_socket", "lock/zfs_lock", "lib/zpool.cache"];

/// zfs-fuse's range for `--max-arc-size` (its `--help`: "Range: 16 to 16384").
pub(crate) const ARC_MIB_RANGE: (u64, u64) = (16, 16384);

/// The zfsrc of a lab's daemon. Debian's file minus `max-arc-size` (the ARC
/// is the lab's `server.arc`, given with `-m`) and minus
/// `zfs-prefetch-disable` (OpenZFS prefetches by default, as the NAS does).
/// The FUSE attribute and entry timeouts are Debian's: zfs-fuse's `--help`
/// counts them as a 40 % and a 100-fold gain for small I/O, and with
/// `default_permissions` they cost no permission checks.
pub(crate) const ZFSRC: &str = "\
# Written by tankbench lab: the private zfs-fuse daemon of one lab.
vdev-cache-size = 10
fuse-attr-timeout = 3600
fuse-entry-timeout = 3600
fuse-mount-options = default_permissions
";

/// Who a lab's daemon is: its pid, its start time (field 22 of
/// /proc/PID/stat, clock ticks since boot) and the lab directory in its
/// command line. All three must match before the lab signals it or enters
/// its namespace, so a reused pid is never mistaken for it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Zfsd {
    pub pid: i32,
    pub start_time: u64,
    /// A word of its command line (the lab's daemon directory).
    pub tag: String,
}

/// Start time of process `pid` (clock ticks after boot), if it exists.
pub(crate) fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; starttime is field 22,
    // the 20th after it (proc(5)).
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

impl Zfsd {
    pub fn alive(&self) -> bool {
        sys::pid_alive(self.pid)
            && start_time(self.pid) == Some(self.start_time)
            && sys::pid_cmdline(self.pid)
                .iter()
                .any(|a| a.contains(self.tag.as_str()))
    }

    /// `program` (zpool, zfs) run in the daemon's mount namespace, where its
    /// socket is.
    pub fn command(&self, program: &str) -> Result<Command, LabError> {
        if !self.alive() {
            return Err(LabError::NotRunning {
                what: "the lab's zfs-fuse daemon".into(),
                pid: self.pid,
                hint: String::new(),
            });
        }
        let path = format!("/proc/{}/ns/mnt", self.pid);
        let fd = std::fs::File::open(&path).map_err(|e| LabError::Io {
            what: format!("open mount namespace {path}"),
            source: e,
        })?;
        let raw = std::os::fd::AsRawFd::as_raw_fd(&fd);
        let keep = std::sync::Arc::new(fd);
        let mut cmd = Command::new(program);
        // SAFETY: runs in the forked child before exec, where only
        // async-signal-safe work is allowed (signal-safety(7)): one setns(2)
        // system call, and on failure an io::Error from errno, which does not
        // allocate. The Arc (kept alive by the closure, owned by the
        // Command) holds the File, so `raw` is open when the child runs.
        unsafe {
            cmd.pre_exec(move || {
                let _hold = &keep;
                if libc::setns(raw, libc::CLONE_NEWNS) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Ok(cmd)
    }

    /// Detach, in the daemon's namespace, the FUSE mounts it copied from the
    /// host that are not the lab's own (other labs' disks, sshfs mounts):
    /// such a copy would keep another lab's FUSE file system alive after
    /// that lab unmounts it, and its pool "busy" at `zpool destroy`, for as
    /// long as this daemon lives. The lab's own disks and pool (everything
    /// under the lab's directory) stay. Called right after the daemon starts,
    /// by `lab up` and by `lab crash`'s restart. Returns what was detached.
    pub(crate) fn detach_foreign_mounts(&self) -> Result<Vec<PathBuf>, LabError> {
        let lab_dir = Path::new(&self.tag)
            .parent()
            .unwrap_or(Path::new(&self.tag));
        let pid = u32::try_from(self.pid).map_err(|_| LabError::PidOutOfRange {
            pid: i64::from(self.pid),
        })?;
        nfs::host::mountns::detach_foreign_fuse_mounts(pid, lab_dir).map_err(|source| {
            LabError::Nfs {
                what: "detach other mounts from the namespace of the lab's zfs-fuse",
                source,
            }
        })
    }

    /// The ARC's counters now, from the daemon's kstat file system.
    pub fn arc_stats(&self) -> Option<ArcStats> {
        if !self.alive() {
            return None;
        }
        let dir = PathBuf::from(format!("/proc/{}/root/zfs-kstat/zfs/arcstats", self.pid));
        let read = |name: &str| -> Option<u64> {
            std::fs::read_to_string(dir.join(name))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        Some(ArcStats {
            size: read("size")?,
            c_max: read("c_max")?,
            hits: read("hits")?,
            misses: read("misses")?,
        })
    }
}

/// The lab daemon's `zpool` and `zfs` for fileio's ZFS facts: the host's
/// own commands reach the host's zfs-fuse socket (or none: "connect: No
/// such file or directory"), never the lab's, which listens in the
/// daemon's mount namespace only.
pub struct DaemonTools<'a>(pub &'a Zfsd);

impl fileio::zfs_facts::ZfsTools for DaemonTools<'_> {
    fn command(&self, program: &str) -> Result<Command, String> {
        self.0.command(program).map_err(|e| e.to_string())
    }
}

/// zfs-fuse's ARC counters (arcstats: bytes held, the ceiling, and lookups
/// answered from the ARC or not, since the daemon started).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct ArcStats {
    pub size: u64,
    pub c_max: u64,
    pub hits: u64,
    pub misses: u64,
}

/// The zfs-fuse command line of a lab's daemon, in the foreground (`-n`: the
/// lab's pid is the daemon's), with its ARC ceiling when one is given
/// (`-m MiB`; zfs-fuse's own default otherwise).
pub(crate) fn daemon_command(
    bin: &Path,
    daemon_dir: &Path,
    arc_mib: Option<u64>,
) -> Result<Command, LabError> {
    let mut cmd = Command::new(bin);
    // The ARC is the server's cache, as on the NAS (OpenZFS on Linux keeps
    // file data out of the page cache). Without this, the host's page cache
    // of the FUSE mount answers re-reads before they reach zfs-fuse: 0 ARC
    // lookups during a read-only run, measured here.
    cmd.args(["--no-daemon", "--disable-page-cache"]);
    if let Some(m) = arc_mib {
        cmd.arg("--max-arc-size").arg(m.to_string());
    }
    // A pid file zfs-fuse ignores with --no-daemon: it puts the lab's daemon
    // directory into the command line, the mark `lab down --all` and the
    // leftover checks look for.
    cmd.arg("--pidfile").arg(daemon_dir.join("zfs-fuse.pid"));
    enter_private_namespace(&mut cmd, daemon_dir)?;
    Ok(cmd)
}

/// Make `cmd` start in a new mount namespace where each of [`PRIVATE_PATHS`]
/// is a bind of the lab's directory of that name under `daemon_dir`.
fn enter_private_namespace(cmd: &mut Command, daemon_dir: &Path) -> Result<(), LabError> {
    let cstr = sys::c_path;
    let mut binds = Vec::new();
    let mut holders: Vec<PathBuf> = Vec::new();
    for (target, name) in PRIVATE_PATHS {
        // Symlinks resolved (/var/run is /run on Debian): the mount table
        // names real paths.
        let real = std::fs::canonicalize(target).map_err(|e| LabError::Io {
            what: format!("{target} (zfs-fuse's fixed path)"),
            source: e,
        })?;
        let holder = mount_holding(&real);
        if !holders.contains(&holder) {
            holders.push(holder);
        }
        binds.push((cstr(&daemon_dir.join(name))?, cstr(&real)?));
    }
    let holders: Vec<CString> = holders.iter().map(|h| cstr(h)).collect::<Result<_, _>>()?;
    // SAFETY: runs in the forked child before exec (signal-safety(7)): only
    // unshare(2) and mount(2) system calls on C strings built before the fork
    // and owned by the closure; on failure an io::Error from errno, which
    // does not allocate. The child is single-threaded, as unshare of a mount
    // namespace requires.
    unsafe {
        cmd.pre_exec(move || {
            let fail = || Err(std::io::Error::last_os_error());
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return fail();
            }
            for h in &holders {
                if libc::mount(
                    std::ptr::null(),
                    h.as_ptr(),
                    std::ptr::null(),
                    libc::MS_SLAVE,
                    std::ptr::null(),
                ) != 0
                {
                    return fail();
                }
            }
            for (source, target) in &binds {
                if libc::mount(
                    source.as_ptr(),
                    target.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ) != 0
                {
                    return fail();
                }
            }
            Ok(())
        });
    }
    Ok(())
}

/// The mount point of the mount that holds `path` (the longest mount-table
/// prefix of it).
fn mount_holding(path: &Path) -> PathBuf {
    // The mount point of a bind made over `path` lives in the mount that
    // holds its parent.
    let parent = path.parent().unwrap_or(Path::new("/"));
    sys::mounts()
        .into_iter()
        .map(|m| m.target)
        .filter(|t| parent.starts_with(t))
        .max_by_key(|t| t.components().count())
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Create the fixed paths zfs-fuse uses where missing, as zfs-fuse itself
/// would: a bind needs a directory to cover. They are system directories
/// other zfs-fuse instances use, so they are never removed.
pub(crate) fn ensure_fixed_paths() -> Result<(), LabError> {
    for (target, _) in PRIVATE_PATHS {
        std::fs::create_dir_all(target).map_err(|e| LabError::Io {
            what: format!("create {target}"),
            source: e,
        })?;
    }
    Ok(())
}

/// Make `path` a bind mount of itself, shared, so mounts made on it in the
/// daemon's namespace appear in the host's.
pub(crate) fn share_mount_point(path: &Path) -> Result<(), LabError> {
    let c = sys::c_path(path)?;
    let err = |what: &str| LabError::Io {
        what: format!("{what} {}", path.display()),
        source: std::io::Error::last_os_error(),
    };
    // SAFETY: `c` is a NUL-terminated string that outlives both calls;
    // mount(2) only reads its arguments.
    unsafe {
        if libc::mount(
            c.as_ptr(),
            c.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND,
            std::ptr::null(),
        ) != 0
        {
            return Err(err("bind-mount"));
        }
        if libc::mount(
            std::ptr::null(),
            c.as_ptr(),
            std::ptr::null(),
            libc::MS_SHARED,
            std::ptr::null(),
        ) != 0
        {
            return Err(err("make shared"));
        }
    }
    Ok(())
}

/// Bytes of a size accepted as `server.arc`, as the MiB zfs-fuse's `-m` takes.
pub(crate) fn arc_mib(bytes: u64) -> Option<u64> {
    bytes.is_multiple_of(1 << 20).then_some(bytes >> 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_reads_field_22() {
        let me = std::process::id() as i32;
        let t = start_time(me).expect("own start time");
        assert_eq!(start_time(me), Some(t));
        assert_eq!(start_time(-5), None);
        assert_eq!(arc_mib(2 << 30), Some(2048));
        assert_eq!(arc_mib((2 << 30) + 1), None);
    }

    /// A daemon record whose pid now belongs to another process (different
    /// start time) is not the daemon: no namespace is entered, no statistics
    /// are read.
    #[test]
    fn a_reused_pid_is_not_the_daemon() {
        let me = std::process::id() as i32;
        let d = Zfsd {
            pid: me,
            start_time: start_time(me).unwrap() + 1,
            tag: String::new(),
        };
        assert!(!d.alive());
        assert!(d.command("true").is_err());
        assert!(d.arc_stats().is_none());
    }
}

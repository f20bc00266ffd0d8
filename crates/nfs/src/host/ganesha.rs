//! nfs-ganesha as a private NFSv3 server: its own rpcbind (ganesha refuses
//! to start without registering its programs) and both daemons in a private
//! mount namespace with their own /run, so neither touches the host's
//! rpcbind socket, pid files or NFSv4 recovery state; optionally in a network
//! namespace. Debian packages: nfs-ganesha, nfs-ganesha-vfs, rpcbind.

use super::{io, program, HostError};
use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What to serve and where.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Directory exported (FSAL_VFS needs name_to_handle_at(2); tmpfs, ext4
    /// and zfs-fuse's FUSE mounts have it).
    pub export: PathBuf,
    /// Address ganesha binds (inside the network namespace, if any).
    pub bind: String,
    pub nfs_port: u16,
    pub mount_port: u16,
    /// Config and log files go here (must exist).
    pub state_dir: PathBuf,
    /// `/run/netns/NAME` (or any namespace file) to serve from.
    pub netns: Option<PathBuf>,
}

impl ServerConfig {
    pub fn config_path(&self) -> PathBuf {
        self.state_dir.join("ganesha.conf")
    }
    pub fn log_path(&self) -> PathBuf {
        self.state_dir.join("ganesha.log")
    }
    /// The client's address of the export.
    pub(crate) fn url(&self) -> String {
        format!(
            "nfs://{}{}?nfsport={}&mountport={}",
            self.bind,
            self.export.display(),
            self.nfs_port,
            self.mount_port
        )
    }
}

/// The ganesha.conf(5) text: NFSv3 over TCP only, one VFS export with root
/// not squashed (the benchmark runs as root, as a hypervisor's datastore
/// mount does), no NLM/RQUOTA/UDP, which need more registrations.
pub(crate) fn config_text(cfg: &ServerConfig) -> String {
    format!(
        "# nfs-ganesha for tankbench; made by tankbench\n\
         NFS_CORE_PARAM {{\n  Protocols = 3;\n  Bind_addr = {bind};\n  NFS_Port = {nfs};\n  MNT_Port = {mnt};\n\
         \x20 Enable_NLM = false;\n  Enable_RQUOTA = false;\n  Enable_UDP = false;\n}}\n\
         NFSV4 {{ Graceless = true; }}\n\
         EXPORT {{\n  Export_Id = 1;\n  Path = \"{export}\";\n  Pseudo = \"{export}\";\n  Protocols = 3;\n\
         \x20 Transports = TCP;\n  Access_Type = RW;\n  Squash = No_Root_Squash;\n  SecType = sys;\n\
         \x20 FSAL {{ Name = VFS; }}\n}}\n",
        bind = cfg.bind,
        nfs = cfg.nfs_port,
        mnt = cfg.mount_port,
        export = cfg.export.display(),
    )
}

/// The two daemons; dropping this stops them.
pub struct Server {
    rpcbind: Option<Child>,
    ganesha: Option<Child>,
}

/// The packages nfs-ganesha's daemons come from.
const GANESHA_PACKAGES: &str = "nfs-ganesha nfs-ganesha-vfs rpcbind";

fn cstr(s: &str) -> CString {
    CString::new(s).expect("no NUL in a fixed path")
}

/// In a forked child before exec (both daemons): die when the parent
/// does, so a killed lab or test leaves no daemon behind, and join network
/// namespace `netns_fd` if given. Only raw system calls, no allocation:
/// async-signal-safe (signal-safety(7)).
fn die_with_parent_in_netns(netns_fd: Option<i32>) -> std::io::Result<()> {
    // SAFETY: prctl and setns take no pointers; `fd` is a descriptor the
    // parent keeps open until the child has been spawned.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        if let Some(fd) = netns_fd {
            if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// rpcbind in a new private mount namespace with its own /run (and
/// /var/lib/nfs), in network namespace `netns_fd` if given.
fn rpcbind_command(bin: PathBuf, netns_fd: Option<i32>) -> Command {
    // Prepared before fork: the child may not allocate.
    let root = cstr("/");
    let run = cstr("/run");
    let tmpfs = cstr("tmpfs");
    let varlib = cstr("/var/lib/nfs");
    let has_varlib = Path::new("/var/lib/nfs").is_dir();
    let mut rpcbind = Command::new(bin);
    // -f: foreground, so the caller owns the process.
    rpcbind
        .args(["-f"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: runs in the forked child before exec, where only
    // async-signal-safe calls are allowed (signal-safety(7)): prctl,
    // setns, unshare and mount are raw system calls that neither allocate
    // nor lock; the CStrings were built before fork and outlive the
    // closure (moved into it); errors are read from errno without
    // allocating.
    unsafe {
        rpcbind.pre_exec(move || {
            die_with_parent_in_netns(netns_fd)?;
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Nothing mounted here may leak back to the host.
            if libc::mount(
                std::ptr::null(),
                root.as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            for (target, wanted) in [(&run, true), (&varlib, has_varlib)] {
                if wanted
                    && libc::mount(
                        tmpfs.as_ptr(),
                        target.as_ptr(),
                        tmpfs.as_ptr(),
                        0,
                        std::ptr::null(),
                    ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    rpcbind
}

impl Server {
    /// Write the configuration and start rpcbind and ganesha; returns once
    /// ganesha reports it serves (or fails with the last line of its log).
    pub fn start(cfg: &ServerConfig) -> Result<Server, HostError> {
        let rpcbind_bin = program("rpcbind", GANESHA_PACKAGES)?;
        let ganesha_bin = program("ganesha.nfsd", GANESHA_PACKAGES)?;
        std::fs::write(cfg.config_path(), config_text(cfg))
            .map_err(io(format!("write {}", cfg.config_path().display())))?;
        let log = cfg.log_path();
        std::fs::write(&log, b"").map_err(io(format!("create {}", log.display())))?;
        let netns = match &cfg.netns {
            Some(p) => Some(std::fs::File::open(p).map_err(io(format!("open {}", p.display())))?),
            None => None,
        };
        let netns_fd = netns.as_ref().map(AsRawFd::as_raw_fd);
        let mut rpcbind = rpcbind_command(rpcbind_bin, netns_fd);
        let rpcbind_child = rpcbind.spawn().map_err(io("start rpcbind"))?;
        let mut server = Server {
            rpcbind: Some(rpcbind_child),
            ganesha: None,
        };
        let pid = server.rpcbind.as_ref().map_or(0, Child::id);
        let mnt_path = format!("/proc/{pid}/ns/mnt");
        // rpcbind's socket appears in its private /run once it listens.
        let sock = format!("/proc/{pid}/root/run/rpcbind.sock");
        server.wait_for(
            "rpcbind",
            Duration::from_secs(10),
            || Path::new(&sock).exists(),
            &log,
        )?;
        let mnt = std::fs::File::open(&mnt_path).map_err(io(format!("open {mnt_path}")))?;
        let mnt_fd = mnt.as_raw_fd();
        super::mountns::detach_foreign_fuse_mounts(pid, &cfg.export)?;
        let mut ganesha = Command::new(ganesha_bin);
        ganesha
            .arg("-F")
            .arg("-f")
            .arg(cfg.config_path())
            .arg("-L")
            .arg(&log)
            .arg("-p")
            .arg("/run/ganesha.pid")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: as above: only raw system calls on descriptors the parent
        // keeps open (`mnt`, `netns`) until spawn returns.
        unsafe {
            ganesha.pre_exec(move || {
                die_with_parent_in_netns(netns_fd)?;
                if libc::setns(mnt_fd, libc::CLONE_NEWNS) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        server.ganesha = Some(ganesha.spawn().map_err(io("start ganesha.nfsd"))?);
        drop(mnt);
        drop(netns);
        let log2 = log.clone();
        server.wait_for(
            "nfs-ganesha",
            Duration::from_secs(30),
            || std::fs::read_to_string(&log2).is_ok_and(|t| t.contains("NFS SERVER INITIALIZED")),
            &log,
        )?;
        Ok(server)
    }

    fn wait_for(
        &mut self,
        what: &'static str,
        limit: Duration,
        mut ready: impl FnMut() -> bool,
        log: &Path,
    ) -> Result<(), HostError> {
        let deadline = Instant::now() + limit;
        loop {
            if ready() {
                return Ok(());
            }
            let died = [&mut self.rpcbind, &mut self.ganesha]
                .into_iter()
                .flatten()
                .any(|c| c.try_wait().ok().flatten().is_some());
            if died || Instant::now() > deadline {
                let text = std::fs::read_to_string(log).unwrap_or_default();
                // The fatal line only says "Fatal errors"; the cause is in
                // the errors before it. D-Bus and Kerberos complaints are
                // normal here (no system bus, no keytab).
                let errors: Vec<&str> = text
                    .lines()
                    .filter(|l| ["CRIT", "MAJ", "FATAL"].iter().any(|k| l.contains(k)))
                    .filter(|l| {
                        !l.contains("DBUS")
                            && !l.contains("krb5")
                            && !l.contains("credentials for principal")
                    })
                    .map(|l| l.rsplit_once(" :").map_or(l, |(_, m)| m))
                    .collect();
                let log = if errors.is_empty() {
                    "no log output".to_string()
                } else {
                    errors[errors.len().saturating_sub(3)..].join("; ")
                };
                return Err(HostError::DidNotStart {
                    daemon: what,
                    exited: died,
                    log,
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Wait until either daemon exits (the lab daemon's main loop), or
    /// `stop` says so.
    pub fn wait(&mut self, stop: &dyn Fn() -> bool) -> String {
        loop {
            for (name, c) in [
                ("rpcbind", &mut self.rpcbind),
                ("ganesha.nfsd", &mut self.ganesha),
            ] {
                if let Some(Ok(Some(st))) = c.as_mut().map(Child::try_wait) {
                    return format!("{name} exited ({st})");
                }
            }
            if stop() {
                return "stopped".into();
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // ganesha first (it unregisters from rpcbind), then rpcbind. A short
        // grace, then SIGKILL: ganesha's orderly shutdown can take seconds,
        // and until it has exited it holds the export open, so whoever
        // stops it next (the lab, destroying the pool) would find it busy.
        // NFSv3 keeps no state a kill loses: unstable data not yet committed
        // is the client's to resend, and a stopped benchmark resends nothing.
        for child in [self.ganesha.take(), self.rpcbind.take()]
            .into_iter()
            .flatten()
        {
            let mut child = child;
            if let Ok(pid) = i32::try_from(child.id()) {
                // SAFETY: kill(2) on our own child, which has not been reaped
                // (so the pid cannot have been reused).
                unsafe {
                    libc::kill(pid, libc::SIGTERM);
                }
            }
            let deadline = Instant::now() + Duration::from_secs(2);
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if matches!(child.try_wait(), Ok(None)) {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

//! Small system helpers: running programs with clear errors, the mount table,
//! network-namespace entry for child processes, prerequisites, and Ctrl-C.

use crate::LabError;
use nfs::mount_table::{unescape_lossy, unescape_path};
use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Run a program to completion; a non-zero exit becomes an error carrying the
/// command line and its stderr.
pub fn run<I, S>(program: &str, args: I) -> Result<String, LabError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(program);
    cmd.args(args);
    run_cmd(&mut cmd)
}

pub fn run_cmd(cmd: &mut Command) -> Result<String, LabError> {
    let out = output(cmd)?;
    stdout_of(cmd, out)
}

/// A finished command's stdout, or the error naming it with its stderr.
fn stdout_of(cmd: &Command, out: Output) -> Result<String, LabError> {
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(LabError::Command {
            command: describe(cmd),
            status: out.status.code().unwrap_or(-1),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

pub fn output(cmd: &mut Command) -> Result<Output, LabError> {
    cmd.stdin(Stdio::null());
    cmd.output().map_err(|e| LabError::Spawn {
        command: describe(cmd),
        source: e,
    })
}

pub fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Give `cmd` no input and send its stdout and stderr to `log`, a new file
/// (or, with `append`, the end of an existing one). A file rather than a
/// pipe: a daemon, or a child it leaves behind (sshfs's ssh), would hold a
/// pipe open forever.
pub(crate) fn log_output_to(cmd: &mut Command, log: &Path, append: bool) -> Result<(), LabError> {
    let opened = if append {
        std::fs::OpenOptions::new().append(true).open(log)
    } else {
        std::fs::File::create(log)
    };
    let io = |e| LabError::Io {
        what: format!("open log {}", log.display()),
        source: e,
    };
    let f = opened.map_err(io)?;
    cmd.stdin(Stdio::null())
        .stdout(f.try_clone().map_err(io)?)
        .stderr(f);
    Ok(())
}

/// Start `cmd` in a session of its own (setsid(2)), so that a Ctrl-C at the
/// terminal reaches the lab, which tears down, rather than the daemons
/// under a live pool.
pub(crate) fn own_session(cmd: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec, where only
    // async-signal-safe functions may be called (signal-safety(7)); it
    // calls setsid(2), which is on that list, and nothing else: it
    // allocates nothing and captures nothing.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
}

/// Start `cmd`; a failure to start names the command line.
pub(crate) fn spawn(cmd: &mut Command) -> Result<std::process::Child, LabError> {
    cmd.spawn().map_err(|e| LabError::Spawn {
        command: describe(cmd),
        source: e,
    })
}

/// Make `cmd` run inside network namespace `netns` (a name under
/// /run/netns) while staying in the host's mount namespace. `ip netns exec`
/// would also give the child a private mount namespace, and then an sshfs
/// mount made inside it would be invisible to the workload started next.
pub(crate) fn in_netns(cmd: &mut Command, netns: &str) -> Result<(), LabError> {
    let path = netns_path(netns);
    let fd = std::fs::File::open(&path).map_err(|e| LabError::Io {
        what: format!("open network namespace {}", path.display()),
        source: e,
    })?;
    let raw = std::os::fd::AsRawFd::as_raw_fd(&fd);
    // The fd must stay open until the child has called setns; keep it alive in
    // the closure (dropped with the Command).
    let keep = std::sync::Arc::new(fd);
    // SAFETY: the closure runs in the forked child before exec, where only
    // async-signal-safe work is allowed (signal-safety(7)). It makes one raw
    // system call (setns(2), a thin syscall wrapper that neither allocates nor
    // locks) and on failure reads errno into an io::Error, which stores the
    // code without allocating. `_hold` only borrows the Arc, it does not touch
    // its count. `raw` stays a valid descriptor because the Arc keeps the File
    // open for as long as the Command (and so the closure) lives.
    unsafe {
        cmd.pre_exec(move || {
            let _hold = &keep;
            if libc::setns(raw, libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(())
}

pub fn netns_path(netns: &str) -> PathBuf {
    Path::new("/run/netns").join(netns)
}

/// Run `f` on a new thread that has joined network namespace `netns`
/// (namespaces are per thread, so the caller's threads are unaffected).
pub(crate) fn with_netns<T: Send + 'static>(
    netns: &str,
    f: impl FnOnce() -> Result<T, LabError> + Send + 'static,
) -> Result<T, LabError> {
    let path = netns_path(netns);
    let fd = std::fs::File::open(&path).map_err(|e| LabError::Io {
        what: format!("open network namespace {}", path.display()),
        source: e,
    })?;
    std::thread::spawn(move || {
        let raw = std::os::fd::AsRawFd::as_raw_fd(&fd);
        // SAFETY: `raw` belongs to `fd`, which is open for this whole closure;
        // setns(2) changes only this new thread's network namespace.
        if unsafe { libc::setns(raw, libc::CLONE_NEWNET) } != 0 {
            return Err(LabError::Io {
                what: "setns into the lab network namespace".into(),
                source: std::io::Error::last_os_error(),
            });
        }
        f()
    })
    .join()
    .map_err(|_| LabError::Panicked {
        what: "a network-namespace worker thread",
    })?
}

#[derive(Debug, Clone)]
pub struct MountEntry {
    pub source: String,
    pub target: PathBuf,
    pub fstype: String,
}

/// The mount table of this process's mount namespace.
pub fn mounts() -> Vec<MountEntry> {
    let text = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let source = unescape_lossy(it.next()?);
            let target = unescape_path(it.next()?);
            let fstype = it.next()?.to_string();
            Some(MountEntry {
                source,
                target,
                fstype,
            })
        })
        .collect()
}

pub(crate) fn is_mounted(path: &Path) -> bool {
    mounts().iter().any(|m| m.target == path)
}

/// Unmount `path` (no lazy detach: a busy mount is an error worth seeing).
pub fn umount(path: &Path) -> Result<(), LabError> {
    let c = c_path(path)?;
    // SAFETY: `c` is a NUL-terminated string that outlives the call, and
    // umount2(2) only reads it.
    if unsafe { libc::umount2(c.as_ptr(), 0) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINVAL) && !is_mounted(path) {
            return Ok(());
        }
        return Err(LabError::Io {
            what: format!("unmount {}", path.display()),
            source: e,
        });
    }
    Ok(())
}

/// `path` as the C string a system call takes.
pub(crate) fn c_path(path: &Path) -> Result<std::ffi::CString, LabError> {
    std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| LabError::NulInPath {
        path: path.to_path_buf(),
    })
}

pub fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Path::new(program).exists().then(|| PathBuf::from(program));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    // sbin directories are searched too: `ip`, `sshd`, `zpool` live there and a
    // non-login root shell may not have them on PATH.
    std::env::split_paths(&path)
        .chain(
            ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
                .iter()
                .map(PathBuf::from),
        )
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// A program the lab needs, and how to get it.
pub(crate) struct Requirement {
    pub program: &'static str,
    pub package: &'static str,
}

/// Check root, /dev/fuse and the given programs; one error listing everything
/// missing with the command that installs it.
pub(crate) fn check_prerequisites(programs: &[Requirement]) -> Result<(), LabError> {
    let mut missing = Vec::new();
    if effective_uid() != 0 {
        missing.push("root privileges (run as root, e.g. with sudo: the lab creates network namespaces and mounts)".to_string());
    }
    if !Path::new("/dev/fuse").exists() {
        missing.push("/dev/fuse (load the fuse module: modprobe fuse; in a container, pass --device /dev/fuse)".to_string());
    }
    let mut packages: Vec<&str> = Vec::new();
    for r in programs {
        if which(r.program).is_none() {
            missing.push(format!("program `{}` (package {})", r.program, r.package));
            if !packages.contains(&r.package) {
                packages.push(r.package);
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let mut msg = format!("the lab cannot run; missing: {}", missing.join("; "));
    if !packages.is_empty() {
        msg.push_str(&format!(
            "; install with: apt-get install {}",
            packages.join(" ")
        ));
    }
    Err(LabError::Missing(msg))
}

/// The effective user id of this process.
pub(crate) fn effective_uid() -> u32 {
    // SAFETY: geteuid(2) takes no arguments, cannot fail and touches no memory
    // of ours.
    unsafe { libc::geteuid() }
}

/// Ask the kernel to wake the calling thread on time: the default 50 µs timer
/// slack (prctl(2), PR_SET_TIMERSLACK) would add that much to every sleep and
/// distort the sub-millisecond delays the disks and the relay inject.
pub(crate) fn precise_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and changes only
    // the calling thread's timer slack; no pointers are passed.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// Route SIGINT, SIGTERM and SIGHUP to the process's stop flag (fileio's one
/// policy) so a build or run in progress can stop at the next step and tear
/// down instead of dying half-built; an ignored signal stays ignored (`nohup
/// tankbench lab matrix …` survives the terminal closing), and a second
/// signal ends the process. Child processes in the same process group still
/// get the signal themselves.
pub fn install_interrupt_handler() {
    fileio::signals::StopHandlers::new().install();
}

/// Whether a stop signal arrived.
pub fn interrupted() -> bool {
    fileio::signals::stop_requested()
}

pub(crate) fn check_interrupted() -> Result<(), LabError> {
    if interrupted() {
        Err(LabError::Interrupted)
    } else {
        Ok(())
    }
}

/// Whether process `pid` exists (and is not a zombie we could reap).
pub fn pid_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            // State is the field after the parenthesised command name.
            let state = s
                .rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next());
            state != Some("Z")
        }
        Err(_) => false,
    }
}

/// Command line of `pid`, NUL-separated arguments.
pub fn pid_cmdline(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Stop a process the lab started: SIGTERM, wait up to `grace`, then SIGKILL.
/// `expect` guards against pid reuse: the command line must contain it.
pub(crate) fn stop_pid(pid: i32, expect: &str, grace: std::time::Duration) {
    if !pid_alive(pid) || !pid_cmdline(pid).iter().any(|a| a.contains(expect)) {
        return;
    }
    send_signal(pid, libc::SIGTERM);
    let deadline = std::time::Instant::now() + grace;
    while std::time::Instant::now() < deadline {
        if !pid_alive(pid) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    send_signal(pid, libc::SIGKILL);
}

/// kill(2) without looking at the result: the callers check afterwards
/// whether the process is still there.
fn send_signal(pid: i32, sig: libc::c_int) {
    // SAFETY: kill(2) takes two integers and touches no memory of ours; the
    // callers pass a positive pid they checked against its command line.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// The last non-empty line of a log file ("no output" for none): what a
/// daemon or program said last, quoted in the error of its failure.
pub(crate) fn last_line(log: &Path) -> String {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no output")
        .to_string()
}

/// A child's process id as the kernel's pid type.
pub(crate) fn child_pid(child: &std::process::Child) -> Result<i32, LabError> {
    i32::try_from(child.id()).map_err(|_| LabError::PidOutOfRange {
        pid: i64::from(child.id()),
    })
}

/// Every process id on the machine.
pub fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .map(|rd| {
            rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The id of the topmost mount at `target` in this process's mount
/// namespace and its file system type (/proc/self/mountinfo). Read from the
/// table, not by stat(2): a FUSE server that no longer answers would hang a
/// stat of its mount point.
pub(crate) fn mount_at(target: &Path) -> Option<(u64, String)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().rev().find_map(|l| {
        // id parent major:minor root mount-point options [optional...] - fstype source superoptions
        let mut it = l.split_whitespace();
        let id: u64 = it.next()?.parse().ok()?;
        let point = unescape_path(it.nth(3)?);
        let fstype = l.split_once(" - ")?.1.split_whitespace().next()?;
        (point == target).then(|| (id, fstype.to_string()))
    })
}

/// The id of the mount that `link` (a /proc magic link: `cwd`, `fd/N`)
/// points into, found without a request to that file system: an O_PATH
/// open of a magic link jumps straight to its target and does not open it,
/// and /proc/self/fdinfo names the mount of the descriptor.
fn mount_of_link(link: &Path) -> Option<u64> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH)
        .open(link)
        .ok()?;
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", f.as_raw_fd())).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("mnt_id:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Processes that hold something on mount `mount_id` (see `mount_at`):
/// their working directory or an open file. Each as `pid N (command,
/// what)`, at most five. By mount, not by path: a mount detached on the way
/// down (`umount -l`) shows its holders' paths as `/`; and not by stat(2),
/// which would wait on a FUSE server that does not answer.
pub(crate) fn holders_of(mount_id: u64) -> Vec<String> {
    let me = std::process::id();
    let on_it = |p: &Path| mount_of_link(p) == Some(mount_id);
    let mut out = Vec::new();
    for pid in all_pids() {
        if u32::try_from(pid).is_ok_and(|p| p == me) {
            continue;
        }
        let proc_dir = PathBuf::from(format!("/proc/{pid}"));
        let what = if on_it(&proc_dir.join("cwd")) {
            "its working directory"
        } else if std::fs::read_dir(proc_dir.join("fd"))
            .map(|fds| fds.flatten().any(|fd| on_it(&fd.path())))
            .unwrap_or(false)
        {
            "an open file"
        } else {
            continue;
        };
        let comm = std::fs::read_to_string(proc_dir.join("comm")).unwrap_or_default();
        out.push(format!("pid {pid} ({}, {what})", comm.trim()));
        if out.len() == 5 {
            break;
        }
    }
    out
}

/// How a command ended within a time limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Within {
    Succeeded,
    Failed,
    /// Still running at the limit: killed (it is our child) and reaped.
    TimedOut,
}

/// Run `cmd` (no input, output discarded) for at most `limit`.
pub(crate) fn status_within(cmd: &mut Command, limit: std::time::Duration) -> Within {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return Within::Failed;
    };
    match exit_within(&mut child, limit) {
        Some(Ok(status)) if status.success() => Within::Succeeded,
        Some(_) => Within::Failed,
        None => Within::TimedOut,
    }
}

/// `run_cmd` for at most `limit`: `None` when the command was still running
/// at the limit (it is then killed and reaped). Its output is read after it
/// ends, so it is for commands that say little (a pipe holds 64 KiB).
pub(crate) fn run_cmd_within(
    cmd: &mut Command,
    limit: std::time::Duration,
) -> Option<Result<String, LabError>> {
    let spawned = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let failed = |e| {
        Some(Err(LabError::Spawn {
            command: describe(cmd),
            source: e,
        }))
    };
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return failed(e),
    };
    match exit_within(&mut child, limit)? {
        Ok(_) => {}
        Err(e) => return failed(e),
    }
    match child.wait_with_output() {
        Ok(out) => Some(stdout_of(cmd, out)),
        Err(e) => failed(e),
    }
}

/// Wait at most `limit` for `child` to exit: its status, or `None` when it
/// was still running at the limit (it is then killed and reaped).
fn exit_within(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> Option<std::io::Result<std::process::ExitStatus>> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(Ok(status)),
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Err(e) => return Some(Err(e)),
        }
    }
}

/// A running process called `name` (its /proc comm, at most 15 bytes).
#[cfg(test)]
pub(crate) fn process_named(name: &str) -> Option<i32> {
    all_pids().into_iter().find(|pid| {
        pid_alive(*pid)
            && std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim_end() == name)
    })
}

#[cfg(test)]
mod tests {
    use super::install_interrupt_handler;

    /// The disposition of `sig` as a raw handler value.
    fn disposition(sig: libc::c_int) -> libc::sighandler_t {
        // SAFETY: sigaction(2) with no new action only writes the current one
        // into `old`, a valid struct owned here.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            assert_eq!(libc::sigaction(sig, std::ptr::null(), &mut old), 0);
            old.sa_sigaction
        }
    }

    #[test]
    fn an_ignored_sighup_stays_ignored_as_under_nohup() {
        // SAFETY: setting a signal to SIG_IGN has no preconditions; no test in
        // this crate relies on SIGHUP's disposition.
        unsafe {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
        }
        install_interrupt_handler();
        assert_eq!(disposition(libc::SIGHUP), libc::SIG_IGN);
        // SIGTERM was not ignored, so the lab's handler takes it.
        assert_ne!(disposition(libc::SIGTERM), libc::SIG_DFL);
    }
}

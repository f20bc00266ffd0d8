//! Private mount namespaces without other file systems' FUSE mounts.
//!
//! unshare(CLONE_NEWNS) copies every mount of the host, FUSE mounts of other
//! programs included. A copy keeps its FUSE file system alive after the owner
//! unmounts it on the host: its daemon never sees the unmount, and zfs-fuse
//! refuses to destroy a pool whose dataset is still mounted somewhere ("pool
//! is busy", seen with another lab's private namespace). A namespace the lab
//! makes for a daemon (ganesha's, a lab's zfs-fuse) must therefore hold no
//! FUSE mount but its own: this detaches the others, once, right after the
//! namespace is made. ganesha's namespace and a lab's zfs-fuse namespace both
//! go through here.

use super::{io, program, HostError};
use crate::mount_table::unescape_path;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The FUSE mounts in `mountinfo` (proc(5) format; octal escapes such as
/// `\040` decoded) that are not under `keep_under` and can be detached
/// without touching any other namespace, deepest first.
///
/// A mount whose parent is shared (`shared:N` among its optional fields) is
/// left alone: unmounting it would propagate to the parent's peers in other
/// namespaces (mount_namespaces(7)) and take the owner's own mount with it.
/// Such a copy needs no detaching anyway: it is a peer of the owner's, so
/// the owner's unmount removes it too.
pub(crate) fn foreign_fuse_mounts(mountinfo: &str, keep_under: &Path) -> Vec<PathBuf> {
    struct Line<'a> {
        id: &'a str,
        parent: &'a str,
        point: PathBuf,
        shared: bool,
        fuse: bool,
    }
    let lines: Vec<Line> = mountinfo
        .lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let mut f = left.split(' ');
            let id = f.next()?;
            let parent = f.next()?;
            let point = unescape_path(f.nth(2)?);
            // After the mount options come the optional fields.
            let shared = f.skip(1).any(|o| o.starts_with("shared:"));
            let fstype = right.split(' ').next()?;
            let fuse = fstype == "fuse" || fstype.starts_with("fuse.");
            Some(Line {
                id,
                parent,
                point,
                shared,
                fuse,
            })
        })
        .collect();
    let parent_shared = |l: &Line| lines.iter().any(|p| p.id == l.parent && p.shared);
    let mut v: Vec<PathBuf> = lines
        .iter()
        .filter(|l| l.fuse && !l.point.starts_with(keep_under) && !parent_shared(l))
        .map(|l| l.point.clone())
        .collect();
    v.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    v.dedup();
    v
}

/// Lazily unmount, in the mount namespace of process `pid`, the FUSE mounts
/// `foreign_fuse_mounts` names for it (read from its own
/// `/proc/PID/mountinfo`, which shows that namespace's propagation). Returns
/// what was asked to be detached. `umount -l` runs as a child that joins the
/// namespace (setns(2)); some mounts may be gone meanwhile, so its exit
/// status is not the point, the namespace's mount table is.
pub fn detach_foreign_fuse_mounts(pid: u32, keep_under: &Path) -> Result<Vec<PathBuf>, HostError> {
    let info_path = format!("/proc/{pid}/mountinfo");
    let info = std::fs::read_to_string(&info_path).map_err(io(format!("read {info_path}")))?;
    let mounts = foreign_fuse_mounts(&info, keep_under);
    if mounts.is_empty() {
        return Ok(mounts);
    }
    let ns_path = format!("/proc/{pid}/ns/mnt");
    let ns = std::fs::File::open(&ns_path).map_err(io(format!("open {ns_path}")))?;
    let ns_fd = ns.as_raw_fd();
    let mut umount = Command::new(program("umount", "mount")?);
    umount
        .arg("-l")
        .arg("--")
        .args(&mounts)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: one raw system call (setns(2)) on a descriptor `ns` keeps open
    // until status() returns; async-signal-safe, no allocation.
    unsafe {
        umount.pre_exec(move || {
            if libc::setns(ns_fd, libc::CLONE_NEWNS) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let _ = umount.status().map_err(io("run umount -l"))?;
    drop(ns);
    Ok(mounts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_other_unshared_fuse_mounts_are_detached_deepest_first() {
        // tb-c's pool: a shared bind with zfs-fuse's mount on it, as every
        // zfs-fuse lab's pool is (its copy here follows its owner's unmount
        // and must not be unmounted from here).
        let info = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 0:50 / /var/tmp/tb-x/tb-a/disks rw - fuse tb-a-disks rw,user_id=0
41 27 0:51 / /var/tmp/tb-x/tb-a/pool rw - fuse tb-a rw
42 27 0:52 / /var/tmp/tb-x/tb-b/pool rw - fuse tb-b rw
43 42 0:53 / /var/tmp/tb-x/tb-b/pool/sub rw - fuse tb-b/sub rw
44 27 0:54 / /mnt/with\\040space rw - fuse.sshfs h:/ rw
45 27 0:55 / /run/user rw - tmpfs tmpfs rw
46 27 254:0 /var/tmp/tb-x/tb-c/pool /var/tmp/tb-x/tb-c/pool rw shared:2 - ext4 /dev/vda rw
47 46 0:56 / /var/tmp/tb-x/tb-c/pool rw shared:3 - fuse.zfs tb-c rw
48 27 0:57 / /var/tmp/tb-x/tb-c/disks rw master:7 - fuse tb-c-disks rw
";
        let v = foreign_fuse_mounts(info, Path::new("/var/tmp/tb-x/tb-a/pool"));
        assert_eq!(
            v,
            [
                "/var/tmp/tb-x/tb-b/pool/sub",
                "/var/tmp/tb-x/tb-a/disks",
                "/var/tmp/tb-x/tb-b/pool",
                "/var/tmp/tb-x/tb-c/disks",
                "/mnt/with space",
            ]
            .map(PathBuf::from)
        );
        // Everything under the kept directory stays: a lab's zfs-fuse keeps
        // its own disks and pool.
        let v = foreign_fuse_mounts(info, Path::new("/var/tmp/tb-x/tb-b"));
        assert_eq!(
            v,
            [
                "/var/tmp/tb-x/tb-a/disks",
                "/var/tmp/tb-x/tb-a/pool",
                "/var/tmp/tb-x/tb-c/disks",
                "/mnt/with space",
            ]
            .map(PathBuf::from)
        );
    }
}

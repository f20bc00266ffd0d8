//! Where a run happens: kernel, CPUs, memory, and the file system under the
//! target directory (type, mount options, backing device, rotational or not),
//! and the ZFS under it ([`crate::zfs_facts`]).

use crate::result::Environment;
use nfs::mount_table::unescape_lossy;
use std::path::Path;

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// This machine's name (the UTS namespace's), or empty when unknown.
pub(crate) fn hostname() -> String {
    read_trimmed("/proc/sys/kernel/hostname")
}

/// (MemTotal, MemAvailable) in bytes.
pub fn memory() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map(|kib| kib * 1024)
            .unwrap_or(0)
    };
    (field("MemTotal:"), field("MemAvailable:"))
}

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MountEntry {
    pub major_minor: String,
    pub mount_point: String,
    pub options: String,
    pub fs_type: String,
    pub source: String,
    pub super_options: String,
}

/// Parse mountinfo text (fields are separated by spaces; octal escapes for spaces
/// in paths are decoded).
pub(crate) fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let l: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            Some(MountEntry {
                major_minor: l.get(2)?.to_string(),
                mount_point: unescape_lossy(l.get(4)?),
                options: l.get(5)?.to_string(),
                fs_type: r.first()?.to_string(),
                source: unescape_lossy(r.get(1).unwrap_or(&"")),
                super_options: r.get(2).unwrap_or(&"").to_string(),
            })
        })
        .collect()
}

/// The mount that holds `dir` (longest mount point prefix; later entries win
/// ties, as they are mounted on top).
pub(crate) fn mount_of(dir: &Path) -> Option<MountEntry> {
    let canon = std::fs::canonicalize(dir).ok()?;
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<MountEntry> = None;
    for m in parse_mountinfo(&text) {
        let mp = Path::new(&m.mount_point);
        if canon.starts_with(mp)
            && best
                .as_ref()
                .is_none_or(|b| m.mount_point.len() >= b.mount_point.len())
        {
            best = Some(m);
        }
    }
    best
}

/// Whether the block device `major:minor` spins (None when unknown: network,
/// FUSE, ZFS, tmpfs).
pub fn rotational(major_minor: &str) -> Option<bool> {
    let base = format!("/sys/dev/block/{major_minor}");
    for candidate in [
        format!("{base}/queue/rotational"),
        format!("{base}/../queue/rotational"),
    ] {
        if let Ok(v) = std::fs::read_to_string(&candidate) {
            return Some(v.trim() == "1");
        }
    }
    None
}

/// Logical sector size of the device under `major:minor`, when known.
pub fn logical_block_size(major_minor: &str) -> Option<u64> {
    let base = format!("/sys/dev/block/{major_minor}");
    for candidate in [
        format!("{base}/queue/logical_block_size"),
        format!("{base}/../queue/logical_block_size"),
    ] {
        if let Ok(v) = std::fs::read_to_string(&candidate) {
            return v.trim().parse().ok();
        }
    }
    None
}

/// Capture the environment of a run on `dir`.
pub fn capture(dir: &Path, caches_dropped: bool) -> Environment {
    let (mem_total, mem_available) = memory();
    let mount = mount_of(dir).unwrap_or_default();
    // The dataset's properties, pool layout and version; the ARC and iostat
    // over the run are added by `zfs_facts::Watch` around it.
    let zfs = crate::zfs_facts::capture(dir, &mount);
    Environment {
        hostname: hostname(),
        kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        cpus: std::thread::available_parallelism()
            .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
            .unwrap_or(1),
        mem_total_bytes: mem_total,
        mem_available_bytes: mem_available,
        fs_type: mount.fs_type.clone(),
        mount_point: mount.mount_point.clone(),
        mount_options: if mount.super_options.is_empty() {
            mount.options.clone()
        } else {
            format!("{},{}", mount.options, mount.super_options)
        },
        device: mount.source.clone(),
        rotational: if mount.major_minor.is_empty() {
            None
        } else {
            rotational(&mount.major_minor)
        },
        caches_dropped,
        compression: zfs
            .as_ref()
            .and_then(|z| z.property("compression"))
            .map(str::to_string),
        zfs,
    }
}

/// Drop the page cache (needs root). Returns whether it worked.
pub(crate) fn drop_caches() -> bool {
    // SAFETY: sync(2) has no arguments.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3").is_ok()
}

/// Whether the file system compresses data written as zeros (ZFS with
/// compression, btrfs with compress, or zfs-fuse pools).
pub(crate) fn fs_may_compress(env: &Environment) -> bool {
    if let Some(c) = &env.compression {
        return c != "off";
    }
    let t = env.fs_type.as_str();
    t == "zfs"
        || t.contains("zfs")
        || (t == "btrfs" && env.mount_options.contains("compress"))
        || (t.starts_with("fuse") && env.device.contains('/') && !env.device.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_parses() {
        let text = "36 35 98:0 /mnt1 /mnt/a\\040b rw,noatime master:1 - ext4 /dev/root rw,errors=continue\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].mount_point, "/mnt/a b");
        assert_eq!(m[0].fs_type, "ext4");
        assert_eq!(m[0].source, "/dev/root");
        assert_eq!(m[0].major_minor, "98:0");
        // A mount point that is not ASCII reads as the path it is (not byte
        // by byte as Latin-1), so a run's directory under it is found.
        let m = parse_mountinfo("37 35 98:1 / /mnt/café\\040b rw - ext4 /dev/vdb rw\n");
        assert_eq!(m[0].mount_point, "/mnt/café b");
    }

    #[test]
    fn the_hostname_is_the_one_gethostname_gives() {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer outlives the call, which writes at most its length.
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        assert_eq!(rc, 0);
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        assert_eq!(hostname(), String::from_utf8_lossy(&buf[..end]));
    }

    #[test]
    fn capture_finds_root() {
        let e = capture(Path::new("/"), false);
        assert!(!e.fs_type.is_empty());
        assert!(e.mem_total_bytes > 0);
        assert!(e.cpus >= 1);
    }
}

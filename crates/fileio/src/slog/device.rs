//! Is a block device free to be overwritten? `tankbench slog --destructive`
//! writes over a device, so before it opens one for writing it looks for
//! every sign that the device holds something: a mount, swap, a holder (a
//! device-mapper, md or loop device built on it), partitions, a partition
//! table, a file system or pool signature (its own scan and `blkid -p` when
//! present), and finally the kernel's own answer, an exclusive open.
//!
//! A finding is a refusal: the device may be a blank one the user meant,
//! but a false "in use" costs a `wipefs`, a false "free" costs their data.

use nfs::mount_table::unescape_lossy;
use std::fs;
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Why a device is not free to overwrite.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceInUse {
    #[error("{device} is mounted on {mount_point}")]
    Mounted { device: String, mount_point: String },
    #[error("{device} is in use as swap")]
    Swap { device: String },
    #[error("{device} is held by {holder} (/sys/class/block/{device}/holders)")]
    Held { device: String, holder: String },
    #[error("it has partitions ({names})")]
    Partitions { names: String },
    #[error("it holds a signature of {signature} at byte {offset}")]
    Signature {
        signature: &'static str,
        offset: u64,
    },
    #[error("blkid finds {found}")]
    Blkid { found: String },
    #[error("the kernel refuses an exclusive open (EBUSY): something holds it")]
    Busy,
}

/// One on-disk signature: these bytes at this offset from the start (or,
/// with `from_end`, back from the end of the device).
struct Signature {
    name: &'static str,
    offset: usize,
    bytes: &'static [u8],
}

/// Signatures found by a fixed offset in the first 512 KiB (the offsets are
/// those of each format's specification; the list is what an admin is likely
/// to have on a disk they reuse as a log device).
const SIGNATURES: &[Signature] = &[
    // ext2/3/4: s_magic 0xEF53 (little-endian) at 56 into the superblock at 1024.
    Signature {
        name: "ext2/3/4",
        offset: 1080,
        bytes: &[0x53, 0xEF],
    },
    Signature {
        name: "XFS",
        offset: 0,
        bytes: b"XFSB",
    },
    // btrfs: the superblock at 64 KiB, its magic 64 bytes in.
    Signature {
        name: "btrfs",
        offset: 0x1_0040,
        bytes: b"_BHRfS_M",
    },
    // Linux swap: the magic in the last 10 bytes of the first page.
    Signature {
        name: "swap",
        offset: 4096 - 10,
        bytes: b"SWAPSPACE2",
    },
    Signature {
        name: "swap",
        offset: 65536 - 10,
        bytes: b"SWAPSPACE2",
    },
    Signature {
        name: "LVM2 physical volume",
        offset: 512,
        bytes: b"LABELONE",
    },
    Signature {
        name: "LUKS",
        offset: 0,
        bytes: b"LUKS\xba\xbe",
    },
    // md RAID superblock 1.1 (at 0) and 1.2 (at 4 KiB): magic a92b4efc LE.
    Signature {
        name: "md RAID",
        offset: 0,
        bytes: &[0xfc, 0x4e, 0x2b, 0xa9],
    },
    Signature {
        name: "md RAID",
        offset: 4096,
        bytes: &[0xfc, 0x4e, 0x2b, 0xa9],
    },
    Signature {
        name: "GPT partition table",
        offset: 512,
        bytes: b"EFI PART",
    },
    Signature {
        name: "ISO 9660",
        offset: 32769,
        bytes: b"CD001",
    },
    // The boot signature of an MBR partition table, and of FAT and NTFS boot
    // sectors: any of them means the device was formatted.
    Signature {
        name: "MBR / FAT / NTFS boot sector",
        offset: 510,
        bytes: &[0x55, 0xAA],
    },
];

/// ZFS keeps four 256 KiB labels: two at the start, two at the end. The
/// second half of each (from 128 KiB) is the uberblock ring, whose slots
/// (1 KiB at least) start with the magic 0x00bab10c in the pool's byte order.
pub(crate) const ZFS_LABEL: usize = 256 * 1024;
const UBERBLOCK_RING: usize = 128 * 1024;
const UBERBLOCK_SLOT: usize = 1024;
const UBERBLOCK_MAGIC: u64 = 0x00ba_b10c;

/// How much of each end of the device is read and scanned.
pub(crate) const SCANNED: usize = 2 * ZFS_LABEL;

/// The signatures in `head` (the first bytes of a device) and `tail` (its
/// last bytes, `tail_at` being the offset of `tail[0]`): the first one found.
pub(crate) fn find_signature(head: &[u8], tail: &[u8], tail_at: u64) -> Option<DeviceInUse> {
    for s in SIGNATURES {
        if head.get(s.offset..s.offset + s.bytes.len()) == Some(s.bytes) {
            return Some(DeviceInUse::Signature {
                signature: s.name,
                offset: s.offset as u64,
            });
        }
    }
    // Labels 0 and 1 at 0 and 256 KiB; 2 and 3 in the last 512 KiB. Only
    // whole labels are scanned: a device shorter than a label has none.
    let labels = [(head, 0u64), (tail, tail_at)];
    for (bytes, base) in labels {
        for label in 0..bytes.len() / ZFS_LABEL {
            let start = label * ZFS_LABEL + UBERBLOCK_RING;
            let ring = &bytes[start..(label + 1) * ZFS_LABEL];
            for (slot, chunk) in ring.chunks_exact(UBERBLOCK_SLOT).enumerate() {
                let word: [u8; 8] = chunk[..8].try_into().expect("a slot has 8 bytes");
                if u64::from_le_bytes(word) == UBERBLOCK_MAGIC
                    || u64::from_be_bytes(word) == UBERBLOCK_MAGIC
                {
                    return Some(DeviceInUse::Signature {
                        signature: "ZFS label (uberblock)",
                        offset: base + (start + slot * UBERBLOCK_SLOT) as u64,
                    });
                }
            }
        }
    }
    None
}

/// The kernel's name of a block device (`sda`, `loop3`, `nvme0n1p2`) from its
/// device number, through /sys/dev/block/MAJOR:MINOR.
fn sysfs_dir(rdev: u64) -> Option<PathBuf> {
    let link = format!(
        "/sys/dev/block/{}:{}",
        libc::major(rdev as libc::dev_t),
        libc::minor(rdev as libc::dev_t)
    );
    fs::canonicalize(link).ok()
}

fn name_of(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The partitions of the disk at `dir` in sysfs (subdirectories with a
/// `partition` file).
fn partitions(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut parts: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("partition").is_file())
        .collect();
    parts.sort();
    parts
}

fn device_number(dir: &Path) -> Option<u64> {
    let text = fs::read_to_string(dir.join("dev")).ok()?;
    let (major, minor) = text.trim().split_once(':')?;
    Some(libc::makedev(major.parse().ok()?, minor.parse().ok()?))
}

/// Device numbers of the block devices named in the first column of a
/// /proc/mounts or /proc/swaps text, with the rest of the line.
fn listed_devices(text: &str, skip_header: bool) -> Vec<(u64, String, String)> {
    text.lines()
        .skip(usize::from(skip_header))
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let source = unescape_lossy(words.next()?);
            let second = unescape_lossy(words.next().unwrap_or(""));
            let meta = fs::metadata(&source).ok()?;
            meta.file_type()
                .is_block_device()
                .then(|| (meta.rdev(), source, second))
        })
        .collect()
}

/// What the system says about the device `rdev` and its partitions: mounted,
/// swap, held, partitioned. (The signature scan and the exclusive open come
/// after, on the opened device.)
pub(crate) fn system_uses(rdev: u64) -> Vec<DeviceInUse> {
    let mut found = Vec::new();
    let dir = sysfs_dir(rdev);
    // The device itself and its partitions, by number and name.
    let mut members: Vec<(u64, String)> = Vec::new();
    let own_name = dir.as_deref().map(name_of).unwrap_or_default();
    members.push((rdev, own_name));
    if let Some(dir) = &dir {
        let parts = partitions(dir);
        if !parts.is_empty() {
            found.push(DeviceInUse::Partitions {
                names: parts
                    .iter()
                    .map(|p| name_of(p))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        for p in parts {
            if let Some(n) = device_number(&p) {
                members.push((n, name_of(&p)));
            }
        }
    }
    let mounts = fs::read_to_string("/proc/mounts").unwrap_or_default();
    for (dev, source, mount_point) in listed_devices(&mounts, false) {
        if members.iter().any(|(n, _)| *n == dev) {
            found.push(DeviceInUse::Mounted {
                device: source,
                mount_point,
            });
        }
    }
    let swaps = fs::read_to_string("/proc/swaps").unwrap_or_default();
    for (dev, source, _) in listed_devices(&swaps, true) {
        if members.iter().any(|(n, _)| *n == dev) {
            found.push(DeviceInUse::Swap { device: source });
        }
    }
    for (_, name) in &members {
        let holders = Path::new("/sys/class/block").join(name).join("holders");
        if let Ok(entries) = fs::read_dir(holders) {
            for e in entries.flatten() {
                found.push(DeviceInUse::Held {
                    device: name.clone(),
                    holder: e.file_name().to_string_lossy().into_owned(),
                });
            }
        }
    }
    found
}

/// `blkid -p` (a low-level probe of the device itself, not blkid's cache):
/// the TYPE or PTTYPE it reports. None when blkid is absent or finds nothing
/// (its exit status 2).
pub(crate) fn blkid_probe(path: &Path) -> Option<DeviceInUse> {
    let out = std::process::Command::new("blkid")
        .args(["-p", "-o", "export"])
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let found: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("TYPE=") || l.starts_with("PTTYPE="))
        .collect();
    (!found.is_empty()).then(|| DeviceInUse::Blkid {
        found: found.join(" "),
    })
}

/// Read the first and last [`SCANNED`] bytes of a device of `size` bytes
/// and look for signatures.
pub(crate) fn scan_ends(file: &fs::File, size: u64) -> io::Result<Option<DeviceInUse>> {
    // Each end is SCANNED bytes, or the whole of a smaller device.
    let len = usize::try_from(size).map_or(SCANNED, |s| s.min(SCANNED));
    let mut head = vec![0u8; len];
    file.read_exact_at(&mut head, 0)?;
    let tail_at = size - len as u64;
    let mut tail = vec![0u8; len];
    file.read_exact_at(&mut tail, tail_at)?;
    Ok(find_signature(&head, &tail, tail_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_signature_is_found_at_its_offset() {
        for s in SIGNATURES {
            let mut head = vec![0u8; SCANNED];
            head[s.offset..s.offset + s.bytes.len()].copy_from_slice(s.bytes);
            match find_signature(&head, &[], 0) {
                Some(DeviceInUse::Signature { signature, offset }) => {
                    assert_eq!(offset, s.offset as u64, "{}", s.name);
                    // Two formats share an offset and first bytes with no
                    // other; the first in the list is the one named.
                    assert_eq!(signature, s.name);
                }
                other => panic!("{}: {other:?}", s.name),
            }
        }
        assert_eq!(find_signature(&vec![0u8; SCANNED], &[], 0), None);
    }

    #[test]
    fn a_zfs_uberblock_in_any_label_is_found_in_either_byte_order() {
        // Label 1 (at 256 KiB), the third slot, little-endian.
        let mut head = vec![0u8; SCANNED];
        let at = ZFS_LABEL + UBERBLOCK_RING + 2 * UBERBLOCK_SLOT;
        head[at..at + 8].copy_from_slice(&UBERBLOCK_MAGIC.to_le_bytes());
        assert_eq!(
            find_signature(&head, &[], 0),
            Some(DeviceInUse::Signature {
                signature: "ZFS label (uberblock)",
                offset: at as u64
            })
        );
        // Label 3 (the last one), big-endian, on a 1 GiB device.
        let mut tail = vec![0u8; SCANNED];
        let at = ZFS_LABEL + UBERBLOCK_RING;
        tail[at..at + 8].copy_from_slice(&UBERBLOCK_MAGIC.to_be_bytes());
        let tail_at = (1u64 << 30) - SCANNED as u64;
        assert_eq!(
            find_signature(&[0u8; 4096], &tail, tail_at),
            Some(DeviceInUse::Signature {
                signature: "ZFS label (uberblock)",
                offset: tail_at + at as u64
            })
        );
        // The magic outside a slot's start is data, not a label.
        let mut head = vec![0u8; SCANNED];
        let at = UBERBLOCK_RING + 8;
        head[at..at + 8].copy_from_slice(&UBERBLOCK_MAGIC.to_le_bytes());
        assert_eq!(find_signature(&head, &[], 0), None);
    }
}

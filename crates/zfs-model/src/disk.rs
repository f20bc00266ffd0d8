//! Disks: classes with their performance and reliability figures, groups of
//! identical disks, and the way an OS partitions a disk before ZFS sees it.

use serde::Serialize;

use crate::error::{ModelError, Result};
use crate::estimate::Estimate;
use crate::units::{self, SizeMeaning, KIB, MIB};

/// Kinds of device with distinct performance. The figures are class
/// defaults from vendor data sheets, Backblaze drive statistics and published
/// write + flush measurements; users can override them with their own
/// measurements. The same names choose the lab's disk models, so a class means
/// the same device in `plan` and in a lab.
///
/// In JSON a class is its [`DiskClass::name`], the word the command line takes
/// (serde's kebab-case would write `hdd7200` and `nvme-no-plp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub enum DiskClass {
    #[serde(rename = "hdd-7200")]
    Hdd7200,
    #[serde(rename = "hdd-5400")]
    Hdd5400,
    /// SATA SSD with power-loss protection: a flush returns at once.
    #[serde(rename = "ssd-sata")]
    SsdSata,
    /// SATA SSD without power-loss protection (consumer drives): a flush must
    /// program the buffered data first.
    #[serde(rename = "ssd-sata-noplp")]
    SsdSataNoPlp,
    #[serde(rename = "nvme")]
    Nvme,
    /// Consumer NVMe without power-loss protection: fast for data, slow to
    /// flush, which is what a log device does all day.
    #[serde(rename = "nvme-noplp")]
    NvmeNoPlp,
}

impl DiskClass {
    pub const ALL: [DiskClass; 6] = [
        DiskClass::Hdd7200,
        DiskClass::Hdd5400,
        DiskClass::SsdSata,
        DiskClass::SsdSataNoPlp,
        DiskClass::Nvme,
        DiskClass::NvmeNoPlp,
    ];

    /// Other names of the classes: the lab's first names for its disk models,
    /// kept so that existing lab specs mean the same device.
    pub const ALIASES: [(&'static str, DiskClass); 4] = [
        ("hdd", DiskClass::Hdd7200),
        ("ssd", DiskClass::SsdSataNoPlp),
        ("ssd-plp", DiskClass::SsdSata),
        ("nvme-consumer", DiskClass::NvmeNoPlp),
    ];

    pub fn name(self) -> &'static str {
        match self {
            DiskClass::Hdd7200 => "hdd-7200",
            DiskClass::Hdd5400 => "hdd-5400",
            DiskClass::SsdSata => "ssd-sata",
            DiskClass::SsdSataNoPlp => "ssd-sata-noplp",
            DiskClass::Nvme => "nvme",
            DiskClass::NvmeNoPlp => "nvme-noplp",
        }
    }

    /// The device a class stands for, in a few words (`--help`, completions).
    pub fn describe(self) -> &'static str {
        match self {
            DiskClass::Hdd7200 => "7200 rpm hard disk",
            DiskClass::Hdd5400 => "5400 rpm hard disk",
            DiskClass::SsdSata => "SATA SSD with power-loss protection",
            DiskClass::SsdSataNoPlp => "SATA SSD without power-loss protection",
            DiskClass::Nvme => "NVMe SSD with power-loss protection",
            DiskClass::NvmeNoPlp => "NVMe SSD without power-loss protection",
        }
    }

    /// The class of a name or alias (any case). The one disk class parser of
    /// `plan` and the lab.
    pub fn parse(input: &str) -> Result<DiskClass> {
        let wanted = input.trim().to_ascii_lowercase();
        DiskClass::ALL
            .into_iter()
            .find(|c| c.name() == wanted)
            .or_else(|| {
                DiskClass::ALIASES
                    .into_iter()
                    .find(|(alias, _)| *alias == wanted)
                    .map(|(_, class)| class)
            })
            .ok_or_else(|| ModelError::UnknownDiskClass {
                input: input.to_string(),
                accepted: DiskClass::ALL.map(|c| c.name()).join(", "),
            })
    }

    pub fn is_rotational(self) -> bool {
        matches!(self, DiskClass::Hdd7200 | DiskClass::Hdd5400)
    }

    /// The range of one 4 KiB write plus cache flush over the devices of a
    /// flash class, ms (its `positioning_ms`, with the published devices it
    /// comes from beside each class). `None` for a hard disk, whose write and
    /// flush follow from its mechanics (seek, rotation) in `diskmodel`.
    pub fn write_flush_ms(self) -> Option<Estimate> {
        (!self.is_rotational()).then(|| self.default_perf().positioning_ms)
    }

    /// Whether the class keeps what it acknowledged through a power cut
    /// (its flush has nothing volatile to program).
    pub fn power_loss_protected(self) -> bool {
        matches!(self, DiskClass::SsdSata | DiskClass::Nvme)
    }

    /// The write + flush range of a log device of unknown kind
    /// (crate::diskmodel::UNKNOWN_FLASH): every class of the kind the
    /// OpenZFS documentation advises for a log device, a power-loss-protected
    /// SSD ("a ~4 GB partition on a power-loss-protected SSD"; SATA or NVMe
    /// unknown), from the fastest to the slowest published device of either
    /// ([`DiskClass::write_flush_ms`]). The typical is the SATA one's. A
    /// consumer drive used as a log device is named by its class.
    pub fn log_flash_write_flush_ms() -> Estimate {
        let ranges: Vec<Estimate> = DiskClass::ALL
            .into_iter()
            .filter(|c| c.power_loss_protected())
            .filter_map(DiskClass::write_flush_ms)
            .collect();
        Estimate::new(
            ranges.iter().map(|r| r.low).fold(f64::INFINITY, f64::min),
            DiskClass::SsdSata.default_perf().positioning_ms.typical,
            ranges.iter().map(|r| r.high).fold(0.0, f64::max),
        )
    }

    /// The class defaults.
    pub fn default_perf(self) -> DiskPerf {
        match self {
            // Field AFR 0.8–1.4 % (Backblaze drive stats, Q3 2020), 180 MB/s average
            // transfer (200–250 outer, half inner), 75–80 IOPS at QD1, 150–200
            // with NCQ, 8.33 ms per revolution (HGST/Seagate data sheets). UER 1e-15 assumes an
            // enterprise/NAS-pro drive.
            DiskClass::Hdd7200 => DiskPerf {
                afr: 0.01,
                seq_mb_s: Estimate::new(100.0, 180.0, 250.0),
                random_iops: Estimate::new(77.0, 150.0, 200.0),
                positioning_ms: Estimate::new(1.0, 5.0, 11.5),
                revolution_ms: Some(60_000.0 / 7200.0),
                uer_per_bit: 1e-15,
            },
            // 5400 rpm NAS drives: longer revolution (11.1 ms), lower transfer;
            // UER 1e-14 as the usual NAS/desktop data-sheet value.
            DiskClass::Hdd5400 => DiskPerf {
                afr: 0.01,
                seq_mb_s: Estimate::new(90.0, 150.0, 200.0),
                random_iops: Estimate::new(55.0, 100.0, 140.0),
                positioning_ms: Estimate::new(1.5, 6.0, 13.0),
                revolution_ms: Some(60_000.0 / 5400.0),
                uer_per_bit: 1e-14,
            },
            // SATA SSD with power-loss protection: 0.158 ms per 4 KiB write +
            // flush measured on an Intel 710 (FreeBSD `diskinfo -S`, r320683);
            // 4 KiB random IOPS are a class
            // figure. Write + flush range: the published devices of the class
            // (examples/validation/published-sync.jsonl), 0.039 ms for a whole
            // ext4 write + fsync on a Samsung PM863 (PS-033: the device's
            // part is less) to 0.278 ms on Kingston DC600M in md RAID1
            // (PS-038); the Intel 710's 0.158 (PS-029) between. The typical
            // 0.1 is the class estimate it was.
            DiskClass::SsdSata => DiskPerf {
                afr: 0.005,
                seq_mb_s: Estimate::new(400.0, 500.0, 550.0),
                random_iops: Estimate::new(20_000.0, 50_000.0, 90_000.0),
                positioning_ms: Estimate::new(0.039, 0.1, 0.278),
                revolution_ms: None,
                uer_per_bit: 1e-17,
            },
            // The same drive without PLP: data as above; consumer UER as for
            // nvme-noplp. Write + flush range: the published consumer SATA
            // drives, fio write + fdatasync at 4 KiB, 0.81 ms (TEAM T253,
            // PS-049; PS-047 0.86, PS-048 0.90) to 2.39 ms (Plextor M5S,
            // PS-046); ext4 fsyncs, a journal commit more, fall inside (850
            // Pro 2.26, PS-034; Micron 1100 md RAID1 1.53, PS-035). The
            // typical is those six devices' median, 1.2 ms. (It was 2 ms,
            // the Samsung 950 PRO's 2.09 (PS-030): an NVMe drive, of
            // nvme-noplp, not of this class.)
            DiskClass::SsdSataNoPlp => DiskPerf {
                afr: 0.005,
                seq_mb_s: Estimate::new(400.0, 500.0, 550.0),
                random_iops: Estimate::new(20_000.0, 50_000.0, 90_000.0),
                positioning_ms: Estimate::new(0.81, 1.2, 2.39),
                revolution_ms: None,
                uer_per_bit: 1e-16,
            },
            // NVMe with PLP / Optane: a typical of 0.03 ms, a class figure,
            // not a measurement (OpenZFS hardware docs list such devices for
            // SLOG). Write + flush range: the published devices of the class,
            // 0.025 ms for a whole ext4 write + fsync on PM983 + DC1500M in md
            // RAID1 (PS-040: the device's part is less) to 0.49 ms on Intel
            // DC P3520 in md RAID1 (PS-037); the Optane M10 raw 0.048 (fio
            // fdatasync latency, PS-043) between.
            DiskClass::Nvme => DiskPerf {
                afr: 0.005,
                seq_mb_s: Estimate::new(1500.0, 3000.0, 6000.0),
                random_iops: Estimate::new(100_000.0, 300_000.0, 700_000.0),
                positioning_ms: Estimate::new(0.025, 0.03, 0.49),
                revolution_ms: None,
                uer_per_bit: 1e-17,
            },
            // Samsung 950 PRO measured 2.09 ms per 4 KiB write + flush
            // (FreeBSD `diskinfo -S`, r320683; PS-030). Write + flush range:
            // the published consumer NVMe drives, 1.0 ms (970 EVO fio
            // fdatasync 1.01, PS-044; KC3000 ext4 fsync 1.0, PS-036) to
            // 6.93 ms (T-FORCE TM8FPL500G, fio fdatasync, PS-045); the 990
            // PRO's 1.64 (PS-032) between.
            DiskClass::NvmeNoPlp => DiskPerf {
                afr: 0.005,
                seq_mb_s: Estimate::new(1500.0, 3000.0, 6000.0),
                random_iops: Estimate::new(100_000.0, 300_000.0, 700_000.0),
                positioning_ms: Estimate::new(1.0, 2.0, 6.93),
                revolution_ms: None,
                uer_per_bit: 1e-16,
            },
        }
    }
}

/// Performance and reliability figures of one device.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DiskPerf {
    /// Annualised failure rate as a fraction (0.01 = 1 %/year).
    pub afr: f64,
    /// Sustained sequential transfer, MB/s (10^6 bytes).
    pub seq_mb_s: Estimate,
    /// Small random I/Os per second (low = queue depth 1, high = deep queue).
    pub random_iops: Estimate,
    /// Time of one small write plus cache flush, excluding the rotational wait
    /// (seek + settle + flush for a HDD; the whole write + flush for an SSD),
    /// ms. Reported with the class; no plan figure uses it any more (sync
    /// writes are simulated with `diskmodel`'s model of the class).
    pub positioning_ms: Estimate,
    /// One full revolution (HDD only), ms.
    pub revolution_ms: Option<f64>,
    /// Unrecoverable read errors per bit read.
    pub uer_per_bit: f64,
}

impl DiskPerf {
    pub fn mtbf_hours(&self) -> f64 {
        8760.0 / self.afr
    }
}

/// User overrides for a class's figures (a measured number replaces the class
/// range by that single value).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PerfOverrides {
    pub afr: Option<f64>,
    pub seq_mb_s: Option<f64>,
    pub random_iops: Option<f64>,
    pub sync_write_ms: Option<f64>,
    pub uer_per_bit: Option<f64>,
}

impl PerfOverrides {
    pub fn apply(&self, mut perf: DiskPerf) -> DiskPerf {
        if let Some(afr) = self.afr {
            perf.afr = afr;
        }
        if let Some(v) = self.seq_mb_s {
            perf.seq_mb_s = Estimate::exact(v);
        }
        if let Some(v) = self.random_iops {
            perf.random_iops = Estimate::exact(v);
        }
        if let Some(v) = self.sync_write_ms {
            // A measured write+flush already includes the rotational wait.
            perf.positioning_ms = Estimate::exact(v);
            perf.revolution_ms = None;
        }
        if let Some(v) = self.uer_per_bit {
            perf.uer_per_bit = v;
        }
        perf
    }
}

/// How the operating system carves the disk before ZFS gets a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum OsPartitioning {
    /// Files or partitions handed to ZFS as they are (zfs-fuse on files).
    None,
    /// Linux `zpool create` on a whole disk (`zpool_label_disk()`): GPT, data
    /// partition from LBA 2048, an 8 MiB reserved partition 9 after it.
    LinuxWholeDisk { logical_sector: u32 },
    /// TrueNAS CORE / FreeBSD: a swap partition of this many GiB on every disk.
    FreeBsdSwap { swap_gib: u32 },
}

impl OsPartitioning {
    pub const ACCEPTED: &'static str =
        "linux, linux-4kn, none, truenas-core (2 GiB swap), freebsd-swap=GiB";

    pub fn parse(input: &str) -> Result<OsPartitioning> {
        let text = input.trim().to_ascii_lowercase();
        let parsed = match text.as_str() {
            "linux" => Some(OsPartitioning::LinuxWholeDisk {
                logical_sector: 512,
            }),
            "linux-4kn" => Some(OsPartitioning::LinuxWholeDisk {
                logical_sector: 4096,
            }),
            "none" | "files" => Some(OsPartitioning::None),
            "truenas-core" | "freebsd" => Some(OsPartitioning::FreeBsdSwap { swap_gib: 2 }),
            other => other
                .strip_prefix("freebsd-swap=")
                .and_then(|g| g.trim_end_matches("gib").parse::<u32>().ok())
                .map(|swap_gib| OsPartitioning::FreeBsdSwap { swap_gib }),
        };
        parsed.ok_or_else(|| ModelError::UnknownChoice {
            what: "OS partitioning",
            input: input.to_string(),
            accepted: OsPartitioning::ACCEPTED.into(),
        })
    }

    pub fn describe(&self) -> String {
        match self {
            OsPartitioning::None => "whole device given to ZFS, no partition table".into(),
            OsPartitioning::LinuxWholeDisk { logical_sector } => format!(
                "Linux whole-disk GPT ({logical_sector}-byte LBAs): data partition from 1 MiB, 8 MiB reserved partition 9"
            ),
            OsPartitioning::FreeBsdSwap { swap_gib } => {
                format!("FreeBSD/TrueNAS CORE: {swap_gib} GiB swap partition per disk")
            }
        }
    }

    /// Bytes of the partition ZFS receives from a disk of `disk_bytes`.
    pub fn partition_bytes(&self, disk_bytes: u64) -> u64 {
        match *self {
            OsPartitioning::None => disk_bytes,
            OsPartitioning::LinuxWholeDisk { logical_sector } => {
                let lba = logical_sector as u64;
                // 4Kn drives: a GPT needs 6 trailing LBAs instead of 34, and the
                // 1 MiB start / 8 MiB reserve shrink to 256 / 2048 LBAs; the
                // alignment unit stays 2048 LBAs (`zpool_label_disk()` in
                // OpenZFS `lib/libzfs/os/linux/libzfs_pool_os.c`).
                let (tail, reserved, start) = if lba == 4096 {
                    (6, 16_384 / 8, 2_048 / 8)
                } else {
                    (34, 16_384, 2_048)
                };
                let total = disk_bytes / lba;
                let last_usable = total.saturating_sub(tail);
                let data_lbas = (last_usable + 1).saturating_sub(reserved + start);
                (data_lbas / 2048 * 2048) * lba
            }
            OsPartitioning::FreeBsdSwap { swap_gib } => {
                disk_bytes.saturating_sub(swap_gib as u64 * units::GIB)
            }
        }
    }
}

/// Size of one vdev label; a leaf's usable size is a whole number of them.
pub const VDEV_LABEL_BYTES: u64 = 256 * KIB;
/// Two labels + 3.5 MiB boot area at the front, two labels at the back.
pub const VDEV_LABEL_RESERVE: u64 = 4 * MIB + 512 * KIB;

/// A leaf vdev's usable bytes (`vdev_open()`): the partition rounded down to
/// whole labels ("osize") minus the label and boot reservations.
pub fn leaf_osize(partition_bytes: u64) -> u64 {
    partition_bytes / VDEV_LABEL_BYTES * VDEV_LABEL_BYTES
}

pub fn leaf_asize(partition_bytes: u64) -> u64 {
    leaf_osize(partition_bytes).saturating_sub(VDEV_LABEL_RESERVE)
}

/// Most disks a plan may hold, over all groups. One server attaches a few
/// hundred disks at most (SAS expanders behind 60- to 106-bay 4U JBODs), so
/// 10,000 leaves a wide margin for any single pool, while every disk count
/// (u32, also times a raidz width of 255) and every byte total (u64, times
/// [`MAX_DISK_BYTES`]) stays exact, and the failure-combination counts of the
/// risk model (u128) cannot overflow.
pub const MAX_DISKS: u32 = 10_000;

/// Largest disk the planner accepts: 1 PiB, about ten times the biggest
/// drives sold (~30 TB HDDs, ~120 TB SSDs). With [`MAX_DISKS`] of them the raw
/// byte total still fits in a u64.
pub const MAX_DISK_BYTES: u64 = 1 << 50;

/// The total disk count of `groups`, or an error naming the limit.
pub fn total_disks(groups: &[DiskGroup]) -> Result<u32> {
    let total: u64 = groups.iter().map(|g| u64::from(g.count)).sum();
    let in_range = u32::try_from(total).ok().filter(|&t| t <= MAX_DISKS);
    let Some(total_u32) = in_range else {
        return Err(ModelError::InvalidValue {
            input: groups
                .iter()
                .map(|g| format!("{}x{}", g.count, g.label))
                .collect::<Vec<_>>()
                .join(","),
            reason: format!(
                "{total} disks in all; accepted: 1 to {MAX_DISKS} disks (more than any one server attaches)"
            ),
        });
    };
    Ok(total_u32)
}

/// A set of identical disks.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DiskGroup {
    pub count: u32,
    /// Real bytes of one disk (after the IDEMA rule for marketed sizes).
    pub bytes: u64,
    /// What the user typed, kept for display.
    pub label: String,
    /// Set when the size was a marketed decimal figure turned into bytes by the
    /// IDEMA rule (kept so the capacity walkthrough can show that step).
    pub marketed_gb: Option<u64>,
    pub class: DiskClass,
    pub perf: DiskPerf,
}

impl DiskGroup {
    /// Parse "24x8TB", "8TB" (one disk) or "12x4TiB:ssd-sata"; the class after
    /// a colon overrides `default_class`.
    pub fn parse(
        input: &str,
        default_class: DiskClass,
        overrides: &PerfOverrides,
    ) -> Result<DiskGroup> {
        let text = input.trim();
        let (spec, class) = match text.split_once(':') {
            Some((spec, class)) => (spec, DiskClass::parse(class)?),
            None => (text, default_class),
        };
        let count_range = || ModelError::InvalidDiskGroup {
            input: input.to_string(),
            reason: format!(
                "COUNT must be 1 to {MAX_DISKS} (more disks than any one server attaches)"
            ),
        };
        let (count, size_text) = match spec.split_once(['x', 'X', '*']) {
            Some((count, size)) => {
                let count = count.trim();
                if count.is_empty() || !count.chars().all(|c| c.is_ascii_digit()) {
                    return Err(ModelError::InvalidDiskGroup {
                        input: input.to_string(),
                        reason: "expected COUNTxSIZE, e.g. 24x8TB".into(),
                    });
                }
                // All digits: a parse failure can only mean "too many".
                let count: u32 = count.parse().map_err(|_| count_range())?;
                (count, size)
            }
            None => (1, spec),
        };
        if count == 0 || count > MAX_DISKS {
            return Err(count_range());
        }
        let unitless = size_text
            .trim()
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.');
        let bytes = units::parse_size(size_text, SizeMeaning::MarketedDisk);
        if unitless && bytes.as_ref().map_or(true, |b| *b < 64 * MIB) {
            // "24x8" means 8 TB to whoever typed it, not 8 bytes.
            return Err(ModelError::InvalidDiskGroup {
                input: input.to_string(),
                reason: format!(
                    "SIZE '{}' has no unit: write e.g. {0}TB (marketed, as on the label) or {0}TiB",
                    size_text.trim()
                ),
            });
        }
        let bytes = bytes?;
        let as_typed = units::parse_size(size_text, SizeMeaning::Exact)?;
        let marketed_gb = (as_typed != bytes).then_some(as_typed / 1_000_000_000);
        if leaf_asize(bytes) < 64 * MIB {
            return Err(ModelError::InvalidDiskGroup {
                input: input.to_string(),
                reason: "ZFS needs devices of at least 64 MiB".into(),
            });
        }
        if bytes > MAX_DISK_BYTES {
            return Err(ModelError::InvalidDiskGroup {
                input: input.to_string(),
                reason: "SIZE must be at most 1 PiB (ten times the largest drives sold)".into(),
            });
        }
        Ok(DiskGroup {
            count,
            bytes,
            label: size_text.trim().to_string(),
            marketed_gb,
            class,
            perf: overrides.apply(class.default_perf()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_partition_of_the_8tb_drive_matches_the_spec() {
        let disk = 8_001_563_222_016;
        let linux = OsPartitioning::LinuxWholeDisk {
            logical_sector: 512,
        };
        let partition = linux.partition_bytes(disk);
        assert_eq!(partition, 15_628_034_048 * 512);
        assert_eq!(partition, 8_001_553_432_576);
        assert_eq!(leaf_asize(partition), 8_001_548_713_984);
    }

    #[test]
    fn files_lose_only_the_label_reserve() {
        // 8 TiB file → leaf asize 8,796,088,303,616, as `zdb -C` showed on
        // zfs-fuse 0.7.0.
        assert_eq!(leaf_asize(8_796_093_022_208), 8_796_088_303_616);
    }

    #[test]
    fn disk_groups_parse_with_class_and_count() {
        let g = DiskGroup::parse("24x8TB", DiskClass::Hdd7200, &PerfOverrides::default()).unwrap();
        assert_eq!(
            (g.count, g.bytes, g.class),
            (24, 8_001_563_222_016, DiskClass::Hdd7200)
        );
        let g = DiskGroup::parse(
            "4x1.92TB:ssd-sata",
            DiskClass::Hdd7200,
            &PerfOverrides::default(),
        )
        .unwrap();
        assert_eq!((g.count, g.class), (4, DiskClass::SsdSata));
        for bad in ["0x8TB", "10001x8TB", "99999999999x8TB"] {
            let err = DiskGroup::parse(bad, DiskClass::Hdd7200, &PerfOverrides::default())
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(bad) && err.contains("1 to 10000"),
                "{bad}: {err}"
            );
        }
        let err = DiskGroup::parse("2x2PiB", DiskClass::Hdd7200, &PerfOverrides::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("2x2PiB") && err.contains("1 PiB"), "{err}");
        let err = DiskGroup::parse(
            "2x8TB:floppy",
            DiskClass::Hdd7200,
            &PerfOverrides::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("hdd-7200, hdd-5400"), "{err}");
    }

    #[test]
    fn a_size_without_a_unit_is_refused_for_its_missing_unit() {
        // "24x8" is 8 TB to whoever typed it; saying ZFS wants 64 MiB misleads.
        for typed in ["24x8", "2x1.5"] {
            let err = DiskGroup::parse(typed, DiskClass::Hdd7200, &PerfOverrides::default())
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("no unit") && err.contains("TB") && !err.contains("64 MiB"),
                "{typed}: {err}"
            );
        }
        // A byte count large enough for a disk stays accepted.
        let g = DiskGroup::parse(
            "2x8001563222016",
            DiskClass::Hdd7200,
            &PerfOverrides::default(),
        )
        .unwrap();
        assert_eq!(g.bytes, 8_001_563_222_016);
        // A unit that is given but too small keeps its own reason.
        let err = DiskGroup::parse("2x8MiB", DiskClass::Hdd7200, &PerfOverrides::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("64 MiB"), "{err}");
    }

    #[test]
    fn classes_parse_by_name_and_by_the_lab_s_names() {
        for class in DiskClass::ALL {
            assert_eq!(DiskClass::parse(class.name()).unwrap(), class);
            // JSON (plan --format json) names a class as the command line does.
            assert_eq!(serde_json::to_value(class).unwrap(), class.name());
        }
        assert_eq!(DiskClass::parse("HDD").unwrap(), DiskClass::Hdd7200);
        assert_eq!(DiskClass::parse("ssd-plp").unwrap(), DiskClass::SsdSata);
        assert_eq!(DiskClass::parse("ssd").unwrap(), DiskClass::SsdSataNoPlp);
        assert_eq!(
            DiskClass::parse("nvme-consumer").unwrap(),
            DiskClass::NvmeNoPlp
        );
    }
}

//! What the server did during a run: the ARC (from the lab's zfs-fuse daemon)
//! and the emulated disks (from the disk file system's counters). These sit
//! beside a run's `RunResult`, never inside it: the result stays what fileio
//! measured at the client.

use crate::lab::Lab;
use crate::parts::diskfs::DiskStats;
use crate::parts::zfsd::ArcStats;
use crate::spec::{Backend, LabSpec};
use serde::{Deserialize, Serialize};
use std::time::SystemTime;

/// The server's counters at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    arc: Option<ArcStats>,
    disks: Vec<DiskStats>,
    /// When the disk counters were written (the stats file's mtime): the
    /// disk file system writes them at most once a second, so a rate over
    /// two snapshots divides by the time between the writes, not between
    /// the reads.
    disks_at: Option<SystemTime>,
}

/// The server's activity between two snapshots.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerActivity {
    /// The ARC's ceiling and what it held at the end, bytes (zfs-fuse's
    /// arcstats `c_max` and `size`); None with kernel OpenZFS.
    pub arc_max_bytes: Option<u64>,
    pub arc_size_bytes: Option<u64>,
    /// ARC lookups answered from memory, and not, during the run.
    pub arc_hits: Option<u64>,
    pub arc_misses: Option<u64>,
    /// Operations on all emulated disks (data and log) per second.
    pub disk_reads_per_s: Option<f64>,
    pub disk_writes_per_s: Option<f64>,
    pub disk_flushes_per_s: Option<f64>,
}

impl ServerActivity {
    /// Share of ARC lookups answered from memory, percent.
    pub fn arc_hit_percent(&self) -> Option<f64> {
        let (h, m) = (self.arc_hits?, self.arc_misses?);
        let total = h + m;
        (total > 0).then(|| 100.0 * h as f64 / total as f64)
    }
}

/// The counters of `lab` now.
pub(crate) fn snapshot(lab: &Lab) -> Snapshot {
    let stats_file = lab.dir.join("disk-stats.json");
    Snapshot {
        arc: lab
            .info()
            .and_then(|i| i.zfsd.as_ref())
            .and_then(|d| d.arc_stats()),
        disks: lab.disk_stats(),
        disks_at: std::fs::metadata(stats_file)
            .and_then(|m| m.modified())
            .ok(),
    }
}

fn sum(disks: &[DiskStats], f: impl Fn(&DiskStats) -> u64) -> u64 {
    disks.iter().map(f).sum()
}

/// What happened between `before` and `after`.
pub fn between(before: &Snapshot, after: &Snapshot) -> ServerActivity {
    let seconds = match (before.disks_at, after.disks_at) {
        (Some(a), Some(b)) => b.duration_since(a).ok().map(|d| d.as_secs_f64()),
        _ => None,
    };
    let rate = |f: &dyn Fn(&DiskStats) -> u64| {
        let ops = sum(&after.disks, f).saturating_sub(sum(&before.disks, f));
        match seconds {
            // Not rewritten in between: no operation reached the disks.
            Some(s) if s <= 0.0 => Some(0.0),
            Some(s) => Some(ops as f64 / s),
            None => None,
        }
    };
    let arc_delta = |f: fn(&ArcStats) -> u64| match (&before.arc, &after.arc) {
        (Some(a), Some(b)) => Some(f(b).saturating_sub(f(a))),
        _ => None,
    };
    ServerActivity {
        arc_max_bytes: after.arc.map(|a| a.c_max),
        arc_size_bytes: after.arc.map(|a| a.size),
        arc_hits: arc_delta(|a| a.hits),
        arc_misses: arc_delta(|a| a.misses),
        disk_reads_per_s: rate(&|d| d.reads),
        disk_writes_per_s: rate(&|d| d.writes),
        disk_flushes_per_s: rate(&|d| d.flushes),
    }
}

/// Watch `lab` for `window` and say what its server did meanwhile (for
/// `lab status`).
pub fn sample(lab: &Lab, window: std::time::Duration) -> ServerActivity {
    let before = snapshot(lab);
    std::thread::sleep(window);
    between(&before, &snapshot(lab))
}

/// `lab status` lines about the server: the lab's own zfs-fuse daemon and
/// its ARC (counters since the daemon started), and the disks' operations
/// per second over `window`.
pub fn status_lines(lab: &Lab, window: std::time::Duration) -> Vec<String> {
    let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
    let mut out = Vec::new();
    if let Some(d) = lab.info().and_then(|i| i.zfsd.as_ref()) {
        match d.arc_stats() {
            Some(a) => {
                let total = a.hits + a.misses;
                let pct = if total > 0 {
                    format!(" ({:.1} % hits)", 100.0 * a.hits as f64 / total as f64)
                } else {
                    String::new()
                };
                out.push(format!(
                    "  zfs-fuse pid {} (the lab's own): ARC max {:.0} MiB, holds {:.1} MiB; since start {} hits, {} misses{pct}",
                    d.pid,
                    mib(a.c_max),
                    mib(a.size),
                    a.hits,
                    a.misses
                ));
            }
            None if d.alive() => out.push(format!(
                "  zfs-fuse pid {} (the lab's own): no ARC statistics (its kstat file system is not mounted)",
                d.pid
            )),
            None => out.push(format!(
                "  zfs-fuse pid {} (the lab's own) is NOT running: the pool is gone; `tankbench lab down` cleans up",
                d.pid
            )),
        }
    }
    let a = sample(lab, window);
    let f = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.1}"));
    out.push(format!(
        "  disks    {} reads/s, {} writes/s, {} flushes/s (over {} s)",
        f(a.disk_reads_per_s),
        f(a.disk_writes_per_s),
        f(a.disk_flushes_per_s),
        window.as_secs()
    ));
    out
}

/// The ARC a lab's zfs-fuse gets without `server.arc`: zfs-fuse's own
/// default, 128 MiB (arcstats c_max of a lab daemon started without `-m`,
/// measured with zfs-fuse 0.7.0 of Debian; its zfsrc says "default size :
/// 128 Mb").
pub(crate) const ZFS_FUSE_DEFAULT_ARC: u64 = 128 << 20;

/// A warning when the workload's file set, with its metadata, is larger than
/// the lab's ARC: then the run measures the disks behind a cache that cannot
/// hold the data, not a server that holds it in memory.
pub fn arc_fit_warning(spec: &LabSpec, workload: &[String]) -> Option<String> {
    if spec.pool.backend == Some(Backend::OpenZfs) {
        return None;
    }
    let shape = crate::experiments::workload::run_shape(workload)?;
    let arc = spec.server.arc.unwrap_or(ZFS_FUSE_DEFAULT_ARC);
    let recordsize = spec.pool.recordsize.unwrap_or(128 << 10);
    let need = file_set_arc_bytes(shape.file_total_size, recordsize);
    (need > arc).then(|| {
        format!(
            "warning: the file set ({} MiB with metadata) does not fit the ARC of lab {} ({} MiB{}): reads of records that are not cached go to the disks, and each write smaller than a record into one reads it first; set [server] arc to at least {}M to measure a server that holds it in memory",
            need >> 20,
            spec.id(),
            arc >> 20,
            if spec.server.arc.is_none() { ", zfs-fuse's default" } else { "" },
            need.div_ceil(1 << 20)
        )
    })
}

/// Bytes a file set of `file_bytes` takes in the ARC with its metadata: the
/// data, plus one block pointer (128 bytes, blkptr_t in the ZFS on-disk
/// format) per record for the indirect blocks that address it.
pub(crate) fn file_set_arc_bytes(file_bytes: u64, recordsize: u64) -> u64 {
    let records = file_bytes.div_ceil(recordsize.max(512));
    file_bytes + records * 128
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn disk(reads: u64, writes: u64) -> DiskStats {
        DiskStats {
            name: "tb-d00".into(),
            reads,
            writes,
            flushes: 0,
            bytes_read: 0,
            bytes_written: 0,
            model_ms: 0.0,
            ..DiskStats::default()
        }
    }

    #[test]
    fn rates_divide_by_the_time_between_the_counter_writes() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let arc = |hits, misses| ArcStats {
            size: 5 << 20,
            c_max: 64 << 20,
            hits,
            misses,
        };
        let before = Snapshot {
            arc: Some(arc(100, 10)),
            disks: vec![disk(10, 20), disk(10, 20)],
            disks_at: Some(t0),
        };
        let after = Snapshot {
            arc: Some(arc(190, 20)),
            disks: vec![disk(30, 60), disk(30, 60)],
            disks_at: Some(t0 + Duration::from_secs(4)),
        };
        let a = between(&before, &after);
        assert_eq!(a.disk_reads_per_s, Some(10.0));
        assert_eq!(a.disk_writes_per_s, Some(20.0));
        assert_eq!((a.arc_hits, a.arc_misses), (Some(90), Some(10)));
        assert_eq!(a.arc_hit_percent(), Some(90.0));
        assert_eq!(a.arc_max_bytes, Some(64 << 20));
        // No daemon (kernel OpenZFS): no ARC figures rather than zeros. The
        // counters not rewritten: nothing reached the disks.
        let same = between(
            &before,
            &Snapshot {
                arc: None,
                ..before.clone()
            },
        );
        assert_eq!(same.disk_reads_per_s, Some(0.0));
        assert_eq!(same.arc_hits, None);
        assert_eq!(same.arc_hit_percent(), None);
        // No counters at all (the disk file system never wrote them).
        let none = Snapshot {
            disks_at: None,
            ..before.clone()
        };
        assert_eq!(between(&none, &after).disk_writes_per_s, None);
    }

    #[test]
    fn a_file_set_needs_its_block_pointers_too() {
        assert_eq!(
            file_set_arc_bytes(256 << 20, 128 << 10),
            (256 << 20) + 2048 * 128
        );
        assert_eq!(file_set_arc_bytes(4096, 4096), 4096 + 128);
    }

    /// The warning names the file set and the ARC, and the size that would
    /// hold it; a file set that fits, or kernel OpenZFS, gets none.
    #[test]
    fn a_file_set_larger_than_the_arc_is_warned_about() {
        let spec = |extra: &str| {
            LabSpec::from_toml(&format!(
                "name = \"w\"\n[pool]\nlayout = \"mirror-2\"\n{extra}\n"
            ))
            .unwrap()
        };
        let words = |size: &str| vec![format!("--file-total-size={size}")];
        let w = arc_fit_warning(&spec("[server]\narc = \"100M\""), &words("256M")).unwrap();
        assert!(
            w.starts_with("warning: the file set (256 MiB with metadata) does not fit the ARC of lab tb-w (100 MiB)")
                && w.contains("at least 257M")
                && !w.contains('\n'),
            "{w}"
        );
        assert!(arc_fit_warning(&spec("[server]\narc = \"2G\""), &words("256M")).is_none());
        // Without server.arc: zfs-fuse's default of 128 MiB.
        let w = arc_fit_warning(&spec(""), &words("256M")).unwrap();
        assert!(w.contains("128 MiB, zfs-fuse's default"), "{w}");
        assert!(arc_fit_warning(&spec(""), &words("100M")).is_none());
        // 4K records: the block pointers add 3 %.
        let w = arc_fit_warning(
            &spec("recordsize = \"4K\"\n[server]\narc = \"256M\""),
            &words("256M"),
        );
        assert!(w.is_some_and(|w| w.contains("264 MiB")));
        assert!(arc_fit_warning(&spec("backend = \"openzfs\""), &words("256M")).is_none());
        // sysbench's default file set is 2 GiB.
        assert!(arc_fit_warning(&spec("[server]\narc = \"1G\""), &[]).is_some());
    }
}

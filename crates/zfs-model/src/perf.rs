//! Performance of a layout: the pool's own random IOPS and streaming
//! bandwidth from per-vdev rules (OpenZFS "Workload Tuning" and "Hardware"
//! docs), each a range with its assumptions; and the figures of the workload
//! the plan ranks by (sync writes/s and their latency, read and write MiB/s),
//! which a [`PerformanceModel`] predicts: the `sim` crate's simulator, the
//! one model of a whole run (this crate cannot depend on it, so the plan is
//! handed one).

use serde::Serialize;

use crate::capacity::block_cost;
use crate::disk::{leaf_asize, DiskClass, DiskGroup, DiskPerf, MAX_DISK_BYTES};
use crate::error::{ModelError, Result};
use crate::estimate::Estimate;
use crate::layout::{Layout, Shape, VdevKind, MAX_MIRROR_WAYS};
use crate::network::{Link, Protocol};
use crate::units::{human_binary, parse_size, SizeMeaning, MIB};

/// A performance figure with the assumptions it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Figure {
    #[serde(flatten)]
    pub estimate: Estimate,
    pub unit: &'static str,
    pub assumptions: Vec<String>,
}

/// A separate intent-log device (SLOG), possibly mirrored.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LogDevice {
    pub bytes: u64,
    /// 1 for a single device, k for a k-way mirror.
    pub devices: u32,
    pub class: DiskClass,
    pub perf: DiskPerf,
}

impl LogDevice {
    /// Parse "10GB" (one device) or "2x10GB" (a mirror). Log sizes are plain
    /// byte counts: the IDEMA rule is for whole disks, and a log is usually a
    /// partition.
    pub fn parse(input: &str, class: DiskClass, perf: DiskPerf) -> Result<LogDevice> {
        let text = input.trim();
        let (devices, size) = match text.split_once(['x', 'X']) {
            Some((count, size))
                if count.chars().all(|c| c.is_ascii_digit()) && !count.is_empty() =>
            {
                (count.parse::<u32>().unwrap_or(0), size)
            }
            _ => (1, text),
        };
        if devices == 0 || devices > MAX_MIRROR_WAYS {
            return Err(ModelError::InvalidValue {
                input: input.to_string(),
                reason: format!("COUNT (devices in the log mirror) must be 1 to {MAX_MIRROR_WAYS}"),
            });
        }
        let bytes = parse_size(size, SizeMeaning::Exact)?;
        if leaf_asize(bytes) < 64 * MIB {
            return Err(ModelError::InvalidValue {
                input: input.to_string(),
                reason: "ZFS needs devices of at least 64 MiB".into(),
            });
        }
        if bytes > MAX_DISK_BYTES {
            return Err(ModelError::InvalidValue {
                input: input.to_string(),
                reason: "SIZE must be at most 1 PiB (ten times the largest drives sold)".into(),
            });
        }
        Ok(LogDevice {
            bytes,
            devices,
            class,
            perf,
        })
    }
}

/// Inputs of the performance model other than the layout.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PerfOptions {
    /// Block size the disks see (record or volblock).
    pub block_bytes: u64,
    pub ashift: u32,
    pub link: Option<Link>,
    pub protocol: Protocol,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Performance {
    pub block_bytes: u64,
    pub random_read_iops: Figure,
    pub random_write_iops: Figure,
    pub seq_read_mb_s: Figure,
    pub seq_write_mb_s: Figure,
    /// What one client connection can move over the link, MB/s (LACP: one member).
    pub client_stream_cap_mb_s: Option<f64>,
    /// The plan's workload predicted with the ZIL inside the pool; `None`
    /// when no model could predict it (see `prediction_note`).
    pub predicted: Option<WorkloadFigures>,
    /// The same with the log device, when there is one.
    pub predicted_with_log: Option<WorkloadFigures>,
    /// Why a prediction is missing, when one is.
    pub prediction_note: Option<String>,
    /// The interval of `predicted`'s sync figures, when intervals were
    /// asked for (`plan --intervals`).
    pub predicted_interval: Option<SyncInterval>,
    /// The same for `predicted_with_log`.
    pub predicted_with_log_interval: Option<SyncInterval>,
}

/// Low and high end of an interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Bounds {
    pub low: f64,
    pub high: f64,
}

impl Bounds {
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// The interval of a prediction's sync figures: the 10th to 90th
/// percentile of the predictions over samples of the model's uncertain
/// parameters, widened to hold the point (the point is a prediction too).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SyncInterval {
    pub writes_per_s: Bounds,
    pub commit_latency_ms: Bounds,
    /// Share of the samples inside the interval (0.8).
    pub confidence: f64,
    pub samples: usize,
}

/// The figures of one predicted run of the plan's workload.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct WorkloadFigures {
    pub reads_per_s: f64,
    /// Synchronous writes per second (each write of the workload).
    pub writes_per_s: f64,
    pub fsyncs_per_s: f64,
    pub read_mib_per_s: f64,
    pub write_mib_per_s: f64,
    /// Mean latency of one write (with `--file-fsync-all` from an ESXi
    /// guest, a stable write: one commit), ms.
    pub write_latency_ms: f64,
    /// Mean time from a write's start to the end of its fsync (the write
    /// alone when the workload has no fsync after it), ms: what a sync
    /// writer waits for per write, the figure a commit costs.
    pub commit_latency_ms: f64,
    /// Mean and 95th percentile of the event latency, ms.
    pub event_latency_ms: f64,
    pub event_latency_p95_ms: Option<f64>,
}

/// What a [`PerformanceModel`] is asked: one layout of the plan, with or
/// without the log device, and the rest of the request.
#[derive(Debug, Clone, Copy)]
pub struct PerfQuery<'a> {
    pub layout: &'a Layout,
    pub groups: &'a [DiskGroup],
    pub log: Option<&'a LogDevice>,
    pub link: Option<Link>,
    pub protocol: Protocol,
    pub threads: u32,
    pub recordsize: u64,
    pub ram_bytes: u64,
}

/// A model that predicts the plan's workload on a configuration. The
/// simulator implements it (`sim::plan_model`); `plan` asks it and has no
/// formula of its own for these figures.
pub trait PerformanceModel: Sync {
    /// The figures, or a one-line reason why this configuration cannot be
    /// predicted (e.g. a protocol the model does not cover).
    fn predict(&self, query: &PerfQuery<'_>) -> std::result::Result<WorkloadFigures, String>;
    /// The interval of `query`'s sync figures around `point` (what
    /// [`PerformanceModel::predict`] gave), or None when the model gives
    /// none (intervals not asked for).
    fn interval(
        &self,
        _query: &PerfQuery<'_>,
        _point: &WorkloadFigures,
    ) -> Option<std::result::Result<SyncInterval, String>> {
        None
    }
    /// What the predictions rest on, one line each, for the plan's
    /// assumptions.
    fn assumptions(&self) -> Vec<String>;
}

/// No performance model: the plan gives capacity and risk, and the
/// predicted columns say why they are empty.
pub struct NoPrediction;

impl PerformanceModel for NoPrediction {
    fn predict(&self, _: &PerfQuery<'_>) -> std::result::Result<WorkloadFigures, String> {
        Err("no performance model was given".into())
    }
    fn assumptions(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Disks one block of `block_bytes` is read from on a healthy vdev
/// (parity is not read): min(w − p, ceil(B / A)) on raidz (M. Ahrens, "How I
/// Learned to Stop Worrying and Love RAIDZ", Delphix blog, 2014).
pub fn disks_read_per_block(shape: &Shape, ashift: u32, block_bytes: u64) -> u32 {
    match shape.kind {
        VdevKind::Raidz { parity } => {
            let sectors = block_bytes.div_ceil(1 << ashift);
            (shape.width - parity).min(u32::try_from(sectors).unwrap_or(u32::MAX))
        }
        VdevKind::Mirror | VdevKind::Stripe => 1,
    }
}

/// Disks one block is written to: every column holding data or parity on
/// raidz, every child of a mirror.
pub fn disks_written_per_block(shape: &Shape, ashift: u32, block_bytes: u64) -> u32 {
    match shape.kind {
        VdevKind::Raidz { .. } => {
            let cost = block_cost(shape, ashift, block_bytes);
            let columns = cost.data_sectors + cost.parity_sectors;
            shape.width.min(u32::try_from(columns).unwrap_or(u32::MAX))
        }
        VdevKind::Mirror => shape.width,
        VdevKind::Stripe => 1,
    }
}

fn sum_over_vdevs(
    layout: &Layout,
    groups: &[DiskGroup],
    per_vdev: impl Fn(&DiskPerf) -> Estimate,
) -> Estimate {
    layout
        .placements
        .iter()
        .fold(Estimate::exact(0.0), |total, p| {
            total.plus(per_vdev(&groups[p.group].perf).scale(p.vdevs as f64))
        })
}

/// The pool's own figures for `layout` on `groups`, the predicted ones left
/// empty (the plan fills them from its [`PerformanceModel`]).
pub fn performance(groups: &[DiskGroup], layout: &Layout, options: &PerfOptions) -> Performance {
    let block = options.block_bytes;

    let random_read_iops = random_read_figure(groups, layout, options);
    let random_write_iops = random_write_figure(groups, layout, options);
    let (seq_read_mb_s, seq_write_mb_s) = sequential_figures(groups, layout, options);

    Performance {
        block_bytes: block,
        random_read_iops,
        random_write_iops,
        seq_read_mb_s,
        seq_write_mb_s,
        client_stream_cap_mb_s: options
            .link
            .filter(|_| options.protocol != Protocol::Local)
            .map(|l| l.flow_goodput_mb_s()),
        predicted: None,
        predicted_with_log: None,
        prediction_note: None,
        predicted_interval: None,
        predicted_with_log_interval: None,
    }
}

/// Random-read IOPS of the pool for blocks missing the ARC.
fn random_read_figure(groups: &[DiskGroup], layout: &Layout, options: &PerfOptions) -> Figure {
    let shape = layout.shape;
    let ashift = options.ashift;
    let block = options.block_bytes;
    let block_text = human_binary(block);
    let vdevs = layout.shape.count;
    // Random reads: a healthy raidz vdev reads a block from d = min(w − p,
    // ceil(B/A)) disks, so it serves w/d blocks per disk I/O time; a k-way
    // mirror serves k; a stripe member 1.
    let read_disks = disks_read_per_block(&shape, ashift, block);
    let read_factor = match shape.kind {
        VdevKind::Raidz { .. } => shape.width as f64 / read_disks as f64,
        VdevKind::Mirror => shape.width as f64,
        VdevKind::Stripe => 1.0,
    };
    let random_read = sum_over_vdevs(layout, groups, |perf| perf.random_iops.scale(read_factor));
    Figure {
        estimate: random_read,
        unit: "IOPS",
        assumptions: vec![
            format!("blocks of {block_text} missing the ARC; a {} vdev reads each from {read_disks} disk(s), serving {read_factor:.2} blocks per disk access; {vdevs} vdev(s) add up", shape.vdev_name()),
            "disk IOPS: low = queue depth 1, high = deep queue (NCQ)".into(),
        ],
    }
}

/// Random-write IOPS of the pool, from one disk access per block up to
/// txg-batched sequential allocation.
fn random_write_figure(groups: &[DiskGroup], layout: &Layout, options: &PerfOptions) -> Figure {
    let shape = layout.shape;
    let ashift = options.ashift;
    let block = options.block_bytes;
    let block_text = human_binary(block);
    // Random writes land on every data + parity column (all children of a
    // mirror). The high end assumes txg batching turns them into sequential
    // allocations on a fresh pool.
    let write_disks = disks_written_per_block(&shape, ashift, block);
    let write_factor = match shape.kind {
        VdevKind::Raidz { .. } => shape.width as f64 / write_disks as f64,
        VdevKind::Mirror | VdevKind::Stripe => 1.0,
    };
    let raw_per_block = match shape.kind {
        VdevKind::Mirror => block_cost(&shape, ashift, block).asize * shape.width as u64,
        _ => block_cost(&shape, ashift, block).asize,
    };
    let random_write = sum_over_vdevs(layout, groups, |perf| {
        let seek_bound = perf.random_iops.scale(write_factor);
        let streamed = perf.seq_mb_s.typical * 1e6 * shape.width as f64 / raw_per_block as f64;
        Estimate::new(
            seek_bound.low,
            seek_bound.typical,
            seek_bound.high.max(streamed),
        )
    });
    Figure {
        estimate: random_write,
        unit: "IOPS",
        assumptions: vec![
            format!("each {block_text} block is written to {write_disks} disk(s) of its vdev ({} raw bytes with parity and padding)", raw_per_block),
            "low/typical: every block costs a disk access; high: txg batching writes them as sequential allocations (fresh pool)".into(),
            "writes smaller than the record also read the old record when it is not cached (read-modify-write)".into(),
        ],
    }
}

/// Sequential read and write bandwidth of the pool.
fn sequential_figures(
    groups: &[DiskGroup],
    layout: &Layout,
    options: &PerfOptions,
) -> (Figure, Figure) {
    let shape = layout.shape;
    let ashift = options.ashift;
    let block = options.block_bytes;
    let block_text = human_binary(block);
    let vdevs = layout.shape.count;
    // Sequential: raidz reads from w − p data disks and writes w disks at the
    // block's space efficiency; mirrors read from k children, write at one disk.
    let efficiency = block as f64 / block_cost(&shape, ashift, block).asize as f64;
    let (read_disks_seq, write_disks_seq) = match shape.kind {
        VdevKind::Raidz { parity } => (
            (shape.width - parity) as f64,
            shape.width as f64 * efficiency,
        ),
        VdevKind::Mirror => (shape.width as f64, 1.0),
        VdevKind::Stripe => (1.0, 1.0),
    };
    let seq_read = sum_over_vdevs(layout, groups, |perf| perf.seq_mb_s.scale(read_disks_seq));
    let seq_write = sum_over_vdevs(layout, groups, |perf| perf.seq_mb_s.scale(write_disks_seq));
    let seq_notes = vec![
        "disk transfer rate: low = inner tracks, high = outer tracks".into(),
        "HBA, CPU, checksums and compression are not modelled".into(),
    ];
    let seq_read_mb_s = Figure {
        estimate: seq_read,
        unit: "MB/s",
        assumptions: [
            vec![format!(
                "{read_disks_seq:.0} disk(s) stream data per vdev, {vdevs} vdev(s)"
            )],
            seq_notes.clone(),
        ]
        .concat(),
    };
    let seq_write_mb_s = Figure {
        estimate: seq_write,
        unit: "MB/s",
        assumptions: [
            vec![format!(
                "{write_disks_seq:.2} disks' worth of data per vdev ({} disks x {:.1}% space efficiency of {block_text} blocks), {vdevs} vdev(s)",
                match shape.kind {
                    VdevKind::Raidz { .. } => shape.width,
                    _ => 1,
                },
                efficiency * 100.0
            )],
            seq_notes,
        ]
        .concat(),
    };
    (seq_read_mb_s, seq_write_mb_s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::PerfOverrides;
    use crate::units::KIB;

    fn run(layout: &str, link: &str) -> Performance {
        let groups =
            vec![
                DiskGroup::parse("24x8TB", DiskClass::Hdd7200, &PerfOverrides::default()).unwrap(),
            ];
        let layout = Layout::fit(Shape::parse(layout).unwrap(), &groups, 0).unwrap();
        let options = PerfOptions {
            block_bytes: 128 * KIB,
            ashift: 12,
            link: Link::parse(link).unwrap(),
            protocol: Protocol::Nfs,
        };
        performance(&groups, &layout, &options)
    }

    /// Random-read IOPS of the reference layouts at 150 IOPS per disk.
    #[test]
    fn random_read_iops_of_the_reference_layouts() {
        for (layout, want) in [
            ("1xraidz3-24", 171.0),
            ("2xraidz2-12", 360.0),
            ("3xraidz2-8", 600.0),
            ("12xmirror-2", 3600.0),
        ] {
            let got = run(layout, "10G").random_read_iops.estimate.typical;
            assert!((got - want).abs() < 1.0, "{layout}: {got}");
        }
        let mirror_writes = run("12xmirror-2", "10G").random_write_iops.estimate.typical;
        assert!((mirror_writes - 1800.0).abs() < 1.0, "{mirror_writes}");
    }

    #[test]
    fn sequential_rates_exceed_a_10g_link() {
        let p = run("3xraidz2-8", "2x10G");
        // 3 vdevs x 6 data disks x 180 MB/s.
        assert!((p.seq_read_mb_s.estimate.typical - 3240.0).abs() < 1.0);
        assert!(p.seq_read_mb_s.estimate.typical > p.client_stream_cap_mb_s.unwrap());
    }
}

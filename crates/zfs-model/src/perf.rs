//! Analytic performance: IOPS and bandwidth from per-vdev rules of thumb, and
//! the latency of a synchronous 4 KiB write from a device + network + protocol
//! model (OpenZFS "Workload Tuning" and "Hardware" docs, `module/zfs/zil.c`).
//! Every figure is a range and carries its assumptions.

use serde::Serialize;

use crate::capacity::block_cost;
use crate::disk::{leaf_asize, DiskClass, DiskGroup, DiskPerf, MAX_DISK_BYTES};
use crate::error::{ModelError, Result};
use crate::estimate::Estimate;
use crate::layout::{Layout, Shape, VdevKind, MAX_MIRROR_WAYS};
use crate::network::{Link, Protocol, WIRE_BYTES_4K_WRITE};
use crate::units::{human_binary, parse_size, SizeMeaning, KIB, MIB};

/// A performance figure with the assumptions it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    #[serde(flatten)]
    pub estimate: Estimate,
    pub unit: &'static str,
    pub assumptions: Vec<String>,
}

/// A separate intent-log device (SLOG), possibly mirrored.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerfOptions {
    /// Block size the disks see (record or volblock).
    pub block_bytes: u64,
    pub ashift: u32,
    pub link: Option<Link>,
    pub protocol: Protocol,
    /// Concurrent writers issuing synchronous writes.
    pub threads: u32,
    pub log: Option<LogDevice>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Performance {
    pub block_bytes: u64,
    pub random_read_iops: Figure,
    pub random_write_iops: Figure,
    pub seq_read_mb_s: Figure,
    pub seq_write_mb_s: Figure,
    /// What one client connection can move over the link, MB/s (LACP: one member).
    pub client_stream_cap_mb_s: Option<f64>,
    /// One 4 KiB synchronous write, ZIL inside the pool.
    pub sync_write_latency_ms: Figure,
    pub sync_write_iops: Figure,
    /// The same with the log device, when there is one.
    pub slog_sync_write_latency_ms: Option<Figure>,
    pub slog_sync_write_iops: Option<Figure>,
}

/// Size of the ZIL block that carries one 4 KiB write: the data plus its log
/// record header and block trailer (~200 bytes) need a second 4 KiB sector.
pub const ZIL_BLOCK_FOR_4K: u64 = 4 * KIB + 256;

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

/// Network + protocol part of one synchronous write, ms.
fn transport_ms(link: Option<Link>, protocol: Protocol) -> (Estimate, Vec<String>) {
    let stack = protocol.stack_ms();
    let mut notes = vec![format!(
        "client + server software time {:.0}-{:.0} us per request ({}; assumption)",
        stack.low * 1e3,
        stack.high * 1e3,
        protocol.name()
    )];
    match link {
        Some(link) if protocol != Protocol::Local => {
            let rtt = link.round_trip_ms();
            let wire = link.serialization_4k_ms();
            notes.push(format!(
                "{} round trip {:.0}-{:.0} us{} + {:.1} us to serialise ~{} wire bytes on one member link",
                link.name(),
                rtt.low * 1e3,
                rtt.high * 1e3,
                if link.measured_range() { "" } else { " (extrapolated from 10 GbE)" },
                wire * 1e3,
                WIRE_BYTES_4K_WRITE
            ));
            if link.members > 1 {
                notes.push("LACP pins one connection to one member: a single client gets one link's bandwidth and latency".into());
            }
            (stack.plus(rtt.map(|r| r + wire)), notes)
        }
        _ => (stack, notes),
    }
}

fn sync_iops(latency: &Estimate, threads: u32, link: Option<Link>) -> (Estimate, Vec<String>) {
    let t = threads.max(1) as f64;
    // Batching lets T waiting writers share log blocks (OpenZFS 8585, 0.8+):
    // up to T / latency. Without it (older ZFS) commits run one at a time.
    let mut iops =
        Estimate::new(1.0 / latency.high, t / latency.typical, t / latency.low).map(|v| v * 1e3);
    let mut notes = vec![format!(
        "{threads} writer(s); typical = threads / latency (commits batched, OpenZFS 0.8+); low = one commit at a time at the slow latency"
    )];
    if let Some(link) = link {
        let cap = link.flow_goodput_mb_s() * 1e6 / WIRE_BYTES_4K_WRITE;
        if iops.high > cap {
            notes.push(format!("capped at {cap:.0}/s by one link member's goodput"));
        }
        iops = iops.min_with(cap);
    }
    (iops, notes)
}

/// Run the performance model for `layout` on `groups`.
pub fn performance(groups: &[DiskGroup], layout: &Layout, options: &PerfOptions) -> Performance {
    let shape = layout.shape;
    let ashift = options.ashift;
    let block = options.block_bytes;

    let random_read_iops = random_read_figure(groups, layout, options);
    let random_write_iops = random_write_figure(groups, layout, options);
    let (seq_read_mb_s, seq_write_mb_s) = sequential_figures(groups, layout, options);

    // Synchronous 4 KiB writes: t = stack + network + log write with flush.
    let (transport, transport_notes) = transport_ms(options.link, options.protocol);
    let zil_shape_disks = disks_written_per_block(&shape, ashift, ZIL_BLOCK_FOR_4K);
    let first_group = &groups[layout.placements[0].group];
    let in_pool = first_group.perf.sync_write_ms(zil_shape_disks);
    let latency = transport.plus(in_pool);
    let mut latency_notes = vec![format!(
        "no log device: the ZIL block (~8 KiB) goes to a {} vdev and waits for {zil_shape_disks} {} disk(s) to write and flush: {:.2}-{:.2} ms",
        shape.vdev_name(),
        first_group.class.name(),
        in_pool.low,
        in_pool.high
    )];
    if first_group.class.is_rotational() {
        latency_notes.push("HDD: seek + flush + the slowest disk's rotational wait (one revolution x n/(n+1)); competes with txg writes".into());
    }
    latency_notes.extend(transport_notes.iter().cloned());
    let (iops, iops_notes) = sync_iops(&latency, options.threads, options.link);

    let (slog_latency, slog_iops) = slog_figures(options, transport, &transport_notes);

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
        sync_write_latency_ms: Figure {
            estimate: latency,
            unit: "ms",
            assumptions: latency_notes,
        },
        sync_write_iops: Figure {
            estimate: iops,
            unit: "IOPS",
            assumptions: iops_notes,
        },
        slog_sync_write_latency_ms: slog_latency,
        slog_sync_write_iops: slog_iops,
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

/// Latency and IOPS of 4 KiB sync writes through the log device, if any.
fn slog_figures(
    options: &PerfOptions,
    transport: Estimate,
    transport_notes: &[String],
) -> (Option<Figure>, Option<Figure>) {
    match &options.log {
        Some(log) => {
            let device = log.perf.sync_write_ms(log.devices);
            let total = transport.plus(device);
            let mut notes = vec![format!(
                "log device: {} {} ({}), write + flush {:.2}-{:.2} ms",
                if log.devices > 1 {
                    format!("{}-way mirror of", log.devices)
                } else {
                    "one".into()
                },
                log.class.name(),
                human_binary(log.bytes),
                device.low,
                device.high
            )];
            notes.extend(transport_notes.iter().cloned());
            let (iops, iops_notes) = sync_iops(&total, options.threads, options.link);
            (
                Some(Figure {
                    estimate: total,
                    unit: "ms",
                    assumptions: notes,
                }),
                Some(Figure {
                    estimate: iops,
                    unit: "IOPS",
                    assumptions: iops_notes,
                }),
            )
        }
        None => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::PerfOverrides;

    fn run(layout: &str, link: &str, log: Option<DiskClass>) -> Performance {
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
            threads: 1,
            log: log.map(|class| LogDevice {
                bytes: 10_000_000_000,
                devices: 1,
                class,
                perf: class.default_perf(),
            }),
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
            let got = run(layout, "10G", None).random_read_iops.estimate.typical;
            assert!((got - want).abs() < 1.0, "{layout}: {got}");
        }
        let mirror_writes = run("12xmirror-2", "10G", None)
            .random_write_iops
            .estimate
            .typical;
        assert!((mirror_writes - 1800.0).abs() < 1.0, "{mirror_writes}");
    }

    #[test]
    fn sequential_rates_exceed_a_10g_link() {
        let p = run("3xraidz2-8", "2x10G", None);
        // 3 vdevs x 6 data disks x 180 MB/s.
        assert!((p.seq_read_mb_s.estimate.typical - 3240.0).abs() < 1.0);
        assert!(p.seq_read_mb_s.estimate.typical > p.client_stream_cap_mb_s.unwrap());
    }

    /// One 4 KiB sync write from an NFS client: HDD in-pool ZIL
    /// ~13 ms on either link; SATA SSD SLOG ~0.24 ms on 1 GbE, ~0.18 ms on 10 GbE.
    #[test]
    fn sync_write_latency_with_and_without_slog() {
        let hdd = run("3xraidz2-8", "1G", None).sync_write_latency_ms.estimate;
        assert!(
            hdd.low > 5.0 && hdd.typical > 10.0 && hdd.typical < 14.0 && hdd.high < 20.0,
            "{hdd:?}"
        );
        let one = run("3xraidz2-8", "1G", Some(DiskClass::SsdSata))
            .slog_sync_write_latency_ms
            .unwrap()
            .estimate;
        let ten = run("3xraidz2-8", "10G", Some(DiskClass::SsdSata))
            .slog_sync_write_latency_ms
            .unwrap()
            .estimate;
        assert!(
            one.low < 0.24 && 0.24 < one.high && (one.typical - 0.24).abs() < 0.1,
            "{one:?}"
        );
        assert!(
            ten.low < 0.18 && 0.18 < ten.high && (ten.typical - 0.18).abs() < 0.05,
            "{ten:?}"
        );
        let nvme = run("3xraidz2-8", "10G", Some(DiskClass::Nvme))
            .slog_sync_write_latency_ms
            .unwrap()
            .estimate;
        assert!(nvme.typical < ten.typical);
        let no_plp = run("3xraidz2-8", "10G", Some(DiskClass::NvmeNoPlp))
            .slog_sync_write_latency_ms
            .unwrap()
            .estimate;
        assert!(no_plp.typical > 2.0);
    }

    #[test]
    fn wider_raidz_waits_for_more_disks_on_the_zil() {
        let z3 = run("1xraidz3-24", "10G", None)
            .sync_write_latency_ms
            .estimate
            .typical;
        let z2 = run("3xraidz2-8", "10G", None)
            .sync_write_latency_ms
            .estimate
            .typical;
        let mirror = run("12xmirror-2", "10G", None)
            .sync_write_latency_ms
            .estimate
            .typical;
        assert!(mirror < z2 && z2 < z3, "{mirror} {z2} {z3}");
    }
}

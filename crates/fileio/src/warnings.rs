//! Warnings that explain a result: conditions under which the figures do not
//! mean what a reader would assume, each with this run's numbers and a hint
//! (hyperfine's warnings are the model).
//!
//! [`analyze`] is the one place that decides which warnings apply: a pure
//! function of the workload, environment and result, so tests can show each
//! warning firing and not firing on synthetic results. A [`RunWarning`] becomes
//! the serialized [`Warning`] of a result in one place (its `From` impl), and
//! [`print`] is the one way a warning reaches the terminal.

use crate::console::Console;
use crate::result::{Environment, LatencyKey, RunResult, Warning};
use crate::spec::{DataPattern, IoMode, Mode, RunSpec};
use std::fmt;

/// Stable warning codes (the `code` field of [`Warning`]).
pub mod codes {
    pub(crate) const READS_FROM_CACHE: &str = "reads_from_page_cache";
    pub(crate) const ZERO_DATA_COMPRESSING_FS: &str = "zero_data_compressing_fs";
    pub(crate) const FSYNC_BURSTS: &str = "fsync_bursts";
    pub(crate) const SEQUENTIAL_WRAPAROUND: &str = "sequential_wraparound";
    pub(crate) const READS_PACED_BY_WRITES: &str = "reads_paced_by_writes";
    pub(crate) const DIRECT_IO_ALIGNMENT: &str = "direct_io_alignment";
    pub(crate) const INTERRUPTED: &str = "interrupted";
    pub(crate) const READS_FROM_ARC: &str = "reads_from_arc";
    pub(crate) const SYNC_DISABLED: &str = "sync_disabled";
    pub(crate) const LOGBIAS_THROUGHPUT: &str = "logbias_throughput";
    pub(crate) const SHORTER_THAN_TXG_SYNCS: &str = "shorter_than_txg_syncs";
    pub(crate) const NOT_STEADY: &str = "not_steady";
}

/// The boundaries of the warnings that read the run's ZFS facts and
/// intervals.
pub mod limits {
    /// An ARC hit ratio at or above this on a read run: reads came from RAM.
    pub(crate) const ARC_HIT_RATIO: f64 = 0.9;
    /// A write run shorter than this many `zfs_txg_timeout`s measured too few
    /// transaction group syncs to show the pool's sustained write rate.
    pub(crate) const TXG_SYNCS: u64 = 3;
    /// `zfs_txg_timeout` where it cannot be read (the default of OpenZFS,
    /// FreeBSD and zfs-fuse alike).
    pub(crate) const DEFAULT_TXG_TIMEOUT_S: u64 = 5;
    /// Interval throughput of the last third of a run that differs from the
    /// middle third by more than this share: not steady yet.
    pub(crate) const DRIFT: f64 = 0.10;
}

/// One condition that changes how a run's figures should be read, with the
/// numbers its message quotes. `Display` gives the message; [`Self::hint`]
/// what to do about it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RunWarning {
    /// SIGINT stopped the run early.
    Interrupted { after_s: f64 },
    /// Reads without O_DIRECT from a file set small enough to be cached.
    ReadsFromPageCache {
        set_bytes: u64,
        mem_total_bytes: u64,
        mem_available_bytes: u64,
        read_mib_per_s: f64,
    },
    /// Zero-filled writes to a file system that can compress them away.
    ZeroDataCompressingFs {
        fs_type: String,
        compression: Option<String>,
        written_mib_per_s: f64,
    },
    /// Periodic fsync across several files: each burst syncs every file.
    FsyncBursts {
        fsync_freq: u64,
        file_num: u64,
        fsyncs_per_s: f64,
        writes_per_s: f64,
    },
    /// A sequential test that went over its file set more than once.
    SequentialWraparound {
        moved_bytes: u64,
        set_bytes: u64,
        /// Reads (seqrd) rather than writes went round again.
        rereads: bool,
    },
    /// rndrw with synchronous writes much slower than reads: the fixed
    /// read/write ratio ties read throughput to write latency.
    ReadsPacedByWrites {
        rw_ratio: f64,
        /// `--file-fsync-all`: the write cost includes its fsync.
        with_fsync: bool,
        write_ms: f64,
        read_ms: f64,
        /// Fraction (0..=1) of the threads' time spent in writes.
        write_share: f64,
        reads_per_s: f64,
        read_mib_per_s: f64,
    },
    /// O_DIRECT with a block or file size that breaks sector alignment.
    DirectIoMisaligned {
        sector: u64,
        block_size: u64,
        file_size: u64,
        /// The block size itself is misaligned (otherwise only the last,
        /// short block of each file is).
        misaligned_block: bool,
    },
    /// mmap mode with O_DIRECT. It shares the alignment warning's code (the
    /// code predates this enum and results in the wild carry it).
    MmapIgnoresDirect,
    /// A read run whose reads the ARC served (measured: its hit ratio).
    ReadsFromArc {
        hit_ratio: f64,
        /// ARC accesses the ratio is taken over.
        accesses: u64,
        read_mib_per_s: f64,
    },
    /// fsync or O_(D)SYNC on a dataset with `sync=disabled`.
    SyncDisabled { dataset: String, fsyncs_per_s: f64 },
    /// Synchronous writes on a dataset with `logbias=throughput`.
    LogbiasThroughput {
        dataset: String,
        /// The pool has a log device (which this setting bypasses).
        log_device: bool,
    },
    /// A write run on ZFS shorter than a few transaction group syncs.
    ShorterThanTxgSyncs {
        run_s: f64,
        txg_timeout_s: u64,
        /// `zfs_txg_timeout` could not be read; the default was taken.
        assumed: bool,
    },
    /// Interval throughput still changing at the end of the run.
    NotSteady {
        /// Mean throughput of the middle and last thirds of the intervals.
        middle: f64,
        last: f64,
        /// `MiB/s` or `ops/s`.
        unit: &'static str,
        intervals: usize,
    },
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

impl RunWarning {
    /// The stable code stored in results.
    pub fn code(&self) -> &'static str {
        match self {
            RunWarning::Interrupted { .. } => codes::INTERRUPTED,
            RunWarning::ReadsFromPageCache { .. } => codes::READS_FROM_CACHE,
            RunWarning::ZeroDataCompressingFs { .. } => codes::ZERO_DATA_COMPRESSING_FS,
            RunWarning::FsyncBursts { .. } => codes::FSYNC_BURSTS,
            RunWarning::SequentialWraparound { .. } => codes::SEQUENTIAL_WRAPAROUND,
            RunWarning::ReadsPacedByWrites { .. } => codes::READS_PACED_BY_WRITES,
            RunWarning::DirectIoMisaligned { .. } | RunWarning::MmapIgnoresDirect => {
                codes::DIRECT_IO_ALIGNMENT
            }
            RunWarning::ReadsFromArc { .. } => codes::READS_FROM_ARC,
            RunWarning::SyncDisabled { .. } => codes::SYNC_DISABLED,
            RunWarning::LogbiasThroughput { .. } => codes::LOGBIAS_THROUGHPUT,
            RunWarning::ShorterThanTxgSyncs { .. } => codes::SHORTER_THAN_TXG_SYNCS,
            RunWarning::NotSteady { .. } => codes::NOT_STEADY,
        }
    }

    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            RunWarning::Interrupted { .. } => {
                "Let the run finish for figures comparable with full runs."
            }
            RunWarning::ReadsFromPageCache { .. } => {
                "To measure the storage, make --file-total-size at least twice the RAM, or use --file-extra-flags=direct, or --drop-caches before a read test."
            }
            RunWarning::ZeroDataCompressingFs { .. } => {
                "Use --file-data=random for incompressible data (sysbench always writes zeros)."
            }
            RunWarning::FsyncBursts { .. } => {
                "Use --file-fsync-freq=0 for raw write throughput, --file-fsync-all for sync-write latency, or --file-num=1 to avoid bursts across files."
            }
            RunWarning::SequentialWraparound { .. } => {
                "Make --file-total-size larger than what the run moves (about throughput x --time) so each block is touched once."
            }
            RunWarning::ReadsPacedByWrites { .. } => {
                "Compare layouts by write latency (or run rndrd and rndwr separately) rather than by rndrw read MiB/s."
            }
            RunWarning::DirectIoMisaligned { .. } => {
                "Use a block size that is a multiple of the sector size (4K is safe) and a --file-total-size that is a multiple of --file-num x block size."
            }
            RunWarning::MmapIgnoresDirect => {
                "Use --file-io-mode=sync or async with --file-extra-flags=direct."
            }
            RunWarning::ReadsFromArc { .. } => {
                "To measure the disks, make --file-total-size several times the ARC's maximum (arc.before.max_bytes in the result), or set primarycache=metadata on the test dataset for the run."
            }
            RunWarning::SyncDisabled { .. } => {
                "Run sync tests on a dataset with sync=standard (zfs set sync=standard DATASET) unless sync=disabled is what production uses; then say so in a label."
            }
            RunWarning::LogbiasThroughput { .. } => {
                "Use logbias=latency (the default) to measure the log device; keep throughput only if production uses it."
            }
            RunWarning::ShorterThanTxgSyncs { .. } => {
                "Run writes for at least three txg timeouts (--time=30 or more is safe with the 5 s default) so several txg syncs land inside the measurement; --warmup=SECS also leaves the first seconds (empty caches, the first txg) out of the figures."
            }
            RunWarning::NotSteady { .. } => {
                "Run longer (or repeat with --repeat and compare) until the last intervals settle; --report-interval shows the trend."
            }
        }
    }
}

/// The message, with this run's numbers.
impl fmt::Display for RunWarning {
    // One arm per warning, each its message: splitting the match would only
    // scatter them.
    #[allow(clippy::too_many_lines)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunWarning::Interrupted { after_s } => write!(
                f,
                "The run was interrupted after {after_s:.2} s; the figures cover only that part."
            ),
            RunWarning::ReadsFromPageCache {
                set_bytes,
                mem_total_bytes,
                mem_available_bytes,
                read_mib_per_s,
            } => write!(
                f,
                "The file set ({}) fits in RAM ({} total, {} available): reads ({:.2} MiB/s) were most likely served from memory (page cache or ZFS ARC), not from the storage.",
                gib(*set_bytes),
                gib(*mem_total_bytes),
                gib(*mem_available_bytes),
                read_mib_per_s
            ),
            RunWarning::ZeroDataCompressingFs {
                fs_type,
                compression,
                written_mib_per_s,
            } => write!(
                f,
                "Written blocks are all zeros and the target file system ({}{}) can compress them away: write figures ({:.2} MiB/s) may be far higher than real data allows.",
                fs_type,
                compression
                    .as_deref()
                    .map(|c| format!(", compression={c}"))
                    .unwrap_or_default(),
                written_mib_per_s
            ),
            RunWarning::FsyncBursts {
                fsync_freq,
                file_num,
                fsyncs_per_s,
                writes_per_s,
            } => write!(
                f,
                "Every {fsync_freq} requests, one fsync per file is issued ({file_num} files), so {fsyncs_per_s:.2} fsyncs/s accompany {writes_per_s:.2} writes/s: the figures measure fsync bursts more than writes."
            ),
            RunWarning::SequentialWraparound {
                moved_bytes,
                set_bytes,
                rereads,
            } => write!(
                f,
                "The sequential test went over the file set {:.1} times ({} moved, {} file set): later passes {} data that may still be in cache.",
                *moved_bytes as f64 / *set_bytes as f64,
                gib(*moved_bytes),
                gib(*set_bytes),
                if *rereads { "re-read" } else { "overwrite" }
            ),
            RunWarning::ReadsPacedByWrites {
                rw_ratio,
                with_fsync,
                write_ms,
                read_ms,
                write_share,
                reads_per_s,
                read_mib_per_s,
            } => write!(
                f,
                "In rndrw, reads are issued at a fixed ratio of {:.2} per completed write, so read throughput follows write latency: each write{} took {:.3} ms on average against {:.3} ms per read, and writes took {:.0}% of the threads' time. Reads ran at {:.2}/s ({:.2} MiB/s) although they may come from cache; a faster log device or pool raises them too.",
                rw_ratio,
                if *with_fsync { " with its fsync" } else { "" },
                write_ms,
                read_ms,
                write_share * 100.0,
                reads_per_s,
                read_mib_per_s
            ),
            RunWarning::DirectIoMisaligned {
                sector,
                block_size,
                file_size,
                misaligned_block,
            } => write!(
                f,
                "O_DIRECT needs offsets and sizes in multiples of the device's {sector}-byte sectors: block size {block_size} and file size {file_size} leave {}.",
                if *misaligned_block {
                    "misaligned blocks"
                } else {
                    "a short, misaligned last block in each file"
                }
            ),
            RunWarning::MmapIgnoresDirect => f.write_str(
                "mmap mode ignores O_DIRECT: reads and writes go through the page cache.",
            ),
            RunWarning::ReadsFromArc {
                hit_ratio,
                accesses,
                read_mib_per_s,
            } => write!(
                f,
                "Reads were served from the ARC: {:.1}% of {accesses} ARC reads during the run were hits, so the read figures ({read_mib_per_s:.2} MiB/s) measure RAM, not the pool.",
                hit_ratio * 100.0
            ),
            RunWarning::SyncDisabled {
                dataset,
                fsyncs_per_s,
            } => write!(
                f,
                "fsync does nothing on this dataset: {dataset} has sync=disabled, so the run's synchronous writes ({fsyncs_per_s:.2} fsyncs/s) returned before reaching stable storage and the figures show no sync cost."
            ),
            RunWarning::LogbiasThroughput {
                dataset,
                log_device,
            } => write!(
                f,
                "{dataset} has logbias=throughput: synchronous writes go to the pool's data vdevs instead of the ZIL{}, so the sync figures do not show what the default logbias=latency gives.",
                if *log_device {
                    ", bypassing the pool's log device"
                } else {
                    " fast path"
                }
            ),
            RunWarning::ShorterThanTxgSyncs {
                run_s,
                txg_timeout_s,
                assumed,
            } => write!(
                f,
                "The write run ({run_s:.2} s) is shorter than a few txg syncs ({} x zfs_txg_timeout = {} s{}): much of what was written may still have been in RAM, waiting for a transaction group sync, when the clock stopped.",
                limits::TXG_SYNCS,
                limits::TXG_SYNCS * txg_timeout_s,
                if *assumed { ", taking the 5 s default" } else { "" }
            ),
            RunWarning::NotSteady {
                middle,
                last,
                unit,
                intervals,
            } => write!(
                f,
                "Throughput was not steady: the last third of the {intervals} intervals averaged {last:.2} {unit} against {middle:.2} {unit} in the middle third ({:+.1}%), so the run ended before the storage settled.",
                (last - middle) / middle * 100.0
            ),
        }
    }
}

/// The serialized form stored in results.
impl From<&RunWarning> for Warning {
    fn from(w: &RunWarning) -> Warning {
        Warning {
            code: w.code().to_string(),
            message: w.to_string(),
            hint: w.hint().to_string(),
        }
    }
}

/// What the analysis needs besides the result.
pub struct Context<'a> {
    pub workload: &'a RunSpec,
    pub environment: &'a Environment,
    /// Logical sector size of the device, when known.
    pub logical_block_size: Option<u64>,
}

/// Every warning that applies to this run, in the order they are printed.
pub(crate) fn analyze(ctx: &Context, r: &RunResult) -> Vec<RunWarning> {
    [
        interrupted(r),
        reads_from_cache(ctx, r),
        reads_from_arc(ctx, r),
        sync_disabled(ctx, r),
        logbias_throughput(ctx, r),
        shorter_than_txg_syncs(ctx, r),
        not_steady(r),
        zero_data_compressing_fs(ctx, r),
        fsync_bursts(ctx, r),
        sequential_wraparound(ctx, r),
        reads_paced_by_writes(ctx, r),
        direct_io_alignment(ctx),
        mmap_ignores_direct(ctx),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Bytes in the file set: `file_size` is floor(total / file_num), so this
/// never exceeds `--file-total-size` and cannot overflow.
fn set_bytes(w: &RunSpec) -> u64 {
    w.files.file_num * w.files.file_size
}

fn interrupted(r: &RunResult) -> Option<RunWarning> {
    r.interrupted.then_some(RunWarning::Interrupted {
        after_s: r.total_time_s,
    })
}

fn reads_from_cache(ctx: &Context, r: &RunResult) -> Option<RunWarning> {
    let w = ctx.workload;
    let env = ctx.environment;
    let reads = matches!(
        w.mode,
        Mode::SeqRd | Mode::RndRd | Mode::RndRw | Mode::SeqRw
    ) && r.counts.reads > 0;
    // mem_total_bytes is 0 when /proc/meminfo could not be read: no basis.
    if !reads || w.files.extra_flags.direct || env.mem_total_bytes == 0 {
        return None;
    }
    // A measured ARC hit ratio is evidence where this is a guess from sizes:
    // [`reads_from_arc`] decides then.
    if measured_arc(env).is_some() {
        return None;
    }
    // Reads can be served from memory when the whole file set fits in what
    // the kernel can cache (page cache, or the ZFS ARC, which also lives in RAM).
    let cacheable = env.mem_available_bytes.max(env.mem_total_bytes / 2);
    (set_bytes(w) <= cacheable).then(|| RunWarning::ReadsFromPageCache {
        set_bytes: set_bytes(w),
        mem_total_bytes: env.mem_total_bytes,
        mem_available_bytes: env.mem_available_bytes,
        read_mib_per_s: r.rates.read_mib_per_s,
    })
}

/// The ARC's counters over the run, when they were measured.
fn measured_arc(env: &Environment) -> Option<&crate::zfs_facts::ArcFacts> {
    env.zfs
        .as_ref()?
        .arc
        .as_ref()
        .filter(|a| a.hit_ratio.is_some())
}

fn reads_from_arc(ctx: &Context, r: &RunResult) -> Option<RunWarning> {
    let w = ctx.workload;
    let reads = matches!(
        w.mode,
        Mode::SeqRd | Mode::RndRd | Mode::RndRw | Mode::SeqRw
    ) && r.counts.reads > 0;
    let arc = measured_arc(ctx.environment)?;
    let ratio = arc.hit_ratio?;
    (reads && ratio >= limits::ARC_HIT_RATIO).then(|| RunWarning::ReadsFromArc {
        hit_ratio: ratio,
        accesses: arc.delta.accesses(),
        read_mib_per_s: r.rates.read_mib_per_s,
    })
}

/// The run's writes waited for stable storage: fsyncs were made, or the
/// files were opened O_SYNC or O_DSYNC.
fn sync_writes(w: &RunSpec, r: &RunResult) -> bool {
    w.mode.writes()
        && r.counts.writes > 0
        && (r.counts.fsyncs > 0 || w.files.extra_flags.sync || w.files.extra_flags.dsync)
}

/// The dataset's name and the value of `property`, when both were read.
fn dataset_property<'a>(env: &'a Environment, property: &str) -> Option<(&'a str, &'a str)> {
    let dataset = env.zfs.as_ref()?.dataset.as_ref()?;
    Some((dataset.name.as_str(), dataset.property(property)?))
}

fn sync_disabled(ctx: &Context, r: &RunResult) -> Option<RunWarning> {
    let (dataset, sync) = dataset_property(ctx.environment, "sync")?;
    (sync == "disabled" && sync_writes(ctx.workload, r)).then(|| RunWarning::SyncDisabled {
        dataset: dataset.to_string(),
        fsyncs_per_s: r.rates.fsyncs_per_s,
    })
}

fn logbias_throughput(ctx: &Context, r: &RunResult) -> Option<RunWarning> {
    let (dataset, logbias) = dataset_property(ctx.environment, "logbias")?;
    // With sync=disabled nothing goes through the ZIL at all: that warning
    // says more.
    let sync_off = dataset_property(ctx.environment, "sync").map(|(_, v)| v) == Some("disabled");
    let log_device = ctx
        .environment
        .zfs
        .as_ref()
        .and_then(|z| z.pool.as_ref())
        .is_some_and(|p| !p.logs.is_empty());
    (logbias == "throughput" && !sync_off && sync_writes(ctx.workload, r)).then(|| {
        RunWarning::LogbiasThroughput {
            dataset: dataset.to_string(),
            log_device,
        }
    })
}

fn shorter_than_txg_syncs(ctx: &Context, r: &RunResult) -> Option<RunWarning> {
    let zfs = ctx.environment.zfs.as_ref()?;
    let on_zfs = zfs.absent.is_none() && zfs.platform.is_some();
    let w = ctx.workload;
    if !on_zfs || !w.mode.writes() || r.counts.writes == 0 || r.interrupted {
        return None;
    }
    let txg = zfs.txg_timeout_s.unwrap_or(limits::DEFAULT_TXG_TIMEOUT_S);
    (r.total_time_s < (limits::TXG_SYNCS * txg) as f64).then_some(RunWarning::ShorterThanTxgSyncs {
        run_s: r.total_time_s,
        txg_timeout_s: txg,
        assumed: zfs.txg_timeout_s.is_none(),
    })
}

fn not_steady(r: &RunResult) -> Option<RunWarning> {
    let n = r.intervals.len();
    let third = n / 3;
    if third == 0 {
        return None;
    }
    let mean = |xs: &[crate::result::IntervalSample],
                f: &dyn Fn(&crate::result::IntervalSample) -> f64| {
        xs.iter().map(f).sum::<f64>() / xs.len() as f64
    };
    let (middle, last) = (&r.intervals[third..2 * third], &r.intervals[n - third..]);
    let mib = |s: &crate::result::IntervalSample| s.read_mib_per_s + s.written_mib_per_s;
    let ops = |s: &crate::result::IntervalSample| s.reads_per_s + s.writes_per_s + s.fsyncs_per_s;
    let (unit, m, l) = match (mean(middle, &mib), mean(last, &mib)) {
        (m, l) if m > 0.0 => ("MiB/s", m, l),
        _ => ("ops/s", mean(middle, &ops), mean(last, &ops)),
    };
    (m > 0.0 && ((l - m) / m).abs() > limits::DRIFT).then_some(RunWarning::NotSteady {
        middle: m,
        last: l,
        unit,
        intervals: n,
    })
}

fn zero_data_compressing_fs(ctx: &Context, r: &RunResult) -> Option<RunWarning> {
    let w = ctx.workload;
    let env = ctx.environment;
    let applies = w.mode.writes()
        && w.files.data == DataPattern::Zero
        && crate::environment::fs_may_compress(env);
    applies.then(|| RunWarning::ZeroDataCompressingFs {
        fs_type: env.fs_type.clone(),
        compression: env.compression.clone(),
        written_mib_per_s: r.rates.written_mib_per_s,
    })
}

fn fsync_bursts(ctx: &Context, r: &RunResult) -> Option<RunWarning> {
    let w = ctx.workload;
    let applies =
        w.fsync_freq > 0 && w.files.file_num > 1 && w.mode.writes() && r.counts.writes > 0;
    applies.then_some(RunWarning::FsyncBursts {
        fsync_freq: w.fsync_freq,
        file_num: w.files.file_num,
        fsyncs_per_s: r.rates.fsyncs_per_s,
        writes_per_s: r.rates.writes_per_s,
    })
}

fn sequential_wraparound(ctx: &Context, r: &RunResult) -> Option<RunWarning> {
    let w = ctx.workload;
    let mode = w.mode;
    let set = set_bytes(w);
    let moved = r.counts.bytes_read + r.counts.bytes_written;
    let applies = !mode.is_random() && set > 0 && moved > set;
    applies.then_some(RunWarning::SequentialWraparound {
        moved_bytes: moved,
        set_bytes: set,
        rereads: mode == Mode::SeqRd,
    })
}

fn reads_paced_by_writes(ctx: &Context, r: &RunResult) -> Option<RunWarning> {
    let w = ctx.workload;
    if w.mode != Mode::RndRw || r.counts.reads == 0 || r.counts.writes == 0 {
        return None;
    }
    let sync_writes = w.fsync_all || w.files.extra_flags.sync || w.files.extra_flags.dsync;
    let mean = |op: LatencyKey| r.latency.get(&op).map(|l| l.mean_ms).unwrap_or(0.0);
    let read = mean(LatencyKey::Read);
    // With --file-fsync-all each write waits for its own fsync, which the
    // results time as a separate operation.
    let fsync = if w.fsync_all {
        mean(LatencyKey::Fsync)
    } else {
        0.0
    };
    let write_cost = mean(LatencyKey::Write) + fsync;
    if !sync_writes || write_cost <= 2.0 * read {
        return None;
    }
    let writes = r.counts.writes as f64 * write_cost;
    let share = writes / (writes + r.counts.reads as f64 * read).max(f64::MIN_POSITIVE);
    Some(RunWarning::ReadsPacedByWrites {
        rw_ratio: w.rw_ratio,
        with_fsync: w.fsync_all,
        write_ms: write_cost,
        read_ms: read,
        write_share: share,
        reads_per_s: r.rates.reads_per_s,
        read_mib_per_s: r.rates.read_mib_per_s,
    })
}

fn direct_io_alignment(ctx: &Context) -> Option<RunWarning> {
    let w = ctx.workload;
    // mmap mode copies to and from a mapping, so O_DIRECT's alignment rules
    // never apply there ([`mmap_ignores_direct`] says so instead).
    if !w.files.extra_flags.direct || w.io_mode == IoMode::Mmap {
        return None;
    }
    // 512 bytes is the smallest logical sector Linux supports, so a size that
    // is misaligned for it is misaligned for every device.
    let sector = ctx.logical_block_size.unwrap_or(512);
    let random = w.mode.is_random();
    let misaligned_block = !w.files.block_size.is_multiple_of(sector);
    let misaligned_file = random && !w.files.file_size.is_multiple_of(w.files.block_size);
    let misaligned_seq = !random && !w.files.file_size.is_multiple_of(w.request_size());
    (misaligned_block || misaligned_file || misaligned_seq).then_some(
        RunWarning::DirectIoMisaligned {
            sector,
            block_size: w.files.block_size,
            file_size: w.files.file_size,
            misaligned_block,
        },
    )
}

fn mmap_ignores_direct(ctx: &Context) -> Option<RunWarning> {
    let w = ctx.workload;
    (w.io_mode == IoMode::Mmap && w.files.extra_flags.direct)
        .then_some(RunWarning::MmapIgnoresDirect)
}

/// How one warning reads on the terminal.
pub fn text(w: &Warning) -> String {
    format!("WARNING: {}\n  hint: {}", w.message, w.hint)
}

/// Print a result's warnings. They belong to tankbench's report, so they
/// follow its verbosity (see [`Console::result_warning`]).
pub fn print(console: &Console, warnings: &[Warning]) {
    for w in warnings {
        console.result_warning(&text(w));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::GeneralOptions;
    use crate::result::{Counts, IntervalSample, LatencySummary, Rates, ResultKind, ToolInfo};
    use crate::sysbench::args::ParsedArgs;
    use crate::zfs_facts::{
        ArcCounters, ArcFacts, ArcSnapshot, Dataset, Platform, PoolLayout, Property, Vdev,
        VdevKind, ZfsFacts,
    };
    use std::collections::BTreeMap;

    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;

    /// A synthetic run: everything [`analyze`] reads, set by each case.
    #[derive(Clone)]
    struct Run {
        env: Environment,
        sector: Option<u64>,
        counts: Counts,
        /// Mean latency per operation, ms.
        read_ms: f64,
        write_ms: f64,
        fsync_ms: f64,
        interrupted: bool,
        seconds: f64,
        intervals: Vec<IntervalSample>,
    }

    /// The run each case changes: on ext4 with far more RAM than the default
    /// 2 GiB file set, 512-byte sectors, a few MiB moved, reads and writes
    /// equally fast, run to the end.
    fn base() -> Run {
        Run {
            env: Environment {
                mem_total_bytes: 64 * GIB,
                mem_available_bytes: 32 * GIB,
                fs_type: "ext4".into(),
                mount_options: "rw,relatime".into(),
                device: "/dev/vda1".into(),
                ..Environment::default()
            },
            sector: Some(512),
            counts: Counts {
                events: 2010,
                reads: 1000,
                writes: 1000,
                fsyncs: 10,
                bytes_read: 1000 * 16384,
                bytes_written: 1000 * 16384,
            },
            read_ms: 0.1,
            write_ms: 0.1,
            fsync_ms: 0.0,
            interrupted: false,
            seconds: 2.0,
            intervals: Vec::new(),
        }
    }

    fn workload(options: &[&str]) -> RunSpec {
        let words = ["fileio"].iter().chain(options).chain(&["run"]);
        let mut args = ParsedArgs::parse(words);
        let g = GeneralOptions::from_args(&mut args).unwrap();
        RunSpec::from_args(&args, &g).unwrap()
    }

    fn result_of(w: &RunSpec, run: &Run) -> RunResult {
        let mut latency = BTreeMap::new();
        for (op, ms) in [
            (LatencyKey::Read, run.read_ms),
            (LatencyKey::Write, run.write_ms),
            (LatencyKey::Fsync, run.fsync_ms),
        ] {
            let summary = LatencySummary {
                mean_ms: ms,
                ..LatencySummary::default()
            };
            latency.insert(op, summary);
        }
        let seconds = run.seconds;
        RunResult {
            schema_version: crate::result::SCHEMA_VERSION,
            tool: ToolInfo {
                name: "tankbench".into(),
                version: "test".into(),
            },
            kind: ResultKind::Measured,
            started_at: String::new(),
            labels: BTreeMap::new(),
            workload: w.summary("psync"),
            interrupted: run.interrupted,
            warmup_s: 0,
            total_time_s: seconds,
            counts: run.counts,
            rates: Rates::of(&run.counts, seconds),
            latency,
            threads: Vec::new(),
            intervals: run.intervals.clone(),
            environment: run.env.clone(),
            warnings: Vec::new(),
            ranks: Vec::new(),
            distributed: None,
            durability: None,
            prediction: None,
            anchor: None,
        }
    }

    fn analyze_run(options: &[&str], run: &Run) -> Vec<RunWarning> {
        let w = workload(options);
        let r = result_of(&w, run);
        let ctx = Context {
            workload: &w,
            environment: &run.env,
            logical_block_size: run.sector,
        };
        analyze(&ctx, &r)
    }

    /// A change to the base run.
    type Tweak = Box<dyn Fn(&mut Run)>;

    fn same() -> Tweak {
        Box::new(|_| {})
    }
    fn ram(total: u64, available: u64) -> Tweak {
        Box::new(move |r| (r.env.mem_total_bytes, r.env.mem_available_bytes) = (total, available))
    }
    /// The target file system: type, ZFS compression property, mount
    /// options, device.
    fn fs(
        fs_type: &'static str,
        compression: Option<&'static str>,
        options: &'static str,
        device: &'static str,
    ) -> Tweak {
        Box::new(move |r| {
            r.env.fs_type = fs_type.into();
            r.env.compression = compression.map(Into::into);
            r.env.mount_options = options.into();
            r.env.device = device.into();
        })
    }
    fn zfs(compression: Option<&'static str>) -> Tweak {
        fs("zfs", compression, "rw,xattr,noacl", "tank/data")
    }
    fn sigint() -> Tweak {
        Box::new(|r| r.interrupted = true)
    }
    fn ops(reads: u64, writes: u64) -> Tweak {
        Box::new(move |r| (r.counts.reads, r.counts.writes) = (reads, writes))
    }
    fn moved(read: u64, written: u64) -> Tweak {
        Box::new(move |r| (r.counts.bytes_read, r.counts.bytes_written) = (read, written))
    }
    /// Mean latency of read, write and fsync, ms.
    fn ms(read: f64, write: f64, fsync: f64) -> Tweak {
        Box::new(move |r| (r.read_ms, r.write_ms, r.fsync_ms) = (read, write, fsync))
    }
    fn both(a: Tweak, b: Tweak) -> Tweak {
        Box::new(move |r| {
            a(r);
            b(r);
        })
    }
    fn sector(bytes: Option<u64>) -> Tweak {
        Box::new(move |r| r.sector = bytes)
    }
    /// On kernel OpenZFS, dataset tank/bench with sync=standard and
    /// logbias=latency, a pool without a log device, a 5 s txg timeout; then
    /// `change`.
    fn on_zfs(change: impl Fn(&mut ZfsFacts) + 'static) -> Tweak {
        Box::new(move |r| {
            r.env.fs_type = "zfs".into();
            r.env.device = "tank/bench".into();
            let property = |v: &str| Property {
                value: v.into(),
                source: "default".into(),
            };
            let mut facts = ZfsFacts {
                platform: Some(Platform::OpenzfsLinux),
                dataset: Some(Dataset {
                    name: "tank/bench".into(),
                    properties: [
                        ("sync".to_string(), property("standard")),
                        ("logbias".to_string(), property("latency")),
                    ]
                    .into(),
                }),
                pool: Some(PoolLayout {
                    name: "tank".into(),
                    ..PoolLayout::default()
                }),
                txg_timeout_s: Some(5),
                ..ZfsFacts::default()
            };
            change(&mut facts);
            r.env.zfs = Some(facts);
        })
    }
    fn zfs_property(name: &'static str, value: &'static str) -> Tweak {
        on_zfs(move |z| {
            let d = z.dataset.as_mut().unwrap();
            d.properties.get_mut(name).unwrap().value = value.into();
        })
    }
    fn with_log_device(z: &mut ZfsFacts) {
        z.pool.as_mut().unwrap().logs.push(Vdev {
            name: "/dev/nvme0n1".into(),
            kind: VdevKind::Device,
            parity: None,
            state: "ONLINE".into(),
            children: Vec::new(),
        });
    }
    /// ARC demand data hits and misses over the run.
    fn arc(hits: u64, misses: u64) -> Tweak {
        on_zfs(move |z| {
            let after = ArcSnapshot {
                counters: ArcCounters {
                    hits: hits + 7,
                    misses: misses + 3,
                    demand_data_hits: hits,
                    demand_data_misses: misses,
                    ..ArcCounters::default()
                },
                ..ArcSnapshot::default()
            };
            z.arc = Some(ArcFacts::over("test", ArcSnapshot::default(), after));
        })
    }
    fn txg(timeout: Option<u64>, seconds: f64) -> Tweak {
        both(
            on_zfs(move |z| z.txg_timeout_s = timeout),
            Box::new(move |r| r.seconds = seconds),
        )
    }
    fn fsyncs(n: u64) -> Tweak {
        Box::new(move |r| r.counts.fsyncs = n)
    }
    /// Nine intervals: 50 MiB/s, then `middle`, then `last` (three each).
    fn intervals(middle: f64, last: f64) -> Tweak {
        Box::new(move |r| {
            r.intervals = [50.0, middle, last]
                .iter()
                .flat_map(|&mib| std::iter::repeat_n(mib, 3))
                .enumerate()
                .map(|(i, mib)| IntervalSample {
                    t_s: (i + 1) as f64,
                    written_mib_per_s: mib,
                    writes_per_s: mib * 64.0,
                    ..IntervalSample::default()
                })
                .collect()
        })
    }

    struct Case {
        code: &'static str,
        fires: bool,
        what: &'static str,
        /// The test mode, then more options.
        options: &'static str,
        tweak: Tweak,
    }

    fn yes(code: &'static str, what: &'static str, options: &'static str, tweak: Tweak) -> Case {
        Case {
            code,
            fires: true,
            what,
            options,
            tweak,
        }
    }
    fn no(code: &'static str, what: &'static str, options: &'static str, tweak: Tweak) -> Case {
        Case {
            fires: false,
            ..yes(code, what, options, tweak)
        }
    }

    // A table, one row per case: splitting it would only scatter the cases.
    #[allow(clippy::too_many_lines)]
    fn cases() -> Vec<Case> {
        use codes::*;
        vec![
            yes(INTERRUPTED, "SIGINT", "rndrd", sigint()),
            no(INTERRUPTED, "a full run", "rndrd", same()),
            // The default 2 GiB file set against max(available, total / 2).
            yes(READS_FROM_CACHE, "set = RAM / 2", "rndrd", ram(4 * GIB, 0)),
            no(READS_FROM_CACHE, "set > RAM / 2", "rndrd", ram(4 * GIB - 2, 0)),
            yes(READS_FROM_CACHE, "set = available", "rndrd", ram(3 * GIB, 2 * GIB)),
            no(READS_FROM_CACHE, "set > available", "rndrd", ram(3 * GIB, 2 * GIB - 1)),
            no(READS_FROM_CACHE, "RAM unknown", "rndrd", ram(0, 0)),
            yes(READS_FROM_CACHE, "seqrd", "seqrd", same()),
            yes(READS_FROM_CACHE, "rndrw", "rndrw", same()),
            no(READS_FROM_CACHE, "O_DIRECT", "rndrd --file-extra-flags=direct", same()),
            no(READS_FROM_CACHE, "a write mode", "rndwr", same()),
            no(READS_FROM_CACHE, "no read done", "rndrd", ops(0, 1000)),
            yes(ZERO_DATA_COMPRESSING_FS, "ZFS lz4", "rndwr", zfs(Some("lz4"))),
            yes(ZERO_DATA_COMPRESSING_FS, "ZFS, property unread", "seqwr", zfs(None)),
            no(ZERO_DATA_COMPRESSING_FS, "ZFS compression=off", "rndwr", zfs(Some("off"))),
            no(ZERO_DATA_COMPRESSING_FS, "random data", "rndwr --file-data=random", zfs(None)),
            no(ZERO_DATA_COMPRESSING_FS, "reads only", "rndrd", zfs(Some("lz4"))),
            yes(
                ZERO_DATA_COMPRESSING_FS,
                "btrfs compress",
                "rndrw",
                fs("btrfs", None, "rw,compress=zstd:3", "/dev/sdb"),
            ),
            no(
                ZERO_DATA_COMPRESSING_FS,
                "btrfs without compress",
                "rndrw",
                fs("btrfs", None, "rw,relatime", "/dev/sdb"),
            ),
            yes(
                ZERO_DATA_COMPRESSING_FS,
                "a zfs-fuse dataset",
                "seqrewr",
                fs("fuse.zfs-fuse", None, "rw", "tank/data"),
            ),
            no(
                ZERO_DATA_COMPRESSING_FS,
                "another FUSE file system",
                "seqrewr",
                fs("fuse.sshfs", None, "rw", "/dev/sdb1"),
            ),
            no(ZERO_DATA_COMPRESSING_FS, "ext4", "rndwr", same()),
            // Defaults: 128 files, an fsync every 100 requests.
            yes(FSYNC_BURSTS, "defaults", "rndwr", same()),
            yes(FSYNC_BURSTS, "two files", "rndwr --file-num=2", same()),
            no(FSYNC_BURSTS, "one file", "rndwr --file-num=1", same()),
            yes(FSYNC_BURSTS, "every request", "seqwr --file-fsync-freq=1", same()),
            no(FSYNC_BURSTS, "no periodic fsync", "rndwr --file-fsync-freq=0", same()),
            no(FSYNC_BURSTS, "fsync-all", "rndwr --file-fsync-all", same()),
            no(FSYNC_BURSTS, "no write done", "rndwr", ops(1000, 0)),
            no(FSYNC_BURSTS, "a read mode", "rndrd", same()),
            // A 16 MiB file set.
            no(
                SEQUENTIAL_WRAPAROUND,
                "read exactly once",
                "seqrd --file-total-size=16M --file-num=4",
                moved(16 * MIB, 0),
            ),
            yes(
                SEQUENTIAL_WRAPAROUND,
                "one byte more",
                "seqrd --file-total-size=16M --file-num=4",
                moved(16 * MIB + 1, 0),
            ),
            yes(
                SEQUENTIAL_WRAPAROUND,
                "written twice",
                "seqwr --file-total-size=16M --file-num=4",
                moved(0, 32 * MIB),
            ),
            no(
                SEQUENTIAL_WRAPAROUND,
                "random reads",
                "rndrd --file-total-size=16M --file-num=4",
                moved(64 * MIB, 0),
            ),
            // Reads take 1 ms; writes against twice that.
            no(
                READS_PACED_BY_WRITES,
                "write + fsync = 2 x read",
                "rndrw --file-fsync-all",
                ms(1.0, 1.5, 0.5),
            ),
            yes(
                READS_PACED_BY_WRITES,
                "write + fsync > 2 x read",
                "rndrw --file-fsync-all",
                ms(1.0, 1.5, 0.51),
            ),
            yes(
                READS_PACED_BY_WRITES,
                "O_DSYNC",
                "rndrw --file-extra-flags=dsync",
                ms(1.0, 2.01, 0.0),
            ),
            yes(
                READS_PACED_BY_WRITES,
                "O_SYNC",
                "rndrw --file-extra-flags=sync",
                ms(1.0, 3.0, 0.0),
            ),
            // Without fsync-all, the periodic fsyncs are not part of a write.
            no(
                READS_PACED_BY_WRITES,
                "O_DSYNC, slow periodic fsyncs",
                "rndrw --file-extra-flags=dsync",
                ms(1.0, 1.5, 5.0),
            ),
            no(READS_PACED_BY_WRITES, "writes not synchronous", "rndrw", ms(1.0, 10.0, 0.0)),
            no(READS_PACED_BY_WRITES, "not rndrw", "rndwr --file-fsync-all", ms(1.0, 10.0, 0.0)),
            no(
                READS_PACED_BY_WRITES,
                "no read done",
                "rndrw --file-fsync-all",
                both(ms(1.0, 10.0, 0.0), ops(0, 1000)),
            ),
            no(
                READS_PACED_BY_WRITES,
                "no write done",
                "rndrw --file-fsync-all",
                both(ms(1.0, 10.0, 0.0), ops(1000, 0)),
            ),
            // 512-byte sectors, 16 KiB blocks, 16 MiB files unless said otherwise;
            // an unknown sector size is taken as 512 bytes, the smallest there is.
            no(DIRECT_IO_ALIGNMENT, "aligned", "rndrd --file-extra-flags=direct", same()),
            no(DIRECT_IO_ALIGNMENT, "no O_DIRECT", "rndrd --file-block-size=1000", same()),
            yes(
                DIRECT_IO_ALIGNMENT,
                "1000-byte blocks",
                "rndrd --file-extra-flags=direct --file-block-size=1000",
                same(),
            ),
            yes(
                DIRECT_IO_ALIGNMENT,
                "1000-byte blocks, whole in the file, sector size unknown",
                "rndrd --file-extra-flags=direct --file-block-size=1000 --file-total-size=1000000 --file-num=1",
                sector(None),
            ),
            no(
                DIRECT_IO_ALIGNMENT,
                "2 KiB blocks, sector size unknown",
                "rndrd --file-extra-flags=direct --file-block-size=2048",
                sector(None),
            ),
            yes(
                DIRECT_IO_ALIGNMENT,
                "2 KiB blocks, 4 KiB sectors",
                "rndrd --file-extra-flags=direct --file-block-size=2048",
                sector(Some(4096)),
            ),
            no(
                DIRECT_IO_ALIGNMENT,
                "4 KiB blocks, 4 KiB sectors",
                "rndrd --file-extra-flags=direct --file-block-size=4096",
                sector(Some(4096)),
            ),
            // 4097 KiB: 1024.25 blocks of 4 KiB.
            yes(
                DIRECT_IO_ALIGNMENT,
                "random, a file of partial blocks",
                "rndrd --file-extra-flags=direct --file-block-size=4096 --file-total-size=4097K --file-num=1",
                same(),
            ),
            // 4104 KiB: 1026 blocks of 4 KiB, 256.5 requests of 4 merged blocks.
            no(
                DIRECT_IO_ALIGNMENT,
                "random, a file of whole blocks",
                "rndrd --file-extra-flags=direct --file-block-size=4096 --file-merged-requests=4 --file-total-size=4104K --file-num=1",
                same(),
            ),
            yes(
                DIRECT_IO_ALIGNMENT,
                "sequential, a file of partial requests",
                "seqrd --file-extra-flags=direct --file-block-size=4096 --file-merged-requests=4 --file-total-size=4104K --file-num=1",
                same(),
            ),
            no(
                DIRECT_IO_ALIGNMENT,
                "sequential, a file of whole requests",
                "seqrd --file-extra-flags=direct --file-block-size=4096 --file-merged-requests=4 --file-total-size=4M --file-num=1",
                same(),
            ),
            yes(
                DIRECT_IO_ALIGNMENT,
                "mmap with O_DIRECT",
                "rndrd --file-io-mode=mmap --file-extra-flags=direct",
                same(),
            ),
            no(DIRECT_IO_ALIGNMENT, "mmap", "rndrd --file-io-mode=mmap", same()),
            // ARC demand data reads over the run.
            yes(READS_FROM_ARC, "hit ratio 0.9", "rndrd", arc(900, 100)),
            no(READS_FROM_ARC, "hit ratio 0.8999", "rndrd", arc(8999, 1001)),
            yes(READS_FROM_ARC, "rndrw", "rndrw", arc(1000, 0)),
            no(READS_FROM_ARC, "a write mode", "rndwr", arc(1000, 0)),
            no(READS_FROM_ARC, "ARC not measured", "rndrd", on_zfs(|_| {})),
            no(READS_FROM_ARC, "no read done", "rndrd", both(arc(1000, 0), ops(0, 1000))),
            // The measured ARC replaces the guess from sizes.
            no(READS_FROM_CACHE, "ARC measured, 50% hits", "rndrd", arc(500, 500)),
            yes(READS_FROM_CACHE, "ZFS, ARC not measured", "rndrd", on_zfs(|_| {})),
            yes(SYNC_DISABLED, "sync=disabled, fsyncs", "rndwr", zfs_property("sync", "disabled")),
            no(SYNC_DISABLED, "sync=standard", "rndwr", zfs_property("sync", "standard")),
            no(SYNC_DISABLED, "sync=always", "rndwr", zfs_property("sync", "always")),
            no(
                SYNC_DISABLED,
                "sync=disabled, no fsync",
                "rndwr --file-fsync-freq=0 --file-fsync-end=off",
                both(zfs_property("sync", "disabled"), fsyncs(0)),
            ),
            yes(
                SYNC_DISABLED,
                "sync=disabled, O_DSYNC",
                "rndwr --file-fsync-freq=0 --file-extra-flags=dsync",
                both(zfs_property("sync", "disabled"), fsyncs(0)),
            ),
            no(SYNC_DISABLED, "a read mode", "rndrd", zfs_property("sync", "disabled")),
            no(SYNC_DISABLED, "not on ZFS", "rndwr", same()),
            yes(
                LOGBIAS_THROUGHPUT,
                "throughput, fsync-all",
                "rndwr --file-fsync-all",
                zfs_property("logbias", "throughput"),
            ),
            no(
                LOGBIAS_THROUGHPUT,
                "latency, fsync-all",
                "rndwr --file-fsync-all",
                zfs_property("logbias", "latency"),
            ),
            no(
                LOGBIAS_THROUGHPUT,
                "throughput, no sync write",
                "rndwr --file-fsync-freq=0 --file-fsync-end=off",
                both(zfs_property("logbias", "throughput"), fsyncs(0)),
            ),
            no(
                LOGBIAS_THROUGHPUT,
                "throughput with sync=disabled",
                "rndwr --file-fsync-all",
                both(
                    zfs_property("logbias", "throughput"),
                    Box::new(|r: &mut Run| {
                        let z = r.env.zfs.as_mut().unwrap();
                        let d = z.dataset.as_mut().unwrap();
                        d.properties.get_mut("sync").unwrap().value = "disabled".into();
                    }),
                ),
            ),
            // 3 x zfs_txg_timeout.
            yes(SHORTER_THAN_TXG_SYNCS, "14.99 s, 5 s txg", "rndwr", txg(Some(5), 14.99)),
            no(SHORTER_THAN_TXG_SYNCS, "15 s, 5 s txg", "rndwr", txg(Some(5), 15.0)),
            yes(SHORTER_THAN_TXG_SYNCS, "2.99 s, 1 s txg", "seqwr", txg(Some(1), 2.99)),
            no(SHORTER_THAN_TXG_SYNCS, "3 s, 1 s txg", "seqwr", txg(Some(1), 3.0)),
            yes(SHORTER_THAN_TXG_SYNCS, "14.99 s, txg unread", "rndwr", txg(None, 14.99)),
            no(SHORTER_THAN_TXG_SYNCS, "15 s, txg unread", "rndwr", txg(None, 15.0)),
            no(SHORTER_THAN_TXG_SYNCS, "a read mode", "rndrd", txg(Some(5), 2.0)),
            no(SHORTER_THAN_TXG_SYNCS, "not on ZFS", "rndwr", same()),
            no(
                SHORTER_THAN_TXG_SYNCS,
                "interrupted",
                "rndwr",
                both(txg(Some(5), 2.0), sigint()),
            ),
            // The last third against the middle third, 10 %.
            no(NOT_STEADY, "+10%", "seqwr", intervals(100.0, 110.0)),
            yes(NOT_STEADY, "+10.01%", "seqwr", intervals(100.0, 110.01)),
            no(NOT_STEADY, "-10%", "seqwr", intervals(100.0, 90.0)),
            yes(NOT_STEADY, "-10.01%", "seqwr", intervals(100.0, 89.99)),
            no(NOT_STEADY, "no intervals", "seqwr", same()),
            no(
                NOT_STEADY,
                "two intervals",
                "seqwr",
                both(
                    intervals(100.0, 200.0),
                    Box::new(|r: &mut Run| r.intervals.truncate(2)),
                ),
            ),
        ]
    }

    fn options_of(case: &Case) -> Vec<String> {
        let mut words = case.options.split_whitespace();
        let mode = words.next().expect("a test mode");
        std::iter::once(format!("--file-test-mode={mode}"))
            .chain(words.map(String::from))
            .collect()
    }

    #[test]
    fn each_warning_fires_exactly_when_its_condition_holds() {
        let mut wrong = Vec::new();
        for case in cases() {
            let mut run = base();
            (case.tweak)(&mut run);
            let options = options_of(&case);
            let options: Vec<&str> = options.iter().map(String::as_str).collect();
            let found = analyze_run(&options, &run);
            if found.iter().any(|w| w.code() == case.code) != case.fires {
                wrong.push(format!(
                    "{} / {} ({}): expected {}, got {:?}",
                    case.code,
                    case.what,
                    case.options,
                    if case.fires { "it" } else { "not it" },
                    found.iter().map(RunWarning::code).collect::<Vec<_>>()
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn every_code_is_shown_firing_and_not_firing() {
        let cases = cases();
        for code in [
            codes::INTERRUPTED,
            codes::READS_FROM_CACHE,
            codes::ZERO_DATA_COMPRESSING_FS,
            codes::FSYNC_BURSTS,
            codes::SEQUENTIAL_WRAPAROUND,
            codes::READS_PACED_BY_WRITES,
            codes::DIRECT_IO_ALIGNMENT,
            codes::READS_FROM_ARC,
            codes::SYNC_DISABLED,
            codes::LOGBIAS_THROUGHPUT,
            codes::SHORTER_THAN_TXG_SYNCS,
            codes::NOT_STEADY,
        ] {
            for fires in [true, false] {
                assert!(
                    cases.iter().any(|c| c.code == code && c.fires == fires),
                    "{code}: no case where it fires = {fires}"
                );
            }
        }
    }

    #[test]
    fn the_base_run_raises_only_the_read_cache_warning() {
        // So every case above changes one thing against a quiet background.
        let found = analyze_run(&["--file-test-mode=rndrd"], &base());
        let codes: Vec<&str> = found.iter().map(RunWarning::code).collect();
        assert_eq!(codes, [codes::READS_FROM_CACHE]);
    }

    #[test]
    fn mmap_with_o_direct_says_so_instead_of_talking_about_alignment() {
        // The mapping is copied to and from, so O_DIRECT's sector rules are moot.
        let found = analyze_run(
            &[
                "--file-test-mode=rndrd",
                "--file-extra-flags=direct",
                "--file-io-mode=mmap",
                "--file-block-size=1000",
            ],
            &base(),
        );
        assert_eq!(found, [RunWarning::MmapIgnoresDirect]);
    }

    #[test]
    fn messages_quote_the_runs_figures() {
        let mut run = base();
        run.env.fs_type = "zfs".into();
        run.env.compression = Some("lz4".into());
        run.env.mem_total_bytes = 4 * GIB;
        run.env.mem_available_bytes = 3 * GIB;
        run.interrupted = true;
        (run.read_ms, run.write_ms, run.fsync_ms) = (1.0, 2.0, 1.0);
        let found = analyze_run(
            &[
                "--file-test-mode=rndrw",
                "--file-fsync-all",
                "--file-rw-ratio=2",
            ],
            &run,
        );
        let text = |code: &str| {
            found
                .iter()
                .find(|w| w.code() == code)
                .unwrap_or_else(|| panic!("{code} in {found:?}"))
                .to_string()
        };
        assert_eq!(
            text(codes::INTERRUPTED),
            "The run was interrupted after 2.00 s; the figures cover only that part."
        );
        // 1000 reads of 16 KiB in 2 s.
        assert!(text(codes::READS_FROM_CACHE)
            .starts_with("The file set (2.00 GiB) fits in RAM (4.00 GiB total, 3.00 GiB available): reads (7.81 MiB/s)"));
        assert!(text(codes::ZERO_DATA_COMPRESSING_FS)
            .contains("(zfs, compression=lz4) can compress them away: write figures (7.81 MiB/s)"));
        // Equal counts, writes 3 ms with their fsync against 1 ms reads: 75%.
        assert!(text(codes::READS_PACED_BY_WRITES).contains(
            "fixed ratio of 2.00 per completed write, so read throughput follows write latency: each write with its fsync took 3.000 ms on average against 1.000 ms per read, and writes took 75% of the threads' time. Reads ran at 500.00/s (7.81 MiB/s)"
        ));

        let wrap = analyze_run(
            &[
                "--file-test-mode=seqwr",
                "--file-total-size=16M",
                "--file-num=4",
            ],
            &Run {
                counts: Counts {
                    bytes_written: 40 * MIB,
                    ..base().counts
                },
                ..base()
            },
        );
        let wrap = wrap
            .iter()
            .find(|w| w.code() == codes::SEQUENTIAL_WRAPAROUND)
            .unwrap();
        // 40 MiB of writes plus the base run's 15.6 MiB of reads.
        assert!(wrap.to_string().starts_with(
            "The sequential test went over the file set 3.5 times (0.05 GiB moved, 0.02 GiB file set): later passes overwrite"
        ));
    }

    #[test]
    fn zfs_warnings_quote_the_facts() {
        let text = |options: &[&str], tweak: Tweak, code: &str| {
            let mut run = base();
            tweak(&mut run);
            let found = analyze_run(options, &run);
            found
                .iter()
                .find(|w| w.code() == code)
                .unwrap_or_else(|| panic!("{code} in {found:?}"))
                .to_string()
        };
        assert_eq!(
            text(&["--file-test-mode=rndrd"], arc(950, 50), codes::READS_FROM_ARC),
            "Reads were served from the ARC: 95.0% of 1000 ARC reads during the run were hits, so the read figures (7.81 MiB/s) measure RAM, not the pool."
        );
        assert!(text(
            &["--file-test-mode=rndwr"],
            zfs_property("sync", "disabled"),
            codes::SYNC_DISABLED
        )
        .starts_with("fsync does nothing on this dataset: tank/bench has sync=disabled, so the run's synchronous writes (5.00 fsyncs/s)"));
        let logbias = |tweak| {
            text(
                &["--file-test-mode=rndwr", "--file-fsync-all"],
                tweak,
                codes::LOGBIAS_THROUGHPUT,
            )
        };
        assert!(logbias(both(
            zfs_property("logbias", "throughput"),
            Box::new(|r: &mut Run| with_log_device(r.env.zfs.as_mut().unwrap()))
        ))
        .contains("instead of the ZIL, bypassing the pool's log device,"));
        assert!(logbias(zfs_property("logbias", "throughput")).contains("ZIL fast path,"));
        assert!(text(
            &["--file-test-mode=rndwr"],
            txg(None, 4.0),
            codes::SHORTER_THAN_TXG_SYNCS
        )
        .starts_with(
            "The write run (4.00 s) is shorter than a few txg syncs (3 x zfs_txg_timeout = 15 s, taking the 5 s default)"
        ));
        assert!(text(
            &["--file-test-mode=seqwr"],
            intervals(100.0, 80.0),
            codes::NOT_STEADY
        )
        .starts_with("Throughput was not steady: the last third of the 9 intervals averaged 80.00 MiB/s against 100.00 MiB/s in the middle third (-20.0%)"));
    }

    #[test]
    fn a_warning_serializes_with_its_code_message_and_hint() {
        let w = RunWarning::FsyncBursts {
            fsync_freq: 100,
            file_num: 4,
            fsyncs_per_s: 40.0,
            writes_per_s: 1000.0,
        };
        let s = Warning::from(&w);
        assert_eq!(s.code, "fsync_bursts");
        assert_eq!(
            s.message,
            "Every 100 requests, one fsync per file is issued (4 files), so 40.00 fsyncs/s accompany 1000.00 writes/s: the figures measure fsync bursts more than writes."
        );
        assert_eq!(s.hint, w.hint());
        assert_eq!(
            text(&s),
            format!("WARNING: {}\n  hint: {}", s.message, s.hint)
        );
    }
}

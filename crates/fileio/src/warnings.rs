//! Warnings that explain a result: conditions under which the figures do not
//! mean what a reader would assume, each with this run's numbers and a hint
//! (hyperfine's warnings are the model). Each check is a pure function of the
//! workload, environment and result, so tests can show it firing and not firing.

use crate::options::{IoMode, Mode, Workload};
use crate::result::{Environment, LatencyKey, RunResult, Warning};

/// Stable warning codes (the `code` field of [`Warning`]).
pub mod codes {
    pub const READS_FROM_CACHE: &str = "reads_from_page_cache";
    pub const ZERO_DATA_COMPRESSING_FS: &str = "zero_data_compressing_fs";
    pub const FSYNC_BURSTS: &str = "fsync_bursts";
    pub const SEQUENTIAL_WRAPAROUND: &str = "sequential_wraparound";
    pub const READS_PACED_BY_WRITES: &str = "reads_paced_by_writes";
    pub const DIRECT_IO_ALIGNMENT: &str = "direct_io_alignment";
    pub const INTERRUPTED: &str = "interrupted";
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

fn warning(code: &str, message: String, hint: &str) -> Warning {
    Warning {
        code: code.to_string(),
        message,
        hint: hint.to_string(),
    }
}

/// What the analysis needs besides the result.
pub struct Context<'a> {
    pub workload: &'a Workload,
    pub environment: &'a Environment,
    /// Logical sector size of the device, when known.
    pub logical_block_size: Option<u64>,
}

/// Every warning that applies to this run.
pub fn analyze(ctx: &Context, r: &RunResult) -> Vec<Warning> {
    let mut out = Vec::new();
    let w = ctx.workload;
    let env = ctx.environment;
    let mode = w.mode();
    let set_bytes = w.file_num * w.file_size;

    if r.interrupted {
        out.push(warning(
            codes::INTERRUPTED,
            format!(
                "The run was interrupted after {:.2} s; the figures cover only that part.",
                r.total_time_s
            ),
            "Let the run finish for figures comparable with full runs.",
        ));
    }

    let reads = matches!(mode, Mode::SeqRd | Mode::RndRd | Mode::RndRw) && r.counts.reads > 0;
    if reads && !w.extra_flags.direct && env.mem_total_bytes > 0 {
        // Reads can be served from memory when the whole file set fits in what
        // the kernel can cache (page cache, or the ZFS ARC, which also lives in RAM).
        let cacheable = env.mem_available_bytes.max(env.mem_total_bytes / 2);
        if set_bytes <= cacheable {
            out.push(warning(
                codes::READS_FROM_CACHE,
                format!(
                    "The file set ({}) fits in RAM ({} total, {} available): reads ({:.2} MiB/s) were most likely served from memory (page cache or ZFS ARC), not from the storage.",
                    gib(set_bytes),
                    gib(env.mem_total_bytes),
                    gib(env.mem_available_bytes),
                    r.rates.read_mib_per_s
                ),
                "To measure the storage, make --file-total-size at least twice the RAM, or use --file-extra-flags=direct, or --drop-caches before a read test.",
            ));
        }
    }

    if mode.writes()
        && w.data == crate::options::DataPattern::Zero
        && crate::environment::fs_may_compress(env)
    {
        out.push(warning(
            codes::ZERO_DATA_COMPRESSING_FS,
            format!(
                "Written blocks are all zeros and the target file system ({}{}) can compress them away: write figures ({:.2} MiB/s) may be far higher than real data allows.",
                env.fs_type,
                env.compression.as_deref().map(|c| format!(", compression={c}")).unwrap_or_default(),
                r.rates.written_mib_per_s
            ),
            "Use --file-data=random for incompressible data (sysbench always writes zeros).",
        ));
    }

    if w.fsync_freq > 0 && w.file_num > 1 && mode.writes() && r.counts.writes > 0 {
        out.push(warning(
            codes::FSYNC_BURSTS,
            format!(
                "Every {} requests, one fsync per file is issued ({} files), so {:.2} fsyncs/s accompany {:.2} writes/s: the figures measure fsync bursts more than writes.",
                w.fsync_freq, w.file_num, r.rates.fsyncs_per_s, r.rates.writes_per_s
            ),
            "Use --file-fsync-freq=0 for raw write throughput, --file-fsync-all for sync-write latency, or --file-num=1 to avoid bursts across files.",
        ));
    }

    if !mode.is_random() && set_bytes > 0 {
        let moved = r.counts.bytes_read + r.counts.bytes_written;
        if moved > set_bytes {
            out.push(warning(
                codes::SEQUENTIAL_WRAPAROUND,
                format!(
                    "The sequential test went over the file set {:.1} times ({} moved, {} file set): later passes {} data that may still be in cache.",
                    moved as f64 / set_bytes as f64,
                    gib(moved),
                    gib(set_bytes),
                    if mode == Mode::SeqRd { "re-read" } else { "overwrite" }
                ),
                "Make --file-total-size larger than what the run moves (about throughput x --time) so each block is touched once.",
            ));
        }
    }

    if mode == Mode::RndRw && r.counts.reads > 0 && r.counts.writes > 0 {
        let sync_writes = w.fsync_all || w.extra_flags.sync || w.extra_flags.dsync;
        let read = r.latency.get(&LatencyKey::Read).map_or(0.0, |l| l.mean_ms);
        let write = r.latency.get(&LatencyKey::Write).map_or(0.0, |l| l.mean_ms);
        let fsync = if w.fsync_all {
            r.latency.get(&LatencyKey::Fsync).map_or(0.0, |l| l.mean_ms)
        } else {
            0.0
        };
        let write_cost = write + fsync;
        if sync_writes && write_cost > 2.0 * read {
            let share = r.counts.writes as f64 * write_cost
                / (r.counts.writes as f64 * write_cost + r.counts.reads as f64 * read)
                    .max(f64::MIN_POSITIVE);
            out.push(warning(
                codes::READS_PACED_BY_WRITES,
                format!(
                    "In rndrw, reads are issued at a fixed ratio of {:.2} per completed write, so read throughput follows write latency: each write{} took {:.3} ms on average against {:.3} ms per read, and writes took {:.0}% of the threads' time. Reads ran at {:.2}/s ({:.2} MiB/s) although they may come from cache; a faster log device or pool raises them too.",
                    w.rw_ratio,
                    if w.fsync_all { " with its fsync" } else { "" },
                    write_cost,
                    read,
                    share * 100.0,
                    r.rates.reads_per_s,
                    r.rates.read_mib_per_s
                ),
                "Compare layouts by write latency (or run rndrd and rndwr separately) rather than by rndrw read MiB/s.",
            ));
        }
    }

    if w.extra_flags.direct {
        let sector = ctx.logical_block_size.unwrap_or(512);
        let misaligned_block = !w.block_size.is_multiple_of(sector);
        let misaligned_file = mode.is_random() && !w.file_size.is_multiple_of(w.block_size);
        let misaligned_seq = !mode.is_random() && !w.file_size.is_multiple_of(w.request_size());
        if misaligned_block || misaligned_file || misaligned_seq {
            out.push(warning(
                codes::DIRECT_IO_ALIGNMENT,
                format!(
                    "O_DIRECT needs offsets and sizes in multiples of the device's {sector}-byte sectors: block size {} and file size {} leave {}.",
                    w.block_size,
                    w.file_size,
                    if misaligned_block { "misaligned blocks" } else { "a short, misaligned last block in each file" }
                ),
                "Use a block size that is a multiple of the sector size (4K is safe) and a --file-total-size that is a multiple of --file-num x block size.",
            ));
        }
    }
    if w.io_mode == IoMode::Mmap && w.extra_flags.direct {
        out.push(warning(
            codes::DIRECT_IO_ALIGNMENT,
            "mmap mode ignores O_DIRECT: reads and writes go through the page cache.".to_string(),
            "Use --file-io-mode=sync or async with --file-extra-flags=direct.",
        ));
    }
    out
}

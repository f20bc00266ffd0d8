//! `RunResult`: the one result type that measured runs, the lab and the simulator
//! all produce, so a predicted and a measured cell compare field by field.
//! Serialized as JSON; `schema_version` changes whenever a field changes meaning.
//! The schema is documented in `docs/json.md`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped on any incompatible change of the JSON layout.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    pub schema_version: u32,
    /// "tankbench" and its version.
    pub tool: ToolInfo,
    /// Whether the figures were measured on real storage or predicted by a model.
    pub kind: ResultKind,
    /// UTC start time, RFC 3339 (`2026-11-30T23:33:03Z`).
    pub started_at: String,
    /// Free-form labels (`layout=2xraidz2`, `slog=yes`, `link=10G`, ...), used by
    /// the result store and reports to group runs.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    pub workload: WorkloadSummary,
    /// True when the run was stopped early (SIGINT); the figures cover what ran.
    pub interrupted: bool,
    /// Wall time from the start barrier to the end of the last thread, seconds.
    pub total_time_s: f64,
    pub counts: Counts,
    pub rates: Rates,
    /// Latency per operation: keys are `event` (what sysbench reports), `read`,
    /// `write`, `fsync`; with `--rate`, also `event_response` (including queueing).
    pub latency: BTreeMap<String, LatencySummary>,
    /// Per worker thread (sysbench's "Threads fairness").
    pub threads: Vec<ThreadSummary>,
    /// `--report-interval` samples, in order.
    #[serde(default)]
    pub intervals: Vec<IntervalSample>,
    pub environment: Environment,
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// Results of the ranks of a distributed (MPI) job, each a full `RunResult`;
    /// empty for a single process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RunResult>,
    /// Where this result sits in a distributed job (the job's merged result, or
    /// one rank's); absent for a single process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributed: Option<Distributed>,
}

/// Timing and layout of a distributed (MPI) job. Times are seconds from the
/// job's start barrier, each measured on its own rank's monotonic clock (so
/// hosts' wall clocks need not agree); the job starts with its earliest rank.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Distributed {
    /// Number of ranks (processes) in the job.
    pub size: u32,
    /// This rank's number; absent on the job's merged result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// `per_rank` (each rank its own `rank-N` subdirectory) or `shared` (the
    /// ranks split one file set).
    pub file_layout: String,
    /// Whether every rank stopped as soon as the first one finished.
    pub stonewall: bool,
    /// Clock start, seconds after the job's start (the job: earliest rank, 0).
    pub start_s: f64,
    /// End of the last thread, seconds after the job's start (the job: latest rank).
    pub end_s: f64,
    /// Job only: when the first and the last rank finished, seconds after its start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_done_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_done_s: Option<f64>,
    /// Wall clock (CLOCK_REALTIME) when the rank left the start barrier, ns since
    /// the Unix epoch; on the job, the earliest rank's. A cross-check only.
    pub barrier_unix_ns: u64,
    /// Job only: spread (max - min) of the ranks' `barrier_unix_ns`, seconds:
    /// how far the hosts' wall clocks disagree, plus the barrier's exit skew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_spread_s: Option<f64>,
    /// Rank only: the test files it used, as (path, size in bytes) when it
    /// reached the start barrier.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test_files: Vec<(String, u64)>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ResultKind {
    Measured,
    Predicted,
}

/// The workload as run, after validation and derivation (§2 of the sysbench spec).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkloadSummary {
    /// seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw.
    pub mode: String,
    /// sync, async, mmap.
    pub io_mode: String,
    /// Engine that executed the requests (psync, io_uring, mmap, null, ...).
    pub engine: String,
    pub threads: u32,
    pub file_num: u64,
    pub file_size: u64,
    pub total_size: u64,
    pub block_size: u64,
    /// Bytes per sequential request (block size times merged requests).
    pub request_size: u64,
    pub rw_ratio: f64,
    pub fsync_freq: u64,
    pub fsync_all: bool,
    pub fsync_end: bool,
    /// fsync or fdatasync.
    pub fsync_mode: String,
    /// sync, dsync, direct (open flags).
    pub extra_flags: Vec<String>,
    /// 0 = unlimited.
    pub events_limit: u64,
    /// 0 = unlimited.
    pub time_limit_s: u64,
    /// Target events per second for open-loop runs; 0 = closed loop.
    pub rate: u64,
    /// Requests in flight per thread (async mode); 1 otherwise.
    pub queue_depth: u32,
    /// zero or random: what the write buffers hold.
    pub data: String,
    /// Directory the test files live in.
    pub directory: String,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Counts {
    /// Events as sysbench counts them: reads, writes and periodic fsync requests.
    pub events: u64,
    pub reads: u64,
    pub writes: u64,
    /// All fsyncs: periodic, after each write, and at the end of each thread.
    pub fsyncs: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

impl Counts {
    /// Add another run's counts (threads, ranks).
    pub fn add(&mut self, o: &Counts) {
        self.events += o.events;
        self.reads += o.reads;
        self.writes += o.writes;
        self.fsyncs += o.fsyncs;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
    }

    /// What happened between an earlier snapshot `o` and this one.
    pub fn minus(&self, o: &Counts) -> Counts {
        Counts {
            events: self.events - o.events,
            reads: self.reads - o.reads,
            writes: self.writes - o.writes,
            fsyncs: self.fsyncs - o.fsyncs,
            bytes_read: self.bytes_read - o.bytes_read,
            bytes_written: self.bytes_written - o.bytes_written,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Rates {
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub fsyncs_per_s: f64,
    /// MiB = 2^20 bytes.
    pub read_mib_per_s: f64,
    pub written_mib_per_s: f64,
}

impl Rates {
    /// Counts per second over `seconds` (a zero time gives zero rates' limit:
    /// the division uses the smallest positive time instead of 0).
    pub fn of(c: &Counts, seconds: f64) -> Rates {
        let t = if seconds > 0.0 {
            seconds
        } else {
            f64::MIN_POSITIVE
        };
        Rates {
            reads_per_s: c.reads as f64 / t,
            writes_per_s: c.writes as f64 / t,
            fsyncs_per_s: c.fsyncs as f64 / t,
            read_mib_per_s: c.bytes_read as f64 / 1048576.0 / t,
            written_mib_per_s: c.bytes_written as f64 / 1048576.0 / t,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ms: f64,
    pub mean_ms: f64,
    pub max_ms: f64,
    pub stddev_ms: f64,
    /// Sum of all latencies (sysbench's "sum"), ms.
    pub sum_ms: f64,
    /// Requested percentiles, in the order asked.
    pub percentiles: Vec<Percentile>,
    /// The histogram itself, so results can be merged and re-analysed:
    /// non-empty buckets as (highest value in the bucket in ns, count), ascending.
    /// Resolution: 3 significant digits from 1 µs to 1 h.
    pub histogram: Vec<(u64, u64)>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Percentile {
    /// 0 < p <= 100.
    pub p: f64,
    pub ms: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ThreadSummary {
    pub events: u64,
    /// Sum of this thread's event latencies, seconds.
    pub busy_time_s: f64,
}

/// One `--report-interval` sample: rates over the interval that ends at `t_s`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct IntervalSample {
    pub t_s: f64,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub fsyncs_per_s: f64,
    pub read_mib_per_s: f64,
    pub written_mib_per_s: f64,
    /// The interval's event latency at the first requested percentile, ms.
    pub latency_ms: f64,
    pub latency_percentile: f64,
}

/// Where the run happened; what a reader needs to judge the figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    pub hostname: String,
    pub kernel: String,
    pub cpus: u32,
    pub mem_total_bytes: u64,
    pub mem_available_bytes: u64,
    /// File system type of the target directory (ext4, zfs, fuse.zfs-fuse, tmpfs, ...).
    pub fs_type: String,
    pub mount_point: String,
    pub mount_options: String,
    /// Backing device of the mount (`/dev/vda`, pool/dataset, ...).
    pub device: String,
    /// None when it could not be determined (network, FUSE, ZFS).
    pub rotational: Option<bool>,
    /// Whether the page cache was dropped before the run.
    pub caches_dropped: bool,
    /// ZFS `compression` property of the dataset (`off`, `lz4`, ...), when the
    /// target is on ZFS and the property could be read.
    #[serde(default)]
    pub compression: Option<String>,
}

/// A condition that changes how the figures should be read, with advice.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Warning {
    /// Stable identifier (`reads_from_page_cache`, `zero_data_compressing_fs`, ...).
    pub code: String,
    /// What happened, with this run's numbers.
    pub message: String,
    /// What to do about it.
    pub hint: String,
}

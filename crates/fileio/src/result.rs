//! `RunResult`: the one result type that measured runs, the lab and the simulator
//! all produce, so a predicted and a measured cell compare field by field.
//! Serialized as JSON; `schema_version` changes whenever a field changes meaning.
//! The schema is documented in `docs/json.md`.

use crate::spec::{DataPattern, FsyncMode, IoMode, Mode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped on any incompatible change of the JSON layout.
pub const SCHEMA_VERSION: u32 = 1;

/// tankbench's version, as every result records it.
pub(crate) const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
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
    /// `--warmup`: seconds run before the measured period and left out of
    /// every figure here (0 without one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warmup_s: u64,
    /// Wall time from the start barrier to the end of the last thread, seconds.
    pub total_time_s: f64,
    pub counts: Counts,
    pub rates: Rates,
    /// Latency per operation (see [`LatencyKey`] for what each one measures).
    #[schemars(schema_with = "latency_map_schema")]
    pub latency: BTreeMap<LatencyKey, LatencySummary>,
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
    /// `tankbench durability verify`: what became of the acknowledged writes;
    /// absent for every other run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<Durability>,
    /// A prediction's interval over its uncertain parameters (the
    /// simulator's `sim::uncertainty`); absent on measurements and on
    /// point predictions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction: Option<PredictionInterval>,
    /// A prediction from a measurement (`simulate --baseline`): the
    /// measured baseline its figures are anchored to and the simulated
    /// ratios that carry them over; absent on measurements and on
    /// predictions from a described system alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<Anchor>,
}

/// The schema of [`RunResult::latency`]: an object whose keys are
/// [`LatencyKey`] names. schemars would leave the keys unchecked (a map's keys
/// are any string to it), but a reader refuses an unknown key, so the schema
/// says which keys there are.
fn latency_map_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let keys = generator.subschema_for::<LatencyKey>();
    let values = generator.subschema_for::<LatencySummary>();
    schemars::json_schema!({
        "type": "object",
        "propertyNames": keys,
        "additionalProperties": values,
    })
}

/// The one way to make a result: [`RunResult::new`], then the `with_*` steps
/// for what the producer has. Measured runs go through
/// [`crate::summary::measured_result`]; the simulator and durability checks
/// call these directly, so every result carries the same schema version, tool
/// and time stamp.
impl RunResult {
    /// A result of `kind` for `workload`, started now, with no figures yet:
    /// zero counts and rates, no latency, no threads, an empty environment.
    pub fn new(kind: ResultKind, workload: WorkloadSummary) -> RunResult {
        RunResult {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo::tankbench(),
            kind,
            started_at: crate::clock::utc_now_rfc3339(),
            labels: BTreeMap::new(),
            workload,
            interrupted: false,
            warmup_s: 0,
            total_time_s: 0.0,
            counts: Counts::default(),
            rates: Rates::default(),
            latency: BTreeMap::new(),
            threads: Vec::new(),
            intervals: Vec::new(),
            environment: Environment::default(),
            warnings: Vec::new(),
            ranks: Vec::new(),
            distributed: None,
            durability: None,
            prediction: None,
            anchor: None,
        }
    }

    /// The start time (RFC 3339, [`crate::clock::utc_now_rfc3339`] when the
    /// run began) instead of the moment [`RunResult::new`] was called.
    pub fn with_started_at(mut self, rfc3339: String) -> RunResult {
        self.started_at = rfc3339;
        self
    }

    pub fn with_label(mut self, key: impl Into<String>, value: impl Into<String>) -> RunResult {
        self.labels.insert(key.into(), value.into());
        self
    }

    pub(crate) fn with_interrupted(mut self, interrupted: bool) -> RunResult {
        self.interrupted = interrupted;
        self
    }

    /// The counts, the total time (s), and the rates of the counts over
    /// `rate_seconds` (sysbench takes rates over the last period, which is the
    /// total time unless checkpoints cut it).
    pub fn with_figures(
        mut self,
        counts: Counts,
        total_time_s: f64,
        rate_seconds: f64,
    ) -> RunResult {
        self.rates = Rates::of(&counts, rate_seconds);
        self.counts = counts;
        self.total_time_s = total_time_s;
        self
    }

    /// The latency of `key` (see [`crate::summary::summarize`]).
    pub fn with_latency(mut self, key: LatencyKey, summary: LatencySummary) -> RunResult {
        self.latency.insert(key, summary);
        self
    }

    /// Per worker thread: (events, busy seconds).
    pub fn with_threads(mut self, threads: impl IntoIterator<Item = (u64, f64)>) -> RunResult {
        self.threads = threads
            .into_iter()
            .map(|(events, busy_time_s)| ThreadSummary {
                events,
                busy_time_s,
            })
            .collect();
        self
    }

    pub fn with_environment(mut self, environment: Environment) -> RunResult {
        self.environment = environment;
        self
    }

    pub fn with_warnings(mut self, warnings: Vec<Warning>) -> RunResult {
        self.warnings = warnings;
        self
    }

    pub fn with_durability(mut self, durability: Durability) -> RunResult {
        self.durability = Some(durability);
        self
    }
}

impl ToolInfo {
    /// This build of tankbench.
    pub fn tankbench() -> ToolInfo {
        ToolInfo {
            name: "tankbench".to_string(),
            version: TOOL_VERSION.to_string(),
        }
    }
}

/// The commit method: what makes a write stable before it is reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Commit {
    /// write(2), then fsync(2).
    #[default]
    Fsync,
    /// write(2), then fdatasync(2).
    Fdatasync,
    /// The file opened with O_SYNC: write(2) returns once data and metadata
    /// are stable (open(2)).
    OSync,
    /// The file opened with O_DSYNC: write(2) returns once the data (and the
    /// metadata needed to read it) are stable.
    ODsync,
}

impl Commit {
    /// Every method, by [`Commit::name`] the one list `--commit` offers;
    /// [`Commit::ACCEPTED`] is the same names for a refusal.
    pub const ALL: [Commit; 4] = [
        Commit::Fsync,
        Commit::Fdatasync,
        Commit::OSync,
        Commit::ODsync,
    ];
    pub const ACCEPTED: &'static str = "fsync, fdatasync, osync, odsync";

    pub fn parse(s: &str) -> Option<Commit> {
        Commit::ALL.into_iter().find(|c| c.name() == s)
    }

    pub fn name(self) -> &'static str {
        match self {
            Commit::Fsync => "fsync",
            Commit::Fdatasync => "fdatasync",
            Commit::OSync => "osync",
            Commit::ODsync => "odsync",
        }
    }
}

/// Whether every acknowledged write survived a durability check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No acknowledged write was lost, torn or corrupt.
    Passed,
    /// At least one acknowledged write was lost, torn or corrupt.
    #[default]
    Failed,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Passed => "passed",
            Verdict::Failed => "failed",
        }
    }
}

/// The outcome of a durability check: each block whose write was
/// acknowledged as stable, read back and classified (docs/durability.md).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Durability {
    /// `passed` (no acknowledged write lost or damaged) or `failed`.
    pub verdict: Verdict,
    /// How the writer made each write stable: fsync, fdatasync, osync, odsync.
    pub commit: Commit,
    /// Writer sessions of the file set in the journal.
    pub sessions: u32,
    /// Acknowledgements in the journal (a block written many times counts each time).
    pub acknowledged_writes: u64,
    /// Blocks with an acknowledged write: each checked against its latest one.
    pub acknowledged: u64,
    /// Blocks holding their latest acknowledged version.
    pub intact: u64,
    /// Blocks holding an older version, another run's block, or zeros.
    pub lost: u64,
    /// Blocks partly new and partly older.
    pub torn: u64,
    /// Blocks whose checksums fail or that hold a record of another place.
    pub corrupt: u64,
    /// Blocks holding a later write that was never acknowledged (allowed).
    pub unacknowledged_newer: u64,
    /// The first blocks of each outcome but `intact`, in file and block order.
    #[serde(default)]
    pub examples: Vec<DurabilityExample>,
}

/// One block as `durability verify` found it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct DurabilityExample {
    /// lost, torn, corrupt or unacknowledged_newer.
    pub outcome: String,
    pub file: u32,
    pub block: u64,
    /// Sequence number of the latest acknowledged write of the block.
    pub acknowledged_seq: u64,
    /// What the block held, in words.
    pub found: String,
}

/// Timing and layout of a distributed (MPI) job. Times are seconds from the
/// job's start barrier, each measured on its own rank's monotonic clock (so
/// hosts' wall clocks need not agree); the job starts with its earliest rank.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
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

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResultKind {
    Measured,
    Predicted,
}

/// The workload as run, after validation and derivation (the derived
/// parameters of src/tests/fileio/sb_fileio.c at sysbench 1.0.20).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct WorkloadSummary {
    /// seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw.
    pub mode: Mode,
    /// sync, async, mmap.
    pub io_mode: IoMode,
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
    pub fsync_mode: FsyncMode,
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
    pub data: DataPattern,
    /// Directory the test files live in.
    pub directory: String,
    /// fio's `fsync=N`/`fdatasync=N`: a sync before the next request once a
    /// thread's writes reach a multiple of N (not an event); absent (0) for
    /// sysbench workloads, which sync by `fsync_freq` and `fsync_all`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sync_every_writes: u64,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
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

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
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

/// What a latency summary measures; the keys of [`RunResult::latency`].
///
/// With `--rate`, sysbench 1.0.20 adds the time an event waited in the
/// generator's queue to its latency (`sb_timer_stop` in `sb_timer.h` adds the
/// `queue_time` that `sb_more_events` in `sysbench.c` sets), so its report shows
/// response time. `event` stays what sysbench reports, and the service time
/// gets its own key.
///
/// The set is closed within a schema version: a new key bumps
/// [`SCHEMA_VERSION`], since readers of an older version refuse unknown keys.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LatencyKey {
    /// One request as sysbench times it (fsync-after-write included). Without
    /// `--rate` its service time; with `--rate` its response time, from the
    /// scheduled arrival to completion, queueing included.
    Event,
    Read,
    Write,
    /// Every fsync: periodic, after each write, and at the end of each thread.
    Fsync,
    /// `--rate` only: the event's service time, from the start of its execution
    /// to completion (without queueing).
    EventService,
}

impl LatencyKey {
    /// Every key, in the order reports show them.
    pub const ALL: [LatencyKey; 5] = [
        LatencyKey::Event,
        LatencyKey::Read,
        LatencyKey::Write,
        LatencyKey::Fsync,
        LatencyKey::EventService,
    ];

    /// The key as it appears in the JSON document.
    pub fn name(self) -> &'static str {
        match self {
            LatencyKey::Event => "event",
            LatencyKey::Read => "read",
            LatencyKey::Write => "write",
            LatencyKey::Fsync => "fsync",
            LatencyKey::EventService => "event_service",
        }
    }

    /// The key named `name` (as in the JSON document).
    pub fn from_name(name: &str) -> Option<LatencyKey> {
        LatencyKey::ALL.into_iter().find(|k| k.name() == name)
    }

    /// How a text report labels it: with `--rate` (`open_loop`) the event
    /// latency is the response time and says so.
    pub fn label(self, open_loop: bool) -> &'static str {
        match self {
            LatencyKey::Event if open_loop => "event response",
            LatencyKey::EventService => "event service",
            other => other.name(),
        }
    }
}

impl std::fmt::Display for LatencyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
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

impl LatencySummary {
    /// The latency at percentile `p` (ms), when `p` was one of the requested
    /// percentiles. Percentiles are compared within 1e-9 so that a value read
    /// back from JSON or typed as a literal (`99.9`) finds its entry.
    pub fn at(&self, p: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|q| (q.p - p).abs() < 1e-9)
            .map(|q| q.ms)
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Percentile {
    /// 0 < p <= 100.
    pub p: f64,
    pub ms: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct ThreadSummary {
    pub events: u64,
    /// Sum of this thread's event latencies, seconds.
    pub busy_time_s: f64,
}

/// One `--report-interval` sample: rates over the interval that ends at `t_s`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
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
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
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
    /// The ZFS the run ran on (dataset properties, pool layout, version, ARC
    /// deltas, `zpool iostat` samples); absent when the target is not on ZFS
    /// and in results written before it was recorded. See docs/zfs-facts.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zfs: Option<crate::zfs_facts::ZfsFacts>,
}

/// A condition that changes how the figures should be read, with advice.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Warning {
    /// Stable identifier (`reads_from_page_cache`, `zero_data_compressing_fs`, ...).
    pub code: String,
    /// What happened, with this run's numbers.
    pub message: String,
    /// What to do about it.
    pub hint: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accepted_commit_names_are_those_of_every_method() {
        let names: Vec<&str> = Commit::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.join(", "), Commit::ACCEPTED);
        assert!(Commit::ALL
            .iter()
            .all(|c| Commit::parse(c.name()) == Some(*c)));
    }
    use serde_json::json;

    #[test]
    fn latency_keys_serialize_under_their_names() {
        for k in LatencyKey::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), json!(k.name()));
            assert_eq!(LatencyKey::from_name(k.name()), Some(k));
            assert_eq!(k.to_string(), k.name());
        }
        assert_eq!(LatencyKey::from_name("event_response"), None);
        let map: BTreeMap<LatencyKey, u32> = [(LatencyKey::EventService, 1)].into();
        assert_eq!(
            serde_json::to_string(&map).unwrap(),
            r#"{"event_service":1}"#
        );
    }

    #[test]
    fn only_open_loop_event_rows_change_their_label() {
        assert_eq!(LatencyKey::Event.label(false), "event");
        assert_eq!(LatencyKey::Event.label(true), "event response");
        assert_eq!(LatencyKey::EventService.label(true), "event service");
        assert_eq!(LatencyKey::Read.label(true), "read");
    }

    /// The workload's enums keep the strings schema 1 wrote: the names the
    /// options take.
    #[test]
    fn workload_enums_serialize_as_the_option_values() {
        for m in [
            Mode::SeqWr,
            Mode::SeqRewr,
            Mode::SeqRd,
            Mode::RndRd,
            Mode::RndWr,
            Mode::RndRw,
        ] {
            assert_eq!(serde_json::to_value(m).unwrap(), json!(m.short_name()));
            assert_eq!(Mode::parse(m.short_name()), Some(m));
        }
        for m in [IoMode::Sync, IoMode::Async, IoMode::Mmap] {
            assert_eq!(serde_json::to_value(m).unwrap(), json!(m.name()));
        }
        assert_eq!(
            serde_json::to_value([FsyncMode::Fsync, FsyncMode::Fdatasync]).unwrap(),
            json!(["fsync", "fdatasync"])
        );
        assert_eq!(
            serde_json::to_value([DataPattern::Zero, DataPattern::Random]).unwrap(),
            json!(["zero", "random"])
        );
        let back: Vec<Mode> = serde_json::from_value(json!(["rndrw", "seqrewr"])).unwrap();
        assert_eq!(back, [Mode::RndRw, Mode::SeqRewr]);
    }

    #[test]
    fn a_percentile_is_found_by_its_value() {
        let l = LatencySummary {
            percentiles: vec![
                Percentile { p: 50.0, ms: 1.0 },
                Percentile { p: 99.9, ms: 7.5 },
            ],
            ..LatencySummary::default()
        };
        assert_eq!(l.at(99.9), Some(7.5));
        assert_eq!(l.at(50.0), Some(1.0));
        // Read back from text: the same f64.
        assert_eq!(l.at("99.9".parse().unwrap()), Some(7.5));
        assert_eq!(l.at(95.0), None);
        assert_eq!(LatencySummary::default().at(50.0), None);
    }
}

/// How far a prediction's figures move over the ranges of its uncertain
/// parameters: per figure the typical-parameter point and the interval of
/// the sampled predictions, and the parameters that move it most.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct PredictionInterval {
    /// Figure name (`reads_per_s`, `writes_per_s`, `fsyncs_per_s`,
    /// `read_mib_per_s`, `written_mib_per_s`, `event_mean_ms`) to its interval.
    pub figures: BTreeMap<String, FigureInterval>,
    /// Share of the sampled predictions inside each interval (0.8: the 10th
    /// to the 90th percentile).
    pub confidence: f64,
    pub samples: usize,
    pub method: String,
    /// Parameters by how much they move the headline figure, most first.
    pub sensitivity: Vec<Sensitivity>,
}

/// One figure's prediction: the typical-parameter point and the interval a
/// user reads (`low`-`high`: the parameters' spread widened by the model's
/// structural error, estimated out of sample on published measurements).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct FigureInterval {
    pub point: f64,
    pub low: f64,
    pub high: f64,
    /// The parameters' spread alone (10th-90th percentile of the sampled
    /// predictions, holding the point), before the structural error: what
    /// the validation's conformal step scores (absent in results written
    /// before the structural error was added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters_low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters_high: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Sensitivity {
    pub parameter: String,
    /// Spearman rank correlation of the parameter with the headline figure
    /// over the samples (-1 to 1).
    pub rank_correlation: f64,
}

/// How a prediction from a measurement was made: each figure is the
/// baseline's measured figure times the ratio the simulator predicts
/// between this configuration and the baseline's (the same parameter draws
/// and seeds for both), so the model's errors common to the two cancel.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Anchor {
    /// The measured run the figures are anchored to, as it was named (its file).
    pub baseline: String,
    /// When the baseline ran (its `started_at`).
    pub baseline_started_at: String,
    /// The baseline's worker threads: the one part of its workload that may
    /// differ from this prediction's.
    pub baseline_threads: u32,
    /// Whether this is the baseline's own configuration (every ratio 1:
    /// the figures are the measured ones).
    pub is_baseline: bool,
    /// Figure name (`reads_per_s`, ..., `event_mean_ms`, `event_p95_ms`,
    /// `write_p99_ms`) to its measured value and ratio.
    pub figures: BTreeMap<String, AnchoredFigure>,
}

/// One figure of an [`Anchor`]: predicted = measured x ratio.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct AnchoredFigure {
    /// The baseline's measured figure.
    pub measured: f64,
    /// Simulated figure of this configuration over the baseline's, at the
    /// typical parameters.
    pub ratio: f64,
    /// The 10th to 90th percentile of the ratio over the sampled
    /// parameters (absent without intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_interval: Option<RatioInterval>,
}

/// The spread of a ratio over the sampled parameters.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct RatioInterval {
    pub low: f64,
    pub high: f64,
}

/// For `skip_serializing_if`: a zero that means "not given".
fn is_zero(n: &u64) -> bool {
    *n == 0
}

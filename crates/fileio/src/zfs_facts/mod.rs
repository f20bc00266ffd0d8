//! What ZFS a run ran on: the dataset of `--file-dir` and its properties,
//! the pool's vdev tree (with its log, cache and special vdevs), the ZFS
//! version, the ARC's size and hit/miss deltas over the run, and per-vdev
//! I/O sampled like `zpool iostat -v` while it ran.
//!
//! Three platforms are read: OpenZFS on Linux (`/proc/spl/kstat/zfs`,
//! `/sys/module/zfs`, `zpool`/`zfs`), FreeBSD and TrueNAS CORE (`sysctl
//! kstat.zfs`, `zpool`/`zfs`) and zfs-fuse (its own `zpool`/`zfs`, no kstats).
//! A fact that cannot be read (no tool, no permission, not on this ZFS) is
//! left out and [`ZfsFacts::missing`] says why: the facts never fail a run.
//!
//! - [`parse`]: the text formats (`zpool status`, `zpool iostat`, `zfs get`,
//!   arcstats, sysctl), pure functions tested on recorded samples.
//! - [`collect`]: running the tools and reading the files.
//! - [`sampler`]: the `zpool iostat` thread that runs alongside the workload.
//! - [`Watch`]: what the front end calls around a run.

pub mod collect;
pub mod parse;
pub mod sampler;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use collect::{capture, capture_with, HostTools, Watch, ZfsTools};

/// The ZFS under a run's files (`environment.zfs` in a result).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct ZfsFacts {
    /// Why there are no facts at all (a remote NFS target: the server's ZFS
    /// is not visible from the client). When set, the other fields are empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    /// The ZFS implementation's version (`2.1.5-1ubuntu6`, `zfs-fuse, pool
    /// version 23`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<Dataset>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolLayout>,
    /// `zfs_txg_timeout`: the longest a transaction group stays open, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub txg_timeout_s: Option<u64>,
    /// The ARC over the run: before, after, and the counters' deltas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arc: Option<ArcFacts>,
    /// Per-vdev and per-device I/O, one sample per interval of the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub iostat: Vec<IostatSample>,
    /// Facts that could not be read, by name (`arc`, `iostat`, `version`,
    /// `txg_timeout_s`, `pool`, `dataset`), with the reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub missing: BTreeMap<String, String>,
    /// The pool's buffered write path as timed by the `tankbench lab` that
    /// built the pool (`lab up`); none for a run outside a lab.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_path: Option<WritePathMeasurement>,
}

/// A pool's buffered write path, timed: buffered 4 KiB overwrites of one
/// file in the pool, no sync, from one thread and then from two (the lab's
/// write probe). What the simulator's `server.cpu_us` and `server.cores`
/// are for a server no published figure describes (zfs-fuse on a shared
/// host).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct WritePathMeasurement {
    /// Buffered 4 KiB writes a second from one thread.
    pub one_thread_writes_per_s: f64,
    /// The same from two threads at once (together).
    pub two_threads_writes_per_s: f64,
}

impl WritePathMeasurement {
    /// The time of one buffered 4 KiB write at one thread, us: the whole
    /// request (system call, FUSE, the ZFS write) as the simulator's
    /// `server.cpu_us` is for a local client.
    pub fn request_us(&self) -> f64 {
        1e6 / self.one_thread_writes_per_s
    }

    /// How many requests the write path serves at once, as whole cores:
    /// two threads' writes over one thread's, rounded, at least 1 and at
    /// most `cpus`.
    pub fn parallel_requests(&self, cpus: u32) -> u32 {
        let ratio = self.two_threads_writes_per_s / self.one_thread_writes_per_s;
        // Finite and clamped to [1, cpus] before the cast.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = ratio.round().clamp(1.0, f64::from(cpus.max(1))) as u32;
        n
    }

    /// Both rates finite and above zero.
    pub fn is_usable(&self) -> bool {
        [self.one_thread_writes_per_s, self.two_threads_writes_per_s]
            .iter()
            .all(|r| r.is_finite() && *r > 0.0)
    }
}

impl ZfsFacts {
    /// Facts that are not there at all, for `reason`.
    pub fn absent(reason: impl Into<String>) -> ZfsFacts {
        ZfsFacts {
            absent: Some(reason.into()),
            ..ZfsFacts::default()
        }
    }

    /// Record why the fact `name` is missing (the first reason stays).
    pub(crate) fn note_missing(&mut self, name: &str, reason: impl Into<String>) {
        self.missing
            .entry(name.to_string())
            .or_insert_with(|| reason.into());
    }

    /// A dataset property's value (`sync`, `logbias`, ...), when read.
    pub fn property(&self, name: &str) -> Option<&str> {
        self.dataset.as_ref()?.property(name)
    }
}

/// Which ZFS implementation the facts come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    /// The OpenZFS kernel module on Linux.
    OpenzfsLinux,
    /// ZFS in the FreeBSD kernel (also TrueNAS CORE).
    Freebsd,
    /// The zfs-fuse daemon (pool version 23, user space).
    ZfsFuse,
}

impl Platform {
    pub fn name(self) -> &'static str {
        match self {
            Platform::OpenzfsLinux => "openzfs_linux",
            Platform::Freebsd => "freebsd",
            Platform::ZfsFuse => "zfs_fuse",
        }
    }
}

/// One dataset property as `zfs get -p` gives it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
pub struct Property {
    /// Exact (`-p`) value: `131072`, `standard`, `lz4`.
    pub value: String,
    /// `default`, `local`, `inherited from tank`, ... or `implied` for a
    /// property this ZFS does not have but whose behaviour it always has
    /// (zfs-fuse has no `sync` and behaves as `sync=standard`).
    pub source: String,
}

/// The dataset that holds `--file-dir`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Dataset {
    /// `tank/bench`.
    pub name: String,
    /// Of [`Dataset::PROPERTIES`], those this ZFS has.
    pub properties: BTreeMap<String, Property>,
}

impl Dataset {
    /// The properties a run records: the ones that decide what a file
    /// workload measures.
    pub const PROPERTIES: [&'static str; 7] = [
        "sync",
        "recordsize",
        "logbias",
        "primarycache",
        "compression",
        "atime",
        "copies",
    ];

    pub fn property(&self, name: &str) -> Option<&str> {
        self.properties.get(name).map(|p| p.value.as_str())
    }

    /// `recordsize` in bytes.
    pub fn recordsize_bytes(&self) -> Option<u64> {
        self.property("recordsize")?.parse().ok()
    }

    /// The pool: the dataset name up to its first `/`.
    pub(crate) fn pool_name(&self) -> &str {
        self.name.split('/').next().unwrap_or(&self.name)
    }
}

/// What a vdev is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VdevKind {
    /// A leaf: a disk, partition or file.
    Device,
    Mirror,
    /// With [`Vdev::parity`].
    Raidz,
    /// With [`Vdev::parity`].
    Draid,
    /// A device being replaced (`replacing-0`), temporary.
    Replacing,
    /// A hot spare in use (`spare-0`), temporary.
    Spare,
    /// Anything else `zpool status` prints.
    Other,
}

/// One vdev of the pool's tree.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Vdev {
    /// As `zpool status` prints it: `raidz2-0`, `mirror-1`, `/dev/sdb`.
    pub name: String,
    pub kind: VdevKind,
    /// raidz and draid parity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity: Option<u32>,
    /// ONLINE, DEGRADED, AVAIL, ...
    pub state: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Vdev>,
}

impl Vdev {
    /// The devices (leaves) under this vdev, or itself if it is one.
    pub fn devices(&self) -> Vec<&str> {
        if self.children.is_empty() {
            return vec![self.name.as_str()];
        }
        self.children.iter().flat_map(Vdev::devices).collect()
    }
}

/// The class of a top-level vdev (or an iostat row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VdevClass {
    /// The pool's own row (iostat only).
    Pool,
    Data,
    Log,
    Cache,
    Special,
    Dedup,
    Spare,
}

/// The pool's layout, as `zpool status` shows it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct PoolLayout {
    pub name: String,
    /// ONLINE, DEGRADED, ...
    pub state: String,
    /// Pool version (`23`); absent on a pool with feature flags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// The normal class: the vdevs data is striped over.
    pub data: Vec<Vdev>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<Vdev>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache: Vec<Vdev>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub special: Vec<Vdev>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dedup: Vec<Vdev>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spares: Vec<Vdev>,
}

/// Consecutive data vdevs of one shape: `count` vdevs of `kind`, each of
/// `width` devices (a single-device vdev has width 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VdevGroup {
    pub kind: VdevKind,
    pub parity: Option<u32>,
    pub width: u32,
    pub count: u32,
}

impl PoolLayout {
    /// The top-level vdevs of `class`.
    pub fn class(&self, class: VdevClass) -> &[Vdev] {
        match class {
            VdevClass::Pool | VdevClass::Data => &self.data,
            VdevClass::Log => &self.logs,
            VdevClass::Cache => &self.cache,
            VdevClass::Special => &self.special,
            VdevClass::Dedup => &self.dedup,
            VdevClass::Spare => &self.spares,
        }
    }

    /// The class of the vdev or device called `name`, if it is in the tree.
    pub fn class_of(&self, name: &str) -> Option<VdevClass> {
        fn holds(v: &Vdev, name: &str) -> bool {
            v.name == name || v.children.iter().any(|c| holds(c, name))
        }
        [
            VdevClass::Data,
            VdevClass::Log,
            VdevClass::Cache,
            VdevClass::Special,
            VdevClass::Dedup,
            VdevClass::Spare,
        ]
        .into_iter()
        .find(|&c| self.class(c).iter().any(|v| holds(v, name)))
    }

    /// The data vdevs as runs of equal shape, in pool order: what a layout
    /// name (`2xraidz2-12`) describes.
    pub fn data_groups(&self) -> Vec<VdevGroup> {
        let mut groups: Vec<VdevGroup> = Vec::new();
        for v in &self.data {
            let width = u32::try_from(v.devices().len()).unwrap_or(u32::MAX);
            let shape = (v.kind, v.parity, width);
            match groups.last_mut() {
                Some(g) if (g.kind, g.parity, g.width) == shape => g.count += 1,
                _ => groups.push(VdevGroup {
                    kind: v.kind,
                    parity: v.parity,
                    width,
                    count: 1,
                }),
            }
        }
        groups
    }
}

/// The ARC's figures at one moment.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
pub struct ArcSnapshot {
    /// `size`: bytes the ARC holds.
    pub size_bytes: u64,
    /// `c`: the size it aims at.
    pub target_bytes: u64,
    /// `c_max`: the most it may grow to.
    pub max_bytes: u64,
    pub counters: ArcCounters,
}

/// The ARC's hit and miss counters (since boot in a snapshot, over the run
/// in [`ArcFacts::delta`]).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
pub struct ArcCounters {
    pub hits: u64,
    pub misses: u64,
    /// Hits and misses of reads that a caller waited for, of file data (not
    /// metadata, not prefetch): the ones a read benchmark makes.
    pub demand_data_hits: u64,
    pub demand_data_misses: u64,
    pub l2_hits: u64,
    pub l2_misses: u64,
}

impl ArcCounters {
    /// `self - earlier`, counter by counter (0 where a counter went back,
    /// as after a module reload).
    pub fn since(&self, earlier: &ArcCounters) -> ArcCounters {
        ArcCounters {
            hits: self.hits.saturating_sub(earlier.hits),
            misses: self.misses.saturating_sub(earlier.misses),
            demand_data_hits: self
                .demand_data_hits
                .saturating_sub(earlier.demand_data_hits),
            demand_data_misses: self
                .demand_data_misses
                .saturating_sub(earlier.demand_data_misses),
            l2_hits: self.l2_hits.saturating_sub(earlier.l2_hits),
            l2_misses: self.l2_misses.saturating_sub(earlier.l2_misses),
        }
    }

    /// Share of demand data reads served from the ARC (all accesses when no
    /// demand data read was counted); None when nothing was counted.
    pub fn hit_ratio(&self) -> Option<f64> {
        let ratio = |hits: u64, misses: u64| {
            let all = hits + misses;
            (all > 0).then(|| hits as f64 / all as f64)
        };
        ratio(self.demand_data_hits, self.demand_data_misses).or(ratio(self.hits, self.misses))
    }

    /// The accesses [`Self::hit_ratio`] is taken over.
    pub fn accesses(&self) -> u64 {
        match self.demand_data_hits + self.demand_data_misses {
            0 => self.hits + self.misses,
            n => n,
        }
    }
}

/// The ARC over a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct ArcFacts {
    /// Where the figures were read (`/proc/spl/kstat/zfs/arcstats`,
    /// `sysctl kstat.zfs.misc.arcstats`).
    pub source: String,
    pub before: ArcSnapshot,
    pub after: ArcSnapshot,
    /// `after - before`: what the run (and anything else on the host) did.
    pub delta: ArcCounters,
    /// `delta`'s hit ratio (see [`ArcCounters::hit_ratio`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_ratio: Option<f64>,
}

impl ArcFacts {
    pub fn over(source: &str, before: ArcSnapshot, after: ArcSnapshot) -> ArcFacts {
        let delta = after.counters.since(&before.counters);
        ArcFacts {
            source: source.to_string(),
            before,
            after,
            delta,
            hit_ratio: delta.hit_ratio(),
        }
    }
}

/// One `zpool iostat -v` interval.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct IostatSample {
    /// End of the interval, seconds after the sampler started (just before
    /// the workers).
    pub t_s: f64,
    /// The pool, then its vdevs and devices, in `zpool iostat -v` order.
    pub rows: Vec<IostatRow>,
}

/// One line of a `zpool iostat -v` interval: rates over the interval.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct IostatRow {
    pub name: String,
    pub class: VdevClass,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alloc_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_bytes: Option<u64>,
    pub read_ops_per_s: f64,
    pub write_ops_per_s: f64,
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
    /// `-l` (OpenZFS): mean waits over the interval, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<IostatLatency>,
}

/// `zpool iostat -l` columns: mean wait per I/O over the interval, ns
/// (absent where zpool prints `-`: no I/O of that kind).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
pub struct IostatLatency {
    /// Queued plus on the device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_wait_read_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_wait_write_ns: Option<u64>,
    /// On the device only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_wait_read_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_wait_write_ns: Option<u64>,
    /// In the synchronous (ZIL, demand read) and asynchronous (txg sync,
    /// prefetch) queues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syncq_wait_read_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syncq_wait_write_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asyncq_wait_read_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asyncq_wait_write_ns: Option<u64>,
}

impl IostatSample {
    /// The pool's own row.
    pub fn pool_row(&self) -> Option<&IostatRow> {
        self.rows.iter().find(|r| r.class == VdevClass::Pool)
    }
}

/// `program` in PATH or the sbin directories (a root shell's PATH may lack
/// them under sudo or cron).
pub(crate) fn find_tool(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(std::path::PathBuf::from))
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

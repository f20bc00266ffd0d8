//! The simulator's parameters, declared once: one row per parameter with
//! its dotted path in a system file, unit, meaning, default, the sourced
//! range an interval samples, the bounds a value may never leave, whether
//! calibration fits it and an interval samples it, and typed get and set on
//! a [`SystemModel`]. Profiles, intervals, calibration, matrices and the
//! command line look rows up here instead of each keeping its own copy
//! (the house pattern of `fileio::sysbench::args::OPTIONS`: one row per
//! option feeding the parser, the help and clap).
//!
//! docs/model-reference.md's parameter table is [`markdown_table`]'s output,
//! held to it by `crates/sim/tests/params_doc.rs`.

use zfs_model::disk::DiskClass;
use zfs_model::diskmodel::{ModelParams, UNKNOWN_FLASH};
use zfs_model::estimate::Estimate;

pub use crate::sourced_ranges::{
    SourcedRange, COMMIT_CPU_US, CPU_CONTENTION, CPU_US_PER_MIB, SERVER_CPU_US_LOCAL,
};
use crate::system::{DeviceSpec, Protocol, System, SystemModel};
use crate::SimError;

/// A parameter the simulator can be told, fitted to or sampled over: a key
/// into [`PARAMS`] (its discriminant is its row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Param {
    /// Flush latency of the device log blocks go to (the log device, or the
    /// pool's disk without one): the device part of a commit's cost.
    CommitFlushMs,
    ServerCpuUs,
    RttMs,
    FsyncRoundTrips,
    ClientCpuUs,
    /// Flush latency of the pool's disks when log blocks go to a log device
    /// of their own (without one the pool's disk is the commit device, and
    /// [`Param::CommitFlushMs`] is its).
    PoolDiskFlushMs,
    ServerCpuUsPerMib,
    ServerCpuContention,
    /// The ZFS software of one `zil_commit` with work to do.
    ServerCommitCpuUs,
    /// Flush latency of the second member of a mirrored log device: a
    /// device of its own, drawn apart from the first.
    LogMirrorFlushMs,
}

/// How an interval samples a parameter around a system's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RangeRule {
    /// A sourced absolute range, taken as multiples of its typical value
    /// around the system's own value.
    Sourced(SourcedRange),
    /// Multiples of the system's value.
    Relative { low: f64, high: f64 },
    /// A device named by its flash class: the class's published write +
    /// flush range (crate::uncertainty); a built-in that is no class
    /// (`ssd-sata-lying`) takes `otherwise` (multiples of its value); a
    /// device the system gives by its figures is not sampled.
    DeviceClass {
        otherwise_low: f64,
        otherwise_high: f64,
    },
}

/// A range for one kind of access, with the words that source it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranged {
    pub rule: RangeRule,
    pub source: &'static str,
}

/// The values a parameter may physically hold, and why: a fit searches
/// inside them and stops at them, a profile outside them is refused, a
/// sampled range is cut to them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub low: f64,
    pub high: f64,
    /// Why no value is below `low`, with its source.
    pub low_source: &'static str,
    /// Why no value is above `high`, with its source.
    pub high_source: &'static str,
}

impl Bounds {
    /// The bound `side` names, and why it is there.
    pub fn at(&self, side: BoundSide) -> (f64, &'static str) {
        match side {
            BoundSide::Low => (self.low, self.low_source),
            BoundSide::High => (self.high, self.high_source),
        }
    }
}

/// Which of a parameter's bounds a value sits at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoundSide {
    Low,
    High,
}

impl BoundSide {
    /// "lower" or "upper", for reports.
    pub fn word(self) -> &'static str {
        match self {
            BoundSide::Low => "lower",
            BoundSide::High => "upper",
        }
    }
}

/// How a fitted value carries into a matrix cell whose axes changed what
/// the parameter's value stands on (crate::profile): the cell's own value
/// without the fit says what the change is worth, and the fit keeps what it
/// found beyond the system's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carry {
    /// The fit's ratio to the system's value applies to the cell's value:
    /// a device class or a preset scales the whole figure.
    Ratio,
    /// The fit's difference from the system's value adds to the cell's:
    /// a link class changes the wire and the NICs, while the hosts' part
    /// of a round trip (their stacks, a hypervisor) stays what was fitted.
    Difference,
    /// A cell whose axes replace one of the row's `components` takes its
    /// own value: what was fitted belongs to the component replaced (a
    /// client protocol's preset decides its round trips and CPU as a whole).
    Reset,
}

/// What a workload must do for a parameter to move its figures (an
/// interval leaves out the others: they would add only chance correlations
/// to "measure this first").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moves {
    /// Any workload.
    Always,
    /// Requests larger than the 4 KiB `server.cpu_us` is measured at.
    RequestsOver4K,
    /// More than one thread (two pieces of CPU work at once).
    SeveralThreads,
    /// A workload that writes: a write on a `sync=always` dataset, a
    /// stable NFS WRITE or the fsync after a write commits the ZIL.
    Writes,
}

/// Which device a device parameter is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceRole {
    /// The device log blocks go to: the log device, or the pool's disk.
    Commit,
    /// The pool's disks beside a log device.
    PoolDisk,
    /// The second member of a mirrored log device.
    LogMirror,
}

/// One parameter, declared once.
pub struct ParamRow {
    pub param: Param,
    /// The name in a system file, a profile and a matrix axis.
    pub path: &'static str,
    pub unit: &'static str,
    /// What the value means, for reports.
    pub doc: &'static str,
    /// The default, in words (the preset or constant that sets it).
    pub default: &'static str,
    /// The range an interval samples for local access.
    pub range: Ranged,
    /// The range over NFS, iSCSI or SMB where it differs.
    pub remote_range: Option<Ranged>,
    /// What no value may leave: a fit searches inside, a profile outside is
    /// refused, a sampled range is cut to it.
    pub bounds: Bounds,
    /// The bounds over NFS, iSCSI or SMB where they differ.
    pub remote_bounds: Option<Bounds>,
    /// Whether calibration fits it ([`Param::ALL`]).
    pub calibrated: bool,
    /// What a workload must do for it to matter to an interval.
    pub moves: Moves,
    /// A value of the right order where a fit probes a parameter whose
    /// value is 0 (0 has no logarithm).
    pub probe_scale: f64,
    /// Whole numbers only.
    pub integer: bool,
    /// The device it is about, for device parameters.
    pub device: Option<DeviceRole>,
    /// The system fields the value stands on: a matrix axis that sets one
    /// of them changes the value as [`ParamRow::carry`] says.
    pub components: &'static [&'static str],
    /// How a fitted value carries into a matrix cell whose axes changed one
    /// of its `components`.
    pub carry: Carry,
    /// A calibrated parameter whose fit measured this one with it, as a sum
    /// no run tells apart: with that one fitted, an interval holds this one
    /// at its value (the fit took up its deviation).
    pub held_by_fit_of: Option<Param>,
    /// Why it does not apply to a system (`None`: it does).
    not_applicable: fn(&SystemModel) -> Result<Option<String>, SimError>,
    /// Its value in a system it applies to (defaults applied).
    get: fn(&SystemModel, &System) -> Result<Option<f64>, SimError>,
    /// Set it in a system it applies to; `false` when it cannot be set.
    set: fn(&mut SystemModel, f64) -> Result<bool, SimError>,
}

/// A device's flush, either role (the commit device's, the pool disk's).
const FLUSH_BOUNDS: Bounds = Bounds {
    low: 0.0029,
    high: 100.0,
    low_source: "the fastest log device published, persistent memory, takes 2.9 us for a whole 4 KiB sync write, write and flush together (PS-103: raw /dev/pmem, fio O_SYNC, one job); a flush alone is taken no faster",
    high_source: "x14 the slowest flash flush published (6.93 ms a write + fdatasync, consumer NVMe, PS-045), room for a virtual disk whose host commits to hard disks (hdd-5400: 13 ms positioning and an 11.1 ms revolution)",
};

/// Why a request's CPU stays under 1 ms, wherever it runs.
const REQUEST_CPU_HIGH: &str = "x20 zfs-fuse's 50 us through FUSE (examples/systems/this-machine-zfs.toml), x38 the 26.5 us of core time a request at 16 threads (PS-009): a core would serve 1,000 requests/s";

/// The CPU of one request on a machine, a local server's or a client's.
const LOCAL_REQUEST_CPU_BOUNDS: Bounds = Bounds {
    low: 0.5,
    high: 1000.0,
    low_source: "a request is at least a system call that moves its 4 KiB: 0.5 us to copy 4 KiB at 8.1 GB/s, the fastest page-cache copy measured here (examples/systems/this-machine-ext4.toml); a stat took 0.57 us (crates/sim/tests/data/probe-local-ext4.json)",
    high_source: REQUEST_CPU_HIGH,
};

/// A value within this of a bound, in log space (1 %), sits at it: a fit
/// pressed against a bound stops at it or a hair inside (the simplex stops
/// once its points' objectives agree), and an optimum that close to a
/// physical limit is that limit for any reader.
pub const AT_BOUND_LN: f64 = 0.01;

/// Every parameter, in [`Param`]'s order: calibration tries them in this
/// order (when two explain the data equally well, the earlier is fitted),
/// and a sampling design gives each its column in it (appended, so a
/// parameter keeps its draw as rows are added).
pub static PARAMS: [ParamRow; 10] = [
    ParamRow {
        param: Param::CommitFlushMs,
        path: "commit_device.flush_ms",
        unit: "ms",
        doc: "log commit: flush of the commit device, ms",
        default: "the commit device's model (its class, table or `tankbench slog` measurement)",
        range: Ranged {
            rule: RangeRule::DeviceClass {
                otherwise_low: 0.33,
                otherwise_high: 3.0,
            },
            source: "a device named by its class: the class's published write + flush range (zfs_model::disk::DiskClass::write_flush_ms), its write time in proportion; a log device of unknown kind (flash-unknown) every power-loss-protected class's range, the kind the OpenZFS documentation advises for one; a built-in that is no class x0.33-x3, an estimate; a device given by its figures is not sampled",
        },
        remote_range: None,
        bounds: FLUSH_BOUNDS,
        remote_bounds: None,
        calibrated: true,
        moves: Moves::Always,
        probe_scale: 1.0,
        integer: false,
        device: Some(DeviceRole::Commit),
        components: &["log", "pool.log", "pool.disk"],
        carry: Carry::Ratio,
        held_by_fit_of: None,
        not_applicable: commit_flush_not_applicable,
        get: commit_flush,
        set: set_commit_flush,
    },
    ParamRow {
        param: Param::ServerCpuUs,
        path: "server.cpu_us",
        unit: "µs",
        doc: "server CPU per request, µs",
        default: "11 (SERVER_CPU_US_LOCAL.typical)",
        range: Ranged {
            rule: RangeRule::Sourced(SERVER_CPU_US_LOCAL),
            source: "6.9-19 us around 11: cached 4 KiB reads, 4 jobs (openzfs/zfs#10018) to 32 contended jobs (#3752); buffered 8 KiB writes 13-15 us (#2431)",
        },
        remote_range: Some(Ranged {
            rule: RangeRule::Relative {
                low: 0.33,
                high: 3.0,
            },
            source: "estimate: no source gives the CPU per request of an NFS, iSCSI or SMB server (its RPC or target layer and ZFS); wide",
        }),
        bounds: LOCAL_REQUEST_CPU_BOUNDS,
        remote_bounds: Some(Bounds {
            low: 2.0,
            high: 1000.0,
            low_source: "an NFS, iSCSI or SMB request is a ZFS request and the protocol's own work; a whole local 4 KiB ZFS write with sync=disabled took 4.7 us at one thread on a 2.5 GHz Xeon Silver 4215, system call included (PS-101's control), and 2 us allows a core twice as fast",
            high_source: REQUEST_CPU_HIGH,
        }),
        calibrated: true,
        moves: Moves::Always,
        probe_scale: 10.0,
        integer: false,
        device: None,
        components: &["server.cpu_us"],
        carry: Carry::Ratio,
        held_by_fit_of: None,
        not_applicable: applies_always,
        get: |_, sys| Ok(Some(sys.server_cpu_ns as f64 / 1e3)),
        set: |m, v| {
            m.server.cpu_us = v;
            Ok(true)
        },
    },
    ParamRow {
        param: Param::RttMs,
        path: "link.rtt_ms",
        unit: "ms",
        doc: "network round trip per request, ms",
        default: "the link class's typical small-request round trip (zfs_model::network::Link::round_trip_ms)",
        range: Ranged {
            rule: RangeRule::Relative {
                low: 0.5,
                high: 1.5,
            },
            source: "1 GbE 100-200 us around 150 (AppNeta ping-pong), 10 GbE 20-60 around 40; ping 73-161 us by interval (sync-write-facts.md)",
        },
        remote_range: None,
        bounds: Bounds {
            low: 0.02,
            high: 100.0,
            low_source: "20 us, under the fastest round trip in the facts: a flood ping on a direct cable took 22 us and netperf TCP_RR 37 us (xinglin 2020, sync-write-facts.md (d)); an RPC round trip adds both ends' RPC layers to either",
            high_source: "light in fibre over 10,000 km and back; the slowest LAN round trip in the facts is 0.575 ms (a USB 1 GbE NIC through a switch, virten.net 2020)",
        },
        remote_bounds: None,
        calibrated: true,
        moves: Moves::Always,
        probe_scale: 0.1,
        integer: false,
        device: None,
        components: &["link"],
        carry: Carry::Difference,
        held_by_fit_of: None,
        not_applicable: |m| {
            Ok((m.client.protocol == Protocol::Local)
                .then(|| "the client is local: no link".to_string()))
        },
        get: |_, sys| Ok(Some(sys.rtt_ns as f64 / 1e6)),
        set: |m, v| {
            m.link.rtt_ms = Some(v);
            Ok(true)
        },
    },
    ParamRow {
        param: Param::FsyncRoundTrips,
        path: "client.fsync_round_trips",
        unit: "",
        doc: "synchronous round trips per fsync",
        default: "the client preset's (Protocol::default_fsync_round_trips): 1, 2 under ESXi",
        range: Ranged {
            rule: RangeRule::Relative {
                low: 0.67,
                high: 1.34,
            },
            source: "a guest fsync over NFS is 2-4 commits (the stable WRITE and the journal blocks, sync-write-facts.md): typical +-1",
        },
        remote_range: None,
        bounds: Bounds {
            low: 1.0,
            high: 8.0,
            low_source: "an fsync that reaches the server is one round trip at least",
            high_source: "a guest ext4 fsync of a 4 KiB overwrite is 3 dependent writes and at most 2 flushes, 5 commits (sync-write-facts.md (b)); 8 leaves room for a journal transaction of more blocks",
        },
        remote_bounds: None,
        calibrated: true,
        moves: Moves::Always,
        probe_scale: 1.0,
        integer: true,
        device: None,
        components: &["client"],
        carry: Carry::Reset,
        held_by_fit_of: None,
        not_applicable: applies_always,
        get: |_, sys| Ok(Some(f64::from(sys.fsync_round_trips))),
        set: |m, v| {
            let b = Param::FsyncRoundTrips.row().bounds;
            // Clamped to the bounds (1..=8), so the cast is exact.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let trips = v.round().clamp(b.low, b.high) as u32;
            m.client.fsync_round_trips = Some(trips);
            Ok(true)
        },
    },
    ParamRow {
        param: Param::ClientCpuUs,
        path: "client.cpu_us",
        unit: "µs",
        doc: "client CPU per request, µs",
        default: "the client preset's (Protocol::default_client_cpu_us): 0 local, 20 remote (an estimate)",
        range: Ranged {
            rule: RangeRule::Relative {
                low: 0.33,
                high: 3.0,
            },
            source: "estimate: no source gives the client's CPU per request; wide",
        },
        remote_range: None,
        bounds: LOCAL_REQUEST_CPU_BOUNDS,
        remote_bounds: None,
        calibrated: true,
        moves: Moves::Always,
        probe_scale: 10.0,
        integer: false,
        device: None,
        components: &["client"],
        carry: Carry::Reset,
        held_by_fit_of: None,
        not_applicable: applies_always,
        get: |_, sys| Ok(Some(sys.client_cpu_ns as f64 / 1e3)),
        set: |m, v| {
            m.client.cpu_us = Some(v);
            Ok(true)
        },
    },
    ParamRow {
        param: Param::PoolDiskFlushMs,
        path: "pool.disk.flush_ms",
        unit: "ms",
        doc: "flush of a pool disk beside a log device, ms",
        default: "the pool disk's model (its class or table)",
        range: Ranged {
            rule: RangeRule::DeviceClass {
                otherwise_low: 0.33,
                otherwise_high: 3.0,
            },
            source: "as commit_device.flush_ms, for the pool's disks when a log device takes the log blocks; not calibrated (no sync run on a log device tells it apart)",
        },
        remote_range: None,
        bounds: FLUSH_BOUNDS,
        remote_bounds: None,
        calibrated: false,
        moves: Moves::Always,
        probe_scale: 1.0,
        integer: false,
        device: Some(DeviceRole::PoolDisk),
        components: &["pool.disk"],
        carry: Carry::Ratio,
        held_by_fit_of: None,
        not_applicable: pool_flush_not_applicable,
        get: pool_flush,
        set: set_pool_flush,
    },
    ParamRow {
        param: Param::ServerCpuUsPerMib,
        path: "server.cpu_us_per_mib",
        unit: "µs/MiB",
        doc: "server CPU per MiB of a request beyond 4 KiB, µs",
        default: "780 (CPU_US_PER_MIB.typical)",
        range: Ranged {
            rule: RangeRule::Sourced(CPU_US_PER_MIB),
            source: "700-1,430 us/MiB: one stream of cached reads at 1.30-1.42 GB/s (openzfs/zfs#7896, #6518), 1.43 ms a cached 1 MiB read with ten jobs (#8066)",
        },
        remote_range: None,
        bounds: Bounds {
            low: 50.0,
            high: 10_000.0,
            low_source: "a MiB is copied once at least: 129 us at 8.1 GB/s, the fastest page-cache copy measured here (examples/systems/this-machine-ext4.toml's dd), and 50 allows a core 2.5 times as fast",
            high_source: "x7 the slowest published, 1,430 us a cached 1 MiB read (openzfs/zfs#8066): a core would move 100 MiB/s",
        },
        remote_bounds: None,
        calibrated: false,
        moves: Moves::RequestsOver4K,
        probe_scale: 780.0,
        integer: false,
        device: None,
        components: &["server.cpu_us_per_mib"],
        carry: Carry::Ratio,
        held_by_fit_of: None,
        not_applicable: applies_always,
        get: |_, sys| Ok(Some(sys.server_cpu_ns_per_mib as f64 / 1e3)),
        set: |m, v| {
            m.server.cpu_us_per_mib = v;
            Ok(true)
        },
    },
    ParamRow {
        param: Param::ServerCpuContention,
        path: "server.cpu_contention",
        unit: "share",
        doc: "server CPU work's growth per other busy core, share",
        default: "0.17 (CPU_CONTENTION.typical)",
        range: Ranged {
            rule: RangeRule::Sourced(CPU_CONTENTION),
            source: "0.08-0.26 per other busy core: cached reads at 1 and 4 threads on one 4-core box, x2.24-x2.86 (openzfs/zfs#7896), with and without the lower all-core clock",
        },
        remote_range: None,
        bounds: Bounds {
            low: 1e-4,
            high: 1.0,
            low_source: "none: 1e-4 stands for 0, which a search in log space cannot take",
            high_source: "a request's work doubled per other busy core; the published figures are 0.08-0.26 a core (CPU_CONTENTION)",
        },
        remote_bounds: None,
        calibrated: false,
        moves: Moves::SeveralThreads,
        probe_scale: 0.1,
        integer: false,
        device: None,
        components: &["server.cpu_contention", "server.cores"],
        carry: Carry::Ratio,
        held_by_fit_of: None,
        not_applicable: applies_always,
        get: |_, sys| Ok(Some(sys.cpu_contention)),
        set: |m, v| {
            m.server.cpu_contention = v;
            Ok(true)
        },
    },
    ParamRow {
        param: Param::ServerCommitCpuUs,
        path: "server.commit_cpu_us",
        unit: "µs",
        doc: "ZFS software per zil_commit with work to do, µs",
        default: "72 (COMMIT_CPU_US.typical)",
        range: Ranged {
            rule: RangeRule::Sourced(COMMIT_CPU_US),
            source: "49-107 us, the two published measurements of it, around their geometric middle 72: a 4 KiB O_SYNC write on ZFS with a persistent-memory log less the sync=disabled write and the raw device (PS-101 - PS-101's control - PS-103, Linux 5.9, 2021); the same Optane M10 as a pool and as a raw device less the request's CPU (PS-005 - PS-043, TrueNAS SCALE, 2023)",
        },
        remote_range: None,
        bounds: Bounds {
            low: 5.0,
            high: 2000.0,
            low_source: "a commit with work assigns an itx list, an lwb and its zio: more than the 4.7 us of a whole 4 KiB ZFS write with sync=disabled, system call included (PS-101's control)",
            high_source: "x19 the slowest published, 107 us (PS-005 - PS-043): a core would commit 500 times a second",
        },
        remote_bounds: None,
        calibrated: false,
        moves: Moves::Writes,
        probe_scale: 72.0,
        integer: false,
        device: None,
        components: &["server.commit_cpu_us"],
        carry: Carry::Ratio,
        held_by_fit_of: Some(Param::CommitFlushMs),
        not_applicable: applies_always,
        get: |_, sys| Ok(Some(sys.commit_cpu_ns as f64 / 1e3)),
        set: |m, v| {
            m.server.commit_cpu_us = v;
            Ok(true)
        },
    },
    ParamRow {
        param: Param::LogMirrorFlushMs,
        path: "log_mirror.flush_ms",
        unit: "ms",
        doc: "flush of a mirrored log device's second member, ms",
        default: "the member's model (its class, table or `tankbench slog` measurement)",
        range: Ranged {
            rule: RangeRule::DeviceClass {
                otherwise_low: 0.33,
                otherwise_high: 3.0,
            },
            source: "as commit_device.flush_ms, drawn apart from it: two devices of one class are two devices (PS-104's mirror of an OCZ Trion 150 and an Intel 540, both consumer SATA SSDs); not calibrated (a sync run measures the slower member only)",
        },
        remote_range: None,
        bounds: FLUSH_BOUNDS,
        remote_bounds: None,
        calibrated: false,
        moves: Moves::Always,
        probe_scale: 1.0,
        integer: false,
        device: Some(DeviceRole::LogMirror),
        components: &["log_mirror"],
        carry: Carry::Ratio,
        held_by_fit_of: None,
        not_applicable: log_mirror_flush_not_applicable,
        get: log_mirror_flush,
        set: set_log_mirror_flush,
    },
];

impl Param {
    /// Calibration's parameters, in identification order.
    pub const ALL: [Param; 5] = [
        Param::CommitFlushMs,
        Param::ServerCpuUs,
        Param::RttMs,
        Param::FsyncRoundTrips,
        Param::ClientCpuUs,
    ];

    /// Every parameter, in the table's order: those an interval samples
    /// (crate::uncertainty) and a design's columns.
    pub const SAMPLED: [Param; 10] = [
        Param::CommitFlushMs,
        Param::ServerCpuUs,
        Param::RttMs,
        Param::FsyncRoundTrips,
        Param::ClientCpuUs,
        Param::PoolDiskFlushMs,
        Param::ServerCpuUsPerMib,
        Param::ServerCpuContention,
        Param::ServerCommitCpuUs,
        Param::LogMirrorFlushMs,
    ];

    /// The parameter's row.
    pub fn row(self) -> &'static ParamRow {
        &PARAMS[self as usize]
    }

    /// The name in a profile: the system file's field it replaces.
    pub fn name(self) -> &'static str {
        self.row().path
    }

    /// A profile's parameter by name: calibration's ([`Param::ALL`]) only.
    pub fn from_name(name: &str) -> Option<Param> {
        Param::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Calibration's parameter names, for messages.
    pub fn accepted() -> String {
        Param::ALL.map(Param::name).join(", ")
    }

    /// What the value means, for reports.
    pub fn describe(self) -> &'static str {
        self.row().doc
    }

    /// The values it may hold for a client of `access` (see
    /// [`ParamRow::bounds`]).
    pub fn bounds(self, access: Protocol) -> Bounds {
        let row = self.row();
        match row.remote_bounds {
            Some(b) if access != Protocol::Local => b,
            _ => row.bounds,
        }
    }

    /// The values it may hold for some client: what a profile, read before
    /// it meets a system, is held to.
    pub fn any_bounds(self) -> (f64, f64) {
        let row = self.row();
        row.remote_bounds
            .iter()
            .fold((row.bounds.low, row.bounds.high), |(lo, hi), b| {
                (lo.min(b.low), hi.max(b.high))
            })
    }

    /// Which bound `value` sits at for a client of `access`, if any: within
    /// [`AT_BOUND_LN`] of it in log space, or past it.
    pub fn at_bound(self, access: Protocol, value: f64) -> Option<BoundSide> {
        let b = self.bounds(access);
        if value <= b.low * AT_BOUND_LN.exp() {
            Some(BoundSide::Low)
        } else if value >= b.high * (-AT_BOUND_LN).exp() {
            Some(BoundSide::High)
        } else {
            None
        }
    }

    pub(crate) fn probe_scale(self) -> f64 {
        self.row().probe_scale
    }

    pub(crate) fn is_integer(self) -> bool {
        self.row().integer
    }

    /// The range an interval samples for a client of `access`, with its
    /// source.
    pub fn range(self, access: Protocol) -> Ranged {
        let row = self.row();
        match row.remote_range {
            Some(r) if access != Protocol::Local => r,
            _ => row.range,
        }
    }
}

/// Why `p` does not apply to `model`, or `None` when it does.
pub(crate) fn not_applicable(model: &SystemModel, p: Param) -> Result<Option<String>, SimError> {
    (p.row().not_applicable)(model)
}

/// The value `model` gives `p`, defaults applied (`None` when `p` does not
/// apply to it).
pub fn current_value(model: &SystemModel, p: Param) -> Result<Option<f64>, SimError> {
    if not_applicable(model, p)?.is_some() {
        return Ok(None);
    }
    let sys = model.resolve()?;
    (p.row().get)(model, &sys)
}

/// Set `p` to `value` in `model`; `Ok(false)` when `p` does not apply to it.
pub fn set_value(model: &mut SystemModel, p: Param, value: f64) -> Result<bool, SimError> {
    if not_applicable(model, p)?.is_some() {
        return Ok(false);
    }
    (p.row().set)(model, value)
}

fn applies_always(_: &SystemModel) -> Result<Option<String>, SimError> {
    Ok(None)
}

/// The model of a device as the system gives it (a built-in by name, or its
/// own table), `field` naming it in an error.
fn resolve_device(d: &DeviceSpec, field: &str) -> Result<ModelParams, SimError> {
    match d {
        DeviceSpec::Model(m) => Ok(m.clone()),
        DeviceSpec::Name(n) => ModelParams::builtin(n).map(|(_, m)| m).ok_or_else(|| {
            SimError::Field(crate::FieldError::new(
                field,
                format!("unknown device '{n}' (resolve the system first)"),
            ))
        }),
    }
}

/// Whether log blocks go to a log device of their own.
pub(crate) fn separate_log(model: &SystemModel) -> bool {
    match &model.log {
        None => false,
        Some(d) => !d.is_none(),
    }
}

/// The device log blocks go to, as the model resolves it: the log device,
/// or the pool's disk when there is none.
fn commit_device(model: &SystemModel) -> Result<(bool, ModelParams), SimError> {
    if separate_log(model) {
        if let Some(d) = &model.log {
            return Ok((true, resolve_device(d, "log")?));
        }
    }
    Ok((false, resolve_device(&model.pool.disk, "pool.disk")?))
}

/// The system's entry for the device `role` is about, as the system file
/// gives it: a name or a table. An interval reads it to tell a device named
/// by its class from one the user gave figures for.
pub(crate) fn device_entry(model: &SystemModel, role: DeviceRole) -> Option<&DeviceSpec> {
    match role {
        DeviceRole::Commit if separate_log(model) => model.log.as_ref(),
        DeviceRole::Commit | DeviceRole::PoolDisk => Some(&model.pool.disk),
        DeviceRole::LogMirror if separate_log(model) => model.log_mirror.as_ref(),
        DeviceRole::LogMirror => None,
    }
}

/// [`device_entry`], to replace.
pub(crate) fn device_entry_mut(
    model: &mut SystemModel,
    role: DeviceRole,
) -> Option<&mut DeviceSpec> {
    let separate = separate_log(model);
    match role {
        DeviceRole::Commit if separate => model.log.as_mut(),
        DeviceRole::Commit | DeviceRole::PoolDisk => Some(&mut model.pool.disk),
        DeviceRole::LogMirror if separate => model.log_mirror.as_mut(),
        DeviceRole::LogMirror => None,
    }
}

/// The second member of a mirrored log device, as the model resolves it.
fn log_mirror_device(model: &SystemModel) -> Result<Option<ModelParams>, SimError> {
    match device_entry(model, DeviceRole::LogMirror) {
        Some(d) if d.is_none() => Ok(None),
        Some(d) => resolve_device(d, "log_mirror").map(Some),
        None => Ok(None),
    }
}

fn log_mirror_flush_not_applicable(model: &SystemModel) -> Result<Option<String>, SimError> {
    Ok(match log_mirror_device(model)? {
        None => Some("no mirrored log device (log_mirror)".into()),
        Some(ModelParams::Flash(_)) => None,
        Some(ModelParams::Hdd(_)) => Some(
            "the log mirror's second member is a disk model whose flush follows from its own mechanics"
                .into(),
        ),
        Some(ModelParams::None) => Some("the log mirror's second member is 'none' (no latency)".into()),
    })
}

fn log_mirror_flush(model: &SystemModel, _: &System) -> Result<Option<f64>, SimError> {
    Ok(match log_mirror_device(model)? {
        Some(ModelParams::Flash(f)) => Some(f.flush_ms),
        _ => None,
    })
}

fn set_log_mirror_flush(model: &mut SystemModel, value: f64) -> Result<bool, SimError> {
    let Some(ModelParams::Flash(mut flash)) = log_mirror_device(model)? else {
        return Ok(false);
    };
    flash.flush_ms = value;
    model.log_mirror = Some(DeviceSpec::Model(ModelParams::Flash(flash)));
    Ok(true)
}

/// The write + flush range of the flash device an entry names by class: its
/// class's, or every power-loss-protected class's for a log device of
/// unknown kind (`flash-unknown`). `None` for a device given by its figures, a hard disk
/// (its flush follows from its mechanics) and a built-in that is no class.
pub(crate) fn named_flash_range(entry: &DeviceSpec) -> Option<Estimate> {
    match entry {
        DeviceSpec::Name(name) if name.trim().eq_ignore_ascii_case(UNKNOWN_FLASH) => {
            Some(DiskClass::log_flash_write_flush_ms())
        }
        DeviceSpec::Name(name) => DiskClass::parse(name).ok()?.write_flush_ms(),
        DeviceSpec::Model(_) => None,
    }
}

fn commit_flush_not_applicable(model: &SystemModel) -> Result<Option<String>, SimError> {
    let (log, device) = commit_device(model)?;
    let which = if log { "log" } else { "pool.disk" };
    Ok(match device {
        ModelParams::Flash(_) => None,
        ModelParams::Hdd(_) => Some(format!(
            "the commit device ({which}) is a disk model whose flush follows from its own mechanics"
        )),
        ModelParams::None => Some(format!(
            "the commit device ({which}) is 'none' (no latency to fit)"
        )),
    })
}

fn commit_flush(model: &SystemModel, _: &System) -> Result<Option<f64>, SimError> {
    Ok(match commit_device(model)?.1 {
        ModelParams::Flash(f) => Some(f.flush_ms),
        _ => None,
    })
}

fn set_commit_flush(model: &mut SystemModel, value: f64) -> Result<bool, SimError> {
    let (on_log, device) = commit_device(model)?;
    let ModelParams::Flash(mut flash) = device else {
        return Ok(false);
    };
    flash.flush_ms = value;
    let spec = DeviceSpec::Model(ModelParams::Flash(flash));
    if on_log {
        model.log = Some(spec);
    } else {
        model.pool.disk = spec;
    }
    Ok(true)
}

fn pool_flush_not_applicable(model: &SystemModel) -> Result<Option<String>, SimError> {
    if !commit_device(model)?.0 {
        return Ok(Some(
            "no log device: the pool's disk is the commit device (commit_device.flush_ms)".into(),
        ));
    }
    Ok(match resolve_device(&model.pool.disk, "pool.disk")? {
        ModelParams::Flash(_) => None,
        ModelParams::Hdd(_) => Some(
            "the pool's disk is a disk model whose flush follows from its own mechanics".into(),
        ),
        ModelParams::None => Some("the pool's disk is 'none' (no latency)".into()),
    })
}

fn pool_flush(model: &SystemModel, _: &System) -> Result<Option<f64>, SimError> {
    Ok(match resolve_device(&model.pool.disk, "pool.disk")? {
        ModelParams::Flash(f) => Some(f.flush_ms),
        _ => None,
    })
}

fn set_pool_flush(model: &mut SystemModel, value: f64) -> Result<bool, SimError> {
    let ModelParams::Flash(mut flash) = resolve_device(&model.pool.disk, "pool.disk")? else {
        return Ok(false);
    };
    flash.flush_ms = value;
    model.pool.disk = DeviceSpec::Model(ModelParams::Flash(flash));
    Ok(true)
}

/// A number as the table prints it: up to four decimals, no trailing
/// zeros.
pub(crate) fn num(v: f64) -> String {
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() {
        "0".into()
    } else {
        s.to_string()
    }
}

fn range_text(r: &Ranged) -> String {
    match r.rule {
        RangeRule::Sourced(s) => format!("{}–{} (typical {})", num(s.low), num(s.high), num(s.typical)),
        RangeRule::Relative { low, high } => format!("×{}–×{} of the system's value", num(low), num(high)),
        RangeRule::DeviceClass {
            otherwise_low,
            otherwise_high,
        } => format!(
            "the device class's published write + flush range; ×{}–×{} for a built-in that is no class",
            num(otherwise_low),
            num(otherwise_high)
        ),
    }
}

fn bounds_text(b: &Bounds) -> String {
    format!(
        "{}–{} (low: {}; high: {})",
        num(b.low),
        num(b.high),
        b.low_source,
        b.high_source
    )
}

/// The parameter table of docs/model-reference.md, generated from
/// [`PARAMS`].
pub fn markdown_table() -> String {
    let mut s = String::from(
        "| parameter | unit | meaning | default | interval range (source) | bounds | calibrated | sampled when |\n|---|---|---|---|---|---|---|---|\n",
    );
    for row in &PARAMS {
        let mut range = format!("{} ({})", range_text(&row.range), row.range.source);
        if let Some(r) = &row.remote_range {
            range.push_str(&format!(
                "; over NFS, iSCSI or SMB: {} ({})",
                range_text(r),
                r.source
            ));
        }
        let moves = match row.moves {
            Moves::Always => "always",
            Moves::RequestsOver4K => "requests over 4 KiB",
            Moves::SeveralThreads => "more than one thread",
            Moves::Writes => "the workload writes",
        };
        let mut bounds = bounds_text(&row.bounds);
        if let Some(b) = &row.remote_bounds {
            bounds = format!(
                "local: {bounds}; over NFS, iSCSI or SMB: {}",
                bounds_text(b)
            );
        }
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
            row.path,
            if row.unit.is_empty() { "—" } else { row.unit },
            row.doc,
            row.default,
            range,
            bounds,
            if row.calibrated { "yes" } else { "no" },
            moves
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_is_its_params_and_the_lists_follow_the_table() {
        for (i, row) in PARAMS.iter().enumerate() {
            assert_eq!(row.param as usize, i, "{}", row.path);
            assert_eq!(row.param.row().path, row.path);
        }
        let calibrated: Vec<Param> = PARAMS
            .iter()
            .filter(|r| r.calibrated)
            .map(|r| r.param)
            .collect();
        assert_eq!(calibrated, Param::ALL.to_vec());
        let all: Vec<Param> = PARAMS.iter().map(|r| r.param).collect();
        assert_eq!(all, Param::SAMPLED.to_vec());
    }

    #[test]
    fn names_round_trip_and_only_calibrations_are_profile_names() {
        for p in Param::ALL {
            assert_eq!(Param::from_name(p.name()), Some(p));
        }
        assert_eq!(Param::from_name("server.ram"), None);
        assert_eq!(Param::from_name("pool.disk.flush_ms"), None);
    }

    #[test]
    fn every_typical_sits_inside_its_range_and_bounds() {
        for row in &PARAMS {
            for access in [Protocol::Local, Protocol::LinuxNfs] {
                let b = row.param.bounds(access);
                assert!(b.low < b.high, "{}", row.path);
                assert!(!b.low_source.is_empty() && !b.high_source.is_empty());
                let r = row.param.range(access);
                if let RangeRule::Sourced(s) = r.rule {
                    assert!(s.low <= s.typical && s.typical <= s.high, "{}", row.path);
                    assert!(b.low <= s.low && s.high <= b.high, "{}", row.path);
                }
                assert!(b.low <= row.probe_scale && row.probe_scale <= b.high);
                let (lo, hi) = row.param.any_bounds();
                assert!(lo <= b.low && b.high <= hi, "{}", row.path);
            }
        }
    }

    #[test]
    fn a_value_at_or_past_a_bound_sits_at_it() {
        let p = Param::RttMs;
        let b = p.bounds(Protocol::LinuxNfs);
        assert_eq!(p.at_bound(Protocol::LinuxNfs, b.low), Some(BoundSide::Low));
        assert_eq!(
            p.at_bound(Protocol::LinuxNfs, b.low * 1.005),
            Some(BoundSide::Low)
        );
        assert_eq!(p.at_bound(Protocol::LinuxNfs, b.low * 1.05), None);
        assert_eq!(
            p.at_bound(Protocol::LinuxNfs, b.high),
            Some(BoundSide::High)
        );
        assert_eq!(p.at_bound(Protocol::LinuxNfs, 1e-9), Some(BoundSide::Low));
        // A remote server's floor is above a local one's.
        let cpu = Param::ServerCpuUs;
        assert!(cpu.bounds(Protocol::EsxiNfs).low > cpu.bounds(Protocol::Local).low);
        assert_eq!(cpu.at_bound(Protocol::Local, 1.0), None);
        assert_eq!(cpu.at_bound(Protocol::EsxiNfs, 1.0), Some(BoundSide::Low));
    }
}

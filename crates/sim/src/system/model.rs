//! The system as a user writes it: a TOML file whose every field is
//! optional with a documented default ([`SystemModel`] and its sections),
//! read and written here. `resolve` applies the defaults.

use std::path::Path;

use serde::{Deserialize, Serialize};
use zfs_model::diskmodel::ModelParams;

use super::behaviours::{CpuService, Logbias, SyncProperty, ZilBatching};
use super::measured_log::measured_log;
use super::presets::{LogWriterCosts, Platform, Protocol};
use super::values::{Layout, LinkRate, Size};
use crate::sourced_ranges::{COMMIT_CPU_US, CPU_CONTENTION, CPU_US_PER_MIB, SERVER_CPU_US_LOCAL};
use crate::{FieldError, SimError};

/// The fields that name a log device, and so may be a measured one.
const LOG_DEVICE_FIELDS: [&str; 2] = ["log", "log_mirror"];

/// The `measured` path of a system file's `field` table (`log`,
/// `log_mirror`), if it has one.
fn measured_log_path<'t>(
    table: &'t toml::Table,
    field: &str,
) -> Result<Option<&'t str>, FieldError> {
    let Some(toml::Value::Table(log)) = table.get(field) else {
        return Ok(None);
    };
    let Some(value) = log.get("measured") else {
        return Ok(None);
    };
    if let Some(other) = log.keys().find(|k| *k != "measured") {
        return Err(FieldError::new(
            field,
            format!(
                "a measured log device takes only `measured` (the slog result file), got `{other}` too"
            ),
        ));
    }
    match value.as_str() {
        Some(p) if !p.trim().is_empty() => Ok(Some(p)),
        _ => Err(FieldError::new(
            format!("{field}.measured"),
            "must be the path of a `tankbench slog` result file (JSON), relative to the system file",
        )),
    }
}

/// `log` as a system document gives it: a [`DeviceSpec`], or a measured
/// device, read here relative to the current directory. This is the path
/// of a document that is not a file's text (a matrix's cell, built from
/// its base as a TOML value); a system file's text is read by
/// [`SystemModel::from_toml_in`], which reads the measurement relative to
/// the file before this sees it.
fn log_device<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<DeviceSpec>, D::Error> {
    /// Named as the public type, so an unmatched table's message is the one
    /// the derived type gives ("... of untagged enum DeviceSpec").
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum DeviceSpec {
        Name(String),
        Measured(Measured),
        Model(ModelParams),
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Measured {
        measured: String,
    }
    Ok(Some(match DeviceSpec::deserialize(d)? {
        DeviceSpec::Name(n) => self::DeviceSpec::Name(n),
        DeviceSpec::Model(m) => self::DeviceSpec::Model(m),
        DeviceSpec::Measured(m) => self::DeviceSpec::Model(ModelParams::Flash(
            measured_log(Path::new(&m.measured)).map_err(serde::de::Error::custom)?,
        )),
    }))
}

/// A device: a disk class name (`plan --class` names, or `none` for no
/// added latency) or a model with its own parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DeviceSpec {
    Name(String),
    Model(ModelParams),
}

impl DeviceSpec {
    /// `none`: no device (a log field that says there is no log device).
    pub(crate) fn is_none(&self) -> bool {
        matches!(self, DeviceSpec::Name(n) if n.trim().eq_ignore_ascii_case("none"))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClientModel {
    pub protocol: Protocol,
    /// Default: [`Protocol::default_fsync_round_trips`].
    pub fsync_round_trips: Option<u32>,
    /// Default: [`Protocol::default_client_cpu_us`].
    pub cpu_us: Option<f64>,
    /// Whether every data write is sent stable (NFS FILE_SYNC, SCSI FUA,
    /// SMB2 WRITE_THROUGH). Default: [`Protocol::default_stable_writes`].
    pub stable_writes: Option<bool>,
    /// The client's page cache for the file set (a size, `0` for none).
    /// Default: [`Protocol::default_page_cache`].
    pub page_cache: Option<Size>,
    /// Time a read served from the page cache takes, microseconds.
    pub cache_hit_us: f64,
    /// How `cpu_us` and `cache_hit_us` vary per request.
    pub cpu_service: CpuService,
    /// The guest's file system under a hypervisor client (`ext4`, `none`):
    /// what a guest fsync and fdatasync become
    /// ([`GuestFs::sync`](super::GuestFs::sync)). Default:
    /// [`Protocol::default_guest_fs`], ext4 under ESXi. Checked on every
    /// client, applied only under ESXi.
    pub guest_fs: Option<String>,
}

impl Default for ClientModel {
    fn default() -> Self {
        ClientModel {
            protocol: Protocol::Local,
            fsync_round_trips: None,
            cpu_us: None,
            stable_writes: None,
            page_cache: None,
            cache_hit_us: 5.0,
            cpu_service: CpuService::Exponential,
            guest_fs: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkModel {
    /// `[COUNTx]RATE` as `plan --link` takes it.
    pub link: LinkRate,
    /// Default: the typical small-request round trip of the link's class
    /// (`zfs_model::network::Link::round_trip_ms`).
    pub rtt_ms: Option<f64>,
    /// How much one message's trip varies around the mean, as a fraction
    /// (uniform in mean × [1 − spread, 1 + spread]). Default: the spread of
    /// the measured range behind the link class's round trip,
    /// (high − low) / (2 × typical) of `Link::round_trip_ms`.
    pub rtt_spread: Option<f64>,
}

impl Default for LinkModel {
    fn default() -> Self {
        LinkModel {
            link: "1G".into(),
            rtt_ms: None,
            rtt_spread: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerModel {
    pub ram: Size,
    /// Share of RAM the ARC may hold: zfs_arc_max defaults to half of RAM on
    /// Linux before OpenZFS 2.3 (zfs(4), zfs_arc_max).
    pub arc_fraction: f64,
    /// The ZFS code base (`openzfs-2.2`, `freenas-11`, ...): the default of
    /// `zil` and `nfs_sync_honoured`. Default: none, today's OpenZFS.
    pub platform: Option<Platform>,
    /// CPU time per request on the server (RPC, ZPL, DMU), microseconds,
    /// for a 4 KiB request on one otherwise idle core. Default 11: the
    /// geometric middle of what sources outside the validation set span,
    /// 6.9 µs (4 KiB cached reads, 4 jobs, OpenZFS 2.x, openzfs/zfs#10018)
    /// to 19 µs (4 KiB cached random reads, 32 jobs on a 40-core NUMA box,
    /// a contended upper bound, openzfs/zfs#3752); one thread of 8 KiB
    /// buffered writes took 13 µs on ZoL 0.6.3 and 15 µs on FreeBSD 10
    /// (open and close included, openzfs/zfs#2431). docs/model-reference.md,
    /// "Server CPU per request".
    pub cpu_us: f64,
    /// CPU time per MiB a read or write moves between the caller and the
    /// ARC (the copy in and out of the ARC's buffers), charged for the part
    /// of a request beyond the 4 KiB at which `cpu_us` was measured (so
    /// 4 KiB requests cost exactly `cpu_us`), microseconds. Default 780:
    /// one stream of cached reads runs at 1.30-1.42 GB/s (openzfs/zfs#7896,
    /// i7-7700HQ, lz4 and gzip with and without compressed ARC, 1,298-1,424
    /// MB/s; #6518, "limited to 1.3 GB/s"); range 700-1,430 (the 1.43 ms a
    /// 1 MiB cached read took with ten jobs at once, #8066). Without it a
    /// 1 MiB cached request would cost what a 4 KiB one does.
    pub cpu_us_per_mib: f64,
    /// ZFS software time of one `zil_commit` that has log records to write
    /// or a log block to wait for (itx assignment, lwb allocation, the log
    /// write and flush zios through the taskqs), microseconds, on a core.
    /// Default and range: [`COMMIT_CPU_US`] (49-107, the two published
    /// measurements, around their geometric middle).
    pub commit_cpu_us: f64,
    /// Time the writer of a log block spends on it beyond its devices'
    /// time, microseconds; with `device_request_us`, what one batch of
    /// commits costs a platform whose commit path is slower than the
    /// kernel's. Default 0: kernel ZFS, whose software per commit is
    /// `commit_cpu_us`. zfs-fuse hands a log block to its taskqs, flushes
    /// each disk with an fsync(2) of its own, one after another, and every
    /// device request is a round trip through FUSE: the lab sets both for
    /// its zfs-fuse (`sim::system::zfs_fuse_commit_costs`;
    /// docs/model-reference.md, "A log block's writer").
    pub log_block_us: f64,
    /// Time the writer of a log block spends on each device request the
    /// block makes (a write to each disk it occupies, each flush),
    /// microseconds. Default 0 (kernel ZFS); see `log_block_us`.
    pub device_request_us: f64,
    /// Time the writer of a log block spends on each commit the block
    /// carries beyond the first, microseconds: the commits that rode it are
    /// woken together when it is done, each takes the log's lock and
    /// replies, and the next writer is one of them. Default 0 (kernel ZFS);
    /// see `log_block_us`.
    pub log_commit_us: f64,
    /// Share by which a piece of CPU work on the server takes longer for
    /// each other core busy when it starts: the contention of shared locks,
    /// counters and cache lines (`arcs_mtx`, atomic ARC accounting,
    /// openzfs/zfs#3752) that one figure per request cannot carry from one
    /// thread to many. Default 0.17, range 0.08-0.26: one box, cached reads
    /// at 1 and at 4 threads on its 4 cores (openzfs/zfs#7896, i7-7700HQ:
    /// x2.24-x2.86 from 1 to 4 threads), less the lower clock of 4 busy
    /// cores (turbo 3.8 GHz on one, 3.4 on all four); docs/model-reference.md,
    /// "CPU contention". 0 turns it off.
    pub cpu_contention: f64,
    /// Cores serving requests at once.
    pub cores: u32,
    pub cpu_service: CpuService,
    pub sync: SyncProperty,
    /// The dataset's `logbias`: `latency` (default, zfsprops(7)) or
    /// `throughput` (WR_INDIRECT records; docs/model-reference.md, "Indirect
    /// writes").
    pub logbias: String,
    /// Default: the platform's, pipelined without one.
    pub zil: Option<ZilBatching>,
    /// Whether a stable NFS WRITE commits before its reply. Default: the
    /// platform's, true without one.
    pub nfs_sync_honoured: Option<bool>,
    /// `zfs_txg_timeout` (zfs(4)): a txg syncs at least this often, seconds.
    pub txg_timeout_s: f64,
    /// `zfs_dirty_data_max` (zfs(4)): dirty data at which writers wait for
    /// a txg to sync. Default: 10 % of RAM, at most `zfs_dirty_data_max_max`
    /// = min(4 GiB, 25 % of RAM).
    pub dirty_data_max: Option<Size>,
    /// `zfs_dirty_data_sync_percent` (zfs(4)): a txg syncs early once this
    /// share of `dirty_data_max` is dirty.
    pub dirty_data_sync_percent: f64,
    /// `zfs_delay_min_dirty_percent` (zfs(4)): above this share of
    /// `dirty_data_max` every write is delayed (dmu_tx_delay).
    pub delay_min_dirty_percent: f64,
    /// `zfs_delay_scale` (zfs(4)), ns: the delay at the curve's midpoint.
    pub delay_scale_ns: u64,
    /// `zfs_vdev_async_write_min_active` / `_max_active` (zfs(4)): txg
    /// writes in flight per disk, rising from min to max as dirty data goes
    /// from `vdev_async_write_active_min_dirty_percent` to `_max_`.
    pub vdev_async_write_min_active: u32,
    pub vdev_async_write_max_active: u32,
    pub vdev_async_write_active_min_dirty_percent: f64,
    pub vdev_async_write_active_max_dirty_percent: f64,
    /// `zfs_vdev_aggregation_limit` (zfs(4)): largest txg write to one disk.
    /// Default: 1M for hard disks, 128K for flash
    /// (`zfs_vdev_aggregation_limit_non_rotating`).
    pub vdev_aggregation_limit: Option<Size>,
}

impl ServerModel {
    /// A server whose log block writer costs `costs` beyond its devices.
    pub fn set_log_writer(&mut self, costs: LogWriterCosts) {
        self.log_block_us = costs.block_us;
        self.device_request_us = costs.request_us;
        self.log_commit_us = costs.commit_us;
    }
}

impl Default for ServerModel {
    fn default() -> Self {
        ServerModel {
            ram: "32G".into(),
            arc_fraction: 0.5,
            platform: None,
            cpu_us: SERVER_CPU_US_LOCAL.typical,
            cpu_us_per_mib: CPU_US_PER_MIB.typical,
            commit_cpu_us: COMMIT_CPU_US.typical,
            log_block_us: 0.0,
            device_request_us: 0.0,
            log_commit_us: 0.0,
            cpu_contention: CPU_CONTENTION.typical,
            cores: 4,
            cpu_service: CpuService::Exponential,
            sync: SyncProperty::Standard,
            logbias: Logbias::Latency.name().into(),
            zil: None,
            nfs_sync_honoured: None,
            txg_timeout_s: 5.0,
            dirty_data_max: None,
            dirty_data_sync_percent: 20.0,
            delay_min_dirty_percent: 60.0,
            delay_scale_ns: 500_000,
            vdev_async_write_min_active: 2,
            vdev_async_write_max_active: 10,
            vdev_async_write_active_min_dirty_percent: 30.0,
            vdev_async_write_active_max_dirty_percent: 60.0,
            vdev_aggregation_limit: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PoolModel {
    /// A layout as `plan --layout` takes it, e.g. `3xraidz2-8`.
    pub layout: Layout,
    pub disk: DeviceSpec,
    /// Marketed capacity of one disk (`8TB` is read by the IDEMA rule).
    pub disk_size: Size,
    /// The dataset's `recordsize` (file protocols and local).
    pub recordsize: Size,
    /// The zvol's `volblocksize`, the block an `iscsi` client's data lives
    /// in. Default 16K (zfsprops(7); OpenZFS 2.2 raised it from 8K).
    pub volblocksize: Option<Size>,
}

impl Default for PoolModel {
    fn default() -> Self {
        PoolModel {
            layout: "1xmirror-2".into(),
            disk: DeviceSpec::Name("hdd-7200".into()),
            disk_size: "8TB".into(),
            recordsize: "128K".into(),
            volblocksize: None,
        }
    }
}

/// A system as written in a TOML file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct SystemModel {
    /// Shown in the report's header and labels.
    pub name: String,
    pub client: ClientModel,
    pub link: LinkModel,
    pub server: ServerModel,
    pub pool: PoolModel,
    /// Separate intent-log device (SLOG); `none` puts the ZIL in the pool;
    /// `{ measured = "slog.json" }` a device measured by `tankbench slog`,
    /// read when the system is and held as its flash model
    /// ([`SystemModel::from_toml_in`]).
    #[serde(deserialize_with = "log_device")]
    pub log: Option<DeviceSpec>,
    /// The second member of a mirrored log device (`zpool add POOL log
    /// mirror A B`, with `log` as A): a class name or a model, as `log`
    /// takes (a measured one is read relative to the current directory).
    /// Every log block is written and flushed on both members and is done
    /// when the slower is (a mirror's write zio completes when all its
    /// children have, vdev_mirror.c). Unset: one log device.
    #[serde(
        deserialize_with = "log_device",
        skip_serializing_if = "Option::is_none"
    )]
    pub log_mirror: Option<DeviceSpec>,
}

/// toml's messages span lines (they quote the input); keep the first.
fn toml_error(e: &toml::de::Error) -> SimError {
    SimError::Toml(
        e.message()
            .lines()
            .next()
            .unwrap_or("unreadable")
            .to_string(),
    )
}

impl SystemModel {
    /// A system file's text. A measured log device
    /// (`log = { measured = "slog.json" }`) is read relative to the current
    /// directory; [`SystemModel::from_toml_in`] takes the file's own.
    pub fn from_toml(text: &str) -> Result<SystemModel, SimError> {
        SystemModel::from_toml_in(text, Path::new("."))
    }

    /// A system file's text, `dir` the directory the file is in: a measured
    /// log device's path is relative to it. The measurement is read and
    /// mapped here, once ([`flash_from_slog`](super::flash_from_slog)): the
    /// model holds the flash model it maps to, so resolving it again reads
    /// no file and [`SystemModel::to_toml`] writes the mapped parameters.
    pub fn from_toml_in(text: &str, dir: &Path) -> Result<SystemModel, SimError> {
        let mut table: toml::Table = toml::from_str(text).map_err(|e| toml_error(&e))?;
        let mut measured = Vec::new();
        for field in LOG_DEVICE_FIELDS {
            if let Some(path) = measured_log_path(&table, field)? {
                measured.push((field, path.to_string()));
            }
        }
        if measured.is_empty() {
            // No measured device: the text as it is, so every message is
            // serde's own on the text.
            return toml::from_str(text).map_err(|e| toml_error(&e));
        }
        for (field, path) in measured {
            // "." (or no directory): the path as written, as the user wrote it.
            let path = if dir.as_os_str().is_empty() || dir == Path::new(".") {
                Path::new(&path).to_path_buf()
            } else {
                dir.join(path)
            };
            // measured_log names `log.measured`; the field read here is
            // this one.
            let flash = measured_log(&path).map_err(|mut e| {
                e.field = format!("{field}.measured");
                e
            })?;
            let value = toml::Value::try_from(ModelParams::Flash(flash))
                .map_err(|e| SimError::Toml(e.to_string()))?;
            table.insert(field.into(), value);
        }
        toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| toml_error(&e))
    }

    /// The log vdev in words, for a report's header: `none`, a device's
    /// class (or `custom model`), `A mirrored with B` for a mirror. `sys`
    /// is this system resolved. A name may come from someone else's file:
    /// each is one field, never a line break or a terminal sequence.
    pub fn log_words(&self, sys: &super::System) -> String {
        let device = |d: &Option<DeviceSpec>| match d {
            Some(DeviceSpec::Name(n)) => report::escape::terminal_field(n.trim()),
            _ => "custom model".to_string(),
        };
        match (&sys.log, &sys.log_mirror) {
            (None, _) => "none".to_string(),
            (Some(_), None) => device(&self.log),
            (Some(_), Some(_)) => format!(
                "{} mirrored with {}",
                device(&self.log),
                device(&self.log_mirror)
            ),
        }
    }

    /// The system as a system file (`from_toml` reads it back).
    pub fn to_toml(&self) -> Result<String, SimError> {
        toml::to_string(self).map_err(|e| SimError::Toml(e.to_string()))
    }
}

//! The resolved system the simulator runs ([`System`]) and how a
//! [`SystemModel`] becomes one: every default applied (a preset's row, a
//! sourced constant, a ZFS tunable's default), every word parsed with
//! zfs-model's one vocabulary (layouts, links, disk classes, sizes), and
//! every refusal naming its field.

use zfs_model::diskmodel::{self, ModelParams};
use zfs_model::layout::Shape;
use zfs_model::network::Link;
use zfs_model::units::SizeMeaning;

use super::behaviours::{CpuService, LogWriteRule, Logbias, SyncProperty, ZilBatching};
use super::model::{ClientModel, DeviceSpec, PoolModel, ServerModel, SystemModel};
use super::presets::{GuestFs, Platform, Protocol};
use super::values::Size;
use crate::{FieldError, SimError};

/// The resolved system the simulator runs: every default applied, every
/// word parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct System {
    pub name: String,
    pub protocol: Protocol,
    pub fsync_round_trips: u32,
    pub stable_writes: bool,
    /// The guest's file system under a hypervisor client (`None`: no
    /// guest, the protocol's own flush requests).
    pub guest_fs: Option<GuestFs>,
    /// Stable NFS WRITEs (and an ESXi guest's journal writes) commit the
    /// ZIL; false on ZoL before 0.8 (`server.nfs_sync_honoured`).
    pub nfs_sync_honoured: bool,
    pub page_cache_bytes: u64,
    pub cache_hit_ns: u64,
    pub client_cpu_ns: u64,
    pub client_cpu_service: CpuService,
    /// `None` for a local client.
    pub link: Option<Link>,
    pub rtt_ns: u64,
    pub rtt_spread: f64,
    pub arc_bytes: u64,
    pub server_cpu_ns: u64,
    /// `server.cpu_us_per_mib` in ns per MiB.
    pub server_cpu_ns_per_mib: u64,
    pub commit_cpu_ns: u64,
    /// What a log block's writer spends beyond its devices.
    pub log_writer: LogWriterNs,
    /// A commit flushes its vdevs' children one after another
    /// ([`Platform::flushes_in_turn`]).
    pub flush_in_turn: bool,
    /// `server.cpu_contention`.
    pub cpu_contention: f64,
    pub cpu_service: CpuService,
    pub cores: u32,
    pub sync: SyncProperty,
    pub logbias: Logbias,
    /// The platform's WR_INDIRECT rule ([`Platform::log_write_rule`]).
    pub log_write_rule: LogWriteRule,
    pub zil: ZilBatching,
    pub txg_timeout_ns: u64,
    pub txg: TxgTuning,
    pub shape: Shape,
    pub disk: ModelParams,
    pub disk_bytes: u64,
    pub recordsize: u64,
    pub log: Option<ModelParams>,
    /// The second member of a mirrored log device (with `log` the first).
    pub log_mirror: Option<ModelParams>,
}

/// A log block's writer beyond its devices, ns (0 for kernel ZFS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogWriterNs {
    /// `server.log_block_us`: each block.
    pub block: u64,
    /// `server.device_request_us`: each device request of a block.
    pub request: u64,
    /// `server.log_commit_us`: each commit a block carries beyond its first.
    pub commit: u64,
    /// The writer spends the zil_commit software (`server.commit_cpu_us`)
    /// once a block and the commits waiting for it none, where kernel
    /// platforms spend it in each committer ([`Platform::commit_software_in_writer`]).
    pub runs_commit_software: bool,
}

impl LogWriterNs {
    fn of(server: &ServerModel, platform: Option<Platform>) -> Result<LogWriterNs, FieldError> {
        Ok(LogWriterNs {
            block: micros_to_ns("server.log_block_us", server.log_block_us)?,
            request: micros_to_ns("server.device_request_us", server.device_request_us)?,
            commit: micros_to_ns("server.log_commit_us", server.log_commit_us)?,
            runs_commit_software: platform.is_some_and(Platform::commit_software_in_writer),
        })
    }

    /// Whether the writer costs nothing beyond its devices.
    pub fn is_free(&self) -> bool {
        self.block == 0 && self.request == 0 && self.commit == 0
    }
}

/// The txg and vdev-queue tunables, in bytes and nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxgTuning {
    pub dirty_max: u64,
    /// Open-txg dirty bytes that start a sync early.
    pub sync_bytes: u64,
    /// Dirty bytes above which writes are delayed.
    pub delay_min_bytes: u64,
    pub delay_scale_ns: u64,
    pub async_min_active: u32,
    pub async_max_active: u32,
    pub active_min_bytes: u64,
    pub active_max_bytes: u64,
    pub aggregation: u64,
}

/// `zfs_delay_max_ns` (zfs(4)): the longest a write is delayed, 100 ms.
const DELAY_MAX_NS: u64 = 100_000_000;

impl TxgTuning {
    /// vdev_queue_max_async_writes: the txg writes one disk may have in
    /// flight with `dirty` bytes dirty.
    pub(crate) fn async_active(&self, dirty: u64) -> u32 {
        if dirty <= self.active_min_bytes {
            return self.async_min_active;
        }
        if dirty >= self.active_max_bytes {
            return self.async_max_active;
        }
        let span = u128::from(self.active_max_bytes - self.active_min_bytes).max(1);
        let extra = u128::from(dirty - self.active_min_bytes)
            * u128::from(self.async_max_active.saturating_sub(self.async_min_active))
            / span;
        // extra is below max_active - min_active, a u32.
        #[allow(clippy::cast_possible_truncation)]
        let extra = extra as u32;
        self.async_min_active + extra
    }

    /// dmu_tx_delay's minimum time for a write with `dirty` bytes dirty
    /// (0 below the delay threshold; the caller blocks at `dirty_max`).
    pub(crate) fn delay_ns(&self, dirty: u64) -> u64 {
        if dirty <= self.delay_min_bytes {
            return 0;
        }
        if dirty >= self.dirty_max {
            return DELAY_MAX_NS;
        }
        let d = u128::from(self.delay_scale_ns) * u128::from(dirty - self.delay_min_bytes)
            / u128::from(self.dirty_max - dirty);
        u64::try_from(d).unwrap_or(u64::MAX).min(DELAY_MAX_NS)
    }
}

fn micros_to_ns(field: &str, us: f64) -> Result<u64, FieldError> {
    if !(us.is_finite() && (0.0..=1e9).contains(&us)) {
        return Err(FieldError::new(
            field,
            format!("must be a number of microseconds from 0 to 1e9, got {us}"),
        ));
    }
    // Checked just above: finite, non-negative and at most 1e15 ns.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok((us * 1e3).round() as u64)
}

fn percent_of(field: &str, pct: f64, of: u64) -> Result<u64, FieldError> {
    if !(pct.is_finite() && (0.0..=100.0).contains(&pct)) {
        return Err(FieldError::new(
            field,
            format!("must be a percentage from 0 to 100, got {pct}"),
        ));
    }
    // 0 <= pct <= 100: the product is within 0..=of.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok((of as f64 * pct / 100.0) as u64)
}

impl DeviceSpec {
    fn resolve(&self, field: &str) -> Result<ModelParams, FieldError> {
        let model = match self {
            DeviceSpec::Name(name) => ModelParams::builtin(name)
                .map(|(_, m)| m)
                .ok_or_else(|| {
                    FieldError::new(field, format!("unknown device '{name}'; accepted: {}, or a table with kind = \"hdd\" or \"flash\"",
                        diskmodel::builtin_names().join(", ")
                    ))
                })?,
            DeviceSpec::Model(m) => m.clone(),
        };
        model
            .validate()
            .map_err(|e| FieldError::new(field, e.to_string()))?;
        Ok(model)
    }
}

impl ClientModel {
    /// The client's page cache for the file set, bytes: its own, or its
    /// protocol's; `0` for none.
    fn page_cache_bytes(&self, protocol: Protocol) -> Result<u64, FieldError> {
        let page_cache = self
            .page_cache
            .clone()
            .unwrap_or_else(|| protocol.default_page_cache().into());
        if page_cache.is_zero() {
            return Ok(0);
        }
        page_cache
            .bytes(SizeMeaning::Exact)
            .map_err(|e| FieldError::new("client.page_cache", e.to_string()))
    }
}

impl ClientModel {
    /// `guest_fs` parsed, or the protocol's default; one line naming the
    /// field and what it accepts when the name is unknown. The name is
    /// checked on every client, so a system file keeps its guest part
    /// across a `--client` override, but it applies only under ESXi: on
    /// the other clients fileio's fsync is the protocol's own flush
    /// requests (`client.fsync_round_trips`), and the resolved system has
    /// no guest part.
    fn resolve_guest_fs(&self) -> Result<Option<GuestFs>, FieldError> {
        let protocol = self.protocol;
        let Some(name) = self.guest_fs.as_deref() else {
            return Ok(protocol.default_guest_fs());
        };
        let fs = GuestFs::parse(name).ok_or_else(|| {
            FieldError::new(
                "client.guest_fs",
                format!(
                    "unknown guest file system '{name}'; accepted: {} \
                     (xfs is not modelled: no source for its log writes)",
                    GuestFs::ACCEPTED
                ),
            )
        })?;
        Ok(protocol.is_esxi().then_some(fs))
    }
}

impl ServerModel {
    /// `logbias` parsed; one line naming the field and the accepted values.
    fn resolve_logbias(&self) -> Result<Logbias, FieldError> {
        Logbias::parse(&self.logbias).ok_or_else(|| {
            FieldError::new(
                "server.logbias",
                format!(
                    "unknown value '{}'; accepted: {}",
                    self.logbias.trim(),
                    Logbias::ACCEPTED
                ),
            )
        })
    }

    /// The ARC share, core count and txg timeout within their ranges.
    fn check_ranges(&self) -> Result<(), FieldError> {
        let f = self.arc_fraction;
        if !(f.is_finite() && f > 0.0 && f <= 1.0) {
            return Err(FieldError::new(
                "server.arc_fraction",
                format!("must be above 0 and at most 1, got {f}"),
            ));
        }
        let c = self.cpu_contention;
        if !(c.is_finite() && (0.0..=1.0).contains(&c)) {
            return Err(FieldError::new(
                "server.cpu_contention",
                format!("must be 0 to 1 (a share per other busy core), got {c}"),
            ));
        }
        if !(1..=1024).contains(&self.cores) {
            return Err(FieldError::new(
                "server.cores",
                format!("must be 1 to 1024, got {}", self.cores),
            ));
        }
        let txg = self.txg_timeout_s;
        if !(txg.is_finite() && (0.1..=3600.0).contains(&txg)) {
            return Err(FieldError::new(
                "server.txg_timeout_s",
                format!("must be 0.1 to 3600 seconds, got {txg}"),
            ));
        }
        Ok(())
    }
}

impl PoolModel {
    /// The block a file's data lives in: the dataset's recordsize, or the
    /// zvol's volblocksize for an iSCSI client.
    fn block_size(&self, protocol: Protocol) -> Result<u64, FieldError> {
        // zfsprops(7): volblocksize defaults to 16K since OpenZFS 2.2.
        const DEFAULT_VOLBLOCKSIZE: u64 = 16 << 10;
        let (field, block) = if protocol == Protocol::Iscsi {
            (
                "pool.volblocksize",
                self.volblocksize
                    .clone()
                    .unwrap_or(Size::Bytes(DEFAULT_VOLBLOCKSIZE)),
            )
        } else {
            ("pool.recordsize", self.recordsize.clone())
        };
        let size = block
            .bytes(SizeMeaning::Exact)
            .map_err(|e| FieldError::new(field, e.to_string()))?;
        // zfsprops(7): recordsize and volblocksize are powers of two from
        // 512 B to 16 MiB.
        if !(size.is_power_of_two() && (512..=16 << 20).contains(&size)) {
            return Err(FieldError::new(
                field,
                format!("must be a power of two from 512 to 16M, got {block}"),
            ));
        }
        Ok(size)
    }
}

impl ServerModel {
    fn txg_tuning(&self, ram: u64, disk: &ModelParams) -> Result<TxgTuning, FieldError> {
        let bad = |field: &str, e: &dyn std::fmt::Display| FieldError::new(field, e.to_string());
        let dirty_max = match &self.dirty_data_max {
            Some(v) => v
                .bytes(SizeMeaning::Exact)
                .map_err(|e| bad("server.dirty_data_max", &e))?,
            None => (ram / 10).min((ram / 4).min(4 << 30)),
        }
        .max(1);
        let (lo, hi) = (
            self.vdev_async_write_min_active,
            self.vdev_async_write_max_active,
        );
        if !(1..=1000).contains(&lo) || !(lo..=1000).contains(&hi) {
            return Err(FieldError::new(
                "server.vdev_async_write_min_active and _max_active",
                format!("must be 1 to 1000 with min <= max, got {lo} and {hi}"),
            ));
        }
        let aggregation = match &self.vdev_aggregation_limit {
            Some(v) => v
                .bytes(SizeMeaning::Exact)
                .map_err(|e| bad("server.vdev_aggregation_limit", &e))?,
            None if matches!(disk, ModelParams::Hdd(_)) => 1 << 20,
            None => 128 << 10,
        };
        if !(4096..=16 << 20).contains(&aggregation) {
            return Err(FieldError::new(
                "server.vdev_aggregation_limit",
                format!("must be 4K to 16M, got {aggregation} bytes"),
            ));
        }
        Ok(TxgTuning {
            dirty_max,
            sync_bytes: percent_of(
                "server.dirty_data_sync_percent",
                self.dirty_data_sync_percent,
                dirty_max,
            )?,
            delay_min_bytes: percent_of(
                "server.delay_min_dirty_percent",
                self.delay_min_dirty_percent,
                dirty_max,
            )?,
            delay_scale_ns: self.delay_scale_ns,
            async_min_active: lo,
            async_max_active: hi,
            active_min_bytes: percent_of(
                "server.vdev_async_write_active_min_dirty_percent",
                self.vdev_async_write_active_min_dirty_percent,
                dirty_max,
            )?,
            active_max_bytes: percent_of(
                "server.vdev_async_write_active_max_dirty_percent",
                self.vdev_async_write_active_max_dirty_percent,
                dirty_max,
            )?,
            aggregation,
        })
    }
}

impl SystemModel {
    /// The link (none for a local client), its mean round trip, ms, and
    /// the spread of one trip around it.
    fn resolve_link(&self) -> Result<(Option<Link>, f64, f64), FieldError> {
        let bad = |field: &str, e: &dyn std::fmt::Display| FieldError::new(field, e.to_string());
        let protocol = self.client.protocol;
        let link = if protocol == Protocol::Local {
            None
        } else {
            let link = self.link.link.link().map_err(|e| bad("link.link", &e))?;
            Some(link.ok_or_else(|| {
                FieldError::new(
                    "link.link",
                    format!(
                        "a {} client needs a link; accepted: {}",
                        protocol.name(),
                        Link::ACCEPTED
                    ),
                )
            })?)
        };
        let rtt_ms = match (self.link.rtt_ms, link) {
            (Some(ms), _) => ms,
            (None, Some(l)) => l.round_trip_ms().typical,
            (None, None) => 0.0,
        };
        let rtt_spread = match (self.link.rtt_spread, link) {
            (Some(s), _) => s,
            (None, Some(l)) => {
                let r = l.round_trip_ms();
                (r.high - r.low) / (2.0 * r.typical)
            }
            (None, None) => 0.0,
        };
        if !(rtt_spread.is_finite() && (0.0..=1.0).contains(&rtt_spread)) {
            return Err(FieldError::new(
                "link.rtt_spread",
                format!("must be a fraction from 0 to 1, got {rtt_spread}"),
            ));
        }
        Ok((link, rtt_ms, rtt_spread))
    }

    /// Apply defaults and parse every word; the error names the field.
    pub fn resolve(&self) -> Result<System, SimError> {
        Ok(self.resolve_fields()?)
    }

    /// The log vdev's members as models: none, one log device, or a mirror
    /// of `log` and `log_mirror` (which needs `log`).
    fn log_vdev(&self) -> Result<(Option<ModelParams>, Option<ModelParams>), FieldError> {
        let member = |d: &Option<DeviceSpec>, field: &str| match d {
            None => Ok(None),
            Some(d) if d.is_none() => Ok(None),
            Some(d) => d.resolve(field).map(Some),
        };
        let log = member(&self.log, "log")?;
        let mirror = member(&self.log_mirror, "log_mirror")?;
        if mirror.is_some() && log.is_none() {
            return Err(FieldError::new(
                "log_mirror",
                "is the second member of a mirrored log device: set `log` (the first) too",
            ));
        }
        Ok((log, mirror))
    }

    /// [`SystemModel::resolve`], refusing with the field alone (a matrix
    /// names the axis or cell around it).
    pub(crate) fn resolve_fields(&self) -> Result<System, FieldError> {
        let bad = |field: &str, e: &dyn std::fmt::Display| FieldError::new(field, e.to_string());
        let protocol = self.client.protocol;
        let (link, rtt_ms, rtt_spread) = self.resolve_link()?;
        let fsync_round_trips = self
            .client
            .fsync_round_trips
            .unwrap_or_else(|| protocol.default_fsync_round_trips());
        if !(1..=64).contains(&fsync_round_trips) {
            return Err(FieldError::new(
                "client.fsync_round_trips",
                format!("must be 1 to 64, got {fsync_round_trips}"),
            ));
        }
        let guest_fs = self.client.resolve_guest_fs()?;
        let page_cache_bytes = self.client.page_cache_bytes(protocol)?;
        let ram = self
            .server
            .ram
            .bytes(SizeMeaning::Exact)
            .map_err(|e| bad("server.ram", &e))?;
        self.server.check_ranges()?;
        let (f, txg) = (self.server.arc_fraction, self.server.txg_timeout_s);
        let platform = self.server.platform;
        let nfs_sync_honoured = self
            .server
            .nfs_sync_honoured
            .unwrap_or_else(|| platform.is_none_or(Platform::nfs_sync_honoured));
        let logbias = self.server.resolve_logbias()?;
        let shape = self
            .pool
            .layout
            .shape()
            .map_err(|e| bad("pool.layout", &e))?;
        let disk_bytes = self
            .pool
            .disk_size
            .bytes(SizeMeaning::MarketedDisk)
            .map_err(|e| bad("pool.disk_size", &e))?;
        let recordsize = self.pool.block_size(protocol)?;
        let disk = self.pool.disk.resolve("pool.disk")?;
        let (log, log_mirror) = self.log_vdev()?;
        Ok(System {
            name: if self.name.is_empty() {
                "unnamed system".into()
            } else {
                self.name.clone()
            },
            protocol,
            fsync_round_trips,
            stable_writes: self
                .client
                .stable_writes
                .unwrap_or_else(|| protocol.default_stable_writes()),
            guest_fs,
            nfs_sync_honoured,
            page_cache_bytes,
            cache_hit_ns: micros_to_ns("client.cache_hit_us", self.client.cache_hit_us)?,
            client_cpu_service: self.client.cpu_service,
            client_cpu_ns: micros_to_ns(
                "client.cpu_us",
                self.client
                    .cpu_us
                    .unwrap_or_else(|| protocol.default_client_cpu_us()),
            )?,
            link,
            rtt_ns: micros_to_ns("link.rtt_ms", rtt_ms * 1e3)?,
            rtt_spread,
            // Checked above: 0 < f <= 1, so the product is within 0..=ram.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            arc_bytes: (ram as f64 * f) as u64,
            server_cpu_ns: micros_to_ns("server.cpu_us", self.server.cpu_us)?,
            server_cpu_ns_per_mib: micros_to_ns(
                "server.cpu_us_per_mib",
                self.server.cpu_us_per_mib,
            )?,
            commit_cpu_ns: micros_to_ns("server.commit_cpu_us", self.server.commit_cpu_us)?,
            log_writer: LogWriterNs::of(&self.server, platform)?,
            flush_in_turn: platform.is_some_and(Platform::flushes_in_turn),
            cpu_contention: self.server.cpu_contention,
            cpu_service: self.server.cpu_service,
            cores: self.server.cores,
            sync: self.server.sync,
            logbias,
            log_write_rule: platform.map_or(LogWriteRule::default(), Platform::log_write_rule),
            zil: self
                .server
                .zil
                .unwrap_or_else(|| platform.map_or(ZilBatching::Pipelined, Platform::zil)),
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            txg_timeout_ns: (txg * 1e9) as u64,
            txg: self.server.txg_tuning(ram, &disk)?,
            shape,
            disk,
            disk_bytes,
            recordsize,
            log,
            log_mirror,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuning() -> TxgTuning {
        SystemModel::default().resolve().unwrap().txg
    }

    #[test]
    fn dirty_max_is_a_tenth_of_ram_at_most_4_gib() {
        let mut m = SystemModel::default();
        m.server.ram = "16G".into();
        assert_eq!(m.resolve().unwrap().txg.dirty_max, (16u64 << 30) / 10);
        m.server.ram = "256G".into();
        assert_eq!(m.resolve().unwrap().txg.dirty_max, 4 << 30);
        m.server.dirty_data_max = Some("1G".into());
        assert_eq!(m.resolve().unwrap().txg.dirty_max, 1 << 30);
    }

    #[test]
    fn async_writes_in_flight_rise_from_30_to_60_percent_dirty() {
        let t = tuning();
        let pct = |p: u64| t.dirty_max / 100 * p;
        assert_eq!(t.async_active(0), 2);
        assert_eq!(t.async_active(pct(30)), 2);
        assert_eq!(t.async_active(pct(46)), 6);
        assert_eq!(t.async_active(pct(61)), 10);
        assert_eq!(t.async_active(t.dirty_max), 10);
        assert_eq!(t.aggregation, 1 << 20, "hard disks aggregate to 1 MiB");
    }

    #[test]
    fn the_delay_curve_is_dmu_tx_delays() {
        let t = tuning();
        assert_eq!(t.delay_ns(t.delay_min_bytes), 0);
        // Midway between 60 % and 100 %: the scale itself, 500 µs.
        let mid = (t.delay_min_bytes + t.dirty_max) / 2;
        let d = t.delay_ns(mid);
        assert!((499_000..=501_000).contains(&d), "{d}");
        assert_eq!(t.delay_ns(t.dirty_max - 1), DELAY_MAX_NS);
    }

    fn with_platform(platform: &str) -> System {
        let text = format!("[server]\nplatform = \"{platform}\"\n");
        SystemModel::from_toml(&text).unwrap().resolve().unwrap()
    }

    #[test]
    fn each_platform_sets_its_zil_batching() {
        // 8585 (pipelined lwbs) is in OpenZFS 0.8+/2.x, not in ZoL 0.6/0.7,
        // FreeNAS 11 of 2017 or zfs-fuse.
        for (p, zil) in [
            ("openzfs-2.2", ZilBatching::Pipelined),
            ("truenas-13", ZilBatching::Pipelined),
            ("freenas-11", ZilBatching::OneInFlight),
            ("zol-0.6", ZilBatching::OneInFlight),
            ("zol-0.7", ZilBatching::OneInFlight),
            ("zfs-fuse", ZilBatching::OneInFlight),
        ] {
            assert_eq!(with_platform(p).zil, zil, "{p}");
        }
        assert_eq!(
            SystemModel::default().resolve().unwrap().zil,
            ZilBatching::Pipelined
        );
    }

    #[test]
    fn each_platform_sets_whether_nfs_sync_writes_commit() {
        // ZoL before 0.8 ignored RWF_SYNC from knfsd (b1b94e9644).
        for (p, honoured) in [
            ("openzfs-2.2", true),
            ("truenas-13", true),
            ("freenas-11", true),
            ("zol-0.6", false),
            ("zol-0.7", false),
            ("zfs-fuse", false),
        ] {
            assert_eq!(with_platform(p).nfs_sync_honoured, honoured, "{p}");
        }
        assert!(SystemModel::default().resolve().unwrap().nfs_sync_honoured);
    }

    #[test]
    fn a_platform_sets_nothing_else_and_fields_win_over_it() {
        let base = SystemModel::default().resolve().unwrap();
        for p in [
            "openzfs-2.2",
            "truenas-13",
            "freenas-11",
            "zol-0.6",
            "zol-0.7",
            "zfs-fuse",
        ] {
            let mut s = with_platform(p);
            s.zil = base.zil;
            s.nfs_sync_honoured = base.nfs_sync_honoured;
            s.log_write_rule = base.log_write_rule;
            assert_eq!(
                s.log_writer.runs_commit_software,
                p == "zfs-fuse",
                "{p}: where the commit software runs"
            );
            s.log_writer.runs_commit_software = base.log_writer.runs_commit_software;
            assert_eq!(s.flush_in_turn, p == "zfs-fuse", "{p}: flushes in turn");
            s.flush_in_turn = base.flush_in_turn;
            assert_eq!(s, base, "{p} changes only its documented behaviours");
        }
        let text =
            "[server]\nplatform = \"zol-0.7\"\nzil = \"pipelined\"\nnfs_sync_honoured = true\n";
        let s = SystemModel::from_toml(text).unwrap().resolve().unwrap();
        assert_eq!(s.zil, ZilBatching::Pipelined);
        assert!(s.nfs_sync_honoured);
        let bad = SystemModel::from_toml("[server]\nplatform = \"solaris-11\"\n");
        assert!(bad.is_err());
    }

    #[test]
    fn an_iscsi_client_writes_into_volblocksize_blocks() {
        let mut m = SystemModel::default();
        assert_eq!(m.resolve().unwrap().recordsize, 128 << 10);
        m.client.protocol = Protocol::Iscsi;
        assert_eq!(m.resolve().unwrap().recordsize, 16 << 10);
        m.pool.volblocksize = Some("64K".into());
        assert_eq!(m.resolve().unwrap().recordsize, 64 << 10);
        m.pool.volblocksize = Some("3K".into());
        let e = m.resolve().unwrap_err().to_string();
        assert!(e.contains("pool.volblocksize") && e.contains("3K"), "{e}");
    }

    #[test]
    fn a_mirrored_log_needs_its_first_member_and_samples_its_second_apart() {
        let m = SystemModel::from_toml("log_mirror = \"ssd-sata\"\n").unwrap();
        let e = m.resolve().unwrap_err().to_string();
        assert!(e.contains("log_mirror") && e.contains("`log`"), "{e}");
        let m =
            SystemModel::from_toml("log = \"ssd-sata-noplp\"\nlog_mirror = \"ssd-sata-noplp\"\n")
                .unwrap();
        let sys = m.resolve().unwrap();
        assert!(sys.log.is_some() && sys.log_mirror.is_some());
        // Each member is a device of its own in an interval.
        let spans = crate::uncertainty::spans(&m, None).unwrap();
        for p in [
            crate::params::Param::CommitFlushMs,
            crate::params::Param::LogMirrorFlushMs,
        ] {
            assert!(spans.iter().any(|s| s.param == p), "{p:?} not sampled");
        }
        // Without the mirror the second member's row does not apply.
        let one = SystemModel::from_toml("log = \"ssd-sata-noplp\"\n").unwrap();
        let spans = crate::uncertainty::spans(&one, None).unwrap();
        assert!(!spans
            .iter()
            .any(|s| s.param == crate::params::Param::LogMirrorFlushMs));
    }

    #[test]
    fn bad_txg_tunables_are_named() {
        let mut m = SystemModel::default();
        m.server.dirty_data_sync_percent = 120.0;
        let e = m.resolve().unwrap_err().to_string();
        assert!(e.contains("server.dirty_data_sync_percent"), "{e}");
        let mut m = SystemModel::default();
        m.server.vdev_async_write_min_active = 20;
        let e = m.resolve().unwrap_err().to_string();
        assert!(e.contains("vdev_async_write_min_active"), "{e}");
    }
}

//! The system a prediction is made for, as a user writes it (TOML, every
//! field optional with a documented default) and as the simulator uses it
//! (parsed with zfs-model's one vocabulary: layouts, links, disk classes,
//! sizes).

use std::path::Path;

use fileio::slog::{ResultDocError, SlogResult, SlogSize};
use serde::{Deserialize, Serialize};
use zfs_model::diskmodel::{self, FlashParams, ModelParams};
use zfs_model::layout::Shape;
use zfs_model::network::Link;
use zfs_model::units::{parse_size, SizeMeaning};

use crate::components::NanosDraws;
use crate::queue::Nanos;
use crate::sourced_ranges::{COMMIT_CPU_US, CPU_CONTENTION, CPU_US_PER_MIB, SERVER_CPU_US_LOCAL};
use crate::{FieldError, SimError};
use fileio::rng::SeededStream;

/// How the client turns guest writes and fsyncs into requests to the server
/// (NFSv3 stable and unstable writes and COMMIT, RFC 1813 section 3.3.7 and
/// 3.3.21).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// fileio runs on the server itself: no link, writes are buffered, an
    /// fsync is one `zil_commit`.
    Local,
    /// Linux NFS client: unstable WRITEs, one COMMIT per fsync.
    LinuxNfs,
    /// A guest on an ESXi NFS datastore: every WRITE is stable (FILE_SYNC),
    /// and a guest fsync becomes what the guest file system makes of it
    /// (`client.guest_fs`, ext4 by default: its journal writes, each
    /// stable).
    EsxiNfs,
    /// A guest on an ESXi 6.5 host's NFS datastore (the reference user's
    /// client): ESXi's NFSv3 client over TCP, every WRITE FILE_SYNC and no
    /// COMMIT (sync-write-facts.md (a)), the guest file system as
    /// `client.guest_fs` says (ext4 by default). The facts file names no
    /// behaviour of the 6.5 release that differs from the ESXi NFS client
    /// it describes, and gives no figure for the client's request size or
    /// its outstanding-request limit (only a pointer to Cormac Hogan's
    /// post on block and transfer sizes): so every behaviour is
    /// `esxi-nfs`'s, requests are the guest's own size, and requests in
    /// flight are bounded by the guest's threads only, as today. The
    /// preset names the client a system was measured with, so a source for
    /// a 6.5 behaviour has one place to go.
    #[serde(rename = "esxi-6.5-nfs")]
    Esxi65Nfs,
    /// A Linux initiator on a zvol over iSCSI: SCSI WRITEs without FUA are
    /// write-back (zvol_write commits only for FUA or `sync=always`), and a
    /// guest fsync ends in SYNCHRONIZE CACHE, which the target turns into a
    /// `zil_commit` (zvol_flush).
    Iscsi,
    /// A Linux or Windows client over SMB 2/3 (Samba on the server): WRITEs
    /// without SMB2_WRITEFLAG_WRITE_THROUGH are buffered by the server, a
    /// guest fsync is one SMB2 FLUSH, which Samba turns into fsync
    /// (`strict sync = yes`, its default since 4.7).
    Smb,
}

impl Protocol {
    pub const ACCEPTED: &'static str = "local, linux-nfs, esxi-nfs, esxi-6.5-nfs, iscsi, smb";

    /// Whether the client is a hypervisor whose guest runs fileio: the
    /// ESXi presets, the only ones with a guest file system part
    /// (`client.guest_fs`).
    pub fn is_esxi(self) -> bool {
        matches!(self, Protocol::EsxiNfs | Protocol::Esxi65Nfs)
    }

    /// The guest's file system, by default: ext4 (the reference user's
    /// Linux VM, and the only guest file system whose fsync
    /// sync-write-facts.md (b) takes apart) under ESXi; none for a client
    /// with no guest between fileio and the protocol.
    pub(crate) fn default_guest_fs(self) -> Option<GuestFs> {
        self.is_esxi().then_some(GuestFs::Ext4)
    }

    /// Whether every data write waits for the ZIL on a `sync=standard`
    /// dataset, by default: ESXi's FILE_SYNC WRITEs only. A Linux iSCSI
    /// initiator sets FUA on journal commit blocks, not on data writes; an
    /// SMB client sets WRITE_THROUGH only when the application opened the
    /// file write-through.
    pub(crate) fn default_stable_writes(self) -> bool {
        self.is_esxi()
    }

    /// Whether the server side is an NFS server (whose handling of stable
    /// WRITEs `server.nfs_sync_honoured` describes).
    pub fn is_nfs(self) -> bool {
        matches!(
            self,
            Protocol::LinuxNfs | Protocol::EsxiNfs | Protocol::Esxi65Nfs
        )
    }

    /// The client's page cache for the file set, by default. On the server
    /// itself none: ZFS on Linux keeps file data in the ARC, not the page
    /// cache (only mmap goes through it). A remote client caches file pages
    /// in its own page cache (NFS, SMB: the client's file pages; iSCSI, ESXi:
    /// the guest's page cache over its block device), which Linux lets grow
    /// into all free memory (Documentation/admin-guide/mm/concepts.rst);
    /// 2 GiB is half of a 4 GiB guest, an estimate to replace with the
    /// client's free memory.
    pub(crate) fn default_page_cache(self) -> &'static str {
        match self {
            Protocol::Local => "0",
            Protocol::LinuxNfs
            | Protocol::EsxiNfs
            | Protocol::Esxi65Nfs
            | Protocol::Iscsi
            | Protocol::Smb => "2G",
        }
    }

    /// Whether the protocol runs over the network.
    pub fn remote(self) -> bool {
        self != Protocol::Local
    }

    /// Synchronous round trips one guest fsync costs, by default.
    /// local: the fsync itself. linux-nfs: one COMMIT (RFC 1813 3.3.21; the
    /// Linux client sends it from `nfs_file_fsync`). esxi-nfs, esxi-6.5-nfs:
    /// those of one guest ext4 journal commit (`client.guest_fs`), which the
    /// fsyncs of every file in its transaction share: the journal writes
    /// its descriptor/metadata block and then its commit block
    /// (Documentation/filesystems/ext4/journal.rst; sync-write-facts.md (b):
    /// the descriptor and the inode-table block copy are contiguous,
    /// usually one 8 KiB request), each a stable WRITE; ESXi sends no
    /// COMMIT because its writes are already stable. iscsi: one SYNCHRONIZE CACHE (the journal's own blocks are
    /// write-back WRITEs folded into it). smb: one SMB2 FLUSH (MS-SMB2
    /// 2.2.17). A first estimate, and the first parameter calibration fits.
    pub(crate) fn default_fsync_round_trips(self) -> u32 {
        match self {
            Protocol::Local | Protocol::LinuxNfs | Protocol::Iscsi | Protocol::Smb => 1,
            Protocol::EsxiNfs | Protocol::Esxi65Nfs => 2,
        }
    }

    /// Client CPU per request, microseconds, by default: none on the server
    /// itself; an NFS client's RPC path (the Linux client, or ESXi's NFS
    /// client plus the guest's virtual disk path) is set at 20 µs, a first
    /// estimate that calibration replaces; iSCSI and SMB get the same
    /// estimate for want of a measurement that separates them.
    pub(crate) fn default_client_cpu_us(self) -> f64 {
        match self {
            Protocol::Local => 0.0,
            Protocol::LinuxNfs
            | Protocol::EsxiNfs
            | Protocol::Esxi65Nfs
            | Protocol::Iscsi
            | Protocol::Smb => 20.0,
        }
    }

    /// Request or response header bytes beside the payload of one message:
    /// NFSv3 with its ONC RPC header (RFC 1813, RFC 5531) about 134; iSCSI a
    /// 48-byte Basic Header Segment (RFC 7143 11.2) plus the SCSI CDB in it;
    /// SMB2 a 64-byte header (MS-SMB2 2.2.1) plus a 48-byte WRITE request
    /// and the 4-byte transport header (MS-SMB2 2.1).
    pub(crate) fn header_bytes(self) -> u64 {
        match self {
            Protocol::Local | Protocol::LinuxNfs | Protocol::EsxiNfs | Protocol::Esxi65Nfs => 134,
            Protocol::Iscsi => 48,
            Protocol::Smb => 116,
        }
    }
}

/// The guest's file system on a hypervisor client (`client.guest_fs`): what
/// a guest fsync and fdatasync of an overwrite turn into at the guest's
/// block layer, which the hypervisor's client then sends
/// (sync-write-facts.md (b)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestFs {
    /// ext4, `data=ordered`, barriers on, no `journal_async_commit` (the
    /// defaults): an fsync is the data write, then the jbd2 commit of the
    /// transaction holding the file's inode.
    Ext4,
    /// No file system: fileio on the raw virtual disk, whose fsync
    /// (`blkdev_fsync`) is the data write and a cache flush.
    None,
}

/// What one guest fsync or fdatasync becomes, after its data write (which
/// the client sends when it is made: `client.stable_writes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestSync {
    /// The guest journal's commit, shared by every fsync whose file is in
    /// the committing transaction (`engine::GuestJournal`):
    /// `client.fsync_round_trips` journal writes, one after the other,
    /// each a stable WRITE.
    JournalCommit,
    /// A cache flush of the virtual disk (`blkdev_issue_flush`, or the
    /// commit block's PREFLUSH with nothing journalled): nothing on the
    /// wire when every data write was sent stable (sync-write-facts.md (a),
    /// inferred), one COMMIT when the client was told to write unstable.
    Flush,
}

impl GuestFs {
    /// xfs is left out on purpose: sync-write-facts.md has no source for
    /// what its log writes on an fsync or fdatasync, and the model does not
    /// guess one.
    pub const ACCEPTED: &'static str = "ext4, none";

    pub fn name(self) -> &'static str {
        match self {
            GuestFs::Ext4 => "ext4",
            GuestFs::None => "none",
        }
    }

    /// The file system of a name as the system file spells it.
    pub fn parse(name: &str) -> Option<GuestFs> {
        let name = name.trim();
        [GuestFs::Ext4, GuestFs::None]
            .into_iter()
            .find(|g| g.name().eq_ignore_ascii_case(name))
    }

    /// What fileio's `--file-fsync-mode` call becomes on this file system,
    /// for an overwrite inside allocated space (every fileio write after
    /// `prepare`: the files are written whole first).
    ///
    /// ext4 (`ext4_sync_file`, sync-write-facts.md (b)): an fsync waits for
    /// `i_sync_tid`, the transaction the write's mtime/ctime update put the
    /// inode in, so it commits the journal (descriptor with the inode-table
    /// block, then the commit block with PREFLUSH + FUA). An fdatasync
    /// waits for `i_datasync_tid`, which timestamps alone do not move: no
    /// journal commit, the data write and one `blkdev_issue_flush`. The
    /// periodic commit of those timestamps (ext4's `commit=` interval, 5 s)
    /// is not in the facts file and is not modelled: no fsync waits for it.
    /// The facts file is also silent on writes in the same timer tick not
    /// re-dirtying the inode; it says that at ESXi-NFS speeds essentially
    /// every write crosses a tick, so every ext4 fsync commits, as before.
    pub fn sync(self, mode: fileio::options::FsyncMode) -> GuestSync {
        use fileio::options::FsyncMode;
        match (self, mode) {
            (GuestFs::Ext4, FsyncMode::Fsync) => GuestSync::JournalCommit,
            (GuestFs::Ext4, FsyncMode::Fdatasync) | (GuestFs::None, _) => GuestSync::Flush,
        }
    }
}

pub use zfs_model::dataset::SyncProperty;

/// The dataset's `logbias` property (zfsprops(7)): whether a sync write's
/// data goes into the log (`latency`) or is written to its place in the
/// pool with only a pointer in the log (`throughput`: WR_INDIRECT records,
/// `zfs_log_write` in zfs_log.c; [`LogWriteRule`] says when each code base
/// does which).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Logbias {
    #[default]
    Latency,
    Throughput,
}

impl Logbias {
    pub const ACCEPTED: &'static str = "latency, throughput";

    /// The value as the system file spells it (`ACCEPTED`).
    pub fn parse(word: &str) -> Option<Logbias> {
        match word.trim().to_ascii_lowercase().as_str() {
            "latency" => Some(Logbias::Latency),
            "throughput" => Some(Logbias::Throughput),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Logbias::Latency => "latency",
            Logbias::Throughput => "throughput",
        }
    }
}

/// How `zfs_log_write` chooses a write record's state and where
/// `zio_alloc_zil` puts a log block; OpenZFS 7578 ("Fix/improve some
/// aspects of ZIL writing", openzfs/openzfs PR #219; ZoL 0.7.0, PR #6191)
/// changed both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogWriteRule {
    /// Before 7578 (OpenSolaris through ZoL 0.6.5): a write is WR_INDIRECT
    /// when `resid > immediate_write_sz && !slogging && resid <= z_blksz`,
    /// with `immediate_write_sz` 0 under `logbias=throughput` and
    /// `zfs_immediate_write_sz` (32 KiB) under latency, `slogging` = a log
    /// device and latency; a log block goes to the log device only under
    /// latency (`zio_alloc_zil(..., use_slog)` with `USE_SLOG`, whose
    /// `zil_slog_limit` bypass of a busy log device is not modelled).
    Before7578,
    /// Since 7578: `logbias=throughput` makes every write WR_INDIRECT, and
    /// latency on a pool without a log device does so from
    /// `zfs_immediate_write_sz` up (`resid >=`), split at block boundaries;
    /// `zio_alloc_zil` tries the log class first whatever the logbias, so a
    /// log device still takes the (pointer-only) log blocks.
    #[default]
    Since7578,
}

/// How concurrent `zil_commit` callers share log writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ZilBatching {
    /// OpenZFS since illumos 8585 (Dec 2017): a commit issues a log block
    /// at once with every record queued so far, even while earlier blocks are
    /// in flight; blocks complete in order.
    #[default]
    Pipelined,
    /// Before 8585: one batch in flight; committers arriving meanwhile join
    /// the next batch, which starts when the current one completes.
    OneInFlight,
}

/// The ZFS code base the server runs (`server.platform`): sets the
/// behaviours that changed between releases, each as that code base had it
/// (docs/model-reference.md, "Platforms", with the sources). A field set in the
/// file wins over its platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Platform {
    /// OpenZFS 2.2 (Linux or FreeBSD 14): pipelined ZIL, NFS sync honoured.
    #[serde(rename = "openzfs-2.2")]
    OpenZfs22,
    /// TrueNAS CORE 13 (FreeBSD 13, OpenZFS 2.1): pipelined ZIL.
    #[serde(rename = "truenas-13")]
    TrueNas13,
    /// FreeNAS 11.0/11.1 (FreeBSD 11 ZFS of 2017): before OpenZFS 8585.
    #[serde(rename = "freenas-11")]
    FreeNas11,
    /// ZFS on Linux 0.6.x: before 8585 and before b1b94e9644 (NFS sync).
    #[serde(rename = "zol-0.6")]
    Zol06,
    /// ZFS on Linux 0.7.x: as 0.6 for these behaviours.
    #[serde(rename = "zol-0.7")]
    Zol07,
    /// zfs-fuse 0.7 (OpenSolaris ZFS of 2009-2010 in user space).
    #[serde(rename = "zfs-fuse")]
    ZfsFuse,
}

impl Platform {
    pub const ACCEPTED: &'static str =
        "openzfs-2.2, truenas-13, freenas-11, zol-0.6, zol-0.7, zfs-fuse";

    /// How concurrent commits share log writes. OpenZFS 8585 (commit
    /// 1ce23dcaff, 2017-12-05) reached ZoL in 0.8.0 and FreeBSD after
    /// FreeNAS 11.1 was branched; zfs-fuse's code is OpenSolaris of 2010.
    pub fn zil(self) -> ZilBatching {
        match self {
            Platform::OpenZfs22 | Platform::TrueNas13 => ZilBatching::Pipelined,
            Platform::FreeNas11 | Platform::Zol06 | Platform::Zol07 | Platform::ZfsFuse => {
                ZilBatching::OneInFlight
            }
        }
    }

    /// Whether an NFS FILE_SYNC/DATA_SYNC WRITE commits the ZIL before the
    /// reply. Linux knfsd passes RWF_SYNC, which ZoL ignored until commit
    /// b1b94e9644 (0.8.0); FreeBSD's nfsd turns it into IO_SYNC, which ZFS
    /// has always committed (sync-write-facts.md (a)). zfs-fuse: the kernel
    /// nfsd reaches it through FUSE, whose write requests carry no sync
    /// flag; taken as ZoL before 0.8 (not from a measurement).
    pub fn nfs_sync_honoured(self) -> bool {
        !matches!(self, Platform::Zol06 | Platform::Zol07 | Platform::ZfsFuse)
    }

    /// Which WR_INDIRECT rule the code base has. OpenZFS 7578 reached ZoL
    /// in 0.7.0 (2017-07); FreeBSD's copy took it from illumos in 2017,
    /// taken here to be in FreeNAS 11.0 (inferred from the dates, not
    /// checked against the FreeBSD log); zfs-fuse is OpenSolaris of 2010.
    pub fn log_write_rule(self) -> LogWriteRule {
        match self {
            Platform::Zol06 | Platform::ZfsFuse => LogWriteRule::Before7578,
            Platform::OpenZfs22 | Platform::TrueNas13 | Platform::FreeNas11 | Platform::Zol07 => {
                LogWriteRule::Since7578
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Platform::OpenZfs22 => "openzfs-2.2",
            Platform::TrueNas13 => "truenas-13",
            Platform::FreeNas11 => "freenas-11",
            Platform::Zol06 => "zol-0.6",
            Platform::Zol07 => "zol-0.7",
            Platform::ZfsFuse => "zfs-fuse",
        }
    }
}

/// How the server's CPU time per request varies around `server.cpu_us`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CpuService {
    /// Exponentially distributed: the usual queueing-model assumption for a
    /// service made of many steps of varying length (RPC decode, ZPL, DMU,
    /// locks, interrupts), as in M/M/c.
    #[default]
    Exponential,
    /// Every request takes exactly `server.cpu_us` (for closed forms).
    Fixed,
}

/// A CPU cost of mean `mean` as `service` has it vary.
pub(crate) fn service_time(jitter: &mut SeededStream, service: CpuService, mean: Nanos) -> Nanos {
    match service {
        CpuService::Exponential => jitter.exponential_ns(mean),
        CpuService::Fixed => mean,
    }
}

/// The field a measured log device's errors name.
pub const MEASURED_LOG_FIELD: &str = "log.measured";

/// Largest write rate a measured log device is given, MB/s (10^6, a
/// terabyte a second): when the measured latency does not grow with the
/// size, the transfer time is below what the measurement resolves.
pub const MEASURED_MAX_MB_S: f64 = 1e6;

/// The `measured` path of a system file's `log` table, if it has one.
fn measured_log_path(table: &toml::Table) -> Result<Option<&str>, FieldError> {
    let Some(toml::Value::Table(log)) = table.get("log") else {
        return Ok(None);
    };
    let Some(value) = log.get("measured") else {
        return Ok(None);
    };
    if let Some(other) = log.keys().find(|k| *k != "measured") {
        return Err(FieldError::new(
            "log",
            format!(
                "a measured log device takes only `measured` (the slog result file), got `{other}` too"
            ),
        ));
    }
    match value.as_str() {
        Some(p) if !p.trim().is_empty() => Ok(Some(p)),
        _ => Err(FieldError::new(
            MEASURED_LOG_FIELD,
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

/// A log device measured by `tankbench slog` (its result file at `path`), as
/// the simulator's flash model ([`flash_from_slog`]). Every refusal is one
/// line naming `log.measured` and the file.
pub fn measured_log(path: &Path) -> Result<FlashParams, FieldError> {
    let bad = |problem: String| {
        FieldError::new(MEASURED_LOG_FIELD, format!("{}: {problem}", path.display()))
    };
    let text = zfs_model::config_file::read_config(path).map_err(|e| bad(e.to_string()))?;
    let result = SlogResult::from_json(&text).map_err(|e| match e {
        ResultDocError::Kind { found, .. } => bad(format!(
            "not a `tankbench slog` result (its kind is {})",
            found.map_or_else(|| "missing".to_string(), |k| format!("\"{k}\""))
        )),
        e => bad(format!("not a readable `tankbench slog` result: {e}")),
    })?;
    flash_from_slog(&result).map_err(bad)
}

/// The flash model of a measured log device (docs/slog-and-probe.md, "As a
/// log device"). The simulator's log device writes a block and then flushes
/// it, one after the other: `flush_ms + bytes / write_mb_s` with
/// `write_ms = 0`. `tankbench slog` measures exactly that sum per size, one
/// write at a time, so:
///
/// - only sizes of 4 KiB or more count: a log block is whole 4 KiB sectors
///   (ashift 12), so smaller writes never reach the device;
/// - the line is anchored at the smallest of them (4 KiB by default), the
///   size of a small commit, whose mean latency it reproduces exactly;
/// - its slope is the weighted least-squares slope of the mean latencies of
///   the larger sizes through that point, each error relative to its size's
///   latency (weight 1/latency²), so the 8-128 KiB sizes a ZIL mostly writes
///   count as much as the 1 MiB one; a slope at or below 0 (latency flat
///   within noise) is [`MEASURED_MAX_MB_S`], and one steeper than the
///   anchor's latency allows is cut so the fixed cost is not negative;
/// - the whole fixed cost is the flush (`flush_ms`), none of it `write_ms`:
///   the test never overlaps two writes, so it says nothing about overlap,
///   and a flush is the one step the model never overlaps (one lane,
///   `parallelism = 1`). Concurrent commits therefore get no more from the
///   device than the measurement showed;
/// - means, not medians: a commit's mean latency is what sets the commits a
///   second.
///
/// Reads never reach a log device (read fields 0 and the write rate); the
/// power-loss fields change no timing, and the measurement cannot tell
/// them, so they are a protected device's.
pub fn flash_from_slog(r: &SlogResult) -> Result<FlashParams, String> {
    flash_from_sizes(&r.sizes)
}

/// [`flash_from_slog`] of a result's sizes.
fn flash_from_sizes(sizes: &[SlogSize]) -> Result<FlashParams, String> {
    let mut measured: Vec<(u64, f64)> = sizes
        .iter()
        .filter(|s| {
            s.writes > 0
                && s.size_bytes >= crate::components::SECTOR
                && s.latency.mean_ms.is_finite()
                && s.latency.mean_ms > 0.0
        })
        .map(|s| (s.size_bytes, s.latency.mean_ms))
        .collect();
    measured.sort_by_key(|p| p.0);
    measured.dedup_by_key(|p| p.0);
    let points: Vec<(f64, f64)> = measured.iter().map(|&(b, ms)| (b as f64, ms)).collect();
    let Some(&(s0, y0)) = points.first().filter(|_| points.len() >= 2) else {
        return Err(format!(
            "{} write size{} of 4 KiB or more measured; a log device needs at least 2 \
             (run tankbench slog with --max-size of 8K or more)",
            points.len(),
            if points.len() == 1 { "" } else { "s" }
        ));
    };
    let (num, den) = points[1..].iter().fold((0.0, 0.0), |(n, d), &(s, y)| {
        let w = 1.0 / (y * y);
        (n + w * (s - s0) * (y - y0), d + w * (s - s0) * (s - s0))
    });
    // ms per byte, at most what leaves the anchor's latency all transfer.
    let slope = num / den;
    let write_mb_s = if slope.is_finite() && slope > 0.0 {
        (1.0 / (slope.min(y0 / s0) * 1e3)).min(MEASURED_MAX_MB_S)
    } else {
        MEASURED_MAX_MB_S
    };
    let transfer_ms = s0 / (write_mb_s * 1e3);
    Ok(FlashParams {
        read_ms: 0.0,
        write_ms: 0.0,
        flush_ms: (y0 - transfer_ms).max(0.0),
        flush_ms_per_mb: 0.0,
        read_mb_s: write_mb_s,
        write_mb_s,
        parallelism: 1,
        volatile_cache: false,
        cache_bytes: 0,
        destage_ms: 0.0,
        flush_honoured: true,
        seed: 1,
    })
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
    pub page_cache: Option<String>,
    /// Time a read served from the page cache takes, microseconds.
    pub cache_hit_us: f64,
    /// How `cpu_us` and `cache_hit_us` vary per request.
    pub cpu_service: CpuService,
    /// The guest's file system under a hypervisor client (`ext4`, `none`):
    /// what a guest fsync and fdatasync become ([`GuestFs::sync`]).
    /// Default: [`Protocol::default_guest_fs`], ext4 under ESXi. Checked on
    /// every client, applied only under ESXi.
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkModel {
    /// `[COUNTx]RATE` as `plan --link` takes it.
    pub link: String,
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
    pub ram: String,
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
    pub dirty_data_max: Option<String>,
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
    pub vdev_aggregation_limit: Option<String>,
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

impl Default for ServerModel {
    fn default() -> Self {
        ServerModel {
            ram: "32G".into(),
            arc_fraction: 0.5,
            platform: None,
            cpu_us: SERVER_CPU_US_LOCAL.typical,
            cpu_us_per_mib: CPU_US_PER_MIB.typical,
            commit_cpu_us: COMMIT_CPU_US.typical,
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
    pub layout: String,
    pub disk: DeviceSpec,
    /// Marketed capacity of one disk (`8TB` is read by the IDEMA rule).
    pub disk_size: String,
    /// The dataset's `recordsize` (file protocols and local).
    pub recordsize: String,
    /// The zvol's `volblocksize`, the block an `iscsi` client's data lives
    /// in. Default 16K (zfsprops(7); OpenZFS 2.2 raised it from 8K).
    pub volblocksize: Option<String>,
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
pub(crate) const DELAY_MAX_NS: u64 = 100_000_000;

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

impl PoolModel {
    /// The block a file's data lives in: the dataset's recordsize, or the
    /// zvol's volblocksize for an iSCSI client.
    fn block_size(&self, protocol: Protocol) -> Result<u64, FieldError> {
        let (field, block) = if protocol == Protocol::Iscsi {
            (
                "pool.volblocksize",
                self.volblocksize.as_deref().unwrap_or("16K"),
            )
        } else {
            ("pool.recordsize", self.recordsize.as_str())
        };
        let size = parse_size(block, SizeMeaning::Exact)
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
            Some(v) => {
                parse_size(v, SizeMeaning::Exact).map_err(|e| bad("server.dirty_data_max", &e))?
            }
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
            Some(v) => parse_size(v, SizeMeaning::Exact)
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
    /// mapped here, once ([`flash_from_slog`]): the model holds the flash
    /// model it maps to, so resolving it again reads no file and
    /// [`SystemModel::to_toml`] writes the mapped parameters.
    pub fn from_toml_in(text: &str, dir: &Path) -> Result<SystemModel, SimError> {
        let mut table: toml::Table = toml::from_str(text).map_err(|e| toml_error(&e))?;
        let Some(path) = measured_log_path(&table)? else {
            // No measured device: the text as it is, so every message is
            // serde's own on the text.
            return toml::from_str(text).map_err(|e| toml_error(&e));
        };
        // "." (or no directory): the path as written, as the user wrote it.
        let path = if dir.as_os_str().is_empty() || dir == Path::new(".") {
            Path::new(path).to_path_buf()
        } else {
            dir.join(path)
        };
        let flash = measured_log(&path)?;
        let value = toml::Value::try_from(ModelParams::Flash(flash))
            .map_err(|e| SimError::Toml(e.to_string()))?;
        table.insert("log".into(), value);
        toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| toml_error(&e))
    }

    /// The system as a system file (`from_toml` reads it back).
    pub fn to_toml(&self) -> Result<String, SimError> {
        toml::to_string(self).map_err(|e| SimError::Toml(e.to_string()))
    }

    /// The link (none for a local client), its mean round trip, ms, and
    /// the spread of one trip around it.
    fn resolve_link(&self) -> Result<(Option<Link>, f64, f64), FieldError> {
        let bad = |field: &str, e: &dyn std::fmt::Display| FieldError::new(field, e.to_string());
        let protocol = self.client.protocol;
        let link = if protocol == Protocol::Local {
            None
        } else {
            let link = Link::parse(&self.link.link).map_err(|e| bad("link.link", &e))?;
            Some(link.ok_or_else(|| {
                FieldError::new(
                    "link.link",
                    format!(
                        "a {} client needs a link; accepted: {}",
                        protocol_name(protocol),
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
        let page_cache = self
            .client
            .page_cache
            .as_deref()
            .unwrap_or_else(|| protocol.default_page_cache());
        let page_cache_bytes = if page_cache.trim() == "0" {
            0
        } else {
            parse_size(page_cache, SizeMeaning::Exact).map_err(|e| bad("client.page_cache", &e))?
        };
        let ram =
            parse_size(&self.server.ram, SizeMeaning::Exact).map_err(|e| bad("server.ram", &e))?;
        self.server.check_ranges()?;
        let (f, txg) = (self.server.arc_fraction, self.server.txg_timeout_s);
        let platform = self.server.platform;
        let nfs_sync_honoured = self
            .server
            .nfs_sync_honoured
            .unwrap_or_else(|| platform.is_none_or(Platform::nfs_sync_honoured));
        let logbias = self.server.resolve_logbias()?;
        let shape = Shape::parse(&self.pool.layout).map_err(|e| bad("pool.layout", &e))?;
        let disk_bytes = parse_size(&self.pool.disk_size, SizeMeaning::MarketedDisk)
            .map_err(|e| bad("pool.disk_size", &e))?;
        let recordsize = self.pool.block_size(protocol)?;
        let disk = self.pool.disk.resolve("pool.disk")?;
        let log = match &self.log {
            None => None,
            Some(DeviceSpec::Name(n)) if n.trim().eq_ignore_ascii_case("none") => None,
            Some(d) => Some(d.resolve("log")?),
        };
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
        })
    }
}

fn protocol_name(p: Protocol) -> &'static str {
    match p {
        Protocol::Local => "local",
        Protocol::LinuxNfs => "linux-nfs",
        Protocol::EsxiNfs => "esxi-nfs",
        Protocol::Esxi65Nfs => "esxi-6.5-nfs",
        Protocol::Iscsi => "iscsi",
        Protocol::Smb => "smb",
    }
}

impl Protocol {
    pub const ALL: [Protocol; 6] = [
        Protocol::Local,
        Protocol::LinuxNfs,
        Protocol::EsxiNfs,
        Protocol::Esxi65Nfs,
        Protocol::Iscsi,
        Protocol::Smb,
    ];

    pub fn name(self) -> &'static str {
        protocol_name(self)
    }

    /// The protocol of a name as the system file spells it (`ACCEPTED`).
    pub fn parse(name: &str) -> Option<Protocol> {
        let name = name.trim();
        Protocol::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accepted_clients_are_those_of_every_protocol() {
        let names: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(names.join(", "), Protocol::ACCEPTED);
    }

    fn size(bytes: u64, mean_us: f64) -> SlogSize {
        SlogSize {
            size_bytes: bytes,
            writes: 10,
            seconds: 1.0,
            bytes_per_second: 0.0,
            iops: 0.0,
            latency: fileio::result::LatencySummary {
                count: 10,
                mean_ms: mean_us / 1000.0,
                ..fileio::result::LatencySummary::default()
            },
        }
    }

    fn sizes(from: u64, to: u64, us: impl Fn(u64) -> f64) -> Vec<SlogSize> {
        std::iter::successors(Some(from), |s| Some(s * 2))
            .take_while(|&s| s <= to)
            .map(|s| size(s, us(s)))
            .collect()
    }

    #[test]
    fn a_measured_line_maps_to_its_flush_and_rate() {
        // 30 µs + size / (200 MB/s): 200 bytes a µs. The sizes below 4 KiB
        // are ignored, however wrong (a device's read-modify-write).
        let mut all = sizes(512, 2048, |_| 900.0);
        all.extend(sizes(4096, 1 << 20, |s| 30.0 + s as f64 / 200.0));
        let f = flash_from_sizes(&all).unwrap();
        assert!((f.write_mb_s - 200.0).abs() < 1e-6, "{f:?}");
        assert!((f.flush_ms - 0.030).abs() < 1e-9, "{f:?}");
        assert!(
            f.write_ms.abs() < 1e-15 && f.flush_ms_per_mb.abs() < 1e-15,
            "{f:?}"
        );
        assert_eq!(f.parallelism, 1);
        // Flat within noise: the transfer is below what the test resolves.
        let flat =
            flash_from_sizes(&sizes(4096, 65536, |s| 50.0 - (s as f64).log2() * 0.1)).unwrap();
        assert!(
            (flat.write_mb_s - MEASURED_MAX_MB_S).abs() < 1e-9,
            "{flat:?}"
        );
        // The anchor: 48.8 µs at 4 KiB, less 4 KiB at 10^6 MB/s.
        assert!(
            (flat.flush_ms - (0.0488 - 4096.0 / 1e9)).abs() < 1e-9,
            "{flat:?}"
        );
    }

    #[test]
    fn the_4k_latency_is_kept_when_the_slope_would_make_the_fixed_cost_negative() {
        // Latency growing faster than in proportion from 4 KiB on: the
        // anchor keeps its measured latency, all of it transfer.
        let f = flash_from_sizes(&sizes(4096, 1 << 20, |s| (s as f64 / 4096.0).powi(2))).unwrap();
        assert!(f.flush_ms.abs() < 1e-15, "{f:?}");
        let at_4k = 4096.0 / (f.write_mb_s * 1e3);
        assert!((at_4k - 0.001).abs() < 1e-12, "{f:?}");
    }

    #[test]
    fn fewer_than_two_sizes_from_4k_are_refused() {
        let e = flash_from_sizes(&sizes(512, 4096, |_| 10.0)).unwrap_err();
        assert!(e.starts_with("1 write size of 4 KiB or more"), "{e}");
        let mut none = sizes(4096, 8192, |_| 10.0);
        none.iter_mut().for_each(|s| s.writes = 0);
        let e = flash_from_sizes(&none).unwrap_err();
        assert!(e.starts_with("0 write sizes"), "{e}");
    }

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

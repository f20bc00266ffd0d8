//! The presets a system file names: the client's protocol
//! (`client.protocol`), with the guest file system under a hypervisor
//! client (`client.guest_fs`), and the server's ZFS code base
//! (`server.platform`). A preset only sets defaults: each is one row of a
//! table ([`Protocol`]'s and [`Platform`]'s methods read the row), and a
//! field set in the file wins over it.

use serde::{Deserialize, Serialize};

use super::behaviours::{LogWriteRule, ZilBatching};

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

/// One client preset: its name and what the `client` fields it leaves
/// unset default to.
struct ProtocolPreset {
    protocol: Protocol,
    /// The name as the system file spells it (`Protocol::ACCEPTED`).
    name: &'static str,
    /// Whether the client is a hypervisor whose guest runs fileio: the
    /// ESXi presets, the only ones with a guest file system part
    /// (`client.guest_fs`).
    esxi: bool,
    /// Whether the server side is an NFS server (whose handling of stable
    /// WRITEs `server.nfs_sync_honoured` describes).
    nfs: bool,
    /// The guest's file system, by default: ext4 (the reference user's
    /// Linux VM, and the only guest file system whose fsync
    /// sync-write-facts.md (b) takes apart) under ESXi; none for a client
    /// with no guest between fileio and the protocol.
    guest_fs: Option<GuestFs>,
    /// Whether every data write waits for the ZIL on a `sync=standard`
    /// dataset, by default: ESXi's FILE_SYNC WRITEs only. A Linux iSCSI
    /// initiator sets FUA on journal commit blocks, not on data writes; an
    /// SMB client sets WRITE_THROUGH only when the application opened the
    /// file write-through.
    stable_writes: bool,
    /// The client's page cache for the file set, by default. On the server
    /// itself none: ZFS on Linux keeps file data in the ARC, not the page
    /// cache (only mmap goes through it). A remote client caches file pages
    /// in its own page cache (NFS, SMB: the client's file pages; iSCSI, ESXi:
    /// the guest's page cache over its block device), which Linux lets grow
    /// into all free memory (Documentation/admin-guide/mm/concepts.rst);
    /// 2 GiB is half of a 4 GiB guest, an estimate to replace with the
    /// client's free memory.
    page_cache: &'static str,
    /// Synchronous round trips one guest fsync costs, by default (each
    /// row's comment gives its source). A first estimate, and the first
    /// parameter calibration fits.
    fsync_round_trips: u32,
    /// Client CPU per request, microseconds, by default: none on the server
    /// itself; an NFS client's RPC path (the Linux client, or ESXi's NFS
    /// client plus the guest's virtual disk path) is set at 20 µs, a first
    /// estimate that calibration replaces; iSCSI and SMB get the same
    /// estimate for want of a measurement that separates them.
    client_cpu_us: f64,
    /// Request or response header bytes beside the payload of one message:
    /// NFSv3 with its ONC RPC header (RFC 1813, RFC 5531) about 134; iSCSI a
    /// 48-byte Basic Header Segment (RFC 7143 11.2) plus the SCSI CDB in it;
    /// SMB2 a 64-byte header (MS-SMB2 2.2.1) plus a 48-byte WRITE request
    /// and the 4-byte transport header (MS-SMB2 2.1).
    header_bytes: u64,
}

/// Every client preset, in [`Protocol`]'s order (checked when compiled).
const PROTOCOL_PRESETS: [ProtocolPreset; 6] = [
    ProtocolPreset {
        protocol: Protocol::Local,
        name: "local",
        esxi: false,
        nfs: false,
        guest_fs: None,
        stable_writes: false,
        page_cache: "0",
        // The fsync itself.
        fsync_round_trips: 1,
        client_cpu_us: 0.0,
        header_bytes: 134,
    },
    ProtocolPreset {
        protocol: Protocol::LinuxNfs,
        name: "linux-nfs",
        esxi: false,
        nfs: true,
        guest_fs: None,
        stable_writes: false,
        page_cache: "2G",
        // One COMMIT (RFC 1813 3.3.21; the Linux client sends it from
        // `nfs_file_fsync`).
        fsync_round_trips: 1,
        client_cpu_us: 20.0,
        header_bytes: 134,
    },
    ProtocolPreset {
        protocol: Protocol::EsxiNfs,
        name: "esxi-nfs",
        esxi: true,
        nfs: true,
        guest_fs: Some(GuestFs::Ext4),
        stable_writes: true,
        page_cache: "2G",
        // Those of one guest ext4 journal commit (`client.guest_fs`), which
        // the fsyncs of every file in its transaction share: the journal
        // writes its descriptor/metadata block and then its commit block
        // (Documentation/filesystems/ext4/journal.rst; sync-write-facts.md
        // (b): the descriptor and the inode-table block copy are
        // contiguous, usually one 8 KiB request), each a stable WRITE; ESXi
        // sends no COMMIT because its writes are already stable.
        fsync_round_trips: 2,
        client_cpu_us: 20.0,
        header_bytes: 134,
    },
    ProtocolPreset {
        protocol: Protocol::Esxi65Nfs,
        name: "esxi-6.5-nfs",
        esxi: true,
        nfs: true,
        guest_fs: Some(GuestFs::Ext4),
        stable_writes: true,
        page_cache: "2G",
        // As esxi-nfs: one guest ext4 journal commit, two stable WRITEs.
        fsync_round_trips: 2,
        client_cpu_us: 20.0,
        header_bytes: 134,
    },
    ProtocolPreset {
        protocol: Protocol::Iscsi,
        name: "iscsi",
        esxi: false,
        nfs: false,
        guest_fs: None,
        stable_writes: false,
        page_cache: "2G",
        // One SYNCHRONIZE CACHE (the journal's own blocks are write-back
        // WRITEs folded into it).
        fsync_round_trips: 1,
        client_cpu_us: 20.0,
        header_bytes: 48,
    },
    ProtocolPreset {
        protocol: Protocol::Smb,
        name: "smb",
        esxi: false,
        nfs: false,
        guest_fs: None,
        stable_writes: false,
        page_cache: "2G",
        // One SMB2 FLUSH (MS-SMB2 2.2.17).
        fsync_round_trips: 1,
        client_cpu_us: 20.0,
        header_bytes: 116,
    },
];

// A row's place is its protocol's: `Protocol::preset` indexes by it.
const _: () = {
    let mut i = 0;
    while i < PROTOCOL_PRESETS.len() {
        assert!(PROTOCOL_PRESETS[i].protocol as usize == i);
        i += 1;
    }
};

impl Protocol {
    pub const ACCEPTED: &'static str = "local, linux-nfs, esxi-nfs, esxi-6.5-nfs, iscsi, smb";

    pub const ALL: [Protocol; 6] = [
        Protocol::Local,
        Protocol::LinuxNfs,
        Protocol::EsxiNfs,
        Protocol::Esxi65Nfs,
        Protocol::Iscsi,
        Protocol::Smb,
    ];

    /// This protocol's row of [`PROTOCOL_PRESETS`].
    fn preset(self) -> &'static ProtocolPreset {
        &PROTOCOL_PRESETS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.preset().name
    }

    /// The protocol of a name as the system file spells it (`ACCEPTED`).
    pub fn parse(name: &str) -> Option<Protocol> {
        let name = name.trim();
        Protocol::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// Whether the client is a hypervisor whose guest runs fileio: the
    /// ESXi presets, the only ones with a guest file system part
    /// (`client.guest_fs`).
    pub fn is_esxi(self) -> bool {
        self.preset().esxi
    }

    /// The guest's file system, by default: ext4 under ESXi, none for a
    /// client with no guest (the preset's `guest_fs`).
    pub(crate) fn default_guest_fs(self) -> Option<GuestFs> {
        self.preset().guest_fs
    }

    /// Whether every data write waits for the ZIL on a `sync=standard`
    /// dataset, by default: ESXi's FILE_SYNC WRITEs only (the preset's
    /// `stable_writes`).
    pub(crate) fn default_stable_writes(self) -> bool {
        self.preset().stable_writes
    }

    /// Whether the server side is an NFS server (whose handling of stable
    /// WRITEs `server.nfs_sync_honoured` describes).
    pub fn is_nfs(self) -> bool {
        self.preset().nfs
    }

    /// The client's page cache for the file set, by default: none on the
    /// server itself, 2 GiB on a remote client (the preset's `page_cache`).
    pub(crate) fn default_page_cache(self) -> &'static str {
        self.preset().page_cache
    }

    /// Whether the protocol runs over the network.
    pub fn remote(self) -> bool {
        self != Protocol::Local
    }

    /// Synchronous round trips one guest fsync costs, by default (the
    /// preset's `fsync_round_trips`).
    pub(crate) fn default_fsync_round_trips(self) -> u32 {
        self.preset().fsync_round_trips
    }

    /// Client CPU per request, microseconds, by default (the preset's
    /// `client_cpu_us`).
    pub(crate) fn default_client_cpu_us(self) -> f64 {
        self.preset().client_cpu_us
    }

    /// Request or response header bytes beside the payload of one message
    /// (the preset's `header_bytes`).
    pub(crate) fn header_bytes(self) -> u64 {
        self.preset().header_bytes
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

/// zfs-fuse's compiled-in `zfs_txg_timeout` (zfs-fuse has no tunables; its
/// txg.c is OpenSolaris's of 2010, before illumos lowered it to 5 s in
/// 2013): a txg syncs at least every 30 s, as the lab sees it (its log
/// blocks are freed every 30 s, docs/what-if.md).
pub const ZFS_FUSE_TXG_TIMEOUT_S: f64 = 30.0;

/// The most writes one txg of zfs-fuse holds: `zfs_write_limit_shift` = 3
/// of its dsl_pool.c, an eighth of physical memory, and at least the
/// 32 MiB `zfs_write_limit_min`.
pub fn zfs_fuse_dirty_data_max(mem_bytes: u64) -> u64 {
    (mem_bytes >> 3).max(32 << 20)
}

/// zfs-fuse's time a log block and a device request
/// (`server.log_block_us`, `server.device_request_us`), as multiples of
/// its buffered write path's time a request (`server.cpu_us` as a lab times
/// it at `lab up`), so a host that runs zfs-fuse slower runs all of it
/// slower. Measured on the lab with disks that take no time (read, write
/// and flush at 0 ms, 64 at once; docs/what-if.md section 6, "What the
/// log-device pairs lack"), rndrw with an fsync a write at one thread, 2026-12-07, 2-core
/// host, write path 29-33 us (31.5 the mean): cycles of 0.263-0.300 ms with
/// a log device (2 device requests a commit), 0.384 ms on three mirrors (4)
/// and 0.469 ms on raidz2-6 (10: a 2-column log block's 4 writes and 6
/// flushes), against 0.143 ms simulated without them (kernel ZFS's 72 us a
/// commit only). A least-squares line through the four cells' excess: 108
/// us a log block and 23 us a device request (the cells within 0.04 ms of
/// it). docs/model-reference.md, "A log block's writer".
const ZFS_FUSE_WRITE_PATH_US: f64 = 31.5;
const ZFS_FUSE_LOG_BLOCK_US: f64 = 108.0;
const ZFS_FUSE_DEVICE_REQUEST_US: f64 = 23.0;

/// zfs-fuse's time per commit a log block carries beyond its first
/// (`server.log_commit_us`), at the write path above. Measured on labs
/// whose disks and log device answer at once (raidz2-6 with a log device),
/// from the disk daemon's record of every request (`lab up --disk-trace`,
/// `scripts/log-block-trace`): the time from one log block's write to the
/// next is the writer's alone once the commits' own requests overlap it
/// (two threads and more), and the commits a block carries are the fsyncs
/// answered over the blocks written. rndrw with an fsync a write, 2-core
/// host, 2026-12-07, two labs: at a 38 us write path 1.05, 2.00 and 4.82
/// commits a block at 2, 4 and 8 threads took 227, 324 and 485 us a block
/// (mean), a least-squares slope of 66 us a commit; at a 27 us write path
/// 1.09, 2.04 and 5.22 took 217, 289 and 437 us, 51.5 us a commit. At the
/// 31.5 us write path: 55 and 60, 57 their mean. (The same trace on
/// hard-disk models with a SATA SSD log device, the devices' 166 us a block
/// within it: 394, 538 and 682 us at 1.03, 1.96 and 4.78 commits a block,
/// 77 us a commit at a 39 us write path.) docs/model-reference.md, "A log
/// block's writer".
const ZFS_FUSE_LOG_COMMIT_US: f64 = 57.0;

/// What a platform's log block writer spends beyond its devices' time
/// (`server.log_block_us`, `server.device_request_us`,
/// `server.log_commit_us`), microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogWriterCosts {
    /// Each log block.
    pub block_us: f64,
    /// Each device request a log block makes.
    pub request_us: f64,
    /// Each commit a log block carries beyond its first.
    pub commit_us: f64,
}

/// zfs-fuse's log block writer on a host where its buffered write path
/// takes `write_path_us` a request (None: the host of the measurements
/// above): each figure scales with the write path, so a host that runs
/// zfs-fuse slower runs all of it slower.
pub fn zfs_fuse_commit_costs(write_path_us: Option<f64>) -> LogWriterCosts {
    let scale = write_path_us
        .filter(|w| w.is_finite() && *w > 0.0)
        .map_or(1.0, |w| w / ZFS_FUSE_WRITE_PATH_US);
    LogWriterCosts {
        block_us: ZFS_FUSE_LOG_BLOCK_US * scale,
        request_us: ZFS_FUSE_DEVICE_REQUEST_US * scale,
        commit_us: ZFS_FUSE_LOG_COMMIT_US * scale,
    }
}

/// One server preset: its name and the behaviours it sets where the
/// `server` fields leave them unset.
struct PlatformPreset {
    platform: Platform,
    /// The name as the system file spells it (`Platform::ACCEPTED`).
    name: &'static str,
    /// How concurrent commits share log writes. OpenZFS 8585 (commit
    /// 1ce23dcaff, 2017-12-05) reached ZoL in 0.8.0 and FreeBSD after
    /// FreeNAS 11.1 was branched; zfs-fuse's code is OpenSolaris of 2010.
    zil: ZilBatching,
    /// Whether an NFS FILE_SYNC/DATA_SYNC WRITE commits the ZIL before the
    /// reply. Linux knfsd passes RWF_SYNC, which ZoL ignored until commit
    /// b1b94e9644 (0.8.0); FreeBSD's nfsd turns it into IO_SYNC, which ZFS
    /// has always committed (sync-write-facts.md (a)). zfs-fuse: the kernel
    /// nfsd reaches it through FUSE, whose write requests carry no sync
    /// flag; taken as ZoL before 0.8 (not from a measurement).
    nfs_sync_honoured: bool,
    /// Which WR_INDIRECT rule the code base has. OpenZFS 7578 reached ZoL
    /// in 0.7.0 (2017-07); FreeBSD's copy took it from illumos in 2017,
    /// taken here to be in FreeNAS 11.0 (inferred from the dates, not
    /// checked against the FreeBSD log); zfs-fuse is OpenSolaris of 2010.
    log_write_rule: LogWriteRule,
}

/// Every server preset, in [`Platform`]'s order (checked when compiled).
const PLATFORM_PRESETS: [PlatformPreset; 6] = [
    PlatformPreset {
        platform: Platform::OpenZfs22,
        name: "openzfs-2.2",
        zil: ZilBatching::Pipelined,
        nfs_sync_honoured: true,
        log_write_rule: LogWriteRule::Since7578,
    },
    PlatformPreset {
        platform: Platform::TrueNas13,
        name: "truenas-13",
        zil: ZilBatching::Pipelined,
        nfs_sync_honoured: true,
        log_write_rule: LogWriteRule::Since7578,
    },
    PlatformPreset {
        platform: Platform::FreeNas11,
        name: "freenas-11",
        zil: ZilBatching::OneInFlight,
        nfs_sync_honoured: true,
        log_write_rule: LogWriteRule::Since7578,
    },
    PlatformPreset {
        platform: Platform::Zol06,
        name: "zol-0.6",
        zil: ZilBatching::OneInFlight,
        nfs_sync_honoured: false,
        log_write_rule: LogWriteRule::Before7578,
    },
    PlatformPreset {
        platform: Platform::Zol07,
        name: "zol-0.7",
        zil: ZilBatching::OneInFlight,
        nfs_sync_honoured: false,
        log_write_rule: LogWriteRule::Since7578,
    },
    PlatformPreset {
        platform: Platform::ZfsFuse,
        name: "zfs-fuse",
        zil: ZilBatching::OneInFlight,
        nfs_sync_honoured: false,
        log_write_rule: LogWriteRule::Before7578,
    },
];

// A row's place is its platform's: `Platform::preset` indexes by it.
const _: () = {
    let mut i = 0;
    while i < PLATFORM_PRESETS.len() {
        assert!(PLATFORM_PRESETS[i].platform as usize == i);
        i += 1;
    }
};

impl Platform {
    pub const ACCEPTED: &'static str =
        "openzfs-2.2, truenas-13, freenas-11, zol-0.6, zol-0.7, zfs-fuse";

    /// This platform's row of [`PLATFORM_PRESETS`].
    fn preset(self) -> &'static PlatformPreset {
        &PLATFORM_PRESETS[self as usize]
    }

    /// How concurrent commits share log writes (the preset's `zil`).
    pub fn zil(self) -> ZilBatching {
        self.preset().zil
    }

    /// Whether an NFS FILE_SYNC/DATA_SYNC WRITE commits the ZIL before the
    /// reply (the preset's `nfs_sync_honoured`).
    pub fn nfs_sync_honoured(self) -> bool {
        self.preset().nfs_sync_honoured
    }

    /// Whether the log block's writer runs the zil_commit software
    /// (`server.commit_cpu_us`) once a block while the commits waiting for
    /// it spend none, as zil_commit_writer does with one writer at a time.
    /// zfs-fuse: measured (its disk daemon's trace: a log block's writer
    /// takes 1.4 times as long at two commits a block as at one, with the
    /// commits' own requests out of the way; docs/model-reference.md, "A
    /// log block's writer"). The kernel platforms with one writer at a time
    /// (ZoL before 0.8, FreeNAS 11) run the same code, but no measurement
    /// of theirs says how their committers' time overlaps the block in
    /// flight, so they keep it in each committer, on a core.
    pub fn commit_software_in_writer(self) -> bool {
        self == Platform::ZfsFuse
    }

    /// Whether a commit flushes the children of its vdevs one after another
    /// once its writes are done, rather than all at once: zfs-fuse, whose
    /// flush of a child is an `fsync(2)` of its file on the one thread of
    /// its vdev ioctl taskq (seen in a lab disk trace: each flush arrives
    /// as the one before completes; `Pool::flush_vdevs`).
    pub fn flushes_in_turn(self) -> bool {
        self == Platform::ZfsFuse
    }

    /// Which WR_INDIRECT rule the code base has (the preset's
    /// `log_write_rule`).
    pub fn log_write_rule(self) -> LogWriteRule {
        self.preset().log_write_rule
    }

    pub fn name(self) -> &'static str {
        self.preset().name
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

    #[test]
    fn the_accepted_platforms_are_those_of_every_preset() {
        let names: Vec<&str> = PLATFORM_PRESETS.iter().map(|p| p.name).collect();
        assert_eq!(names.join(", "), Platform::ACCEPTED);
    }
}

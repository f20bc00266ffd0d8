//! Disk models: how long a real disk would take for each read, write and flush.
//!
//! A model is a pure state machine: `submit(now, op)` returns the instant the
//! operation completes and updates the disk's state (head position, write cache,
//! busy time). It has two users, which is why it lives here beside the disk
//! classes: the lab's FUSE disks (`lab::diskfs`) perform the I/O on a sparse file
//! at once and hold the reply until that instant, and the simulator advances its
//! clock to it. Keeping the model free of clocks and threads is what lets the
//! unit tests check it exactly and lets both users agree.
//!
//! Defaults and their sources are documented in `docs/lab.md`.

use crate::disk::DiskClass;
use crate::extents::Extents;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// Nanoseconds on the lab's monotonic clock.
pub type Nanos = u64;

const NS_PER_MS: f64 = 1e6;

/// A sequential access arriving within this time of the previous one is
/// streamed (the drive's look-ahead and write-behind keep the head busy).
const STREAM_WINDOW_MS: f64 = 0.1;

/// One request a disk took, as `lab up --disk-trace` records a lab disk's
/// and `simulate --disk-trace` a simulated one's: when it arrived and when
/// its model completed it (ns on the recorder's clock), which disk (its
/// index), and what it was. Displayed as the trace's line, `arrival_ns disk
/// op bytes done_ns offset`: the op `R`, `W` or `F`, the offset last (`-`
/// for a flush, which has none) so that a reader of the first five fields
/// reads on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskRequest {
    pub at: Nanos,
    pub disk: usize,
    pub op: Op,
    pub done: Nanos,
}

impl std::fmt::Display for DiskRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, len) = match self.op {
            Op::Read { len, .. } => ('R', len),
            Op::Write { len, .. } => ('W', len),
            Op::Flush => ('F', 0),
        };
        write!(f, "{} {} {kind} {len} {} ", self.at, self.disk, self.done)?;
        match self.op {
            Op::Read { offset, .. } | Op::Write { offset, .. } => write!(f, "{offset}"),
            Op::Flush => f.write_str("-"),
        }
    }
}

/// One operation as the disk sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read {
        offset: u64,
        len: u64,
    },
    Write {
        offset: u64,
        len: u64,
    },
    /// Cache flush (what `fsync` on the backing file means for a disk).
    Flush,
}

/// Parameters of a 7200 rpm class hard disk. Times in milliseconds, rates in
/// MB/s (10^6 bytes per second), sizes in bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HddParams {
    pub rpm: f64,
    /// Average seek over uniformly random start and end positions.
    pub avg_seek_ms: f64,
    /// Seek to the neighbouring track (the shortest non-zero seek).
    pub track_to_track_ms: f64,
    /// Sustained media transfer rate (average of outer and inner zones).
    pub media_mb_s: f64,
    /// Interface rate for transfers into and out of the drive's cache (SATA 3).
    pub interface_mb_s: f64,
    /// Controller time per command.
    pub overhead_ms: f64,
    /// Volatile write cache: writes complete once in the cache; a flush writes
    /// them to the platters.
    pub write_cache: bool,
    pub cache_bytes: u64,
    /// Rotational delay of a random access: `random` (uniform over one
    /// revolution, seeded) or `average` (always half a revolution).
    pub rotation: Rotation,
    pub seed: u64,
    /// FLUSH CACHE (ATA) / SYNCHRONIZE CACHE (SCSI) writes the cache to the
    /// platters before it completes. `false`: the drive acknowledges a flush
    /// at once and keeps the data in its volatile cache (drives that ignore
    /// flushes were found with Brad Fitzpatrick's diskchecker.pl, 2005).
    pub flush_honoured: bool,
}

impl HddParams {
    /// A 5400 rpm NAS drive: 11.1 ms per revolution and about 150 MB/s
    /// average transfer (the hdd-5400 class of docs/planning.md); seek, cache
    /// and interface as the 7200 rpm drive, for want of data sheets that
    /// state them.
    pub fn rpm_5400() -> Self {
        HddParams {
            rpm: 5400.0,
            media_mb_s: 150.0,
            ..HddParams::default()
        }
    }
}

impl Default for HddParams {
    fn default() -> Self {
        HddParams {
            rpm: 7200.0,
            avg_seek_ms: 8.5,
            track_to_track_ms: 0.8,
            media_mb_s: 180.0,
            interface_mb_s: 550.0,
            overhead_ms: 0.05,
            write_cache: true,
            cache_bytes: 128 << 20,
            rotation: Rotation::Random,
            seed: 1,
            flush_honoured: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rotation {
    Random,
    Average,
}

/// Parameters of a flash device (SATA SSD or NVMe). Times in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlashParams {
    /// Time to first byte of a read (flash page read plus controller).
    pub read_ms: f64,
    /// Time to accept a write into the device's buffer.
    pub write_ms: f64,
    /// Cost of a cache flush. With power-loss protection the buffer is already
    /// safe, so a flush is nearly free; without it the buffer must be programmed
    /// to flash first.
    pub flush_ms: f64,
    /// Additional flush cost per MB written since the last flush (programming
    /// the buffered data; zero with power-loss protection).
    pub flush_ms_per_mb: f64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    /// Operations the device works on at once (NCQ / NVMe queues, flash channels).
    pub parallelism: u32,
    /// Writes are acknowledged from a DRAM buffer that a power cut loses
    /// (drives without power-loss protection). With protection, capacitors
    /// hold the power long enough to program the buffer: nothing acknowledged
    /// is lost.
    pub volatile_cache: bool,
    /// The volatile buffer: when it holds more, the oldest writes are
    /// programmed (become durable) first.
    pub cache_bytes: u64,
    /// A buffered write is programmed in the background this long after it
    /// was acknowledged, flush or no flush.
    pub destage_ms: f64,
    /// FLUSH CACHE (ATA) / Flush (NVMe) programs the buffer before it
    /// completes. `false`: the flush is acknowledged and nothing is persisted
    /// until the background destage (a "lying" drive).
    pub flush_honoured: bool,
    /// Seed of the choices a power cut makes (which pages of a write in
    /// flight persist).
    pub seed: u64,
}

impl FlashParams {
    /// SATA SSD with power-loss protection (enterprise class).
    pub fn sata_plp() -> Self {
        FlashParams {
            read_ms: 0.09,
            write_ms: 0.05,
            flush_ms: 0.1,
            flush_ms_per_mb: 0.0,
            read_mb_s: 530.0,
            write_mb_s: 500.0,
            parallelism: 4,
            volatile_cache: false,
            cache_bytes: 0,
            destage_ms: 0.0,
            flush_honoured: true,
            seed: 1,
        }
    }
    /// SATA SSD without power-loss protection (consumer class). Its flush
    /// makes a 4 KiB write + flush take 1.2 ms, the median of the class's
    /// published devices (crate::disk::DiskClass::default_perf).
    pub fn sata_consumer() -> Self {
        FlashParams {
            flush_ms: 1.13,
            flush_ms_per_mb: 2.0,
            volatile_cache: true,
            destage_ms: CONSUMER_DESTAGE_MS,
            cache_bytes: consumer_cache_bytes(500.0),
            ..Self::sata_plp()
        }
    }
    /// A consumer SATA SSD whose flush lies: it is acknowledged as fast as a
    /// protected drive's (the drive does no work for it, which is what makes
    /// it look attractive as a log device) and persists nothing; buffered
    /// writes become durable only by the background destage.
    pub fn sata_lying() -> Self {
        FlashParams {
            flush_ms: 0.1,
            flush_ms_per_mb: 0.0,
            flush_honoured: false,
            ..Self::sata_consumer()
        }
    }
    /// NVMe SSD with power-loss protection (data-centre class).
    pub fn nvme_plp() -> Self {
        FlashParams {
            read_ms: 0.08,
            write_ms: 0.02,
            flush_ms: 0.01,
            flush_ms_per_mb: 0.0,
            read_mb_s: 3000.0,
            write_mb_s: 2000.0,
            parallelism: 16,
            volatile_cache: false,
            cache_bytes: 0,
            destage_ms: 0.0,
            flush_honoured: true,
            seed: 1,
        }
    }
    /// NVMe SSD without power-loss protection (consumer class).
    pub fn nvme_consumer() -> Self {
        FlashParams {
            flush_ms: 2.0,
            flush_ms_per_mb: 0.5,
            volatile_cache: true,
            destage_ms: CONSUMER_DESTAGE_MS,
            cache_bytes: consumer_cache_bytes(2000.0),
            ..Self::nvme_plp()
        }
    }
}

impl FlashParams {
    /// One write of `len` bytes and the flush after it on an idle device, ms:
    /// what a write + flush measurement (`diskinfo -S`, fio with fdatasync)
    /// of the device would give, and what a disk class's
    /// [`DiskClass::write_flush_ms`] range is a range of.
    pub fn write_flush_ms(&self, len: u64) -> f64 {
        self.write_ms
            + transfer_ms(len, self.write_mb_s)
            + self.flush_ms
            + self.flush_ms_per_mb * len as f64 / 1e6
    }

    /// The same device `k` times as slow per operation: the write latency,
    /// the flush and the flush's cost per MB scaled by `k`, the transfer
    /// rates kept. One factor for all three is how a device sits within
    /// its class: the published figures of a class are whole write +
    /// flush times, which do not say how a faster device splits them.
    pub fn at_speed(&self, k: f64) -> FlashParams {
        FlashParams {
            write_ms: self.write_ms * k,
            flush_ms: self.flush_ms * k,
            flush_ms_per_mb: self.flush_ms_per_mb * k,
            ..self.clone()
        }
    }

    /// The factor of [`FlashParams::at_speed`] at which a write of `len`
    /// bytes and its flush take `target_ms` (`None` when the device has no
    /// per-operation time to scale, or the transfer alone takes longer than
    /// the target).
    pub fn speed_for(&self, len: u64, target_ms: f64) -> Option<f64> {
        let fixed = self.write_flush_ms(len) - transfer_ms(len, self.write_mb_s);
        let k = (target_ms - transfer_ms(len, self.write_mb_s)) / fixed;
        (fixed > 0.0 && k.is_finite() && k > 0.0).then_some(k)
    }
}

/// How long after acknowledging a write a consumer SSD may still lose it:
/// Ahmadian et al., "Investigating Power Outage Effects on Reliability of
/// Solid-State Drives" (DATE 2018) saw data loss up to 700 ms after a request
/// completed, over thousands of power cuts of drives of several makers.
const CONSUMER_DESTAGE_MS: f64 = 700.0;

/// The volatile buffer of a consumer SSD: what it accepts at its write rate
/// within the destage window (700 ms at 500 MB/s = 350 MB). Data sheets do
/// not state the data share of the DRAM, so the window bounds it.
// destage window x rate: at most 0.7 s x 100,000 MB/s (the spec's largest
// rate), far inside u64; round() leaves no fraction to lose.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn consumer_cache_bytes(write_mb_s: f64) -> u64 {
    (CONSUMER_DESTAGE_MS / 1e3 * write_mb_s * 1e6)
        .round()
        .max(0.0) as u64
}

impl Default for FlashParams {
    fn default() -> Self {
        Self::sata_plp()
    }
}

/// A disk model with its parameters, as named in a lab spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ModelParams {
    Hdd(HddParams),
    Flash(FlashParams),
    /// No added latency at all (the speed of the backing file).
    None,
}

/// What a power cut does to a device: which acknowledged writes it can lose
/// and how it tears a write in flight. Sources and the per-model table are in
/// docs/lab.md ("Power cuts").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PowerLoss {
    /// Acknowledged writes wait in a cache that a power cut empties.
    pub volatile_cache: bool,
    /// A flush makes the cached writes durable before it completes.
    pub flush_honoured: bool,
    /// Most bytes the volatile cache holds (0 without one).
    pub cache_bytes: u64,
    pub tear: Tear,
}

/// How a write still in flight at a power cut is torn, in units of
/// [`TEAR_UNIT`] counted from the start of the write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tear {
    /// A head writes sectors in order: the write keeps a prefix of its
    /// sectors (any length from none to all).
    Prefix,
    /// Flash programs pages on parallel channels: the write keeps any subset
    /// of its pages ("shorn writes", Zheng et al., "Understanding the
    /// Robustness of SSDs under Power Fault", FAST 2013).
    Pages,
}

/// The unit a power cut tears a write into: the 4 KiB physical sector of
/// Advanced Format hard disks (IDEMA) and the smallest flash page.
pub const TEAR_UNIT: u64 = 4096;

/// Durability bookkeeping of a model, off unless the user asks for it (the
/// simulator never does, so it keeps no per-write state): writes are numbered
/// 1, 2, 3 ... in submission order; the ids of writes that became durable
/// wait in `durable` until taken.
#[derive(Debug, Clone, Default)]
struct WriteLog {
    enabled: bool,
    last_id: u64,
    durable: Vec<u64>,
    /// xorshift64 state of the power cut's choices.
    rng: u64,
}

impl WriteLog {
    fn new(seed: u64) -> WriteLog {
        WriteLog {
            // Its own stream, so a cut never shifts the rotational delays
            // an HDD draws from `seed`.
            rng: (seed ^ 0x9E37_79B9_7F4A_7C15).max(1),
            ..WriteLog::default()
        }
    }

    fn next_id(&mut self) -> Option<u64> {
        if !self.enabled {
            return None;
        }
        self.last_id += 1;
        Some(self.last_id)
    }

    fn draw(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// The byte ranges (from the write's start) of a `len`-byte write at
    /// `offset` in flight that reach the medium. Units are whole sectors or
    /// pages of the device, so a write that starts or ends inside one has a
    /// shorter first or last unit.
    fn tear(&mut self, how: Tear, offset: u64, len: u64) -> Vec<(u64, u64)> {
        let mut units = Vec::new();
        let mut at = 0;
        while at < len {
            let next = ((offset + at) / TEAR_UNIT + 1) * TEAR_UNIT - offset;
            units.push((at, next.min(len)));
            at = next;
        }
        match how {
            Tear::Prefix => {
                let kept = self.draw() % (units.len() as u64 + 1);
                match usize::try_from(kept).ok().and_then(|k| k.checked_sub(1)) {
                    Some(last) => vec![(0, units[last].1)],
                    None => Vec::new(),
                }
            }
            Tear::Pages => units
                .into_iter()
                .filter(|_| self.draw() >> 63 == 1)
                .collect(),
        }
    }
}

/// The model with no delay, one of the two built-ins that are no disk class.
pub const NO_DELAY: &str = "none";

/// A consumer SATA SSD whose flush lies ([`FlashParams::sata_lying`]): the
/// negative control of durability checks. No disk class: nobody plans with it.
pub const LYING_SSD: &str = "ssd-sata-lying";

/// A log device of unknown kind: what a system description says when its
/// author knows only "a 10 GB ZIL", a small partition of an SSD as the
/// OpenZFS documentation advises ("a ~4 GB partition on a
/// power-loss-protected SSD"). It runs as the SATA kind of that advice, and
/// a prediction's interval samples every power-loss-protected class, SATA
/// or NVMe ([`crate::disk::DiskClass::log_flash_write_flush_ms`]).
pub const UNKNOWN_FLASH: &str = "flash-unknown";

/// Names of the built-in models, for error messages and docs: the disk
/// classes of zfs-model (the names `plan --class` takes), `ssd-sata-lying`,
/// `flash-unknown` and `none`.
pub fn builtin_names() -> Vec<&'static str> {
    DiskClass::ALL
        .iter()
        .map(|c| c.name())
        .chain([LYING_SSD, UNKNOWN_FLASH, NO_DELAY])
        .collect()
}

impl ModelParams {
    /// The built-in model of a name, with the name it goes by: a disk class
    /// by its name or alias, read by zfs-model's class parser so a class
    /// means the same device here and in `plan`, `ssd-sata-lying`, or `none`.
    pub fn builtin(name: &str) -> Option<(&'static str, ModelParams)> {
        if name.trim().eq_ignore_ascii_case(NO_DELAY) {
            return Some((NO_DELAY, ModelParams::None));
        }
        if name.trim().eq_ignore_ascii_case(LYING_SSD) {
            return Some((LYING_SSD, ModelParams::Flash(FlashParams::sata_lying())));
        }
        if name.trim().eq_ignore_ascii_case(UNKNOWN_FLASH) {
            return Some((UNKNOWN_FLASH, ModelParams::for_class(DiskClass::SsdSata)));
        }
        let class = DiskClass::parse(name).ok()?;
        Some((class.name(), ModelParams::for_class(class)))
    }

    /// What a power cut does to a device of this model.
    pub fn power_loss(&self) -> PowerLoss {
        match self {
            ModelParams::Hdd(p) => PowerLoss {
                volatile_cache: p.write_cache,
                flush_honoured: p.flush_honoured,
                cache_bytes: if p.write_cache { p.cache_bytes } else { 0 },
                tear: Tear::Prefix,
            },
            ModelParams::Flash(p) => PowerLoss {
                volatile_cache: p.volatile_cache,
                flush_honoured: p.flush_honoured,
                cache_bytes: if p.volatile_cache { p.cache_bytes } else { 0 },
                tear: Tear::Pages,
            },
            ModelParams::None => PowerLoss {
                volatile_cache: false,
                flush_honoured: true,
                cache_bytes: 0,
                tear: Tear::Prefix,
            },
        }
    }

    /// The lab's model of a disk class.
    pub fn for_class(class: DiskClass) -> ModelParams {
        match class {
            DiskClass::Hdd7200 => ModelParams::Hdd(HddParams::default()),
            DiskClass::Hdd5400 => ModelParams::Hdd(HddParams::rpm_5400()),
            DiskClass::SsdSata => ModelParams::Flash(FlashParams::sata_plp()),
            DiskClass::SsdSataNoPlp => ModelParams::Flash(FlashParams::sata_consumer()),
            DiskClass::Nvme => ModelParams::Flash(FlashParams::nvme_plp()),
            DiskClass::NvmeNoPlp => ModelParams::Flash(FlashParams::nvme_consumer()),
        }
    }

    /// Check the parameters make physical sense; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        fn pos(name: &str, v: f64) -> Result<(), String> {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("{name} must be a positive number, got {v}"))
            }
        }
        fn nonneg(name: &str, v: f64) -> Result<(), String> {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(format!("{name} must be zero or positive, got {v}"))
            }
        }
        match self {
            ModelParams::Hdd(p) => {
                pos("rpm", p.rpm)?;
                pos("avg_seek_ms", p.avg_seek_ms)?;
                nonneg("track_to_track_ms", p.track_to_track_ms)?;
                if p.track_to_track_ms > p.avg_seek_ms {
                    return Err("track_to_track_ms must not exceed avg_seek_ms".into());
                }
                pos("media_mb_s", p.media_mb_s)?;
                pos("interface_mb_s", p.interface_mb_s)?;
                nonneg("overhead_ms", p.overhead_ms)
            }
            ModelParams::Flash(p) => {
                nonneg("read_ms", p.read_ms)?;
                nonneg("write_ms", p.write_ms)?;
                nonneg("flush_ms", p.flush_ms)?;
                nonneg("flush_ms_per_mb", p.flush_ms_per_mb)?;
                pos("read_mb_s", p.read_mb_s)?;
                pos("write_mb_s", p.write_mb_s)?;
                nonneg("destage_ms", p.destage_ms)?;
                if p.parallelism == 0 {
                    return Err("parallelism must be at least 1".into());
                }
                Ok(())
            }
            ModelParams::None => Ok(()),
        }
    }

    /// A fresh model state for a disk of `capacity` bytes.
    pub fn instantiate(&self, capacity: u64) -> Disk {
        match self {
            ModelParams::Hdd(p) => Disk::Hdd(Hdd::new(p.clone(), capacity)),
            ModelParams::Flash(p) => Disk::Flash(Flash::new(p.clone())),
            ModelParams::None => Disk::None,
        }
    }
}

/// Model state of one disk.
#[derive(Debug, Clone)]
pub enum Disk {
    Hdd(Hdd),
    Flash(Flash),
    None,
}

impl Disk {
    /// Submit `op` at `now`; returns when it completes.
    #[inline]
    pub fn submit(&mut self, now: Nanos, op: Op) -> Nanos {
        match self {
            Disk::Hdd(d) => d.submit(now, op),
            Disk::Flash(d) => d.submit(now, op),
            Disk::None => now,
        }
    }

    fn log(&mut self) -> Option<&mut WriteLog> {
        match self {
            Disk::Hdd(d) => Some(&mut d.log),
            Disk::Flash(d) => Some(&mut d.log),
            Disk::None => None,
        }
    }

    /// Number writes from now on and keep track of which are durable (the
    /// lab's disks do, to know what a power cut loses). `none` keeps no
    /// state: its writes complete, durable, the instant they arrive.
    pub fn track_writes(&mut self) {
        if let Some(l) = self.log() {
            l.enabled = true;
        }
    }

    /// The id of the last write submitted while tracking (0: none yet).
    pub fn last_write_id(&self) -> u64 {
        match self {
            Disk::Hdd(d) => d.log.last_id,
            Disk::Flash(d) => d.log.last_id,
            Disk::None => 0,
        }
    }

    /// Ids of the writes that became durable since the last call: on the
    /// platters or programmed to flash, or never cached at all.
    pub fn take_durable(&mut self) -> Vec<u64> {
        self.log()
            .map(|l| std::mem::take(&mut l.durable))
            .unwrap_or_default()
    }

    /// The power fails at `now`: what the device destaged in idle time
    /// before `now` is durable (see [`Disk::take_durable`]); the cache is
    /// emptied and the ids of the writes it held are returned (lost). Work
    /// in flight is abandoned, so the device comes back idle.
    pub fn power_cut(&mut self, now: Nanos) -> Vec<u64> {
        match self {
            Disk::Hdd(d) => d.power_cut(now),
            Disk::Flash(d) => d.power_cut(now),
            Disk::None => Vec::new(),
        }
    }

    /// Which byte ranges (from its start) of a `len`-byte write at `offset`
    /// in flight at a power cut reach the medium: seeded, so a cut is
    /// reproducible.
    pub fn tear(&mut self, offset: u64, len: u64) -> Vec<(u64, u64)> {
        match self {
            Disk::Hdd(d) => d.log.tear(Tear::Prefix, offset, len),
            Disk::Flash(d) => d.log.tear(Tear::Pages, offset, len),
            Disk::None => vec![(0, len)],
        }
    }
}

fn ms(v: f64) -> Nanos {
    round_to_nanos(v * NS_PER_MS)
}

/// `x.round().max(0.0) as u64`, to the bit, without the call to libm's
/// `round` that baseline x86-64 makes of `f64::round` (a tenth of a plan's
/// time went there). `as` from f64 truncates and saturates (Rust
/// reference, numeric casts: NaN and negatives become 0, values past
/// u64::MAX become u64::MAX); below 2^53 the truncated value is exact as
/// an f64, so `x - t` is the exact fraction (Sterbenz: t <= x < 2t for
/// x >= 1, and t = 0 below), and comparing it with 0.5 rounds half away
/// from zero as `round` does. From 2^53 on every f64 is an integer.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
pub fn round_to_nanos(x: f64) -> Nanos {
    let t = x as u64;
    if x < 9_007_199_254_740_992.0 && x - t as f64 >= 0.5 {
        t + 1
    } else {
        t
    }
}

fn transfer_ms(len: u64, mb_s: f64) -> f64 {
    len as f64 / (mb_s * 1e6) * 1e3
}

/// One hard disk: one actuator, so operations are served one at a time in
/// arrival order (no command reordering; a disk under a deep queue would do
/// somewhat better, see docs/lab.md).
#[derive(Debug, Clone)]
pub struct Hdd {
    p: HddParams,
    capacity: u64,
    /// Byte position under the head after the last media access.
    head: u64,
    /// When that access ended: the platter keeps turning, so a later access
    /// to the following sector waits for it to come round again.
    head_time: Nanos,
    /// When the actuator is free again.
    busy_until: Nanos,
    /// Written but not yet on the platters: offset -> length, merged.
    dirty: Extents,
    dirty_bytes: u64,
    /// Ids of the tracked writes in each cached extent (same keys as
    /// `dirty`): they become durable when their extent is destaged.
    dirty_ids: BTreeMap<u64, Vec<u64>>,
    rng: u64,
    full_stroke_ms: f64,
    /// `overhead_ms` in ns, converted once: the clean-flush path of
    /// [`Hdd::submit`] (a commit flushes every child of its vdev) reads it on
    /// the commonest call of a wide pool's simulation.
    overhead_ns: Nanos,
    log: WriteLog,
}

impl Hdd {
    pub fn new(p: HddParams, capacity: u64) -> Hdd {
        // Seek time grows with the square root of the distance (the arm
        // accelerates over short seeks; Ruemmler & Wilkes 1994):
        //   t(d) = t_t2t + (t_full - t_t2t) * sqrt(d / D).
        // For uniformly random start and end, E[sqrt(|x - y|)] = 8/15, so the
        // full-stroke time follows from the datasheet's average seek.
        let full_stroke_ms =
            p.track_to_track_ms + (p.avg_seek_ms - p.track_to_track_ms) * 15.0 / 8.0;
        let rng = p.seed.max(1);
        let log = WriteLog::new(p.seed);
        let overhead_ns = ms(p.overhead_ms);
        Hdd {
            overhead_ns,
            p,
            capacity: capacity.max(1),
            head: 0,
            head_time: 0,
            busy_until: 0,
            dirty: Extents::default(),
            dirty_bytes: 0,
            dirty_ids: BTreeMap::new(),
            rng,
            full_stroke_ms,
            log,
        }
    }

    pub fn params(&self) -> &HddParams {
        &self.p
    }

    /// One revolution, ms.
    pub fn revolution_ms(&self) -> f64 {
        60_000.0 / self.p.rpm
    }

    /// Seek time for moving the head `distance` bytes, ms.
    pub fn seek_ms(&self, distance: u64) -> f64 {
        if distance == 0 {
            return 0.0;
        }
        let frac = (distance as f64 / self.capacity as f64).min(1.0);
        self.p.track_to_track_ms + (self.full_stroke_ms - self.p.track_to_track_ms) * frac.sqrt()
    }

    fn rotation_ms(&mut self) -> f64 {
        match self.p.rotation {
            Rotation::Average => self.revolution_ms() / 2.0,
            Rotation::Random => {
                // xorshift64*: deterministic per seed, good enough for a delay.
                let mut x = self.rng;
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                self.rng = x;
                let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
                (r as f64 / (1u64 << 53) as f64) * self.revolution_ms()
            }
        }
    }

    /// Time for a media access at `offset` of `len` bytes starting at `at`,
    /// ms; moves the head. An access that continues where the previous one
    /// ended needs no seek; if it follows at once (streaming) it needs no
    /// rotational delay either, otherwise the sector has passed under the head
    /// and comes round again after the rest of a revolution.
    fn media_access_ms(&mut self, offset: u64, len: u64, at: Nanos) -> f64 {
        let positioning = if offset == self.head {
            let gap_ms = at.saturating_sub(self.head_time) as f64 / NS_PER_MS;
            let rev = self.revolution_ms();
            if gap_ms <= STREAM_WINDOW_MS {
                0.0
            } else {
                rev - (gap_ms % rev)
            }
        } else {
            self.seek_ms(offset.abs_diff(self.head)) + self.rotation_ms()
        };
        let total = positioning + transfer_ms(len, self.p.media_mb_s);
        self.head = offset.saturating_add(len);
        self.head_time = at + ms(total);
        total
    }

    /// Write the cached extents to the platters in one elevator sweep starting
    /// at the head (C-SCAN), as a drive does on a flush; returns the time, ms.
    fn destage_all_ms(&mut self, at: Nanos) -> f64 {
        // A flush with nothing cached costs no media time, and is the common
        // case (a commit flushes every disk of a vdev, most with nothing
        // written since the last flush): skip the walk over the empty maps.
        if self.dirty.is_empty() && self.dirty_ids.is_empty() {
            debug_assert_eq!(self.dirty_bytes, 0);
            return 0.0;
        }
        let mut total = 0.0;
        // The sweep's order is fixed by the head where it starts; the extents
        // are taken out while the head moves, and put back emptied (keeping
        // their allocation).
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.drain_sweep(self.head, |o, l| {
            total += self.media_access_ms(o, l, at + ms(total));
        });
        self.dirty = dirty;
        self.dirty_bytes = 0;
        let ids = std::mem::take(&mut self.dirty_ids);
        self.log.durable.extend(ids.into_values().flatten());
        total
    }

    /// Destage cached extents while the drive is idle, as long as each one
    /// finishes before `now` (a drive works off its cache in idle time, and an
    /// access already started is not interrupted).
    fn destage_idle(&mut self, now: Nanos) {
        while self.busy_until < now {
            let Some((o, l)) = self.dirty.next_from(self.head) else {
                break;
            };
            let (head, head_time, rng) = (self.head, self.head_time, self.rng);
            let cost = ms(self.media_access_ms(o, l, self.busy_until));
            if self.busy_until + cost > now {
                // Does not fit: undo the head move and the rotation draw.
                self.head = head;
                self.head_time = head_time;
                self.rng = rng;
                break;
            }
            self.busy_until += cost;
            self.dirty.remove(o);
            self.dirty_bytes -= l;
            if let Some(ids) = self.dirty_ids.remove(&o) {
                self.log.durable.extend(ids);
            }
        }
    }

    fn add_dirty(&mut self, offset: u64, len: u64, id: Option<u64>) {
        // Merge with overlapping or touching extents so a flush writes each
        // region once.
        let (mut start, mut end) = (offset, offset + len);
        let mut ids: Vec<u64> = Vec::new();
        let (dirty_ids, dirty_bytes) = (&mut self.dirty_ids, &mut self.dirty_bytes);
        self.dirty.take_touching(offset, offset + len, |o, l| {
            start = start.min(o);
            end = end.max(o + l);
            *dirty_bytes -= l;
            let mut more = dirty_ids.remove(&o).unwrap_or_default();
            // The longer list takes in the shorter: a run of sequential
            // writes growing one extent costs one push each, not a copy of
            // every id before it.
            if more.len() > ids.len() {
                std::mem::swap(&mut ids, &mut more);
            }
            ids.append(&mut more);
        });
        ids.extend(id);
        self.dirty.insert(start, end - start);
        self.dirty_bytes += end - start;
        if !ids.is_empty() {
            self.dirty_ids.insert(start, ids);
        }
    }

    fn power_cut(&mut self, now: Nanos) -> Vec<u64> {
        if self.p.write_cache {
            self.destage_idle(now);
        }
        self.dirty.clear();
        self.dirty_bytes = 0;
        self.busy_until = self.busy_until.min(now);
        let mut lost: Vec<u64> = std::mem::take(&mut self.dirty_ids)
            .into_values()
            .flatten()
            .collect();
        lost.sort_unstable();
        lost
    }

    fn in_cache(&self, offset: u64, len: u64) -> bool {
        self.dirty
            .at_or_below(offset)
            .is_some_and(|(o, l)| o + l >= offset + len)
    }

    /// Submit `op` at `now`; returns when it completes.
    #[inline]
    pub fn submit(&mut self, now: Nanos, op: Op) -> Nanos {
        // A flush with nothing cached is the command's overhead alone, the
        // common case (a commit flushes every child of its vdev, most with
        // nothing written since their last flush): the same figure as the
        // full path (an idle destage with nothing to destage, then overhead
        // + 0.0 ms), kept small enough to inline into the pool's loops.
        // (`dirty_ids` has only keys of `dirty`, so an empty `dirty` is enough.)
        if matches!(op, Op::Flush) && self.dirty.is_empty() {
            self.busy_until = self.busy_until.max(now) + self.overhead_ns;
            return self.busy_until;
        }
        self.submit_full(now, op)
    }

    fn submit_full(&mut self, now: Nanos, op: Op) -> Nanos {
        if self.p.write_cache {
            self.destage_idle(now);
        }
        let start = self.busy_until.max(now);
        let overhead = self.p.overhead_ms;
        let media_at = start + self.overhead_ns;
        let service_ms = match op {
            Op::Read { offset, len } => {
                if self.in_cache(offset, len) {
                    overhead + transfer_ms(len, self.p.interface_mb_s)
                } else {
                    overhead + self.media_access_ms(offset, len, media_at)
                }
            }
            Op::Write { offset, len } => {
                let id = self.log.next_id();
                if self.p.write_cache {
                    let mut t = overhead + transfer_ms(len, self.p.interface_mb_s);
                    if self.dirty_bytes + len > self.p.cache_bytes {
                        // Cache full: the write waits for the cache to drain.
                        t += self.destage_all_ms(media_at);
                    }
                    self.add_dirty(offset, len, id);
                    t
                } else {
                    self.log.durable.extend(id);
                    overhead + self.media_access_ms(offset, len, media_at)
                }
            }
            // A lying drive answers at once and keeps its cache.
            Op::Flush if !self.p.flush_honoured => overhead,
            Op::Flush => overhead + self.destage_all_ms(media_at),
        };
        self.busy_until = start + ms(service_ms);
        self.busy_until
    }
}

/// A flash device: `parallelism` operations in progress at once; data moves
/// over one shared link at the read or write rate.
#[derive(Debug, Clone)]
pub struct Flash {
    p: FlashParams,
    lanes: Vec<Nanos>,
    bus_free: Nanos,
    unflushed_bytes: u64,
    /// Tracked writes in the volatile buffer, oldest first: (id, bytes,
    /// when acknowledged).
    buffered: VecDeque<(u64, u64, Nanos)>,
    buffered_bytes: u64,
    log: WriteLog,
}

impl Flash {
    pub fn new(p: FlashParams) -> Flash {
        let n = p.parallelism.max(1) as usize;
        let log = WriteLog::new(p.seed);
        Flash {
            p,
            lanes: vec![0; n],
            bus_free: 0,
            unflushed_bytes: 0,
            buffered: VecDeque::new(),
            buffered_bytes: 0,
            log,
        }
    }

    /// The background destage: a buffered write is programmed `destage_ms`
    /// after its acknowledgement, in order of arrival.
    fn destage_aged(&mut self, now: Nanos) {
        let age = ms(self.p.destage_ms);
        while let Some(&(id, len, at)) = self.buffered.front() {
            if at.saturating_add(age) > now {
                break;
            }
            self.buffered.pop_front();
            self.buffered_bytes -= len;
            self.log.durable.push(id);
        }
    }

    fn destage_buffer(&mut self) {
        self.log
            .durable
            .extend(self.buffered.drain(..).map(|(id, _, _)| id));
        self.buffered_bytes = 0;
    }

    fn power_cut(&mut self, now: Nanos) -> Vec<u64> {
        self.destage_aged(now);
        self.buffered_bytes = 0;
        self.unflushed_bytes = 0;
        for l in &mut self.lanes {
            *l = (*l).min(now);
        }
        self.bus_free = self.bus_free.min(now);
        self.buffered.drain(..).map(|(id, _, _)| id).collect()
    }

    pub fn submit(&mut self, now: Nanos, op: Op) -> Nanos {
        self.destage_aged(now);
        let (lane_idx, lane_free) = self
            .lanes
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|(_, t)| *t)
            .expect("at least one lane");
        match op {
            Op::Read { len, .. } | Op::Write { len, .. } => {
                let (latency, rate) = match op {
                    Op::Read { .. } => (self.p.read_ms, self.p.read_mb_s),
                    _ => (self.p.write_ms, self.p.write_mb_s),
                };
                if matches!(op, Op::Write { .. }) {
                    self.unflushed_bytes += len;
                }
                let start = now.max(lane_free);
                let xfer_start = (start + ms(latency)).max(self.bus_free);
                let done = xfer_start + ms(transfer_ms(len, rate));
                self.bus_free = done;
                self.lanes[lane_idx] = done;
                if matches!(op, Op::Write { .. }) {
                    if let Some(id) = self.log.next_id() {
                        if self.p.volatile_cache {
                            self.buffered.push_back((id, len, done));
                            self.buffered_bytes += len;
                            // A full buffer is programmed oldest first.
                            while self.buffered_bytes > self.p.cache_bytes {
                                let Some((old, l, _)) = self.buffered.pop_front() else {
                                    break;
                                };
                                self.buffered_bytes -= l;
                                self.log.durable.push(old);
                            }
                        } else {
                            self.log.durable.push(id);
                        }
                    }
                }
                done
            }
            Op::Flush => {
                // A flush waits for everything in flight, then occupies the
                // whole device.
                let start = self.lanes.iter().copied().max().unwrap_or(0).max(now);
                let cost =
                    self.p.flush_ms + self.p.flush_ms_per_mb * self.unflushed_bytes as f64 / 1e6;
                self.unflushed_bytes = 0;
                if self.p.flush_honoured {
                    self.destage_buffer();
                }
                let done = start + ms(cost);
                for l in &mut self.lanes {
                    *l = done;
                }
                done
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disk_request_reads_as_the_disk_trace_line() {
        let line = |op| {
            DiskRequest {
                at: 5,
                disk: 3,
                op,
                done: 9,
            }
            .to_string()
        };
        assert_eq!(
            line(Op::Read {
                offset: 4096,
                len: 8192
            }),
            "5 3 R 8192 9 4096"
        );
        assert_eq!(
            line(Op::Write {
                offset: 0,
                len: 4096
            }),
            "5 3 W 4096 9 0"
        );
        assert_eq!(line(Op::Flush), "5 3 F 0 9 -");
    }

    #[test]
    fn round_to_nanos_is_round_then_clamp_to_the_bit() {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let reference = |x: f64| x.round().max(0.0) as u64;
        let mut cases = vec![
            0.0,
            -0.0,
            0.5,
            0.49999999999999994,
            1.5,
            2.5,
            2.4999999999999996,
            -0.5,
            -3.7,
            1e-300,
            123_456.5,
            4_503_599_627_370_495.5,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            1.8e19,
            1e30,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        // And a spread of ordinary values, as the disk models produce.
        let mut x = 0.1234_f64;
        for _ in 0..100_000 {
            x = (x * 1.000_731 + 0.377) % 5.0e9;
            cases.push(x);
            cases.push(x.floor() + 0.5);
        }
        for c in cases {
            assert_eq!(round_to_nanos(c), reference(c), "{c:e}");
        }
    }

    const TB8: u64 = 8_001_563_222_016;

    fn hdd(rotation: Rotation, write_cache: bool) -> Hdd {
        Hdd::new(
            HddParams {
                rotation,
                write_cache,
                ..HddParams::default()
            },
            TB8,
        )
    }

    fn to_ms(n: Nanos) -> f64 {
        n as f64 / 1e6
    }

    #[test]
    fn seek_curve_matches_average_and_track_to_track() {
        let d = hdd(Rotation::Average, false);
        // Exact: seek_ms returns the literal 0.0 for no distance.
        assert_eq!(d.seek_ms(0).to_bits(), 0.0f64.to_bits());
        assert!((d.seek_ms(1) - 0.8).abs() < 0.01);
        // Numerically average the curve over random positions: must be the
        // datasheet average.
        let n = 400;
        let mut sum = 0.0;
        for i in 0..n {
            for j in 0..n {
                let a = (i as f64 + 0.5) / n as f64 * TB8 as f64;
                let b = (j as f64 + 0.5) / n as f64 * TB8 as f64;
                // abs() of a difference of two positions on the disk: in
                // 0..TB8, so the cast loses only the fraction of a byte.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let distance = (a - b).abs() as u64;
                sum += d.seek_ms(distance);
            }
        }
        let avg = sum / (n * n) as f64;
        assert!((avg - 8.5).abs() < 0.1, "average seek {avg}");
    }

    #[test]
    fn random_read_costs_seek_rotation_transfer() {
        let mut d = hdd(Rotation::Average, false);
        let t = d.submit(
            0,
            Op::Read {
                offset: TB8 / 2,
                len: 4096,
            },
        );
        let expect = 0.05 + d.seek_ms(TB8 / 2) + 60_000.0 / 7200.0 / 2.0 + 4096.0 / 180e6 * 1e3;
        assert!((to_ms(t) - expect).abs() < 1e-3, "{} vs {expect}", to_ms(t));
        // The next block follows on without positioning.
        let t2 = d.submit(
            t,
            Op::Read {
                offset: TB8 / 2 + 4096,
                len: 4096,
            },
        );
        assert!((to_ms(t2 - t) - (0.05 + 4096.0 / 180e6 * 1e3)).abs() < 1e-3);
    }

    #[test]
    fn a_late_sequential_access_waits_for_the_sector_to_come_round() {
        let mut d = hdd(Rotation::Average, false);
        let t = d.submit(
            0,
            Op::Write {
                offset: 1 << 30,
                len: 4096,
            },
        );
        // 2 ms later the next sector has moved on: wait the rest of the
        // revolution (8.33 - 2 ms), minus the command overhead already spent.
        let t2 = t + ms(2.0);
        let done = d.submit(
            t2,
            Op::Write {
                offset: (1 << 30) + 4096,
                len: 4096,
            },
        );
        let rev = 60_000.0 / 7200.0;
        let expect = 0.05 + (rev - (2.0 + 0.05)) + 4096.0 / 180e6 * 1e3;
        assert!(
            (to_ms(done - t2) - expect).abs() < 0.01,
            "{} vs {expect}",
            to_ms(done - t2)
        );
    }

    #[test]
    fn one_actuator_serialises() {
        let mut d = hdd(Rotation::Average, false);
        let a = d.submit(
            0,
            Op::Read {
                offset: 1 << 40,
                len: 4096,
            },
        );
        let b = d.submit(
            0,
            Op::Read {
                offset: 3 << 40,
                len: 4096,
            },
        );
        assert!(b > a + ms(4.0), "second op waits for the first");
    }

    #[test]
    fn random_rotation_averages_half_a_revolution() {
        let mut d = hdd(Rotation::Random, false);
        let n = 20_000;
        let mut sum = 0.0;
        for _ in 0..n {
            sum += d.rotation_ms();
        }
        let avg = sum / n as f64;
        assert!((avg - 4.1667).abs() < 0.1, "{avg}");
    }

    #[test]
    fn write_cache_defers_cost_to_flush() {
        let mut d = hdd(Rotation::Average, true);
        let w = d.submit(
            0,
            Op::Write {
                offset: 1 << 40,
                len: 4096,
            },
        );
        assert!(to_ms(w) < 0.1, "cached write is fast: {}", to_ms(w));
        let f = d.submit(w, Op::Flush);
        assert!(
            to_ms(f - w) > 5.0,
            "flush pays the media write: {}",
            to_ms(f - w)
        );
        // Nothing dirty: a second flush costs only the command.
        let f2 = d.submit(f, Op::Flush);
        assert!(to_ms(f2 - f) < 0.1);
    }

    #[test]
    fn idle_time_drains_the_cache() {
        let mut d = hdd(Rotation::Average, true);
        let w = d.submit(
            0,
            Op::Write {
                offset: 1 << 40,
                len: 4096,
            },
        );
        // A second later the drive has written the block in idle time.
        let later = w + ms(1000.0);
        let f = d.submit(later, Op::Flush);
        assert!(to_ms(f - later) < 0.1);
    }

    #[test]
    fn flush_sweeps_in_offset_order() {
        let mut d = hdd(Rotation::Average, true);
        // Adjacent writes merge into one extent: one positioning on flush.
        let mut t = 0;
        for i in 0..8u64 {
            t = d.submit(
                t,
                Op::Write {
                    offset: (1 << 40) + i * 4096,
                    len: 4096,
                },
            );
        }
        let f = d.submit(t, Op::Flush);
        let one = d.seek_ms(1 << 40) + 4.1667 + 32768.0 / 180e6 * 1e3 + 0.05;
        assert!(
            (to_ms(f - t) - one).abs() < 0.05,
            "{} vs {one}",
            to_ms(f - t)
        );
    }

    #[test]
    fn flash_plp_flush_is_cheap_consumer_is_not() {
        let mut plp = Flash::new(FlashParams::sata_plp());
        let w = plp.submit(
            0,
            Op::Write {
                offset: 0,
                len: 4096,
            },
        );
        let f = plp.submit(w, Op::Flush);
        // Intel 710 measured 0.158 ms per 4 KiB write + flush.
        assert!((to_ms(f) - 0.158).abs() < 0.01, "{}", to_ms(f));
        let mut cons = Flash::new(FlashParams::sata_consumer());
        let w = cons.submit(
            0,
            Op::Write {
                offset: 0,
                len: 4096,
            },
        );
        let f = cons.submit(w, Op::Flush);
        // The class's typical write + flush, its published devices' median
        // (DiskClass::SsdSataNoPlp), of which the flush is nearly all.
        let typical = crate::disk::DiskClass::SsdSataNoPlp
            .default_perf()
            .positioning_ms
            .typical;
        assert!((to_ms(f) - typical).abs() < 0.01, "{}", to_ms(f));
        assert!(to_ms(f - w) > 1.1);
    }

    #[test]
    fn flash_parallelism_and_bandwidth() {
        let mut d = Flash::new(FlashParams::sata_plp());
        // Four reads at once complete together (4 lanes), the fifth waits.
        let t: Vec<Nanos> = (0..5)
            .map(|i| {
                d.submit(
                    0,
                    Op::Read {
                        offset: i * 4096,
                        len: 4096,
                    },
                )
            })
            .collect();
        assert!(to_ms(t[3]) < 0.2);
        assert!(t[4] > t[0]);
        // A large read is bandwidth bound: 1 MB at 530 MB/s is 1.9 ms.
        let mut d = Flash::new(FlashParams::sata_plp());
        let big = d.submit(
            0,
            Op::Read {
                offset: 0,
                len: 1_000_000,
            },
        );
        assert!((to_ms(big) - (0.09 + 1.0 / 530.0 * 1e3)).abs() < 0.01);
    }

    fn w(offset: u64) -> Op {
        Op::Write { offset, len: 4096 }
    }

    fn tracked(p: ModelParams) -> Disk {
        let mut d = p.instantiate(TB8);
        d.track_writes();
        d
    }

    #[test]
    fn untracked_models_number_nothing() {
        // The simulator never asks: no per-write state builds up.
        let mut d = ModelParams::Hdd(HddParams::default()).instantiate(TB8);
        d.submit(0, w(0));
        assert_eq!(d.last_write_id(), 0);
        assert!(d.take_durable().is_empty());
        assert!(d.power_cut(1).is_empty());
    }

    #[test]
    fn hdd_cut_loses_what_no_flush_covered() {
        let mut d = tracked(ModelParams::Hdd(HddParams::default()));
        let t = d.submit(0, w(1 << 30));
        assert_eq!(d.last_write_id(), 1);
        assert!(d.take_durable().is_empty(), "in the cache only");
        let f = d.submit(t, Op::Flush);
        assert_eq!(d.take_durable(), vec![1], "a flush makes it durable");
        let t2 = d.submit(f, w(2 << 30));
        // Overlapping and touching writes share an extent and its fate.
        let t3 = d.submit(t2, w((2 << 30) + 4096));
        assert_eq!(d.power_cut(t3), vec![2, 3]);
        assert!(d.take_durable().is_empty());
        // After the cut the drive is idle and its cache empty.
        assert!(d.power_cut(t3 + 1).is_empty());
    }

    #[test]
    fn sequential_writes_share_one_extent_and_its_fate() {
        let mut d = tracked(ModelParams::Hdd(HddParams::default()));
        let n = 20_000u64;
        for i in 0..n {
            d.submit(0, w((1 << 30) + i * 4096));
        }
        let Disk::Hdd(h) = &d else { panic!("hdd") };
        assert_eq!(h.dirty.len(), 1, "one merged extent");
        let lost = d.clone().power_cut(1);
        assert_eq!(lost, (1..=n).collect::<Vec<_>>());
        d.submit(1, Op::Flush);
        let mut durable = d.take_durable();
        durable.sort_unstable();
        assert_eq!(durable, (1..=n).collect::<Vec<_>>());
    }

    #[test]
    fn hdd_idle_destage_is_durable() {
        let mut d = tracked(ModelParams::Hdd(HddParams::default()));
        let t = d.submit(0, w(1 << 30));
        // A second later the drive has written it in idle time.
        assert!(d.power_cut(t + ms(1000.0)).is_empty());
        assert_eq!(d.take_durable(), vec![1]);
    }

    #[test]
    fn hdd_without_write_cache_is_durable_at_once() {
        let p = HddParams {
            write_cache: false,
            ..HddParams::default()
        };
        assert!(!ModelParams::Hdd(p.clone()).power_loss().volatile_cache);
        let mut d = tracked(ModelParams::Hdd(p));
        d.submit(0, w(0));
        assert_eq!(d.take_durable(), vec![1]);
    }

    #[test]
    fn hdd_lying_flush_is_fast_and_persists_nothing() {
        let p = HddParams {
            flush_honoured: false,
            rotation: Rotation::Average,
            ..HddParams::default()
        };
        let mut d = tracked(ModelParams::Hdd(p));
        let t = d.submit(0, w(1 << 40));
        let f = d.submit(t, Op::Flush);
        assert!(to_ms(f - t) < 0.1, "acknowledged at once");
        assert!(d.take_durable().is_empty());
        assert_eq!(d.power_cut(f), vec![1]);
    }

    #[test]
    fn flash_plp_loses_nothing_acknowledged() {
        let mut d = tracked(ModelParams::Flash(FlashParams::sata_plp()));
        let t = d.submit(0, w(0));
        assert_eq!(d.take_durable(), vec![1]);
        assert!(d.power_cut(t).is_empty());
    }

    #[test]
    fn flash_consumer_buffers_until_flush_or_destage() {
        let p = FlashParams::sata_consumer();
        assert!(p.volatile_cache && p.flush_honoured);
        let mut d = tracked(ModelParams::Flash(p));
        let t = d.submit(0, w(0));
        assert!(d.take_durable().is_empty());
        let f = d.submit(t, Op::Flush);
        assert_eq!(d.take_durable(), vec![1]);
        let t2 = d.submit(f, w(4096));
        // Before the destage window ends the write is lost ...
        assert_eq!(d.clone().power_cut(t2 + ms(699.0)), vec![2]);
        // ... after it, programmed.
        assert!(d.power_cut(t2 + ms(700.0)).is_empty());
        assert_eq!(d.take_durable(), vec![2]);
    }

    #[test]
    fn flash_lying_flush_persists_nothing_destage_does() {
        let (name, p) = ModelParams::builtin("ssd-sata-lying").unwrap();
        assert_eq!(name, LYING_SSD);
        let pl = p.power_loss();
        assert!(pl.volatile_cache && !pl.flush_honoured);
        let mut d = tracked(p);
        let t = d.submit(0, w(0));
        let f = d.submit(t, Op::Flush);
        // As fast as a protected drive's flush.
        assert!(to_ms(f - t) < 0.2, "{}", to_ms(f - t));
        assert!(d.take_durable().is_empty());
        assert_eq!(d.clone().power_cut(f), vec![1]);
        d.submit(
            t + ms(700.0),
            Op::Read {
                offset: 0,
                len: 4096,
            },
        );
        assert_eq!(d.take_durable(), vec![1]);
    }

    #[test]
    fn flash_full_buffer_programs_the_oldest_first() {
        let p = FlashParams {
            cache_bytes: 8192,
            ..FlashParams::sata_consumer()
        };
        let mut d = tracked(ModelParams::Flash(p));
        for i in 0..3 {
            d.submit(0, w(i * 4096));
        }
        assert_eq!(d.take_durable(), vec![1]);
        assert_eq!(d.power_cut(0), vec![2, 3]);
    }

    #[test]
    fn tears_are_seeded_prefixes_or_page_subsets() {
        let len = 64 * 4096 + 100;
        let mut a = tracked(ModelParams::Hdd(HddParams::default()));
        let mut b = a.clone();
        let mut prefixes = Vec::new();
        for _ in 0..50 {
            let t = a.tear(1 << 20, len);
            assert_eq!(t, b.tear(1 << 20, len), "same seed, same tear");
            assert!(t.len() <= 1);
            if let Some(&(start, end)) = t.first() {
                assert_eq!(start, 0);
                assert!(end == len || end % TEAR_UNIT == 0);
            }
            prefixes.push(t.first().map_or(0, |r| r.1));
        }
        prefixes.sort_unstable();
        prefixes.dedup();
        assert!(prefixes.len() > 10, "prefix lengths vary: {prefixes:?}");
        let mut f = tracked(ModelParams::Flash(FlashParams::sata_consumer()));
        let pages = f.tear(0, len);
        assert!(pages.len() > 10 && pages.len() < 55, "{}", pages.len());
        assert!(pages
            .iter()
            .all(|(s, e)| s % TEAR_UNIT == 0 && e > s && *e <= len));
        // A different seed tears differently.
        let mut g = tracked(ModelParams::Flash(FlashParams {
            seed: 2,
            ..FlashParams::sata_consumer()
        }));
        assert_ne!(g.tear(0, len), pages);
        // Units follow the device's sectors, not the write's start.
        let mut h = tracked(ModelParams::Flash(FlashParams::sata_plp()));
        let units: Vec<(u64, u64)> = (0..64)
            .flat_map(|_| h.tear(TEAR_UNIT - 100, 2 * TEAR_UNIT))
            .collect();
        assert!(units
            .iter()
            .all(|u| [(0, 100), (100, 4196), (4196, 8192)].contains(u)));
    }

    #[test]
    fn builtins_validate() {
        for name in builtin_names() {
            let (canonical, model) = ModelParams::builtin(name).unwrap();
            assert_eq!(canonical, name);
            model.validate().unwrap();
        }
        assert!(ModelParams::builtin("floppy").is_none());
        assert!(builtin_names().contains(&"ssd-sata-lying"));
        // The lab's first names are the same classes.
        assert_eq!(
            ModelParams::builtin("ssd-plp"),
            Some(("ssd-sata", ModelParams::Flash(FlashParams::sata_plp())))
        );
        assert_eq!(
            ModelParams::builtin("hdd").unwrap().0,
            ModelParams::builtin("HDD-7200").unwrap().0
        );
    }

    #[test]
    fn write_flush_is_what_the_model_takes_and_sits_in_its_class_range() {
        for class in DiskClass::ALL {
            let ModelParams::Flash(f) = ModelParams::for_class(class) else {
                assert!(class.write_flush_ms().is_none(), "{class:?}");
                continue;
            };
            // The closed form is the model's own time on an idle device.
            let mut d = Flash::new(f.clone());
            let w = d.submit(
                0,
                Op::Write {
                    offset: 0,
                    len: 4096,
                },
            );
            let done = d.submit(w, Op::Flush);
            assert!(
                (to_ms(done) - f.write_flush_ms(4096)).abs() < 1e-5,
                "{class:?}: {} vs {}",
                to_ms(done),
                f.write_flush_ms(4096)
            );
            // The class's published range holds its model (a range that
            // did not would sample devices that contradict the default).
            let r = class.write_flush_ms().unwrap();
            let t = f.write_flush_ms(4096);
            assert!(r.low <= t && t <= r.high, "{class:?}: {t} outside {r:?}");
            // A device sped up to a target takes the target.
            for target in [r.low, r.high] {
                let k = f.speed_for(4096, target).unwrap();
                let got = f.at_speed(k).write_flush_ms(4096);
                assert!((got - target).abs() < 1e-12, "{class:?}: {got} vs {target}");
            }
        }
        // The transfer alone longer than the target: no factor gives it.
        assert!(FlashParams::sata_plp().speed_for(1 << 20, 0.01).is_none());
    }
}

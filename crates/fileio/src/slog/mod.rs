//! The log-device test (`tankbench slog`): what FreeBSD's `diskinfo -wS`
//! measures, on Linux. One thread writes blocks of one size after another
//! (512 B or 4 KiB, doubling to 1 MiB), each write followed by a cache
//! flush (fdatasync) or written with O_DSYNC, at sequential offsets within
//! a bounded region, and records the latency of each write.
//!
//! A synchronous write of a few KiB is what a ZFS intent log (ZIL) does on
//! every `fsync` or NFS stable write, so these latencies are the numbers
//! that decide whether a device helps as a separate log device (SLOG).
//!
//! Targets:
//! - a directory: a new file `tankbench-slog.<pid>` (created exclusively,
//!   filled once so the writes overwrite allocated blocks, removed at the
//!   end and on a stop signal);
//! - a block device, only with [`SlogSpec::destructive`] and only when
//!   [`device`] finds nothing on it.
//!
//! An existing regular file is never written, destructive or not.

pub mod device;

use crate::result::{LatencySummary, ToolInfo};
use crate::summary::{summarize, ExactEvents};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use device::DeviceInUse;

/// `kind` of a slog result document.
pub(crate) const SLOG_KIND: &str = "tankbench.slog";
/// Version of the slog result's fields; raised when a field changes meaning.
pub(crate) const SLOG_SCHEMA_VERSION: u32 = 1;
/// The percentiles every size reports.
pub(crate) const SLOG_PERCENTILES: [f64; 4] = [50.0, 95.0, 99.0, 99.9];
/// The smallest and largest write size accepted.
pub(crate) const MIN_WRITE: u64 = 512;
pub(crate) const MAX_WRITE: u64 = 16 << 20;
/// The region written when none is given: large enough that a device's
/// write cache and wear levelling see a stream, not one hot block, small
/// enough to prepare in seconds.
pub(crate) const DEFAULT_REGION: u64 = 256 << 20;

/// How each write is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SyncMethod {
    /// pwrite, then fdatasync (on a block device: a cache flush).
    Fdatasync,
    /// The file opened O_DSYNC: each pwrite returns when durable (with
    /// O_DIRECT on a block device, a FUA write where the device has it).
    Dsync,
}

impl SyncMethod {
    pub fn name(self) -> &'static str {
        match self {
            SyncMethod::Fdatasync => "fdatasync",
            SyncMethod::Dsync => "dsync",
        }
    }
}

/// How long each size runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerSize {
    Time(Duration),
    Count(u64),
}

/// What to test, validated by [`SlogSpec::check`].
#[derive(Debug, Clone)]
pub struct SlogSpec {
    /// A directory (a scratch file is made in it) or a block device.
    pub path: PathBuf,
    pub min_size: u64,
    pub max_size: u64,
    pub per_size: PerSize,
    pub sync: SyncMethod,
    /// O_DIRECT (not every file system has it; tmpfs does not).
    pub direct: bool,
    /// Bytes the writes cycle through; None: [`DEFAULT_REGION`], at most the
    /// device's size.
    pub region: Option<u64>,
    /// Allow writing over a block device.
    pub destructive: bool,
}

impl SlogSpec {
    /// The defaults of `tankbench slog PATH`.
    pub fn new(path: impl Into<PathBuf>) -> SlogSpec {
        SlogSpec {
            path: path.into(),
            min_size: MIN_WRITE,
            max_size: 1 << 20,
            per_size: PerSize::Time(Duration::from_secs(2)),
            sync: SyncMethod::Fdatasync,
            direct: false,
            region: None,
            destructive: false,
        }
    }

    /// The sizes tested: `min_size` doubling up to `max_size`.
    pub fn sizes(&self) -> Vec<u64> {
        std::iter::successors(Some(self.min_size), |s| s.checked_mul(2))
            .take_while(|&s| s <= self.max_size)
            .collect()
    }

    /// `max_size` as a buffer length (checked: at most [`MAX_WRITE`]).
    fn max_bytes(&self) -> usize {
        usize::try_from(self.max_size).expect("max_size is at most MAX_WRITE")
    }

    /// The settings on their own (the target is checked when the test starts).
    pub fn check(&self) -> Result<(), SlogError> {
        let ok = |s: u64| s.is_power_of_two() && (MIN_WRITE..=MAX_WRITE).contains(&s);
        if !ok(self.min_size) {
            return Err(SlogError::Setting {
                option: "--min-size",
                value: self.min_size,
                accepted: "a power of two from 512 to 16M bytes",
            });
        }
        if !ok(self.max_size) || self.max_size < self.min_size {
            return Err(SlogError::Setting {
                option: "--max-size",
                value: self.max_size,
                accepted: "a power of two from --min-size to 16M bytes",
            });
        }
        if let Some(region) = self.region {
            if region < self.max_size || region % self.max_size != 0 {
                return Err(SlogError::Setting {
                    option: "--region",
                    value: region,
                    accepted: "a multiple of --max-size, at least --max-size",
                });
            }
        }
        match self.per_size {
            PerSize::Count(0) => Err(SlogError::Setting {
                option: "--count",
                value: 0,
                accepted: "1 or more writes per size",
            }),
            PerSize::Time(t) if t.is_zero() || t > Duration::from_secs(3600) => {
                Err(SlogError::Setting {
                    option: "--time-per-size",
                    value: t.as_millis().try_into().unwrap_or(u64::MAX),
                    accepted: "more than 0 and at most 3600 seconds (value in ms)",
                })
            }
            _ => Ok(()),
        }
    }
}

/// Why the test could not run.
#[derive(Debug, thiserror::Error)]
pub enum SlogError {
    #[error("{option}={value}: accepted: {accepted}")]
    Setting {
        option: &'static str,
        value: u64,
        accepted: &'static str,
    },
    #[error("{path}: no such directory or block device")]
    NotFound { path: PathBuf },
    #[error(
        "{path}: an existing file; slog writes only into a file it creates \
         (give a directory) or onto a block device with --destructive"
    )]
    ExistingFile { path: PathBuf },
    #[error("{path}: not a directory or a block device")]
    NotDirectoryOrDevice { path: PathBuf },
    #[error(
        "{path} is a block device and slog overwrites what it holds; \
         --destructive allows it, after checking it holds no file system, pool or partition"
    )]
    DeviceNeedsDestructive { path: PathBuf },
    #[error(
        "{path}: --destructive is for a block device; a directory gets a scratch file of its own"
    )]
    DestructiveOnDirectory { path: PathBuf },
    #[error("{path}: refusing to overwrite the device: {found}")]
    DeviceInUse { path: PathBuf, found: DeviceInUse },
    #[error("{path}: the device has {size} bytes, less than one --max-size write ({max_size})")]
    DeviceTooSmall {
        path: PathBuf,
        size: u64,
        max_size: u64,
    },
    #[error(
        "{path}: O_DIRECT is refused here ({source}); leave out --direct, \
         or for {size}-byte writes use a --min-size of the device's block size"
    )]
    DirectRefused {
        path: PathBuf,
        size: u64,
        source: io::Error,
    },
    #[error("{path}: {action}: {source}")]
    Io {
        path: PathBuf,
        action: &'static str,
        source: io::Error,
    },
}

/// What was written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A scratch file in a directory (through its file system).
    File,
    /// A whole block device or partition.
    BlockDevice,
}

/// One write size's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SlogSize {
    pub size_bytes: u64,
    pub writes: u64,
    /// Time spent writing this size (the sum of the write latencies' wall
    /// clock, from the first write's start to the last one's end).
    pub seconds: f64,
    /// Bytes made durable per second (size × writes / seconds).
    pub bytes_per_second: f64,
    /// Durable writes per second.
    pub iops: f64,
    /// Latency of one write including its flush: count, min/mean/max (ms),
    /// percentiles [`SLOG_PERCENTILES`] and the HDR histogram (ns buckets).
    pub latency: LatencySummary,
}

/// Mean write latency as a line over the write size, fitted over all sizes
/// by least squares: `latency = overhead + size / bandwidth`. The two
/// numbers a simulator's log-device model takes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyFit {
    /// The latency of a write of no bytes (the flush and command cost), µs.
    pub overhead_us: f64,
    /// The cost of each further byte, as a rate; None when the latency does
    /// not grow with the size (a device faster than the clock can tell, or
    /// a single size).
    pub bandwidth_bytes_per_second: Option<f64>,
}

/// `tankbench slog`'s result document (`--format=json`, `--json=FILE`): the
/// file a system description names as its log device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SlogResult {
    /// Always [`SLOG_KIND`].
    pub kind: String,
    /// [`SLOG_SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    pub tool: ToolInfo,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// The path as given: the directory or the device.
    pub path: String,
    pub target: TargetKind,
    pub sync: SyncMethod,
    pub direct: bool,
    pub region_bytes: u64,
    /// A stop signal ended the test early: the last size has fewer writes
    /// than asked and later sizes are missing.
    pub interrupted: bool,
    pub sizes: Vec<SlogSize>,
    /// None with fewer than two sizes.
    pub fit: Option<LatencyFit>,
}

impl SlogResult {
    /// Read a result document, checking its kind and version.
    pub fn from_json(text: &str) -> Result<SlogResult, ResultDocError> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(ResultDocError::Json)?;
        check_kind(&value, SLOG_KIND, SLOG_SCHEMA_VERSION)?;
        serde_json::from_value(value).map_err(ResultDocError::Json)
    }
}

/// Why a slog or probe document was not read.
#[derive(Debug, thiserror::Error)]
pub enum ResultDocError {
    #[error("not valid JSON of this kind: {0}")]
    Json(serde_json::Error),
    #[error("kind is {found:?}, expected {expected:?}")]
    Kind {
        found: Option<String>,
        expected: &'static str,
    },
    #[error("schema_version {found} is newer than this tankbench reads ({known})")]
    Version { found: u64, known: u32 },
}

/// The `kind` and `schema_version` check shared by the slog and probe
/// documents.
pub(crate) fn check_kind(
    value: &serde_json::Value,
    expected: &'static str,
    known: u32,
) -> Result<(), ResultDocError> {
    let found = value.get("kind").and_then(|k| k.as_str());
    if found != Some(expected) {
        return Err(ResultDocError::Kind {
            found: found.map(str::to_string),
            expected,
        });
    }
    let version = value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    if version > u64::from(known) {
        return Err(ResultDocError::Version {
            found: version,
            known,
        });
    }
    Ok(())
}

/// Least squares of mean latency (µs) over size (bytes).
pub(crate) fn fit_latency(sizes: &[SlogSize]) -> Option<LatencyFit> {
    let points: Vec<(f64, f64)> = sizes
        .iter()
        .filter(|s| s.writes > 0)
        .map(|s| (s.size_bytes as f64, s.latency.mean_ms * 1000.0))
        .collect();
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope_us_per_byte = sxy / sxx;
    if slope_us_per_byte > 0.0 {
        Some(LatencyFit {
            overhead_us: (my - slope_us_per_byte * mx).max(0.0),
            bandwidth_bytes_per_second: Some(1e6 / slope_us_per_byte),
        })
    } else {
        Some(LatencyFit {
            overhead_us: my,
            bandwidth_bytes_per_second: None,
        })
    }
}

/// Route stop signals: the first ends the test after the current write, a
/// second removes the scratch file and ends the process.
pub fn install_stop_handlers() {
    crate::signals::StopHandlers::new()
        .on_second(crate::signals::remove_scratch_file_and_exit)
        .install();
}

/// The file slog made, removed when dropped.
struct ScratchFile {
    path: PathBuf,
}

impl ScratchFile {
    fn create(dir: &Path, opts: &OpenOptions) -> Result<(ScratchFile, File), SlogError> {
        let path = dir.join(format!("tankbench-slog.{}", std::process::id()));
        let mut o = opts.clone();
        o.create_new(true);
        let file = o.open(&path).map_err(|source| SlogError::Io {
            path: path.clone(),
            action: "create the scratch file",
            source,
        })?;
        crate::signals::register_scratch_file(&path);
        Ok((ScratchFile { path }, file))
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        crate::signals::forget_scratch_file();
    }
}

/// A buffer aligned for O_DIRECT (4 KiB, the largest logical block size in
/// common use).
struct AlignedBuf {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    const ALIGN: usize = 4096;
    fn new(len: usize) -> AlignedBuf {
        let mut raw = vec![0u8; len + Self::ALIGN];
        let start = raw.as_ptr().align_offset(Self::ALIGN);
        // Incompressible and not deduplicable: a ZFS target with compression
        // would otherwise write almost nothing.
        for (i, chunk) in raw[start..start + len].chunks_mut(8).enumerate() {
            let v = crate::rng::splitmix64(i as u64 ^ 0x736c_6f67).to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
        AlignedBuf { raw, start, len }
    }
    fn bytes(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + self.len]
    }
}

/// The opened target.
struct Opened {
    file: File,
    kind: TargetKind,
    region: u64,
    _scratch: Option<ScratchFile>,
}

fn io_err<'a>(path: &'a Path, action: &'static str) -> impl FnOnce(io::Error) -> SlogError + 'a {
    move |source| SlogError::Io {
        path: path.to_path_buf(),
        action,
        source,
    }
}

/// Read-write with the spec's O_DSYNC and O_DIRECT, plus `extra` flags.
fn open_options(spec: &SlogSpec, extra: libc::c_int) -> OpenOptions {
    let mut flags = extra;
    if spec.sync == SyncMethod::Dsync {
        flags |= libc::O_DSYNC;
    }
    if spec.direct {
        flags |= libc::O_DIRECT;
    }
    let mut o = OpenOptions::new();
    o.read(true).write(true).mode(0o600).custom_flags(flags);
    o
}

fn direct_refused(spec: &SlogSpec, path: &Path, source: io::Error) -> SlogError {
    if spec.direct && source.raw_os_error() == Some(libc::EINVAL) {
        SlogError::DirectRefused {
            path: path.to_path_buf(),
            size: spec.min_size,
            source,
        }
    } else {
        SlogError::Io {
            path: path.to_path_buf(),
            action: "write",
            source,
        }
    }
}

/// A new scratch file in the directory `spec.path`, its region filled.
fn open_scratch_file(spec: &SlogSpec, progress: &mut dyn FnMut(&str)) -> Result<Opened, SlogError> {
    let path = spec.path.as_path();
    let region = spec.region.unwrap_or(DEFAULT_REGION);
    let (scratch, file) = match ScratchFile::create(path, &open_options(spec, 0)) {
        Err(SlogError::Io { source, path, .. })
            if spec.direct && source.raw_os_error() == Some(libc::EINVAL) =>
        {
            return Err(SlogError::DirectRefused {
                path,
                size: spec.min_size,
                source,
            })
        }
        other => other?,
    };
    // Fill the region once, so each test write overwrites allocated
    // blocks (as a log device's writes do) instead of growing the file.
    progress(&format!(
        "preparing {} MiB in {}",
        region >> 20,
        scratch.path.display()
    ));
    let mut buf = AlignedBuf::new(spec.max_bytes());
    let mut at = 0;
    while at < region {
        if crate::signals::stop_requested() {
            break;
        }
        file.write_all_at(buf.bytes(), at)
            .map_err(|e| direct_refused(spec, &scratch.path, e))?;
        at += spec.max_size;
    }
    file.sync_all()
        .map_err(io_err(&scratch.path, "flush the prepared region"))?;
    Ok(Opened {
        file,
        kind: TargetKind::File,
        region,
        _scratch: Some(scratch),
    })
}

/// Classify and check the target, then open it for the test.
fn open_target(spec: &SlogSpec, progress: &mut dyn FnMut(&str)) -> Result<Opened, SlogError> {
    let path = spec.path.as_path();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(SlogError::NotFound {
                path: path.to_path_buf(),
            })
        }
        Err(e) => return Err(io_err(path, "stat")(e)),
    };
    let ft = meta.file_type();
    if ft.is_dir() {
        if spec.destructive {
            return Err(SlogError::DestructiveOnDirectory {
                path: path.to_path_buf(),
            });
        }
        return open_scratch_file(spec, progress);
    }
    if ft.is_file() {
        return Err(SlogError::ExistingFile {
            path: path.to_path_buf(),
        });
    }
    if !ft.is_block_device() {
        return Err(SlogError::NotDirectoryOrDevice {
            path: path.to_path_buf(),
        });
    }
    if !spec.destructive {
        return Err(SlogError::DeviceNeedsDestructive {
            path: path.to_path_buf(),
        });
    }
    let in_use = |found| SlogError::DeviceInUse {
        path: path.to_path_buf(),
        found,
    };
    use std::os::unix::fs::MetadataExt;
    if let Some(found) = device::system_uses(meta.rdev()).into_iter().next() {
        return Err(in_use(found));
    }
    // Read-only first: the signature scan must not need write access.
    let probe = File::open(path).map_err(io_err(path, "open for the signature scan"))?;
    let size = device_size(&probe).map_err(io_err(path, "read the device size"))?;
    if let Some(found) = device::scan_ends(&probe, size).map_err(io_err(path, "read the ends"))? {
        return Err(in_use(found));
    }
    drop(probe);
    if let Some(found) = device::blkid_probe(path) {
        return Err(in_use(found));
    }
    // O_EXCL on a block device: the kernel refuses it (EBUSY) while the
    // device is mounted or claimed, and keeps others from claiming it during
    // the test.
    let file = open_options(spec, libc::O_EXCL)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EBUSY) => in_use(DeviceInUse::Busy),
            _ if spec.direct && e.raw_os_error() == Some(libc::EINVAL) => {
                SlogError::DirectRefused {
                    path: path.to_path_buf(),
                    size: spec.min_size,
                    source: e,
                }
            }
            _ => io_err(path, "open for writing")(e),
        })?;
    if size < spec.max_size {
        return Err(SlogError::DeviceTooSmall {
            path: path.to_path_buf(),
            size,
            max_size: spec.max_size,
        });
    }
    let whole = size / spec.max_size * spec.max_size;
    let region = spec.region.unwrap_or(DEFAULT_REGION).min(whole);
    Ok(Opened {
        file,
        kind: TargetKind::BlockDevice,
        region,
        _scratch: None,
    })
}

/// A block device's size: seeking to its end works on every Linux block
/// device without an ioctl number per architecture.
fn device_size(file: &File) -> io::Result<u64> {
    use std::io::Seek;
    let mut f = file;
    f.seek(io::SeekFrom::End(0))
}

/// Run the test. `progress` gets a line before the preparation and after
/// each size (for stderr); the result holds every finished size, also when
/// a stop signal ended the test early.
pub fn run(spec: &SlogSpec, progress: &mut dyn FnMut(&str)) -> Result<SlogResult, SlogError> {
    spec.check()?;
    let started_at = crate::clock::utc_now_rfc3339();
    let target = open_target(spec, progress)?;
    let mut buf = AlignedBuf::new(spec.max_bytes());
    let mut sizes = Vec::new();
    let mut stamp = 0u64;
    for size in spec.sizes() {
        if crate::signals::stop_requested() {
            break;
        }
        let figures = one_size(spec, &target, &mut buf, size, &mut stamp)?;
        progress(&format!(
            "{:>8} B: {} writes, {:.1} µs/write",
            size,
            figures.writes,
            figures.latency.mean_ms * 1000.0
        ));
        sizes.push(figures);
    }
    let fit = fit_latency(&sizes);
    Ok(SlogResult {
        kind: SLOG_KIND.into(),
        schema_version: SLOG_SCHEMA_VERSION,
        tool: ToolInfo::tankbench(),
        started_at,
        path: spec.path.display().to_string(),
        target: target.kind,
        sync: spec.sync,
        direct: spec.direct,
        region_bytes: target.region,
        interrupted: crate::signals::stop_requested(),
        sizes,
        fit,
    })
}

fn one_size(
    spec: &SlogSpec,
    target: &Opened,
    buf: &mut AlignedBuf,
    size: u64,
    stamp: &mut u64,
) -> Result<SlogSize, SlogError> {
    let mut h =
        Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds");
    let mut exact = ExactEvents {
        min_ns: u64::MAX,
        ..ExactEvents::default()
    };
    let len = usize::try_from(size).expect("a write size is at most MAX_WRITE");
    let mut offset = 0u64;
    let began = Instant::now();
    loop {
        let done = match spec.per_size {
            PerSize::Count(n) => exact.count >= n,
            PerSize::Time(t) => began.elapsed() >= t,
        };
        if done || crate::signals::stop_requested() {
            break;
        }
        // A new first word per write: no two blocks are the same.
        *stamp += 1;
        buf.bytes()[..8].copy_from_slice(&stamp.to_le_bytes());
        let t0 = Instant::now();
        target
            .file
            .write_all_at(&buf.bytes()[..len], offset)
            .map_err(|e| direct_refused(spec, &spec.path, e))?;
        if spec.sync == SyncMethod::Fdatasync {
            target
                .file
                .sync_data()
                .map_err(io_err(&spec.path, "fdatasync"))?;
        }
        let ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
        h.saturating_record(ns.max(1));
        exact.count += 1;
        exact.sum_ns = exact.sum_ns.saturating_add(ns);
        exact.min_ns = exact.min_ns.min(ns);
        exact.max_ns = exact.max_ns.max(ns);
        offset += size;
        if offset + size > target.region {
            offset = 0;
        }
    }
    let seconds = began.elapsed().as_secs_f64();
    if exact.count == 0 {
        exact.min_ns = 0;
    }
    let latency = summarize(&h, &SLOG_PERCENTILES).with_exact(exact);
    let per_second = |x: f64| if seconds > 0.0 { x / seconds } else { 0.0 };
    Ok(SlogSize {
        size_bytes: size,
        writes: exact.count,
        seconds,
        bytes_per_second: per_second((size * exact.count) as f64),
        iops: per_second(exact.count as f64),
        latency,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(bytes: u64, mean_us: f64) -> SlogSize {
        SlogSize {
            size_bytes: bytes,
            writes: 10,
            seconds: 1.0,
            bytes_per_second: 0.0,
            iops: 0.0,
            latency: LatencySummary {
                count: 10,
                mean_ms: mean_us / 1000.0,
                ..LatencySummary::default()
            },
        }
    }

    #[test]
    fn sizes_double_from_min_to_max() {
        let mut s = SlogSpec::new("/x");
        s.min_size = 4096;
        s.max_size = 65536;
        assert_eq!(s.sizes(), vec![4096, 8192, 16384, 32768, 65536]);
        assert!(s.check().is_ok());
        s.max_size = 3000;
        assert!(matches!(
            s.check(),
            Err(SlogError::Setting {
                option: "--max-size",
                ..
            })
        ));
        s.max_size = 1 << 20;
        s.region = Some((1 << 20) + 1);
        assert!(matches!(
            s.check(),
            Err(SlogError::Setting {
                option: "--region",
                ..
            })
        ));
    }

    #[test]
    fn the_fit_recovers_overhead_and_bandwidth() {
        // 20 µs + size / (100 MB/s): 100 bytes per µs.
        let sizes: Vec<SlogSize> = [4096u64, 8192, 65536]
            .iter()
            .map(|&b| size(b, 20.0 + b as f64 / 100.0))
            .collect();
        let fit = fit_latency(&sizes).unwrap();
        assert!((fit.overhead_us - 20.0).abs() < 1e-6, "{fit:?}");
        let bw = fit.bandwidth_bytes_per_second.unwrap();
        assert!((bw - 100e6).abs() < 1.0, "{fit:?}");
        // Flat latency: no bandwidth term.
        let flat = fit_latency(&[size(512, 50.0), size(1024, 50.0)]).unwrap();
        assert_eq!(flat.bandwidth_bytes_per_second, None);
        assert!(fit_latency(&[size(512, 50.0)]).is_none());
    }

    #[test]
    fn documents_of_another_kind_or_a_newer_version_are_refused() {
        let e = SlogResult::from_json(r#"{"kind":"tankbench.probe","schema_version":1}"#);
        assert!(matches!(e, Err(ResultDocError::Kind { .. })), "{e:?}");
        let e = SlogResult::from_json(r#"{"kind":"tankbench.slog","schema_version":99}"#);
        assert!(
            matches!(e, Err(ResultDocError::Version { found: 99, .. })),
            "{e:?}"
        );
    }
}

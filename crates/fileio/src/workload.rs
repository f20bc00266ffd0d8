//! The typed workload: what a run does, built without any command-line words.
//!
//! [`RunSpec`] (a run) and [`FileSet`] (the test files, all that `prepare`
//! and `cleanup` need) are made by a builder that starts from sysbench
//! 1.0.20's defaults ([`RunSpec::builder`], [`FileSet::builder`]), from a
//! result's [`WorkloadSummary`] (`RunSpec::try_from(&summary)`), or from
//! option words ([`RunSpec::from_words`], in [`crate::options`]). Every way
//! ends in the same checks, [`RunSpec::validate`], whose refusal is a
//! [`WorkloadError`]: typed, with the option, the value and what is
//! accepted, and displayed as sysbench's own message (without its `FATAL: `
//! prefix), so the sysbench front end, one client of this module, prints
//! exactly what sysbench prints.
//!
//! This module knows nothing of the sysbench front end (`crate::sysbench`).

use crate::result::WorkloadSummary;
use crate::spec::{
    DataPattern, ExtraFlags, FileSet, FsyncMode, InjectedLatency, IoMode, Mode, RateProcess,
    RunSpec,
};
use crate::text::{printable, printable_word};
use std::path::PathBuf;

/// The largest `--file-block-size` (sysbench keeps it in a C int).
pub const MAX_BLOCK_SIZE: u64 = i32::MAX as u64;
/// The largest `--file-total-size` (sysbench keeps it in a C long long).
pub(crate) const MAX_TOTAL_SIZE: u64 = i64::MAX as u64;
/// The largest request, block size x merged requests (sysbench computes it
/// in a C int and cannot allocate a larger buffer).
pub(crate) const MAX_REQUEST_SIZE: u64 = i32::MAX as u64;
/// The deepest asynchronous queue per thread: io_uring rings hold at most
/// 32768 entries.
pub(crate) const MAX_ASYNC_BACKLOG: u32 = 32768;
/// O_DIRECT transfers must be a multiple of the smallest logical sector.
/// The longest `--warmup`: a day, as for `--time` in the simulator's bounds.
pub const MAX_WARMUP_S: u64 = 86_400;

pub(crate) const DIRECT_ALIGNMENT: u64 = 512;
/// The percentiles of the per-operation latency section when none are asked
/// for (sysbench's `--percentile` is added to them).
pub(crate) const DEFAULT_PERCENTILES: [f64; 4] = [50.0, 95.0, 99.0, 99.9];

/// Why a workload is refused. Each variant names the option (sysbench's
/// spelling) and carries the value; `Display` is sysbench 1.0.20's message
/// where sysbench has one, else one line naming the option and what it
/// accepts. Front ends add their prefix (`FATAL: `) and their context.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    /// `--threads` below 1.
    #[error("Invalid value for --threads: {value}.")]
    Threads { value: i64 },
    /// `--events`, `--time`, `--rate` (and `--report-interval`) below 0.
    #[error("Invalid value for --{option}: {value} (accepted: {accepted}, up to {max})", max = i32::MAX)]
    NegativeLimit {
        option: &'static str,
        value: i64,
        accepted: &'static str,
    },
    /// `--percentile` outside 0 to 100.
    #[error("Invalid value for --percentile: {value}")]
    Percentile { value: i64 },
    /// `--file-num` below 1.
    #[error("Invalid value for file-num: {value}")]
    FileNum { value: i64 },
    /// `--file-block-size` of 0 (or not a size, which sysbench reads as 0).
    #[error("Invalid value for file-block-size: 0.")]
    BlockSizeZero,
    /// `--validate` with blocks too small to carry their checksum and offset
    /// (sysbench crashes on them).
    #[error("Invalid value for --file-block-size: {block_size}: --validate needs blocks of at least {min} bytes (each carries its checksum and offset)")]
    ValidateBlockSize { block_size: u64, min: u64 },
    /// `--file-total-size` of 0 (or not a size).
    #[error("Invalid value for file-total-size: 0")]
    TotalSizeZero,
    /// A size above what the option holds; `value` as given.
    #[error("Invalid value for {option}: {} (too large; accepted: 1 to {max} bytes, digits with an optional K, M, G or T suffix)", printable(value))]
    SizeTooLarge {
        option: String,
        value: String,
        max: u64,
    },
    /// A run without `--file-test-mode`.
    #[error("Missing required argument: --file-test-mode")]
    MissingMode,
    /// `--file-test-mode` not one of seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw.
    #[error("Invalid IO operations mode: {}.", printable(value))]
    UnknownMode { value: String },
    /// `--file-io-mode` not one of sync, async, mmap.
    #[error("unknown I/O mode: {}", printable(value))]
    UnknownIoMode { value: String },
    /// `--file-async-backlog` outside 1 to [`MAX_ASYNC_BACKLOG`] (async only).
    #[error("Invalid value of file-async-backlog: {value}{}", if *value > 0 { " (io_uring accepts 1 to 32768)" } else { "" })]
    AsyncBacklog { value: i64 },
    /// An item of `--file-extra-flags` not one of sync, dsync, direct.
    #[error("Invalid value for file-extra-flags: {}", printable(value))]
    ExtraFlag { value: String },
    /// `--validate` with an engine whose in-flight requests share one buffer
    /// (io_uring): a completed request's buffer may hold another's data.
    #[error("--validate cannot be used with --file-io-mode={}: in-flight requests share one buffer, so checksums would be compared against other requests' data (use sync or mmap)", io_mode.name())]
    ValidateSharedBuffer { io_mode: IoMode },
    /// `--validate` random run with more threads than blocks: it would never
    /// end (see [`RunSpec::validate_threads`]).
    #[error("Invalid value for --threads: {threads}: with --validate no two threads work on the same block, and the files hold {blocks} blocks of --file-block-size={block_size}, so at most {blocks} threads (lower --threads, or raise --file-total-size or lower --file-block-size)")]
    ValidateThreads {
        threads: u32,
        blocks: u64,
        block_size: u64,
    },
    /// `--file-fsync-freq` or `--file-merged-requests` below 0.
    #[error("Invalid value for {option}: {value}.")]
    NegativeCount { option: &'static str, value: i64 },
    /// `--file-fsync-mode` not fsync or fdatasync (empty: sysbench crashes).
    #[error("{}", fsync_mode_message(value))]
    FsyncMode { value: String },
    /// `--file-rw-ratio` below 0.
    #[error("Invalid value for --file-rw-ratio: {value:.6}.")]
    RwRatio { value: f64 },
    /// `--file-data` not zero or random.
    #[error(
        "Invalid value for --file-data: {} (accepted: zero, random)",
        printable_word(value)
    )]
    FileData { value: String },
    /// An item of `--percentiles` outside (0, 100].
    #[error(
        "Invalid value for --percentiles: '{}' (accepted: numbers in (0, 100], e.g. 50,95,99,99.9)",
        printable(value)
    )]
    Percentiles { value: String },
    /// `--tb-inject-latency` not a latency model.
    #[error("Invalid value for --tb-inject-latency: '{}' (accepted: fixed:DURATION or bimodal:FAST:SLOW:P_SLOW, durations like 500us or 2ms, at most 1h)", printable(value))]
    InjectLatency { value: String },
    /// `--file-dir` an nfs:// address that does not parse; `reason` is the
    /// NFS client's account of it.
    #[error("Invalid value for --file-dir: {reason}")]
    FileDir { value: String, reason: String },
    /// A run on an nfs:// file set in another I/O mode than sync.
    #[error("--file-io-mode={} is not available with an nfs:// --file-dir (the NFS client sends one call at a time per thread); use --file-io-mode=sync", io_mode.name())]
    NfsIoMode { io_mode: IoMode },
    /// Block size x merged requests above [`MAX_REQUEST_SIZE`].
    #[error("--file-block-size ({block_size}) x --file-merged-requests ({merged_requests}) is {request_size} bytes per request; at most {max} are accepted", max = MAX_REQUEST_SIZE)]
    RequestTooLarge {
        block_size: u64,
        merged_requests: u64,
        request_size: u64,
    },
    /// Fewer bytes than files: every file would be empty.
    #[error("--file-total-size ({total_size} bytes) is smaller than --file-num ({file_num}): every test file would be empty; make the total at least {file_num} bytes or use fewer files")]
    EmptyFiles { total_size: u64, file_num: u64 },
    /// O_DIRECT with a block size (or request) not a multiple of the sector.
    #[error("--file-extra-flags=direct needs --file-block-size to be a multiple of {alignment} bytes (the smallest logical sector size); {block_size} is not")]
    DirectAlignment { block_size: u64, alignment: u64 },
    /// An INT option whose value is not a 32-bit integer (sysbench's message).
    #[error("Invalid value for the '{}' option: '{}'", option.replace('-', "_"), printable(value))]
    InvalidInt { option: String, value: String },
    /// An unknown option, or a boolean with another value than
    /// on/true/1/off/false/0; `word` as given (sysbench's message).
    #[error("invalid option: {}", printable(word))]
    InvalidOption { word: String },
    /// A word of a workload that is not an option (`run`, a stray value).
    #[error("'{}' is not a workload option (accepted: option words like --file-total-size=4G or file-total-size=4G; the command is not part of a workload)", printable(word))]
    NotAnOption { word: String },
}

fn fsync_mode_message(value: &str) -> String {
    if value.is_empty() {
        // sysbench dereferences the missing value and crashes (SIGSEGV).
        "Invalid value for --file-fsync-mode: '' (accepted: fsync, fdatasync)".to_string()
    } else {
        format!("Invalid fsync mode: {}.", printable(value))
    }
}

impl WorkloadError {
    /// The option refused, as the command line spells it (without `--`);
    /// `None` for a word that is not an option.
    pub fn option(&self) -> Option<&str> {
        Some(match self {
            WorkloadError::Threads { .. } | WorkloadError::ValidateThreads { .. } => "threads",
            WorkloadError::NegativeLimit { option, .. }
            | WorkloadError::NegativeCount { option, .. } => option,
            WorkloadError::Percentile { .. } => "percentile",
            WorkloadError::FileNum { .. } | WorkloadError::EmptyFiles { .. } => "file-num",
            WorkloadError::BlockSizeZero
            | WorkloadError::DirectAlignment { .. }
            | WorkloadError::ValidateBlockSize { .. } => "file-block-size",
            WorkloadError::TotalSizeZero => "file-total-size",
            WorkloadError::SizeTooLarge { option, .. }
            | WorkloadError::InvalidInt { option, .. } => option,
            WorkloadError::MissingMode | WorkloadError::UnknownMode { .. } => "file-test-mode",
            WorkloadError::UnknownIoMode { .. } | WorkloadError::NfsIoMode { .. } => "file-io-mode",
            WorkloadError::AsyncBacklog { .. } => "file-async-backlog",
            WorkloadError::ExtraFlag { .. } => "file-extra-flags",
            WorkloadError::FsyncMode { .. } => "file-fsync-mode",
            WorkloadError::RwRatio { .. } => "file-rw-ratio",
            WorkloadError::FileData { .. } => "file-data",
            WorkloadError::ValidateSharedBuffer { .. } => "validate",
            WorkloadError::Percentiles { .. } => "percentiles",
            WorkloadError::InjectLatency { .. } => "tb-inject-latency",
            WorkloadError::FileDir { .. } => "file-dir",
            WorkloadError::RequestTooLarge { .. } => "file-merged-requests",
            WorkloadError::InvalidOption { .. } | WorkloadError::NotAnOption { .. } => return None,
        })
    }
}

/// `--file-num` as given (sysbench's INT): at least 1.
pub(crate) fn check_file_num(given: i64) -> Result<u64, WorkloadError> {
    match u64::try_from(given) {
        Ok(n) if n > 0 => Ok(n),
        // sysbench stores the value unsigned and accepts negatives; we refuse.
        _ => Err(WorkloadError::FileNum { value: given }),
    }
}

/// `--file-block-size`: 1 to [`MAX_BLOCK_SIZE`].
pub(crate) fn check_block_size(size: u64) -> Result<u64, WorkloadError> {
    match size {
        0 => Err(WorkloadError::BlockSizeZero),
        s if s > MAX_BLOCK_SIZE => Err(WorkloadError::SizeTooLarge {
            option: "file-block-size".into(),
            value: s.to_string(),
            max: MAX_BLOCK_SIZE,
        }),
        s => Ok(s),
    }
}

/// With `--validate`, a block must hold its checksum and offset.
pub(crate) fn check_validate_block_size(
    validate: bool,
    block_size: u64,
) -> Result<(), WorkloadError> {
    let min = crate::run::pattern::MIN_CHECKED_BLOCK as u64;
    if validate && block_size < min {
        return Err(WorkloadError::ValidateBlockSize { block_size, min });
    }
    Ok(())
}

/// `--file-total-size`: 1 to [`MAX_TOTAL_SIZE`].
pub(crate) fn check_total_size(size: u64) -> Result<u64, WorkloadError> {
    match size {
        0 => Err(WorkloadError::TotalSizeZero),
        s if s > MAX_TOTAL_SIZE => Err(WorkloadError::SizeTooLarge {
            option: "file-total-size".into(),
            value: s.to_string(),
            max: MAX_TOTAL_SIZE,
        }),
        s => Ok(s),
    }
}

/// `--threads` as given: at least 1 (and a C int).
pub(crate) fn check_threads(given: i64) -> Result<u32, WorkloadError> {
    match u32::try_from(given) {
        Ok(t) if t > 0 => Ok(t),
        _ => Err(WorkloadError::Threads { value: given }),
    }
}

/// `--percentile` as given: 0 (off) to 100.
pub(crate) fn check_percentile(given: i64) -> Result<u32, WorkloadError> {
    match u32::try_from(given) {
        Ok(p @ 0..=100) => Ok(p),
        _ => Err(WorkloadError::Percentile { value: given }),
    }
}

/// `--file-async-backlog` as given: 1 to [`MAX_ASYNC_BACKLOG`].
pub(crate) fn check_async_backlog(given: i64) -> Result<u32, WorkloadError> {
    match u32::try_from(given) {
        Ok(b) if (1..=MAX_ASYNC_BACKLOG).contains(&b) => Ok(b),
        _ => Err(WorkloadError::AsyncBacklog { value: given }),
    }
}

/// `--file-rw-ratio`: not negative (sysbench's only check; NaN passes it).
pub(crate) fn check_rw_ratio(ratio: f64) -> Result<f64, WorkloadError> {
    if ratio < 0.0 {
        return Err(WorkloadError::RwRatio { value: ratio });
    }
    Ok(ratio)
}

/// One `--percentiles` item: in (0, 100].
pub(crate) fn check_percentile_item(p: f64) -> Result<f64, WorkloadError> {
    if p > 0.0 && p <= 100.0 {
        Ok(p)
    } else {
        Err(WorkloadError::Percentiles {
            value: p.to_string(),
        })
    }
}

/// The per-operation percentiles when none are asked for: the usual four
/// plus sysbench's `--percentile` (none when that is 0).
pub(crate) fn default_percentiles(percentile: u32) -> Vec<f64> {
    if percentile == 0 {
        return Vec::new();
    }
    let mut percentiles = DEFAULT_PERCENTILES.to_vec();
    let p = f64::from(percentile);
    if !percentiles.contains(&p) {
        percentiles.push(p);
        percentiles.sort_by(f64::total_cmp);
    }
    percentiles
}

/// `--file-dir` as an NFS address, if it is one.
pub(crate) fn nfs_target_of(dir: &std::path::Path) -> Result<Option<nfs::Target>, WorkloadError> {
    match dir.to_str() {
        Some(s) if nfs::Target::is_nfs_url(s) => {
            nfs::Target::parse(s)
                .map(Some)
                .map_err(|e| WorkloadError::FileDir {
                    value: s.to_string(),
                    reason: e.to_string(),
                })
        }
        _ => Ok(None),
    }
}

/// A run on an nfs:// file set has one engine: synchronous calls.
pub(crate) fn check_nfs_io_mode(files: &FileSet, io_mode: IoMode) -> Result<(), WorkloadError> {
    if files.nfs.is_some() && io_mode != IoMode::Sync {
        return Err(WorkloadError::NfsIoMode { io_mode });
    }
    Ok(())
}

/// A [`FileSet`] under construction, starting from sysbench's defaults: 128
/// files, 2 GiB in total, 16 KiB blocks, no extra open flags, zero-filled
/// blocks without checksums, in the current directory.
#[derive(Debug, Clone)]
pub struct FileSetBuilder {
    dir: PathBuf,
    file_num: u64,
    block_size: u64,
    total_size: u64,
    extra_flags: ExtraFlags,
    data: DataPattern,
    checksums: bool,
    first_file: u64,
    names: Vec<PathBuf>,
}

impl Default for FileSetBuilder {
    fn default() -> FileSetBuilder {
        FileSetBuilder {
            dir: PathBuf::from("."),
            file_num: 128,
            block_size: 16384,
            total_size: 2 << 30,
            extra_flags: ExtraFlags::default(),
            data: DataPattern::Zero,
            checksums: false,
            first_file: 0,
            names: Vec::new(),
        }
    }
}

impl FileSetBuilder {
    /// The directory of the test files (`--file-dir`; an nfs:// address
    /// reaches an export through tankbench's own client).
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = dir.into();
        self
    }
    /// `--file-num`.
    pub fn file_num(mut self, n: u64) -> Self {
        self.file_num = n;
        self
    }
    /// `--file-block-size`, bytes.
    pub fn block_size(mut self, bytes: u64) -> Self {
        self.block_size = bytes;
        self
    }
    /// `--file-total-size`, bytes; each file holds total / files.
    pub fn total_size(mut self, bytes: u64) -> Self {
        self.total_size = bytes;
        self
    }
    /// `--file-extra-flags`.
    pub fn extra_flags(mut self, flags: ExtraFlags) -> Self {
        self.extra_flags = flags;
        self
    }
    /// `--file-data`.
    pub fn data(mut self, data: DataPattern) -> Self {
        self.data = data;
        self
    }
    /// `--validate`: blocks carry a checksum that reads verify.
    pub fn checksums(mut self, on: bool) -> Self {
        self.checksums = on;
        self
    }
    /// The number of the first test file (a rank's share of one file set).
    pub fn first_file(mut self, index: u64) -> Self {
        self.first_file = index;
        self
    }

    /// The files' own names, one per file (their number is the file count):
    /// see [`FileSet::names`].
    pub fn names(mut self, names: Vec<PathBuf>) -> Self {
        self.file_num = names.len() as u64;
        self.names = names;
        self
    }

    /// The sizes, in sysbench's order of checks.
    fn check_sizes(&self) -> Result<(), WorkloadError> {
        if self.file_num == 0 {
            return Err(WorkloadError::FileNum { value: 0 });
        }
        check_block_size(self.block_size)?;
        check_validate_block_size(self.checksums, self.block_size)?;
        check_total_size(self.total_size)?;
        Ok(())
    }

    /// The file set, checked as `prepare` and `cleanup` check it (a run
    /// checks more: [`RunSpec::validate`]).
    pub fn build(self) -> Result<FileSet, WorkloadError> {
        self.check_sizes()?;
        let nfs = nfs_target_of(&self.dir)?;
        Ok(FileSet {
            file_size: self.total_size / self.file_num,
            dir: self.dir,
            nfs,
            file_num: self.file_num,
            total_size: self.total_size,
            block_size: self.block_size,
            extra_flags: self.extra_flags,
            data: self.data,
            validate: self.checksums,
            first_file: self.first_file,
            names: self.names,
        })
    }
}

/// A [`RunSpec`] under construction, starting from sysbench 1.0.20's
/// defaults (`sysbench fileio help`, `sysbench --help`): the
/// [`FileSetBuilder`] defaults, synchronous I/O, an fsync every 100 requests
/// and at the end, fsync(2), a read/write ratio of 1.5, no merged requests,
/// 1 thread, 10 s, no event limit, no rate limit, the seed from the clock
/// (`rand_seed` 0), the 95th percentile. Only the mode has no default.
#[derive(Debug, Clone)]
pub struct RunSpecBuilder {
    files: FileSetBuilder,
    mode: Option<Mode>,
    merged_requests: u64,
    io_mode: IoMode,
    async_backlog: u32,
    fsync_freq: u64,
    fsync_all: bool,
    fsync_end: bool,
    fsync_mode: FsyncMode,
    rw_ratio: f64,
    threads: u32,
    events: u64,
    time_s: u64,
    rate: u64,
    rand_seed: u64,
    percentile: u32,
    percentiles: Option<Vec<f64>>,
    inject_latency: Option<InjectedLatency>,
    sync_every_writes: u64,
    refill_buffers: bool,
    rate_process: RateProcess,
}

impl Default for RunSpecBuilder {
    fn default() -> RunSpecBuilder {
        RunSpecBuilder {
            files: FileSetBuilder::default(),
            mode: None,
            merged_requests: 0,
            io_mode: IoMode::Sync,
            async_backlog: 128,
            fsync_freq: 100,
            fsync_all: false,
            fsync_end: true,
            fsync_mode: FsyncMode::Fsync,
            rw_ratio: 1.5,
            threads: 1,
            events: 0,
            time_s: 10,
            rate: 0,
            rand_seed: 0,
            percentile: 95,
            percentiles: None,
            inject_latency: None,
            sync_every_writes: 0,
            refill_buffers: false,
            rate_process: RateProcess::Poisson,
        }
    }
}

impl RunSpecBuilder {
    /// All file-set settings at once.
    pub fn files(mut self, files: FileSetBuilder) -> Self {
        self.files = files;
        self
    }
    /// See [`FileSetBuilder::dir`].
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.files = self.files.dir(dir);
        self
    }
    /// `--file-num`.
    pub fn file_num(mut self, n: u64) -> Self {
        self.files = self.files.file_num(n);
        self
    }
    /// `--file-block-size`, bytes.
    pub fn block_size(mut self, bytes: u64) -> Self {
        self.files = self.files.block_size(bytes);
        self
    }
    /// `--file-total-size`, bytes.
    pub fn total_size(mut self, bytes: u64) -> Self {
        self.files = self.files.total_size(bytes);
        self
    }
    /// `--file-extra-flags`.
    pub fn extra_flags(mut self, flags: ExtraFlags) -> Self {
        self.files = self.files.extra_flags(flags);
        self
    }
    /// `--file-data`.
    pub fn data(mut self, data: DataPattern) -> Self {
        self.files = self.files.data(data);
        self
    }
    /// `--validate`.
    pub fn checksums(mut self, on: bool) -> Self {
        self.files = self.files.checksums(on);
        self
    }
    /// `--file-test-mode` (required).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = Some(mode);
        self
    }
    /// `--file-merged-requests` (sequential modes; 0: none).
    pub fn merged_requests(mut self, n: u64) -> Self {
        self.merged_requests = n;
        self
    }
    /// `--file-io-mode`.
    pub fn io_mode(mut self, mode: IoMode) -> Self {
        self.io_mode = mode;
        self
    }
    /// `--file-async-backlog`: requests in flight per thread (async only).
    pub fn async_backlog(mut self, n: u32) -> Self {
        self.async_backlog = n;
        self
    }
    /// `--file-fsync-freq` (0: no periodic fsync).
    pub fn fsync_freq(mut self, every: u64) -> Self {
        self.fsync_freq = every;
        self
    }
    /// `--file-fsync-all`: an fsync after every write; it turns the periodic
    /// and the end-of-test fsyncs off, as in sysbench.
    pub fn fsync_all(mut self, on: bool) -> Self {
        self.fsync_all = on;
        self
    }
    /// `--file-fsync-end`.
    pub fn fsync_end(mut self, on: bool) -> Self {
        self.fsync_end = on;
        self
    }
    /// `--file-fsync-mode`.
    pub fn fsync_mode(mut self, mode: FsyncMode) -> Self {
        self.fsync_mode = mode;
        self
    }
    /// `--file-rw-ratio`: reads per write in rndrw (stored rounded to an
    /// f32, as sysbench 1.0.20 stores it).
    pub fn rw_ratio(mut self, ratio: f64) -> Self {
        self.rw_ratio = ratio;
        self
    }
    /// `--threads`.
    pub fn threads(mut self, n: u32) -> Self {
        self.threads = n;
        self
    }
    /// `--events` (0: no limit).
    pub fn events(mut self, n: u64) -> Self {
        self.events = n;
        self
    }
    /// `--time`, seconds (0: no limit).
    pub fn time_s(mut self, seconds: u64) -> Self {
        self.time_s = seconds;
        self
    }
    /// `--time` as a duration, whole seconds (a fraction rounds up, so a
    /// positive duration never means "no limit").
    pub fn time(self, t: std::time::Duration) -> Self {
        let s = t.as_secs() + u64::from(t.subsec_nanos() > 0);
        self.time_s(s)
    }
    /// `--rate`, events per second (0: closed loop).
    pub fn rate(mut self, per_s: u64) -> Self {
        self.rate = per_s;
        self
    }
    /// `--rand-seed` (0: from the clock).
    pub fn rand_seed(mut self, seed: u64) -> Self {
        self.rand_seed = seed;
        self
    }
    /// `--percentile` (0: no percentile statistics).
    pub fn percentile(mut self, p: u32) -> Self {
        self.percentile = p;
        self
    }
    /// `--percentiles` of the per-operation section (default:
    /// [`default_percentiles`] of `--percentile`).
    pub fn percentiles(mut self, ps: Vec<f64>) -> Self {
        self.percentiles = Some(ps);
        self
    }
    /// `--tb-inject-latency`: delays instead of I/O (testing the core).
    pub(crate) fn inject_latency(mut self, model: Option<InjectedLatency>) -> Self {
        self.inject_latency = model;
        self
    }

    /// fio's `fsync=N` / `fdatasync=N`: see [`RunSpec::sync_every_writes`].
    pub fn sync_every_writes(mut self, every: u64) -> Self {
        self.sync_every_writes = every;
        self
    }
    /// fio's `refill_buffers`: see [`RunSpec::refill_buffers`].
    pub fn refill_buffers(mut self, on: bool) -> Self {
        self.refill_buffers = on;
        self
    }
    /// How `rate` spaces arrivals: see [`RateProcess`].
    pub fn rate_process(mut self, process: RateProcess) -> Self {
        self.rate_process = process;
        self
    }

    /// The run, with every check of [`RunSpec::validate`].
    pub fn build(self) -> Result<RunSpec, WorkloadError> {
        let spec = self.build_settings()?;
        spec.validate_runnable()?;
        Ok(spec)
    }

    /// The run with each setting checked ([`RunSpec::validate_settings`]),
    /// not yet whether it can run: the sysbench front end makes that check
    /// last, after the other options, as sysbench does.
    pub(crate) fn build_settings(self) -> Result<RunSpec, WorkloadError> {
        check_threads(i64::from(self.threads))?;
        check_percentile(i64::from(self.percentile))?;
        self.files.check_sizes()?;
        let mode = self.mode.ok_or(WorkloadError::MissingMode)?;
        // sysbench 1.0.20 stores the ratio in a float (see `RunSpec::rw_ratio`):
        // the rounding is the point of this cast.
        #[allow(clippy::cast_possible_truncation)]
        let rw_ratio = f64::from(check_rw_ratio(self.rw_ratio)? as f32);
        let percentiles = match self.percentiles {
            Some(ps) => ps,
            None => default_percentiles(self.percentile),
        };
        let spec = RunSpec {
            files: self.files.build()?,
            mode,
            merged_requests: self.merged_requests,
            io_mode: self.io_mode,
            async_backlog: self.async_backlog,
            fsync_freq: if self.fsync_all { 0 } else { self.fsync_freq },
            fsync_all: self.fsync_all,
            fsync_end: self.fsync_end && !self.fsync_all,
            fsync_mode: self.fsync_mode,
            rw_ratio,
            threads: self.threads,
            events: self.events,
            time_s: self.time_s,
            rate: self.rate,
            rand_seed: self.rand_seed,
            percentile: self.percentile,
            percentiles,
            inject_latency: self.inject_latency,
            sync_every_writes: self.sync_every_writes,
            refill_buffers: self.refill_buffers,
            rate_process: self.rate_process,
        };
        spec.validate_settings()?;
        Ok(spec)
    }
}

impl FileSet {
    /// A file set from sysbench's defaults; see [`FileSetBuilder`].
    pub fn builder() -> FileSetBuilder {
        FileSetBuilder::default()
    }

    /// Refuses a file set whose files would be empty: a run would have no
    /// offset to draw and prepare nothing to write.
    pub(crate) fn validate_not_empty(&self) -> Result<(), WorkloadError> {
        if self.file_size == 0 {
            return Err(WorkloadError::EmptyFiles {
                total_size: self.total_size,
                file_num: self.file_num,
            });
        }
        Ok(())
    }
}

impl RunSpec {
    /// A run from sysbench's defaults; see [`RunSpecBuilder`].
    pub fn builder() -> RunSpecBuilder {
        RunSpecBuilder::default()
    }

    /// Every check a run must pass, in sysbench's order where sysbench
    /// checks: the values of each setting, then whether the run can run.
    /// A spec changed field by field (e.g. a calibration's limits) is checked
    /// again with this.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        self.validate_settings()?;
        self.validate_runnable()
    }

    /// Each setting on its own: in range, and an I/O mode the file set
    /// allows.
    pub(crate) fn validate_settings(&self) -> Result<(), WorkloadError> {
        check_threads(i64::from(self.threads))?;
        check_percentile(i64::from(self.percentile))?;
        let f = &self.files;
        if f.file_num == 0 {
            return Err(WorkloadError::FileNum { value: 0 });
        }
        check_block_size(f.block_size)?;
        check_validate_block_size(f.validate, f.block_size)?;
        check_total_size(f.total_size)?;
        if self.io_mode == IoMode::Async {
            check_async_backlog(i64::from(self.async_backlog))?;
        }
        check_rw_ratio(self.rw_ratio)?;
        for &p in &self.percentiles {
            check_percentile_item(p)?;
        }
        check_nfs_io_mode(f, self.io_mode)
    }

    /// `--validate` needs an engine that gives each request its own buffer.
    pub(crate) fn validate_buffer_sharing(&self) -> Result<(), WorkloadError> {
        if self.files.validate
            && crate::engine::capabilities(self.io_mode, self.async_backlog).shares_buffer
        {
            return Err(WorkloadError::ValidateSharedBuffer {
                io_mode: self.io_mode,
            });
        }
        Ok(())
    }

    /// Refuse a `--validate` random run with more threads than blocks. Each
    /// thread waits for a block no other thread holds; with more threads than
    /// blocks the others end up holding every block and the waiting thread,
    /// which holds the generator's lock, can never get one: the run would
    /// never end (sysbench 1.0.20 spins there for ever, deaf to `--time` and
    /// Ctrl-C). With at most one thread per block a block is always free, so
    /// that is the bound.
    pub(crate) fn validate_threads(&self) -> Result<(), WorkloadError> {
        match crate::run::generator::validate_thread_limit(self) {
            Some(blocks) if u64::from(self.threads) > blocks => {
                Err(WorkloadError::ValidateThreads {
                    threads: self.threads,
                    blocks,
                    block_size: self.files.block_size,
                })
            }
            _ => Ok(()),
        }
    }

    /// The checks of settings together, that only matter once the mode is
    /// known (run): they fix sysbench's crashes and endless loops with a
    /// clear message.
    pub(crate) fn validate_runnable(&self) -> Result<(), WorkloadError> {
        // sysbench computes the request size in a C int and fails to allocate
        // its buffer (`Failed to allocate a memory buffer`) from 2 GiB on.
        let request_size = self.request_size();
        if request_size > MAX_REQUEST_SIZE {
            return Err(WorkloadError::RequestTooLarge {
                block_size: self.files.block_size,
                merged_requests: self.merged_requests,
                request_size,
            });
        }
        self.files.validate_not_empty()?;
        if self.files.extra_flags.direct
            && (!request_size.is_multiple_of(DIRECT_ALIGNMENT)
                || !self.files.block_size.is_multiple_of(DIRECT_ALIGNMENT))
        {
            return Err(WorkloadError::DirectAlignment {
                block_size: self.files.block_size,
                alignment: DIRECT_ALIGNMENT,
            });
        }
        Ok(())
    }

    /// The workload as a result records it, run by `engine` (psync,
    /// io_uring, mmap, simulated, ...). The directory is made absolute when it
    /// exists.
    pub fn summary(&self, engine: &str) -> WorkloadSummary {
        WorkloadSummary {
            mode: self.mode,
            io_mode: self.io_mode,
            engine: engine.to_string(),
            threads: self.threads,
            file_num: self.files.file_num,
            file_size: self.files.file_size,
            total_size: self.files.total_size,
            block_size: self.files.block_size,
            request_size: self.request_size(),
            rw_ratio: self.rw_ratio,
            fsync_freq: self.fsync_freq,
            fsync_all: self.fsync_all,
            fsync_end: self.fsync_end,
            fsync_mode: self.fsync_mode,
            extra_flags: self.files.extra_flags.names(),
            events_limit: self.events,
            time_limit_s: self.time_s,
            rate: self.rate,
            queue_depth: crate::engine::capabilities(self.io_mode, self.async_backlog).queue_depth,
            data: self.files.data,
            directory: std::fs::canonicalize(&self.files.dir)
                .unwrap_or_else(|_| self.files.dir.clone())
                .to_string_lossy()
                .into_owned(),
            sync_every_writes: self.sync_every_writes,
        }
    }
}

/// The run a result describes (a calibration re-runs a measured workload in
/// the simulator). What a summary does not record takes its default: the
/// seed (0, the clock), the percentiles (95 and the usual four), no
/// checksums, no injected latency; a summary without a directory (a
/// prediction's) runs in the current one. Refused like any workload when the
/// summary holds values no run can have (an unknown open flag, 0 files).
impl TryFrom<&WorkloadSummary> for RunSpec {
    type Error = WorkloadError;

    fn try_from(w: &WorkloadSummary) -> Result<RunSpec, WorkloadError> {
        let mut flags = ExtraFlags::default();
        for name in &w.extra_flags {
            match name.as_str() {
                "sync" => flags.sync = true,
                "dsync" => flags.dsync = true,
                "direct" => flags.direct = true,
                other => {
                    return Err(WorkloadError::ExtraFlag {
                        value: other.to_string(),
                    })
                }
            }
        }
        // The summary records the request size; merging is what made it
        // larger than a block (sequential modes only).
        let merged_requests =
            if !w.mode.is_random() && w.block_size > 0 && w.request_size > w.block_size {
                w.request_size / w.block_size
            } else {
                0
            };
        let dir = if w.directory.is_empty() {
            PathBuf::from(".")
        } else {
            PathBuf::from(&w.directory)
        };
        let mut b = RunSpec::builder()
            .files(
                FileSet::builder()
                    .dir(dir)
                    .file_num(w.file_num)
                    .block_size(w.block_size)
                    .total_size(w.total_size)
                    .extra_flags(flags)
                    .data(w.data),
            )
            .mode(w.mode)
            .merged_requests(merged_requests)
            .io_mode(w.io_mode)
            .fsync_freq(w.fsync_freq)
            .fsync_all(w.fsync_all)
            .fsync_end(w.fsync_end)
            .fsync_mode(w.fsync_mode)
            .rw_ratio(w.rw_ratio)
            .threads(w.threads)
            .events(w.events_limit)
            .time_s(w.time_limit_s)
            .rate(w.rate)
            .sync_every_writes(w.sync_every_writes);
        if w.io_mode == IoMode::Async {
            b = b.async_backlog(w.queue_depth);
        }
        b.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{check_command_line, Action, CommandLine, Failure, Stream};

    #[test]
    fn option_words_refuse_what_the_run_would_refuse_and_give_a_file_set_without_a_mode() {
        let e = RunSpec::from_words(&[
            "--file-test-mode=rndrw",
            "--validate",
            "--file-io-mode=async",
        ])
        .unwrap_err();
        assert_eq!(
            e,
            WorkloadError::ValidateSharedBuffer {
                io_mode: IoMode::Async
            }
        );
        assert_eq!(e.option(), Some("validate"));
        let e = RunSpec::from_words(&[
            "--file-test-mode=rndrd",
            "--validate",
            "--file-total-size=64K",
            "--file-num=1",
            "--file-block-size=4K",
            "--threads=17",
        ])
        .unwrap_err();
        assert!(
            matches!(
                e,
                WorkloadError::ValidateThreads {
                    threads: 17,
                    blocks: 16,
                    ..
                }
            ),
            "{e:?}"
        );
        let files = FileSet::from_words(&["file-total-size=4G", "--file-num=8"]).unwrap();
        assert_eq!((files.total_size, files.file_num), (4 << 30, 8));
        assert_eq!(
            RunSpec::from_words(&["file-total-size=4G"]).unwrap_err(),
            WorkloadError::MissingMode
        );
    }

    /// What the sysbench front end makes of `fileio WORDS run`.
    fn front_end(words: &[&str]) -> Result<RunSpec, Failure> {
        let mut all = vec!["fileio"];
        all.extend_from_slice(words);
        all.push("run");
        match check_command_line(&all)? {
            CommandLine::Command(s) => match s.action {
                Action::Run(spec) => Ok(spec),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    /// The fields of two specs, compared through their Debug form (RunSpec
    /// holds f64s and an nfs target, so it has no PartialEq).
    fn same(a: &RunSpec, b: &RunSpec) -> bool {
        format!("{a:?}") == format!("{b:?}")
    }

    #[test]
    fn builder_defaults_are_sysbench_defaults() {
        let built = RunSpec::builder().mode(Mode::RndRw).build().unwrap();
        let parsed = front_end(&["--file-test-mode=rndrw"]).unwrap();
        assert!(same(&built, &parsed), "{built:?}\n{parsed:?}");
        // The values of `sysbench fileio help` and `sysbench --help` (1.0.20).
        assert_eq!(built.files.file_num, 128);
        assert_eq!(built.files.block_size, 16384);
        assert_eq!(built.files.total_size, 2 << 30);
        assert_eq!(built.files.file_size, (2 << 30) / 128);
        assert_eq!(built.io_mode, IoMode::Sync);
        assert_eq!(built.async_backlog, 128);
        assert_eq!(
            (built.fsync_freq, built.fsync_all, built.fsync_end),
            (100, false, true)
        );
        assert_eq!(built.fsync_mode, FsyncMode::Fsync);
        assert_eq!(built.merged_requests, 0);
        assert!((built.rw_ratio - 1.5).abs() < 1e-12);
        assert_eq!((built.threads, built.events, built.time_s), (1, 0, 10));
        assert_eq!((built.rate, built.rand_seed, built.percentile), (0, 0, 95));
        assert_eq!(built.percentiles, [50.0, 95.0, 99.0, 99.9]);
        let files = FileSet::builder().build().unwrap();
        assert_eq!((files.file_num, files.total_size), (128, 2 << 30));
        assert_eq!(files.dir, PathBuf::from("."));
    }

    #[test]
    fn the_reference_workload_builds_like_its_command_line() {
        // DESIGN.md's reference run.
        let built = RunSpec::builder()
            .total_size(4 << 30)
            .mode(Mode::RndRw)
            .block_size(4096)
            .threads(4)
            .fsync_all(true)
            .time(std::time::Duration::from_secs(240))
            .build()
            .unwrap();
        let parsed = front_end(&[
            "--file-total-size=4G",
            "--file-test-mode=rndrw",
            "--max-time=240",
            "--max-requests=0",
            "--file-block-size=4K",
            "--num-threads=4",
            "--file-fsync-all",
        ])
        .unwrap();
        assert!(same(&built, &parsed), "{built:?}\n{parsed:?}");
        // fsync-all turns the periodic and end fsyncs off.
        assert_eq!((built.fsync_freq, built.fsync_end), (0, false));
        let words = RunSpec::from_words(&[
            "file-total-size=4G",
            "--file-test-mode=rndrw",
            "time=240",
            "file-block-size=4K",
            "threads=4",
            "file-fsync-all",
        ])
        .unwrap();
        assert!(same(&built, &words), "{built:?}\n{words:?}");
    }

    /// A builder refusal, the error it must be, and the command-line words of
    /// the same mistake.
    type RefusalCase = (
        Result<RunSpec, WorkloadError>,
        WorkloadError,
        &'static [&'static str],
    );

    // One table row per refusal: long because there are many refusals.
    #[allow(clippy::too_many_lines)]
    fn refusal_cases() -> Vec<RefusalCase> {
        let base = || {
            RunSpec::builder()
                .mode(Mode::RndRd)
                .total_size(16384)
                .file_num(1)
        };
        vec![
            (
                base().threads(0).build(),
                WorkloadError::Threads { value: 0 },
                &["--threads=0"],
            ),
            (
                base().percentile(101).build(),
                WorkloadError::Percentile { value: 101 },
                &["--percentile=101"],
            ),
            (
                base().file_num(0).build(),
                WorkloadError::FileNum { value: 0 },
                &["--file-num=0"],
            ),
            (
                base().block_size(0).build(),
                WorkloadError::BlockSizeZero,
                &["--file-block-size=0"],
            ),
            (
                base().total_size(0).build(),
                WorkloadError::TotalSizeZero,
                &["--file-total-size=0"],
            ),
            (
                base().block_size(1 << 31).build(),
                WorkloadError::SizeTooLarge {
                    option: "file-block-size".into(),
                    value: "2147483648".into(),
                    max: MAX_BLOCK_SIZE,
                },
                &["--file-block-size=2147483648"],
            ),
            (
                RunSpec::builder().total_size(16384).file_num(1).build(),
                WorkloadError::MissingMode,
                &["--file-test-mode="],
            ),
            (
                base().io_mode(IoMode::Async).async_backlog(0).build(),
                WorkloadError::AsyncBacklog { value: 0 },
                &["--file-io-mode=async", "--file-async-backlog=0"],
            ),
            (
                base().io_mode(IoMode::Async).async_backlog(40000).build(),
                WorkloadError::AsyncBacklog { value: 40000 },
                &["--file-io-mode=async", "--file-async-backlog=40000"],
            ),
            (
                base().rw_ratio(-1.0).build(),
                WorkloadError::RwRatio { value: -1.0 },
                &["--file-rw-ratio=-1"],
            ),
            (
                base().percentiles(vec![0.0]).build(),
                WorkloadError::Percentiles { value: "0".into() },
                &["--percentiles=0"],
            ),
            (
                base().dir("nfs://").build(),
                nfs_target_of(std::path::Path::new("nfs://")).unwrap_err(),
                &["--file-dir=nfs://"],
            ),
            (
                base()
                    .dir("nfs://127.0.0.1/export")
                    .io_mode(IoMode::Mmap)
                    .build(),
                WorkloadError::NfsIoMode {
                    io_mode: IoMode::Mmap,
                },
                &["--file-dir=nfs://127.0.0.1/export", "--file-io-mode=mmap"],
            ),
            (
                base().mode(Mode::SeqRd).merged_requests(131072).build(),
                WorkloadError::RequestTooLarge {
                    block_size: 16384,
                    merged_requests: 131072,
                    request_size: 1 << 31,
                },
                &["--file-test-mode=seqrd", "--file-merged-requests=131072"],
            ),
            (
                base().total_size(2).file_num(4).build(),
                WorkloadError::EmptyFiles {
                    total_size: 2,
                    file_num: 4,
                },
                &["--file-total-size=2", "--file-num=4"],
            ),
            (
                base()
                    .block_size(1000)
                    .extra_flags(ExtraFlags {
                        direct: true,
                        ..ExtraFlags::default()
                    })
                    .build(),
                WorkloadError::DirectAlignment {
                    block_size: 1000,
                    alignment: 512,
                },
                &["--file-block-size=1000", "--file-extra-flags=direct"],
            ),
        ]
    }

    /// Each builder refusal: its type, and the front end's exact line for the
    /// same mistake typed on the command line.
    #[test]
    fn every_refusal_is_typed_and_reads_like_the_front_end() {
        let cases = refusal_cases();
        for (built, expected, words) in cases {
            let got = built.expect_err(&format!("{expected:?} accepted"));
            assert_eq!(got, expected);
            let mut typed = vec![
                "--file-total-size=16384",
                "--file-num=1",
                "--file-test-mode=rndrd",
            ];
            typed.extend_from_slice(words);
            let printed = front_end(&typed).expect_err(&format!("{words:?} accepted"));
            let first = &printed.lines[0];
            assert_eq!(first.0, Stream::Stdout, "{words:?}");
            assert_eq!(first.1, format!("FATAL: {expected}"), "{words:?}");
            assert_eq!(Failure::from(expected.clone()), printed, "{words:?}");
            // The same words, without the wrapper, give the same typed refusal.
            assert_eq!(
                RunSpec::from_words(&typed).unwrap_err(),
                expected,
                "{words:?}"
            );
        }
    }

    #[test]
    fn messages_are_sysbench_s() {
        // The lines of docs/compatibility.md and the spec, without FATAL.
        for (e, line) in [
            (
                WorkloadError::FileNum { value: -3 },
                "Invalid value for file-num: -3",
            ),
            (
                WorkloadError::BlockSizeZero,
                "Invalid value for file-block-size: 0.",
            ),
            (
                WorkloadError::TotalSizeZero,
                "Invalid value for file-total-size: 0",
            ),
            (
                WorkloadError::UnknownMode {
                    value: "foo".into(),
                },
                "Invalid IO operations mode: foo.",
            ),
            (
                WorkloadError::UnknownIoMode { value: "xx".into() },
                "unknown I/O mode: xx",
            ),
            (
                WorkloadError::AsyncBacklog { value: -1 },
                "Invalid value of file-async-backlog: -1",
            ),
            (
                WorkloadError::NegativeCount {
                    option: "file-fsync-freq",
                    value: -1,
                },
                "Invalid value for file-fsync-freq: -1.",
            ),
            (
                WorkloadError::FsyncMode { value: "xx".into() },
                "Invalid fsync mode: xx.",
            ),
            (
                WorkloadError::RwRatio { value: -1.0 },
                "Invalid value for --file-rw-ratio: -1.000000.",
            ),
            (
                WorkloadError::InvalidInt {
                    option: "file-num".into(),
                    value: "abc".into(),
                },
                "Invalid value for the 'file_num' option: 'abc'",
            ),
            (
                WorkloadError::InvalidOption {
                    word: "--file-fsync-all=ON".into(),
                },
                "invalid option: --file-fsync-all=ON",
            ),
            (
                WorkloadError::Threads { value: 0 },
                "Invalid value for --threads: 0.",
            ),
        ] {
            assert_eq!(e.to_string(), line);
        }
        // Typed words stay on one line.
        let e = WorkloadError::UnknownMode {
            value: "a\nb".into(),
        };
        assert_eq!(e.to_string().lines().count(), 1);
        assert_eq!(e.option(), Some("file-test-mode"));
    }

    #[test]
    fn from_words_takes_both_spellings_and_refuses_with_types() {
        let a =
            RunSpec::from_words(&["--file-num=4", "--file-test-mode=seqwr", "--events=7"]).unwrap();
        let b = RunSpec::from_words(&["file_num=4", "file-test-mode=seqwr", "events=7"]).unwrap();
        assert!(same(&a, &b));
        assert_eq!((a.files.file_num, a.mode, a.events), (4, Mode::SeqWr, 7));
        // The last word wins, like on the command line.
        let c = RunSpec::from_words(&["threads=2", "file-test-mode=rndrd", "threads=3"]).unwrap();
        assert_eq!(c.threads, 3);
        // Output options are accepted and not read.
        assert!(RunSpec::from_words(&["file-test-mode=rndrd", "--report-interval=1"]).is_ok());
        for (words, expected) in [
            (
                &["file-num=abc", "file-test-mode=rndrd"][..],
                WorkloadError::InvalidInt {
                    option: "file-num".into(),
                    value: "abc".into(),
                },
            ),
            (
                &["file-test-mode=rndrd", "file-fsync-all=ON"][..],
                WorkloadError::InvalidOption {
                    word: "--file-fsync-all=ON".into(),
                },
            ),
            (
                &["file-test-mode=rndrd", "--foo=1"][..],
                WorkloadError::InvalidOption {
                    word: "--foo=1".into(),
                },
            ),
            (
                &["file-test-mode=rndrd", "run"][..],
                WorkloadError::NotAnOption { word: "run".into() },
            ),
            (
                &["file-test-mode=rndrd", "bogus=1"][..],
                WorkloadError::NotAnOption {
                    word: "bogus=1".into(),
                },
            ),
            (
                &["file-test-mode=rndrd", "--test=fileio"][..],
                WorkloadError::NotAnOption {
                    word: "--test=fileio".into(),
                },
            ),
            (&["file-total-size=4G"][..], WorkloadError::MissingMode),
            (
                &["file-test-mode=rndrd", "time=-1"][..],
                WorkloadError::NegativeLimit {
                    option: "time",
                    value: -1,
                    accepted: "0 for no limit, or a number of seconds",
                },
            ),
            (
                &["file-test-mode=rndrd", "num-threads=0", "threads=0"][..],
                WorkloadError::Threads { value: 0 },
            ),
            (
                &["file-test-mode=nope"][..],
                WorkloadError::UnknownMode {
                    value: "nope".into(),
                },
            ),
        ] {
            assert_eq!(
                RunSpec::from_words(words).unwrap_err(),
                expected,
                "{words:?}"
            );
        }
    }

    #[test]
    fn a_summary_round_trips_through_a_spec() {
        let dir = tempfile::tempdir().unwrap();
        for words in [
            &[
                "--file-test-mode=rndrw",
                "--threads=4",
                "--file-fsync-all",
                "--file-block-size=4K",
            ][..],
            &[
                "--file-test-mode=seqwr",
                "--file-merged-requests=4",
                "--file-rw-ratio=0.3",
            ][..],
            &[
                "--file-test-mode=rndrd",
                "--file-io-mode=async",
                "--file-async-backlog=16",
                "--file-extra-flags=direct,dsync",
            ][..],
            &[
                "--file-test-mode=seqrewr",
                "--file-fsync-mode=fdatasync",
                "--file-fsync-end=off",
                "--events=99",
                "--time=0",
                "--rate=50",
                "--file-data=random",
            ][..],
        ] {
            let mut all = vec![format!("--file-dir={}", dir.path().display())];
            all.extend(words.iter().map(|w| w.to_string()));
            let spec = RunSpec::from_words(&all).unwrap();
            let summary = spec.summary("psync");
            let back = RunSpec::try_from(&summary).unwrap();
            assert_eq!(back.summary("psync"), summary, "{words:?}");
        }
        // A prediction's summary has no directory: the current one.
        let mut s = RunSpec::builder()
            .mode(Mode::RndWr)
            .build()
            .unwrap()
            .summary("simulated");
        s.directory = String::new();
        assert_eq!(RunSpec::try_from(&s).unwrap().files.dir, PathBuf::from("."));
        // What no run can have is refused, typed.
        s.extra_flags = vec!["fast".into()];
        assert_eq!(
            RunSpec::try_from(&s).unwrap_err(),
            WorkloadError::ExtraFlag {
                value: "fast".into()
            }
        );
        s.extra_flags.clear();
        s.file_num = 0;
        assert_eq!(
            RunSpec::try_from(&s).unwrap_err(),
            WorkloadError::FileNum { value: 0 }
        );
    }

    #[test]
    fn a_changed_spec_is_checked_again() {
        let mut spec = RunSpec::builder().mode(Mode::RndRd).build().unwrap();
        assert_eq!(spec.validate(), Ok(()));
        spec.threads = 0;
        assert_eq!(spec.validate(), Err(WorkloadError::Threads { value: 0 }));
        spec.threads = 1;
        spec.files.file_size = 0;
        assert!(matches!(
            spec.validate(),
            Err(WorkloadError::EmptyFiles { .. })
        ));
    }
}

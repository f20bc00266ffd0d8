//! The typed workload's data: what a run does ([`RunSpec`]) on which files
//! ([`FileSet`]) and the settings they are made of. Built and checked in
//! [`crate::workload`]; read from command-line words in [`crate::options`]
//! (which re-exports these types under their old paths). Depends on nothing
//! else in the crate, so every layer can name a workload.

use std::path::PathBuf;

/// The names of a settings enum's `ALL`, in order, from its `name`: the
/// one list the command line's parser, `--help` and the shell completions
/// read (`sysbench::args::OPTIONS`' `values`).
macro_rules! names_of_all {
    ($t:ty, $n:expr) => {{
        let mut names = [""; $n];
        let mut i = 0;
        while i < $n {
            names[i] = <$t>::ALL[i].name();
            i += 1;
        }
        names
    }};
}

/// `--file-test-mode`. Serialized (in a result's `workload`) under the names
/// the option takes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    SeqWr,
    SeqRewr,
    SeqRd,
    RndRd,
    RndWr,
    RndRw,
    /// fio's `rw=rw`: sequential reads and writes mixed by the read/write
    /// ratio, each direction going through the files from the start with a
    /// position of its own. Not a sysbench mode ([`Mode::parse`], which
    /// reads `--file-test-mode`, does not take it).
    SeqRw,
}

impl Mode {
    /// Every mode, in sysbench's order.
    pub const ALL: [Mode; 6] = [
        Mode::SeqWr,
        Mode::SeqRewr,
        Mode::SeqRd,
        Mode::RndRd,
        Mode::RndWr,
        Mode::RndRw,
    ];
    /// The names `--file-test-mode` takes.
    pub const NAMES: [&'static str; 6] = names_of_all!(Mode, 6);

    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }
    pub fn short_name(self) -> &'static str {
        self.name()
    }
    /// The name `--file-test-mode` takes.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::SeqWr => "seqwr",
            Mode::SeqRewr => "seqrewr",
            Mode::SeqRd => "seqrd",
            Mode::RndRd => "rndrd",
            Mode::RndWr => "rndwr",
            Mode::RndRw => "rndrw",
            Mode::SeqRw => "seqrw",
        }
    }
    /// The name in `Doing <name> test`.
    pub(crate) fn long_name(self) -> &'static str {
        match self {
            Mode::SeqWr => "sequential write (creation)",
            Mode::SeqRewr => "sequential rewrite",
            Mode::SeqRd => "sequential read",
            Mode::RndRd => "random read",
            Mode::RndWr => "random write",
            Mode::RndRw => "random r/w",
            Mode::SeqRw => "sequential r/w",
        }
    }
    /// Modes that mix reads and writes by the read/write ratio.
    pub fn mixes(self) -> bool {
        matches!(self, Mode::RndRw | Mode::SeqRw)
    }
    pub(crate) fn is_random(self) -> bool {
        matches!(self, Mode::RndRd | Mode::RndWr | Mode::RndRw)
    }
    /// Modes that write (and so get end-of-thread fsyncs).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Mode::SeqWr | Mode::SeqRewr | Mode::RndWr | Mode::RndRw | Mode::SeqRw
        )
    }
}

/// `--file-io-mode`, serialized under the names the option takes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    Sync,
    /// sysbench uses libaio; tankbench submits through io_uring.
    Async,
    Mmap,
}

impl IoMode {
    pub const ALL: [IoMode; 3] = [IoMode::Sync, IoMode::Async, IoMode::Mmap];
    /// The names `--file-io-mode` takes.
    pub const NAMES: [&'static str; 3] = names_of_all!(IoMode, 3);

    /// The mode of a name `--file-io-mode` takes.
    pub fn parse(s: &str) -> Option<IoMode> {
        IoMode::ALL.into_iter().find(|m| m.name() == s)
    }

    pub const fn name(self) -> &'static str {
        match self {
            IoMode::Sync => "sync",
            IoMode::Async => "async",
            IoMode::Mmap => "mmap",
        }
    }
}

/// `--file-fsync-mode`, serialized under the names the option takes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FsyncMode {
    Fsync,
    Fdatasync,
}

impl FsyncMode {
    pub const ALL: [FsyncMode; 2] = [FsyncMode::Fsync, FsyncMode::Fdatasync];
    /// The names `--file-fsync-mode` takes.
    pub const NAMES: [&'static str; 2] = names_of_all!(FsyncMode, 2);

    pub fn parse(s: &str) -> Option<FsyncMode> {
        FsyncMode::ALL.into_iter().find(|m| m.name() == s)
    }

    pub const fn name(self) -> &'static str {
        match self {
            FsyncMode::Fsync => "fsync",
            FsyncMode::Fdatasync => "fdatasync",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExtraFlags {
    pub sync: bool,
    pub dsync: bool,
    pub direct: bool,
}

impl ExtraFlags {
    pub fn open_flags(self) -> libc::c_int {
        let mut f = 0;
        if self.sync {
            f |= libc::O_SYNC;
        }
        if self.dsync {
            f |= libc::O_DSYNC;
        }
        if self.direct {
            f |= libc::O_DIRECT;
        }
        f
    }
    /// `Extra file open flags: ...` as sysbench 1.0.20 prints it.
    pub fn describe(self) -> String {
        if !(self.sync || self.dsync || self.direct) {
            return "(none)".to_string();
        }
        let mut s = String::new();
        if self.sync {
            s.push_str("sync ");
        }
        if self.dsync {
            s.push_str("dsync ");
        }
        if self.direct {
            s.push_str("directio");
        }
        s
    }
    pub fn names(self) -> Vec<String> {
        let mut v = Vec::new();
        if self.sync {
            v.push("sync".to_string());
        }
        if self.dsync {
            v.push("dsync".to_string());
        }
        if self.direct {
            v.push("direct".to_string());
        }
        v
    }
}

/// What written blocks hold (`--file-data`, serialized under the names the
/// option takes).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum DataPattern {
    /// sysbench's behaviour: zero-filled buffers (compress to nothing).
    Zero,
    /// Incompressible pseudo-random bytes, filled once per buffer.
    Random,
}

impl DataPattern {
    pub const ALL: [DataPattern; 2] = [DataPattern::Zero, DataPattern::Random];
    /// The names `--file-data` takes.
    pub const NAMES: [&'static str; 2] = names_of_all!(DataPattern, 2);

    pub fn parse(s: &str) -> Option<DataPattern> {
        DataPattern::ALL.into_iter().find(|d| d.name() == s)
    }

    pub const fn name(self) -> &'static str {
        match self {
            DataPattern::Zero => "zero",
            DataPattern::Random => "random",
        }
    }
}

/// A latency model that replaces real I/O (testing the core without storage).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InjectedLatency {
    Fixed {
        ns: u64,
    },
    /// `slow_ns` with probability `p_slow`, `fast_ns` otherwise.
    Bimodal {
        fast_ns: u64,
        slow_ns: u64,
        p_slow: f64,
    },
}

/// The test files: where they are, how many and how large, and how they are
/// written. All that `prepare` and `cleanup` need.
#[derive(Debug, Clone)]
pub struct FileSet {
    pub dir: PathBuf,
    /// `--file-dir=nfs://...`: the files live on an NFSv3 export reached by
    /// tankbench's own client (no kernel mount), a tankbench extension.
    pub nfs: Option<nfs::Target>,
    pub file_num: u64,
    /// floor(total_size / file_num).
    pub file_size: u64,
    /// `--file-total-size` as given (random offsets are drawn
    /// over this: file_get_rand_rq in sb_fileio.c at sysbench 1.0.20).
    pub total_size: u64,
    pub block_size: u64,
    pub extra_flags: ExtraFlags,
    pub data: DataPattern,
    /// `--validate`: blocks carry a checksum to verify on reads.
    pub validate: bool,
    /// Number of the first test file: a rank of a distributed job that shares
    /// one file set uses `test_file.<first_file>` onwards; 0 otherwise.
    pub first_file: u64,
    /// The files' own names (relative to `dir`, or absolute), one per file,
    /// for a caller that creates and owns files of other names (a fio job's
    /// `jobname.0.0`, or its `filename=`); empty for `test_file.N`.
    pub names: Vec<PathBuf>,
}

impl FileSet {
    pub fn file_path(&self, index: u64) -> PathBuf {
        match usize::try_from(self.first_file + index)
            .ok()
            .and_then(|i| self.names.get(i))
        {
            Some(name) => self.dir.join(name),
            None => self.dir.join(file_name(self.first_file + index)),
        }
    }

    /// The name of file `index` in messages: its own name, or `test_file.N`.
    pub fn display_name(&self, index: u64) -> String {
        if self.names.is_empty() {
            file_name(self.first_file + index)
        } else {
            self.file_path(index).display().to_string()
        }
    }
}

/// How an open-loop run (`rate`) spaces its arrivals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateProcess {
    /// Exponential gaps (a Poisson process): sysbench's `--rate`.
    #[default]
    Poisson,
    /// Even gaps of 1/rate: fio's default `rate_process=linear`.
    Linear,
}

/// A validated `run`: the file set and everything that decides which I/O
/// happens on it.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub files: FileSet,
    pub mode: Mode,
    pub merged_requests: u64,
    pub io_mode: IoMode,
    pub async_backlog: u32,
    /// Effective (0 when fsync-all is on).
    pub fsync_freq: u64,
    pub fsync_all: bool,
    /// Effective (off when fsync-all is on).
    pub fsync_end: bool,
    pub fsync_mode: FsyncMode,
    /// `--file-rw-ratio` rounded to f32 like 1.0.20 stores it, then widened.
    pub rw_ratio: f64,
    pub threads: u32,
    pub events: u64,
    pub time_s: u64,
    pub rate: u64,
    /// 0: seed from the clock.
    pub rand_seed: u64,
    /// The sysbench percentile (0 disables percentile stats).
    pub percentile: u32,
    /// Percentiles for the per-operation latency section.
    pub percentiles: Vec<f64>,
    pub inject_latency: Option<InjectedLatency>,
    /// fio's `fsync=N` / `fdatasync=N` (with `fsync_mode`): once a thread's
    /// writes reach a multiple of N, the next request it makes is preceded
    /// by a sync of the file last written, unless the request before was a
    /// sync (fio 3.33's `should_fsync` and `get_rw_ddir` in io_u.c: a read
    /// after the Nth write is synced before too). The syncs are not events.
    /// 0: none (sysbench's `fsync_freq` and `fsync_all` are apart).
    pub sync_every_writes: u64,
    /// fio's `refill_buffers`: a write buffer gets fresh random bytes before
    /// every write (with [`DataPattern::Random`]), not once per thread.
    pub refill_buffers: bool,
    /// How `rate` spaces arrivals.
    pub rate_process: RateProcess,
}

impl RunSpec {
    /// Bytes per sequential request; random requests are one block.
    pub fn request_size(&self) -> u64 {
        if !self.mode.is_random() && self.merged_requests > 0 {
            self.files.block_size * self.merged_requests
        } else {
            self.files.block_size
        }
    }

    /// Buffer size a thread needs: the largest single transfer.
    pub fn buffer_size(&self) -> usize {
        // At most i32::MAX x i32::MAX (< 2^62), which fits a 64-bit usize;
        // `check_runnable` also refuses requests above i32::MAX bytes, which
        // fit any usize std supports.
        #[allow(clippy::cast_possible_truncation)]
        let size = self.request_size() as usize;
        size
    }
}

/// `test_file.N`: the only names tankbench creates or removes in a test directory.
pub fn file_name(index: u64) -> String {
    format!("test_file.{index}")
}

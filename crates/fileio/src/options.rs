//! Second stage of the command line: typed, validated settings.
//!
//! [`GeneralOptions`] are checked before sysbench prints its header, [`Workload`]
//! after it, each in sysbench's order and with its messages, so the same mistake
//! produces the same output. Where sysbench crashes or silently misbehaves we
//! refuse with a clear message instead (see docs/compatibility.md).

use crate::args::{ParsedArgs, ValueError};
use std::path::PathBuf;

/// Where a message goes. sysbench's logger writes to stdout; its command-line
/// parser writes to stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// A refusal: the lines to print (in order) and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub lines: Vec<(Stream, String)>,
    pub exit_code: i32,
    /// Print the fileio option list after the lines (missing --file-test-mode).
    pub show_fileio_help: bool,
}

impl Failure {
    pub fn fatal(msg: impl Into<String>) -> Failure {
        Failure {
            lines: vec![(Stream::Stdout, format!("FATAL: {}", msg.into()))],
            exit_code: 1,
            show_fileio_help: false,
        }
    }
    pub fn stderr(msg: impl Into<String>) -> Failure {
        Failure {
            lines: vec![(Stream::Stderr, msg.into())],
            exit_code: 1,
            show_fileio_help: false,
        }
    }
    pub fn then(mut self, stream: Stream, msg: impl Into<String>) -> Failure {
        self.lines.push((stream, msg.into()));
        self
    }
    /// The first line's text, for errors shown outside the sysbench front end.
    pub fn summary(&self) -> String {
        self.lines
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl From<ValueError> for Failure {
    fn from(e: ValueError) -> Failure {
        Failure::stderr(e.to_string())
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.summary())
    }
}

impl std::error::Error for Failure {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    SeqWr,
    SeqRewr,
    SeqRd,
    RndRd,
    RndWr,
    RndRw,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "seqwr" => Mode::SeqWr,
            "seqrewr" => Mode::SeqRewr,
            "seqrd" => Mode::SeqRd,
            "rndrd" => Mode::RndRd,
            "rndwr" => Mode::RndWr,
            "rndrw" => Mode::RndRw,
            _ => return None,
        })
    }
    pub fn short_name(self) -> &'static str {
        match self {
            Mode::SeqWr => "seqwr",
            Mode::SeqRewr => "seqrewr",
            Mode::SeqRd => "seqrd",
            Mode::RndRd => "rndrd",
            Mode::RndWr => "rndwr",
            Mode::RndRw => "rndrw",
        }
    }
    /// The name in `Doing <name> test`.
    pub fn long_name(self) -> &'static str {
        match self {
            Mode::SeqWr => "sequential write (creation)",
            Mode::SeqRewr => "sequential rewrite",
            Mode::SeqRd => "sequential read",
            Mode::RndRd => "random read",
            Mode::RndWr => "random write",
            Mode::RndRw => "random r/w",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(self, Mode::RndRd | Mode::RndWr | Mode::RndRw)
    }
    /// Modes that write (and so get end-of-thread fsyncs).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Mode::SeqWr | Mode::SeqRewr | Mode::RndWr | Mode::RndRw
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoMode {
    Sync,
    /// sysbench uses libaio; tankbench submits through io_uring.
    Async,
    Mmap,
}

impl IoMode {
    pub fn name(self) -> &'static str {
        match self {
            IoMode::Sync => "sync",
            IoMode::Async => "async",
            IoMode::Mmap => "mmap",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsyncMode {
    Fsync,
    Fdatasync,
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

/// What written blocks hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataPattern {
    /// sysbench's behaviour: zero-filled buffers (compress to nothing).
    Zero,
    /// Incompressible pseudo-random bytes, filled once per buffer.
    Random,
}

/// Report format on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    Auto,
    On,
    Off,
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

/// Options that sysbench checks before printing its header.
#[derive(Debug, Clone)]
pub struct GeneralOptions {
    pub threads: u32,
    pub events: u64,
    pub time_s: u64,
    pub rate: u64,
    pub report_interval_s: u64,
    pub report_checkpoints_s: Vec<u64>,
    /// Seconds after --time at which a run is forced to stop (exit 2).
    pub forced_shutdown_s: Option<u64>,
    pub debug: bool,
    pub validate: bool,
    pub verbosity: u32,
    pub percentile: u32,
    pub histogram: bool,
    pub rand_seed: u64,
    /// `WARNING: ...` lines printed (stdout) before the header.
    pub pre_header_warnings: Vec<String>,
}

impl GeneralOptions {
    pub fn from_args(args: &mut ParsedArgs) -> Result<GeneralOptions, Failure> {
        let mut pre_header_warnings = Vec::new();
        // Legacy aliases: copied, with a deprecation warning, only when they
        // change something (1.0.20): --max-time=0 keeps the 10 s default.
        let num_threads = args.int("num-threads")?;
        if num_threads > 1 {
            args.set("threads", &num_threads.to_string());
            pre_header_warnings
                .push("WARNING: --num-threads is deprecated, use --threads instead".to_string());
        }
        let max_requests = args.int("max-requests")?;
        if max_requests > 0 {
            args.set("events", &max_requests.to_string());
            pre_header_warnings
                .push("WARNING: --max-requests is deprecated, use --events instead".to_string());
        }
        let max_time = args.int("max-time")?;
        if max_time > 0 {
            args.set("time", &max_time.to_string());
            pre_header_warnings
                .push("WARNING: --max-time is deprecated, use --time instead".to_string());
        }
        let tx_rate = args.int("tx-rate")?;
        if tx_rate > 0 {
            args.set("rate", &tx_rate.to_string());
            pre_header_warnings
                .push("WARNING: --tx-rate is deprecated, use --rate instead".to_string());
        }

        let threads = args.int("threads")?;
        if threads <= 0 {
            return Err(
                Failure::fatal(format!("Invalid value for --threads: {threads}."))
                    .then(Stream::Stdout, ""),
            );
        }
        let events = args.int("events")?;
        if events < 0 {
            return Err(Failure::fatal(format!(
                "Invalid value for --events: {events}."
            )));
        }
        let time = args.int("time")?;
        if time < 0 {
            return Err(Failure::fatal(format!("Invalid value for --time: {time}.")));
        }
        let rate = args.int("rate")?;
        if rate < 0 {
            return Err(Failure::fatal(format!("Invalid value for --rate: {rate}.")));
        }
        let report_interval = args.int("report-interval")?;
        if report_interval < 0 {
            return Err(Failure::fatal(format!(
                "Invalid value for --report-interval: {report_interval}."
            )));
        }
        let mut report_checkpoints_s = Vec::new();
        for item in args.list("report-checkpoints") {
            match item.parse::<u64>() {
                Ok(v) if v > 0 => report_checkpoints_s.push(v),
                _ => {
                    return Err(Failure::fatal(format!(
                        "Invalid value for --report-checkpoints: '{item}' (expected positive whole seconds)"
                    )))
                }
            }
        }
        report_checkpoints_s.sort_unstable();
        let forced_shutdown_s = match args.string("forced-shutdown").as_deref() {
            None | Some("off") | Some("") => None,
            Some(v) => {
                let (num, pct) = match v.strip_suffix('%') {
                    Some(n) => (n, true),
                    None => (v, false),
                };
                let n: u64 = num.parse().map_err(|_| {
                    Failure::fatal(format!(
                        "Invalid value for --forced-shutdown: '{v}' (accepted: off, N seconds, or N%)"
                    ))
                })?;
                Some(if pct { time as u64 * n / 100 } else { n })
            }
        };
        let verbosity = args.int("verbosity")?;
        if !(0..=5).contains(&verbosity) {
            return Err(Failure {
                lines: vec![(
                    Stream::Stdout,
                    format!("Invalid value for verbosity: {verbosity}"),
                )],
                exit_code: 1,
                show_fileio_help: false,
            });
        }
        let debug = args.bool("debug")?;
        let percentile = args.int("percentile")?;
        if !(0..=100).contains(&percentile) {
            return Err(Failure::fatal(format!(
                "Invalid value for --percentile: {percentile}"
            )));
        }
        let histogram = args.bool("histogram")?;
        if histogram && percentile == 0 {
            return Err(Failure::fatal(
                "--histogram cannot be used with --percentile=0",
            ));
        }
        let rand_type = args.string("rand-type").unwrap_or_default();
        if !matches!(
            rand_type.as_str(),
            "uniform" | "gaussian" | "special" | "pareto"
        ) {
            return Err(Failure::fatal(format!(
                "Invalid random numbers distribution: {rand_type}."
            )));
        }
        for name in [
            "rand-spec-iter",
            "rand-spec-pct",
            "rand-spec-res",
            "thread-init-timeout",
        ] {
            if crate::args::find_option(name).is_some() {
                args.int(name)?;
            }
        }
        let rand_seed = args.int("rand-seed")?;
        if events == 0 && time == 0 {
            pre_header_warnings.push(
                "WARNING: Both event and time limits are disabled, running an endless test"
                    .to_string(),
            );
        }
        Ok(GeneralOptions {
            threads: threads as u32,
            events: events as u64,
            time_s: time as u64,
            rate: rate as u64,
            report_interval_s: report_interval as u64,
            report_checkpoints_s,
            forced_shutdown_s,
            debug,
            validate: args.bool("validate")?,
            verbosity: if debug { 5 } else { verbosity as u32 },
            percentile: percentile as u32,
            histogram,
            rand_seed: rand_seed as u32 as u64,
            pre_header_warnings,
        })
    }
}

/// The sysbench command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Prepare,
    Run,
    Cleanup,
}

/// The validated file workload: everything that decides which I/O happens.
#[derive(Debug, Clone)]
pub struct Workload {
    pub dir: PathBuf,
    pub file_num: u64,
    /// floor(total_size / file_num).
    pub file_size: u64,
    /// `--file-total-size` as given (random offsets are drawn over this, §4.5).
    pub total_size: u64,
    pub block_size: u64,
    pub merged_requests: u64,
    /// None for prepare and cleanup, which do not check the mode.
    pub mode: Option<Mode>,
    pub io_mode: IoMode,
    pub async_backlog: u32,
    pub extra_flags: ExtraFlags,
    /// Effective (0 when fsync-all is on).
    pub fsync_freq: u64,
    pub fsync_all: bool,
    /// Effective (off when fsync-all is on).
    pub fsync_end: bool,
    pub fsync_mode: FsyncMode,
    /// `--file-rw-ratio` rounded to f32 like 1.0.20 stores it, then widened.
    pub rw_ratio: f64,
    pub validate: bool,
    pub data: DataPattern,
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
    /// Number of the first test file: a rank of a distributed job that shares
    /// one file set uses `test_file.<first_file>` onwards; 0 otherwise.
    pub first_file: u64,
}

impl Workload {
    /// Read and check the fileio options in sysbench's order.
    pub fn from_args(
        args: &ParsedArgs,
        general: &GeneralOptions,
        command: Command,
    ) -> Result<Workload, Failure> {
        let file_num = args.int("file-num")?;
        if file_num <= 0 {
            // sysbench stores the value unsigned and accepts negatives; we refuse.
            return Err(Failure::fatal(format!(
                "Invalid value for file-num: {file_num}"
            )));
        }
        let file_num = file_num as u64;
        let block_size = args.size("file-block-size");
        if block_size == 0 || block_size > i32::MAX as u64 {
            return Err(Failure::fatal(format!(
                "Invalid value for file-block-size: {}.",
                block_size as i64 as i32
            )));
        }
        let total_size = args.size("file-total-size");
        if total_size == 0 {
            return Err(Failure::fatal("Invalid value for file-total-size: 0"));
        }
        let mode = if command == Command::Run {
            match args.string("file-test-mode") {
                None => {
                    let mut f = Failure::fatal("Missing required argument: --file-test-mode");
                    f.show_fileio_help = true;
                    return Err(f);
                }
                Some(m) => match Mode::parse(&m) {
                    Some(mode) => Some(mode),
                    None => {
                        return Err(Failure::fatal(format!("Invalid IO operations mode: {m}.")))
                    }
                },
            }
        } else {
            None
        };
        let io_mode = match args.string("file-io-mode").as_deref() {
            Some("sync") => IoMode::Sync,
            Some("async") => IoMode::Async,
            Some("mmap") => IoMode::Mmap,
            other => {
                return Err(Failure::fatal(format!(
                    "unknown I/O mode: {}",
                    other.unwrap_or_default()
                )))
            }
        };
        let mut async_backlog = 128;
        if io_mode == IoMode::Async {
            let b = args.int("file-async-backlog")?;
            if b <= 0 {
                return Err(Failure::fatal(format!(
                    "Invalid value of file-async-backlog: {b}"
                )));
            }
            // io_uring rings hold at most 32768 entries.
            if b > 32768 {
                return Err(Failure::fatal(format!(
                    "Invalid value of file-async-backlog: {b} (io_uring accepts 1 to 32768)"
                )));
            }
            async_backlog = b as u32;
        }
        let mut extra_flags = ExtraFlags::default();
        for item in args.list("file-extra-flags") {
            match item.as_str() {
                "sync" => extra_flags.sync = true,
                "dsync" => extra_flags.dsync = true,
                "direct" => extra_flags.direct = true,
                // sysbench names the first list item here; we name the bad one.
                _ => {
                    return Err(Failure::fatal(format!(
                        "Invalid value for file-extra-flags: {item}"
                    )))
                }
            }
        }
        let fsync_freq = args.int("file-fsync-freq")?;
        if fsync_freq < 0 {
            return Err(Failure::fatal(format!(
                "Invalid value for file-fsync-freq: {fsync_freq}."
            )));
        }
        let fsync_all = args.bool("file-fsync-all")?;
        let fsync_end = args.bool("file-fsync-end")?;
        let fsync_mode = match args.string("file-fsync-mode").as_deref() {
            Some("fsync") => FsyncMode::Fsync,
            Some("fdatasync") => FsyncMode::Fdatasync,
            other => {
                return Err(Failure::fatal(format!(
                    "Invalid fsync mode: {}.",
                    other.unwrap_or_default()
                )))
            }
        };
        let merged_requests = args.int("file-merged-requests")?;
        if merged_requests < 0 {
            return Err(Failure::fatal(format!(
                "Invalid value for file-merged-requests: {merged_requests}."
            )));
        }
        let rw_ratio = args.double("file-rw-ratio");
        if rw_ratio < 0.0 {
            return Err(Failure::fatal(format!(
                "Invalid value for --file-rw-ratio: {rw_ratio:.6}."
            )));
        }
        let data = match args.string("file-data").as_deref() {
            Some("zero") => DataPattern::Zero,
            Some("random") => DataPattern::Random,
            other => {
                return Err(Failure::fatal(format!(
                    "Invalid value for --file-data: {} (accepted: zero, random)",
                    other.unwrap_or_default()
                )))
            }
        };
        let mut percentiles = Vec::new();
        let listed = args.list("percentiles");
        if listed.is_empty() {
            if general.percentile > 0 {
                percentiles = vec![50.0, 95.0, 99.0, 99.9];
                let p = general.percentile as f64;
                if !percentiles.contains(&p) {
                    percentiles.push(p);
                    percentiles.sort_by(f64::total_cmp);
                }
            }
        } else {
            for item in listed {
                match item.parse::<f64>() {
                    Ok(p) if p > 0.0 && p <= 100.0 => percentiles.push(p),
                    _ => {
                        return Err(Failure::fatal(format!(
                            "Invalid value for --percentiles: '{item}' (accepted: numbers in (0, 100], e.g. 50,95,99,99.9)"
                        )))
                    }
                }
            }
        }
        let inject_latency = match args.string("tb-inject-latency") {
            None => None,
            Some(spec) => Some(parse_injected_latency(&spec).ok_or_else(|| {
                Failure::fatal(format!(
                    "Invalid value for --tb-inject-latency: '{spec}' (accepted: fixed:DURATION or bimodal:FAST:SLOW:P_SLOW, durations like 500us or 2ms)"
                ))
            })?),
        };
        let dir = PathBuf::from(args.string("file-dir").unwrap_or_else(|| ".".into()));
        let file_size = total_size / file_num;
        let workload = Workload {
            dir,
            file_num,
            file_size,
            total_size,
            block_size,
            merged_requests: merged_requests as u64,
            mode,
            io_mode,
            async_backlog,
            extra_flags,
            fsync_freq: if fsync_all { 0 } else { fsync_freq as u64 },
            fsync_all,
            fsync_end: fsync_end && !fsync_all,
            fsync_mode,
            rw_ratio: rw_ratio as f32 as f64,
            validate: general.validate,
            data,
            threads: general.threads,
            events: general.events,
            time_s: general.time_s,
            rate: general.rate,
            rand_seed: general.rand_seed,
            percentile: general.percentile,
            percentiles,
            inject_latency,
            first_file: 0,
        };
        Ok(workload)
    }

    /// Checks that only matter once the mode is known (run), fixing sysbench's
    /// crashes and endless loops with a clear message.
    pub fn check_runnable(&self) -> Result<(), Failure> {
        if self.file_size == 0 {
            return Err(Failure::fatal(format!(
                "--file-total-size ({} bytes) is smaller than --file-num ({}): every test file would be empty; make the total at least {} bytes or use fewer files",
                self.total_size, self.file_num, self.file_num
            )));
        }
        if self.extra_flags.direct {
            let align = 512;
            if !self.request_size().is_multiple_of(align) || !self.block_size.is_multiple_of(align)
            {
                return Err(Failure::fatal(format!(
                    "--file-extra-flags=direct needs --file-block-size to be a multiple of {align} bytes (the smallest logical sector size); {} is not",
                    self.block_size
                )));
            }
        }
        Ok(())
    }

    pub fn mode(&self) -> Mode {
        self.mode.expect("run workloads carry a mode")
    }

    /// Bytes per sequential request; random requests are one block.
    pub fn request_size(&self) -> u64 {
        match self.mode {
            Some(m) if !m.is_random() && self.merged_requests > 0 => {
                self.block_size * self.merged_requests
            }
            _ => self.block_size,
        }
    }

    pub fn file_path(&self, index: u64) -> PathBuf {
        self.dir.join(file_name(self.first_file + index))
    }

    /// Buffer size a thread needs: the largest single transfer.
    pub fn buffer_size(&self) -> usize {
        self.request_size() as usize
    }
}

/// `test_file.N`: the only names tankbench creates or removes in a test directory.
pub fn file_name(index: u64) -> String {
    format!("test_file.{index}")
}

fn parse_duration_ns(s: &str) -> Option<u64> {
    let (num, mult) = if let Some(n) = s.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e9)
    } else {
        return None;
    };
    let v: f64 = num.parse().ok()?;
    (v >= 0.0 && v.is_finite()).then(|| (v * mult).round() as u64)
}

/// `fixed:2ms` or `bimodal:1ms:10ms:0.1`.
pub fn parse_injected_latency(spec: &str) -> Option<InjectedLatency> {
    let parts: Vec<&str> = spec.split(':').collect();
    match parts.as_slice() {
        ["fixed", d] => Some(InjectedLatency::Fixed {
            ns: parse_duration_ns(d)?,
        }),
        ["bimodal", fast, slow, p] => {
            let p_slow: f64 = p.parse().ok()?;
            if !(0.0..=1.0).contains(&p_slow) {
                return None;
            }
            Some(InjectedLatency::Bimodal {
                fast_ns: parse_duration_ns(fast)?,
                slow_ns: parse_duration_ns(slow)?,
                p_slow,
            })
        }
        _ => None,
    }
}

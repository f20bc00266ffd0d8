//! Second stage of the command line: typed, validated settings.
//!
//! [`Settings::from_args`] builds one [`Settings`] value: [`GeneralOptions`]
//! and [`Extensions`] are checked before sysbench prints its header, the
//! command, [`JobOptions`] and the fileio options ([`Action`]: a [`FileSet`]
//! for prepare and cleanup, a [`RunSpec`] for run) after it, each in
//! sysbench's order and with its messages, so the same mistake produces the
//! same output. Where sysbench crashes or silently misbehaves we
//! refuse with a clear message instead (see docs/compatibility.md).

use crate::sysbench::args::{canonical_name, find_option, parse_c_int, ParsedArgs, ValueError};
use crate::text::{printable, printable_word};
use crate::workload::{self, WorkloadError};
use std::path::PathBuf;

pub use crate::failure::{Failure, Stream, FORCED_SHUTDOWN_EXIT_CODE};
pub use crate::spec::{
    file_name, DataPattern, ExtraFlags, FileSet, FsyncMode, InjectedLatency, IoMode, Mode, RunSpec,
};

impl From<ValueError> for Failure {
    fn from(e: ValueError) -> Failure {
        match e {
            // sysbench's option parser writes these to stderr.
            ValueError::BadInt { .. } | ValueError::BadBool { .. } => {
                Failure::stderr(e.to_string())
            }
            // Found where the option is checked, like sysbench's own
            // `FATAL: Invalid value for ...` of the same option.
            ValueError::SizeTooLarge { .. } => Failure::fatal(e.to_string()),
        }
    }
}

impl From<ValueError> for WorkloadError {
    fn from(e: ValueError) -> WorkloadError {
        match e {
            ValueError::BadInt { name, value } => WorkloadError::InvalidInt {
                option: name,
                value,
            },
            ValueError::BadBool { typed } => WorkloadError::InvalidOption { word: typed },
            ValueError::SizeTooLarge { name, value, max } => WorkloadError::SizeTooLarge {
                option: name,
                value,
                max,
            },
        }
    }
}

/// How the front end prints a refused workload: sysbench's message on the
/// stream, with the extras, where sysbench prints it.
impl From<WorkloadError> for Failure {
    fn from(e: WorkloadError) -> Failure {
        match e {
            // sysbench's option parser writes these to stderr.
            WorkloadError::InvalidInt { .. }
            | WorkloadError::InvalidOption { .. }
            | WorkloadError::NotAnOption { .. } => Failure::stderr(e.to_string()),
            // Found before the header, followed by a blank line.
            WorkloadError::Threads { .. } => Failure::fatal(e.to_string()).then(Stream::Stdout, ""),
            // The option list names the modes.
            WorkloadError::MissingMode => {
                let mut f = Failure::fatal(e.to_string());
                f.show_fileio_help = true;
                f
            }
            _ => Failure::fatal(e.to_string()),
        }
    }
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
    /// Read and check the general options in sysbench 1.0.20's order (observed:
    /// with several bad values, the first one in this order is reported).
    pub fn from_args(args: &mut ParsedArgs) -> Result<GeneralOptions, Failure> {
        let mut pre_header_warnings = Vec::new();
        // --num-threads defaults to 1, the others to 0.
        for (old, new, unchanged) in [
            ("num-threads", "threads", 1),
            ("max-requests", "events", 0),
            ("max-time", "time", 0),
        ] {
            copy_legacy_alias(args, old, new, unchanged, &mut pre_header_warnings)?;
        }

        let threads = workload::check_threads(args.int("threads")?)?;
        // Negative limits: sysbench takes them as huge unsigned numbers
        // (`--events=-1` prints `Number of IO requests: 18446744073709551615`,
        // `--time=-1` silently runs without a time limit). We refuse them and
        // point to the spelling that means "no limit".
        let events = non_negative(args, "events", EVENTS_ACCEPTED)?;
        let time = non_negative(args, "time", TIME_ACCEPTED)?;
        let forced_shutdown_s = forced_shutdown(args, time)?;
        // Read by sysbench's thread setup, which runs before the header; fileio
        // does not use it, but the same values are refused with the same message.
        let stack = args
            .size("thread-stack-size", i32::MAX as u64)
            .map_err(|e| Failure::from(e).then(Stream::Stdout, ""))?;
        if stack == 0 {
            return Err(
                Failure::fatal("Invalid value for thread-stack-size: 0.").then(Stream::Stdout, "")
            );
        }
        copy_legacy_alias(args, "tx-rate", "rate", 0, &mut pre_header_warnings)?;
        // sysbench fails a run with a negative rate after starting its threads,
        // without a message.
        let rate = non_negative(args, "rate", RATE_ACCEPTED)?;
        // sysbench prints `every -1 second(s)` and then never reports.
        let report_interval = non_negative(
            args,
            "report-interval",
            "0 for no intermediate reports, or a number of seconds",
        )?;
        let report_checkpoints_s = report_checkpoints(args)?;
        // sysbench keeps the level in an unsigned char: the value wraps to its
        // low 8 bits (-1 is 255, 256 is 0) before the check, and the message
        // names the wrapped value.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let given_verbosity = args.int("verbosity")? as u8;
        let verbosity = match given_verbosity {
            v @ 0..=5 => u32::from(v),
            _ => {
                return Err(Failure {
                    lines: vec![(
                        Stream::Stdout,
                        format!("Invalid value for verbosity: {given_verbosity}"),
                    )],
                    exit_code: 1,
                    show_fileio_help: false,
                })
            }
        };
        let debug = args.bool("debug")?;
        let percentile = workload::check_percentile(args.int("percentile")?)?;
        let histogram = args.bool("histogram")?;
        if histogram && percentile == 0 {
            return Err(Failure::fatal(
                "--histogram cannot be used with --percentile=0",
            ));
        }
        check_rand_type(args)?;
        for name in ["rand-spec-iter", "rand-spec-pct", "rand-spec-res"] {
            args.int(name)?;
        }
        let rand_seed = rand_seed(args)?;
        if events == 0 && time == 0 {
            pre_header_warnings.push(
                "WARNING: Both event and time limits are disabled, running an endless test"
                    .to_string(),
            );
        }
        Ok(GeneralOptions {
            threads,
            events,
            time_s: time,
            rate,
            report_interval_s: report_interval,
            report_checkpoints_s,
            forced_shutdown_s,
            debug,
            validate: args.bool("validate")?,
            verbosity: if debug { 5 } else { verbosity },
            percentile,
            histogram,
            rand_seed,
            pre_header_warnings,
        })
    }
}

/// What `--events`, `--time` and `--rate` accept (after "accepted: ").
const EVENTS_ACCEPTED: &str = "0 for no limit, or a number of events";
const TIME_ACCEPTED: &str = "0 for no limit, or a number of seconds";
const RATE_ACCEPTED: &str = "0 for no rate limit, or events per second";

/// `--rand-seed`. sysbench keeps the seed in an unsigned int: a negative
/// value wraps (two's complement), and `args.int` only yields C int values.
fn rand_seed(args: &ParsedArgs) -> Result<u64, WorkloadError> {
    let given = args.int("rand-seed")?;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let seed = u64::from(given as u32);
    Ok(seed)
}

/// A legacy alias: copied to `new`, with a deprecation warning, only when it
/// is above `unchanged` (sysbench 1.0.20: `--max-time=0` keeps the 10 s
/// default, `--num-threads=1` keeps `--threads`).
fn copy_legacy_alias(
    args: &mut ParsedArgs,
    old: &str,
    new: &str,
    unchanged: i64,
    pre_header_warnings: &mut Vec<String>,
) -> Result<(), WorkloadError> {
    let value = args.int(old)?;
    if value > unchanged {
        args.set(new, &value.to_string());
        pre_header_warnings.push(format!(
            "WARNING: --{old} is deprecated, use --{new} instead"
        ));
    }
    Ok(())
}

/// `--report-checkpoints`, sorted.
fn report_checkpoints(args: &ParsedArgs) -> Result<Vec<u64>, Failure> {
    let mut checkpoints_s = Vec::new();
    for item in args.list("report-checkpoints") {
        match parse_c_int(&item).and_then(|v| u64::try_from(v).ok()) {
            // sysbench accepts 0 and lists it in the header, but never
            // reports at 0 s; it cannot mean anything, so we refuse it.
            Some(v) if v > 0 => checkpoints_s.push(v),
            _ => {
                return Err(Failure::fatal(format!(
                    "Invalid value for --report-checkpoints: '{}' (accepted: comma-separated whole seconds from 1 to {})",
                    printable(&item),
                    i32::MAX
                )))
            }
        }
    }
    checkpoints_s.sort_unstable();
    Ok(checkpoints_s)
}

/// `--rand-type`: fileio's offsets are uniform whatever it names, but sysbench
/// 1.0.20 checks the value.
fn check_rand_type(args: &ParsedArgs) -> Result<(), Failure> {
    let rand_type = args.string("rand-type").unwrap_or_default();
    if rand_type.is_empty() {
        // sysbench dereferences the missing value and crashes (SIGSEGV).
        return Err(Failure::fatal(
            "Invalid value for --rand-type: '' (accepted: uniform, gaussian, special, pareto)",
        ));
    }
    if !matches!(
        rand_type.as_str(),
        "uniform" | "gaussian" | "special" | "pareto"
    ) {
        return Err(Failure::fatal(format!(
            "Invalid random numbers distribution: {}.",
            printable(&rand_type)
        )));
    }
    Ok(())
}

/// An INT option that must not be negative; `accepted` says what it takes.
fn non_negative(
    args: &ParsedArgs,
    name: &'static str,
    accepted: &'static str,
) -> Result<u64, WorkloadError> {
    let v = args.int(name)?;
    u64::try_from(v).map_err(|_| WorkloadError::NegativeLimit {
        option: name,
        value: v,
        accepted,
    })
}

/// `--forced-shutdown`: `off` (any case), N seconds after --time, or N% of
/// --time after it. Read like sysbench (`strtol`, then `%` or the end); a
/// negative N is refused: sysbench shuts down N seconds *before* the time limit
/// (exit code 2), or, when N exceeds --time, wraps the sum into an unsigned
/// number (`-20` with the default 10 s waits 4294967286 s). An empty
/// value means off (sysbench then forces a shutdown exactly at --time, racing
/// the normal end).
fn forced_shutdown(args: &ParsedArgs, time_s: u64) -> Result<Option<u64>, Failure> {
    let Some(v) = args.string("forced-shutdown") else {
        return Ok(None);
    };
    if v.is_empty() || v.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let (number, percent) = match v.find('%') {
        // sysbench ignores whatever follows the `%`.
        Some(i) => (&v[..i], true),
        None => (v.as_str(), false),
    };
    // Both factors are at most i32::MAX, so the product cannot overflow.
    match parse_c_int(number).and_then(|n| u64::try_from(n).ok()) {
        Some(n) => Ok(Some(if percent { time_s * n / 100 } else { n })),
        None => Err(Failure::fatal(format!(
            "Invalid value for --forced-shutdown: '{}' (accepted: off, or N seconds or N% of --time after the time limit, N from 0 to {})",
            printable(&v),
            i32::MAX
        ))),
    }
}

/// The sysbench command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Prepare,
    Run,
    Cleanup,
}

/// What the positional words ask for, checked after the header like sysbench
/// does: the first invalid option, then the test name, then the command.
/// `Ok(None)` is `fileio help`.
pub(crate) fn command_of(args: &ParsedArgs) -> Result<Option<Command>, Failure> {
    if let Some(word) = args.unknown.first() {
        return Err(Failure::stderr(format!(
            "invalid option: {}",
            printable(word)
        )));
    }
    let no_command = || {
        Failure::stderr("The 'fileio' test requires a command argument. See 'sysbench fileio help'")
    };
    match args.test.as_deref() {
        Some("fileio") => {}
        Some(other) => {
            return Err(Failure::stderr(format!(
            "tankbench implements only the fileio test; '{}' is not available (accepted: fileio)",
            printable(other)
        )))
        }
        None => return Err(no_command()),
    }
    match args.command.as_deref() {
        None => Err(no_command()),
        Some("help") => Ok(None),
        Some("prepare") => Ok(Some(Command::Prepare)),
        Some("run") => Ok(Some(Command::Run)),
        Some("cleanup") => Ok(Some(Command::Cleanup)),
        Some(other) => Err(Failure::stderr(format!(
            "Unknown command: {}",
            printable_word(other)
        ))),
    }
}

/// Settings that only tankbench has.
#[derive(Debug, Clone)]
pub struct Extensions {
    pub format: Format,
    pub json_path: Option<PathBuf>,
    /// `--csv=FILE`: a row per run appended to it.
    pub csv_path: Option<PathBuf>,
    /// `--intervals=FILE`: the report intervals as JSON lines, written during
    /// the run.
    pub intervals_path: Option<PathBuf>,
    /// `--openmetrics=FILE`: the run in Prometheus' text format.
    pub openmetrics_path: Option<PathBuf>,
    pub progress: Progress,
    pub drop_caches: bool,
    /// `--save` given: `Some(None)` for the default directory.
    pub save: Option<Option<PathBuf>>,
    pub labels: Vec<String>,
    pub repeat: u32,
    /// `--warmup=SECS`: seconds run before the measured `--time`, left out
    /// of every figure (fio's `ramp_time`).
    pub warmup_s: u64,
}

impl Extensions {
    pub(crate) fn from_args(a: &ParsedArgs) -> Result<Extensions, Failure> {
        let format = match a.string("format").as_deref() {
            Some("text") | None => Format::Text,
            Some("json") => Format::Json,
            Some(other) => {
                return Err(Failure::fatal(format!(
                    "Invalid value for --format: {} (accepted: text, json)",
                    printable_word(other)
                )))
            }
        };
        let progress = match a.string("progress").as_deref() {
            Some("auto") | None => Progress::Auto,
            Some("on") => Progress::On,
            Some("off") => Progress::Off,
            Some(other) => {
                return Err(Failure::fatal(format!(
                    "Invalid value for --progress: {} (accepted: auto, on, off)",
                    printable_word(other)
                )))
            }
        };
        let given_repeat = a.int("repeat")?;
        let repeat = match u32::try_from(given_repeat) {
            Ok(r) if r >= 1 => r,
            _ => {
                return Err(Failure::fatal(format!(
                    "Invalid value for --repeat: {given_repeat} (accepted: 1 or more)"
                )))
            }
        };
        // tankbench's own option: the one duration syntax (5, 5s, 2m).
        let given_warmup = a.string("warmup").unwrap_or_default();
        let warmup_s = crate::duration::whole_seconds(&given_warmup)
            .filter(|&w| w <= crate::workload::MAX_WARMUP_S)
            .ok_or_else(|| {
                Failure::fatal(format!(
                    "Invalid value for --warmup: {} (accepted: 0 to {} whole seconds, as 30, 30s or 2m)",
                    printable(&given_warmup),
                    crate::workload::MAX_WARMUP_S
                ))
            })?;
        let json_path = file_option(a, "json")?;
        let csv_path = file_option(a, "csv")?;
        let intervals_path = file_option(a, "intervals")?;
        let openmetrics_path = file_option(a, "openmetrics")?;
        // One file, one writer: two outputs naming one file would overwrite
        // or interleave each other. Compared as files, not as spellings
        // (`a.csv` and `./a.csv`, or a second hard link, are one file).
        let named = [
            ("json", &json_path),
            ("csv", &csv_path),
            ("intervals", &intervals_path),
            ("openmetrics", &openmetrics_path),
        ];
        let identities: Vec<Option<FileIdentity>> = named
            .iter()
            .map(|(_, p)| p.as_deref().map(FileIdentity::of))
            .collect();
        for (i, (first, _)) in named.iter().enumerate() {
            let Some(id) = &identities[i] else { continue };
            if let Some((second, _)) = named[i + 1..]
                .iter()
                .zip(&identities[i + 1..])
                .find(|(_, other)| other.as_ref() == Some(id))
                .map(|(n, _)| n)
            {
                return Err(Failure::fatal(format!(
                    "--{first} and --{second} name the same file: each output needs its own"
                )));
            }
        }
        Ok(Extensions {
            format,
            json_path,
            csv_path,
            intervals_path,
            openmetrics_path,
            progress,
            drop_caches: a.bool("drop-caches")?,
            save: a
                .raw("save")
                .map(|v| v.filter(|s| !s.is_empty()).and_then(|_| a.path("save"))),
            labels: a.list("label"),
            repeat,
            warmup_s,
        })
    }
}

/// A `--NAME=FILE` option of the extensions: its file name, or a refusal of
/// an empty one.
fn file_option(a: &ParsedArgs, name: &str) -> Result<Option<PathBuf>, Failure> {
    match a.raw(name) {
        Some(Some(p)) if !p.is_empty() => Ok(a.path(name)),
        Some(_) => Err(Failure::fatal(format!(
            "--{name} needs a file name: --{name}=FILE"
        ))),
        None => Ok(None),
    }
}

/// The job options of the command line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobOptions {
    /// `--mpi-shared-files`: the ranks split one file set in the target directory.
    pub shared_files: bool,
    /// `--mpi-stonewall`: stop every rank when the first one finishes.
    pub stonewall: bool,
    /// `--tb-rank-delay` (testing): rank N sleeps N x this before the barrier.
    pub rank_delay_ms: u64,
}

impl JobOptions {
    pub fn from_args(args: &ParsedArgs) -> Result<JobOptions, Failure> {
        let delay = args.int("tb-rank-delay")?;
        let rank_delay_ms = u64::try_from(delay).map_err(|_| {
            Failure::fatal(format!(
                "Invalid value for --tb-rank-delay: {delay} (accepted: 0 or more milliseconds)"
            ))
        })?;
        Ok(JobOptions {
            shared_files: args.bool("mpi-shared-files")?,
            stonewall: args.bool("mpi-stonewall")?,
            rank_delay_ms,
        })
    }
}

/// A command line that [`check_command_line`] accepted.
#[derive(Debug)]
pub enum CommandLine {
    /// `--help`
    Help,
    /// `--version`
    Version,
    /// `fileio help`
    FileioHelp,
    /// `prepare`, `run` or `cleanup`, with every option checked.
    Command(Box<Settings>),
}

/// The fileio parser: words (after the program name) to validated options,
/// without printing, touching files or reading a `--config-file`. It makes the
/// checks of `cli::execute`, in its order (both go through
/// [`Settings::from_args`]), so a command line it accepts gets as far as the
/// I/O.
pub fn check_command_line<S: AsRef<str>>(words: &[S]) -> Result<CommandLine, Failure> {
    let mut args = ParsedArgs::parse(words.iter().map(AsRef::as_ref));
    if let Some(extra) = &args.extra_positional {
        return Err(Failure::stderr(format!(
            "Unrecognized command line argument: {}",
            printable_word(extra)
        )));
    }
    if args.bool("help") == Ok(true) {
        return Ok(CommandLine::Help);
    }
    if args.bool("version") == Ok(true) {
        return Ok(CommandLine::Version);
    }
    Ok(match Settings::from_args(&mut args, &mut ())? {
        Some(settings) => CommandLine::Command(Box::new(settings)),
        None => CommandLine::FileioHelp,
    })
}

/// Where [`Settings::from_args`] has got to, for a caller that prints: sysbench
/// prints its header once the general options are valid and before the command
/// is looked at, so a mistake found later comes after the header.
pub trait SettingsProgress {
    /// The options that decide how output looks are valid; nothing else is
    /// checked yet.
    fn output_known(&mut self, _general: &GeneralOptions, _ext: &Extensions) {}
    /// The command and the job options are valid; the fileio options are next.
    fn job_known(&mut self, _job: &JobOptions) {}
}

/// Nothing to print.
impl SettingsProgress for () {}

/// Every validated setting of one `prepare`, `run` or `cleanup`: the second
/// stage of the command line (after [`ParsedArgs`], the words).
#[derive(Debug, Clone)]
pub struct Settings {
    pub general: GeneralOptions,
    pub ext: Extensions,
    pub job: JobOptions,
    pub action: Action,
}

impl Settings {
    /// Check every option in sysbench's order: the general options, the
    /// extensions, the command, the job options, the fileio options, then
    /// (for `run`) [`RunSpec::check_runnable`].
    /// `Ok(None)` is `fileio help`. `progress` hears when each group passed.
    pub fn from_args(
        args: &mut ParsedArgs,
        progress: &mut dyn SettingsProgress,
    ) -> Result<Option<Settings>, Failure> {
        let general = GeneralOptions::from_args(args)?;
        let ext = Extensions::from_args(args)?;
        progress.output_known(&general, &ext);
        let Some(command) = command_of(args)? else {
            return Ok(None);
        };
        let job = JobOptions::from_args(args)?;
        progress.job_known(&job);
        let action = Action::from_args(args, &general, command)?;
        if let Action::Run(spec) = &action {
            spec.check_runnable()?;
            check_warmup(&ext, &general, spec)?;
        }
        Ok(Some(Settings {
            general,
            ext,
            job,
            action,
        }))
    }
}

/// `--warmup` needs a measured period that starts when it ends: a time
/// limit, and no checkpoints (whose periods count from the start).
fn check_warmup(ext: &Extensions, general: &GeneralOptions, spec: &RunSpec) -> Result<(), Failure> {
    if ext.warmup_s == 0 {
        return Ok(());
    }
    if spec.time_s == 0 {
        return Err(Failure::fatal(
            "--warmup needs --time: the measured period is --time seconds after the warm-up (accepted: --time=1 or more)",
        ));
    }
    if !general.report_checkpoints_s.is_empty() {
        return Err(Failure::fatal(
            "--warmup cannot be combined with --report-checkpoints (checkpoint periods count from the start)",
        ));
    }
    Ok(())
}

/// What the command does, with what it needs.
#[derive(Debug, Clone)]
pub enum Action {
    Prepare(FileSet),
    Run(RunSpec),
    Cleanup(FileSet),
}

impl Action {
    /// Read and check the fileio options in sysbench's order. Every command
    /// checks them all (as sysbench does); only `run` needs a mode.
    pub fn from_args(
        args: &ParsedArgs,
        general: &GeneralOptions,
        command: Command,
    ) -> Result<Action, Failure> {
        Ok(fileio_options(
            args,
            &WorkloadGeneral::of(general),
            command,
        )?)
    }
}

/// The general options a workload takes from the command line (threads,
/// limits, seed, percentile): a [`GeneralOptions`]' share, or what
/// [`RunSpec::from_words`] read.
#[derive(Debug, Clone, Copy)]
struct WorkloadGeneral {
    threads: u32,
    events: u64,
    time_s: u64,
    rate: u64,
    rand_seed: u64,
    percentile: u32,
    validate: bool,
}

impl WorkloadGeneral {
    fn of(g: &GeneralOptions) -> WorkloadGeneral {
        WorkloadGeneral {
            threads: g.threads,
            events: g.events,
            time_s: g.time_s,
            rate: g.rate,
            rand_seed: g.rand_seed,
            percentile: g.percentile,
            validate: g.validate,
        }
    }
}

/// The fileio options, read from the words and checked one by one in
/// sysbench's order (so that of several mistakes, sysbench's first is
/// reported), then built through the workload builders, which check them
/// all again: the front end is one client of [`crate::workload`].
fn fileio_options(
    args: &ParsedArgs,
    general: &WorkloadGeneral,
    command: Command,
) -> Result<Action, WorkloadError> {
    let file_num = workload::check_file_num(args.int("file-num")?)?;
    // sysbench keeps the block size in a C int and the total in a long long:
    // larger values wrap around, to a negative number it then refuses or to
    // a different size it silently uses (4294971392 runs with 4096-byte
    // blocks). We refuse anything that does not fit, naming the limit.
    let block_size =
        workload::check_block_size(args.size("file-block-size", workload::MAX_BLOCK_SIZE)?)?;
    // sysbench 1.0.20 crashes (SIGSEGV) on --validate with blocks too small
    // for its checksum and offset; here they would silently check nothing.
    workload::check_validate_block_size(general.validate, block_size)?;
    let total_size =
        workload::check_total_size(args.size("file-total-size", workload::MAX_TOTAL_SIZE)?)?;
    let mode = if command == Command::Run {
        Some(test_mode(args)?)
    } else {
        None
    };
    let io_mode = io_mode(args)?;
    // Read only in async mode, as sysbench does.
    let async_backlog = if io_mode == IoMode::Async {
        workload::check_async_backlog(args.int("file-async-backlog")?)?
    } else {
        128
    };
    let extra_flags = extra_flags(args)?;
    let fsync_freq = sysbench_non_negative(args, "file-fsync-freq")?;
    let fsync_all = args.bool("file-fsync-all")?;
    let fsync_end = args.bool("file-fsync-end")?;
    let fsync_mode = fsync_mode(args)?;
    let merged_requests = sysbench_non_negative(args, "file-merged-requests")?;
    let rw_ratio = workload::check_rw_ratio(args.double("file-rw-ratio"))?;
    let data = file_data(args)?;
    let percentiles = percentiles(args)?;
    let inject_latency = match args.string("tb-inject-latency") {
        None => None,
        Some(spec) => Some(
            parse_injected_latency(&spec).ok_or(WorkloadError::InjectLatency { value: spec })?,
        ),
    };
    let dir = args.path("file-dir").unwrap_or_else(|| PathBuf::from("."));
    let files = FileSet::builder()
        .dir(dir)
        .file_num(file_num)
        .block_size(block_size)
        .total_size(total_size)
        .extra_flags(extra_flags)
        .data(data)
        .checksums(general.validate);
    let Some(mode) = mode else {
        let files = files.build()?;
        return Ok(if command == Command::Cleanup {
            Action::Cleanup(files)
        } else {
            Action::Prepare(files)
        });
    };
    // The NFS address and the engine it allows, before the run's own checks.
    let set = files.clone().build()?;
    workload::check_nfs_io_mode(&set, io_mode)?;
    let mut spec = RunSpec::builder()
        .files(files)
        .mode(mode)
        .merged_requests(merged_requests)
        .io_mode(io_mode)
        .async_backlog(async_backlog)
        .fsync_freq(fsync_freq)
        .fsync_all(fsync_all)
        .fsync_end(fsync_end)
        .fsync_mode(fsync_mode)
        .rw_ratio(rw_ratio)
        .threads(general.threads)
        .events(general.events)
        .time_s(general.time_s)
        .rate(general.rate)
        .rand_seed(general.rand_seed)
        .percentile(general.percentile)
        .inject_latency(inject_latency);
    if let Some(ps) = percentiles {
        spec = spec.percentiles(ps);
    }
    // Whether it can run is checked last (`Settings::from_args`), as sysbench
    // does.
    Ok(Action::Run(spec.build_settings()?))
}

/// `--file-test-mode`, which only `run` needs.
fn test_mode(args: &ParsedArgs) -> Result<Mode, WorkloadError> {
    // An empty value is no value in sysbench (the option is unset), so
    // `--file-test-mode=` is the missing-argument case, with the list of
    // modes after it.
    match args.string("file-test-mode").filter(|m| !m.is_empty()) {
        None => Err(WorkloadError::MissingMode),
        Some(m) => Mode::parse(&m).ok_or(WorkloadError::UnknownMode { value: m }),
    }
}

fn io_mode(args: &ParsedArgs) -> Result<IoMode, WorkloadError> {
    match args.string("file-io-mode").as_deref() {
        // Empty: unset in sysbench, which then runs its default, sync.
        Some("") | None => Ok(IoMode::Sync),
        Some(name) => IoMode::parse(name).ok_or_else(|| WorkloadError::UnknownIoMode {
            value: name.to_string(),
        }),
    }
}

fn extra_flags(args: &ParsedArgs) -> Result<ExtraFlags, WorkloadError> {
    let mut extra_flags = ExtraFlags::default();
    for item in args.list("file-extra-flags") {
        match item.as_str() {
            "sync" => extra_flags.sync = true,
            "dsync" => extra_flags.dsync = true,
            "direct" => extra_flags.direct = true,
            // sysbench names the first list item here; we name the bad one.
            _ => return Err(WorkloadError::ExtraFlag { value: item }),
        }
    }
    Ok(extra_flags)
}

/// A fileio INT option that must not be negative, refused with sysbench's
/// message for `--file-fsync-freq` and `--file-merged-requests`.
fn sysbench_non_negative(args: &ParsedArgs, name: &'static str) -> Result<u64, WorkloadError> {
    let v = args.int(name)?;
    u64::try_from(v).map_err(|_| WorkloadError::NegativeCount {
        option: name,
        value: v,
    })
}

fn fsync_mode(args: &ParsedArgs) -> Result<FsyncMode, WorkloadError> {
    let name = args.string("file-fsync-mode").unwrap_or_default();
    FsyncMode::parse(&name).ok_or(WorkloadError::FsyncMode { value: name })
}

fn file_data(args: &ParsedArgs) -> Result<DataPattern, WorkloadError> {
    let name = args.string("file-data").unwrap_or_default();
    DataPattern::parse(&name).ok_or(WorkloadError::FileData { value: name })
}

/// `--percentiles` for the per-operation latency section; `None` when not
/// given (the builder then takes [`workload::default_percentiles`]).
fn percentiles(args: &ParsedArgs) -> Result<Option<Vec<f64>>, WorkloadError> {
    let listed = args.list("percentiles");
    if listed.is_empty() {
        return Ok(None);
    }
    listed
        .into_iter()
        .map(|item| match item.parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
            _ => Err(WorkloadError::Percentiles { value: item }),
        })
        .collect::<Result<Vec<f64>, WorkloadError>>()
        .map(Some)
}

/// Options that shape a run's I/O, besides the `file-*` options: what
/// [`RunSpec::from_words`] reads. (The legacy aliases set them.)
const WORKLOAD_GENERAL_OPTIONS: &[&str] = &[
    "threads",
    "events",
    "time",
    "rate",
    "rand-seed",
    "percentile",
    "percentiles",
    "validate",
    "num-threads",
    "max-requests",
    "max-time",
    "tx-rate",
    "tb-inject-latency",
];

impl RunSpec {
    /// A run from option words, as a lab spec or a matrix file lists them:
    /// `--file-total-size=4G` or `file-total-size=4G`, a bare boolean
    /// (`--file-fsync-all`, `file-fsync-all`), with sysbench's syntax and
    /// rules (sizes with K/M/G/T, `-` and `_` alike, the last word wins, the
    /// legacy aliases `--num-threads`, `--max-time`, `--max-requests`). No
    /// `fileio` or `run` around them. The options that shape the I/O are read
    /// and checked; the other options of `tankbench fileio` (report, output)
    /// are accepted, their syntax checked, and not read: they are not part of
    /// a workload. Refusals are typed, with sysbench's messages.
    pub fn from_words<S: AsRef<str>>(words: &[S]) -> Result<RunSpec, WorkloadError> {
        match workload_action(words, Command::Run)? {
            Action::Run(spec) => {
                spec.validate_runnable()?;
                spec.validate_buffer_sharing()?;
                spec.validate_threads()?;
                Ok(spec)
            }
            // `Command::Run` always makes a run or a refusal.
            Action::Prepare(_) | Action::Cleanup(_) => Err(WorkloadError::MissingMode),
        }
    }
}

impl FileSet {
    /// The file set of option words, as [`RunSpec::from_words`] reads them
    /// but as `prepare` and `cleanup` do: no test mode needed, the options
    /// of the run alone are not checked.
    pub fn from_words<S: AsRef<str>>(words: &[S]) -> Result<FileSet, WorkloadError> {
        match workload_action(words, Command::Prepare)? {
            Action::Prepare(files) | Action::Cleanup(files) => Ok(files),
            Action::Run(spec) => Ok(spec.files),
        }
    }
}

/// The action of option words as `command` reads them (see
/// [`RunSpec::from_words`]).
fn workload_action<S: AsRef<str>>(words: &[S], command: Command) -> Result<Action, WorkloadError> {
    let mut normalized = Vec::with_capacity(words.len() + 2);
    normalized.push("fileio".to_string());
    for word in words {
        let word = word.as_ref();
        if let Some(body) = word.strip_prefix("--") {
            // `--test=NAME` names the test, which a workload does not.
            let name = body.split_once('=').map_or(body, |(n, _)| n);
            if canonical_name(name) == "test" {
                return Err(WorkloadError::NotAnOption {
                    word: word.to_string(),
                });
            }
            normalized.push(word.to_string());
            continue;
        }
        // Without dashes, only a known option: a bare word would become
        // the command.
        let name = word.split_once('=').map_or(word, |(n, _)| n);
        if name.is_empty() || find_option(name).is_none() {
            return Err(WorkloadError::NotAnOption {
                word: word.to_string(),
            });
        }
        normalized.push(format!("--{word}"));
    }
    normalized.push("run".to_string());
    let mut args = ParsedArgs::parse(&normalized);
    if let Some(word) = args.unknown.first() {
        return Err(WorkloadError::InvalidOption { word: word.clone() });
    }
    let general = workload_general(&mut args)?;
    fileio_options(&args, &general, command)
}

/// The general options of a workload (see [`WORKLOAD_GENERAL_OPTIONS`]),
/// read with the rules and messages of [`GeneralOptions::from_args`].
fn workload_general(args: &mut ParsedArgs) -> Result<WorkloadGeneral, WorkloadError> {
    debug_assert!(WORKLOAD_GENERAL_OPTIONS
        .iter()
        .all(|name| find_option(name).is_some()));
    let mut warnings = Vec::new();
    for (old, new, unchanged) in [
        ("num-threads", "threads", 1),
        ("max-requests", "events", 0),
        ("max-time", "time", 0),
        ("tx-rate", "rate", 0),
    ] {
        copy_legacy_alias(args, old, new, unchanged, &mut warnings)?;
    }
    let threads = workload::check_threads(args.int("threads")?)?;
    let events = non_negative(args, "events", EVENTS_ACCEPTED)?;
    let time_s = non_negative(args, "time", TIME_ACCEPTED)?;
    let rate = non_negative(args, "rate", RATE_ACCEPTED)?;
    let percentile = workload::check_percentile(args.int("percentile")?)?;
    Ok(WorkloadGeneral {
        threads,
        events,
        time_s,
        rate,
        rand_seed: rand_seed(args)?,
        percentile,
        validate: args.bool("validate")?,
    })
}

impl FileSet {
    /// The validated file set of any command (the fileio options are all
    /// checked, as for `prepare`).
    pub fn from_args(args: &ParsedArgs, general: &GeneralOptions) -> Result<FileSet, Failure> {
        match Action::from_args(args, general, Command::Prepare)? {
            Action::Prepare(files) | Action::Cleanup(files) => Ok(files),
            Action::Run(spec) => Ok(spec.files),
        }
    }

    /// [`FileSet::validate_not_empty`], as the front end prints it.
    pub(crate) fn check_not_empty(&self) -> Result<(), Failure> {
        Ok(self.validate_not_empty()?)
    }
}

impl RunSpec {
    /// The validated `run` of a command line (checked like `run`, so a
    /// missing `--file-test-mode` is refused).
    pub fn from_args(args: &ParsedArgs, general: &GeneralOptions) -> Result<RunSpec, Failure> {
        match Action::from_args(args, general, Command::Run)? {
            Action::Run(spec) => Ok(spec),
            // `Command::Run` always makes a run or a failure.
            Action::Prepare(_) | Action::Cleanup(_) => Err(Failure::fatal(
                "Missing required argument: --file-test-mode",
            )),
        }
    }

    /// [`RunSpec::validate_runnable`], as the front end prints it.
    pub(crate) fn check_runnable(&self) -> Result<(), Failure> {
        Ok(self.validate_runnable()?)
    }
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
    let ns = v * mult;
    // Longer delays would only make a test run that never ends.
    if !(v >= 0.0 && ns <= 3600e9) {
        return None;
    }
    // In range: 0 <= ns <= 3600e9 (NaN fails both tests), far below 2^64.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let ns = ns.round() as u64;
    Some(ns)
}

/// `fixed:2ms` or `bimodal:1ms:10ms:0.1`.
pub(crate) fn parse_injected_latency(spec: &str) -> Option<InjectedLatency> {
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

/// Which file an output option names, to find two options naming one file
/// however they spell it: an existing file by its device and inode (after
/// symbolic links), a new one by its directory's canonical path and its name.
#[derive(Debug, PartialEq, Eq)]
enum FileIdentity {
    Inode(u64, u64),
    Path(PathBuf),
}

impl FileIdentity {
    fn of(path: &std::path::Path) -> FileIdentity {
        use std::os::unix::fs::MetadataExt as _;
        if let Ok(m) = std::fs::metadata(path) {
            return FileIdentity::Inode(m.dev(), m.ino());
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => std::path::Path::new("."),
        };
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        FileIdentity::Path(match path.file_name() {
            Some(name) => dir.join(name),
            None => dir,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_s_values_are_the_ones_its_help_lists_and_its_parser_takes() {
        let with: Vec<&crate::sysbench::args::OptionSpec> = crate::sysbench::args::OPTIONS
            .iter()
            .filter(|o| !o.values.is_empty())
            .collect();
        assert_eq!(with.len(), 4);
        for o in with {
            // sysbench's help text lists them between braces.
            let listed = o
                .description
                .split_once('{')
                .and_then(|(_, rest)| rest.split_once('}'))
                .map(|(list, _)| list.split(',').map(str::trim).collect::<Vec<_>>())
                .unwrap_or_default();
            assert_eq!(listed, o.values, "--{}", o.name);
            for v in o.values {
                let words = [
                    "--file-test-mode=rndrd".to_string(),
                    format!("--{}={v}", o.name),
                ];
                assert!(
                    RunSpec::from_words(&words).is_ok(),
                    "--{}={v} is refused",
                    o.name
                );
            }
        }
    }

    fn check(words: &[&str]) -> Result<CommandLine, Failure> {
        check_command_line(words)
    }

    fn refusal(words: &[&str]) -> Failure {
        match check(words) {
            Err(f) => f,
            Ok(c) => panic!("{words:?} accepted: {c:?}"),
        }
    }

    fn stdout_lines(f: &Failure) -> Vec<&str> {
        f.lines
            .iter()
            .filter(|(s, _)| *s == Stream::Stdout)
            .map(|(_, l)| l.as_str())
            .collect()
    }

    const RUN: [&str; 4] = [
        "fileio",
        "--file-total-size=16K",
        "--file-num=1",
        "--file-test-mode=rndrd",
    ];

    fn run_with(extra: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = RUN.iter().map(|s| s.to_string()).collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v.push("run".into());
        v
    }

    /// The groups [`Settings::from_args`] reported valid before it stopped.
    fn groups_passed(words: &[&str]) -> (Vec<&'static str>, Result<bool, Failure>) {
        struct Recorder(Vec<&'static str>);
        impl SettingsProgress for Recorder {
            fn output_known(&mut self, _: &GeneralOptions, _: &Extensions) {
                self.0.push("output");
            }
            fn job_known(&mut self, _: &JobOptions) {
                self.0.push("job");
            }
        }
        let mut recorder = Recorder(Vec::new());
        let mut args = ParsedArgs::parse(words);
        let outcome = Settings::from_args(&mut args, &mut recorder).map(|s| s.is_some());
        (recorder.0, outcome)
    }

    #[test]
    fn settings_report_each_group_before_the_next_is_checked() {
        // A bad general option: refused before the header.
        let (passed, outcome) = groups_passed(&["fileio", "--threads=0", "run"]);
        assert!(passed.is_empty() && outcome.is_err(), "{passed:?}");
        // A bad command comes after the header (sysbench prints it first).
        let (passed, outcome) = groups_passed(&["fileio", "bogus"]);
        assert_eq!((passed, outcome.is_err()), (vec!["output"], true));
        // `fileio help`: the header, then no settings.
        let (passed, outcome) = groups_passed(&["fileio", "help"]);
        assert_eq!(passed, vec!["output"]);
        assert!(matches!(outcome, Ok(false)));
        // A bad fileio option comes after the job options were accepted.
        let (passed, outcome) = groups_passed(&["fileio", "--file-num=0", "prepare"]);
        assert_eq!((passed, outcome.is_err()), (vec!["output", "job"], true));
        // So does a run that cannot run (files smaller than one byte each).
        let (passed, outcome) = groups_passed(&[
            "fileio",
            "--file-total-size=2",
            "--file-num=4",
            "--file-test-mode=seqrd",
            "run",
        ]);
        assert_eq!((passed, outcome.is_err()), (vec!["output", "job"], true));
        let (_, outcome) =
            groups_passed(&["fileio", "--file-total-size=2", "--file-num=4", "prepare"]);
        assert!(
            matches!(outcome, Ok(true)),
            "prepare does not check the run"
        );
    }

    #[test]
    fn legacy_aliases_are_copied_only_when_they_change_something() {
        let general = |words: &[&str]| {
            let mut args = ParsedArgs::parse(words.iter().copied());
            GeneralOptions::from_args(&mut args).expect("valid options")
        };
        // --num-threads defaults to 1: that value leaves --threads alone.
        let g = general(&[
            "--num-threads=1",
            "--threads=4",
            "--max-time=0",
            "--tx-rate=0",
        ]);
        assert_eq!((g.threads, g.time_s, g.rate), (4, 10, 0));
        assert!(
            g.pre_header_warnings.is_empty(),
            "{:?}",
            g.pre_header_warnings
        );
        let g = general(&["--num-threads=2", "--max-requests=5", "--tx-rate=7"]);
        assert_eq!((g.threads, g.events, g.rate), (2, 5, 7));
        assert_eq!(
            g.pre_header_warnings,
            [
                "WARNING: --num-threads is deprecated, use --threads instead",
                "WARNING: --max-requests is deprecated, use --events instead",
                "WARNING: --tx-rate is deprecated, use --rate instead",
            ]
        );
    }

    #[test]
    fn prepare_and_cleanup_carry_the_file_set_and_run_its_mode() {
        let action = |words: &[&str]| match check(words) {
            Ok(CommandLine::Command(settings)) => settings.action,
            other => panic!("{words:?}: {other:?}"),
        };
        assert!(matches!(
            action(&["fileio", "--file-num=3", "prepare"]),
            Action::Prepare(FileSet { file_num: 3, .. })
        ));
        assert!(matches!(
            action(&["fileio", "--file-num=3", "cleanup"]),
            Action::Cleanup(FileSet { file_num: 3, .. })
        ));
        // prepare and cleanup do not read the mode.
        assert!(matches!(
            action(&["fileio", "--file-test-mode=nonsense", "prepare"]),
            Action::Prepare(_)
        ));
        assert!(matches!(
            action(&["fileio", "--file-test-mode=rndwr", "run"]),
            Action::Run(RunSpec {
                mode: Mode::RndWr,
                ..
            })
        ));
    }

    fn run_refusal(extra: &[&str]) -> Failure {
        let words = run_with(extra);
        match check_command_line(&words) {
            Err(f) => f,
            Ok(c) => panic!("{extra:?} accepted: {c:?}"),
        }
    }

    #[test]
    fn sizes_above_what_the_option_holds_are_refused() {
        for (word, name) in [
            ("--file-total-size=18446744073709551616", "file-total-size"),
            ("--file-total-size=18446744073709551615", "file-total-size"),
            ("--file-total-size=9223372036854775808", "file-total-size"),
            ("--file-total-size=16777216T", "file-total-size"),
            ("--file-block-size=2147483648", "file-block-size"),
            ("--file-block-size=4294971392", "file-block-size"),
        ] {
            let f = run_refusal(&[word]);
            let value = word.split_once('=').unwrap().1;
            assert_eq!(f.exit_code, 1);
            assert_eq!(
                stdout_lines(&f),
                vec![format!(
                    "FATAL: Invalid value for {name}: {value} (too large; accepted: 1 to {} bytes, digits with an optional K, M, G or T suffix)",
                    if name == "file-total-size" { i64::MAX as u64 } else { i32::MAX as u64 }
                )],
                "{word}"
            );
        }
        // The largest values still fit.
        assert!(check(&[
            "fileio",
            "--file-total-size=9223372036854775807",
            "--file-block-size=2147483647",
            "prepare"
        ])
        .is_ok());
    }

    #[test]
    fn thread_stack_size_is_checked_like_sysbench() {
        for v in ["1Q", "0", "", "abc"] {
            let f = run_refusal(&[&format!("--thread-stack-size={v}")]);
            assert_eq!(
                stdout_lines(&f),
                vec!["FATAL: Invalid value for thread-stack-size: 0.", ""],
                "{v}"
            );
        }
        let f = run_refusal(&["--thread-stack-size=2147483648"]);
        assert!(stdout_lines(&f)[0]
            .starts_with("FATAL: Invalid value for thread-stack-size: 2147483648 (too large"));
        // Before the checks that follow it in sysbench, after those before it.
        let f = run_refusal(&["--thread-stack-size=0", "--percentile=101"]);
        assert!(stdout_lines(&f)[0].contains("thread-stack-size"));
        let f = run_refusal(&["--thread-stack-size=0", "--threads=0"]);
        assert!(stdout_lines(&f)[0].contains("--threads"));
        assert!(check(
            &run_with(&["--thread-stack-size=16K"])
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
        )
        .is_ok());
    }

    #[test]
    fn negative_limits_are_refused_with_what_is_accepted() {
        for (word, start) in [
            (
                "--events=-1",
                "FATAL: Invalid value for --events: -1 (accepted: 0 for no limit",
            ),
            (
                "--time=-1",
                "FATAL: Invalid value for --time: -1 (accepted: 0 for no limit",
            ),
            (
                "--rate=-1",
                "FATAL: Invalid value for --rate: -1 (accepted: 0 for no rate limit",
            ),
            (
                "--report-interval=-1",
                "FATAL: Invalid value for --report-interval: -1 (accepted: 0 for no intermediate",
            ),
            (
                "--forced-shutdown=-1",
                "FATAL: Invalid value for --forced-shutdown: '-1' (accepted: off, or N seconds",
            ),
            (
                "--forced-shutdown=-50%",
                "FATAL: Invalid value for --forced-shutdown: '-50%' (accepted: off",
            ),
            (
                "--forced-shutdown=99999999999",
                "FATAL: Invalid value for --forced-shutdown: '99999999999' (accepted: off",
            ),
            (
                "--report-checkpoints=0",
                "FATAL: Invalid value for --report-checkpoints: '0' (accepted:",
            ),
            (
                "--report-checkpoints=2147483648",
                "FATAL: Invalid value for --report-checkpoints: '2147483648' (accepted:",
            ),
        ] {
            let f = run_refusal(&[word]);
            let lines = stdout_lines(&f);
            assert_eq!(lines.len(), 1, "{word}: {lines:?}");
            assert!(lines[0].starts_with(start), "{word}: {}", lines[0]);
        }
    }

    #[test]
    fn forced_shutdown_reads_like_strtol() {
        let general = |extra: &[&str]| match check(
            &run_with(extra)
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        ) {
            Ok(CommandLine::Command(settings)) => settings.general,
            other => panic!("{extra:?}: {other:?}"),
        };
        assert_eq!(general(&["--forced-shutdown=OFF"]).forced_shutdown_s, None);
        assert_eq!(general(&["--forced-shutdown="]).forced_shutdown_s, None);
        assert_eq!(
            general(&["--forced-shutdown= 5"]).forced_shutdown_s,
            Some(5)
        );
        assert_eq!(
            general(&["--forced-shutdown=+5"]).forced_shutdown_s,
            Some(5)
        );
        assert_eq!(
            general(&["--time=20", "--forced-shutdown=50%x"]).forced_shutdown_s,
            Some(10),
            "sysbench ignores what follows the %"
        );
        assert_eq!(
            general(&["--report-checkpoints=+5, 3"]).report_checkpoints_s,
            vec![3, 5]
        );
        match check(
            &run_with(&["--file-num= 3"])
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        ) {
            Ok(CommandLine::Command(settings)) => match settings.action {
                Action::Run(spec) => {
                    assert_eq!(spec.files.file_num, 3, "INT takes leading white space")
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn empty_values_are_unset_values() {
        // sysbench: `--x=` removes the value, default included.
        let f = run_refusal(&["--file-test-mode="]);
        assert_eq!(
            stdout_lines(&f),
            vec!["FATAL: Missing required argument: --file-test-mode"]
        );
        assert!(f.show_fileio_help, "the option list names the modes");
        match check(
            &run_with(&["--file-io-mode="])
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        ) {
            Ok(CommandLine::Command(settings)) => match settings.action {
                Action::Run(spec) => assert_eq!(spec.io_mode, IoMode::Sync),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        // Where sysbench crashes, we name the option and what it accepts.
        assert_eq!(
            stdout_lines(&run_refusal(&["--file-fsync-mode="])),
            vec!["FATAL: Invalid value for --file-fsync-mode: '' (accepted: fsync, fdatasync)"]
        );
        assert_eq!(
            stdout_lines(&run_refusal(&["--rand-type="])),
            vec!["FATAL: Invalid value for --rand-type: '' (accepted: uniform, gaussian, special, pareto)"]
        );
    }

    #[test]
    fn huge_sequential_requests_are_refused_before_allocating() {
        let f = refusal(&[
            "fileio",
            "--file-total-size=16K",
            "--file-num=1",
            "--file-test-mode=seqrd",
            "--file-merged-requests=131072",
            "run",
        ]);
        assert_eq!(
            stdout_lines(&f),
            vec!["FATAL: --file-block-size (16384) x --file-merged-requests (131072) is 2147483648 bytes per request; at most 2147483647 are accepted"]
        );
        // Random modes do not merge.
        assert!(check(&[
            "fileio",
            "--file-total-size=16K",
            "--file-num=1",
            "--file-test-mode=rndrd",
            "--file-merged-requests=131072",
            "run",
        ])
        .is_ok());
    }

    #[test]
    fn positional_errors_name_the_word() {
        let f = refusal(&["fileio", "bogus"]);
        assert_eq!(
            f.lines,
            vec![(Stream::Stderr, "Unknown command: bogus".into())]
        );
        let f = refusal(&["fileio", "run", "again"]);
        assert_eq!(
            f.lines,
            vec![(
                Stream::Stderr,
                "Unrecognized command line argument: again".into()
            )]
        );
        let f = refusal(&["fileio", "--foo=1", "--debug=x", "run"]);
        assert_eq!(
            f.lines,
            vec![(Stream::Stderr, "invalid option: --foo=1".into())]
        );
        let f = refusal(&["fileio", "--debug=on", "--debug=x", "run"]);
        assert_eq!(
            f.lines,
            vec![(Stream::Stderr, "invalid option: --debug=x".into())]
        );
        assert!(matches!(
            check(&["fileio", "help"]),
            Ok(CommandLine::FileioHelp)
        ));
        assert!(matches!(
            check(&["--version", "--threads=0"]),
            Ok(CommandLine::Version)
        ));
    }

    #[test]
    fn injected_latency_cannot_stall_a_run() {
        assert!(parse_injected_latency("fixed:3600s").is_some());
        assert!(parse_injected_latency("fixed:3601s").is_none());
        assert!(parse_injected_latency("fixed:1e300s").is_none());
        assert!(parse_injected_latency("bimodal:1ms:inf:0.1").is_none());
    }
}

//! The sysbench-compatible front end: one invocation of `sysbench fileio …`
//! (or the legacy `--test=fileio …`) from words to output and exit code, with
//! sysbench's streams, order of messages and verbosity rules (src/sysbench.c,
//! src/sb_options.c and src/sb_logger.c at tag 1.0.20, and observed with the
//! 1.0.20 binary).
//!
//! The binary calls [`execute`] and then does what needs other crates (saving
//! results to a store).

use crate::console::Console;
use crate::export::intervals::IntervalStream;
use crate::failure::invoked_as_sysbench;
use crate::job::coordinator::Coordinator;
use crate::job::Job;
use crate::options::{
    Action, Extensions, Failure, Format, GeneralOptions, JobOptions, Progress, Settings,
    SettingsProgress,
};
use crate::result::RunResult;
use crate::run::runner::{self, IntervalStats, PeriodStats, RunObserver, RunSettings};
use crate::spec::{FileSet, RunSpec};
use crate::sysbench::args::{CommandWords, ParsedArgs, Section, OPTIONS};
use crate::sysbench::report_text;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::time::Duration;

/// What an invocation did, for the binary to finish (store results).
pub struct Invocation {
    pub exit_code: i32,
    pub results: Vec<RunResult>,
    pub extensions: Option<Extensions>,
}

impl Invocation {
    fn code(exit_code: i32) -> Invocation {
        Invocation {
            exit_code,
            results: Vec::new(),
            extensions: None,
        }
    }
}

/// The fileio option list of `sysbench fileio help`.
pub(crate) fn fileio_help() -> String {
    let mut s = String::from("fileio options:\n");
    s.push_str(&option_list(Section::FileIo));
    // Under sysbench's name, sysbench's list alone, as 1.0.20 prints it.
    if !invoked_as_sysbench() {
        s.push_str("\ntankbench extensions:\n");
        s.push_str(&option_list(Section::Extension));
    }
    s
}

fn option_list(section: Section) -> String {
    let items: Vec<_> = OPTIONS.iter().filter(|o| o.section == section).collect();
    let width = items
        .iter()
        .map(|o| o.name.len() + 2 + o.help_fmt.len())
        .max()
        .unwrap_or(0)
        + 1;
    let mut s = String::new();
    for o in items {
        let left = format!("--{}{}", o.name, o.help_fmt);
        let default = o.default.map(|d| format!(" [{d}]")).unwrap_or_default();
        s.push_str(&format!("  {left:<width$}{}{default}\n", o.description));
    }
    s
}

/// `--help`: general usage.
pub(crate) fn general_help() -> String {
    let mut s = String::from(
        "Usage:\n  tankbench [options]... fileio [command]\n  tankbench --test=fileio [options]... [command]\n\nCommands: prepare run cleanup help\n\nGeneral options:\n",
    );
    s.push_str(&option_list(Section::General));
    s.push_str("\nPseudo-Random Numbers Generator options:\n");
    s.push_str(&option_list(Section::Random));
    s.push_str("\nLog options:\n");
    s.push_str(&option_list(Section::Log));
    s.push('\n');
    s.push_str(&fileio_help());
    s
}

/// `--help` under the name `sysbench`: sysbench 1.0.20's usage, word for word
/// (its general, random, log and database options are all accepted here),
/// its compiled-in tests included: a script comparing the text sees
/// sysbench's, and a test other than fileio is answered as
/// [`OTHER_BUILT_IN_TESTS`] says.
pub(crate) fn sysbench_help() -> &'static str {
    include_str!("sysbench_help.txt")
}

/// sysbench 1.0.20's compiled-in tests besides fileio, which its help
/// lists. Without a command sysbench asks for one (so does this binary);
/// with one, this binary refuses the test in one line.
const OTHER_BUILT_IN_TESTS: [&str; 4] = ["cpu", "memory", "threads", "mutex"];

/// `--version`. Scripts compare sysbench's whole line (`sysbench 1.0.20`), so
/// under that name it is exactly that; as `tankbench fileio` it names both.
pub(crate) fn version_line(as_sysbench: bool) -> String {
    if as_sysbench {
        "sysbench 1.0.20".to_string()
    } else {
        format!(
            "sysbench 1.0.20 (tankbench {})",
            crate::result::TOOL_VERSION
        )
    }
}

/// Run one sysbench-style invocation. `words` excludes the program name.
pub fn execute(words: &[String]) -> Invocation {
    let words: Vec<OsString> = words.iter().map(OsString::from).collect();
    execute_checked(&words, &|_, _| Ok(()))
}

/// Checks the caller makes of the tankbench extensions once they are parsed
/// and before a `run` starts: the result destinations (`--save`, `--json`,
/// `--csv`, `--openmetrics`, `--label`), which this crate cannot judge alone
/// because the result store and the labels live in a crate that depends on
/// this one. The run is there for what depends on it (the CSV header names its
/// percentiles). An `Err` is printed as one line on stderr and ends the
/// invocation with exit code 1 before any file is touched.
pub(crate) type DestinationCheck<'a> = &'a dyn Fn(&Extensions, &RunSpec) -> Result<(), String>;

/// [`execute`] with the caller's checks of the result destinations. The caller
/// also writes `--json`, `--csv`, `--openmetrics` and `--save` from
/// [`Invocation::results`]; this crate prints, and writes the `--intervals`
/// stream while the run goes.
///
/// `words` are the operating system's: the file names of `--json`, `--save`,
/// `--config-file` and `--file-dir` are used byte for byte, every other word
/// must be text.
pub fn execute_checked(words: &[OsString], check_destinations: DestinationCheck) -> Invocation {
    // Before anything prints: under an MPI launcher only rank 0 may print.
    let coordinator = match crate::job::for_this_process() {
        Ok(c) => c,
        Err(msg) => {
            crate::console::to_stderr(&format!("{msg}\n"));
            return Invocation::code(1);
        }
    };
    crate::job::silence_stdout_unless_root(coordinator.as_ref());
    let words = match CommandWords::from_os(words) {
        Ok(w) => w,
        Err(msg) => {
            crate::console::to_stderr(&format!("{msg}\n"));
            return Invocation::code(1);
        }
    };
    let text = match with_config_file(&words) {
        Ok(w) => w,
        Err(msg) => {
            crate::console::to_stderr(&format!("{msg}\n"));
            return Invocation::code(1);
        }
    };
    let mut args = ParsedArgs::parse(&text).with_file_names(words.file_names);
    for note in &args.stderr_notes {
        crate::console::to_stderr(&format!("{note}\n"));
    }
    if let Some(extra) = &args.extra_positional {
        crate::console::to_stderr(&format!(
            "Unrecognized command line argument: {}\n",
            crate::text::printable_word(extra)
        ));
        return Invocation::code(1);
    }
    let as_sysbench = invoked_as_sysbench();
    if matches!(args.bool("help"), Ok(true)) {
        if as_sysbench {
            crate::console::to_stdout(sysbench_help().as_bytes());
        } else {
            crate::console::to_stdout(general_help().as_bytes());
        }
        return Invocation::code(0);
    }
    if matches!(args.bool("version"), Ok(true)) {
        crate::console::to_stdout(format!("{}\n", version_line(as_sysbench)).as_bytes());
        return Invocation::code(0);
    }
    if as_sysbench && args.test.as_deref() != Some("fileio") {
        return sysbench_without_fileio(&mut args);
    }
    let mut front = FrontEnd {
        coordinator: coordinator.as_ref(),
        console: None,
        job: None,
    };
    let settings = Settings::from_args(&mut args, &mut front);
    // Before the header, failures print at sysbench's default verbosity.
    let console = front
        .console
        .take()
        .unwrap_or_else(|| Console::new(3, false));
    let mut settings = match settings {
        Ok(Some(s)) => s,
        Ok(None) => {
            console.notice_raw(&format!("{}\n", fileio_help()));
            return Invocation::code(0);
        }
        Err(f) => {
            console.failure(&f);
            if f.show_fileio_help {
                console.notice_raw(&format!("\n{}\n", fileio_help()));
            }
            return Invocation::code(f.exit_code);
        }
    };
    let job = front
        .job
        .take()
        .unwrap_or_else(|| Job::new(coordinator.as_ref(), settings.job));
    if !job.is_root() {
        settings.ext.progress = Progress::Off;
    }
    let Settings {
        general,
        ext,
        action,
        ..
    } = settings;
    match &action {
        Action::Prepare(files) if job.is_distributed() => {
            Invocation::code(job.prepare(&console, files))
        }
        Action::Cleanup(files) if job.is_distributed() => {
            Invocation::code(job.cleanup(&console, files))
        }
        Action::Prepare(files) => prepare_command(&console, files, &ext),
        Action::Cleanup(files) => {
            crate::run::fileset::cleanup(files, &mut |l| console.notice(l));
            Invocation::code(0)
        }
        Action::Run(spec) => run_command(&console, spec, &general, ext, &job, check_destinations),
    }
}

/// `sysbench` with no test or another test than fileio, as sysbench 1.0.20
/// answers it: the general options are checked (before the header), then the
/// header, then the test name, before any test option (an unknown option is
/// the test's business, so `sysbench foo --bogus` names `foo`). With no test
/// name sysbench runs the Lua script on its standard input: an empty one
/// (the usual `sysbench </dev/null`, or no arguments from a script) does
/// nothing and exits 0; tankbench runs no Lua, so a script is refused.
fn sysbench_without_fileio(args: &mut ParsedArgs) -> Invocation {
    let general = match GeneralOptions::from_args(args) {
        Ok(g) => g,
        Err(f) => {
            Console::new(3, false).failure(&f);
            return Invocation::code(f.exit_code);
        }
    };
    let console = Console::new(general.verbosity, false);
    for w in &general.pre_header_warnings {
        console.warning(w);
    }
    console.notice(&format!("{}\n", report_text::banner()));
    let failure = match args.test.as_deref() {
        Some(name) if OTHER_BUILT_IN_TESTS.contains(&name) => match &args.command {
            None => {
                crate::console::to_stderr(&format!(
                    "The '{name}' test requires a command argument. See 'sysbench {name} help'\n"
                ));
                return Invocation::code(1);
            }
            Some(_) => Failure::fatal(format!(
                "the '{name}' test is not built into this sysbench: it is tankbench, which runs the fileio test only"
            )),
        },
        Some(name) => Failure::fatal(format!(
            "Cannot find benchmark '{}': no such built-in test, file or module",
            crate::text::printable(name)
        )),
        None => match script_on_stdin() {
            Ok(false) => return Invocation::code(0),
            Ok(true) => Failure::fatal(
                "standard input holds a Lua script, and tankbench runs none: its one test is built in (sysbench fileio help)",
            ),
            Err(e) => Failure::fatal(format!("cannot read the script on standard input: {e}")),
        },
    };
    console.failure(&failure);
    Invocation::code(failure.exit_code)
}

/// Whether standard input holds a script (anything but white space). A
/// terminal is not read: sysbench would wait there for a script to be typed,
/// and a benchmark that sits silently waiting helps nobody.
fn script_on_stdin() -> std::io::Result<bool> {
    use std::io::Read as _;
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(false);
    }
    let mut text = Vec::new();
    stdin.lock().read_to_end(&mut text)?;
    Ok(text.iter().any(|b| !b.is_ascii_whitespace()))
}

/// Prints as the settings are checked, in sysbench's order: the header once
/// the output options are known, then tankbench's job warning.
struct FrontEnd<'a> {
    coordinator: &'a dyn Coordinator,
    console: Option<Console>,
    job: Option<Job<'a>>,
}

impl SettingsProgress for FrontEnd<'_> {
    fn output_known(&mut self, general: &GeneralOptions, ext: &Extensions) {
        let console = Console::new(general.verbosity, ext.format == Format::Json);
        for w in &general.pre_header_warnings {
            console.warning(w);
        }
        console.notice(&format!("{}\n", report_text::banner()));
        self.console = Some(console);
    }

    fn job_known(&mut self, opts: &JobOptions) {
        let job = Job::new(self.coordinator, *opts);
        if let (Some(w), Some(console)) = (job.single_process_warning(), &self.console) {
            console.warning(&w);
        }
        self.job = Some(job);
    }
}

/// `prepare` in one process, with its progress line.
fn prepare_command(console: &Console, files: &FileSet, ext: &Extensions) -> Invocation {
    let mut progress = PrepareProgress::new(console, ext, files.file_num * files.file_size);
    let result = crate::run::fileset::prepare(files, &mut |l| console.notice(l), &mut progress);
    console.end_progress();
    match result {
        Ok(_) => Invocation::code(0),
        Err(f) => {
            console.failure(&f);
            Invocation::code(f.exit_code)
        }
    }
}

fn run_command(
    console: &Console,
    w: &RunSpec,
    g: &GeneralOptions,
    ext: Extensions,
    job: &Job,
    check_destinations: DestinationCheck,
) -> Invocation {
    if let Err(f) = job.check_run_options(g, ext.intervals_path.is_some()) {
        console.failure(&f);
        return Invocation::code(1);
    }
    if let Err(e) = w.validate_buffer_sharing() {
        console.failure(&Failure::from(e));
        return Invocation::code(1);
    }
    // Before anything is printed: a run that could never end is refused.
    if let Err(e) = w.validate_threads() {
        console.failure(&Failure::from(e));
        return Invocation::code(1);
    }
    // Where the results go is checked before the run, so a typo in --save or
    // --json does not cost the run. Rank 0 writes them; `agree` stops every
    // rank of a distributed job together.
    let destinations = if job.is_root() {
        check_destinations(&ext, w).map_err(Failure::stderr)
    } else {
        Ok(())
    };
    if let Err(f) = job.agree(destinations) {
        console.failure(&f);
        return Invocation::code(1);
    }
    // Created before the first run, so a reader can open it as soon as the
    // run starts; an MPI job was refused `--intervals` above.
    let intervals = match &ext.intervals_path {
        Some(path) => match IntervalStream::create(path) {
            Ok(s) => Some(s),
            Err(e) => {
                console.failure(&Failure::stderr(format!(
                    "tankbench: --intervals={}: {e}",
                    path.display()
                )));
                return Invocation::code(1);
            }
        },
        None => None,
    };
    let mut results = Vec::new();
    let mut exit_code = 0;
    for run in 1..=ext.repeat {
        let stream = intervals.as_ref().map(|s| (s, run));
        match run_once(console, w, g, &ext, job, stream) {
            Ok(r) => {
                let interrupted = r.interrupted;
                results.push(r);
                if interrupted {
                    exit_code = 130;
                    break;
                }
            }
            Err(code) => {
                exit_code = code;
                break;
            }
        }
    }
    if let (Some(stream), Some(path)) = (&intervals, &ext.intervals_path) {
        stream.finish(exit_code == 1);
        if let Some(e) = stream.error() {
            console.failure(&Failure::stderr(format!(
                "tankbench: --intervals={}: the stream stopped at a failed write: {e}",
                path.display()
            )));
            exit_code = 1;
        }
    }
    if !job.is_root() {
        // Rank 0 writes, prints and stores the job's result.
        return Invocation::code(exit_code);
    }
    // `--json=FILE` and `--save` are written by the caller (see
    // `execute_checked`), from `results`.
    if exit_code != 1 && ext.format == Format::Json && !results.is_empty() {
        let doc = if results.len() == 1 {
            serde_json::to_string_pretty(&results[0])
        } else {
            serde_json::to_string_pretty(&results)
        };
        crate::console::to_stdout(format!("{}\n", doc.expect("results serialize")).as_bytes());
    }
    Invocation {
        exit_code,
        results,
        extensions: Some(ext),
    }
}

/// `--config-file=FILE`: lines `name = value[, value...]`, `#` comments, values
/// optionally quoted; they go before the command-line words, so the command line
/// wins (last one wins).
/// The text of `--config-file`: only a regular file is read (a FIFO named
/// like it blocked the read for ever; O_NONBLOCK keeps the open from
/// blocking, and changes nothing for a regular file).
fn read_config_file(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other(
            "not a regular file; accepted: a regular file",
        ));
    }
    let mut text = String::new();
    f.read_to_string(&mut text)?;
    Ok(text)
}

fn with_config_file(words: &CommandWords) -> Result<Vec<String>, String> {
    let Some(file) = words.file_names.get("config-file") else {
        return Ok(words.text.clone());
    };
    let path = std::path::Path::new(file).display();
    let text = read_config_file(std::path::Path::new(file))
        .map_err(|e| format!("--config-file={path}: cannot read it: {e}"))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            return Err(format!(
                "--config-file={path}: line {}: expected 'name = value'",
                n + 1
            ));
        };
        let values: Vec<String> = value
            .split(',')
            .map(|v| v.trim().trim_matches('"').trim_matches('\'').to_string())
            .collect();
        out.push(format!("--{}={}", name.trim(), values.join(",")));
    }
    out.extend(
        words
            .text
            .iter()
            .filter(|w| !w.starts_with("--config-file=") && !w.starts_with("--config_file="))
            .cloned(),
    );
    Ok(out)
}

/// Run a validated workload with the given console (quick and other callers use
/// a silent one) and default extensions.
pub(crate) fn run_workload_quietly(
    console: &Console,
    w: &RunSpec,
    g: &GeneralOptions,
    on_tick: &(dyn Fn(Duration) + Sync),
) -> Result<RunResult, Failure> {
    w.check_runnable()?;
    let ext = Extensions {
        format: Format::Text,
        json_path: None,
        csv_path: None,
        intervals_path: None,
        openmetrics_path: None,
        progress: Progress::Off,
        drop_caches: false,
        save: None,
        labels: Vec::new(),
        repeat: 1,
        warmup_s: 0,
    };
    let listeners = Listeners {
        intervals: None,
        on_tick: Some(on_tick),
    };
    measure(console, w, g, &ext, &Job::solo(), listeners, &mut false)
}

/// Who else hears of a run as it goes: the `--intervals` stream, and a
/// caller's own clock (quick's progress bar), told the time since the start
/// a few times a second.
struct Listeners<'a> {
    intervals: IntervalsOf<'a>,
    on_tick: Option<&'a (dyn Fn(Duration) + Sync)>,
}

/// Where a run writes its report intervals (`--intervals`), and which run of
/// the invocation it is.
type IntervalsOf<'a> = Option<(&'a IntervalStream, u32)>;

/// One run, printing a failure's lines. Err carries the exit code.
fn run_once(
    console: &Console,
    w: &RunSpec,
    g: &GeneralOptions,
    ext: &Extensions,
    job: &Job,
    intervals: IntervalsOf,
) -> Result<RunResult, i32> {
    let mut ran = false;
    let listeners = Listeners {
        intervals,
        on_tick: None,
    };
    measure(console, w, g, ext, job, listeners, &mut ran).map_err(|f| {
        console.failure(&f);
        // After a forced shutdown sysbench exits right after the report.
        if ran && !f.is_forced_shutdown() {
            // A failure during the run: sysbench prints the FATAL line when it
            // happens, then "Done." once the threads are joined (INFO level).
            console.info("Done.\n");
        }
        f.exit_code
    })
}

/// One run: header, files, workers, report. `ran` tells whether the clock
/// started (so a failure came during the run).
fn measure(
    console: &Console,
    w: &RunSpec,
    g: &GeneralOptions,
    ext: &Extensions,
    job: &Job,
    listeners: Listeners,
    ran: &mut bool,
) -> Result<RunResult, Failure> {
    let Listeners { intervals, on_tick } = listeners;
    let caches_dropped = ext.drop_caches && crate::environment::drop_caches();
    if ext.drop_caches && !caches_dropped {
        console.warning("WARNING: --drop-caches: could not drop the page cache (needs root); reads may come from cache");
    }
    console.notice_raw(&report_text::run_header(w, g, None));
    console.notice_raw(&job.header_note(&w.files));
    // From here on `w` is this rank's share of a distributed job.
    let local = RunSpec {
        files: job.agree(job.local_files(&w.files, w.mode == crate::spec::Mode::SeqWr))?,
        ..w.clone()
    };
    let w = &local;
    let files = job.agree(crate::run::fileset::open_for_run(w, &mut |l| {
        console.debug(&format!("DEBUG: {l}"))
    }))?;
    console.notice("Initializing worker threads...\n");
    let started_at = crate::clock::utc_now_rfc3339();
    let environment = crate::environment::capture(&w.files.dir, caches_dropped);
    let zfs_watch = crate::zfs_facts::Watch::start(
        environment.zfs.as_ref(),
        crate::zfs_facts::Watch::interval_for(w.time_s),
    );
    let show_progress = match ext.progress {
        Progress::On => true,
        Progress::Off => false,
        Progress::Auto => std::io::stderr().is_terminal(),
    };
    let observer = CliObserver {
        console,
        debug: g.debug,
        started: std::sync::atomic::AtomicBool::new(false),
        percentile: w.percentile,
        show_progress,
        time_s: w.time_s,
        events: w.events,
        print_intervals: g.report_interval_s > 0,
        intervals,
        warmup_s: ext.warmup_s,
        last_line: std::sync::Mutex::new(String::new()),
        on_tick,
    };
    let settings = RunSettings {
        // `--intervals` alone samples every second; only `--report-interval`
        // prints the samples, so sysbench's output stays what it was.
        report_interval_s: match (g.report_interval_s, intervals) {
            (0, Some(_)) => 1,
            (s, _) => s,
        },
        checkpoints_s: g.report_checkpoints_s.clone(),
        forced_shutdown_s: g.forced_shutdown_s,
        debug: g.debug,
        // sysbench's own background threads, for the seeds: the sampling that
        // `--intervals` alone asks for is tankbench's and shifts no seed.
        background_threads: (g.report_interval_s > 0) as u32
            + (w.rate > 0) as u32
            + (!g.report_checkpoints_s.is_empty()) as u32,
        injected_trace: None,
        warmup_s: ext.warmup_s,
    };
    let job_observer = job.observer(&observer, w);
    // Ctrl-C ends a run cleanly (a report of what was done, marked
    // interrupted, exit 130); a second one kills. Only SIGINT: sysbench ends
    // at once on SIGTERM and SIGHUP, and so does the front end.
    crate::signals::StopHandlers::new()
        .signals(&[libc::SIGINT])
        .install();
    let outcome = runner::run(w, files, &settings, &job_observer);
    console.end_progress();
    *ran = observer.started.load(std::sync::atomic::Ordering::Relaxed);
    let outcome = job.after_run(&job_observer, outcome)?;
    console.info("Done.\n");
    if g.histogram && !job.is_distributed() {
        console.notice_raw(&report_text::histogram_text(&outcome.period.histogram));
    }
    let mut result =
        crate::summary::measured_result(w, &outcome, started_at, environment, Vec::new());
    result.warmup_s = ext.warmup_s;
    zfs_watch.finish(&mut result.environment.zfs);
    let mount = crate::environment::mount_of(&w.files.dir);
    let ctx = crate::warnings::Context {
        workload: w,
        environment: &result.environment,
        logical_block_size: mount
            .and_then(|m| crate::environment::logical_block_size(&m.major_minor)),
    };
    result.warnings = crate::warnings::analyze(&ctx, &result)
        .iter()
        .map(Into::into)
        .collect();
    if job.is_distributed() {
        return job.finish(console, w, g, &job_observer, &outcome, result);
    }
    console.notice_raw(&report_text::sysbench_report(&outcome.period, w.percentile));
    if g.debug {
        thread_statistics(console, &outcome.period);
    }
    console.notice_raw(&report_text::latency_section(&result));
    if outcome.interrupted {
        console.notice("Run interrupted (SIGINT): the report covers the part that ran.\n");
    }
    crate::warnings::print(console, &result.warnings);
    Ok(result)
}

/// `--debug`'s per-thread statistics after a report, as sysbench prints them:
/// DEBUG lines, then a blank NOTICE line.
fn thread_statistics(console: &Console, period: &PeriodStats) {
    for line in report_text::thread_debug_lines(period) {
        console.debug(&line);
    }
    console.notice("");
}

/// Reports run progress through the console.
/// How the process ends when `--forced-shutdown` fires, set by the program
/// that owns the process (a library does not end processes).
static FORCED_SHUTDOWN_EXIT: std::sync::OnceLock<fn(i32) -> !> = std::sync::OnceLock::new();

/// Let a forced shutdown end the process at once with `exit` (the binary
/// passes `std::process::exit`), instead of waiting for the workers' current
/// requests, which may never complete. The first call wins.
pub fn exit_process_on_forced_shutdown(exit: fn(i32) -> !) {
    let _ = FORCED_SHUTDOWN_EXIT.set(exit);
}

struct CliObserver<'a> {
    console: &'a Console,
    /// `--debug`: checkpoint reports carry the per-thread statistics too.
    debug: bool,
    /// The clock has started (so a failure happened during the run).
    started: std::sync::atomic::AtomicBool,
    percentile: u32,
    show_progress: bool,
    time_s: u64,
    events: u64,
    /// `--report-interval` given: sysbench's interval lines are printed.
    print_intervals: bool,
    /// `--intervals=FILE`: each sample also goes there, as this run's.
    intervals: IntervalsOf<'a>,
    /// `--warmup`: seconds before the measured `time_s`.
    warmup_s: u64,
    /// The live line last drawn.
    last_line: std::sync::Mutex<String>,
    /// A caller's clock of the run (quick's progress bar).
    on_tick: Option<&'a (dyn Fn(Duration) + Sync)>,
}

/// The limits a live line counts down to.
struct LiveLimits {
    warmup_s: u64,
    time_s: u64,
    events: u64,
}

/// The live progress line: the last second's operations (reads, writes
/// and fsyncs, as quick's table counts them), MiB/s and latency at the
/// run's percentile (its mean with `--percentile=0`), then what is left.
/// Whole seconds only, so frames that say the same are the same text.
fn live_line(
    elapsed: Duration,
    totals: &crate::run::histograms::CountSnapshot,
    last_second: Option<&IntervalStats>,
    limits: &LiveLimits,
) -> String {
    let secs = elapsed.as_secs();
    let measured_until = limits.warmup_s + limits.time_s;
    if limits.time_s > 0 && secs >= measured_until {
        return format!(
            "[{measured_until}s] time limit reached: waiting for the requests in flight"
        );
    }
    if limits.events > 0 && totals.events >= limits.events {
        return format!(
            "[{secs}s] {} events done: waiting for the requests in flight",
            limits.events
        );
    }
    let now = match last_second {
        Some(s) if s.seconds > 0.0 => {
            let d = &s.delta;
            let ops = (d.reads + d.writes + d.fsyncs) as f64 / s.seconds;
            let mib = (d.bytes_read + d.bytes_written) as f64 / s.seconds / 1048576.0;
            let latency = if s.percentile > 0 {
                format!("p{} {}", s.percentile, live_latency(s.latency_ms))
            } else if d.events > 0 {
                format!(
                    "mean {}",
                    live_latency(d.latency_sum_ns as f64 / d.events as f64 / 1e6)
                )
            } else {
                "no events".to_string()
            };
            format!("{ops:.0} ops/s, {mib:.2} MiB/s, {latency}")
        }
        _ => "starting".to_string(),
    };
    let left = if secs < limits.warmup_s {
        format!("; warm-up, {}s left", limits.warmup_s - secs)
    } else if limits.time_s > 0 {
        format!("; {}s left", measured_until - secs)
    } else if limits.events > 0 {
        format!("; {}/{} events", totals.events, limits.events)
    } else {
        String::new()
    };
    format!("[{secs}s] {now} (last second){left}")
}

/// A latency on the live line: µs below 1 ms, about three digits.
fn live_latency(ms: f64) -> String {
    if ms < 1.0 {
        format!("{:.0} µs", ms * 1000.0)
    } else if ms < 100.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

impl RunObserver for CliObserver<'_> {
    fn debug(&self, line: &str) {
        self.console.debug(line);
    }
    fn info(&self, line: &str) {
        self.console.info(line);
    }
    fn started(&self) {
        self.started
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.console.notice("Threads started!\n");
    }
    fn interval(&self, sample: &IntervalStats) {
        if let Some((stream, run)) = self.intervals {
            stream.write(run, sample);
        }
        if self.print_intervals {
            self.console
                .notice_timestamped(&report_text::interval_line(sample));
        }
    }
    fn checkpoint(&self, at_s: u64, period: &PeriodStats) {
        // Observed with 1.0.20: the timestamped line follows the previous
        // output directly (no blank line before it); the report's own blank
        // line comes after it.
        self.console
            .notice_timestamped(&format!("[ {at_s}s ] Checkpoint report:"));
        self.console
            .notice_raw(&report_text::sysbench_report(period, self.percentile));
        if self.debug {
            thread_statistics(self.console, period);
        }
    }
    fn tick(
        &self,
        elapsed: Duration,
        totals: &crate::run::histograms::CountSnapshot,
        last_second: Option<&IntervalStats>,
    ) {
        if let Some(on_tick) = self.on_tick {
            on_tick(elapsed);
        }
        if !self.show_progress {
            return;
        }
        let line = live_line(
            elapsed,
            totals,
            last_second,
            &LiveLimits {
                warmup_s: self.warmup_s,
                time_s: self.time_s,
                events: self.events,
            },
        );
        // While the last requests drain after the time limit, the line
        // says so once instead of redrawing the same frame ten times a
        // second.
        let mut last = self.last_line.lock().unwrap_or_else(|e| e.into_inner());
        if *last != line {
            self.console.progress(&line);
            *last = line;
        }
    }
    fn forced_shutdown(&self, period: &PeriodStats) {
        self.console.end_progress();
        self.console
            .fatal("FATAL: The --max-time limit has expired, forcing shutdown...");
        self.console
            .notice_raw(&report_text::sysbench_report(period, self.percentile));
        // A forced shutdown exists for runs that would not end by themselves
        // (a request stuck on a hung NFS mount), so waiting for the workers is
        // not an option there: a process that installed an exit (the binary)
        // ends now, as sysbench does from its shutdown thread. Without one (a
        // library caller, a test) the runner ends the run with
        // `Failure::forced_shutdown` after the workers' current requests.
        if let Some(exit) = FORCED_SHUTDOWN_EXIT.get() {
            let _ = std::io::Write::flush(&mut std::io::stdout());
            exit(crate::options::FORCED_SHUTDOWN_EXIT_CODE);
        }
    }
}

/// Live progress of prepare (files written, MiB/s, ETA).
struct PrepareProgress<'a> {
    console: &'a Console,
    enabled: bool,
    total: u64,
    start: std::time::Instant,
    last: std::time::Instant,
}

impl<'a> PrepareProgress<'a> {
    fn new(console: &'a Console, ext: &Extensions, total: u64) -> PrepareProgress<'a> {
        let enabled = match ext.progress {
            Progress::On => true,
            Progress::Off => false,
            Progress::Auto => std::io::stderr().is_terminal(),
        };
        let now = std::time::Instant::now();
        PrepareProgress {
            console,
            enabled,
            total,
            start: now,
            last: now,
        }
    }
}

impl crate::run::fileset::PrepareObserver for PrepareProgress<'_> {
    fn bytes_written(&mut self, done: u64) {
        if !self.enabled || self.last.elapsed() < Duration::from_millis(200) {
            return;
        }
        self.last = std::time::Instant::now();
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let rate = done as f64 / secs;
        let eta = if rate > 0.0 {
            (self.total.saturating_sub(done)) as f64 / rate
        } else {
            0.0
        };
        self.console.progress(&format!(
            "prepare: {:.0} of {:.0} MiB, {:.1} MiB/s, ETA {:.0}s",
            done as f64 / 1048576.0,
            self.total as f64 / 1048576.0,
            rate / 1048576.0,
            eta
        ));
    }
}

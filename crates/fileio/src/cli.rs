//! The sysbench-compatible front end: one invocation of `sysbench fileio …`
//! (or the legacy `--test=fileio …`) from words to output and exit code, with
//! sysbench's streams, order of messages and verbosity rules (spec §1, §8).
//!
//! The binary calls [`execute`] and then does what needs other crates (saving
//! results to a store).

use crate::args::{ParsedArgs, Section, OPTIONS};
use crate::job::{Job, JobOptions};
use crate::options::{
    Command, Failure, Format, GeneralOptions, IoMode, Progress, Stream, Workload,
};
use crate::report;
use crate::result::RunResult;
use crate::runner::{self, IntervalStats, PeriodStats, RunObserver, RunSettings};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

/// Log levels of sysbench (`--verbosity`).
const FATAL: u32 = 0;
const WARNING: u32 = 2;
const NOTICE: u32 = 3;
const DEBUG: u32 = 5;

/// Output with sysbench's rules: the logger writes to stdout, filtered by
/// verbosity; identical consecutive debug lines are folded. In JSON mode stdout
/// carries only the JSON document, so log lines move to stderr (warnings and
/// errors) or are dropped (notices).
pub struct Console {
    verbosity: u32,
    json: bool,
    debug_state: Mutex<(Option<String>, u64)>,
    /// A live progress line is on stderr and must be cleared before printing.
    progress_shown: Mutex<bool>,
}

impl Console {
    pub fn new(verbosity: u32, json: bool) -> Console {
        Console {
            verbosity,
            json,
            debug_state: Mutex::new((None, 0)),
            progress_shown: Mutex::new(false),
        }
    }

    fn clear_progress(&self) {
        let mut shown = self.progress_shown.lock().expect("console lock");
        if *shown {
            eprint!("\r\x1b[2K");
            *shown = false;
        }
    }

    fn emit(&self, level: u32, text: &str) {
        if level > self.verbosity {
            return;
        }
        self.clear_progress();
        self.flush_repeats();
        if self.json {
            if level <= WARNING {
                eprintln!("{text}");
            }
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }

    /// A NOTICE line (normal output); may hold several lines.
    pub fn notice(&self, text: &str) {
        self.emit(NOTICE, text)
    }

    /// Raw text (already formatted, with its own newlines) at NOTICE level.
    pub fn notice_raw(&self, text: &str) {
        if NOTICE > self.verbosity || self.json {
            return;
        }
        self.clear_progress();
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    pub fn warning(&self, text: &str) {
        self.emit(WARNING, text)
    }

    pub fn fatal(&self, text: &str) {
        self.emit(FATAL, text)
    }

    pub fn stderr(&self, text: &str) {
        self.clear_progress();
        eprintln!("{text}");
    }

    fn flush_repeats(&self) {
        let mut st = self.debug_state.lock().expect("console lock");
        if st.1 > 0 {
            let n = st.1;
            st.1 = 0;
            drop(st);
            if !self.json {
                println!("(last message repeated {n} times)");
            }
        }
    }

    /// A DEBUG line; identical consecutive lines are folded like sysbench's logger.
    pub fn debug(&self, text: &str) {
        if DEBUG > self.verbosity {
            return;
        }
        {
            let mut st = self.debug_state.lock().expect("console lock");
            if st.0.as_deref() == Some(text) {
                st.1 += 1;
                return;
            }
        }
        self.flush_repeats();
        let mut st = self.debug_state.lock().expect("console lock");
        st.0 = Some(text.to_string());
        drop(st);
        if self.json {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
    }

    /// Print a failure's lines to their streams.
    pub fn failure(&self, f: &Failure) {
        for (stream, line) in &f.lines {
            match stream {
                Stream::Stderr => self.stderr(line),
                Stream::Stdout => {
                    if line.starts_with("WARNING: ") {
                        self.warning(line)
                    } else {
                        self.fatal(line)
                    }
                }
            }
        }
    }

    /// A live progress line on stderr (only when stderr is a terminal).
    pub fn progress(&self, text: &str) {
        let mut shown = self.progress_shown.lock().expect("console lock");
        eprint!("\r\x1b[2K{text}");
        let _ = std::io::stderr().flush();
        *shown = true;
    }

    pub fn end_progress(&self) {
        self.clear_progress();
    }
}

/// Settings that only tankbench has.
#[derive(Debug, Clone)]
pub struct Extensions {
    pub format: Format,
    pub json_path: Option<String>,
    pub progress: Progress,
    pub drop_caches: bool,
    /// `--save` given: `Some(None)` for the default directory.
    pub save: Option<Option<String>>,
    pub labels: Vec<String>,
    pub repeat: u32,
}

impl Extensions {
    fn from_args(a: &ParsedArgs) -> Result<Extensions, Failure> {
        let format = match a.string("format").as_deref() {
            Some("text") | None => Format::Text,
            Some("json") => Format::Json,
            Some(other) => {
                return Err(Failure::fatal(format!(
                    "Invalid value for --format: {other} (accepted: text, json)"
                )))
            }
        };
        let progress = match a.string("progress").as_deref() {
            Some("auto") | None => Progress::Auto,
            Some("on") => Progress::On,
            Some("off") => Progress::Off,
            Some(other) => {
                return Err(Failure::fatal(format!(
                    "Invalid value for --progress: {other} (accepted: auto, on, off)"
                )))
            }
        };
        let repeat = a.int("repeat")?;
        if repeat < 1 {
            return Err(Failure::fatal(format!(
                "Invalid value for --repeat: {repeat} (accepted: 1 or more)"
            )));
        }
        let json_path = match a.raw("json") {
            Some(Some(p)) if !p.is_empty() => Some(p.to_string()),
            Some(_) => return Err(Failure::fatal("--json needs a file name: --json=FILE")),
            None => None,
        };
        Ok(Extensions {
            format,
            json_path,
            progress,
            drop_caches: a.bool("drop-caches")?,
            save: a
                .raw("save")
                .map(|v| v.filter(|s| !s.is_empty()).map(str::to_string)),
            labels: a.list("label"),
            repeat: repeat as u32,
        })
    }
}

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
pub fn fileio_help() -> String {
    let mut s = String::from("fileio options:\n");
    s.push_str(&option_list(Section::FileIo));
    s.push_str("\ntankbench extensions:\n");
    s.push_str(&option_list(Section::Extension));
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
pub fn general_help() -> String {
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

/// Run one sysbench-style invocation. `words` excludes the program name.
pub fn execute(words: &[String]) -> Invocation {
    // Before anything prints: under an MPI launcher only rank 0 may print.
    let coordinator = match crate::coordinator::for_this_process() {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("{msg}");
            return Invocation::code(1);
        }
    };
    crate::job::silence_stdout_unless_root(coordinator.as_ref());
    let words = match with_config_file(words) {
        Ok(w) => w,
        Err(msg) => {
            eprintln!("{msg}");
            return Invocation::code(1);
        }
    };
    let mut args = ParsedArgs::parse(&words);
    for note in &args.stderr_notes {
        eprintln!("{note}");
    }
    if let Some(extra) = &args.extra_positional {
        eprintln!("Unrecognized command line argument: {extra}");
        return Invocation::code(1);
    }
    if matches!(args.bool("help"), Ok(true)) {
        print!("{}", general_help());
        return Invocation::code(0);
    }
    if matches!(args.bool("version"), Ok(true)) {
        println!("sysbench 1.0.20 (tankbench {})", report::TOOL_VERSION);
        return Invocation::code(0);
    }
    let general = match GeneralOptions::from_args(&mut args) {
        Ok(g) => g,
        Err(f) => {
            Console::new(3, false).failure(&f);
            return Invocation::code(f.exit_code);
        }
    };
    let mut ext = match Extensions::from_args(&args) {
        Ok(e) => e,
        Err(f) => {
            Console::new(3, false).failure(&f);
            return Invocation::code(f.exit_code);
        }
    };
    let console = Console::new(general.verbosity, ext.format == Format::Json);
    for w in &general.pre_header_warnings {
        console.warning(w);
    }
    console.notice(&format!("{}\n", report::banner()));
    if let Some(unknown) = args.unknown.first() {
        console.stderr(&format!("invalid option: {unknown}"));
        return Invocation::code(1);
    }
    if let Err(e) = args.check_bools() {
        console.stderr(&e.to_string());
        return Invocation::code(1);
    }
    match args.test.as_deref() {
        Some("fileio") => {}
        Some(other) => {
            console.stderr(&format!(
                "tankbench implements only the fileio test; '{other}' is not available (accepted: fileio)"
            ));
            return Invocation::code(1);
        }
        None => {
            console.stderr(
                "The 'fileio' test requires a command argument. See 'sysbench fileio help'",
            );
            return Invocation::code(1);
        }
    }
    let command = match args.command.as_deref() {
        None => {
            console.stderr(
                "The 'fileio' test requires a command argument. See 'sysbench fileio help'",
            );
            return Invocation::code(1);
        }
        Some("help") => {
            console.notice_raw(&format!("{}\n", fileio_help()));
            return Invocation::code(0);
        }
        Some("prepare") => Command::Prepare,
        Some("run") => Command::Run,
        Some("cleanup") => Command::Cleanup,
        Some(other) => {
            console.stderr(&format!("Unknown command: {other}"));
            return Invocation::code(1);
        }
    };
    let job = match JobOptions::from_args(&args) {
        Ok(opts) => Job::new(coordinator.as_ref(), opts),
        Err(f) => {
            console.failure(&f);
            return Invocation::code(f.exit_code);
        }
    };
    if let Some(w) = job.single_process_warning() {
        console.warning(&w);
    }
    if !job.is_root() {
        ext.progress = Progress::Off;
    }
    let workload = match Workload::from_args(&args, &general, command) {
        Ok(w) => w,
        Err(f) => {
            console.failure(&f);
            if f.show_fileio_help {
                console.notice_raw(&format!("\n{}\n", fileio_help()));
            }
            return Invocation::code(f.exit_code);
        }
    };
    match command {
        Command::Prepare if job.is_distributed() => {
            Invocation::code(job.prepare(&console, &workload))
        }
        Command::Cleanup if job.is_distributed() => {
            Invocation::code(job.cleanup(&console, &workload))
        }
        Command::Prepare => {
            let mut progress =
                PrepareProgress::new(&console, &ext, workload.file_num * workload.file_size);
            let result =
                crate::fileset::prepare(&workload, &mut |l| console.notice(l), &mut progress);
            console.end_progress();
            match result {
                Ok(_) => Invocation::code(0),
                Err(f) => {
                    console.failure(&f);
                    Invocation::code(f.exit_code)
                }
            }
        }
        Command::Cleanup => {
            crate::fileset::cleanup(&workload, &mut |l| console.notice(l));
            Invocation::code(0)
        }
        Command::Run => run_command(&console, &workload, &general, ext, &job),
    }
}

const VALIDATE_ASYNC: &str = "--validate cannot be used with --file-io-mode=async: in-flight requests share one buffer, so checksums would be compared against other requests' data (use sync or mmap)";

fn run_command(
    console: &Console,
    w: &Workload,
    g: &GeneralOptions,
    ext: Extensions,
    job: &Job,
) -> Invocation {
    if let Err(f) = w.check_runnable().and_then(|_| job.check_run_options(g)) {
        console.failure(&f);
        return Invocation::code(1);
    }
    if w.validate && w.io_mode == IoMode::Async {
        console.fatal(&format!("FATAL: {VALIDATE_ASYNC}"));
        return Invocation::code(1);
    }
    let mut results = Vec::new();
    let mut exit_code = 0;
    for _ in 0..ext.repeat {
        match run_once(console, w, g, &ext, job) {
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
    if !job.is_root() {
        // Rank 0 writes, prints and stores the job's result.
        return Invocation::code(exit_code);
    }
    if exit_code != 1 {
        if let Some(path) = &ext.json_path {
            let doc = if results.len() == 1 {
                serde_json::to_string_pretty(&results[0])
            } else {
                serde_json::to_string_pretty(&results)
            };
            if let Err(e) = doc
                .map_err(|e| e.to_string())
                .and_then(|d| write_new_or_own_json(path, &d))
            {
                console.stderr(&format!("tankbench: --json={path}: {e}"));
                exit_code = 1;
            }
        }
        if ext.format == Format::Json && !results.is_empty() {
            let doc = if results.len() == 1 {
                serde_json::to_string_pretty(&results[0])
            } else {
                serde_json::to_string_pretty(&results)
            };
            println!("{}", doc.expect("results serialize"));
        }
    }
    Invocation {
        exit_code,
        results,
        extensions: Some(ext),
    }
}

/// Check a command line as [`execute`] would parse it, without printing,
/// running or touching a file; the first problem as one line. For callers that
/// run fileio later and must refuse bad options before doing anything costly
/// (`lab run` builds a pool first).
pub fn check_words(words: &[String]) -> Result<(), String> {
    // A failure's lines as one, without sysbench's "FATAL: " prefix.
    let line = |f: Failure| {
        f.lines
            .iter()
            .map(|(_, l)| l.trim().trim_start_matches("FATAL: ").trim_end_matches(';'))
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let words = with_config_file(words)?;
    let mut args = ParsedArgs::parse(&words);
    if let Some(extra) = &args.extra_positional {
        return Err(format!("Unrecognized command line argument: {extra}"));
    }
    let general = GeneralOptions::from_args(&mut args).map_err(line)?;
    Extensions::from_args(&args).map_err(line)?;
    if let Some(unknown) = args.unknown.first() {
        return Err(format!("invalid option: {unknown}"));
    }
    args.check_bools().map_err(|e| e.to_string())?;
    if args.test.as_deref() != Some("fileio") {
        return Err("the command line does not select the fileio test".into());
    }
    let command = match args.command.as_deref() {
        Some("prepare") => Command::Prepare,
        Some("run") => Command::Run,
        Some("cleanup") => Command::Cleanup,
        Some(other) => return Err(format!("Unknown command: {other}")),
        None => return Err("no command (prepare, run or cleanup)".into()),
    };
    JobOptions::from_args(&args).map_err(line)?;
    let workload = Workload::from_args(&args, &general, command).map_err(line)?;
    if command == Command::Run {
        workload.check_runnable().map_err(line)?;
        if workload.validate && workload.io_mode == IoMode::Async {
            return Err(VALIDATE_ASYNC.into());
        }
    }
    Ok(())
}

/// `--config-file=FILE`: lines `name = value[, value...]`, `#` comments, values
/// optionally quoted; they go before the command-line words, so the command line
/// wins (last one wins).
fn with_config_file(words: &[String]) -> Result<Vec<String>, String> {
    let Some(path) = words
        .iter()
        .filter_map(|w| {
            w.strip_prefix("--config-file=")
                .or_else(|| w.strip_prefix("--config_file="))
        })
        .next_back()
    else {
        return Ok(words.to_vec());
    };
    let text = std::fs::read_to_string(path)
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
            .iter()
            .filter(|w| !w.starts_with("--config-file=") && !w.starts_with("--config_file="))
            .cloned(),
    );
    Ok(out)
}

/// Write a JSON result file, refusing to overwrite a file that is not a
/// tankbench result (tankbench never overwrites files it did not create).
fn write_new_or_own_json(path: &str, doc: &str) -> Result<(), String> {
    if let Ok(existing) = std::fs::read_to_string(path) {
        let ours = existing.contains("\"schema_version\"") && existing.contains("\"tankbench\"");
        if !ours {
            return Err(
                "the file exists and is not a tankbench result; refusing to overwrite it"
                    .to_string(),
            );
        }
    } else if std::path::Path::new(path).exists() {
        return Err(
            "the path exists and is not a readable tankbench result; refusing to overwrite it"
                .to_string(),
        );
    }
    std::fs::write(path, format!("{doc}\n")).map_err(|e| e.to_string())
}

/// Run a validated workload with the given console (quick and other callers use
/// a silent one) and default extensions.
pub fn run_workload_quietly(
    console: &Console,
    w: &Workload,
    g: &GeneralOptions,
) -> Result<RunResult, Failure> {
    w.check_runnable()?;
    let ext = Extensions {
        format: Format::Text,
        json_path: None,
        progress: Progress::Off,
        drop_caches: false,
        save: None,
        labels: Vec::new(),
        repeat: 1,
    };
    measure(console, w, g, &ext, &Job::solo())
}

/// One run, printing a failure's lines. Err carries the exit code.
fn run_once(
    console: &Console,
    w: &Workload,
    g: &GeneralOptions,
    ext: &Extensions,
    job: &Job,
) -> Result<RunResult, i32> {
    measure(console, w, g, ext, job).map_err(|f| {
        console.failure(&f);
        f.exit_code
    })
}

/// One run: header, files, workers, report.
fn measure(
    console: &Console,
    w: &Workload,
    g: &GeneralOptions,
    ext: &Extensions,
    job: &Job,
) -> Result<RunResult, Failure> {
    let caches_dropped = ext.drop_caches && crate::environment::drop_caches();
    if ext.drop_caches && !caches_dropped {
        console.warning("WARNING: --drop-caches: could not drop the page cache (needs root); reads may come from cache");
    }
    console.notice_raw(&report::run_header(w, g, None));
    console.notice_raw(&job.header_note(w));
    // From here on `w` is this rank's share of a distributed job.
    let local = job.agree(job.local_workload(w, w.mode() == crate::options::Mode::SeqWr))?;
    let w = &local;
    let files = job.agree(crate::fileset::open_for_run(w, &mut |l| {
        console.debug(&format!("DEBUG: {l}"))
    }))?;
    console.notice("Initializing worker threads...\n");
    let started_at = report::utc_now_rfc3339();
    let environment = crate::environment::capture(&w.dir, caches_dropped);
    let show_progress = match ext.progress {
        Progress::On => true,
        Progress::Off => false,
        Progress::Auto => std::io::stderr().is_terminal(),
    };
    let observer = CliObserver {
        console,
        percentile: w.percentile,
        show_progress,
        time_s: w.time_s,
        events: w.events,
    };
    let settings = RunSettings {
        report_interval_s: g.report_interval_s,
        checkpoints_s: g.report_checkpoints_s.clone(),
        forced_shutdown_s: g.forced_shutdown_s,
        debug: g.debug,
        background_threads: (g.report_interval_s > 0) as u32
            + (w.rate > 0) as u32
            + (!g.report_checkpoints_s.is_empty()) as u32,
        injected_trace: None,
    };
    let observer = job.observer(&observer, w);
    runner::install_sigint_handler();
    let outcome = runner::run(w, files, &settings, &observer);
    console.end_progress();
    let outcome = job.after_run(&observer, outcome)?;
    if !outcome.intervals.is_empty() {
        console.notice_raw("");
    }
    if g.histogram && !job.is_distributed() {
        console.notice_raw(&report::histogram_text(&outcome.period.histogram));
    }
    let mut result = report::build_result(w, &outcome, started_at, environment, Vec::new());
    let mount = crate::environment::mount_of(&w.dir);
    let ctx = crate::warnings::Context {
        workload: w,
        environment: &result.environment,
        logical_block_size: mount
            .and_then(|m| crate::environment::logical_block_size(&m.major_minor)),
    };
    result.warnings = crate::warnings::analyze(&ctx, &result);
    if job.is_distributed() {
        return job.finish(console, w, g, &observer, &outcome, result);
    }
    console.notice_raw(&report::sysbench_report(&outcome.period, w.percentile));
    console.notice_raw(&report::latency_section(&result));
    if outcome.interrupted {
        console.notice("Run interrupted (SIGINT): the report covers the part that ran.\n");
    }
    for warning in &result.warnings {
        console.warning(&format!(
            "WARNING: {}\n  hint: {}",
            warning.message, warning.hint
        ));
    }
    Ok(result)
}

/// Reports run progress through the console.
struct CliObserver<'a> {
    console: &'a Console,
    percentile: u32,
    show_progress: bool,
    time_s: u64,
    events: u64,
}

impl RunObserver for CliObserver<'_> {
    fn debug(&self, line: &str) {
        self.console.debug(line);
    }
    fn started(&self) {
        self.console.notice("Threads started!\n");
    }
    fn interval(&self, sample: &IntervalStats) {
        self.console.notice(&report::interval_line(sample));
    }
    fn checkpoint(&self, at_s: u64, period: &PeriodStats) {
        self.console
            .notice(&format!("\n[ {at_s}s ] Checkpoint report:"));
        self.console
            .notice_raw(&report::sysbench_report(period, self.percentile));
    }
    fn tick(&self, elapsed: Duration, totals: &crate::stats::CountSnapshot) {
        if !self.show_progress {
            return;
        }
        let secs = elapsed.as_secs_f64().max(1e-9);
        let ops = (totals.reads + totals.writes + totals.fsyncs) as f64 / secs;
        let remaining = if self.time_s > 0 {
            format!(", {:.0}s left", (self.time_s as f64 - secs).max(0.0))
        } else if self.events > 0 {
            format!(", {}/{} events", totals.events, self.events)
        } else {
            String::new()
        };
        self.console.progress(&format!(
            "[{:.0}s] {:.0} ops/s ({} reads, {} writes, {} fsyncs){}",
            secs, ops, totals.reads, totals.writes, totals.fsyncs, remaining
        ));
    }
    fn forced_shutdown(&self, period: &PeriodStats) {
        self.console.end_progress();
        self.console
            .fatal("FATAL: The --max-time limit has expired, forcing shutdown...");
        self.console
            .notice_raw(&report::sysbench_report(period, self.percentile));
        std::process::exit(2);
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

impl crate::fileset::PrepareObserver for PrepareProgress<'_> {
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

//! `tankbench fileio` (sysbench-compatible) and `tankbench quick`.

use anyhow::Context as _;
use clap::Args;
use fileio::export;
use fileio::options::{Extensions, RunSpec};
use fileio::quick::Step;
use fileio::result::RunResult;
use fileio::terminal::Screen;
use report::atomic::{check_can_create_in, check_new_file, parent_dir, write_atomically, Existing};
use report::labels::{merge_labels, parse_labels, Labels};
use report::store::{ResultStore, DEFAULT_DIR};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Labels from every `--label=` word (repeatable; merged), checked before
/// anything runs so a typo costs nothing.
fn labels_of(args: &[OsString]) -> anyhow::Result<Labels> {
    let mut labels = Labels::new();
    for a in args {
        // A label that is not text is refused by the front end's own check of
        // the words, with the rest of them.
        if let Some(text) = a.to_str().and_then(|a| a.strip_prefix("--label=")) {
            merge_labels(&mut labels, parse_labels(text)?)?;
        }
    }
    Ok(labels)
}

/// The store directory `--save[=DIR]` names.
fn save_dir(save: &Option<PathBuf>) -> &Path {
    save.as_deref().unwrap_or(Path::new(DEFAULT_DIR))
}

/// Where the results will go, checked after the options parse and before the
/// run starts: a 240 s run must not be lost to a typo found afterwards.
fn check_destinations(ext: &Extensions, spec: &RunSpec, labels: &Labels) -> Result<(), String> {
    match &ext.save {
        Some(save) => {
            let dir = save_dir(save);
            check_can_create_in(dir)
                .map_err(|e| format!("tankbench: --save={}: {e}", dir.display()))?;
        }
        // The CSV row and the OpenMetrics labels carry them too.
        None if !labels.is_empty() && ext.csv_path.is_none() && ext.openmetrics_path.is_none() => {
            return Err(
                "tankbench: --label needs --save, --csv or --openmetrics: labels are kept with \
                 stored results and written into those exports"
                    .into(),
            )
        }
        None => {}
    }
    if let Some(path) = &ext.json_path {
        check_new_file(path).map_err(|e| format!("tankbench: --json={}: {e}", path.display()))?;
    }
    if let Some(path) = &ext.csv_path {
        let fail = |e: String| format!("tankbench: --csv={}: {e}", path.display());
        match export::csv::check(path, &export::csv::header(&spec.percentiles)).map_err(fail)? {
            export::csv::Target::New => check_new_file(path).map_err(|e| fail(e.to_string()))?,
            export::csv::Target::Empty | export::csv::Target::Same => {}
        }
    }
    if let Some(path) = &ext.openmetrics_path {
        let fail = |e: String| format!("tankbench: --openmetrics={}: {e}", path.display());
        match export::openmetrics::check(path).map_err(fail)? {
            export::openmetrics::Target::New => {
                check_new_file(path).map_err(|e| fail(e.to_string()))?
            }
            export::openmetrics::Target::Ours => {
                check_can_create_in(parent_dir(path)).map_err(|e| fail(e.to_string()))?
            }
        }
        export::openmetrics::label_names(labels).map_err(fail)?;
    }
    Ok(())
}

/// `--csv=FILE`: a row per result appended (the header first when the file
/// is new or empty), checked again under the file's lock.
fn write_csv(path: &Path, spec_percentiles: &[f64], results: &[RunResult]) -> anyhow::Result<()> {
    let header = export::csv::header(spec_percentiles);
    let rows: Vec<String> = results
        .iter()
        .map(|r| export::csv::row(r, spec_percentiles))
        .collect();
    export::csv::append(path, &header, &rows)
        .map_err(|e| anyhow::anyhow!("--csv={}: {e}", path.display()))
}

/// `--openmetrics=FILE`: the last result, published whole; a file is replaced
/// only when an earlier run wrote it (checked again just before).
fn write_openmetrics(path: &Path, result: &RunResult) -> anyhow::Result<()> {
    let fail = |e: String| anyhow::anyhow!("--openmetrics={}: {e}", path.display());
    let text = export::openmetrics::render(result).map_err(fail)?;
    let existing = match export::openmetrics::check(path).map_err(fail)? {
        export::openmetrics::Target::New => Existing::Keep,
        export::openmetrics::Target::Ours => Existing::Replace,
    };
    write_atomically(path, text.as_bytes(), existing).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            fail("refusing to overwrite a file created during the run".into())
        } else {
            fail(e.to_string())
        }
    })
}

/// `--json=FILE`: the result (an array with `--repeat`), published whole as a
/// new file. It never replaces a file, a stored record least of all.
fn write_json(path: &Path, results: &[RunResult]) -> anyhow::Result<()> {
    let mut doc = if results.len() == 1 {
        serde_json::to_string_pretty(&results[0])
    } else {
        serde_json::to_string_pretty(results)
    }?;
    doc.push('\n');
    write_atomically(path, doc.as_bytes(), Existing::Keep).map_err(|e| {
        let path = path.display();
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            anyhow::anyhow!("--json={path}: refusing to overwrite a file created during the run")
        } else {
            anyhow::anyhow!("--json={path}: {e}")
        }
    })
}

/// The sysbench-compatible front end; `args` are the words after the program name.
pub fn sysbench_main(args: Vec<OsString>) -> anyhow::Result<i32> {
    let labels = labels_of(&args)?;
    // The CSV header is the run's: its percentiles, as the check saw them.
    let percentiles = std::cell::RefCell::new(Vec::new());
    let check = |ext: &Extensions, spec: &RunSpec| {
        percentiles.replace(spec.percentiles.clone());
        check_destinations(ext, spec, &labels)
    };
    let mut invocation = fileio::sysbench::cli::execute_checked(&args, &check);
    let Some(ext) = invocation.extensions.take() else {
        return Ok(report_lost(invocation.exit_code));
    };
    let mut exit_code = invocation.exit_code;
    // --repeat=N closes with the figures over the N runs, as hyperfine does;
    // JSON output stays JSON alone.
    if ext.format == fileio::options::Format::Text && invocation.results.len() > 1 {
        let table = report::compare::repeats_table(&invocation.results);
        fileio::console::to_stdout(
            format!(
                "\nSummary of {} runs:\n{}",
                invocation.results.len(),
                table.to_screen(&super::stdout_screen())
            )
            .as_bytes(),
        );
    }
    // A failed run (exit 1) writes no --json file, but repeats that completed
    // are still saved.
    let completed = exit_code != 1 && !invocation.results.is_empty();
    if let (Some(path), true) = (&ext.json_path, exit_code != 1) {
        if let Err(e) = write_json(path, &invocation.results) {
            super::write_stderr_line(&format!("tankbench: {e:#}"));
            exit_code = 1;
        }
    }
    // The stored results, the CSV rows and the OpenMetrics series carry the
    // same labels: the user's and the automatic ones.
    for r in &mut invocation.results {
        r.labels = report::labels::with_automatic(r, &labels);
    }
    // Like --save: the runs that completed get their rows even when a later
    // repeat failed.
    if let (Some(path), false) = (&ext.csv_path, invocation.results.is_empty()) {
        if let Err(e) = write_csv(path, &percentiles.borrow(), &invocation.results) {
            super::write_stderr_line(&format!("tankbench: {e:#}"));
            exit_code = 1;
        }
    }
    if let (Some(path), Some(last), true) =
        (&ext.openmetrics_path, invocation.results.last(), completed)
    {
        if let Err(e) = write_openmetrics(path, last) {
            super::write_stderr_line(&format!("tankbench: {e:#}"));
            exit_code = 1;
        }
    }
    if let Some(save) = &ext.save {
        let store = ResultStore::open(save_dir(save)).context("--save")?;
        for r in &invocation.results {
            let path = store.save(r).context("--save")?;
            super::write_stderr_line(&format!("saved {}", path.display()));
        }
    }
    Ok(report_lost(exit_code))
}

/// The front end's exit status, or 1 when its report could not be written
/// to stdout (a full disk, `> /dev/full`): the run went on and cleaned up,
/// but a report that never arrived is no success.
fn report_lost(exit_code: i32) -> i32 {
    match fileio::console::stdout_failure() {
        Some(e) if exit_code == 0 => {
            super::write_stderr_line(&format!("tankbench: writing to stdout: {e}"));
            1
        }
        _ => exit_code,
    }
}

/// One-command benchmark in DIR: prepare, a short suite, cleanup
///
/// Makes its own scratch directory in DIR (default: the current directory),
/// runs a short suite of workloads there, removes it afterwards and prints
/// a summary.
#[derive(Args, Debug)]
pub(crate) struct QuickArgs {
    /// Directory on the storage to measure (any bytes: a file name need not be UTF-8).
    #[arg(default_value = ".")]
    dir: std::path::PathBuf,
    /// Size of the file set: K/M/G/T = KiB/MiB/GiB/TiB (2^10 to 2^40 bytes,
    /// sysbench's rule for --file-total-size).
    #[arg(long, default_value = "1G", allow_hyphen_values = true)]
    size: String,
    /// Time per workload: 1 to 3600 seconds, as 20, 20s or 2m. The default
    /// outlasts three ZFS txg syncs (3 x 5 s), so a write workload's figures
    /// include what reached the disks, not only RAM.
    #[arg(long, default_value = "20", allow_negative_numbers = true,
          value_name = "DURATION", value_parser = super::options::quick_seconds())]
    time: u64,
    /// Print the results as one JSON array instead of the table.
    #[arg(long)]
    json: bool,
    /// Keep the results in a result store [default DIR: ./tankbench-results].
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = DEFAULT_DIR)]
    save: Option<PathBuf>,
}

/// What clap cannot check of quick's arguments: the accepted range of
/// `--time` and `--size`.
fn check_quick_args(q: &QuickArgs) -> anyhow::Result<()> {
    // --time's range (quick is a first look: five workloads of an hour each
    // already take five hours) is checked by its value parser.
    if fileio::sysbench::args::parse_size(&q.size) == 0 {
        anyhow::bail!("--size {}: not a size that fits 64 bits (accepted: a number with an optional K, M, G or T suffix, e.g. 1G)", q.size);
    }
    Ok(())
}

/// `tankbench quick`, its words parsed by the one command line (cmd/cli.rs).
pub(crate) fn quick(q: &QuickArgs) -> anyhow::Result<i32> {
    check_quick_args(q)?;
    // `--save` with no value is the default store (clap's missing value);
    // checked before anything runs.
    let save_dir = q.save.as_deref();
    if let Some(dir) = save_dir {
        check_can_create_in(dir).map_err(|e| anyhow::anyhow!("--save={}: {e}", dir.display()))?;
    }
    // SIGINT, SIGTERM and SIGHUP (also a second one) stop quick and remove
    // its scratch directory; the exit status is then 128 + the signal.
    fileio::quick::install_signal_handlers();
    let settings = fileio::quick::QuickSettings {
        parent: q.dir.clone(),
        size: q.size.clone(),
        seconds: q.time,
    };
    // The header goes out before anything is made: when stdout cannot take
    // it (a full disk), quick refuses before it prepares a file set.
    if !q.json {
        super::write_stdout(
            format!(
                "tankbench quick: {} file set in {}, {} s per workload\n\n",
                q.size,
                q.dir.display(),
                q.time
            )
            .as_bytes(),
        )?;
    }
    let total = fileio::quick::SUITE.len();
    let json = q.json;
    // On a terminal a bar over the whole suite (its workloads' time) with
    // the time left; the step lines above it stay, in a pipe too.
    if !json {
        super::progress::start((total as u64 * q.time) as f64);
    }
    let seconds = q.time as f64;
    // Progress on stderr may fail (a closed pipe, a terminal gone after
    // SIGHUP); the run goes on and removes its scratch directory.
    let outcome = fileio::quick::run(&settings, &|step| {
        if json {
            return;
        }
        match step {
            Step::Prepare { dir } => {
                super::write_stderr_line(&format!("preparing the file set in {}", dir.display()));
                super::progress::update(0.0, "preparing the file set");
            }
            Step::Case { index, case } => {
                super::write_stderr_line(&format!("[{}/{}] {}", index + 1, total, case.name));
            }
            Step::Running { index, elapsed } => super::progress::update(
                index as f64 * seconds + elapsed.as_secs_f64().min(seconds),
                &format!(
                    "workload {}/{total}: {}",
                    index + 1,
                    fileio::quick::SUITE[index].name
                ),
            ),
        }
    });
    super::progress::finish();
    let outcome = outcome.map_err(|f| anyhow::anyhow!("{}", f.summary()))?;
    let results = &outcome.results;
    if let Some(sig) = outcome.stopped_by {
        super::write_stderr_line(&format!(
            "tankbench quick: stopped by {}; the scratch directory is removed{}",
            signal_name(sig),
            if results.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} of {total} workloads ran (the last one cut short)",
                    results.len()
                )
            }
        ));
    }
    if let Some(dir) = save_dir {
        let store = ResultStore::open(dir).context("--save")?;
        for (_, r) in results {
            let labels = report::labels::with_automatic(r, &Labels::new());
            let path = store
                .save(&RunResult {
                    labels,
                    ..r.clone()
                })
                .context("--save")?;
            super::write_stderr_line(&format!("saved {}", path.display()));
        }
    }
    let summary = if q.json {
        let list: Vec<&fileio::result::RunResult> = results.iter().map(|(_, r)| r).collect();
        format!("{}\n", serde_json::to_string_pretty(&list)?)
    } else if results.is_empty() {
        String::new()
    } else {
        quick_table(results, &super::stdout_screen())
    };
    match super::write_stdout(summary.as_bytes()) {
        Ok(()) => Ok(outcome.exit_code()),
        // A summary that did not arrive is a failure; after a stop signal
        // the exit status still names the signal.
        Err(e) if outcome.stopped_by.is_some() => {
            super::write_stderr_line(&format!("tankbench: {e:#}"));
            Ok(outcome.exit_code())
        }
        Err(e) => Err(e),
    }
}

/// The human summary of quick's workloads: one row each, the file system they
/// ran on and each distinct warning once, laid out for `screen`.
fn quick_table(results: &[(String, RunResult)], screen: &Screen) -> String {
    use std::fmt::Write as _;
    let mut out = report::table::workloads_table(results).to_screen(screen);
    let env = &results[0].1.environment;
    let environment = format!(
        "file system: {} on {} ({}), kernel {}, {} CPUs, {:.1} GiB RAM",
        env.fs_type,
        env.device,
        match env.rotational {
            Some(true) => "rotational",
            Some(false) => "non-rotational",
            None => "device type unknown",
        },
        env.kernel,
        env.cpus,
        env.mem_total_bytes as f64 / (1u64 << 30) as f64
    );
    let _ = writeln!(out, "\n{}", screen.wrap(&environment));
    // One line per kind of warning, naming the workloads that raised it
    // (numbered as in the table) and hinting in quick's own options.
    let warnings = fileio::quick::quick_warnings(results);
    if !warnings.is_empty() {
        out.push('\n');
        for w in &warnings {
            let _ = writeln!(out, "{}", screen.paint_label(&screen.wrap(&w.text())));
        }
    }
    out
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

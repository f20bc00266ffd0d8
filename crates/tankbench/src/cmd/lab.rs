//! `tankbench lab`: thin front end of the `lab` crate (build, run, status,
//! teardown and matrix of software storage labs).

use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use lab::experiments::matrix::{CellResult, Matrix};
use lab::lab::{down_all, Lab, UpOptions};
use lab::parts::sys;
use lab::spec::{self, default_root};
use report::atomic::{check_new_file, write_atomically, Existing};

use super::options::{at_least_two_samples, Switch};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The lab's table (as one row of a matrix).
    Text,
    /// The RunResult JSON, as `tankbench fileio --format=json` prints it.
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TableFormat {
    Text,
    Markdown,
    /// Every cell's figures as JSON: measured, predicted, the interval's
    /// low and high, and whether the measurement is inside (`lab predict`).
    Json,
}

/// A storage lab in software: build it, run benchmarks over it, crash it (root)
///
/// Emulated disks, links and a ZFS server in network namespaces. See
/// docs/lab.md.
#[derive(Args, Debug)]
#[command(subcommand_required = true, arg_required_else_help = true)]
pub(crate) struct LabArgs {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Build the lab described by SPEC.toml and leave it running.
    Up {
        spec: PathBuf,
        /// Skip measuring the link's round trip and bandwidth and timing the
        /// pool's write path.
        #[arg(long)]
        no_measure: bool,
        /// Record every request the lab's disks receive in FILE (a new
        /// file): one line each, `arrival_ns disk op bytes done_ns offset`
        /// on the disk daemon's clock (docs/lab.md, "Tracing the disks").
        #[arg(long, value_name = "FILE")]
        disk_trace: Option<PathBuf>,
    },
    /// Build the lab (unless it is up), run a fileio workload, tear down what
    /// this command built. Options after `--` go to `tankbench fileio`.
    Run {
        spec: PathBuf,
        /// Write the RunResult JSON to this new file as well (never replaces
        /// an existing file).
        #[arg(long)]
        json: Option<PathBuf>,
        /// What to print: the table or the RunResult JSON.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        #[arg(last = true)]
        fileio: Vec<String>,
    },
    /// Show the labs that are up.
    Status,
    /// Tear down a lab (by name or spec file), or with --all every lab under
    /// the lab root (or the ROOT directory given) and the leftovers of its
    /// crashed runs (tb- prefix; network namespaces only if marked as this
    /// root's).
    Down {
        /// Lab name or SPEC.toml; with --all, a lab root directory.
        lab: Option<String>,
        #[arg(long)]
        all: bool,
    },
    /// Build, run and tear down every configuration of MATRIX.toml; writes a
    /// Markdown and a JSON table.
    Matrix { matrix: PathBuf },
    /// Predict every cell of MATRIX.toml with the simulator (each cell as a
    /// simulator system: its disks, log device, link as measured, zfs-fuse's
    /// server) and print it beside what the matrix measured.
    Predict {
        matrix: PathBuf,
        /// A calibration profile applied to every cell (e.g. the server CPU
        /// fitted on one cell with `simulate calibrate --fit server.cpu_us`).
        #[arg(long)]
        profile: Option<PathBuf>,
        /// Also write each cell's system (cell-N.toml) and measured result
        /// (cell-N.measured.json) into this directory, as new files, for
        /// `simulate --system` and `simulate calibrate`.
        #[arg(long)]
        systems: Option<PathBuf>,
        /// The table as text or Markdown, or the comparison as JSON.
        #[arg(long, value_enum, default_value_t = TableFormat::Text)]
        format: TableFormat,
        /// Every cell's prediction interval, from the same samples of the
        /// model's uncertain parameters (as `simulate matrix`).
        #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
        intervals: Switch,
        /// Samples each interval takes.
        #[arg(long, value_name = "N", value_parser = at_least_two_samples(),
              help = format!("Samples each interval takes, 2 or more [default: {}]",
                             sim::uncertainty::DEFAULT_SAMPLES))]
        samples: Option<usize>,
    },
    /// Measure A, predict B from it, measure B: every pair of finished
    /// cells of the matrices that differ in one thing (a layout, a log
    /// device, a link; the thread count across matrices of one workload),
    /// B predicted from A's measurement and outright, beside B as measured
    /// (docs/what-if.md).
    Pairs {
        /// Matrix files whose cells `lab matrix` measured.
        #[arg(required = true)]
        matrices: Vec<PathBuf>,
        /// The table as text or Markdown, or the pairs as JSON.
        #[arg(long, value_enum, default_value_t = TableFormat::Text)]
        format: TableFormat,
        /// The interval of each prediction from A.
        #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
        intervals: Switch,
        /// Samples each interval takes.
        #[arg(long, value_name = "N", value_parser = at_least_two_samples(),
              help = format!("Samples each interval takes, 2 or more [default: {}]",
                             sim::uncertainty::DEFAULT_SAMPLES))]
        samples: Option<usize>,
        /// Parameters fitted to A's measurement alone before B is predicted
        /// from it (e.g. server.cpu_us: zfs-fuse's CPU per request).
        #[arg(long, value_name = "PARAM[,...]")]
        fit: Option<String>,
        /// Of matrices measured in rounds (`rounds = N`), this round's
        /// cells alone [default: each cell the median of its rounds].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(lab::experiments::matrix::MAX_ROUNDS)))]
        round: Option<u32>,
    },
    /// Crash a lab that is up: kill its own zfs-fuse daemon (no clean
    /// export), cut the power of its disks (each loses what its model's
    /// volatile cache held), restart the daemon and bring the pool back
    /// (intent log replay). Prints what each disk lost.
    Crash {
        /// Lab name or SPEC.toml.
        lab: String,
        /// What to print: a table, or the crash report as JSON.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Durability matrix: for each cell of MATRIX.toml, build the lab, run
    /// `durability write` on the client with the recorder in a third
    /// namespace, crash the lab at seeded random moments of the write phase
    /// and verify every acknowledged write (docs/durability.md).
    Durability {
        matrix: PathBuf,
        /// Crashes per cell (default: the file's `crashes`, else 3).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
        crashes: Option<u32>,
        /// Seed of the crash moments (default: the file's `seed`, else 1).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Internal: the lab's helper daemons.
    #[command(name = "__daemon", hide = true)]
    Daemon { args: Vec<String> },
}

pub(crate) fn run(cli: LabArgs) -> anyhow::Result<i32> {
    if let Cmd::Daemon { args } = &cli.cmd {
        lab::daemon_main(args)?;
        return Ok(0);
    }
    // Commands that build something catch stop signals to tear it down.
    // `lab predict` builds nothing (its --systems files are written whole at
    // the end): a signal ends it at once, as it ends `simulate matrix`,
    // instead of being swallowed while every cell is predicted.
    if !matches!(cli.cmd, Cmd::Predict { .. } | Cmd::Pairs { .. }) {
        sys::install_interrupt_handler();
    }
    match cli.cmd {
        Cmd::Up {
            spec,
            no_measure,
            disk_trace,
        } => {
            let spec = spec::load(&spec)?;
            let mut opts = up_options(!no_measure)?;
            if let Some(path) = disk_trace {
                if path.exists() {
                    anyhow::bail!(
                        "--disk-trace: {} exists; accepted: a file that does not exist yet (tankbench never overwrites one)",
                        path.display()
                    );
                }
                // The daemon runs in the lab's directory: an absolute path.
                opts.disk_trace = Some(
                    std::path::absolute(&path)
                        .with_context(|| format!("--disk-trace: locate {}", path.display()))?,
                );
            }
            let lab = Lab::up(&spec, &opts)?;
            super::write_stdout(status_text(&lab).as_bytes())?;
            Ok(0)
        }
        Cmd::Run {
            spec,
            json,
            format,
            fileio,
        } => run_workload(&spec, json, format, fileio),
        Cmd::Status => {
            let labs = Lab::list(&default_root());
            let mut text = String::new();
            if labs.is_empty() {
                text = format!("no labs are up (root {})\n", default_root().display());
            }
            for l in &labs {
                text.push_str(&status_text(l));
            }
            super::write_stdout(text.as_bytes())?;
            Ok(0)
        }
        Cmd::Down { lab, all } => down(lab, all),
        Cmd::Matrix { matrix } => run_matrix(&matrix),
        Cmd::Predict {
            matrix,
            profile,
            systems,
            format,
            intervals,
            samples,
        } => {
            let options = lab::experiments::predict::PredictOptions {
                intervals: match intervals {
                    Switch::On => Some(samples.unwrap_or(sim::uncertainty::DEFAULT_SAMPLES)),
                    Switch::Off => None,
                },
                ..lab::experiments::predict::PredictOptions::default()
            };
            predict(
                &matrix,
                profile.as_deref(),
                systems.as_deref(),
                format,
                &options,
            )
        }
        Cmd::Pairs {
            matrices,
            format,
            intervals,
            samples,
            fit,
            round,
        } => pairs(
            &matrices,
            format,
            &pairs_options(intervals, samples, fit.as_deref(), round)?,
        ),
        Cmd::Crash { lab, format } => crash(&lab, format),
        Cmd::Durability {
            matrix,
            crashes,
            seed,
        } => run_durability(&matrix, crashes, seed),
        Cmd::Daemon { .. } => unreachable!("handled above"),
    }
}

fn up_options(measure: bool) -> anyhow::Result<UpOptions> {
    Ok(UpOptions {
        tankbench: std::env::current_exe().context("locate the tankbench binary")?,
        measure,
        disk_trace: None,
        progress: Box::new(|s: &str| super::write_stderr_line(s)),
    })
}

/// `lab run`: build the lab unless it is up, run the workload, tear down what
/// was built here.
fn run_workload(
    spec_file: &std::path::Path,
    json: Option<PathBuf>,
    format: Format,
    fileio: Vec<String>,
) -> anyhow::Result<i32> {
    let spec = spec::load(spec_file)?;
    let args = if fileio.is_empty() {
        spec.workload.clone()
    } else {
        fileio
    };
    if args.is_empty() {
        bail!("lab run: no workload; give fileio options after `--` or set `workload = [...]` in the spec");
    }
    // Before anything is built: a bad option costs nothing.
    lab::experiments::workload::check_workload(&args)?;
    if let Some(w) = lab::experiments::server::arc_fit_warning(&spec, &args) {
        super::write_stderr_line(&w);
    }
    if let Some(p) = &json {
        check_new_file(p).with_context(|| format!("--json {}", p.display()))?;
    }
    let o = up_options(true)?;
    // Reuse a lab that is already up; otherwise build one for this run
    // and tear it down afterwards, whatever happens.
    let (lab, built) = match Lab::open(&spec.root, &spec.name) {
        Ok(l) => (l, false),
        Err(_) => (Lab::up(&spec, &o)?, true),
    };
    let outcome = lab::experiments::run::run_workload(&lab, &o.tankbench, &args);
    let row = CellResult {
        labels: spec.labels(),
        link: lab.info().and_then(|i| i.link.clone()),
        write_path: lab.info().and_then(|i| i.write_path),
        outcome: None,
        error: None,
        build_s: lab.info().map(|i| i.built_in_s).unwrap_or(0.0),
        round: 1,
    };
    let down = if built { lab.down() } else { Ok(()) };
    let outcome = outcome?;
    down?;
    let doc = serde_json::to_string_pretty(&outcome.result)? + "\n";
    if let Some(p) = json {
        write_atomically(&p, doc.as_bytes(), Existing::Keep)
            .with_context(|| format!("--json {}", p.display()))?;
    }
    match format {
        Format::Json => super::write_stdout(doc.as_bytes())?,
        Format::Text => {
            let warnings = outcome.result.warnings.clone();
            let row = CellResult {
                outcome: Some(outcome),
                ..row
            };
            let screen = super::stdout_screen();
            let table = lab::experiments::matrix::results_table(&args, &[row]).to_screen(&screen);
            super::write_stdout(with_warnings(table, &warnings, &screen).as_bytes())?;
        }
    }
    // Interrupted: the partial result is printed and the lab is torn
    // down; the exit status tells the caller it was cut short.
    Ok(if sys::interrupted() { 130 } else { 0 })
}

/// `lab run`'s text: the table, then the run's warnings as `fileio` prints
/// them (the JSON carries them too), so text and JSON tell the same story;
/// wrapped and coloured for `screen`.
fn with_warnings(
    table: String,
    warnings: &[fileio::result::Warning],
    screen: &::fileio::terminal::Screen,
) -> String {
    let mut out = table;
    if !warnings.is_empty() {
        out.push('\n');
        for w in warnings {
            out.push_str(&screen.paint_label(&screen.wrap(&fileio::warnings::text(w))));
            out.push('\n');
        }
    }
    out
}

/// A lab named on the command line: by name, or by its SPEC.toml (whose
/// `root` and `name` say where it is).
fn lab_location(which: &str) -> anyhow::Result<(PathBuf, String)> {
    Ok(if which.ends_with(".toml") {
        let s = spec::load(&PathBuf::from(which))?;
        (s.root, s.name)
    } else {
        (default_root(), which.trim_start_matches("tb-").to_string())
    })
}

/// `lab crash`: kill the lab's daemon, cut the power, bring the pool back.
fn crash(which: &str, format: Format) -> anyhow::Result<i32> {
    let (root, name) = lab_location(which)?;
    let mut lab = Lab::open(&root, &name)?;
    let report = lab::experiments::crash::crash(&mut lab, &|s| {
        super::write_stderr_line(&format!("[{}] {s}", lab_id(&name)))
    })?;
    match format {
        Format::Json => {
            super::write_stdout(format!("{}\n", serde_json::to_string_pretty(&report)?).as_bytes())?
        }
        Format::Text => {
            let mut t = report::table::Table::new(&[
                ("disk", false),
                ("lost writes", true),
                ("lost bytes", true),
                ("torn writes", true),
                ("torn bytes lost", true),
            ]);
            for d in &report.disks {
                t.rows.push(vec![
                    report::table::Cell::Text(d.name.clone()),
                    report::table::Cell::Int(d.loss.lost_writes),
                    report::table::Cell::Int(d.loss.lost_bytes),
                    report::table::Cell::Int(d.loss.torn_writes),
                    report::table::Cell::Int(d.loss.torn_bytes_lost),
                ]);
            }
            t.notes.push(format!(
                "pool {} back in {:.1} s (zfs-fuse pid {} killed, pid {} now)",
                report.pool, report.recovery_s, report.killed_pid, report.new_pid
            ));
            super::write_stdout(t.to_screen(&super::stdout_screen()).as_bytes())?;
        }
    }
    Ok(0)
}

fn lab_id(name: &str) -> String {
    format!("tb-{name}")
}

/// `lab down`: one lab by name or spec file, or with `all` every lab and
/// leftover.
fn down(lab: Option<String>, all: bool) -> anyhow::Result<i32> {
    if all {
        // With --all the argument can only be a root: a lab name there would
        // be silently ignored and the default root swept instead.
        let root = match lab {
            None => default_root(),
            Some(dir) if Path::new(&dir).is_dir() => PathBuf::from(dir),
            Some(other) => bail!(
                "lab down --all: {other} is not a directory; give a lab root directory (default {}) or no argument",
                default_root().display()
            ),
        };
        let sweep = down_all(&root);
        for r in &sweep.removed {
            super::write_stderr_line(&format!("removed {r}"));
        }
        for k in &sweep.kept {
            super::write_stderr_line(&format!("left {k}"));
        }
        if sweep.removed.is_empty() && sweep.kept.is_empty() {
            super::write_stderr_line("nothing to remove");
        }
        return Ok(if sweep.kept.is_empty() { 0 } else { 1 });
    }
    let Some(which) = lab else {
        bail!("lab down: name the lab (or its SPEC.toml), or use --all");
    };
    let (root, name) = lab_location(&which)?;
    match Lab::open(&root, &name) {
        Ok(l) => {
            l.down()?;
            super::write_stderr_line(&format!("lab tb-{name} is down"));
        }
        // Idempotent: a lab that is not up is already down.
        Err(_) => super::write_stderr_line(&format!("lab tb-{name} is not up")),
    }
    Ok(0)
}

/// `lab matrix`: every cell checked first, then built, run and torn down in
/// turn.
fn run_matrix(matrix: &std::path::Path) -> anyhow::Result<i32> {
    let m = Matrix::load(matrix)?;
    lab::experiments::workload::check_workload(&m.workload)
        .with_context(|| format!("{}: workload", matrix.display()))?;
    m.check_outputs()
        .with_context(|| format!("{}", matrix.display()))?;
    // Every cell's sizes against this host's file system, before the
    // first cell is built.
    for cell in m.cells()? {
        cell.raw.validate()?.check_host()?;
    }
    // On a terminal a bar over the cells to run, under the cells' lines.
    let counted = |done: usize, all: usize| {
        super::progress::start_once(all as f64);
        super::progress::update(done as f64, &format!("{done}/{all} cells run"));
    };
    let results = m.run_counting(
        &up_options(true)?,
        &|s| super::write_stderr_line(s),
        &counted,
    );
    super::progress::finish();
    let results = results?;
    super::write_stdout(
        lab::experiments::matrix::results_table(&m.workload, &results)
            .to_screen(&super::stdout_screen())
            .as_bytes(),
    )?;
    let [md, json] = m.output_files();
    super::write_stderr_line(&format!("tables: {} and {}", md.display(), json.display()));
    Ok(if results.iter().any(|r| r.error.is_some()) {
        1
    } else {
        0
    })
}

/// `lab durability`: exit 0 when every cell showed what it must (no loss
/// where protected, a loss in each negative control), 1 otherwise.
fn run_durability(
    matrix: &std::path::Path,
    crashes: Option<u32>,
    seed: Option<u64>,
) -> anyhow::Result<i32> {
    let m = lab::experiments::durability::DurabilityMatrix::load(matrix, crashes, seed)?;
    for cell in &m.cells {
        cell.spec.check_host()?;
    }
    let results = m.run(&up_options(false)?, &|s| super::write_stderr_line(s))?;
    super::write_stdout(
        m.table(&results)
            .to_screen(&super::stdout_screen())
            .as_bytes(),
    )?;
    let [md, json] = m.output_files();
    super::write_stderr_line(&format!("tables: {} and {}", md.display(), json.display()));
    Ok(
        if results.len() == m.cells.len() && results.iter().all(|r| r.as_expected()) {
            0
        } else {
            1
        },
    )
}

/// `--fit`'s comma list as parameters; an unknown name is one line naming
/// the accepted ones.
fn fit_params(list: Option<&str>) -> anyhow::Result<Vec<sim::profile::Param>> {
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    list.split(',')
        .map(str::trim)
        .map(|name| {
            sim::profile::Param::from_name(name).ok_or_else(|| {
                anyhow::anyhow!(
                    "lab pairs: --fit: unknown parameter '{name}'; accepted: {}",
                    sim::profile::Param::accepted()
                )
            })
        })
        .collect()
}

/// `lab pairs`' options as the library takes them.
fn pairs_options(
    intervals: Switch,
    samples: Option<usize>,
    fit: Option<&str>,
    round: Option<u32>,
) -> anyhow::Result<lab::experiments::pairs::PairsOptions> {
    Ok(lab::experiments::pairs::PairsOptions {
        intervals: match intervals {
            Switch::On => Some(samples.unwrap_or(sim::uncertainty::DEFAULT_SAMPLES)),
            Switch::Off => None,
        },
        parallel: std::thread::available_parallelism().map_or(1, usize::from),
        fit: fit_params(fit)?,
        round,
    })
}

/// `lab pairs`: every one-change pair of measured cells, B predicted from
/// A and outright beside B measured (`lab::experiments::pairs`).
fn pairs(
    matrices: &[PathBuf],
    format: TableFormat,
    options: &lab::experiments::pairs::PairsOptions,
) -> anyhow::Result<i32> {
    let loaded = matrices
        .iter()
        .map(|p| Matrix::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let pairs = lab::experiments::pairs::pairs(&loaded, options)?;
    let workload = &loaded[0].workload;
    let text = match format {
        TableFormat::Json => serde_json::to_string_pretty(&serde_json::json!({
            "workloads": loaded.iter().map(|m| &m.workload).collect::<Vec<_>>(),
            "pairs": pairs,
        }))?,
        TableFormat::Text => lab::experiments::pairs::pairs_table(workload, &pairs).to_terminal(),
        TableFormat::Markdown => {
            lab::experiments::pairs::pairs_table(workload, &pairs).to_markdown()
        }
    };
    super::write_stdout(format!("{}\n", text.trim_end()).as_bytes())?;
    Ok(0)
}

/// `lab predict`: the simulator's prediction of every cell beside the
/// matrix's measurement (`lab::experiments::predict`).
fn predict(
    matrix: &std::path::Path,
    profile: Option<&std::path::Path>,
    systems: Option<&std::path::Path>,
    format: TableFormat,
    options: &lab::experiments::predict::PredictOptions,
) -> anyhow::Result<i32> {
    let m = Matrix::load(matrix)?;
    let profile = profile
        .map(crate::cmd::calibrate::load_profile)
        .transpose()?;
    let cells = lab::experiments::predict::predict_matrix(&m, profile.as_ref(), options)?;
    if let Some(dir) = systems {
        write_systems(dir, &cells)?;
    }
    // The share of samples each interval holds, as the predictions say it.
    let confidence = cells.iter().find_map(|c| {
        c.predicted
            .as_ref()
            .ok()
            .and_then(|r| r.prediction.as_ref())
            .map(|p| p.confidence)
    });
    let text = match format {
        TableFormat::Json => serde_json::to_string_pretty(&serde_json::json!({
            "workload": m.workload,
            "confidence": confidence,
            "samples": options.intervals,
            "cells": lab::experiments::predict::comparisons(&cells),
        }))?,
        TableFormat::Text => lab::experiments::predict::comparison_table(&m.workload, &cells)
            .to_screen(&super::stdout_screen()),
        TableFormat::Markdown => {
            lab::experiments::predict::comparison_table(&m.workload, &cells).to_markdown()
        }
    };
    super::write_stdout(format!("{}\n", text.trim_end()).as_bytes())?;
    Ok(0)
}

/// Each cell's system and measured result as files in `dir`, all checked to
/// be new before any is written.
fn write_systems(
    dir: &std::path::Path,
    cells: &[lab::experiments::predict::CellPrediction],
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("lab predict: --systems {}", dir.display()))?;
    let mut files = Vec::new();
    for (i, c) in cells.iter().enumerate() {
        let n = i + 1;
        let system = c
            .system
            .to_toml()
            .map_err(|e| anyhow::anyhow!("lab predict: cell {n}: {e}"))?;
        files.push((dir.join(format!("cell-{n}.toml")), system));
        if let Some(r) = &c.measured {
            files.push((
                dir.join(format!("cell-{n}.measured.json")),
                serde_json::to_string_pretty(r)? + "\n",
            ));
        }
    }
    for (path, _) in &files {
        check_new_file(path)
            .map_err(|e| anyhow::anyhow!("lab predict: --systems: {}: {e}", path.display()))?;
    }
    for (path, text) in &files {
        write_atomically(path, text.as_bytes(), Existing::Keep)
            .map_err(|e| anyhow::anyhow!("lab predict: {}: {e}", path.display()))?;
    }
    super::write_stderr_line(&format!("wrote {} files to {}", files.len(), dir.display()));
    Ok(())
}

/// The status of lab `l`, a few lines for stdout.
fn status_text(l: &Lab) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let s = &l.state.spec;
    let _ = writeln!(out, "lab {}  ({})", l.state.id, l.dir.display());
    let _ = writeln!(
        out,
        "  pool     {} on {} x {}",
        s.pool.layout_text,
        s.pool.disk_count(),
        s.pool.disks_summary()
    );
    match l.info() {
        Some(i) => {
            let _ = writeln!(
                out,
                "  backend  {:?}, mounted at {}",
                i.backend,
                i.pool_mountpoint.display()
            );
            let _ = writeln!(
                out,
                "  workdir  {}{}",
                i.workdir.display(),
                i.client_netns
                    .as_ref()
                    .map(|n| format!(" (in netns {n})"))
                    .unwrap_or_default()
            );
            if let (Some(link), Some(m)) = (&s.link, &i.link) {
                let _ = writeln!(out,
                    "  link     {}: rtt {:.3} ms (min {:.3}), one flow {:.0} Mbit/s, all members {:.0} Mbit/s",
                    link.label, m.rtt_ms_median, m.rtt_ms_min, m.single_flow_mbit_s, m.aggregate_mbit_s
                );
            }
            for line in lab::experiments::server::status_lines(l, std::time::Duration::from_secs(2))
            {
                let _ = writeln!(out, "{line}");
            }
            if let Some(line) = lab::experiments::crash::power_status_line(&l.disk_stats()) {
                let _ = writeln!(out, "{line}");
            }
        }
        None => {
            let _ = writeln!(
                out,
                "  (incomplete: build did not finish; `tankbench lab down {}` removes it)",
                s.name
            );
        }
    }
    out
}

#[cfg(test)]
mod text_tests {
    use super::*;

    #[test]
    fn lab_run_text_shows_the_run_s_warnings() {
        let warning = fileio::result::Warning {
            code: "reads_from_arc".into(),
            message: "reads came from the ARC".into(),
            hint: "make the file set larger".into(),
        };
        let text = with_warnings(
            "table\n".into(),
            std::slice::from_ref(&warning),
            &::fileio::terminal::Screen::PIPE,
        );
        assert_eq!(
            text,
            "table\n\nWARNING: reads came from the ARC\n  hint: make the file set larger\n"
        );
        assert_eq!(
            with_warnings("table\n".into(), &[], &::fileio::terminal::Screen::PIPE),
            "table\n"
        );
    }
}

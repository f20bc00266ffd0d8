//! `tankbench simulate matrix MATRIX.toml`, and `tankbench simulate` with
//! comma lists in its overrides: every combination predicted (the `sim`
//! crate's matrix), printed as one table, or as JSON, and saved for
//! `compare` and `report`.

use anyhow::Context as _;
use fileio::options::RunSpec;
use fileio::result::RunResult;
use report::atomic::check_can_create_in;
use report::labels::{merge_labels, parse_labels, Labels};
use report::store::{ResultStore, DEFAULT_DIR};
use sim::matrix::{run_cells_with, CellRuns, MatrixSpec};
use sim::SimError;
use std::path::{Path, PathBuf};

use super::options::ModelOptions;
use super::options::{at_least_two_samples, Switch};
use clap::{Args, ValueEnum};

/// How often a long matrix reports its progress.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Predict every cell of a matrix file and print them as one table
///
/// A matrix is a system and axes of values for its fields. The table can be
/// text, Markdown, CSV or JSON; `--save` keeps the predictions for
/// `compare` and `report`.
#[derive(Debug, Args)]
pub(crate) struct MatrixArgs {
    /// The matrix: `system`, `workload` and `[[axis]]` tables (docs/prediction.md).
    #[arg(value_name = "MATRIX.toml")]
    matrix: PathBuf,
    #[command(flatten)]
    model: ModelOptions,
    /// How the table is printed.
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    format: TableFormat,
    /// Keep every cell's prediction in a result store.
    #[arg(long, value_name = "DIR", num_args = 0..=1, require_equals = true,
          default_missing_value = DEFAULT_DIR)]
    save: Option<PathBuf>,
    /// Labels for every stored prediction, KEY=VALUE[,...] (repeatable; needs --save).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    labels: Vec<String>,
    /// Every cell's prediction interval, from the same samples of the model's uncertain parameters.
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    intervals: Switch,
    /// Samples each cell's interval takes.
    #[arg(long, value_name = "N", value_parser = at_least_two_samples(),
          help = format!("Samples each cell's interval takes, 2 or more [default: {}]",
                         sim::uncertainty::DEFAULT_SAMPLES))]
    samples: Option<usize>,
    /// Simulate every second of --time in every cell instead of stopping once the figures settle.
    #[arg(long)]
    no_early_stop: bool,
    /// Count each cell from the end of its first txg sync, as plan does.
    #[arg(long, help = COUNT_AFTER_FIRST_SYNC_HELP)]
    count_after_first_sync: bool,
    #[arg(long, value_name = "FILE.svg|FILE.png", help = CHART_HELP)]
    chart: Option<PathBuf>,
    /// A measured run of one configuration (a tankbench result, or a fio
    /// JSON or sysbench text report): every cell is its measured figures
    /// times the simulated change from its configuration (docs/what-if.md).
    /// Given more than once: runs of one configuration, each figure their
    /// median.
    #[arg(long, value_name = "RUN")]
    baseline: Vec<PathBuf>,
    /// With --baseline: the system the baseline ran on [default: the one
    /// its ZFS facts describe].
    #[arg(long, value_name = "SYSTEM.toml", requires = "baseline")]
    system: Option<PathBuf>,
}

/// The help of `--chart` (simulate and simulate matrix).
pub(crate) const CHART_HELP: &str = "Also draw reads, writes and fsyncs per second of every \
    cell as bars with their prediction intervals, as SVG or PNG (by the name's ending); replaces \
    only a chart tankbench wrote";

/// The help of `--count-after-first-sync` (simulate and simulate matrix).
pub(crate) const COUNT_AFTER_FIRST_SYNC_HELP: &str =
    "Count the run (and its --events) from the end of the \
    first txg sync, after at most 16000 events of warm-up, as plan does: before the first sync \
    nothing competes with the writes; a workload that writes counts --events and at least one \
    txg timeout (its rate moves over seconds); implies --no-early-stop";

/// The warm-up `--count-after-first-sync` asks for.
pub(crate) fn warmup_events(count_after_first_sync: bool) -> Option<u64> {
    count_after_first_sync.then_some(sim::plan_model::PLAN_WARMUP_EVENTS)
}

/// How a matrix is shown and kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TableFormat {
    Text,
    #[value(alias = "md")]
    Markdown,
    Csv,
    Json,
}

/// Output options of a matrix.
#[derive(Debug)]
pub struct MatrixOutput {
    pub format: TableFormat,
    /// The result store the predictions are saved in, if any.
    pub save: Option<PathBuf>,
    pub labels: Labels,
    /// `--max-sim-events`: fileio events the whole matrix simulates at
    /// most (None: sim::limits::DEFAULT_MATRIX_EVENTS).
    pub events: Option<u64>,
    /// Samples of every cell's interval (`--samples`; None: `--intervals=off`).
    pub intervals: Option<usize>,
    /// Whether a `--time` cell stops once its throughput is known (not
    /// `--no-early-stop`).
    pub early_stop: bool,
    /// `--count-after-first-sync`: the most events of each cell's warm-up.
    pub warmup_events: Option<u64>,
    /// `--chart`: where the bar chart of the cells goes.
    pub chart: Option<PathBuf>,
}

/// `tankbench simulate matrix MATRIX.toml ...`.
pub(crate) fn run(a: &MatrixArgs) -> anyhow::Result<i32> {
    let mut labels = Labels::new();
    for text in &a.labels {
        merge_labels(&mut labels, parse_labels(text)?)?;
    }
    let file = &a.matrix;
    let text = zfs_model::config_file::read_config(file)
        .map_err(|e| anyhow::anyhow!("simulate matrix: {}: {e}", file.display()))?;
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut m = MatrixSpec::from_toml(&text, dir, a.model.max_cells)
        .map_err(|e| anyhow::anyhow!("simulate matrix: {}: {}", file.display(), in_matrix(&e)))?;
    if let Some(path) = &a.model.profile {
        m.profile = Some(super::calibrate::load_profile(path)?);
        m.cells()
            .map_err(|e| anyhow::anyhow!("simulate matrix: --profile {}: {e}", path.display()))?;
    }
    if !a.baseline.is_empty() {
        return what_if(a, &m, &a.baseline, labels);
    }
    run_matrix(
        &m,
        &MatrixOutput {
            format: a.format,
            save: a.save.clone(),
            labels,
            events: a.model.max_sim_events,
            intervals: match a.intervals {
                Switch::On => Some(a.samples.unwrap_or(sim::uncertainty::DEFAULT_SAMPLES)),
                Switch::Off => None,
            },
            early_stop: !a.no_early_stop,
            warmup_events: warmup_events(a.count_after_first_sync),
            chart: a.chart.clone(),
        },
    )
}

/// `simulate matrix M.toml --baseline RUN [--system A.toml]`: every cell
/// predicted from the measured run, the baseline marked.
fn what_if(
    a: &MatrixArgs,
    m: &MatrixSpec,
    paths: &[PathBuf],
    labels: Labels,
) -> anyhow::Result<i32> {
    use super::what_if as w;
    const COMMAND: &str = "simulate matrix";
    if m.workload.iter().any(|w| is_output_option(w)) {
        anyhow::bail!(
            "simulate matrix: workload: --format, --json, --save, --label and --repeat are not workload options; accepted on the command line: --format=FORMAT, --save[=DIR], --label=K=V"
        );
    }
    if !labels.is_empty() && a.save.is_none() {
        anyhow::bail!("simulate matrix: --label needs --save: labels are kept with stored results");
    }
    let spec = match &m.fio_job {
        Some(job) => super::fio::job_spec(job, "simulate matrix: fio")?,
        None => RunSpec::from_words(&m.workload)
            .map_err(|e| anyhow::anyhow!("simulate matrix: workload: {e}"))?,
    };
    let baseline = w::load_baselines(COMMAND, paths)?;
    let (text, _, option) = w::baseline_system(COMMAND, &baseline, a.system.as_deref())?;
    let a_cell = w::baseline_cell(&text, &option, &m.workload, m.profile.as_ref())?;
    let cells = w::cells_of(COMMAND, m)?;
    let runs = w::Runs {
        events: a.model.max_sim_events,
        intervals: match a.intervals {
            Switch::On => Some(a.samples.unwrap_or(sim::uncertainty::DEFAULT_SAMPLES)),
            Switch::Off => None,
        },
        early_stop: !a.no_early_stop,
        warmup_events: warmup_events(a.count_after_first_sync),
        save: a.save.clone(),
        labels,
    };
    let anchored = w::predict(COMMAND, &baseline, &a_cell, &spec, &cells, &runs)?;
    let table = sim::baseline::report::table(
        &m.workload_text(),
        &baseline,
        &a_cell.system,
        &cells,
        &anchored,
    )
    .map_err(|e| anyhow::anyhow!("simulate matrix: {e}"))?;
    let text = match a.format {
        // Within the terminal's width, as the matrix without a baseline.
        TableFormat::Text => table.to_screen(&super::stdout_screen()),
        TableFormat::Markdown => table.to_markdown(),
        TableFormat::Csv => table.to_csv(),
        TableFormat::Json => w::json_doc(
            "tankbench simulate matrix --baseline",
            &m.workload,
            &baseline,
            &anchored.results,
        )?,
    };
    super::write_stdout(text.as_bytes())?;
    Ok(0)
}

/// Predict every cell of `m` and print (and save) the results.
pub fn run_matrix(m: &MatrixSpec, out: &MatrixOutput) -> anyhow::Result<i32> {
    // Output options in the workload would be silently ignored: the matrix
    // takes them on its own command line.
    if m.workload.iter().any(|w| is_output_option(w)) {
        anyhow::bail!(
            "simulate matrix: workload: --format, --json, --save, --label and --repeat are not workload options; accepted on the command line: --format=FORMAT, --save[=DIR], --label=K=V"
        );
    }
    let spec = match &m.fio_job {
        Some(job) => super::fio::job_spec(job, "simulate matrix: fio")?,
        None => RunSpec::from_words(&m.workload)
            .map_err(|e| anyhow::anyhow!("simulate matrix: workload: {e}"))?,
    };
    let cells = m
        .cells()
        .map_err(|e| anyhow::anyhow!("simulate {}", in_matrix(&e)))?;
    if !out.labels.is_empty() && out.save.is_none() {
        anyhow::bail!("simulate matrix: --label needs --save: labels are kept with stored results");
    }
    let save_dir = &out.save;
    if let Some(dir) = save_dir {
        check_can_create_in(dir)
            .map_err(|e| anyhow::anyhow!("simulate matrix: --save={}: {e}", dir.display()))?;
    }
    if let Some(path) = &out.chart {
        super::report::check_chart_name("simulate matrix: --chart", path)?;
    }
    let (mut results, took, parallel) = predict_cells(&spec, &cells, out)?;
    for r in &mut results {
        r.labels.extend(out.labels.clone());
    }
    let samples = match out.intervals {
        Some(n) => format!(", {n} interval samples each"),
        None => String::new(),
    };
    super::write_stderr_line(&format!(
        "predicted {} cell(s) in {took:.2} s on {parallel} thread(s){samples}",
        results.len()
    ));
    if let Some(dir) = save_dir {
        let store = ResultStore::open(dir.as_path()).context("--save")?;
        for r in &results {
            store.save(r).context("--save")?;
        }
        super::write_stderr_line(&format!(
            "saved {} prediction(s) in {}",
            results.len(),
            dir.display()
        ));
    }
    if let Some(path) = &out.chart {
        write_predictions_chart(path, &results)?;
    }
    let table = sim::matrix::results_table(&m.workload_text(), &cells, &results);
    let text = match out.format {
        TableFormat::Text => table.to_screen(&super::stdout_screen()),
        TableFormat::Markdown => table.to_markdown(),
        TableFormat::Csv => table.to_csv(),
        TableFormat::Json => format!("{}\n", json_doc(m, &results)?),
    };
    super::write_stdout(text.as_bytes())?;
    Ok(0)
}

/// Predict `cells` (and their intervals) on every core within the matrix's
/// budget of events, showing progress on stderr when it takes long and
/// noting the cells that stopped at their share of the budget. Returns the
/// results, the seconds taken and the threads used.
fn predict_cells(
    spec: &fileio::options::RunSpec,
    cells: &[sim::matrix::MatrixCell],
    out: &MatrixOutput,
) -> anyhow::Result<(Vec<RunResult>, f64, usize)> {
    let parallel = std::thread::available_parallelism().map_or(1, usize::from);
    let started = std::time::Instant::now();
    // On a terminal a bar with the time left; in a pipe a long matrix says
    // where it is at most every 2 s (one line each, for a log).
    let on_terminal = ::fileio::terminal::Screen::stderr().width.limit().is_some();
    let last_said = std::sync::Mutex::new(started);
    let progress = |done: usize, all: usize| {
        if on_terminal {
            super::progress::start_once(all as f64);
            super::progress::update(done as f64, &format!("{done}/{all} simulations"));
            return;
        }
        if let Ok(mut last) = last_said.lock() {
            if last.elapsed() >= PROGRESS_EVERY && done < all {
                *last = std::time::Instant::now();
                super::write_stderr_line(&format!(
                    "{done}/{all} simulations done ({:.0} s)",
                    started.elapsed().as_secs_f64()
                ));
            }
        }
    };
    let how = CellRuns {
        parallel,
        events: out.events.unwrap_or(sim::limits::DEFAULT_MATRIX_EVENTS),
        early_stop: out.early_stop,
        warmup_events: out.warmup_events,
        intervals: out.intervals,
        progress: Some(&progress),
    };
    let results = run_cells_with(spec, cells, &how);
    super::progress::finish();
    let results = results.map_err(|e| anyhow::anyhow!("simulate matrix: {e}"))?;
    let took = started.elapsed().as_secs_f64();
    let stopped = results
        .iter()
        .filter(|r| {
            r.warnings
                .iter()
                .any(|w| sim::notes::SimNote::of(w) == Some(sim::notes::SimNote::BudgetReached))
        })
        .count();
    if stopped > 0 {
        super::write_stderr_line(&format!(
            "note: {stopped} of {} cell(s) stopped at their share ({} events) of the matrix's simulation budget before --time; their rates are over the time simulated (raise it with --max-sim-events)",
            results.len(),
            sim::limits::Budget::per_cell(how.events, cells.len()).events
        ));
    }
    Ok((results, took, parallel))
}

/// `--chart`: the predictions' reads, writes and fsyncs per second as bars
/// with their intervals, one band per cell (named by the labels that vary:
/// the axes), drawn as `report`'s operations chart draws stored runs.
pub(crate) fn write_predictions_chart(path: &Path, results: &[RunResult]) -> anyhow::Result<()> {
    let runs: Vec<report::store::StoredRun> = results
        .iter()
        .enumerate()
        .map(|(i, r)| report::store::StoredRun {
            path: PathBuf::new(),
            id: format!("cell-{}", i + 1),
            result: r.clone(),
        })
        .collect();
    let g = report::group::Grouping::new(&runs);
    let svg = report::charts::operations_chart(&g)
        .context("--chart: the predictions made no reads, writes or fsyncs")?;
    super::report::write_chart("--chart", path, &svg, 2.0)
}

/// The JSON of a matrix: the workload (fileio options, or `fio_job` and no
/// options), every cell's predicted result (with its `prediction` interval
/// block) and, with intervals, the parameters that move the matrix's
/// figures most (`measure_first`).
fn json_doc(m: &MatrixSpec, results: &[RunResult]) -> anyhow::Result<String> {
    let mut doc = serde_json::json!({
        "generator": "tankbench simulate matrix",
        "workload": m.workload,
        "results": results,
    });
    if let Some(job) = &m.fio_job {
        doc["fio_job"] = serde_json::Value::String(job.display().to_string());
    }
    if results.iter().any(|r| r.prediction.is_some()) {
        doc["measure_first"] = serde_json::to_value(sim::matrix::measure_first(results))?;
    }
    Ok(serde_json::to_string_pretty(&doc)?)
}

/// A matrix's refusal as the text after the file name: `matrix: …` for the
/// matrix's own parts, the system's message otherwise.
fn in_matrix(e: &SimError) -> String {
    match e {
        SimError::Matrix(m) => format!("matrix: {m}"),
        SimError::Field(f) => f.to_string(),
        e => e.to_string(),
    }
}

/// Whether `word` is one of the front end's output options (`--format`,
/// `--json`, `--save`, `--label`, `--repeat`), which a workload does not
/// hold. Names are read as the front end reads them: with or without `--`,
/// `-` and `_` alike.
fn is_output_option(word: &str) -> bool {
    let body = word.strip_prefix("--").unwrap_or(word);
    let name = body
        .split_once('=')
        .map_or(body, |(n, _)| n)
        .replace('_', "-");
    ["format", "json", "save", "label", "repeat"].contains(&name.as_str())
}

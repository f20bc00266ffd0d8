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

/// How often a long matrix reports its progress.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(2);
use std::ffi::OsString;
use std::path::{Path, PathBuf};

const USAGE: &str = "usage: tankbench simulate matrix MATRIX.toml [--profile=PROFILE.toml] [--max-cells=N] [--max-sim-events=N] [--format=text|markdown|csv|json] [--save[=DIR]] [--label=K=V]...";

/// How a matrix is shown and kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    Text,
    Markdown,
    Csv,
    Json,
}

impl TableFormat {
    const ACCEPTED: &'static str = "text, markdown, csv, json";

    fn parse(s: &str) -> anyhow::Result<TableFormat> {
        Ok(match s {
            "text" => TableFormat::Text,
            "markdown" | "md" => TableFormat::Markdown,
            "csv" => TableFormat::Csv,
            "json" => TableFormat::Json,
            other => anyhow::bail!(
                "simulate matrix: --format '{other}': accepted: {}",
                TableFormat::ACCEPTED
            ),
        })
    }
}

/// Output options of a matrix.
#[derive(Debug, Default)]
pub struct MatrixOutput {
    pub format: Option<TableFormat>,
    /// `Some(None)`: the default store.
    pub save: Option<Option<PathBuf>>,
    pub labels: Labels,
    /// `--max-sim-events`: fileio events the whole matrix simulates at
    /// most (None: sim::limits::DEFAULT_MATRIX_EVENTS).
    pub events: Option<u64>,
}

/// `tankbench simulate matrix ...` (the words after `matrix`).
pub fn matrix_main(args: &[OsString]) -> anyhow::Result<i32> {
    let mut file: Option<PathBuf> = None;
    let mut out = MatrixOutput::default();
    let mut profile: Option<PathBuf> = None;
    let mut max_cells = sim::limits::DEFAULT_MAX_CELLS;
    for a in args {
        let word = a
            .to_str()
            .ok_or_else(|| anyhow::anyhow!("simulate matrix: an option is not UTF-8 text"))?;
        let (name, value) = match word.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (word, None),
        };
        match (name, value) {
            ("--help" | "-h", _) => {
                println!("{USAGE}");
                return Ok(0);
            }
            ("--format", Some(v)) => out.format = Some(TableFormat::parse(v)?),
            ("--save", None) => out.save = Some(None),
            ("--save", Some(v)) if !v.is_empty() => out.save = Some(Some(PathBuf::from(v))),
            ("--label", Some(v)) => merge_labels(&mut out.labels, parse_labels(v)?)?,
            ("--profile", Some(v)) if !v.is_empty() => profile = Some(PathBuf::from(v)),
            ("--max-cells", Some(v)) => {
                max_cells = super::options::count_option("--max-cells", v)?;
            }
            ("--max-sim-events", Some(v)) => {
                out.events = Some(super::options::count_option("--max-sim-events", v)?);
            }
            (n, _) if n.starts_with('-') => anyhow::bail!(
                "simulate matrix: unknown or incomplete option '{word}'; accepted: --profile=FILE, --max-cells=N, --max-sim-events=N, --format=FORMAT, --save[=DIR], --label=K=V; {USAGE}"
            ),
            _ if file.is_none() => file = Some(PathBuf::from(word)),
            _ => anyhow::bail!("simulate matrix: one matrix file only, got '{word}' too; {USAGE}"),
        }
    }
    let Some(file) = file else {
        anyhow::bail!("simulate matrix: a MATRIX.toml is required; {USAGE}");
    };
    let text = zfs_model::config_file::read_config(&file)
        .map_err(|e| anyhow::anyhow!("simulate matrix: {}: {e}", file.display()))?;
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut m = MatrixSpec::from_toml(&text, dir, max_cells)
        .map_err(|e| anyhow::anyhow!("simulate matrix: {}: {}", file.display(), in_matrix(&e)))?;
    if let Some(path) = &profile {
        m.profile = Some(super::calibrate::load_profile(path)?);
        m.cells()
            .map_err(|e| anyhow::anyhow!("simulate matrix: --profile {}: {e}", path.display()))?;
    }
    run_matrix(&m, &out)
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
    let spec = RunSpec::from_words(&m.workload)
        .map_err(|e| anyhow::anyhow!("simulate matrix: workload: {e}"))?;
    let cells = m
        .cells()
        .map_err(|e| anyhow::anyhow!("simulate {}", in_matrix(&e)))?;
    if !out.labels.is_empty() && out.save.is_none() {
        anyhow::bail!("simulate matrix: --label needs --save: labels are kept with stored results");
    }
    let save_dir = out
        .save
        .as_ref()
        .map(|d| d.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DIR)));
    if let Some(dir) = &save_dir {
        check_can_create_in(dir)
            .map_err(|e| anyhow::anyhow!("simulate matrix: --save={}: {e}", dir.display()))?;
    }
    let (mut results, took, parallel) = predict_cells(&spec, &cells, out.events)?;
    for r in &mut results {
        r.labels.extend(out.labels.clone());
    }
    eprintln!(
        "predicted {} cell(s) in {took:.2} s on {parallel} thread(s)",
        results.len()
    );
    if let Some(dir) = &save_dir {
        let store = ResultStore::open(dir.as_path()).context("--save")?;
        for r in &results {
            store.save(r).context("--save")?;
        }
        eprintln!("saved {} prediction(s) in {}", results.len(), dir.display());
    }
    let table = sim::matrix::results_table(&m.workload, &cells, &results);
    match out.format.unwrap_or(TableFormat::Text) {
        TableFormat::Text => print!("{}", table.to_terminal()),
        TableFormat::Markdown => print!("{}", table.to_markdown()),
        TableFormat::Csv => print!("{}", table.to_csv()),
        TableFormat::Json => println!("{}", json_doc(&m.workload, &results)?),
    }
    Ok(0)
}

/// Predict `cells` on every core within the matrix's budget of `events`,
/// showing progress on stderr when it takes long and noting the cells that
/// stopped at their share of the budget. Returns the results, the seconds
/// taken and the threads used.
fn predict_cells(
    spec: &fileio::options::RunSpec,
    cells: &[sim::matrix::MatrixCell],
    events: Option<u64>,
) -> anyhow::Result<(Vec<RunResult>, f64, usize)> {
    let parallel = std::thread::available_parallelism().map_or(1, usize::from);
    let started = std::time::Instant::now();
    // A long matrix shows where it is on stderr, at most every 2 s.
    let last_said = std::sync::Mutex::new(started);
    let progress = |done: usize, all: usize| {
        if let Ok(mut last) = last_said.lock() {
            if last.elapsed() >= PROGRESS_EVERY && done < all {
                *last = std::time::Instant::now();
                eprintln!(
                    "cell {done}/{all} predicted ({:.0} s)",
                    started.elapsed().as_secs_f64()
                );
            }
        }
    };
    let how = CellRuns {
        parallel,
        events: events.unwrap_or(sim::limits::DEFAULT_MATRIX_EVENTS),
        progress: Some(&progress),
    };
    let results =
        run_cells_with(spec, cells, &how).map_err(|e| anyhow::anyhow!("simulate matrix: {e}"))?;
    let took = started.elapsed().as_secs_f64();
    let stopped = results
        .iter()
        .filter(|r| {
            r.warnings
                .iter()
                .any(|w| w.code == "predicted_budget_reached")
        })
        .count();
    if stopped > 0 {
        eprintln!(
            "note: {stopped} of {} cell(s) stopped at their share ({} events) of the matrix's simulation budget before --time; their rates are over the time simulated (raise it with --max-sim-events)",
            results.len(),
            sim::limits::Budget::per_cell(how.events, cells.len()).events
        );
    }
    Ok((results, took, parallel))
}

/// The JSON of a matrix: the workload and every cell's predicted result.
fn json_doc(workload: &[String], results: &[RunResult]) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(&serde_json::json!({
        "generator": "tankbench simulate matrix",
        "workload": workload,
        "results": results,
    }))?)
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

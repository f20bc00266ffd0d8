//! `--baseline RUN` of `simulate`, `simulate matrix` and `plan`: read the
//! measured run (a tankbench result, or a fio JSON / sysbench text report
//! read as `results import` reads it) and the system it ran on, and hand
//! them to the `sim::baseline` library; print what it predicts. See
//! docs/what-if.md.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use fileio::result::RunResult;
use report::store::{ResultStore, DEFAULT_DIR};
use sim::baseline::predict::Anchored;
use sim::baseline::{Baseline, BaselineError};
use sim::matrix::{CellRuns, MatrixCell, MatrixSpec};
use sim::SimError;

/// The measured run of `--baseline PATH`, checked to be one: a tankbench
/// result file, or a report `results import` reads (one run). `command`
/// prefixes refusals (`simulate`, `plan`).
pub(crate) fn load_baseline(command: &str, path: &Path) -> anyhow::Result<Baseline> {
    let shown = path.display().to_string();
    let refuse = |why: String| anyhow::anyhow!("{command}: --baseline {shown}: {why}");
    let run = match report::store::load_file(path) {
        Ok(stored) => stored.result,
        Err(stored_error) => match report::import::import_file(path) {
            Ok(mut runs) if runs.len() == 1 => runs.remove(0),
            Ok(runs) => {
                return Err(refuse(format!(
                "holds {} runs (fio reporting groups); a baseline is one run: give a report of one",
                runs.len()
            )))
            }
            // Not a report either: which of the two it looked like decides
            // the message (a result that does not parse says why).
            Err(import_error) => {
                let looks_like_result = std::fs::read(path)
                    .is_ok_and(|b| String::from_utf8_lossy(&b).contains("\"schema_version\""));
                let why = match import_error {
                    _ if looks_like_result => first_line(&stored_error.to_string()),
                    report::import::ImportError::UnknownFormat { seen, .. } => seen,
                    other => first_line(&other.to_string()),
                };
                return Err(refuse(format!(
                    "not a run tankbench reads ({why}); accepted: a tankbench result (--json, --save), {}",
                    report::import::ACCEPTED
                )));
            }
        },
    };
    Baseline::new(shown.clone(), run).map_err(|e| baseline_error(command, &e))
}

/// The baseline of `--baseline PATH` given once or more: one run, or
/// several runs of one configuration taken together (each figure their
/// median, `sim::baseline::Baseline::median_of`).
pub(crate) fn load_baselines(command: &str, paths: &[PathBuf]) -> anyhow::Result<Baseline> {
    let mut runs = Vec::with_capacity(paths.len());
    for path in paths {
        runs.push(load_baseline(command, path)?);
    }
    Baseline::median_of(runs).map_err(|e| baseline_error(command, &e))
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// A refusal of the `sim` crate as `command` prints it: a refused baseline
/// names `--baseline` and, without a system, the option that gives one.
pub(crate) fn baseline_error(command: &str, e: &SimError) -> anyhow::Error {
    match e {
        SimError::Baseline {
            id,
            problem: p @ BaselineError::NoSystem { .. },
        } => anyhow::anyhow!(
            "{command}: --baseline {id}: {p}; give the system it ran on with --system SYSTEM.toml"
        ),
        SimError::Baseline { id, problem } => {
            anyhow::anyhow!("{command}: --baseline {id}: {problem}")
        }
        e => anyhow::anyhow!("{command}: {e}"),
    }
}

/// The system the baseline ran on, as a system file's text and the
/// directory its own file names are read from: `--system FILE`, else the
/// ZFS facts the run recorded (their assumptions to stderr).
pub(crate) fn baseline_system(
    command: &str,
    baseline: &Baseline,
    system: Option<&Path>,
) -> anyhow::Result<(String, PathBuf, String)> {
    if let Some(path) = system {
        let text = zfs_model::config_file::read_config(path)
            .map_err(|e| anyhow::anyhow!("{command}: --system {}: {e}", path.display()))?;
        return Ok((
            text,
            super::overrides::directory_of(path),
            format!("--system {}", path.display()),
        ));
    }
    let derived = baseline.system().map_err(|e| baseline_error(command, &e))?;
    for line in &derived.assumed {
        super::write_stderr_line(&format!("{command}: assumed {line}"));
    }
    let text = format!(
        "# The system of {}, from its ZFS facts.\n{}",
        baseline.named(),
        derived.to_toml()
    );
    Ok((
        text,
        super::overrides::directory_of(Path::new(
            baseline
                .runs
                .first()
                .map_or(baseline.id.as_str(), |r| r.id.as_str()),
        )),
        format!("--baseline {}", baseline.id),
    ))
}

/// The baseline's configuration as a cell (no axes): its system with the
/// profile applied, if one is given.
pub(crate) fn baseline_cell(
    text: &str,
    option: &str,
    workload: &[String],
    profile: Option<&sim::profile::Profile>,
) -> anyhow::Result<MatrixCell> {
    let mut m = super::overrides::overrides_matrix(text, option, workload.to_vec(), &[], 1)?;
    m.profile = profile.cloned();
    let mut cells = m
        .cells()
        .map_err(|e| anyhow::anyhow!("simulate: {option}: {e}"))?;
    cells
        .pop()
        .ok_or_else(|| anyhow::anyhow!("simulate: {option}: not a system"))
}

/// How the predictions are run and kept.
pub(crate) struct Runs {
    pub(crate) events: Option<u64>,
    pub(crate) intervals: Option<usize>,
    pub(crate) early_stop: bool,
    pub(crate) warmup_events: Option<u64>,
    /// The result store to keep every prediction in.
    pub(crate) save: Option<PathBuf>,
    /// `--label`s for every prediction.
    pub(crate) labels: report::labels::Labels,
}

/// Predict `cells` from the baseline (configuration `a`), on every core,
/// with progress on stderr when it takes long, and keep them in the store
/// of `runs.save`.
pub(crate) fn predict(
    command: &str,
    baseline: &Baseline,
    a: &MatrixCell,
    spec: &fileio::options::RunSpec,
    cells: &[MatrixCell],
    runs: &Runs,
) -> anyhow::Result<Anchored> {
    if let Some(dir) = &runs.save {
        report::atomic::check_can_create_in(dir)
            .map_err(|e| anyhow::anyhow!("{command}: --save={}: {e}", dir.display()))?;
    }
    let parallel = std::thread::available_parallelism().map_or(1, usize::from);
    let started = std::time::Instant::now();
    let last_said = std::sync::Mutex::new(started);
    let progress = |done: usize, all: usize| {
        if let Ok(mut last) = last_said.lock() {
            if last.elapsed() >= std::time::Duration::from_secs(2) && done < all {
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
        events: runs.events.unwrap_or(sim::limits::DEFAULT_MATRIX_EVENTS),
        early_stop: runs.early_stop,
        warmup_events: runs.warmup_events,
        intervals: runs.intervals,
        progress: Some(&progress),
    };
    let mut anchored = sim::baseline::predict::predict(baseline, a, spec, cells, &how)
        .map_err(|e| baseline_error(command, &e))?;
    for r in &mut anchored.results {
        r.labels.extend(runs.labels.clone());
    }
    super::overrides::note_budgets(&anchored.results);
    if let Some(dir) = &runs.save {
        let store = ResultStore::open(dir.as_path()).context("--save")?;
        for r in &anchored.results {
            store.save(r).context("--save")?;
        }
        super::write_stderr_line(&format!(
            "saved {} prediction(s) in {}",
            anchored.results.len(),
            dir.display()
        ));
    }
    Ok(anchored)
}

/// The JSON of a table anchored to a baseline: the workload, the baseline
/// as measured, and every cell's anchored prediction.
pub(crate) fn json_doc(
    generator: &str,
    workload: &[String],
    baseline: &Baseline,
    results: &[RunResult],
) -> anyhow::Result<String> {
    let doc = serde_json::json!({
        "generator": generator,
        "workload": workload,
        "baseline": { "id": baseline.id, "result": baseline.measured },
        "results": results,
    });
    Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?))
}

/// `--save` as given: a directory, or the default store.
pub(crate) fn save_dir(save: Option<&Option<PathBuf>>) -> Option<PathBuf> {
    save.map(|d| d.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DIR)))
}

/// A matrix's cells, each named by the axis values.
pub(crate) fn cells_of(command: &str, m: &MatrixSpec) -> anyhow::Result<Vec<MatrixCell>> {
    m.cells().map_err(|e| anyhow::anyhow!("{command}: {e}"))
}

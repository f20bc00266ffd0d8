//! The matrix form of a prediction: one base system, axes that vary parts of
//! it, one fileio workload; every combination is predicted, and the results
//! form the reference user's table (one row per cell) through
//! `report::table`, the table `lab matrix` and `compare` use.
//!
//! ```toml
//! system = "reference-nas.toml"     # a system file (next to this one), or an inline [system] table
//! workload = ["--file-total-size=4G", "--file-test-mode=rndrw", "--time=240"]
//! [[axis]]
//! key = "layout"                    # or any dotted field of the system: "pool.layout"
//! values = ["1xraidz3-24", "2xraidz2-12", "3xraidz2-8"]
//! ```
//!
//! The axis vocabulary is `lab matrix`'s (`[[axis]]` with `key` and
//! `values`, first axis slowest); the keys are fields of the system file,
//! with short names for the common ones ([`AXIS_NAMES`]).
//!
//! With intervals ([`CellRuns::intervals`]), every cell is sampled at the
//! same points of one design (crate::uncertainty::Design), so the table's
//! `typical (low–high)` of two rows differ by what differs between the
//! cells, and the notes name the parameters that move the figures most
//! across the matrix ([`measure_first`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use fileio::options::RunSpec;
use fileio::result::{LatencyKey, RunResult};
use report::table::{Cell, Table};
use serde::Deserialize;

use crate::system::SystemModel;
use crate::{FieldError, SimError};
use fileio::text::one_line;

/// Short axis names and the system field each varies. `pool.log` is the
/// lab's name of the log device, accepted for the same field.
pub(crate) const AXIS_NAMES: [(&str, &str); 13] = [
    ("layout", "pool.layout"),
    ("log", "log"),
    ("pool.log", "log"),
    ("log_mirror", "log_mirror"),
    ("link", "link.link"),
    ("client", "client.protocol"),
    ("protocol", "client.protocol"),
    ("ram", "server.ram"),
    ("disk", "pool.disk"),
    ("recordsize", "pool.recordsize"),
    ("sync", "server.sync"),
    ("zil", "server.zil"),
    ("platform", "server.platform"),
];

pub mod axis;

pub use axis::{Axis, AxisError};

impl Axis {
    /// The dotted field of the system this axis sets.
    pub fn field(&self) -> &str {
        AXIS_NAMES
            .iter()
            .find(|(name, _)| *name == self.key)
            .map_or(self.key.as_str(), |(_, field)| field)
    }

    /// The column and label name of the axis: its short name.
    pub fn name(&self) -> String {
        let field = self.field();
        AXIS_NAMES
            .iter()
            .find(|(name, f)| *f == field && !name.contains('.'))
            .map_or_else(|| self.key.clone(), |(name, _)| (*name).to_string())
    }
}

/// Why a system written as TOML (a matrix's base, an axis value on it, a
/// cell) is not a system.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SystemProblem {
    /// Not the shape of a system file (an unknown field, a wrong type).
    #[error("{0}")]
    Shape(String),
    #[error("{0}")]
    Field(#[from] FieldError),
}

/// Why a matrix is refused. `Display` is the message after `matrix: `.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MatrixError {
    /// The matrix file is not valid TOML or not a matrix.
    #[error("{0}")]
    File(String),
    /// `system = "FILE"` could not be read or is not TOML.
    #[error("system: {path}: {problem}")]
    SystemFile { path: String, problem: String },
    #[error("system: expected a file name or a table, got {got}")]
    SystemValue { got: String },
    /// The base system, before any axis.
    #[error("system: {0}")]
    Base(SystemProblem),
    #[error(transparent)]
    Axis(#[from] AxisError),
    /// One value of an axis on the base system.
    #[error("axis {axis} value '{value}': {problem}")]
    AxisValue {
        axis: String,
        value: String,
        problem: SystemProblem,
    },
    /// A combination (the values named `axis=value`), or the profile on it.
    #[error("cell {choices}: {problem}")]
    Cell { choices: String, problem: String },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    system: toml::Value,
    #[serde(default)]
    workload: Option<Vec<String>>,
    /// A fio job file (relative to the matrix file) in place of `workload`.
    #[serde(default)]
    fio: Option<String>,
    #[serde(default)]
    axis: Vec<Axis>,
}

/// A matrix: the base system as TOML (so an axis can set any field before
/// the system is read), the fileio options, the axes.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixSpec {
    pub base: toml::Value,
    /// fileio options, `run` not included; empty when `fio_job` is the
    /// workload.
    pub workload: Vec<String>,
    /// A fio job file whose one workload every cell runs instead of
    /// `workload` (`fio = "JOB.fio"` in the file, relative to it; read by
    /// fileio's fio front end, as `simulate --fio` reads one).
    pub fio_job: Option<std::path::PathBuf>,
    pub axes: Vec<Axis>,
    /// A calibration profile fitted on the base system, applied to every
    /// cell (`simulate --profile`): a fitted value whose component an axis
    /// changes moves by what the change is worth
    /// (crate::profile::apply_profile_to_cell).
    pub profile: Option<crate::profile::Profile>,
    /// Most cells [`MatrixSpec::cells`] expands (`--max-cells`).
    pub max_cells: u64,
}

/// One combination of axis values.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixCell {
    /// (axis name, value as text), one per axis in axis order.
    pub choices: Vec<(String, String)>,
    pub system: SystemModel,
    /// The profile's values as applied to this cell (carried where an axis
    /// changed their component, left out where it does not apply): what
    /// narrows the cell's parameter ranges (crate::uncertainty::spans).
    pub profile: Option<crate::profile::Profile>,
}

impl MatrixCell {
    /// The choices as `axis=value ...`, for messages.
    pub fn choices_text(&self) -> String {
        choices_text(&self.choices)
    }
}

fn choices_text(choices: &[(String, String)]) -> String {
    choices
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A value as the table and the labels show it: strings bare.
pub(crate) fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => one_line(other),
    }
}

impl MatrixSpec {
    /// What every cell runs, for reports: `fileio OPTIONS run`, or the fio
    /// job file.
    pub fn workload_text(&self) -> String {
        match &self.fio_job {
            Some(job) => format!("the fio job {}", job.display()),
            None => fileio_workload_text(&self.workload),
        }
    }

    /// Read a matrix file's text; `dir` is where a `system = "FILE"` is
    /// looked for (the matrix file's directory; read as a configuration
    /// file, zfs_model::config_file). More than `max_cells` cells are
    /// refused before any is expanded.
    pub fn from_toml(text: &str, dir: &Path, max_cells: u64) -> Result<MatrixSpec, SimError> {
        let raw: RawMatrix =
            toml::from_str(text).map_err(|e| MatrixError::File(one_line(e.message())))?;
        let base = match raw.system {
            toml::Value::String(file) => {
                let path = dir.join(&file);
                let file_error = |problem: String| MatrixError::SystemFile {
                    path: path.display().to_string(),
                    problem,
                };
                let text = zfs_model::config_file::read_config(&path)
                    .map_err(|e| file_error(e.to_string()))?;
                toml::from_str::<toml::Value>(&text)
                    .map_err(|e| file_error(one_line(e.message())))?
            }
            v @ toml::Value::Table(_) => v,
            other => {
                return Err(MatrixError::SystemValue {
                    got: one_line(&other),
                }
                .into())
            }
        };
        let (mut workload, fio_job) = match (raw.workload, raw.fio) {
            (Some(w), None) => (w, None),
            (None, Some(job)) => (Vec::new(), Some(dir.join(job))),
            (Some(_), Some(_)) => {
                return Err(MatrixError::File(
                    "workload and fio are two workloads: give one (accepted: workload = [fileio options] or fio = \"JOB.fio\")".into(),
                )
                .into())
            }
            (None, None) => {
                return Err(MatrixError::File(
                    "no workload: give workload = [fileio options] or fio = \"JOB.fio\"".into(),
                )
                .into())
            }
        };
        if workload.last().map(String::as_str) == Some("run") {
            workload.pop();
        }
        let m = MatrixSpec {
            base,
            workload,
            fio_job,
            axes: raw.axis,
            profile: None,
            max_cells,
        };
        m.cells()?;
        Ok(m)
    }

    /// A matrix from a system file's text, fileio options (without `run`)
    /// and axes of text values, such as a command line's comma lists.
    pub fn from_system_text(
        system: &str,
        workload: Vec<String>,
        axes: &[(&str, Vec<String>)],
        max_cells: u64,
    ) -> Result<MatrixSpec, SimError> {
        let base = toml::from_str::<toml::Value>(system)
            .map_err(|e| SimError::Toml(one_line(e.message())))?;
        let m = MatrixSpec {
            base,
            workload,
            fio_job: None,
            axes: axes
                .iter()
                .map(|(key, values)| Axis {
                    key: (*key).to_string(),
                    values: values.iter().cloned().map(toml::Value::String).collect(),
                })
                .collect(),
            profile: None,
            max_cells,
        };
        m.cells()?;
        Ok(m)
    }

    /// Every combination, first axis slowest, each checked to resolve. A
    /// value that does not fit its field is named with its axis.
    pub fn cells(&self) -> Result<Vec<MatrixCell>, SimError> {
        // The base on its own must be a system, whatever the axes set.
        let base = system_of(&self.base).map_err(MatrixError::Base)?;
        // Counted before anything is checked or expanded: a few axes of a
        // few hundred values each are millions of systems.
        crate::limits::check_cells(self.axes.iter().map(|a| a.values.len()), self.max_cells)?;
        for axis in &self.axes {
            if axis.values.is_empty() {
                return Err(MatrixError::from(AxisError::NoValues {
                    axis: axis.key.clone(),
                })
                .into());
            }
            // Each value alone on the base, so the error names the value
            // that is wrong rather than a combination.
            for v in &axis.values {
                let mut one = self.base.clone();
                axis::set_path(&mut one, axis.field(), v.clone()).map_err(MatrixError::from)?;
                system_of(&one).map_err(|problem| MatrixError::AxisValue {
                    axis: axis.key.clone(),
                    value: value_text(v),
                    problem,
                })?;
            }
        }
        let combos = axis::cross_product(&self.base, &self.axes, Axis::field, self.max_cells)
            .map_err(MatrixError::from)?;
        // The profile was fitted on the base: a cell's axes move what it
        // stands on (crate::profile::apply_profile_to_cell).
        let fields: Vec<&str> = self.axes.iter().map(Axis::field).collect();
        combos
            .into_iter()
            .map(|combo| {
                let choices: Vec<(String, String)> = self
                    .axes
                    .iter()
                    .zip(&combo.choices)
                    .map(|(a, &i)| (a.name(), value_text(&a.values[i])))
                    .collect();
                let cell_error = |problem: String| MatrixError::Cell {
                    choices: choices_text(&choices),
                    problem,
                };
                let mut system =
                    system_of(&combo.document).map_err(|e| cell_error(e.to_string()))?;
                let mut applied = None;
                if let Some(profile) = &self.profile {
                    let a =
                        crate::profile::apply_profile_to_cell(&mut system, &base, profile, &fields)
                            .map_err(|e| cell_error(e.to_string()))?;
                    applied = Some(a.profile);
                }
                Ok(MatrixCell {
                    choices,
                    system,
                    profile: applied,
                })
            })
            .collect()
    }
}

/// The system a TOML value describes, every field parsed.
fn system_of(v: &toml::Value) -> Result<SystemModel, SystemProblem> {
    let model: SystemModel = v
        .clone()
        .try_into()
        .map_err(|e: toml::de::Error| SystemProblem::Shape(one_line(e.message())))?;
    model.resolve_fields()?;
    Ok(model)
}

/// The short axis names, for messages.
pub fn axis_names() -> String {
    AXIS_NAMES
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// How a matrix's cells are run.
#[derive(Clone, Copy)]
pub struct CellRuns<'a> {
    /// Threads predicting at once.
    pub parallel: usize,
    /// Fileio events the whole matrix simulates at most, shared out evenly
    /// over the cells (`--max-sim-events`); each of a cell's samples has
    /// the cell's share too.
    pub events: u64,
    /// Whether a `--time` cell may stop once its throughput is known
    /// (crate::convergence), as a single prediction does.
    pub early_stop: bool,
    /// Count each cell from the end of its first txg sync, after at most
    /// this many events of warm-up (`RunOptions::warmup_events`).
    pub warmup_events: Option<u64>,
    /// Samples of each cell's interval (None: points only): one design for
    /// every cell (crate::uncertainty::Design).
    pub intervals: Option<usize>,
    /// Called after each simulation with (simulations done, simulations in
    /// all): a cell's point and each of its samples are one each.
    pub progress: Option<&'a (dyn Fn(usize, usize) + Sync)>,
}

impl CellRuns<'_> {
    /// Points only, every cell simulated for its whole `--time`.
    pub fn new(parallel: usize) -> CellRuns<'static> {
        CellRuns {
            parallel,
            events: crate::limits::DEFAULT_MATRIX_EVENTS,
            early_stop: false,
            warmup_events: None,
            intervals: None,
            progress: None,
        }
    }
}

/// [`run_cells_with`] on up to `parallel` threads within the default
/// matrix budget, without progress.
pub fn run_cells(
    spec: &RunSpec,
    cells: &[MatrixCell],
    parallel: usize,
) -> Result<Vec<RunResult>, SimError> {
    run_cells_with(spec, cells, &CellRuns::new(parallel))
}

/// What one simulation of a matrix gives: a cell's point, or the figures of
/// one of its samples.
enum Output {
    Point(Box<RunResult>),
    Sample(crate::uncertainty::Figures),
}

/// Predict every cell of `cells` running `spec`. The results come back in
/// cell order and each is the same whatever the thread count (a cell's run
/// depends on its seed only). Each result carries the cell's axis choices
/// as labels (the simulator's own labels, such as the canonical layout
/// name, are kept where both name one). Each cell simulates at most its
/// share of `how.events`; the workload is checked against it first.
///
/// With `how.intervals`, each result carries its `prediction` block: every
/// cell is sampled at the same points of one design (the same quantile of
/// each parameter's range, the same seed), so two cells' intervals differ
/// by what differs between the cells. All simulations, points first, share
/// the threads.
pub fn run_cells_with(
    spec: &RunSpec,
    cells: &[MatrixCell],
    how: &CellRuns<'_>,
) -> Result<Vec<RunResult>, SimError> {
    let budget = crate::limits::Budget::per_cell(how.events, cells.len());
    crate::limits::check_workload(spec, budget, cells.len() as u64)?;
    let options = crate::RunOptions {
        budget,
        early_stop: how.early_stop,
        warmup_events: how.warmup_events,
        ..crate::RunOptions::default()
    };
    let sample_options = options.for_sample();
    let design = how
        .intervals
        .map(|n| crate::uncertainty::Design::new(n, spec.rand_seed));
    let sampled = sample_cells(design.as_ref(), cells, spec)?;
    let per_cell = 1 + design
        .as_ref()
        .map_or(0, crate::uncertainty::Design::samples);
    let jobs = cells.len() * per_cell;
    let done = AtomicUsize::new(0);
    let next = AtomicUsize::new(0);
    // A refused simulation refuses the matrix: the threads take no more.
    let failed = std::sync::atomic::AtomicBool::new(false);
    let slots: Mutex<Vec<Option<Result<Output, SimError>>>> =
        Mutex::new((0..jobs).map(|_| None).collect());
    let workers = how.parallel.clamp(1, jobs.max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                if j >= jobs || failed.load(Ordering::Relaxed) {
                    break;
                }
                // Sample-major: every cell's point first (the longest runs,
                // stopping at the tighter rule), then the first sample of
                // every cell, and so on, so the threads finish together.
                let (k, i) = (j / cells.len(), j % cells.len());
                let cell = &cells[i];
                let output = if k == 0 {
                    crate::Simulation::new(spec, &cell.system)
                        .options(&options)
                        .run()
                        .map(|s| s.result)
                        .map(|mut r| {
                            for (key, v) in &cell.choices {
                                r.labels.entry(key.clone()).or_insert_with(|| v.clone());
                            }
                            Output::Point(Box::new(r))
                        })
                } else {
                    match &sampled[i] {
                        Some(sm) => crate::Simulation::new(spec, &sm.systems[k - 1])
                            .options(&sample_options)
                            .run()
                            .map(|s| s.result)
                            .map(|r| Output::Sample(crate::uncertainty::figures(&r))),
                        None => Err(SimError::CellLost),
                    }
                };
                if output.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                if let Ok(mut s) = slots.lock() {
                    s[j] = Some(output);
                }
                let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                if let Some(progress) = how.progress {
                    progress(finished, jobs);
                }
            });
        }
    });
    let slots = slots.into_inner().map_err(|_| SimError::CellLost)?;
    assemble(slots, design.as_ref(), &sampled)
}

/// Each cell at the points of `design` (None without one).
fn sample_cells(
    design: Option<&crate::uncertainty::Design>,
    cells: &[MatrixCell],
    spec: &RunSpec,
) -> Result<Vec<Option<crate::uncertainty::Sampled>>, SimError> {
    let Some(d) = design else {
        return Ok(cells.iter().map(|_| None).collect());
    };
    cells
        .iter()
        .map(|c| {
            d.apply(&c.system, c.profile.as_ref(), spec)
                .map(Some)
                .map_err(|e| {
                    SimError::from(MatrixError::Cell {
                        choices: c.choices_text(),
                        problem: e.to_string(),
                    })
                })
        })
        .collect()
}

/// The cells' results from the simulations' `slots` (sample-major, as
/// [`run_cells_with`] orders them), each point with its interval when
/// there is a design.
fn assemble(
    mut slots: Vec<Option<Result<Output, SimError>>>,
    design: Option<&crate::uncertainty::Design>,
    sampled: &[Option<crate::uncertainty::Sampled>],
) -> Result<Vec<RunResult>, SimError> {
    let cells = sampled.len();
    let per_cell = 1 + design.map_or(0, crate::uncertainty::Design::samples);
    // The first refusal in job order is the matrix's (jobs after it may not
    // have run).
    if let Some(e) = slots.iter_mut().find_map(|s| match s.take() {
        Some(Err(e)) => Some(e),
        other => {
            *s = other;
            None
        }
    }) {
        return Err(e);
    }
    let mut take = |j: usize| -> Result<Output, SimError> {
        slots
            .get_mut(j)
            .and_then(Option::take)
            .unwrap_or(Err(SimError::CellLost))
    };
    let mut results = Vec::with_capacity(cells);
    for (i, sm) in sampled.iter().enumerate() {
        let Output::Point(point) = take(i)? else {
            return Err(SimError::CellLost);
        };
        let (Some(design), Some(sm)) = (design, sm) else {
            results.push(*point);
            continue;
        };
        let mut outputs = Vec::with_capacity(per_cell - 1);
        for k in 1..per_cell {
            match take(k * cells + i)? {
                Output::Sample(f) => outputs.push(f),
                Output::Point(_) => return Err(SimError::CellLost),
            }
        }
        results.push(crate::uncertainty::interval(*point, design, sm, &outputs));
    }
    Ok(results)
}

/// One parameter's pull on a matrix: the mean over the cells of its
/// |Spearman rank correlation| with the cell's headline figure (0 in a cell
/// where it is not sampled), and the cells where it pulls most.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Influence {
    pub parameter: String,
    pub mean_abs_rank_correlation: f64,
    /// Cells in which it is the parameter with the largest |correlation|.
    pub first_in: usize,
    /// Cells with an interval.
    pub cells: usize,
}

/// The parameters that move a matrix's figures most, most first: the
/// "measure this first" of the whole table. Empty without intervals.
pub fn measure_first(results: &[RunResult]) -> Vec<Influence> {
    let with: Vec<&fileio::result::PredictionInterval> = results
        .iter()
        .filter_map(|r| r.prediction.as_ref())
        .collect();
    let mut sums: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    for p in &with {
        for (rank, s) in p.sensitivity.iter().enumerate() {
            let e = sums.entry(s.parameter.as_str()).or_insert((0.0, 0));
            e.0 += s.rank_correlation.abs();
            if rank == 0 && s.rank_correlation != 0.0 {
                e.1 += 1;
            }
        }
    }
    let mut out: Vec<Influence> = sums
        .into_iter()
        .map(|(name, (sum, first))| Influence {
            parameter: name.to_string(),
            mean_abs_rank_correlation: sum / with.len() as f64,
            first_in: first,
            cells: with.len(),
        })
        .collect();
    out.sort_by(|a, b| {
        b.mean_abs_rank_correlation
            .total_cmp(&a.mean_abs_rank_correlation)
            .then_with(|| a.parameter.cmp(&b.parameter))
    });
    out
}

/// The figures of one prediction the table shows, in column order after the
/// axes: reads/s, writes/s, fsyncs/s, read MiB/s, write MiB/s, mean and p95
/// event latency (ms).
pub const FIGURE_COLUMNS: [&str; 7] = [
    "reads/s",
    "writes/s",
    "fsyncs/s",
    "read MiB/s",
    "write MiB/s",
    "avg lat ms",
    "p95 ms",
];

fn figures(r: &RunResult) -> [Option<f64>; 7] {
    let event = r.latency.get(&LatencyKey::Event);
    [
        Some(r.rates.reads_per_s),
        Some(r.rates.writes_per_s),
        Some(r.rates.fsyncs_per_s),
        Some(r.rates.read_mib_per_s),
        Some(r.rates.written_mib_per_s),
        event.map(|l| l.mean_ms),
        event.and_then(|l| l.at(95.0)),
    ]
}

/// fileio options as a report names them: `fileio OPTIONS run`.
pub fn fileio_workload_text(words: &[String]) -> String {
    format!("fileio {} run", words.join(" "))
}

/// The reference user's table: one row per cell, the axis values, then
/// [`FIGURE_COLUMNS`]. With no axes the first column is the system's name.
pub fn results_table(workload: &str, cells: &[MatrixCell], results: &[RunResult]) -> Table {
    let axis_names: Vec<String> = match cells.first() {
        Some(c) if !c.choices.is_empty() => c.choices.iter().map(|(k, _)| k.clone()).collect(),
        _ => vec!["system".to_string()],
    };
    let mut columns: Vec<(&str, bool)> = axis_names.iter().map(|n| (n.as_str(), false)).collect();
    columns.extend(FIGURE_COLUMNS.iter().map(|c| (*c, true)));
    let mut t = Table::new(&columns);
    for (cell, r) in cells.iter().zip(results) {
        let mut row: Vec<Cell> = if cell.choices.is_empty() {
            vec![Cell::Text(
                r.labels.get("system").cloned().unwrap_or_default(),
            )]
        } else {
            cell.choices
                .iter()
                .map(|(_, v)| Cell::Text(v.clone()))
                .collect()
        };
        match &r.prediction {
            Some(p) => row.extend(figures(r).into_iter().zip(INTERVAL_FIGURES).map(
                |(point, name)| match (point, p.figures.get(name)) {
                    (Some(v), Some(f)) => Cell::Range(Some(v), Some((f.low, f.high))),
                    (point, _) => Cell::Range(point, None),
                },
            )),
            None => row.extend(figures(r).map(Cell::Num)),
        }
        t.rows.push(row);
    }
    let system = results
        .first()
        .and_then(|r| r.labels.get("system"))
        .cloned()
        .unwrap_or_default();
    t.notes.push(format!(
        "PREDICTION (simulated, not measured) for system '{system}'; workload: {workload}"
    ));
    let common: BTreeMap<&str, &str> = results
        .first()
        .map(|r| {
            r.labels
                .iter()
                .filter(|(k, v)| {
                    !axis_names.contains(k)
                        && k.as_str() != "system"
                        && results.iter().all(|o| o.labels.get(*k) == Some(v))
                })
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect()
        })
        .unwrap_or_default();
    if !common.is_empty() {
        t.notes.push(format!(
            "All cells: {}",
            common
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    t.notes.extend(interval_notes(results));
    t
}

/// The interval block's name of each of [`FIGURE_COLUMNS`].
const INTERVAL_FIGURES: [&str; 7] = crate::uncertainty::FIGURES;

/// What the ranges are and which parameters move them most across the
/// matrix; nothing when no cell has an interval.
fn interval_notes(results: &[RunResult]) -> Vec<String> {
    let Some(p) = results.iter().find_map(|r| r.prediction.as_ref()) else {
        return Vec::new();
    };
    let mut notes = vec![format!(
        "Figures: typical (low–high), an {:.0} % interval: the 10th to 90th percentile of {} samples of the uncertain parameters' ranges (docs/prediction.md), {}; the same samples and seed in every cell, so the differences between rows are the systems', not sampling noise",
        p.confidence * 100.0,
        p.samples,
        crate::structural::StructuralError::current().describe()
    )];
    let influence = measure_first(results);
    let top: Vec<String> = influence
        .iter()
        .filter(|i| i.mean_abs_rank_correlation > 0.0)
        .take(3)
        .map(|i| {
            format!(
                "{} ({:.2}, first in {} of {} cells)",
                i.parameter, i.mean_abs_rank_correlation, i.first_in, i.cells
            )
        })
        .collect();
    if !top.is_empty() {
        // Each cell ranks on its headline figure (crate::uncertainty).
        let writing = results
            .iter()
            .filter(|r| r.rates.writes_per_s > 0.0)
            .count();
        let headline = match writing {
            0 => "reads/s",
            n if n == results.len() => "writes/s",
            _ => "writes/s (reads/s where it writes nothing)",
        };
        // Cells sample different parameter sets (a log device adds its
        // flush): the bound of the cell with the most is the one to quote.
        let params = results
            .iter()
            .filter_map(|r| r.prediction.as_ref())
            .map(|q| q.sensitivity.len())
            .max()
            .unwrap_or(0);
        notes.push(format!(
            "Measure this first (mean over the cells of |partial rank correlation| with the cell's {headline}): {}; with {} samples over up to {params} parameters a cell's correlation under {:.2} cannot be told from chance at 95 %",
            top.join(", "),
            p.samples,
            crate::uncertainty::noise_correlation(p.samples, params)
        ));
    }
    notes
}

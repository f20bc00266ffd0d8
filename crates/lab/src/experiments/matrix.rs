//! The matrix runner: a base lab spec, axes that vary parts of it, and one
//! workload. Each combination is built, measured and torn down in turn; the
//! results form a table (rendered by `report::table`, like every table of
//! tankbench) written as Markdown, and a JSON document with every `RunResult`.
//!
//! ```toml
//! base = "ref-base.toml"            # or an inline [base] table
//! workload = ["--file-total-size=1G", "--file-test-mode=rndrw", "--time=30"]
//! output = "results/ref"            # writes ref.md and ref.json
//! [[axis]]
//! key = "pool.layout"               # a dotted path into the base spec
//! values = ["1x raidz3-24", "2x raidz2-12", "3x raidz2-8"]
//! ```

use crate::experiments::run::{self, Outcome};
use crate::experiments::server::ServerActivity;
use crate::lab::{Lab, UpOptions};
use crate::parts::net::LinkMeasurement;
use crate::parts::sys;
use crate::parts::writeprobe::WritePathMeasurement;
use crate::spec::{LabSpec, RawSpec};
use crate::LabError;
use fileio::result::{LatencyKey, RunResult};
use report::atomic::{check_can_create_in, write_atomically, Existing};
use report::table::{self, Table};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Marks the JSON document of a matrix as ours (its first key), so a later
/// run may replace it and never replaces a file someone else wrote.
pub(crate) const JSON_GENERATOR: &str = "tankbench lab matrix";

/// Marks the file of one finished (or failed) cell.
pub(crate) const CELL_GENERATOR: &str = "tankbench lab matrix cell";

/// The run time a matrix gives each cell when its workload names none, s.
/// zfs-fuse syncs a transaction group every 30 s (zfs_txg_timeout in its
/// txg.c, from OpenSolaris; OpenZFS has 5 s), so a 60 s run holds two syncs
/// wherever it starts; 20 s runs held one or none, and no-log figures moved
/// 2.5-fold between such runs.
pub(crate) const DEFAULT_CELL_TIME_S: u64 = 60;

/// Most cells a lab matrix (and `lab predict` over it) has: each is a lab
/// built and measured; the simulator's matrix limit.
pub const MAX_CELLS: u64 = sim::limits::DEFAULT_MAX_CELLS;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    base: toml::Value,
    workload: Vec<String>,
    #[serde(default)]
    output: Option<PathBuf>,
    #[serde(default)]
    axis: Vec<Axis>,
    /// How many times each cell is measured, every cell once a round.
    #[serde(default = "one_round")]
    rounds: u32,
}

fn one_round() -> u32 {
    1
}

/// Most rounds a matrix takes: each is the whole matrix measured again.
pub const MAX_ROUNDS: u32 = 9;

/// A matrix axis: the simulator's matrix vocabulary (`[[axis]]` with a key
/// and its values), expanded by the one cross product both matrices share.
pub use sim::matrix::axis::Axis;

pub struct Matrix {
    pub base: toml::Value,
    pub workload: Vec<String>,
    pub output: PathBuf,
    pub axes: Vec<Axis>,
    /// Each cell is measured this many times (`rounds = N`, default 1):
    /// every cell once, then every cell again, so that the host's slower
    /// and faster hours fall on all cells alike. Sync-write cells move by
    /// x1.16 either way from run to run (crates/sim/data/run-to-run.toml);
    /// `lab pairs` takes each cell's median.
    pub rounds: u32,
}

/// One configuration of the matrix: its spec text and the values chosen.
#[derive(Debug, Clone)]
pub struct Cell {
    pub raw: RawSpec,
}

/// The JSON document of a matrix, `generator` first so that it can be
/// recognised from the start of the file.
#[derive(Serialize)]
struct MatrixDoc<'a> {
    generator: &'static str,
    workload: &'a [String],
    cells: &'a [CellResult],
}

/// The file of one cell: the mark, what the cell was (its spec and the
/// workload, as JSON), and its result.
#[derive(Serialize, Deserialize)]
struct CellDoc {
    generator: String,
    key: String,
    result: CellResult,
}

/// FNV-1a, 64 bits (Fowler, Noll, Vo): a stable name for a cell's file.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Seconds as `1h02m`, `5m07s` or `42s`.
fn clock(seconds: f64) -> String {
    // Rounded and clamped to a day's worth of hours times 1000: a finite,
    // non-negative value that fits.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let s = seconds.clamp(0.0, 86_400_000.0).round() as u64;
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec:02}s"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellResult {
    pub labels: std::collections::BTreeMap<String, String>,
    pub link: Option<LinkMeasurement>,
    /// The pool's write path as the cell's lab timed it.
    #[serde(default)]
    pub write_path: Option<WritePathMeasurement>,
    pub outcome: Option<Outcome>,
    pub error: Option<String>,
    pub build_s: f64,
    /// Which round of the matrix measured it (1 when it has one round).
    #[serde(default = "one_round")]
    pub round: u32,
}

fn spec_err(path: &Path, msg: impl std::fmt::Display) -> LabError {
    LabError::Spec(format!("{}: {msg}", path.display()))
}

impl Matrix {
    pub fn load(path: &Path) -> Result<Matrix, LabError> {
        let text = zfs_model::config_file::read_config(path)
            .map_err(|e| spec_err(path, format!("read matrix: {e}")))?;
        let raw: RawMatrix = toml::from_str(&text).map_err(|e| {
            spec_err(
                path,
                e.to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let base = match raw.base {
            toml::Value::String(file) => {
                let p = dir.join(&file);
                let t = zfs_model::config_file::read_config(&p)
                    .map_err(|e| spec_err(&p, format!("base: read: {e}")))?;
                toml::from_str::<toml::Value>(&t).map_err(|e| {
                    spec_err(
                        &p,
                        e.to_string()
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" "),
                    )
                })?
            }
            v @ toml::Value::Table(_) => v,
            other => {
                return Err(spec_err(
                    path,
                    format!("base: expected a file name or a table, got {other}"),
                ))
            }
        };
        if raw.workload.is_empty() {
            return Err(spec_err(path, "workload: list the fileio options, e.g. [\"--file-test-mode=rndrw\", \"--time=30\"]"));
        }
        let output = match raw.output {
            Some(o) if o.is_absolute() => o,
            Some(o) => dir.join(o),
            None => dir.join(path.file_stem().unwrap_or_default()),
        };
        let mut workload = raw.workload;
        if !workload
            .iter()
            .any(|w| w.starts_with("--time=") || w.starts_with("--max-time="))
        {
            workload.push(format!("--time={DEFAULT_CELL_TIME_S}"));
        }
        if !(1..=MAX_ROUNDS).contains(&raw.rounds) {
            return Err(spec_err(
                path,
                format!(
                    "rounds: expected 1 to {MAX_ROUNDS} (each round measures every cell once more), got {}",
                    raw.rounds
                ),
            ));
        }
        let m = Matrix {
            base,
            workload,
            output,
            axes: raw.axis,
            rounds: raw.rounds,
        };
        // Validate every cell up front: a typo in the last value should not
        // surface after an hour of runs.
        let cells = m.cells().map_err(|e| match e {
            LabError::Spec(msg) => spec_err(path, msg),
            other => other,
        })?;
        for c in cells {
            c.raw.validate().map_err(|e| spec_err(path, e))?;
        }
        Ok(m)
    }

    /// Every combination, first axis slowest; more than
    /// [`MAX_CELLS`] are refused before any is expanded.
    pub fn cells(&self) -> Result<Vec<Cell>, LabError> {
        let combos =
            sim::matrix::axis::cross_product(&self.base, &self.axes, |a| a.key.as_str(), MAX_CELLS)
                .map_err(axis_error)?;
        combos
            .into_iter()
            .map(|c| {
                let raw: RawSpec = c.document.try_into().map_err(|e: toml::de::Error| {
                    LabError::Spec(format!(
                        "matrix cell: {}",
                        e.to_string()
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" ")
                    ))
                })?;
                Ok(Cell { raw })
            })
            .collect()
    }

    /// Build, run and tear down every cell that has no finished result in
    /// the output yet; write each cell's file as soon as it is done and the
    /// tables after each cell, so an interrupted matrix keeps what it
    /// measured and a second run of it measures only what is missing (or
    /// failed). A finished cell's file is never rewritten.
    pub fn run(&self, opts: &UpOptions, say: &dyn Fn(&str)) -> Result<Vec<CellResult>, LabError> {
        self.run_counting(opts, say, &|_, _| {})
    }

    /// [`Matrix::run`], telling `counted` how many of the cells to run are
    /// done out of how many, before each cell and after the last (a
    /// progress bar's figures).
    pub fn run_counting(
        &self,
        opts: &UpOptions,
        say: &dyn Fn(&str),
        counted: &dyn Fn(usize, usize),
    ) -> Result<Vec<CellResult>, LabError> {
        let cells = self.cells()?;
        // Every cell once a round, round after round.
        let units: Vec<(u32, usize)> = (1..=self.rounds)
            .flat_map(|round| (0..cells.len()).map(move |i| (round, i)))
            .collect();
        let n = units.len();
        let mut results: Vec<Option<CellResult>> = Vec::with_capacity(n);
        for &(round, i) in &units {
            results.push(self.finished(&cells[i], round)?);
        }
        let what = if self.rounds > 1 {
            format!("cell runs ({} cells, {} rounds)", cells.len(), self.rounds)
        } else {
            "cells".to_string()
        };
        let done_before = results.iter().filter(|r| r.is_some()).count();
        if done_before == n {
            say(&format!(
                "all {n} {what} finished before (kept from {}); nothing to run",
                self.cells_dir().display()
            ));
        } else if done_before > 0 {
            say(&format!(
                "{done_before} of {n} {what} finished before (kept from {}); running the other {}",
                self.cells_dir().display(),
                n - done_before
            ));
        }
        if let Some(t) = crate::experiments::workload::run_shape(&self.workload).map(|s| s.time_s) {
            if t > 0 && t < DEFAULT_CELL_TIME_S {
                say(&format!(
                    "warning: --time={t}: a cell shorter than {DEFAULT_CELL_TIME_S} s may hold no transaction-group sync of zfs-fuse (every 30 s), so writes that wait for one vary from cell to cell"
                ));
            }
        }
        let started = std::time::Instant::now();
        let mut ran = 0usize;
        let to_run = n - done_before;
        for (u, &(round, i)) in units.iter().enumerate() {
            if results[u].is_some() {
                continue;
            }
            let cell = &cells[i];
            sys::check_interrupted()?;
            let spec = cell.raw.validate()?;
            let labels = spec.labels();
            let elapsed = started.elapsed().as_secs();
            let eta = if ran > 0 {
                let per_cell = started.elapsed().as_secs_f64() / ran as f64;
                format!(", ETA {}", clock(per_cell * (to_run - ran) as f64))
            } else {
                String::new()
            };
            let of_round = if self.rounds > 1 {
                format!(" round {round}/{}", self.rounds)
            } else {
                String::new()
            };
            say(&format!(
                "cell {}/{}{of_round}: {} (elapsed {}{eta})",
                i + 1,
                cells.len(),
                label_line(&labels),
                clock(elapsed as f64)
            ));
            counted(ran, to_run);
            if let Some(w) = crate::experiments::server::arc_fit_warning(&spec, &self.workload) {
                say(&w);
            }
            let (res, teardown_failed) = self.measure(&spec, round, opts);
            ran += 1;
            if let Some(e) = &res.error {
                say(&format!(
                    "cell {}/{}{of_round} failed: {e}",
                    i + 1,
                    cells.len()
                ));
            }
            self.write_cell(cell, round, &res)?;
            results[u] = Some(res);
            self.write(&results.iter().flatten().cloned().collect::<Vec<_>>())?;
            if let Some(e) = teardown_failed {
                // A lab that did not come down holds names and memory the
                // next cell needs.
                return Err(e);
            }
            counted(ran, to_run);
            sys::check_interrupted()?;
        }
        Ok(results.into_iter().flatten().collect())
    }

    /// Build the lab of `spec`, run the workload on it and tear it down:
    /// the cell's result (its error, if any step failed), and the error of
    /// a teardown that failed.
    fn measure(
        &self,
        spec: &LabSpec,
        round: u32,
        opts: &UpOptions,
    ) -> (CellResult, Option<LabError>) {
        let mut res = CellResult {
            labels: spec.labels(),
            link: None,
            write_path: None,
            outcome: None,
            error: None,
            build_s: 0.0,
            round,
        };
        let mut teardown_failed = None;
        match Lab::up(spec, opts) {
            Ok(lab) => {
                res.link = lab.info().and_then(|i| i.link.clone());
                res.write_path = lab.info().and_then(|i| i.write_path);
                res.build_s = lab.info().map(|i| i.built_in_s).unwrap_or(0.0);
                match run::run_workload(&lab, &opts.tankbench, &self.workload) {
                    Ok(o) => res.outcome = Some(o),
                    Err(e) => res.error = Some(e.to_string()),
                }
                if let Err(e) = lab.down() {
                    res.error = Some(format!(
                        "{}teardown: {e}",
                        res.error.map(|s| s + "; ").unwrap_or_default()
                    ));
                    teardown_failed = Some(e);
                }
            }
            Err(e) => res.error = Some(e.to_string()),
        }
        (res, teardown_failed)
    }

    /// Where each cell's result is kept: `<output>.cells/`.
    pub(crate) fn cells_dir(&self) -> PathBuf {
        self.output.with_extension("cells")
    }

    /// The file of `cell`'s measurement in `round`: named by a hash of its
    /// configuration and the workload, so a matrix that gains an axis value
    /// keeps the cells it shares with the old one (`-r2`, `-r3` after it for
    /// the later rounds, so a matrix given more rounds keeps its first).
    pub fn cell_file(&self, cell: &Cell, round: u32) -> PathBuf {
        let hash = fnv1a(self.cell_key(cell).as_bytes());
        self.cells_dir().join(if round <= 1 {
            format!("cell-{hash:016x}.json")
        } else {
            format!("cell-{hash:016x}-r{round}.json")
        })
    }

    /// What makes a cell the same cell: its spec and the workload.
    fn cell_key(&self, cell: &Cell) -> String {
        serde_json::to_string(&(&cell.raw, &self.workload)).expect("a cell serializes")
    }

    /// The finished result of `cell`'s first round in the output, if any
    /// (what `lab predict` puts beside the simulator's prediction).
    pub(crate) fn finished_result(&self, cell: &Cell) -> Result<Option<CellResult>, LabError> {
        self.finished(cell, 1)
    }

    /// The finished results of `cell` in the matrix's rounds, in round
    /// order (those not measured yet left out).
    pub(crate) fn finished_rounds(&self, cell: &Cell) -> Result<Vec<CellResult>, LabError> {
        let mut out = Vec::new();
        for round in 1..=self.rounds {
            out.extend(self.finished(cell, round)?);
        }
        Ok(out)
    }

    /// The finished result of `cell` in `round` from an earlier run, if
    /// any; a failed one is run again. An error for a file there that is
    /// not a cell file of ours, or one of another configuration.
    fn finished(&self, cell: &Cell, round: u32) -> Result<Option<CellResult>, LabError> {
        let path = self.cell_file(cell, round);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(LabError::Io {
                    what: format!("read {}", path.display()),
                    source: e,
                })
            }
        };
        let doc: CellDoc = serde_json::from_str(&text)
            .ok()
            .filter(|d: &CellDoc| d.generator == CELL_GENERATOR)
            .ok_or_else(|| {
                LabError::Spec(format!(
                    "output: {} was not written by a lab matrix; move it away or choose another output",
                    path.display()
                ))
            })?;
        if doc.key != self.cell_key(cell) {
            return Err(LabError::Spec(format!(
                "output: {} holds another configuration under the same name; move it away or choose another output",
                path.display()
            )));
        }
        Ok((doc.result.error.is_none() && doc.result.outcome.is_some()).then_some(doc.result))
    }

    /// Write the file of a cell just run: new, or in place of the file of a
    /// failed run of the same cell (never of a finished one: those are not
    /// run again).
    fn write_cell(&self, cell: &Cell, round: u32, result: &CellResult) -> Result<(), LabError> {
        let dir = self.cells_dir();
        std::fs::create_dir_all(&dir).map_err(|e| LabError::Io {
            what: format!("create {}", dir.display()),
            source: e,
        })?;
        let path = self.cell_file(cell, round);
        if self.finished(cell, round)?.is_some() {
            return Err(LabError::NotOurs {
                what: format!("{} holds a finished result; not replaced", path.display()),
            });
        }
        let doc = CellDoc {
            generator: CELL_GENERATOR.to_string(),
            key: self.cell_key(cell),
            result: result.clone(),
        };
        let text = serde_json::to_string_pretty(&doc).expect("a cell serializes") + "\n";
        let existing = if path.exists() {
            Existing::Replace
        } else {
            Existing::Keep
        };
        write_atomically(&path, text.as_bytes(), existing).map_err(|e| LabError::Io {
            what: format!("write {}", path.display()),
            source: e,
        })
    }

    /// `<output>.md` and `<output>.json`.
    pub fn output_files(&self) -> [PathBuf; 2] {
        [
            self.output.with_extension("md"),
            self.output.with_extension("json"),
        ]
    }

    /// Before the first cell: the tables can be written (their directory can
    /// be made or written to), and neither replaces a file that a matrix did
    /// not write. A mistake here costs nothing; found after the last cell it
    /// would cost the whole run.
    pub fn check_outputs(&self) -> Result<(), LabError> {
        let dir = report::atomic::parent_dir(&self.output);
        check_can_create_in(dir).map_err(|e| LabError::Io {
            what: format!("output {}", self.output.display()),
            source: e,
        })?;
        for path in self.output_files() {
            check_replaceable(&path, MATRIX_OUTPUT)?;
        }
        let cells = self.cells_dir();
        if cells.exists() && !cells.is_dir() {
            return Err(LabError::Spec(format!(
                "output: {} exists and is not a directory (a matrix keeps its cells there); choose another output",
                cells.display()
            )));
        }
        for cell in self.cells()? {
            for round in 1..=self.rounds {
                self.finished(&cell, round)?;
            }
        }
        Ok(())
    }

    /// Write `<output>.md` and `<output>.json`, each whole or not at all
    /// (`report::atomic`), replacing only what a matrix wrote.
    pub fn write(&self, results: &[CellResult]) -> Result<(), LabError> {
        if let Some(d) = self.output.parent() {
            std::fs::create_dir_all(d).map_err(|e| LabError::Io {
                what: format!("create {}", d.display()),
                source: e,
            })?;
        }
        let [md, json] = self.output_files();
        // Both or neither: a refusal of the second must not follow a write of
        // the first.
        check_replaceable(&md, MATRIX_OUTPUT)?;
        check_replaceable(&json, MATRIX_OUTPUT)?;
        let doc = MatrixDoc {
            generator: JSON_GENERATOR,
            workload: &self.workload,
            cells: results,
        };
        let doc = serde_json::to_string_pretty(&doc).expect("a matrix document serializes") + "\n";
        publish(&json, doc.as_bytes(), MATRIX_OUTPUT)?;
        publish(
            &md,
            markdown(&self.workload, results).as_bytes(),
            MATRIX_OUTPUT,
        )
    }
}

/// Who writes a matrix's output files: the generator mark its JSON begins
/// with, and its name for messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OutputWriter {
    pub generator: &'static str,
    pub name: &'static str,
}

/// `lab matrix`'s output files.
pub(crate) const MATRIX_OUTPUT: OutputWriter = OutputWriter {
    generator: JSON_GENERATOR,
    name: "a lab matrix",
};

/// Whether the file at `path` is one `writer` wrote: Markdown with report's
/// generator mark, or JSON whose first key is the writer's generator.
fn written_by(path: &Path, writer: OutputWriter) -> bool {
    if path.extension().is_some_and(|e| e == "json") {
        let mut head = Vec::new();
        let read = std::fs::File::open(path).and_then(|f| f.take(256).read_to_end(&mut head));
        let mark = format!("{{\n  \"generator\": \"{}\"", writer.generator);
        read.is_ok() && head.starts_with(mark.as_bytes())
    } else {
        report::output::is_tankbench_file(path).unwrap_or(false)
    }
}

/// `writer` may write `path`: nothing is there, or a regular file it wrote.
pub(crate) fn check_replaceable(path: &Path, writer: OutputWriter) -> Result<(), LabError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(LabError::Io {
            what: path.display().to_string(),
            source: e,
        }),
        Ok(m) if m.file_type().is_file() && written_by(path, writer) => Ok(()),
        Ok(_) => Err(LabError::Spec(format!(
            "output: refusing to overwrite {}: it exists and was not written by {} (choose another output or move the file away)",
            path.display(),
            writer.name
        ))),
    }
}

/// Publish `bytes` as `path`, whole or not at all: a new file, or in place of
/// the one `writer` wrote before.
pub(crate) fn publish(path: &Path, bytes: &[u8], writer: OutputWriter) -> Result<(), LabError> {
    let io = |e| LabError::Io {
        what: format!("write {}", path.display()),
        source: e,
    };
    check_replaceable(path, writer)?;
    if path.exists() {
        write_atomically(path, bytes, Existing::Replace).map_err(io)
    } else {
        // Keep: a file that appears after the check stays untouched.
        write_atomically(path, bytes, Existing::Keep).map_err(io)
    }
}

fn label_line(l: &std::collections::BTreeMap<String, String>) -> String {
    format!(
        "layout {} | slog {} | link {} | arc {}",
        l.get("layout").map(String::as_str).unwrap_or("?"),
        l.get("slog").map(String::as_str).unwrap_or("?"),
        l.get("link").map(String::as_str).unwrap_or("?"),
        l.get("arc").map(String::as_str).unwrap_or("?")
    )
}

/// Mean and 95th percentile of the event latency, ms: the one place the lab
/// reads a `RunResult`'s latency figures.
fn event_latency_ms(r: &RunResult) -> (Option<f64>, Option<f64>) {
    let Some(l) = r.latency.get(&LatencyKey::Event) else {
        return (None, None);
    };
    (Some(l.mean_ms), l.at(95.0))
}

/// The table of a matrix (and of `lab run`, one row): the configuration, the
/// measured link, and the figures of the reference user's table. A cell that
/// failed has no figures ("–"), and its error is a note under the table.
pub fn results_table(workload: &[String], results: &[CellResult]) -> Table {
    let mut t = Table::new(&[
        ("layout", false),
        ("SLOG", false),
        ("link", false),
        ("RTT ms", true),
        ("link Mbit/s", true),
        ("read MiB/s", true),
        ("write MiB/s", true),
        ("reads/s", true),
        ("writes/s", true),
        ("fsyncs/s", true),
        ("avg lat ms", true),
        ("p95 ms", true),
        ("ARC MiB", true),
        ("ARC hit %", true),
        ("disk r/s", true),
        ("disk w/s", true),
    ]);
    t.notes
        .push(format!("Workload: tankbench fileio {}", workload.join(" ")));
    // A matrix of several rounds: which round measured each row.
    let rounds = results.iter().any(|r| r.round > 1);
    if rounds {
        t.columns.insert(
            3,
            table::Column {
                name: "round".into(),
                numeric: false,
            },
        );
    }
    for (i, r) in results.iter().enumerate() {
        let label = |k: &str| table::Cell::Text(r.labels.get(k).cloned().unwrap_or_default());
        let mut row = vec![
            label("layout"),
            label("slog"),
            label("link"),
            table::Cell::Num(r.link.as_ref().map(|m| m.rtt_ms_median)),
            table::Cell::Num(r.link.as_ref().map(|m| m.single_flow_mbit_s)),
        ];
        match &r.outcome {
            Some(Outcome { result, server }) => {
                let (avg, p95) = event_latency_ms(result);
                let rates = &result.rates;
                row.extend(
                    [
                        Some(rates.read_mib_per_s),
                        Some(rates.written_mib_per_s),
                        Some(rates.reads_per_s),
                        Some(rates.writes_per_s),
                        Some(rates.fsyncs_per_s),
                        avg,
                        p95,
                    ]
                    .map(table::Cell::Num),
                );
                let s = server.as_ref();
                row.extend(
                    [
                        s.and_then(|s| s.arc_max_bytes)
                            .map(|b| b as f64 / f64::from(1u32 << 20)),
                        s.and_then(ServerActivity::arc_hit_percent),
                        s.and_then(|s| s.disk_reads_per_s),
                        s.and_then(|s| s.disk_writes_per_s),
                    ]
                    .map(table::Cell::Num),
                );
            }
            None => row.extend(std::iter::repeat_n(table::Cell::Num(None), 11)),
        }
        if rounds {
            row.insert(3, table::Cell::Text(r.round.to_string()));
        }
        t.rows.push(row);
        if let Some(e) = &r.error {
            t.notes.push(format!(
                "Cell {} ({}) failed: {e}",
                i + 1,
                label_line(&r.labels)
            ));
        }
    }
    t
}

/// The Markdown file of a matrix.
pub fn markdown(workload: &[String], results: &[CellResult]) -> String {
    results_table(workload, results).to_markdown()
}

/// Set `key` (dotted) in a TOML table, creating intermediate tables (the
/// shared matrix vocabulary's rule: no empty part).
pub(crate) fn set_path(v: &mut toml::Value, key: &str, value: toml::Value) -> Result<(), LabError> {
    sim::matrix::axis::set_path(v, key, value).map_err(axis_error)
}

/// The lab's account of an axis that cannot be expanded.
fn axis_error(e: sim::matrix::axis::AxisError) -> LabError {
    match e {
        sim::matrix::axis::AxisError::Cells(sim::LimitError::Cells { cells, max }) => {
            LabError::Spec(format!(
                "the matrix has {cells} cells (the product of its axes' lengths), above the limit of {max}; remove axis values"
            ))
        }
        other => LabError::Spec(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cover_every_combination() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.toml");
        std::fs::write(
            &p,
            r#"
workload = ["--file-test-mode=rndrw"]
[base]
name = "m"
[base.pool]
layout = "raidz2-6"
[[axis]]
key = "pool.layout"
values = ["1x raidz3-24", "2x raidz2-12", "3x raidz2-8"]
[[axis]]
key = "pool.log"
values = ["none", "ssd-plp:10GB"]
[[axis]]
key = "link"
values = [{kind = "1G"}, {kind = "10G"}]
"#,
        )
        .unwrap();
        let m = Matrix::load(&p).unwrap();
        let cells = m.cells().unwrap();
        assert_eq!(cells.len(), 12);
        let specs: Vec<_> = cells.iter().map(|c| c.raw.validate().unwrap()).collect();
        assert_eq!(specs[0].pool.disk_count(), 24);
        assert!(specs[0].pool.log.is_none());
        assert_eq!(specs[1].link.as_ref().unwrap().label, "10G");
        assert_eq!(specs[2].pool.log.as_ref().unwrap().size, 10_000_000_000);
        assert_eq!(specs[11].labels()["layout"], "3xraidz2-8");
        assert_eq!(m.output, dir.path().join("m"));
    }

    fn cell(layout: &str, error: Option<&str>) -> CellResult {
        CellResult {
            labels: [("layout", layout), ("slog", "none"), ("link", "1G")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            link: None,
            write_path: None,
            outcome: None,
            error: error.map(str::to_string),
            build_s: 0.0,
            round: 1,
        }
    }

    /// The tables are report::table's, and a failed cell keeps its row, with
    /// its error (which may hold any character) as a note.
    #[test]
    fn the_table_is_a_report_table_with_failures_as_notes() {
        let workload = vec!["--file-test-mode=rndrw".to_string()];
        let results = [
            cell("3xraidz2-8", None),
            cell("2xraidz2-12", Some("zpool create | failed")),
        ];
        let t = results_table(&workload, &results);
        assert_eq!(t.rows.len(), 2);
        assert!(t.rows.iter().all(|r| r.len() == t.columns.len()));
        let md = markdown(&workload, &results);
        assert!(md.starts_with(report::table::MARKDOWN_MARKER), "{md}");
        assert!(md.contains("| 2xraidz2-12 | none | 1G | – |"), "{md}");
        assert!(md.contains("zpool create \\| failed"), "{md}");
        assert!(
            md.contains("Workload: tankbench fileio --file-test-mode=rndrw"),
            "{md}"
        );
        let text = t.to_terminal();
        assert!(text.starts_with("layout"), "{text}");
    }

    /// The tables are published whole, replace what a matrix wrote before,
    /// and never replace a file someone else wrote.
    #[test]
    fn tables_replace_only_what_a_matrix_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let m = Matrix {
            base: toml::from_str("name = \"m\"\n[pool]\nlayout = \"mirror-2\"\n").unwrap(),
            workload: vec!["--time=1".into()],
            output: dir.path().join("out/ref"),
            axes: Vec::new(),
            rounds: 1,
        };
        m.check_outputs().unwrap();
        m.write(&[cell("3xraidz2-8", None)]).unwrap();
        m.write(&[cell("3xraidz2-8", None), cell("1xraidz3-24", None)])
            .unwrap();
        let [md, json] = m.output_files();
        assert!(std::fs::read_to_string(&md)
            .unwrap()
            .contains("1xraidz3-24"));
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(doc["generator"], JSON_GENERATOR);
        assert_eq!(doc["cells"].as_array().unwrap().len(), 2);
        m.check_outputs().unwrap();
        let mut names: Vec<_> = std::fs::read_dir(dir.path().join("out"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["ref.json", "ref.md"]);

        for (theirs, text) in [(&md, "# my notes\n"), (&json, "{\"mine\": true}\n")] {
            std::fs::remove_file(&md).ok();
            std::fs::remove_file(&json).ok();
            std::fs::write(theirs, text).unwrap();
            let e = m.check_outputs().unwrap_err().to_string();
            assert!(
                e.contains("refusing to overwrite") && !e.contains('\n'),
                "{e}"
            );
            assert!(m.write(&[cell("3xraidz2-8", None)]).is_err());
            assert_eq!(std::fs::read_to_string(theirs).unwrap(), text);
        }
    }

    #[test]
    fn bad_cell_is_reported_before_running() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.toml");
        std::fs::write(
            &p,
            "workload = [\"--time=1\"]\n[base]\nname = \"m\"\n[base.pool]\nlayout = \"raidz2-6\"\n[[axis]]\nkey = \"pool.layout\"\nvalues = [\"raidz2-6\", \"raidz9-6\"]\n",
        )
        .unwrap();
        let e = Matrix::load(&p).err().unwrap().to_string();
        assert!(e.contains("pool.layout") && e.contains("raidz9-6"), "{e}");
    }

    fn two_cell_matrix(dir: &Path, workload: &str) -> Matrix {
        let p = dir.join("m.toml");
        std::fs::write(
            &p,
            format!("workload = [{workload}]\noutput = \"out/m\"\n[base]\nname = \"m\"\n[base.pool]\nlayout = \"mirror-2\"\n[[axis]]\nkey = \"server.arc\"\nvalues = [\"64M\", \"2G\"]\n"),
        )
        .unwrap();
        Matrix::load(&p).unwrap()
    }

    #[test]
    fn rounds_measure_every_cell_again_each_in_its_own_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.toml");
        let text = "workload = [\"--file-test-mode=rndrw\"]\noutput = \"out/m\"\nrounds = 3\n[base]\nname = \"m\"\n[base.pool]\nlayout = \"mirror-2\"\n";
        std::fs::write(&p, text).unwrap();
        let m = Matrix::load(&p).unwrap();
        assert_eq!(m.rounds, 3);
        let cells = m.cells().unwrap();
        // Round 1 keeps the file a matrix of one round writes.
        let first = m.cell_file(&cells[0], 1);
        assert!(first.to_string_lossy().ends_with(".json"));
        assert!(!first.to_string_lossy().contains("-r"));
        assert!(m
            .cell_file(&cells[0], 3)
            .to_string_lossy()
            .ends_with("-r3.json"));
        m.write_cell(&cells[0], 1, &finished_cell()).unwrap();
        m.write_cell(
            &cells[0],
            3,
            &CellResult {
                round: 3,
                ..finished_cell()
            },
        )
        .unwrap();
        let rounds: Vec<u32> = m
            .finished_rounds(&cells[0])
            .unwrap()
            .iter()
            .map(|r| r.round)
            .collect();
        assert_eq!(rounds, [1, 3]);
        // The table says which round measured each row.
        let t = results_table(&m.workload, &m.finished_rounds(&cells[0]).unwrap());
        assert_eq!(t.columns[3].name, "round");
        // Zero rounds, or more than the limit, are refused naming the key.
        for bad in ["rounds = 0", "rounds = 10"] {
            std::fs::write(&p, text.replace("rounds = 3", bad)).unwrap();
            let e = Matrix::load(&p).err().unwrap().to_string();
            assert!(e.contains("rounds: expected 1 to 9"), "{e}");
        }
    }

    fn finished_cell() -> CellResult {
        let result: RunResult = serde_json::from_str(include_str!(
            "../../../fileio/tests/data/schema1-stored-seqwr.json"
        ))
        .unwrap();
        CellResult {
            outcome: Some(Outcome {
                result,
                server: None,
            }),
            ..cell("1xmirror-2", None)
        }
    }

    /// `server.arc` is a matrix axis (its label names the size), and a
    /// workload without --time gets the matrix's default duration.
    #[test]
    fn arc_is_an_axis_and_cells_run_a_minute_by_default() {
        let dir = tempfile::tempdir().unwrap();
        let m = two_cell_matrix(dir.path(), "\"--file-test-mode=rndrw\"");
        assert_eq!(m.workload.last().unwrap(), "--time=60");
        let specs: Vec<_> = m
            .cells()
            .unwrap()
            .iter()
            .map(|c| c.raw.validate().unwrap())
            .collect();
        assert_eq!(specs[0].server.arc, Some(64 << 20));
        assert_eq!(specs[1].labels()["arc"], "2G");
        let m = two_cell_matrix(dir.path(), "\"--time=5\"");
        assert_eq!(m.workload, ["--time=5"]);
    }

    /// A finished cell is kept (found again, never rewritten); a failed one
    /// is run again and its file replaced; a cell file that is not ours, or
    /// of another configuration under the same name, stops the matrix
    /// before anything runs, and stays as it was.
    #[test]
    fn finished_cells_are_kept_and_failed_ones_run_again() {
        let dir = tempfile::tempdir().unwrap();
        let m = two_cell_matrix(dir.path(), "\"--time=5\"");
        let cells = m.cells().unwrap();
        m.check_outputs().unwrap();
        assert!(m.finished(&cells[0], 1).unwrap().is_none());
        m.write_cell(&cells[0], 1, &finished_cell()).unwrap();
        m.write_cell(
            &cells[1],
            1,
            &cell("1xmirror-2", Some("zpool create failed")),
        )
        .unwrap();
        assert_ne!(m.cell_file(&cells[0], 1), m.cell_file(&cells[1], 1));
        assert!(m.finished(&cells[0], 1).unwrap().is_some());
        // Failed: not finished, so the next run measures it again.
        assert!(m.finished(&cells[1], 1).unwrap().is_none());
        let first = std::fs::read_to_string(m.cell_file(&cells[0], 1)).unwrap();
        assert!(m.write_cell(&cells[0], 1, &finished_cell()).is_err());
        assert_eq!(
            std::fs::read_to_string(m.cell_file(&cells[0], 1)).unwrap(),
            first
        );
        m.write_cell(&cells[1], 1, &finished_cell()).unwrap();
        assert!(m.finished(&cells[1], 1).unwrap().is_some());
        m.check_outputs().unwrap();

        // Someone else's file under a cell's name.
        std::fs::write(m.cell_file(&cells[1], 1), "{\"mine\": 1}\n").unwrap();
        let e = m.check_outputs().unwrap_err().to_string();
        assert!(
            e.contains("not written by a lab matrix") && !e.contains('\n'),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(m.cell_file(&cells[1], 1)).unwrap(),
            "{\"mine\": 1}\n"
        );
        // Another configuration's file under this cell's name.
        let mut doc: serde_json::Value = serde_json::from_str(&first).unwrap();
        doc["key"] = serde_json::Value::String("other".into());
        std::fs::write(m.cell_file(&cells[1], 1), doc.to_string()).unwrap();
        let e = m.check_outputs().unwrap_err().to_string();
        assert!(e.contains("another configuration"), "{e}");
    }

    #[test]
    fn progress_clock() {
        assert_eq!(clock(42.4), "42s");
        assert_eq!(clock(307.0), "5m07s");
        assert_eq!(clock(3720.0), "1h02m");
        assert_eq!(clock(-3.0), "0s");
    }

    /// The example matrices load, and the reference ones give the lab the
    /// ARC that holds their file set, with no warning.
    #[test]
    fn the_example_matrices_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/lab");
        for name in ["reference-matrix.toml", "reference-local-matrix.toml"] {
            let m = Matrix::load(&dir.join(name)).unwrap();
            assert!(m
                .workload
                .contains(&format!("--time={DEFAULT_CELL_TIME_S}")));
            for c in m.cells().unwrap() {
                let spec = c.raw.validate().unwrap();
                assert_eq!(spec.server.arc, Some(2 << 30), "{name}");
                assert_eq!(
                    crate::experiments::server::arc_fit_warning(&spec, &m.workload),
                    None
                );
            }
        }
    }
}

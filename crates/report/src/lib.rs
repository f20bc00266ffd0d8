//! Result store, statistical comparison, tables, charts and HTML reports for
//! tankbench.
//!
//! Everything reads [`fileio::result::RunResult`], the one result type that
//! measured runs, the lab and the simulator produce.
//!
//! - [`store`]: a directory of result files (`./tankbench-results` by default),
//!   one JSON file per run, never overwriting.
//! - [`labels`]: `KEY=VALUE,...` labels and selectors.
//! - [`select`]: command-line words (file, directory, run id, label selector) to runs.
//! - [`group`]: runs grouped into configurations (same labels = repeats).
//! - [`stats`], [`compare`]: Welch's t-test over repeats; the `compare` table.
//! - [`table`]: one table model, rendered for a terminal, Markdown, CSV and HTML.
//! - [`charts`], [`svg`], [`png`]: our own SVG charts, and PNG via resvg;
//!   [`plan_chart`] and [`slog_chart`] draw `plan --chart` and `slog --chart`.
//! - [`html`]: the self-contained report page.
//! - [`import`]: fio JSON and sysbench text reports as measured results.
//! - [`output`]: `-o` files that never replace a file tankbench did not write.
//! - [`atomic`]: every result and report file is published whole or not at all.
//! - [`escape`]: strings from result files (untrusted) in HTML, SVG, Markdown,
//!   CSV and on a terminal.
//!
//! # How `tankbench fileio ... run` saves results
//!
//! This crate depends on `fileio` (to read `RunResult`), so `fileio` cannot call
//! it: the binary does (`crates/tankbench/src/cmd/fileio.rs`). `fileio` parses
//! `--save[=DIR]`, `--label=K=V,...` and `--repeat=N`, runs the workload N times
//! and hands back the N results; the binary then maps them onto this crate:
//!
//! ```no_run
//! use report::labels::{merge_labels, parse_labels, Labels};
//! use report::store::ResultStore;
//! # fn run_once(labels: &Labels) -> fileio::result::RunResult { unimplemented!() }
//! # fn main() -> Result<(), report::Error> {
//! // Once, while parsing options: each `--label=` value (the text after `=`).
//! // Errors already name `--label`, so they can be shown as they are.
//! let mut labels = Labels::new();
//! for text in ["layout=2xraidz2,slog=yes", "link=10G"] {
//!     merge_labels(&mut labels, parse_labels(text)?)?;
//! }
//! // `--save` alone -> ResultStore::open_default(); `--save=DIR` -> open(DIR).
//! let store = ResultStore::open("tankbench-results")?;
//! // `--repeat=N`: run N times; each result gets the same labels and its own
//! // `started_at`, and is saved as its own file (repeats are what `compare`
//! // tests for significance, so never average them before saving).
//! for _ in 0..3 {
//!     let result = run_once(&labels); // result.labels = labels.clone()
//!     let path = store.save(&result)?; // a new file; never overwrites
//!     eprintln!("saved {}", path.display());
//! }
//! # Ok(()) }
//! ```
//!
//! `save` creates the directory if needed and names files
//! `<UTC start>-<seq>-<labels>.json`, which sort by start time.

pub mod atomic;
pub mod charts;
pub mod compare;
pub mod error;
pub mod escape;
pub mod group;
pub mod html;
pub mod import;
pub mod labels;
pub mod output;
pub mod plan;
pub mod plan_chart;
pub mod png;
pub mod select;
pub mod slog_chart;
pub mod stats;
pub mod store;
pub mod svg;
pub mod table;

pub use error::{Error, Result};

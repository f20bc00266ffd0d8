//! What `simulate` and its forms from a measurement (`--baseline`,
//! cmd::what_if) share: the command line's overrides as a matrix over a
//! system file, the workload of the fileio words, where a system file's own
//! file names are read from, and the notes of a prediction cut short.

use sim::matrix::{AxisError, MatrixError};
use sim::SimError;
use std::path::{Path, PathBuf};

/// The workload of the fileio words (`fileio`, options, `run`): the
/// options without the command and the output options (`--format`,
/// `--save`, `--label`), which a matrix takes on its own.
pub(crate) fn workload_of(words: &[String]) -> Vec<String> {
    words
        .iter()
        .skip(1)
        .filter(|w| {
            w.as_str() != "run"
                && !["--format", "--save", "--label"]
                    .iter()
                    .any(|o| w.as_str() == *o || w.starts_with(&format!("{o}=")))
        })
        .cloned()
        .collect()
}

/// The matrix of a system file's `text` (named by `option` in messages)
/// and the command line's overrides (`axes`), running `workload`; an axis
/// value that does not fit is named by its option, as typed.
pub(crate) fn overrides_matrix(
    text: &str,
    option: &str,
    workload: Vec<String>,
    axes: &[(&str, Vec<String>)],
    max_cells: u64,
) -> anyhow::Result<sim::matrix::MatrixSpec> {
    sim::matrix::MatrixSpec::from_system_text(text, workload, axes, max_cells).map_err(
        |e| match e {
            SimError::Limit(limit) => anyhow::anyhow!("simulate: {limit}"),
            // An axis here is an option: name it as typed.
            SimError::Matrix(MatrixError::AxisValue {
                axis,
                value,
                problem,
            }) => anyhow::anyhow!("simulate: --{axis} '{value}': {problem}"),
            SimError::Matrix(MatrixError::Axis(AxisError::NoValues { axis })) => {
                anyhow::anyhow!("simulate: --{axis}: values must not be empty")
            }
            SimError::Matrix(m) => anyhow::anyhow!("simulate: {option}: matrix: {m}"),
            SimError::Field(f) => anyhow::anyhow!("simulate: {option}: {f}"),
            e => anyhow::anyhow!("simulate: {option}: {e}"),
        },
    )
}

/// The directory a file name is in ("." for a bare name).
pub(crate) fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A prediction that stopped at its event budget, stopped early, or was
/// counted from somewhere other than its start says so on stderr (its JSON
/// notes carry it too).
pub(crate) fn note_budget(result: &fileio::result::RunResult) {
    note_budgets(std::slice::from_ref(result));
}

/// [`note_budget`] of several predictions: each kind of note once, as the
/// first prediction that has it says it, with how many others say it too
/// (a table of twelve cells that each stopped early at its own second is
/// one line, not twelve; every result's JSON keeps its own).
pub(crate) fn note_budgets(results: &[fileio::result::RunResult]) {
    // Kind, its first line, and how many predictions carry it.
    let mut notes: Vec<(sim::notes::SimNote, String, usize)> = Vec::new();
    for r in results {
        let mut kinds_here = Vec::new();
        for w in &r.warnings {
            let Some(kind) = sim::notes::SimNote::of(w) else {
                continue;
            };
            if !kind.is_about_the_run_length() || kinds_here.contains(&kind) {
                continue;
            }
            kinds_here.push(kind);
            match notes.iter_mut().find(|(k, _, _)| *k == kind) {
                Some((_, _, n)) => *n += 1,
                None => notes.push((kind, format!("note: {}; {}", w.message, w.hint), 1)),
            }
        }
    }
    for (_, line, n) in notes {
        if n > 1 {
            super::write_stderr_line(&format!(
                "{line} (the first of {n} predictions that note it; each one's JSON has its own)"
            ));
        } else {
            super::write_stderr_line(&line);
        }
    }
}

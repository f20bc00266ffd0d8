//! Turning command-line words into runs: a result file, a directory of them, a
//! label selector (`layout=2xraidz2,slog=yes`) or a run id (file name without
//! `.json`, or a unique prefix of it) looked up in a store.

use crate::error::{Error, Result};
use crate::labels::{format_labels, matches, parse_labels_for};
use crate::store::{load_dir, load_file, ResultStore, Skipped, StoredRun};
use std::ffi::{OsStr, OsString};
use std::path::Path;

/// The runs one word selects, and the files it had to leave out.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// What the user typed, for headings ("A: layout=2xraidz2").
    pub name: String,
    pub runs: Vec<StoredRun>,
    pub skipped: Vec<Skipped>,
}

/// Resolve `word` against the file system first, then against `store`.
/// `option` names the argument in errors (`compare A`). A word is taken as it
/// was typed, bytes and all: file names need not be UTF-8, but run ids and
/// label selectors are text.
pub fn select(word: &OsStr, store: &ResultStore, option: &str) -> Result<Selection> {
    let path = Path::new(word);
    let shown = word.to_string_lossy();
    let mut sel = Selection {
        name: shown.to_string(),
        ..Default::default()
    };
    if path.is_file() {
        sel.runs.push(load_file(path)?);
        return Ok(sel);
    }
    if path.is_dir() {
        let listing = load_dir(path)?;
        if listing.runs.is_empty() {
            return Err(Error::NoMatch(format!(
                "{option}: no tankbench results in directory {shown}{}",
                skipped_hint(&listing.skipped)
            )));
        }
        sel.runs = listing.runs;
        sel.skipped = listing.skipped;
        return Ok(sel);
    }
    let Some(word) = word.to_str() else {
        return Err(Error::NoMatch(format!(
            "{option}: '{shown}' is not a file or a directory, and a run id or label \
             selector is UTF-8 text"
        )));
    };
    let listing = store.list()?;
    sel.skipped = listing.skipped;
    if word.contains('=') {
        let selector = parse_labels_for(option, word)?;
        sel.name = format_labels(&selector);
        let (matching, others): (Vec<StoredRun>, Vec<StoredRun>) = listing
            .runs
            .into_iter()
            .partition(|r| matches(&r.result.labels, &selector));
        if matching.is_empty() {
            return Err(Error::NoMatch(format!(
                "{option}: no run in {} has labels {word}{}",
                store.dir().display(),
                existing_values(&selector, &others)
            )));
        }
        sel.runs = matching;
        return Ok(sel);
    }
    // A run id: exact match wins, otherwise a unique prefix.
    let (exact, prefixed): (Vec<_>, Vec<_>) = listing
        .runs
        .into_iter()
        .filter(|r| r.id.starts_with(word))
        .partition(|r| r.id == word);
    sel.runs = if !exact.is_empty() {
        exact
    } else if prefixed.len() == 1 {
        prefixed
    } else if prefixed.is_empty() {
        return Err(Error::NoMatch(format!(
            "{option}: '{word}' is not a file, a directory, a run id in {} or a label \
             selector (KEY=VALUE,...)",
            store.dir().display()
        )));
    } else {
        return Err(Error::NoMatch(format!(
            "{option}: '{word}' matches {} runs ({}, ...); give more of the id",
            prefixed.len(),
            prefixed[0].id
        )));
    };
    Ok(sel)
}

/// What the store holds for the selector's keys, so a selector that matches
/// nothing shows what would (`; link there: '2x10G LACP', '1G'`), quoted
/// because a value may hold spaces. Empty when the store has none of the keys.
fn existing_values(selector: &crate::labels::Labels, runs: &[StoredRun]) -> String {
    let mut parts = Vec::new();
    for key in selector.keys() {
        let values: std::collections::BTreeSet<&str> = runs
            .iter()
            .filter_map(|r| r.result.labels.get(key).map(String::as_str))
            .collect();
        if values.is_empty() {
            parts.push(format!("no run has a label {key}"));
        } else {
            let quoted: Vec<String> = values.iter().map(|v| format!("'{key}={v}'")).collect();
            parts.push(format!("{key} there: {}", quoted.join(", ")));
        }
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; {}", parts.join("; "))
    }
}

fn skipped_hint(skipped: &[Skipped]) -> String {
    match skipped.first() {
        None => String::new(),
        Some(s) => format!(" ({} unreadable, first: {})", skipped.len(), s.reason),
    }
}

/// Resolve several words and concatenate the runs, dropping a run selected twice.
pub fn select_all(words: &[OsString], store: &ResultStore, option: &str) -> Result<Selection> {
    let mut all = Selection {
        name: words
            .iter()
            .map(|w| w.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" "),
        ..Default::default()
    };
    for w in words {
        let sel = select(w, store, option)?;
        for run in sel.runs {
            if !all.runs.iter().any(|r| r.path == run.path) {
                all.runs.push(run);
            }
        }
        all.skipped.extend(sel.skipped);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fileio::options::{Mode, RunSpec};
    use fileio::result::{ResultKind, RunResult};

    #[test]
    fn a_selector_that_matches_nothing_lists_the_values_there() {
        let d = tempfile::tempdir().unwrap();
        let store = ResultStore::open(d.path().join("store")).unwrap();
        for link in ["2x10G LACP", "2x1G LACP"] {
            let mut run = RunResult::new(
                ResultKind::Predicted,
                RunSpec::builder()
                    .mode(Mode::RndRw)
                    .build()
                    .unwrap()
                    .summary("simulated"),
            );
            run.labels.insert("link".into(), link.into());
            store.save(&run).unwrap();
        }
        let err = select(OsStr::new("link=2x10G"), &store, "compare A")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no run in")
                && err.contains("link there: 'link=2x10G LACP', 'link=2x1G LACP'"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
        let err = select(OsStr::new("layout=3xraidz2"), &store, "compare A")
            .unwrap_err()
            .to_string();
        assert!(err.contains("no run has a label layout"), "{err}");
        assert_eq!(
            select(OsStr::new("link=2x10G LACP"), &store, "compare A")
                .unwrap()
                .runs
                .len(),
            1
        );
    }
}

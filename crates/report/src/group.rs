//! Grouping runs into configurations: the rows of the reference user's table.
//!
//! Runs with the same labels (and the same workload) are repeats of one
//! configuration and become one row, with mean and spread. Label keys whose value
//! is the same in every run say nothing about the differences and move out of the
//! table into a "common" line; the keys that vary become the row-heading columns.

use crate::labels::{size_name, Labels};
use crate::stats::Summary;
use crate::store::StoredRun;
use fileio::result::{ResultKind, RunResult};
use fileio::spec::IoMode;
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// Pseudo-label for the workload, used as a column only when runs differ in it.
pub const WORKLOAD_KEY: &str = "workload";

#[derive(Debug, Clone)]
pub struct Group {
    /// One value per [`Grouping::columns`] entry; "" where the run has no such label.
    pub key: Vec<String>,
    /// Indices into [`Grouping::runs`].
    pub runs: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Grouping<'a> {
    pub runs: &'a [StoredRun],
    /// Label keys that vary between runs (sorted), then `workload` if it varies.
    pub columns: Vec<String>,
    /// Labels (and the workload) shared by every run.
    pub common: Vec<(String, String)>,
    pub groups: Vec<Group>,
}

impl<'a> Grouping<'a> {
    pub fn new(runs: &'a [StoredRun]) -> Grouping<'a> {
        let keys: BTreeSet<&String> = runs.iter().flat_map(|r| r.result.labels.keys()).collect();
        let mut columns = Vec::new();
        let mut common = Vec::new();
        for key in keys {
            let values: BTreeSet<Option<&String>> =
                runs.iter().map(|r| r.result.labels.get(key)).collect();
            match (values.len(), values.first()) {
                (1, Some(Some(v))) => common.push((key.clone(), (*v).clone())),
                _ => columns.push(key.clone()),
            }
        }
        let workloads: BTreeSet<String> = runs.iter().map(|r| workload_name(&r.result)).collect();
        if workloads.len() > 1 {
            columns.push(WORKLOAD_KEY.to_string());
        } else if let Some(w) = workloads.into_iter().next() {
            common.push((WORKLOAD_KEY.to_string(), w));
        }

        let mut groups: Vec<Group> = Vec::new();
        for (i, run) in runs.iter().enumerate() {
            let key = row_key(&columns, &run.result);
            match groups.iter_mut().find(|g| g.key == key) {
                Some(g) => g.runs.push(i),
                None => groups.push(Group { key, runs: vec![i] }),
            }
        }
        groups.sort_by(|a, b| cmp_keys(&a.key, &b.key));
        Grouping {
            runs,
            columns,
            common,
            groups,
        }
    }

    /// The results of one group.
    pub fn results(&self, g: &Group) -> Vec<&'a RunResult> {
        g.runs.iter().map(|&i| &self.runs[i].result).collect()
    }

    /// A short row name for chart axes and legends: the varying values joined by
    /// " / " (the axis title names the keys), or "all runs" when nothing varies.
    pub fn group_name(&self, g: &Group) -> String {
        let parts: Vec<&str> = g
            .key
            .iter()
            .map(|v| if v.is_empty() { "–" } else { v.as_str() })
            .collect();
        if parts.is_empty() {
            "all runs".to_string()
        } else {
            parts.join(" / ")
        }
    }

    /// "layout / link / slog": what the parts of [`group_name`](Self::group_name) are.
    pub fn key_title(&self) -> String {
        self.columns.join(" / ")
    }

    /// The summary of one metric over a group's runs; None if no run has it.
    pub fn summary(
        &self,
        g: &Group,
        metric: impl Fn(&RunResult) -> Option<f64>,
    ) -> Option<Summary> {
        let xs: Vec<f64> = g
            .runs
            .iter()
            .filter_map(|&i| metric(&self.runs[i].result))
            .collect();
        Summary::of(&xs)
    }
}

fn row_key(columns: &[String], run: &RunResult) -> Vec<String> {
    columns
        .iter()
        .map(|c| {
            if c == WORKLOAD_KEY {
                workload_name(run)
            } else {
                run.labels.get(c).cloned().unwrap_or_default()
            }
        })
        .collect()
}

/// A one-line description of what was run: `rndrw 4K, 4 threads, fsync-all`.
pub fn workload_name(run: &RunResult) -> String {
    let w = &run.workload;
    let mut s = format!(
        "{} {}, {} thread{}",
        w.mode.short_name(),
        size_name(w.block_size),
        w.threads,
        if w.threads == 1 { "" } else { "s" }
    );
    if w.fsync_all {
        s.push_str(", fsync-all");
    } else if w.fsync_freq > 0 && w.mode.writes() {
        s.push_str(&format!(", fsync every {}", w.fsync_freq));
    }
    if w.io_mode != IoMode::Sync {
        s.push_str(&format!(", {}", w.io_mode.name()));
    }
    if run.kind == ResultKind::Predicted {
        s.push_str(" (predicted)");
    }
    s
}

/// "Natural" order: digit runs compare as numbers, so `2xraidz2` sorts before
/// `10xmirror` and `1G` before `10G`.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a, b);
    loop {
        match (a.chars().next(), b.chars().next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let na = a.len() - a.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let nb = b.len() - b.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let (da, db) = (
                    a[..na].trim_start_matches('0'),
                    b[..nb].trim_start_matches('0'),
                );
                let ord = da.len().cmp(&db.len()).then_with(|| da.cmp(db));
                if ord != Ordering::Equal {
                    return ord;
                }
                a = &a[na..];
                b = &b[nb..];
            }
            (Some(x), Some(y)) => {
                let ord = x
                    .to_ascii_lowercase()
                    .cmp(&y.to_ascii_lowercase())
                    .then(x.cmp(&y));
                if ord != Ordering::Equal {
                    return ord;
                }
                a = &a[x.len_utf8()..];
                b = &b[y.len_utf8()..];
            }
        }
    }
}

fn cmp_keys(a: &[String], b: &[String]) -> Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| natural_cmp(x, y))
        .find(|o| *o != Ordering::Equal)
        .unwrap_or(Ordering::Equal)
}

/// Labels of a run as `k=v k2=v2` for prose.
pub fn labels_text(labels: &Labels) -> String {
    if labels.is_empty() {
        return "(no labels)".to_string();
    }
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        let mut v = vec!["10G", "1G", "2xraidz2", "10xmirror", "a", "B"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["1G", "2xraidz2", "10G", "10xmirror", "a", "B"]);
    }

    #[test]
    fn sizes() {
        assert_eq!(size_name(4096), "4K");
        assert_eq!(size_name(16 << 20), "16M");
        assert_eq!(size_name(4 << 30), "4G");
        assert_eq!(size_name(1000), "1000");
    }
}

//! `tankbench compare A B`: every metric side by side, the change from A to B,
//! and whether that change is larger than the run-to-run noise (Welch's t-test
//! over the repeats of each side).

use crate::group::workload_name;
use crate::select::Selection;
use crate::stats::{welch_t_test, Summary, Welch};
use crate::table::{trim_float, Cell, Table};
use fileio::result::{LatencyKey, RunResult};
use std::collections::BTreeSet;

/// Significance level: a change counts as larger than the noise when p < this.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// Which direction of a metric is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    pub metric: String,
    pub better: Better,
    pub a: Summary,
    pub b: Summary,
    /// (B - A) / A; None when A is 0.
    pub change: Option<f64>,
    /// None when a side has fewer than two samples.
    pub test: Option<Welch>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// B is better than A by more than the noise.
    Better,
    /// B is worse than A by more than the noise.
    Worse,
    /// The difference is within the noise (p >= alpha).
    WithinNoise,
    /// Too few samples to test.
    Untested,
}

#[derive(Debug, Clone)]
pub struct Comparison {
    pub a_name: String,
    pub b_name: String,
    pub n_a: usize,
    pub n_b: usize,
    pub alpha: f64,
    pub rows: Vec<CompareRow>,
    /// Notes a reader needs: sample counts, mixed workloads.
    pub notes: Vec<String>,
}

/// The metrics of one run, in display order: throughput, then latency per
/// operation (mean and each requested percentile).
pub fn metrics(run: &RunResult) -> Vec<(String, Better, f64)> {
    let r = &run.rates;
    let mut m = vec![
        ("read MiB/s".to_string(), Better::Higher, r.read_mib_per_s),
        (
            "write MiB/s".to_string(),
            Better::Higher,
            r.written_mib_per_s,
        ),
        ("reads/s".to_string(), Better::Higher, r.reads_per_s),
        ("writes/s".to_string(), Better::Higher, r.writes_per_s),
        ("fsyncs/s".to_string(), Better::Higher, r.fsyncs_per_s),
    ];
    for op in LatencyKey::ALL {
        let Some(l) = run.latency.get(&op) else {
            continue;
        };
        if l.count == 0 {
            continue;
        }
        m.push((format!("{op} latency mean ms"), Better::Lower, l.mean_ms));
        for p in &l.percentiles {
            m.push((
                format!("{op} latency p{} ms", trim_float(p.p)),
                Better::Lower,
                p.ms,
            ));
        }
    }
    m
}

impl Comparison {
    pub fn new(a: &Selection, b: &Selection, alpha: f64) -> Comparison {
        let (ma, mb) = (collect(&a.runs_results()), collect(&b.runs_results()));
        let mut rows = Vec::new();
        for (name, better, xs) in &ma {
            let Some((_, _, ys)) = mb.iter().find(|(n, _, _)| n == name) else {
                continue;
            };
            // A metric that is zero everywhere (write MiB/s of a read test) is noise
            // in the table, not information.
            if xs.iter().chain(ys).all(|v| *v == 0.0) {
                continue;
            }
            let (Some(sa), Some(sb)) = (Summary::of(xs), Summary::of(ys)) else {
                continue;
            };
            rows.push(CompareRow {
                metric: name.clone(),
                better: *better,
                a: sa,
                b: sb,
                change: (sa.mean != 0.0).then(|| (sb.mean - sa.mean) / sa.mean),
                test: welch_t_test(xs, ys),
            });
        }
        let (n_a, n_b) = (a.runs.len(), b.runs.len());
        let mut notes = vec![format!(
            "A = {} ({n_a} run{}), B = {} ({n_b} run{}); change is B relative to A.",
            a.name,
            plural(n_a),
            b.name,
            plural(n_b)
        )];
        if n_a < 2 && n_b < 2 {
            notes.push(
                "One sample each: no significance. A single difference may be noise; \
                 record repeats (tankbench fileio ... run --repeat=5 --save) to test it."
                    .into(),
            );
        } else if n_a < 2 || n_b < 2 {
            notes.push(format!(
                "A has {n_a} run{}, B has {n_b}: no significance (Welch's t-test needs at least \
                 2 runs on each side).",
                plural(n_a)
            ));
        } else {
            notes.push(format!(
                "Significance: Welch's t-test over the repeats, two-sided, alpha = {alpha}."
            ));
        }
        let workloads: BTreeSet<String> = a
            .runs
            .iter()
            .chain(&b.runs)
            .map(|r| workload_name(&r.result))
            .collect();
        if workloads.len() > 1 {
            notes.push(format!(
                "Warning: the runs used different workloads ({}); the comparison mixes them.",
                workloads.into_iter().collect::<Vec<_>>().join("; ")
            ));
        }
        Comparison {
            a_name: a.name.clone(),
            b_name: b.name.clone(),
            n_a,
            n_b,
            alpha,
            rows,
            notes,
        }
    }

    pub fn verdict(&self, row: &CompareRow) -> Verdict {
        match row.test {
            None => Verdict::Untested,
            Some(w) if w.p >= self.alpha => Verdict::WithinNoise,
            Some(_) => {
                let higher = row.b.mean > row.a.mean;
                if higher == (row.better == Better::Higher) {
                    Verdict::Better
                } else {
                    Verdict::Worse
                }
            }
        }
    }

    pub fn table(&self) -> Table {
        let mut t = Table::new(&[
            ("metric", false),
            ("A", true),
            ("B", true),
            ("change", true),
            ("p", true),
            ("B vs A", false),
        ]);
        for row in &self.rows {
            let verdict = match self.verdict(row) {
                Verdict::Better => "better",
                Verdict::Worse => "worse",
                Verdict::WithinNoise => "within noise",
                Verdict::Untested => "not tested",
            };
            t.rows.push(vec![
                Cell::Text(row.metric.clone()),
                Cell::Stat(Some(row.a)),
                Cell::Stat(Some(row.b)),
                Cell::Percent(row.change),
                Cell::Num(row.test.map(|w| w.p)),
                Cell::Text(verdict.into()),
            ]);
        }
        t.notes = self.notes.clone();
        t
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

type Series = Vec<(String, Better, Vec<f64>)>;

/// Each metric's values across runs, in the order the metrics first appear.
fn collect(runs: &[&RunResult]) -> Series {
    let mut out: Series = Vec::new();
    for run in runs {
        for (name, better, v) in metrics(run) {
            match out.iter_mut().find(|(n, _, _)| *n == name) {
                Some((_, _, xs)) => xs.push(v),
                None => out.push((name, better, vec![v])),
            }
        }
    }
    out
}

impl Selection {
    fn runs_results(&self) -> Vec<&RunResult> {
        self.runs.iter().map(|r| &r.result).collect()
    }
}

//! `tankbench compare A B`: every metric side by side, the change from A to B
//! with its confidence interval, and whether that change is larger than the
//! run-to-run noise (Welch's t-test over the repeats of each side).
//!
//! The intervals are at confidence 1 − alpha (95 % by default), so they agree
//! with the verdict: the difference's interval (Welch) and the change's
//! interval (Fieller, see [`fieller_change_interval`]) exclude "no change"
//! exactly when the test says "better" or "worse".

use crate::group::workload_name;
use crate::select::Selection;
use crate::stats::{
    confidence_of, fieller_change_interval, welch_difference_interval, welch_t_test,
    ChangeInterval, DifferenceInterval, NoChangeInterval, Summary, Welch,
};
use crate::table::{Cell, Table};
use fileio::result::{LatencyKey, RunResult};
use fileio::terminal::Tone;
use fileio::text::trim_float;
use std::collections::BTreeSet;

/// Significance level: a change counts as larger than the noise when p < this.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// Which direction of a metric is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
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
    /// mean B − mean A with Welch's interval; None when a side has fewer than
    /// two samples.
    pub difference: Option<DifferenceInterval>,
    /// The change with Fieller's interval, or why there is none.
    pub change_interval: Result<ChangeInterval, NoChangeInterval>,
    /// When A and B are one prediction each with an interval for this
    /// figure: A's and B's (low, high). Predictions are compared by these
    /// (apart or overlapping), not tested as single runs.
    pub predicted: Option<((f64, f64), (f64, f64))>,
}

/// In JSON, the names [`Verdict::json_name`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// B is better than A by more than the noise.
    Better,
    /// B is worse than A by more than the noise.
    Worse,
    /// The difference is within the noise (p >= alpha).
    WithinNoise,
    /// Too few samples to test.
    #[serde(rename = "not_tested")]
    Untested,
    /// Two predictions whose intervals overlap: the models' uncertainty
    /// covers the difference.
    IntervalsOverlap,
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

/// `--repeat=N`'s closing summary, as hyperfine closes its runs: per figure
/// the mean ± sd and the min–max over the N runs (the figures `compare`
/// compares). A figure zero in every run (write MiB/s of a read test) is
/// left out.
pub fn repeats_table(results: &[RunResult]) -> Table {
    let mut series: Vec<(String, Vec<f64>)> = Vec::new();
    for run in results {
        for (name, _, value) in metrics(run) {
            match series.iter_mut().find(|(n, _)| *n == name) {
                Some((_, values)) => values.push(value),
                None => series.push((name, vec![value])),
            }
        }
    }
    let mut t = Table::new(&[
        ("figure", false),
        ("mean ± sd", true),
        ("min", true),
        ("max", true),
    ]);
    for (name, values) in series {
        if values.iter().all(|v| *v == 0.0) {
            continue;
        }
        // A latency under 1 ms in every run reads in µs (3.24, not 0.00324).
        let (name, values) = match name.strip_suffix(" ms") {
            Some(stem) if values.iter().all(|v| *v < 1.0) => (
                format!("{stem} µs"),
                values.iter().map(|v| v * 1000.0).collect::<Vec<f64>>(),
            ),
            _ => (name, values),
        };
        let Some(s) = Summary::of(&values) else {
            continue;
        };
        t.rows.push(vec![
            Cell::Text(name),
            Cell::Stat(Some(s)),
            Cell::Num(Some(s.min)),
            Cell::Num(Some(s.max)),
        ]);
    }
    t.notes.push(format!(
        "Over {} runs (--repeat); sd is the sample standard deviation.",
        results.len()
    ));
    t
}

impl Comparison {
    pub fn new(a: &Selection, b: &Selection, alpha: f64) -> Comparison {
        let (ma, mb) = (collect(&a.runs_results()), collect(&b.runs_results()));
        let confidence = confidence_of(alpha);
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
                difference: welch_difference_interval(xs, ys, confidence),
                change_interval: fieller_change_interval(xs, ys, confidence),
                predicted: predicted_intervals(a, b, name),
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
        if rows.iter().any(|r| r.predicted.is_some()) {
            notes.push(
                "Predictions: compared by their intervals over the uncertain parameters; \"better\" or \"worse\" when the intervals lie apart, \"intervals overlap\" when the models' uncertainty covers the difference."
                    .into(),
            );
        } else if n_a < 2 && n_b < 2 {
            notes.push(
                "One sample each: no significance and no confidence interval. A single \
                 difference may be noise; record repeats (tankbench fileio ... run --repeat=5 \
                 --save) to test it."
                    .into(),
            );
        } else if n_a < 2 || n_b < 2 {
            notes.push(format!(
                "A has {n_a} run{}, B has {n_b}: no significance and no confidence interval \
                 (both need at least 2 runs on each side to estimate the noise).",
                plural(n_a)
            ));
        } else {
            notes.push(format!(
                "Significance: Welch's t-test over the repeats, two-sided, alpha = {alpha}."
            ));
            notes.push(format!(
                "In parentheses: the change's {} confidence interval (Fieller's method for a \
                 ratio of means, with Welch's degrees of freedom); it excludes 0 exactly when \
                 p < alpha.",
                percent_text(confidence)
            ));
            let unbounded: Vec<&str> = rows
                .iter()
                .filter(|r| r.change_interval == Err(NoChangeInterval::BaselineNearZero))
                .map(|r| r.metric.as_str())
                .collect();
            if !unbounded.is_empty() {
                notes.push(format!(
                    "No interval for {}: A's mean is within the noise of 0, so the ratio B/A \
                     is not bounded.",
                    unbounded.join(", ")
                ));
            }
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
        if let Some(((a_low, a_high), (b_low, b_high))) = row.predicted {
            if a_high < b_low || b_high < a_low {
                let higher = b_low > a_high;
                return if higher == (row.better == Better::Higher) {
                    Verdict::Better
                } else {
                    Verdict::Worse
                };
            }
            return Verdict::IntervalsOverlap;
        }
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

    /// The level of every interval: 1 − alpha.
    pub fn confidence(&self) -> f64 {
        confidence_of(self.alpha)
    }

    pub fn table(&self) -> Table {
        let change = format!("change ({} CI)", percent_text(self.confidence()));
        let mut t = Table::new(&[
            ("metric", false),
            ("A", true),
            ("B", true),
            (change.as_str(), true),
            ("p", true),
            ("B vs A", false),
        ]);
        for row in &self.rows {
            t.rows.push(vec![
                Cell::Text(row.metric.clone()),
                Cell::Stat(Some(row.a)),
                Cell::Stat(Some(row.b)),
                Cell::PercentInterval(
                    row.change,
                    row.change_interval.ok().map(|ci| (ci.low, ci.high)),
                ),
                Cell::Num(row.test.map(|w| w.p)),
                match self.verdict(row) {
                    Verdict::Better => Cell::Toned(Verdict::Better.text().into(), Tone::Better),
                    Verdict::Worse => Cell::Toned(Verdict::Worse.text().into(), Tone::Worse),
                    other => Cell::Text(other.text().into()),
                },
            ]);
        }
        t.notes = self.notes.clone();
        t
    }

    /// `compare --format=json`: every row with both sides' summaries, the
    /// difference B − A and the change (B − A) / A with their intervals, the
    /// test and the verdict. Absent values are `null`; `no_interval` says why
    /// a row has no interval. Documented in docs/report.md.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.document()).expect("a comparison always serializes")
            + "\n"
    }

    /// The document `to_json` writes.
    pub fn document(&self) -> CompareDocument {
        let confidence = self.confidence();
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let ci = r.change_interval.ok();
                let no_interval = match r.change_interval {
                    Ok(_) => None,
                    Err(NoChangeInterval::TooFewSamples) => {
                        Some("a side has fewer than 2 runs: its noise is unknown")
                    }
                    Err(NoChangeInterval::BaselineNearZero) => {
                        Some("A's mean is within the noise of 0: the ratio is not bounded")
                    }
                };
                CompareRowDocument {
                    metric: r.metric.clone(),
                    better: r.better,
                    a: r.a,
                    b: r.b,
                    difference: r.b.mean - r.a.mean,
                    ci_low: r.difference.map(|d| d.low),
                    ci_high: r.difference.map(|d| d.high),
                    df: r.difference.map(|d| d.df),
                    confidence,
                    method: "welch",
                    change: r.change,
                    change_ci_low: ci.map(|c| c.low),
                    change_ci_high: ci.map(|c| c.high),
                    change_method: "fieller",
                    no_interval,
                    t: r.test.map(|w| w.t),
                    p: r.test.map(|w| w.p),
                    verdict: self.verdict(r),
                    a_predicted_low: r.predicted.map(|(a, _)| a.0),
                    a_predicted_high: r.predicted.map(|(a, _)| a.1),
                    b_predicted_low: r.predicted.map(|(_, b)| b.0),
                    b_predicted_high: r.predicted.map(|(_, b)| b.1),
                }
            })
            .collect();
        CompareDocument {
            kind: COMPARE_KIND,
            schema_version: 1,
            a: Side {
                name: self.a_name.clone(),
                runs: self.n_a,
            },
            b: Side {
                name: self.b_name.clone(),
                runs: self.n_b,
            },
            alpha: self.alpha,
            confidence,
            rows,
            notes: self.notes.clone(),
        }
    }
}

/// The `kind` of a compare document.
pub const COMPARE_KIND: &str = "tankbench compare";

/// `compare --format=json` (docs/report.md; its JSON Schema is
/// docs/compare.schema.json, derived from this type).
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct CompareDocument {
    /// Always "tankbench compare".
    pub kind: &'static str,
    pub schema_version: u32,
    pub a: Side,
    pub b: Side,
    /// The significance level of the verdicts.
    pub alpha: f64,
    /// 1 − alpha: the confidence of every interval.
    pub confidence: f64,
    pub rows: Vec<CompareRowDocument>,
    pub notes: Vec<String>,
}

/// One side of a comparison: what was named and how many runs it found.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Side {
    pub name: String,
    pub runs: usize,
}

/// One metric of a comparison; absent figures are `null`.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct CompareRowDocument {
    pub metric: String,
    pub better: Better,
    pub a: Summary,
    pub b: Summary,
    /// mean B − mean A.
    pub difference: f64,
    /// Welch's interval of the difference.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: Option<f64>,
    pub confidence: f64,
    /// Always "welch".
    pub method: &'static str,
    /// (B − A) / A; null when A is 0.
    pub change: Option<f64>,
    /// Fieller's interval of the change.
    pub change_ci_low: Option<f64>,
    pub change_ci_high: Option<f64>,
    /// Always "fieller".
    pub change_method: &'static str,
    /// Why the change has no interval, when it has none.
    pub no_interval: Option<&'static str>,
    pub t: Option<f64>,
    pub p: Option<f64>,
    pub verdict: Verdict,
    /// With one prediction on each side: A's and B's prediction intervals.
    pub a_predicted_low: Option<f64>,
    pub a_predicted_high: Option<f64>,
    pub b_predicted_low: Option<f64>,
    pub b_predicted_high: Option<f64>,
}

impl Verdict {
    /// The words of the table's "B vs A" column.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::WithinNoise => "within noise",
            Verdict::Untested => "not tested",
            Verdict::IntervalsOverlap => "intervals overlap",
        }
    }

    /// The name in `compare --format=json`.
    pub fn json_name(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::WithinNoise => "within_noise",
            Verdict::Untested => "not_tested",
            Verdict::IntervalsOverlap => "intervals_overlap",
        }
    }
}

/// 0.95 -> "95%", 0.999 -> "99.9%" (rounded to a tenth of a percent, so
/// 1 − 0.05 does not print as 95.00000000000001).
fn percent_text(fraction: f64) -> String {
    format!("{}%", trim_float((fraction * 1000.0).round() / 10.0))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The name a prediction's interval has for a compared metric.
fn interval_figure(metric: &str) -> Option<&'static str> {
    Some(match metric {
        "read MiB/s" => "read_mib_per_s",
        "write MiB/s" => "written_mib_per_s",
        "reads/s" => "reads_per_s",
        "writes/s" => "writes_per_s",
        "fsyncs/s" => "fsyncs_per_s",
        "event latency mean ms" => "event_mean_ms",
        _ => return None,
    })
}

/// A's and B's interval of `metric` when each side is one prediction that
/// carries one.
fn predicted_intervals(
    a: &Selection,
    b: &Selection,
    metric: &str,
) -> Option<((f64, f64), (f64, f64))> {
    let figure = interval_figure(metric)?;
    let one = |sel: &Selection| -> Option<(f64, f64)> {
        let [run] = sel.runs.as_slice() else {
            return None;
        };
        let i = run.result.prediction.as_ref()?.figures.get(figure)?;
        Some((i.low, i.high))
    };
    Some((one(a)?, one(b)?))
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

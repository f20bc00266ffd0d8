//! How a prediction from a measurement reads: one configuration as a table
//! of its figures (the baseline as measured, the simulated change, the
//! prediction), or a table of configurations with the baseline marked,
//! both through `report::table` (one model, many renderers).

use fileio::result::RunResult;
use report::table::{fmt_num, Cell, Column, Table};

use crate::baseline::predict::Anchored;
use crate::baseline::{Baseline, Figure};
use crate::matrix::MatrixCell;
use crate::system::SystemModel;
use crate::SimError;

/// One configuration in words: layout, log device, link, client (the
/// system's names may come from someone else's file: each is one field,
/// never a line break or a terminal sequence).
pub fn configuration_text(model: &SystemModel, threads: u32) -> Result<String, SimError> {
    let sys = model.resolve()?;
    let log = model.log_words(&sys);
    let link = match sys.link {
        Some(l) if sys.protocol.remote() => l.name(),
        _ => "none (local)".to_string(),
    };
    Ok(format!(
        "layout {}, log {log}, link {link}, client {}; {threads} thread{}",
        sys.shape.name(),
        sys.protocol.name(),
        if threads == 1 { "" } else { "s" }
    ))
}

/// The first line of every prediction from a measurement.
const HEADLINE: &str =
    "PREDICTION FROM A MEASUREMENT (the baseline's measured figures times the simulated change; not measured)";

/// The baseline's line: its name, when it ran, on what.
fn baseline_line(baseline: &Baseline, a: &SystemModel) -> Result<String, SimError> {
    let when = match baseline.runs.as_slice() {
        [first, .., last] => format!(
            "{} runs measured {} to {}, each figure their median",
            baseline.runs.len(),
            report::escape::terminal_field(&first.started_at),
            report::escape::terminal_field(&last.started_at)
        ),
        _ => format!(
            "measured {}",
            report::escape::terminal_field(&baseline.measured.started_at)
        ),
    };
    Ok(format!(
        "baseline:  {} ({when}): {}",
        report::escape::terminal_field(&baseline.id),
        configuration_text(a, baseline.measured.workload.threads)?
    ))
}

/// A ratio as a multiplier: `x1.52`.
fn times(r: f64) -> String {
    format!("x{}", fmt_num(r))
}

/// The report of one configuration `b` anchored to `baseline` (whose
/// configuration is `a`): a line for each, then one row per figure with
/// the baseline as measured, the change B/A and the prediction (with their
/// 80 % intervals), and the notes.
pub fn one(
    baseline: &Baseline,
    a: &SystemModel,
    b: &SystemModel,
    anchored: &Anchored,
) -> Result<String, SimError> {
    let Some(r) = anchored.results.first() else {
        return Err(SimError::CellLost);
    };
    let mut s = format!("{HEADLINE}\n{}\n", baseline_line(baseline, a)?);
    s.push_str(&format!(
        "what-if:   {}{}\n\n",
        configuration_text(b, r.workload.threads)?,
        if anchored.baseline_cell.is_some() {
            " (the baseline's own configuration: its figures as measured)"
        } else {
            ""
        }
    ));
    let interval = r.prediction.as_ref().map(|p| p.confidence * 100.0);
    let change = match interval {
        Some(c) => format!("change B/A ({c:.0} % interval)"),
        None => "change B/A".to_string(),
    };
    let predicted = match interval {
        Some(c) => format!("predicted ({c:.0} % interval)"),
        None => "predicted".to_string(),
    };
    let mut t = Table::new(&[
        ("figure", false),
        ("baseline (measured)", true),
        (change.as_str(), false),
        (predicted.as_str(), true),
    ]);
    let Some(anchor) = &r.anchor else {
        return Err(SimError::CellLost);
    };
    for f in baseline.figures() {
        let Some(a) = anchor.figures.get(&f.name()) else {
            continue;
        };
        // A figure the workload has none of (reads/s of a write run).
        if a.measured <= 0.0 && (a.ratio - 1.0).abs() < 1e-12 {
            continue;
        }
        let ratio = match a.ratio_interval {
            Some(i) => format!("{} ({}–{})", times(a.ratio), times(i.low), times(i.high)),
            None => times(a.ratio),
        };
        let range = r
            .prediction
            .as_ref()
            .and_then(|p| p.figures.get(&f.name()))
            .map(|i| (i.low, i.high));
        // The result's own figure: a percentile kept above the one below it.
        let predicted = f.of(r).unwrap_or(a.measured * a.ratio);
        t.rows.push(vec![
            Cell::Text(f.label()),
            Cell::Num(Some(a.measured)),
            Cell::Text(ratio),
            Cell::Range(Some(predicted), range),
        ]);
    }
    t.notes = notes(baseline, anchored, true);
    s.push_str(&t.to_terminal());
    Ok(s)
}

/// The notes under an anchored table: what the interval is, what moves it
/// most, and how far the model is from the box outright.
fn notes(baseline: &Baseline, anchored: &Anchored, movers: bool) -> Vec<String> {
    let mut notes = Vec::new();
    let first = anchored.results.iter().find_map(|r| r.prediction.as_ref());
    if let Some(p) = first {
        notes.push(format!(
            "The change: the median, and its interval the {:.0} % spread (10th to 90th percentile), over {} samples of the model's uncertain parameters, each sample simulated for the baseline's configuration and the what-if with the same draws and seed (docs/what-if.md); the interval widened by the model's structural error where the configuration changes; on the baseline's own configuration, the spread of a second run of it.",
            p.confidence * 100.0,
            p.samples
        ));
        let names: Vec<String> = anchored
            .results
            .iter()
            .filter(|r| r.anchor.as_ref().is_some_and(|a| !a.is_baseline))
            .filter_map(|r| r.prediction.as_ref())
            .flat_map(|p| p.sensitivity.first())
            .map(|s| s.parameter.clone())
            .fold(Vec::new(), |mut acc, name| {
                if !acc.contains(&name) {
                    acc.push(name);
                }
                acc
            });
        if movers && !names.is_empty() {
            notes.push(format!(
                "Measure this first (moves the change most): {}",
                names.join(", ")
            ));
        }
    }
    let headline = baseline.headline();
    // Several runs: how far apart they came out, the spread the median
    // steadies.
    if baseline.runs.len() > 1 {
        let figures: Vec<String> = baseline
            .runs
            .iter()
            .map(|r| {
                format!(
                    "{} {}",
                    report::escape::terminal_field(&r.id),
                    fmt_num(r.headline)
                )
            })
            .collect();
        notes.push(format!(
            "The baseline is the median of {} runs of its configuration ({}: {}); its own row's interval is still that of one run measured again.",
            baseline.runs.len(),
            headline.label(),
            figures.join(", ")
        ));
    }
    // The model's level against the box: what anchoring corrects.
    if let (Some(m), Some(s)) = (
        headline.of(&baseline.measured),
        headline.of(&anchored.simulated_baseline),
    ) {
        if m > 0.0 && s > 0.0 {
            notes.push(format!(
                "Simulated outright, the baseline's configuration gives {} {}; measured: {} ({:+.0} %). Anchoring keeps the measured level and takes only the change from the model.",
                fmt_num(s),
                headline.label(),
                fmt_num(m),
                (s / m - 1.0) * 100.0
            ));
        }
    }
    notes
}

/// A table of configurations anchored to `baseline`: the matrix table of
/// `cells` (crate::matrix::results_table) with a first column saying which
/// row is the baseline as measured; when no cell is the baseline's own
/// configuration, the baseline is a row of its own, first.
pub fn table(
    workload: &str,
    baseline: &Baseline,
    a: &SystemModel,
    cells: &[MatrixCell],
    anchored: &Anchored,
) -> Result<Table, SimError> {
    let mut t = crate::matrix::results_table(workload, cells, &anchored.results);
    t.columns.insert(
        0,
        Column {
            name: "from".into(),
            numeric: false,
        },
    );
    for (i, row) in t.rows.iter_mut().enumerate() {
        let measured = anchored.baseline_cell == Some(i);
        let mark = if measured {
            "baseline (measured)"
        } else {
            "baseline x change"
        };
        row.insert(0, Cell::Text(mark.into()));
        // The measured figures have no spread of the change.
        if measured {
            for c in row.iter_mut() {
                if let Cell::Range(v, _) = c {
                    *c = Cell::Num(*v);
                }
            }
        }
    }
    if anchored.baseline_cell.is_none() {
        let axes = t.columns.len() - 1 - crate::matrix::FIGURE_COLUMNS.len();
        let mut row = vec![Cell::Text("baseline (measured)".into())];
        row.extend((0..axes).map(|k| {
            Cell::Text(if k == 0 {
                "(its own configuration)".into()
            } else {
                String::new()
            })
        }));
        row.extend(measured_figures(&baseline.measured).map(Cell::Num));
        t.rows.insert(0, row);
    }
    // The matrix's headline names a prediction from a system alone.
    if let Some(first) = t.notes.first_mut() {
        *first = format!("{HEADLINE}; workload: {workload}");
    }
    // The ranges are the change's spread, not the levels': the matrix's
    // own note on them is replaced; its "measure this first" (over the
    // cells' sensitivities, here those of the change) stays.
    t.notes.retain(|n| !n.starts_with("Figures: typical"));
    let mut ours = vec![baseline_line(baseline, a)?];
    ours.extend(notes(baseline, anchored, false));
    let at = 1.min(t.notes.len());
    t.notes.splice(at..at, ours);
    Ok(t)
}

/// The matrix table's figures (crate::matrix::FIGURE_COLUMNS) of a
/// measured run.
fn measured_figures(r: &RunResult) -> [Option<f64>; 7] {
    use crate::baseline::Rate;
    use fileio::result::LatencyKey;
    [
        Figure::Rate(Rate::Reads).of(r),
        Figure::Rate(Rate::Writes).of(r),
        Figure::Rate(Rate::Fsyncs).of(r),
        Figure::Rate(Rate::ReadMib).of(r),
        Figure::Rate(Rate::WrittenMib).of(r),
        Figure::Mean(LatencyKey::Event).of(r),
        Figure::Percentile(LatencyKey::Event, 95.0).of(r),
    ]
}

//! The planner's output: the ranked table (one [`Table`] model, so text,
//! Markdown, CSV and HTML come from the same cells), the recommendation
//! under it, and the `--explain` walkthrough. JSON is the serde form of
//! [`Plan`] itself. The plan is computed in `zfs_model::plan`; this module
//! only shows it.

use zfs_model::estimate::Estimate;
use zfs_model::explain::{across_rule_sets, explain_capacity};
use zfs_model::layout::Layout;
use zfs_model::perf::{Bounds, Figure, Performance, SyncInterval, WorkloadFigures};
use zfs_model::plan::{ranking_prediction, Plan, PlanEntry, PlanRequest};
use zfs_model::reliability::{at_least_one, Reliability};
use zfs_model::units::{group_digits, human_binary, tib};

use crate::table::{Cell, Table};
use fileio::terminal::Width;

fn count(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

fn duration(hours: f64) -> String {
    if hours < 48.0 {
        format!("{hours:.0} h")
    } else {
        format!("{:.0} d", hours / 24.0)
    }
}

fn probability(p: f64) -> String {
    if p >= 0.01 {
        format!("{:.0}%", p * 100.0)
    } else {
        format!("{p:.0e}")
    }
}

/// One column of the ranked table: the key `--columns` names it by, its
/// title, and whether the default view shows it. The default view is the
/// decision in at most 120 columns of a terminal (checked by a test for 24
/// and 200 disks); `--wide` shows every column, with ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanColumn {
    pub key: &'static str,
    pub title: &'static str,
    pub default: bool,
    /// Only when the request names a log device.
    pub needs_log: bool,
    /// Right-aligned as a number (layout names, sizes with units, "2 of
    /// 3"-style words and read/write pairs are text).
    pub numeric: bool,
}

const fn column(key: &'static str, title: &'static str, default: bool) -> PlanColumn {
    PlanColumn {
        key,
        title,
        default,
        needs_log: false,
        numeric: true,
    }
}

/// A column whose cells are words, not one number.
const fn text_column(key: &'static str, title: &'static str, default: bool) -> PlanColumn {
    PlanColumn {
        numeric: false,
        ..column(key, title, default)
    }
}

/// Every column, in table order.
pub const COLUMNS: [PlanColumn; 18] = [
    column("rank", "#", true),
    text_column("layout", "Layout", true),
    column("spares", "Spares", false),
    text_column("size", "SIZE (zpool)", false),
    column("avail", "AVAIL TiB", false),
    column("usable", "Usable TiB", true),
    column("efficiency", "Eff. %", false),
    text_column("survives", "Survives", true),
    text_column("loss", "Loss/yr", true),
    column("resilver", "Resilver h", false),
    column("read", "Read IOPS", true),
    column("write", "Write IOPS", true),
    text_column("seq", "Seq R/W MB/s", false),
    column("commit", "Commit ms", true),
    column("sync_rate", "Sync writes/s", false),
    PlanColumn {
        key: "commit_log",
        title: "Commit ms, log",
        default: true,
        needs_log: true,
        numeric: true,
    },
    PlanColumn {
        key: "sync_rate_log",
        title: "Sync writes/s, log",
        default: false,
        needs_log: true,
        numeric: true,
    },
    column("score", "Score", true),
];

/// Which columns to show.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ColumnChoice {
    /// The default view (at most 120 columns).
    #[default]
    Default,
    /// Every column, with ranges.
    Wide,
    /// These keys, in this order (`--columns=layout,usable,commit`).
    Keys(Vec<String>),
}

impl ColumnChoice {
    /// `--columns` words, checked against [`COLUMNS`]: one line naming the
    /// unknown key and the accepted ones (the caller names the option).
    pub fn parse_keys(text: &str) -> Result<ColumnChoice, String> {
        let mut keys = Vec::new();
        for key in text.split(',').map(str::trim) {
            if !COLUMNS.iter().any(|c| c.key == key) {
                let accepted: Vec<&str> = COLUMNS.iter().map(|c| c.key).collect();
                return Err(format!(
                    "unknown column '{key}'; accepted: {}",
                    accepted.join(", ")
                ));
            }
            if !keys.iter().any(|k| k == key) {
                keys.push(key.to_string());
            }
        }
        Ok(ColumnChoice::Keys(keys))
    }

    fn columns(&self, has_log: bool) -> Vec<PlanColumn> {
        let offered = COLUMNS.iter().filter(|c| has_log || !c.needs_log);
        match self {
            ColumnChoice::Default => offered.filter(|c| c.default).copied().collect(),
            ColumnChoice::Wide => offered.copied().collect(),
            ColumnChoice::Keys(keys) => keys
                .iter()
                .filter_map(|k| COLUMNS.iter().find(|c| c.key == k))
                .filter(|c| has_log || !c.needs_log)
                .copied()
                .collect(),
        }
    }
}

/// A figure with its range in the wide view, its typical value otherwise.
fn estimate_cell(e: &Estimate, ranges: bool) -> Cell {
    if ranges {
        Cell::Range(Some(e.typical), Some((e.low, e.high)))
    } else {
        Cell::Num(Some(e.typical))
    }
}

/// A predicted figure, with its interval when the plan has one: the
/// `typical (low–high)` of `simulate matrix` (CSV: low and high columns).
fn predicted_cell(point: Option<f64>, interval: Option<Bounds>) -> Cell {
    match (point, interval) {
        (Some(v), Some(b)) => Cell::Range(Some(v), Some((b.low, b.high))),
        (point, _) => Cell::Num(point),
    }
}

/// The commit latency of a sync-write prediction: a write and its fsync,
/// what a sync writer waits for per write (not the write() alone).
fn commit_cell(f: Option<&WorkloadFigures>, interval: Option<&SyncInterval>) -> Cell {
    predicted_cell(
        f.map(|f| f.commit_latency_ms),
        interval.map(|i| i.commit_latency_ms),
    )
}

fn sync_rate_cell(f: Option<&WorkloadFigures>, interval: Option<&SyncInterval>) -> Cell {
    predicted_cell(f.map(|f| f.writes_per_s), interval.map(|i| i.writes_per_s))
}

/// Sequential read/write MB/s as one client sees them: over a link, a figure
/// above what one connection carries is cut to that cap and marked `*`, with
/// what the pool could do locally in brackets (`118*/118* (3240/3072)`).
fn sequential_text(perf: &Performance) -> String {
    let read = perf.seq_read_mb_s.estimate.typical;
    let write = perf.seq_write_mb_s.estimate.typical;
    let seen = |pool: f64, cap: Option<f64>| match cap {
        Some(cap) if pool > cap => format!("{cap:.0}*"),
        _ => format!("{pool:.0}"),
    };
    let client = format!(
        "{}/{}",
        seen(read, perf.client_stream_cap_mb_s),
        seen(write, perf.client_stream_cap_mb_s)
    );
    match perf.client_stream_cap_mb_s {
        Some(cap) if read > cap || write > cap => format!("{client} ({read:.0}/{write:.0})"),
        _ => client,
    }
}

/// Whether any row shown has a sequential figure cut by the link.
fn sequential_capped(entries: &[PlanEntry]) -> Option<f64> {
    entries.iter().find_map(|e| {
        let p = &e.performance;
        p.client_stream_cap_mb_s.filter(|cap| {
            p.seq_read_mb_s.estimate.typical > *cap || p.seq_write_mb_s.estimate.typical > *cap
        })
    })
}

/// The cell of `key` for `entry`. Cells stay numbers (CSV gets numbers);
/// which layouts are best in a criterion is said in the table's notes
/// rather than by a mark beside a number.
fn cell(entry: &PlanEntry, key: &str, ranges: bool) -> Cell {
    let perf = &entry.performance;
    let risk = &entry.reliability;
    match key {
        "rank" => Cell::Int(entry.rank as u64),
        "layout" => Cell::Text(entry.layout.clone()),
        "spares" => Cell::Int(u64::from(entry.spares)),
        "size" => Cell::Text(entry.capacity.zpool_size_printed.clone()),
        "avail" => Cell::Num(Some(tib(entry.capacity.avail))),
        "usable" => Cell::Num(Some(tib(entry.usable_bytes))),
        "efficiency" => Cell::Num(Some(entry.space_efficiency * 100.0)),
        "survives" => Cell::Text(format!(
            "{}/{}",
            risk.failures_tolerated, risk.failures_tolerated_best
        )),
        "loss" => {
            let e = &risk.annual_loss_probability;
            Cell::Text(if ranges {
                format!(
                    "{} ({}–{})",
                    probability(e.typical),
                    probability(e.low),
                    probability(e.high)
                )
            } else {
                probability(e.typical)
            })
        }
        "resilver" => estimate_cell(&risk.resilver_hours, ranges),
        "read" => estimate_cell(&perf.random_read_iops.estimate, ranges),
        "write" => estimate_cell(&perf.random_write_iops.estimate, ranges),
        "seq" => Cell::Text(sequential_text(perf)),
        "commit" => commit_cell(perf.predicted.as_ref(), perf.predicted_interval.as_ref()),
        "sync_rate" => sync_rate_cell(perf.predicted.as_ref(), perf.predicted_interval.as_ref()),
        "commit_log" => commit_cell(
            perf.predicted_with_log.as_ref(),
            perf.predicted_with_log_interval.as_ref(),
        ),
        "sync_rate_log" => sync_rate_cell(
            perf.predicted_with_log.as_ref(),
            perf.predicted_with_log_interval.as_ref(),
        ),
        "score" => Cell::Num(Some(entry.scores.overall)),
        other => unreachable!("column {other} is in COLUMNS but has no cell"),
    }
}

/// The layouts best in each criterion, as notes under the table; a
/// criterion where every layout ties says nothing (it does not tell them
/// apart).
fn best_notes(plan: &Plan, shown: usize) -> Vec<String> {
    let best = &plan.best;
    let rows = plan.entries.len();
    let sync_tie = sync_tie_note(plan);
    let mut notes = Vec::new();
    for (name, list) in [
        ("usable space", &best.usable),
        ("reliability", &best.reliability),
        ("random reads", &best.random_read),
        ("random writes", &best.random_write),
        ("sequential", &best.sequential),
        ("sync writes", &best.sync_write),
    ] {
        if name == "sync writes" && sync_tie.is_some() {
            continue;
        }
        if !list.is_empty() && list.len() < rows {
            notes.push(format!("best {name}: {}", name_list(list)));
        }
    }
    if let Some(tie) = sync_tie {
        notes.push(tie);
    }
    if shown < rows {
        notes.push(format!(
            "({} more layouts not shown: --top 0 shows all, --layout picks some)",
            rows - shown
        ));
    }
    notes
}

/// Predicted sync-write rates closer than this fraction of the best are a tie:
/// differences that small are within what the simulator's seeded run of a
/// few thousand events moves by, so "best" would single out noise.
pub const SYNC_TIE_FRACTION: f64 = 0.02;

/// Names listed in a "best …" note before the rest are counted instead: a
/// tie across twenty layouts is one line, not three hundred characters.
const NAMES_LISTED: usize = 5;

/// `a, b, c`, or `a, b, c, d, e and N more (N+5 tie)` past [`NAMES_LISTED`].
fn name_list(names: &[String]) -> String {
    if names.len() <= NAMES_LISTED {
        return names.join(", ");
    }
    format!(
        "{} layouts tie: {} and {} more",
        names.len(),
        names[..NAMES_LISTED].join(", "),
        names.len() - NAMES_LISTED
    )
}

/// When every layout's predicted sync writes are within
/// [`SYNC_TIE_FRACTION`] of each other, the sentence that says so (instead
/// of naming one layout best by a hair).
fn sync_tie_note(plan: &Plan) -> Option<String> {
    let figures: Vec<&WorkloadFigures> = plan
        .entries
        .iter()
        .filter_map(|e| ranking_prediction(&e.performance))
        .collect();
    if plan.entries.len() < 2 || figures.len() < plan.entries.len() {
        return None;
    }
    let fastest = figures.iter().map(|f| f.writes_per_s).fold(0.0, f64::max);
    let slowest = figures
        .iter()
        .map(|f| f.writes_per_s)
        .fold(f64::INFINITY, f64::min);
    if fastest <= 0.0 || (fastest - slowest) / fastest > SYNC_TIE_FRACTION {
        return None;
    }
    let commit_low = figures
        .iter()
        .map(|f| f.commit_latency_ms)
        .fold(f64::INFINITY, f64::min);
    let commit_high = figures
        .iter()
        .map(|f| f.commit_latency_ms)
        .fold(0.0, f64::max);
    let decider = if plan.request.log.is_some() {
        "the log device decides, not the vdevs"
    } else {
        "the vdev layout barely changes them"
    };
    let (rates, commits) = (
        range_text(&count(slowest), &count(fastest)),
        range_text(&format!("{commit_low:.2}"), &format!("{commit_high:.2}")),
    );
    Some(format!(
        "sync writes tie: all within {:.0} % ({rates} writes/s, {commits} ms a commit); {decider}.",
        SYNC_TIE_FRACTION * 100.0,
    ))
}

/// An interval narrower than this fraction of its value is "a hair wide".
const HAIR_WIDE: f64 = 0.01;

/// Whether any shown sync interval has its typical value at one of its ends
/// (the typical run is not a sample, so it can be the extreme), and whether
/// any is a hair wide: both read as mistakes unless a note says why.
fn interval_oddities(entries: &[PlanEntry]) -> (bool, bool) {
    let mut pairs = Vec::new();
    for entry in entries {
        let perf = &entry.performance;
        for (figures, interval) in [
            (perf.predicted.as_ref(), perf.predicted_interval.as_ref()),
            (
                perf.predicted_with_log.as_ref(),
                perf.predicted_with_log_interval.as_ref(),
            ),
        ] {
            if let (Some(f), Some(i)) = (figures, interval) {
                pairs.push((f.commit_latency_ms, i.commit_latency_ms));
                pairs.push((f.writes_per_s, i.writes_per_s));
            }
        }
    }
    oddities(&pairs)
}

/// For (typical, interval) pairs: whether a typical value sits at an end of
/// its interval, and whether an interval is a hair wide.
fn oddities(pairs: &[(f64, Bounds)]) -> (bool, bool) {
    let mut at_an_end = false;
    let mut a_hair_wide = false;
    for (typical, b) in pairs {
        let close = |x: f64| (x - typical).abs() <= typical.abs() * 1e-6;
        // An interval of one value (a baseline's own row, anchored: the
        // measurement) is a hair wide, not a typical value at its end.
        let one_value = close(b.low) && close(b.high);
        at_an_end |= !one_value && (close(b.low) || close(b.high));
        a_hair_wide |= (b.high - b.low) < typical.abs() * HAIR_WIDE;
    }
    (at_an_end, a_hair_wide)
}

/// `low–high`, or one figure when both print alike.
fn range_text(low: &str, high: &str) -> String {
    if low == high {
        low.to_string()
    } else {
        format!("{low}–{high}")
    }
}

/// The ranked table, `top` rows at most (0 = all), with `choice`'s columns.
pub fn table(plan: &Plan, top: usize, choice: &ColumnChoice) -> Table {
    let has_log = plan.request.log.is_some();
    let block = human_binary(plan.entries.first().map(|e| e.block_bytes).unwrap_or(0));
    let columns = choice.columns(has_log);
    let ranges = *choice == ColumnChoice::Wide;
    let interval = plan.entries.iter().find_map(|e| {
        e.performance
            .predicted_interval
            .or(e.performance.predicted_with_log_interval)
    });
    let shows_interval = interval.is_some()
        && columns.iter().any(|c| {
            matches!(
                c.key,
                "commit" | "commit_log" | "sync_rate" | "sync_rate_log"
            )
        });
    // Two sync cells of `typical (low–high)` take 28 more columns; the
    // block size moves from the usable column's title to a note so that
    // the default view still fits 120.
    let short_usable = shows_interval && *choice == ColumnChoice::Default;
    let titles: Vec<String> = columns
        .iter()
        .map(|c| match c.key {
            "usable" if short_usable => "Usable TiB".to_string(),
            "usable" => format!("Usable TiB @{block}"),
            _ => c.title.to_string(),
        })
        .collect();
    let spec: Vec<(&str, bool)> = titles
        .iter()
        .map(String::as_str)
        .zip(columns.iter().map(|c| c.numeric))
        .collect();
    let mut t = Table::new(&spec);
    let shown = if top == 0 {
        plan.entries.len()
    } else {
        top.min(plan.entries.len())
    };
    for entry in &plan.entries[..shown] {
        t.rows
            .push(columns.iter().map(|c| cell(entry, c.key, ranges)).collect());
    }
    t.notes = best_notes(plan, shown);
    // On a narrow terminal the figures a ranking is read for stay longest.
    t.fit.drop_first = [
        "Score",
        "Loss/yr",
        "Read IOPS",
        "Write IOPS",
        "Spares",
        "Eff. %",
        "Resilver h",
    ]
    .map(String::from)
    .to_vec();
    if let (Some(cap), true) = (
        sequential_capped(&plan.entries[..shown]),
        columns.iter().any(|c| c.key == "seq"),
    ) {
        t.notes.push(format!(
            "Seq R/W MB/s: what one client gets; * = cut to the {cap:.0} MB/s one link carries (the pool's own in brackets)."
        ));
    }
    if columns
        .iter()
        .any(|c| matches!(c.key, "commit" | "commit_log"))
    {
        t.notes.push(
            "Commit ms: a 4 KiB write and its fsync, predicted (what each sync writer waits for per write)."
                .to_string(),
        );
    }
    if let (Some(i), true) = (interval, shows_interval) {
        t.notes.push(format!(
            "(low–high): an {:.0} % interval of {} samples of the uncertain parameters, widened by the model's structural error.",
            i.confidence * 100.0,
            i.samples
        ));
        t.notes.push(
            "The same samples and seed on every layout: rows differ by their layouts.".into(),
        );
        let (at_an_end, a_hair_wide) = interval_oddities(&plan.entries[..shown]);
        if at_an_end {
            t.notes.push(
                "A typical value is the run at each parameter's typical value, not the samples' median: it may sit at an end."
                    .into(),
            );
        }
        if a_hair_wide {
            t.notes.push(format!(
                "An interval under {:.0} % wide (e.g. 33.81–33.82): the uncertain parameters barely move that figure.",
                HAIR_WIDE * 100.0
            ));
        }
    }
    if short_usable && columns.iter().any(|c| c.key == "usable") {
        t.notes.push(format!("Usable TiB: of {block} records."));
    }
    t
}

/// Legend, recommendation, per-layout notes and the assumptions behind the
/// figures; printed under the table.
///
/// Lines are wrapped to `width`, or to [`WIDTH`] without a terminal.
pub fn summary(plan: &Plan, top: usize, width: Width) -> String {
    let mut out = String::new();
    let request = &plan.request;
    let w = &plan.weights;
    out.push_str(&format!(
        "Ranked for workload '{}' ({}); weights: usable {}, reliability {}, random read {}, random write {}, sequential {}, sync write {}. Figures are typical values; --wide shows their ranges and every column.\n",
        request.workload.name(),
        request.workload.describe(),
        w.usable,
        w.reliability,
        w.random_read,
        w.random_write,
        w.sequential,
        w.sync_write
    ));

    if let Some(first) = plan.entries.first() {
        out.push_str(&format!("\nRecommendation: {}", first.layout));
        out.push_str(&format!(
            " - {:.2} TiB usable at {} records, survives any {} failure(s), {:.0} random-read IOPS from disk.\n",
            tib(first.usable_bytes),
            human_binary(first.block_bytes),
            first.reliability.failures_tolerated,
            first.performance.random_read_iops.estimate.typical
        ));
        let others = if request.layouts.is_empty() {
            3
        } else {
            plan.entries.len()
        };
        for other in plan
            .entries
            .iter()
            .skip(1)
            .take(others.saturating_sub(1).max(1))
        {
            out.push_str(&format!(
                "  vs {}: {}\n",
                other.layout,
                compare(first, other)
            ));
        }
    }

    if let Some(sentence) = log_device_answer(plan) {
        out.push_str(&format!("\n{sentence}\n"));
    }

    let shown = if top == 0 {
        plan.entries.len()
    } else {
        top.min(plan.entries.len())
    };
    out.push_str(&layout_notes(&plan.entries[..shown]));

    out.push_str(&assumptions(plan));
    out.push_str("  explain any row: tankbench plan ... --explain LAYOUT\n");
    fileio::terminal::wrap(&out, width.limit().unwrap_or(WIDTH))
}

/// The layouts' notes, each text once with the layouts it applies to (a note
/// 20 layouts share is one line naming them, not 20 lines).
fn layout_notes(entries: &[PlanEntry]) -> String {
    let mut grouped: Vec<(&str, Vec<&str>)> = Vec::new();
    for entry in entries {
        for note in &entry.notes {
            match grouped.iter_mut().find(|(text, _)| text == note) {
                Some((_, layouts)) => layouts.push(&entry.layout),
                None => grouped.push((note, vec![&entry.layout])),
            }
        }
    }
    if grouped.is_empty() {
        return String::new();
    }
    let mut out = "\nNotes:\n".to_string();
    for (note, layouts) in grouped {
        out.push_str(&format!("  {}: {note}\n", layouts.join(", ")));
    }
    out
}

/// Commits faster than this factor with the log device make it worth having.
const LOG_WORTH_FACTOR: f64 = 1.5;

/// "Is a log device worth it?" in one sentence, for the recommended layout:
/// its commit with and without the log device when one was given, else how
/// to ask. None when the plan predicted no sync writes.
fn log_device_answer(plan: &Plan) -> Option<String> {
    let first = plan.entries.first()?;
    let perf = &first.performance;
    let without = perf.predicted.as_ref()?;
    let Some(log) = &plan.request.log else {
        return Some(format!(
            "Log device: none given; on {} a sync write waits {:.2} ms for its commit in the pool. Add --log SIZE (e.g. --log 10GB) to see what a separate log device would change.",
            first.layout, without.commit_latency_ms
        ));
    };
    let with = perf.predicted_with_log.as_ref()?;
    let factor = without.commit_latency_ms / with.commit_latency_ms;
    let verdict = if factor >= LOG_WORTH_FACTOR {
        format!("worth it: commits {factor:.1}x faster")
    } else if factor > 1.0 {
        format!("barely worth it: commits only {factor:.2}x faster")
    } else {
        "not worth it: commits no faster".to_string()
    };
    Some(format!(
        "Log device ({} {}): {verdict} on {} ({:.2} ms a commit with it, {:.2} ms without; {} vs {} sync writes/s).",
        log_size(log.bytes),
        log.class.name(),
        first.layout,
        with.commit_latency_ms,
        without.commit_latency_ms,
        count(with.writes_per_s),
        count(without.writes_per_s)
    ))
}

/// A log device's size as it was asked for: a log is sold and typed in
/// decimal units (10GB), anything else in binary ones.
pub fn log_size(bytes: u64) -> String {
    if bytes.is_multiple_of(1_000_000_000) {
        format!("{} GB", bytes / 1_000_000_000)
    } else {
        human_binary(bytes)
    }
}

/// The widest line the default output prints without a terminal (in a
/// pipe): the width of a wide terminal, 120 columns.
pub const WIDTH: usize = 120;

/// One line comparing the recommended layout with another.
pub fn compare(a: &PlanEntry, b: &PlanEntry) -> String {
    let ratio = |x: f64, y: f64| {
        if y <= 0.0 {
            "n/a".to_string()
        } else {
            let r = x / y;
            if r >= 1.0 {
                format!("x{r:.1}")
            } else {
                format!("{:+.0}%", (r - 1.0) * 100.0)
            }
        }
    };
    let pa = &a.performance;
    let pb = &b.performance;
    let mut parts = vec![
        format!(
            "random reads {}",
            ratio(
                pa.random_read_iops.estimate.typical,
                pb.random_read_iops.estimate.typical
            )
        ),
        format!(
            "usable {}",
            ratio(a.usable_bytes as f64, b.usable_bytes as f64)
        ),
        format!(
            "survives {} vs {} failures",
            a.reliability.failures_tolerated, b.reliability.failures_tolerated
        ),
        format!(
            "loss/yr {} vs {}",
            probability(a.reliability.annual_loss_probability.typical),
            probability(b.reliability.annual_loss_probability.typical)
        ),
        format!(
            "resilver {} vs {}",
            duration(a.reliability.resilver_hours.typical),
            duration(b.reliability.resilver_hours.typical)
        ),
    ];
    if let (Some(sa), Some(sb)) = (ranking_prediction(pa), ranking_prediction(pb)) {
        parts.push(format!(
            "sync writes {}/s vs {}/s ({:.2} vs {:.2} ms a commit)",
            count(sa.writes_per_s),
            count(sb.writes_per_s),
            sa.commit_latency_ms,
            sb.commit_latency_ms
        ));
    }
    parts.join(", ")
}

fn figure_lines(name: &str, figure: &Figure) -> String {
    let e = &figure.estimate;
    let mut out = format!(
        "  {name}: {} {} (range {} .. {})\n",
        count(e.typical),
        figure.unit,
        count(e.low),
        count(e.high)
    );
    for a in &figure.assumptions {
        out.push_str(&format!("      - {a}\n"));
    }
    out
}

/// The predicted workload of `--explain`: without and with the log device.
fn predicted_lines(perf: &Performance, assumptions: &[String]) -> String {
    let mut out = String::new();
    for (name, f, interval) in [
        (
            "predicted workload, no log device",
            perf.predicted.as_ref(),
            perf.predicted_interval.as_ref(),
        ),
        (
            "predicted workload, with log device",
            perf.predicted_with_log.as_ref(),
            perf.predicted_with_log_interval.as_ref(),
        ),
    ] {
        if let Some(f) = f {
            out.push_str(&format!(
                "  {name}: {} writes/s, {:.2} ms each with its fsync ({:.2} ms the write alone), {} reads/s; {:.2} MiB/s read, {:.2} MiB/s written; event latency {:.2} ms mean{}\n",
                count(f.writes_per_s),
                f.commit_latency_ms,
                f.write_latency_ms,
                count(f.reads_per_s),
                f.read_mib_per_s,
                f.write_mib_per_s,
                f.event_latency_ms,
                f.event_latency_p95_ms
                    .map(|p| format!(", {p:.2} ms p95"))
                    .unwrap_or_default()
            ));
        }
        if let (Some(_), Some(i)) = (f, interval) {
            out.push_str(&format!(
                "  {name}, {:.0} % interval of {} samples: {}-{} writes/s, {:.2}-{:.2} ms a commit\n",
                i.confidence * 100.0,
                i.samples,
                count(i.writes_per_s.low),
                count(i.writes_per_s.high),
                i.commit_latency_ms.low,
                i.commit_latency_ms.high
            ));
        }
    }
    if let Some(why) = &perf.prediction_note {
        out.push_str(&format!("  predicted workload: {why}\n"));
    }
    for a in assumptions {
        out.push_str(&format!("      - {a}\n"));
    }
    out
}

/// The `--explain` text for `entry` (built from `layout`).
pub fn explain(plan: &Plan, entry: &PlanEntry, layout: &Layout) -> String {
    let request = &plan.request;
    let disks: Vec<String> = request
        .groups
        .iter()
        .map(|g| format!("{}x{}", g.count, g.label))
        .collect();
    let mut out = format!(
        "{} on {} ({} rules, ashift {}), {} hot spare(s)\n",
        entry.layout,
        disks.join(" + "),
        request.capacity.rules.name(),
        request.capacity.ashift,
        entry.spares
    );
    for (i, step) in explain_capacity(&request.groups, layout, &entry.capacity)
        .iter()
        .enumerate()
    {
        out.push_str(&format!("\n{}. {}\n", i + 1, step.title));
        for line in &step.lines {
            out.push_str(&format!("   {line}\n"));
        }
    }

    out.push_str(&rule_sets_table(request, layout));

    out.push_str(&risk_lines(request, &entry.reliability));

    let perf = &entry.performance;
    out.push_str("\nPerformance:\n");
    out.push_str(&figure_lines("random read", &perf.random_read_iops));
    out.push_str(&figure_lines("random write", &perf.random_write_iops));
    out.push_str(&figure_lines("sequential read", &perf.seq_read_mb_s));
    out.push_str(&figure_lines("sequential write", &perf.seq_write_mb_s));
    out.push_str(&predicted_lines(perf, &plan.prediction_assumptions));
    if !entry.notes.is_empty() {
        out.push_str("\nNotes:\n");
        for note in &entry.notes {
            out.push_str(&format!("  {note}\n"));
        }
    }
    out
}

/// The assumptions behind the figures, one line per topic.
fn assumptions(plan: &Plan) -> String {
    let request = &plan.request;
    let mut out = String::new();
    out.push_str("\nAssumptions:\n");
    for group in &request.groups {
        let p = &group.perf;
        out.push_str(&format!(
            "  disks: {} x {} {} - AFR {:.2}%/yr, {:.0} MB/s ({:.0}-{:.0}), {:.0} IOPS ({:.0}-{:.0}), UER {:.0e}/bit\n",
            group.count,
            group.label,
            group.class.name(),
            p.afr * 100.0,
            p.seq_mb_s.typical,
            p.seq_mb_s.low,
            p.seq_mb_s.high,
            p.random_iops.typical,
            p.random_iops.low,
            p.random_iops.high,
            p.uer_per_bit
        ));
    }
    out.push_str(&format!(
        "  capacity: {} rules, ashift {}, {}; SIZE and AVAIL are what zpool list / zfs get available+used show for an empty pool\n",
        request.capacity.rules.name(),
        request.capacity.ashift,
        request.capacity.partitioning.describe()
    ));
    out.push_str(&format!(
        "  risk: independent failures only (a floor; correlated failures dominate in practice); pool {:.0}% full; {}\n",
        request.fill * 100.0,
        if request.spares > 0 {
            "hot spare starts the resilver at once".to_string()
        } else {
            format!("{:.0} h to replace a disk unless the layout leaves a spare", request.replace_hours)
        }
    ));
    out.push_str("  resilver: low = data laid out sequentially, high = one random read per block piece (old, fragmented pool)\n");
    if let Some(first) = plan.entries.first() {
        let perf = &first.performance;
        for line in &plan.prediction_assumptions {
            out.push_str(&format!("  sync writes: {line}\n"));
        }
        if let Some(why) = &perf.prediction_note {
            out.push_str(&format!("  sync writes: {why}\n"));
        }
        out.push_str(&format!("  {}\n", request.protocol.sync_semantics()));
        if let Some(cap) = perf.client_stream_cap_mb_s {
            out.push_str(&format!(
                "  streaming: one client connection gets at most {cap:.0} MB/s over the link; every layout here exceeds that locally"
            ));
            if first.performance.seq_write_mb_s.estimate.typical < cap {
                out.push_str(" (not all: see Seq R/W)");
            }
            out.push('\n');
        }
    }
    out
}

/// SIZE and AVAIL of `layout` under every rule set, as a table.
fn rule_sets_table(request: &PlanRequest, layout: &Layout) -> String {
    let mut table = Table::new(&[
        ("rule set", false),
        ("SIZE", false),
        ("SIZE bytes", true),
        ("AVAIL bytes", true),
        ("AVAIL TiB", true),
    ]);
    for (rules, c) in across_rule_sets(&request.groups, layout, &request.capacity) {
        table.rows.push(vec![
            Cell::Text(rules.describe().to_string()),
            Cell::Text(c.zpool_size_printed.clone()),
            Cell::Text(group_digits(c.zpool_size as u128)),
            Cell::Text(group_digits(c.avail as u128)),
            Cell::Text(format!("{:.3}", tib(c.avail))),
        ]);
    }
    format!(
        "\nThe same layout under each rule set:\n{}",
        table.to_terminal()
    )
}

/// The risk part of `--explain`: tolerance, kill probabilities, resilver, MTTDL and UREs.
fn risk_lines(request: &PlanRequest, risk: &Reliability) -> String {
    let mut out = String::new();
    out.push_str("\nRisk:\n");
    out.push_str(&format!(
        "  survives any {} failure(s); at best {}\n",
        risk.failures_tolerated, risk.failures_tolerated_best
    ));
    for (f, p) in &risk.kill_probability {
        out.push_str(&format!(
            "  {f} simultaneous failures lose the pool with probability {p:.3}\n"
        ));
    }
    out.push_str(&format!(
        "  resilver of one disk at {:.0}% fill: {} (range {} - {})\n",
        request.fill * 100.0,
        duration(risk.resilver_hours.typical),
        duration(risk.resilver_hours.low),
        duration(risk.resilver_hours.high)
    ));
    out.push_str(&format!(
        "  MTTDL {:.2e} h (range {:.1e} - {:.1e}); annual loss probability {:.1e} (range {:.1e} - {:.1e}), independent-failure floor\n",
        risk.mttdl_hours.typical,
        risk.mttdl_hours.low,
        risk.mttdl_hours.high,
        risk.annual_loss_probability.typical,
        risk.annual_loss_probability.low,
        risk.annual_loss_probability.high
    ));
    if let Some(ure) = risk.ure_expected_at_last_redundancy {
        out.push_str(&format!(
            "  a resilver with no redundancy left meets {ure:.2} unrecoverable read errors on average (P(>=1) = {:.0}%); each costs a block or file, not the pool\n",
            at_least_one(ure) * 100.0
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_that_read_as_mistakes_are_noticed() {
        let b = |low, high| Bounds { low, high };
        // The cells: 32.86 (30.53–32.86) and 33.82 (33.81–33.82).
        assert_eq!(oddities(&[(32.86, b(30.53, 32.86))]), (true, false));
        assert_eq!(oddities(&[(33.82, b(33.81, 33.83))]), (false, true));
        assert_eq!(oddities(&[(33.17, b(32.28, 35.73))]), (false, false));
        assert_eq!(oddities(&[(18.48, b(18.48, 18.48))]), (false, true));
    }
}

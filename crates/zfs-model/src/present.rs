//! Text output of the planner: the ranked table, the recommendation, and the
//! `--explain` walkthrough. JSON output is the serde form of [`Plan`].

use comfy_table::{presets, Cell, CellAlignment, ContentArrangement, Table};

use crate::estimate::Estimate;
use crate::explain::{across_rule_sets, explain_capacity};
use crate::layout::Layout;
use crate::perf::{Figure, Performance, WorkloadFigures};
use crate::plan::{ranking_prediction, Plan, PlanEntry, PlanRequest};
use crate::reliability::{at_least_one, Reliability};
use crate::units::{human_binary, tib};

const BEST_MARK: &str = " *";

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

fn ranged(e: &Estimate, fmt: impl Fn(f64) -> String) -> String {
    format!("{}\n{}..{}", fmt(e.typical), fmt(e.low), fmt(e.high))
}

fn mark(text: String, best: bool) -> String {
    if !best {
        return text;
    }
    match text.split_once('\n') {
        Some((first, rest)) => format!("{first}{BEST_MARK}\n{rest}"),
        None => format!("{text}{BEST_MARK}"),
    }
}

/// Whether `layout` is best in a column; a column where every layout ties
/// marks nothing (the criterion does not tell them apart).
fn is_best(list: &[String], layout: &str, rows: usize) -> bool {
    list.len() < rows && list.iter().any(|l| l == layout)
}

/// The ranked table, `top` rows at most (0 = all).
pub fn table(plan: &Plan, top: usize) -> String {
    let block = human_binary(plan.entries.first().map(|e| e.block_bytes).unwrap_or(0));
    let has_log = plan.request.log.is_some();
    let header = table_header(&block, has_log);

    let mut table = Table::new();
    table
        .load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);

    let best = &plan.best;
    let rows = if top == 0 {
        plan.entries.len()
    } else {
        top.min(plan.entries.len())
    };
    for entry in &plan.entries[..rows] {
        let row = table_row(plan, entry, has_log);
        table.add_row(row);
    }
    for index in [0usize, 2, 3, 4, 5, 6, 7, 10, 11, 12] {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = table.to_string();
    out.push('\n');
    if plan.entries.len() > 1 && best.sync_write.len() == plan.entries.len() {
        out.push_str("Sync 4K writes take the same time on every layout here: the log device decides, not the vdevs.\n");
    }
    if rows < plan.entries.len() {
        out.push_str(&format!(
            "({} more layouts not shown: --top 0 shows all, --layout picks some)\n",
            plan.entries.len() - rows
        ));
    }
    out
}

/// Legend, recommendation, per-layout notes and the assumptions behind the
/// figures; printed under the table.
pub fn summary(plan: &Plan, top: usize) -> String {
    let mut out = String::new();
    let request = &plan.request;
    let w = &plan.weights;
    out.push_str(&format!(
        "* best in column. Figures: typical on the first line, low-high range below. Ranked for workload '{}' ({}); weights: usable {}, reliability {}, random read {}, random write {}, sequential {}, sync write {}.\n",
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

    let shown = if top == 0 {
        plan.entries.len()
    } else {
        top.min(plan.entries.len())
    };
    let noted: Vec<&PlanEntry> = plan.entries[..shown]
        .iter()
        .filter(|e| !e.notes.is_empty())
        .collect();
    if !noted.is_empty() {
        out.push_str("\nNotes:\n");
        for entry in noted {
            for note in &entry.notes {
                out.push_str(&format!("  {}: {}\n", entry.layout, note));
            }
        }
    }

    out.push_str(&assumptions(plan));
    out.push_str("  explain any row: tankbench plan ... --explain LAYOUT\n");
    out
}

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
            "sync writes {}/s vs {}/s ({:.2} vs {:.2} ms)",
            count(sa.writes_per_s),
            count(sb.writes_per_s),
            sa.write_latency_ms,
            sb.write_latency_ms
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
    for (name, f) in [
        ("predicted workload, no log device", perf.predicted.as_ref()),
        (
            "predicted workload, with log device",
            perf.predicted_with_log.as_ref(),
        ),
    ] {
        if let Some(f) = f {
            out.push_str(&format!(
                "  {name}: {} writes/s at {:.2} ms each, {} reads/s; {:.2} MiB/s read, {:.2} MiB/s written; event latency {:.2} ms mean{}\n",
                count(f.writes_per_s),
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

/// Column titles of the ranked table.
fn table_header(block: &str, has_log: bool) -> Vec<String> {
    let mut header = vec![
        "#".to_string(),
        "Layout".into(),
        "Spares".into(),
        "SIZE\n(zpool)".into(),
        "AVAIL\nTiB".into(),
        format!("Usable TiB\n@{block}"),
        "Eff.".into(),
        "Survives\nany/best".into(),
        "Loss/yr\ntyp, range".into(),
        "Resilver\ntyp, range".into(),
        "Rand read\nIOPS".into(),
        "Rand write\nIOPS".into(),
        "Seq R/W\nMB/s".into(),
        "Sync 4K\nno SLOG".into(),
    ];
    if has_log {
        header.push("Sync 4K\nwith SLOG".into());
    }
    header.push("Score".into());
    header
}

/// One layout's cells in the ranked table.
fn table_row(plan: &Plan, entry: &PlanEntry, has_log: bool) -> Vec<Cell> {
    let best = &plan.best;
    let layout = entry.layout.as_str();
    let perf = &entry.performance;
    let risk = &entry.reliability;
    let sync = |f: Option<&WorkloadFigures>| {
        f.map_or_else(
            || "n/a".to_string(),
            |f| format!("{:.2} ms\n{}/s", f.write_latency_ms, count(f.writes_per_s)),
        )
    };
    let mut row = vec![
        Cell::new(entry.rank),
        Cell::new(layout),
        Cell::new(entry.spares),
        Cell::new(&entry.capacity.zpool_size_printed),
        Cell::new(format!("{:.2}", tib(entry.capacity.avail))),
        Cell::new(mark(
            format!("{:.2}", tib(entry.usable_bytes)),
            is_best(&best.usable, layout, plan.entries.len()),
        )),
        Cell::new(format!("{:.0}%", entry.space_efficiency * 100.0)),
        Cell::new(format!(
            "{}/{}",
            risk.failures_tolerated, risk.failures_tolerated_best
        )),
        Cell::new(mark(
            ranged(&risk.annual_loss_probability, probability),
            is_best(&best.reliability, layout, plan.entries.len()),
        )),
        Cell::new(ranged(&risk.resilver_hours, duration)),
        Cell::new(mark(
            ranged(&perf.random_read_iops.estimate, count),
            is_best(&best.random_read, layout, plan.entries.len()),
        )),
        Cell::new(mark(
            ranged(&perf.random_write_iops.estimate, count),
            is_best(&best.random_write, layout, plan.entries.len()),
        )),
        Cell::new(mark(
            format!(
                "{:.0}/{:.0}",
                perf.seq_read_mb_s.estimate.typical, perf.seq_write_mb_s.estimate.typical
            ),
            is_best(&best.sequential, layout, plan.entries.len()),
        )),
        Cell::new(mark(
            sync(perf.predicted.as_ref()),
            !has_log && is_best(&best.sync_write, layout, plan.entries.len()),
        )),
    ];
    if has_log {
        row.push(Cell::new(mark(
            sync(perf.predicted_with_log.as_ref()),
            is_best(&best.sync_write, layout, plan.entries.len()),
        )));
    }
    row.push(Cell::new(format!("{:.2}", entry.scores.overall)));
    row
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
    let mut out = String::new();
    out.push_str("\nThe same layout under each rule set:\n");
    let mut rules_table = Table::new();
    rules_table
        .load_preset(presets::UTF8_FULL_CONDENSED)
        .set_header(vec![
            "rule set",
            "SIZE",
            "SIZE bytes",
            "AVAIL bytes",
            "AVAIL TiB",
        ]);
    for (rules, c) in across_rule_sets(&request.groups, layout, &request.capacity) {
        rules_table.add_row(vec![
            Cell::new(rules.describe()),
            Cell::new(&c.zpool_size_printed),
            Cell::new(crate::units::group_digits(c.zpool_size as u128))
                .set_alignment(CellAlignment::Right),
            Cell::new(crate::units::group_digits(c.avail as u128))
                .set_alignment(CellAlignment::Right),
            Cell::new(format!("{:.3}", tib(c.avail))).set_alignment(CellAlignment::Right),
        ]);
    }
    out.push_str(&rules_table.to_string());
    out.push('\n');
    out
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

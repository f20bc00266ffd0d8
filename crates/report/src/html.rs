//! The self-contained HTML report: inline CSS and inline SVG, no scripts, no
//! fonts or images fetched from anywhere. A Content-Security-Policy of
//! `default-src 'none'` makes the browser itself refuse any load, so the page
//! provably works offline and leaks nothing when opened from a ticket.

use crate::charts::{
    latency_chart, latency_ops, operations_chart, runs_without_intervals, throughput_chart,
    timeline_chart,
};
use crate::group::{workload_name, Grouping};
use crate::store::{Skipped, StoredRun};
use crate::table::{fmt_num, grouped_table};
use fileio::clock::utc_now_rfc3339;
use fileio::result::ResultKind;
use std::fmt::Write;

/// The generator mark in every page we write; `output` looks for it.
pub const HTML_MARKER: &str = r#"<meta name="generator" content="tankbench report">"#;

/// Escape text for HTML and XML (element content and quoted attributes); see
/// [`crate::escape::html`].
pub fn escape(s: &str) -> String {
    crate::escape::html(s)
}

#[derive(Debug, Clone)]
pub struct ReportOptions {
    pub title: String,
    /// Where the runs came from, shown in the header.
    pub sources: Vec<String>,
    /// Files that were left out, listed so nothing vanishes silently.
    pub skipped: Vec<Skipped>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            title: "tankbench report".into(),
            sources: Vec::new(),
            skipped: Vec::new(),
        }
    }
}

const CSS: &str = r#"
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
  color: #222; background: #f6f7f9; margin: 0; line-height: 1.45; }
main { max-width: 1020px; margin: 0 auto; padding: 24px 28px 48px; background: #fff;
  box-shadow: 0 0 0 1px #e4e6ea; min-height: 100vh; box-sizing: border-box; }
h1 { font-size: 26px; margin: 4px 0 2px; }
h2 { font-size: 19px; margin: 34px 0 10px; padding-bottom: 4px; border-bottom: 2px solid #e4e6ea; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.meta { color: #666; margin: 0 0 8px; font-size: 14px; }
table { border-collapse: collapse; font-size: 14px; margin: 6px 0; }
.wide { overflow-x: auto; max-width: 100%; }
th, td { padding: 5px 10px; border-bottom: 1px solid #e4e6ea; text-align: left; vertical-align: top; }
th { background: #f1f3f6; font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:hover { background: #fafbfc; }
.sd { color: #777; font-size: 12px; }
.note { color: #555; font-size: 13px; margin: 4px 0; }
figure { margin: 18px 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #e4e6ea; border-radius: 4px; }
.missing { color: #7a5d00; background: #fff8e1; border-left: 4px solid #f0c000; padding: 6px 10px; font-size: 14px; }
.warning { margin: 6px 0; padding: 6px 10px; border-left: 4px solid #e15759; background: #fdf3f3; font-size: 14px; }
.warning code { font-weight: 600; }
.hint { color: #444; display: block; margin-top: 2px; }
.runs td { font-size: 13px; }
.runs .id { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; white-space: nowrap; }
#warnings h3 { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px; font-weight: 600; margin: 16px 0 4px; }
.hint::before { content: "Hint: "; font-weight: 600; }
.tag { display: inline-block; background: #eef1f5; border-radius: 3px; padding: 0 5px; margin: 1px 2px 1px 0; font-size: 12px; }
.flag { color: #b00; font-weight: 600; }
.flag.predicted { color: #b0306a; }
.prediction { color: #b0306a; font-weight: 700; border: 2px solid #b0306a; border-radius: 4px;
  padding: 6px 10px; margin: 10px 0; background: #fbf1f6; }
.in-runs { display: block; color: #666; font-size: 12px; }
.warning ul { margin: 4px 0; padding-left: 20px; }
footer { color: #888; font-size: 12px; margin-top: 40px; }
"#;

/// One warning as the page shows it: a code and hint given once, with each
/// distinct message and the runs that reported it.
struct WarningEntry<'a> {
    code: &'a str,
    hint: &'a str,
    /// (message, ids of the runs that reported it), in first-seen order.
    messages: Vec<(&'a str, Vec<&'a str>)>,
}

/// The runs' warnings with repeats folded: one entry per (code, hint), in
/// the order first seen, its messages each once with the runs that gave
/// them. A matrix of 12 runs that all read from the page cache shows the
/// warning and its hint once, not 12 times.
fn distinct_warnings(runs: &[StoredRun]) -> Vec<WarningEntry<'_>> {
    let mut entries: Vec<WarningEntry> = Vec::new();
    for r in runs {
        for w in &r.result.warnings {
            let i = match entries
                .iter()
                .position(|e| e.code == w.code && e.hint == w.hint)
            {
                Some(i) => i,
                None => {
                    entries.push(WarningEntry {
                        code: &w.code,
                        hint: &w.hint,
                        messages: Vec::new(),
                    });
                    entries.len() - 1
                }
            };
            let messages = &mut entries[i].messages;
            match messages.iter_mut().find(|(m, _)| *m == w.message) {
                Some((_, ids)) => {
                    if !ids.contains(&r.id.as_str()) {
                        ids.push(&r.id);
                    }
                }
                None => messages.push((&w.message, vec![&r.id])),
            }
        }
    }
    entries
}

/// Run ids as the warnings section lists them: every one up to eight, then
/// a count of the rest (the runs table lists them all).
fn run_list(ids: &[&str]) -> String {
    const SHOWN: usize = 8;
    let mut out: Vec<String> = ids
        .iter()
        .take(SHOWN)
        .map(|id| format!("<span class=\"id\">{}</span>", escape(id)))
        .collect();
    if ids.len() > SHOWN {
        out.push(format!("and {} more", ids.len() - SHOWN));
    }
    let runs = if ids.len() == 1 { "run" } else { "runs" };
    format!("{} {runs}: {}", ids.len(), out.join(", "))
}

/// The "Warnings" section: each warning once (code and hint), with its
/// distinct messages and the runs each came from.
fn warnings_section(runs: &[StoredRun]) -> String {
    let mut body = String::new();
    body += "<section id=\"warnings\">\n<h2>Warnings</h2>\n";
    let entries = distinct_warnings(runs);
    let reported: usize = runs.iter().map(|r| r.result.warnings.len()).sum();
    let with = runs
        .iter()
        .filter(|r| !r.result.warnings.is_empty())
        .count();
    if entries.is_empty() {
        body += "<p class=\"note\">No run reported a warning.</p>\n";
    } else {
        let _ = writeln!(
            body,
            "<p class=\"note\">{reported} warning{} from {with} run{}, {} distinct: each is shown once, with the runs that reported it.</p>",
            if reported == 1 { "" } else { "s" },
            if with == 1 { "" } else { "s" },
            entries.len()
        );
    }
    for e in &entries {
        let _ = write!(
            body,
            "<div class=\"warning\"><code>{}</code>",
            escape(e.code)
        );
        if let [(message, ids)] = e.messages.as_slice() {
            let _ = write!(
                body,
                ": {}<span class=\"in-runs\">{}</span>",
                escape(message),
                run_list(ids)
            );
        } else {
            body += "<ul>";
            for (message, ids) in &e.messages {
                let _ = write!(
                    body,
                    "<li>{}<span class=\"in-runs\">{}</span></li>",
                    escape(message),
                    run_list(ids)
                );
            }
            body += "</ul>";
        }
        let _ = writeln!(body, "<span class=\"hint\">{}</span></div>", escape(e.hint));
    }
    body += "</section>\n";
    body
}

/// The banner a page of predictions opens with, as the terminal marks a
/// prediction: how many runs are simulated rather than measured.
fn prediction_banner(runs: &[StoredRun]) -> String {
    let predicted = runs
        .iter()
        .filter(|r| r.result.kind == ResultKind::Predicted)
        .count();
    match predicted {
        0 => String::new(),
        n if n == runs.len() => "<p class=\"prediction\">PREDICTION (simulated, not measured): \
             every run on this page was predicted by tankbench's simulator. Dashed bars are \
             predictions; their whiskers are the prediction intervals.</p>\n"
            .into(),
        n => format!(
            "<p class=\"prediction\">PREDICTION: {n} of {} runs on this page are simulated, \
             not measured (marked \u{201c}predicted\u{201d}; dashed bars in the charts, their \
             whiskers the prediction intervals).</p>\n",
            runs.len()
        ),
    }
}

/// The whole page for `runs`.
pub fn render_html(runs: &[StoredRun], opts: &ReportOptions) -> String {
    let g = Grouping::new(runs);
    let mut body = String::new();
    let _ = write!(
        body,
        "<header>\n<h1>{}</h1>\n<p class=\"meta\">{} run{} in {} configuration{}{} · generated {} by tankbench {}</p>\n</header>\n",
        escape(&opts.title),
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        g.groups.len(),
        if g.groups.len() == 1 { "" } else { "s" },
        if opts.sources.is_empty() {
            String::new()
        } else {
            format!(" from {}", escape(&opts.sources.join(", ")))
        },
        utc_now_rfc3339(),
        env!("CARGO_PKG_VERSION"),
    );
    body += &prediction_banner(runs);

    body += "<section id=\"summary\">\n<h2>Results by configuration</h2>\n";
    body += &scrolls_sideways(&grouped_table(&g).to_html("grouped"));
    body += "</section>\n";

    body += "<section id=\"charts\">\n<h2>Charts</h2>\n";
    // `id` is ours: fixed names, the latency operations' included (a result
    // file with any other operation name does not load).
    let mut figure = |id: &str, svg: Option<String>, missing: &str| match svg {
        Some(svg) => {
            let _ = write!(body, "<figure id=\"{id}\">\n{svg}</figure>\n");
        }
        None => {
            let _ = writeln!(
                body,
                "<p class=\"missing\" id=\"{id}\">{}</p>",
                escape(missing)
            );
        }
    };
    figure(
        "chart-throughput",
        throughput_chart(&g),
        "No throughput chart: the runs moved no data.",
    );
    figure(
        "chart-operations",
        operations_chart(&g),
        "No operations chart: the runs made no reads, writes or fsyncs.",
    );
    let ops = latency_ops(&g);
    if ops.is_empty() {
        figure(
            "chart-latency",
            None,
            "No latency chart: the runs stored no latency histograms.",
        );
    }
    for op in ops {
        figure(
            &format!("chart-latency-{}", op.name()),
            latency_chart(&g, op),
            "",
        );
    }
    let without = runs_without_intervals(&g);
    figure(
        "chart-timeline",
        timeline_chart(&g),
        "No throughput-over-time chart: the runs have no interval samples. \
         Run with --report-interval=1 to record them.",
    );
    if !without.is_empty() && without.len() < runs.len() {
        let ids: Vec<&str> = without.iter().map(|r| r.id.as_str()).collect();
        let _ = writeln!(
            body,
            "<p class=\"missing\" id=\"timeline-missing\">Not in the throughput-over-time chart \
             (no interval samples; run with --report-interval=1 to record them): {}.</p>",
            run_list(&ids)
        );
    }
    body += "</section>\n";

    body += "<section id=\"runs\">\n<h2>Runs</h2>\n";
    body += &scrolls_sideways(&runs_html(runs));
    if !opts.skipped.is_empty() {
        body += "<h3>Files left out</h3>\n<ul>\n";
        for s in &opts.skipped {
            let _ = writeln!(body, "<li>{}</li>", escape(&s.reason));
        }
        body += "</ul>\n";
    }
    body += "</section>\n";

    body += &warnings_section(runs);

    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n{HTML_MARKER}\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n{body}\
         <footer>Written by tankbench {}. Self-contained: no scripts, fonts or network.</footer>\n\
         </main>\n</body>\n</html>\n",
        escape(&opts.title),
        env!("CARGO_PKG_VERSION"),
    )
}

/// One row per run, with what a reader needs to judge it: which configuration,
/// where it ran, whether it completed. Written by hand rather than through
/// `Table` so the labels sit under the id as tags and the columns stay narrow.
/// A table inside a box that scrolls sideways: with many label columns a
/// table is wider than the page, and it should scroll within the page's
/// column rather than run past its edge.
fn scrolls_sideways(table: &str) -> String {
    format!("<div class=\"wide\">\n{table}</div>\n")
}

fn runs_html(runs: &[StoredRun]) -> String {
    // The workload column only when it varies; otherwise the "All runs" note
    // under the main table already says it.
    let show_workload = runs
        .iter()
        .map(|r| workload_name(&r.result))
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    let mut out = String::from("<table class=\"runs\">\n<thead><tr><th>run</th>");
    if show_workload {
        out += "<th>workload</th>";
    }
    out += "<th>where</th><th class=\"num\">read MiB/s</th><th class=\"num\">write MiB/s</th>\
            <th class=\"num\">warnings</th></tr></thead>\n<tbody>\n";
    for r in runs {
        let res = &r.result;
        let env = &res.environment;
        let _ = write!(out, "<tr><td><span class=\"id\">{}</span>", escape(&r.id));
        if res.interrupted {
            out += " <span class=\"flag\">interrupted</span>";
        }
        if res.kind == ResultKind::Predicted {
            out += " <span class=\"flag predicted\">predicted</span>";
        }
        out += "<br>";
        for (k, v) in &res.labels {
            let _ = write!(
                out,
                "<span class=\"tag\">{}={}</span>",
                escape(k),
                escape(v)
            );
        }
        out += "</td>";
        if show_workload {
            let _ = write!(out, "<td>{}</td>", escape(&workload_name(res)));
        }
        let _ = writeln!(
            out,
            "<td>{} · {} on {} · {} s</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td></tr>",
            escape(&env.hostname),
            escape(&env.fs_type),
            escape(&env.mount_point),
            fmt_num(res.total_time_s),
            fmt_num(res.rates.read_mib_per_s),
            fmt_num(res.rates.written_mib_per_s),
            res.warnings.len()
        );
    }
    out += "</tbody>\n</table>\n";
    out
}

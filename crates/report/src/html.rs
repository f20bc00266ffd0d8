//! The self-contained HTML report: inline CSS and inline SVG, no scripts, no
//! fonts or images fetched from anywhere. A Content-Security-Policy of
//! `default-src 'none'` makes the browser itself refuse any load, so the page
//! provably works offline and leaks nothing when opened from a ticket.

use crate::charts::{latency_chart, latency_ops, throughput_chart, timeline_chart};
use crate::group::{labels_text, workload_name, Grouping};
use crate::store::{Skipped, StoredRun};
use crate::table::{fmt_num, grouped_table};
use fileio::clock::utc_now_rfc3339;
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
footer { color: #888; font-size: 12px; margin-top: 40px; }
"#;

/// The "Warnings" section: each run's warnings under its id and labels.
fn warnings_section(runs: &[StoredRun]) -> String {
    let mut body = String::new();
    body += "<section id=\"warnings\">\n<h2>Warnings</h2>\n";
    let with_warnings: Vec<&StoredRun> = runs
        .iter()
        .filter(|r| !r.result.warnings.is_empty())
        .collect();
    if with_warnings.is_empty() {
        body += "<p class=\"note\">No run reported a warning.</p>\n";
    }
    for r in with_warnings {
        let _ = writeln!(
            body,
            "<h3 id=\"warn-{}\">{} <span class=\"sd\">{}</span></h3>",
            crate::escape::html_id(&r.id),
            escape(&r.id),
            escape(&labels_text(&r.result.labels))
        );
        for w in &r.result.warnings {
            let _ = writeln!(
                body,
                "<div class=\"warning\"><code>{}</code>: {}<span class=\"hint\">{}</span></div>",
                escape(&w.code),
                escape(&w.message),
                escape(&w.hint)
            );
        }
    }
    body += "</section>\n";
    body
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

    body += "<section id=\"summary\">\n<h2>Results by configuration</h2>\n";
    body += &grouped_table(&g).to_html("grouped");
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
    figure(
        "chart-timeline",
        timeline_chart(&g),
        "No throughput-over-time chart: the runs have no interval samples. \
         Run with --report-interval=1 to record them.",
    );
    body += "</section>\n";

    body += "<section id=\"runs\">\n<h2>Runs</h2>\n";
    body += &runs_html(runs);
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

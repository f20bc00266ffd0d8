//! The charts: grouped bars of throughput per configuration, latency percentile
//! curves per operation (log scales, from the stored histograms), and throughput
//! over time (from `--report-interval` samples). Each returns a standalone SVG
//! document, or None when the runs hold nothing to draw (the caller says why).
//!
//! Everything drawn from data carries `class="mark"`, so a test can check that a
//! chart is not just axes.

use crate::group::{Group, Grouping};
use crate::store::StoredRun;
use crate::svg::*;
use crate::table::fmt_num;
use fileio::result::{LatencyKey, ResultKind, RunResult};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The chart kinds, as `tankbench chart KIND` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    Throughput,
    Operations,
    Latency,
    Timeline,
}

impl ChartKind {
    /// Every kind, in the order `--help` lists them.
    pub const ALL: [ChartKind; 4] = [
        ChartKind::Throughput,
        ChartKind::Operations,
        ChartKind::Latency,
        ChartKind::Timeline,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ChartKind::Throughput => "throughput",
            ChartKind::Operations => "operations",
            ChartKind::Latency => "latency",
            ChartKind::Timeline => "timeline",
        }
    }

    /// What the chart shows, for `--help` and completions.
    pub fn describe(self) -> &'static str {
        match self {
            ChartKind::Throughput => "read and write MiB/s per configuration",
            ChartKind::Operations => "reads, writes and fsyncs per second per configuration",
            ChartKind::Latency => "latency percentile curves of one operation",
            ChartKind::Timeline => "throughput over time, from --report-interval samples",
        }
    }

    pub fn parse(s: &str) -> Option<ChartKind> {
        ChartKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// The names, comma-separated, for a refusal.
    pub fn accepted() -> String {
        ChartKind::ALL.map(ChartKind::name).join(", ")
    }
}

/// The width of every chart, CSS pixels.
pub(crate) const WIDTH: f64 = 960.0;

/// One bar series: a name, a colour, how to get its value from a run, and
/// the name of the same figure in a prediction's interval block
/// (`RunResult::prediction`).
struct BarSeries {
    name: &'static str,
    color: &'static str,
    value: fn(&RunResult) -> f64,
    figure: &'static str,
}

const READ_MIB: BarSeries = BarSeries {
    name: "read MiB/s",
    color: READ_COLOR,
    value: |r| r.rates.read_mib_per_s,
    figure: "read_mib_per_s",
};
const WRITE_MIB: BarSeries = BarSeries {
    name: "write MiB/s",
    color: WRITE_COLOR,
    value: |r| r.rates.written_mib_per_s,
    figure: "written_mib_per_s",
};
const READS: BarSeries = BarSeries {
    name: "reads/s",
    color: READ_COLOR,
    value: |r| r.rates.reads_per_s,
    figure: "reads_per_s",
};
const WRITES: BarSeries = BarSeries {
    name: "writes/s",
    color: WRITE_COLOR,
    value: |r| r.rates.writes_per_s,
    figure: "writes_per_s",
};
const FSYNCS: BarSeries = BarSeries {
    name: "fsyncs/s",
    color: FSYNC_COLOR,
    value: |r| r.rates.fsyncs_per_s,
    figure: "fsyncs_per_s",
};

/// Read and write MiB/s per configuration ([`bar_chart`]).
pub fn throughput_chart(g: &Grouping) -> Option<String> {
    bar_chart(
        g,
        "Throughput per configuration",
        "MiB/s (MiB = 2^20 bytes)",
        &[READ_MIB, WRITE_MIB],
    )
}

/// Reads, writes and fsyncs per second per configuration ([`bar_chart`]):
/// IOPS, and the commits a sync workload waits for.
pub fn operations_chart(g: &Grouping) -> Option<String> {
    bar_chart(
        g,
        "Operations per second per configuration",
        "operations per second",
        &[READS, WRITES, FSYNCS],
    )
}

/// What the whisker of one bar shows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Spread {
    /// One measured run: no whisker.
    None,
    /// Measured repeats: ± one standard deviation, and a dot per run.
    Repeats { sd: f64 },
    /// A prediction: its interval over the model's uncertain parameters.
    Interval { low: f64, high: f64 },
}

/// One bar's figures: the value the bar reaches and its whisker.
#[derive(Debug, Clone, Copy)]
struct BarValue {
    mean: f64,
    spread: Spread,
}

impl BarValue {
    /// The furthest the bar or its whisker reaches.
    fn reach(&self) -> f64 {
        match self.spread {
            Spread::None => self.mean,
            Spread::Repeats { sd } => self.mean + sd,
            Spread::Interval { high, .. } => self.mean.max(high),
        }
    }

    /// The text after the bar: the mean, or a prediction's typical value
    /// with its interval, as the terminal prints it.
    fn label(&self) -> String {
        match self.spread {
            Spread::Interval { low, high } => {
                format!(
                    "{} ({}–{})",
                    fmt_num(self.mean),
                    fmt_num(low),
                    fmt_num(high)
                )
            }
            _ => fmt_num(self.mean),
        }
    }
}

/// Whether every run of a group is a prediction (a group never mixes the
/// two: a prediction's workload name says so, see `group::workload_name`).
fn predicted(g: &Grouping, grp: &Group) -> bool {
    g.results(grp)
        .iter()
        .all(|r| r.kind == ResultKind::Predicted)
}

/// The bar of series `s` for one group: the mean over its runs, with the
/// repeats' spread, or for predictions the widest interval their
/// `prediction` blocks give for the figure.
fn bar_value(g: &Grouping, grp: &Group, s: &BarSeries) -> Option<BarValue> {
    let sum = g.summary(grp, |r| Some((s.value)(r)))?;
    let intervals: Vec<(f64, f64)> = g
        .results(grp)
        .iter()
        .filter_map(|r| r.prediction.as_ref()?.figures.get(s.figure))
        .map(|f| (f.low, f.high))
        .collect();
    let spread = if predicted(g, grp) && !intervals.is_empty() {
        Spread::Interval {
            low: intervals.iter().map(|i| i.0).fold(f64::INFINITY, f64::min),
            high: intervals.iter().map(|i| i.1).fold(0.0, f64::max),
        }
    } else if sum.n > 1 {
        Spread::Repeats { sd: sum.sd }
    } else {
        Spread::None
    };
    Some(BarValue {
        mean: sum.mean,
        spread,
    })
}

/// The prediction banner under a chart's title (the terminal's PREDICTION
/// line), when any configuration is predicted; returns whether it drew one.
fn prediction_banner(svg: &mut Svg, g: &Grouping, y: f64) -> bool {
    let n = g.groups.iter().filter(|grp| predicted(g, grp)).count();
    if n == 0 {
        return false;
    }
    let text = if n == g.groups.len() {
        "PREDICTION (simulated, not measured)".to_string()
    } else {
        format!(
            "PREDICTION: {n} of {} configurations are simulated, not measured (dashed bars)",
            g.groups.len()
        )
    };
    svg.raw(&format!(
        r#"<text class="prediction" x="20" y="{y:.1}" font-size="13" font-weight="bold" fill="{PREDICTION_COLOR}">{}</text>"#,
        crate::escape::html(&text)
    ));
    true
}

/// Horizontal grouped bars: one band per configuration, a bar per series
/// that any run has (mean of the repeats). Whiskers show ± one standard
/// deviation with a dot per repeat, so the spread is visible next to the
/// mean; a predicted configuration's bars are dashed and translucent, with
/// its interval as the whisker and in the text, and a banner says so.
fn bar_chart(g: &Grouping, title: &str, axis: &str, all: &[BarSeries]) -> Option<String> {
    let series: Vec<&BarSeries> = all
        .iter()
        .filter(|s| g.runs.iter().any(|r| (s.value)(&r.result) > 0.0))
        .collect();
    if series.is_empty() || g.groups.is_empty() {
        return None;
    }
    let names: Vec<String> = g
        .groups
        .iter()
        .map(|x| ellipsize(&g.group_name(x), 44))
        .collect();
    let any_predicted = g.groups.iter().any(|grp| predicted(g, grp));
    // With some configurations predicted and some measured, each predicted
    // row says so; when all are, the banner does.
    let mixed = any_predicted && !g.groups.iter().all(|grp| predicted(g, grp));
    let label_w = label_width(g, &names, mixed);
    let values: Vec<Vec<Option<BarValue>>> = g
        .groups
        .iter()
        .map(|grp| series.iter().map(|s| bar_value(g, grp, s)).collect())
        .collect();
    let any_repeats = g
        .groups
        .iter()
        .any(|grp| !predicted(g, grp) && grp.runs.len() > 1);
    let value_text_w = values
        .iter()
        .flatten()
        .flatten()
        .map(|v| text_width(&v.label(), 11.0))
        .fold(0.0, f64::max);
    let left = 20.0 + label_w + 12.0;
    let right = WIDTH - 25.0 - value_text_w;
    let mut top = 84.0;
    let band = series.len() as f64 * (BAR_H + 3.0) + 18.0;

    // Every run's own value too: the dots of the repeats.
    let max = values
        .iter()
        .flatten()
        .flatten()
        .map(BarValue::reach)
        .chain(
            g.runs
                .iter()
                .flat_map(|r| series.iter().map(|s| (s.value)(&r.result))),
        )
        .fold(0.0f64, f64::max);
    let ticks = nice_ticks(max, 8);
    let xmax = *ticks.last().unwrap_or(&1.0);
    let x = |v: f64| left + (right - left) * v / xmax;

    let mut svg = Svg::new(WIDTH, 0.0, title);
    header(&mut svg, title, &subtitle(g));
    top += bar_legend(&mut svg, g, &series, left, (any_repeats, any_predicted));
    let plot_h = band * g.groups.len() as f64;
    svg.height = top + plot_h + 56.0;
    if !g.columns.is_empty() {
        svg.text(
            left - 12.0,
            top - 8.0,
            &g.key_title(),
            11.0,
            "end",
            MUTED,
            "font-style=\"italic\"",
        );
    }
    value_axis(
        &mut svg,
        &ticks,
        &x,
        (left, right),
        (top, top + plot_h),
        axis,
    );

    for (gi, grp) in g.groups.iter().enumerate() {
        let y0 = top + gi as f64 * band + 9.0;
        if gi > 0 {
            svg.line(20.0, y0 - 9.0, right, y0 - 9.0, "#f2f2f2", 1.0);
        }
        let mid = y0 + series.len() as f64 * (BAR_H + 3.0) / 2.0;
        group_label(
            &mut svg,
            g,
            grp,
            &names[gi],
            (left - 12.0, mid + 4.0),
            mixed,
        );
        for (si, s) in series.iter().enumerate() {
            let y = y0 + si as f64 * (BAR_H + 3.0);
            if let Some(v) = values[gi][si] {
                bar(&mut svg, g, grp, s, &v, (left, y, BAR_H), &x);
            }
        }
    }
    svg.line(left, top, left, top + plot_h, INK, 1.0);
    Some(svg.finish())
}

/// The width the configurations' names take with their tags (×n,
/// predicted), at most 400 px.
fn label_width(g: &Grouping, names: &[String], mixed: bool) -> f64 {
    let tag_w = |grp: &Group| {
        let mut w = 0.0;
        if grp.runs.len() > 1 {
            w += text_width(&format!(" ×{}", grp.runs.len()), 10.0);
        }
        if predicted(g, grp) && mixed {
            w += text_width(" predicted", 10.0);
        }
        w
    };
    g.groups
        .iter()
        .zip(names)
        .map(|(grp, n)| text_width(n, 12.0) + tag_w(grp))
        .fold(60.0, f64::max)
        .min(400.0)
}

/// The height of one bar, px.
const BAR_H: f64 = 16.0;

/// Under the banner: the series' colours and what the whiskers mean, from
/// `left`; returns the height it took beyond the plain legend row.
fn bar_legend(
    svg: &mut Svg,
    g: &Grouping,
    series: &[&BarSeries],
    left: f64,
    (any_repeats, any_predicted): (bool, bool),
) -> f64 {
    let mut taken = 0.0;
    let mut legend_y = 64.0;
    if prediction_banner(svg, g, 66.0) {
        legend_y += 20.0;
        taken += 20.0;
    }
    legend_row(
        svg,
        left,
        legend_y,
        &series
            .iter()
            .map(|s| (s.name.to_string(), s.color, false))
            .collect::<Vec<_>>(),
    );
    let mut whiskers = Vec::new();
    if any_repeats {
        whiskers.push("whiskers: ± 1 sd of the repeats, a dot per run");
    }
    if any_predicted {
        whiskers.push("dashed bars: predicted, whiskers: the prediction interval");
    }
    // One line each: together they outgrow the chart beside long names.
    for (i, line) in whiskers.iter().enumerate() {
        svg.text(
            left,
            legend_y + 16.0 + 14.0 * i as f64,
            line,
            11.0,
            "start",
            MUTED,
            "",
        );
        taken += 14.0;
    }
    taken
}

/// A configuration's name, right-aligned at `(x, y)`, with its repeats
/// (×n) and, among measured ones, a predicted mark.
fn group_label(
    svg: &mut Svg,
    g: &Grouping,
    grp: &Group,
    name: &str,
    (x, y): (f64, f64),
    mixed: bool,
) {
    let n = grp.runs.len();
    // A no-break space: XML collapses a leading plain space in a tspan.
    let mut tags = String::new();
    if n > 1 {
        tags += &format!("<tspan fill=\"{MUTED}\" font-size=\"10\">\u{a0}×{n}</tspan>");
    }
    if mixed && predicted(g, grp) {
        tags += &format!(
            "<tspan class=\"prediction\" fill=\"{PREDICTION_COLOR}\" font-size=\"10\" font-weight=\"bold\">\u{a0}predicted</tspan>"
        );
    }
    svg.raw(&format!(
        r#"<text class="group-label" x="{x:.1}" y="{y:.1}" font-size="12" text-anchor="end" fill="{INK}">{}{tags}</text>"#,
        crate::escape::html(name)
    ));
}

/// One bar of [`bar_chart`] at `(left, y, bar_h)`: the value, its whisker
/// (dots per repeat for measured repeats), and its text after whatever
/// reaches furthest right.
fn bar(
    svg: &mut Svg,
    g: &Grouping,
    grp: &Group,
    s: &BarSeries,
    v: &BarValue,
    (left, y, bar_h): (f64, f64, f64),
    x: &dyn Fn(f64) -> f64,
) {
    let w = (x(v.mean) - left).max(if v.mean > 0.0 { 1.0 } else { 0.0 });
    let (style, what) = match v.spread {
        Spread::Interval { .. } => (
            format!(
                r#" fill-opacity="0.35" stroke="{}" stroke-width="1.2" stroke-dasharray="4 2""#,
                s.color
            ),
            "predicted",
        ),
        _ => (String::new(), "measured"),
    };
    svg.raw(&format!(
        r#"<rect class="mark" x="{left:.1}" y="{y:.1}" width="{w:.1}" height="{bar_h}" fill="{}"{style}><title>{}: {} {} ({what})</title></rect>"#,
        s.color,
        crate::escape::html(&g.group_name(grp)),
        v.label(),
        s.name
    ));
    let cy = y + bar_h / 2.0;
    let whisker = |svg: &mut Svg, lo: f64, hi: f64| {
        svg.line(lo, cy, hi, cy, INK, 1.2);
        svg.line(lo, cy - 4.0, lo, cy + 4.0, INK, 1.2);
        svg.line(hi, cy - 4.0, hi, cy + 4.0, INK, 1.2);
    };
    let mut end = x(v.mean);
    match v.spread {
        Spread::None => {}
        Spread::Repeats { sd } => {
            let (lo, hi) = (x((v.mean - sd).max(0.0)), x(v.mean + sd));
            whisker(svg, lo, hi);
            for r in g.results(grp) {
                svg.raw(&format!(
                    r##"<circle cx="{:.1}" cy="{cy:.1}" r="2.2" fill="#fff" stroke="{INK}" stroke-width="1"/>"##,
                    x((s.value)(r))
                ));
            }
            end = end.max(hi).max(
                g.results(grp)
                    .iter()
                    .map(|r| x((s.value)(r)))
                    .fold(0.0, f64::max),
            );
        }
        Spread::Interval { low, high } => {
            let (lo, hi) = (x(low), x(high));
            whisker(svg, lo, hi);
            end = end.max(hi);
        }
    }
    svg.raw(&format!(
        r#"<text class="value-label" x="{:.1}" y="{:.1}" font-size="11" text-anchor="start" fill="{INK}">{}</text>"#,
        end + 5.0,
        y + bar_h - 4.0,
        crate::escape::html(&v.label())
    ));
}

/// Vertical grid lines at `ticks` from `top` to `bottom`, their labels under
/// the plot and the axis `title`.
fn value_axis(
    svg: &mut Svg,
    ticks: &[f64],
    x: &dyn Fn(f64) -> f64,
    (left, right): (f64, f64),
    (top, bottom): (f64, f64),
    title: &str,
) {
    for t in ticks {
        svg.line(x(*t), top, x(*t), bottom, GRID, 1.0);
        svg.text(
            x(*t),
            bottom + 16.0,
            &tick_label(*t),
            11.0,
            "middle",
            MUTED,
            "",
        );
    }
    svg.text(
        (left + right) / 2.0,
        bottom + 40.0,
        title,
        12.0,
        "middle",
        INK,
        "",
    );
}

/// The latency chart's axis titles and the frame around its plot.
fn framed_axis_titles(svg: &mut Svg, (left, right, top, bottom): (f64, f64, f64, f64)) {
    svg.text(
        (left + right) / 2.0,
        bottom + 40.0,
        "percentile",
        12.0,
        "middle",
        INK,
        "",
    );
    svg.text(
        18.0,
        (top + bottom) / 2.0,
        "latency (log scale)",
        12.0,
        "middle",
        INK,
        &format!("transform=\"rotate(-90 18 {:.1})\"", (top + bottom) / 2.0),
    );
    svg.raw(&format!(
        r#"<rect x="{left}" y="{top}" width="{:.1}" height="{:.1}" fill="none" stroke="{INK}" stroke-width="1"/>"#,
        right - left,
        bottom - top
    ));
}

/// One path per group's line, through `x` and `y`.
fn line_paths(
    svg: &mut Svg,
    g: &Grouping,
    lines: &[Line],
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
) {
    for (gi, pts) in lines {
        let mut d = String::new();
        for (k, (t, v)) in pts.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if k == 0 { "M" } else { " L" },
                x(*t),
                y(*v)
            );
        }
        svg.raw(&format!(
            r#"<path class="mark" d="{d}" fill="none" stroke="{}" stroke-width="1.8" stroke-linejoin="round"><title>{}</title></path>"#,
            color(*gi),
            crate::escape::html(&g.group_name(&g.groups[*gi]))
        ));
    }
}

/// A chart's title, and under it its context (what every point shares).
pub(crate) fn header(svg: &mut Svg, title: &str, subtitle: &str) {
    svg.text(
        20.0,
        28.0,
        title,
        17.0,
        "start",
        INK,
        "font-weight=\"bold\"",
    );
    if !subtitle.is_empty() {
        svg.text(
            20.0,
            48.0,
            &ellipsize(subtitle, 140),
            12.0,
            "start",
            MUTED,
            "",
        );
    }
}

/// What every run shares (the workload, common labels): the chart's context.
fn subtitle(g: &Grouping) -> String {
    g.common
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// A row of legend entries (name, colour, dashed) starting at (x, y).
pub(crate) fn legend_row(svg: &mut Svg, x: f64, y: f64, items: &[(String, &str, bool)]) {
    let mut cx = x;
    for (name, color, dashed) in items {
        if *dashed {
            svg.raw(&format!(
                r#"<line x1="{cx:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="2.5" stroke-dasharray="5 3"/>"#,
                y - 4.0,
                cx + 22.0,
                y - 4.0
            ));
            cx += 28.0;
        } else {
            svg.rect(cx, y - 10.0, 12.0, 12.0, color, "legend");
            cx += 17.0;
        }
        svg.text(cx, y, name, 12.0, "start", INK, "");
        cx += text_width(name, 12.0) + 22.0;
    }
}

/// The legend at the right of a line chart: the grouping's key title (when
/// runs are grouped by labels), then one entry per group.
fn keyed_legend(svg: &mut Svg, g: &Grouping, x: f64, top: f64, items: &[(String, &str)]) {
    if !g.columns.is_empty() {
        svg.text(
            x,
            top + 4.0,
            &ellipsize(&g.key_title(), 30),
            11.0,
            "start",
            MUTED,
            "font-style=\"italic\"",
        );
    }
    legend_column(svg, x, top + 24.0, items);
}

/// A vertical legend of groups at the right of a line chart; returns nothing,
/// draws one coloured line and name per entry.
fn legend_column(svg: &mut Svg, x: f64, y: f64, items: &[(String, &str)]) {
    for (i, (name, color)) in items.iter().enumerate() {
        let cy = y + i as f64 * 18.0;
        svg.line(x, cy - 4.0, x + 18.0, cy - 4.0, color, 3.0);
        svg.text(x + 24.0, cy, &ellipsize(name, 30), 11.0, "start", INK, "");
    }
}

/// The operations with latency data, in [`LatencyKey::ALL`]'s order.
pub fn latency_ops(g: &Grouping) -> Vec<LatencyKey> {
    LatencyKey::ALL
        .into_iter()
        .filter(|op| {
            g.runs.iter().any(|r| {
                r.result
                    .latency
                    .get(op)
                    .is_some_and(|l| !l.histogram.is_empty())
            })
        })
        .collect()
}

/// The merged histogram of `op` over a group's repeats: bucket upper bound (ns)
/// -> count. Buckets line up across runs (same HDR layout), so merging is a sum.
fn merged_histogram(g: &Grouping, grp: &Group, op: LatencyKey) -> BTreeMap<u64, u64> {
    let mut h = BTreeMap::new();
    for r in g.results(grp) {
        if let Some(l) = r.latency.get(&op) {
            for &(ns, count) in &l.histogram {
                *h.entry(ns).or_insert(0) += count;
            }
        }
    }
    h
}

/// Percentile as "nines": x = -log10(1 - q), so 90% is 1, 99% is 2, 99.9% is 3.
/// This spreads the tail, where storage latency problems live.
fn nines(q: f64) -> f64 {
    -(1.0 - q).max(1e-12).log10()
}

/// Latency percentile curves for one operation, one line per configuration, on a
/// log latency axis against a "nines" percentile axis.
pub fn latency_chart(g: &Grouping, op: LatencyKey) -> Option<String> {
    let curves: Vec<(usize, BTreeMap<u64, u64>)> = g
        .groups
        .iter()
        .enumerate()
        .map(|(i, grp)| (i, merged_histogram(g, grp, op)))
        .filter(|(_, h)| h.values().sum::<u64>() > 0)
        .collect();
    if curves.is_empty() {
        return None;
    }
    let total_max = curves
        .iter()
        .map(|(_, h)| h.values().sum::<u64>())
        .max()
        .unwrap_or(1);
    // Show as many nines as the largest sample supports, 2 to 6:
    // ceil(log10(n)) is the digit count of n − 1.
    let nines_max = total_max
        .saturating_sub(1)
        .checked_ilog10()
        .map_or(0, |d| d + 1)
        .clamp(2, 6);
    let xmax = f64::from(nines_max);
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for (_, h) in &curves {
        for &ns in h.keys() {
            let ms = ns.max(1) as f64 / 1e6;
            lo = lo.min(ms);
            hi = hi.max(ms);
        }
    }
    let (ylo, mut yhi) = (lo.log10().floor(), hi.log10().ceil());
    if yhi <= ylo {
        yhi = ylo + 1.0;
    }

    let legend_w = 230.0;
    let (left, right, top, bottom) = (78.0, WIDTH - legend_w, 70.0, 400.0);
    let height = bottom + 56.0;
    let x = |v: f64| left + (right - left) * v.min(xmax) / xmax;
    let y = |ms: f64| bottom - (bottom - top) * (ms.log10() - ylo) / (yhi - ylo);

    // With --rate the event latency is the response time; the title says so
    // when every run is open loop (mixed runs keep the plain name).
    let open_loop = g.runs.iter().all(|r| r.result.workload.rate > 0);
    let title = format!("Latency percentiles: {}", op.label(open_loop));
    let mut svg = Svg::new(WIDTH, height, &title);
    header(&mut svg, &title, &subtitle(g));
    // Grid: decades with labels, 2x and 5x minor lines.
    let mut d = ylo;
    while d <= yhi + 1e-9 {
        let v = 10f64.powf(d);
        svg.line(left, y(v), right, y(v), "#d6d6d6", 1.0);
        svg.text(
            left - 12.0,
            y(v) + 4.0,
            &duration_label(v),
            11.0,
            "end",
            MUTED,
            "",
        );
        if d < yhi {
            for m in [2.0, 5.0] {
                svg.line(left, y(v * m), right, y(v * m), "#f0f0f0", 1.0);
            }
        }
        d += 1.0;
    }
    let mut xt: Vec<(f64, String)> = vec![(0.0, "0%".into()), (nines(0.5), "50%".into())];
    for k in 1..=nines_max {
        let q = 1.0 - 10f64.powi(-(k as i32));
        xt.push((f64::from(k), format!("{}%", tick_label(q * 100.0))));
    }
    for (v, label) in &xt {
        svg.line(x(*v), top, x(*v), bottom, GRID, 1.0);
        svg.text(x(*v), bottom + 16.0, label, 11.0, "middle", MUTED, "");
    }
    framed_axis_titles(&mut svg, (left, right, top, bottom));

    let mut legend = Vec::new();
    for (i, h) in &curves {
        let d = percentile_path(h, xmax, &x, &y);
        let color = color(*i);
        let name = g.group_name(&g.groups[*i]);
        svg.raw(&format!(
            r#"<path class="mark" d="{d}" fill="none" stroke="{color}" stroke-width="2" stroke-linejoin="round"><title>{}</title></path>"#,
            crate::escape::html(&name)
        ));
        legend.push((name, color));
    }
    keyed_legend(&mut svg, g, right + 20.0, top, &legend);
    Some(svg.finish())
}

/// The SVG path of one latency histogram (bucket upper bound in ns -> count)
/// as a step curve: each bucket's latency from the percentile where it starts
/// to where it ends, on the "nines" axis up to `xmax`.
fn percentile_path(
    h: &BTreeMap<u64, u64>,
    xmax: f64,
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
) -> String {
    let total: u64 = h.values().sum();
    let end = (total as f64).log10().min(xmax);
    let mut pts: Vec<(f64, f64)> = Vec::new();
    let mut cum = 0u64;
    for (&ns, &count) in h {
        let ms = ns.max(1) as f64 / 1e6;
        let x0 = nines(cum as f64 / total as f64).min(end);
        cum += count;
        let x1 = if cum == total {
            end
        } else {
            nines(cum as f64 / total as f64).min(end)
        };
        push_point(&mut pts, (x(x0), y(ms)));
        push_point(&mut pts, (x(x1), y(ms)));
    }
    let mut d = String::new();
    for (k, (px, py)) in pts.iter().enumerate() {
        let _ = write!(d, "{}{px:.1},{py:.1}", if k == 0 { "M" } else { " L" });
    }
    d
}

/// Add a point unless it lands on the previous pixel; keeps paths of histograms
/// with thousands of buckets small.
fn push_point(pts: &mut Vec<(f64, f64)>, p: (f64, f64)) {
    if let Some(last) = pts.last() {
        if (last.0 - p.0).abs() < 0.25 && (last.1 - p.1).abs() < 0.25 {
            return;
        }
    }
    pts.push(p);
}

/// Picks one figure of an interval sample.
type Pick = fn(&fileio::result::IntervalSample) -> f64;

/// One group's line: (group index, points (t, value)).
type Line = (usize, Vec<(f64, f64)>);

/// Per group: the mean of `pick` over the repeats at each sample time (keyed
/// by millisecond, so 1.0 s and 1.0000001 s meet). Groups without samples
/// get no line.
fn mean_lines(g: &Grouping, pick: Pick) -> Vec<Line> {
    let mut per_group = Vec::new();
    for (gi, grp) in g.groups.iter().enumerate() {
        let mut acc: BTreeMap<i64, (f64, u32)> = BTreeMap::new();
        for r in g.results(grp) {
            for s in &r.intervals {
                // The key only groups samples taken at the same millisecond;
                // `as` saturates an absurd stored time (and maps NaN to 0)
                // instead of failing.
                #[allow(clippy::cast_possible_truncation)]
                let ms = (s.t_s * 1000.0).round() as i64;
                let e = acc.entry(ms).or_insert((0.0, 0));
                e.0 += pick(s);
                e.1 += 1;
            }
        }
        let pts: Vec<(f64, f64)> = acc
            .into_iter()
            .map(|(t, (sum, n))| (t as f64 / 1000.0, sum / f64::from(n)))
            .collect();
        if !pts.is_empty() {
            per_group.push((gi, pts));
        }
    }
    per_group
}

/// Throughput over time from the interval samples: a panel for reads and one
/// for writes (when present), one line per configuration, averaged over its
/// repeats at each sample time. Per-run lines of a 12 x 3 matrix are unreadable.
pub fn timeline_chart(g: &Grouping) -> Option<String> {
    let panels: Vec<(&str, Pick)> = [
        ("read MiB/s", (|s| s.read_mib_per_s) as Pick),
        ("write MiB/s", (|s| s.written_mib_per_s) as Pick),
    ]
    .into_iter()
    .filter(|(_, f)| {
        g.runs
            .iter()
            .any(|r| r.result.intervals.iter().any(|s| f(s) > 0.0))
    })
    .collect();
    if panels.is_empty() {
        return None;
    }
    // Per panel: (group index, points (t, MiB/s)).
    let lines: Vec<Vec<Line>> = panels.iter().map(|(_, f)| mean_lines(g, *f)).collect();
    let points = lines.iter().flatten().flat_map(|(_, pts)| pts);
    let (tmax, vmax) = points.fold((0.0f64, 0.0f64), |(t0, v0), &(t, v)| (t0.max(t), v0.max(v)));
    let xt = nice_ticks(tmax, 8);
    let yt = nice_ticks(vmax, 4);
    let (txmax, yvmax) = (*xt.last().unwrap_or(&1.0), *yt.last().unwrap_or(&1.0));
    let legend_w = 230.0;
    let (left, right, top) = (70.0, WIDTH - legend_w, 70.0);
    let panel_h = 170.0;
    let gap = 34.0;
    let bottom = top + panels.len() as f64 * panel_h + (panels.len() - 1) as f64 * gap;
    let height = bottom + 56.0;
    let x = |t: f64| left + (right - left) * t / txmax;

    let mut svg = Svg::new(WIDTH, height, "Throughput over time");
    header(&mut svg, "Throughput over time", &subtitle(g));
    for (pi, (name, _)) in panels.iter().enumerate() {
        let ptop = top + pi as f64 * (panel_h + gap);
        let pbot = ptop + panel_h;
        let y = |v: f64| pbot - (pbot - ptop - 8.0) * v / yvmax;
        for t in &yt {
            svg.line(left, y(*t), right, y(*t), GRID, 1.0);
            svg.text(
                left - 12.0,
                y(*t) + 4.0,
                &tick_label(*t),
                11.0,
                "end",
                MUTED,
                "",
            );
        }
        for t in &xt {
            svg.line(x(*t), pbot, x(*t), pbot + 4.0, INK, 1.0);
            svg.text(
                x(*t),
                pbot + 17.0,
                &tick_label(*t),
                11.0,
                "middle",
                MUTED,
                "",
            );
        }
        svg.line(left, pbot, right, pbot, INK, 1.0);
        svg.line(left, ptop, left, pbot, INK, 1.0);
        svg.text(
            18.0,
            (ptop + pbot) / 2.0,
            name,
            12.0,
            "middle",
            INK,
            &format!("transform=\"rotate(-90 18 {:.1})\"", (ptop + pbot) / 2.0),
        );
        line_paths(&mut svg, g, &lines[pi], &x, &y);
    }
    svg.text(
        (left + right) / 2.0,
        bottom + 40.0,
        "time since start (s)",
        12.0,
        "middle",
        INK,
        "",
    );
    let legend: Vec<(String, &str)> = g
        .groups
        .iter()
        .enumerate()
        .filter(|(gi, _)| lines.iter().any(|p| p.iter().any(|(i, _)| i == gi)))
        .map(|(gi, grp)| (g.group_name(grp), color(gi)))
        .collect();
    keyed_legend(&mut svg, g, right + 20.0, top, &legend);
    missing_lines_note(&mut svg, g, &lines, bottom + 62.0);
    Some(svg.finish())
}

/// Configurations without samples have no line in the timeline: a note at
/// `y` says which, rather than leave a reader to look for them.
fn missing_lines_note(svg: &mut Svg, g: &Grouping, lines: &[Vec<Line>], y: f64) {
    let missing: Vec<String> = g
        .groups
        .iter()
        .enumerate()
        .filter(|(gi, _)| !lines.iter().any(|p| p.iter().any(|(i, _)| i == gi)))
        .map(|(_, grp)| g.group_name(grp))
        .collect();
    if missing.is_empty() {
        return;
    }
    svg.height += 22.0;
    let text = format!(
        "No interval samples, so no line for {} configuration{} (record them with --report-interval=1): {}",
        missing.len(),
        if missing.len() == 1 { "" } else { "s" },
        missing.join(", ")
    );
    svg.raw(&format!(
        r#"<text class="missing-note" x="20" y="{y:.1}" font-size="11" fill="{MUTED}">{}</text>"#,
        crate::escape::html(&ellipsize(&text, 150))
    ));
}

/// The runs with no interval samples: [`timeline_chart`] has no line for
/// them.
pub fn runs_without_intervals<'a>(g: &Grouping<'a>) -> Vec<&'a StoredRun> {
    g.runs
        .iter()
        .filter(|r| r.result.intervals.is_empty())
        .collect()
}

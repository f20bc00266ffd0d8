//! The charts: grouped bars of throughput per configuration, latency percentile
//! curves per operation (log scales, from the stored histograms), and throughput
//! over time (from `--report-interval` samples). Each returns a standalone SVG
//! document, or None when the runs hold nothing to draw (the caller says why).
//!
//! Everything drawn from data carries `class="mark"`, so a test can check that a
//! chart is not just axes.

use crate::group::{Group, Grouping};
use crate::stats::Summary;
use crate::svg::*;
use crate::table::fmt_num;
use fileio::result::LatencyKey;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The chart kinds, as `tankbench chart KIND` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    Throughput,
    Latency,
    Timeline,
}

impl ChartKind {
    pub const NAMES: &'static str = "throughput, latency, timeline";

    pub fn parse(s: &str) -> Option<ChartKind> {
        match s {
            "throughput" => Some(ChartKind::Throughput),
            "latency" => Some(ChartKind::Latency),
            "timeline" => Some(ChartKind::Timeline),
            _ => None,
        }
    }
}

const WIDTH: f64 = 960.0;

/// One bar series: a name, a colour and how to get its value from a run.
struct BarSeries {
    name: &'static str,
    color: &'static str,
    value: fn(&fileio::result::RunResult) -> f64,
}

/// Horizontal grouped bars: one band per configuration, a bar each for read and
/// write MiB/s (mean of the repeats), whiskers for ± one standard deviation and a
/// dot per repeat, so the spread is visible next to the mean.
pub fn throughput_chart(g: &Grouping) -> Option<String> {
    let all = [
        BarSeries {
            name: "read MiB/s",
            color: READ_COLOR,
            value: |r| r.rates.read_mib_per_s,
        },
        BarSeries {
            name: "write MiB/s",
            color: WRITE_COLOR,
            value: |r| r.rates.written_mib_per_s,
        },
    ];
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
    let label_w = names
        .iter()
        .map(|n| text_width(n, 12.0))
        .fold(60.0, f64::max)
        .min(340.0);
    let left = 20.0 + label_w + 12.0;
    let right = WIDTH - 70.0;
    let top = 84.0;
    let bar_h = 16.0;
    let band = series.len() as f64 * (bar_h + 3.0) + 18.0;
    let plot_h = band * g.groups.len() as f64;
    let height = top + plot_h + 56.0;

    let mut max = 0.0f64;
    for grp in &g.groups {
        for s in &series {
            for r in g.results(grp) {
                max = max.max((s.value)(r));
            }
            if let Some(sum) = g.summary(grp, |r| Some((s.value)(r))) {
                max = max.max(sum.mean + sum.sd);
            }
        }
    }
    let ticks = nice_ticks(max, 8);
    let xmax = *ticks.last().unwrap_or(&1.0);
    let x = |v: f64| left + (right - left) * v / xmax;

    let mut svg = Svg::new(WIDTH, height, "Throughput per configuration");
    header(&mut svg, "Throughput per configuration", &subtitle(g));
    legend_row(
        &mut svg,
        left,
        64.0,
        &series
            .iter()
            .map(|s| (s.name.to_string(), s.color, false))
            .collect::<Vec<_>>(),
    );
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
    value_axis(&mut svg, &ticks, &x, (left, right), (top, top + plot_h));

    for (gi, grp) in g.groups.iter().enumerate() {
        let y0 = top + gi as f64 * band + 9.0;
        if gi > 0 {
            svg.line(20.0, y0 - 9.0, right, y0 - 9.0, "#f2f2f2", 1.0);
        }
        let mid = y0 + series.len() as f64 * (bar_h + 3.0) / 2.0;
        let n = grp.runs.len();
        let runs_note = if n > 1 {
            // A no-break space: XML collapses a leading plain space in a tspan.
            format!("<tspan fill=\"{MUTED}\" font-size=\"10\">\u{a0}×{n}</tspan>")
        } else {
            String::new()
        };
        svg.raw(&format!(
            r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="end" fill="{INK}">{}{runs_note}</text>"#,
            left - 12.0,
            mid + 4.0,
            crate::escape::html(&names[gi])
        ));
        for (si, s) in series.iter().enumerate() {
            let y = y0 + si as f64 * (bar_h + 3.0);
            if let Some(sum) = g.summary(grp, |r| Some((s.value)(r))) {
                bar(&mut svg, g, grp, s, &sum, (left, y, bar_h), &x);
            }
        }
    }
    svg.line(left, top, left, top + plot_h, INK, 1.0);
    Some(svg.finish())
}

/// One bar of [`throughput_chart`] at `(left, y, bar_h)`: the mean, with
/// whiskers for ± one standard deviation and a dot per repeat when there are
/// several, and the mean as text after whatever reaches furthest right.
fn bar(
    svg: &mut Svg,
    g: &Grouping,
    grp: &Group,
    s: &BarSeries,
    sum: &Summary,
    (left, y, bar_h): (f64, f64, f64),
    x: &dyn Fn(f64) -> f64,
) {
    let w = (x(sum.mean) - left).max(if sum.mean > 0.0 { 1.0 } else { 0.0 });
    svg.raw(&format!(
        r#"<rect class="mark" x="{left:.1}" y="{y:.1}" width="{w:.1}" height="{bar_h}" fill="{}"><title>{}: {} ({})</title></rect>"#,
        s.color,
        crate::escape::html(&g.group_name(grp)),
        fmt_num(sum.mean),
        s.name
    ));
    let mut end = x(sum.mean);
    if sum.n > 1 {
        let (lo, hi) = (x((sum.mean - sum.sd).max(0.0)), x(sum.mean + sum.sd));
        let cy = y + bar_h / 2.0;
        svg.line(lo, cy, hi, cy, INK, 1.2);
        svg.line(lo, cy - 4.0, lo, cy + 4.0, INK, 1.2);
        svg.line(hi, cy - 4.0, hi, cy + 4.0, INK, 1.2);
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
    svg.text(
        end + 5.0,
        y + bar_h - 4.0,
        &fmt_num(sum.mean),
        11.0,
        "start",
        INK,
        "",
    );
}

/// Vertical grid lines at `ticks` from `top` to `bottom`, their labels under
/// the plot and the axis title.
fn value_axis(
    svg: &mut Svg,
    ticks: &[f64],
    x: &dyn Fn(f64) -> f64,
    (left, right): (f64, f64),
    (top, bottom): (f64, f64),
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
        "MiB/s (MiB = 2^20 bytes)",
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

fn header(svg: &mut Svg, title: &str, subtitle: &str) {
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
fn legend_row(svg: &mut Svg, x: f64, y: f64, items: &[(String, &str, bool)]) {
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
            left - 8.0,
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
                left - 8.0,
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
    Some(svg.finish())
}

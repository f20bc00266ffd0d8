//! `plan --chart`: usable space against predicted sync writes per second,
//! one point per layout (two with a log device: the ZIL in the pool and on
//! the log device, joined by a line), coloured by the failures the layout
//! always survives. The three things the reference user weighs (space,
//! speed, redundancy) in one picture; the ranked table has the rest.
//!
//! Labels are placed where they overlap nothing (`svg::LabelPlacer`); a
//! point with no free place gets no label, and the chart says how many.

use crate::charts::{header, WIDTH};
use crate::svg::*;
use crate::table::fmt_num;
use zfs_model::perf::{Bounds, SyncInterval, WorkloadFigures};
use zfs_model::plan::{Plan, PlanEntry};
use zfs_model::units::tib;

/// One layout's point: where it sits and its whisker.
#[derive(Debug, Clone, Copy)]
struct Point {
    usable_tib: f64,
    writes_per_s: f64,
    interval: Option<Bounds>,
}

impl Point {
    fn of(
        entry: &PlanEntry,
        figures: Option<&WorkloadFigures>,
        interval: Option<&SyncInterval>,
    ) -> Option<Point> {
        let f = figures?;
        (f.writes_per_s > 0.0).then(|| Point {
            usable_tib: tib(entry.usable_bytes),
            writes_per_s: f.writes_per_s,
            interval: interval.map(|i| i.writes_per_s),
        })
    }
}

/// The colour of a layout by the failures it always survives.
fn tolerance_color(failures: u32) -> &'static str {
    match failures {
        0 => "#e15759",
        1 => "#f28e2b",
        2 => "#4e79a7",
        3 => "#59a14f",
        _ => "#b07aa1",
    }
}

/// The words of a tolerance in the legend.
fn tolerance_name(failures: u32) -> String {
    match failures {
        0 => "survives no failure".into(),
        1 => "survives any 1 failure".into(),
        n => format!("survives any {n} failures"),
    }
}

/// One layout as drawn: its entry, its point with the ZIL in the pool and
/// its point with the log device (either may be missing).
type Drawn<'a> = (&'a PlanEntry, Option<Point>, Option<Point>);

/// The plot area and its two scales.
struct Frame {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    /// Room between the frame and the outermost point.
    pad: f64,
    /// x: usable TiB from `x0` to `x1`.
    x0: f64,
    x1: f64,
    /// y: sync writes/s from `yl` to `yh`, on a log scale when `log_y`.
    yl: f64,
    yh: f64,
    log_y: bool,
}

impl Frame {
    fn x(&self, v: f64) -> f64 {
        self.left
            + self.pad
            + (self.right - self.left - 2.0 * self.pad) * (v - self.x0) / (self.x1 - self.x0)
    }

    fn y(&self, v: f64) -> f64 {
        let f = if self.log_y {
            (v.max(self.yl).log10() - self.yl.log10()) / (self.yh.log10() - self.yl.log10())
        } else {
            (v - self.yl) / (self.yh - self.yl)
        };
        self.bottom - self.pad - (self.bottom - self.top - 2.0 * self.pad) * f
    }
}

/// The layouts with at least one predicted point, in rank order.
fn drawn(plan: &Plan) -> Vec<Drawn<'_>> {
    plan.entries
        .iter()
        .map(|e| {
            let p = &e.performance;
            (
                e,
                Point::of(e, p.predicted.as_ref(), p.predicted_interval.as_ref()),
                Point::of(
                    e,
                    p.predicted_with_log.as_ref(),
                    p.predicted_with_log_interval.as_ref(),
                ),
            )
        })
        .filter(|(_, a, b)| a.is_some() || b.is_some())
        .collect()
}

/// The frame that holds every point and whisker, and its ticks (x, y). A
/// log y axis when the rates span more than a factor of 10 (a log device
/// typically gains 20-30x), linear otherwise.
fn frame(entries: &[Drawn]) -> (Frame, Vec<f64>, Vec<f64>) {
    let points = || entries.iter().flat_map(|(_, a, b)| [a, b]).flatten();
    let x_lo = points().map(|p| p.usable_tib).fold(f64::INFINITY, f64::min);
    let x_hi = points().map(|p| p.usable_tib).fold(0.0, f64::max);
    let reach = |p: &Point| {
        p.interval.map_or((p.writes_per_s, p.writes_per_s), |b| {
            (b.low.min(p.writes_per_s), b.high.max(p.writes_per_s))
        })
    };
    let y_lo = points().map(|p| reach(p).0).fold(f64::INFINITY, f64::min);
    let y_hi = points().map(|p| reach(p).1).fold(0.0, f64::max);
    let log_y = y_hi > 10.0 * y_lo.max(1e-9);
    let xt = nice_range(x_lo, x_hi, 7);
    let yt = if log_y {
        let (a, b) = decades(y_lo, y_hi);
        std::iter::successors(Some(a), |d| Some(d * 10.0))
            .take_while(|d| *d <= b * 1.000_001)
            .collect()
    } else {
        nice_range(y_lo, y_hi, 6)
    };
    let top = 92.0;
    let f = Frame {
        left: 78.0,
        right: WIDTH - LEGEND_W,
        top,
        bottom: top + 420.0,
        pad: 12.0,
        x0: xt[0],
        x1: *xt.last().unwrap_or(&(x_lo + 1.0)),
        yl: yt[0],
        yh: *yt.last().unwrap_or(&(y_lo + 1.0)),
        log_y,
    };
    (f, xt, yt)
}

/// The width of the legend column at the right.
const LEGEND_W: f64 = 210.0;

/// Size of a point's marker (radius), px.
const MARKER: f64 = 4.5;

/// The chart of `plan`, or None when no layout has a predicted sync rate
/// (a plan without predictions: the table says why).
pub fn plan_chart(plan: &Plan) -> Option<String> {
    let entries = drawn(plan);
    if entries.is_empty() {
        return None;
    }
    let (f, xt, yt) = frame(&entries);
    let title = "Usable space against sync writes/s, per layout";
    let mut svg = Svg::new(WIDTH, f.bottom + 70.0, title);
    header(&mut svg, title, &context(plan));
    svg.raw(&format!(
        r#"<text class="prediction" x="20" y="66" font-size="13" font-weight="bold" fill="{PREDICTION_COLOR}">PREDICTION (simulated, not measured): sync writes/s of the plan's workload on each layout</text>"#
    ));
    axes(&mut svg, &f, &xt, &yt, &entries);
    let mut placer = LabelPlacer::new(Area {
        x0: f.left + 2.0,
        y0: f.top + 2.0,
        x1: f.right - 2.0,
        y1: f.bottom - 2.0,
    });
    for (_, a, b) in &entries {
        for p in [a, b].into_iter().flatten() {
            let (px, py) = (f.x(p.usable_tib), f.y(p.writes_per_s));
            let m = MARKER + 1.0;
            placer.occupy(Area {
                x0: px - m,
                y0: py - m,
                x1: px + m,
                y1: py + m,
            });
        }
    }
    for d in &entries {
        points(&mut svg, &f, d);
    }
    let left_out = labels(&mut svg, &f, &entries, &mut placer);
    legend(&mut svg, plan, &entries, f.right + 22.0, f.top + 8.0);

    // What the chart leaves out, under the axis title.
    let mut notes = Vec::new();
    let hidden = plan.entries.len() - entries.len();
    if hidden > 0 {
        notes.push(format!(
            "{hidden} layout(s) have no predicted sync rate and are not drawn"
        ));
    }
    if left_out > 0 {
        notes.push(format!(
            "{left_out} label(s) left out where they would overlap (the ranked table lists every layout)"
        ));
    }
    if !notes.is_empty() {
        svg.raw(&format!(
            r#"<text class="missing-note" x="20" y="{:.1}" font-size="11" fill="{MUTED}">{}</text>"#,
            f.bottom + 62.0,
            crate::escape::html(&notes.join("; "))
        ));
    }
    Some(svg.finish())
}

/// What every point shares: the disks, the workload, protocol and link.
fn context(plan: &Plan) -> String {
    let r = &plan.request;
    let disks: Vec<String> = r
        .groups
        .iter()
        .map(|g| format!("{} × {} {}", g.count, g.label, g.class.name()))
        .collect();
    let mut context = vec![
        disks.join(" + "),
        format!("workload {}, {} threads", r.workload.name(), r.threads),
        format!("protocol {}", r.protocol.name()),
    ];
    if let Some(link) = &r.link {
        context.push(format!("link {}", link.name()));
    }
    context.join(" · ")
}

/// Grid, tick labels, frame and the axis titles.
fn axes(svg: &mut Svg, f: &Frame, xt: &[f64], yt: &[f64], entries: &[Drawn]) {
    for t in xt {
        svg.line(f.x(*t), f.top, f.x(*t), f.bottom, GRID, 1.0);
        svg.text(
            f.x(*t),
            f.bottom + 16.0,
            &tick_label(*t),
            11.0,
            "middle",
            MUTED,
            "",
        );
    }
    for t in yt {
        svg.line(f.left, f.y(*t), f.right, f.y(*t), GRID, 1.0);
        svg.text(
            f.left - 8.0,
            f.y(*t) + 4.0,
            &tick_label(*t),
            11.0,
            "end",
            MUTED,
            "",
        );
        if f.log_y && *t < f.yh {
            for m in [2.0, 5.0] {
                svg.line(f.left, f.y(t * m), f.right, f.y(t * m), "#f3f3f3", 1.0);
            }
        }
    }
    svg.raw(&format!(
        r#"<rect x="{}" y="{}" width="{:.1}" height="{:.1}" fill="none" stroke="{INK}" stroke-width="1"/>"#,
        f.left,
        f.top,
        f.right - f.left,
        f.bottom - f.top
    ));
    let block = entries.first().map_or(String::new(), |(e, _, _)| {
        crate::labels::size_name(e.block_bytes)
    });
    svg.text(
        (f.left + f.right) / 2.0,
        f.bottom + 40.0,
        &format!("usable TiB (2^40 bytes) at {block} records"),
        12.0,
        "middle",
        INK,
        "",
    );
    let ytitle = if f.log_y {
        "sync writes/s (log scale)"
    } else {
        "sync writes/s"
    };
    let mid = (f.top + f.bottom) / 2.0;
    svg.text(
        18.0,
        mid,
        ytitle,
        12.0,
        "middle",
        INK,
        &format!("transform=\"rotate(-90 18 {mid:.1})\""),
    );
}

/// One layout's points (a circle for the ZIL in the pool, a diamond for
/// the log device), their whiskers and the line joining them; the
/// recommendation outlined.
fn points(svg: &mut Svg, f: &Frame, (e, a, b): &Drawn) {
    let color = tolerance_color(e.reliability.failures_tolerated);
    if let (Some(a), Some(b)) = (a, b) {
        let px = f.x(a.usable_tib);
        svg.raw(&format!(
            r#"<line x1="{px:.1}" y1="{:.1}" x2="{px:.1}" y2="{:.1}" stroke="{color}" stroke-opacity="0.35" stroke-width="1.5"/>"#,
            f.y(a.writes_per_s),
            f.y(b.writes_per_s)
        ));
    }
    for (p, on_log) in [(a, false), (b, true)] {
        let Some(p) = p else { continue };
        let (px, py) = (f.x(p.usable_tib), f.y(p.writes_per_s));
        if let Some(i) = p.interval {
            let (lo, hi) = (f.y(i.low), f.y(i.high));
            if (lo - hi).abs() > 2.0 {
                svg.line(px, lo, px, hi, INK, 1.0);
                svg.line(px - 3.0, lo, px + 3.0, lo, INK, 1.0);
                svg.line(px - 3.0, hi, px + 3.0, hi, INK, 1.0);
            }
        }
        let tip = crate::escape::html(&format!(
            "{}: {} TiB usable, {} sync writes/s{}{}",
            e.layout,
            fmt_num(p.usable_tib),
            fmt_num(p.writes_per_s),
            p.interval.map_or(String::new(), |i| format!(
                " ({}–{})",
                fmt_num(i.low),
                fmt_num(i.high)
            )),
            if on_log {
                " with the log device"
            } else {
                ", ZIL in the pool"
            }
        ));
        let stroke = if e.rank == 1 {
            format!(r#" stroke="{INK}" stroke-width="2""#)
        } else {
            r##" stroke="#fff" stroke-width="1""##.to_string()
        };
        if on_log {
            svg.raw(&format!(
                r#"<path class="mark point" d="{}" fill="{color}"{stroke}><title>{tip}</title></path>"#,
                diamond(px, py, MARKER + 0.8)
            ));
        } else {
            svg.raw(&format!(
                r#"<circle class="mark point" cx="{px:.1}" cy="{py:.1}" r="{MARKER}" fill="{color}"{stroke}><title>{tip}</title></circle>"#
            ));
        }
    }
}

/// The path of a diamond of half-diagonal `m` around (x, y).
fn diamond(x: f64, y: f64, m: f64) -> String {
    format!(
        "M{x:.1},{:.1} L{:.1},{y:.1} L{x:.1},{:.1} L{:.1},{y:.1} Z",
        y - m,
        x + m,
        y + m,
        x - m
    )
}

/// The layouts' names, in rank order so the best get the nearest places,
/// each by its upper point (the log device's, if any); returns how many
/// found no place.
fn labels(svg: &mut Svg, f: &Frame, entries: &[Drawn], placer: &mut LabelPlacer) -> usize {
    let mut left_out = 0;
    for (e, a, b) in entries {
        let Some(p) = b.or(*a) else { continue };
        let (px, py) = (f.x(p.usable_tib), f.y(p.writes_per_s));
        let text = if e.rank == 1 {
            format!("{} (#1)", e.layout)
        } else {
            e.layout.clone()
        };
        let Some(at) = placer.place((px, py), &text, 11.0) else {
            left_out += 1;
            continue;
        };
        if at.leader {
            let ly = if at.y < py { at.y + 3.0 } else { at.y - 10.0 };
            svg.line(px, py, at.x, ly, "#999", 0.8);
        }
        let weight = if e.rank == 1 {
            " font-weight=\"bold\""
        } else {
            ""
        };
        svg.raw(&format!(
            r#"<text class="point-label" x="{:.1}" y="{:.1}" font-size="11" text-anchor="{}" fill="{INK}"{weight}>{}</text>"#,
            at.x,
            at.y,
            at.anchor,
            crate::escape::html(&text)
        ));
    }
    left_out
}

/// The legend column from (x, y): the two markers, then the colours present.
fn legend(svg: &mut Svg, plan: &Plan, entries: &[Drawn], x: f64, y: f64) {
    let mut y = y;
    svg.text(
        x,
        y,
        "sync writes/s with",
        11.0,
        "start",
        MUTED,
        "font-style=\"italic\"",
    );
    y += 20.0;
    svg.raw(&format!(
        r##"<circle cx="{:.1}" cy="{:.1}" r="{MARKER}" fill="#888"/>"##,
        x + 6.0,
        y - 4.0
    ));
    svg.text(x + 18.0, y, "the ZIL in the pool", 11.0, "start", INK, "");
    if entries.iter().any(|(_, _, b)| b.is_some()) {
        y += 18.0;
        svg.raw(&format!(
            r##"<path d="{}" fill="#888"/>"##,
            diamond(x + 6.0, y - 4.0, MARKER + 0.8)
        ));
        let log = plan
            .request
            .log
            .as_ref()
            .map_or("a log device".to_string(), |l| {
                let size = crate::plan::log_size(l.bytes);
                if l.devices > 1 {
                    format!("{}-way mirror log, {size} {}", l.devices, l.class.name())
                } else {
                    format!("log {size} {}", l.class.name())
                }
            });
        svg.text(x + 18.0, y, &ellipsize(&log, 26), 11.0, "start", INK, "");
    }
    y += 28.0;
    svg.text(
        x,
        y,
        "colour: redundancy",
        11.0,
        "start",
        MUTED,
        "font-style=\"italic\"",
    );
    let mut tolerances: Vec<u32> = entries
        .iter()
        .map(|(e, _, _)| e.reliability.failures_tolerated)
        .collect();
    tolerances.sort_unstable();
    tolerances.dedup();
    for t in tolerances.iter().rev() {
        y += 18.0;
        svg.rect(x, y - 10.0, 12.0, 12.0, tolerance_color(*t), "legend");
        svg.text(x + 18.0, y, &tolerance_name(*t), 11.0, "start", INK, "");
    }
    y += 28.0;
    svg.text(
        x,
        y,
        "outlined: the recommendation",
        11.0,
        "start",
        MUTED,
        "",
    );
    let intervals = entries
        .iter()
        .any(|(_, a, b)| [a, b].into_iter().flatten().any(|p| p.interval.is_some()));
    if intervals {
        svg.text(
            x,
            y + 16.0,
            "whiskers: 80 % interval",
            11.0,
            "start",
            MUTED,
            "",
        );
    }
}

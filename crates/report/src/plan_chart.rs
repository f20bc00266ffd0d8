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

/// The chart of `plan`, or None when no layout has a predicted sync rate
/// (a plan without predictions: the table says why).
pub fn plan_chart(plan: &Plan) -> Option<String> {
    let entries: Vec<(&PlanEntry, Option<Point>, Option<Point>)> = plan
        .entries
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
        .collect();
    if entries.is_empty() {
        return None;
    }
    let with_log = entries.iter().any(|(_, _, b)| b.is_some());
    let points = || entries.iter().flat_map(|(_, a, b)| [a, b]).flatten();
    let x_lo = points().map(|p| p.usable_tib).fold(f64::INFINITY, f64::min);
    let x_hi = points().map(|p| p.usable_tib).fold(0.0, f64::max);
    let y_of = |p: &Point| {
        let (lo, hi) = p.interval.map_or((p.writes_per_s, p.writes_per_s), |b| {
            (b.low.min(p.writes_per_s), b.high.max(p.writes_per_s))
        });
        (lo, hi)
    };
    let y_lo = points().map(|p| y_of(p).0).fold(f64::INFINITY, f64::min);
    let y_hi = points().map(|p| y_of(p).1).fold(0.0, f64::max);
    // A log axis when the rates span more than a factor of 10 (the log
    // device's gain is typically 20-30x); linear otherwise.
    let log_y = y_hi > 10.0 * y_lo.max(1e-9);

    let legend_w = 210.0;
    let (left, right, top) = (78.0, WIDTH - legend_w, 92.0);
    let bottom = top + 420.0;
    let xt = nice_range(x_lo, x_hi, 7);
    let (x0, x1) = (xt[0], *xt.last().unwrap_or(&(x_lo + 1.0)));
    let pad = 12.0;
    let x = |v: f64| left + pad + (right - left - 2.0 * pad) * (v - x0) / (x1 - x0);
    let (yl, yh, yticks) = if log_y {
        let (a, b) = decades(y_lo, y_hi);
        let mut t = Vec::new();
        let mut d = a;
        while d <= b * 1.000_001 {
            t.push(d);
            d *= 10.0;
        }
        (a, b, t)
    } else {
        let t = nice_range(y_lo, y_hi, 6);
        (t[0], *t.last().unwrap_or(&(y_lo + 1.0)), t)
    };
    let y = |v: f64| {
        let f = if log_y {
            (v.max(yl).log10() - yl.log10()) / (yh.log10() - yl.log10())
        } else {
            (v - yl) / (yh - yl)
        };
        bottom - pad - (bottom - top - 2.0 * pad) * f
    };

    let title = "Usable space against sync writes/s, per layout";
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
    let mut svg = Svg::new(WIDTH, bottom + 70.0, title);
    header(&mut svg, title, &context.join(" · "));
    svg.raw(&format!(
        r#"<text class="prediction" x="20" y="66" font-size="13" font-weight="bold" fill="{PREDICTION_COLOR}">PREDICTION (simulated, not measured): sync writes/s of the plan's workload on each layout</text>"#
    ));

    // Axes and grid.
    for t in &xt {
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
    for t in &yticks {
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
        if log_y && *t < yh {
            for m in [2.0, 5.0] {
                svg.line(left, y(t * m), right, y(t * m), "#f3f3f3", 1.0);
            }
        }
    }
    svg.raw(&format!(
        r#"<rect x="{left}" y="{top}" width="{:.1}" height="{:.1}" fill="none" stroke="{INK}" stroke-width="1"/>"#,
        right - left,
        bottom - top
    ));
    let block = entries.first().map_or(String::new(), |(e, _, _)| {
        crate::labels::size_name(e.block_bytes)
    });
    svg.text(
        (left + right) / 2.0,
        bottom + 40.0,
        &format!("usable TiB (2^40 bytes) at {block} records"),
        12.0,
        "middle",
        INK,
        "",
    );
    let ytitle = if log_y {
        "sync writes/s (log scale)"
    } else {
        "sync writes/s"
    };
    svg.text(
        18.0,
        (top + bottom) / 2.0,
        ytitle,
        12.0,
        "middle",
        INK,
        &format!("transform=\"rotate(-90 18 {:.1})\"", (top + bottom) / 2.0),
    );

    // Points, whiskers and the line from the pool's ZIL to the log device.
    let mut placer = LabelPlacer::new(Area {
        x0: left + 2.0,
        y0: top + 2.0,
        x1: right - 2.0,
        y1: bottom - 2.0,
    });
    let marker = 4.5;
    for (_, a, b) in &entries {
        for p in [a, b].into_iter().flatten() {
            let (px, py) = (x(p.usable_tib), y(p.writes_per_s));
            placer.occupy(Area {
                x0: px - marker - 1.0,
                y0: py - marker - 1.0,
                x1: px + marker + 1.0,
                y1: py + marker + 1.0,
            });
        }
    }
    for (e, a, b) in &entries {
        let color = tolerance_color(e.reliability.failures_tolerated);
        if let (Some(a), Some(b)) = (a, b) {
            let px = x(a.usable_tib);
            svg.raw(&format!(
                r#"<line x1="{px:.1}" y1="{:.1}" x2="{px:.1}" y2="{:.1}" stroke="{color}" stroke-opacity="0.35" stroke-width="1.5"/>"#,
                y(a.writes_per_s),
                y(b.writes_per_s)
            ));
        }
        for (p, on_log) in [(a, false), (b, true)] {
            let Some(p) = p else { continue };
            let (px, py) = (x(p.usable_tib), y(p.writes_per_s));
            if let Some(i) = p.interval {
                let (lo, hi) = (y(i.low), y(i.high));
                if (lo - hi).abs() > 2.0 {
                    svg.line(px, lo, px, hi, INK, 1.0);
                    svg.line(px - 3.0, lo, px + 3.0, lo, INK, 1.0);
                    svg.line(px - 3.0, hi, px + 3.0, hi, INK, 1.0);
                }
            }
            let tip = format!(
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
            );
            let tip = crate::escape::html(&tip);
            let stroke = if e.rank == 1 {
                format!(r#" stroke="{INK}" stroke-width="2""#)
            } else {
                r##" stroke="#fff" stroke-width="1""##.to_string()
            };
            if on_log {
                let m = marker + 0.8;
                svg.raw(&format!(
                    r#"<path class="mark point" d="M{px:.1},{:.1} L{:.1},{py:.1} L{px:.1},{:.1} L{:.1},{py:.1} Z" fill="{color}"{stroke}><title>{tip}</title></path>"#,
                    py - m,
                    px + m,
                    py + m,
                    px - m,
                ));
            } else {
                svg.raw(&format!(
                    r#"<circle class="mark point" cx="{px:.1}" cy="{py:.1}" r="{marker}" fill="{color}"{stroke}><title>{tip}</title></circle>"#
                ));
            }
        }
    }

    // Labels in rank order, so the best layouts get the nearest places; a
    // layout's label goes by its upper point (the log device's, if any).
    let mut left_out = 0;
    for (e, a, b) in &entries {
        let Some(p) = b.or(*a) else { continue };
        let (px, py) = (x(p.usable_tib), y(p.writes_per_s));
        let text = if e.rank == 1 {
            format!("{} (#1)", e.layout)
        } else {
            e.layout.clone()
        };
        match placer.place((px, py), &text, 11.0) {
            Some(at) => {
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
            None => left_out += 1,
        }
    }

    // Legend: the two markers, then the colours present.
    let lx = right + 22.0;
    let mut ly = top + 8.0;
    svg.text(
        lx,
        ly,
        "sync writes/s with",
        11.0,
        "start",
        MUTED,
        "font-style=\"italic\"",
    );
    ly += 20.0;
    svg.raw(&format!(
        r##"<circle cx="{:.1}" cy="{:.1}" r="{marker}" fill="#888"/>"##,
        lx + 6.0,
        ly - 4.0
    ));
    svg.text(lx + 18.0, ly, "the ZIL in the pool", 11.0, "start", INK, "");
    if with_log {
        ly += 18.0;
        let (cx, cy, m) = (lx + 6.0, ly - 4.0, marker + 0.8);
        svg.raw(&format!(
            r##"<path d="M{cx:.1},{:.1} L{:.1},{cy:.1} L{cx:.1},{:.1} L{:.1},{cy:.1} Z" fill="#888"/>"##,
            cy - m,
            cx + m,
            cy + m,
            cx - m
        ));
        let log = r.log.as_ref().map_or("a log device".to_string(), |l| {
            let size = crate::plan::log_size(l.bytes);
            if l.devices > 1 {
                format!("{}-way mirror log, {size} {}", l.devices, l.class.name())
            } else {
                format!("log {size} {}", l.class.name())
            }
        });
        svg.text(lx + 18.0, ly, &ellipsize(&log, 26), 11.0, "start", INK, "");
    }
    ly += 28.0;
    svg.text(
        lx,
        ly,
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
        ly += 18.0;
        svg.rect(lx, ly - 10.0, 12.0, 12.0, tolerance_color(*t), "legend");
        svg.text(lx + 18.0, ly, &tolerance_name(*t), 11.0, "start", INK, "");
    }
    ly += 28.0;
    svg.text(
        lx,
        ly,
        "outlined: the recommendation",
        11.0,
        "start",
        MUTED,
        "",
    );
    if entries
        .iter()
        .any(|(_, a, b)| [a, b].into_iter().flatten().any(|p| p.interval.is_some()))
    {
        ly += 16.0;
        svg.text(lx, ly, "whiskers: 80 % interval", 11.0, "start", MUTED, "");
    }

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
        let text = notes.join("; ");
        svg.raw(&format!(
            r#"<text class="missing-note" x="20" y="{:.1}" font-size="11" fill="{MUTED}">{}</text>"#,
            bottom + 62.0,
            crate::escape::html(&text)
        ));
    }
    Some(svg.finish())
}

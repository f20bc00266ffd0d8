//! `slog --chart`: the log-device test's size curve. Two panels over the
//! write size (a log2 axis, 512 B to 1 MiB): the latency of one write and
//! its flush (median, mean and p99, log scale, with the fitted line
//! `overhead + size / bandwidth` dashed), and the MB/s made durable. Where
//! the latency stops being flat is where the device's bandwidth, not its
//! flush, sets the cost: what a log device is judged by.

use crate::charts::{header, legend_row, WIDTH};
use crate::svg::*;
use crate::table::fmt_num;
use fileio::slog::{SlogResult, SyncMethod, TargetKind};
use std::fmt::Write;

/// `512 B`, `4 KiB`, `1 MiB`: a write size on the axis.
fn size_label(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// One latency line: its name, colour, dash and the figure (µs) per size.
struct Curve {
    name: &'static str,
    color: &'static str,
    dashed: bool,
    us: fn(&fileio::slog::SlogSize) -> Option<f64>,
}

const CURVES: [Curve; 3] = [
    Curve {
        name: "p50",
        color: "#4e79a7",
        dashed: false,
        us: |s| s.latency.at(50.0).map(|ms| ms * 1000.0),
    },
    Curve {
        name: "mean",
        color: "#59a14f",
        dashed: false,
        us: |s| Some(s.latency.mean_ms * 1000.0),
    },
    Curve {
        name: "p99",
        color: "#e15759",
        dashed: false,
        us: |s| s.latency.at(99.0).map(|ms| ms * 1000.0),
    },
];

/// The chart of a slog result, or None with no write size measured.
pub fn slog_chart(r: &SlogResult) -> Option<String> {
    let sizes: Vec<&fileio::slog::SlogSize> = r.sizes.iter().filter(|s| s.writes > 0).collect();
    let first = sizes.first()?;
    let last = sizes.last()?;
    let (s0, s1) = (
        (first.size_bytes as f64).log2(),
        (last.size_bytes as f64)
            .log2()
            .max((first.size_bytes as f64).log2() + 1.0),
    );
    let legend_w = 150.0;
    let (left, right, top) = (78.0, WIDTH - legend_w, 82.0);
    let lat_h = 260.0;
    let gap = 56.0;
    let bw_top = top + lat_h + gap;
    let bw_h = 170.0;
    let bottom = bw_top + bw_h;
    let pad = 14.0;
    let x = |bytes: f64| left + pad + (right - left - 2.0 * pad) * (bytes.log2() - s0) / (s1 - s0);

    // Latency panel: log scale over every curve's values and the fit.
    let mut values: Vec<f64> = sizes
        .iter()
        .flat_map(|s| CURVES.iter().filter_map(|c| (c.us)(s)))
        .filter(|v| *v > 0.0)
        .collect();
    let fit_us = |bytes: f64| {
        r.fit.map(|f| match f.bandwidth_bytes_per_second {
            Some(bw) => f.overhead_us + bytes / bw * 1e6,
            None => f.overhead_us,
        })
    };
    values.extend(
        [first.size_bytes, last.size_bytes]
            .iter()
            .filter_map(|b| fit_us(*b as f64))
            .filter(|v| *v > 0.0),
    );
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(0.0, f64::max);
    let yticks = log_ticks_125(lo, hi);
    let (ylo, yhi) = (yticks[0], *yticks.last().unwrap_or(&(lo * 10.0)));
    let y = |us: f64| {
        let f = (us.max(ylo).log10() - ylo.log10()) / (yhi.log10() - ylo.log10());
        top + lat_h - (lat_h - 8.0) * f
    };

    let title = "Log-device test: latency and MB/s by write size";
    let mut svg = Svg::new(WIDTH, bottom + 70.0, title);
    let how = match r.sync {
        SyncMethod::Fdatasync => "fdatasync after each write",
        SyncMethod::Dsync => "O_DSYNC",
    };
    let target = match r.target {
        TargetKind::File => "a scratch file in",
        TargetKind::BlockDevice => "the block device",
    };
    header(
        &mut svg,
        title,
        &format!(
            "{target} {} · {how}{} · one thread · started {}",
            r.path,
            if r.direct { ", O_DIRECT" } else { "" },
            r.started_at
        ),
    );
    let mut items: Vec<(String, &str, bool)> = CURVES
        .iter()
        .map(|c| (c.name.to_string(), c.color, c.dashed))
        .collect();
    if r.fit.is_some() {
        items.push(("fit".to_string(), MUTED, true));
    }
    legend_row(&mut svg, left, 66.0, &items);

    // Shared x ticks: every measured size.
    let x_ticks = |svg: &mut Svg, ptop: f64, pbot: f64, labels: bool| {
        for s in &sizes {
            let px = x(s.size_bytes as f64);
            svg.line(px, ptop, px, pbot, GRID, 1.0);
            if labels {
                svg.text(
                    px,
                    pbot + 16.0,
                    &size_label(s.size_bytes),
                    10.0,
                    "middle",
                    MUTED,
                    "",
                );
            }
        }
    };
    // Latency grid: 1, 2 and 5 × 10^k, labelled.
    x_ticks(&mut svg, top, top + lat_h, false);
    for t in &yticks {
        svg.line(left, y(*t), right, y(*t), "#d6d6d6", 1.0);
        svg.text(
            left - 8.0,
            y(*t) + 4.0,
            &duration_label(t / 1000.0),
            11.0,
            "end",
            MUTED,
            "",
        );
    }
    svg.raw(&format!(
        r#"<rect x="{left}" y="{top}" width="{:.1}" height="{lat_h}" fill="none" stroke="{INK}" stroke-width="1"/>"#,
        right - left
    ));
    svg.text(
        18.0,
        top + lat_h / 2.0,
        "latency of a write (log scale)",
        12.0,
        "middle",
        INK,
        &format!("transform=\"rotate(-90 18 {:.1})\"", top + lat_h / 2.0),
    );
    if r.fit.is_some() {
        let mut d = String::new();
        let steps = 40;
        for i in 0..=steps {
            let b = 2f64.powf(s0 + (s1 - s0) * f64::from(i) / f64::from(steps));
            if let Some(us) = fit_us(b) {
                let _ = write!(
                    d,
                    "{}{:.1},{:.1}",
                    if i == 0 { "M" } else { " L" },
                    x(b),
                    y(us)
                );
            }
        }
        svg.raw(&format!(
            r#"<path d="{d}" fill="none" stroke="{MUTED}" stroke-width="1.5" stroke-dasharray="6 4"/>"#
        ));
    }
    for c in &CURVES {
        let pts: Vec<(f64, f64)> = sizes
            .iter()
            .filter_map(|s| (c.us)(s).map(|us| (x(s.size_bytes as f64), y(us))))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let mut d = String::new();
        for (k, (px, py)) in pts.iter().enumerate() {
            let _ = write!(d, "{}{px:.1},{py:.1}", if k == 0 { "M" } else { " L" });
        }
        svg.raw(&format!(
            r#"<path class="mark" d="{d}" fill="none" stroke="{}" stroke-width="2" stroke-linejoin="round"><title>{} latency</title></path>"#,
            c.color, c.name
        ));
        for (px, py) in &pts {
            svg.raw(&format!(
                r#"<circle cx="{px:.1}" cy="{py:.1}" r="2.5" fill="{}"/>"#,
                c.color
            ));
        }
    }

    // MB/s panel: linear from 0, a bar per size.
    let mbs: Vec<f64> = sizes.iter().map(|s| s.bytes_per_second / 1e6).collect();
    let yt = nice_ticks(mbs.iter().copied().fold(0.0, f64::max), 4);
    let ymax = *yt.last().unwrap_or(&1.0);
    let yb = |v: f64| bottom - (bw_h - 8.0) * v / ymax;
    x_ticks(&mut svg, bw_top, bottom, true);
    for t in &yt {
        svg.line(left, yb(*t), right, yb(*t), GRID, 1.0);
        svg.text(
            left - 8.0,
            yb(*t) + 4.0,
            &tick_label(*t),
            11.0,
            "end",
            MUTED,
            "",
        );
    }
    let slot = (right - left - 2.0 * pad) / (sizes.len().max(2) - 1) as f64;
    let bar_w = (slot * 0.5).clamp(4.0, 28.0);
    for (s, v) in sizes.iter().zip(&mbs) {
        let px = x(s.size_bytes as f64);
        svg.raw(&format!(
            r##"<rect class="mark" x="{:.1}" y="{:.1}" width="{bar_w:.1}" height="{:.1}" fill="#f28e2b"><title>{}: {} MB/s, {} writes/s</title></rect>"##,
            px - bar_w / 2.0,
            yb(*v),
            (bottom - yb(*v)).max(if *v > 0.0 { 1.0 } else { 0.0 }),
            size_label(s.size_bytes),
            fmt_num(*v),
            fmt_num(s.iops)
        ));
    }
    svg.line(left, bottom, right, bottom, INK, 1.0);
    svg.line(left, bw_top, left, bottom, INK, 1.0);
    svg.text(
        18.0,
        bw_top + bw_h / 2.0,
        "MB/s (10^6 B)",
        12.0,
        "middle",
        INK,
        &format!("transform=\"rotate(-90 18 {:.1})\"", bw_top + bw_h / 2.0),
    );
    svg.text(
        (left + right) / 2.0,
        bottom + 40.0,
        "write size (each a sync write of one thread)",
        12.0,
        "middle",
        INK,
        "",
    );

    // The fit in words, at the right, where the legend column is.
    let mut lines: Vec<(String, &str)> = Vec::new();
    if let Some(f) = &r.fit {
        lines.push(("fitted line:".into(), "font-style=\"italic\""));
        lines.push((format!("{:.1} µs per write", f.overhead_us), ""));
        lines.push((
            match f.bandwidth_bytes_per_second {
                Some(bw) => format!("+ size / {:.1} MB/s", bw / 1e6),
                None => "whatever the size".into(),
            },
            "",
        ));
    }
    if r.interrupted {
        lines.push(("interrupted:".into(), "font-weight=\"bold\""));
        lines.push(("later sizes missing".into(), ""));
    }
    for (i, (text, style)) in lines.iter().enumerate() {
        svg.text(
            right + 18.0,
            top + 14.0 + 16.0 * i as f64,
            text,
            11.0,
            "start",
            INK,
            style,
        );
    }
    Some(svg.finish())
}

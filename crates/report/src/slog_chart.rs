//! `slog --chart`: the log-device test's size curve. Two panels over the
//! write size (a log2 axis, 512 B to 1 MiB): the latency of one write and
//! its flush (median, mean and p99, log scale, with the fitted line
//! `overhead + size / bandwidth` dashed), and the MB/s made durable. Where
//! the latency stops being flat is where the device's bandwidth, not its
//! flush, sets the cost: what a log device is judged by.

use crate::charts::{header, legend_row, WIDTH};
use crate::svg::*;
use crate::table::fmt_num;
use fileio::slog::{SlogResult, SlogSize, SyncMethod, TargetKind};
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
    us: fn(&SlogSize) -> Option<f64>,
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

/// The sizes measured (some writes each).
type Sizes<'a> = [&'a SlogSize];

/// Where the two panels sit, and the write-size axis they share (log2).
struct Layout {
    left: f64,
    right: f64,
    /// The latency panel's top and height.
    top: f64,
    lat_h: f64,
    /// The MB/s panel's top and bottom.
    bw_top: f64,
    bottom: f64,
    pad: f64,
    /// log2 of the first and last size.
    s0: f64,
    s1: f64,
}

impl Layout {
    fn new(sizes: &Sizes) -> Layout {
        let first = sizes.first().map_or(512.0, |s| s.size_bytes as f64).log2();
        let last = sizes.last().map_or(1024.0, |s| s.size_bytes as f64).log2();
        let top = 82.0;
        let lat_h = 260.0;
        let bw_top = top + lat_h + 56.0;
        Layout {
            left: 78.0,
            right: WIDTH - 150.0,
            top,
            lat_h,
            bw_top,
            bottom: bw_top + 170.0,
            pad: 14.0,
            s0: first,
            s1: last.max(first + 1.0),
        }
    }

    /// The x of a write size.
    fn x(&self, bytes: f64) -> f64 {
        self.left
            + self.pad
            + (self.right - self.left - 2.0 * self.pad) * (bytes.log2() - self.s0)
                / (self.s1 - self.s0)
    }

    /// A grid line per measured size from `ptop` to `pbot`, labelled under
    /// the lower panel.
    fn size_grid(&self, svg: &mut Svg, sizes: &Sizes, (ptop, pbot): (f64, f64), labels: bool) {
        for s in sizes {
            let px = self.x(s.size_bytes as f64);
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
    }
}

/// The fitted line's latency of a write of `bytes`, µs.
fn fit_us(r: &SlogResult, bytes: f64) -> Option<f64> {
    r.fit.map(|f| match f.bandwidth_bytes_per_second {
        Some(bw) => f.overhead_us + bytes / bw * 1e6,
        None => f.overhead_us,
    })
}

/// The chart of a slog result, or None with no write size measured.
pub fn slog_chart(r: &SlogResult) -> Option<String> {
    let sizes: Vec<&SlogSize> = r.sizes.iter().filter(|s| s.writes > 0).collect();
    if sizes.is_empty() {
        return None;
    }
    let l = Layout::new(&sizes);
    let title = "Log-device test: latency and MB/s by write size";
    let mut svg = Svg::new(WIDTH, l.bottom + 70.0, title);
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
    legend_row(&mut svg, l.left, 66.0, &items);
    latency_panel(&mut svg, &l, r, &sizes);
    bandwidth_panel(&mut svg, &l, &sizes);
    side_notes(&mut svg, &l, r);
    Some(svg.finish())
}

/// The upper panel: the latency curves and the fitted line, log scale at
/// 1, 2 and 5 × 10^k.
fn latency_panel(svg: &mut Svg, l: &Layout, r: &SlogResult, sizes: &Sizes) {
    let ends = [sizes[0].size_bytes, sizes[sizes.len() - 1].size_bytes];
    let values: Vec<f64> = sizes
        .iter()
        .flat_map(|s| CURVES.iter().filter_map(|c| (c.us)(s)))
        .chain(ends.iter().filter_map(|b| fit_us(r, *b as f64)))
        .filter(|v| *v > 0.0)
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(0.0, f64::max);
    let yticks = log_ticks_125(lo, hi);
    let (ylo, yhi) = (yticks[0], *yticks.last().unwrap_or(&(lo * 10.0)));
    let (top, lat_h) = (l.top, l.lat_h);
    let y = |us: f64| {
        let f = (us.max(ylo).log10() - ylo.log10()) / (yhi.log10() - ylo.log10());
        top + lat_h - (lat_h - 8.0) * f
    };
    l.size_grid(svg, sizes, (top, top + lat_h), false);
    for t in &yticks {
        svg.line(l.left, y(*t), l.right, y(*t), "#d6d6d6", 1.0);
        svg.text(
            l.left - 8.0,
            y(*t) + 4.0,
            &duration_label(t / 1000.0),
            11.0,
            "end",
            MUTED,
            "",
        );
    }
    svg.raw(&format!(
        r#"<rect x="{}" y="{top}" width="{:.1}" height="{lat_h}" fill="none" stroke="{INK}" stroke-width="1"/>"#,
        l.left,
        l.right - l.left
    ));
    let mid = top + lat_h / 2.0;
    svg.text(
        18.0,
        mid,
        "latency of a write (log scale)",
        12.0,
        "middle",
        INK,
        &format!("transform=\"rotate(-90 18 {mid:.1})\""),
    );
    if r.fit.is_some() {
        let steps = 40;
        let pts: Vec<(f64, f64)> = (0..=steps)
            .filter_map(|i| {
                let b = 2f64.powf(l.s0 + (l.s1 - l.s0) * f64::from(i) / f64::from(steps));
                fit_us(r, b).map(|us| (l.x(b), y(us)))
            })
            .collect();
        svg.raw(&format!(
            r#"<path d="{}" fill="none" stroke="{MUTED}" stroke-width="1.5" stroke-dasharray="6 4"/>"#,
            path(&pts)
        ));
    }
    for c in &CURVES {
        let pts: Vec<(f64, f64)> = sizes
            .iter()
            .filter_map(|s| (c.us)(s).map(|us| (l.x(s.size_bytes as f64), y(us))))
            .collect();
        if pts.is_empty() {
            continue;
        }
        svg.raw(&format!(
            r#"<path class="mark" d="{}" fill="none" stroke="{}" stroke-width="2" stroke-linejoin="round"><title>{} latency</title></path>"#,
            path(&pts),
            c.color,
            c.name
        ));
        for (px, py) in &pts {
            svg.raw(&format!(
                r#"<circle cx="{px:.1}" cy="{py:.1}" r="2.5" fill="{}"/>"#,
                c.color
            ));
        }
    }
}

/// An SVG path through `pts`.
fn path(pts: &[(f64, f64)]) -> String {
    let mut d = String::new();
    for (k, (px, py)) in pts.iter().enumerate() {
        let _ = write!(d, "{}{px:.1},{py:.1}", if k == 0 { "M" } else { " L" });
    }
    d
}

/// The lower panel: a bar of MB/s per size, linear from 0.
fn bandwidth_panel(svg: &mut Svg, l: &Layout, sizes: &Sizes) {
    let mbs: Vec<f64> = sizes.iter().map(|s| s.bytes_per_second / 1e6).collect();
    let yt = nice_ticks(mbs.iter().copied().fold(0.0, f64::max), 4);
    let ymax = *yt.last().unwrap_or(&1.0);
    let (bw_top, bottom) = (l.bw_top, l.bottom);
    let yb = |v: f64| bottom - (bottom - bw_top - 8.0) * v / ymax;
    l.size_grid(svg, sizes, (bw_top, bottom), true);
    for t in &yt {
        svg.line(l.left, yb(*t), l.right, yb(*t), GRID, 1.0);
        svg.text(
            l.left - 8.0,
            yb(*t) + 4.0,
            &tick_label(*t),
            11.0,
            "end",
            MUTED,
            "",
        );
    }
    let slot = (l.right - l.left - 2.0 * l.pad) / (sizes.len().max(2) - 1) as f64;
    let bar_w = (slot * 0.5).clamp(4.0, 28.0);
    for (s, v) in sizes.iter().zip(&mbs) {
        let px = l.x(s.size_bytes as f64);
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
    svg.line(l.left, bottom, l.right, bottom, INK, 1.0);
    svg.line(l.left, bw_top, l.left, bottom, INK, 1.0);
    let mid = (bw_top + bottom) / 2.0;
    svg.text(
        18.0,
        mid,
        "MB/s (10^6 B)",
        12.0,
        "middle",
        INK,
        &format!("transform=\"rotate(-90 18 {mid:.1})\""),
    );
    svg.text(
        (l.left + l.right) / 2.0,
        bottom + 40.0,
        "write size (each a sync write of one thread)",
        12.0,
        "middle",
        INK,
        "",
    );
}

/// The fit in words, and an interruption, in the column at the right.
fn side_notes(svg: &mut Svg, l: &Layout, r: &SlogResult) {
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
            l.right + 18.0,
            l.top + 14.0 + 16.0 * i as f64,
            text,
            11.0,
            "start",
            INK,
            style,
        );
    }
}

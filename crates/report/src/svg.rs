//! A few SVG primitives and axis arithmetic shared by the charts. Hand-written
//! rather than a plotting crate so the output is small, stable, readable SVG
//! that renders the same in a browser, in resvg (PNG) and in a wiki.

use crate::escape::html as escape;
use std::fmt::Write;

/// First line of every SVG tankbench writes; `output` looks for it before
/// overwriting a file.
pub const SVG_MARKER: &str = "<!-- generator: tankbench report -->";

/// DejaVu Sans first: it is what resvg finds on a Debian system (fonts-dejavu),
/// so the PNG and the page look alike; the rest are browser fallbacks.
pub const FONT_FAMILY: &str = "DejaVu Sans, Verdana, Arial, sans-serif";

/// Tableau 10 plus two darker hues, so a 12-configuration matrix (the
/// reference user's) needs no repeated colour.
pub const PALETTE: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#1f3b73", "#8c1d40",
];
pub const READ_COLOR: &str = "#4e79a7";
pub const WRITE_COLOR: &str = "#f28e2b";
pub const FSYNC_COLOR: &str = "#59a14f";
/// The colour that marks a prediction (the terminal's PREDICTION banner).
pub const PREDICTION_COLOR: &str = "#b0306a";
pub const INK: &str = "#222";
pub const MUTED: &str = "#666";
pub const GRID: &str = "#e3e3e3";

pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// An SVG document being drawn; coordinates in CSS pixels.
pub struct Svg {
    pub width: f64,
    pub height: f64,
    title: String,
    body: String,
}

impl Svg {
    pub fn new(width: f64, height: f64, title: &str) -> Svg {
        Svg {
            width,
            height,
            title: title.to_string(),
            body: String::new(),
        }
    }

    pub fn raw(&mut self, s: &str) {
        self.body.push_str(s);
        self.body.push('\n');
    }

    #[allow(clippy::too_many_arguments)]
    pub fn text(
        &mut self,
        x: f64,
        y: f64,
        s: &str,
        size: f64,
        anchor: &str,
        fill: &str,
        extra: &str,
    ) {
        let _ = writeln!(
            self.body,
            r#"<text x="{x:.1}" y="{y:.1}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"{}{extra}>{}</text>"#,
            if extra.is_empty() { "" } else { " " },
            escape(s)
        );
    }

    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, width: f64) {
        let _ = writeln!(
            self.body,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}" stroke-width="{width}"/>"#
        );
    }

    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, class: &str) {
        let _ = writeln!(
            self.body,
            r#"<rect class="{class}" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" fill="{fill}"/>"#
        );
    }

    /// The finished document: marker comment, then the `<svg>` element, with a
    /// white background so the PNG and dark-mode viewers show it as drawn.
    pub fn finish(self) -> String {
        let (w, h) = (self.width, self.height);
        format!(
            "{SVG_MARKER}\n<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" \
             width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" role=\"img\" \
             font-family=\"{FONT_FAMILY}\">\n<title>{}</title>\n\
             <rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n{}</svg>\n",
            escape(&self.title),
            self.body
        )
    }
}

/// Approximate rendered width of `s` at `size` px in DejaVu Sans (a wide font;
/// 0.6 em per character is on the safe side for Latin text and digits).
pub fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.6
}

/// Cut `s` to at most `max` characters, ending in "…" if cut.
pub fn ellipsize(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// "Nice" linear ticks (1, 2, 2.5, 5 × 10^k steps) covering 0..=max.
pub fn nice_ticks(max: f64, target: usize) -> Vec<f64> {
    if max <= 0.0 || !max.is_finite() {
        return vec![0.0, 1.0];
    }
    let raw = max / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    // step >= max / target, so this is at most `target` (and max > 0).
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let n = (max / step).ceil() as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

/// "Nice" linear ticks covering `lo..=hi` (not necessarily from 0): for a
/// scatter whose points sit far from the origin.
pub fn nice_range(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        let v = if lo.is_finite() { lo } else { 0.0 };
        return vec![v - 1.0, v, v + 1.0];
    }
    let span = nice_ticks(hi - lo, target);
    let step = span.get(1).copied().unwrap_or(1.0);
    let first = (lo / step).floor() * step;
    let mut ticks = vec![first];
    while *ticks.last().unwrap_or(&hi) < hi - step * 1e-9 {
        let next = first + ticks.len() as f64 * step;
        ticks.push(next);
    }
    ticks
}

/// Decades covering `lo..=hi` (both > 0) for a log axis: 10^floor(log lo)
/// to 10^ceil(log hi), at least one decade apart.
pub fn decades(lo: f64, hi: f64) -> (f64, f64) {
    let a = lo.max(1e-12).log10().floor();
    let mut b = hi.max(1e-12).log10().ceil();
    if b <= a {
        b = a + 1.0;
    }
    (10f64.powf(a), 10f64.powf(b))
}

/// Ticks of a log axis at 1, 2 and 5 × 10^k, from the last at or under `lo`
/// to the first at or over `hi` (both > 0): tighter than whole decades when
/// the values span less than one.
pub fn log_ticks_125(lo: f64, hi: f64) -> Vec<f64> {
    let lo = lo.max(1e-12);
    let hi = hi.max(lo);
    let mut ticks = Vec::new();
    let mut decade = 10f64.powf(lo.log10().floor());
    loop {
        for m in [1.0, 2.0, 5.0] {
            let t = decade * m;
            // A little slack: 0.1 * 10 is not quite 1.
            if t <= lo * 1.000_001 {
                ticks.clear();
            }
            ticks.push(t);
            if t >= hi * 0.999_999 {
                return ticks;
            }
        }
        decade *= 10.0;
    }
}

/// A box on the drawing, for keeping labels apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Area {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl Area {
    pub fn overlaps(&self, o: &Area) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }

    pub fn inside(&self, o: &Area) -> bool {
        self.x0 >= o.x0 && self.x1 <= o.x1 && self.y0 >= o.y0 && self.y1 <= o.y1
    }
}

/// Where a placed label goes: its text position and anchor, and whether it
/// sits away from its point (then a leader line joins them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placed {
    pub x: f64,
    pub y: f64,
    pub anchor: &'static str,
    pub leader: bool,
}

/// Labels placed one by one where they overlap nothing placed before (other
/// labels, the points themselves) and stay inside `bounds`: first beside
/// the point, then above or below it at growing distances with a leader
/// line. A label with no free place is left out ([`LabelPlacer::place`]
/// says so), never drawn over another.
#[derive(Debug, Clone)]
pub struct LabelPlacer {
    bounds: Area,
    taken: Vec<Area>,
}

impl LabelPlacer {
    pub fn new(bounds: Area) -> LabelPlacer {
        LabelPlacer {
            bounds,
            taken: Vec::new(),
        }
    }

    /// Mark an area as used (a point's marker).
    pub fn occupy(&mut self, a: Area) {
        self.taken.push(a);
    }

    /// A free place for `text` (at `size` px) by the point `(px, py)`, now
    /// taken; None when every candidate overlaps something.
    pub fn place(&mut self, (px, py): (f64, f64), text: &str, size: f64) -> Option<Placed> {
        let w = text_width(text, size);
        // A text box from its baseline: ascent ~0.8 em, descent ~0.25 em.
        let area = |x: f64, y: f64, anchor: &str| {
            let x0 = match anchor {
                "end" => x - w,
                "middle" => x - w / 2.0,
                _ => x,
            };
            Area {
                x0,
                y0: y - size * 0.8,
                x1: x0 + w,
                y1: y + size * 0.25,
            }
        };
        let gap = 7.0;
        let mut candidates: Vec<(f64, f64, &'static str, bool)> = vec![
            (px + gap, py + size * 0.35, "start", false),
            (px - gap, py + size * 0.35, "end", false),
            (px, py - gap, "middle", false),
            (px, py + gap + size * 0.8, "middle", false),
        ];
        for step in 1..=8 {
            let d = gap + step as f64 * (size + 3.0);
            candidates.push((px, py - d, "middle", true));
            candidates.push((px, py + d + size * 0.8, "middle", true));
            candidates.push((px + gap, py - d, "start", true));
            candidates.push((px - gap, py + d + size * 0.8, "end", true));
        }
        for (x, y, anchor, leader) in candidates {
            let a = area(x, y, anchor);
            if a.inside(&self.bounds) && !self.taken.iter().any(|t| t.overlaps(&a)) {
                self.taken.push(a);
                return Some(Placed {
                    x,
                    y,
                    anchor,
                    leader,
                });
            }
        }
        None
    }
}

/// A tick label without float noise: 0.30000000000000004 -> "0.3".
pub fn tick_label(v: f64) -> String {
    let s = format!("{:.6}", v);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// A latency given in ms as a short human label: 0.001 -> "1 µs", 1000 -> "1 s".
pub fn duration_label(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{} s", tick_label(ms / 1000.0))
    } else if ms >= 1.0 {
        format!("{} ms", tick_label(ms))
    } else if ms >= 0.001 {
        format!("{} µs", tick_label(ms * 1000.0))
    } else {
        format!("{} ns", tick_label(ms * 1e6))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_nice_and_cover_the_range() {
        assert_eq!(
            nice_ticks(87.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(nice_ticks(10.0, 4), vec![0.0, 2.5, 5.0, 7.5, 10.0]);
        let t = nice_ticks(0.37, 5);
        assert!(*t.last().unwrap() >= 0.37 && t.len() <= 7, "{t:?}");
        assert_eq!(tick_label(0.1 + 0.2), "0.3");
    }

    #[test]
    fn ranges_cover_their_ends_and_decades_bracket_them() {
        assert_eq!(
            nice_range(57.9, 164.3, 6),
            vec![40.0, 60.0, 80.0, 100.0, 120.0, 140.0, 160.0, 180.0]
        );
        assert_eq!(decades(119.0, 3290.0), (100.0, 10_000.0));
        assert_eq!(decades(100.0, 100.0), (100.0, 1000.0));
        assert_eq!(
            log_ticks_125(2700.0, 10_200.0),
            vec![2000.0, 5000.0, 10_000.0, 20_000.0]
        );
        assert_eq!(
            log_ticks_125(50.0, 4000.0),
            vec![50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0]
        );
    }

    #[test]
    fn placed_labels_never_overlap_and_a_full_plot_leaves_one_out() {
        let bounds = Area {
            x0: 0.0,
            y0: 0.0,
            x1: 200.0,
            y1: 60.0,
        };
        let mut p = LabelPlacer::new(bounds);
        let mut areas = Vec::new();
        for i in 0..12 {
            let x = 20.0 + f64::from(i) * 6.0;
            if let Some(at) = p.place((x, 30.0), "3xraidz2-8", 11.0) {
                let w = text_width("3xraidz2-8", 11.0);
                let x0 = match at.anchor {
                    "end" => at.x - w,
                    "middle" => at.x - w / 2.0,
                    _ => at.x,
                };
                areas.push(Area {
                    x0,
                    y0: at.y - 8.8,
                    x1: x0 + w,
                    y1: at.y + 2.75,
                });
            }
        }
        assert!(
            areas.len() < 12,
            "a 60-pixel plot cannot hold 12 stacked labels"
        );
        for (i, a) in areas.iter().enumerate() {
            assert!(a.inside(&bounds), "{a:?}");
            for b in &areas[i + 1..] {
                assert!(!a.overlaps(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn durations() {
        assert_eq!(duration_label(0.001), "1 µs");
        assert_eq!(duration_label(0.1), "100 µs");
        assert_eq!(duration_label(10.0), "10 ms");
        assert_eq!(duration_label(1000.0), "1 s");
    }

    #[test]
    fn ellipsis() {
        assert_eq!(ellipsize("abcdef", 4), "abc…");
        assert_eq!(ellipsize("abc", 4), "abc");
    }
}

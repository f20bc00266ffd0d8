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

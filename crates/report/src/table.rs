//! Tables: one model, four renderings (terminal, Markdown, CSV, HTML).
//!
//! Cells keep numbers as numbers ([`Cell::Stat`]) until rendering, so the CSV
//! export gets mean and standard deviation in separate machine-readable columns
//! while the terminal and the page show `123.45 ± 1.20`.

use crate::escape;
use crate::group::{labels_text, workload_name, Grouping};
use crate::stats::Summary;
use crate::store::StoredRun;
use fileio::result::{LatencyKey, RunResult};
use fileio::terminal::{Screen, Tone};
use fileio::text::trim_float;

/// Marks Markdown written by tankbench (invisible when rendered); see `output`.
pub const MARKDOWN_MARKER: &str = "<!-- generator: tankbench report -->";

#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    /// Mean ± sd over repeats; None when no run of the row has the metric.
    Stat(Option<Summary>),
    Num(Option<f64>),
    /// A count (runs, warnings): no decimals.
    Int(u64),
    /// A relative change as a fraction (0.25 = +25%); "+25.0%" in text, the
    /// percentage as a plain number in CSV (column name gets " %").
    Percent(Option<f64>),
    /// A relative change with its confidence interval, all as fractions:
    /// "+12.0% (+7.9 … +16.1%)" in text (an interval need not be symmetric, so
    /// it is written as its two ends, not as ±), three plain percentages in CSV
    /// (`NAME %`, `NAME low %`, `NAME high %`). Without an interval it reads
    /// like [`Cell::Percent`].
    PercentInterval(Option<f64>, Option<(f64, f64)>),
    /// A figure with its range (a prediction's interval, an estimate's low
    /// and high): "7.5 (4.1–12.3)" in text, three plain numbers in CSV
    /// (`NAME`, `NAME low`, `NAME high`). Without a range it reads like
    /// [`Cell::Num`].
    Range(Option<f64>, Option<(f64, f64)>),
    /// Text that says something good or bad (a comparison's "better",
    /// "worse"): coloured on a terminal that takes colour, plain elsewhere.
    Toned(String, Tone),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    /// Right-aligned, and a Stat column splits into value and sd in CSV.
    pub numeric: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    /// Lines printed under the table (common labels, significance notes).
    pub notes: Vec<String>,
    /// How the table gives way on a terminal too narrow for it.
    pub fit: Fit,
}

/// How a table narrows to fit a terminal ([`Table::to_screen`]), in this
/// order: ranges lose their intervals, cuttable text columns are cut, then
/// columns are left out, `drop_first` in its order and then from the right
/// (never the first column). A note under the table says what gave way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fit {
    /// Column names to leave out before any other.
    pub drop_first: Vec<String>,
    /// Text columns whose cells may be cut at the end (`…`) down to this
    /// many characters: a run id still reads as a unique prefix.
    pub cut: Vec<(String, usize)>,
}

impl Table {
    pub fn new(columns: &[(&str, bool)]) -> Table {
        Table {
            columns: columns
                .iter()
                .map(|(n, numeric)| Column {
                    name: n.to_string(),
                    numeric: *numeric,
                })
                .collect(),
            ..Default::default()
        }
    }

    fn texts(&self) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .map(|r| r.iter().map(cell_text).collect())
            .collect()
    }

    /// Aligned plain text with no width limit and no colour (a pipe, a
    /// file, a test). Text from result files has its control characters
    /// replaced ([`escape::terminal`]).
    pub fn to_terminal(&self) -> String {
        self.to_screen(&Screen::PIPE)
    }

    /// Aligned text for `screen`: within its width when it has one (see
    /// [`Fit`]; the notes wrapped), with toned cells coloured when it takes
    /// colour. Without a width, every column and every note line whole.
    pub fn to_screen(&self, screen: &Screen) -> String {
        match self.in_microseconds() {
            Some(t) => t.laid_out(screen),
            None => self.laid_out(screen),
        }
    }

    /// This table with every latency column (a title ending in ` ms`)
    /// whose figures are all below 1 ms given in µs (`3.07`, not
    /// `0.00307`), as a person reads a terminal, and likewise every row
    /// named `… ms` of a table with a figure per row; None when nothing is
    /// such. CSV and JSON keep milliseconds: scripts read one unit.
    fn in_microseconds(&self) -> Option<Table> {
        let below_1ms = |i: usize| {
            let mut any = false;
            let all = self.rows.iter().all(|r| match r.get(i) {
                Some(Cell::Num(Some(v)) | Cell::Range(Some(v), None)) => {
                    any = true;
                    *v < 1.0
                }
                Some(Cell::Range(Some(v), Some((_, high)))) => {
                    any = true;
                    *v < 1.0 && *high < 1.0
                }
                Some(Cell::Stat(Some(s))) => {
                    any = true;
                    s.mean < 1.0 && s.max < 1.0
                }
                Some(Cell::Num(None) | Cell::Range(None, _) | Cell::Stat(None)) | None => true,
                Some(_) => false,
            });
            all && any
        };
        let micro: Vec<usize> = (0..self.columns.len())
            .filter(|&i| self.columns[i].numeric && self.columns[i].name.ends_with(" ms"))
            .filter(|&i| below_1ms(i))
            .collect();
        // A table of one figure per row (compare's): a row named `… ms`
        // whose mean ± sd cells are all below 1 ms, or one whose fastest
        // run took under 10 µs (a cached read's tail over runs spans 5 µs
        // to milliseconds: `0.00530` ms reads worse than `5.30` µs).
        let micro_rows: Vec<usize> = (0..self.rows.len())
            .filter(|&r| {
                let row = &self.rows[r];
                let named_ms = matches!(row.first(), Some(Cell::Text(n)) if n.ends_with(" ms"));
                let stats: Vec<&Summary> = row
                    .iter()
                    .filter_map(|c| match c {
                        Cell::Stat(Some(s)) => Some(s),
                        _ => None,
                    })
                    .collect();
                named_ms
                    && !stats.is_empty()
                    && (stats.iter().all(|s| s.mean < 1.0 && s.max < 1.0)
                        || stats.iter().any(|s| s.min < 0.01))
            })
            .collect();
        if micro.is_empty() && micro_rows.is_empty() {
            return None;
        }
        let mut t = self.clone();
        for &r in &micro_rows {
            for cell in &mut t.rows[r] {
                match cell {
                    Cell::Text(name) => {
                        if let Some(stem) = name.strip_suffix(" ms") {
                            *name = format!("{stem} µs");
                        }
                    }
                    Cell::Stat(Some(s)) => *s = s.scaled(1000.0),
                    _ => {}
                }
            }
        }
        let us = |v: f64| v * 1000.0;
        for &i in &micro {
            let name = &mut t.columns[i].name;
            name.truncate(name.len() - " ms".len());
            name.push_str(" µs");
            for row in &mut t.rows {
                if let Some(cell) = row.get_mut(i) {
                    *cell = match cell.clone() {
                        Cell::Num(v) => Cell::Num(v.map(us)),
                        Cell::Range(v, r) => Cell::Range(v.map(us), r.map(|(l, h)| (us(l), us(h)))),
                        Cell::Stat(s) => Cell::Stat(s.map(|s| s.scaled(1000.0))),
                        other => other,
                    };
                }
            }
        }
        Some(t)
    }

    /// [`Table::to_screen`] once the units are chosen.
    fn laid_out(&self, screen: &Screen) -> String {
        let mut rows: Vec<Vec<String>> = self
            .texts()
            .iter()
            .map(|r| r.iter().map(|s| escape::terminal(s)).collect())
            .collect();
        let names: Vec<String> = self
            .columns
            .iter()
            .map(|c| escape::terminal(&c.name))
            .collect();
        let mut shown: Vec<usize> = (0..self.columns.len()).collect();
        let mut gave_way = Vec::new();
        if let Some(limit) = screen.width.limit() {
            gave_way = self.narrow(&mut rows, &names, &mut shown, limit);
        }
        let widths: Vec<usize> = shown
            .iter()
            .map(|&i| column_width(&names[i], &rows, i))
            .collect();
        // Cells padded by their characters, then coloured: escapes take
        // no columns on a terminal.
        let line = |cells: Vec<(usize, String, Option<Tone>)>| -> String {
            let parts: Vec<String> = cells
                .into_iter()
                .enumerate()
                .map(|(k, (i, s, tone))| {
                    let pad = " ".repeat(widths[k].saturating_sub(s.chars().count()));
                    let s = match tone {
                        Some(tone) => screen.paint(tone, &s),
                        None => s,
                    };
                    if self.columns[i].numeric {
                        format!("{pad}{s}")
                    } else {
                        format!("{s}{pad}")
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string() + "\n"
        };
        let mut out = line(shown.iter().map(|&i| (i, names[i].clone(), None)).collect());
        out += &line(
            shown
                .iter()
                .zip(&widths)
                .map(|(&i, w)| (i, "-".repeat(*w), None))
                .collect(),
        );
        for (r, cells) in rows.iter().enumerate() {
            out += &line(
                shown
                    .iter()
                    .map(|&i| {
                        let tone = match self.rows[r].get(i) {
                            Some(Cell::Toned(_, tone)) => Some(*tone),
                            _ => None,
                        };
                        (i, cells[i].clone(), tone)
                    })
                    .collect(),
            );
        }
        let notes: Vec<String> = self
            .notes
            .iter()
            .map(|n| escape::terminal(n))
            .chain(gave_way)
            .collect();
        for n in &notes {
            out += &format!("\n{}", screen.paint_label(&screen.wrap(n)));
        }
        if !notes.is_empty() {
            out.push('\n');
        }
        out
    }

    /// Make the laid-out table fit `limit` columns: ranges without their
    /// intervals, cuttable columns cut, then columns left out (see [`Fit`]).
    /// Returns the notes saying what gave way.
    fn narrow(
        &self,
        rows: &mut [Vec<String>],
        names: &[String],
        shown: &mut Vec<usize>,
        limit: usize,
    ) -> Vec<String> {
        let total = |rows: &[Vec<String>], shown: &[usize]| -> usize {
            shown
                .iter()
                .map(|&i| column_width(&names[i], rows, i))
                .sum::<usize>()
                + 2 * shown.len().saturating_sub(1)
        };
        let mut notes = Vec::new();
        if total(rows, shown) <= limit {
            return notes;
        }
        // A range's interval is the widest part of a prediction's cell.
        let ranges: Vec<usize> = (0..self.columns.len())
            .filter(|&i| self.is_range_column(i))
            .collect();
        if !ranges.is_empty() {
            for (r, row) in self.rows.iter().enumerate() {
                for &i in &ranges {
                    if let Some(Cell::Range(v, _)) = row.get(i) {
                        rows[r][i] = cell_text(&Cell::Range(*v, None));
                    }
                }
            }
            notes.push(format!(
                "Intervals (low–high) left out to fit {limit} columns: a wider terminal, or the output piped, shows them."
            ));
        }
        for (name, least) in &self.fit.cut {
            let over = total(rows, shown).saturating_sub(limit);
            let Some(i) = names.iter().position(|n| n == name) else {
                continue;
            };
            let width = column_width(&names[i], rows, i);
            let to = width
                .saturating_sub(over)
                .max(*least)
                .max(names[i].chars().count());
            if to < width {
                for row in rows.iter_mut() {
                    row[i] = fileio::terminal::cut(&row[i], to);
                }
                notes.push(format!(
                    "{name}: cut to {to} characters (…) to fit {limit} columns; the part shown is a unique prefix where the values start differently."
                ));
            }
        }
        let mut order: Vec<usize> = self
            .fit
            .drop_first
            .iter()
            .filter_map(|n| names.iter().position(|m| m == n))
            .collect();
        let rest: Vec<usize> = (1..self.columns.len())
            .rev()
            .filter(|i| !order.contains(i))
            .collect();
        order.extend(rest);
        let mut dropped = Vec::new();
        for i in order {
            if total(rows, shown) <= limit {
                break;
            }
            if i == 0 || shown.len() <= 1 {
                continue;
            }
            shown.retain(|&k| k != i);
            dropped.push(i);
        }
        if !dropped.is_empty() {
            dropped.sort_unstable();
            let list: Vec<&str> = dropped.iter().map(|&i| names[i].as_str()).collect();
            notes.push(format!(
                "Left out to fit {limit} columns: {} (a wider terminal, or the output piped, shows every column).",
                list.join(", ")
            ));
        }
        notes
    }

    /// GitHub-flavoured Markdown, marked as tankbench output. Column names,
    /// text cells and notes can hold text from result files, so they are
    /// escaped ([`escape::markdown`]); numbers are ours and stay as they are.
    pub fn to_markdown(&self) -> String {
        let esc = escape::markdown;
        let mut out = format!("{MARKDOWN_MARKER}\n\n");
        out += &format!(
            "| {} |\n",
            self.columns
                .iter()
                .map(|c| esc(&c.name))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        out += &format!(
            "|{}|\n",
            self.columns
                .iter()
                .map(|c| if c.numeric { "---:" } else { "---" })
                .collect::<Vec<_>>()
                .join("|")
        );
        for r in &self.rows {
            let cells: Vec<String> = r
                .iter()
                .map(|c| match c {
                    Cell::Text(s) | Cell::Toned(s, _) => esc(s),
                    other => cell_text(other),
                })
                .collect();
            out += &format!("| {} |\n", cells.join(" | "));
        }
        for n in &self.notes {
            out += &format!("\n{}\n", esc(n));
        }
        out
    }

    /// RFC 4180 CSV. Stat columns become two columns, `NAME` (mean) and `NAME sd`,
    /// with full precision, so a spreadsheet gets numbers, not `12 ± 3` strings.
    /// Column names and text cells go through [`escape::csv_text`] (quoted, and
    /// never read as a formula); numbers are written bare so they stay numbers.
    pub fn to_csv(&self) -> String {
        let mut header = Vec::new();
        for (i, c) in self.columns.iter().enumerate() {
            if self.is_interval_column(i) {
                header.push(format!("{} %", c.name));
                header.push(format!("{} low %", c.name));
                header.push(format!("{} high %", c.name));
            } else if self.is_range_column(i) {
                header.push(c.name.clone());
                header.push(format!("{} low", c.name));
                header.push(format!("{} high", c.name));
            } else if self
                .rows
                .iter()
                .any(|r| matches!(r.get(i), Some(Cell::Percent(_))))
            {
                header.push(format!("{} %", c.name));
            } else {
                header.push(c.name.clone());
            }
            if self.is_stat_column(i) {
                header.push(format!("{} sd", c.name));
            }
        }
        let header: Vec<String> = header.iter().map(|h| escape::csv_text(h)).collect();
        let mut out = csv_line(&header);
        for r in &self.rows {
            let mut fields = Vec::new();
            for (i, cell) in r.iter().enumerate() {
                match cell {
                    Cell::Text(s) | Cell::Toned(s, _) => fields.push(escape::csv_text(s)),
                    Cell::Num(v) => fields.push(v.map(|v| v.to_string()).unwrap_or_default()),
                    Cell::Int(n) => fields.push(n.to_string()),
                    Cell::Percent(v) => fields.push(percent_field(*v)),
                    Cell::PercentInterval(v, ci) => {
                        fields.push(percent_field(*v));
                        fields.push(percent_field(ci.map(|c| c.0)));
                        fields.push(percent_field(ci.map(|c| c.1)));
                    }
                    Cell::Range(v, range) => {
                        let num = |x: Option<f64>| x.map(|x| x.to_string()).unwrap_or_default();
                        fields.push(num(*v));
                        fields.push(num(range.map(|r| r.0)));
                        fields.push(num(range.map(|r| r.1)));
                    }
                    Cell::Stat(s) => {
                        fields.push(s.map(|s| s.mean.to_string()).unwrap_or_default());
                        fields.push(
                            s.filter(|s| s.n > 1)
                                .map(|s| s.sd.to_string())
                                .unwrap_or_default(),
                        );
                    }
                }
                if self.is_stat_column(i) && !matches!(cell, Cell::Stat(_)) {
                    fields.push(String::new());
                }
                if self.is_range_column(i) && !matches!(cell, Cell::Range(..)) {
                    fields.extend([String::new(), String::new()]);
                }
            }
            out += &csv_line(&fields);
        }
        out
    }

    fn is_interval_column(&self, i: usize) -> bool {
        self.rows
            .iter()
            .any(|r| matches!(r.get(i), Some(Cell::PercentInterval(..))))
    }

    fn is_range_column(&self, i: usize) -> bool {
        self.rows
            .iter()
            .any(|r| matches!(r.get(i), Some(Cell::Range(..))))
    }

    fn is_stat_column(&self, i: usize) -> bool {
        self.rows
            .iter()
            .any(|r| matches!(r.get(i), Some(Cell::Stat(_))))
    }

    /// An HTML `<table>` (no surrounding page); `class` goes on the element.
    pub fn to_html(&self, class: &str) -> String {
        let mut out = format!("<table class=\"{}\">\n<thead><tr>", escape::html(class));
        for c in &self.columns {
            out += &format!(
                "<th{}>{}</th>",
                if c.numeric { " class=\"num\"" } else { "" },
                escape::html(&c.name)
            );
        }
        out += "</tr></thead>\n<tbody>\n";
        for r in &self.rows {
            out += "<tr>";
            for (i, cell) in r.iter().enumerate() {
                let numeric = self.columns[i].numeric;
                let text = match cell {
                    Cell::Stat(Some(s)) if s.n > 1 => format!(
                        "{}<span class=\"sd\"> ± {}</span>",
                        fmt_num(s.mean),
                        fmt_like(s.sd, s.mean)
                    ),
                    _ => escape::html(&cell_text(cell)),
                };
                out += &format!(
                    "<td{}>{text}</td>",
                    if numeric { " class=\"num\"" } else { "" }
                );
            }
            out += "</tr>\n";
        }
        out += "</tbody>\n</table>\n";
        for n in &self.notes {
            out += &format!("<p class=\"note\">{}</p>\n", escape::html(n));
        }
        out
    }
}

/// The widest of a column's title and cells, in characters.
fn column_width(name: &str, rows: &[Vec<String>], i: usize) -> usize {
    rows.iter()
        .map(|r| r[i].chars().count())
        .chain([name.chars().count()])
        .max()
        .unwrap_or(0)
}

/// One CSV record of fields that are already encoded: text by
/// [`escape::csv_text`], numbers by `f64::to_string` (which never needs quotes).
fn csv_line(fields: &[String]) -> String {
    fields.join(",") + "\r\n"
}

/// A fraction as a CSV percentage; empty when absent.
fn percent_field(v: Option<f64>) -> String {
    v.map(|v| (v * 100.0).to_string()).unwrap_or_default()
}

fn cell_text(c: &Cell) -> String {
    match c {
        Cell::Text(s) | Cell::Toned(s, _) => s.clone(),
        Cell::Num(None)
        | Cell::Range(None, _)
        | Cell::Stat(None)
        | Cell::Percent(None)
        | Cell::PercentInterval(None, _) => "–".to_string(),
        Cell::Percent(Some(v)) | Cell::PercentInterval(Some(v), None) => change_text(*v),
        Cell::PercentInterval(Some(v), Some((low, high))) if *low >= TIMES_FROM => format!(
            "{} ({} … {})",
            change_text(*v),
            change_text(*low),
            change_text(*high)
        ),
        Cell::PercentInterval(Some(v), Some((low, high))) => format!(
            "{} ({:+.1} … {:+.1}%)",
            change_text(*v),
            low * 100.0,
            high * 100.0
        ),
        Cell::Num(Some(v)) | Cell::Range(Some(v), None) => fmt_num(*v),
        Cell::Range(Some(v), Some((low, high))) => {
            format!("{} ({}–{})", fmt_num(*v), fmt_num(*low), fmt_num(*high))
        }
        Cell::Int(n) => n.to_string(),
        Cell::Stat(Some(s)) if s.n > 1 => {
            format!("{} ± {}", fmt_num(s.mean), fmt_like(s.sd, s.mean))
        }
        Cell::Stat(Some(s)) => fmt_num(s.mean),
    }
}

/// A relative change from this fraction up (+100 %, twice as much) reads as
/// a factor: ×25.8 says more than +2483.9%.
const TIMES_FROM: f64 = 1.0;

/// A relative change as text: `+12.0%`, or `×25.8` from +100 % up.
fn change_text(fraction: f64) -> String {
    if fraction >= TIMES_FROM {
        format!("×{}", fmt_num(1.0 + fraction))
    } else {
        format!("{:+.1}%", fraction * 100.0)
    }
}

/// Decimals for a value: enough to show ~3-4 significant digits, as sysbench
/// shows 2 decimals for MiB/s but latencies go down to microseconds.
fn decimals(x: f64) -> usize {
    let a = x.abs();
    if a == 0.0 || !a.is_finite() || a >= 100.0 {
        if a >= 1000.0 {
            0
        } else {
            1
        }
    } else if a >= 1.0 {
        2
    } else {
        // 0 < a < 1 here, so 2 − floor(log10 a) is at least 3: positive, and
        // capped at 6 below.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let wanted = (2.0 - a.log10().floor()) as usize;
        wanted.min(6)
    }
}

/// A number with [`decimals`] places.
pub fn fmt_num(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    format!("{:.*}", decimals(x), x)
}

/// `x` (a spread) with the decimals of `like` (its mean), so `12.34 ± 0.56`
/// reads as one precision; more decimals only if the spread would show as 0.
fn fmt_like(x: f64, like: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    let d = decimals(like);
    let d_exp = i32::try_from(d).expect("decimals() returns at most 6");
    if x != 0.0 && x.abs() < 0.5 * 10f64.powi(-d_exp) {
        format!("{:.*}", decimals(x), x)
    } else {
        format!("{:.*}", d, x)
    }
}

/// The metric the latency column shows: event latency at the 95th percentile
/// (sysbench's default, so it matches the text report) when the runs recorded
/// it, else at the first percentile the first run recorded.
fn latency_percentile(runs: &[&RunResult]) -> Option<f64> {
    let mut recorded = runs
        .iter()
        .filter_map(|r| r.latency.get(&LatencyKey::Event));
    if runs
        .iter()
        .filter_map(|r| r.latency.get(&LatencyKey::Event))
        .any(|l| l.at(95.0).is_some())
    {
        return Some(95.0);
    }
    recorded.find_map(|l| l.percentiles.first().map(|p| p.p))
}

fn event_latency_at(run: &RunResult, p: f64) -> Option<f64> {
    run.latency.get(&LatencyKey::Event)?.at(p)
}

/// The report's main table: one row per configuration, read and write MiB/s as
/// columns (the reference user's table), plus fsyncs/s and event latency when
/// any run has them.
pub fn grouped_table(g: &Grouping) -> Table {
    let all: Vec<&RunResult> = g.runs.iter().map(|r| &r.result).collect();
    let fsyncs = all.iter().any(|r| r.rates.fsyncs_per_s > 0.0);
    let pct = latency_percentile(&all);
    // Below 1 ms on every run the column is in µs: 3.07 ± 0.41, not
    // 0.00307 ± 0.000410.
    let micro = pct.is_some_and(|p| {
        all.iter()
            .all(|r| event_latency_at(r, p).is_none_or(|ms| ms < 1.0))
    });
    let (unit, scale) = if micro { ("µs", 1000.0) } else { ("ms", 1.0) };
    let pct_name = pct.map(|p| format!("latency p{} {unit}", trim_float(p)));

    let mut cols: Vec<(&str, bool)> = g.columns.iter().map(|c| (c.as_str(), false)).collect();
    cols.push(("runs", true));
    cols.push(("read MiB/s", true));
    cols.push(("write MiB/s", true));
    if fsyncs {
        cols.push(("fsyncs/s", true));
    }
    if let Some(name) = &pct_name {
        cols.push((name.as_str(), true));
    }
    cols.push(("warnings", true));
    let mut t = Table::new(&cols);

    for grp in &g.groups {
        let mut row: Vec<Cell> = grp.key.iter().map(|v| Cell::Text(v.clone())).collect();
        row.push(Cell::Int(grp.runs.len() as u64));
        row.push(Cell::Stat(g.summary(grp, |r| Some(r.rates.read_mib_per_s))));
        row.push(Cell::Stat(
            g.summary(grp, |r| Some(r.rates.written_mib_per_s)),
        ));
        if fsyncs {
            row.push(Cell::Stat(g.summary(grp, |r| Some(r.rates.fsyncs_per_s))));
        }
        if let Some(p) = pct {
            row.push(Cell::Stat(
                g.summary(grp, |r| event_latency_at(r, p).map(|ms| ms * scale)),
            ));
        }
        let warnings: usize = g.results(grp).iter().map(|r| r.warnings.len()).sum();
        row.push(Cell::Int(warnings as u64));
        t.rows.push(row);
    }
    if !g.common.is_empty() {
        t.notes.push(format!(
            "All runs: {}",
            g.common
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if g.groups.iter().any(|x| x.runs.len() > 1) {
        t.notes
            .push("Values with ± are mean ± sample standard deviation over the repeats.".into());
    }
    t
}

/// `tankbench results`: one row per stored run.
pub fn runs_table(runs: &[StoredRun]) -> Table {
    let mut t = Table::new(&[
        ("id", false),
        ("started", false),
        ("labels", false),
        ("workload", false),
        ("read MiB/s", true),
        ("write MiB/s", true),
        ("warnings", true),
    ]);
    for r in runs {
        let res = &r.result;
        t.rows.push(vec![
            Cell::Text(r.id.clone()),
            Cell::Text(res.started_at.clone()),
            Cell::Text(labels_text(&res.labels)),
            Cell::Text(workload_name(res)),
            Cell::Num(Some(res.rates.read_mib_per_s)),
            Cell::Num(Some(res.rates.written_mib_per_s)),
            Cell::Int(res.warnings.len() as u64),
        ]);
    }
    // A narrow terminal keeps the figures and an id's unique prefix (what
    // `compare` takes); the start time and workload go first, then labels.
    t.fit = Fit {
        drop_first: vec!["started".into(), "workload".into(), "labels".into()],
        cut: vec![("id".into(), 24)],
    };
    t
}

/// A latency in ms as a person reads it: µs below 1 ms (`2.56 µs`,
/// `439 µs`), ms from there (`3.07 ms`), about three significant digits.
pub fn fmt_latency_ms(ms: f64) -> String {
    let three_digits = |x: f64| {
        if x >= 100.0 {
            format!("{x:.0}")
        } else {
            fmt_num(x)
        }
    };
    if ms < 1.0 {
        format!("{} µs", three_digits(ms * 1000.0))
    } else {
        format!("{} ms", three_digits(ms))
    }
}

/// `tankbench quick`: one row per named workload, with the operations per
/// second (reads, writes and fsyncs: what the live line counts), MiB per
/// second, the mean commit (a write and its fsync) where the workload
/// fsyncs, and the event latency at p50, p99 and p99.9, in µs below 1 ms.
/// A workload cut short by a signal says so in its name.
pub fn workloads_table(results: &[(String, RunResult)]) -> Table {
    let mut t = Table::new(&[
        ("workload", false),
        ("ops/s", true),
        ("MiB/s", true),
        ("commit", true),
        ("p50", true),
        ("p99", true),
        ("p99.9", true),
    ]);
    let latency = |v: Option<f64>| Cell::Text(v.map_or_else(|| "–".to_string(), fmt_latency_ms));
    for (name, r) in results {
        let event = r.latency.get(&LatencyKey::Event);
        let at = |p: f64| event.and_then(|l| l.at(p));
        let name = if r.interrupted {
            format!("{name} (interrupted)")
        } else {
            name.clone()
        };
        // What a sync writer waits for per write: the p50 of all events
        // is mostly cached reads and hides it.
        let commit = match (
            r.latency.get(&LatencyKey::Write),
            r.latency.get(&LatencyKey::Fsync),
        ) {
            (Some(w), Some(f)) if r.rates.fsyncs_per_s > 0.0 && f.count > 0 => {
                Some(w.mean_ms + f.mean_ms)
            }
            _ => None,
        };
        t.rows.push(vec![
            Cell::Text(name),
            Cell::Num(Some(
                r.rates.reads_per_s + r.rates.writes_per_s + r.rates.fsyncs_per_s,
            )),
            Cell::Num(Some(r.rates.read_mib_per_s + r.rates.written_mib_per_s)),
            latency(commit),
            latency(at(50.0)),
            latency(at(99.0)),
            latency(at(99.9)),
        ]);
    }
    // A narrow terminal keeps the figures: the names are cut first, then
    // the tail percentiles go.
    t.fit = Fit {
        drop_first: vec!["p99.9".into(), "p50".into()],
        cut: vec![("workload".into(), 28)],
    };
    t.notes = vec![
        "ops/s: reads + writes + fsyncs per second, as the live line counts them.".to_string(),
        "commit: mean time of a write and its fsync (what each sync writer waits for); p50-p99.9: every event."
            .to_string(),
    ];
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_reads_as_figure_and_interval_and_splits_into_three_csv_columns() {
        let mut t = Table::new(&[("layout", false), ("writes/s", true)]);
        t.rows.push(vec![
            Cell::Text("2xraidz2-12".into()),
            Cell::Range(Some(7.5), Some((4.1, 12.3))),
        ]);
        t.rows.push(vec![
            Cell::Text("1xraidz3-24".into()),
            Cell::Range(Some(3.25), None),
        ]);
        let text = t.to_terminal();
        assert!(text.contains("7.50 (4.10–12.30)"), "{text}");
        assert!(text.contains("3.25"), "{text}");
        let csv = t.to_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            r#""layout","writes/s","writes/s low","writes/s high""#
        );
        assert_eq!(lines[1], r#""2xraidz2-12",7.5,4.1,12.3"#);
        assert_eq!(lines[2], r#""1xraidz3-24",3.25,,"#);
    }

    fn sample() -> Table {
        let mut t = Table::new(&[("layout", false), ("read MiB/s", true)]);
        t.rows.push(vec![
            Cell::Text("2x, raidz2".into()),
            Cell::Stat(Summary::of(&[10.0, 12.0])),
        ]);
        t.rows.push(vec![
            Cell::Text("a|b".into()),
            Cell::Stat(Summary::of(&[3.25])),
        ]);
        t
    }

    #[test]
    fn csv_splits_stats_and_quotes() {
        let csv = sample().to_csv();
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines[0], "\"layout\",\"read MiB/s\",\"read MiB/s sd\"");
        assert_eq!(lines[1], format!("\"2x, raidz2\",11,{}", 2f64.sqrt()));
        assert_eq!(lines[2], "\"a|b\",3.25,");
    }

    #[test]
    fn markdown_escapes_pipes_and_aligns_numbers() {
        let md = sample().to_markdown();
        assert!(md.starts_with(MARKDOWN_MARKER));
        assert!(md.contains("| layout | read MiB/s |\n|---|---:|\n"));
        assert!(md.contains("| a\\|b | 3.25 |"));
        assert!(md.contains("| 2x, raidz2 | 11.00 ± 1.41 |"));
    }

    #[test]
    fn terminal_aligns_columns() {
        let text = sample().to_terminal();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "layout        read MiB/s");
        assert_eq!(lines[2], "2x, raidz2  11.00 ± 1.41");
        assert_eq!(lines[3], "a|b                 3.25");
    }

    #[test]
    fn number_formatting() {
        assert_eq!(fmt_num(1234.567), "1235");
        assert_eq!(fmt_num(123.456), "123.5");
        assert_eq!(fmt_num(12.3456), "12.35");
        assert_eq!(fmt_num(0.012345), "0.0123");
        assert_eq!(fmt_num(0.0), "0");
    }

    /// quick's NAS row: the p50 of all events is a cached read's (µs); the
    /// commit column shows what each sync writer waits for.
    #[test]
    fn quick_rows_show_the_commit_and_microseconds_and_count_fsyncs_as_ops() {
        use fileio::result::{Counts, LatencySummary, Percentile, ResultKind};
        let latency = |mean_ms: f64, count: u64| LatencySummary {
            count,
            mean_ms,
            percentiles: vec![Percentile {
                p: 50.0,
                ms: 0.00256,
            }],
            ..LatencySummary::default()
        };
        let spec = fileio::options::RunSpec::builder()
            .mode(fileio::options::Mode::RndRw)
            .build()
            .unwrap();
        let r = RunResult::new(ResultKind::Measured, spec.summary("psync"))
            .with_figures(
                Counts {
                    reads: 300,
                    writes: 200,
                    fsyncs: 200,
                    ..Counts::default()
                },
                1.0,
                1.0,
            )
            .with_latency(LatencyKey::Event, latency(0.1, 700))
            .with_latency(LatencyKey::Write, latency(0.01, 200))
            .with_latency(LatencyKey::Fsync, latency(0.37, 200));
        let text = workloads_table(&[("NAS".to_string(), r)]).to_terminal();
        let row = text.lines().find(|l| l.starts_with("NAS")).unwrap();
        assert!(row.contains(" 700.0 "), "reads + writes + fsyncs: {row}");
        assert!(row.contains("380 µs"), "commit = write + fsync: {row}");
        assert!(row.contains("2.56 µs"), "p50 in µs: {row}");
        assert!(!row.contains("0.00256"), "{row}");
        assert!(text.contains("ops/s: reads + writes + fsyncs"), "{text}");
        assert_eq!(fmt_latency_ms(3.07), "3.07 ms");
    }

    #[test]
    fn changes_of_100_percent_and_more_read_as_factors() {
        assert_eq!(cell_text(&Cell::Percent(Some(0.25))), "+25.0%");
        assert_eq!(cell_text(&Cell::Percent(Some(-0.96))), "-96.0%");
        assert_eq!(cell_text(&Cell::Percent(Some(24.839))), "×25.84");
        assert_eq!(cell_text(&Cell::Percent(Some(1.0))), "×2.00");
        assert_eq!(
            cell_text(&Cell::PercentInterval(Some(24.839), Some((20.0, 30.0)))),
            "×25.84 (×21.00 … ×31.00)"
        );
        assert_eq!(
            cell_text(&Cell::PercentInterval(Some(1.5), Some((0.5, 2.5)))),
            "×2.50 (+50.0 … +250.0%)"
        );
    }

    fn screen(columns: usize) -> Screen {
        Screen {
            width: fileio::terminal::Width::columns(columns),
            colour: fileio::terminal::Colour::Off,
        }
    }

    fn wide() -> Table {
        let mut t = Table::new(&[
            ("id", false),
            ("labels", false),
            ("writes/s", true),
            ("p95 ms", true),
        ]);
        for n in 0..3 {
            t.rows.push(vec![
                Cell::Text(format!(
                    "20261205T190806Z-00{n}-client-esxi-6.5-nfs_layout-1xraidz3-24"
                )),
                Cell::Text("client=esxi-6.5-nfs layout=1xraidz3-24 link=2x1G log=none".into()),
                Cell::Range(Some(2591.0), Some((2152.0, 3114.0))),
                Cell::Range(Some(33.42), Some((29.25, 37.61))),
            ]);
        }
        t.notes
            .push("A note that is much longer than forty columns, so it has to wrap.".into());
        t
    }

    #[test]
    fn a_narrow_terminal_drops_intervals_cuts_ids_and_leaves_out_columns_saying_so() {
        let mut t = wide();
        t.fit.drop_first = vec!["labels".into()];
        t.fit.cut = vec![("id".into(), 22)];
        let text = t.to_screen(&screen(60));
        for line in text.lines() {
            assert!(line.chars().count() <= 60, "{line:?}\n{text}");
        }
        assert!(
            text.contains("Intervals (low–high) left out to fit 60 columns"),
            "{text}"
        );
        assert!(
            text.contains("Left out to fit 60 columns: labels"),
            "{text}"
        );
        assert!(
            text.contains("20261205T190806Z-000-…"),
            "a unique prefix stays: {text}"
        );
        assert!(text.contains("33.42"), "{text}");
        assert!(!text.contains("client=esxi"), "{text}");
        // Without a limit nothing gives way.
        let piped = t.to_terminal();
        assert!(piped.contains("2591 (2152–3114)"), "{piped}");
        assert!(piped.contains("client=esxi"), "{piped}");
        assert!(!piped.contains("Left out"), "{piped}");
    }

    #[test]
    fn columns_leave_from_the_right_and_the_first_stays() {
        let text = wide().to_screen(&screen(40));
        assert!(text.starts_with("id"), "{text}");
        // The note wraps like any prose on a terminal.
        let text = text.replace("\n  ", " ");
        assert!(
            text.contains("Left out to fit 40 columns: labels, writes/s, p95 ms"),
            "{text}"
        );
    }

    #[test]
    fn toned_cells_are_coloured_only_on_a_screen_with_colour_and_stay_aligned() {
        let mut t = Table::new(&[("metric", false), ("B vs A", false)]);
        t.rows.push(vec![
            Cell::Text("writes/s".into()),
            Cell::Toned("worse".into(), Tone::Worse),
        ]);
        t.rows.push(vec![
            Cell::Text("reads/s".into()),
            Cell::Toned("better".into(), Tone::Better),
        ]);
        let plain = t.to_terminal();
        assert!(!plain.contains('\x1b'), "{plain}");
        let coloured = t.to_screen(&Screen {
            colour: fileio::terminal::Colour::On,
            ..Screen::PIPE
        });
        assert!(coloured.contains("\x1b["), "{coloured:?}");
        let stripped: String = {
            let mut out = String::new();
            let mut in_escape = false;
            for c in coloured.chars() {
                match (in_escape, c) {
                    (false, '\x1b') => in_escape = true,
                    (true, 'm') => in_escape = false,
                    (true, _) => {}
                    (false, c) => out.push(c),
                }
            }
            out
        };
        assert_eq!(stripped, plain);
    }

    #[test]
    fn a_latency_column_below_1_ms_reads_in_microseconds_on_a_terminal_only() {
        let mut t = Table::new(&[("cell", false), ("p95 ms", true), ("avg lat ms", true)]);
        t.rows.push(vec![
            Cell::Text("a".into()),
            Cell::Range(Some(0.00307), Some((0.0029, 0.0031))),
            Cell::Num(Some(13.4)),
        ]);
        t.rows.push(vec![
            Cell::Text("b".into()),
            Cell::Range(Some(0.618), Some((0.515, 0.744))),
            Cell::Num(Some(0.5)),
        ]);
        let text = t.to_terminal();
        assert!(text.contains("p95 µs"), "{text}");
        assert!(text.contains("3.07 (2.90–3.10)"), "{text}");
        assert!(text.contains("618.0 (515.0–744.0)"), "{text}");
        assert!(
            text.contains("avg lat ms"),
            "a column over 1 ms stays in ms: {text}"
        );
        assert!(
            t.to_csv().starts_with("\"cell\",\"p95 ms\""),
            "CSV keeps ms"
        );
    }

    #[test]
    fn a_figure_per_row_named_in_ms_reads_in_microseconds_when_below_1_ms() {
        let mut t = Table::new(&[("metric", false), ("A", true), ("B", true), ("p", true)]);
        t.rows.push(vec![
            Cell::Text("event latency p50 ms".into()),
            Cell::Stat(Summary::of(&[0.0087])),
            Cell::Stat(Summary::of(&[0.0092])),
            Cell::Num(Some(0.04)),
        ]);
        t.rows.push(vec![
            Cell::Text("event latency p95 ms".into()),
            Cell::Stat(Summary::of(&[33.4])),
            Cell::Stat(Summary::of(&[0.9])),
            Cell::Num(Some(0.04)),
        ]);
        let text = t.to_terminal();
        assert!(
            text.contains("event latency p50 µs   8.70   9.20  0.0400"),
            "{text}"
        );
        assert!(text.contains("event latency p95 ms"), "{text}");
        assert!(t.to_csv().contains("p50 ms"), "CSV keeps ms");
        // A row whose runs span microseconds to milliseconds (a cached
        // read's p99.9 on a busy machine) reads in µs: no 0.00… figures.
        let mut t = Table::new(&[("metric", false), ("runs", true)]);
        t.rows.push(vec![
            Cell::Text("read latency p99.9 ms".into()),
            Cell::Stat(Summary::of(&[0.0053, 0.0056, 4.37])),
        ]);
        let text = t.to_terminal();
        assert!(text.contains("read latency p99.9 µs"), "{text}");
        assert!(
            !text.split_whitespace().any(|w| w.starts_with("0.00")),
            "{text}"
        );
    }
}

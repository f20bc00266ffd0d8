//! What the place a command writes to can show: how many columns a line may
//! take, and whether it takes colour. A terminal has a width and (unless
//! `NO_COLOR` says otherwise) colour; a pipe or a file has neither, so
//! nothing is cut, wrapped or coloured for the scripts that read it.
//!
//! The one place that asks the system: a command takes a [`Screen`] for each
//! stream once ([`Screen::stdout`], [`Screen::stderr`]) and passes it, or
//! its [`Width`], down to whatever lays out text (tables, wrapped prose, the
//! live line). It lives in this crate, the lowest that prints: the
//! sysbench-compatible console colours its warnings and fits its live line.

use std::io::IsTerminal;
use std::os::fd::AsFd;

/// The columns a line may take: a terminal's width, or no limit (a pipe, a
/// file: scripts read every column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Width(Option<usize>);

/// A terminal reported narrower than this (or a `COLUMNS` of 3) is laid out
/// as this wide: fewer columns hold no table and no sentence.
pub const NARROWEST: usize = 40;

/// A terminal that does not say its width (the ioctl answers 0, no
/// `COLUMNS`): the width terminals open with.
const UNREPORTED: usize = 80;

impl Width {
    /// No limit: a pipe or a file.
    pub const UNLIMITED: Width = Width(None);

    /// A terminal `n` columns wide (at least [`NARROWEST`]).
    pub fn columns(n: usize) -> Width {
        Width(Some(n.max(NARROWEST)))
    }

    /// The columns, or None without a limit.
    pub fn limit(self) -> Option<usize> {
        self.0
    }

    /// Whether a line of `columns` characters fits.
    pub fn fits(self, columns: usize) -> bool {
        self.0.is_none_or(|w| columns <= w)
    }

    /// The width of the terminal `stream` is, from the kernel (TIOCGWINSZ)
    /// or, where it answers 0, `COLUMNS`; no limit when it is not a terminal.
    fn of<S: AsFd + IsTerminal>(stream: S) -> Width {
        if !stream.is_terminal() {
            return Width::UNLIMITED;
        }
        let reported = columns_of(stream.as_fd()).filter(|&w| w > 0);
        let from_env = || {
            std::env::var("COLUMNS")
                .ok()
                .and_then(|c| c.trim().parse::<usize>().ok())
                .filter(|&w| w > 0)
        };
        Width::columns(reported.or_else(from_env).unwrap_or(UNREPORTED))
    }
}

/// Whether an MPI launcher started this process (Open MPI's, or one
/// speaking PMI/PMIx): mpirun hands each rank a pseudo terminal of its own
/// and forwards what the rank writes to wherever mpirun's own output goes,
/// a pipe or a file as often as a terminal, so the rank's terminal says
/// nothing about the reader. Its output is laid out as for a pipe.
fn forwarded_by_mpi_launcher() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// The columns the kernel holds for the terminal `fd` is (TIOCGWINSZ);
/// its rows are not needed, so a terminal that reports none still counts.
fn columns_of(fd: std::os::fd::BorrowedFd) -> Option<usize> {
    use std::os::fd::AsRawFd;
    // SAFETY: TIOCGWINSZ fills the winsize we own; the descriptor is borrowed
    // for the call.
    let size = unsafe {
        let mut size: libc::winsize = std::mem::zeroed();
        if libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut size) != 0 {
            return None;
        }
        size
    };
    Some(usize::from(size.ws_col))
}

/// Colour on or off for one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Colour {
    #[default]
    Off,
    On,
}

/// What a coloured piece of text says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// A warning's label (`WARNING`), so it stands out of a report.
    Warning,
    /// A change for the better in a comparison.
    Better,
    /// A change for the worse.
    Worse,
    /// The banner saying figures are predicted, not measured.
    Prediction,
}

impl Tone {
    fn style(self) -> anstyle::Style {
        use anstyle::{AnsiColor, Style};
        match self {
            Tone::Warning => Style::new().bold().fg_color(Some(AnsiColor::Yellow.into())),
            Tone::Better => Style::new().fg_color(Some(AnsiColor::Green.into())),
            Tone::Worse => Style::new().fg_color(Some(AnsiColor::Red.into())),
            Tone::Prediction => Style::new().bold().fg_color(Some(AnsiColor::Cyan.into())),
        }
    }
}

impl Colour {
    /// The choice for `stream` by the conventions anstream follows (as clap
    /// does for its help): `NO_COLOR` turns colour off, `CLICOLOR_FORCE`
    /// on, and otherwise a terminal that supports it gets colour.
    fn of<S: anstream::stream::RawStream>(stream: &S) -> Colour {
        match anstream::AutoStream::choice(stream) {
            anstream::ColorChoice::Never => Colour::Off,
            _ => Colour::On,
        }
    }

    /// `text` in `tone`'s colour, or as it is without colour.
    pub fn paint(self, tone: Tone, text: &str) -> String {
        match self {
            Colour::Off => text.to_string(),
            Colour::On => {
                let style = tone.style();
                format!("{style}{text}{style:#}")
            }
        }
    }
}

/// Where a command's text goes: the width it may take and whether it is
/// coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Screen {
    pub width: Width,
    pub colour: Colour,
}

impl Screen {
    /// A pipe or a file: no limit, no colour.
    pub const PIPE: Screen = Screen {
        width: Width::UNLIMITED,
        colour: Colour::Off,
    };

    /// Standard output, as it is now.
    pub fn stdout() -> Screen {
        if forwarded_by_mpi_launcher() {
            return Screen::PIPE;
        }
        let out = std::io::stdout();
        Screen {
            width: Width::of(out.lock()),
            colour: Colour::of(&out),
        }
    }

    /// Standard error, as it is now.
    pub fn stderr() -> Screen {
        if forwarded_by_mpi_launcher() {
            return Screen::PIPE;
        }
        let err = std::io::stderr();
        Screen {
            width: Width::of(err.lock()),
            colour: Colour::of(&err),
        }
    }

    /// Colour only where there is a terminal: `CLICOLOR_FORCE` does not
    /// colour a pipe. For output that scripts parse whole (the
    /// sysbench-compatible report), which must stay byte for byte
    /// sysbench's wherever a program reads it.
    pub fn colour_on_terminal_only(self) -> Screen {
        Screen {
            colour: if self.width.limit().is_some() {
                self.colour
            } else {
                Colour::Off
            },
            ..self
        }
    }

    /// `text` with its long lines broken to fit (see [`wrap`]); unchanged
    /// without a limit, so a pipe gets one line per message.
    pub fn wrap(&self, text: &str) -> String {
        match self.width.limit() {
            Some(w) => wrap(text, w),
            None => text.to_string(),
        }
    }

    /// `text` in `tone`'s colour where this screen takes colour.
    pub fn paint(&self, tone: Tone, text: &str) -> String {
        self.colour.paint(tone, text)
    }

    /// `text` with the label it starts with coloured, where it starts with
    /// one of [`LABELS`] (`WARNING (workload 3):`, `warning:`,
    /// `PREDICTION`); anything else as it is.
    pub fn paint_label(&self, text: &str) -> String {
        if self.colour == Colour::Off {
            return text.to_string();
        }
        let Some((label, tone)) = LABELS.iter().find(|(l, _)| text.starts_with(l)) else {
            return text.to_string();
        };
        format!("{}{}", self.paint(*tone, label), &text[label.len()..])
    }
}

/// The words tankbench starts a line with to mark it, and their colour:
/// a warning about a result, and the banner of a prediction.
pub const LABELS: [(&str, Tone); 3] = [
    ("WARNING", Tone::Warning),
    ("warning", Tone::Warning),
    ("PREDICTION", Tone::Prediction),
];

/// Lines longer than `width` broken at spaces, each continuation indented
/// two more than its line began, so a wrapped message still reads as one;
/// a word longer than the width stays whole (a path is not cut).
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, newline) = line.strip_suffix('\n').map_or((line, ""), |b| (b, "\n"));
        if body.chars().count() <= width {
            out.push_str(line);
            continue;
        }
        let indent = body.len() - body.trim_start().len();
        let hang = " ".repeat(indent + 2);
        let mut current = body[..indent].to_string();
        let mut at_start = true;
        for word in body.split_whitespace() {
            let len = current.chars().count();
            if !at_start && len + 1 + word.chars().count() > width {
                out.push_str(current.trim_end());
                out.push('\n');
                current = hang.clone();
                at_start = true;
            }
            if !at_start {
                current.push(' ');
            }
            current.push_str(word);
            at_start = false;
        }
        out.push_str(&current);
        out.push_str(newline);
    }
    out
}

/// `text` cut to `width` characters, the last one an ellipsis when cut (a
/// live line must stay on one row of the terminal to be redrawn in place).
pub fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A progress bar with the time left, for a command of many steps (quick's
/// workloads, a matrix's cells), redrawn in place on a terminal's stderr.
/// There is none in a pipe: [`Bar::on_stderr`] gives one only on a
/// terminal.
pub struct Bar {
    width: usize,
    total: f64,
    /// When the first work was counted, and how much: the rate behind the
    /// time left leaves out what came before (making a file set).
    first: Option<(std::time::Instant, f64)>,
    drawn: bool,
    /// When the bar was last drawn: at most [`REDRAW_EVERY`] apart.
    drawn_at: Option<std::time::Instant>,
}

/// A bar redrawn more often than this only flickers.
const REDRAW_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// Cells of the bar itself.
const BAR_CELLS: usize = 20;

impl Bar {
    /// A bar for `total` units of work, when stderr is a terminal.
    pub fn on_stderr(total: f64) -> Option<Bar> {
        let width = Screen::stderr().width.limit()?;
        Some(Bar {
            width,
            total,
            first: None,
            drawn: false,
            drawn_at: None,
        })
    }

    /// The bar's line with `done` of the total done, `doing` saying what
    /// (`3/12 cells`), and the time left at the rate since the first work.
    pub fn line(&self, done: f64, doing: &str, left: Option<std::time::Duration>) -> String {
        let share = if self.total > 0.0 {
            (done / self.total).clamp(0.0, 1.0)
        } else {
            0.0
        };
        // share is within 0..=1, so the product is within 0..=BAR_CELLS.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let full = (share * BAR_CELLS as f64).round() as usize;
        let left = match left {
            Some(d) => format!("{} left", duration_words(d.as_secs())),
            None => "time left unknown yet".to_string(),
        };
        let line = format!(
            "[{}{}] {:>3.0}%  {left}  {doing}",
            "#".repeat(full),
            "-".repeat(BAR_CELLS - full),
            share * 100.0
        );
        // The last column left free, as for the live line.
        cut(&line, self.width - 1)
    }

    /// The text that redraws the bar with `done` of the total done (a
    /// carriage return, an erase and the line), or None while the last
    /// frame is recent enough. The caller writes it to stderr.
    pub fn frame(&mut self, done: f64, doing: &str) -> Option<String> {
        let now = std::time::Instant::now();
        let recent = self
            .drawn_at
            .is_some_and(|t| now.duration_since(t) < REDRAW_EVERY);
        // Skipped while recent, unless it is off the screen or finished.
        if self.drawn && recent && done < self.total {
            return None;
        }
        self.drawn_at = Some(now);
        let left = match self.first {
            None => {
                if done > 0.0 {
                    self.first = Some((now, done));
                }
                None
            }
            Some((t0, d0)) if done > d0 => {
                let per_unit = now.duration_since(t0).as_secs_f64() / (done - d0);
                Some(std::time::Duration::from_secs_f64(
                    ((self.total - done).max(0.0) * per_unit).min(1e9),
                ))
            }
            Some(_) => None,
        };
        let line = self.line(done, doing, left);
        self.drawn = true;
        Some(format!("\r\x1b[2K{line}"))
    }

    /// The text that takes the bar off the screen (before a line of text,
    /// or at the end), or None when it is not shown.
    pub fn clearing(&mut self) -> Option<&'static str> {
        std::mem::take(&mut self.drawn).then_some("\r\x1b[2K")
    }
}

/// Seconds as a person says them: `45s`, `3m05s`, `1h02m`.
fn duration_words(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_break_at_spaces_and_continue_indented() {
        let text =
            "WARNING: the run was shorter than three txg syncs of the pool\n  hint: longer\n";
        let wrapped = wrap(text, 30);
        for line in wrapped.lines() {
            assert!(line.chars().count() <= 30, "{line:?}");
        }
        assert!(
            wrapped.starts_with("WARNING: the run was shorter\n  than"),
            "{wrapped}"
        );
        assert!(wrapped.ends_with("  hint: longer\n"), "{wrapped}");
        assert_eq!(
            wrap("a /very/long/path/that/does/not/fit end", 10),
            "a\n  /very/long/path/that/does/not/fit\n  end"
        );
    }

    #[test]
    fn a_pipe_keeps_every_line_whole_and_uncoloured() {
        let line = "x ".repeat(200);
        assert_eq!(Screen::PIPE.wrap(&line), line);
        assert_eq!(Screen::PIPE.paint(Tone::Warning, "WARNING"), "WARNING");
        assert!(Width::UNLIMITED.fits(10_000));
    }

    #[test]
    fn colour_wraps_the_text_in_an_escape_and_its_reset() {
        let painted = Colour::On.paint(Tone::Worse, "-12.0%");
        assert!(painted.starts_with("\x1b["), "{painted:?}");
        assert!(painted.contains("-12.0%"), "{painted:?}");
        assert!(painted.ends_with("\x1b[0m"), "{painted:?}");
        let forced_on_a_pipe = Screen {
            width: Width::UNLIMITED,
            colour: Colour::On,
        };
        assert_eq!(
            forced_on_a_pipe.colour_on_terminal_only().colour,
            Colour::Off
        );
    }

    #[test]
    fn a_line_s_label_is_coloured_and_the_rest_left_alone() {
        let on = Screen {
            colour: Colour::On,
            ..Screen::PIPE
        };
        let painted = on.paint_label("WARNING (workload 1): slow");
        assert!(painted.starts_with("\x1b["), "{painted:?}");
        assert!(
            painted.ends_with("\x1b[0m (workload 1): slow"),
            "{painted:?}"
        );
        assert_eq!(on.paint_label("saved x.json"), "saved x.json");
        assert_eq!(Screen::PIPE.paint_label("WARNING: x"), "WARNING: x");
    }

    #[test]
    fn the_bar_shows_the_share_done_and_the_time_left_within_its_width() {
        let bar = Bar {
            width: 60,
            total: 100.0,
            first: None,
            drawn: false,
            drawn_at: None,
        };
        let line = bar.line(
            25.0,
            "workload 2/5: 4K random read, 4 threads",
            Some(std::time::Duration::from_secs(185)),
        );
        assert!(
            line.starts_with("[#####---------------]  25%  3m05s left"),
            "{line}"
        );
        assert_eq!(line.chars().count(), 59, "{line}");
        assert!(bar.line(0.0, "x", None).contains("time left unknown yet"));
        assert_eq!(duration_words(3720), "1h02m");
    }

    #[test]
    fn a_narrow_terminal_is_taken_as_the_narrowest_useful() {
        assert_eq!(Width::columns(3).limit(), Some(NARROWEST));
        assert_eq!(Width::columns(80).limit(), Some(80));
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
    }
}

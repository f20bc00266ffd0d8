//! Output with sysbench's rules: verbosity levels, repeated-message folding and
//! the stream each kind of message goes to. Its own module so that every stage
//! (front end, distributed job, quick suite, warnings) can print without
//! depending on the front end.

use crate::options::{Failure, Stream};
use crate::terminal::Screen;
use std::io::Write;
use std::sync::Mutex;

/// Write to stderr, ignoring a failure: a closed pipe (`|& head`) or a
/// terminal gone after SIGHUP must not end a run before it cleans up
/// (`eprint!` would panic).
pub fn to_stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// The first failed write to stdout other than a closed pipe (the raw OS
/// error), so that the command can fail at its end: a report that never
/// arrived (`> /dev/full`, a full disk) must not exit 0. 0: none.
static STDOUT_FAILURE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Write to stdout as the report does: a closed pipe (`| head`) is the
/// reader having seen enough; any other failure is remembered for
/// [`stdout_failure`] and the run goes on (it still cleans up).
pub fn to_stdout(text: &[u8]) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text).and_then(|()| out.flush()) {
        note_stdout_failure(&e);
    }
}

fn note_stdout_failure(e: &std::io::Error) {
    if e.kind() != std::io::ErrorKind::BrokenPipe {
        let code = e.raw_os_error().unwrap_or(libc::EIO);
        let _ = STDOUT_FAILURE.compare_exchange(
            0,
            code,
            std::sync::atomic::Ordering::SeqCst,
            std::sync::atomic::Ordering::SeqCst,
        );
    }
}

/// The first write to stdout that failed (not a closed pipe), if any.
pub fn stdout_failure() -> Option<std::io::Error> {
    match STDOUT_FAILURE.load(std::sync::atomic::Ordering::SeqCst) {
        0 => None,
        code => Some(std::io::Error::from_raw_os_error(code)),
    }
}

/// Log levels of sysbench (`--verbosity`).
const FATAL: u32 = 0;
const WARNING: u32 = 2;
/// Also sysbench's default verbosity.
pub const NOTICE: u32 = 3;
const INFO: u32 = 4;
const DEBUG: u32 = 5;

/// Output with sysbench's rules: the logger writes to stdout, filtered by
/// verbosity. Like sysbench's logger (sb_logger.c, text_handler_process), a
/// message identical to the previous one is not printed but counted, and the
/// count comes out as `(last message repeated N times)` just before the next
/// different message. In JSON mode stdout carries only the JSON document, so
/// log lines move to stderr (warnings and errors) or are dropped (the rest).
pub struct Console {
    verbosity: u32,
    json: bool,
    /// The last message and how many times it came again since. Held while
    /// printing, so lines from several threads come out whole and in order.
    log: Mutex<(Option<String>, u64)>,
    /// A live progress line is on stderr and must be cleared before printing.
    progress_shown: Mutex<bool>,
    /// Where the report goes: tankbench's warnings in it wrap and colour on
    /// a terminal; sysbench's own lines never change.
    stdout: Screen,
}

impl Console {
    pub fn new(verbosity: u32, json: bool) -> Console {
        Console {
            verbosity,
            json,
            log: Mutex::new((None, 0)),
            progress_shown: Mutex::new(false),
            // A pipe gets sysbench's bytes whatever CLICOLOR_FORCE says:
            // scripts parse this report.
            stdout: Screen::stdout().colour_on_terminal_only(),
        }
    }

    fn clear_progress(&self) {
        let mut shown = self
            .progress_shown
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if *shown {
            to_stderr("\r\x1b[2K");
            *shown = false;
        }
    }

    /// Print one message at `level`. `fold`: an identical repeat is counted
    /// instead of printed (sysbench's log_text); raw blocks (header, reports)
    /// and timestamped lines are never folded but still end a repeat count, so
    /// its notice comes right after the line it folds.
    fn log(&self, level: u32, text: &str, fold: bool) {
        if level > self.verbosity {
            return;
        }
        let mut last = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if fold && last.0.as_deref() == Some(text) {
            last.1 += 1;
            return;
        }
        self.clear_progress();
        let repeats = std::mem::take(&mut last.1);
        last.0 = fold.then(|| text.to_string());
        if self.json {
            if level <= WARNING {
                to_stderr(&format!("{text}\n"));
            }
            return;
        }
        let mut out = std::io::stdout().lock();
        let mut written = Ok(());
        if repeats > 0 {
            written = writeln!(out, "(last message repeated {repeats} times)");
        }
        written = written.and_then(|()| {
            if fold {
                writeln!(out, "{text}")
            } else {
                out.write_all(text.as_bytes())
            }
        });
        if let Err(e) = written.and_then(|()| out.flush()) {
            note_stdout_failure(&e);
        }
    }

    /// A NOTICE line (normal output); may hold several lines.
    pub fn notice(&self, text: &str) {
        self.log(NOTICE, text, true)
    }

    /// Raw text (already formatted, with its own newlines) at NOTICE level.
    pub(crate) fn notice_raw(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.log(NOTICE, text, false)
    }

    /// A timestamped NOTICE line (`--report-interval`): sysbench never folds
    /// those.
    pub(crate) fn notice_timestamped(&self, text: &str) {
        self.log(NOTICE, &format!("{text}\n"), false)
    }

    /// An INFO line (`--verbosity=4`): `Done.`, `Time limit exceeded, exiting...`.
    pub fn info(&self, text: &str) {
        self.log(INFO, text, true)
    }

    pub fn warning(&self, text: &str) {
        self.log(WARNING, text, true)
    }

    /// One of tankbench's analysis warnings about a result. They belong to the
    /// report tankbench adds, so they are NOTICE level: `--verbosity=2` or less
    /// silences them as it silences the report (sysbench prints nothing at all
    /// for a successful run then). In JSON mode they go to stderr, beside the
    /// document that also holds them.
    pub(crate) fn result_warning(&self, text: &str) {
        if NOTICE > self.verbosity {
            return;
        }
        if self.json {
            self.clear_progress();
            let screen = Screen::stderr();
            to_stderr(&format!("{}\n", screen.paint_label(&screen.wrap(text))));
            return;
        }
        let screen = &self.stdout;
        self.log(NOTICE, &screen.paint_label(&screen.wrap(text)), true)
    }

    pub fn fatal(&self, text: &str) {
        self.log(FATAL, text, true)
    }

    pub fn stderr(&self, text: &str) {
        self.clear_progress();
        to_stderr(&format!("{text}\n"));
    }

    /// A DEBUG line (`--verbosity=5`, `--debug`).
    pub fn debug(&self, text: &str) {
        self.log(DEBUG, text, true)
    }

    /// Print a failure's lines to their streams.
    pub fn failure(&self, f: &Failure) {
        for (stream, line) in &f.lines {
            match stream {
                Stream::Stderr => self.stderr(line),
                Stream::Stdout => {
                    if line.starts_with("WARNING: ") {
                        self.warning(line)
                    } else {
                        self.fatal(line)
                    }
                }
            }
        }
    }

    /// A live progress line on stderr (only when stderr is a terminal),
    /// cut to the terminal's width so that it stays one row, redrawn in
    /// place.
    pub fn progress(&self, text: &str) {
        let mut shown = self
            .progress_shown
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let text = match Screen::stderr().width.limit() {
            // The last column left free: a line that fills it wraps on
            // some terminals, and `\r` then redraws the wrong row.
            Some(w) => crate::terminal::cut(text, w - 1),
            None => text.to_string(),
        };
        to_stderr(&format!("\r\x1b[2K{text}"));
        *shown = true;
    }

    pub(crate) fn end_progress(&self) {
        self.clear_progress();
    }
}

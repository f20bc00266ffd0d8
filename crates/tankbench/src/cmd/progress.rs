//! The progress bar a long command shows on a terminal's stderr (quick's
//! workloads, a matrix's cells), held in one place so that a line written
//! to stderr while it shows takes it off first ([`super::write_stderr_line`])
//! and the next update draws it again below. A pipe gets no bar.

use ::fileio::terminal::Bar;
use std::sync::Mutex;

/// The bar on screen, if any.
static SHOWN: Mutex<Option<Bar>> = Mutex::new(None);

/// Show a bar for `total` units of work when stderr is a terminal.
pub(crate) fn start(total: f64) {
    if let Ok(mut slot) = SHOWN.lock() {
        *slot = Bar::on_stderr(total);
    }
}

/// [`start`], unless a bar is already up: for work whose total the first
/// update tells.
pub(crate) fn start_once(total: f64) {
    if let Ok(mut slot) = SHOWN.lock() {
        if slot.is_none() {
            *slot = Bar::on_stderr(total);
        }
    }
}

/// Redraw the bar (if one was started) with `done` units done.
pub(crate) fn update(done: f64, doing: &str) {
    if let Ok(mut slot) = SHOWN.lock() {
        if let Some(bar) = slot.as_mut() {
            if let Some(frame) = bar.frame(done, doing) {
                ::fileio::console::to_stderr(&frame);
            }
        }
    }
}

/// Take the bar off the screen for a line of text; the next update shows it again.
pub(crate) fn clear() {
    if let Ok(mut slot) = SHOWN.lock() {
        if let Some(erase) = slot.as_mut().and_then(Bar::clearing) {
            ::fileio::console::to_stderr(erase);
        }
    }
}

/// Take the bar off the screen for good.
pub(crate) fn finish() {
    if let Ok(mut slot) = SHOWN.lock() {
        if let Some(erase) = slot.as_mut().and_then(Bar::clearing) {
            ::fileio::console::to_stderr(erase);
        }
        *slot = None;
    }
}

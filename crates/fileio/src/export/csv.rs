//! `--csv=FILE`: one RFC 4180 row per run, appended to a file that holds one
//! header line and then rows.
//!
//! The column set is fixed (see [`columns`] and docs/exports.md), except that
//! the latency percentiles are the run's `--percentiles`: runs with other
//! percentiles make another header, and a file whose header differs from the
//! run's is refused before the run, so a file never mixes column sets. A file
//! that does not exist, or is empty, gets the header first.
//!
//! Text fields go through [`csv_text`] (quoted, never a spreadsheet formula),
//! the one CSV escaper of the workspace: the store's CSV export
//! (`report::table`) uses it too. Numbers tankbench computed are written bare.

use crate::result::{LatencyKey, RunResult};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Characters that make a spreadsheet read a cell as a formula when they start
/// it (OWASP, "CSV Injection": `=`, `+`, `-`, `@`, tab and carriage return).
fn starts_formula(s: &str) -> bool {
    // Leading spaces and line breaks are skipped by some importers before they
    // look for `=`, so look past them too.
    s.trim_start_matches([' ', '\n'])
        .starts_with(['=', '+', '-', '@', '\t', '\r'])
}

/// A text field of an RFC 4180 CSV file, following the OWASP guidance on CSV
/// injection: always in double quotes (so `,` or `;` inside cannot start a new
/// cell, whichever separator the spreadsheet assumes), inner quotes doubled,
/// and a single quote prepended when the text would otherwise start a formula.
/// Numbers tankbench computed are not text and are written as they are.
pub fn csv_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 3);
    out.push('"');
    if starts_formula(s) {
        out.push('\'');
    }
    for c in s.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// RFC 4180's record separator.
const CRLF: &str = "\r\n";

/// The column names, in order, for a run with these `--percentiles`.
pub fn columns(percentiles: &[f64]) -> Vec<String> {
    let fixed = [
        "tool",
        "tool_version",
        "started_at",
        "kind",
        "labels",
        "hostname",
        "fs_type",
        "directory",
        "mode",
        "io_mode",
        "engine",
        "threads",
        "file_num",
        "block_size_bytes",
        "total_size_bytes",
        "request_size_bytes",
        "rw_ratio",
        "fsync_freq",
        "rate_limit",
        "time_limit_s",
        "events_limit",
        "interrupted",
        "time_s",
        "events",
        "reads",
        "writes",
        "fsyncs",
        "events_per_s",
        "reads_per_s",
        "writes_per_s",
        "fsyncs_per_s",
        "read_mib_per_s",
        "written_mib_per_s",
        "warnings",
        "latency_min_ms",
        "latency_avg_ms",
        "latency_max_ms",
    ];
    let mut out: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
    out.extend(percentiles.iter().map(|p| format!("latency_p{p}_ms")));
    out
}

/// The header line (without its line break). The names are fixed words of
/// this module, none of which needs quotes.
pub fn header(percentiles: &[f64]) -> String {
    columns(percentiles).join(",")
}

/// The run's row (with its line break), for the header of `percentiles`: the
/// event latency at each of them, empty where the run has none.
pub fn row(r: &RunResult, percentiles: &[f64]) -> String {
    let text = |s: &str| csv_text(s);
    let num = |v: f64| super::finite_number(v).unwrap_or_default();
    let w = &r.workload;
    let labels = r
        .labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let warnings = r
        .warnings
        .iter()
        .map(|w| w.code.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let event = r.latency.get(&LatencyKey::Event);
    let latency = |f: fn(&crate::result::LatencySummary) -> f64| {
        event
            .filter(|l| l.count > 0)
            .map(|l| num(f(l)))
            .unwrap_or_default()
    };
    let mut fields = vec![
        text(&r.tool.name),
        text(&r.tool.version),
        text(&r.started_at),
        text(match r.kind {
            crate::result::ResultKind::Measured => "measured",
            crate::result::ResultKind::Predicted => "predicted",
        }),
        text(&labels),
        text(&r.environment.hostname),
        text(&r.environment.fs_type),
        text(&w.directory),
        text(w.mode.short_name()),
        text(w.io_mode.name()),
        text(&w.engine),
        w.threads.to_string(),
        w.file_num.to_string(),
        w.block_size.to_string(),
        w.total_size.to_string(),
        w.request_size.to_string(),
        num(w.rw_ratio),
        w.fsync_freq.to_string(),
        w.rate.to_string(),
        w.time_limit_s.to_string(),
        w.events_limit.to_string(),
        r.interrupted.to_string(),
        num(r.total_time_s),
        r.counts.events.to_string(),
        r.counts.reads.to_string(),
        r.counts.writes.to_string(),
        r.counts.fsyncs.to_string(),
        num(super::events_per_s(r)),
        num(r.rates.reads_per_s),
        num(r.rates.writes_per_s),
        num(r.rates.fsyncs_per_s),
        num(r.rates.read_mib_per_s),
        num(r.rates.written_mib_per_s),
        text(&warnings),
        latency(|l| l.min_ms),
        latency(|l| l.mean_ms),
        latency(|l| l.max_ms),
    ];
    for &p in percentiles {
        fields.push(
            event
                .filter(|l| l.count > 0)
                .and_then(|l| l.at(p))
                .map(num)
                .unwrap_or_default(),
        );
    }
    let mut line = fields.join(",");
    line.push_str(CRLF);
    line
}

/// What a `--csv` file holds before a run appends to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Nothing there yet: the file is created with the header.
    New,
    /// An empty regular file: the header goes first.
    Empty,
    /// A CSV file with this header, ending with a complete row.
    Same,
}

/// Whether rows for `header` may be appended to `path`, read without writing:
/// the one line that says why not (without the option's name). A file
/// tankbench did not make is never changed unless it is a CSV with the very
/// same header; anything else (another header, a last row cut off, a
/// directory, a device, a pipe) is refused.
pub fn check(path: &Path, header: &str) -> Result<Target, String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::New),
        Err(e) => return Err(e.to_string()),
    };
    if meta.file_type().is_symlink() {
        return Err(SYMLINK_REFUSED.into());
    }
    if !meta.is_file() {
        return Err("not a regular file; --csv appends rows to a CSV file".into());
    }
    let file = File::open(path).map_err(|e| e.to_string())?;
    inspect(&file, header)
}

/// [`check`] on an open file.
fn inspect(file: &File, header: &str) -> Result<Target, String> {
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    if len == 0 {
        return Ok(Target::Empty);
    }
    // The first line: at most the header's length and a line break.
    let mut first = Vec::with_capacity(header.len() + 2);
    file.take(header.len() as u64 + 2)
        .read_to_end(&mut first)
        .map_err(|e| e.to_string())?;
    // A first line longer than the header has no line break in `first`.
    let same = first
        .iter()
        .position(|&b| b == b'\n')
        .map(|end| first[..end].strip_suffix(b"\r").unwrap_or(&first[..end]))
        .is_some_and(|line| line == header.as_bytes());
    if !same {
        return Err(
            "its first line is not the header this run writes (other columns or percentiles, or \
             not a tankbench CSV); tankbench appends only to a CSV file with its own header: \
             choose another file"
                .into(),
        );
    }
    let mut last = [0u8];
    file.read_exact_at(&mut last, len - 1)
        .map_err(|e| e.to_string())?;
    if last[0] != b'\n' {
        return Err(
            "its last row has no line break (cut off?); appending would join two rows".into(),
        );
    }
    Ok(Target::Same)
}

/// Append `rows` (each with its line break, from [`row`]) to `path` under
/// `header`, creating the file with the header when it does not exist or is
/// empty. The file is locked (flock) while it is checked again and written,
/// so two runs appending to one file cannot interleave their rows or both
/// write the header; the rows go in one write and are flushed to the device.
pub fn append(path: &Path, header: &str, rows: &[String]) -> Result<(), String> {
    // O_NONBLOCK: a pipe named like the file must not hang the process before
    // it is found to be no regular file. O_NOFOLLOW: a symbolic link is
    // refused, as every other output refuses one (it would write elsewhere).
    let open = |create: bool| {
        std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(create)
            .mode(0o644)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(path)
    };
    let refused = |e: io::Error| match e.raw_os_error() {
        Some(libc::ELOOP) => SYMLINK_REFUSED.to_string(),
        _ => e.to_string(),
    };
    // Whether this call made the file: a failed write then removes it, so
    // that a full file system leaves no empty CSV behind.
    let (mut file, created) = match open(false) {
        Ok(f) => (f, false),
        Err(e) if e.kind() == io::ErrorKind::NotFound => (open(true).map_err(refused)?, true),
        Err(e) => return Err(refused(e)),
    };
    if !file.metadata().map_err(|e| e.to_string())?.is_file() {
        return Err("not a regular file; --csv appends rows to a CSV file".into());
    }
    lock(&file).map_err(|e| format!("cannot lock it: {e}"))?;
    let mut text = String::new();
    let inspected = inspect(&file, header).inspect_err(|_| {
        if created {
            let _ = std::fs::remove_file(path);
        }
    })?;
    match inspected {
        Target::New | Target::Empty => {
            text.push_str(header);
            text.push_str(CRLF);
        }
        Target::Same => {}
    }
    for r in rows {
        text.push_str(r);
    }
    let before = file.metadata().map_err(|e| e.to_string())?.len();
    if let Err(e) = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_data())
    {
        // Nothing half-written stays: a file made here is removed, a file
        // that was there gets its old length back (no cut-off row).
        if created {
            let _ = std::fs::remove_file(path);
        } else {
            let _ = file.set_len(before);
        }
        return Err(e.to_string());
    }
    Ok(())
    // Closing the file releases the lock.
}

/// Why `--csv` refuses a symbolic link.
const SYMLINK_REFUSED: &str = "a symbolic link; --csv writes only to a file it names directly \
     (name the file itself, or choose another name)";

fn lock(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: flock on a descriptor this function borrows for the call.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_text_is_quoted_and_never_a_formula() {
        assert_eq!(csv_text("plain"), "\"plain\"");
        assert_eq!(csv_text("a\"b,c"), "\"a\"\"b,c\"");
        for f in [
            "=1+1",
            "+1",
            "-1",
            "@SUM(A1)",
            "\t=1",
            "\r=1",
            "  =HYPERLINK(\"x\")",
        ] {
            let out = csv_text(f);
            assert!(out.starts_with("\"'"), "{f:?} -> {out}");
        }
        assert_eq!(csv_text("a=1"), "\"a=1\"");
    }

    #[test]
    fn the_header_names_the_percentiles() {
        let h = header(&[50.0, 99.9]);
        assert!(h.starts_with("tool,tool_version,started_at,"), "{h}");
        assert!(
            h.ends_with(",latency_max_ms,latency_p50_ms,latency_p99.9_ms"),
            "{h}"
        );
        assert_eq!(columns(&[]).len() + 2, columns(&[50.0, 99.9]).len());
        assert!(!h.contains('"') && !h.contains(' '));
    }

    /// The fields of one CSV record (RFC 4180 quoting), for the tests.
    fn fields(line: &str) -> Vec<String> {
        let mut out = vec![String::new()];
        let mut quoted = false;
        let mut chars = line.trim_end_matches("\r\n").chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' if quoted && chars.peek() == Some(&'"') => {
                    chars.next();
                    out.last_mut().unwrap().push('"');
                }
                '"' => quoted = !quoted,
                ',' if !quoted => out.push(String::new()),
                c => out.last_mut().unwrap().push(c),
            }
        }
        out
    }

    #[test]
    fn a_row_has_a_field_per_column_and_no_formula() {
        let mut r = crate::export::test_result()
            .with_label("note", "a \"quoted\", text")
            .with_label("layout", "mirror");
        r.workload.directory = "=HYPERLINK(\"http://x\")".into();
        r.environment.hostname = "-host".into();
        let ps = [50.0, 99.9];
        let row = row(&r, &ps);
        assert!(row.ends_with("\r\n") && !row[..row.len() - 2].contains('\n'));
        let f = fields(&row);
        let cols = columns(&ps);
        assert_eq!(f.len(), cols.len(), "{row}");
        let at = |name: &str| &f[cols.iter().position(|c| c == name).unwrap()];
        assert_eq!(at("labels"), "layout=mirror,note=a \"quoted\", text");
        assert_eq!(at("directory"), "'=HYPERLINK(\"http://x\")");
        assert_eq!(at("hostname"), "'-host");
        assert_eq!(at("mode"), "rndrw");
        // No events: no latency figures rather than zeros.
        assert_eq!(at("latency_avg_ms"), "");
        assert_eq!(at("latency_p99.9_ms"), "");
        assert_eq!(at("interrupted"), "false");
    }

    #[test]
    fn rows_are_appended_under_one_header_and_other_files_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("runs.csv");
        let h = header(&[95.0]);
        assert_eq!(check(&p, &h), Ok(Target::New));
        append(&p, &h, &["1\r\n".into()]).unwrap();
        assert_eq!(check(&p, &h), Ok(Target::Same));
        append(&p, &h, &["2\r\n".into(), "3\r\n".into()]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            format!("{h}\r\n1\r\n2\r\n3\r\n")
        );
        // Another header (other percentiles) is refused, and nothing written.
        let other = header(&[99.0]);
        assert!(check(&p, &other).is_err());
        let before = std::fs::read(&p).unwrap();
        assert!(append(&p, &other, &["4\r\n".into()]).is_err());
        assert_eq!(std::fs::read(&p).unwrap(), before);
        // An empty file gets the header; a file with a cut-off row does not
        // get more rows.
        let empty = d.path().join("empty.csv");
        std::fs::write(&empty, "").unwrap();
        assert_eq!(check(&empty, &h), Ok(Target::Empty));
        append(&empty, &h, &["1\r\n".into()]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&empty).unwrap(),
            format!("{h}\r\n1\r\n")
        );
        let cut = d.path().join("cut.csv");
        std::fs::write(&cut, format!("{h}\r\n1,2")).unwrap();
        assert!(check(&cut, &h).unwrap_err().contains("line break"));
        assert!(append(&cut, &h, &["3\r\n".into()]).is_err());
        // A header alone, without its line break, is not yet a header.
        let bare = d.path().join("bare.csv");
        std::fs::write(&bare, &h).unwrap();
        assert!(check(&bare, &h).is_err());
        // Not files.
        assert!(check(d.path(), &h).unwrap_err().contains("regular file"));
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(check(&fifo, &h).is_err());
        assert!(append(&fifo, &h, &["1\r\n".into()]).is_err());
        assert_eq!(
            testkit::dir_names(d.path()),
            ["bare.csv", "cut.csv", "empty.csv", "fifo", "runs.csv"]
        );
    }
}

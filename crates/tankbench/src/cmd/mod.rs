//! Subcommand dispatch: the sysbench-compatible front end by its own rules,
//! every other command through the clap definition of [`cli`]. Each command
//! lives in its own module and returns the process exit code.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

use ::fileio::terminal::Screen;

pub mod calibrate;
mod choices;
mod cli;
mod completions;
pub mod durability;
mod examples;
pub mod fileio;
pub mod fio;
pub mod lab;
mod man;
mod options;
mod overrides;
pub mod plan;
pub mod probe;
mod progress;
pub mod report;
pub mod simulate;
pub mod simulate_matrix;
pub mod slog;
mod what_if;

/// Route the command line to a subcommand.
///
/// A binary invoked as `sysbench` (copy or symlink) behaves as `sysbench`, and any
/// command line that selects the fileio test the sysbench way (`fileio` as the
/// first positional, or the legacy `--test=fileio`) goes to the sysbench-compatible
/// front end.
///
/// Arguments arrive as the operating system gave them: file names are bytes and
/// need not be UTF-8, so each subcommand decides which words must be text.
pub fn dispatch(args: Vec<OsString>) -> anyhow::Result<i32> {
    let argv0 = args.first().cloned().unwrap_or_default();
    let rest: Vec<OsString> = args.into_iter().skip(1).collect();
    let invoked_as = std::path::Path::new(&argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if invoked_as == "sysbench" {
        return fileio::sysbench_main(rest);
    }
    let starts_with = |a: &OsString, prefix: &str| a.as_bytes().starts_with(prefix.as_bytes());
    // A word that is not UTF-8 is never a subcommand name; it can still be a
    // file name further on.
    let first_positional = rest
        .iter()
        .find(|a| !starts_with(a, "--"))
        .map(|a| a.to_string_lossy().into_owned());
    // The legacy `--test=fileio` selects the test wherever it stands, unless
    // the first positional names one of tankbench's own commands.
    let names_own_command = first_positional
        .as_deref()
        .is_some_and(|w| cli::command().find_subcommand(w).is_some());
    let legacy_test_option = rest
        .iter()
        .any(|a| starts_with(a, "--test=") || starts_with(a, "--test_"));
    // fio's job options are fio's words, read by the job-language parser.
    if first_positional.as_deref() == Some("fio") {
        let position = rest
            .iter()
            .position(|a| a.as_bytes() == b"fio")
            .unwrap_or(0);
        return fio::run(&rest[position + 1..]);
    }
    if first_positional.as_deref() == Some("fileio") || (legacy_test_option && !names_own_command) {
        return fileio::sysbench_main(rest);
    }
    cli::run(rest)
}

/// Write the report to stdout, treating a closed pipe (`| head`) as success
/// and any other failure (a full disk, `> /dev/full`) as the command's
/// failure: a report that did not arrive must not exit 0. The one way every
/// command writes stdout (`println!` would panic instead).
pub(crate) fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("writing to stdout"))
        }
        _ => Ok(()),
    }
}

/// Where stdout goes: a terminal's width and colour, or a pipe's none.
/// Every command that lays out text for a person asks here, once.
pub(crate) fn stdout_screen() -> Screen {
    Screen::stdout()
}

/// Write one line of progress or a warning to stderr. A failed write (the
/// pipe closed by `|& head`, a terminal gone after SIGHUP) is ignored: the
/// run goes on and still removes what it made (`eprintln!` would panic).
/// Messages quote names read from files (a result's host name, a system's
/// device): control characters are replaced and the length bounded
/// (`report::escape::terminal`). On a terminal the line wraps to its width
/// and a leading `warning`/`WARNING` is coloured; in a pipe it stays one
/// line, uncoloured.
pub(crate) fn write_stderr_line(line: &str) {
    use std::io::Write as _;
    let screen = Screen::stderr();
    let line = screen.paint_label(&screen.wrap(&::report::escape::terminal(line)));
    progress::clear();
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(line.as_bytes())
        .and_then(|()| err.write_all(b"\n"));
}

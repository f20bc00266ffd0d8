//! tankbench: the binary. It only parses arguments, dispatches to the library
//! crates and prints; every benchmark, model, lab and report lives in a crate.

mod cmd;

use std::process::ExitCode;

fn main() -> ExitCode {
    // A closed pipe must not end a run before it removes what it made
    // (`tankbench quick |& head`): SIGPIPE is ignored, so a write to a closed
    // pipe fails with EPIPE instead, which `cmd::write_stdout` takes as the
    // reader having seen enough and `cmd::write_stderr_line` ignores.
    // SAFETY: setting a signal disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    // `args_os`, not `args`: a file name that is not UTF-8 is a valid argument,
    // and `args` would panic on it.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `--forced-shutdown` must end a run whose requests hang; only the
    // program that owns the process may end it.
    fileio::sysbench::cli::exit_process_on_forced_shutdown(std::process::exit);
    let code = match cmd::dispatch(args) {
        Ok(code) => code,
        Err(err) => {
            cmd::write_stderr_line(&format!("tankbench: {}", one_line(&err)));
            1
        }
    };
    ExitCode::from(u8::try_from(code.clamp(0, 255)).expect("clamped to 0..=255"))
}

/// The error and its chain of causes on one line, each cause once.
///
/// Library errors often quote their source in their own message
/// (`"{path}: {source}"`) and also return it as `source()`, so anyhow's `{:#}`
/// would print "x: No such file or directory (os error 2): No such file or
/// directory (os error 2)". A cause already contained in the text so far adds
/// nothing and is left out.
fn one_line(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        let part = part.trim();
        if part.is_empty() || text.contains(part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(part);
    }
    // A multi-line message (a wrapped clap or library error) still ends up on one line.
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[derive(Debug)]
    struct Quoting(std::io::Error);
    impl std::fmt::Display for Quoting {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "open /x/y.json: {}", self.0)
        }
    }
    impl std::error::Error for Quoting {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_quoted_by_its_parent_is_printed_once() {
        let io = std::io::Error::from_raw_os_error(libc::ENOENT);
        let err = anyhow::Error::new(Quoting(io)).context("--save");
        let line = one_line(&err);
        assert_eq!(line.matches("os error 2").count(), 1, "{line}");
        assert!(line.starts_with("--save: open /x/y.json: "), "{line}");
    }

    #[test]
    fn distinct_causes_are_all_kept() {
        let err = anyhow::anyhow!("inner cause").context("outer");
        assert_eq!(one_line(&err), "outer: inner cause");
    }
}

//! Shared helpers of the integration tests: run tankbench and the real sysbench
//! side by side in scratch directories and compare what they print and leave.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test. Every test that starts it comes here first, so
/// this is where the stop signals get their default action (see
/// `testkit::default_stop_signals`).
pub fn tankbench_bin() -> PathBuf {
    testkit::default_stop_signals();
    PathBuf::from(env!("CARGO_BIN_EXE_tankbench"))
}

/// The real sysbench 1.0.20, or None under the one rule for peers
/// (`testkit::require`: a printed skip, or a failure with
/// TANKBENCH_REQUIRE_PEERS=1, which scripts/test sets in CI).
pub fn sysbench_bin() -> Option<PathBuf> {
    testkit::require(["sysbench"]).map(|[path]| path)
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

pub fn run_in(bin: &Path, dir: &Path, args: &[&str]) -> Run {
    // With a deadline: a hung run fails its test, saying where it hangs.
    testkit::output(Command::new(bin).args(args).current_dir(dir))
        .expect("start the program")
        .into()
}

/// `tankbench <args>` in `dir`.
pub fn tb(dir: &Path, args: &[&str]) -> Run {
    run_in(&tankbench_bin(), dir, args)
}

/// The path of the repository's example system file `name`
/// (examples/systems).
pub fn example_system(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/systems")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("tb-test-")
        .tempdir()
        .expect("temp dir")
}

/// Refused: exit 1, one line on stderr naming every word of `what`.
#[track_caller]
pub fn refused_naming(r: &Run, what: &[&str]) {
    assert_eq!(r.code, 1, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    for w in what {
        assert!(r.stderr.contains(w), "'{w}' not named: {}", r.stderr);
    }
}

/// A FIFO at `path` (mode 0600): a file that would block whoever reads it.
pub fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt as _;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path and a mode; mkfifo touches nothing else.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Names and sizes of the regular files in `dir`, sorted.
pub fn listing(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .expect("read dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().map(|m| m.len()).unwrap_or(0),
            )
        })
        .collect();
    v.sort();
    v
}

/// Replace every number by `N` so layouts compare without timings; the banner's
/// program name after `(using` is masked too.
pub fn mask(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_number = false;
    for ch in text.chars() {
        if ch.is_ascii_digit() || (in_number && ch == '.') {
            if !in_number {
                out.push('N');
                in_number = true;
            }
        } else {
            in_number = false;
            out.push(ch);
        }
    }
    out.lines()
        .map(|l| {
            if l.starts_with("sysbench N (") {
                "sysbench N (...)".to_string()
            } else {
                l.to_string()
            }
        })
        .map(|l| {
            // Right-aligned numbers pad to their own width: compare labels and
            // order, not widths (unit tests check the columns).
            let mut collapsed = String::with_capacity(l.len());
            let mut prev_space = false;
            for ch in l.chars() {
                if ch == ' ' && prev_space && !collapsed.trim().is_empty() {
                    continue;
                }
                prev_space = ch == ' ';
                collapsed.push(ch);
            }
            collapsed
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The sysbench part of a tankbench run report: everything before tankbench's
/// own sections, which begin after the `Threads fairness` block.
pub fn sysbench_part(stdout: &str) -> String {
    let mut out = Vec::new();
    let mut in_fairness = false;
    for line in stdout.lines() {
        out.push(line);
        if line == "Threads fairness:" {
            in_fairness = true;
        }
        if in_fairness && line.is_empty() {
            break;
        }
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

/// A value from a report line such as `    writes/s:   123.45`.
pub fn report_value(stdout: &str, label: &str) -> f64 {
    stdout
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .and_then(|l| l.split(':').nth(1))
        .map(|v| {
            v.trim()
                .trim_end_matches('s')
                .split('/')
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no '{label}' in:\n{stdout}"))
}

/// (reads, writes, fsync requests) from `--debug` request lines.
pub fn debug_ops(stdout: &str) -> (u64, u64, u64, Vec<String>) {
    let mut counts = (0, 0, 0);
    let mut lines = Vec::new();
    for l in stdout
        .lines()
        .filter(|l| l.starts_with("DEBUG: Executing request"))
    {
        lines.push(l.to_string());
        if l.contains("operation: 1,") {
            counts.0 += 1;
        } else if l.contains("operation: 2,") {
            counts.1 += 1;
        } else if l.contains("operation: 3,") {
            counts.2 += 1;
        }
    }
    (counts.0, counts.1, counts.2, lines)
}

/// Both programs in two fresh directories after the same setup commands
/// (each must succeed): the real sysbench, then tankbench.
pub fn side_by_side(
    setup: &[&[&str]],
    args: &[&str],
) -> (Run, Run, tempfile::TempDir, tempfile::TempDir) {
    let sb = sysbench_bin().expect("the caller checked that sysbench is there");
    let d_sb = scratch();
    let d_tb = scratch();
    for s in setup {
        let a = run_in(&sb, d_sb.path(), s);
        assert_eq!(a.code, 0, "sysbench setup {s:?}: {}", a.stdout);
        let b = tb(d_tb.path(), s);
        assert_eq!(b.code, 0, "tankbench setup {s:?}: {}{}", b.stdout, b.stderr);
    }
    let a = run_in(&sb, d_sb.path(), args);
    let b = tb(d_tb.path(), args);
    (a, b, d_sb, d_tb)
}

//! tankbench against recorded outputs of the real sysbench 1.0.20 (golden
//! files in tests/golden/, made by scripts/record-golden; tests/golden/cases
//! lists the cases and explains the format). The comparison with tankbench
//! needs no sysbench, so the text and error-message parity is checked on every
//! machine; where sysbench is installed, the recordings are checked against it.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// How tankbench's output must match the recording (see tests/golden/cases).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Compare {
    Same,
    Prefix,
    Requests,
}

#[derive(Debug)]
struct Case {
    name: String,
    compare: Compare,
    /// Compare only the binary run under the name `sysbench`.
    as_sysbench_only: bool,
    setup: Vec<String>,
    args: Vec<String>,
}

/// The cases file, parsed; a malformed line is a test failure naming it.
fn cases() -> Vec<Case> {
    let path = golden_dir().join("cases");
    let text = std::fs::read_to_string(&path).expect("tests/golden/cases");
    let mut out: Vec<Case> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('|').map(str::trim).collect();
        let [name, compare, setup, args] = fields[..] else {
            panic!("cases line {line_no}: expected 'name | compare | setup | arguments': {line}");
        };
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "cases line {line_no}: name '{name}' (accepted: a-z, 0-9 and _)"
        );
        assert!(
            out.iter().all(|c| c.name != name),
            "cases line {line_no}: '{name}' is listed twice"
        );
        let mut words = compare.split_whitespace();
        let compare = match words.next() {
            Some("same") => Compare::Same,
            Some("prefix") => Compare::Prefix,
            Some("requests") => Compare::Requests,
            other => {
                panic!("cases line {line_no}: compare {other:?} (accepted: same, prefix, requests)")
            }
        };
        let as_sysbench_only = match words.next() {
            None => false,
            Some("as-sysbench") => true,
            Some(other) => {
                panic!("cases line {line_no}: '{other}' after the compare mode (accepted: as-sysbench)")
            }
        };
        assert!(!args.is_empty(), "cases line {line_no}: no arguments");
        let split = |s: &str| s.split_whitespace().map(str::to_string).collect();
        out.push(Case {
            name: name.to_string(),
            compare,
            as_sysbench_only,
            setup: split(setup),
            args: split(args),
        });
    }
    out
}

/// What sysbench printed for a case when it was recorded.
fn recorded(case: &Case) -> Run {
    let read = |ext: &str| {
        let p = golden_dir().join(format!("{}.{ext}", case.name));
        std::fs::read(&p).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (run scripts/record-golden after adding a case)",
                p.display()
            )
        })
    };
    let status = String::from_utf8(read("status")).expect("a status file is text");
    Run {
        code: status
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{}.status: '{status}' is not an exit code", case.name)),
        stdout: String::from_utf8_lossy(&read("stdout")).into_owned(),
        stderr: String::from_utf8_lossy(&read("stderr")).into_owned(),
    }
}

/// Run `program` on a case the way scripts/record-golden runs sysbench: a
/// fresh empty directory, the setup command first (it must succeed), C
/// locale, stdin from /dev/null.
fn play(program: &Path, case: &Case) -> Run {
    let dir = scratch();
    let run = |args: &[String]| -> Run {
        Command::new(program)
            .args(args)
            .current_dir(dir.path())
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("start {}: {e}", program.display()))
            .into()
    };
    if !case.setup.is_empty() {
        let r = run(&case.setup);
        assert_eq!(
            r.code,
            0,
            "{}: setup {:?} with {}:\n{}{}",
            case.name,
            case.setup,
            program.display(),
            r.stdout,
            r.stderr
        );
    }
    run(&case.args)
}

/// The parts of an output that are the same on every run: the banner's
/// `(using …)` names the implementation, and the figures of the report (every
/// line after `Threads started!` except the `--debug` request lines) and of
/// prepare's `bytes written` line are timings. `mask` replaces their numbers
/// and evens out the padding that depends on the numbers' widths.
fn steady(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_report = false;
    for line in text.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        let timed = (in_report && !body.starts_with("DEBUG: Executing request"))
            || body.contains(" bytes written in ");
        let steady_line = if body.starts_with("sysbench 1.0.20 (using ") {
            "sysbench 1.0.20 (using …)".to_string()
        } else if timed {
            mask(body)
        } else {
            body.to_string()
        };
        if body == "Threads started!" {
            in_report = true;
        }
        out.push_str(&steady_line);
        if line.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// Up to and including the last `--debug` request line.
fn through_requests(text: &str) -> String {
    let end = text
        .match_indices("DEBUG: Executing request")
        .last()
        .map(|(i, _)| i + text[i..].find('\n').map_or(text.len() - i, |n| n + 1))
        .unwrap_or(0);
    text[..end].to_string()
}

/// The `requests` view of an output: up to the last request line, the other
/// lines (masked like every output) and then the request lines in order. The
/// two are compared apart because, today, a request line can come before
/// `Threads started!` in tankbench's output (fixed separately).
fn requests_view(text: &str) -> String {
    let upto = through_requests(text);
    let (requests, others): (Vec<&str>, Vec<&str>) = upto
        .lines()
        .partition(|l| l.starts_with("DEBUG: Executing request"));
    format!("{}\n{}\n", steady(&others.join("\n")), requests.join("\n"))
}

/// Where two texts part, for a readable failure.
fn first_difference(labels: (&str, &str), want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let i = w
        .iter()
        .zip(&g)
        .position(|(a, b)| a != b)
        .unwrap_or(w.len().min(g.len()));
    format!(
        "line {}: {} {:?}, {} {:?}",
        i + 1,
        labels.0,
        w.get(i).copied().unwrap_or("<end>"),
        labels.1,
        g.get(i).copied().unwrap_or("<end>")
    )
}

/// Everything in which `got` differs from the recording `want` under the
/// case's rule, with `labels` naming the two; empty when they agree.
fn differences(case: &Case, labels: (&str, &str), want: &Run, got: &Run) -> Vec<String> {
    let mut out = Vec::new();
    if want.code != got.code {
        out.push(format!(
            "exit code: {} {}, {} {}",
            labels.0, want.code, labels.1, got.code
        ));
    }
    let (w, g) = match case.compare {
        Compare::Same => (
            steady(&sysbench_part(&want.stdout)),
            steady(&sysbench_part(&got.stdout)),
        ),
        Compare::Prefix => {
            let w = steady(&want.stdout);
            let g = steady(&got.stdout);
            let g = if g.starts_with(&w) { w.clone() } else { g };
            (w, g)
        }
        Compare::Requests => (requests_view(&want.stdout), requests_view(&got.stdout)),
    };
    if case.compare == Compare::Requests && !w.contains("DEBUG: Executing request") {
        out.push("the recording has no request lines to compare".into());
    }
    if w != g {
        out.push(format!("stdout: {}", first_difference(labels, &w, &g)));
    }
    if case.compare != Compare::Requests && want.stderr != got.stderr {
        out.push(format!(
            "stderr: {}",
            first_difference(labels, &want.stderr, &got.stderr)
        ));
    }
    out
}

#[test]
fn every_case_has_its_recording_and_every_recording_a_case() {
    let cases = cases();
    assert!(
        (20..=40).contains(&cases.len()),
        "{} cases: keep the golden set small and meaningful (20 to 40)",
        cases.len()
    );
    for case in &cases {
        recorded(case);
    }
    for entry in std::fs::read_dir(golden_dir()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name == "cases" {
            continue;
        }
        let (base, ext) = name
            .rsplit_once('.')
            .unwrap_or_else(|| panic!("tests/golden/{name}: not a golden file"));
        assert!(
            ["stdout", "stderr", "status"].contains(&ext) && cases.iter().any(|c| c.name == base),
            "tests/golden/{name}: no such case in tests/golden/cases (scripts/record-golden removes it)"
        );
    }
}

/// The parity of text and messages, checked without sysbench: every case, as
/// `tankbench` and through a symlink named `sysbench`.
#[test]
fn tankbench_prints_what_sysbench_printed() {
    let links = scratch();
    let as_sysbench = links.path().join("sysbench");
    std::os::unix::fs::symlink(tankbench_bin(), &as_sysbench).unwrap();
    let mut failures = Vec::new();
    for case in cases() {
        let want = recorded(&case);
        let mut programs = vec![("sysbench", as_sysbench.clone())];
        if !case.as_sysbench_only {
            programs.push(("tankbench", tankbench_bin()));
        }
        for (called, program) in programs {
            let got = play(&program, &case);
            for d in differences(&case, ("recorded", called), &want, &got) {
                failures.push(format!("{} (as {called}): {d}", case.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "tankbench differs from the recorded sysbench 1.0.20 output:\n{}",
        failures.join("\n")
    );
}

/// The recordings are what the installed sysbench prints (so they were not
/// edited by hand, and a re-recording would change nothing but timings).
#[test]
fn the_recordings_are_what_sysbench_prints() {
    let sysbench = testkit::require!("sysbench");
    let mut failures = Vec::new();
    for case in cases() {
        let want = recorded(&case);
        let got = play(&sysbench, &case);
        let same = Case {
            compare: Compare::Same,
            ..case
        };
        for d in differences(&same, ("recorded", "sysbench now"), &want, &got) {
            failures.push(format!("{}: {d}", same.name));
        }
    }
    assert!(
        failures.is_empty(),
        "the real sysbench no longer prints what tests/golden holds (run scripts/record-golden \
         and review the diff):\n{}",
        failures.join("\n")
    );
}

/// The masking hides what varies and nothing else: a changed word or error
/// number still shows, so the comparison can fail.
#[test]
fn the_masking_keeps_everything_that_does_not_vary() {
    let a = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\n\
             FATAL: Size of file 'test_file.0' is 2MiB, but at least 4MiB is expected.\n\
             8388608 bytes written in 0.02 seconds (515.88 MiB/sec).\n\
             Threads started!\n\
             DEBUG: Executing request, operation: 1, file_id: 1, pos: 933888, size: 16384\n\
             \x20   reads/s:                      758.90\n";
    let b = "sysbench 1.0.20 (using tankbench 0.1.0)\n\n\
             FATAL: Size of file 'test_file.0' is 2MiB, but at least 4MiB is expected.\n\
             8388608 bytes written in 0.01 seconds (1515.88 MiB/sec).\n\
             Threads started!\n\
             DEBUG: Executing request, operation: 1, file_id: 1, pos: 933888, size: 16384\n\
             \x20   reads/s:                      12758.90\n";
    assert_eq!(steady(a), steady(b));
    for (from, to) in [
        ("is 2MiB", "is 3MiB"),
        ("pos: 933888", "pos: 933889"),
        ("reads/s", "writes/s"),
        ("sysbench 1.0.20", "sysbench 1.0.19"),
    ] {
        assert_ne!(steady(a), steady(&b.replace(from, to)), "{from} -> {to}");
    }
    assert_eq!(
        through_requests("a\nDEBUG: Executing request, x\nDEBUG: Executing request, y\nDone.\n"),
        "a\nDEBUG: Executing request, x\nDEBUG: Executing request, y\n"
    );
}

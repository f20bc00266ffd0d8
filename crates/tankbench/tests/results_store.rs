//! Where results go and where they are read from, through the binary (issue
//! 11): destinations are checked before a run starts, `--json` never replaces a
//! file, a full file system leaves no partial record or report, and bad entries
//! in a store are skipped with one line each instead of failing or hanging.

mod common;

use common::{scratch, tankbench_bin, tb, Run};
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
// A 64 KiB tmpfs filled to the last block (needs root; skipped or failed by
// the one rule for peers of testkit).
use testkit::FullFs;

const SIZE: [&str; 2] = ["--file-total-size=8M", "--file-num=2"];

/// A scratch directory with a prepared file set.
fn prepared() -> tempfile::TempDir {
    let d = scratch();
    let r = tb(d.path(), &[SIZE[0], SIZE[1], "fileio", "prepare"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    d
}

/// `tankbench fileio <extra> run`: a short random-read run.
fn run_with(dir: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "fileio",
        SIZE[0],
        SIZE[1],
        "--file-test-mode=rndrd",
        "--events=200",
    ];
    args.extend_from_slice(extra);
    args.push("run");
    tb(dir, &args)
}

/// The run never started: no workload header on stdout, exit code 1, and one
/// line on stderr that names the option.
fn refused_before_the_run(r: &Run, option: &str) {
    assert_eq!(r.code, 1, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert!(
        !r.stdout.contains("Running the test"),
        "the run started before {option} was checked:\n{}",
        r.stdout
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains(option), "{}", r.stderr);
}

#[test]
fn destinations_are_checked_before_the_run_starts() {
    let d = prepared();
    let w = d.path();
    fs::write(w.join("notes.txt"), "precious").unwrap();

    let r = run_with(w, &["--save=notes.txt"]);
    refused_before_the_run(&r, "--save=notes.txt");
    assert!(r.stderr.contains("not a directory"), "{}", r.stderr);
    refused_before_the_run(&run_with(w, &["--save=notes.txt/results"]), "--save");
    let r = run_with(w, &["--json=missing/r.json"]);
    refused_before_the_run(&r, "--json=missing/r.json");
    let r = run_with(w, &["--json=notes.txt"]);
    refused_before_the_run(&r, "--json=notes.txt");
    assert!(r.stderr.contains("refusing to overwrite"), "{}", r.stderr);
    let r = run_with(w, &["--label=layout=2xraidz2"]);
    refused_before_the_run(&r, "--label needs --save");
    let r = run_with(w, &["--save", "--label=layout"]);
    refused_before_the_run(&r, "--label");

    // `quick --save` too: refused before the file set is even created.
    let r = tb(
        w,
        &["quick", ".", "--size=16M", "--time=1", "--save=notes.txt"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.is_empty(), "quick started: {}", r.stdout);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("--save=notes.txt"), "{}", r.stderr);

    assert_eq!(fs::read_to_string(w.join("notes.txt")).unwrap(), "precious");
    assert!(!w.join("tankbench-results").exists());
    assert!(!w.join("missing").exists());
}

/// `--json` into the store used to replace a stored record silently; now no
/// existing file is replaced, and the record stays as it was.
#[test]
fn json_never_replaces_a_stored_record_or_an_earlier_file() {
    let d = prepared();
    let w = d.path();
    let r = run_with(w, &["--save=store", "--label=run=first"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let record = testkit::dir_names(&w.join("store"))
        .pop()
        .expect("a stored record");
    let before = fs::read(w.join("store").join(&record)).unwrap();

    let target = format!("--json=store/{record}");
    let r = run_with(w, &[&target]);
    refused_before_the_run(&r, &target);
    assert!(r.stderr.contains("refusing to overwrite"), "{}", r.stderr);
    assert_eq!(fs::read(w.join("store").join(&record)).unwrap(), before);

    // A file of an earlier --json is not replaced either: a run writes only
    // files it creates.
    let r = run_with(w, &["--json=r.json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let first = fs::read(w.join("r.json")).unwrap();
    refused_before_the_run(&run_with(w, &["--json=r.json"]), "--json=r.json");
    assert_eq!(fs::read(w.join("r.json")).unwrap(), first);
    let doc: fileio::result::RunResult = serde_json::from_slice(&first).unwrap();
    assert_eq!(doc.counts.events, 200);
}

/// `--save`, `--json` and `report -o` on a full file system: one line naming
/// the option and the cause, exit 1, and not a byte left behind.
#[test]
fn a_full_file_system_leaves_no_partial_result_or_report() {
    let Some(full) = FullFs::mount(|p| fs::create_dir(p.join("results")).unwrap()) else {
        return;
    };
    let d = prepared();
    let w = d.path();
    let store = full.path().join("results");
    let json = full.path().join("r.json");

    let r = run_with(w, &[&format!("--save={}", store.display())]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains("Running the test"), "the run itself ran");
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("--save") && r.stderr.contains("No space left on device"),
        "{}",
        r.stderr
    );

    let r = run_with(w, &[&format!("--json={}", json.display())]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("--json") && r.stderr.contains("No space left on device"),
        "{}",
        r.stderr
    );

    // A report of a store elsewhere, written to the full file system.
    assert_eq!(run_with(w, &["--save=elsewhere"]).code, 0);
    let page = full.path().join("report.html");
    let r = tb(w, &["report", "elsewhere", "-o", page.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("No space left on device"), "{}", r.stderr);

    assert_eq!(testkit::dir_names(full.path()), ["filler", "results"]);
    assert!(
        testkit::dir_names(&store).is_empty(),
        "{:?}",
        testkit::dir_names(&store)
    );
}

/// `tankbench <args>` in `dir`, killed (by its own handle) if it has not ended
/// within a minute. Not a speed check: the old code blocked forever on a FIFO in
/// the store, and a test must fail instead of hanging.
fn tb_without_hanging(dir: &Path, args: &[&str]) -> Run {
    let mut child = Command::new(tankbench_bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tankbench");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tankbench {args:?} still running after a minute: it blocked");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap().into()
}

/// A dangling link named `*.json` made every store command fail, and a FIFO
/// made them hang. Now each command works with the good runs and prints one
/// line per bad entry, naming it and why.
#[test]
fn store_commands_skip_bad_entries_with_one_line_each() {
    let d = prepared();
    let w = d.path();
    let r = run_with(w, &["--save"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let store = w.join("tankbench-results");
    let id = testkit::dir_names(&store)[0]
        .trim_end_matches(".json")
        .to_string();
    std::os::unix::fs::symlink(store.join("gone.json"), store.join("dangling.json")).unwrap();
    let fifo = std::ffi::CString::new(
        store
            .join("pipe.json")
            .into_os_string()
            .into_encoded_bytes(),
    )
    .unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);

    for args in [
        vec!["results"],
        vec!["report", "-o", "report.html"],
        vec!["report", "--format=csv"],
        vec!["compare", &id, &id],
        vec!["chart", "throughput", "-o", "chart.svg"],
    ] {
        let r = tb_without_hanging(w, &args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        let skipped: Vec<&str> = r.stderr.lines().filter(|l| l.contains("skipped")).collect();
        assert_eq!(skipped.len(), 2, "{args:?}: {}", r.stderr);
        assert!(
            skipped
                .iter()
                .any(|l| l.contains("dangling.json") && l.contains("dangling link")),
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            skipped
                .iter()
                .any(|l| l.contains("pipe.json") && l.contains("FIFO")),
            "{args:?}: {}",
            r.stderr
        );
    }
    assert!(tb(w, &["results"]).stdout.contains(&id));
}

#[test]
fn report_with_no_arguments_writes_report_html_and_never_a_foreign_one() {
    let d = prepared();
    let w = d.path();
    let r = run_with(w, &["--save"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // No arguments: the page goes to ./report.html and stderr says where.
    let r = tb(w, &["report"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("wrote report.html"), "{}", r.stderr);
    let page = fs::read_to_string(w.join("report.html")).unwrap();
    assert!(page.contains("<html"), "{page}");
    // Again: a report.html tankbench wrote is replaced.
    let r = tb(w, &["report"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A report.html of someone else's is refused with the reason, untouched.
    fs::write(w.join("report.html"), "my own notes\n").unwrap();
    let r = tb(w, &["report"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("report.html"), "{}", r.stderr);
    assert_eq!(
        fs::read_to_string(w.join("report.html")).unwrap(),
        "my own notes\n"
    );
}

#[test]
fn repeat_closes_with_a_summary_over_the_runs() {
    let d = prepared();
    let w = d.path();
    let r = run_with(w, &["--repeat=3"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let summary = &r.stdout[r
        .stdout
        .find("Summary of 3 runs:")
        .unwrap_or_else(|| panic!("no summary:\n{}", r.stdout))..];
    let reads = summary
        .lines()
        .find(|l| l.starts_with("reads/s"))
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(reads.contains('±'), "{reads}");
    assert!(
        summary.contains("mean ± sd") && summary.contains("min"),
        "{summary}"
    );
    // Cached 4 KiB reads take microseconds: their latency rows are in µs.
    assert!(
        summary.contains("read latency mean µs")
            && !summary.split_whitespace().any(|w| w.starts_with("0.00")),
        "{summary}"
    );
    // A read test writes nothing: no all-zero rows.
    assert!(!summary.contains("write MiB/s"), "{summary}");
    // One run has nothing to summarise; JSON stays JSON alone.
    assert!(!run_with(w, &[]).stdout.contains("Summary of"));
    let json = run_with(w, &["--repeat=2", "--format=json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    assert!(!json.stdout.contains("Summary of"), "{}", json.stdout);
}

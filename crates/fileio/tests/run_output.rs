//! What the runner tells its observer, and in which order: the start line
//! before any request, sysbench's INFO lines when a limit ends the run, the
//! per-thread figures of `--debug`. Real files, real worker threads.

use fileio::options::GeneralOptions;
use fileio::run::runner::{self, RunObserver, RunOutcome, RunSettings};
use fileio::spec::RunSpec;
use fileio::sysbench::args::ParsedArgs;
use std::sync::Mutex;
use std::time::Duration;

/// Records every call in order.
#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<String>>,
    /// How long `started` takes (a slow terminal, a loaded machine).
    started_delay: Duration,
}

impl Recorder {
    fn push(&self, s: String) {
        self.events.lock().unwrap().push(s);
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.events.lock().unwrap())
    }
}

impl RunObserver for Recorder {
    fn debug(&self, line: &str) {
        self.push(line.to_string());
    }
    fn info(&self, line: &str) {
        self.push(format!("INFO: {line}"));
    }
    fn started(&self) {
        std::thread::sleep(self.started_delay);
        self.push("Threads started!".to_string());
    }
    fn forced_shutdown(&self, _period: &runner::PeriodStats) {
        self.push("forced shutdown".to_string());
    }
}

fn workload(dir: &std::path::Path, extra: &[&str]) -> RunSpec {
    let mut words: Vec<String> = vec![
        "fileio".into(),
        format!("--file-dir={}", dir.display()),
        "--file-total-size=1M".into(),
        "--file-num=2".into(),
        "--file-fsync-freq=0".into(),
    ];
    words.extend(extra.iter().map(|s| s.to_string()));
    let mut a = ParsedArgs::parse(&words);
    let g = GeneralOptions::from_args(&mut a).unwrap();
    let w = RunSpec::from_args(&a, &g).unwrap();
    fileio::run::fileset::prepare(&w.files, &mut |_| {}, &mut ()).unwrap();
    w
}

fn run(w: &RunSpec, debug: bool, observer: &Recorder) -> RunOutcome {
    let files = fileio::run::fileset::open_for_run(w, &mut |_| {}).unwrap();
    let settings = RunSettings {
        debug,
        ..RunSettings::default()
    };
    runner::run(w, files, &settings, observer).unwrap()
}

#[test]
fn threads_started_comes_before_the_first_request() {
    let d = tempfile::tempdir().unwrap();
    let w = workload(
        d.path(),
        &["--file-test-mode=rndrd", "--threads=4", "--events=200"],
    );
    // While "Threads started!" is being printed no worker may run: a slow
    // print used to let request lines come first.
    let rec = Recorder {
        started_delay: Duration::from_millis(100),
        ..Recorder::default()
    };
    run(&w, true, &rec);
    let events = rec.take();
    let started = events
        .iter()
        .position(|e| e == "Threads started!")
        .expect("started");
    let first_request = events
        .iter()
        .position(|e| e.starts_with("DEBUG: Executing request"))
        .expect("requests");
    assert!(started < first_request, "{events:#?}");
    assert_eq!(
        events
            .iter()
            .filter(|e| e.starts_with("DEBUG: Executing request"))
            .count(),
        200
    );
}

#[test]
fn worker_start_lines_come_without_debug_and_requests_only_with_it() {
    let d = tempfile::tempdir().unwrap();
    let w = workload(
        d.path(),
        &["--file-test-mode=rndrd", "--threads=3", "--events=10"],
    );
    let rec = Recorder::default();
    run(&w, false, &rec);
    let events = rec.take();
    for t in 0..3 {
        for what in ["started", "initialized"] {
            let line = format!("DEBUG: Worker thread (#{t}) {what}");
            assert_eq!(
                events.iter().filter(|e| **e == line).count(),
                1,
                "{line}: {events:#?}"
            );
        }
    }
    assert!(!events.iter().any(|e| e.contains("Executing request")));
}

#[test]
fn each_thread_says_which_limit_ended_it() {
    let d = tempfile::tempdir().unwrap();
    let w = workload(
        d.path(),
        &["--file-test-mode=rndrd", "--threads=3", "--events=10"],
    );
    let rec = Recorder::default();
    let out = run(&w, false, &rec);
    let events = rec.take();
    let info: Vec<&String> = events.iter().filter(|e| e.starts_with("INFO")).collect();
    assert_eq!(info, vec!["INFO: Event limit exceeded, exiting..."; 3]);
    assert_eq!(out.period.counts.events, 10);

    let w = workload(
        d.path(),
        &["--file-test-mode=rndrd", "--threads=2", "--time=1"],
    );
    run(&w, false, &rec);
    let events = rec.take();
    let info: Vec<&String> = events.iter().filter(|e| e.starts_with("INFO")).collect();
    assert_eq!(info, vec!["INFO: Time limit exceeded, exiting..."; 2]);
}

#[test]
fn per_thread_extremes_bound_each_threads_events() {
    let d = tempfile::tempdir().unwrap();
    let w = workload(
        d.path(),
        &["--file-test-mode=rndrw", "--threads=3", "--events=300"],
    );
    let rec = Recorder::default();
    let p = run(&w, false, &rec).period;
    assert_eq!(p.thread_extremes_ns.len(), 3);
    assert_eq!(p.threads.iter().map(|t| t.0).sum::<u64>(), 300);
    for (&(events, sum), &(min, max)) in p.threads.iter().zip(&p.thread_extremes_ns) {
        if events == 0 {
            assert_eq!((min, max, sum), (0, 0, 0));
            continue;
        }
        assert!(min <= max, "{min} > {max}");
        assert!(
            min * events <= sum && sum <= max * events,
            "{min} {max} {sum}"
        );
        assert!(p.min_ns <= min && max <= p.max_ns);
    }
    let lines = fileio::sysbench::report_text::thread_debug_lines(&p);
    assert_eq!(lines.len(), 1 + 2 * 3);
}

#[test]
fn a_forced_shutdown_ends_the_run_with_exit_code_two() {
    let d = tempfile::tempdir().unwrap();
    // One request a second on average: the worker is still waiting for an
    // arrival when the deadline (the time limit plus 0 s) passes.
    let w = workload(
        d.path(),
        &[
            "--file-test-mode=rndrd",
            "--threads=1",
            "--time=1",
            "--rate=1",
        ],
    );
    let rec = Recorder::default();
    let files = fileio::run::fileset::open_for_run(&w, &mut |_| {}).unwrap();
    let settings = RunSettings {
        forced_shutdown_s: Some(0),
        ..RunSettings::default()
    };
    let failure = match runner::run(&w, files, &settings, &rec) {
        Ok(_) => panic!("a forced shutdown must end the run with a failure"),
        Err(f) => f,
    };
    assert_eq!(failure.exit_code, 2, "sysbench exits with 2");
    assert!(failure.is_forced_shutdown());
    // The observer printed the FATAL line and the report already.
    assert!(failure.lines.is_empty(), "{:?}", failure.lines);
    let events = rec.take();
    assert_eq!(
        events.iter().filter(|e| *e == "forced shutdown").count(),
        1,
        "{events:#?}"
    );
}

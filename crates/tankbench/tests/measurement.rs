//! Measurement that explains itself: JSON output, warnings, SIGINT, progress.

mod common;

use common::*;
use std::io::Read;
use std::process::{Child, ChildStdout, Command, Stdio};

fn prepared(size: &str, files: &str) -> tempfile::TempDir {
    let d = scratch();
    let r = tb(
        d.path(),
        &[
            "fileio",
            &format!("--file-total-size={size}"),
            &format!("--file-num={files}"),
            "prepare",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    d
}

/// `tankbench fileio` on the file set of `prepared("8M", "4")`, then `words`.
fn fileio_on_8m(dir: &std::path::Path, words: &[&str]) -> Run {
    let mut args = vec!["fileio", "--file-total-size=8M", "--file-num=4"];
    args.extend_from_slice(words);
    tb(dir, &args)
}

#[test]
fn json_is_one_strict_document_with_the_schema() {
    let d = prepared("8M", "4");
    let r = fileio_on_8m(
        d.path(),
        &[
            "--file-test-mode=rndrw",
            "--events=2000",
            "--report-interval=1",
            "--percentiles=50,99,99.9",
            "--format=json",
            "run",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // serde_json rejects anything but one JSON value (trailing text included).
    let v: serde_json::Value =
        serde_json::from_str(&r.stdout).expect("stdout is exactly one JSON document");
    let typed: fileio::result::RunResult =
        serde_json::from_value(v.clone()).expect("matches RunResult");
    assert_eq!(typed.schema_version, fileio::result::SCHEMA_VERSION);
    for key in [
        "schema_version",
        "tool",
        "kind",
        "started_at",
        "labels",
        "workload",
        "interrupted",
        "total_time_s",
        "counts",
        "rates",
        "latency",
        "threads",
        "intervals",
        "environment",
        "warnings",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["kind"], "measured");
    assert_eq!(v["workload"]["mode"], "rndrw");
    assert_eq!(v["workload"]["engine"], "psync");
    for op in ["event", "read", "write", "fsync"] {
        let l = &v["latency"][op];
        assert!(l["count"].as_u64().is_some(), "{op}");
        let p: Vec<f64> = l["percentiles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["p"].as_f64().unwrap())
            .collect();
        assert_eq!(p, vec![50.0, 99.0, 99.9], "{op}");
        let hist_total: u64 = l["histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[1].as_u64().unwrap())
            .sum();
        assert_eq!(
            hist_total,
            l["count"].as_u64().unwrap(),
            "{op}: histogram holds every sample"
        );
    }
    assert_eq!(typed.counts.events, 2000);
    assert_eq!(
        typed.latency[&fileio::result::LatencyKey::Read].count,
        typed.counts.reads
    );
    let env = &typed.environment;
    assert!(
        !env.kernel.is_empty()
            && env.cpus > 0
            && env.mem_total_bytes > 0
            && !env.fs_type.is_empty()
    );
    assert!(typed.started_at.ends_with('Z'));
    // Text mode prints the latency section after the sysbench report.
    let text = fileio_on_8m(d.path(), &["--file-test-mode=rndrw", "--events=200", "run"]);
    let fairness = text.stdout.find("Threads fairness:").unwrap();
    let section = text.stdout.find("Latency by operation (ms):").unwrap();
    assert!(section > fairness);
    json_file_beside_the_text(d.path());
}

/// `--json=FILE` writes the same document beside the text report, and never
/// over a file that is not a tankbench result.
fn json_file_beside_the_text(dir: &std::path::Path) {
    let r = fileio_on_8m(
        dir,
        &[
            "--file-test-mode=rndrd",
            "--events=100",
            "--json=out.json",
            "run",
        ],
    );
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("File operations:"));
    let doc: fileio::result::RunResult =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).unwrap()).unwrap();
    assert_eq!(doc.counts.events, 100);
    // ... and never overwrites a file that is not a tankbench result.
    std::fs::write(dir.join("notes.txt"), "precious").unwrap();
    let r = fileio_on_8m(
        dir,
        &[
            "--file-test-mode=rndrd",
            "--events=10",
            "--json=notes.txt",
            "run",
        ],
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "precious"
    );
}

fn warning_codes(d: &std::path::Path, args: &[&str]) -> Vec<String> {
    let mut a = args.to_vec();
    a.push("--format=json");
    a.push("run");
    let r = tb(d, &a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: fileio::result::RunResult = serde_json::from_str(&r.stdout).unwrap();
    v.warnings.into_iter().map(|w| w.code).collect()
}

#[test]
fn warnings_fire_when_their_condition_holds_and_only_then() {
    let d = prepared("8M", "4");
    let base = [
        "fileio",
        "--file-total-size=8M",
        "--file-num=4",
        "--events=500",
    ];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        warning_codes(d.path(), &a)
    };
    // Reads from a file set far smaller than RAM: page cache.
    assert!(with(&["--file-test-mode=rndrd"]).contains(&"reads_from_page_cache".into()));
    assert!(!with(&["--file-test-mode=rndwr"]).contains(&"reads_from_page_cache".into()));
    // Periodic fsync bursts across several files in a write mode.
    assert!(with(&["--file-test-mode=rndwr"]).contains(&"fsync_bursts".into()));
    assert!(
        !with(&["--file-test-mode=rndwr", "--file-fsync-freq=0"]).contains(&"fsync_bursts".into())
    );
    assert!(!with(&["--file-test-mode=rndrd"]).contains(&"fsync_bursts".into()));
    // Sequential runs that go round the file set more than once.
    assert!(with(&["--file-test-mode=seqrd", "--events=2000"])
        .contains(&"sequential_wraparound".into()));
    assert!(!with(&["--file-test-mode=seqrd", "--events=100"])
        .contains(&"sequential_wraparound".into()));
    // Reads paced by sync writes in rndrw (the reference user's surprise).
    assert!(with(&["--file-test-mode=rndrw", "--file-fsync-all"])
        .contains(&"reads_paced_by_writes".into()));
    assert!(!with(&["--file-test-mode=rndrw", "--file-fsync-freq=0"])
        .contains(&"reads_paced_by_writes".into()));
}

#[test]
fn sigint_ends_the_run_with_a_report_marked_interrupted() {
    let d = prepared("8M", "4");
    let mut child = spawn_piped(
        d.path(),
        &[
            "fileio",
            "--file-total-size=8M",
            "--file-num=4",
            "--file-test-mode=rndrd",
            "--time=60",
            "--json=r.json",
            "run",
        ],
    );
    // Signal once the run is under way, which the child says on stdout (a
    // fixed sleep raced with a slow start on a loaded machine). Everything read
    // so far is kept: it is the start of the report.
    let mut pipe = child.stdout.take().unwrap();
    let mut seen = read_until_threads_started(&mut pipe);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = std::time::Instant::now();
    pipe.read_to_end(&mut seen).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(t.elapsed().as_secs() < 5, "stopped promptly");
    let stdout = String::from_utf8_lossy(&seen);
    assert_eq!(out.status.code(), Some(130), "{stdout}");
    assert!(stdout.contains("File operations:"), "{stdout}");
    assert!(stdout.contains("Run interrupted (SIGINT)"));
    // Stopped by the signal, long before --time=60.
    let total = report_value(&stdout, "total time:");
    assert!((0.0..4.0).contains(&total), "{total}");
    let v: fileio::result::RunResult =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("r.json")).unwrap()).unwrap();
    assert!(v.interrupted);
    assert!(v.warnings.iter().any(|w| w.code == "interrupted"));
}

#[test]
fn progress_goes_to_stderr_only_when_asked_or_on_a_terminal() {
    let d = prepared("8M", "4");
    let args = [
        "fileio",
        "--file-total-size=8M",
        "--file-num=4",
        "--file-test-mode=rndrd",
        // The live line reports the last whole second: a run of two has one
        // before its time limit.
        "--time=2",
    ];
    let mut on = args.to_vec();
    on.extend(["--progress=on", "run"]);
    let r = tb(d.path(), &on);
    assert!(r.stderr.contains("ops/s"), "{}", r.stderr);
    assert!(r.stderr.contains("time limit reached"), "{}", r.stderr);
    assert!(!r.stdout.contains("ops/s ("), "progress never on stdout");
    let mut auto = args.to_vec();
    auto.push("run");
    let r = tb(d.path(), &auto);
    assert!(
        !r.stderr.contains("ops/s"),
        "stderr is not a terminal here: no progress"
    );
}

#[test]
fn bad_extension_values_are_one_line_errors() {
    let d = prepared("1M", "1");
    for (arg, needle) in [
        (
            "--format=xml",
            "Invalid value for --format: xml (accepted: text, json)",
        ),
        (
            "--file-data=ones",
            "Invalid value for --file-data: ones (accepted: zero, random)",
        ),
        (
            "--percentiles=50,abc",
            "Invalid value for --percentiles: 'abc'",
        ),
        (
            "--repeat=0",
            "Invalid value for --repeat: 0 (accepted: 1 or more)",
        ),
    ] {
        let r = tb(
            d.path(),
            &[
                "fileio",
                "--file-total-size=1M",
                "--file-num=1",
                "--file-test-mode=rndrd",
                arg,
                "run",
            ],
        );
        assert_eq!(r.code, 1, "{arg}");
        assert!(
            r.stdout.contains(needle) || r.stderr.contains(needle),
            "{arg}: {}{}",
            r.stdout,
            r.stderr
        );
    }
}

#[test]
fn quick_runs_the_suite_and_leaves_nothing_behind() {
    let d = scratch();
    std::fs::write(d.path().join("mine.txt"), "keep").unwrap();
    let dir = d.path().to_string_lossy().into_owned();
    let r = tb(
        d.path(),
        &["quick", &dir, "--size", "16M", "--time", "1", "--json"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let results: Vec<fileio::result::RunResult> =
        serde_json::from_str(&r.stdout).expect("a JSON array");
    assert_eq!(results.len(), fileio::quick::SUITE.len());
    assert_eq!(results[0].workload.mode, fileio::spec::Mode::RndRw);
    assert!(results[0].workload.fsync_all);
    assert_eq!(results[0].workload.threads, 4);
    assert!(results.iter().all(|x| x.counts.events > 0));
    // Only what was there before remains: the scratch directory is gone.
    assert_eq!(listing(d.path()), vec![("mine.txt".to_string(), 4)]);
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    // Bad input: one line naming the option, exit 1, nothing created.
    let r = tb(d.path(), &["quick", &dir, "--size", "lots"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--size"), "{}", r.stderr);
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
}

#[test]
fn config_file_options_apply_and_the_command_line_wins() {
    let d = prepared("4M", "2");
    std::fs::write(
        d.path().join("bench.cfg"),
        "# sysbench-style options\nfile-total-size = 4M\nfile_num = 2\nfile-test-mode = \"rndwr\"\nevents = 50\n",
    )
    .unwrap();
    let r = tb(
        d.path(),
        &[
            "fileio",
            "--config-file=bench.cfg",
            "--events=20",
            "--format=json",
            "run",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v: fileio::result::RunResult = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v.workload.mode, fileio::spec::Mode::RndWr);
    assert_eq!(v.counts.events, 20, "the command line overrides the file");
    let r = tb(d.path(), &["fileio", "--config-file=missing.cfg", "run"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--config-file=missing.cfg"));
}

/// Run `tankbench fileio <args>` in `dir`, killed if it outlives `limit` (a
/// hang must fail the test, not stall the suite). Returns the run and whether
/// it ended by itself.
fn tb_within(dir: &std::path::Path, args: &[&str], limit: std::time::Duration) -> (Run, bool) {
    let mut child = spawn_piped(dir, args);
    let ended = ended_within(&mut child, std::time::Instant::now(), limit);
    (child.wait_with_output().unwrap().into(), ended)
}

/// `tankbench <args>` started in `dir`, stdout and stderr piped.
fn spawn_piped(dir: &std::path::Path, args: &[&str]) -> Child {
    Command::new(tankbench_bin())
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Read a run's stdout until it says its threads started; returns all read
/// so far (the start of the report).
fn read_until_threads_started(pipe: &mut ChildStdout) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("Threads started!\n") {
        let n = pipe.read(&mut chunk).unwrap();
        assert!(
            n > 0,
            "tankbench ended before its threads started:\n{}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&chunk[..n]);
    }
    seen
}

/// Whether `child` ends by itself within `limit` of `since`; killed if not.
fn ended_within(child: &mut Child, since: std::time::Instant, limit: std::time::Duration) -> bool {
    loop {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        if since.elapsed() > limit {
            child.kill().unwrap();
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// 64 blocks of 4 KiB over 4 files, prepared with checksums.
const VALIDATE_64_BLOCKS: [&str; 5] = [
    "--file-total-size=256K",
    "--file-num=4",
    "--file-block-size=4K",
    "--file-test-mode=rndrw",
    "--validate",
];

/// `fileio` on [`VALIDATE_64_BLOCKS`], then `rest`.
fn on_64_validated_blocks<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    [&["fileio"][..], &VALIDATE_64_BLOCKS, rest].concat()
}

fn prepared_for_validate() -> tempfile::TempDir {
    let d = scratch();
    let r = tb(d.path(), &on_64_validated_blocks(&["prepare"]));
    assert_eq!(r.code, 0, "{}", r.stdout);
    d
}

#[test]
fn validate_with_more_threads_than_blocks_is_refused_before_it_runs() {
    // sysbench 1.0.20 spins for ever here (65 threads over 64 blocks: the
    // 65th waits for a free block under the generator lock), deaf to --time
    // and Ctrl-C.
    let d = prepared_for_validate();
    let before = listing(d.path());
    let args = on_64_validated_blocks(&["--threads=65", "--time=1", "run"]);
    let (r, ended) = tb_within(d.path(), &args, std::time::Duration::from_secs(30));
    assert!(ended, "65 threads over 64 blocks hung:\n{}", r.stdout);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let fatal: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("FATAL:"))
        .collect();
    assert_eq!(fatal.len(), 1, "{}", r.stdout);
    for word in [
        "--threads",
        "65",
        "--validate",
        "64 blocks",
        "at most 64 threads",
    ] {
        assert!(fatal[0].contains(word), "{word} missing: {}", fatal[0]);
    }
    assert!(!r.stdout.contains("Threads started!"), "{}", r.stdout);
    assert_eq!(listing(d.path()), before, "nothing written");
    // The bound itself runs and ends on time: one thread per block.
    let args = on_64_validated_blocks(&["--threads=64", "--time=1", "run"]);
    let (r, ended) = tb_within(d.path(), &args, std::time::Duration::from_secs(60));
    assert!(ended, "64 threads over 64 blocks hung:\n{}", r.stdout);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        report_value(&r.stdout, "total number of events:") > 0.0,
        "{}",
        r.stdout
    );
    let total = report_value(&r.stdout, "total time:");
    assert!((0.9..10.0).contains(&total), "{total}");
}

#[test]
fn validate_with_every_block_taken_stops_on_sigint() {
    // One thread per block: every draw but a few collides, and the threads
    // wait on each other; Ctrl-C must still end the run with its report.
    let d = prepared_for_validate();
    let args = on_64_validated_blocks(&["--threads=64", "--time=600", "run"]);
    let mut child = spawn_piped(d.path(), &args);
    let mut pipe = child.stdout.take().unwrap();
    let mut seen = read_until_threads_started(&mut pipe);
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = std::time::Instant::now();
    // A reader thread, so a hang shows as a timeout here instead of a
    // blocked read.
    let reader = std::thread::spawn(move || {
        pipe.read_to_end(&mut seen).unwrap();
        seen
    });
    let ended = ended_within(&mut child, t, std::time::Duration::from_secs(20));
    let status = child.wait().unwrap();
    let stdout = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert!(ended, "SIGINT did not end the run:\n{stdout}");
    assert_eq!(status.code(), Some(130), "{stdout}");
    assert!(stdout.contains("Run interrupted (SIGINT)"), "{stdout}");
    assert!(stdout.contains("File operations:"), "{stdout}");
}

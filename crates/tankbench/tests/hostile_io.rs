//! tankbench used the way a careless or hostile user would (issue 37): a
//! stdout that cannot take the report, a closed pipe on stderr, two stop
//! signals at once, a FIFO or a symbolic link where a file is expected,
//! control characters in a result file. Each class is tried on every
//! subcommand it applies to.

mod common;

use common::{example_system, scratch, tankbench_bin, Run};
use std::os::fd::{FromRawFd as _, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A lab matrix of one cell with nothing measured (`lab predict` only).
const LAB_MATRIX: &str = r#"
output = "out/m"
workload = ["--file-total-size=16M", "--file-num=4", "--file-test-mode=rndrw",
            "--file-block-size=4K", "--threads=1", "--file-fsync-all", "--time=1"]
[base]
name = "t"
[base.pool]
layout = "2x raidz2-6"
disk = "hdd"
[base.server]
arc = "256M"
[[axis]]
key = "pool.log"
values = ["none"]
"#;

/// The words of a one-second prediction on the reference NAS.
fn simulate_words(system: &str) -> Vec<String> {
    [
        "simulate",
        "--system",
        system,
        "--",
        "--file-total-size=64M",
        "--file-test-mode=rndrw",
        "--time=1",
        "--rand-seed=1",
    ]
    .iter()
    .map(|w| w.to_string())
    .collect()
}

/// `tankbench <args>` in `dir` with the given stdout and stderr, waited for
/// at most a minute (a test must fail, not hang).
fn tb_with(dir: &Path, args: &[String], stdout: Stdio, stderr: Stdio) -> Run {
    let child = Command::new(tankbench_bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .expect("start tankbench");
    finish_within(child, Duration::from_secs(60), args)
}

/// Wait for `child` and collect what it printed to the pipes it has, killing
/// it if it is still running after `limit`.
fn finish_within(child: std::process::Child, limit: Duration, args: &[String]) -> Run {
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(output) => output.expect("wait for tankbench").into(),
        Err(_) => {
            // SAFETY: kill(2) on our own child, not yet reaped (the waiting
            // thread has not returned).
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("tankbench {args:?} still running after {limit:?}");
        }
    }
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// The commands `tankbench --help` lists.
fn listed_commands(dir: &Path) -> Vec<String> {
    let help = tb_with(dir, &words(&["--help"]), Stdio::piped(), Stdio::piped());
    help.stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// A directory with what the commands below read: a saved run, a
/// prediction posing as a measurement, a durability journal, a simulator
/// matrix and a lab matrix.
fn fixtures() -> tempfile::TempDir {
    let d = scratch();
    let w = d.path();
    let ok = |args: Vec<String>| {
        let r = tb_with(w, &args, Stdio::piped(), Stdio::piped());
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        r
    };
    ok(words(&[
        "fileio",
        "--file-total-size=4M",
        "--file-num=2",
        "prepare",
    ]));
    ok(words(&[
        "fileio",
        "--file-total-size=4M",
        "--file-num=2",
        "--file-test-mode=seqrd",
        "--events=100",
        "--save=store",
        "run",
    ]));
    let mut predict = simulate_words(&example_system("reference-nas.toml"));
    predict.extend(["--format=json".into(), "run".into()]);
    let doc = ok(predict).stdout;
    let mut doc: serde_json::Value = serde_json::from_str(&doc).expect("a prediction's JSON");
    doc["kind"] = "measured".into();
    std::fs::write(w.join("measured.json"), doc.to_string()).unwrap();
    std::fs::create_dir(w.join("d")).unwrap();
    ok(words(&[
        "durability",
        "write",
        "d",
        "--journal",
        "j",
        "--file-num=2",
        "--file-total-size=2M",
        "--threads=1",
        "--time=1",
    ]));
    std::fs::write(
        w.join("m.toml"),
        format!(
            "system = \"{}\"\nworkload = [\"--file-total-size=64M\", \"--file-test-mode=rndrw\", \
             \"--time=1\", \"--rand-seed=1\"]\n[[axis]]\nkey = \"log\"\nvalues = [\"none\"]\n",
            example_system("reference-nas.toml")
        ),
    )
    .unwrap();
    std::fs::write(w.join("lab.toml"), LAB_MATRIX).unwrap();
    d
}

/// One cheap invocation of every command that prints a report, by command.
fn report_invocations(run_id: &str) -> Vec<Vec<String>> {
    let nas = example_system("reference-nas.toml");
    let mut simulate = simulate_words(&nas);
    simulate.push("run".into());
    let mut simulate_json = simulate_words(&nas);
    simulate_json.push("--format=json".into());
    simulate_json.push("run".into());
    vec![
        words(&["quick", "--size=4M", "--time=1", "."]),
        words(&["fileio", "--file-total-size=4M", "--file-num=2", "prepare"]),
        words(&["plan", "--disks", "24x8TB"]),
        words(&["plan", "--disks", "24x8TB", "--format=json"]),
        words(&["lab", "status"]),
        words(&["lab", "predict", "lab.toml", "--intervals=off"]),
        simulate,
        simulate_json,
        words(&["simulate", "matrix", "m.toml", "--intervals=off"]),
        words(&["simulate", "calibrate", "--system", &nas, "measured.json"]),
        words(&["durability", "verify", "d", "--from", "j"]),
        words(&[
            "durability",
            "record",
            "--listen=127.0.0.1:0",
            "--journal=r.journal",
        ]),
        words(&["slog", ".", "--count=5", "--max-size=4K"]),
        words(&["probe", ".", "--samples=3"]),
        words(&["results", "store"]),
        words(&["compare", "--dir=store", run_id, run_id]),
        words(&["report", "store", "--format=csv"]),
        words(&["completions", "bash"]),
        words(&["man"]),
        words(&["--help"]),
    ]
}

fn saved_run_id(dir: &Path) -> String {
    testkit::dir_names(&dir.join("store"))[0]
        .trim_end_matches(".json")
        .to_string()
}

/// `> /dev/full`: every command says it could not write its report, in
/// one line, and exits 1 (no panic, no silent success).
#[test]
fn a_full_stdout_fails_every_command_in_one_line() {
    let d = fixtures();
    let w = d.path();
    let cases = report_invocations(&saved_run_id(w));
    // `chart` writes only its -o file (checked by the store's tests).
    for command in listed_commands(w).into_iter().filter(|c| c != "chart") {
        assert!(
            cases.iter().any(|c| c[0] == command),
            "no case tries `{command}` with a full stdout"
        );
    }
    for args in &cases {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let r = tb_with(w, args, Stdio::from(full), Stdio::piped());
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
        let last = r.stderr.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("tankbench: ")
                && last.contains("writing to stdout: No space left on device"),
            "{args:?}: {}",
            r.stderr
        );
    }
    // Nothing of quick's, slog's or probe's scratch is left behind.
    let left: Vec<String> = testkit::dir_names(w)
        .into_iter()
        .filter(|n| n.starts_with("tankbench-"))
        .filter(|n| n != "tankbench-results")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// The write end of a pipe whose read end is closed: every write to it
/// fails with EPIPE (and raises SIGPIPE), as `|& head` does once head has
/// gone.
fn closed_pipe() -> OwnedFd {
    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills the two-element array.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just made and are owned here only.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    write
}

/// `tankbench quick |& head`, `slog … |& head`, `probe … |& head` after head
/// has gone: the run goes on to its end and removes what it made.
#[test]
fn a_closed_pipe_on_stdout_and_stderr_still_cleans_up() {
    let d = scratch();
    let w = d.path();
    for args in [
        words(&["quick", "--size=4M", "--time=1", "."]),
        words(&["slog", ".", "--count=5", "--max-size=4K"]),
        words(&["probe", ".", "--samples=3"]),
    ] {
        let pipe = closed_pipe();
        let r = tb_with(
            w,
            &args,
            Stdio::from(pipe.try_clone().unwrap()),
            Stdio::from(pipe),
        );
        assert_eq!(r.code, 0, "{args:?} ended early");
        assert!(
            testkit::dir_names(w).is_empty(),
            "{args:?} left {:?}",
            testkit::dir_names(w)
        );
    }
}

/// Start `tankbench <args>` in `dir` with its output discarded.
fn spawn(dir: &Path, args: &[String]) -> std::process::Child {
    Command::new(tankbench_bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start tankbench")
}

/// Wait (at most a minute) until `dir` holds a name starting with `prefix`.
fn until_made(dir: &Path, prefix: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !testkit::dir_names(dir)
        .iter()
        .any(|n| n.starts_with(prefix))
    {
        assert!(
            Instant::now() < deadline,
            "no {prefix}* in {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGINT and SIGTERM at once (`timeout` signals the child and its group):
/// the probe removes its scratch file and ends with 128 + a signal.
#[test]
fn two_stop_signals_at_once_leave_no_probe_file() {
    let d = scratch();
    let w = d.path();
    for _ in 0..3 {
        let args = words(&["probe", ".", "--samples=1000000", "--time-per-op=60s"]);
        let child = spawn(w, &args);
        until_made(w, "tankbench-probe.");
        let pid = child.id() as i32;
        // SAFETY: kill(2) on our own child, not yet reaped.
        unsafe {
            assert_eq!(libc::kill(pid, libc::SIGTERM), 0);
            assert_eq!(libc::kill(pid, libc::SIGINT), 0);
        }
        let r = finish_within(child, Duration::from_secs(60), &args);
        assert!(
            [128 + libc::SIGINT, 128 + libc::SIGTERM].contains(&r.code),
            "exit {}",
            r.code
        );
        assert!(
            testkit::dir_names(w).is_empty(),
            "{:?}",
            testkit::dir_names(w)
        );
    }
}

/// `lab predict` on a matrix of many cells stops at a stop signal (it used
/// to catch the signal and predict every cell anyway).
#[test]
fn lab_predict_stops_at_a_stop_signal() {
    let d = scratch();
    let w = d.path();
    let many: Vec<String> = (1..=400).map(|i| format!("\"{}M\"", 64 + i)).collect();
    std::fs::write(
        w.join("lab.toml"),
        format!(
            "{LAB_MATRIX}[[axis]]\nkey = \"server.arc\"\nvalues = [{}]\n",
            many.join(", ")
        ),
    )
    .unwrap();
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let args = words(&["lab", "predict", "lab.toml", "--intervals=off"]);
        let child = spawn(w, &args);
        std::thread::sleep(Duration::from_millis(500));
        // SAFETY: kill(2) on our own child, not yet reaped.
        assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
        let stopped = Instant::now();
        let r = finish_within(child, Duration::from_secs(60), &args);
        assert_ne!(
            r.code, 0,
            "signal {sig} was swallowed: every cell predicted"
        );
        // Generous for a loaded machine: the whole matrix takes minutes.
        assert!(
            stopped.elapsed() < Duration::from_secs(5),
            "signal {sig}: {:?}",
            stopped.elapsed()
        );
    }
}

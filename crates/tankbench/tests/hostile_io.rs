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
        words(&[
            "fio",
            "--name=j",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--filename=fio.data",
        ]),
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

/// A FIFO named like a page: `man DIR` refuses it at once instead of
/// opening it (which blocked for ever), and writes nothing.
#[test]
fn man_never_opens_a_fifo_named_like_a_page() {
    let d = scratch();
    let man1 = d.path().join("man1");
    std::fs::create_dir(&man1).unwrap();
    common::mkfifo(&man1.join("tankbench-quick.1"));
    let args = words(&["man", "man1"]);
    let r = tb_with(d.path(), &args, Stdio::piped(), Stdio::piped());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("tankbench-quick.1"), "{}", r.stderr);
    assert_eq!(testkit::dir_names(&man1), ["tankbench-quick.1"]);
}

/// On a full file system, `man DIR` and `--csv` fail in one line and leave
/// nothing behind: no empty man1/, no 0-byte CSV.
#[test]
fn a_full_file_system_leaves_no_empty_directory_or_csv() {
    let Some(full) = testkit::FullFs::mount(|_| {}) else {
        return;
    };
    let d = fixtures_for_runs();
    let w = d.path();
    let man1 = full.path().join("share/man1");
    let args = words(&["man", man1.to_str().unwrap()]);
    let r = tb_with(w, &args, Stdio::piped(), Stdio::piped());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("No space left on device"), "{}", r.stderr);
    assert_eq!(full.names(), ["filler"]);

    let csv = full.path().join("runs.csv");
    let r = short_run(w, &[&format!("--csv={}", csv.display())]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("--csv") && r.stderr.contains("No space left on device"),
        "{}",
        r.stderr
    );
    assert_eq!(full.names(), ["filler"]);
}

/// A directory with a prepared file set of [`short_run`].
fn fixtures_for_runs() -> tempfile::TempDir {
    let d = scratch();
    let args = words(&["fileio", "--file-total-size=4M", "--file-num=2", "prepare"]);
    let r = tb_with(d.path(), &args, Stdio::piped(), Stdio::piped());
    assert_eq!(r.code, 0, "{}", r.stderr);
    d
}

/// `tankbench fileio <extra> run`: 100 sequential reads.
fn short_run(dir: &Path, extra: &[&str]) -> Run {
    let mut args = words(&[
        "fileio",
        "--file-total-size=4M",
        "--file-num=2",
        "--file-test-mode=seqrd",
        "--events=100",
    ]);
    args.extend(extra.iter().map(|w| w.to_string()));
    args.push("run".into());
    tb_with(dir, &args, Stdio::piped(), Stdio::piped())
}

/// Every output option refuses a symbolic link where its file should be
/// (the link's target, elsewhere, is left as it was), before the run.
#[test]
fn every_output_option_refuses_a_symbolic_link() {
    let d = fixtures_for_runs();
    let w = d.path();
    std::fs::write(w.join("elsewhere"), "").unwrap();
    std::os::unix::fs::symlink("elsewhere", w.join("link")).unwrap();
    for option in ["--csv", "--json", "--intervals", "--openmetrics"] {
        let r = short_run(w, &[&format!("{option}=link")]);
        assert_eq!(r.code, 1, "{option}: {}", r.stderr);
        assert!(
            !r.stdout.contains("Running the test"),
            "{option}: the run started"
        );
        assert!(
            format!("{}{}", r.stdout, r.stderr).contains(&format!("{option}=link")),
            "{option}: {}{}",
            r.stdout,
            r.stderr
        );
        assert_eq!(std::fs::read(w.join("elsewhere")).unwrap(), b"");
    }
}

/// Two output options naming one file, however spelled, are refused before
/// the run.
#[test]
fn two_outputs_naming_one_file_are_refused_before_the_run() {
    let d = fixtures_for_runs();
    let w = d.path();
    std::fs::create_dir(w.join("sub")).unwrap();
    std::fs::write(w.join("old.csv"), "").unwrap();
    std::fs::hard_link(w.join("old.csv"), w.join("other-name.csv")).unwrap();
    for pair in [
        ["--csv=a.csv", "--json=./a.csv"],
        ["--intervals=sub/../b.jsonl", "--openmetrics=b.jsonl"],
        ["--csv=old.csv", "--openmetrics=other-name.csv"],
    ] {
        let r = short_run(w, &pair);
        let said = format!("{}{}", r.stdout, r.stderr);
        assert_eq!(r.code, 1, "{pair:?}: {said}");
        assert!(said.contains("name the same file"), "{pair:?}: {said}");
        assert!(!said.contains("Running the test"), "{pair:?}: {said}");
    }
    assert!(!w.join("a.csv").exists() && !w.join("b.jsonl").exists());
}

/// `durability write` of [`DURABILITY_LAYOUT`] into `dir`, journaling to `journal`.
fn durability_write(cwd: &Path, dir: &str, journal: &str, extra: &[&str]) -> Run {
    let mut args = words(&["durability", "write", dir, "--journal", journal]);
    args.extend(
        ["--file-num=2", "--file-total-size=2M", "--time=1"]
            .iter()
            .chain(extra)
            .map(|w| w.to_string()),
    );
    tb_with(cwd, &args, Stdio::piped(), Stdio::piped())
}

/// `--threads=100000` is refused up front with fileio's reason (it aborted
/// the process at about 16,000 threads, leaving files and journal).
#[test]
fn durability_write_refuses_more_threads_than_the_map_limit_holds() {
    let d = scratch();
    std::fs::create_dir(d.path().join("d")).unwrap();
    let r = durability_write(d.path(), "d", "j", &["--threads=100000"]);
    common::refused_naming(&r, &["--threads", "vm.max_map_count"]);
    assert!(testkit::dir_names(&d.path().join("d")).is_empty());
    assert!(!d.path().join("j").exists());
}

/// Under a pids limit the threads that cannot start are named as such (it
/// said "reporting failed").
#[test]
fn durability_write_under_a_pids_limit_says_threads_could_not_start() {
    let Some(_) = testkit::require(["root"]) else {
        return;
    };
    let pids = Path::new("/sys/fs/cgroup/pids");
    if !pids.join("cgroup.procs").exists() {
        testkit::skip_or_fail("a cgroup v1 pids controller at /sys/fs/cgroup/pids");
        return;
    }
    let group = pids.join(format!("tb-test-{}", std::process::id()));
    std::fs::create_dir(&group).unwrap();
    std::fs::write(group.join("pids.max"), "20").unwrap();
    let d = scratch();
    std::fs::create_dir(d.path().join("d")).unwrap();
    let procs = group.join("cgroup.procs");
    let mut args = words(&["durability", "write", "d", "--journal", "j"]);
    args.extend(words(&[
        "--file-num=2",
        "--file-total-size=2M",
        "--time=1",
        "--threads=50",
    ]));
    let mut cmd = Command::new(tankbench_bin());
    cmd.args(&args)
        .current_dir(d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: the child only writes its own pid into the group's procs
    // file (write "0": the writing process) before exec.
    unsafe {
        use std::os::unix::process::CommandExt as _;
        cmd.pre_exec(move || std::fs::write(&procs, "0"));
    }
    let r = finish_within(cmd.spawn().unwrap(), Duration::from_secs(60), &args);
    let _ = std::fs::remove_dir(&group);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("writer threads could not be started"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert!(!r.stdout.contains("reporting failed"), "{}", r.stdout);
}

/// A read-only DIR is refused before the session is announced: the journal
/// gets no line for a session that never wrote.
#[test]
fn durability_write_on_a_read_only_dir_journals_nothing() {
    let Some(_) = testkit::require(["root"]) else {
        return;
    };
    let d = scratch();
    let ro = d.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "ro", "tmpfs"])
        .arg(&ro)
        .status()
        .unwrap();
    assert!(mounted.success());
    let r = durability_write(d.path(), "ro", "j", &["--threads=1"]);
    let _ = Command::new("umount").arg(&ro).status();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("Read-only file system"), "{}", r.stderr);
    assert!(!d.path().join("j").exists(), "a session line was journaled");
}

/// A symbolic link where durability.1 belongs is refused before any file is
/// written: durability.0 keeps what the last session wrote.
#[test]
fn durability_write_checks_every_file_before_writing_any() {
    let d = scratch();
    let w = d.path();
    std::fs::create_dir(w.join("d")).unwrap();
    let r = durability_write(w, "d", "j", &["--threads=1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let first = std::fs::read(w.join("d/durability.0")).unwrap();
    assert!(first.iter().any(|&b| b != 0), "the first session wrote");
    std::fs::remove_file(w.join("d/durability.1")).unwrap();
    std::fs::write(w.join("elsewhere"), "").unwrap();
    std::os::unix::fs::symlink("../elsewhere", w.join("d/durability.1")).unwrap();
    let journal = std::fs::read(w.join("j")).unwrap();
    let r = durability_write(w, "d", "j", &["--threads=1"]);
    common::refused_naming(&r, &["durability.1", "not a regular file"]);
    assert_eq!(std::fs::read(w.join("d/durability.0")).unwrap(), first);
    assert_eq!(std::fs::read(w.join("elsewhere")).unwrap(), b"");
    assert_eq!(std::fs::read(w.join("j")).unwrap(), journal);
}

/// A result file from someone else: its host name and log vdev name carry
/// terminal sequences, a forged line and 5 MiB. `simulate --system-from`
/// prints them escaped and bounded.
#[test]
fn names_from_a_result_file_cannot_drive_the_terminal() {
    let d = fixtures_for_runs();
    let w = d.path();
    let r = short_run(w, &["--json=run.json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.join("run.json")).unwrap()).unwrap();
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\r\nFAKE LINE: PASSED";
    doc["environment"]["hostname"] = format!("host{evil}{}", "x".repeat(5 << 20)).into();
    let device =
        |name: &str| serde_json::json!({"name": name, "kind": "device", "state": "ONLINE"});
    doc["environment"]["zfs"] = serde_json::json!({
        "pool": {
            "name": "tank",
            "state": "ONLINE",
            "data": [{"name": "raidz1-0", "kind": "raidz", "parity": 1, "state": "ONLINE",
                      "children": [device("a"), device("b"), device("c")]}],
            "logs": [device(&format!("log{evil}"))],
        }
    });
    std::fs::write(w.join("evil.json"), doc.to_string()).unwrap();
    let args = words(&[
        "simulate",
        "--system-from=evil.json",
        "--intervals=off",
        "--",
        "--file-total-size=64M",
        "--file-test-mode=rndrw",
        "--time=1",
        "run",
    ]);
    let r = tb_with(w, &args, Stdio::piped(), Stdio::piped());
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (stream, text) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{stream} carries a control character"
        );
        assert!(
            !text.lines().any(|l| l.starts_with("FAKE LINE")),
            "{stream} has a forged line"
        );
        assert!(text.len() < 64 << 10, "{stream}: {} bytes", text.len());
    }
    assert!(
        r.stdout.contains("layout 1xraidz1-3, log ssd-sata"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("FAKE LINE: PASSED"),
        "shown, escaped: {}",
        r.stderr
    );
}

/// A FIFO wherever a command reads a file it is given: refused at once
/// (exit 1), never opened to block for ever. Covers every command that
/// reads a named file.
#[test]
fn a_fifo_where_a_file_is_expected_is_refused_by_every_command() {
    let d = scratch();
    let w = d.path();
    common::mkfifo(&w.join("fifo"));
    std::fs::create_dir(w.join("d")).unwrap();
    let nas = example_system("reference-nas.toml");
    let run = ["--", "--file-test-mode=rndrw", "run"];
    let cases: Vec<Vec<String>> = vec![
        words(&[&["simulate", "--system", "fifo"][..], &run].concat()),
        words(&[&["simulate", "--system-from", "fifo"][..], &run].concat()),
        words(
            &[
                &["simulate", "--system", &nas, "--profile", "fifo"][..],
                &run,
            ]
            .concat(),
        ),
        words(&["simulate", "matrix", "fifo"]),
        words(&["simulate", "calibrate", "--system", &nas, "fifo"]),
        words(&["lab", "predict", "fifo"]),
        words(&["lab", "up", "fifo"]),
        words(&["lab", "run", "fifo"]),
        words(&["lab", "matrix", "fifo"]),
        words(&["lab", "durability", "fifo"]),
        words(&["durability", "verify", "d", "--from", "fifo"]),
        words(&["durability", "write", "d", "--journal", "fifo", "--time=1"]),
        words(&[
            "durability",
            "write",
            "d",
            "--recorder",
            "127.0.0.1:9",
            "--key",
            "fifo",
            "--time=1",
        ]),
        words(&[
            "durability",
            "record",
            "--listen=127.0.0.1:0",
            "--journal=fifo",
        ]),
        words(&[
            "durability",
            "record",
            "--listen=127.0.0.1:0",
            "--journal=j",
            "--key=fifo",
        ]),
        words(&["results", "import", "fifo"]),
        words(&["report", "fifo"]),
        words(&[
            "fileio",
            "--config-file=fifo",
            "--file-total-size=1M",
            "prepare",
        ]),
        words(&["slog", "fifo"]),
        words(&["probe", "fifo"]),
    ];
    for args in &cases {
        let r = tb_with(w, args, Stdio::piped(), Stdio::piped());
        assert_eq!(r.code, 1, "{args:?}: {}{}", r.stdout, r.stderr);
    }
    let mut left = testkit::dir_names(w);
    left.sort();
    assert_eq!(left, ["d", "fifo"], "something was written");
    assert!(testkit::dir_names(&w.join("d")).is_empty());
}

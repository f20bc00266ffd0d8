//! What a run prints while it runs and as it ends, beside the real sysbench
//! 1.0.20: thread-creation failures, `--debug` and `--verbosity=4/5` lines,
//! folded repeats, debug positions past 2 GiB, the header's merging line,
//! checkpoint layout, `--verbosity=2` silence, percentiles within min and max.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Skip with the reason printed or, when peers are required (CI), fail: the
/// project's one rule (`testkit`).
fn missing(reason: &str) {
    testkit::skip_or_fail(reason);
}

macro_rules! need_sysbench {
    () => {
        match sysbench_bin() {
            Some(p) => p,
            None => {
                missing("sysbench 1.0.20 is not available");
                return;
            }
        }
    };
}

/// Run to completion or fail the test after `limit` (a hang is the defect
/// some of these tests are about).
fn run_with_deadline(mut cmd: Command, limit: Duration) -> Run {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the program");
    // Drain the pipes while waiting, so a chatty child cannot block on them.
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut s).ok();
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut s).ok();
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {limit:?} (hung)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out_reader.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned(),
    }
}

/// tankbench's stdout up to its own additions ("Latency by operation" and the
/// warnings come after everything sysbench prints, its `--debug` per-thread
/// block included).
fn before_additions(stdout: &str) -> String {
    let mut out = String::new();
    for line in stdout.lines() {
        if line == "Latency by operation (ms):" {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The lines from the first one equal to `from` up to the first one equal to
/// `to`, both included.
fn span(stdout: &str, from: &str, to: &str) -> Vec<String> {
    let lines: Vec<&str> = stdout.lines().collect();
    let a = lines
        .iter()
        .position(|l| *l == from)
        .unwrap_or_else(|| panic!("no '{from}' in:\n{stdout}"));
    let b = a + lines[a..]
        .iter()
        .position(|l| *l == to)
        .unwrap_or_else(|| panic!("no '{to}' after '{from}' in:\n{stdout}"));
    lines[a..=b].iter().map(|l| l.to_string()).collect()
}

const SMALL_SET: &[&str] = &["fileio", "--file-total-size=4M", "--file-num=4", "prepare"];

fn words<'a>(args: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = args.to_vec();
    v.extend_from_slice(extra);
    v.push("run");
    v
}

/// The words of a run in `mode` (a `--file-test-mode=` word) on the files of
/// [`SMALL_SET`], then `extra`.
fn small_run<'a>(mode: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    words(
        &["fileio", "--file-total-size=4M", "--file-num=4", mode],
        extra,
    )
}

/// Both programs on [`SMALL_SET`]'s files, `args` succeeding in both; then
/// sysbench's run, tankbench's run and tankbench's directory.
fn both_succeed_on_small_set(args: &[&str]) -> (Run, Run, tempfile::TempDir) {
    let (a, b, _d_sb, d_tb) = side_by_side(&[SMALL_SET], args);
    assert_eq!((a.code, b.code), (0, 0), "{}{}", b.stdout, b.stderr);
    (a, b, d_tb)
}

// ---------------------------------------------------------------------------
// Thread creation beyond what the OS allows.

/// uid and gid of `nobody`.
fn nobody() -> Option<(u32, u32)> {
    let name = std::ffi::CString::new("nobody").ok()?;
    // SAFETY: getpwnam returns NULL or a pointer to a static entry that we
    // read at once.
    unsafe {
        let pw = libc::getpwnam(name.as_ptr());
        if pw.is_null() {
            None
        } else {
            Some(((*pw).pw_uid, (*pw).pw_gid))
        }
    }
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(program))
        .find(|p| p.is_file())
}

/// A command that runs `program args` with at most `nproc` processes for its
/// user (RLIMIT_NPROC, through util-linux `prlimit`). Root is exempt from
/// RLIMIT_NPROC (the kernel lets CAP_SYS_RESOURCE and CAP_SYS_ADMIN past it),
/// so as root the program runs as `nobody` (util-linux `setpriv`), who owns
/// no other processes; otherwise as the current user with a limit of 1, which
/// the user's own processes already reach, so the first thread fails.
struct NprocLimit {
    prlimit: PathBuf,
    setpriv: Option<(PathBuf, u32, u32)>,
    nproc: u32,
    /// Keeps a copy of the binary `nobody` can run, when the build directory
    /// is closed to other users.
    _copies: Option<tempfile::TempDir>,
}

impl NprocLimit {
    fn new() -> Result<NprocLimit, String> {
        let prlimit = which("prlimit").ok_or("util-linux prlimit is not installed")?;
        if !testkit::is_root() {
            return Ok(NprocLimit {
                prlimit,
                setpriv: None,
                nproc: 1,
                _copies: None,
            });
        }
        let setpriv = which("setpriv").ok_or("util-linux setpriv is not installed")?;
        let (uid, gid) = nobody().ok_or("there is no 'nobody' user")?;
        Ok(NprocLimit {
            prlimit,
            setpriv: Some((setpriv, uid, gid)),
            nproc: 200,
            _copies: None,
        })
    }

    fn command(&self, program: &Path, dir: &Path, args: &[&str]) -> Command {
        let mut c = match &self.setpriv {
            Some((setpriv, uid, gid)) => {
                let mut c = Command::new(setpriv);
                c.arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={gid}"))
                    .arg("--clear-groups")
                    .arg(&self.prlimit);
                c
            }
            None => Command::new(&self.prlimit),
        };
        c.arg(format!("--nproc={}", self.nproc))
            .arg(program)
            .args(args)
            .current_dir(dir);
        c
    }

    /// `program` itself, or a copy in a directory everyone may enter when
    /// the limited user cannot run it where it is.
    fn runnable(&mut self, program: &Path) -> PathBuf {
        if self.setpriv.is_none() {
            return program.to_path_buf();
        }
        let probe = self
            .command(program, Path::new("/"), &["--version"])
            .output();
        if probe.is_ok_and(|o| o.status.success()) {
            return program.to_path_buf();
        }
        let dir = tempfile::Builder::new()
            .prefix("tb-bin-")
            .tempdir()
            .expect("temp dir");
        open_to_all(dir.path(), 0o755);
        let copy = dir.path().join("tankbench");
        std::fs::copy(program, &copy).expect("copy the binary");
        open_to_all(&copy, 0o755);
        self._copies = Some(dir);
        copy
    }
}

fn open_to_all(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A prepared directory the limited user can use (`nobody` when root).
fn shared_dir(prepare: impl Fn(&Path) -> Run) -> tempfile::TempDir {
    let d = scratch();
    let r = prepare(d.path());
    assert_eq!(r.code, 0, "prepare: {}{}", r.stdout, r.stderr);
    open_to_all(d.path(), 0o777);
    for (name, _) in listing(d.path()) {
        open_to_all(&d.path().join(name), 0o666);
    }
    d
}

#[test]
fn a_thread_the_os_refuses_ends_the_run_like_sysbench() {
    let sb = need_sysbench!();
    let mut limit = match NprocLimit::new() {
        Ok(l) => l,
        Err(reason) => return missing(&reason),
    };
    let tankbench = limit.runnable(&tankbench_bin());
    let d_sb = shared_dir(|d| run_in(&sb, d, SMALL_SET));
    let d_tb = shared_dir(|d| tb(d, SMALL_SET));
    let args = small_run("--file-test-mode=rndrd", &["--time=5", "--threads=1000"]);
    let a = run_with_deadline(
        limit.command(&sb, d_sb.path(), &args),
        Duration::from_secs(60),
    );
    // The threads already started must be stopped: no hang, no panic.
    let b = run_with_deadline(
        limit.command(&tankbench, d_tb.path(), &args),
        Duration::from_secs(60),
    );
    assert_eq!(a.code, 1, "sysbench: {}{}", a.stdout, a.stderr);
    assert_eq!(b.code, 1, "tankbench: {}{}", b.stdout, b.stderr);
    assert_eq!(b.stderr, "", "no panic message");
    let last = b.stdout.lines().last().unwrap_or("");
    assert!(
        last.starts_with("FATAL: sb_thread_create() for thread #")
            && last.ends_with("failed. errno = 11 (Resource temporarily unavailable)"),
        "{}",
        b.stdout
    );
    // sysbench's started threads may print after its FATAL line while the
    // process exits; compare up to that line.
    let upto_fatal = |s: &str| -> String {
        let mut out = String::new();
        for l in s.lines() {
            out.push_str(l);
            out.push('\n');
            if l.starts_with("FATAL: ") {
                break;
            }
        }
        out
    };
    assert_eq!(mask(&upto_fatal(&a.stdout)), mask(&b.stdout));
}

#[test]
fn more_threads_than_memory_maps_allow_is_a_one_line_error() {
    let max_maps: u64 = match std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse().ok())
    {
        Some(m) => m,
        None => return missing("/proc/sys/vm/max_map_count is not readable"),
    };
    // Each Rust thread needs more than two maps; half the limit cannot fit.
    let threads = (max_maps / 2).min(i32::MAX as u64).to_string();
    let d = scratch();
    assert_eq!(tb(d.path(), SMALL_SET).code, 0);
    let mut cmd = Command::new(tankbench_bin());
    cmd.current_dir(d.path()).args(small_run(
        "--file-test-mode=rndrd",
        &["--time=1", &format!("--threads={threads}")],
    ));
    let r = run_with_deadline(cmd, Duration::from_secs(60));
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    let fatal: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("FATAL"))
        .collect();
    assert_eq!(fatal.len(), 1, "{}", r.stdout);
    assert!(
        fatal[0].starts_with(&format!("FATAL: Invalid value for --threads: {threads}: "))
            && fatal[0].contains("vm.max_map_count"),
        "{}",
        fatal[0]
    );
    assert!(!r.stdout.contains("Threads started!"));
}

// ---------------------------------------------------------------------------
// Percentiles.

/// (min, max, percentiles) of a `Latency by operation` row, ms as printed.
fn table_row(stdout: &str, name: &str) -> (f64, f64, Vec<f64>) {
    let line = stdout
        .lines()
        .skip_while(|l| *l != "Latency by operation (ms):")
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no {name} row in:\n{stdout}"));
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap())
        .collect();
    // count, min, avg, percentiles..., max
    (v[1], v[v.len() - 1], v[3..v.len() - 1].to_vec())
}

#[test]
fn short_runs_never_show_a_percentile_outside_min_and_max() {
    let d = scratch();
    assert_eq!(tb(d.path(), SMALL_SET).code, 0);
    // One event: every percentile is that event, yet the HDR bucket used to
    // print p50..p99.9 above the exact maximum most of the time.
    for i in 0..5 {
        let json = d.path().join(format!("r{i}.json"));
        let json_arg = format!("--json={}", json.display());
        let r = tb(
            d.path(),
            &small_run("--file-test-mode=rndrd", &["--events=1", &json_arg]),
        );
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        for row in ["read", "event"] {
            let (min, max, pcts) = table_row(&r.stdout, row);
            for p in pcts {
                assert!(
                    min <= p && p <= max,
                    "{row}: {p} outside [{min}, {max}]\n{}",
                    r.stdout
                );
            }
        }
        let max = report_value(&r.stdout, "max:");
        let min = report_value(&r.stdout, "min:");
        let p95 = report_value(&r.stdout, "95th percentile:");
        assert!(min <= p95 && p95 <= max, "{}", r.stdout);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        for (name, l) in v["latency"].as_object().unwrap() {
            let (min, max) = (l["min_ms"].as_f64().unwrap(), l["max_ms"].as_f64().unwrap());
            if l["count"].as_u64() == Some(0) {
                continue;
            }
            for p in l["percentiles"].as_array().unwrap() {
                let ms = p["ms"].as_f64().unwrap();
                assert!(
                    min <= ms && ms <= max,
                    "{name}: {ms} outside [{min}, {max}]"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------
// --debug and --verbosity.

#[test]
fn debug_output_matches_sysbench() {
    need_sysbench!();
    let args = small_run(
        "--file-test-mode=rndrw",
        &[
            "--events=30",
            "--file-fsync-freq=10",
            "--rand-seed=42",
            "--debug",
        ],
    );
    let (a, b, _d_tb) = both_succeed_on_small_set(&args);
    // One thread and a seed: the same requests, offsets included, and the same
    // lines around them (the limit line, "Done.", the per-thread block).
    assert_eq!(debug_ops(&a.stdout).3, debug_ops(&b.stdout).3);
    assert_eq!(mask(&a.stdout), mask(&before_additions(&b.stdout)));
    for out in [&a.stdout, &b.stdout] {
        let started = out.find("Threads started!").unwrap();
        assert!(started < out.find("DEBUG: Executing request").unwrap());
        assert!(out.contains("Event limit exceeded, exiting...\nDone.\n"));
        assert!(out
            .contains("\nDEBUG: Verbose per-thread statistics:\n\nDEBUG:     thread #  0: min: "));
    }
}

#[test]
fn several_threads_fold_their_limit_lines_like_sysbench() {
    need_sysbench!();
    let args = small_run(
        "--file-test-mode=rndrd",
        &["--events=3", "--threads=3", "--verbosity=4"],
    );
    let (a, b, _d_tb) = both_succeed_on_small_set(&args);
    assert_eq!(mask(&a.stdout), mask(&before_additions(&b.stdout)));
    let tail = [
        "Threads started!",
        "",
        "Event limit exceeded, exiting...",
        "(last message repeated 2 times)",
        "Done.",
        "",
        "",
        "File operations:",
    ];
    assert_eq!(
        span(&b.stdout, "Threads started!", "File operations:"),
        tail
    );
}

#[test]
fn verbosity_5_without_debug_matches_sysbench() {
    need_sysbench!();
    let args = small_run("--file-test-mode=rndrd", &["--time=1", "--verbosity=5"]);
    let (a, b, _d_tb) = both_succeed_on_small_set(&args);
    // Worker start lines and "Time limit exceeded"; no request lines and no
    // per-thread block (those need --debug).
    assert_eq!(mask(&a.stdout), mask(&before_additions(&b.stdout)));
    assert!(b.stdout.contains(
        "DEBUG: Worker thread (#0) started\nDEBUG: Worker thread (#0) initialized\nThreads started!\n"
    ));
    assert!(b
        .stdout
        .contains("Time limit exceeded, exiting...\nDone.\n"));
    assert!(!b.stdout.contains("Executing request"));
}

#[test]
fn repeated_lines_are_folded_right_after_the_line_they_repeat() {
    need_sysbench!();
    // One file of one block: every sequential read is the same request line.
    let setup: &[&str] = &["fileio", "--file-total-size=16K", "--file-num=1", "prepare"];
    let args = words(
        &[
            "fileio",
            "--file-total-size=16K",
            "--file-num=1",
            "--file-test-mode=seqrd",
        ],
        &["--events=5", "--debug"],
    );
    let (a, b, _d1, _d2) = side_by_side(&[setup], &args);
    assert_eq!((a.code, b.code), (0, 0), "{}{}", b.stdout, b.stderr);
    let expected = [
        "Threads started!",
        "",
        "DEBUG: Executing request, operation: 1, file_id: 0, pos: 0, size: 16384",
        "(last message repeated 4 times)",
        "Event limit exceeded, exiting...",
        "Done.",
        "",
        "",
        "File operations:",
    ];
    assert_eq!(
        span(&a.stdout, "Threads started!", "File operations:"),
        expected
    );
    assert_eq!(
        span(&b.stdout, "Threads started!", "File operations:"),
        expected
    );
    assert_eq!(b.stdout.matches("(last message repeated").count(), 1);
}

#[test]
fn debug_positions_past_2_gib_print_as_sysbench_prints_them() {
    need_sysbench!();
    for size in ["3G", "6G"] {
        let total = format!("--file-total-size={size}");
        let d_sb = scratch();
        let d_tb = scratch();
        // Sparse: the run only checks the size and reads holes.
        for d in [d_sb.path(), d_tb.path()] {
            let f = std::fs::File::create(d.join("test_file.0")).unwrap();
            f.set_len(parse_size(size)).unwrap();
        }
        for pct in ["--percentile=0", "--percentile=95"] {
            let args = words(
                &["fileio", &total, "--file-num=1", "--file-test-mode=rndrd"],
                &["--events=40", "--rand-seed=5", pct, "--debug"],
            );
            let a = run_in(&sysbench_bin().unwrap(), d_sb.path(), &args);
            let b = tb(d_tb.path(), &args);
            assert_eq!((a.code, b.code), (0, 0), "{}{}", b.stdout, b.stderr);
            let la = debug_ops(&a.stdout).3;
            let lb = debug_ops(&b.stdout).3;
            assert_eq!(la.len(), 40);
            assert_eq!(la, lb, "{size} {pct}");
            // The seed puts some offsets past 2 GiB: they print negative.
            assert!(la.iter().any(|l| l.contains("pos: -")), "{size}: {la:#?}");
        }
    }
}

fn parse_size(s: &str) -> u64 {
    let (n, unit) = s.split_at(s.len() - 1);
    let n: u64 = n.parse().unwrap();
    match unit {
        "G" => n << 30,
        "M" => n << 20,
        _ => panic!("{s}"),
    }
}

#[test]
fn verbosity_2_prints_nothing_for_a_successful_run() {
    need_sysbench!();
    // rndwr over several files with periodic fsync: tankbench has warnings to
    // give about this result, but at --verbosity=2 sysbench prints nothing.
    let args = small_run("--file-test-mode=rndwr", &["--events=300", "--verbosity=2"]);
    let (a, b, d_tb) = both_succeed_on_small_set(&args);
    assert_eq!(a.stdout, "");
    assert_eq!(b.stdout, "");
    // The warnings are still there, in the result.
    let mut json_args = args.clone();
    json_args.insert(json_args.len() - 1, "--format=json");
    let r = tb(d_tb.path(), &json_args);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "fsync_bursts"));
    // At the default verbosity they are printed.
    let mut loud = args.clone();
    loud.retain(|a| *a != "--verbosity=2");
    let r = tb(d_tb.path(), &loud);
    assert!(
        r.stdout.contains("WARNING: Every 100 requests"),
        "{}",
        r.stdout
    );
}

// ---------------------------------------------------------------------------
// Header and report layout.

#[test]
fn merging_line_is_printed_in_random_modes_too() {
    need_sysbench!();
    for mode in ["rndrd", "rndrw", "seqrd"] {
        let m = format!("--file-test-mode={mode}");
        let args = small_run(&m, &["--file-merged-requests=4", "--events=5"]);
        let (a, b, _d_tb) = both_succeed_on_small_set(&args);
        assert!(a
            .stdout
            .contains("Block size 16KiB\nMerging requests up to 64KiB for sequential IO.\n"));
        assert_eq!(
            mask(
                &span(
                    &a.stdout,
                    "Running the test with following options:",
                    "Initializing worker threads..."
                )
                .join("\n")
            ),
            mask(
                &span(
                    &b.stdout,
                    "Running the test with following options:",
                    "Initializing worker threads..."
                )
                .join("\n")
            ),
            "{mode}"
        );
    }
}

#[test]
fn checkpoint_reports_have_sysbench_blank_lines() {
    need_sysbench!();
    let args = small_run(
        "--file-test-mode=rndrd",
        &["--time=2", "--report-checkpoints=1"],
    );
    let (a, b, _d_tb) = both_succeed_on_small_set(&args);
    let expected = [
        "Threads started!",
        "",
        "[ Ns ] Checkpoint report:",
        "",
        "File operations:",
    ];
    for out in [&a.stdout, &b.stdout] {
        let lines: Vec<String> = span(out, "Threads started!", "File operations:")
            .iter()
            .map(|l| mask(l))
            .collect();
        assert_eq!(lines, expected, "{out}");
    }
    assert_eq!(mask(&a.stdout), mask(&before_additions(&b.stdout)));
}

#[test]
fn a_failure_during_the_run_still_ends_with_done() {
    need_sysbench!();
    // Files prepared without --validate fail the first checksum check.
    let args = small_run(
        "--file-test-mode=rndrd",
        &["--validate", "--events=5", "--rand-seed=3", "--verbosity=4"],
    );
    let (a, b, _d1, _d2) = side_by_side(&[SMALL_SET], &args);
    assert_eq!((a.code, b.code), (1, 1), "{}{}", b.stdout, b.stderr);
    assert_eq!(mask(&a.stdout), mask(&b.stdout));
    assert!(b.stdout.ends_with("exiting...\nDone.\n\n"), "{}", b.stdout);
}

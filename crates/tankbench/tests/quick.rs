//! `tankbench quick` under signals and bad input. SIGINT, SIGTERM and SIGHUP
//! (and a second signal) stop it, it removes the scratch directory it made and
//! nothing else, and it exits with 128 + the signal. Signals are sent at
//! moments read from its own progress lines on stderr, not after guessed
//! sleeps. Bad input is one line naming the option, exit 1, nothing made.

mod common;

use common::*;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// Only a guard against a hang, never a measure of speed.
const PATIENCE: Duration = Duration::from_secs(180);

struct Quick {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Quick {
    /// `tankbench quick DIR --size SIZE --time SECONDS` with stderr read line
    /// by line (the progress lines are printed in text mode).
    fn start(dir: &Path, size: &str, seconds: &str) -> Quick {
        Self::start_with(dir, size, seconds, None)
    }

    /// The same, started with `ignored` set to be ignored (as `nohup` does).
    fn start_with(dir: &Path, size: &str, seconds: &str, ignored: Option<i32>) -> Quick {
        let mut command = Command::new(tankbench_bin());
        if let Some(sig) = ignored {
            use std::os::unix::process::CommandExt;
            // SAFETY: only signal(2) between fork and exec.
            unsafe {
                command.pre_exec(move || {
                    libc::signal(sig, libc::SIG_IGN);
                    Ok(())
                });
            }
        }
        let mut child = command
            .args([
                "quick",
                dir.to_str().unwrap(),
                "--size",
                size,
                "--time",
                seconds,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start tankbench quick");
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Quick {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Wait for a stderr line containing `needle`.
    fn wait_for(&mut self, needle: &str) {
        loop {
            match self.lines.recv_timeout(PATIENCE) {
                Ok(line) => {
                    let found = line.contains(needle);
                    self.seen.push(line);
                    if found {
                        return;
                    }
                }
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    let _ = self.child.kill();
                    panic!("no line with {needle:?}; stderr so far: {:#?}", self.seen);
                }
            }
        }
    }

    fn signal(&self, sig: i32) {
        // SAFETY: signalling our own child (not yet reaped, so the pid is its).
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }

    /// Exit code, stdout and the whole of stderr.
    fn finish(mut self) -> (Option<i32>, String, String) {
        let mut stdout = self.child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
            s
        });
        let deadline = std::time::Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("quick did not exit; stderr: {:#?}", self.seen);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stdout = reader.join().unwrap();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        (status.code(), stdout, self.seen.join("\n"))
    }
}

/// A parent directory with files that are not quick's, including one named
/// like a test file: they must all survive.
fn parent_with_foreign_files() -> tempfile::TempDir {
    let d = scratch();
    std::fs::write(d.path().join("mine.txt"), "keep").unwrap();
    std::fs::write(d.path().join("test_file.0"), "not quick's").unwrap();
    d
}

fn assert_only_foreign_files_remain(parent: &Path, stderr: &str) {
    assert_eq!(
        testkit::dir_names(parent),
        vec!["mine.txt".to_string(), "test_file.0".to_string()],
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(parent.join("test_file.0")).unwrap(),
        "not quick's"
    );
}

#[test]
fn sigint_during_prepare_stops_it_and_removes_the_scratch_directory() {
    let d = parent_with_foreign_files();
    let mut q = Quick::start(d.path(), "1G", "5");
    q.wait_for("preparing the file set in");
    q.signal(libc::SIGINT);
    let (code, stdout, stderr) = q.finish();
    assert_eq!(code, Some(130), "{stdout}{stderr}");
    // Stopped inside prepare: no workload started.
    assert!(!stderr.contains("[1/5]"), "{stderr}");
    assert!(stderr.contains("stopped by SIGINT"), "{stderr}");
    assert!(
        !stdout.contains("ops/s"),
        "no table without results: {stdout}"
    );
    assert_only_foreign_files_remain(d.path(), &stderr);
}

#[test]
fn sighup_during_prepare_removes_the_scratch_directory() {
    let d = parent_with_foreign_files();
    let mut q = Quick::start(d.path(), "1G", "5");
    q.wait_for("preparing the file set in");
    q.signal(libc::SIGHUP);
    let (code, stdout, stderr) = q.finish();
    assert_eq!(code, Some(128 + libc::SIGHUP), "{stdout}{stderr}");
    assert!(stderr.contains("stopped by SIGHUP"), "{stderr}");
    assert_only_foreign_files_remain(d.path(), &stderr);
}

#[test]
fn sigterm_during_a_workload_reports_what_ran_and_removes_the_scratch_directory() {
    let d = parent_with_foreign_files();
    let mut q = Quick::start(d.path(), "16M", "30");
    q.wait_for("[1/5]");
    q.signal(libc::SIGTERM);
    let (code, stdout, stderr) = q.finish();
    assert_eq!(code, Some(128 + libc::SIGTERM), "{stdout}{stderr}");
    assert!(stderr.contains("stopped by SIGTERM"), "{stderr}");
    assert!(!stderr.contains("[2/5]"), "{stderr}");
    // The workload that was cut short is in the table, marked; a signal that
    // lands while its worker threads are still starting leaves nothing
    // measured, and then there is no row to show.
    let cut_short = stdout.contains("(interrupted)");
    let before_start = !stdout.contains("4K random") && stderr.contains("stopped by SIGTERM");
    assert!(cut_short || before_start, "{stdout}{stderr}");
    assert_only_foreign_files_remain(d.path(), &stderr);
}

#[test]
fn an_ignored_sighup_stays_ignored_as_under_nohup() {
    let d = parent_with_foreign_files();
    let mut q = Quick::start_with(d.path(), "16M", "30", Some(libc::SIGHUP));
    q.wait_for("[1/5]");
    q.signal(libc::SIGHUP);
    // Still running: the hangup changed nothing, so a later SIGTERM is what
    // stops it.
    q.signal(libc::SIGTERM);
    let (code, stdout, stderr) = q.finish();
    assert_eq!(code, Some(128 + libc::SIGTERM), "{stdout}{stderr}");
    assert!(stderr.contains("stopped by SIGTERM"), "{stderr}");
    assert_only_foreign_files_remain(d.path(), &stderr);
}

#[test]
fn a_second_sigint_stops_at_once_and_still_removes_the_scratch_directory() {
    let d = parent_with_foreign_files();
    let mut q = Quick::start(d.path(), "16M", "30");
    q.wait_for("[1/5]");
    q.signal(libc::SIGINT);
    // The first signal is acknowledged by the handler itself.
    q.wait_for("a second signal stops at once");
    // quick may already be gone (its own cleanup was quick); the child is not
    // reaped yet, so the pid is still ours either way.
    q.signal(libc::SIGINT);
    let (code, stdout, stderr) = q.finish();
    assert_eq!(code, Some(130), "{stdout}{stderr}");
    assert_only_foreign_files_remain(d.path(), &stderr);
}

#[test]
fn bad_sizes_and_times_are_refused_before_anything_is_made() {
    let d = parent_with_foreign_files();
    let dir = d.path().to_str().unwrap();
    let cases: [(&[&str], &str); 7] = [
        // Far more than any disk: it must not start filling this one.
        (&["--size", "1000000T"], "--size 1000000T"),
        (
            &["--size", "99999999999999999999T"],
            "--size 99999999999999999999T",
        ),
        (&["--size", "-1"], "--size"),
        // --time is checked before --size, so the size that is no size
        // after it keeps anything from starting if the time were taken.
        (&["--time", "0", "--size", "0"], "--time=0"),
        (&["--time", "-1", "--size", "0"], "--time"),
        (&["--time", "86400", "--size", "0"], "--time=86400"),
        (&["--time", "2h", "--size", "0"], "--time=2h"),
    ];
    for (args, needle) in cases {
        let r = tb(d.path(), &[&["quick", dir][..], args].concat());
        assert_eq!(r.code, 1, "{args:?}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(needle), "{args:?}: {}", r.stderr);
        assert_only_foreign_files_remain(d.path(), &r.stderr);
    }
    // The free-space refusal says how much would fit.
    let r = tb(d.path(), &["quick", dir, "--size", "1000000T"]);
    assert!(
        r.stderr.contains("free space") && r.stderr.contains("accepted there: up to"),
        "{}",
        r.stderr
    );
}

#[test]
fn quick_takes_durations_tags_warnings_and_shows_the_commit() {
    // `--time 1s` in the one duration syntax; each warning names its
    // workloads and hints in quick's own options; the NAS row has its
    // commit latency and every latency reads in µs below 1 ms.
    let d = parent_with_foreign_files();
    let dir = d.path().to_str().unwrap();
    let r = tb(d.path(), &["quick", dir, "--time", "1s", "--size", "8M"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("1 s per workload"), "{}", r.stdout);
    let header = r
        .stdout
        .lines()
        .find(|l| l.starts_with("workload"))
        .unwrap();
    assert!(
        header.contains("commit") && !header.contains(" ms"),
        "{header}"
    );
    let nas = r.stdout.lines().find(|l| l.contains("NAS test")).unwrap();
    assert!(nas.contains("µs") || nas.contains("ms"), "{nas}");
    let warnings: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("WARNING"))
        .collect();
    // An 8 MiB file set always fits in RAM: the cache warning is there.
    assert!(!warnings.is_empty(), "{}", r.stdout);
    for w in warnings {
        assert!(w.starts_with("WARNING (workload"), "{w}");
    }
    for foreign in ["--drop-caches", "--warmup", "--file-total-size"] {
        assert!(!r.stdout.contains(foreign), "{foreign}: {}", r.stdout);
    }
    assert_only_foreign_files_remain(d.path(), &r.stderr);
}

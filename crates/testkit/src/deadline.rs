//! Commands a test runs, with a deadline.
//!
//! A command that never ends — a FUSE request a wedged zfs-fuse daemon never
//! answers, a peer that stops replying — would otherwise stall the whole
//! suite until CI's own limit, with nothing on record to say where. Run
//! through [`output`], it is killed at the deadline and the test fails with
//! the command, what it printed so far, and the processes the kernel holds
//! waiting (state D, with their wait channel): where a hang is.

use std::io::Read;
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Seconds one command may take; `TANKBENCH_TEST_COMMAND_TIMEOUT` overrides.
pub const COMMAND_TIMEOUT_VAR: &str = "TANKBENCH_TEST_COMMAND_TIMEOUT";

/// The longest run of any single command in the suite is a lab matrix of a
/// few minutes; ten minutes is well past it and far inside CI's limit.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// How long one command may run before the test that ran it fails.
pub fn command_timeout() -> Duration {
    match std::env::var(COMMAND_TIMEOUT_VAR) {
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(s) if s > 0 => Duration::from_secs(s),
            _ => panic!("{COMMAND_TIMEOUT_VAR}={v}: accepted: a whole number of seconds from 1 up"),
        },
        Err(_) => DEFAULT_TIMEOUT,
    }
}

/// Like [`Command::output`] (stdin empty, stdout and stderr captured), with
/// [`command_timeout`] as the deadline. Panics at the deadline, after
/// killing the command, with what is needed to find the hang.
pub fn output(cmd: &mut Command) -> std::io::Result<Output> {
    output_within(cmd, command_timeout())
}

/// [`output`] with an explicit deadline.
pub fn output_within(cmd: &mut Command, limit: Duration) -> std::io::Result<Output> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Readers collect into shared buffers: after a kill, a grandchild may
    // still hold a pipe open, so what was read must be usable without
    // joining them.
    let collect = |pipe: Option<Box<dyn Read + Send>>| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&buf);
        let reader = pipe.map(|mut p| {
            std::thread::spawn(move || {
                let mut chunk = [0u8; 8192];
                while let Ok(n) = p.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    sink.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend_from_slice(&chunk[..n]);
                }
            })
        });
        (buf, reader)
    };
    let (stdout, out_reader) = collect(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let (stderr, err_reader) = collect(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + limit;
    let status: ExitStatus = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            let waiting = processes_waiting_in_the_kernel();
            let _ = child.kill();
            let _ = child.wait();
            let text = |b: &Arc<Mutex<Vec<u8>>>| {
                String::from_utf8_lossy(&b.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
            };
            panic!(
                "{cmd:?} did not finish within {} s (killed; {COMMAND_TIMEOUT_VAR} sets the limit)\n\
                 processes waiting in the kernel:\n{waiting}\n--- its stdout so far ---\n{}\n--- its stderr so far ---\n{}",
                limit.as_secs(),
                text(&stdout),
                text(&stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    for r in [out_reader, err_reader].into_iter().flatten() {
        let _ = r.join();
    }
    let take =
        |b: Arc<Mutex<Vec<u8>>>| std::mem::take(&mut *b.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(Output {
        status,
        stdout: take(stdout),
        stderr: take(stderr),
    })
}

/// Every process in uninterruptible sleep (state D), one line each: pid,
/// wait channel and command line. Empty when there is none or /proc is
/// unreadable.
fn processes_waiting_in_the_kernel() -> String {
    let mut lines = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return String::new();
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The state follows the parenthesised command name, which may hold
        // spaces and parentheses itself.
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        if state != Some('D') {
            continue;
        }
        let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| {
                String::from_utf8_lossy(&b)
                    .replace('\0', " ")
                    .trim()
                    .to_string()
            })
            .unwrap_or_default();
        lines.push(format!("  {pid} [{wchan}] {cmdline}"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_ends_gives_its_output() {
        let out = output_within(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
        assert_eq!(out.status.code(), Some(3));
    }

    #[test]
    fn a_command_past_its_deadline_is_killed_and_the_test_fails_saying_so() {
        let started = Instant::now();
        let caught = std::panic::catch_unwind(|| {
            output_within(
                Command::new("sh").args(["-c", "echo begun; exec sleep 30"]),
                Duration::from_millis(300),
            )
        });
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "not killed at the deadline"
        );
        let message = caught
            .expect_err("the deadline must fail the test")
            .downcast::<String>()
            .map(|s| *s)
            .unwrap_or_default();
        assert!(message.contains("did not finish within 0 s"), "{message}");
        assert!(message.contains("begun"), "partial output kept: {message}");
    }
}

//! What a person sees on a terminal, through the real binary under a pseudo
//! terminal of 80 and of 120 columns (openpty, the same kernel path a
//! terminal emulator uses): no line wider than the terminal unless the
//! table under it says what it left out; colour only on a terminal and
//! never under NO_COLOR; progress only on a terminal's stderr. The same
//! commands in a pipe keep every column, every line whole and no escape.

mod common;

use common::{example_system, tankbench_bin, tb};
use std::io::Read as _;
use std::os::fd::{FromRawFd as _, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};

/// What a run under a pseudo terminal printed.
struct Screen {
    /// What the terminal showed (stdout, and stderr where it went there),
    /// the terminal's `\r\n` read as `\n`.
    shown: String,
    /// stderr when it went to a pipe instead.
    stderr: String,
    code: i32,
}

/// Where a run's stderr goes.
#[derive(Clone, Copy, PartialEq)]
enum Stderr {
    Terminal,
    Pipe,
}

/// Held from opening a terminal until its child has its copies: a child
/// another test starts in between must not inherit them.
static PTYS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A pseudo terminal `columns` wide: (master, slave).
fn open_pty(columns: u16) -> (OwnedFd, OwnedFd) {
    let mut master = -1;
    let mut slave = -1;
    let size = libc::winsize {
        ws_row: 40,
        ws_col: columns,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty fills the two descriptors it opens; the size is ours.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
    // Not inherited by the children other tests start meanwhile: the
    // terminal reads EOF only once every copy of its other end is closed.
    for fd in [master, slave] {
        // SAFETY: fcntl on descriptors we own.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    // SAFETY: both descriptors were just opened and are owned here alone.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// `tankbench ARGS` in `dir` with stdout on a terminal `columns` wide.
fn on_terminal(
    dir: &Path,
    columns: u16,
    args: &[&str],
    env: &[(&str, &str)],
    stderr: Stderr,
) -> Screen {
    // One terminal opened and handed out at a time (see open_pty).
    let guard = PTYS.lock().unwrap_or_else(|e| e.into_inner());
    let (master, slave) = open_pty(columns);
    let mut cmd = Command::new(tankbench_bin());
    cmd.args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR")
        .env_remove("COLUMNS")
        .env("TERM", "xterm-256color")
        .stdin(Stdio::null())
        .stdout(slave.try_clone().expect("dup the terminal"));
    match stderr {
        Stderr::Terminal => cmd.stderr(slave.try_clone().expect("dup the terminal")),
        Stderr::Pipe => cmd.stderr(Stdio::piped()),
    };
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start tankbench");
    // The terminal reads EOF (EIO) once every copy of its other end is
    // closed: the command holds the copies it handed the child.
    drop(cmd);
    drop(slave);
    drop(guard);
    let mut err_pipe = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(p) = err_pipe.as_mut() {
            let _ = p.read_to_string(&mut text);
        }
        text
    });
    let mut terminal = std::fs::File::from(master);
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match terminal.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
        }
    }
    let status = child.wait().expect("wait for tankbench");
    Screen {
        shown: String::from_utf8_lossy(&bytes).replace("\r\n", "\n"),
        stderr: err_reader.join().expect("stderr reader"),
        code: status.code().unwrap_or(-1),
    }
}

/// `text` without colour escapes, and each redrawn line (`\r`, erase) as
/// its last frame: what stays on the screen.
fn as_seen(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ parameters final-byte.
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        if c == '\r' {
            // A redraw: the line so far is replaced.
            let start = out.rfind('\n').map_or(0, |i| i + 1);
            out.truncate(start);
            continue;
        }
        out.push(c);
    }
    out
}

/// Every line of what a terminal `columns` wide shows fits it, unless a
/// table note says columns were left out (a table whose first column alone
/// is wider); the note itself wraps like any prose.
fn assert_fits(what: &str, shown: &str, columns: usize) {
    let seen = as_seen(shown);
    let says_left_out = seen.contains(&format!("Left out to fit {columns} columns"));
    for line in seen.lines() {
        let width = line.chars().count();
        assert!(
            width <= columns || says_left_out,
            "{what}: a line of {width} characters on a terminal of {columns}:\n{line}\n\n{seen}"
        );
    }
}

/// The widest line of a text.
fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("scratch directory")
}

/// A two-cell matrix of the reference NAS (log device or none), short and
/// with a few interval samples, so a debug build predicts it in seconds.
fn small_matrix(dir: &Path) -> String {
    let path = dir.join("m.toml");
    std::fs::write(
        &path,
        format!(
            "system = {:?}\n\
             workload = [\"--file-total-size=64M\", \"--file-test-mode=rndrw\", \"--file-block-size=4K\",\n\
             \"--threads=4\", \"--file-fsync-all\", \"--time=2\", \"--rand-seed=1\"]\n\
             [[axis]]\nkey = \"log\"\nvalues = [\"none\", \"ssd-sata\"]\n\
             [[axis]]\nkey = \"layout\"\nvalues = [\"1xraidz3-24\", \"3xraidz2-8\"]\n",
            example_system("reference-nas.toml")
        ),
    )
    .expect("write the matrix");
    path.to_string_lossy().into_owned()
}

#[test]
fn plan_and_its_help_fit_80_and_120_columns_and_keep_every_column_in_a_pipe() {
    let d = scratch();
    let plan = [
        "plan", "--disks", "24x8TB", "--log", "10GB", "--link", "2x10G",
    ];
    for columns in [80u16, 120] {
        let s = on_terminal(d.path(), columns, &plan, &[], Stderr::Pipe);
        assert_eq!(s.code, 0, "{}{}", s.shown, s.stderr);
        assert_fits("plan", &s.shown, columns.into());
        let help = on_terminal(d.path(), columns, &["plan", "--help"], &[], Stderr::Pipe);
        assert_eq!(help.code, 0, "{}", help.shown);
        assert_fits("plan --help", &help.shown, columns.into());
    }
    let narrow = as_seen(&on_terminal(d.path(), 80, &plan, &[], Stderr::Pipe).shown);
    assert!(narrow.contains("Left out to fit 80 columns: "), "{narrow}");
    assert!(
        narrow.contains("Commit ms, log"),
        "the log device's column stays: {narrow}"
    );
    let piped = tb(d.path(), &plan);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert!(!piped.stdout.contains("Left out"), "{}", piped.stdout);
    assert!(piped.stdout.contains("Score"), "{}", piped.stdout);
    assert!(widest(&piped.stdout) > 80, "a pipe keeps the wide table");
}

#[test]
fn a_matrix_its_stored_results_and_a_comparison_fit_and_say_what_they_left_out() {
    let d = scratch();
    let matrix = small_matrix(d.path());
    let saved = tb(
        d.path(),
        &["simulate", "matrix", &matrix, "--samples=4", "--save=store"],
    );
    assert_eq!(saved.code, 0, "{}", saved.stderr);
    // In a pipe: every column with its interval, the notes one line each.
    assert!(widest(&saved.stdout) > 120, "{}", saved.stdout);
    assert!(saved.stdout.contains("p95 ms"), "{}", saved.stdout);
    assert!(!saved.stdout.contains("Left out"), "{}", saved.stdout);
    let results = tb(d.path(), &["results", "store"]);
    assert!(widest(&results.stdout) > 120, "{}", results.stdout);
    for columns in [80u16, 120] {
        let width = usize::from(columns);
        let m = on_terminal(
            d.path(),
            columns,
            &["simulate", "matrix", &matrix, "--samples=4"],
            &[],
            Stderr::Terminal,
        );
        assert_eq!(m.code, 0, "{}", m.shown);
        assert_fits("simulate matrix", &m.shown, width);
        let seen = as_seen(&m.shown);
        assert!(seen.contains(&format!("to fit {width} columns")), "{seen}");
        let r = on_terminal(d.path(), columns, &["results", "store"], &[], Stderr::Pipe);
        assert_eq!(r.code, 0, "{}{}", r.shown, r.stderr);
        assert_fits("results", &r.shown, width);
        let seen = as_seen(&r.shown);
        assert!(seen.contains("id: cut to 24 characters"), "{seen}");
        // The id shown is a prefix `compare` takes.
        let id = seen
            .lines()
            .nth(2)
            .and_then(|l| l.split('…').next())
            .unwrap();
        let c = on_terminal(
            d.path(),
            columns,
            &["compare", id, "log=ssd-sata", "--dir", "store"],
            &[],
            Stderr::Pipe,
        );
        assert_fits("compare", &c.shown, width);
    }
}

#[test]
fn colour_only_on_a_terminal_and_never_under_no_color() {
    let d = scratch();
    let matrix = small_matrix(d.path());
    let saved = tb(
        d.path(),
        &["simulate", "matrix", &matrix, "--samples=4", "--save=store"],
    );
    assert_eq!(saved.code, 0, "{}", saved.stderr);
    let compare = [
        "compare",
        "log=none,layout=1xraidz3-24",
        "log=ssd-sata,layout=1xraidz3-24",
        "--dir",
        "store",
    ];
    let coloured = on_terminal(d.path(), 120, &compare, &[], Stderr::Pipe);
    assert_eq!(coloured.code, 0, "{}{}", coloured.shown, coloured.stderr);
    assert!(
        coloured.shown.contains("\x1b[32mbetter\x1b[0m"),
        "better in green: {:?}",
        coloured.shown
    );
    let banner = on_terminal(
        d.path(),
        120,
        &["simulate", "matrix", &matrix, "--samples=2"],
        &[],
        Stderr::Pipe,
    );
    assert!(
        banner.shown.contains("PREDICTION\x1b[0m (simulated"),
        "the banner coloured: {:?}",
        banner.shown
    );
    let no_color = on_terminal(d.path(), 120, &compare, &[("NO_COLOR", "1")], Stderr::Pipe);
    assert!(no_color.shown.contains("better"), "{}", no_color.shown);
    assert!(!no_color.shown.contains('\x1b'), "{:?}", no_color.shown);
    let piped = tb(d.path(), &compare);
    assert!(piped.stdout.contains("better"), "{}", piped.stdout);
    assert!(!piped.stdout.contains('\x1b'), "{:?}", piped.stdout);
    // CLICOLOR_FORCE asks for colour in a pipe too.
    let forced = testkit::output(
        Command::new(tankbench_bin())
            .args(compare)
            .current_dir(d.path())
            .env_remove("NO_COLOR")
            .env("CLICOLOR_FORCE", "1"),
    )
    .expect("run tankbench");
    let forced = String::from_utf8_lossy(&forced.stdout);
    assert!(forced.contains("\x1b[32mbetter"), "{forced:?}");
}

#[test]
fn progress_only_on_a_terminal_s_stderr() {
    let d = scratch();
    let matrix = small_matrix(d.path());
    let on_tty = on_terminal(
        d.path(),
        80,
        &["simulate", "matrix", &matrix, "--samples=4"],
        &[],
        Stderr::Terminal,
    );
    assert_eq!(on_tty.code, 0, "{}", on_tty.shown);
    assert!(on_tty.shown.contains("] 100%"), "a bar: {:?}", on_tty.shown);
    assert!(
        on_tty.shown.contains(" left  "),
        "the time left: {:?}",
        on_tty.shown
    );
    // The bar is taken off: what stays is the table and its notes.
    assert!(
        !as_seen(&on_tty.shown).contains("100%"),
        "{}",
        as_seen(&on_tty.shown)
    );
    let piped = tb(d.path(), &["simulate", "matrix", &matrix, "--samples=4"]);
    assert!(!piped.stderr.contains('\r'), "{:?}", piped.stderr);
    assert!(!piped.stderr.contains('%'), "{:?}", piped.stderr);
    // Stdout on a terminal, stderr in a pipe: no bar either.
    let split = on_terminal(
        d.path(),
        80,
        &["simulate", "matrix", &matrix, "--samples=4"],
        &[],
        Stderr::Pipe,
    );
    assert!(!split.stderr.contains('%'), "{:?}", split.stderr);
}

#[test]
fn the_live_line_shows_the_last_second_and_says_once_that_the_run_drains() {
    let d = scratch();
    let files = ["--file-total-size=4M", "--file-num=2"];
    let prepare: Vec<&str> = ["fileio"]
        .into_iter()
        .chain(files)
        .chain(["prepare"])
        .collect();
    assert_eq!(tb(d.path(), &prepare).code, 0);
    let run: Vec<&str> = ["fileio"]
        .into_iter()
        .chain(files)
        .chain(["--file-test-mode=rndrw", "--time=3", "--threads=2", "run"])
        .collect();
    let s = on_terminal(d.path(), 80, &run, &[], Stderr::Terminal);
    assert_eq!(s.code, 0, "{}", s.shown);
    assert!(s.shown.contains("(last second)"), "{:?}", s.shown);
    assert!(s.shown.contains("ops/s"), "{:?}", s.shown);
    assert!(
        s.shown.matches("time limit reached").count() <= 1,
        "the draining frame is drawn once: {:?}",
        s.shown
    );
    assert!(!s.shown.contains("0s left"), "{:?}", s.shown);
    // The live frames fit the terminal (one row, redrawn in place).
    for frame in s
        .shown
        .split(['\r', '\n'])
        .filter(|f| f.contains("(last second)") || f.contains("time limit reached"))
    {
        assert!(as_seen(frame).chars().count() < 80, "{frame:?}");
    }
    // In a pipe: no live line at all (sysbench's bytes).
    let piped = tb(d.path(), &run);
    assert!(!piped.stderr.contains("ops/s"), "{:?}", piped.stderr);
    assert!(!piped.stdout.contains('\x1b'), "{:?}", piped.stdout);
}

#[test]
fn quick_on_a_terminal_shows_a_bar_and_wraps_its_warnings_to_fit() {
    let d = scratch();
    for columns in [80u16, 120] {
        let s = on_terminal(
            d.path(),
            columns,
            &["quick", ".", "--size", "16M", "--time", "1s"],
            &[],
            Stderr::Terminal,
        );
        assert_eq!(s.code, 0, "{}", s.shown);
        assert!(s.shown.contains("workload 5/5"), "the bar: {:?}", s.shown);
        assert_fits("quick", &s.shown, columns.into());
        // Every frame of the bar fits too.
        for frame in s.shown.split(['\r', '\n']) {
            assert!(
                as_seen(frame).chars().count() <= usize::from(columns),
                "{frame:?}"
            );
        }
    }
    // In a pipe the warnings stay one line each.
    let piped = tb(d.path(), &["quick", ".", "--size", "16M", "--time", "1s"]);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    for line in piped.stdout.lines().filter(|l| l.starts_with("WARNING")) {
        assert!(line.contains(": "), "{line}");
    }
    assert!(
        !piped.stderr.contains('%'),
        "no bar in a pipe: {:?}",
        piped.stderr
    );
}

//! `tankbench quick`: a one-command benchmark for newcomers. It makes its own
//! scratch directory, prepares one file set, runs a short suite that starts with
//! the reference user's sysbench workload, removes everything it created, and
//! returns one result per workload.

use crate::console::Console;
use crate::options::{Action, Command, Failure, GeneralOptions};
use crate::result::RunResult;
use crate::run::fileset::PrepareObserver;
use crate::sysbench::args::ParsedArgs;
use crate::sysbench::cli::run_workload_quietly;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering::SeqCst};

/// One workload of the suite.
pub struct QuickCase {
    pub name: &'static str,
    /// sysbench-style options (the file set options are added).
    pub options: &'static [&'static str],
}

/// The suite: what a storage admin asks first.
pub const SUITE: &[QuickCase] = &[
    QuickCase {
        name: "4K random r/w, fsync every write, 4 threads (sysbench NAS test)",
        options: &[
            "--file-test-mode=rndrw",
            "--file-block-size=4K",
            "--threads=4",
            "--file-fsync-all",
        ],
    },
    QuickCase {
        name: "4K random read, 4 threads",
        options: &[
            "--file-test-mode=rndrd",
            "--file-block-size=4K",
            "--threads=4",
        ],
    },
    QuickCase {
        name: "4K random write, no fsync, 4 threads",
        options: &[
            "--file-test-mode=rndwr",
            "--file-block-size=4K",
            "--threads=4",
            "--file-fsync-freq=0",
        ],
    },
    QuickCase {
        name: "1M sequential rewrite, 1 thread",
        options: &[
            "--file-test-mode=seqrewr",
            "--file-block-size=1M",
            "--file-fsync-freq=0",
        ],
    },
    QuickCase {
        name: "1M sequential read, 1 thread",
        options: &["--file-test-mode=seqrd", "--file-block-size=1M"],
    },
];

/// Settings of a quick run.
pub struct QuickSettings {
    /// Directory under which the scratch directory is made.
    pub parent: PathBuf,
    /// File set size, e.g. "1G".
    pub size: String,
    /// Seconds per workload.
    pub seconds: u64,
}

/// Files of the suite's file set (`--file-num`).
const FILE_NUM: u64 = 16;

/// What quick is doing, for a progress line.
pub enum Step<'a> {
    /// Writing the file set into the scratch directory.
    Prepare { dir: &'a Path },
    /// RunSpec `index` of [`SUITE`] starts.
    Case { index: usize, case: &'a QuickCase },
    /// Workload `index` has run for `elapsed` (a few times a second).
    Running {
        index: usize,
        elapsed: std::time::Duration,
    },
}

/// What a quick run produced.
pub struct QuickOutcome {
    /// One result per workload that ran; an interrupted workload's result is
    /// last and marked `interrupted`.
    pub results: Vec<(String, RunResult)>,
    /// The signal that stopped the run early (SIGINT, SIGTERM or SIGHUP).
    pub stopped_by: Option<i32>,
}

impl QuickOutcome {
    /// The exit status: 0, or 128 + the signal that stopped the run, the
    /// shell's convention (130 for Ctrl-C, as `fileio run` uses).
    pub fn exit_code(&self) -> i32 {
        self.stopped_by.map(|sig| 128 + sig).unwrap_or(0)
    }
}

// --- Signals ---------------------------------------------------------------
//
// quick owns a scratch directory full of large files, so no stop signal may
// leave it behind. The first SIGINT, SIGTERM or SIGHUP asks every step to
// stop (prepare between chunks, a run at its next tick); the main thread then
// removes the directory and quick exits with 128 + that signal. A second
// signal means "now": the handler itself unlinks the files and the directory
// (unlink, rmdir, write and _exit are async-signal-safe, signal-safety(7))
// and exits, even if the main thread is stuck in a long fsync.

/// What the handler removes on a second signal: set only while a scratch
/// directory of ours exists. The lists are leaked, never freed, so a handler
/// running on another thread can never read freed memory.
static CLEANUP: AtomicPtr<CleanupPaths> = AtomicPtr::new(std::ptr::null_mut());

struct CleanupPaths {
    files: Vec<CString>,
    dir: CString,
}

/// Write to stderr from a signal handler (errors ignored: after SIGHUP the
/// terminal may be gone).
fn note(text: &[u8]) {
    // SAFETY: write(2) is async-signal-safe; the buffer is static.
    unsafe {
        libc::write(2, text.as_ptr() as *const libc::c_void, text.len());
    }
}

extern "C" fn on_first_signal(_sig: libc::c_int) {
    note(b"\ntankbench quick: stopping; removing the scratch directory (a second signal stops at once)\n");
}

extern "C" fn on_second_signal(sig: libc::c_int) {
    note(b"tankbench quick: second signal: removing the scratch directory now\n");
    let paths = CLEANUP.load(SeqCst);
    let first = crate::signals::stop_signal().unwrap_or(sig);
    // SAFETY: only async-signal-safe calls; `paths` is null or a leaked,
    // never-freed list.
    unsafe {
        if let Some(p) = paths.as_ref() {
            for f in &p.files {
                libc::unlink(f.as_ptr());
            }
            libc::rmdir(p.dir.as_ptr());
        }
        libc::_exit(128 + first);
    }
}

/// Route SIGINT, SIGTERM and SIGHUP through [`crate::signals`]'s policy
/// (an ignored signal stays ignored: `nohup tankbench quick` must survive
/// the hangup) with quick's own actions: a note on the first signal, and on
/// a second the scratch directory removed before the process exits with
/// 128 + the first signal. Installed before any run, so a run keeps them.
pub fn install_signal_handlers() {
    crate::signals::StopHandlers::new()
        .on_first(on_first_signal)
        .on_second(on_second_signal)
        .install();
}

/// The signal that asked quick to stop, if any. A stop requested without a
/// signal counts as SIGINT.
fn stop_signal() -> Option<i32> {
    crate::signals::stop_signal()
        .or_else(|| crate::signals::stop_requested().then_some(libc::SIGINT))
}

/// Block (or unblock) the stop signals in this thread, so that making the
/// scratch directory and registering it for the handler happen as one step.
fn block_stop_signals(block: bool) {
    // SAFETY: plain signal mask manipulation of the calling thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in crate::signals::STOP_SIGNALS {
            libc::sigaddset(&mut set, sig);
        }
        let how = if block {
            libc::SIG_BLOCK
        } else {
            libc::SIG_UNBLOCK
        };
        libc::pthread_sigmask(how, &set, std::ptr::null_mut());
    }
}

/// A scratch directory that quick created, removed with its contents on drop:
/// only the test files quick writes there, then the directory (which stays if
/// someone else put a file in it).
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// Make `dir` (it must not exist: an existing directory is not ours) and
    /// register it for the second-signal cleanup.
    fn create(dir: PathBuf) -> Result<Scratch, Failure> {
        let cpath = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
        let files: Option<Vec<CString>> = (0..FILE_NUM)
            .map(|i| cpath(&dir.join(crate::spec::file_name(i))))
            .collect();
        let (Some(files), Some(cdir)) = (files, cpath(&dir)) else {
            return Err(Failure::fatal(format!(
                "quick: '{}' contains a NUL byte",
                dir.display()
            )));
        };
        block_stop_signals(true);
        let made = std::fs::create_dir(&dir);
        if made.is_ok() {
            let paths = Box::new(CleanupPaths { files, dir: cdir });
            CLEANUP.store(Box::into_raw(paths), SeqCst);
        }
        block_stop_signals(false);
        made.map_err(|e| Failure::fatal(format!("quick: cannot create '{}': {e}", dir.display())))?;
        Ok(Scratch { dir })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for i in 0..FILE_NUM {
            let _ = std::fs::remove_file(self.dir.join(crate::spec::file_name(i)));
        }
        let _ = std::fs::remove_dir(&self.dir);
        CLEANUP.store(std::ptr::null_mut(), SeqCst);
    }
}

/// Prepare stops between chunks once a stop signal has arrived.
struct StopOnSignal;

impl PrepareObserver for StopOnSignal {
    fn stop_requested(&mut self) -> bool {
        stop_signal().is_some()
    }
}

/// quick leaves this share of the free space untouched, so the file system
/// stays usable for everything else on it while the benchmark runs.
const FREE_SPACE_KEPT: u64 = 10;

/// The file set must fit in the free space of `parent`, less a tenth: a
/// newcomer's `--size 1T` (or a typo like `100000G`) must not fill the disk.
fn check_free_space(parent: &Path, size_text: &str, bytes: u64) -> Result<(), Failure> {
    let Ok(c) = CString::new(parent.as_os_str().as_bytes()) else {
        return Ok(());
    };
    // SAFETY: statvfs(3) fills the zeroed struct we own.
    let free = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            // Unknown: prepare reports a full disk itself.
            return Ok(());
        }
        (st.f_bavail as u64).saturating_mul(st.f_frsize as u64)
    };
    let usable = free - free / FREE_SPACE_KEPT;
    if bytes > usable {
        return Err(Failure::fatal(format!(
            "--size {size_text}: {bytes} bytes do not fit in the free space of {} ({:.1} GiB free; quick keeps a tenth of it free); accepted there: up to {}M",
            parent.display(),
            free as f64 / (1u64 << 30) as f64,
            usable >> 20
        )));
    }
    Ok(())
}

fn words(dir: &Path, size: &str, seconds: u64, extra: &[&str]) -> Vec<String> {
    let mut v = vec![
        "fileio".to_string(),
        format!("--file-dir={}", dir.display()),
        format!("--file-total-size={size}"),
        format!("--file-num={FILE_NUM}"),
        format!("--time={seconds}"),
        "--percentiles=50,95,99,99.9".to_string(),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn parse(words: &[String], command: Command) -> Result<(Action, GeneralOptions), Failure> {
    let mut a = ParsedArgs::parse(words);
    if let Some(u) = a.unknown.first() {
        return Err(Failure::fatal(format!("invalid option: {u}")));
    }
    let g = GeneralOptions::from_args(&mut a)?;
    let action = Action::from_args(&a, &g, command)?;
    Ok((action, g))
}

/// Run the suite; `on_step` is told when prepare and each workload start,
/// and a few times a second how long the workload has run (from the run's
/// supervising loop, hence `Sync`). Whatever happens (an error, a stop
/// signal), the scratch directory and its files are gone when this returns.
pub fn run(
    settings: &QuickSettings,
    on_step: &(dyn Fn(Step) + Sync),
) -> Result<QuickOutcome, Failure> {
    if !settings.parent.is_dir() {
        return Err(Failure::fatal(format!(
            "quick: directory '{}' does not exist",
            settings.parent.display()
        )));
    }
    let dir = settings
        .parent
        .join(format!("tankbench-quick-{}", std::process::id()));
    // Checked before anything is made: a bad size must cost nothing.
    let prep = match parse(
        &words(&dir, &settings.size, settings.seconds, &[]),
        Command::Prepare,
    )? {
        (Action::Prepare(files), _) => files,
        (_, _) => {
            return Err(Failure::fatal(
                "quick: the prepare step did not parse as one",
            ))
        }
    };
    prep.check_not_empty()?;
    check_free_space(
        &settings.parent,
        &settings.size,
        prep.file_num * prep.file_size,
    )?;
    let scratch = Scratch::create(dir)?;
    let mut outcome = QuickOutcome {
        results: Vec::new(),
        stopped_by: None,
    };
    if let Some(sig) = stop_signal() {
        outcome.stopped_by = Some(sig);
        return Ok(outcome);
    }
    on_step(Step::Prepare { dir: &scratch.dir });
    let prepared = crate::run::fileset::prepare(&prep, &mut |_| {}, &mut StopOnSignal)?;
    if prepared.stopped {
        outcome.stopped_by = stop_signal();
        return Ok(outcome);
    }
    let quiet = Console::new(0, false);
    for (index, case) in SUITE.iter().enumerate() {
        if let Some(sig) = stop_signal() {
            outcome.stopped_by = Some(sig);
            break;
        }
        on_step(Step::Case { index, case });
        let (w, g) = match parse(
            &words(&scratch.dir, &settings.size, settings.seconds, case.options),
            Command::Run,
        )? {
            (Action::Run(spec), g) => (spec, g),
            (_, _) => return Err(Failure::fatal("quick: a case did not parse as a run")),
        };
        let running = |elapsed| on_step(Step::Running { index, elapsed });
        let mut r = match run_workload_quietly(&quiet, &w, &g, &running) {
            Ok(r) => r,
            // A signal while the workers were starting: nothing of this
            // workload was measured, and quick stops like any other time.
            Err(_) if stop_signal().is_some() => {
                outcome.stopped_by = stop_signal();
                break;
            }
            Err(f) => return Err(f),
        };
        r.labels.insert("suite".into(), "quick".into());
        r.labels.insert("case".into(), case.name.into());
        let interrupted = r.interrupted;
        outcome.results.push((case.name.to_string(), r));
        if interrupted {
            outcome.stopped_by = stop_signal().or(Some(libc::SIGINT));
            break;
        }
    }
    drop(scratch);
    Ok(outcome)
}

// --- Warnings in quick's words -----------------------------------------------

/// A warning as quick shows it: one per kind, tagged with the workloads that
/// raised it (1-based, in [`SUITE`] order), the message of the first of them
/// (its figures), and a hint in quick's own options where the run's hint
/// names options quick does not take.
#[derive(Debug, Clone, PartialEq)]
pub struct QuickWarning {
    pub workloads: Vec<usize>,
    pub message: String,
    pub hint: String,
}

impl QuickWarning {
    /// `WARNING (workload 3): …` or `WARNING (workloads 1, 3; figures of 1): …`,
    /// then the hint on its own line.
    pub fn text(&self) -> String {
        let numbers: Vec<String> = self.workloads.iter().map(usize::to_string).collect();
        let tag = match self.workloads.as_slice() {
            [one] => format!("workload {one}"),
            [first, ..] => format!("workloads {}; figures of {first}", numbers.join(", ")),
            [] => "quick".to_string(),
        };
        format!("WARNING ({tag}): {}\n  hint: {}", self.message, self.hint)
    }
}

/// quick's hint for a warning whose run hint names fileio options quick does
/// not take (`--file-extra-flags`, `--drop-caches`, `--warmup`, …); None keeps
/// the run's own hint.
fn hint_in_quick_words(code: &str) -> Option<&'static str> {
    use crate::warnings::codes;
    Some(match code {
        codes::READS_FROM_CACHE => "Give quick a --size of at least twice the RAM so reads reach the storage (tankbench fileio can also bypass the cache with --file-extra-flags=direct).",
        codes::READS_FROM_ARC => "Give quick a --size several times the ARC's maximum, or set primarycache=metadata on the dataset while quick runs.",
        codes::SHORTER_THAN_TXG_SYNCS => "Give quick a longer --time (20s or more with the 5 s zfs_txg_timeout) so several txg syncs land inside each workload.",
        codes::SEQUENTIAL_WRAPAROUND => "Give quick a larger --size (more than throughput x --time) so each block is read once.",
        codes::ZERO_DATA_COMPRESSING_FS => "quick writes sysbench's zeros; for incompressible data run tankbench fileio with --file-data=random.",
        _ => return None,
    })
}

/// The warnings of quick's results, one per kind in order of first
/// appearance, each tagged with the workloads that raised it.
pub fn quick_warnings(results: &[(String, RunResult)]) -> Vec<QuickWarning> {
    let mut out: Vec<(String, QuickWarning)> = Vec::new();
    for (index, (_, result)) in results.iter().enumerate() {
        for w in &result.warnings {
            match out.iter_mut().find(|(code, _)| *code == w.code) {
                Some((_, q)) => {
                    if !q.workloads.contains(&(index + 1)) {
                        q.workloads.push(index + 1);
                    }
                }
                None => out.push((
                    w.code.clone(),
                    QuickWarning {
                        workloads: vec![index + 1],
                        message: w.message.clone(),
                        hint: hint_in_quick_words(&w.code)
                            .map_or_else(|| w.hint.clone(), str::to_string),
                    },
                )),
            }
        }
    }
    out.into_iter().map(|(_, q)| q).collect()
}

#[cfg(test)]
mod warning_tests {
    use super::*;
    use crate::options::{Mode, RunSpec};
    use crate::result::{ResultKind, Warning};
    use crate::warnings::codes;

    fn result(warnings: &[(&str, &str)]) -> RunResult {
        let spec = RunSpec::builder().mode(Mode::RndRw).build().unwrap();
        let mut r = RunResult::new(ResultKind::Measured, spec.summary("psync"));
        r.warnings = warnings
            .iter()
            .map(|(code, message)| Warning {
                code: code.to_string(),
                message: message.to_string(),
                hint: "Use --file-extra-flags=direct, or --drop-caches, or --warmup=SECS.".into(),
            })
            .collect();
        r
    }

    #[test]
    fn each_warning_names_its_workloads_and_hints_in_quick_s_words() {
        let results = vec![
            (
                "a".to_string(),
                result(&[(codes::SHORTER_THAN_TXG_SYNCS, "run 1: 5.00 s")]),
            ),
            (
                "b".to_string(),
                result(&[(codes::READS_FROM_CACHE, "run 2: 99 %")]),
            ),
            (
                "c".to_string(),
                result(&[(codes::SHORTER_THAN_TXG_SYNCS, "run 3: 5.01 s")]),
            ),
        ];
        let warnings = quick_warnings(&results);
        assert_eq!(warnings.len(), 2);
        assert_eq!(warnings[0].workloads, vec![1, 3]);
        assert_eq!(warnings[1].workloads, vec![2]);
        let texts: Vec<String> = warnings.iter().map(QuickWarning::text).collect();
        assert!(
            texts[0].starts_with("WARNING (workloads 1, 3; figures of 1): run 1"),
            "{}",
            texts[0]
        );
        assert!(
            texts[1].starts_with("WARNING (workload 2): run 2"),
            "{}",
            texts[1]
        );
        for text in &texts {
            // Options quick does not take appear only as tankbench fileio's.
            for foreign in ["--drop-caches", "--warmup"] {
                assert!(!text.contains(foreign), "{text}");
            }
            assert!(text.contains("quick"), "{text}");
        }
    }
}

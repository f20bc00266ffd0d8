//! `tankbench quick`: a one-command benchmark for newcomers. It makes its own
//! scratch directory, prepares one file set, runs a short suite that starts with
//! the reference user's sysbench workload, removes everything it created, and
//! returns one result per workload.

use crate::args::ParsedArgs;
use crate::cli::{run_workload_quietly, Console};
use crate::options::{Command, Failure, GeneralOptions, Workload};
use crate::result::RunResult;
use std::path::{Path, PathBuf};

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

/// A scratch directory that quick created, removed with its contents on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        // Only test_file.N (ours) can be inside; remove them, then the directory.
        if let Ok(entries) = std::fs::read_dir(&self.0) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with("test_file.") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn words(dir: &Path, size: &str, seconds: u64, extra: &[&str]) -> Vec<String> {
    let mut v = vec![
        "fileio".to_string(),
        format!("--file-dir={}", dir.display()),
        format!("--file-total-size={size}"),
        "--file-num=16".to_string(),
        format!("--time={seconds}"),
        "--percentiles=50,95,99,99.9".to_string(),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn workload(words: &[String], command: Command) -> Result<(Workload, GeneralOptions), Failure> {
    let mut a = ParsedArgs::parse(words);
    if let Some(u) = a.unknown.first() {
        return Err(Failure::fatal(format!("invalid option: {u}")));
    }
    let g = GeneralOptions::from_args(&mut a)?;
    let w = Workload::from_args(&a, &g, command)?;
    Ok((w, g))
}

/// Run the suite; `on_case` is told when each workload starts.
pub fn run(
    settings: &QuickSettings,
    on_case: &mut dyn FnMut(usize, &QuickCase),
) -> Result<Vec<(String, RunResult)>, Failure> {
    if !settings.parent.is_dir() {
        return Err(Failure::fatal(format!(
            "quick: directory '{}' does not exist",
            settings.parent.display()
        )));
    }
    let dir = settings
        .parent
        .join(format!("tankbench-quick-{}", std::process::id()));
    std::fs::create_dir(&dir)
        .map_err(|e| Failure::fatal(format!("quick: cannot create '{}': {e}", dir.display())))?;
    let scratch = Scratch(dir);
    let (prep, _) = workload(
        &words(&scratch.0, &settings.size, settings.seconds, &[]),
        Command::Prepare,
    )?;
    let quiet = Console::new(0, false);
    crate::fileset::prepare(&prep, &mut |_| {}, &mut ())?;
    let mut results = Vec::new();
    for (i, case) in SUITE.iter().enumerate() {
        on_case(i, case);
        let (w, g) = workload(
            &words(&scratch.0, &settings.size, settings.seconds, case.options),
            Command::Run,
        )?;
        let mut r = run_workload_quietly(&quiet, &w, &g)?;
        r.labels.insert("suite".into(), "quick".into());
        r.labels.insert("case".into(), case.name.into());
        results.push((case.name.to_string(), r));
        if crate::runner::interrupted() {
            break;
        }
    }
    drop(scratch);
    Ok(results)
}

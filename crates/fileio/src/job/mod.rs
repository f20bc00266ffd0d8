//! Distributed jobs: several processes (MPI ranks, possibly on several hosts)
//! run the same workload at the same moment and report as one.
//!
//! The discipline is IOR's: every rank runs the whole workload (limits such as
//! `--events` and `--time` apply to each rank); the ranks wait for each other
//! before any clock starts; each rank times itself on its own monotonic clock,
//! counted from the moment it left that barrier; the job starts with the
//! earliest rank and ends with the latest, so rates are the summed counts over
//! that span. With the stonewall on, the first rank to finish tells the others
//! to stop.
//!
//! Why times from the barrier rather than wall clocks: a barrier releases all
//! ranks within microseconds (shared memory) to tens of microseconds (network),
//! while the wall clocks of different hosts agree only as well as NTP keeps
//! them (often a millisecond or worse, and they can step). IOR corrects its
//! timestamps the same way, by each rank's offset at a barrier. The wall clock
//! at the barrier is still recorded per rank, so the spread can be checked.
//!
//! Rank 0 merges: counts are summed and latency comes from the ranks' HDR
//! histograms added bucket by bucket, never from averaged percentiles. Only
//! rank 0 prints; the others keep their stdout silent.
//!
//! This module holds the steps all ranks take together (barrier, prepare,
//! run, cleanup); [`merge`] holds rank 0's pure merge of their results.

pub mod coordinator;
mod merge;
#[cfg(feature = "mpi")]
pub mod mpi_coord;
pub use merge::{histogram_of, job_section, merge, Merged};

use crate::console::Console;
use crate::environment::hostname;
use crate::job::coordinator::{Coordinator, Solo};
use crate::options::{Failure, GeneralOptions, JobOptions, Stream};
use crate::result::{Distributed, RunResult};
use crate::run::histograms::CountSnapshot;
use crate::run::runner::{IntervalStats, PeriodStats, RunObserver, RunOutcome};
use crate::spec::{FileSet, RunSpec};
use crate::sysbench::report_text;
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The coordinator for this process: MPI when built with it and started by an
/// MPI launcher, [`Solo`] otherwise. Errors are one line, ready to print.
pub(crate) fn for_this_process() -> Result<Box<dyn Coordinator>, String> {
    let launch = coordinator::Launch::from_process_environment();
    #[cfg(feature = "mpi")]
    {
        if launch.mpi_launcher || launch.is_multi_process() {
            return mpi_coord::MpiCoordinator::init().map(|c| Box::new(c) as Box<dyn Coordinator>);
        }
    }
    if launch.is_multi_process() {
        return Err(coordinator::refusal_without_mpi(&launch));
    }
    Ok(Box::new(Solo))
}

/// Left in a `rank-N` directory that tankbench created, so that cleanup knows
/// it may remove the directory (tankbench never removes what it did not create).
pub(crate) const RANK_DIR_MARKER: &str = ".tankbench-rank-dir";

/// One invocation's place in its job.
pub struct Job<'a> {
    coord: &'a dyn Coordinator,
    opts: JobOptions,
}

static SOLO: Solo = Solo;

/// What a rank tells the others after each step.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RankStatus {
    host: String,
    /// The step failed on this rank: its message.
    error: Option<String>,
    interrupted: bool,
    /// Prepare: bytes written and seconds it took.
    bytes: u64,
    seconds: f64,
    /// Cleanup: what was left behind and why.
    note: Option<String>,
}

impl<'a> Job<'a> {
    pub fn new(coord: &'a dyn Coordinator, opts: JobOptions) -> Job<'a> {
        Job { coord, opts }
    }

    /// A single process with default options.
    pub(crate) fn solo() -> Job<'static> {
        Job::new(&SOLO, JobOptions::default())
    }

    pub fn rank(&self) -> usize {
        self.coord.rank()
    }

    pub fn size(&self) -> usize {
        self.coord.size()
    }

    /// More than one process takes part.
    pub(crate) fn is_distributed(&self) -> bool {
        self.size() > 1
    }

    /// The rank that prints and merges.
    pub fn is_root(&self) -> bool {
        self.rank() == 0
    }

    /// The job options make no sense for a single process: say so, once.
    pub(crate) fn single_process_warning(&self) -> Option<String> {
        if self.is_distributed() || !(self.opts.shared_files || self.opts.stonewall) {
            return None;
        }
        Some(
            "WARNING: --mpi-shared-files and --mpi-stonewall apply to MPI jobs only \
             (mpirun -np N tankbench ...); this run is a single process"
                .to_string(),
        )
    }

    /// Options a distributed run cannot honour, refused before anything starts.
    /// `intervals`: `--intervals=FILE` was given, which needs the same
    /// instants as `--report-interval`.
    pub(crate) fn check_run_options(
        &self,
        g: &GeneralOptions,
        intervals: bool,
    ) -> Result<(), Failure> {
        if !self.is_distributed() {
            return Ok(());
        }
        let refuse = |option: &str| {
            Failure::fatal(format!(
                "{option} is not available in an MPI job ({} ranks): interval figures would need \
                 every rank's counters at the same instants; each rank's totals are in the JSON \
                 result (accepted: leave {option} unset)",
                self.size()
            ))
        };
        if g.report_interval_s > 0 {
            return Err(refuse("--report-interval"));
        }
        if intervals {
            return Err(refuse("--intervals"));
        }
        if !g.report_checkpoints_s.is_empty() {
            return Err(refuse("--report-checkpoints"));
        }
        Ok(())
    }

    fn layout_name(&self) -> &'static str {
        if self.opts.shared_files {
            "shared"
        } else {
            "per_rank"
        }
    }

    /// The line under the run header that says how the job is laid out.
    pub(crate) fn header_note(&self, files: &FileSet) -> String {
        if !self.is_distributed() {
            return String::new();
        }
        let n = self.size();
        let files = if self.opts.shared_files {
            format!(
                "sharing the {} files in {} (each rank {} or {} of them)",
                files.file_num,
                files.dir.display(),
                files.file_num / n as u64,
                files.file_num.div_ceil(n as u64)
            )
        } else {
            format!(
                "each with its own {} files in {}/rank-<N>",
                files.file_num,
                files.dir.display()
            )
        };
        let stonewall = if self.opts.stonewall {
            "; stonewall: all stop when the first finishes"
        } else {
            ""
        };
        format!("MPI job: {n} ranks, {files}{stonewall}\n")
    }

    /// This rank's files: its own `rank-N` directory (created if `create`),
    /// or its share of the shared file set. Unchanged for a single process.
    pub(crate) fn local_files(&self, files: &FileSet, create: bool) -> Result<FileSet, Failure> {
        let mut local = files.clone();
        if !self.is_distributed() {
            return Ok(local);
        }
        if self.opts.shared_files {
            let n = self.size() as u64;
            if files.file_num < n {
                return Err(Failure::fatal(format!(
                    "--mpi-shared-files: {n} ranks cannot split {} files; every rank needs at least one (accepted: --file-num={n} or more)",
                    files.file_num
                )));
            }
            let (lo, hi) = share(files.file_num, self.rank() as u64, n);
            local.first_file = lo;
            local.file_num = hi - lo;
            local.total_size = local.file_num * local.file_size;
        } else if files.nfs.is_some() {
            return Err(Failure::fatal(
                "an nfs:// --file-dir needs --mpi-shared-files in a distributed job (ranks cannot make rank-N directories on the export)",
            ));
        } else {
            local.dir = rank_dir(&files.dir, self.rank());
            if create {
                ensure_rank_dir(&local.dir)?;
            }
        }
        Ok(local)
    }

    /// Trade statuses with every rank.
    fn exchange(&self, status: RankStatus) -> Vec<RankStatus> {
        let bytes = serde_json::to_vec(&status).expect("status serializes");
        self.coord
            .all_gather(&bytes)
            .iter()
            .map(|b| serde_json::from_slice(b).unwrap_or_default())
            .collect()
    }

    /// One failure naming every rank that failed, or None.
    fn failure_of(&self, all: &[RankStatus]) -> Option<Failure> {
        let mut failure: Option<Failure> = None;
        for (rank, s) in all.iter().enumerate() {
            let Some(e) = &s.error else { continue };
            let line = format!("FATAL: rank {rank} of {} ({}): {e}", all.len(), s.host,);
            failure = Some(match failure {
                None => Failure {
                    lines: vec![(Stream::Stdout, line)],
                    exit_code: 1,
                    show_fileio_help: false,
                },
                Some(f) => f.then(Stream::Stdout, line),
            });
        }
        failure
    }

    /// Collective: the same outcome on every rank. Any rank's failure fails
    /// the step everywhere (naming the ranks), so that no rank waits forever
    /// for one that gave up.
    pub fn agree<T>(&self, local: Result<T, Failure>) -> Result<T, Failure> {
        if !self.is_distributed() {
            return local;
        }
        let status = RankStatus {
            host: hostname(),
            error: local.as_ref().err().map(Failure::summary),
            ..RankStatus::default()
        };
        match self.failure_of(&self.exchange(status)) {
            Some(f) => Err(f),
            None => local,
        }
    }

    /// The observer for this rank's run: the start barrier and the stonewall
    /// around `inner`. `w` is this rank's workload (its files are listed at
    /// the barrier).
    pub fn observer<'o>(&'o self, inner: &'o dyn RunObserver, w: &RunSpec) -> JobObserver<'o> {
        JobObserver {
            inner,
            coord: self.coord,
            opts: self.opts,
            distributed: self.is_distributed(),
            files: (0..w.files.file_num)
                .map(|i| w.files.file_path(i))
                .collect(),
            state: Mutex::new(GateState::default()),
            abort: AtomicBool::new(false),
        }
    }

    /// Collective, after `runner::run` returned on this rank (whatever it
    /// returned): release ranks still waiting at the barrier, settle the
    /// stonewall notices, and agree on success.
    pub(crate) fn after_run(
        &self,
        observer: &JobObserver,
        outcome: Result<RunOutcome, Failure>,
    ) -> Result<RunOutcome, Failure> {
        if !self.is_distributed() {
            return outcome;
        }
        if observer.state().gate.is_none() {
            // The run failed before its barrier: answer the others' barrier
            // with "not ready" so they stop at once instead of waiting.
            self.coord.all_gather(&[0]);
        }
        if self.opts.stonewall {
            self.coord.finished();
        }
        let status = RankStatus {
            host: hostname(),
            error: outcome.as_ref().err().map(Failure::summary),
            interrupted: outcome.as_ref().is_ok_and(|o| o.interrupted),
            ..RankStatus::default()
        };
        let all = self.exchange(status);
        if let Some(f) = self.failure_of(&all) {
            return Err(f);
        }
        let mut outcome = outcome?;
        // One interrupted rank makes the job interrupted, on every rank, so
        // that all of them end a `--repeat` loop together.
        outcome.interrupted |= all.iter().any(|s| s.interrupted);
        Ok(outcome)
    }

    /// Collective, with this rank's workload and finished result: gather the results on
    /// rank 0, which prints the job report (sysbench layout, then the ranks)
    /// and returns the job's result; the other ranks return their own.
    pub fn finish(
        &self,
        console: &Console,
        w: &RunSpec,
        g: &GeneralOptions,
        observer: &JobObserver,
        outcome: &RunOutcome,
        mut result: RunResult,
    ) -> Result<RunResult, Failure> {
        let state = observer.state();
        let (gate_at, gate_unix_ns) = state
            .gate
            .expect("after_run succeeded, so this rank passed the barrier");
        let start_s = state
            .started
            .map(|s| s.saturating_duration_since(gate_at).as_secs_f64())
            .unwrap_or(0.0);
        // MPI counts ranks in a C int (and a process alone is rank 0 of 1),
        // so both fit u32.
        #[allow(clippy::cast_possible_truncation)]
        let (size, rank) = (self.size() as u32, self.rank() as u32);
        result.distributed = Some(Distributed {
            size,
            rank: Some(rank),
            file_layout: self.layout_name().to_string(),
            stonewall: self.opts.stonewall,
            start_s,
            end_s: start_s + outcome.period.total_time_s,
            first_done_s: None,
            last_done_s: None,
            barrier_unix_ns: gate_unix_ns,
            clock_spread_s: None,
            test_files: state.listing.clone(),
        });
        let bytes = serde_json::to_vec(&result).expect("results serialize");
        let Some(parts) = self.coord.gather(&bytes) else {
            return Ok(result);
        };
        let ranks = parts
            .iter()
            .enumerate()
            .map(|(r, p)| {
                serde_json::from_slice::<RunResult>(p).map_err(|e| {
                    Failure::fatal(format!("the result of rank {r} is unreadable: {e}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        // `w` is this rank's workload; the job's directory is the one above
        // `rank-N`, or the shared one.
        let dir = match (self.opts.shared_files, w.files.dir.parent()) {
            (false, Some(parent)) => parent.to_path_buf(),
            _ => w.files.dir.clone(),
        };
        let target = std::fs::canonicalize(&dir).unwrap_or(dir);
        let job =
            merge(ranks, &w.percentiles, &target.to_string_lossy()).map_err(Failure::fatal)?;
        if g.histogram {
            console.notice_raw(&report_text::histogram_text(&job.period.histogram));
        }
        console.notice_raw(&report_text::sysbench_report(&job.period, w.percentile));
        console.notice_raw(&report_text::latency_section(&job.result));
        console.notice_raw(&job_section(&job.result, w.percentile));
        if job.result.interrupted {
            console.notice("Run interrupted (SIGINT): the report covers the part that ran.\n");
        }
        crate::warnings::print(console, &job.result.warnings);
        Ok(job.result)
    }

    /// `prepare` of a distributed job: every rank writes its own files (in
    /// parallel); rank 0 prints its own lines and the job's total. Returns the
    /// exit code.
    pub fn prepare(&self, console: &Console, files: &FileSet) -> i32 {
        console.notice_raw(&self.header_note(files));
        let done = self.local_files(files, true).and_then(|local| {
            crate::run::fileset::prepare(&local, &mut |l| console.notice(l), &mut ())
        });
        let status = RankStatus {
            host: hostname(),
            error: done.as_ref().err().map(Failure::summary),
            bytes: done.as_ref().map(|s| s.bytes_written).unwrap_or(0),
            seconds: done.as_ref().map(|s| s.seconds).unwrap_or(0.0),
            ..RankStatus::default()
        };
        let all = self.exchange(status);
        if let Some(f) = self.failure_of(&all) {
            console.failure(&f);
            return f.exit_code;
        }
        let bytes: u64 = all.iter().map(|s| s.bytes).sum();
        let seconds = all.iter().map(|s| s.seconds).fold(0.0, f64::max);
        console.notice(&format!(
            "MPI job: {} ranks wrote {bytes} bytes in {seconds:.2} seconds ({:.2} MiB/sec together).",
            all.len(),
            if seconds > 0.0 {
                bytes as f64 / 1048576.0 / seconds
            } else {
                0.0
            }
        ));
        0
    }

    /// `cleanup` of a distributed job: every rank removes its own files, and
    /// its `rank-N` directory when tankbench created it and it is now empty.
    pub fn cleanup(&self, console: &Console, files: &FileSet) -> i32 {
        console.notice_raw(&self.header_note(files));
        let status = match self.local_files(files, false) {
            Ok(local) => {
                crate::run::fileset::cleanup(&local, &mut |l| console.notice(l));
                RankStatus {
                    host: hostname(),
                    note: (!self.opts.shared_files)
                        .then(|| remove_rank_dir(&local.dir))
                        .flatten(),
                    ..RankStatus::default()
                }
            }
            Err(f) => RankStatus {
                host: hostname(),
                error: Some(f.summary()),
                ..RankStatus::default()
            },
        };
        let all = self.exchange(status);
        if let Some(f) = self.failure_of(&all) {
            console.failure(&f);
            return f.exit_code;
        }
        for (rank, s) in all.iter().enumerate() {
            if let Some(note) = &s.note {
                console.notice(&format!("rank {rank} ({}): {note}", s.host));
            }
        }
        console.notice(&format!(
            "MPI job: {} ranks removed their test files.",
            all.len()
        ));
        0
    }
}

/// Files `[lo, hi)` of `rank` when `ranks` ranks split `n` files: contiguous
/// runs whose sizes differ by at most one.
pub fn share(n: u64, rank: u64, ranks: u64) -> (u64, u64) {
    (n * rank / ranks, n * (rank + 1) / ranks)
}

/// `DIR/rank-N`.
pub(crate) fn rank_dir(dir: &Path, rank: usize) -> PathBuf {
    dir.join(format!("rank-{rank}"))
}

/// Create a rank's directory (the target directory itself must exist, as for
/// a single process) and mark it as ours; an existing directory is used as is.
fn ensure_rank_dir(dir: &Path) -> Result<(), Failure> {
    match std::fs::create_dir(dir) {
        Ok(()) => std::fs::write(
            dir.join(RANK_DIR_MARKER),
            "Created by tankbench for one rank of an MPI job; `tankbench fileio cleanup` removes this directory when it is empty.\n",
        )
        .map_err(|e| {
            Failure::fatal(format!(
                "Cannot write {} in {}: {e}",
                RANK_DIR_MARKER,
                dir.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(Failure::fatal(format!(
            "Cannot create the rank directory {}: {e}",
            dir.display()
        ))),
    }
}

/// Remove a rank's directory if tankbench created it and nothing else is in
/// it; otherwise say why it stays.
fn remove_rank_dir(dir: &Path) -> Option<String> {
    let entries: Vec<String> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => return None, // never prepared here: nothing to do
    };
    if !entries.iter().any(|n| n == RANK_DIR_MARKER) {
        return Some(format!(
            "left {}: tankbench did not create it",
            dir.display()
        ));
    }
    if entries.len() > 1 {
        return Some(format!(
            "left {}: it holds {} file(s) tankbench did not create",
            dir.display(),
            entries.len() - 1
        ));
    }
    std::fs::remove_file(dir.join(RANK_DIR_MARKER))
        .and_then(|_| std::fs::remove_dir(dir))
        .err()
        .map(|e| format!("could not remove {}: {e}", dir.display()))
}

fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Ranks other than 0 must print nothing on stdout (the launcher merges every
/// rank's stdout into one stream). Pointing descriptor 1 at /dev/null covers
/// every path at once: log lines, reports, JSON, help. Errors still reach
/// stderr, and rank 0 prints the failures of all ranks.
pub(crate) fn silence_stdout_unless_root(coord: &dyn Coordinator) {
    if coord.rank() == 0 {
        return;
    }
    let _ = std::io::stdout().flush();
    // SAFETY: open/dup2/close on descriptors this process owns; descriptor 1
    // stays open (now on /dev/null).
    unsafe {
        let fd = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd >= 0 {
            libc::dup2(fd, 1);
            libc::close(fd);
        }
    }
}

#[derive(Debug, Clone, Default)]
struct GateState {
    /// When this rank left the start barrier: monotonic and wall clock.
    gate: Option<(Instant, u64)>,
    /// When the runner started its clock.
    started: Option<Instant>,
    /// This rank's test files at the barrier.
    listing: Vec<(String, u64)>,
}

/// A run observer that adds the job's start barrier and stonewall to the
/// front end's observer.
pub struct JobObserver<'o> {
    inner: &'o dyn RunObserver,
    coord: &'o dyn Coordinator,
    opts: JobOptions,
    distributed: bool,
    files: Vec<PathBuf>,
    state: Mutex<GateState>,
    /// Some rank could not start: stop this one at once.
    abort: AtomicBool,
}

impl JobObserver<'_> {
    fn state(&self) -> GateState {
        self.state.lock().expect("gate state").clone()
    }
}

// Every method forwards to the front end's observer; the job adds its own
// work in `before_start`, `started` and `stop_requested`.
impl RunObserver for JobObserver<'_> {
    fn debug(&self, line: &str) {
        self.inner.debug(line)
    }

    fn info(&self, line: &str) {
        self.inner.info(line)
    }

    fn before_start(&self) {
        self.inner.before_start();
        if !self.distributed {
            return;
        }
        // Listed before the barrier, so the stat calls do not delay the start.
        let listing = self
            .files
            .iter()
            .filter_map(|p| {
                let len = std::fs::metadata(p).ok()?.len();
                let path = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
                Some((path.to_string_lossy().into_owned(), len))
            })
            .collect();
        if self.opts.rank_delay_ms > 0 {
            std::thread::sleep(Duration::from_millis(
                self.opts.rank_delay_ms * self.coord.rank() as u64,
            ));
        }
        // The barrier: an all-gather of "ready" flags, so that a rank whose
        // run failed before this point (it answers "not ready" from
        // `Job::after_run`) stops the others instead of hanging them.
        let ready = self.coord.all_gather(&[1]);
        let at = (Instant::now(), realtime_ns());
        if ready.iter().any(|r| r.as_slice() != [1]) {
            self.abort.store(true, Relaxed);
        }
        let mut state = self.state.lock().expect("gate state");
        state.gate = Some(at);
        state.listing = listing;
    }

    fn started(&self) {
        self.state.lock().expect("gate state").started = Some(Instant::now());
        self.inner.started()
    }

    fn stop_requested(&self) -> bool {
        self.inner.stop_requested()
            || self.abort.load(Relaxed)
            || (self.distributed && self.opts.stonewall && self.coord.peer_finished())
    }

    fn interval(&self, sample: &IntervalStats) {
        self.inner.interval(sample)
    }

    fn checkpoint(&self, at_s: u64, period: &PeriodStats) {
        self.inner.checkpoint(at_s, period)
    }

    fn tick(&self, elapsed: Duration, totals: &CountSnapshot, last_second: Option<&IntervalStats>) {
        self.inner.tick(elapsed, totals, last_second)
    }

    fn forced_shutdown(&self, period: &PeriodStats) {
        self.inner.forced_shutdown(period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_file_once() {
        for n in 1..20u64 {
            for ranks in 1..=n {
                let mut next = 0;
                for r in 0..ranks {
                    let (lo, hi) = share(n, r, ranks);
                    assert_eq!(lo, next, "contiguous");
                    assert!(hi > lo, "every rank gets a file: n={n} ranks={ranks}");
                    assert!(hi - lo <= n / ranks + 1);
                    next = hi;
                }
                assert_eq!(next, n);
            }
        }
    }

    #[test]
    fn rank_dirs_are_removed_only_when_ours_and_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let d = rank_dir(tmp.path(), 3);
        assert!(d.ends_with("rank-3"));
        // Not there: nothing to say.
        assert_eq!(remove_rank_dir(&d), None);
        ensure_rank_dir(&d).unwrap();
        ensure_rank_dir(&d).unwrap(); // idempotent
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        assert!(remove_rank_dir(&d).unwrap().contains("did not create"));
        assert!(
            d.join(RANK_DIR_MARKER).exists(),
            "marker kept while it stays"
        );
        std::fs::remove_file(d.join("notes.txt")).unwrap();
        assert_eq!(remove_rank_dir(&d), None);
        assert!(!d.exists());
        // A directory the user made is never removed.
        std::fs::create_dir(&d).unwrap();
        assert!(remove_rank_dir(&d).unwrap().contains("did not create it"));
        assert!(d.exists());
    }
}

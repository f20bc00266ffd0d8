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

use crate::console::Console;
use crate::coordinator::{Coordinator, Solo};
use crate::options::{Failure, GeneralOptions, JobOptions, Stream, Workload};
use crate::report;
use crate::result::{Distributed, LatencyKey, LatencySummary, Rates, RunResult, Warning};
use crate::runner::{IntervalStats, PeriodStats, RunObserver, RunOutcome};
use crate::stats::{new_hdr, sysbench_histogram_of, CountSnapshot, HDR_HIGH_NS, HDR_LOW_NS};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Left in a `rank-N` directory that tankbench created, so that cleanup knows
/// it may remove the directory (tankbench never removes what it did not create).
pub const RANK_DIR_MARKER: &str = ".tankbench-rank-dir";

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
    pub fn solo() -> Job<'static> {
        Job::new(&SOLO, JobOptions::default())
    }

    pub fn rank(&self) -> usize {
        self.coord.rank()
    }

    pub fn size(&self) -> usize {
        self.coord.size()
    }

    /// More than one process takes part.
    pub fn is_distributed(&self) -> bool {
        self.size() > 1
    }

    /// The rank that prints and merges.
    pub fn is_root(&self) -> bool {
        self.rank() == 0
    }

    /// The job options make no sense for a single process: say so, once.
    pub fn single_process_warning(&self) -> Option<String> {
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
    pub fn check_run_options(&self, g: &GeneralOptions) -> Result<(), Failure> {
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
    pub fn header_note(&self, w: &Workload) -> String {
        if !self.is_distributed() {
            return String::new();
        }
        let n = self.size();
        let files = if self.opts.shared_files {
            format!(
                "sharing the {} files in {} (each rank {} or {} of them)",
                w.file_num,
                w.dir.display(),
                w.file_num / n as u64,
                w.file_num.div_ceil(n as u64)
            )
        } else {
            format!(
                "each with its own {} files in {}/rank-<N>",
                w.file_num,
                w.dir.display()
            )
        };
        let stonewall = if self.opts.stonewall {
            "; stonewall: all stop when the first finishes"
        } else {
            ""
        };
        format!("MPI job: {n} ranks, {files}{stonewall}\n")
    }

    /// This rank's workload: its own `rank-N` directory (created if `create`),
    /// or its share of the shared file set. Unchanged for a single process.
    pub fn local_workload(&self, w: &Workload, create: bool) -> Result<Workload, Failure> {
        let mut local = w.clone();
        if !self.is_distributed() {
            return Ok(local);
        }
        if self.opts.shared_files {
            let n = self.size() as u64;
            if w.file_num < n {
                return Err(Failure::fatal(format!(
                    "--mpi-shared-files: {n} ranks cannot split {} files; every rank needs at least one (accepted: --file-num={n} or more)",
                    w.file_num
                )));
            }
            let (lo, hi) = share(w.file_num, self.rank() as u64, n);
            local.first_file = lo;
            local.file_num = hi - lo;
            local.total_size = local.file_num * local.file_size;
        } else {
            local.dir = rank_dir(&w.dir, self.rank());
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
            let line = format!(
                "FATAL: rank {rank} of {} ({}): {}",
                all.len(),
                s.host,
                e.strip_prefix("FATAL: ").unwrap_or(e)
            );
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
    pub fn observer<'o>(&'o self, inner: &'o dyn RunObserver, w: &Workload) -> JobObserver<'o> {
        JobObserver {
            inner,
            coord: self.coord,
            opts: self.opts,
            distributed: self.is_distributed(),
            files: (0..w.file_num).map(|i| w.file_path(i)).collect(),
            state: Mutex::new(GateState::default()),
            abort: AtomicBool::new(false),
        }
    }

    /// Collective, after `runner::run` returned on this rank (whatever it
    /// returned): release ranks still waiting at the barrier, settle the
    /// stonewall notices, and agree on success.
    pub fn after_run(
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
        w: &Workload,
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
        result.distributed = Some(Distributed {
            size: self.size() as u32,
            rank: Some(self.rank() as u32),
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
        let dir = match (self.opts.shared_files, w.dir.parent()) {
            (false, Some(parent)) => parent.to_path_buf(),
            _ => w.dir.clone(),
        };
        let target = std::fs::canonicalize(&dir).unwrap_or(dir);
        let job =
            merge(ranks, &w.percentiles, &target.to_string_lossy()).map_err(Failure::fatal)?;
        if g.histogram {
            console.notice_raw(&report::histogram_text(&job.period.histogram));
        }
        console.notice_raw(&report::sysbench_report(&job.period, w.percentile));
        console.notice_raw(&report::latency_section(&job.result));
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
    pub fn prepare(&self, console: &Console, w: &Workload) -> i32 {
        console.notice_raw(&self.header_note(w));
        let done = self
            .local_workload(w, true)
            .and_then(|local| crate::fileset::prepare(&local, &mut |l| console.notice(l), &mut ()));
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
    pub fn cleanup(&self, console: &Console, w: &Workload) -> i32 {
        console.notice_raw(&self.header_note(w));
        let status = match self.local_workload(w, false) {
            Ok(local) => {
                crate::fileset::cleanup(&local, &mut |l| console.notice(l));
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
pub fn rank_dir(dir: &Path, rank: usize) -> PathBuf {
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

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Ranks other than 0 must print nothing on stdout (the launcher merges every
/// rank's stdout into one stream). Pointing descriptor 1 at /dev/null covers
/// every path at once: log lines, reports, JSON, help. Errors still reach
/// stderr, and rank 0 prints the failures of all ranks.
pub fn silence_stdout_unless_root(coord: &dyn Coordinator) {
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

    fn tick(&self, elapsed: Duration, totals: &CountSnapshot) {
        self.inner.tick(elapsed, totals)
    }

    fn forced_shutdown(&self, period: &PeriodStats) {
        self.inner.forced_shutdown(period)
    }
}

/// A job's merged figures: its result (with the ranks' inside) and the period
/// the sysbench report prints.
#[derive(Debug)]
pub struct Merged {
    pub result: RunResult,
    pub period: PeriodStats,
}

/// An HDR histogram rebuilt from a result's `(highest value ns, count)`
/// buckets. Every bucket's value falls back into the same bucket (same bounds
/// and precision everywhere), so adding several results' buckets this way is
/// an exact bucket-wise sum.
pub fn histogram_of(summaries: &[&LatencySummary]) -> Histogram<u64> {
    let mut h = new_hdr();
    for s in summaries {
        for &(ns, count) in &s.histogram {
            h.saturating_record_n(ns.clamp(HDR_LOW_NS, HDR_HIGH_NS), count);
        }
    }
    h
}

fn ns_of_ms(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}

/// Merge the ranks' results (each with its `distributed` section) into the
/// job's. `directory` is the job's target directory.
pub fn merge(
    mut ranks: Vec<RunResult>,
    percentiles: &[f64],
    directory: &str,
) -> Result<Merged, String> {
    if ranks.is_empty() {
        return Err("a job needs at least one rank's result".to_string());
    }
    let mut timing = Vec::with_capacity(ranks.len());
    for (i, r) in ranks.iter().enumerate() {
        let d = r
            .distributed
            .as_ref()
            .ok_or_else(|| format!("the result of rank {i} has no 'distributed' section"))?;
        timing.push((d.start_s, d.end_s, d.barrier_unix_ns));
    }
    let start = timing.iter().map(|t| t.0).fold(f64::INFINITY, f64::min);
    let end = timing.iter().map(|t| t.1).fold(f64::NEG_INFINITY, f64::max);
    let first_done = timing.iter().map(|t| t.1).fold(f64::INFINITY, f64::min);
    let first_unix = timing.iter().map(|t| t.2).min().unwrap_or(0);
    let last_unix = timing.iter().map(|t| t.2).max().unwrap_or(0);
    // Every rank's times from the job's start.
    for r in &mut ranks {
        if let Some(d) = r.distributed.as_mut() {
            d.start_s -= start;
            d.end_s -= start;
        }
    }
    let total = (end - start).max(0.0);
    let t = if total > 0.0 {
        total
    } else {
        f64::MIN_POSITIVE
    };

    let mut counts = crate::result::Counts::default();
    for r in &ranks {
        counts.add(&r.counts);
    }

    let keys: BTreeSet<LatencyKey> = ranks
        .iter()
        .flat_map(|r| r.latency.keys().copied())
        .collect();
    let mut latency = BTreeMap::new();
    let mut event_histogram = new_hdr();
    for key in keys {
        let parts: Vec<&LatencySummary> =
            ranks.iter().filter_map(|r| r.latency.get(&key)).collect();
        let h = histogram_of(&parts);
        let mut summary = report::summarize(&h, percentiles);
        if key == LatencyKey::Event {
            // As for one process: sysbench's exact counters for count, min,
            // max and sum; percentiles from the merged histogram.
            let seen: Vec<&&LatencySummary> = parts.iter().filter(|s| s.count > 0).collect();
            summary.count = counts.events;
            summary.min_ms = seen.iter().map(|s| s.min_ms).fold(f64::INFINITY, f64::min);
            summary.max_ms = seen.iter().map(|s| s.max_ms).fold(0.0, f64::max);
            if seen.is_empty() {
                summary.min_ms = 0.0;
            }
            summary.sum_ms = parts.iter().map(|s| s.sum_ms).sum();
            summary.mean_ms = if counts.events > 0 {
                summary.sum_ms / counts.events as f64
            } else {
                0.0
            };
            // The ranks' percentiles are kept within their exact extremes;
            // the job's too.
            report::clamp_percentiles(&mut summary);
            event_histogram = h;
        }
        latency.insert(key, summary);
    }
    let event = latency.get(&LatencyKey::Event).cloned().unwrap_or_default();

    // A warning raised by several ranks appears once, with the figures of the
    // first rank that raised it, naming the ranks.
    let mut warnings: Vec<(Warning, Vec<usize>)> = Vec::new();
    for (i, r) in ranks.iter().enumerate() {
        for w in &r.warnings {
            match warnings.iter_mut().find(|(x, _)| x.code == w.code) {
                Some((_, who)) => who.push(i),
                None => warnings.push((w.clone(), vec![i])),
            }
        }
    }
    let warnings = warnings
        .into_iter()
        .map(|(mut w, who)| {
            let list: Vec<String> = who.iter().map(usize::to_string).collect();
            w.message = if who.len() == 1 {
                format!("Rank {}: {}", who[0], w.message)
            } else if who.len() == ranks.len() {
                format!("Every rank; rank {}'s figures: {}", who[0], w.message)
            } else {
                format!(
                    "Ranks {}; rank {}'s figures: {}",
                    list.join(", "),
                    who[0],
                    w.message
                )
            };
            w
        })
        .collect();

    let first = &ranks[0];
    let mut workload = first.workload.clone();
    workload.threads = ranks.iter().map(|r| r.workload.threads).sum();
    workload.file_num = ranks.iter().map(|r| r.workload.file_num).sum();
    workload.total_size = ranks.iter().map(|r| r.workload.total_size).sum();
    workload.events_limit = ranks.iter().map(|r| r.workload.events_limit).sum();
    workload.directory = directory.to_string();

    let period = PeriodStats {
        seconds: total,
        total_time_s: total,
        counts: CountSnapshot {
            counts,
            latency_sum_ns: ns_of_ms(event.sum_ms),
        },
        histogram: sysbench_histogram_of(&event_histogram),
        min_ns: ns_of_ms(event.min_ms),
        max_ns: ns_of_ms(event.max_ms),
        threads: ranks
            .iter()
            .flat_map(|r| &r.threads)
            .map(|t| (t.events, (t.busy_time_s * 1e9).round() as u64))
            .collect(),
        // Results carry no per-thread extremes; `--debug`'s per-thread block
        // is a single-process report.
        thread_extremes_ns: Vec::new(),
    };
    let distributed = Distributed {
        size: ranks.len() as u32,
        rank: None,
        file_layout: first
            .distributed
            .as_ref()
            .map(|d| d.file_layout.clone())
            .unwrap_or_default(),
        stonewall: first.distributed.as_ref().is_some_and(|d| d.stonewall),
        start_s: 0.0,
        end_s: total,
        first_done_s: Some(first_done - start),
        last_done_s: Some(total),
        barrier_unix_ns: first_unix,
        clock_spread_s: Some((last_unix - first_unix) as f64 / 1e9),
        test_files: Vec::new(),
    };
    let result = RunResult {
        schema_version: first.schema_version,
        tool: first.tool.clone(),
        kind: first.kind,
        started_at: ranks
            .iter()
            .map(|r| r.started_at.clone())
            .min()
            .unwrap_or_default(),
        labels: BTreeMap::new(),
        workload,
        interrupted: ranks.iter().any(|r| r.interrupted),
        total_time_s: total,
        rates: Rates::of(&counts, t),
        counts,
        latency,
        threads: ranks.iter().flat_map(|r| r.threads.clone()).collect(),
        intervals: Vec::new(),
        environment: first.environment.clone(),
        warnings,
        distributed: Some(distributed),
        ranks,
    };
    Ok(Merged { result, period })
}

/// The job's own section after the sysbench report: timing, then one line per
/// rank.
pub fn job_section(job: &RunResult, percentile: u32) -> String {
    let mut s = String::new();
    let Some(d) = &job.distributed else {
        return s;
    };
    let layout = if d.file_layout == "shared" {
        format!("one shared file set in {}", job.workload.directory)
    } else {
        format!("files per rank in {}/rank-<N>", job.workload.directory)
    };
    let _ = writeln!(
        s,
        "MPI job ({} ranks, {layout}, stonewall {}):",
        d.size,
        if d.stonewall { "on" } else { "off" }
    );
    let _ = writeln!(
        s,
        "{:<41}{:.4}s",
        "    first rank done:",
        d.first_done_s.unwrap_or(0.0)
    );
    let _ = writeln!(
        s,
        "{:<41}{:.4}s",
        "    last rank done:",
        d.last_done_s.unwrap_or(0.0)
    );
    let _ = writeln!(
        s,
        "{:<41}{:.3}ms",
        "    wall-clock spread at the barrier:",
        d.clock_spread_s.unwrap_or(0.0) * 1e3
    );
    s.push_str("\nPer rank (seconds from the job's start; latency of events, ms):\n");
    let pct = (percentile > 0).then_some(percentile as f64);
    let mut head = format!(
        "    {:>4}  {:<16} {:>8} {:>8} {:>10} {:>10} {:>10} {:>11} {:>11} {:>8}",
        "rank",
        "host",
        "start",
        "end",
        "events",
        "reads/s",
        "writes/s",
        "read MiB/s",
        "write MiB/s",
        "avg"
    );
    if let Some(p) = pct {
        head.push_str(&format!(" {:>8}", format!("p{p}")));
    }
    head.push_str(&format!(" {:>8}", "max"));
    s.push_str(&head);
    s.push('\n');
    for r in &job.ranks {
        let rd = r.distributed.clone().unwrap_or_default();
        let event = r
            .latency
            .get(&LatencyKey::Event)
            .cloned()
            .unwrap_or_default();
        let mut line = format!(
            "    {:>4}  {:<16} {:>8.4} {:>8.4} {:>10} {:>10.2} {:>10.2} {:>11.2} {:>11.2} {:>8.3}",
            rd.rank.unwrap_or(0),
            truncate(&r.environment.hostname, 16),
            rd.start_s,
            rd.end_s,
            r.counts.events,
            r.rates.reads_per_s,
            r.rates.writes_per_s,
            r.rates.read_mib_per_s,
            r.rates.written_mib_per_s,
            event.mean_ms
        );
        if let Some(p) = pct {
            match event.at(p) {
                Some(ms) => line.push_str(&format!(" {ms:>8.3}")),
                None => line.push_str(&format!(" {:>8}", "-")),
            }
        }
        line.push_str(&format!(" {:>8.3}", event.max_ms));
        s.push_str(&line);
        s.push('\n');
    }
    s.push('\n');
    s
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::ParsedArgs;

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

    /// A rank's result with event (= read) latencies `samples_ns`, timed
    /// `start_s..end_s` from the barrier.
    fn rank_result(rank: u32, samples_ns: &[u64], start_s: f64, end_s: f64) -> RunResult {
        use crate::options::{Command, GeneralOptions};
        use crate::result::{Counts, Environment, ResultKind, ThreadSummary, ToolInfo};
        let mut args = ParsedArgs::parse(["fileio", "--file-test-mode=rndrd", "run"]);
        let g = GeneralOptions::from_args(&mut args).unwrap();
        let w = Workload::from_args(&args, &g, Command::Run).unwrap();
        let mut h = new_hdr();
        for &ns in samples_ns {
            h.record(ns).unwrap();
        }
        let n = samples_ns.len() as u64;
        let sum: u64 = samples_ns.iter().sum();
        let pcts = [50.0, 95.0, 99.0];
        let mut event = report::summarize(&h, &pcts);
        event.min_ms = *samples_ns.iter().min().unwrap() as f64 / 1e6;
        event.max_ms = *samples_ns.iter().max().unwrap() as f64 / 1e6;
        event.sum_ms = sum as f64 / 1e6;
        let mut latency = BTreeMap::new();
        latency.insert(LatencyKey::Event, event);
        latency.insert(LatencyKey::Read, report::summarize(&h, &pcts));
        RunResult {
            schema_version: crate::result::SCHEMA_VERSION,
            tool: ToolInfo {
                name: "tankbench".into(),
                version: "test".into(),
            },
            kind: ResultKind::Measured,
            started_at: format!("2026-12-01T00:00:0{rank}Z"),
            labels: BTreeMap::new(),
            workload: report::workload_summary(&w, "psync"),
            interrupted: false,
            total_time_s: end_s - start_s,
            counts: Counts {
                events: n,
                reads: n,
                bytes_read: n * 16384,
                ..Counts::default()
            },
            rates: Rates::default(),
            latency,
            threads: vec![ThreadSummary {
                events: n,
                busy_time_s: sum as f64 / 1e9,
            }],
            intervals: Vec::new(),
            environment: Environment {
                hostname: format!("host{rank}"),
                ..Environment::default()
            },
            warnings: vec![Warning {
                code: "cached".into(),
                message: format!("rank {rank} read from cache"),
                hint: "h".into(),
            }],
            ranks: Vec::new(),
            distributed: Some(Distributed {
                size: 2,
                rank: Some(rank),
                file_layout: "per_rank".into(),
                start_s,
                end_s,
                barrier_unix_ns: 1_000_000_000 + rank as u64 * 2_000_000,
                ..Distributed::default()
            }),
        }
    }

    fn hist_count(s: &LatencySummary) -> u64 {
        s.histogram.iter().map(|b| b.1).sum()
    }

    #[test]
    fn merging_adds_counts_and_histograms_and_spans_the_job() {
        // Rank 0: 1000 fast events (1 ms); rank 1: 50 slow ones (10 ms), and
        // it started later and finished earlier.
        let a = rank_result(0, &vec![1_000_000; 1000], 0.000_1, 2.0);
        let b = rank_result(1, &vec![10_000_000; 50], 0.000_3, 1.5);
        let job = merge(vec![a.clone(), b.clone()], &[50.0, 95.0, 99.0], "/t").unwrap();
        let r = &job.result;
        assert_eq!(r.counts.events, 1050);
        assert_eq!(r.counts.bytes_read, 1050 * 16384);
        assert_eq!(r.threads.len(), 2);
        assert_eq!(r.workload.threads, 2);
        assert_eq!(r.workload.directory, "/t");
        let d = r.distributed.as_ref().unwrap();
        assert!(
            (r.total_time_s - (2.0 - 0.000_1)).abs() < 1e-9,
            "earliest start to latest end"
        );
        assert!((d.first_done_s.unwrap() - (1.5 - 0.000_1)).abs() < 1e-9);
        assert_eq!(d.last_done_s, Some(r.total_time_s));
        assert!((d.clock_spread_s.unwrap() - 0.002).abs() < 1e-12);
        assert!((r.rates.reads_per_s - 1050.0 / r.total_time_s).abs() < 1e-6);
        // Ranks' times are from the job's start.
        assert_eq!(r.ranks[0].distributed.as_ref().unwrap().start_s, 0.0);
        assert!((r.ranks[1].distributed.as_ref().unwrap().start_s - 0.000_2).abs() < 1e-12);

        let e = &r.latency[&LatencyKey::Event];
        assert_eq!(hist_count(e), 1050);
        assert_eq!(e.count, 1050);
        assert_eq!(e.min_ms, 1.0);
        assert_eq!(e.max_ms, 10.0);
        assert!((e.sum_ms - (1000.0 + 500.0)).abs() < 1e-6);
        // The merged p95 is the fast ranks's 1 ms (50 of 1050 are slow, under
        // 5 %); averaging the ranks' p95s would have said 5.5 ms.
        let p95 = e.at(95.0).unwrap();
        assert!((p95 - 1.0).abs() < 0.002, "{p95}");
        let p99 = e.at(99.0).unwrap();
        assert!((p99 - 10.0).abs() < 0.02, "{p99}");
        // Per-operation keys merge the same way.
        assert_eq!(hist_count(&r.latency[&LatencyKey::Read]), 1050);
        // The sysbench report's figures come from the same merge.
        assert_eq!(job.period.counts.events, 1050);
        assert_eq!(job.period.histogram.iter().sum::<u64>(), 1050);
        assert_eq!(job.period.min_ns, 1_000_000);
        assert_eq!(job.period.max_ns, 10_000_000);
        let text = report::sysbench_report(&job.period, 95);
        assert!(
            text.contains("total number of events:              1050"),
            "{text}"
        );
        // One warning for both ranks, saying so.
        assert_eq!(r.warnings.len(), 1);
        assert!(r.warnings[0]
            .message
            .starts_with("Every rank; rank 0's figures"));
        let table = job_section(r, 95);
        assert!(table.contains("host1"), "{table}");
        assert!(table.contains("first rank done:"), "{table}");
    }

    #[test]
    fn merged_percentiles_stay_within_the_ranks() {
        let a = rank_result(
            0,
            &(1..=500).map(|i| i * 7_000).collect::<Vec<_>>(),
            0.0,
            1.0,
        );
        let b = rank_result(
            1,
            &(1..=300).map(|i| 900_000 + i * 13_000).collect::<Vec<_>>(),
            0.0,
            1.0,
        );
        let job = merge(vec![a.clone(), b.clone()], &[50.0, 95.0, 99.0], "/t").unwrap();
        for key in [LatencyKey::Event, LatencyKey::Read] {
            let m = &job.result.latency[&key];
            for (i, p) in m.percentiles.iter().enumerate() {
                let (x, y) = (
                    a.latency[&key].percentiles[i].ms,
                    b.latency[&key].percentiles[i].ms,
                );
                assert!(
                    p.ms >= x.min(y) && p.ms <= x.max(y),
                    "{key} p{}: {} not in [{x}, {y}]",
                    p.p,
                    p.ms
                );
            }
        }
    }

    #[test]
    fn a_result_without_job_timing_is_refused() {
        let mut a = rank_result(0, &[1000], 0.0, 1.0);
        a.distributed = None;
        assert!(merge(vec![a], &[50.0], "/t")
            .unwrap_err()
            .contains("rank 0"));
        assert!(merge(Vec::new(), &[50.0], "/t").is_err());
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

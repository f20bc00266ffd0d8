//! Running a plan: the files laid out, then each group in turn, the clones
//! of a group side by side (a thread each, running fileio's runner on its
//! own [`RunSpec`](crate::spec::RunSpec)), a group starting when the one
//! before has ended (fio's `stonewall`).

use super::error::FioError;
use super::layout::CreatedFiles;
use super::plan::{ClonePlan, GroupPlan, Plan};
use crate::result::RunResult;
use crate::run::histograms::LatencyKind;
use crate::run::runner::{self, RunSettings};
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

/// What one clone measured.
#[derive(Debug, Clone)]
pub struct CloneRun {
    /// Index of its job in the plan's jobs.
    pub job: usize,
    pub clone: u32,
    pub group: u32,
    /// The run as tankbench records it (environment, warnings included).
    pub result: RunResult,
    /// The measured period, seconds (after `ramp_time`).
    pub seconds: f64,
    /// Latency of each I/O, ns: reads, writes, and the `fsync=N` syncs
    /// (`end_fsync` is left out, as fio leaves it out of its sync figures).
    pub read: Histogram<u64>,
    pub write: Histogram<u64>,
    pub sync: Histogram<u64>,
    /// When the clone's run ended, seconds since the Unix epoch.
    pub ended_unix_s: u64,
}

/// Every clone's run, in plan order, and whether Ctrl-C cut it short.
#[derive(Debug, Default)]
pub struct Outcome {
    pub runs: Vec<CloneRun>,
    pub interrupted: bool,
}

/// Lay out the plan's files, run its groups, remove the files. `say`
/// hears progress lines (stderr).
pub fn run(plan: &Plan, say: &mut dyn FnMut(&str)) -> Result<Outcome, FioError> {
    // Ctrl-C ends the runs cleanly (the report covers what ran); the files
    // are removed either way.
    crate::signals::StopHandlers::new()
        .signals(&[libc::SIGINT])
        .install();
    let created = CreatedFiles::lay_out(&plan.files, say)?;
    let mut outcome = Outcome::default();
    for group in &plan.groups {
        if crate::signals::stop_requested() {
            outcome.interrupted = true;
            break;
        }
        let runs = run_group(group)?;
        outcome.interrupted |= runs.iter().any(|r| r.result.interrupted);
        outcome.runs.extend(runs);
    }
    drop(created);
    Ok(outcome)
}

/// The clones of one group, side by side.
fn run_group(group: &GroupPlan) -> Result<Vec<CloneRun>, FioError> {
    let dir = group
        .clones
        .first()
        .map(|c| c.spec.files.dir.clone())
        .unwrap_or_default();
    let environment = crate::environment::capture(&dir, false);
    let zfs_watch = crate::zfs_facts::Watch::start(environment.zfs.as_ref(), 1);
    let results: Vec<Result<CloneRun, FioError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = group
            .clones
            .iter()
            .map(|c| {
                let environment = environment.clone();
                scope.spawn(move || run_clone(c, group.id, environment))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    let mut runs = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut zfs = environment.zfs;
    zfs_watch.finish(&mut zfs);
    for r in &mut runs {
        r.result.environment.zfs.clone_from(&zfs);
    }
    Ok(runs)
}

/// The clones print nothing while they run (fio's report comes at the end).
struct Quiet;

impl runner::RunObserver for Quiet {}

/// Sleep `d` in short steps, so Ctrl-C is not kept waiting; false when
/// stopped.
fn delay(d: Duration) -> bool {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if crate::signals::stop_requested() {
            return false;
        }
        std::thread::sleep((end - Instant::now()).min(Duration::from_millis(50)));
    }
    true
}

fn run_clone(
    c: &ClonePlan,
    group: u32,
    environment: crate::result::Environment,
) -> Result<CloneRun, FioError> {
    let w = &c.spec;
    let failure = |f: crate::failure::Failure| FioError::Run(f.summary());
    let started_at = crate::clock::utc_now_rfc3339();
    let stopped = !delay(c.startdelay);
    let files = crate::run::fileset::open_for_run(w, &mut |_| {}).map_err(failure)?;
    let settings = RunSettings {
        warmup_s: c.warmup_s,
        ..RunSettings::default()
    };
    if stopped {
        crate::signals::request_stop();
    }
    let outcome = runner::run(w, files, &settings, &Quiet).map_err(failure)?;
    let mut result =
        crate::summary::measured_result(w, &outcome, started_at, environment, Vec::new());
    result.warmup_s = c.warmup_s;
    let mount = crate::environment::mount_of(&w.files.dir);
    let ctx = crate::warnings::Context {
        workload: w,
        environment: &result.environment,
        logical_block_size: mount
            .and_then(|m| crate::environment::logical_block_size(&m.major_minor)),
    };
    result.warnings = crate::warnings::analyze(&ctx, &result)
        .iter()
        .map(Into::into)
        .collect();
    let ended_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Ok(CloneRun {
        job: c.job,
        clone: c.clone,
        group,
        seconds: outcome.period.seconds,
        read: outcome.histograms.get(LatencyKind::Read).clone(),
        write: outcome.histograms.get(LatencyKind::Write).clone(),
        sync: outcome.histograms.get(LatencyKind::Fsync).clone(),
        result,
        ended_unix_s,
    })
}

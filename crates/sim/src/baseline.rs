//! Predictions from a measurement (issue 36): the box at hand was measured
//! once (configuration A); what would another layout, log device, link,
//! client or thread count (configuration B) measure? The answer is A's
//! measured figure times the ratio B/A the simulator predicts, each figure
//! on its own (reads/s, writes/s, fsyncs/s, MiB/s, mean and percentile
//! latency).
//!
//! Why a ratio: a model's errors common to A and B cancel in it, so the
//! change between two configurations is predicted markedly better than
//! either one outright (Mesnier, Wachs, Salmon, Ganger, "Relative fitness
//! models for storage", SIGMETRICS 2007; "Relative Fitness Modeling", CACM
//! 52(4), 2009). The ratio is computed with common random numbers: A and B
//! run the same workload with the same seed, and their intervals sample the
//! same Latin-hypercube design ([`crate::uncertainty::Design`]), so each
//! sample's B/A is taken at the same quantile of every parameter's range and
//! the spread of the ratios is the spread of the change, not of two levels.
//!
//! This module holds what a baseline is and what is refused as one
//! ([`Baseline::new`], [`Baseline::check_workload`], [`Baseline::system`]),
//! and the figures a baseline anchors ([`Figure`]); the simulations and the
//! anchored results are in `predict`, the text in `report`.

use fileio::options::RunSpec;
use fileio::result::{LatencyKey, ResultKind, RunResult, WorkloadSummary};
use fileio::spec::{FsyncMode, Mode};

use crate::from_result::{system_from_result, Derived};
use crate::SimError;

pub mod plan;
pub mod predict;
pub mod report;

/// A measured run taken as configuration A, checked to be one
/// ([`Baseline::new`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    /// How the run is named in messages and in the anchored results (its
    /// file, as given; the runs' files joined by `+` for several).
    pub id: String,
    /// The figures anchored to: the run, or for several runs of one
    /// configuration ([`Baseline::median_of`]) each figure's median, in
    /// the result of the run whose event rate is the median.
    pub measured: RunResult,
    /// The runs it stands for, in the order given (one for a single run):
    /// their names and headline figures, for the report.
    pub runs: Vec<RunSummary>,
}

/// One run of a baseline as the report names it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub id: String,
    pub started_at: String,
    /// Its headline figure ([`Baseline::headline`]).
    pub headline: f64,
}

/// Why a run is not a baseline, or not a baseline for the workload asked.
/// `Display` is the reason, after the run's name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BaselineError {
    #[error("a prediction (kind: predicted), not a measurement; a baseline is a measured run")]
    Predicted,
    #[error("the run was interrupted after {seconds:.1} s; a baseline is a run that finished")]
    Interrupted { seconds: f64 },
    /// A run that measured nothing a figure can be anchored to.
    #[error("the run failed: {reason}; a baseline is a run that completed its workload")]
    Failed { reason: String },
    #[error("a distributed (MPI) run; a baseline is one process's run")]
    Distributed,
    /// Two runs given as one baseline that are not one configuration
    /// measured again.
    #[error("{run} is not the configuration of {first} measured again: {what}; the runs of one baseline share their workload (the thread count too) and their pool")]
    RunsDiffer {
        first: String,
        run: String,
        what: String,
    },
    /// One run given twice (or a copy of it): no second measurement.
    #[error("{run} is the run {first} again (the same start and counts); the runs of one baseline are measured one after another, each once")]
    SameRun { first: String, run: String },
    /// The baseline's workload and the one asked for differ in `field`
    /// (the thread count may differ; nothing else).
    #[error("its workload differs in {option}: the baseline ran {baseline}, the workload asks {asked}; a baseline anchors its own workload only (--threads may differ, and with one file a thread the files with it)", option = field.option())]
    WorkloadDiffers {
        field: WorkloadField,
        baseline: String,
        asked: String,
    },
    /// Neither the run's ZFS facts nor a system file say what A is.
    #[error("no system to simulate it on: {reason}")]
    NoSystem { reason: String },
}

/// A part of the workload a baseline must share with the prediction, named
/// by its fileio option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadField {
    Mode,
    IoMode,
    FileNum,
    TotalSize,
    BlockSize,
    RequestSize,
    RwRatio,
    FsyncFreq,
    FsyncAll,
    FsyncEnd,
    FsyncMode,
    ExtraFlags,
    Rate,
    QueueDepth,
    Data,
}

impl WorkloadField {
    /// The fileio option that sets it.
    pub fn option(self) -> &'static str {
        match self {
            WorkloadField::Mode => "--file-test-mode",
            WorkloadField::IoMode => "--file-io-mode",
            WorkloadField::FileNum => "--file-num",
            WorkloadField::TotalSize => "--file-total-size",
            WorkloadField::BlockSize => "--file-block-size",
            WorkloadField::RequestSize => "--file-merged-requests",
            WorkloadField::RwRatio => "--file-rw-ratio",
            WorkloadField::FsyncFreq => "--file-fsync-freq",
            WorkloadField::FsyncAll => "--file-fsync-all",
            WorkloadField::FsyncEnd => "--file-fsync-end",
            WorkloadField::FsyncMode => "--file-fsync-mode",
            WorkloadField::ExtraFlags => "--file-extra-flags",
            WorkloadField::Rate => "--rate",
            WorkloadField::QueueDepth => "--file-async-backlog",
            WorkloadField::Data => "--file-data",
        }
    }
}

impl Baseline {
    /// `measured` as a baseline named `id`: refused when it is a
    /// prediction, was interrupted, failed (completed no events; a
    /// durability check's result) or is a distributed run.
    pub fn new(id: impl Into<String>, measured: RunResult) -> Result<Baseline, SimError> {
        let id = id.into();
        check_run(&measured).map_err(|problem| SimError::Baseline {
            id: id.clone(),
            problem,
        })?;
        let runs = vec![RunSummary {
            id: id.clone(),
            started_at: measured.started_at.clone(),
            headline: headline_of(&measured).of(&measured).unwrap_or(f64::NAN),
        }];
        Ok(Baseline { id, measured, runs })
    }

    /// Several runs of one configuration as one baseline: each figure the
    /// median of the runs' (the mean of the middle two for an even count),
    /// so that one run that met a slow moment of the box does not carry
    /// its error into every prediction (sync-write runs of one box move by
    /// x1.16 either way in 80 % of repeats, crates/sim/data/run-to-run.toml).
    /// The runs must share their workload, thread count included, and,
    /// where they recorded ZFS facts, their pool (layout, log and cache
    /// devices, and the dataset's sync, logbias, compression and
    /// recordsize). The rest of the result (its facts, its start time) is
    /// the run whose event rate is the median's.
    pub fn median_of(runs: Vec<Baseline>) -> Result<Baseline, SimError> {
        let mut runs = runs;
        if runs.len() <= 1 {
            return runs.pop().ok_or_else(|| SimError::Baseline {
                id: String::new(),
                problem: BaselineError::Failed {
                    reason: "no run given".into(),
                },
            });
        }
        let id = runs
            .iter()
            .map(|r| r.id.as_str())
            .collect::<Vec<_>>()
            .join(" + ");
        // One run given twice (or a copy of it) is not a second
        // measurement: it would outvote the others.
        for (j, later) in runs.iter().enumerate().skip(1) {
            let same = |r: &Baseline| {
                r.measured.started_at == later.measured.started_at
                    && r.measured.counts == later.measured.counts
            };
            if let Some(earlier) = runs[..j].iter().find(|r| same(r)) {
                return Err(SimError::Baseline {
                    id: id.clone(),
                    problem: BaselineError::SameRun {
                        first: earlier.id.clone(),
                        run: later.id.clone(),
                    },
                });
            }
        }
        let first = &runs[0];
        for other in &runs[1..] {
            let differs = |what: String| SimError::Baseline {
                id: id.clone(),
                problem: BaselineError::RunsDiffer {
                    first: first.id.clone(),
                    run: other.id.clone(),
                    what,
                },
            };
            let (a, b) = (&first.measured.workload, &other.measured.workload);
            if let Some(BaselineError::WorkloadDiffers {
                field,
                baseline,
                asked,
            }) = workload_difference(a, b)
            {
                return Err(differs(format!(
                    "it ran {} {asked} where {} ran {baseline}",
                    field.option(),
                    first.id
                )));
            }
            if a.threads != b.threads {
                return Err(differs(format!(
                    "it ran --threads {} where {} ran {}",
                    b.threads, first.id, a.threads
                )));
            }
            let pool = |r: &RunResult| ::report::labels::automatic_labels(&r.environment);
            let (pa, pb) = (pool(&first.measured), pool(&other.measured));
            if pa != pb {
                let only = |x: &::report::labels::Labels, y: &::report::labels::Labels| {
                    x.iter()
                        .filter(|(k, v)| y.get(*k) != Some(*v))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect::<::report::labels::Labels>()
                };
                return Err(differs(format!(
                    "its pool has {} where {}'s has {}",
                    labels_text(&only(&pb, &pa)),
                    first.id,
                    labels_text(&only(&pa, &pb))
                )));
            }
        }
        let results: Vec<&RunResult> = runs.iter().map(|r| &r.measured).collect();
        let mut measured = runs[median_run(&results)].measured.clone();
        for f in figures_of(&measured) {
            let values: Vec<f64> = runs.iter().filter_map(|r| f.of(&r.measured)).collect();
            if let Some(m) = median(values) {
                f.set(&mut measured, m);
            }
        }
        let summaries = runs.into_iter().flat_map(|r| r.runs).collect();
        Ok(Baseline {
            id,
            measured,
            runs: summaries,
        })
    }

    /// How a sentence names the baseline: `the measured run a.json`, or
    /// `the 3 measured runs a.json + b.json + c.json (each figure their
    /// median)`.
    pub fn named(&self) -> String {
        if self.runs.len() > 1 {
            format!(
                "the {} measured runs {} (each figure their median)",
                self.runs.len(),
                self.id
            )
        } else {
            format!("the measured run {}", self.id)
        }
    }

    /// The figure a baseline is named by in the report: writes/s when it
    /// wrote, else reads/s.
    pub fn headline(&self) -> Figure {
        headline_of(&self.measured)
    }

    fn refuse(&self, problem: BaselineError) -> SimError {
        SimError::Baseline {
            id: self.id.clone(),
            problem,
        }
    }

    /// Whether the workload `asked` is the baseline's own, but for its
    /// thread count; the first field that differs is named. How long the
    /// run lasts (`--time`, `--events`), its seed and directory are not the
    /// workload.
    pub fn check_workload(&self, asked: &RunSpec) -> Result<(), SimError> {
        let asked = asked.summary("simulated");
        workload_difference(&self.measured.workload, &asked).map_or(Ok(()), |p| Err(self.refuse(p)))
    }

    /// The system the baseline ran on, from the ZFS facts its result
    /// recorded (crate::from_result); refused, with the reason, when it
    /// recorded none.
    pub fn system(&self) -> Result<Derived, SimError> {
        system_from_result(&self.id, &self.measured).map_err(|e| match e {
            SimError::Measurement { reason, .. } => self.refuse(BaselineError::NoSystem { reason }),
            other => other,
        })
    }

    /// The baseline's workload as the simulator runs it for A: the workload
    /// asked with the baseline's thread count, and every percentile the
    /// baseline recorded among those computed.
    pub fn spec_of_baseline(&self, asked: &RunSpec) -> RunSpec {
        let mut spec = self.spec_asked(asked);
        let base = &self.measured.workload;
        spec.threads = base.threads;
        // A file per thread: the baseline's own file set with its threads.
        if file_per_thread(base, &asked.summary("simulated")) {
            spec.files.file_num = base.file_num;
            spec.files.total_size = base.total_size;
            spec.files.file_size = base.total_size / base.file_num;
        }
        spec
    }

    /// The workload asked as the simulator runs it for B: with every
    /// percentile the baseline recorded among those computed.
    pub fn spec_asked(&self, asked: &RunSpec) -> RunSpec {
        let mut spec = asked.clone();
        for f in self.figures() {
            if let Figure::Percentile(_, p) = f {
                if !spec.percentiles.iter().any(|q| (q - p).abs() < 1e-9) {
                    spec.percentiles.push(p);
                }
            }
        }
        spec.percentiles.sort_by(f64::total_cmp);
        spec
    }

    /// The baseline's workload as fileio options (without its length,
    /// seed and thread count): what a plan anchored to it predicts when no
    /// workload is given.
    pub fn workload_words(&self) -> Vec<String> {
        let w = &self.measured.workload;
        let flag = |b: bool| if b { "on" } else { "off" };
        let mut words = vec![
            format!("--file-test-mode={}", w.mode.short_name()),
            format!("--file-io-mode={}", w.io_mode.name()),
            format!("--file-num={}", w.file_num),
            format!("--file-total-size={}", w.total_size),
            format!("--file-block-size={}", w.block_size),
            format!("--file-rw-ratio={}", ratio_text(w.rw_ratio)),
            format!("--file-fsync-freq={}", w.fsync_freq),
            format!("--file-fsync-all={}", flag(w.fsync_all)),
            format!("--file-fsync-end={}", flag(w.fsync_end)),
            format!("--file-fsync-mode={}", fsync_mode_name(w.fsync_mode)),
            format!("--file-data={}", data_name(w)),
            format!("--rate={}", w.rate),
        ];
        if !w.extra_flags.is_empty() {
            words.push(format!("--file-extra-flags={}", w.extra_flags.join(",")));
        }
        if w.block_size > 0 && w.request_size > w.block_size {
            words.push(format!(
                "--file-merged-requests={}",
                w.request_size / w.block_size
            ));
        }
        if w.io_mode == fileio::spec::IoMode::Async {
            words.push(format!("--file-async-backlog={}", w.queue_depth));
        }
        words
    }

    /// The figures the baseline measured, each one anchored: the rates,
    /// and the mean and recorded percentiles of each latency it has
    /// (event, read, write, fsync).
    pub fn figures(&self) -> Vec<Figure> {
        figures_of(&self.measured)
    }
}

/// Which of `runs` is the median by event rate (the lower of the middle two
/// for an even count): the run whose facts a baseline of several runs
/// keeps ([`Baseline::median_of`]). 0 for none.
pub fn median_run(runs: &[&RunResult]) -> usize {
    let rate = |r: &RunResult| r.counts.events as f64 / r.total_time_s;
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&i, &j| rate(runs[i]).total_cmp(&rate(runs[j])));
    order
        .get(runs.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0)
}

/// writes/s when the run wrote, else reads/s.
fn headline_of(r: &RunResult) -> Figure {
    if r.rates.writes_per_s > 0.0 {
        Figure::Rate(Rate::Writes)
    } else {
        Figure::Rate(Rate::Reads)
    }
}

/// The median of `values` (the mean of the middle two for an even count);
/// None for none.
fn median(mut values: Vec<f64>) -> Option<f64> {
    values.retain(|v| v.is_finite());
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// Labels as `layout=1xraidz2-6 log=no`; `no ZFS facts` for none.
fn labels_text(l: &::report::labels::Labels) -> String {
    if l.is_empty() {
        return "no ZFS facts".into();
    }
    l.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The figures `r` measured, each one a baseline anchors
/// ([`Baseline::figures`]).
fn figures_of(r: &RunResult) -> Vec<Figure> {
    let mut out: Vec<Figure> = Rate::ALL.into_iter().map(Figure::Rate).collect();
    for key in ANCHORED_LATENCIES {
        let Some(l) = r.latency.get(&key) else {
            continue;
        };
        if l.count == 0 || l.mean_ms.is_nan() || l.mean_ms <= 0.0 {
            continue;
        }
        out.push(Figure::Mean(key));
        for p in &l.percentiles {
            if p.p > 0.0 && p.p <= 100.0 && p.ms > 0.0 {
                out.push(Figure::Percentile(key, p.p));
            }
        }
    }
    out
}

/// The latencies a baseline anchors. `event_service` exists only with
/// `--rate`, which the simulator does not model.
const ANCHORED_LATENCIES: [LatencyKey; 4] = [
    LatencyKey::Event,
    LatencyKey::Read,
    LatencyKey::Write,
    LatencyKey::Fsync,
];

/// Why `r` cannot be a baseline, whatever the workload asked.
fn check_run(r: &RunResult) -> Result<(), BaselineError> {
    if r.kind == ResultKind::Predicted || r.anchor.is_some() || r.prediction.is_some() {
        return Err(BaselineError::Predicted);
    }
    if r.interrupted {
        return Err(BaselineError::Interrupted {
            seconds: r.total_time_s,
        });
    }
    if r.durability.is_some() {
        return Err(BaselineError::Failed {
            reason: "a durability check's result, not a workload run".into(),
        });
    }
    if !r.ranks.is_empty() || r.distributed.is_some() {
        return Err(BaselineError::Distributed);
    }
    if r.counts.events == 0 || r.total_time_s.is_nan() || r.total_time_s <= 0.0 {
        return Err(BaselineError::Failed {
            reason: format!(
                "it completed {} events in {:.1} s",
                r.counts.events, r.total_time_s
            ),
        });
    }
    Ok(())
}

/// The first field in which two workloads differ, but for the thread
/// count, the run's length, its engine and its directory.
/// Whether both workloads give each thread a file of its own, of the same
/// size (one file per thread, `--file-num` = `--threads`): fio's `numjobs`
/// with a size per job, where a thread count change brings its files.
fn file_per_thread(base: &WorkloadSummary, asked: &WorkloadSummary) -> bool {
    let own_files = |w: &WorkloadSummary| w.threads > 0 && w.file_num == u64::from(w.threads);
    own_files(base)
        && own_files(asked)
        && base.total_size.is_multiple_of(base.file_num)
        && asked.total_size.is_multiple_of(asked.file_num)
        && base.total_size / base.file_num == asked.total_size / asked.file_num
}

fn workload_difference(base: &WorkloadSummary, asked: &WorkloadSummary) -> Option<BaselineError> {
    let differs = |field: WorkloadField, b: String, a: String| {
        (b != a).then_some(BaselineError::WorkloadDiffers {
            field,
            baseline: b,
            asked: a,
        })
    };
    let size = |n: u64| size_text(n);
    let flag = |b: bool| if b { "on" } else { "off" }.to_string();
    let writes = base.mode.writes() || asked.mode.writes();
    let mut checks = vec![
        differs(
            WorkloadField::Mode,
            base.mode.short_name().into(),
            asked.mode.short_name().into(),
        ),
        differs(
            WorkloadField::IoMode,
            base.io_mode.name().into(),
            asked.io_mode.name().into(),
        ),
    ];
    // A file per thread on both sides (fio's numjobs, each job its own file
    // of one size) grows the file set with the thread count: that is the
    // thread count changing, not the file set.
    if !file_per_thread(base, asked) {
        checks.extend([
            differs(
                WorkloadField::FileNum,
                base.file_num.to_string(),
                asked.file_num.to_string(),
            ),
            differs(
                WorkloadField::TotalSize,
                size(base.total_size),
                size(asked.total_size),
            ),
        ]);
    }
    checks.extend([
        differs(
            WorkloadField::BlockSize,
            size(base.block_size),
            size(asked.block_size),
        ),
        differs(
            WorkloadField::RequestSize,
            format!("{} per request", size(base.request_size)),
            format!("{} per request", size(asked.request_size)),
        ),
    ]);
    // The mix only matters to a mode that mixes.
    if base.mode == Mode::RndRw {
        checks.push(differs(
            WorkloadField::RwRatio,
            ratio_text(base.rw_ratio),
            ratio_text(asked.rw_ratio),
        ));
    }
    // Commits only matter to a mode that writes.
    if writes {
        checks.extend([
            differs(
                WorkloadField::FsyncAll,
                flag(base.fsync_all),
                flag(asked.fsync_all),
            ),
            differs(
                WorkloadField::FsyncFreq,
                base.fsync_freq.to_string(),
                asked.fsync_freq.to_string(),
            ),
            differs(
                WorkloadField::FsyncEnd,
                flag(base.fsync_end),
                flag(asked.fsync_end),
            ),
            differs(
                WorkloadField::FsyncMode,
                fsync_mode_name(base.fsync_mode).into(),
                fsync_mode_name(asked.fsync_mode).into(),
            ),
            differs(WorkloadField::Data, data_name(base), data_name(asked)),
        ]);
    }
    checks.extend([
        differs(
            WorkloadField::ExtraFlags,
            flags_text(&base.extra_flags),
            flags_text(&asked.extra_flags),
        ),
        differs(
            WorkloadField::Rate,
            base.rate.to_string(),
            asked.rate.to_string(),
        ),
        differs(
            WorkloadField::QueueDepth,
            base.queue_depth.to_string(),
            asked.queue_depth.to_string(),
        ),
    ]);
    checks.into_iter().flatten().next()
}

fn fsync_mode_name(m: FsyncMode) -> &'static str {
    match m {
        FsyncMode::Fsync => "fsync",
        FsyncMode::Fdatasync => "fdatasync",
    }
}

fn data_name(w: &WorkloadSummary) -> String {
    match w.data {
        fileio::spec::DataPattern::Zero => "zero".into(),
        fileio::spec::DataPattern::Random => "random".into(),
    }
}

fn flags_text(flags: &[String]) -> String {
    let mut f = flags.to_vec();
    f.sort();
    if f.is_empty() {
        "(none)".into()
    } else {
        f.join(",")
    }
}

/// A read/write ratio as the option takes it; equal to 6 digits (sysbench
/// stores it as an f32, an import computes it from percentages).
fn ratio_text(r: f64) -> String {
    format!("{}", (r * 1e6).round() / 1e6)
}

/// Bytes as fileio's size options take them: `4K`, `16K`, `4G` when a
/// whole number of a binary unit, else the bytes.
pub(crate) fn size_text(n: u64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{}{unit}", n >> shift);
        }
    }
    n.to_string()
}

/// A rate of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rate {
    Reads,
    Writes,
    Fsyncs,
    ReadMib,
    WrittenMib,
}

impl Rate {
    pub const ALL: [Rate; 5] = [
        Rate::Reads,
        Rate::Writes,
        Rate::Fsyncs,
        Rate::ReadMib,
        Rate::WrittenMib,
    ];

    pub(crate) fn of(self, r: &fileio::result::Rates) -> f64 {
        match self {
            Rate::Reads => r.reads_per_s,
            Rate::Writes => r.writes_per_s,
            Rate::Fsyncs => r.fsyncs_per_s,
            Rate::ReadMib => r.read_mib_per_s,
            Rate::WrittenMib => r.written_mib_per_s,
        }
    }

    pub(crate) fn set(self, r: &mut fileio::result::Rates, v: f64) {
        match self {
            Rate::Reads => r.reads_per_s = v,
            Rate::Writes => r.writes_per_s = v,
            Rate::Fsyncs => r.fsyncs_per_s = v,
            Rate::ReadMib => r.read_mib_per_s = v,
            Rate::WrittenMib => r.written_mib_per_s = v,
        }
    }
}

/// One figure a baseline anchors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    Rate(Rate),
    /// The mean of a latency, ms.
    Mean(LatencyKey),
    /// A percentile (0 to 100) of a latency, ms.
    Percentile(LatencyKey, f64),
}

impl Figure {
    /// The name in a result's `prediction` and `anchor` blocks, as
    /// crate::uncertainty names its figures (`reads_per_s`,
    /// `event_mean_ms`, `event_p95_ms`).
    pub fn name(self) -> String {
        match self {
            Figure::Rate(Rate::Reads) => "reads_per_s".into(),
            Figure::Rate(Rate::Writes) => "writes_per_s".into(),
            Figure::Rate(Rate::Fsyncs) => "fsyncs_per_s".into(),
            Figure::Rate(Rate::ReadMib) => "read_mib_per_s".into(),
            Figure::Rate(Rate::WrittenMib) => "written_mib_per_s".into(),
            Figure::Mean(key) => format!("{}_mean_ms", key.name()),
            Figure::Percentile(key, p) => format!("{}_p{}_ms", key.name(), percent_text(p)),
        }
    }

    /// How a table labels it (`reads/s`, `write MiB/s`, `event avg ms`,
    /// `fsync p99 ms`).
    pub fn label(self) -> String {
        match self {
            Figure::Rate(Rate::Reads) => "reads/s".into(),
            Figure::Rate(Rate::Writes) => "writes/s".into(),
            Figure::Rate(Rate::Fsyncs) => "fsyncs/s".into(),
            Figure::Rate(Rate::ReadMib) => "read MiB/s".into(),
            Figure::Rate(Rate::WrittenMib) => "write MiB/s".into(),
            Figure::Mean(key) => format!("{} avg ms", key.name()),
            Figure::Percentile(key, p) => format!("{} p{} ms", key.name(), percent_text(p)),
        }
    }

    /// Set the figure in `r` to `v` (a percentile `r` did not record is
    /// left out).
    pub fn set(self, r: &mut RunResult, v: f64) {
        match self {
            Figure::Rate(rate) => rate.set(&mut r.rates, v),
            Figure::Mean(key) => {
                if let Some(l) = r.latency.get_mut(&key) {
                    l.mean_ms = v;
                }
            }
            Figure::Percentile(key, p) => {
                if let Some(l) = r.latency.get_mut(&key) {
                    for q in l.percentiles.iter_mut().filter(|q| (q.p - p).abs() < 1e-9) {
                        q.ms = v;
                    }
                }
            }
        }
    }

    /// The figure in `r`, when `r` has it.
    pub fn of(self, r: &RunResult) -> Option<f64> {
        match self {
            Figure::Rate(rate) => Some(rate.of(&r.rates)),
            Figure::Mean(key) => r
                .latency
                .get(&key)
                .filter(|l| l.count > 0)
                .map(|l| l.mean_ms),
            Figure::Percentile(key, p) => r
                .latency
                .get(&key)
                .filter(|l| l.count > 0)
                .and_then(|l| l.at(p)),
        }
    }
}

/// A percentile as its name shows it: `95`, `99.9`.
fn percent_text(p: f64) -> String {
    let t = format!("{:.3}", p);
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(words: &[&str]) -> RunResult {
        let spec =
            RunSpec::from_words(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>()).unwrap();
        let mut r = RunResult::new(ResultKind::Measured, spec.summary("psync"));
        r.counts.events = 100;
        r.total_time_s = 10.0;
        r
    }

    fn spec(words: &[&str]) -> RunSpec {
        RunSpec::from_words(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn another_thread_count_or_length_is_the_same_workload() {
        let b = Baseline::new(
            "a.json",
            measured(&["--file-test-mode=rndrw", "--file-fsync-all", "--threads=4"]),
        )
        .unwrap();
        for asked in [
            &["--file-test-mode=rndrw", "--file-fsync-all", "--threads=16"][..],
            &["--file-test-mode=rndrw", "--file-fsync-all", "--time=240"][..],
            &[
                "--file-test-mode=rndrw",
                "--file-fsync-all",
                "--rand-seed=7",
            ][..],
        ] {
            b.check_workload(&spec(asked)).unwrap();
        }
    }

    #[test]
    fn a_workload_that_differs_names_the_option_and_both_values() {
        let b = Baseline::new(
            "a.json",
            measured(&[
                "--file-test-mode=rndrw",
                "--file-fsync-all",
                "--file-block-size=4K",
            ]),
        )
        .unwrap();
        let cases: [(&[&str], WorkloadField, &str, &str); 4] = [
            (
                &[
                    "--file-test-mode=rndwr",
                    "--file-fsync-all",
                    "--file-block-size=4K",
                ],
                WorkloadField::Mode,
                "rndrw",
                "rndwr",
            ),
            (
                &[
                    "--file-test-mode=rndrw",
                    "--file-fsync-all",
                    "--file-block-size=16K",
                ],
                WorkloadField::BlockSize,
                "4K",
                "16K",
            ),
            (
                &["--file-test-mode=rndrw", "--file-block-size=4K"],
                WorkloadField::FsyncAll,
                "on",
                "off",
            ),
            (
                &[
                    "--file-test-mode=rndrw",
                    "--file-fsync-all",
                    "--file-block-size=4K",
                    "--file-total-size=4G",
                ],
                WorkloadField::TotalSize,
                "2G",
                "4G",
            ),
        ];
        for (asked, field, base, ask) in cases {
            match b.check_workload(&spec(asked)).unwrap_err() {
                SimError::Baseline {
                    id,
                    problem:
                        BaselineError::WorkloadDiffers {
                            field: f,
                            baseline,
                            asked,
                        },
                } => {
                    assert_eq!((id.as_str(), f), ("a.json", field));
                    assert_eq!((baseline.as_str(), asked.as_str()), (base, ask));
                }
                other => panic!("{other}"),
            }
        }
        let line = b
            .check_workload(&spec(&["--file-test-mode=rndrw", "--file-block-size=4K"]))
            .unwrap_err()
            .to_string();
        assert!(
            line.contains("--file-fsync-all") && !line.contains('\n'),
            "{line}"
        );
    }

    #[test]
    fn a_file_per_thread_grows_with_the_thread_count() {
        // fio numjobs=N, 100 MiB a job: N files of 100 MiB.
        let words = |t: u32, size: &str| {
            [
                "--file-test-mode=rndwr".to_string(),
                "--file-extra-flags=sync".into(),
                format!("--threads={t}"),
                format!("--file-num={t}"),
                format!("--file-total-size={size}"),
            ]
        };
        fn as_str(w: &[String; 5]) -> Vec<&str> {
            w.iter().map(String::as_str).collect()
        }
        let b = Baseline::new("a.json", measured(&as_str(&words(1, "100M")))).unwrap();
        let asked = spec(&as_str(&words(8, "800M")));
        b.check_workload(&asked).unwrap();
        // A runs its own files; B the ones asked.
        let a = b.spec_of_baseline(&asked);
        assert_eq!((a.threads, a.files.file_num), (1, 1));
        assert_eq!(a.files.total_size, 100 << 20);
        assert_eq!(b.spec_asked(&asked).files.file_num, 8);
        // Files of another size, or files not one a thread, are another
        // file set.
        for other in [words(8, "1600M"), {
            let mut w = words(8, "800M");
            w[3] = "--file-num=4".into();
            w
        }] {
            assert!(matches!(
                b.check_workload(&spec(&as_str(&other))),
                Err(SimError::Baseline {
                    problem: BaselineError::WorkloadDiffers { .. },
                    ..
                })
            ));
        }
    }

    #[test]
    fn read_only_modes_ignore_the_commit_options() {
        let b = Baseline::new("a.json", measured(&["--file-test-mode=rndrd"])).unwrap();
        b.check_workload(&spec(&["--file-test-mode=rndrd", "--file-fsync-freq=0"]))
            .unwrap();
    }

    #[test]
    fn predictions_interrupted_and_empty_runs_are_refused() {
        let mut p = measured(&["--file-test-mode=rndwr"]);
        p.kind = ResultKind::Predicted;
        let mut i = measured(&["--file-test-mode=rndwr"]);
        i.interrupted = true;
        let mut f = measured(&["--file-test-mode=rndwr"]);
        f.counts.events = 0;
        let problem = |r: RunResult| match Baseline::new("x", r).unwrap_err() {
            SimError::Baseline { problem, .. } => problem,
            other => panic!("{other}"),
        };
        assert_eq!(problem(p), BaselineError::Predicted);
        assert!(matches!(problem(i), BaselineError::Interrupted { .. }));
        assert!(matches!(problem(f), BaselineError::Failed { .. }));
    }

    fn run_at(writes: u32, p95: f64, threads: &str) -> Baseline {
        let mut r = measured(&["--file-test-mode=rndwr", "--file-fsync-all", threads]);
        let per_s = f64::from(writes);
        r.rates.writes_per_s = per_s;
        r.rates.fsyncs_per_s = per_s;
        // The event rate orders the runs as their writes do.
        r.counts.events = u64::from(writes) * 10;
        r.started_at = format!("t{writes}");
        r.latency.insert(
            LatencyKey::Event,
            fileio::result::LatencySummary {
                count: 10,
                mean_ms: 1000.0 / per_s,
                percentiles: vec![fileio::result::Percentile { p: 95.0, ms: p95 }],
                ..Default::default()
            },
        );
        Baseline::new(format!("{writes}.json"), r).unwrap()
    }

    #[test]
    fn several_runs_are_one_baseline_each_figure_their_median() {
        let b = Baseline::median_of(vec![
            run_at(200, 30.0, "--threads=4"),
            run_at(250, 20.0, "--threads=4"),
            run_at(150, 26.0, "--threads=4"),
        ])
        .unwrap();
        assert_eq!(b.id, "200.json + 250.json + 150.json");
        let m = &b.measured;
        assert_eq!(Figure::Rate(Rate::Writes).of(m), Some(200.0));
        assert_eq!(Figure::Mean(LatencyKey::Event).of(m), Some(5.0));
        // Each figure its own median: the p95 of another run than the rate's.
        assert_eq!(
            Figure::Percentile(LatencyKey::Event, 95.0).of(m),
            Some(26.0)
        );
        // The rest of the result is the median run's.
        assert_eq!(m.started_at, "t200");
        let shown: Vec<f64> = b.runs.iter().map(|r| r.headline).collect();
        assert_eq!(shown, [200.0, 250.0, 150.0]);
        // An even count: the mean of the middle two.
        let b = Baseline::median_of(vec![
            run_at(200, 30.0, "--threads=4"),
            run_at(100, 20.0, "--threads=4"),
        ])
        .unwrap();
        assert_eq!(Figure::Rate(Rate::Writes).of(&b.measured), Some(150.0));
        // One run is itself.
        let one = run_at(200, 30.0, "--threads=4");
        assert_eq!(Baseline::median_of(vec![one.clone()]).unwrap(), one);
    }

    #[test]
    fn runs_of_other_configurations_are_not_one_baseline() {
        let problem = |runs: Vec<Baseline>| match Baseline::median_of(runs).unwrap_err() {
            SimError::Baseline { problem, .. } => problem,
            other => panic!("{other}"),
        };
        let threads = problem(vec![
            run_at(200, 30.0, "--threads=4"),
            run_at(100, 20.0, "--threads=1"),
        ]);
        assert!(
            matches!(&threads, BaselineError::RunsDiffer { run, what, .. } if run == "100.json" && what.contains("--threads 1")),
            "{threads}"
        );
        let mut other = run_at(100, 20.0, "--threads=4");
        other.measured.workload.block_size = 4096;
        let block = problem(vec![run_at(200, 30.0, "--threads=4"), other]);
        assert!(
            block.to_string().contains("--file-block-size 4K"),
            "{block}"
        );
        let twice = problem(vec![
            run_at(200, 30.0, "--threads=4"),
            run_at(210, 30.0, "--threads=4"),
            run_at(200, 30.0, "--threads=4"),
        ]);
        assert!(matches!(&twice, BaselineError::SameRun { .. }), "{twice}");
    }

    #[test]
    fn figures_are_named_like_the_intervals() {
        assert_eq!(Figure::Rate(Rate::Writes).name(), "writes_per_s");
        assert_eq!(Figure::Mean(LatencyKey::Event).name(), "event_mean_ms");
        assert_eq!(
            Figure::Percentile(LatencyKey::Event, 95.0).name(),
            "event_p95_ms"
        );
        assert_eq!(
            Figure::Percentile(LatencyKey::Fsync, 99.9).label(),
            "fsync p99.9 ms"
        );
        assert_eq!(size_text(4096), "4K");
        assert_eq!(size_text(4 << 30), "4G");
        assert_eq!(size_text(1000), "1000");
    }
}

//! The simulator as `plan`'s performance model: each layout the planner
//! evaluates is described as a [`SystemModel`] and the plan's workload (a
//! fileio run) is simulated on it, so `plan`'s sync writes/s, their latency
//! and the read/write MiB/s are the simulator's figures, not a second
//! formula.
//!
//! Each distinct simulation is run once: the figures are kept under the
//! simulated system (as its system file) with the workload, so a layout
//! asked twice, or an interval's sample equal to a system already run
//! (one whose uncertain parameters do not apply), costs nothing more.
//! With intervals ([`SimPerformance::with_intervals`]) every layout is
//! sampled at the same points of one design with the same seed
//! (crate::uncertainty::Design, as a matrix's cells are), so two layouts'
//! intervals differ by what differs between the layouts.

use crate::structural::{Direction, StructuralError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use fileio::options::RunSpec;
use fileio::result::{LatencyKey, RunResult};
use report::table::{Cell, Table};
use zfs_model::network::Protocol as PlanProtocol;
use zfs_model::perf::{Bounds, PerfQuery, PerformanceModel, SyncInterval, WorkloadFigures};
use zfs_model::plan::Plan;

use crate::system::{DeviceSpec, Protocol, SystemModel};
use crate::SimError;

/// The workload `plan` predicts by default: the reference user's command
/// (`sysbench fileio` rndrw, 4 KiB, fsync after every write, 4 GiB), cut to
/// its first [`PLAN_EVENTS`] events so that a plan of a few dozen layouts
/// stays under a second. `--threads` comes from `plan --threads`.
pub(crate) const PLAN_WORKLOAD: [&str; 5] = [
    "--file-total-size=4G",
    "--file-test-mode=rndrw",
    "--file-block-size=4K",
    "--file-fsync-all",
    "--time=240",
];

/// Events simulated per prediction when the workload does not set
/// `--events`. On an HDD pool without a log device the write latency
/// depends on the txg syncs the ZIL competes with: 1,000 events (3.4
/// simulated seconds on 3xraidz2-8) end before the first sync and put the
/// write latency 12 % above a 240 s run's; 4,000 events (13.5 s, two syncs)
/// are within 3-7 % of it, about the spread between seeds of the 240 s run
/// itself (`tests/plan.rs` holds the plan to 10 % of a 60 s run).
pub const PLAN_EVENTS: u64 = 4000;

/// Events a plan prediction may spend warming up before it counts
/// (crate::RunOptions::warmup_events): it counts from the end of the first txg
/// sync, or after this many events. With a log device a 4 KiB sync workload
/// runs ~3,700 writes/s before the first sync and ~3,200 after it (3xraidz2-8,
/// SATA SSD log, 2x10G), and the first sync ends after ~9,000 events: a
/// plan that counted from the start reported the faster phase, 15 % above a
/// 240 s run. Four times [`PLAN_EVENTS`] bounds the warm-up of a workload
/// whose first sync comes late (a fast pool at the 5 s txg timeout).
pub const PLAN_WARMUP_EVENTS: u64 = 4 * PLAN_EVENTS;

/// Most threads a plan prediction simulates (each is a worker of the
/// simulation; `plan --threads` accepts any count).
pub(crate) const MAX_PLAN_THREADS: u32 = 1024;

/// Fileio events one plan prediction simulates at most: a plan predicts
/// every layout with and without a log device, so each gets a small share
/// of a run's budget. A `--time` workload reaching it stops there (its
/// steady state is reached long before: see [`PLAN_EVENTS`]).
pub(crate) const PLAN_BUDGET_EVENTS: u64 = 1_000_000;

/// How a plan prediction runs: within its budget, [`PLAN_EVENTS`] counted
/// after the warm-up, never stopped early (its runs end at `--events`).
pub fn plan_run_options() -> crate::RunOptions {
    crate::RunOptions {
        budget: plan_budget(),
        early_stop: false,
        warmup_events: Some(PLAN_WARMUP_EVENTS),
        ..crate::RunOptions::default()
    }
}

fn plan_budget() -> crate::limits::Budget {
    crate::limits::Budget {
        events: PLAN_BUDGET_EVENTS,
    }
}

/// One simulation's figures, filled by the first thread that asks for it
/// (the others wait for it rather than simulate it again).
type Slot = Arc<OnceLock<Result<WorkloadFigures, String>>>;

/// The simulator, running `words` (fileio options) on each layout.
pub struct SimPerformance {
    words: Vec<String>,
    /// The sampling design of the intervals (None: points only).
    design: Option<Design>,
    /// Figures by what the simulation depends on ([`SimPerformance::key`]).
    cache: Mutex<HashMap<String, Slot>>,
}

use crate::uncertainty::Design;

impl SimPerformance {
    /// The model for `workload` (fileio options; empty: [`PLAN_WORKLOAD`]).
    /// The options are checked here, once, with fileio's parser.
    pub fn new(workload: &[String]) -> Result<SimPerformance, SimError> {
        let mut words: Vec<String> = if workload.is_empty() {
            PLAN_WORKLOAD.iter().map(|w| (*w).to_string()).collect()
        } else {
            workload
                .iter()
                .filter(|w| w.as_str() != "run" && w.as_str() != "fileio")
                .cloned()
                .collect()
        };
        if !words
            .iter()
            .any(|w| w.starts_with("--events=") || w.starts_with("--max-requests="))
        {
            words.push(format!("--events={PLAN_EVENTS}"));
        }
        // sysbench's default seed (0) takes the clock: a plan must give the
        // same figures every time it is asked.
        if !words.iter().any(|w| w.starts_with("--rand-seed=")) {
            words.push("--rand-seed=1".into());
        }
        let m = SimPerformance {
            words,
            design: None,
            cache: Mutex::new(HashMap::new()),
        };
        // The same bounds as `simulate`, refused here, once, before any
        // layout is predicted.
        crate::limits::check_workload(&m.spec(1)?, plan_budget(), 1)?;
        Ok(m)
    }

    /// The same model giving each prediction an interval from `samples`
    /// samples of the uncertain parameters' ranges (at least 2), one
    /// Latin-hypercube design for every layout, seeded with the workload's
    /// seed (common random numbers, as `simulate matrix` does).
    pub fn with_intervals(mut self, samples: usize) -> Result<SimPerformance, SimError> {
        let seed = self.spec(1)?.rand_seed;
        self.design = Some(Design::new(samples, seed));
        Ok(self)
    }

    /// Samples of each interval (None: points only).
    pub fn samples(&self) -> Option<usize> {
        self.design.as_ref().map(Design::samples)
    }

    /// Distinct simulations asked for so far: the cost of a plan, each
    /// key counted once however many layouts or samples share it.
    pub fn simulations(&self) -> usize {
        self.cache.lock().map_or(0, |c| c.len())
    }

    /// The fileio options each prediction runs (before `--threads`).
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// The run with `threads` workers; the workload's own `--threads`, when
    /// it has one, wins (it comes later on the command line).
    pub fn spec(&self, threads: u32) -> Result<RunSpec, SimError> {
        let mut words = vec![format!("--threads={threads}")];
        words.extend(self.words.iter().cloned());
        Ok(RunSpec::from_words(&words)?)
    }
}

/// The system a plan query describes. The simulator's client for plan's
/// `nfs` is the reference user's: a guest on an ESXi NFS datastore (every
/// write stable); `iscsi` and `smb` are the simulator's presets of those
/// names.
pub(crate) fn system_of(q: &PerfQuery<'_>) -> Result<SystemModel, String> {
    let protocol = match q.protocol {
        PlanProtocol::Nfs => Protocol::EsxiNfs,
        PlanProtocol::Local => Protocol::Local,
        PlanProtocol::Iscsi => Protocol::Iscsi,
        PlanProtocol::Smb => Protocol::Smb,
    };
    let group = q
        .layout
        .placements
        .first()
        .and_then(|p| q.groups.get(p.group))
        .ok_or_else(|| "not predicted: the layout has no disks".to_string())?;
    let mut m = SystemModel {
        name: "plan".into(),
        ..SystemModel::default()
    };
    m.client.protocol = protocol;
    if let Some(link) = q.link {
        m.link.link = link.into();
    }
    m.server.ram = q.ram_bytes.into();
    m.pool.layout = q.layout.shape.into();
    m.pool.disk = DeviceSpec::Name(group.class.name().into());
    m.pool.disk_size = group.bytes.into();
    m.pool.recordsize = q.recordsize.into();
    m.log = q.log.map(|l| DeviceSpec::Name(l.class.name().into()));
    // A plan's log is one device.
    m.log_mirror = None;
    Ok(m)
}

/// The plan's figures of a predicted run.
pub fn figures(r: &RunResult) -> WorkloadFigures {
    let mean_ms = |key| {
        r.latency
            .get(&key)
            .map_or(0.0, |l: &fileio::result::LatencySummary| l.mean_ms)
    };
    let write_ms = mean_ms(LatencyKey::Write);
    // Every fsync of a --file-fsync-all workload follows one write; with
    // fewer fsyncs than writes, their cost is shared out per write.
    let fsync_ms = if r.counts.writes > 0 {
        mean_ms(LatencyKey::Fsync) * r.counts.fsyncs.min(r.counts.writes) as f64
            / r.counts.writes as f64
    } else {
        0.0
    };
    let event = r.latency.get(&LatencyKey::Event);
    WorkloadFigures {
        reads_per_s: r.rates.reads_per_s,
        writes_per_s: r.rates.writes_per_s,
        fsyncs_per_s: r.rates.fsyncs_per_s,
        read_mib_per_s: r.rates.read_mib_per_s,
        write_mib_per_s: r.rates.written_mib_per_s,
        write_latency_ms: write_ms,
        commit_latency_ms: write_ms + fsync_ms,
        event_latency_ms: event.map_or(0.0, |l| l.mean_ms),
        event_latency_p95_ms: event.and_then(|l| l.at(95.0)),
    }
}

impl SimPerformance {
    /// The whole predicted run of a plan query (the figures are
    /// [`figures`] of it).
    pub fn run(&self, q: &PerfQuery<'_>) -> Result<RunResult, String> {
        check_threads(q.threads)?;
        self.simulate(&system_of(q)?, q.threads)
    }

    fn simulate(&self, system: &SystemModel, threads: u32) -> Result<RunResult, String> {
        let spec = self.spec(threads).map_err(|e| e.to_string())?;
        // SimError's messages carry no command prefix of their own.
        crate::Simulation::new(&spec, system)
            .options(&plan_run_options())
            .run()
            .map(|s| s.result)
            .map_err(|e| format!("not predicted: {e}"))
    }

    /// What a simulation depends on: the threads, the fileio options and
    /// the whole system as its system file (the engine reads nothing else;
    /// its seeds come from the options). Equal keys are the same
    /// simulation, so they give the same figures to the last bit.
    pub fn key(&self, system: &SystemModel, threads: u32) -> Result<String, String> {
        let toml = system
            .to_toml()
            .map_err(|e| format!("not predicted: {e}"))?;
        Ok(format!(
            "--threads={threads} {}\n{toml}",
            self.words.join(" ")
        ))
    }

    /// The figures of `system` with `threads` workers, simulated once per
    /// key.
    pub(crate) fn figures_of(
        &self,
        system: &SystemModel,
        threads: u32,
    ) -> Result<WorkloadFigures, String> {
        let key = self.key(system, threads)?;
        let slot: Slot = {
            let mut cache = self
                .cache
                .lock()
                .map_err(|_| "not predicted: a prediction failed".to_string())?;
            Arc::clone(cache.entry(key).or_default())
        };
        slot.get_or_init(|| self.simulate(system, threads).map(|r| figures(&r)))
            .clone()
    }

    /// The interval of `q`'s sync figures: each sample of the design on
    /// `q`'s system, simulated with the point's workload and seed.
    fn sampled(
        &self,
        design: &Design,
        q: &PerfQuery<'_>,
        point: &WorkloadFigures,
    ) -> Result<SyncInterval, String> {
        let figures = self.sample_figures(design, &system_of(q)?, q.threads)?;
        let writes: Vec<f64> = figures.iter().map(|f| f.writes_per_s).collect();
        let commits: Vec<f64> = figures.iter().map(|f| f.commit_latency_ms).collect();
        Ok(SyncInterval {
            writes_per_s: bounds(writes, point.writes_per_s, Some(Direction::Rate)),
            commit_latency_ms: bounds(commits, point.commit_latency_ms, Some(Direction::Latency)),
            confidence: crate::uncertainty::CONFIDENCE,
            samples: figures.len(),
        })
    }

    /// The figures of `system` with `threads` workers at each point of
    /// `design`, in sample order, each simulated once per key.
    pub(crate) fn sample_figures(
        &self,
        design: &Design,
        system: &SystemModel,
        threads: u32,
    ) -> Result<Vec<WorkloadFigures>, String> {
        let spec = self
            .spec(threads)
            .map_err(|e| format!("not predicted: {e}"))?;
        let sampled = design
            .apply(system, None, &spec)
            .map_err(|e| format!("not predicted: {e}"))?;
        let systems = &sampled.systems;
        // The samples of one query share the cores with the other queries'
        // threads; a plan of one layout still uses them all.
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let out: Mutex<Vec<Option<Result<WorkloadFigures, String>>>> =
            Mutex::new(vec![None; systems.len()]);
        std::thread::scope(|s| {
            for _ in 0..cores.clamp(1, systems.len().max(1)) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(m) = systems.get(i) else { break };
                    let f = self.figures_of(m, threads);
                    if let Ok(mut out) = out.lock() {
                        out[i] = Some(f);
                    }
                });
            }
        });
        out.into_inner()
            .map_err(|_| "not predicted: a sample failed".to_string())?
            .into_iter()
            .map(|f| f.unwrap_or_else(|| Err("not predicted: a sample failed".into())))
            .collect()
    }

    /// The sampling design of the intervals (None: points only).
    pub(crate) fn design(&self) -> Option<&Design> {
        self.design.as_ref()
    }
}

fn check_threads(threads: u32) -> Result<(), String> {
    if threads > MAX_PLAN_THREADS {
        return Err(format!(
            "not predicted: --threads above {MAX_PLAN_THREADS} is not simulated"
        ));
    }
    Ok(())
}

/// The 10th to 90th percentile of `v` (linear between ranks, as
/// crate::uncertainty takes them), widened to hold `point` and, for a
/// figure going `direction`, by the model's structural error as every
/// printed interval is (crate::structural); `None` keeps the samples'
/// spread alone (an anchored figure whose configuration is the baseline's).
pub(crate) fn bounds(mut v: Vec<f64>, point: f64, direction: Option<Direction>) -> Bounds {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| -> f64 {
        if v.is_empty() {
            return point;
        }
        let pos = q * (v.len() - 1) as f64;
        // From 0 to len - 1.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let (i, f) = (pos.floor() as usize, pos.fract());
        let j = (i + 1).min(v.len() - 1);
        v[i] + f * (v[j] - v[i])
    };
    let tail = (1.0 - crate::uncertainty::CONFIDENCE) / 2.0;
    let (low, high) = (at(tail).min(point), at(1.0 - tail).max(point));
    let (low, high) = match direction {
        Some(d) => StructuralError::current().widen(low, high, d),
        None => (low, high),
    };
    Bounds { low, high }
}

impl PerformanceModel for SimPerformance {
    fn predict(&self, q: &PerfQuery<'_>) -> Result<WorkloadFigures, String> {
        check_threads(q.threads)?;
        self.figures_of(&system_of(q)?, q.threads)
    }

    fn interval(
        &self,
        q: &PerfQuery<'_>,
        point: &WorkloadFigures,
    ) -> Option<Result<SyncInterval, String>> {
        let design = self.design.as_ref()?;
        Some(self.sampled(design, q, point))
    }

    fn assumptions(&self) -> Vec<String> {
        let mut lines = vec![
            format!(
                "predicted by the simulator (docs/prediction.md) running fileio {} with plan's --threads, --ram, --link and --recordsize",
                self.words.join(" ")
            ),
            "nfs is an ESXi guest's NFS datastore (every write stable, 2 stable journal writes per guest journal commit, which concurrent fsyncs share); each disk and log device is its class's model (zfs_model::diskmodel); --disk-* overrides and log mirrors are not simulated".into(),
        ];
        if let Some(d) = &self.design {
            lines.push(format!(
                "ranges: typical (low-high) is an {:.0} % interval, the 10th to 90th percentile of {} samples of the uncertain parameters' ranges (Latin hypercube, docs/prediction.md), the same samples and seed ({}) on every layout, {}",
                crate::uncertainty::CONFIDENCE * 100.0,
                d.samples(),
                d.seed(),
                StructuralError::current().describe()
            ));
        }
        lines
    }
}

/// `plan`'s predicted workload table: one row per layout, without and with
/// the log device, the figures of the simulator's matrix table.
pub fn workload_table(plan: &Plan) -> Table {
    let mut t = Table::new(&[
        ("layout", false),
        ("log", false),
        ("reads/s", true),
        ("writes/s", true),
        ("read MiB/s", true),
        ("write MiB/s", true),
        ("write ms", true),
        ("avg lat ms", true),
        ("p95 ms", true),
    ]);
    let log_name = plan
        .request
        .log
        .as_ref()
        .map(|l| l.class.name().to_string());
    for e in &plan.entries {
        let p = &e.performance;
        let rows = [
            ("none".to_string(), p.predicted.as_ref()),
            (
                log_name.clone().unwrap_or_default(),
                p.predicted_with_log.as_ref(),
            ),
        ];
        for (log, f) in rows {
            let Some(f) = f else { continue };
            let mut row = vec![Cell::Text(e.layout.clone()), Cell::Text(log)];
            row.extend(
                [
                    Some(f.reads_per_s),
                    Some(f.writes_per_s),
                    Some(f.read_mib_per_s),
                    Some(f.write_mib_per_s),
                    Some(f.write_latency_ms),
                    Some(f.event_latency_ms),
                    f.event_latency_p95_ms,
                ]
                .map(Cell::Num),
            );
            t.rows.push(row);
        }
    }
    t.notes.extend(
        plan.prediction_assumptions
            .iter()
            .map(|a| format!("PREDICTION: {a}")),
    );
    t
}

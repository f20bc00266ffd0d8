//! `plan --baseline RUN`: the plan's figures of each layout, with and
//! without the log device, anchored to a measured run. Each layout the
//! planner asks about is the baseline's system with the plan's changes
//! (layout, disks, log device, and the link, client, RAM, recordsize and
//! disk class where the plan names its own), simulated with the same
//! workload, seed and parameter draws as the baseline's system; each figure
//! is the measured one times the simulated change.

use crate::structural::Direction;
use std::sync::{Mutex, OnceLock};

use zfs_model::network::Protocol as PlanProtocol;
use zfs_model::perf::{PerfQuery, PerformanceModel, SyncInterval, WorkloadFigures};

use crate::baseline::Baseline;
use crate::plan_model::{bounds, figures, SimPerformance};
use crate::system::{DeviceSpec, SystemModel};
use crate::SimError;

/// Which parts of the system the plan itself names; the others stay the
/// baseline's (the plan's defaults are not a description of the box).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanChanges {
    /// `--class`: the pool disks' class.
    pub disk_class: bool,
    /// `--link`.
    pub link: bool,
    /// `--protocol`.
    pub protocol: bool,
    /// `--ram`.
    pub ram: bool,
    /// `--recordsize`.
    pub recordsize: bool,
}

/// The simulator's plan model anchored to a measured baseline.
pub struct AnchoredPlan {
    model: SimPerformance,
    baseline: Baseline,
    /// The baseline's system (configuration A).
    system: SystemModel,
    changes: PlanChanges,
    measured: WorkloadFigures,
    /// A's simulated figures at the typical parameters and at each sample.
    a_point: OnceLock<Result<WorkloadFigures, String>>,
    a_samples: OnceLock<Result<Vec<WorkloadFigures>, String>>,
    /// The layouts (and whether with the log device) that are A itself.
    marked: Mutex<Vec<(String, bool)>>,
}

impl AnchoredPlan {
    /// `model` (the plan's workload) anchored to `baseline`, which ran on
    /// `system`; refused when the plan's workload is not the baseline's but
    /// for its thread count.
    pub fn new(
        model: SimPerformance,
        baseline: Baseline,
        system: SystemModel,
        changes: PlanChanges,
    ) -> Result<AnchoredPlan, SimError> {
        let threads = baseline.measured.workload.threads;
        baseline.check_workload(&model.spec(threads)?)?;
        system.resolve()?;
        let measured = figures(&baseline.measured);
        Ok(AnchoredPlan {
            model,
            baseline,
            system,
            changes,
            measured,
            a_point: OnceLock::new(),
            a_samples: OnceLock::new(),
            marked: Mutex::new(Vec::new()),
        })
    }

    /// The layouts whose configuration is the baseline's own, with whether
    /// it is the row with the log device: their figures are the measured
    /// ones.
    pub fn baseline_rows(&self) -> Vec<(String, bool)> {
        self.marked.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// Mark the baseline's rows in `plan`'s workload table
    /// (crate::plan_model::workload_table: layout, log, figures...).
    pub fn mark_rows(&self, table: &mut report::table::Table) {
        use report::table::Cell;
        for (layout, with_log) in self.baseline_rows() {
            for row in &mut table.rows {
                let is_layout = matches!(row.first(), Some(Cell::Text(t)) if *t == layout);
                if let (true, Some(Cell::Text(log))) = (is_layout, row.get_mut(1)) {
                    if (log.as_str() != "none") == with_log {
                        *log = format!("{log} (baseline, measured)");
                    }
                }
            }
        }
    }

    /// The baseline as given (its file).
    pub fn baseline_id(&self) -> &str {
        &self.baseline.id
    }

    /// The line that marks the baseline in a plan: which row is its own
    /// configuration (its figures the measured ones), or that none is.
    pub fn baseline_note(&self) -> String {
        let rows = self.baseline_rows();
        let head = format!(
            "Baseline: {} ({} threads); every Sync figure is its measured figure times the simulated change",
            report::escape::terminal_field(&self.baseline.named()),
            self.threads()
        );
        if rows.is_empty() {
            return format!(
                "{head}. No row is the baseline's own configuration (another layout, disks, log device, link, client or thread count)."
            );
        }
        let named: Vec<String> = rows
            .iter()
            .map(|(layout, log)| {
                format!(
                    "{layout} {}",
                    if *log {
                        "with the log device"
                    } else {
                        "without a log device"
                    }
                )
            })
            .collect();
        format!(
            "{head}. The baseline's own configuration: {} (its figures are the measured ones).",
            named.join(", ")
        )
    }

    fn threads(&self) -> u32 {
        self.baseline.measured.workload.threads
    }

    /// The system the plan asks about: A with the plan's changes.
    fn system_of(&self, q: &PerfQuery<'_>) -> Result<SystemModel, String> {
        let plan = crate::plan_model::system_of(q)?;
        let mut m = self.system.clone();
        m.pool.layout = plan.pool.layout;
        m.pool.disk_size = plan.pool.disk_size;
        if self.changes.disk_class {
            m.pool.disk = plan.pool.disk;
        }
        m.log = q.log.map(|l| DeviceSpec::Name(l.class.name().into()));
        // A plan's log is one device.
        m.log_mirror = None;
        if self.changes.link {
            m.link.link = plan.link.link;
        }
        // A plan's nfs is the reference user's ESXi datastore: a baseline's
        // own ESXi preset (its version, its guest file system) stays. A link
        // named for a local baseline makes its client the plan's.
        let esxi_kept = q.protocol == PlanProtocol::Nfs && m.client.protocol.is_esxi();
        let link_makes_remote =
            self.changes.link && q.link.is_some() && !m.client.protocol.remote();
        if (self.changes.protocol && !esxi_kept) || link_makes_remote {
            m.client.protocol = plan.client.protocol;
        }
        if self.changes.ram {
            m.server.ram = plan.server.ram;
        }
        if self.changes.recordsize {
            m.pool.recordsize = plan.pool.recordsize;
        }
        Ok(m)
    }

    fn a_point(&self) -> Result<WorkloadFigures, String> {
        self.a_point
            .get_or_init(|| self.model.figures_of(&self.system, self.threads()))
            .clone()
    }

    /// `q`'s configuration anchored at each sample of `design`: the
    /// measured figures times the sample's B/A (A and B at the same draws).
    fn anchored_samples(
        &self,
        design: &crate::uncertainty::Design,
        q: &PerfQuery<'_>,
    ) -> Result<Vec<WorkloadFigures>, String> {
        let a = self.a_samples(design)?;
        let b = self
            .model
            .sample_figures(design, &self.system_of(q)?, q.threads)?;
        Ok(a.iter()
            .zip(&b)
            .map(|(a, b)| anchor(&self.measured, a, b))
            .collect())
    }

    fn a_samples(
        &self,
        design: &crate::uncertainty::Design,
    ) -> Result<Vec<WorkloadFigures>, String> {
        self.a_samples
            .get_or_init(|| {
                self.model
                    .sample_figures(design, &self.system, self.threads())
            })
            .clone()
    }
}

/// Each figure's median over `samples`; a figure some sample lacks (a
/// percentile), or every figure when there are no samples, keeps
/// `typical`'s.
fn median_figures(samples: &[WorkloadFigures], typical: &WorkloadFigures) -> WorkloadFigures {
    fn median(mut v: Vec<f64>) -> Option<f64> {
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| crate::uncertainty::percentile(&v, 0.5))
    }
    let of = |f: fn(&WorkloadFigures) -> f64| -> f64 {
        median(samples.iter().map(f).collect()).unwrap_or(f(typical))
    };
    WorkloadFigures {
        reads_per_s: of(|f| f.reads_per_s),
        writes_per_s: of(|f| f.writes_per_s),
        fsyncs_per_s: of(|f| f.fsyncs_per_s),
        read_mib_per_s: of(|f| f.read_mib_per_s),
        write_mib_per_s: of(|f| f.write_mib_per_s),
        write_latency_ms: of(|f| f.write_latency_ms),
        commit_latency_ms: of(|f| f.commit_latency_ms),
        event_latency_ms: of(|f| f.event_latency_ms),
        event_latency_p95_ms: samples
            .iter()
            .map(|f| f.event_latency_p95_ms)
            .collect::<Option<Vec<f64>>>()
            .and_then(median)
            .or(typical.event_latency_p95_ms),
    }
}

/// `b`'s figures anchored: each the measured one times b/a. A latency the
/// baseline did not measure (a sysbench report has the event latency only)
/// takes the event latency's correction, measured over simulated.
fn anchor(measured: &WorkloadFigures, a: &WorkloadFigures, b: &WorkloadFigures) -> WorkloadFigures {
    let times = |m: f64, a: f64, b: f64| -> f64 {
        if a > 0.0 {
            m * b / a
        } else if b <= 0.0 {
            m
        } else {
            b
        }
    };
    let correction = if a.event_latency_ms > 0.0 && measured.event_latency_ms > 0.0 {
        measured.event_latency_ms / a.event_latency_ms
    } else {
        1.0
    };
    let latency = |m: f64, a: f64, b: f64| {
        if m > 0.0 {
            times(m, a, b)
        } else {
            b * correction
        }
    };
    WorkloadFigures {
        reads_per_s: times(measured.reads_per_s, a.reads_per_s, b.reads_per_s),
        writes_per_s: times(measured.writes_per_s, a.writes_per_s, b.writes_per_s),
        fsyncs_per_s: times(measured.fsyncs_per_s, a.fsyncs_per_s, b.fsyncs_per_s),
        read_mib_per_s: times(measured.read_mib_per_s, a.read_mib_per_s, b.read_mib_per_s),
        write_mib_per_s: times(
            measured.write_mib_per_s,
            a.write_mib_per_s,
            b.write_mib_per_s,
        ),
        write_latency_ms: latency(
            measured.write_latency_ms,
            a.write_latency_ms,
            b.write_latency_ms,
        ),
        commit_latency_ms: latency(
            measured.commit_latency_ms,
            a.commit_latency_ms,
            b.commit_latency_ms,
        ),
        event_latency_ms: latency(
            measured.event_latency_ms,
            a.event_latency_ms,
            b.event_latency_ms,
        ),
        event_latency_p95_ms: match (
            measured.event_latency_p95_ms,
            a.event_latency_p95_ms,
            b.event_latency_p95_ms,
        ) {
            (Some(m), Some(a), Some(b)) => Some(times(m, a, b)),
            (None, _, b) => b.map(|b| b * correction),
            _ => None,
        },
    }
}

impl PerformanceModel for AnchoredPlan {
    fn predict(&self, q: &PerfQuery<'_>) -> Result<WorkloadFigures, String> {
        let system = self.system_of(q)?;
        // The disks' size is the plan's (a run does not record it) and
        // moves no figure the plan shows: the row is the baseline's when
        // the rest is.
        let mut sized = system.clone();
        sized.pool.disk_size.clone_from(&self.system.pool.disk_size);
        let resolved = |m: &SystemModel| m.resolve().map_err(|e| format!("not predicted: {e}"));
        let same = q.threads == self.threads() && resolved(&sized)? == resolved(&self.system)?;
        if same {
            if let Ok(mut m) = self.marked.lock() {
                m.push((q.layout.shape.name(), q.log.is_some()));
            }
        }
        let b = self.model.figures_of(&system, q.threads)?;
        let typical = anchor(&self.measured, &self.a_point()?, &b);
        // With samples, each figure is the median of the sampled changes,
        // as crate::baseline::predict takes it (why: there).
        match self.model.design() {
            Some(design) => Ok(median_figures(&self.anchored_samples(design, q)?, &typical)),
            None => Ok(typical),
        }
    }

    fn interval(
        &self,
        q: &PerfQuery<'_>,
        point: &WorkloadFigures,
    ) -> Option<Result<SyncInterval, String>> {
        let design = self.model.design()?;
        let sampled = || -> Result<SyncInterval, String> {
            let anchored = self.anchored_samples(design, q)?;
            // Where the layout is the baseline's every sample is the
            // measurement: no model error to add (as crate::baseline::predict).
            let changed = |v: &[f64]| v.iter().any(|x| (x - v[0]).abs() > 1e-12 * v[0].abs());
            let writes: Vec<f64> = anchored.iter().map(|f| f.writes_per_s).collect();
            let commits: Vec<f64> = anchored.iter().map(|f| f.commit_latency_ms).collect();
            let (w_dir, c_dir) = if changed(&writes) || changed(&commits) {
                (Some(Direction::Rate), Some(Direction::Latency))
            } else {
                (None, None)
            };
            Ok(SyncInterval {
                writes_per_s: bounds(writes, point.writes_per_s, w_dir),
                commit_latency_ms: bounds(commits, point.commit_latency_ms, c_dir),
                confidence: crate::uncertainty::CONFIDENCE,
                samples: anchored.len(),
            })
        };
        Some(sampled())
    }

    fn assumptions(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "anchored to {} ({} threads): each figure is its measured figure times the simulated change from its system to the layout's (the same workload, seed and parameter draws; with an interval, the change is the samples' median, not the change at the typical values; docs/what-if.md); the class, link, protocol, RAM and recordsize the plan leaves at their defaults are the baseline's",
            self.baseline.named(),
            self.threads()
        )];
        if let Ok(a) = self.a_point() {
            if a.writes_per_s > 0.0 && self.measured.writes_per_s > 0.0 {
                lines.push(format!(
                    "the baseline's system simulated outright: {:.0} writes/s; measured: {:.0} (anchoring keeps the measured level)",
                    a.writes_per_s, self.measured.writes_per_s
                ));
            }
        }
        lines.extend(self.model.assumptions());
        lines
    }
}

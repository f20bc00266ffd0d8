//! The planner: every sensible layout for a set of disks, evaluated for
//! capacity, risk and performance, and ranked for a workload.

use serde::Serialize;

use crate::capacity::{capacity, Capacity, CapacityOptions};
use crate::disk::{total_disks, DiskGroup};
use crate::error::{ModelError, Result};
use crate::layout::{Layout, Shape, VdevKind};
use crate::network::{Link, Protocol};
use crate::perf::{
    performance, LogDevice, PerfOptions, PerfQuery, Performance, PerformanceModel, SyncInterval,
    WorkloadFigures,
};
use crate::reliability::{at_least_one, reliability, Reliability, RiskOptions};
use crate::units::{human_binary, GIB, KIB};
use crate::workload::{Weights, Workload};

/// Version of the JSON document `tankbench plan --format=json` prints. 2:
/// the sync-write figures are the simulator's (`performance.predicted`,
/// `predicted_with_log`, `prediction_note`, and the plan's
/// `prediction_assumptions`) instead of the rule-of-thumb `sync_write_*` and
/// `slog_sync_write_*` figures.
pub const PLAN_SCHEMA_VERSION: u32 = 2;

/// Loss probabilities below this are not distinguished when ranking: the
/// independent-failure model stops being the dominant risk long before
/// (correlated failures, operator error; Greenan, Plank and Wylie, "Mean time
/// to meaningless", HotStorage 2010).
pub const RANKING_LOSS_FLOOR: f64 = 1e-9;

/// Transaction groups whose sync data can sit in the log at once (open,
/// quiescing, syncing) and the txg interval (`zfs_txg_timeout`, default 5 s;
/// OpenZFS `module/zfs/txg.c`, zfs(4)).
const TXGS_IN_LOG: u32 = 3;
const TXG_SECONDS: f64 = 5.0;

/// Everything the user asked for, validated.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PlanRequest {
    pub groups: Vec<DiskGroup>,
    /// Hot spares the user wants at least.
    pub spares: u32,
    /// Enumerated layouts may leave at most this many disks idle beyond the
    /// requested spares (they become extra spares).
    pub max_extra_spares: u32,
    pub include_stripes: bool,
    /// Layouts to evaluate; empty means enumerate.
    pub layouts: Vec<Shape>,
    pub capacity: CapacityOptions,
    pub recordsize: u64,
    pub volblocksize: u64,
    pub log: Option<LogDevice>,
    pub link: Option<Link>,
    pub protocol: Protocol,
    pub workload: Workload,
    pub threads: u32,
    pub fill: f64,
    pub replace_hours: f64,
    pub ram_bytes: u64,
}

/// Per-criterion scores in (0, 1], 1 = best of the evaluated layouts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Scores {
    pub usable: f64,
    pub reliability: f64,
    pub random_read: f64,
    pub random_write: f64,
    pub sequential: f64,
    pub sync_write: f64,
    /// Weighted mean of the above with the workload's weights.
    pub overall: f64,
}

/// One evaluated layout.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PlanEntry {
    pub rank: usize,
    pub layout: String,
    pub shape: Shape,
    pub spares: u32,
    /// Block size the usable-space and IOPS figures are for.
    pub block_bytes: u64,
    /// Logical bytes of `block_bytes` blocks that fit.
    pub usable_bytes: u64,
    /// usable_bytes / raw bytes of all disks (spares included).
    pub space_efficiency: f64,
    pub capacity: Capacity,
    pub reliability: Reliability,
    pub performance: Performance,
    pub scores: Scores,
    pub notes: Vec<String>,
}

/// Layouts marked best, per criterion (several on a tie).
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Best {
    pub usable: Vec<String>,
    pub reliability: Vec<String>,
    pub random_read: Vec<String>,
    pub random_write: Vec<String>,
    pub sequential: Vec<String>,
    pub sync_write: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Plan {
    pub schema_version: u32,
    pub request: PlanRequest,
    pub weights: Weights,
    /// What the predicted workload figures rest on (the model's own lines).
    pub prediction_assumptions: Vec<String>,
    pub warnings: Vec<String>,
    pub entries: Vec<PlanEntry>,
    pub best: Best,
}

impl PlanRequest {
    pub fn disk_count(&self) -> u32 {
        // Saturating: a request is public and may be built past MAX_DISKS;
        // candidate_layouts rejects it, this must not overflow first.
        self.groups
            .iter()
            .fold(0u32, |sum, g| sum.saturating_add(g.count))
    }

    fn block_sizes(&self) -> Vec<u64> {
        let mut sizes = vec![
            4 * KIB,
            8 * KIB,
            16 * KIB,
            128 * KIB,
            1024 * KIB,
            self.recordsize,
            self.volblocksize,
        ];
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    /// The most sync data ZFS can have in the log before it is committed to
    /// the pool: ~3 txgs of ingest, and never more than ~3 × zfs_dirty_data_max
    /// (min(10 % of RAM, 4 GiB)), because dirty data throttles writers.
    // The result is min(by_dirty, by_link): by_dirty is at most 3 × 4 GiB and
    // neither term is negative, so it is a finite byte count well inside u64.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    pub fn useful_log_bytes(&self) -> u64 {
        let dirty_max = (self.ram_bytes / 10).min(4 * GIB) as f64;
        let by_dirty = f64::from(TXGS_IN_LOG) * dirty_max;
        let by_link = self
            .link
            .filter(|_| self.protocol != Protocol::Local)
            .map(|l| l.aggregate_goodput_mb_s() * 1e6 * f64::from(TXGS_IN_LOG) * TXG_SECONDS)
            .unwrap_or(f64::INFINITY);
        by_dirty.min(by_link) as u64
    }

    /// Shapes to evaluate: the user's, or every sensible one (our scope:
    /// stripes only when asked, 2- and 3-way mirrors, raidz1/2/3 at every
    /// width, as many vdevs as fit, leftover disks as spares).
    pub fn candidate_layouts(&self) -> Result<Vec<Layout>> {
        let total = total_disks(&self.groups)?;
        if total == 0 {
            return Err(ModelError::NoDisks);
        }
        if !self.layouts.is_empty() {
            return self
                .layouts
                .iter()
                .map(|shape| Layout::fit(*shape, &self.groups, self.spares))
                .collect();
        }
        let largest_group = self.groups.iter().map(|g| g.count).max().unwrap_or(0);
        let mut kinds: Vec<(VdevKind, u32)> = Vec::new();
        if self.include_stripes {
            kinds.push((VdevKind::Stripe, 1));
        }
        kinds.push((VdevKind::Mirror, 2));
        kinds.push((VdevKind::Mirror, 3));
        for parity in 1..=3 {
            for width in (parity + 2)..=largest_group.min(255) {
                kinds.push((VdevKind::Raidz { parity }, width));
            }
        }
        let mut layouts = Vec::new();
        for (kind, width) in kinds {
            // The most vdevs that still leave the requested spares: as many
            // as the groups hold whole, and few enough that total − count ×
            // width disks stay over (Layout::fit's two conditions, solved
            // directly rather than by trying every count downwards).
            let most: u32 = self.groups.iter().map(|g| g.count / width).sum();
            let count = most.min(total.saturating_sub(self.spares) / width);
            let fitted = Shape::new(kind, width, count)
                .ok()
                .and_then(|shape| Layout::fit(shape, &self.groups, self.spares).ok());
            if let Some(layout) = fitted {
                if layout.spare_count() - self.spares <= self.max_extra_spares {
                    layouts.push(layout);
                }
            }
        }
        if layouts.is_empty() {
            return Err(ModelError::NoLayoutFits {
                reason: format!(
                    "{} disk(s) with {} spare(s) leave no room for a mirror or raidz vdev",
                    self.disk_count(),
                    self.spares
                ),
            });
        }
        Ok(layouts)
    }
}

/// Most layouts whose workload is predicted: beyond this many candidates
/// (hundreds of disks enumerate hundreds of layouts) the predictions would
/// make a plan take seconds; `--layout` or a smaller `--max-idle` picks
/// fewer.
pub const MAX_PREDICTED_LAYOUTS: usize = 64;

/// Evaluate and rank. The predicted workload figures (sync writes/s and
/// latency, read and write MiB/s) come from `model`.
pub fn plan(request: PlanRequest, model: &dyn PerformanceModel) -> Result<Plan> {
    let layouts = request.candidate_layouts()?;
    let mut warnings = request_warnings(&request);
    let workload = request.workload;
    let block = workload.disk_block(request.recordsize, request.volblocksize);
    let block_sizes = request.block_sizes();
    let raw_bytes: u64 = request
        .groups
        .iter()
        .map(|g| g.bytes * g.count as u64)
        .sum();

    let mut entries: Vec<PlanEntry> = layouts
        .into_iter()
        .map(|layout| {
            let capacity = capacity(&request.groups, &layout, &request.capacity, &block_sizes);
            let leaf_asizes: Vec<u64> = capacity.leaves.iter().map(|l| l.asize).collect();
            let risk = RiskOptions {
                fill: request.fill,
                replace_hours: request.replace_hours,
                block_bytes: block,
                ashift: request.capacity.ashift,
            };
            let reliability = reliability(&request.groups, &layout, &leaf_asizes, &risk);
            let perf_options = PerfOptions {
                block_bytes: block,
                ashift: request.capacity.ashift,
                link: request.link,
                protocol: request.protocol,
            };
            let performance = performance(&request.groups, &layout, &perf_options);
            let usable_bytes = capacity.block(block).map(|b| b.usable_bytes).unwrap_or(0);
            let notes = layout_notes(&request, &layout, &capacity, &reliability, block);
            PlanEntry {
                rank: 0,
                layout: layout.name(),
                shape: layout.shape,
                spares: layout.spare_count(),
                block_bytes: block,
                usable_bytes,
                space_efficiency: usable_bytes as f64 / raw_bytes as f64,
                capacity,
                reliability,
                performance,
                scores: Scores {
                    usable: 0.0,
                    reliability: 0.0,
                    random_read: 0.0,
                    random_write: 0.0,
                    sequential: 0.0,
                    sync_write: 0.0,
                    overall: 0.0,
                },
                notes,
            }
        })
        .collect();

    if entries.len() > MAX_PREDICTED_LAYOUTS {
        warnings.push(format!(
            "{} layouts: the predicted workload columns are left out above {MAX_PREDICTED_LAYOUTS} (pick layouts with --layout, or fewer with --max-idle)",
            entries.len()
        ));
        for e in &mut entries {
            e.performance.prediction_note = Some(format!(
                "not predicted: more than {MAX_PREDICTED_LAYOUTS} layouts"
            ));
        }
    } else {
        predict_all(&mut entries, &request, model)?;
    }
    let weights = workload.weights();
    score(&mut entries, &request, &weights);
    entries.sort_by(|a, b| {
        b.scores
            .overall
            .total_cmp(&a.scores.overall)
            .then(b.usable_bytes.cmp(&a.usable_bytes))
    });
    for (i, entry) in entries.iter_mut().enumerate() {
        entry.rank = i + 1;
    }
    let best = best_marks(&entries);
    if entries
        .iter()
        .any(|e| e.reliability.failures_tolerated == 0)
    {
        warnings.push("stripes have no redundancy: one failed disk loses the pool".into());
    }
    Ok(Plan {
        schema_version: PLAN_SCHEMA_VERSION,
        request,
        weights,
        prediction_assumptions: model.assumptions(),
        warnings,
        entries,
        best,
    })
}

/// Ask `model` for every entry's workload, without and (when the request has
/// one) with the log device, and for its interval when the model gives one,
/// spread over the machine's cores: each prediction depends on its query
/// only, so the order does not matter. The threads take the queries one at
/// a time, the widest vdevs first: a commit flushes every child of its
/// vdev, so a 200-wide raidz costs several times a mirror, and handing out
/// fixed chunks left one core with most of them.
fn predict_all(
    entries: &mut [PlanEntry],
    request: &PlanRequest,
    model: &dyn PerformanceModel,
) -> Result<()> {
    let layouts: Vec<Layout> = entries
        .iter()
        .map(|e| Layout::fit(e.shape, &request.groups, request.spares))
        .collect::<Result<_>>()?;
    let logs: Vec<Option<&LogDevice>> = std::iter::once(None)
        .chain(request.log.as_ref().map(Some))
        .collect();
    // (layout, log) pairs, the dearest first.
    let mut jobs: Vec<(usize, usize)> = (0..layouts.len())
        .flat_map(|l| (0..logs.len()).map(move |g| (l, g)))
        .collect();
    jobs.sort_by_key(|&(l, g)| {
        let shape = layouts[l].shape;
        (
            std::cmp::Reverse(shape.width),
            std::cmp::Reverse(shape.disks()),
            l,
            g,
        )
    });
    type Predicted = (
        std::result::Result<WorkloadFigures, String>,
        Option<std::result::Result<SyncInterval, String>>,
    );
    let run = |&(l, g): &(usize, usize)| -> Predicted {
        let q = PerfQuery {
            layout: &layouts[l],
            groups: &request.groups,
            log: logs[g],
            link: request.link,
            protocol: request.protocol,
            threads: request.threads,
            recordsize: request.recordsize,
            ram_bytes: request.ram_bytes,
        };
        let point = model.predict(&q);
        let interval = point.as_ref().ok().and_then(|p| model.interval(&q, p));
        (point, interval)
    };
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: std::sync::Mutex<Vec<Option<Predicted>>> =
        std::sync::Mutex::new(vec![None; jobs.len()]);
    std::thread::scope(|s| {
        for _ in 0..cores.clamp(1, jobs.len().max(1)) {
            s.spawn(|| loop {
                let j = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(job) = jobs.get(j) else { break };
                let predicted = run(job);
                if let Ok(mut slots) = slots.lock() {
                    slots[j] = Some(predicted);
                }
            });
        }
    });
    let slots = slots.into_inner().unwrap_or_else(|p| p.into_inner());
    for (&(l, g), slot) in jobs.iter().zip(slots) {
        let p = &mut entries[l].performance;
        let (point, interval) =
            slot.unwrap_or_else(|| (Err("the prediction failed".to_string()), None));
        let interval = match interval {
            Some(Ok(i)) => Some(i),
            Some(Err(why)) => {
                p.prediction_note = Some(format!("interval {why}"));
                None
            }
            None => None,
        };
        match (point, g) {
            (Ok(f), 0) => {
                p.predicted = Some(f);
                p.predicted_interval = interval;
            }
            (Ok(f), _) => {
                p.predicted_with_log = Some(f);
                p.predicted_with_log_interval = interval;
            }
            (Err(why), _) => p.prediction_note = Some(why),
        }
    }
    Ok(())
}

/// The predicted figures the plan ranks by: with the log device when there
/// is one.
pub fn ranking_prediction(perf: &Performance) -> Option<&WorkloadFigures> {
    perf.predicted_with_log.as_ref().or(perf.predicted.as_ref())
}

/// The figure each criterion ranks by, oriented so that larger is better.
fn criteria(entry: &PlanEntry, request: &PlanRequest) -> [f64; 6] {
    let perf = &entry.performance;
    let loss = entry
        .reliability
        .annual_loss_probability
        .typical
        .max(RANKING_LOSS_FLOOR);
    let sequential_cap = request
        .link
        .filter(|_| request.protocol != Protocol::Local)
        .map(|l| l.aggregate_goodput_mb_s())
        .unwrap_or(f64::INFINITY);
    let sequential = perf.seq_read_mb_s.estimate.typical.min(sequential_cap)
        + perf.seq_write_mb_s.estimate.typical.min(sequential_cap);
    // Synchronous writes per second of the predicted workload; 0 for every
    // layout when none was predicted, so the criterion ties.
    let sync_writes = ranking_prediction(perf).map_or(0.0, |f| f.writes_per_s);
    [
        entry.usable_bytes as f64,
        // "Nines" of yearly survival; the floor makes everything safer than
        // 1e-9 a tie.
        -loss.log10(),
        perf.random_read_iops.estimate.typical,
        perf.random_write_iops.estimate.typical,
        sequential,
        sync_writes,
    ]
}

fn score(entries: &mut [PlanEntry], request: &PlanRequest, weights: &Weights) {
    let values: Vec<[f64; 6]> = entries.iter().map(|e| criteria(e, request)).collect();
    let mut best = [0.0f64; 6];
    for v in &values {
        for (b, x) in best.iter_mut().zip(v) {
            *b = b.max(*x);
        }
    }
    let w = [
        weights.usable,
        weights.reliability,
        weights.random_read,
        weights.random_write,
        weights.sequential,
        weights.sync_write,
    ];
    let total_weight: f64 = w.iter().sum();
    for (entry, v) in entries.iter_mut().zip(&values) {
        let s: Vec<f64> = v
            .iter()
            .zip(&best)
            .map(|(x, b)| if *b > 0.0 { x / b } else { 1.0 })
            .collect();
        let overall = s.iter().zip(&w).map(|(s, w)| s * w).sum::<f64>() / total_weight;
        entry.scores = Scores {
            usable: s[0],
            reliability: s[1],
            random_read: s[2],
            random_write: s[3],
            sequential: s[4],
            sync_write: s[5],
            overall,
        };
    }
}

fn best_marks(entries: &[PlanEntry]) -> Best {
    let pick = |f: &dyn Fn(&Scores) -> f64| -> Vec<String> {
        entries
            .iter()
            .filter(|e| f(&e.scores) >= 1.0 - 1e-9)
            .map(|e| e.layout.clone())
            .collect()
    };
    Best {
        usable: pick(&|s| s.usable),
        reliability: pick(&|s| s.reliability),
        random_read: pick(&|s| s.random_read),
        random_write: pick(&|s| s.random_write),
        sequential: pick(&|s| s.sequential),
        sync_write: pick(&|s| s.sync_write),
    }
}

fn request_warnings(request: &PlanRequest) -> Vec<String> {
    let mut warnings = Vec::new();
    if request.groups.len() > 1 {
        let mut sizes: Vec<u64> = request.groups.iter().map(|g| g.bytes).collect();
        sizes.dedup();
        if sizes.len() > 1 {
            warnings.push("disks of different sizes: each vdev is built from one group; vdevs of different sizes fill unevenly (ZFS favours the emptier ones)".into());
        }
    }
    if let Some(log) = &request.log {
        let useful = request.useful_log_bytes();
        let link = request
            .link
            .map(|l| l.name())
            .unwrap_or_else(|| "local access".into());
        if log.bytes > useful {
            warnings.push(format!(
                "log device {} is bigger than useful: with {link} at most ~{} of sync data waits in the log (3 txgs of 5 s, bounded by zfs_dirty_data_max); the rest is never used (harmless, it over-provisions an SSD)",
                human_binary(log.bytes),
                human_binary(useful)
            ));
        } else if (log.bytes as f64) < useful as f64 / f64::from(TXGS_IN_LOG) {
            warnings.push(format!(
                "log device {} holds less than one txg of sync data at full ingest (~{}); commits then fall back to the pool",
                human_binary(log.bytes),
                human_binary(useful / u64::from(TXGS_IN_LOG))
            ));
        }
        if log.class.is_rotational() {
            warnings.push("a rotating log device is no faster than the in-pool ZIL; use an SSD with power-loss protection".into());
        }
        if request.protocol != Protocol::Nfs {
            warnings.push(format!(
                "a log device only speeds up synchronous writes; {}",
                request.protocol.sync_semantics()
            ));
        }
    }
    if request.capacity.ashift < 12 && request.groups.iter().any(|g| g.bytes > 2_000_000_000_000) {
        warnings.push(format!(
            "ashift {} on disks over 2 TB: nearly all such disks have 4 KiB physical sectors; ashift 12 avoids read-modify-write inside the disk",
            request.capacity.ashift
        ));
    }
    warnings
}

fn layout_notes(
    request: &PlanRequest,
    layout: &Layout,
    capacity: &Capacity,
    risk: &Reliability,
    block: u64,
) -> Vec<String> {
    let shape = layout.shape;
    let mut notes = Vec::new();
    let rotational = request.groups.iter().any(|g| g.class.is_rotational());
    if let VdevKind::Raidz { .. } = shape.kind {
        if shape.width > 16 && rotational {
            notes.push(format!(
                // The layout's name gives the width: the same words for every
                // wide layout let a listing print the note once for all of them.
                "raidz vdevs wider than ~16 disks: OpenZFS advises against them on HDD (resilver of a full pool up to {:.0} days)",
                risk.resilver_hours.high / 24.0
            ));
        }
    }
    if let Some(ure) = risk.ure_expected_at_last_redundancy {
        if shape.vdev_tolerance() == 1 && at_least_one(ure) > 0.05 {
            notes.push(format!(
                "after one failure a vdev has no redundancy left: {:.0}% chance of an unrecoverable read error during that resilver (damages a block or file)",
                at_least_one(ure) * 100.0
            ));
        }
    }
    if let Some(usage) = capacity.block(block) {
        if usage.charge >= 1.5 {
            notes.push(format!(
                "at {} blocks every byte costs {:.2} bytes of AVAIL (parity + padding)",
                human_binary(block),
                usage.charge
            ));
        }
    }
    if layout.spare_count() > request.spares {
        notes.push(format!(
            "{} leftover disk(s) kept as hot spares",
            layout.spare_count() - request.spares
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::{DiskClass, OsPartitioning, PerfOverrides};
    use crate::perf::NoPrediction;
    use crate::rules::RuleSet;

    /// Capacity and risk only: the predicted figures are the simulator's
    /// (the `sim` crate's tests rank with them).
    fn plan_of(request: PlanRequest) -> Result<Plan> {
        plan(request, &NoPrediction)
    }

    pub(crate) fn reference_request(layouts: &[&str]) -> PlanRequest {
        PlanRequest {
            groups: vec![
                DiskGroup::parse("24x8TB", DiskClass::Hdd7200, &PerfOverrides::default()).unwrap(),
            ],
            spares: 0,
            max_extra_spares: 2,
            include_stripes: false,
            layouts: layouts.iter().map(|l| Shape::parse(l).unwrap()).collect(),
            capacity: CapacityOptions {
                rules: RuleSet::OpenZfs21,
                ashift: 12,
                partitioning: OsPartitioning::LinuxWholeDisk {
                    logical_sector: 512,
                },
            },
            recordsize: 128 * KIB,
            volblocksize: 16 * KIB,
            log: Some(LogDevice {
                bytes: 10_000_000_000,
                devices: 1,
                class: DiskClass::SsdSata,
                perf: DiskClass::SsdSata.default_perf(),
            }),
            link: Link::parse("2x10G").unwrap(),
            protocol: Protocol::Nfs,
            workload: Workload::Sync4k,
            threads: 4,
            fill: 0.8,
            replace_hours: 24.0,
            ram_bytes: 64 * GIB,
        }
    }

    #[test]
    fn enumeration_covers_the_sensible_layouts_of_24_disks() {
        let names: Vec<String> = reference_request(&[])
            .candidate_layouts()
            .unwrap()
            .iter()
            .map(|l| l.name())
            .collect();
        for wanted in [
            "1xraidz3-24",
            "2xraidz2-12",
            "3xraidz2-8",
            "12xmirror-2",
            "8xmirror-3",
            "4xraidz1-6",
            "2xraidz3-11",
        ] {
            assert!(
                names.iter().any(|n| n == wanted),
                "{wanted} missing from {names:?}"
            );
        }
        // 5-wide leaves 4 disks idle: not sensible by default; no stripes unless asked.
        assert!(!names.iter().any(|n| n == "4xraidz1-5"));
        assert!(!names.iter().any(|n| n.contains("stripe")));
    }

    #[test]
    fn spares_are_honoured() {
        let mut request = reference_request(&[]);
        request.spares = 1;
        for layout in request.candidate_layouts().unwrap() {
            assert!(layout.spare_count() >= 1, "{}", layout.name());
        }
        let names: Vec<String> = request
            .candidate_layouts()
            .unwrap()
            .iter()
            .map(|l| l.name())
            .collect();
        assert!(names.contains(&"1xraidz3-23".to_string()), "{names:?}");
    }

    #[test]
    fn the_reference_choice_ranks_three_raidz2_first() {
        let plan = plan_of(reference_request(&[
            "1xraidz3-24",
            "2xraidz2-12",
            "3xraidz2-8",
        ]))
        .unwrap();
        let order: Vec<&str> = plan.entries.iter().map(|e| e.layout.as_str()).collect();
        assert_eq!(order[0], "3xraidz2-8", "{order:?}");
        assert_eq!(plan.best.usable, vec!["1xraidz3-24".to_string()]);
        assert_eq!(plan.best.random_read, vec!["3xraidz2-8".to_string()]);
        let first = &plan.entries[0];
        assert_eq!(first.capacity.avail, 136_388_565_532_672);
        assert_eq!(first.reliability.failures_tolerated, 2);
        assert_eq!(first.reliability.failures_tolerated_best, 6);
    }

    #[test]
    fn log_sizing_warnings_depend_on_the_link() {
        let fast = plan_of(reference_request(&["3xraidz2-8"])).unwrap();
        assert!(
            fast.warnings
                .iter()
                .all(|w| !w.contains("bigger than useful")),
            "{:?}",
            fast.warnings
        );
        let mut slow = reference_request(&["3xraidz2-8"]);
        slow.link = Link::parse("2x1G").unwrap();
        let slow = plan_of(slow).unwrap();
        assert!(
            slow.warnings
                .iter()
                .any(|w| w.contains("bigger than useful")),
            "{:?}",
            slow.warnings
        );
    }

    #[test]
    fn a_layout_that_does_not_fit_is_an_error() {
        let err = plan_of(reference_request(&["4xraidz2-8"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs 32 disks, there are 24"), "{err}");
        let mut none = reference_request(&[]);
        none.groups.clear();
        assert_eq!(plan_of(none).unwrap_err(), ModelError::NoDisks);
    }
}

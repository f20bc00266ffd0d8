//! The simulations of a prediction from a measurement, and the anchored
//! results: configuration A (the baseline's system running the baseline's
//! thread count) and every configuration B asked for are simulated at the
//! typical parameters and at each point of one sampling design, all with
//! the workload's seed; each of B's figures is then the baseline's measured
//! figure times the median of the samples' B/A (B/A at the typical
//! parameters when there are no samples), and its interval the measured
//! figure times their 10th to 90th percentile.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use fileio::options::RunSpec;
use fileio::result::{
    Anchor, AnchoredFigure, FigureInterval, LatencyKey, PredictionInterval, RatioInterval,
    RunResult,
};

use crate::baseline::{Baseline, Figure, Rate};
use crate::convergence::RunOptions;
use crate::matrix::{CellRuns, MatrixCell};
use crate::uncertainty::{Design, Sampled};
use crate::SimError;

/// A table of configurations anchored to one measured baseline.
#[derive(Debug, Clone)]
pub struct Anchored {
    /// One anchored prediction per cell asked for, in cell order.
    pub results: Vec<RunResult>,
    /// The cell that is the baseline's own configuration (its system and
    /// thread count): its figures are the measured ones.
    pub baseline_cell: Option<usize>,
    /// The baseline's configuration as the simulator predicts it outright
    /// (no anchoring): how far the model is from the box, for the notes.
    pub simulated_baseline: RunResult,
    /// Each cell as the simulator predicts it outright, in cell order: what
    /// anchoring is compared with (crates/lab's pairs).
    pub simulated: Vec<RunResult>,
}

/// The figures of one simulation, in the order of the baseline's
/// [`Baseline::figures`].
type Figures = Vec<Option<f64>>;

/// Predict every cell of `cells` running the workload `asked`, each
/// anchored to `baseline`, whose configuration is `a` (its system, and the
/// profile fitted to it, if any). The workload must be the baseline's but
/// for the thread count ([`Baseline::check_workload`]). With
/// `how.intervals`, each result carries the interval of its figures; `how`
/// shares its event budget over the cells and A.
pub fn predict(
    baseline: &Baseline,
    a: &MatrixCell,
    asked: &RunSpec,
    cells: &[MatrixCell],
    how: &CellRuns<'_>,
) -> Result<Anchored, SimError> {
    baseline.check_workload(asked)?;
    let spec_a = baseline.spec_of_baseline(asked);
    let spec_b = baseline.spec_asked(asked);
    let budget = crate::limits::Budget::per_cell(how.events, cells.len() + 1);
    crate::limits::check_workload(&spec_a, budget, cells.len() as u64 + 1)?;
    crate::limits::check_workload(&spec_b, budget, cells.len() as u64 + 1)?;
    let options = RunOptions {
        budget,
        early_stop: how.early_stop,
        warmup_events: how.warmup_events,
        ..RunOptions::default()
    };
    // One design, one seed: A and every B are sampled at the same
    // quantiles of every parameter (common random numbers).
    let design = how.intervals.map(|n| Design::new(n, spec_b.rand_seed));

    // The cells that are A itself are not simulated again: their ratio is
    // 1 by construction, and their figures the measured ones.
    let system_a = a.system.resolve()?;
    let same_threads = spec_a.threads == spec_b.threads;
    let mut is_a = Vec::with_capacity(cells.len());
    for c in cells {
        is_a.push(same_threads && c.system.resolve().map_err(|e| cell_error(c, e))? == system_a);
    }
    // Configuration k: 0 is A, then each cell that is not.
    let mut configs: Vec<(&RunSpec, &MatrixCell)> = vec![(&spec_a, a)];
    let mut config_of_cell = Vec::with_capacity(cells.len());
    for (c, &same) in cells.iter().zip(&is_a) {
        if same {
            config_of_cell.push(0);
        } else {
            config_of_cell.push(configs.len());
            configs.push((&spec_b, c));
        }
    }
    let sampled: Vec<Option<Sampled>> = configs
        .iter()
        .map(|(spec, c)| {
            design
                .as_ref()
                .map(|d| {
                    d.apply(&c.system, c.profile.as_ref(), spec)
                        .map_err(|e| cell_error(c, e))
                })
                .transpose()
        })
        .collect::<Result<_, _>>()?;

    let figures = baseline.figures();
    let samples = design.as_ref().map_or(0, Design::samples);
    let runs = simulate_configs(&configs, &sampled, samples, &figures, &options, how)?;
    let (points, point_figures, sample_figures) = (runs.points, runs.figures, runs.samples);
    let measured: Figures = figures.iter().map(|f| f.of(&baseline.measured)).collect();
    let simulated_baseline = points[0].clone().ok_or(SimError::CellLost)?;
    let mut results = Vec::with_capacity(cells.len());
    let mut simulated = Vec::with_capacity(cells.len());
    for (i, cell) in cells.iter().enumerate() {
        let k = config_of_cell[i];
        let ratios = Ratios::between(
            &point_figures[0],
            &sample_figures[0],
            &point_figures[k],
            &sample_figures[k],
            &figures,
        );
        let point = points[k].clone().ok_or(SimError::CellLost)?;
        simulated.push(point.clone());
        let mut r = anchored_result(point, baseline, &figures, &measured, &ratios, is_a[i]);
        for (key, v) in &cell.choices {
            r.labels.insert(key.clone(), v.clone());
        }
        if let (Some(d), Some(sm)) = (&design, &sampled[k]) {
            r.prediction = Some(interval_block(
                d,
                &sampled[0],
                sm,
                &figures,
                &measured,
                &ratios,
                is_a[i],
            ));
        }
        keep_percentiles_ordered(&mut r);
        results.push(r);
    }
    Ok(Anchored {
        results,
        baseline_cell: is_a.iter().position(|&same| same),
        simulated_baseline,
        simulated,
    })
}

/// What the simulations of the configurations gave: each one's point
/// result and figures, and its samples' figures in sample order.
struct Simulated {
    points: Vec<Option<RunResult>>,
    figures: Vec<Figures>,
    samples: Vec<Vec<Figures>>,
}

/// Simulate every configuration at its point and at each of its
/// `samples` sampled systems, all on the threads of `how`.
fn simulate_configs(
    configs: &[(&RunSpec, &MatrixCell)],
    sampled: &[Option<Sampled>],
    samples: usize,
    figures: &[Figure],
    options: &RunOptions,
    how: &CellRuns<'_>,
) -> Result<Simulated, SimError> {
    let sample_options = options.for_sample();
    let mut jobs: Vec<Job<'_>> = configs
        .iter()
        .map(|(spec, c)| Job {
            spec,
            system: &c.system,
            options,
            point: true,
        })
        .collect();
    for k in 0..samples {
        for ((spec, _), sm) in configs.iter().zip(sampled) {
            if let Some(sm) = sm {
                jobs.push(Job {
                    spec,
                    system: &sm.systems[k],
                    options: &sample_options,
                    point: false,
                });
            }
        }
    }
    let outputs = run_jobs(&jobs, figures, how)?;
    // Points first (one per configuration), then the samples, sample-major.
    let n = configs.len();
    let mut out = Simulated {
        points: Vec::with_capacity(n),
        figures: Vec::with_capacity(n),
        samples: vec![Vec::with_capacity(samples); n],
    };
    for (j, o) in outputs.into_iter().enumerate() {
        match o {
            Output::Point(r) => {
                out.figures.push(figures.iter().map(|f| f.of(&r)).collect());
                out.points.push(Some(*r));
            }
            Output::Sample(f) => out.samples[(j - n) % n].push(f),
        }
    }
    Ok(out)
}

fn cell_error(c: &MatrixCell, e: SimError) -> SimError {
    if c.choices.is_empty() {
        return e;
    }
    crate::matrix::MatrixError::Cell {
        choices: c.choices_text(),
        problem: e.to_string(),
    }
    .into()
}

/// One simulation to run.
struct Job<'a> {
    spec: &'a RunSpec,
    system: &'a crate::system::SystemModel,
    options: &'a RunOptions,
    /// A point keeps its whole result; a sample only its figures.
    point: bool,
}

enum Output {
    Point(Box<RunResult>),
    Sample(Figures),
}

/// Run `jobs` on `how.parallel` threads, in order of their index; the first
/// refusal (in job order) refuses them all.
fn run_jobs(
    jobs: &[Job<'_>],
    figures: &[Figure],
    how: &CellRuns<'_>,
) -> Result<Vec<Output>, SimError> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Mutex<Vec<Option<Result<Output, SimError>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..how.parallel.clamp(1, jobs.len().max(1)) {
            s.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(j) else { break };
                if failed.load(Ordering::Relaxed) {
                    break;
                }
                let out = crate::Simulation::new(job.spec, job.system)
                    .options(job.options)
                    .run()
                    .map(|s| s.result)
                    .map(|r| {
                        if job.point {
                            Output::Point(Box::new(r))
                        } else {
                            Output::Sample(figures.iter().map(|f| f.of(&r)).collect())
                        }
                    });
                if out.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                if let Ok(mut slots) = slots.lock() {
                    slots[j] = Some(out);
                }
                let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                if let Some(progress) = how.progress {
                    progress(finished, jobs.len());
                }
            });
        }
    });
    // A refusal is the answer (the jobs skipped after it have none).
    let mut slots = slots.into_inner().map_err(|_| SimError::CellLost)?;
    if let Some(j) = slots.iter().position(|s| matches!(s, Some(Err(_)))) {
        if let Some(Some(Err(e))) = slots.get_mut(j).map(Option::take) {
            return Err(e);
        }
    }
    slots
        .into_iter()
        .map(|s| s.unwrap_or(Err(SimError::CellLost)))
        .collect()
}

/// B/A of each figure: at the typical parameters, and at each sample.
struct Ratios {
    /// Per figure, the change predicted: the samples' median, or with no
    /// samples the change at the typical parameters.
    point: Vec<Option<f64>>,
    /// Per figure, the samples' ratios (those defined), sorted.
    samples: Vec<Vec<f64>>,
    /// Per sample, the headline figure's ratio (None where undefined), in
    /// sample order, for the sensitivity.
    headline: Vec<Option<f64>>,
}

impl Ratios {
    fn between(
        a: &Figures,
        a_samples: &[Figures],
        b: &Figures,
        b_samples: &[Figures],
        figures: &[Figure],
    ) -> Ratios {
        let h = headline(figures, a);
        let point: Vec<Option<f64>> = a.iter().zip(b).map(|(a, b)| ratio(*a, *b)).collect();
        let mut samples = vec![Vec::new(); figures.len()];
        let mut headline_ratios = Vec::with_capacity(a_samples.len());
        for (sa, sb) in a_samples.iter().zip(b_samples) {
            for (j, v) in samples.iter_mut().enumerate() {
                if let Some(r) = ratio(sa[j], sb[j]) {
                    v.push(r);
                }
            }
            headline_ratios.push(ratio(sa[h], sb[h]));
        }
        for v in &mut samples {
            v.sort_by(f64::total_cmp);
        }
        // With samples, the change is the median of the sampled changes, not
        // the change at the typical parameters. The two agree where a figure
        // moves with one parameter alone; they part where several move it
        // together: a thread count's gain depends on which of the CPU per
        // request, the commit software and the log device saturates first,
        // and the draws move all three. The median is the change the model's
        // own uncertainty puts in the middle, and it is never outside the
        // interval. Measured both ways on the same runs (docs/what-if.md):
        // the published pairs went from 12 to 13 of 18 within ±30 % (mean
        // |log error| 0.27 to 0.24); the lab's, whose log device is the
        // class's typical one exactly, from 34 to 31 of 42 within ±15 %
        // (mean |log error| 0.098 to 0.102).
        let point = point
            .into_iter()
            .zip(&samples)
            .map(|(typical, v)| match typical {
                Some(_) if !v.is_empty() => Some(crate::uncertainty::percentile(v, 0.5)),
                other => other,
            })
            .collect();
        Ratios {
            point,
            samples,
            headline: headline_ratios,
        }
    }

    /// The 10th to 90th percentile of figure `j`'s ratio, widened to hold
    /// its point (the point is a prediction too), when there are samples.
    fn interval(&self, j: usize) -> Option<RatioInterval> {
        let v = &self.samples[j];
        let point = self.point[j]?;
        if v.is_empty() {
            return None;
        }
        let tail = (1.0 - crate::uncertainty::CONFIDENCE) / 2.0;
        Some(RatioInterval {
            low: crate::uncertainty::percentile(v, tail).min(point),
            high: crate::uncertainty::percentile(v, 1.0 - tail).max(point),
        })
    }
}

/// B/A of one figure: undefined where A's simulation has none of it and
/// B's has some (nothing to scale); 1 where neither has any.
fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a?, b?) {
        (a, b) if a > 0.0 => Some(b / a),
        (_, b) if b <= 0.0 => Some(1.0),
        _ => None,
    }
}

/// The figure sensitivity is ranked on: writes/s when the baseline's
/// configuration writes, else reads/s (as crate::uncertainty ranks).
fn headline(figures: &[Figure], a: &Figures) -> usize {
    let writes = figures
        .iter()
        .position(|f| *f == Figure::Rate(Rate::Writes));
    match writes {
        Some(j) if a[j].is_some_and(|v| v > 0.0) => j,
        _ => figures
            .iter()
            .position(|f| *f == Figure::Rate(Rate::Reads))
            .unwrap_or(0),
    }
}

/// `point` (B's simulation) with its figures anchored: each the measured
/// figure times its ratio. A latency's other statistics (min, max, stddev,
/// the percentiles the baseline did not record) take its mean's factor; a
/// latency the baseline did not measure is left out (nothing anchors it),
/// and so are the histograms (their buckets would no longer be buckets).
fn anchored_result(
    mut r: RunResult,
    baseline: &Baseline,
    figures: &[Figure],
    measured: &Figures,
    ratios: &Ratios,
    is_baseline: bool,
) -> RunResult {
    let value = |j: usize| -> Option<f64> { Some(measured[j]? * ratios.point[j]?) };
    let mut anchored: BTreeMap<String, AnchoredFigure> = BTreeMap::new();
    for (j, f) in figures.iter().enumerate() {
        if let (Some(m), Some(ratio)) = (measured[j], ratios.point[j]) {
            anchored.insert(
                f.name(),
                AnchoredFigure {
                    measured: m,
                    ratio,
                    ratio_interval: ratios.interval(j),
                },
            );
        }
    }
    // Rates, and the counts in proportion.
    let simulated = r.rates.clone();
    let ops =
        |rates: &fileio::result::Rates| rates.reads_per_s + rates.writes_per_s + rates.fsyncs_per_s;
    for (j, f) in figures.iter().enumerate() {
        if let (Figure::Rate(rate), Some(v)) = (f, value(j)) {
            rate.set(&mut r.rates, v);
        }
    }
    let factor = |new: f64, old: f64| if old > 0.0 { new / old } else { 1.0 };
    let scale = |n: u64, k: f64| -> u64 {
        // A count times a positive factor, rounded: within u64 for any
        // count a run can have.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let v = (n as f64 * k).round().max(0.0) as u64;
        v
    };
    let events_factor = factor(ops(&r.rates), ops(&simulated));
    let c = r.counts;
    r.counts = fileio::result::Counts {
        events: scale(c.events, events_factor),
        reads: scale(c.reads, factor(r.rates.reads_per_s, simulated.reads_per_s)),
        writes: scale(
            c.writes,
            factor(r.rates.writes_per_s, simulated.writes_per_s),
        ),
        fsyncs: scale(
            c.fsyncs,
            factor(r.rates.fsyncs_per_s, simulated.fsyncs_per_s),
        ),
        bytes_read: scale(
            c.bytes_read,
            factor(r.rates.read_mib_per_s, simulated.read_mib_per_s),
        ),
        bytes_written: scale(
            c.bytes_written,
            factor(r.rates.written_mib_per_s, simulated.written_mib_per_s),
        ),
    };
    for t in &mut r.threads {
        t.events = scale(t.events, events_factor);
    }
    // Latencies.
    let keys: Vec<LatencyKey> = r.latency.keys().copied().collect();
    for key in keys {
        let mean_j = figures.iter().position(|f| *f == Figure::Mean(key));
        let (Some(l), Some(new_mean)) = (r.latency.get_mut(&key), mean_j.and_then(value)) else {
            r.latency.remove(&key);
            continue;
        };
        let k = factor(new_mean, l.mean_ms);
        l.mean_ms = new_mean;
        l.min_ms *= k;
        l.max_ms *= k;
        l.stddev_ms *= k;
        l.sum_ms *= k;
        l.histogram.clear();
        for p in &mut l.percentiles {
            let own = figures
                .iter()
                .position(|f| *f == Figure::Percentile(key, p.p))
                .and_then(value);
            p.ms = own.unwrap_or(p.ms * k);
        }
    }
    r.intervals.clear();
    r.labels.insert("baseline".into(), baseline.id.clone());
    r.anchor = Some(Anchor {
        baseline: baseline.id.clone(),
        baseline_started_at: baseline.measured.started_at.clone(),
        baseline_threads: baseline.measured.workload.threads,
        is_baseline,
        figures: anchored,
    });
    r
}

/// Each anchored latency's percentiles in order. Each percentile is its
/// own measured figure times its own simulated ratio, and the tails of a
/// run (its p99.9: a few dozen events) move from run to run: a p99.9 could
/// come out below the p99. A percentile is at least the one below it; the
/// interval block's point follows, and its interval widens to hold it.
fn keep_percentiles_ordered(r: &mut RunResult) {
    for (key, l) in &mut r.latency {
        l.percentiles.sort_by(|a, b| a.p.total_cmp(&b.p));
        let mut floor = f64::NEG_INFINITY;
        for p in &mut l.percentiles {
            if p.ms < floor {
                p.ms = floor;
                let name = Figure::Percentile(*key, p.p).name();
                if let Some(f) = r.prediction.as_mut().and_then(|i| i.figures.get_mut(&name)) {
                    f.point = floor;
                    f.high = f.high.max(floor);
                }
            }
            floor = p.ms;
        }
    }
}

/// The `prediction` block of an anchored result: each figure's interval
/// (the measured figure times its ratio's), and the parameters whose rank
/// correlation with the headline figure's ratio is largest.
fn interval_block(
    design: &Design,
    sampled_a: &Option<Sampled>,
    sampled_b: &Sampled,
    figures: &[Figure],
    measured: &Figures,
    ratios: &Ratios,
    is_baseline: bool,
) -> PredictionInterval {
    // A ratio of two simulations keeps the structural error of neither
    // shown apart (three published sources of pairs are too few to hold
    // one out at a time), so where the configuration changes the measured
    // figure's interval is widened as an outright prediction's is: wider
    // than it may need to be, never narrower. That includes a change the
    // model sees as none (every sample's ratio 1: a layout beside a log
    // device): the model may be wrong about that too, and the lab measured
    // -11 % to +13 % there. The baseline's own configuration is the
    // measurement itself, and its interval is where a second run of it
    // lands (crate::run_to_run).
    let structural = crate::structural::StructuralError::current();
    let rerun = crate::run_to_run::RunToRun::current();
    let mut table = BTreeMap::new();
    for (j, f) in figures.iter().enumerate() {
        let (Some(m), Some(point), Some(i)) = (measured[j], ratios.point[j], ratios.interval(j))
        else {
            continue;
        };
        let name = f.name();
        let (low, high) = (m * i.low, m * i.high);
        let (wide_low, wide_high) = if is_baseline {
            rerun.around(m)
        } else {
            structural.widen(low, high, crate::structural::Direction::of_figure(&name))
        };
        table.insert(
            name,
            FigureInterval {
                point: m * point,
                low: wide_low.min(m * point),
                high: wide_high.max(m * point),
                parameters_low: Some(low),
                parameters_high: Some(high),
            },
        );
    }
    // The parameters sampled in A or in B (a log device in one of them adds
    // its flush), each sample's value from whichever has it: a parameter
    // sampled in both is at the same quantile in both, so its ranks agree.
    let mut spans = sampled_b.spans.clone();
    let mut columns: Vec<Vec<f64>> = (0..spans.len())
        .map(|s| sampled_b.values.iter().map(|v| v[s]).collect())
        .collect();
    if let Some(sa) = sampled_a {
        for (s, span) in sa.spans.iter().enumerate() {
            if !spans.iter().any(|x| x.param == span.param) {
                spans.push(*span);
                columns.push(sa.values.iter().map(|v| v[s]).collect());
            }
        }
    }
    // Samples whose headline ratio is undefined are left out of the ranks.
    let keep: Vec<usize> = (0..ratios.headline.len())
        .filter(|&k| ratios.headline[k].is_some())
        .collect();
    let y: Vec<f64> = keep.iter().filter_map(|&k| ratios.headline[k]).collect();
    let kept: Vec<Vec<f64>> = columns
        .iter()
        .map(|c| keep.iter().map(|&k| c[k]).collect())
        .collect();
    let sensitivity = crate::uncertainty::ranked_sensitivity(&spans, &kept, &y);
    let h = headline(figures, &ratios.point);
    PredictionInterval {
        figures: table,
        confidence: crate::uncertainty::CONFIDENCE,
        samples: design.samples(),
        method: format!(
            "the baseline's measured figure times the simulated ratio to its configuration: Latin hypercube over {} parameter ranges (log-uniform where they span x3 or more), each sample simulated for the baseline's configuration and this one with the same draws and seed {} (common random numbers); samples stop at +-{:.0} % (95 %); the ratio: the samples' median; its interval: their 10th-90th percentile, {}; {}; sensitivity: partial rank correlation (PRCC) with the ratio of {}",
            spans.len(),
            design.seed(),
            crate::convergence::SAMPLE_HALF_WIDTH * 100.0,
            structural.describe(),
            rerun.describe(),
            figures[h].name()
        ),
        sensitivity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_needs_something_to_scale() {
        assert_eq!(ratio(Some(2.0), Some(3.0)), Some(1.5));
        assert_eq!(ratio(Some(0.0), Some(0.0)), Some(1.0));
        assert_eq!(ratio(Some(0.0), Some(3.0)), None);
        assert_eq!(ratio(None, Some(3.0)), None);
    }
}

//! Intervals, not just points (issue 21): each uncertain parameter of a
//! prediction has a range (low and high around the system's typical value,
//! with its sources); a prediction samples the ranges by Latin hypercube,
//! simulates each sample with the same seed (common random numbers: the same
//! request stream and service-time draws, so only the parameters differ),
//! and reports the 10th to 90th percentile of its figures beside the
//! typical-parameter point, and the parameters whose rank correlation with
//! the headline figure is largest ("measure this first").
//!
//! The parameters are calibration's ([`Param`], the same names as a
//! profile's), the pool disks' flush beside a log device, and the server's
//! CPU per MiB and contention ([`Param::SAMPLED`]), less those the workload
//! cannot move ([`moves`]); a profile's fitted parameters narrow to their
//! fitted ±2σ, except a value the fit left at a physical bound or a matrix
//! carried to another component (crate::profile::Fitted::narrows), which
//! keeps its whole range. One [`Design`] can sample many systems at the
//! same quantiles (a matrix's cells, crate::matrix), so their intervals
//! compare fairly.
//!
//! A device the system names by its class (`log = "nvme-noplp"`,
//! `pool.disk = "ssd-sata"`) could be any device of the class: its range is
//! the class's published write + flush range
//! ([`zfs_model::disk::DiskClass::write_flush_ms`]), sampled as the
//! device's flush with its write time in proportion
//! ([`zfs_model::diskmodel::FlashParams::at_speed`]). A device the system
//! gives by its figures (a model table, or `{ measured = "slog.json" }`) is
//! the device the user measured: not sampled, unless a profile gives its
//! flush a ±2σ.

use std::collections::BTreeMap;

use fileio::options::RunSpec;
use fileio::result::{FigureInterval, LatencyKey, PredictionInterval, RunResult, Sensitivity};
use fileio::rng::SeededStream;

use zfs_model::diskmodel::{FlashParams, ModelParams};
use zfs_model::estimate::Estimate;

use crate::convergence::RunOptions;
use crate::params::{
    current_value, device_entry, device_entry_mut, named_flash_range, set_value, Moves, Param,
    RangeRule,
};
use crate::profile::Profile;
use crate::structural::{Direction, StructuralError};
use crate::system::{DeviceSpec, Protocol, SystemModel};
use crate::SimError;

/// Samples an interval simulates by default: enough for a stable 10th and
/// 90th percentile of a Latin hypercube over the five to seven parameters
/// a system and its workload have.
pub const DEFAULT_SAMPLES: usize = 16;

/// Share of the samples inside the reported interval.
pub(crate) const CONFIDENCE: f64 = 0.8;

/// One parameter's range as multiples of the system's typical value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    pub low: f64,
    pub high: f64,
}

/// The range of `p` relative to its typical value for a client of
/// `access` (crate::params: each row's sourced range). A device named by
/// its class takes the class's range instead ([`class_range`]); this one is
/// for a built-in device that is no class (`ssd-sata-lying`).
pub(crate) fn relative_range(p: Param, access: Protocol) -> Range {
    match p.range(access).rule {
        RangeRule::Sourced(r) => {
            let (low, high) = r.relative();
            Range { low, high }
        }
        RangeRule::Relative { low, high } => Range { low, high },
        RangeRule::DeviceClass {
            otherwise_low,
            otherwise_high,
        } => Range {
            low: otherwise_low,
            high: otherwise_high,
        },
    }
}

/// One sampled parameter: absolute low, typical and high.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub param: Param,
    pub low: f64,
    pub typical: f64,
    pub high: f64,
}

/// The bytes of the write a class's write + flush figure is for.
const CLASS_WRITE_BYTES: u64 = 4096;

/// The device parameter `p` is about, when the system names it by a flash
/// disk class (or as a flash device of unknown kind): the class's write +
/// flush range and the device's model. `None` for other parameters, a
/// device given by its figures, a hard disk (its write + flush follows from
/// its mechanics) and a built-in that is no class.
fn class_device(model: &SystemModel, p: Param) -> Option<(Estimate, FlashParams)> {
    let entry = device_entry(model, p.row().device?)?;
    let range = named_flash_range(entry)?;
    let DeviceSpec::Name(name) = entry else {
        return None;
    };
    match ModelParams::builtin(name)?.1 {
        ModelParams::Flash(f) => Some((range, f)),
        _ => None,
    }
}

/// The flush range of a device modelled as `f` whose 4 KiB write + flush
/// lies in `range` (its class's): the flush at which, with the write time
/// in proportion, a 4 KiB write + flush takes the range's low and its high,
/// widened so that those two are the sampled range's 10th and 90th
/// percentiles (its log-uniform tails), and to hold the model's own flush,
/// so the typical is always inside.
///
/// Why widened: the class's low and high are the fastest and slowest of the
/// 3 to 6 devices published for it, and the extremes of a sample of n sit
/// near its 1/(n+1) and n/(n+1) quantiles (the 14th to 25th percentile and
/// its mirror), so devices of the class beyond them are to be expected. An
/// 80 % interval that stopped short of the published devices would leave
/// out devices that are known to exist.
fn class_range(range: Estimate, f: &FlashParams) -> (f64, f64) {
    let speed = |t: f64| f.speed_for(CLASS_WRITE_BYTES, t).unwrap_or(1.0);
    let (low, high) = (speed(range.low), speed(range.high));
    // Log-uniform over [a, b] has its 10th and 90th percentiles at
    // a * (b/a)^0.1 and a * (b/a)^0.9: put those at (low, high).
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let widen = (high / low).max(1.0).powf(tail / CONFIDENCE);
    let (low, high) = ((low / widen).min(1.0), (high * widen).max(1.0));
    (f.flush_ms * low, f.flush_ms * high)
}

/// The ranges of the parameters that apply to `model` (a profile's fitted
/// ones narrowed to value ±2σ). Parameters whose typical value is 0 have
/// nothing to scale and are left out, and so is the flush of a device the
/// system gives by its own figures unless a profile fitted it.
pub fn spans(model: &SystemModel, profile: Option<&Profile>) -> Result<Vec<Span>, SimError> {
    let mut out = Vec::new();
    for p in Param::SAMPLED {
        let Some(typical) = current_value(model, p)? else {
            continue;
        };
        if typical <= 0.0 {
            continue;
        }
        let fitted = profile.and_then(|pr| pr.parameters.get(p.name()));
        let held = p.row().held_by_fit_of.is_some_and(|q| {
            profile
                .and_then(|pr| pr.parameters.get(q.name()))
                .is_some_and(|f| f.narrows())
        });
        if held {
            continue;
        }
        let given = p
            .row()
            .device
            .and_then(|role| device_entry(model, role))
            .is_some_and(|d| matches!(d, DeviceSpec::Model(_)));
        let (mut low, mut high) = match class_device(model, p) {
            Some((range, f)) => class_range(range, &f),
            // The user's own figures: only a fit's uncertainty widens them.
            None if given => (f64::NEG_INFINITY, f64::INFINITY),
            None => {
                let r = relative_range(p, model.client.protocol);
                (typical * r.low, typical * r.high)
            }
        };
        match fitted {
            Some(f) if f.narrows() => {
                low = low.max(f.value - 2.0 * f.uncertainty);
                high = high.min(f.value + 2.0 * f.uncertainty);
                if low > high {
                    (low, high) = (f.value, f.value);
                }
            }
            // A value at a physical bound, or carried to a component nobody
            // measured, is no measurement: the parameter's documented range
            // around it, as for a device that is no class.
            Some(_) if given => {
                let r = relative_range(p, model.client.protocol);
                (low, high) = (typical * r.low, typical * r.high);
            }
            Some(_) => {}
            None if given => continue,
            None => {}
        }
        let b = p.bounds(model.client.protocol);
        let (lo, hi) = (b.low, b.high);
        let (low, high) = (low.clamp(lo, hi), high.clamp(lo, hi));
        // An integer parameter whose range rounds to one value does not vary.
        if p.is_integer() && (high.round() - low.round()).abs() < 0.5 {
            continue;
        }
        if high > low {
            out.push(Span {
                param: p,
                low,
                typical,
                high,
            });
        }
    }
    Ok(out)
}

/// Set span `s` to `value` in `model`: a device named by its class moves as
/// a whole (its write time and flush by one factor, as [`class_range`]
/// reads the class); every other parameter as calibration sets it.
fn set_sampled(model: &mut SystemModel, s: &Span, value: f64) -> Result<(), SimError> {
    if let (Some((_, f)), Some(role)) = (class_device(model, s.param), s.param.row().device) {
        let k = value / f.flush_ms;
        if let Some(entry) = device_entry_mut(model, role) {
            *entry = DeviceSpec::Model(ModelParams::Flash(f.at_speed(k)));
            return Ok(());
        }
    }
    set_value(model, s.param, value).map(|_| ())
}

/// A sampling design: `samples` points of the unit cube, one coordinate per
/// parameter of [`Param::SAMPLED`] (whether or not a system has it), from one
/// seed. Applied to a system, each coordinate is that parameter's quantile
/// within the system's range; so every system a design is applied to (every
/// cell of a matrix) gets the same draw, each sample run with the same seed
/// too (common random numbers): the differences between two systems'
/// intervals are the systems', not the sampling's.
#[derive(Debug, Clone, PartialEq)]
pub struct Design {
    seed: u64,
    units: Vec<[f64; PARAMS]>,
}

const PARAMS: usize = Param::SAMPLED.len();

/// The samples of one system under a [`Design`]: its ranges, each sample's
/// parameter values (one per span) and the sampled systems.
#[derive(Debug, Clone)]
pub struct Sampled {
    pub spans: Vec<Span>,
    pub values: Vec<Vec<f64>>,
    pub systems: Vec<SystemModel>,
}

impl Design {
    /// A Latin hypercube of `samples` points (at least 2): each coordinate
    /// cut into `samples` strata of equal probability, one point in each,
    /// the strata shuffled per coordinate.
    pub fn new(samples: usize, seed: u64) -> Design {
        let n = samples.max(2);
        // A stream of its own, apart from the workload's and the devices'.
        let mut rng = SeededStream::new(seed, DESIGN_STREAM);
        let mut units = vec![[0.0; PARAMS]; n];
        for p in 0..PARAMS {
            let mut strata: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                // Below i + 1, a usize.
                #[allow(clippy::cast_possible_truncation)]
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                strata.swap(i, j);
            }
            for (row, k) in units.iter_mut().zip(strata) {
                row[p] = (k as f64 + rng.unit()) / n as f64;
            }
        }
        Design { seed, units }
    }

    pub fn samples(&self) -> usize {
        self.units.len()
    }

    /// The seed the design was drawn from and the samples are run with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Each sample's value of every span, in span order.
    fn values(&self, spans: &[Span]) -> Vec<Vec<f64>> {
        self.units
            .iter()
            .map(|u| spans.iter().map(|s| s.at(u[column(s.param)])).collect())
            .collect()
    }

    /// `model` at each point of the design for the workload `spec`: its
    /// ranges ([`spans`]) less those `spec` cannot move ([`moves`]), and the
    /// systems with the sampled values set.
    pub fn apply(
        &self,
        model: &SystemModel,
        profile: Option<&Profile>,
        spec: &RunSpec,
    ) -> Result<Sampled, SimError> {
        let mut spans = spans(model, profile)?;
        spans.retain(|s| moves(s.param, spec));
        let values = self.values(&spans);
        let mut systems = Vec::with_capacity(values.len());
        for v in &values {
            let mut m = model.clone();
            for (s, &x) in spans.iter().zip(v) {
                set_sampled(&mut m, s, x)?;
            }
            systems.push(m);
        }
        Ok(Sampled {
            spans,
            values,
            systems,
        })
    }
}

/// Whether the workload `spec` can move `p` at all. A parameter it cannot
/// move would only add a column of chance correlations to "measure this
/// first" and raise the bound below which a correlation is noise:
/// `server.cpu_us_per_mib` is charged beyond the 4 KiB `server.cpu_us` was
/// measured at, and `server.cpu_contention` needs two pieces of CPU work at
/// once, which one thread never has: the simulator takes synchronous I/O
/// only (`engine::check_supported`), one request at a time per thread, and
/// a request's CPU and its commit's run one after the other.
pub(crate) fn moves(p: Param, spec: &RunSpec) -> bool {
    match p.row().moves {
        Moves::RequestsOver4K => {
            let largest = spec
                .files
                .block_size
                .saturating_mul(spec.merged_requests.max(1));
            largest > crate::server::CPU_US_MEASURED_AT
        }
        Moves::SeveralThreads => spec.threads > 1,
        Moves::Writes => spec.mode.writes(),
        Moves::Always => true,
    }
}

/// The design's coordinate of `p`.
fn column(p: Param) -> usize {
    Param::SAMPLED.iter().position(|&q| q == p).unwrap_or(0)
}

impl Span {
    /// The value at quantile `u` (0 to 1) of the range: log-uniform when
    /// the range spans ×3 or more, uniform otherwise.
    pub fn at(&self, u: f64) -> f64 {
        if self.high / self.low >= 3.0 {
            (self.low.ln() + u * (self.high.ln() - self.low.ln())).exp()
        } else {
            self.low + u * (self.high - self.low)
        }
    }
}

/// A Latin hypercube of `n` points over `spans` ([`Design`] applied to the
/// ranges alone).
#[cfg(test)]
fn latin_hypercube(spans: &[Span], n: usize, seed: u64) -> Vec<Vec<f64>> {
    Design::new(n, seed).values(spans)
}

/// The seed's stream the sampling design comes from.
const DESIGN_STREAM: u64 = (1 << 32) + 21;

/// The figures an interval is given for, by name.
pub const FIGURES: [&str; 7] = [
    "reads_per_s",
    "writes_per_s",
    "fsyncs_per_s",
    "read_mib_per_s",
    "written_mib_per_s",
    "event_mean_ms",
    "event_p95_ms",
];

/// One prediction's [`FIGURES`], in order (0 where the run has no event
/// latency).
pub type Figures = [f64; 7];

/// The [`FIGURES`] of `r`.
pub fn figures(r: &RunResult) -> Figures {
    let event = r.latency.get(&LatencyKey::Event);
    [
        r.rates.reads_per_s,
        r.rates.writes_per_s,
        r.rates.fsyncs_per_s,
        r.rates.read_mib_per_s,
        r.rates.written_mib_per_s,
        event.map_or(0.0, |l| l.mean_ms),
        event.and_then(|l| l.at(95.0)).unwrap_or(0.0),
    ]
}

/// The headline figure sensitivity is ranked on: writes/s when the run
/// writes, else reads/s.
fn headline(point: &Figures) -> usize {
    if point[1] > 0.0 {
        1
    } else {
        0
    }
}

/// `point` (the typical-parameter prediction) with the interval of `samples`
/// simulations of `model` over its ranges, run on `parallel` threads. Each
/// sample stops as [`RunOptions::for_sample`] says.
pub fn with_interval(
    spec: &RunSpec,
    model: &SystemModel,
    profile: Option<&Profile>,
    point: RunResult,
    options: &RunOptions,
    samples: usize,
    parallel: usize,
) -> Result<RunResult, SimError> {
    let design = Design::new(samples, spec.rand_seed);
    let sampled = design.apply(model, profile, spec)?;
    let outputs = run_parallel(spec, &sampled.systems, &options.for_sample(), parallel)?;
    Ok(interval(point, &design, &sampled, &outputs))
}

/// `point` with its `prediction` block: the interval of the samples'
/// figures (`outputs`, one per sample of `sampled`) and the parameters'
/// rank correlations with the headline figure.
pub fn interval(
    point: RunResult,
    design: &Design,
    sampled: &Sampled,
    outputs: &[Figures],
) -> RunResult {
    let point_figs = figures(&point);
    let structural = StructuralError::current();
    let mut table = BTreeMap::new();
    for (i, name) in FIGURES.iter().enumerate() {
        let mut v: Vec<f64> = outputs.iter().map(|f| f[i]).collect();
        v.sort_by(f64::total_cmp);
        let p = point_figs[i];
        // The point is a prediction too: the interval always holds it.
        let (low, high) = (percentile(&v, 0.1).min(p), percentile(&v, 0.9).max(p));
        let (wide_low, wide_high) = structural.widen(low, high, Direction::of_figure(name));
        table.insert(
            (*name).to_string(),
            FigureInterval {
                point: p,
                low: wide_low,
                high: wide_high,
                parameters_low: Some(low),
                parameters_high: Some(high),
            },
        );
    }
    let h = headline(&point_figs);
    let y: Vec<f64> = outputs.iter().map(|f| f[h]).collect();
    let columns: Vec<Vec<f64>> = (0..sampled.spans.len())
        .map(|j| sampled.values.iter().map(|d| d[j]).collect())
        .collect();
    let sensitivity = ranked_sensitivity(&sampled.spans, &columns, &y);
    let mut out = point;
    out.prediction = Some(PredictionInterval {
        figures: table,
        confidence: CONFIDENCE,
        samples: outputs.len(),
        method: format!(
            "Latin hypercube over {} parameter ranges (log-uniform where they span x3 or more), common random numbers (seed {}); samples stop at +-{:.0} % (95 %); 10th-90th percentile, {}; sensitivity: partial rank correlation (PRCC) with {}",
            sampled.spans.len(),
            design.seed,
            crate::convergence::SAMPLE_HALF_WIDTH * 100.0,
            structural.describe(),
            FIGURES[h]
        ),
        sensitivity,
    });
    out
}

fn run_parallel(
    spec: &RunSpec,
    systems: &[SystemModel],
    options: &RunOptions,
    parallel: usize,
) -> Result<Vec<Figures>, SimError> {
    let parallel = parallel.clamp(1, systems.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut slots: Vec<Option<Result<Figures, SimError>>> =
        (0..systems.len()).map(|_| None).collect();
    let slots_lock = std::sync::Mutex::new(&mut slots);
    std::thread::scope(|scope| {
        for _ in 0..parallel {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(m) = systems.get(i) else { break };
                let r = crate::Simulation::new(spec, m)
                    .options(options)
                    .run()
                    .map(|s| s.result)
                    .map(|r| figures(&r));
                if let Ok(mut s) = slots_lock.lock() {
                    s[i] = Some(r);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|s| s.unwrap_or(Err(SimError::CellLost)))
        .collect()
}

/// The `q` quantile of sorted `v` (linear between ranks).
pub(crate) fn percentile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let pos = q * (v.len() - 1) as f64;
    // From 0 to len - 1.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let (i, f) = (pos.floor() as usize, pos.fract());
    let j = (i + 1).min(v.len() - 1);
    v[i] + f * (v[j] - v[i])
}

fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut r = vec![0.0; v.len()];
    let mut k = 0;
    while k < idx.len() {
        let mut e = k;
        while e + 1 < idx.len() && v[idx[e + 1]].total_cmp(&v[idx[k]]).is_eq() {
            e += 1;
        }
        let avg = (k + e) as f64 / 2.0;
        for &i in &idx[k..=e] {
            r[i] = avg;
        }
        k = e + 1;
    }
    r
}

/// Spearman's rank correlation (0 when either side is constant).
#[cfg(test)]
pub(crate) fn spearman(x: &[f64], y: &[f64]) -> f64 {
    pearson(&ranks(x), &ranks(y))
}

/// The |partial rank correlation| that `samples` samples over `params`
/// parameters cannot tell from chance at 95 %: Fisher's z of a partial
/// correlation controlling the other `params - 1` has a standard error of
/// 1 / sqrt(n - 3 - (params - 1)), so the bound is tanh(1.96 x that). 16
/// samples over 6 parameters: 0.60. 1 where the samples are too few.
pub fn noise_correlation(samples: usize, params: usize) -> f64 {
    let dof = samples as f64 - 3.0 - params.saturating_sub(1) as f64;
    if dof <= 0.0 {
        1.0
    } else {
        (1.96 / dof.sqrt()).tanh()
    }
}

/// Each span's partial rank correlation with `y` (its samples in
/// `columns`, one column per span), the strongest first: "Measure this
/// first".
pub(crate) fn ranked_sensitivity(
    spans: &[Span],
    columns: &[Vec<f64>],
    y: &[f64],
) -> Vec<Sensitivity> {
    let mut sensitivity: Vec<Sensitivity> = spans
        .iter()
        .zip(partial_rank_correlations(columns, y))
        .map(|(s, rank_correlation)| Sensitivity {
            parameter: s.param.name().to_string(),
            rank_correlation,
        })
        .collect();
    sensitivity.sort_by(|a, b| {
        b.rank_correlation
            .abs()
            .total_cmp(&a.rank_correlation.abs())
    });
    sensitivity
}

/// Each parameter's partial rank correlation with `y` (PRCC: Marino et al.,
/// "A methodology for performing global uncertainty and sensitivity
/// analysis in systems biology", J. Theor. Biol. 254, 2008): the rank
/// correlation left once the other parameters' ranks are regressed out of
/// both. Why not the plain rank correlation: 16 Latin-hypercube samples
/// leave chance correlations of ±0.25 between the columns, so a parameter
/// with no effect borrows the dominant one's (seen: link.rtt_ms at +0.67 on
/// a cell whose 0.02-0.06 ms round trip is 0.3 % of its 13 ms latency,
/// while the dominant client.fsync_round_trips was -0.75). With too few
/// samples for the regression (n <= k + 1), the plain rank correlation.
fn partial_rank_correlations(columns: &[Vec<f64>], y: &[f64]) -> Vec<f64> {
    let n = y.len();
    let ranked: Vec<Vec<f64>> = columns.iter().map(|c| ranks(c)).collect();
    let ry = ranks(y);
    // Constant columns carry nothing to regress on (a singular system).
    let varying: Vec<usize> = (0..ranked.len())
        .filter(|&j| ranked[j].iter().any(|v| (v - ranked[j][0]).abs() > 0.0))
        .collect();
    (0..ranked.len())
        .map(|j| {
            if !varying.contains(&j) {
                return 0.0;
            }
            let others: Vec<&[f64]> = varying
                .iter()
                .filter(|&&o| o != j)
                .map(|&o| ranked[o].as_slice())
                .collect();
            if n <= others.len() + 2 {
                return pearson(&ranked[j], &ry);
            }
            match (residuals(&ranked[j], &others), residuals(&ry, &others)) {
                (Some(rx), Some(r)) => pearson(&rx, &r),
                _ => pearson(&ranked[j], &ry),
            }
        })
        .collect()
}

/// What is left of `v` after its least-squares fit on `regressors` and an
/// intercept; `None` when the normal equations are singular.
fn residuals(v: &[f64], regressors: &[&[f64]]) -> Option<Vec<f64>> {
    let k = regressors.len() + 1;
    let row = |i: usize| -> Vec<f64> {
        std::iter::once(1.0)
            .chain(regressors.iter().map(|r| r[i]))
            .collect()
    };
    // Normal equations (X'X) b = X'v, solved by Gaussian elimination with
    // partial pivoting: k is at most the few parameters of a prediction.
    let mut a = vec![vec![0.0; k + 1]; k];
    for (i, vi) in v.iter().enumerate() {
        let x = row(i);
        for r in 0..k {
            for c in 0..k {
                a[r][c] += x[r] * x[c];
            }
            a[r][k] += x[r] * vi;
        }
    }
    for c in 0..k {
        let pivot = (c..k).max_by(|&p, &q| a[p][c].abs().total_cmp(&a[q][c].abs()))?;
        if a[pivot][c].abs() < 1e-9 {
            return None;
        }
        a.swap(c, pivot);
        let pivot_row = a[c].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot_row[c];
                for (x, p) in row.iter_mut().zip(&pivot_row).skip(c) {
                    *x -= f * p;
                }
            }
        }
    }
    let b: Vec<f64> = (0..k).map(|r| a[r][k] / a[r][r]).collect();
    Some(
        v.iter()
            .enumerate()
            .map(|(i, vi)| vi - row(i).iter().zip(&b).map(|(x, bj)| x * bj).sum::<f64>())
            .collect(),
    )
}

fn pearson(rx: &[f64], ry: &[f64]) -> f64 {
    let n = rx.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(ry) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx).powi(2);
        syy += (b - my).powi(2);
    }
    if sxx == 0.0 || syy == 0.0 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latin_hypercube_puts_one_point_in_each_stratum() {
        let s = [Span {
            param: Param::RttMs,
            low: 1.0,
            typical: 1.5,
            high: 2.0,
        }];
        let d = latin_hypercube(&s, 10, 7);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let mut strata: Vec<usize> = d.iter().map(|p| ((p[0] - 1.0) * 10.0) as usize).collect();
        strata.sort_unstable();
        assert_eq!(strata, (0..10).collect::<Vec<_>>());
        assert_eq!(latin_hypercube(&s, 10, 7), d, "deterministic for a seed");
    }

    #[test]
    fn a_parameter_without_effect_gets_no_borrowed_correlation() {
        // y depends on a alone; b is drawn to correlate with a by chance
        // (as a small Latin hypercube's columns do). Spearman gives b a's
        // correlation; the partial rank correlation does not.
        let a: Vec<f64> = (0..16).map(f64::from).collect();
        let b: Vec<f64> = (0..16)
            .map(|i| f64::from(i) + if i % 3 == 0 { 6.0 } else { 0.0 })
            .collect();
        let y: Vec<f64> = a.iter().map(|x| -x * x).collect();
        assert!(spearman(&b, &y) < -0.8, "{}", spearman(&b, &y));
        let p = partial_rank_correlations(&[a, b], &y);
        assert!(p[0] < -0.95, "{p:?}");
        assert!(p[1].abs() < 0.3, "{p:?}");
    }

    #[test]
    fn the_noise_bound_shrinks_with_samples_and_grows_with_parameters() {
        let b = noise_correlation(16, 6);
        assert!((b - 0.60).abs() < 0.01, "{b}");
        assert!(noise_correlation(64, 6) < b && noise_correlation(16, 7) > b);
        assert!((noise_correlation(8, 6) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_constant_parameter_has_no_correlation() {
        let a: Vec<f64> = (0..16).map(f64::from).collect();
        let y: Vec<f64> = a.iter().map(|x| 2.0 * x).collect();
        let p = partial_rank_correlations(&[a, vec![1.0; 16]], &y);
        assert!((p[0] - 1.0).abs() < 1e-9 && p[1] == 0.0, "{p:?}");
    }

    #[test]
    fn spearman_ranks() {
        assert!((spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 90.0]) - 1.0).abs() < 1e-12);
        assert!((spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        assert!(spearman(&[1.0, 2.0], &[5.0, 5.0]).abs() < 1e-12);
    }
}

//! Calibration: fit the uncertain parameters of a system model (see
//! [`Param`]) to measured fileio runs by simulating each run and minimising
//! the relative error of its rates.
//!
//! Method (docs/model-reference.md, "Calibration's method"):
//! 1. Each measured [`RunResult`] becomes the [`RunSpec`] it ran (its
//!    workload summary read back through fileio's own option parser), with
//!    a shorter simulated time ([`SIM_SECONDS`], at most [`SIM_EVENTS`]
//!    events) and a fixed seed: schema 1 results do not record the seed.
//! 2. The misfit of one figure is ln(predicted / measured) divided by the
//!    run's relative noise (the standard error of its per-second interval
//!    rates, at least [`NOISE_FLOOR`]); the objective is the sum of squares
//!    over reads/s, writes/s, fsyncs/s and the mean event latency.
//! 3. Identification: the sensitivity of every figure to each parameter
//!    (central differences, a factor 2 either side, in log space) is taken
//!    at the starting values. In [`Param::ALL`]'s order, a parameter is
//!    fitted when alone it would be known within a factor e^0.5 and when its
//!    sensitivities are not (nearly) a combination of those already
//!    accepted; otherwise it is reported as not identified and keeps the
//!    system's value.
//! 4. The fit is Nelder–Mead in log space within [`Param::bounds`], the
//!    physical bounds for the system's client; the integer round trips per
//!    fsync, when identified, are tried one value at a time with the others
//!    fitted for each.
//! 5. Uncertainty (1σ) from the curvature at the optimum: the Gauss–Newton
//!    covariance (JᵀJ)⁻¹ of the weighted log residuals, scaled up by the
//!    reduced χ² when the fit is worse than the noise.
//! 6. A continuous parameter the fit left at one of its bounds
//!    ([`Param::at_bound`]) is reported as such ([`Outcome::AtBound`]), with
//!    no 1σ: the measurements asked for a value no device, link or CPU has,
//!    so the model cannot reach them, and [`Calibration::warnings`] say so
//!    with the gap that is left. The round trips per fsync are a count whose
//!    lower bound, 1, is an ordinary value: they are not flagged.

use fileio::options::{IoMode, RunSpec};
use fileio::probe::{ProbeOp, ProbeResult, Transport};
use fileio::result::{Environment, LatencyKey, ResultKind, RunResult};

use crate::components::{LinkPath, LogDevice, Pool, LR_WRITE_BYTES};

use crate::params::{current_value, not_applicable, set_value, BoundSide, Param};
use crate::profile::{Fitted, Profile};
use crate::system::{DeviceSpec, Protocol, SystemModel};
use crate::{CalibrateError, SimError};

/// Simulated seconds per run at most: long enough for two txg syncs at the
/// default 5 s timeout, short enough for hundreds of simulations.
pub const SIM_SECONDS: u64 = 10;
/// Simulated events per run at most (fast cached runs reach it first).
pub(crate) const SIM_EVENTS: u64 = 100_000;
/// Smallest relative noise assumed for a measured rate: on a shared machine
/// run-to-run spread exceeds the within-run standard error.
pub(crate) const NOISE_FLOOR: f64 = 0.02;
/// The seed of every simulated run.
pub const SIM_SEED: u64 = 1;
/// A parameter is identified when alone its 1σ is below this in ln units
/// (a factor of about 1.65).
const MAX_LOG_SIGMA: f64 = 0.5;
/// ... and when at least this share (sine of the angle) of its sensitivity
/// vector lies outside the span of the parameters accepted before it.
const MIN_INDEPENDENCE: f64 = 0.3;
/// Round trips per fsync tried when they are identified.
const MAX_TRIPS_TRIED: u32 = 6;
/// Most distinct runs one calibration fits: every evaluation of the
/// objective simulates each of them (a fit takes about 50 evaluations per
/// parameter). Identical runs count once, with their weight.
pub(crate) const MAX_RUNS: usize = 16;
/// Most simulations one calibration makes before it gives up (a bound on
/// its host time: each is at most [`SIM_EVENTS`] events).
pub(crate) const MAX_SIMULATIONS: usize = 20_000;

/// The system calibration assumes without a system file: fileio on the
/// measuring machine's own file system, described as a local system whose
/// pool is one flash device (the `ssd-sata` class as the starting point; its
/// flush is the commit cost calibration fits) with 4 KiB records (a file
/// system block: no read-modify-write), and the run's RAM and CPUs.
pub fn local_model(env: &Environment) -> SystemModel {
    let mut m = SystemModel {
        name: if env.hostname.is_empty() {
            "this machine (local, ad-hoc)".to_string()
        } else {
            format!("{} (local, ad-hoc)", env.hostname)
        },
        ..SystemModel::default()
    };
    if env.mem_total_bytes > 0 {
        m.server.ram = env.mem_total_bytes.to_string();
    }
    if env.cpus > 0 {
        m.server.cores = env.cpus.min(1024);
    }
    m.pool.layout = "1xstripe".into();
    m.pool.disk = DeviceSpec::Name("ssd-sata".into());
    m.pool.recordsize = "4K".into();
    m
}

/// A figure of a run that calibration fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    ReadsPerS,
    WritesPerS,
    FsyncsPerS,
    MeanLatencyMs,
}

impl Metric {
    pub const ALL: [Metric; 4] = [
        Metric::ReadsPerS,
        Metric::WritesPerS,
        Metric::FsyncsPerS,
        Metric::MeanLatencyMs,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::ReadsPerS => "reads/s",
            Metric::WritesPerS => "writes/s",
            Metric::FsyncsPerS => "fsyncs/s",
            Metric::MeanLatencyMs => "latency ms",
        }
    }

    /// The figure in `r`; `None` when the run has none (no reads in rndwr,
    /// no latency recorded).
    pub fn of(self, r: &RunResult) -> Option<f64> {
        let v = match self {
            Metric::ReadsPerS => r.rates.reads_per_s,
            Metric::WritesPerS => r.rates.writes_per_s,
            Metric::FsyncsPerS => r.rates.fsyncs_per_s,
            Metric::MeanLatencyMs => r
                .latency
                .get(&LatencyKey::Event)
                .filter(|l| l.count > 0)
                .map_or(0.0, |l| l.mean_ms),
        };
        (v.is_finite() && v > 0.0).then_some(v)
    }
}

/// A measured run, ready to be simulated.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub id: String,
    /// The run's workload with the simulated time and seed of calibration.
    pub spec: RunSpec,
    pub observed: Vec<(Metric, f64)>,
    /// Relative noise of the measured figures (1σ).
    pub noise: f64,
}

impl Measurement {
    /// Read a measured result. Refused, with one line naming the run: a
    /// prediction, a distributed job, a run with no events, a workload the
    /// simulator does not model.
    pub fn from_result(id: &str, r: &RunResult) -> Result<Measurement, SimError> {
        let bad = |reason: String| SimError::Measurement {
            id: id.to_string(),
            reason,
        };
        if r.kind != ResultKind::Measured {
            return Err(bad(
                "a predicted result, not a measurement; calibrate needs measured runs (kind: measured)".into(),
            ));
        }
        if !r.ranks.is_empty() || r.distributed.is_some() {
            return Err(bad(
                "a distributed (MPI) run; calibrate takes single-process runs".into(),
            ));
        }
        let w = &r.workload;
        // Checked before the workload is read back, so a forged count
        // allocates nothing.
        if w.threads > crate::limits::MAX_THREADS {
            return Err(bad(format!(
                "workload.threads: {} is above the {} threads the simulator models; accepted: 1 to {}",
                w.threads,
                crate::limits::MAX_THREADS,
                crate::limits::MAX_THREADS
            )));
        }
        if w.io_mode != IoMode::Sync {
            return Err(bad(format!(
                "--file-io-mode={} is not modelled; calibrate takes sync runs",
                w.io_mode.name()
            )));
        }
        if w.rate > 0 {
            return Err(bad(
                "--rate is not modelled; calibrate takes closed-loop runs (--rate=0)".into(),
            ));
        }
        let observed: Vec<(Metric, f64)> = Metric::ALL
            .into_iter()
            .filter_map(|m| m.of(r).map(|v| (m, v)))
            .collect();
        if r.counts.events == 0 || observed.is_empty() {
            return Err(bad("the run completed no events".into()));
        }
        let spec = spec_of(r).map_err(bad)?;
        crate::limits::check_workload(&spec, crate::limits::Budget::default(), 1)
            .map_err(|e| bad(format!("workload: {e}")))?;
        Ok(Measurement {
            id: id.to_string(),
            spec,
            observed,
            noise: noise_of(r),
        })
    }
}

/// The run's workload read back through fileio's typed API (so it is
/// validated like a command line), with calibration's time, events and seed.
fn spec_of(r: &RunResult) -> Result<RunSpec, String> {
    let w = &r.workload;
    let time = if w.time_limit_s == 0 {
        SIM_SECONDS
    } else {
        w.time_limit_s.min(SIM_SECONDS)
    };
    let events = if w.events_limit == 0 {
        SIM_EVENTS
    } else {
        w.events_limit.min(SIM_EVENTS)
    };
    let invalid = |e: fileio::workload::WorkloadError| {
        format!("its workload is not valid fileio options: {e}")
    };
    let mut spec = RunSpec::try_from(w).map_err(invalid)?;
    spec.time_s = time;
    spec.events = events;
    spec.rand_seed = SIM_SEED;
    spec.validate().map_err(invalid)?;
    Ok(spec)
}

/// Relative standard error of the run's throughput (reads + writes per
/// second) from its interval samples, at least [`NOISE_FLOOR`].
fn noise_of(r: &RunResult) -> f64 {
    let rates: Vec<f64> = r
        .intervals
        .iter()
        .map(|i| i.reads_per_s + i.writes_per_s)
        .collect();
    if rates.len() < 3 {
        return NOISE_FLOOR;
    }
    let n = rates.len() as f64;
    let mean = rates.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return NOISE_FLOOR;
    }
    let var = rates.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (var.sqrt() / mean / n.sqrt()).max(NOISE_FLOOR)
}

/// What calibration concluded about one parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Fitted {
        value: f64,
        /// 1σ, in the value's unit.
        uncertainty: f64,
        /// The system's value before the fit.
        start: f64,
    },
    /// Fitted, but the best value sits at a physical bound
    /// ([`Param::bounds`]): the runs asked for a value past it. No 1σ: at
    /// a bound the objective has no minimum to measure the curvature of.
    AtBound {
        value: f64,
        side: BoundSide,
        /// The system's value before the fit.
        start: f64,
    },
    NotIdentified {
        /// The system's value, kept (`None` when the parameter does not
        /// apply to the system).
        value: Option<f64>,
        reason: String,
    },
    /// Measured directly by a probe ([`ProbeParams`]), not fitted: the fit
    /// of the other parameters starts from it and leaves it alone.
    Probed {
        value: f64,
        /// 1σ, in the value's unit.
        uncertainty: f64,
        /// The system's value before the probe.
        start: f64,
        /// How the value follows from the probe's figures.
        source: String,
        /// The bound the probe's figure was moved to, when it was past it.
        at_bound: Option<BoundSide>,
    },
}

/// Measured against predicted, one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFit {
    pub id: String,
    /// (figure, measured, predicted).
    pub rows: Vec<(Metric, f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct Calibration {
    pub system: String,
    pub params: Vec<(Param, Outcome)>,
    pub runs: Vec<RunFit>,
    /// The objective at the fitted values (weighted sum of squares).
    pub chi2: f64,
    pub simulations: usize,
    /// Runs given that were identical to an earlier one (fitted once, with
    /// their weight).
    pub duplicates: usize,
    /// The system model with the fitted values applied.
    pub model: SystemModel,
    /// The probe whose values were taken ([`calibrate_with_probe`]), its id.
    pub probe: Option<String>,
    /// What the probe measured that this system could not take, and why.
    pub notes: Vec<String>,
}

pub(crate) const METHOD: &str = "Nelder-Mead in log space on ln(predicted/measured) of reads/s, writes/s, fsyncs/s and mean latency, weighted by each run's noise; uncertainty 1 sigma from the curvature (Gauss-Newton covariance, scaled by the reduced chi-square when above 1)";

struct Fitter<'a> {
    runs: &'a [Measurement],
    /// √(copies of each run): identical runs weigh as many times over.
    weights: Vec<f64>,
    /// Residuals there would be with every copy: the χ²'s degrees of
    /// freedom.
    residual_count: usize,
    /// The parameters calibration may fit; the others keep the system's
    /// values.
    allowed: &'a [Param],
    /// The system's client, whose bounds the fit keeps to.
    access: Protocol,
    simulations: usize,
}

impl<'a> Fitter<'a> {
    /// A fitter of `runs`, each given `copies` times, fitting `allowed`
    /// within their bounds for a client of `access`.
    fn new(
        runs: &'a [Measurement],
        copies: &[usize],
        allowed: &'a [Param],
        access: Protocol,
    ) -> Fitter<'a> {
        Fitter {
            runs,
            weights: copies.iter().map(|&n| (n as f64).sqrt()).collect(),
            residual_count: runs
                .iter()
                .zip(copies)
                .map(|(m, n)| m.observed.len() * n)
                .sum(),
            allowed,
            access,
            simulations: 0,
        }
    }
}

impl Fitter<'_> {
    /// Predicted figures of every run (in each run's `observed` order).
    fn predict(&mut self, model: &SystemModel) -> Result<Vec<Vec<f64>>, SimError> {
        self.runs
            .iter()
            .map(|m| {
                self.simulations += 1;
                if self.simulations > MAX_SIMULATIONS {
                    return Err(CalibrateError::TooManySimulations {
                        max: MAX_SIMULATIONS,
                    }
                    .into());
                }
                let r = crate::simulate(&m.spec, model)?;
                Ok(m.observed
                    .iter()
                    .map(|&(metric, _)| metric.of(&r).unwrap_or(0.0))
                    .collect())
            })
            .collect()
    }

    /// Weighted log residuals, flattened over runs and figures. A figure
    /// predicted as 0 counts as a millionth of the measurement.
    fn residuals(&self, predicted: &[Vec<f64>]) -> Vec<f64> {
        let mut out = Vec::new();
        for ((m, p), w) in self.runs.iter().zip(predicted).zip(&self.weights) {
            for (&(_, measured), &pred) in m.observed.iter().zip(p) {
                let pred = pred.max(measured * 1e-6);
                out.push(w * (pred / measured).ln() / m.noise);
            }
        }
        out
    }

    fn chi2(&mut self, model: &SystemModel) -> Result<f64, SimError> {
        let p = self.predict(model)?;
        Ok(self.residuals(&p).iter().map(|r| r * r).sum())
    }

    /// Residual sensitivities to each of `params` around `model`, in ln
    /// units, by central differences of half-width `h` (ln units; integer
    /// parameters step by one).
    fn jacobian(
        &mut self,
        model: &SystemModel,
        params: &[Param],
        h: f64,
    ) -> Result<Vec<Vec<f64>>, SimError> {
        let mut cols = Vec::with_capacity(params.len());
        for &p in params {
            let v = current_value(model, p)?.unwrap_or_else(|| p.probe_scale());
            let b = p.bounds(self.access);
            let (lo, hi) = (b.low, b.high);
            let (a, b) = if p.is_integer() {
                if v + 1.0 <= hi {
                    (v, v + 1.0)
                } else {
                    (v - 1.0, v)
                }
            } else {
                ((v * (-h).exp()).max(lo), (v * h.exp()).min(hi))
            };
            let mut ma = model.clone();
            set_value(&mut ma, p, a)?;
            let mut mb = model.clone();
            set_value(&mut mb, p, b)?;
            let ra = {
                let pa = self.predict(&ma)?;
                self.residuals(&pa)
            };
            let rb = {
                let pb = self.predict(&mb)?;
                self.residuals(&pb)
            };
            let dx = (b / a).ln();
            cols.push(ra.iter().zip(&rb).map(|(x, y)| (y - x) / dx).collect());
        }
        Ok(cols)
    }

    /// Fit the continuous `params` of `model` (starting at its values);
    /// returns the fitted model and its objective.
    fn fit(
        &mut self,
        model: &SystemModel,
        params: &[Param],
    ) -> Result<(SystemModel, f64), SimError> {
        if params.is_empty() {
            let c = self.chi2(model)?;
            return Ok((model.clone(), c));
        }
        let x0: Vec<f64> = params
            .iter()
            .map(|&p| {
                let v = current_value(model, p)
                    .ok()
                    .flatten()
                    .filter(|v| *v >= p.bounds(self.access).low)
                    .unwrap_or_else(|| p.probe_scale());
                Ok(v.ln())
            })
            .collect::<Result<_, SimError>>()?;
        let lo: Vec<f64> = params
            .iter()
            .map(|p| p.bounds(self.access).low.ln())
            .collect();
        let hi: Vec<f64> = params
            .iter()
            .map(|p| p.bounds(self.access).high.ln())
            .collect();
        let mut error = None;
        // exp(ln(bound)) can land a hair outside the bound: clamped, so a
        // value at a bound is the bound.
        let access = self.access;
        let value_at = move |p: Param, xi: f64| {
            let b = p.bounds(access);
            xi.exp().clamp(b.low, b.high)
        };
        let mut eval = |x: &[f64]| -> f64 {
            let mut m = model.clone();
            for (&p, &xi) in params.iter().zip(x) {
                if let Err(e) = set_value(&mut m, p, value_at(p, xi)) {
                    error.get_or_insert(e);
                    return f64::INFINITY;
                }
            }
            match self.chi2(&m) {
                Ok(c) => c,
                Err(e) => {
                    error.get_or_insert(e);
                    f64::INFINITY
                }
            }
        };
        let (x, f) = nelder_mead(&mut eval, &x0, &lo, &hi, 80 * params.len());
        if let Some(e) = error {
            return Err(e);
        }
        let mut m = model.clone();
        for (&p, &xi) in params.iter().zip(&x) {
            set_value(&mut m, p, value_at(p, xi))?;
        }
        Ok((m, f))
    }
}

type Outcomes = Vec<(Param, Option<Outcome>)>;

impl Fitter<'_> {
    /// Which parameters the runs identify (step 3 of the module's method):
    /// the accepted ones, in order, and an outcome for each one that is not.
    fn identify(&mut self, model: &SystemModel) -> Result<(Vec<Param>, Outcomes), SimError> {
        let mut outcomes: Outcomes = Vec::new();
        let mut candidates = Vec::new();
        // The probe model: every applicable parameter at a value of its order.
        let mut probe = model.clone();
        for p in Param::ALL {
            if !self.allowed.contains(&p) {
                outcomes.push((
                    p,
                    Some(Outcome::NotIdentified {
                        value: current_value(model, p)?,
                        reason: "not fitted: left out of the parameters to fit".into(),
                    }),
                ));
                continue;
            }
            if let Some(why) = not_applicable(model, p)? {
                outcomes.push((
                    p,
                    Some(Outcome::NotIdentified {
                        value: None,
                        reason: format!("does not apply: {why}"),
                    }),
                ));
                continue;
            }
            let v = current_value(model, p)?.unwrap_or(0.0);
            if v < p.bounds(self.access).low {
                set_value(&mut probe, p, p.probe_scale())?;
            }
            candidates.push(p);
            outcomes.push((p, None));
        }
        let cols = self.jacobian(&probe, &candidates, std::f64::consts::LN_2)?;
        let mut basis: Vec<Vec<f64>> = Vec::new();
        let mut accepted: Vec<Param> = Vec::new();
        for (&p, col) in candidates.iter().zip(&cols) {
            let norm = dot(col, col).sqrt();
            let reason = if norm < 1.0 / MAX_LOG_SIGMA {
                Some(format!(
                    "the runs barely depend on it (alone it would be known only within a factor {})",
                    fmt_factor(1.0 / norm.max(1e-12))
                ))
            } else {
                let mut rest = col.clone();
                for b in &basis {
                    let c = dot(&rest, b);
                    rest.iter_mut().zip(b).for_each(|(r, bi)| *r -= c * bi);
                }
                let left = dot(&rest, &rest).sqrt();
                if left < MIN_INDEPENDENCE * norm {
                    Some(format!(
                        "confounded with {}: the runs cannot tell them apart",
                        accepted
                            .iter()
                            .map(|a| a.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                } else {
                    basis.push(rest.iter().map(|r| r / left).collect());
                    accepted.push(p);
                    None
                }
            };
            if let Some(reason) = reason {
                let value = current_value(model, p)?;
                set_outcome(&mut outcomes, p, Outcome::NotIdentified { value, reason });
            }
        }
        Ok((accepted, outcomes))
    }

    /// 1σ in ln units of each of `params` at the optimum `best` (step 5),
    /// `extra` more parameters (the round trips, those held at a bound)
    /// counted as fitted.
    fn sigmas(
        &mut self,
        best: &SystemModel,
        params: &[Param],
        extra: usize,
        chi2: f64,
    ) -> Result<Vec<f64>, SimError> {
        if params.is_empty() {
            return Ok(Vec::new());
        }
        let j = self.jacobian(best, params, 0.1)?;
        let m = self.residual_count;
        let k = params.len() + extra;
        let scale = if m > k {
            (chi2 / (m - k) as f64).max(1.0)
        } else {
            1.0
        };
        let jtj: Vec<Vec<f64>> = j
            .iter()
            .map(|a| j.iter().map(|b| dot(a, b)).collect())
            .collect();
        Ok(match invert(&jtj) {
            Some(inv) => (0..params.len())
                .map(|i| (inv[i][i].max(0.0) * scale).sqrt())
                .collect(),
            None => vec![f64::INFINITY; params.len()],
        })
    }

    /// The fit (step 4): the continuous parameters, and the round trips per
    /// fsync one count at a time when `trips` is set. Returns the fitted
    /// model, its objective and the round trips' uncertainty.
    fn fit_all(
        &mut self,
        start: &SystemModel,
        continuous: &[Param],
        trips: bool,
    ) -> Result<(SystemModel, f64, f64), SimError> {
        if !trips {
            let (fit, c) = self.fit(start, continuous)?;
            return Ok((fit, c, 0.0));
        }
        let mut tries = Vec::new();
        for k in 1..=MAX_TRIPS_TRIED {
            let mut m = start.clone();
            set_value(&mut m, Param::FsyncRoundTrips, f64::from(k))?;
            let (fit, c) = self.fit(&m, continuous)?;
            tries.push((k, fit, c));
        }
        tries.sort_by(|a, b| a.2.total_cmp(&b.2));
        let (k, fit, c) = tries.swap_remove(0);
        // Another count within Δχ² = 1 of the best is as likely.
        let sigma = tries
            .iter()
            .filter(|t| t.2 - c < 1.0)
            .map(|t| f64::from(t.0.abs_diff(k)))
            .fold(0.0, f64::max);
        Ok((fit, c, sigma))
    }
}

impl Fitter<'_> {
    /// The outcome of each fitted continuous parameter of `best` (the fit of
    /// `model`) in `outcomes` (steps 5 and 6): at a bound, or fitted with
    /// its 1σ. One at a bound is held there: the curvature is the others'
    /// (it still counts as fitted in the degrees of freedom, as do `extra`
    /// more, the round trips).
    fn continuous_outcomes(
        &mut self,
        model: &SystemModel,
        best: &SystemModel,
        continuous: &[Param],
        extra: usize,
        chi2: f64,
        outcomes: &mut Outcomes,
    ) -> Result<(), SimError> {
        let mut interior = Vec::new();
        for &p in continuous {
            let value = current_value(best, p)?.unwrap_or(0.0);
            match p.at_bound(self.access, value) {
                Some(side) => set_outcome(
                    outcomes,
                    p,
                    Outcome::AtBound {
                        value,
                        side,
                        start: current_value(model, p)?.unwrap_or(0.0),
                    },
                ),
                None => interior.push(p),
            }
        }
        let held = continuous.len() - interior.len() + extra;
        let sigmas = self.sigmas(best, &interior, held, chi2)?;
        for (&p, sigma) in interior.iter().zip(&sigmas) {
            let value = current_value(best, p)?.unwrap_or(0.0);
            set_outcome(
                outcomes,
                p,
                Outcome::Fitted {
                    value,
                    uncertainty: value * sigma,
                    start: current_value(model, p)?.unwrap_or(0.0),
                },
            );
        }
        Ok(())
    }

    /// Every run's measured and predicted figures on `model`.
    fn run_fits(&mut self, model: &SystemModel) -> Result<Vec<RunFit>, SimError> {
        let predicted = self.predict(model)?;
        Ok(self
            .runs
            .iter()
            .zip(&predicted)
            .map(|(m, p)| RunFit {
                id: m.id.clone(),
                rows: m
                    .observed
                    .iter()
                    .zip(p)
                    .map(|(&(metric, measured), &pred)| (metric, measured, pred))
                    .collect(),
            })
            .collect())
    }
}

/// Identical runs (200 copies of one file) are one run weighing 200
/// times: the same objective, simulated once per evaluation. Compared by
/// what the fit reads of them: the workload, the figures, the noise.
/// Returns the distinct runs and how many copies of each were given; more
/// than [`MAX_RUNS`] distinct runs are refused.
fn distinct_runs(runs: &[Measurement]) -> Result<(Vec<Measurement>, Vec<usize>), SimError> {
    let mut distinct: Vec<Measurement> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    let mut copies: Vec<usize> = Vec::new();
    for m in runs {
        let key = format!("{:?} {:?} {}", m.spec, m.observed, m.noise);
        match keys.iter().position(|k| *k == key) {
            Some(i) => copies[i] += 1,
            None => {
                keys.push(key);
                copies.push(1);
                distinct.push(m.clone());
            }
        }
    }
    if distinct.len() > MAX_RUNS {
        return Err(CalibrateError::TooManyRuns {
            runs: distinct.len(),
            max: MAX_RUNS,
        }
        .into());
    }
    for (m, &n) in distinct.iter_mut().zip(&copies) {
        if n > 1 {
            m.id = format!("{} (and {} identical)", m.id, n - 1);
        }
    }
    Ok((distinct, copies))
}

/// Fit `model`'s uncertain parameters to `runs`.
pub fn calibrate(model: &SystemModel, runs: &[Measurement]) -> Result<Calibration, SimError> {
    calibrate_only(model, runs, &Param::ALL)
}

/// Fit only `params` of `model` (each still only when the runs identify
/// it); every other parameter keeps the system's value and is reported as
/// not fitted. For a system whose other parameters are known from their
/// models (a lab cell: its disks are the simulator's own models), so one
/// run fits the one unknown rather than trading it against a known one.
pub fn calibrate_only(
    model: &SystemModel,
    runs: &[Measurement],
    params: &[Param],
) -> Result<Calibration, SimError> {
    if params.is_empty() {
        return Err(CalibrateError::NoParameters {
            accepted: Param::accepted(),
        }
        .into());
    }
    if runs.is_empty() {
        return Err(CalibrateError::NoRuns.into());
    }
    let sys = model.resolve()?;
    let (distinct, copies) = distinct_runs(runs)?;
    let mut fitter = Fitter::new(&distinct, &copies, params, model.client.protocol);
    // Identify at the system's values, fit, and identify again at the fit:
    // a parameter that did not matter at the starting values (a CPU that
    // saturates only once the commit is found to be fast) can matter there.
    // At most three rounds; each only adds parameters.
    let (mut accepted, mut outcomes) = fitter.identify(model)?;
    let mut start = model.clone();
    let mut rounds = 0;
    let (best, chi2, trips_sigma, continuous) = loop {
        rounds += 1;
        let continuous: Vec<Param> = accepted
            .iter()
            .copied()
            .filter(|p| !p.is_integer())
            .collect();
        let trips = accepted.contains(&Param::FsyncRoundTrips);
        // A value below its bound (a local client's 0 µs) starts at the
        // probe scale.
        for &p in &continuous {
            if current_value(&start, p)?.unwrap_or(0.0) < p.bounds(fitter.access).low {
                set_value(&mut start, p, p.probe_scale())?;
            }
        }
        let (best, chi2, sigma) = fitter.fit_all(&start, &continuous, trips)?;
        if rounds == 3 {
            break (best, chi2, sigma, continuous);
        }
        let (again, again_outcomes) = fitter.identify(&best)?;
        if again.iter().all(|p| accepted.contains(p)) {
            break (best, chi2, sigma, continuous);
        }
        // The union, in identification order, starting from this fit.
        accepted = Param::ALL
            .into_iter()
            .filter(|p| accepted.contains(p) || again.contains(p))
            .collect();
        for (p, o) in again_outcomes {
            if !accepted.contains(&p) {
                set_outcome(
                    &mut outcomes,
                    p,
                    o.unwrap_or(Outcome::NotIdentified {
                        value: current_value(model, p)?,
                        reason: "not identified".into(),
                    }),
                );
            }
        }
        start = best;
    };
    let trips_fitted = accepted.contains(&Param::FsyncRoundTrips);
    fitter.continuous_outcomes(
        model,
        &best,
        &continuous,
        usize::from(trips_fitted),
        chi2,
        &mut outcomes,
    )?;
    if trips_fitted {
        set_outcome(
            &mut outcomes,
            Param::FsyncRoundTrips,
            Outcome::Fitted {
                value: current_value(&best, Param::FsyncRoundTrips)?.unwrap_or(1.0),
                uncertainty: trips_sigma,
                start: f64::from(sys.fsync_round_trips),
            },
        );
    }
    let fits = fitter.run_fits(&best)?;
    Ok(Calibration {
        system: sys.name,
        params: outcomes
            .into_iter()
            .filter_map(|(p, o)| o.map(|o| (p, o)))
            .collect(),
        runs: fits,
        chi2,
        simulations: fitter.simulations,
        duplicates: copies.iter().map(|n| n - 1).sum(),
        model: best,
        probe: None,
        notes: Vec::new(),
    })
}

/// The size of the probe's reads and writes (4 KiB, `fileio::probe`).
const PROBE_WRITE_BYTES: u64 = 4096;

/// How a probe's figures become parameters, for the profile's `method`.
pub(crate) const PROBE_METHOD: &str = "link.rtt_ms = NULL less the link's own serialisation; server.cpu_us = GETATTR - NULL; commit_device.flush_ms = the stable 4 KiB write's commit time less the model's commit CPU and device write; means, 1 sigma the standard error of the means, at least 2 % of each";

/// One parameter a probe measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeValue {
    pub param: Param,
    pub value: f64,
    /// 1σ, in the value's unit.
    pub uncertainty: f64,
    /// How it follows from the probe's figures, for the report.
    pub source: String,
    /// The bound the figure was moved to, when it was past it.
    pub at_bound: Option<BoundSide>,
}

/// What a `tankbench probe` result fixes in a system model ([`probe_params`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeParams {
    pub id: String,
    pub values: Vec<ProbeValue>,
    /// What the probe measured that this system cannot take, and why.
    pub notes: Vec<String>,
}

impl ProbeParams {
    pub fn get(&self, p: Param) -> Option<&ProbeValue> {
        self.values.iter().find(|v| v.param == p)
    }
}

/// One probed operation's mean and its 1σ, ms: the standard error of the
/// mean, but at least [`NOISE_FLOOR`] of it (as a run's noise: the spread
/// from one probe to the next exceeds the within-probe error). `None` when
/// the operation has no samples (an interrupted probe).
fn probe_mean(probe: &ProbeResult, op: ProbeOp) -> Option<(f64, f64)> {
    let o = probe.operation(op)?;
    let l = &o.latency;
    if l.count == 0 || !(l.mean_ms.is_finite() && l.mean_ms >= 0.0) {
        return None;
    }
    let se = l.stddev_ms / (l.count as f64).sqrt();
    let se = if se.is_finite() { se } else { 0.0 };
    Some((l.mean_ms, se.max(NOISE_FLOOR * l.mean_ms)))
}

/// Time one message of `payload` bytes takes onto the system's link, ms (0
/// without a link): the serialisation the model adds to a round trip itself.
fn serialise_ms(sys: &crate::System, payload: u64) -> f64 {
    sys.link.map_or(0.0, |link| {
        let mut path = LinkPath::new(link, 0, sys.protocol.header_bytes());
        path.send_up(0, payload) as f64 / 1e6
    })
}

/// The commit device's time for the log block of one 4 KiB write, without
/// its flush, ms: what the model adds to `flush_ms` for a small commit.
fn log_write_without_flush_ms(model: &SystemModel) -> Result<f64, SimError> {
    let mut m = model.clone();
    set_value(&mut m, Param::CommitFlushMs, 0.0)?;
    let sys = m.resolve()?;
    let bytes = PROBE_WRITE_BYTES + LR_WRITE_BYTES;
    let done = match &sys.log {
        Some(log) => LogDevice::new(log, sys.disk_bytes, SIM_SEED).write_log_block(0, bytes),
        None => Pool::new(
            sys.shape,
            &sys.disk,
            sys.disk_bytes,
            sys.recordsize,
            SIM_SEED,
        )
        .write_log_block(0, bytes),
    };
    Ok(done as f64 / 1e6)
}

/// A probed value within `p`'s bounds for a client of `access`, with a
/// note when it had to be moved, and the bound it was moved to.
fn within_bounds(
    p: Param,
    access: Protocol,
    v: f64,
    source: &mut String,
) -> (f64, Option<BoundSide>) {
    let b = p.bounds(access);
    if v < b.low {
        source.push_str(&format!(
            ", raised to {} (the parameter's lower bound)",
            fmt_num(b.low)
        ));
        (b.low, Some(BoundSide::Low))
    } else if v > b.high {
        source.push_str(&format!(", cut to {} (its upper bound)", fmt_num(b.high)));
        (b.high, Some(BoundSide::High))
    } else {
        (v, None)
    }
}

/// The parameters a probe measures directly, for `model` (docs/model-reference.md,
/// "A probe in the calibration"):
///
/// - `link.rtt_ms`: NULL, the round trip with no file system work, less the
///   serialisation of its two header-only messages, which the model adds
///   to every round trip itself (on the system's link). NFS only.
/// - `server.cpu_us`: GETATTR − NULL, the server's work for the cheapest
///   request with file system work; at least the parameter's lower bound
///   (0.01 µs) when GETATTR is not slower. On a local directory, `stat`.
/// - `commit_device.flush_ms`: the stable 4 KiB write's commit time — over
///   NFS WRITE FILE_SYNC − GETATTR (the WRITE is a request like GETATTR
///   plus its commit) less the 4 KiB payload's serialisation; on a local
///   directory pwrite + fdatasync less two system calls (2 × `stat`) — less
///   what the model itself puts into a commit besides the flush: the
///   system's `server.commit_cpu_us` and the commit device's write of the
///   log block. Only when the commit device is a flash model.
///
/// The probe's transport must be the system's: an NFS probe for an NFS
/// client, a local directory for a local one. Anything else is refused
/// (`id` names the probe), as is a probe that measured none of these.
pub fn probe_params(
    model: &SystemModel,
    id: &str,
    probe: &ProbeResult,
) -> Result<ProbeParams, SimError> {
    let nfs = probe_over_nfs(model, id, probe)?;
    let sys = model.resolve()?;
    let mut values = Vec::new();
    let mut notes = Vec::new();
    let us = |ms: f64| fmt_num(ms * 1e3);
    let null = if nfs {
        probe_mean(probe, ProbeOp::Null)
    } else {
        Some((0.0, 0.0))
    };
    let getattr = probe_mean(probe, ProbeOp::Getattr);
    if nfs {
        match null {
            Some((n, sn)) => {
                let wire = 2.0 * serialise_ms(&sys, 0);
                let mut source = format!(
                    "NULL {} µs less 2 x {} µs serialisation",
                    us(n),
                    us(wire / 2.0)
                );
                let (value, at_bound) =
                    within_bounds(Param::RttMs, sys.protocol, n - wire, &mut source);
                values.push(ProbeValue {
                    param: Param::RttMs,
                    value,
                    uncertainty: sn,
                    source,
                    at_bound,
                });
            }
            None => notes.push("link.rtt_ms not taken: the probe has no NULL samples".into()),
        }
    }
    match (null, getattr) {
        (Some((n, sn)), Some((g, sg))) => {
            let mut source = if nfs {
                format!("GETATTR {} - NULL {} µs", us(g), us(n))
            } else {
                format!("stat {} µs", us(g))
            };
            let (value, at_bound) =
                within_bounds(Param::ServerCpuUs, sys.protocol, (g - n) * 1e3, &mut source);
            values.push(ProbeValue {
                param: Param::ServerCpuUs,
                value,
                uncertainty: sg.hypot(sn) * 1e3,
                source,
                at_bound,
            });
        }
        _ => {
            notes.push("server.cpu_us not taken: the probe has no GETATTR (or NULL) samples".into())
        }
    }
    let stable = probe_mean(probe, ProbeOp::StableWrite4k);
    match (
        stable,
        getattr,
        not_applicable(model, Param::CommitFlushMs)?,
    ) {
        (_, _, Some(why)) => notes.push(format!("commit_device.flush_ms not taken: {why}")),
        (Some(w), Some(g), None) => values.push(probe_flush(model, &sys, nfs, w, g)?),
        _ => notes.push(
            "commit_device.flush_ms not taken: the probe has no stable write (or GETATTR) samples"
                .into(),
        ),
    }
    if values.is_empty() {
        return Err(SimError::Measurement {
            id: id.to_string(),
            reason: format!(
                "the probe measured nothing this system takes ({})",
                notes.join("; ")
            ),
        });
    }
    Ok(ProbeParams {
        id: id.to_string(),
        values,
        notes,
    })
}

/// Whether the probe went over NFS, once its transport is checked against
/// the system's client (see [`probe_params`]).
fn probe_over_nfs(model: &SystemModel, id: &str, probe: &ProbeResult) -> Result<bool, SimError> {
    let protocol = model.client.protocol;
    let reason = match probe.transport {
        Transport::Nfs3 if protocol.is_nfs() => return Ok(true),
        Transport::Local if protocol == Protocol::Local => return Ok(false),
        Transport::Nfs3 => format!(
            "a probe over NFS (transport nfs3), but the system's client is {}: \
             a probe describes a system over the protocol it used (give the NFS system with --system)",
            protocol.name()
        ),
        Transport::Local => format!(
            "a probe of a local directory (transport local), but the system's client is {}: \
             probe the export itself (tankbench probe nfs://HOST/EXPORT)",
            protocol.name()
        ),
    };
    Err(SimError::Measurement {
        id: id.to_string(),
        reason,
    })
}

/// The commit device's flush from the probe's stable 4 KiB write `w` and
/// GETATTR `g` (means and 1σ, ms; see [`probe_params`]).
fn probe_flush(
    model: &SystemModel,
    sys: &crate::System,
    nfs: bool,
    (w, sw): (f64, f64),
    (g, sg): (f64, f64),
) -> Result<ProbeValue, SimError> {
    let us = |ms: f64| fmt_num(ms * 1e3);
    let (commit, sigma, how) = if nfs {
        let wire = serialise_ms(sys, PROBE_WRITE_BYTES) - serialise_ms(sys, 0);
        (
            w - g - wire,
            sw.hypot(sg),
            format!(
                "WRITE FILE_SYNC {} - GETATTR {} - 4 KiB serialisation {} µs",
                us(w),
                us(g),
                us(wire)
            ),
        )
    } else {
        (
            w - 2.0 * g,
            sw.hypot(2.0 * sg),
            format!("pwrite + fdatasync {} - 2 x stat {} µs", us(w), us(g)),
        )
    };
    let commit_cpu = sys.commit_cpu_ns as f64 / 1e6;
    let device = log_write_without_flush_ms(model)?;
    let mut source = format!(
        "commit {} µs ({how}) less commit CPU {} and log block write {} µs",
        us(commit),
        us(commit_cpu),
        us(device)
    );
    let (value, at_bound) = within_bounds(
        Param::CommitFlushMs,
        sys.protocol,
        commit - commit_cpu - device,
        &mut source,
    );
    Ok(ProbeValue {
        param: Param::CommitFlushMs,
        value,
        uncertainty: sigma,
        source,
        at_bound,
    })
}

/// [`calibrate_only`] after a probe: the probe's values are set first and
/// kept (reported as from the probe, saved with the probe's uncertainty,
/// which narrows their ranges in an interval), and only the other `params`
/// are fitted to `runs`. With no runs, or nothing left to fit, the
/// calibration is the probe's values alone.
pub fn calibrate_with_probe(
    model: &SystemModel,
    probe: Option<&ProbeParams>,
    runs: &[Measurement],
    params: &[Param],
) -> Result<Calibration, SimError> {
    let Some(probe) = probe else {
        return calibrate_only(model, runs, params);
    };
    let mut fixed = model.clone();
    for v in &probe.values {
        set_value(&mut fixed, v.param, v.value)?;
    }
    fixed.resolve()?;
    let rest: Vec<Param> = params
        .iter()
        .copied()
        .filter(|p| probe.get(*p).is_none())
        .collect();
    let mut c = if runs.is_empty() || rest.is_empty() {
        let reason = if runs.is_empty() {
            "not fitted: no measured runs given"
        } else {
            "not fitted: left out of the parameters to fit"
        };
        fixed_only(&fixed, runs, reason)?
    } else {
        calibrate_only(&fixed, runs, &rest)?
    };
    for v in &probe.values {
        let o = Outcome::Probed {
            value: v.value,
            uncertainty: v.uncertainty,
            start: current_value(model, v.param)?.unwrap_or(0.0),
            source: v.source.clone(),
            at_bound: v.at_bound,
        };
        match c.params.iter_mut().find(|(p, _)| *p == v.param) {
            Some(slot) => slot.1 = o,
            None => c.params.push((v.param, o)),
        }
    }
    c.params.sort_by_key(|(p, _)| *p);
    c.probe = Some(probe.id.clone());
    c.notes.clone_from(&probe.notes);
    Ok(c)
}

/// A calibration that fits nothing: every parameter keeps `model`'s value
/// (`reason` says why), and the runs, if any, are compared with it.
fn fixed_only(
    model: &SystemModel,
    runs: &[Measurement],
    reason: &str,
) -> Result<Calibration, SimError> {
    let sys = model.resolve()?;
    let mut params = Vec::new();
    for p in Param::ALL {
        let o = match not_applicable(model, p)? {
            Some(why) => Outcome::NotIdentified {
                value: None,
                reason: format!("does not apply: {why}"),
            },
            None => Outcome::NotIdentified {
                value: current_value(model, p)?,
                reason: reason.to_string(),
            },
        };
        params.push((p, o));
    }
    let (fits, chi2, simulations, duplicates) = if runs.is_empty() {
        (Vec::new(), 0.0, 0, 0)
    } else {
        let (distinct, copies) = distinct_runs(runs)?;
        let mut fitter = Fitter::new(&distinct, &copies, &[], model.client.protocol);
        let chi2 = fitter.chi2(model)?;
        let fits = fitter.run_fits(model)?;
        (
            fits,
            chi2,
            fitter.simulations,
            copies.iter().map(|n| n - 1).sum(),
        )
    };
    Ok(Calibration {
        system: sys.name,
        params,
        runs: fits,
        chi2,
        simulations,
        duplicates,
        model: model.clone(),
        probe: None,
        notes: Vec::new(),
    })
}

/// A factor for a reader: "1.9", or "over 100".
fn fmt_factor(ln_sigma: f64) -> String {
    let f = ln_sigma.min(50.0).exp();
    if f > 100.0 {
        "over 100".to_string()
    } else {
        format!("{f:.1}")
    }
}

fn set_outcome(outcomes: &mut [(Param, Option<Outcome>)], p: Param, o: Outcome) {
    if let Some(slot) = outcomes.iter_mut().find(|(q, _)| *q == p) {
        slot.1 = Some(o);
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Inverse of a small symmetric matrix by Gauss–Jordan elimination with
/// partial pivoting; `None` when it is singular.
fn invert(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut m: Vec<Vec<f64>> = a
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut r = row.clone();
            r.extend((0..n).map(|j| if i == j { 1.0 } else { 0.0 }));
            r
        })
        .collect();
    for c in 0..n {
        let pivot = (c..n).max_by(|&x, &y| m[x][c].abs().total_cmp(&m[y][c].abs()))?;
        if m[pivot][c].abs() < 1e-12 {
            return None;
        }
        m.swap(c, pivot);
        let d = m[c][c];
        m[c].iter_mut().for_each(|v| *v /= d);
        for r in 0..n {
            if r != c {
                let f = m[r][c];
                if f != 0.0 {
                    let pivot_row = m[c].clone();
                    m[r].iter_mut()
                        .zip(&pivot_row)
                        .for_each(|(v, p)| *v -= f * p);
                }
            }
        }
    }
    Some(m.into_iter().map(|r| r[n..].to_vec()).collect())
}

/// Minimise `f` from `x0` within the box `lo..hi` (each point is clamped
/// into it) with the Nelder–Mead simplex (reflection 1, expansion 2,
/// contraction ½, shrink ½), starting with steps of ln 2, stopping when the
/// simplex's values agree within 1e-6 or after `max_evals` evaluations.
fn nelder_mead(
    f: &mut impl FnMut(&[f64]) -> f64,
    x0: &[f64],
    lo: &[f64],
    hi: &[f64],
    max_evals: usize,
) -> (Vec<f64>, f64) {
    let n = x0.len();
    let clamp = |x: &mut Vec<f64>| {
        for i in 0..n {
            x[i] = x[i].clamp(lo[i], hi[i]);
        }
    };
    let mut simplex: Vec<(Vec<f64>, f64)> = Vec::with_capacity(n + 1);
    let mut start = x0.to_vec();
    clamp(&mut start);
    let f0 = f(&start);
    simplex.push((start.clone(), f0));
    for i in 0..n {
        let mut x = start.clone();
        // Step up, or down when the upper bound is that close.
        x[i] = if x[i] + std::f64::consts::LN_2 <= hi[i] {
            x[i] + std::f64::consts::LN_2
        } else {
            x[i] - std::f64::consts::LN_2
        };
        clamp(&mut x);
        let fx = f(&x);
        simplex.push((x, fx));
    }
    let mut evals = n + 1;
    while evals < max_evals {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let best = simplex[0].1;
        let worst = simplex[n].1;
        if (worst - best).abs() <= 1e-6 * (1.0 + best.abs()) {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|i| simplex[..n].iter().map(|(x, _)| x[i]).sum::<f64>() / n as f64)
            .collect();
        let toward = |t: f64, from: &[f64]| -> Vec<f64> {
            let mut x: Vec<f64> = (0..n)
                .map(|i| centroid[i] + t * (from[i] - centroid[i]))
                .collect();
            clamp(&mut x);
            x
        };
        let xr = toward(-1.0, &simplex[n].0);
        let fr = f(&xr);
        evals += 1;
        if fr < best {
            let xe = toward(-2.0, &simplex[n].0);
            let fe = f(&xe);
            evals += 1;
            simplex[n] = if fe < fr { (xe, fe) } else { (xr, fr) };
        } else if fr < simplex[n - 1].1 {
            simplex[n] = (xr, fr);
        } else {
            let xc = if fr < worst {
                toward(-0.5, &simplex[n].0)
            } else {
                toward(0.5, &simplex[n].0)
            };
            let fc = f(&xc);
            evals += 1;
            if fc < worst.min(fr) {
                simplex[n] = (xc, fc);
            } else {
                let x_best = simplex[0].0.clone();
                for point in simplex.iter_mut().skip(1) {
                    let mut x: Vec<f64> = (0..n)
                        .map(|i| x_best[i] + 0.5 * (point.0[i] - x_best[i]))
                        .collect();
                    clamp(&mut x);
                    point.1 = f(&x);
                    point.0 = x;
                    evals += 1;
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    simplex.swap_remove(0)
}

impl Calibration {
    /// The profile to save: fitted values only.
    pub fn profile(&self) -> Profile {
        let mut parameters = std::collections::BTreeMap::new();
        let mut not_identified = Vec::new();
        for (p, o) in &self.params {
            match o {
                Outcome::Fitted {
                    value, uncertainty, ..
                } => {
                    parameters.insert(p.name().to_string(), Fitted::measured(*value, *uncertainty));
                }
                Outcome::AtBound { value, side, .. } => {
                    parameters.insert(
                        p.name().to_string(),
                        Fitted {
                            at_bound: Some(*side),
                            ..Fitted::measured(*value, 0.0)
                        },
                    );
                }
                Outcome::Probed {
                    value,
                    uncertainty,
                    at_bound,
                    ..
                } => {
                    parameters.insert(
                        p.name().to_string(),
                        Fitted {
                            at_bound: *at_bound,
                            ..Fitted::measured(*value, *uncertainty)
                        },
                    );
                }
                Outcome::NotIdentified { .. } => not_identified.push(p.name().to_string()),
            }
        }
        let probed: Vec<&str> = self
            .params
            .iter()
            .filter(|(_, o)| matches!(o, Outcome::Probed { .. }))
            .map(|(p, _)| p.name())
            .collect();
        let method = match &self.probe {
            Some(id) if !probed.is_empty() => format!(
                "{} from the probe {id} ({PROBE_METHOD}); the rest: {METHOD}",
                probed.join(", ")
            ),
            _ => METHOD.to_string(),
        };
        Profile {
            system: self.system.clone(),
            method,
            runs: self.runs.iter().map(|r| r.id.clone()).collect(),
            not_identified,
            parameters,
        }
    }

    /// The report's lines about the probe, if one was given.
    fn probe_header(&self, s: &mut String) {
        use std::fmt::Write as _;
        if let Some(id) = &self.probe {
            let _ = writeln!(
                s,
                "Probe {id}: the values marked \"from the probe\" are its measurements, not fitted"
            );
            for n in &self.notes {
                let _ = writeln!(s, "  note: {n}");
            }
            s.push('\n');
        }
    }

    /// The text report: each parameter's value, uncertainty and status, then
    /// every run's measured and predicted figures.
    pub fn report(&self) -> String {
        use std::fmt::Write as _;
        let mut s = format!(
            "Calibration of system '{}' on {} measured run{}{} ({} simulations; {SIM_SECONDS} s or {SIM_EVENTS} events simulated per run, seed {SIM_SEED})\n\n",
            self.system,
            self.runs.len() + self.duplicates,
            if self.runs.len() + self.duplicates == 1 { "" } else { "s" },
            if self.duplicates > 0 {
                format!(
                    ", {} of them identical to another (fitted once, with their weight)",
                    self.duplicates
                )
            } else {
                String::new()
            },
            self.simulations
        );
        self.probe_header(&mut s);
        let _ = writeln!(
            s,
            "{:<26} {:>12} {:>12} {:>12}  status",
            "parameter", "value", "±1σ", "before"
        );
        for (p, o) in &self.params {
            s.push_str(&param_line(p, o));
        }
        if self.runs.is_empty() {
            let _ = writeln!(s, "\nNo measured runs: nothing fitted.");
            return s;
        }
        let _ = writeln!(s, "\nResiduals (measured -> predicted, error):");
        for r in &self.runs {
            let cells: Vec<String> = r
                .rows
                .iter()
                .map(|&(m, measured, pred)| {
                    format!(
                        "{} {} -> {} ({:+.1}%)",
                        m.name(),
                        fmt_num(measured),
                        fmt_num(pred),
                        (pred / measured - 1.0) * 100.0
                    )
                })
                .collect();
            let _ = writeln!(s, "  {}: {}", r.id, cells.join(", "));
        }
        let _ = writeln!(
            s,
            "\nObjective (sum of squared noise-weighted log errors): {:.3}",
            self.chi2
        );
        if self
            .params
            .iter()
            .any(|(_, o)| matches!(o, Outcome::AtBound { .. }))
        {
            let _ = writeln!(
                s,
                "\nThe model cannot reach these runs within physical bounds: the values above are its best physical fit, and the residuals are the gap."
            );
        }
        s
    }

    /// What the reader must know beside the report: each parameter at a
    /// physical bound, and, when a fit stopped at one, how far each run is
    /// from the best physical fit.
    pub fn warnings(&self) -> Vec<CalibrationWarning> {
        let mut out = Vec::new();
        let mut fit_at_bound = false;
        for (p, o) in &self.params {
            let (side, probed) = match o {
                Outcome::AtBound { side, .. } => (*side, false),
                Outcome::Probed {
                    at_bound: Some(side),
                    ..
                } => (*side, true),
                _ => continue,
            };
            fit_at_bound |= !probed;
            let (bound, source) = p.bounds(self.model.client.protocol).at(side);
            out.push(CalibrationWarning::AtBound {
                param: *p,
                side,
                bound,
                source,
                probed,
            });
        }
        if fit_at_bound {
            for r in &self.runs {
                out.push(CalibrationWarning::Gap {
                    run: r.id.clone(),
                    errors: r
                        .rows
                        .iter()
                        .map(|&(m, measured, predicted)| (m, (predicted / measured - 1.0) * 100.0))
                        .collect(),
                });
            }
        }
        out
    }
}

/// One parameter's line of [`Calibration::report`]: name, value, ±1σ, the
/// value before and the status.
fn param_line(p: &Param, o: &Outcome) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    match o {
        Outcome::Fitted {
            value,
            uncertainty,
            start,
        } => {
            let _ = writeln!(
                s,
                "{:<26} {:>12} {:>12} {:>12}  fitted ({})",
                p.name(),
                fmt_num(*value),
                fmt_num(*uncertainty),
                fmt_num(*start),
                p.describe()
            );
        }
        Outcome::AtBound { value, side, start } => {
            let _ = writeln!(
                    s,
                    "{:<26} {:>12} {:>12} {:>12}  at its {} bound: the best physical fit, not a measurement (see the warning)",
                    p.name(),
                    fmt_num(*value),
                    AT_ITS_BOUND,
                    fmt_num(*start),
                    side.word()
                );
        }
        Outcome::Probed {
            value,
            uncertainty,
            start,
            source,
            at_bound,
        } => {
            let _ = writeln!(
                s,
                "{:<26} {:>12} {:>12} {:>12}  from the probe: {source}",
                p.name(),
                fmt_num(*value),
                if at_bound.is_some() {
                    AT_ITS_BOUND.to_string()
                } else {
                    fmt_num(*uncertainty)
                },
                fmt_num(*start),
            );
        }
        Outcome::NotIdentified { value, reason } => {
            let v = value.map_or_else(|| "-".to_string(), fmt_num);
            let _ = writeln!(
                s,
                "{:<26} {:>12} {:>12} {:>12}  not identified: {reason}",
                p.name(),
                v,
                "-",
                v
            );
        }
    }
    s
}

/// The ±1σ column of a value at a bound: it has none that was measured.
const AT_ITS_BOUND: &str = "at its bound";

/// A warning of a calibration ([`Calibration::warnings`]); `Display` is the
/// line after `warning: `.
#[derive(Debug, Clone, PartialEq)]
pub enum CalibrationWarning {
    /// `param` sits at its `side` bound, `bound`: the runs (or the probe)
    /// asked for a value past it, which the source says no system has.
    AtBound {
        param: Param,
        side: BoundSide,
        bound: f64,
        source: &'static str,
        /// The probe's figure was past it (moved to it), not the fit.
        probed: bool,
    },
    /// What is left between the best physical fit and the run `run`: each
    /// figure's error, predicted against measured, in %.
    Gap {
        run: String,
        errors: Vec<(Metric, f64)>,
    },
}

impl std::fmt::Display for CalibrationWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CalibrationWarning::AtBound {
                param,
                side,
                bound,
                source,
                probed,
            } => {
                let unit = param.row().unit;
                let past = match side {
                    BoundSide::Low => "below",
                    BoundSide::High => "above",
                };
                let what = if *probed {
                    format!("the probe's figure is {past} it and was moved to it")
                } else {
                    format!("the runs ask for a value {past} it, which the model cannot reach with physical values")
                };
                write!(
                    f,
                    "{} is at its {} bound, {}{}{}: {what} (why the bound: {source})",
                    param.name(),
                    side.word(),
                    fmt_num(*bound),
                    if unit.is_empty() { "" } else { " " },
                    unit
                )
            }
            CalibrationWarning::Gap { run, errors } => {
                let cells: Vec<String> = errors
                    .iter()
                    .map(|(m, e)| format!("{} {e:+.1} %", m.name()))
                    .collect();
                write!(
                    f,
                    "{run}: the best physical fit is off by {} (predicted against measured)",
                    cells.join(", ")
                )
            }
        }
    }
}

/// Four significant digits, without exponent for everyday magnitudes.
fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "inf".into();
    }
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else if a >= 0.001 {
        format!("{v:.5}")
    } else {
        format!("{v:.3e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nelder_mead_finds_a_bounded_quadratic_minimum() {
        let mut f = |x: &[f64]| (x[0] - 1.0).powi(2) + 10.0 * (x[1] + 2.0).powi(2);
        let (x, fx) = nelder_mead(&mut f, &[0.0, 0.0], &[-5.0, -5.0], &[5.0, 5.0], 400);
        assert!(
            (x[0] - 1.0).abs() < 1e-2 && (x[1] + 2.0).abs() < 1e-2,
            "{x:?}"
        );
        assert!(fx < 1e-3);
        // The minimum outside the box: the fit stops at the bound.
        let mut g = |x: &[f64]| (x[0] - 9.0).powi(2);
        let (x, _) = nelder_mead(&mut g, &[0.0], &[-5.0], &[5.0], 200);
        assert!((x[0] - 5.0).abs() < 1e-2, "{x:?}");
    }

    #[test]
    fn invert_inverts_and_refuses_singular() {
        let a = vec![vec![4.0, 1.0], vec![1.0, 3.0]];
        let inv = invert(&a).unwrap();
        let id: Vec<Vec<f64>> = (0..2)
            .map(|i| {
                (0..2)
                    .map(|j| dot(&a[i], &[inv[0][j], inv[1][j]]))
                    .collect()
            })
            .collect();
        assert!((id[0][0] - 1.0).abs() < 1e-12 && id[0][1].abs() < 1e-12);
        assert!(invert(&[vec![1.0, 2.0], vec![2.0, 4.0]]).is_none());
    }
}

//! The fit (steps 2 to 6 of the method): the objective over the measured
//! runs, which parameters they identify, the search within the physical
//! bounds and the uncertainty at the optimum.

use crate::params::{current_value, not_applicable, set_value, Param};
use crate::system::{Protocol, SystemModel};
use crate::{CalibrateError, SimError};

use super::measurement::Measurement;
use super::numeric::{dot, invert, nelder_mead};
use super::report::{Calibration, Outcome, RunFit};

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
///
/// [`SIM_EVENTS`]: super::measurement::SIM_EVENTS
pub(crate) const MAX_SIMULATIONS: usize = 20_000;

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
                let r = crate::Simulation::new(&m.spec, model)
                    .run()
                    .map(|s| s.result)?;
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

/// A calibration that fits nothing: every parameter keeps `model`'s value
/// (`reason` says why), and the runs, if any, are compared with it.
pub(super) fn fixed_only(
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

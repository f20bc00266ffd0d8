//! What a calibration concluded ([`Calibration`]: each parameter's
//! [`Outcome`], each run's [`RunFit`]) and how it is told: the text report,
//! the warnings ([`CalibrationWarning`]) and the profile to save.

use crate::params::{BoundSide, Param};
use crate::profile::{Fitted, Profile};
use crate::system::SystemModel;

use super::measurement::{Metric, SIM_EVENTS, SIM_SECONDS, SIM_SEED};

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
    ///
    /// [`ProbeParams`]: super::ProbeParams
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
    ///
    /// [`calibrate_with_probe`]: super::calibrate_with_probe
    pub probe: Option<String>,
    /// What the probe measured that this system could not take, and why.
    pub notes: Vec<String>,
}

// The profile's `method` names how its values were found, by the fit or by
// the probe: both texts are here, with the profile that quotes them, so that
// `fit` and `probe`, which make a calibration, are not imported back.
pub(crate) const METHOD: &str = "Nelder-Mead in log space on ln(predicted/measured) of reads/s, writes/s, fsyncs/s and mean latency, weighted by each run's noise; uncertainty 1 sigma from the curvature (Gauss-Newton covariance, scaled by the reduced chi-square when above 1)";

/// How a probe's figures become parameters, for the profile's `method`.
pub(crate) const PROBE_METHOD: &str = "link.rtt_ms = NULL less the link's own serialisation; server.cpu_us = GETATTR - NULL; commit_device.flush_ms = the stable 4 KiB write's commit time less the model's commit CPU and device write; means, 1 sigma the standard error of the means, at least 2 % of each";

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
pub(super) fn fmt_num(v: f64) -> String {
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

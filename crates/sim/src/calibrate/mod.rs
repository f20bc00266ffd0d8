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
//!
//! The files, from the bottom: `numeric` (the dot product, the matrix
//! inverse and the Nelder–Mead minimiser the fit uses), `measurement` (a
//! measured run as calibration reads it, and the simulated time and seed),
//! `report` (what a calibration concluded and how it is told: the report,
//! the warnings, the profile), `fit` (steps 2 to 6: the objective, the
//! identification, the search, the uncertainty) and `probe` (the parameters
//! a `tankbench probe` measures directly, and the fit of the rest). Each
//! imports only the files before it; this one declares and re-exports.
//!
//! [`Param`]: crate::params::Param
//! [`Param::ALL`]: crate::params::Param::ALL
//! [`Param::bounds`]: crate::params::Param::bounds
//! [`Param::at_bound`]: crate::params::Param::at_bound
//! [`RunResult`]: fileio::result::RunResult
//! [`RunSpec`]: fileio::options::RunSpec
//! [`SIM_EVENTS`]: measurement::SIM_EVENTS
//! [`NOISE_FLOOR`]: measurement::NOISE_FLOOR

mod fit;
mod measurement;
mod numeric;
mod probe;
mod report;

pub use fit::{calibrate, calibrate_only};
pub use measurement::{local_model, Measurement, Metric, SIM_SECONDS, SIM_SEED};
pub use probe::{calibrate_with_probe, probe_params, ProbeParams, ProbeValue};
pub use report::{Calibration, CalibrationWarning, Outcome, RunFit};

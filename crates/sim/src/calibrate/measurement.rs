//! A measured run as calibration reads it (step 1 of the method): its
//! workload as a [`RunSpec`] with calibration's simulated time, events and
//! seed, the figures it fits ([`Metric`]) and the run's noise; and the
//! system assumed for runs given without a system file ([`local_model`]).

use fileio::options::{IoMode, RunSpec};
use fileio::result::{Environment, LatencyKey, ResultKind, RunResult};

use crate::system::{DeviceSpec, SystemModel};
use crate::SimError;

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
        m.server.ram = env.mem_total_bytes.into();
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

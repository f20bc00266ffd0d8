//! The probe in the calibration: the parameters a `tankbench probe` result
//! measures directly ([`probe_params`]), and the fit of the others from
//! there ([`calibrate_with_probe`]).

use fileio::probe::{ProbeOp, ProbeResult, Transport};

use crate::components::{LinkPath, LogDevice, Pool, LR_WRITE_BYTES};
use crate::params::{current_value, not_applicable, set_value, BoundSide, Param};
use crate::system::{Protocol, SystemModel};
use crate::SimError;

use super::fit::{calibrate_only, fixed_only};
use super::measurement::{Measurement, NOISE_FLOOR, SIM_SEED};
use super::report::{fmt_num, Calibration, Outcome};

/// The size of the probe's reads and writes (4 KiB, `fileio::probe`).
const PROBE_WRITE_BYTES: u64 = 4096;

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
        Some(log) => {
            let members: Vec<_> = std::iter::once(log)
                .chain(sys.log_mirror.as_ref())
                .collect();
            LogDevice::mirrored(&members, sys.disk_bytes, SIM_SEED).write_log_block(0, bytes)
        }
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

// report.rs's PROBE_METHOD says this in one line for the saved profile:
// a change to how a value is taken here changes it there too.
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

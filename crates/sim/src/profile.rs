//! A calibration profile: the parameter values `simulate calibrate` fitted
//! to measured runs, written as TOML, and applied to a [`SystemModel`] before
//! a later prediction ("measure the box you have, predict the one you
//! don't").
//!
//! A profile names parameters by the system file's field names; applying it
//! replaces those fields and nothing else. Parameters the data could not
//! identify are listed for the reader but carry no value, so they keep
//! whatever the system file says.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use zfs_model::diskmodel::ModelParams;

use crate::system::{DeviceSpec, Protocol, SystemModel};
use crate::SimError;

/// The uncertain parameters calibration fits, in the order it tries to
/// identify them: when two explain the data equally well, the earlier one
/// is fitted and the later one reported as not identified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Param {
    /// Flush latency of the device log blocks go to (the log device, or the
    /// pool's disk without one): the device part of a commit's cost.
    /// Calibration fits the flush alone; an interval samples a device named
    /// by its class over the class's range with its write time in
    /// proportion (crate::uncertainty), since the class's figures are whole
    /// write + flush times.
    CommitFlushMs,
    ServerCpuUs,
    RttMs,
    FsyncRoundTrips,
    ClientCpuUs,
    /// Flush latency of the pool's disks when log blocks go to a log device
    /// of their own (without one the pool's disk is the commit device, and
    /// [`Param::CommitFlushMs`] is its). Not calibrated (not in
    /// [`Param::ALL`]): no measured run of a sync workload on a log device
    /// tells the pool disks' flush apart; an interval samples it
    /// ([`Param::SAMPLED`], crate::uncertainty).
    PoolDiskFlushMs,
    /// `server.cpu_us_per_mib`: the CPU time of a request's data beyond
    /// 4 KiB. Not calibrated (the runs calibration takes are 4 KiB sync
    /// writes, which it does not move); an interval samples it for a
    /// workload with larger requests.
    ServerCpuUsPerMib,
    /// `server.cpu_contention`: how much longer CPU work takes for each
    /// other busy core. Not calibrated (it needs runs at several thread
    /// counts on a CPU-bound workload, which calibration does not ask for).
    ServerCpuContention,
}

impl Param {
    /// Identification order (see the type's comment).
    pub const ALL: [Param; 5] = [
        Param::CommitFlushMs,
        Param::ServerCpuUs,
        Param::RttMs,
        Param::FsyncRoundTrips,
        Param::ClientCpuUs,
    ];

    /// The parameters an interval samples (crate::uncertainty): calibration's
    /// and then those only an interval has. Appended, so each parameter
    /// keeps its place (and its draw) in a sampling design.
    pub const SAMPLED: [Param; 8] = [
        Param::CommitFlushMs,
        Param::ServerCpuUs,
        Param::RttMs,
        Param::FsyncRoundTrips,
        Param::ClientCpuUs,
        Param::PoolDiskFlushMs,
        Param::ServerCpuUsPerMib,
        Param::ServerCpuContention,
    ];

    /// The name in a profile: the system file's field it replaces.
    pub fn name(self) -> &'static str {
        match self {
            Param::CommitFlushMs => "commit_device.flush_ms",
            Param::ServerCpuUs => "server.cpu_us",
            Param::RttMs => "link.rtt_ms",
            Param::FsyncRoundTrips => "client.fsync_round_trips",
            Param::ClientCpuUs => "client.cpu_us",
            Param::PoolDiskFlushMs => "pool.disk.flush_ms",
            Param::ServerCpuUsPerMib => "server.cpu_us_per_mib",
            Param::ServerCpuContention => "server.cpu_contention",
        }
    }

    /// A profile's parameter by name: calibration's ([`Param::ALL`]) only.
    pub fn from_name(name: &str) -> Option<Param> {
        Param::ALL.into_iter().find(|p| p.name() == name)
    }

    pub fn accepted() -> String {
        Param::ALL.map(Param::name).join(", ")
    }

    /// What the value means, for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Param::CommitFlushMs => "log commit: flush of the commit device, ms",
            Param::ServerCpuUs => "server CPU per request, µs",
            Param::RttMs => "network round trip per request, ms",
            Param::FsyncRoundTrips => "synchronous round trips per fsync",
            Param::ClientCpuUs => "client CPU per request, µs",
            Param::PoolDiskFlushMs => "flush of a pool disk beside a log device, ms",
            Param::ServerCpuUsPerMib => "server CPU per MiB of a request beyond 4 KiB, µs",
            Param::ServerCpuContention => "server CPU work's growth per other busy core, share",
        }
    }

    /// The range a fit searches and a profile may hold. Wide on purpose:
    /// from far below anything measurable to far above anything plausible,
    /// so the bound is never what decides a fit.
    pub fn bounds(self) -> (f64, f64) {
        match self {
            Param::CommitFlushMs | Param::PoolDiskFlushMs => (1e-4, 1e3),
            Param::ServerCpuUs | Param::ClientCpuUs => (0.01, 1e5),
            Param::RttMs => (1e-4, 1e3),
            Param::FsyncRoundTrips => (1.0, 16.0),
            Param::ServerCpuUsPerMib => (1.0, 1e5),
            Param::ServerCpuContention => (1e-4, 1.0),
        }
    }

    /// A value of the right order, where a fit probes a parameter whose
    /// current value is 0 (a local client's CPU): 0 has no logarithm, and
    /// the sensitivity at 0 says nothing about whether the data could tell
    /// a realistic value apart.
    pub(crate) fn probe_scale(self) -> f64 {
        match self {
            Param::CommitFlushMs | Param::PoolDiskFlushMs => 1.0,
            Param::ServerCpuUs | Param::ClientCpuUs => 10.0,
            Param::RttMs => 0.1,
            Param::FsyncRoundTrips => 1.0,
            Param::ServerCpuUsPerMib => 780.0,
            Param::ServerCpuContention => 0.1,
        }
    }

    pub(crate) fn is_integer(self) -> bool {
        self == Param::FsyncRoundTrips
    }
}

/// One fitted value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fitted {
    pub value: f64,
    /// One standard deviation, in the value's unit (see `method`).
    pub uncertainty: f64,
}

/// A calibration profile as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The system the runs were measured on (its `name`).
    pub system: String,
    /// How the values and uncertainties were obtained.
    pub method: String,
    /// The measured runs fitted (ids or file names).
    pub runs: Vec<String>,
    /// Parameters the runs could not tell apart from others or from noise:
    /// no value, so a prediction keeps its system's own.
    #[serde(default)]
    pub not_identified: Vec<String>,
    /// Field name (see [`Param::name`]) to fitted value.
    pub parameters: BTreeMap<String, Fitted>,
}

impl Profile {
    /// Read a profile, checking every name and value.
    pub fn from_toml(text: &str) -> Result<Profile, SimError> {
        let p: Profile = toml::from_str(text).map_err(|e| {
            SimError::Toml(
                e.message()
                    .lines()
                    .next()
                    .unwrap_or("unreadable")
                    .to_string(),
            )
        })?;
        for (name, f) in &p.parameters {
            let param = Param::from_name(name).ok_or_else(|| SimError::UnknownParameter {
                name: name.clone(),
                accepted: Param::accepted(),
            })?;
            let (lo, hi) = param.bounds();
            if !(f.value.is_finite() && (lo..=hi).contains(&f.value)) {
                return Err(SimError::Profile {
                    parameter: name.clone(),
                    problem: format!("value must be from {lo} to {hi}, got {}", f.value),
                });
            }
            if !(f.uncertainty.is_finite() && f.uncertainty >= 0.0) {
                return Err(SimError::Profile {
                    parameter: name.clone(),
                    problem: format!(
                        "uncertainty must be a number from 0 up, got {}",
                        f.uncertainty
                    ),
                });
            }
        }
        Ok(p)
    }

    pub fn to_toml(&self) -> String {
        let body = toml::to_string(self).unwrap_or_default();
        format!(
            "# tankbench simulate calibration profile: apply with\n# `tankbench simulate --system SYSTEM.toml --profile THIS_FILE -- ... run`.\n{body}"
        )
    }

    /// The fitted value of `p`, if the profile has one.
    pub fn get(&self, p: Param) -> Option<f64> {
        self.parameters.get(p.name()).map(|f| f.value)
    }
}

/// The model of a device as the system gives it (a built-in by name, or its
/// own table), `field` naming it in an error.
fn resolve_device(d: &DeviceSpec, field: &str) -> Result<ModelParams, SimError> {
    match d {
        DeviceSpec::Model(m) => Ok(m.clone()),
        DeviceSpec::Name(n) => ModelParams::builtin(n).map(|(_, m)| m).ok_or_else(|| {
            SimError::Field(crate::FieldError::new(
                field,
                format!("unknown device '{n}' (resolve the system first)"),
            ))
        }),
    }
}

/// The device log blocks go to, as the model resolves it: the log device,
/// or the pool's disk when there is none.
fn commit_device(model: &SystemModel) -> Result<(bool, ModelParams), SimError> {
    match &model.log {
        Some(DeviceSpec::Name(n)) if n.trim().eq_ignore_ascii_case("none") => {
            Ok((false, resolve_device(&model.pool.disk, "pool.disk")?))
        }
        Some(d) => Ok((true, resolve_device(d, "log")?)),
        None => Ok((false, resolve_device(&model.pool.disk, "pool.disk")?)),
    }
}

/// Whether log blocks go to a log device of their own.
fn separate_log(model: &SystemModel) -> bool {
    match &model.log {
        None => false,
        Some(DeviceSpec::Name(n)) => !n.trim().eq_ignore_ascii_case("none"),
        Some(DeviceSpec::Model(_)) => true,
    }
}

/// The system's entry for the device a device parameter is about (the
/// commit device for [`Param::CommitFlushMs`], the pool's disk for
/// [`Param::PoolDiskFlushMs`]), as the system file gives it: a name or a
/// table. `None` for other parameters. An interval reads it to tell a
/// device named by its class from one the user gave figures for.
pub(crate) fn device_entry(model: &SystemModel, p: Param) -> Option<&DeviceSpec> {
    match p {
        Param::CommitFlushMs if separate_log(model) => model.log.as_ref(),
        Param::CommitFlushMs | Param::PoolDiskFlushMs => Some(&model.pool.disk),
        _ => None,
    }
}

/// [`device_entry`], to replace.
pub(crate) fn device_entry_mut(model: &mut SystemModel, p: Param) -> Option<&mut DeviceSpec> {
    match p {
        Param::CommitFlushMs if separate_log(model) => model.log.as_mut(),
        Param::CommitFlushMs | Param::PoolDiskFlushMs => Some(&mut model.pool.disk),
        _ => None,
    }
}

/// Why `p` does not apply to `model`, or `None` when it does.
pub(crate) fn not_applicable(model: &SystemModel, p: Param) -> Result<Option<String>, SimError> {
    Ok(match p {
        Param::RttMs if model.client.protocol == Protocol::Local => {
            Some("the client is local: no link".into())
        }
        Param::CommitFlushMs => match commit_device(model)? {
            (_, ModelParams::Flash(_)) => None,
            (log, ModelParams::Hdd(_)) => Some(format!(
                "the commit device ({}) is a disk model whose flush follows from its own mechanics",
                if log { "log" } else { "pool.disk" }
            )),
            (log, ModelParams::None) => Some(format!(
                "the commit device ({}) is 'none' (no latency to fit)",
                if log { "log" } else { "pool.disk" }
            )),
        },
        Param::PoolDiskFlushMs => {
            if !commit_device(model)?.0 {
                Some(
                    "no log device: the pool's disk is the commit device (commit_device.flush_ms)"
                        .into(),
                )
            } else {
                match resolve_device(&model.pool.disk, "pool.disk")? {
                    ModelParams::Flash(_) => None,
                    ModelParams::Hdd(_) => Some(
                        "the pool's disk is a disk model whose flush follows from its own mechanics"
                            .into(),
                    ),
                    ModelParams::None => Some("the pool's disk is 'none' (no latency)".into()),
                }
            }
        }
        _ => None,
    })
}

/// The value `model` gives `p`, defaults applied (`None` when `p` does not
/// apply to it).
pub fn current_value(model: &SystemModel, p: Param) -> Result<Option<f64>, SimError> {
    if not_applicable(model, p)?.is_some() {
        return Ok(None);
    }
    let sys = model.resolve()?;
    Ok(Some(match p {
        Param::CommitFlushMs => match commit_device(model)?.1 {
            ModelParams::Flash(f) => f.flush_ms,
            _ => return Ok(None),
        },
        Param::ServerCpuUs => sys.server_cpu_ns as f64 / 1e3,
        Param::RttMs => sys.rtt_ns as f64 / 1e6,
        Param::FsyncRoundTrips => f64::from(sys.fsync_round_trips),
        Param::ClientCpuUs => sys.client_cpu_ns as f64 / 1e3,
        Param::PoolDiskFlushMs => match resolve_device(&model.pool.disk, "pool.disk")? {
            ModelParams::Flash(f) => f.flush_ms,
            _ => return Ok(None),
        },
        Param::ServerCpuUsPerMib => sys.server_cpu_ns_per_mib as f64 / 1e3,
        Param::ServerCpuContention => sys.cpu_contention,
    }))
}

/// Set `p` to `value` in `model`; `Ok(false)` when `p` does not apply to it.
pub fn set_value(model: &mut SystemModel, p: Param, value: f64) -> Result<bool, SimError> {
    if not_applicable(model, p)?.is_some() {
        return Ok(false);
    }
    match p {
        Param::CommitFlushMs => {
            let (on_log, device) = commit_device(model)?;
            let ModelParams::Flash(mut flash) = device else {
                return Ok(false);
            };
            flash.flush_ms = value;
            let spec = DeviceSpec::Model(ModelParams::Flash(flash));
            if on_log {
                model.log = Some(spec);
            } else {
                model.pool.disk = spec;
            }
        }
        Param::ServerCpuUs => model.server.cpu_us = value,
        Param::RttMs => model.link.rtt_ms = Some(value),
        Param::FsyncRoundTrips => {
            let (lo, hi) = p.bounds();
            // Clamped to 1..=16 just above, so the cast is exact.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let trips = value.round().clamp(lo, hi) as u32;
            model.client.fsync_round_trips = Some(trips);
        }
        Param::ClientCpuUs => model.client.cpu_us = Some(value),
        Param::PoolDiskFlushMs => {
            let ModelParams::Flash(mut flash) = resolve_device(&model.pool.disk, "pool.disk")?
            else {
                return Ok(false);
            };
            flash.flush_ms = value;
            model.pool.disk = DeviceSpec::Model(ModelParams::Flash(flash));
        }
        Param::ServerCpuUsPerMib => model.server.cpu_us_per_mib = value,
        Param::ServerCpuContention => model.server.cpu_contention = value,
    }
    Ok(true)
}

/// Apply `profile` to `model`. Returns a note for each fitted parameter that
/// does not apply to this system (e.g. a link round trip on a local client),
/// which is left out rather than refused: a profile measured on one box
/// applies what transfers to another.
pub fn apply_profile(model: &mut SystemModel, profile: &Profile) -> Result<Vec<String>, SimError> {
    apply_profile_except(model, profile, &[])
}

impl Param {
    /// The system fields whose replacement makes this fitted value stale: it
    /// was measured on the component they name, and a different component
    /// keeps its own class's figures (as a command-line override does).
    fn components(self) -> &'static [&'static str] {
        match self {
            Param::CommitFlushMs => &["log", "pool.log", "pool.disk"],
            Param::PoolDiskFlushMs => &["pool.disk"],
            Param::ServerCpuUs => &["server.cpu_us"],
            Param::ServerCpuUsPerMib => &["server.cpu_us_per_mib"],
            Param::ServerCpuContention => &["server.cpu_contention", "server.cores"],
            Param::RttMs => &["link"],
            Param::FsyncRoundTrips | Param::ClientCpuUs => &["client"],
        }
    }
}

/// [`apply_profile`] for a system whose `replaced` fields (dotted names, as
/// a matrix axis sets them) were chosen on purpose: a fitted value of a
/// component that was replaced is skipped with a note, so a matrix over log
/// devices compares the devices and not the one the profile measured.
pub(crate) fn apply_profile_except(
    model: &mut SystemModel,
    profile: &Profile,
    replaced: &[&str],
) -> Result<Vec<String>, SimError> {
    let mut skipped = Vec::new();
    for (name, fitted) in &profile.parameters {
        let p = Param::from_name(name).ok_or_else(|| SimError::UnknownParameter {
            name: name.clone(),
            accepted: Param::accepted(),
        })?;
        if let Some(field) = replaced.iter().find(|f| {
            p.components()
                .iter()
                .any(|c| *f == c || f.starts_with(&format!("{c}.")))
        }) {
            skipped.push(format!(
                "{name} not applied: the matrix sets {field}, whose own figures apply"
            ));
            continue;
        }
        if let Some(why) = not_applicable(model, p)? {
            skipped.push(format!("{name} not applied: {why}"));
            continue;
        }
        set_value(model, p, fitted.value)?;
    }
    // The result must still be a valid system.
    model.resolve()?;
    Ok(skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local_flash() -> SystemModel {
        SystemModel::from_toml(
            r#"
name = "box"
[pool]
layout = "1xstripe"
disk = "ssd-sata"
"#,
        )
        .unwrap()
    }

    #[test]
    fn names_round_trip() {
        for p in Param::ALL {
            assert_eq!(Param::from_name(p.name()), Some(p));
        }
        assert_eq!(Param::from_name("server.ram"), None);
    }

    #[test]
    fn profile_round_trips_through_toml() {
        let mut parameters = BTreeMap::new();
        parameters.insert(
            "commit_device.flush_ms".to_string(),
            Fitted {
                value: 1.25,
                uncertainty: 0.05,
            },
        );
        let p = Profile {
            system: "box".into(),
            method: "test".into(),
            runs: vec!["a.json".into()],
            not_identified: vec!["server.cpu_us".into()],
            parameters,
        };
        let back = Profile::from_toml(&p.to_toml()).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn bad_profiles_name_the_problem() {
        let e = Profile::from_toml(
            "system = \"x\"\nmethod = \"m\"\nruns = []\n[parameters.\"server.ram\"]\nvalue = 1.0\nuncertainty = 0.0\n",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("unknown parameter 'server.ram'"),
            "{e}"
        );
        let e = Profile::from_toml(
            "system = \"x\"\nmethod = \"m\"\nruns = []\n[parameters.\"server.cpu_us\"]\nvalue = -1.0\nuncertainty = 0.0\n",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("server.cpu_us: value must be"),
            "{e}"
        );
        assert!(Profile::from_toml("nonsense").is_err());
    }

    #[test]
    fn applying_sets_the_fields_and_skips_what_does_not_apply() {
        let mut m = local_flash();
        let mut parameters = BTreeMap::new();
        for (name, value) in [
            ("commit_device.flush_ms", 3.5),
            ("server.cpu_us", 7.0),
            ("link.rtt_ms", 0.2),
        ] {
            parameters.insert(
                name.to_string(),
                Fitted {
                    value,
                    uncertainty: 0.0,
                },
            );
        }
        let profile = Profile {
            system: "box".into(),
            method: "test".into(),
            runs: vec![],
            not_identified: vec![],
            parameters,
        };
        let skipped = apply_profile(&mut m, &profile).unwrap();
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert!(skipped[0].starts_with("link.rtt_ms"));
        assert_eq!(current_value(&m, Param::CommitFlushMs).unwrap(), Some(3.5));
        assert_eq!(current_value(&m, Param::ServerCpuUs).unwrap(), Some(7.0));
        // The pool's disk kept its other parameters.
        let sys = m.resolve().unwrap();
        match sys.disk {
            ModelParams::Flash(f) => {
                assert!((f.write_mb_s - 500.0).abs() < 1e-9);
                assert!((f.flush_ms - 3.5).abs() < 1e-9);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_hdd_commit_device_is_not_fitted() {
        let m = SystemModel::default();
        assert!(not_applicable(&m, Param::CommitFlushMs).unwrap().is_some());
        let mut with_log = m.clone();
        with_log.log = Some(DeviceSpec::Name("ssd-sata".into()));
        assert!(not_applicable(&with_log, Param::CommitFlushMs)
            .unwrap()
            .is_none());
    }
}

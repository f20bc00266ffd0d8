//! A calibration profile: the parameter values `simulate calibrate` fitted
//! to measured runs, written as TOML, and applied to a [`SystemModel`] before
//! a later prediction ("measure the box you have, predict the one you
//! don't").
//!
//! A profile names parameters by the system file's field names; applying it
//! replaces those fields and nothing else. Parameters the data could not
//! identify are listed for the reader but carry no value, so they keep
//! whatever the system file says. A value the fit left at a physical bound
//! is marked so (`at_bound`): it is the best the model can do, not a
//! measurement, and an interval does not narrow on it.
//!
//! In a matrix the profile is fitted on the base system and applied to
//! every cell ([`apply_profile_to_cell`]): where a cell's axes change what
//! a fitted value stands on (another log device, another link), the value
//! moves by what the change is worth and keeps what the fit found beyond
//! the system's own value (crate::params::Carry).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::params::{current_value, set_value, BoundSide, Param};
use crate::params::{not_applicable, Carry};
use crate::system::SystemModel;
use crate::SimError;

/// One fitted value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fitted {
    pub value: f64,
    /// One standard deviation, in the value's unit (see `method`); 0 for a
    /// value at a bound, which has no curvature to measure.
    pub uncertainty: f64,
    /// The physical bound the fit stopped at: the measurements asked for a
    /// value past it, so this one is the model's best, not a measurement,
    /// and an interval samples the parameter's whole range around it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_bound: Option<BoundSide>,
    /// Set where a matrix cell's axes changed what the value stands on
    /// ([`apply_profile_to_cell`]): the fit carried over to a component
    /// nobody measured, so an interval samples its whole range too. Never
    /// written to a profile file.
    #[serde(skip)]
    pub carried: bool,
}

impl Fitted {
    /// A value with its 1σ, measured on the component it is applied to.
    pub fn measured(value: f64, uncertainty: f64) -> Fitted {
        Fitted {
            value,
            uncertainty,
            at_bound: None,
            carried: false,
        }
    }

    /// Whether an interval may narrow the parameter to value ± 2σ: only a
    /// measurement of this very component may.
    pub fn narrows(&self) -> bool {
        self.at_bound.is_none() && !self.carried
    }
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
            let (lo, hi) = param.any_bounds();
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

/// Apply `profile` to `model`. Returns a note for each fitted parameter that
/// does not apply to this system (e.g. a link round trip on a local client,
/// a value outside the bounds of this system's client), which is left out
/// rather than refused: a profile measured on one box applies what
/// transfers to another.
pub fn apply_profile(model: &mut SystemModel, profile: &Profile) -> Result<Vec<String>, SimError> {
    let base = model.clone();
    Ok(apply_profile_to_cell(model, &base, profile, &[])?.notes)
}

/// What [`apply_profile_to_cell`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The values set, as set: the profile's, or carried into the cell
    /// (marked so); those left out are not here. What narrows the cell's
    /// ranges (crate::uncertainty::spans).
    pub profile: Profile,
    /// One line for each value left out or carried, and why.
    pub notes: Vec<String>,
}

/// Apply `profile`, fitted on `base`, to `cell`: `base` with the fields
/// `axes` (dotted, as a matrix axis or a command-line override sets them)
/// replaced, so a matrix cell and the same system given by overrides get
/// the same values.
///
/// A fitted value whose parameter the cell gives the same value as `base`
/// (its axes changed nothing it stands on) applies as fitted. One the cell
/// gives another value carries as its row says ([`Carry`]): a device's
/// flush by the ratio of the cell's device to the base's (another log
/// class), a round trip by the difference of the cell's link to the base's
/// (another link class), cut to the cell's bounds; a client's values are
/// the cell's own client's. An axis that sets the parameter itself wins,
/// and a value the cell's client does not allow is left out.
pub fn apply_profile_to_cell(
    cell: &mut SystemModel,
    base: &SystemModel,
    profile: &Profile,
    axes: &[&str],
) -> Result<Applied, SimError> {
    let unfitted = cell.clone();
    let access = cell.client.protocol;
    let mut applied = Profile {
        parameters: BTreeMap::new(),
        ..profile.clone()
    };
    let mut notes = Vec::new();
    for (name, fitted) in &profile.parameters {
        let p = Param::from_name(name).ok_or_else(|| SimError::UnknownParameter {
            name: name.clone(),
            accepted: Param::accepted(),
        })?;
        if axes.contains(&p.name()) {
            notes.push(format!(
                "{name} not applied: it is set for this system, and that value applies"
            ));
            continue;
        }
        if let Some(why) = not_applicable(&unfitted, p)? {
            notes.push(format!("{name} not applied: {why}"));
            continue;
        }
        let on_base = current_value(base, p)?;
        let on_cell = current_value(&unfitted, p)?;
        let mut value = fitted.clone();
        if on_base != on_cell {
            let changed = axes.iter().find(|f| {
                p.row()
                    .components
                    .iter()
                    .any(|c| *f == c || f.starts_with(&format!("{c}.")))
            });
            let what = changed.map_or("the system", |f| *f);
            match (on_base, on_cell) {
                (Some(b), Some(c)) => match carry(p, fitted, b, c, what, access) {
                    Ok((carried, note)) => {
                        value = carried;
                        notes.push(format!("{name} {note}"));
                    }
                    Err(why) => {
                        notes.push(format!("{name} not applied: {why}"));
                        continue;
                    }
                },
                _ => {
                    notes.push(format!(
                        "{name} not applied: the calibrated system has no value of it to carry from"
                    ));
                    continue;
                }
            }
        }
        let bounds = p.bounds(access);
        let past = if value.value < bounds.low {
            Some(BoundSide::Low)
        } else if value.value > bounds.high {
            Some(BoundSide::High)
        } else {
            None
        };
        if let Some(side) = past {
            let (bound, why) = bounds.at(side);
            notes.push(format!(
                "{name} not applied: {} is past its {} bound for a {} client, {} ({why})",
                crate::params::num(value.value),
                side.word(),
                access.name(),
                crate::params::num(bound),
            ));
            continue;
        }
        set_value(cell, p, value.value)?;
        applied.parameters.insert(name.clone(), value);
    }
    // The result must still be a valid system.
    cell.resolve()?;
    Ok(Applied {
        profile: applied,
        notes,
    })
}

/// `fitted`, fitted where `p` was `on_base`, carried to a system where the
/// same system without the fit gives `on_cell` (`what` is the field that
/// changed): the value and a note, or why it does not carry.
fn carry(
    p: Param,
    fitted: &Fitted,
    on_base: f64,
    on_cell: f64,
    what: &str,
    access: crate::system::Protocol,
) -> Result<(Fitted, String), String> {
    use crate::params::num;
    let mut value = fitted.clone();
    let mut note = match p.row().carry {
        Carry::Reset => return Err(format!("{what} is changed, and its own figures apply")),
        Carry::Ratio if on_base > 0.0 => {
            let k = on_cell / on_base;
            value.value = fitted.value * k;
            value.uncertainty = fitted.uncertainty * k;
            format!(
                "carried: {} x {} (this system's {what} against the calibrated one's)",
                num(fitted.value),
                num(k)
            )
        }
        Carry::Ratio => {
            return Err(format!(
                "the calibrated system's value is 0, so this system's {what} has no ratio to it"
            ))
        }
        Carry::Difference => {
            value.value = fitted.value + (on_cell - on_base);
            format!(
                "carried: {} {} {} (this system's {what} against the calibrated one's)",
                num(fitted.value),
                if on_cell >= on_base { "+" } else { "-" },
                num((on_cell - on_base).abs())
            )
        }
    };
    value.carried = true;
    let bounds = p.bounds(access);
    if !(bounds.low..=bounds.high).contains(&value.value) {
        value.value = value.value.clamp(bounds.low, bounds.high);
        value.at_bound = p.at_bound(access, value.value);
        note.push_str(&format!(", cut to its bound {}", num(value.value)));
    }
    Ok((value, note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::DeviceSpec;
    use zfs_model::diskmodel::ModelParams;

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
    fn profile_round_trips_through_toml() {
        let mut parameters = BTreeMap::new();
        parameters.insert(
            "commit_device.flush_ms".to_string(),
            Fitted {
                value: 1.25,
                uncertainty: 0.05,
                at_bound: Some(BoundSide::Low),
                carried: false,
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
            parameters.insert(name.to_string(), Fitted::measured(value, 0.0));
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
    fn a_value_past_this_clients_bound_is_left_out() {
        // 1 µs a request: a local server may, an NFS server may not.
        let mut parameters = BTreeMap::new();
        parameters.insert("server.cpu_us".to_string(), Fitted::measured(1.0, 0.1));
        let profile = Profile {
            system: "box".into(),
            method: "test".into(),
            runs: vec![],
            not_identified: vec![],
            parameters,
        };
        let mut local = local_flash();
        assert!(apply_profile(&mut local, &profile).unwrap().is_empty());
        assert_eq!(
            current_value(&local, Param::ServerCpuUs).unwrap(),
            Some(1.0)
        );
        let mut nfs = local_flash();
        nfs.client.protocol = crate::system::Protocol::LinuxNfs;
        nfs.link.link = "10G".into();
        let before = current_value(&nfs, Param::ServerCpuUs).unwrap();
        let notes = apply_profile(&mut nfs, &profile).unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("server.cpu_us not applied: 1 is past its lower bound"),
            "{}",
            notes[0]
        );
        assert_eq!(current_value(&nfs, Param::ServerCpuUs).unwrap(), before);
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

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

use crate::params::not_applicable;
pub use crate::params::{current_value, set_value, Param};
use crate::system::SystemModel;
use crate::SimError;

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

/// Apply `profile` to `model`. Returns a note for each fitted parameter that
/// does not apply to this system (e.g. a link round trip on a local client),
/// which is left out rather than refused: a profile measured on one box
/// applies what transfers to another.
pub fn apply_profile(model: &mut SystemModel, profile: &Profile) -> Result<Vec<String>, SimError> {
    apply_profile_except(model, profile, &[])
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
            p.row()
                .components
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

//! Intervals, not just points (issue 21): the interval holds the point,
//! names the parameters that move it, narrows when a profile fitted one,
//! and is the same for the same seed.

use std::collections::BTreeMap;

use fileio::options::RunSpec;
use sim::profile::{Fitted, Profile};
use sim::{RunOptions, SystemModel};

const NFS: &str = "name = \"nfs\"\nlog = \"ssd-sata\"\n[client]\nprotocol = \"linux-nfs\"\n[link]\nlink = \"1G\"\n[server]\nram = \"8G\"\n[pool]\nlayout = \"1xmirror-2\"\ndisk_size = \"4T\"\ndisk = \"ssd-sata\"\n";

fn spec() -> RunSpec {
    let w: Vec<String> = [
        "--file-total-size=64M",
        "--file-test-mode=rndwr",
        "--file-fsync-all",
        "--threads=1",
        "--time=15",
        "--events=0",
        "--rand-seed=2",
    ]
    .iter()
    .map(|s| (*s).to_string())
    .collect();
    RunSpec::from_words(&w).unwrap()
}

fn interval(m: &SystemModel, profile: Option<&Profile>) -> fileio::result::PredictionInterval {
    let o = RunOptions::default();
    let point = sim::simulate_run(&spec(), m, &o).unwrap();
    let r = sim::uncertainty::with_interval(&spec(), m, profile, point, &o, 12, 2).unwrap();
    r.prediction.unwrap()
}

#[test]
fn the_interval_holds_the_point_names_parameters_and_narrows_after_calibration() {
    let m = SystemModel::from_toml(NFS).unwrap();
    let wide = interval(&m, None);
    let w = wide.figures["writes_per_s"];
    assert!(w.low <= w.point && w.point <= w.high, "{w:?}");
    assert!(w.high > w.low * 1.2, "the ranges move writes/s: {w:?}");
    assert_eq!(wide.samples, 12);
    assert!(wide.sensitivity.len() >= 3);
    assert!(
        wide.sensitivity[0].rank_correlation.abs() > 0.5,
        "{:?}",
        wide.sensitivity
    );
    assert_eq!(interval(&m, None), wide, "deterministic for a seed");

    // A profile that fitted every parameter to 1 % (σ): the interval
    // narrows to the simulation's own response to ±2 %.
    let parameters: BTreeMap<String, Fitted> = sim::profile::Param::ALL
        .iter()
        .filter_map(|&p| {
            let value = sim::profile::current_value(&m, p).unwrap()?;
            Some((
                p.name().to_string(),
                Fitted {
                    value,
                    uncertainty: value * 0.01,
                },
            ))
        })
        .collect();
    let profile = Profile {
        system: "nfs".into(),
        method: "test".into(),
        runs: vec![],
        not_identified: vec![],
        parameters,
    };
    let narrow = interval(&m, Some(&profile));
    let n = narrow.figures["writes_per_s"];
    assert!(n.low <= n.point && n.point <= n.high, "{n:?}");
    assert!(
        n.high - n.low < 0.25 * (w.high - w.low),
        "narrower after calibration: {n:?} vs {w:?}"
    );
}

#[test]
fn setting_a_parameter_to_its_own_value_changes_nothing() {
    let m = SystemModel::from_toml(NFS).unwrap();
    let o = RunOptions::default();
    let point = sim::simulate_run(&spec(), &m, &o).unwrap();
    for p in sim::profile::Param::ALL {
        let Some(v) = sim::profile::current_value(&m, p).unwrap() else {
            continue;
        };
        let mut same = m.clone();
        sim::profile::set_value(&mut same, p, v).unwrap();
        let r = sim::simulate_run(&spec(), &same, &o).unwrap();
        assert_eq!(r.counts, point.counts, "{}", p.name());
    }
}

//! The simulator's bounds (issue 19): runaway workloads end in a typed
//! refusal or a bounded run that says where it stopped.

use fileio::options::RunSpec;
use sim::{Budget, LimitError, SimError, SystemModel};

fn spec(words: &[&str]) -> RunSpec {
    let mut all = vec!["--file-total-size=16M", "--rand-seed=1"];
    all.extend_from_slice(words);
    let all: Vec<String> = all.into_iter().map(String::from).collect();
    RunSpec::from_words(&all).unwrap_or_else(|e| panic!("{all:?}: {e}"))
}

fn system(text: &str) -> SystemModel {
    SystemModel::from_toml(text).unwrap()
}

const LOCAL: &str = "name = \"l\"\n[client]\nprotocol = \"local\"\n[server]\nram = \"8G\"\ncpu_us = 5.0\n[pool]\nlayout = \"1xstripe\"\ndisk_size = \"1T\"\ndisk = \"ssd-sata\"\n";

#[test]
fn threads_time_and_events_are_refused_before_anything_is_allocated() {
    let m = system(LOCAL);
    let e = sim::Simulation::new(
        &spec(&["--file-test-mode=rndrd", "--threads=1000000000"]),
        &m,
    )
    .run()
    .map(|s| s.result);
    assert_eq!(
        e.unwrap_err(),
        SimError::Limit(LimitError::Threads {
            threads: 1_000_000_000
        })
    );
    let e = sim::Simulation::new(&spec(&["--file-test-mode=rndrd", "--time=1000000000"]), &m)
        .run()
        .map(|s| s.result);
    assert_eq!(
        e.unwrap_err(),
        SimError::Limit(LimitError::Time {
            seconds: 1_000_000_000
        })
    );
    let s = spec(&["--file-test-mode=rndrd", "--time=0", "--events=1000"]);
    let e = sim::Simulation::new(&s, &m)
        .budget(Budget { events: 999 })
        .run()
        .map(|s| s.result)
        .unwrap_err();
    assert!(matches!(
        e,
        SimError::Limit(LimitError::Events {
            events: 1000,
            budget: 999,
            ..
        })
    ));
}

#[test]
fn a_run_stops_at_its_budget_with_a_note_and_otherwise_is_unchanged() {
    let m = system(LOCAL);
    let s = spec(&["--file-test-mode=rndrd", "--time=86400"]);
    let r = sim::Simulation::new(&s, &m)
        .budget(Budget { events: 5000 })
        .run()
        .unwrap()
        .result;
    assert_eq!(r.counts.events, 5000);
    assert!(r
        .warnings
        .iter()
        .any(|w| w.code == "predicted_budget_reached"));
    // Below the budget: the same run as without one.
    let short = spec(&["--file-test-mode=rndrd", "--time=0", "--events=3000"]);
    let a = sim::Simulation::new(&short, &m)
        .budget(Budget { events: 3000 })
        .run()
        .unwrap()
        .result;
    let b = sim::Simulation::new(&short, &m).run().unwrap().result;
    assert_eq!(a.counts, b.counts);
    assert_eq!(a.total_time_s.to_bits(), b.total_time_s.to_bits());
    assert!(!a
        .warnings
        .iter()
        .any(|w| w.code == "predicted_budget_reached"));
}

#[test]
fn a_system_whose_requests_cost_nothing_is_refused_naming_the_fields() {
    let zero = LOCAL
        .replace("cpu_us = 5.0", "cpu_us = 0.0\ncpu_us_per_mib = 0.0")
        .replace(
            "protocol = \"local\"",
            "protocol = \"local\"\ncpu_us = 0.0\ncache_hit_us = 0.0",
        );
    let e = sim::Simulation::new(
        &spec(&["--file-test-mode=rndrd", "--time=10"]),
        &system(&zero),
    )
    .run()
    .map(|s| s.result)
    .unwrap_err();
    let SimError::Stalled { at_s, fields, .. } = &e else {
        panic!("{e}");
    };
    assert!(*at_s < 1e-9, "{at_s}");
    assert!(fields.contains("server.cpu_us = 0"), "{fields}");
    assert_eq!(e.to_string().lines().count(), 1);
}

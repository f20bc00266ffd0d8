//! Stopping a run when its throughput is known (issue 21): a converged run
//! agrees with the full-length run within 1 %, says where it stopped, and is
//! the same for the same seed.

use std::path::Path;

use fileio::options::RunSpec;
use fileio::result::RunResult;
use sim::{Budget, RunOptions, SystemModel};

fn spec(words: &[&str]) -> RunSpec {
    let all: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
    RunSpec::from_words(&all).unwrap_or_else(|e| panic!("{all:?}: {e}"))
}

fn example_text(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/systems")
        .join(name);
    std::fs::read_to_string(&path).unwrap()
}

fn run(spec: &RunSpec, m: &SystemModel, early_stop: bool) -> RunResult {
    sim::Simulation::new(spec, m)
        .options(&RunOptions {
            budget: Budget::default(),
            early_stop,
            ..RunOptions::default()
        })
        .run()
        .unwrap()
        .result
}

fn converged(r: &RunResult) -> bool {
    r.warnings.iter().any(|w| w.code == "predicted_converged")
}

const NFS_SSD_LOG: &str = "name = \"nfs-ssd\"\nlog = \"ssd-sata\"\n[client]\nprotocol = \"linux-nfs\"\n[link]\nlink = \"10G\"\n[server]\nram = \"16G\"\n[pool]\nlayout = \"1xmirror-2\"\ndisk_size = \"4T\"\ndisk = \"ssd-sata\"\n";

const LOCAL_SSD: &str = "name = \"local-ssd\"\n[client]\nprotocol = \"local\"\n[server]\nram = \"8G\"\ncpu_us = 5.0\n[pool]\nlayout = \"1xstripe\"\ndisk_size = \"1T\"\ndisk = \"ssd-sata\"\n";

/// The reference box without its log device (the issue 21 cell).
fn reference_without_log() -> SystemModel {
    let text =
        example_text("reference-nas.toml").replace("log = \"flash-unknown\"", "log = \"none\"");
    SystemModel::from_toml(&text).unwrap()
}

#[test]
fn a_converged_run_agrees_with_the_full_length_run_within_one_percent() {
    // The reference box is here without its SATA SSD log device: with it,
    // the four guest threads switch between sharing one journal commit and
    // splitting into two groups whose commits take turns (each group's
    // data write is shorter than the other's commit), for seconds at a
    // time, so its throughput over 5 s varies by 7 % (cv) and 1 % at 95 %
    // takes about 15 simulated minutes; the rule rightly does not stop a
    // 30 s run of it.
    let cases: Vec<(SystemModel, RunSpec)> = vec![
        (
            reference_without_log(),
            spec(&[
                "--file-total-size=4G",
                "--file-test-mode=rndrw",
                "--file-block-size=4K",
                "--threads=4",
                "--file-fsync-all",
                // Its batch means reach 1 % at about 55-61 simulated s
                // (with the defaults of 2026-12): a 120 s run leaves the
                // rule room to stop and still checks it against a full run.
                "--time=120",
                "--rand-seed=1",
            ]),
        ),
        (
            SystemModel::from_toml(NFS_SSD_LOG).unwrap(),
            spec(&[
                "--file-total-size=1G",
                "--file-test-mode=rndwr",
                "--file-block-size=16K",
                "--threads=2",
                "--file-fsync-all",
                "--time=30",
                "--rand-seed=3",
            ]),
        ),
        (
            SystemModel::from_toml(LOCAL_SSD).unwrap(),
            spec(&[
                "--file-total-size=256M",
                "--file-test-mode=rndrd",
                "--file-block-size=4K",
                "--threads=2",
                "--file-extra-flags=direct",
                "--time=30",
                "--rand-seed=5",
            ]),
        ),
    ];
    for (m, s) in &cases {
        let full = run(s, m, false);
        let short = run(s, m, true);
        assert!(
            !converged(&full),
            "{}: the full run never stops early",
            m.name
        );
        assert!(converged(&short), "{}: {:?}", m.name, short.warnings);
        assert!((short.total_time_s - s.time_s as f64).abs() < 1e-9);
        for (what, a, b) in [
            (
                "fsyncs/s",
                full.rates.fsyncs_per_s,
                short.rates.fsyncs_per_s,
            ),
            ("reads/s", full.rates.reads_per_s, short.rates.reads_per_s),
            (
                "writes/s",
                full.rates.writes_per_s,
                short.rates.writes_per_s,
            ),
        ] {
            if a == 0.0 {
                assert!(b.abs() < 1e-12, "{}: {what}", m.name);
                continue;
            }
            let rel = (b - a).abs() / a;
            assert!(
                rel <= 0.01,
                "{}: {what} full {a} converged {b} ({:.2} %)",
                m.name,
                rel * 100.0
            );
        }
        // Determinism: the same seed stops at the same event.
        let again = run(s, m, true);
        assert_eq!(again.counts, short.counts, "{}", m.name);
        assert_eq!(again.latency, short.latency, "{}", m.name);
    }
}

#[test]
fn a_short_run_or_an_events_run_is_simulated_whole() {
    let m = SystemModel::from_toml(LOCAL_SSD).unwrap();
    let short = spec(&[
        "--file-total-size=16M",
        "--file-test-mode=rndrd",
        "--time=5",
        "--rand-seed=1",
    ]);
    assert!(!converged(&run(&short, &m, true)));
    let events = spec(&[
        "--file-total-size=16M",
        "--file-test-mode=rndrd",
        "--time=0",
        "--events=20000",
        "--rand-seed=1",
    ]);
    let r = run(&events, &m, true);
    assert!(!converged(&r));
    assert_eq!(r.counts.events, 20000);
}

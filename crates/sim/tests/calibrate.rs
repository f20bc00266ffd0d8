//! Calibration against the simulator itself: "measurements" produced with
//! known parameters are fitted back from other starting values.

use fileio::options::RunSpec;
use fileio::result::{ResultKind, RunResult};
use sim::calibrate::{calibrate, Measurement, Outcome};
use sim::profile::{apply_profile, current_value, set_value, Param};
use sim::{Simulation, SystemModel};

fn spec(extra: &[&str]) -> RunSpec {
    let mut words = vec![
        "--file-total-size=16M",
        "--file-num=4",
        "--file-block-size=4096",
        "--rand-seed=1",
        "--time=2",
    ];
    words.extend_from_slice(extra);
    RunSpec::from_words(&words).unwrap_or_else(|e| panic!("{words:?}: {e}"))
}

/// fileio on the server itself, its pool one flash disk whose flush is the
/// commit's cost, 4 KiB records (no read-modify-write).
const LOCAL: &str = r#"
name = "box"
[server]
ram = "4G"
cores = 2
cpu_us = 40.0
[pool]
layout = "1xstripe"
disk = "ssd-sata"
recordsize = "4K"
"#;

fn model() -> SystemModel {
    SystemModel::from_toml(LOCAL).unwrap()
}

/// A "measurement": the simulator's prediction on `truth`, relabelled as
/// measured, as a stored result would be.
fn measured(truth: &SystemModel, extra: &[&str]) -> RunResult {
    let mut r = Simulation::new(&spec(extra), truth).run().unwrap().result;
    r.kind = ResultKind::Measured;
    r
}

fn measurement(id: &str, r: &RunResult) -> Measurement {
    Measurement::from_result(id, r).unwrap_or_else(|e| panic!("{e}"))
}

fn fitted(outcome: &Outcome) -> f64 {
    match outcome {
        Outcome::Fitted { value, .. } => *value,
        other => panic!("not fitted: {other:?}"),
    }
}

fn outcome(c: &sim::calibrate::Calibration, p: Param) -> &Outcome {
    &c.params.iter().find(|(q, _)| *q == p).expect("listed").1
}

const WRITE_FSYNC: [&str; 3] = ["--file-test-mode=rndwr", "--file-fsync-all", "--threads=1"];
const READ: [&str; 3] = ["--file-test-mode=rndrd", "--threads=1", "--events=4000"];

#[test]
fn the_fit_recovers_known_commit_and_cpu_times() {
    let mut truth = model();
    set_value(&mut truth, Param::CommitFlushMs, 2.0).unwrap();
    set_value(&mut truth, Param::ServerCpuUs, 15.0).unwrap();
    let runs = [
        measurement("wr", &measured(&truth, &WRITE_FSYNC)),
        measurement("rd", &measured(&truth, &READ)),
    ];
    // The starting model is off by factors of 4 and 2.7.
    let mut start = model();
    set_value(&mut start, Param::CommitFlushMs, 0.5).unwrap();
    let c = calibrate(&start, &runs).unwrap();
    let flush = fitted(outcome(&c, Param::CommitFlushMs));
    let cpu = fitted(outcome(&c, Param::ServerCpuUs));
    // Tolerance: 3 % (the simulation is deterministic; what is left is the
    // simplex's stopping rule).
    assert!(
        (flush / 2.0 - 1.0).abs() < 0.03,
        "flush {flush}\n{}",
        c.report()
    );
    assert!((cpu / 15.0 - 1.0).abs() < 0.03, "cpu {cpu}\n{}", c.report());
    for run in &c.runs {
        for &(m, measured, predicted) in &run.rows {
            assert!(
                (predicted / measured - 1.0).abs() < 0.03,
                "{} {}: {measured} vs {predicted}",
                run.id,
                m.name()
            );
        }
    }
    // The fitted values carry an uncertainty, and the profile applies them.
    match outcome(&c, Param::CommitFlushMs) {
        Outcome::Fitted { uncertainty, .. } => assert!(*uncertainty > 0.0 && *uncertainty < 1.0),
        other => panic!("{other:?}"),
    }
    let mut applied = model();
    let skipped = apply_profile(&mut applied, &c.profile()).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    let v = current_value(&applied, Param::CommitFlushMs)
        .unwrap()
        .unwrap();
    assert!((v - flush).abs() < 1e-9);
}

#[test]
fn parameters_the_runs_cannot_tell_apart_are_not_identified() {
    let mut truth = model();
    set_value(&mut truth, Param::CommitFlushMs, 2.0).unwrap();
    // One thread of write + fsync: every figure is 1 / (CPU + commit), so
    // the CPU time cannot be told from the commit time.
    let runs = [measurement("wr", &measured(&truth, &WRITE_FSYNC))];
    let c = calibrate(&model(), &runs).unwrap();
    let flush = fitted(outcome(&c, Param::CommitFlushMs));
    // The CPU stays at its 40 µs, which the truth shares: the commit comes out right.
    assert!((flush / 2.0 - 1.0).abs() < 0.03, "{}", c.report());
    for p in [
        Param::ServerCpuUs,
        Param::ClientCpuUs,
        Param::FsyncRoundTrips,
    ] {
        match outcome(&c, p) {
            Outcome::NotIdentified { value, reason } => {
                assert!(
                    reason.contains("confounded") || reason.contains("barely"),
                    "{reason}"
                );
                assert_eq!(*value, current_value(&model(), p).unwrap(), "{p:?} kept");
            }
            other => panic!("{p:?} should not be identified: {other:?}\n{}", c.report()),
        }
    }
    match outcome(&c, Param::RttMs) {
        Outcome::NotIdentified {
            value: None,
            reason,
        } => {
            assert!(reason.contains("local"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    let profile = c.profile();
    assert_eq!(profile.parameters.len(), 1);
    assert!(profile
        .not_identified
        .contains(&"server.cpu_us".to_string()));
    assert!(c.report().contains("not identified"));
}

#[test]
fn a_network_round_trip_is_recovered_from_remote_reads() {
    // Linux NFS over 10G: a read the ARC holds costs client CPU, the round
    // trip and server CPU. No client page cache, so every read crosses the
    // link. Reads at 1 and 8 threads: the CPU queues, the link does not.
    let base = r#"
name = "nfs"
[client]
protocol = "linux-nfs"
cpu_us = 20.0
page_cache = "0"
[link]
link = "10G"
[server]
ram = "4G"
cores = 1
cpu_us = 30.0
[pool]
layout = "1xstripe"
disk = "ssd-sata"
recordsize = "4K"
"#;
    let mut truth = SystemModel::from_toml(base).unwrap();
    set_value(&mut truth, Param::RttMs, 0.3).unwrap();
    set_value(&mut truth, Param::ServerCpuUs, 50.0).unwrap();
    let runs = [
        measurement("rd1", &measured(&truth, &READ)),
        measurement(
            "rd8",
            &measured(
                &truth,
                &["--file-test-mode=rndrd", "--threads=8", "--events=8000"],
            ),
        ),
    ];
    let c = calibrate(&SystemModel::from_toml(base).unwrap(), &runs).unwrap();
    let rtt = fitted(outcome(&c, Param::RttMs));
    let cpu = fitted(outcome(&c, Param::ServerCpuUs));
    assert!((rtt / 0.3 - 1.0).abs() < 0.05, "rtt {rtt}\n{}", c.report());
    assert!((cpu / 50.0 - 1.0).abs() < 0.05, "cpu {cpu}\n{}", c.report());
}

#[test]
fn a_prediction_is_not_a_measurement() {
    let r = Simulation::new(&spec(&WRITE_FSYNC), &model())
        .run()
        .unwrap()
        .result;
    let e = Measurement::from_result("p.json", &r)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("p.json: a predicted result"), "{e}");
    assert_eq!(e.lines().count(), 1);
}

#[test]
fn no_runs_is_refused() {
    let e = calibrate(&model(), &[]).unwrap_err().to_string();
    assert!(e.contains("no measured runs"), "{e}");
}

#[test]
fn the_measured_workload_is_what_is_simulated() {
    let r = measured(
        &model(),
        &["--file-test-mode=rndrw", "--threads=3", "--file-fsync-all"],
    );
    let m = measurement("x", &r);
    assert_eq!(m.spec.threads, 3);
    assert!(m.spec.fsync_all);
    assert_eq!(m.spec.files.file_num, 4);
    assert_eq!(m.spec.files.block_size, 4096);
    assert_eq!(m.spec.rand_seed, sim::calibrate::SIM_SEED);
    assert!(m.spec.time_s <= sim::calibrate::SIM_SECONDS);
    let names: Vec<_> = m.observed.iter().map(|(k, _)| k.name()).collect();
    assert_eq!(names, ["reads/s", "writes/s", "fsyncs/s", "latency ms"]);
}

// A probe in the calibration: recorded `tankbench probe` results
// (tests/data/README.md) fix the parameters they measure directly.

use fileio::probe::{ProbeOp, ProbeResult};
use fileio::result::LatencyKey;
use sim::calibrate::{calibrate_with_probe, probe_params, ProbeParams};

fn probe(name: &str) -> ProbeResult {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    ProbeResult::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn probe_mean_ms(p: &ProbeResult, op: ProbeOp) -> f64 {
    p.operation(op).expect("probed").latency.mean_ms
}

fn probed(c: &sim::calibrate::Calibration, p: Param) -> f64 {
    match outcome(c, p) {
        Outcome::Probed { value, .. } => *value,
        other => panic!("{p:?} not from the probe: {other:?}\n{}", c.report()),
    }
}

/// What the model the probe's values were set in predicts for `extra`,
/// the mean of `key`, ms.
fn predicted_mean_ms(m: &SystemModel, extra: &[&str], key: LatencyKey) -> f64 {
    Simulation::new(&spec(extra), m)
        .run()
        .unwrap()
        .result
        .latency[&key]
        .mean_ms
}

#[test]
fn a_local_probe_fixes_the_cpu_and_the_flush_so_its_sync_write_is_reproduced() {
    let p = probe("probe-local-ext4.json");
    let pp: ProbeParams = probe_params(&model(), "probe.json", &p).unwrap();
    // A local directory has no NULL: no round trip, and the CPU per
    // request is the stat.
    assert!(pp.get(Param::RttMs).is_none());
    let stat = probe_mean_ms(&p, ProbeOp::Getattr);
    let cpu = pp.get(Param::ServerCpuUs).unwrap();
    assert!((cpu.value - stat * 1e3).abs() < 1e-9, "{cpu:?}");
    assert!(
        cpu.uncertainty > 0.0 && cpu.uncertainty < cpu.value,
        "{cpu:?}"
    );
    let c = calibrate_with_probe(&model(), Some(&pp), &[], &Param::ALL).unwrap();
    assert!((probed(&c, Param::ServerCpuUs) - cpu.value).abs() < 1e-12);
    let flush = probed(&c, Param::CommitFlushMs);
    assert!(flush > 3.0 && flush < 4.0, "{}", c.report());
    // The check that matters: one writer with an fsync after each 4 KiB
    // write is the probe's pwrite + fdatasync, and the model with the
    // probe's values predicts its latency (the flush absorbed what the
    // model's commit CPU and device write do not explain). Within 3 %: the
    // CPU and commit CPU are exponentially distributed around their means.
    let sync_write = probe_mean_ms(&p, ProbeOp::StableWrite4k);
    let event = predicted_mean_ms(&c.model, &WRITE_FSYNC, LatencyKey::Event);
    assert!(
        (event / sync_write - 1.0).abs() < 0.03,
        "predicted {event} ms, probed {sync_write} ms\n{}",
        c.report()
    );
    // The report and the profile say where the values came from.
    let report = c.report();
    for line in ["server.cpu_us", "commit_device.flush_ms"] {
        let l = report
            .lines()
            .find(|l| l.starts_with(line))
            .unwrap_or_else(|| panic!("{report}"));
        assert!(l.contains("from the probe: "), "{l}");
    }
    assert!(report.contains("Probe probe.json"), "{report}");
    let profile = c.profile();
    assert_eq!(profile.parameters.len(), 2, "{profile:?}");
    assert!(
        profile.method.contains("from the probe probe.json"),
        "{}",
        profile.method
    );
    // The profile narrows the ranges an interval samples to ±2σ.
    let wide = sim::uncertainty::spans(&c.model, None).unwrap();
    let narrow = sim::uncertainty::spans(&c.model, Some(&profile)).unwrap();
    let span = |s: &[sim::uncertainty::Span]| {
        let s = s.iter().find(|s| s.param == Param::ServerCpuUs).unwrap();
        (s.low, s.high)
    };
    let ((wl, wh), (nl, nh)) = (span(&wide), span(&narrow));
    assert!(
        nl >= cpu.value - 2.0 * cpu.uncertainty - 1e-12
            && nh <= cpu.value + 2.0 * cpu.uncertainty + 1e-12
    );
    assert!(nh - nl < wh - wl, "{nl}-{nh} vs {wl}-{wh}");
}

/// Linux NFS over 10G, every WRITE stable, a log device: the probe's
/// stable WRITE is one request of the model's.
const NFS_STABLE: &str = r#"
name = "nas"
log = "ssd-sata"
[client]
protocol = "linux-nfs"
stable_writes = true
cpu_us = 0.0
page_cache = "0"
[link]
link = "10G"
[server]
ram = "4G"
[pool]
layout = "1xmirror-2"
disk = "ssd-sata"
recordsize = "4K"
"#;

#[test]
fn an_nfs_probe_fixes_the_round_trip_cpu_and_flush_so_its_stable_write_is_reproduced() {
    let m = SystemModel::from_toml(NFS_STABLE).unwrap();
    let p = probe("probe-nfs-ganesha.json");
    let pp = probe_params(&m, "nfs.json", &p).unwrap();
    let (null, getattr) = (
        probe_mean_ms(&p, ProbeOp::Null),
        probe_mean_ms(&p, ProbeOp::Getattr),
    );
    // NULL less the two header-only messages' serialisation at 10 Gbit/s
    // (224 bytes each on the wire: 0.18 µs), GETATTR − NULL.
    let rtt = pp.get(Param::RttMs).unwrap().value;
    assert!(rtt < null && rtt > null - 0.001, "{rtt} vs NULL {null}");
    let cpu = pp.get(Param::ServerCpuUs).unwrap().value;
    assert!(((getattr - null) * 1e3 - cpu).abs() < 1e-9, "{cpu}");
    let c = calibrate_with_probe(&m, Some(&pp), &[], &Param::ALL).unwrap();
    // One writer of 4 KiB, no fsync: each write is a FILE_SYNC WRITE, the
    // probe's stable write; its mean latency is reproduced within 3 %.
    let write = predicted_mean_ms(
        &c.model,
        &[
            "--file-test-mode=rndwr",
            "--file-fsync-freq=0",
            "--threads=1",
            "--events=3000",
        ],
        LatencyKey::Write,
    );
    let stable = probe_mean_ms(&p, ProbeOp::StableWrite4k);
    assert!(
        (write / stable - 1.0).abs() < 0.03,
        "predicted {write} ms, probed {stable} ms\n{}",
        c.report()
    );
}

#[test]
fn the_fit_leaves_the_probed_values_alone_and_fits_the_rest() {
    let p = probe("probe-local-ext4.json");
    let pp = probe_params(&model(), "probe.json", &p).unwrap();
    // The truth: the probe's values, and 20 µs of client CPU per request
    // (the model says 0), which cached reads show.
    let mut truth = model();
    for v in &pp.values {
        set_value(&mut truth, v.param, v.value).unwrap();
    }
    set_value(&mut truth, Param::ClientCpuUs, 20.0).unwrap();
    let runs = [
        measurement("wr", &measured(&truth, &WRITE_FSYNC)),
        measurement("rd", &measured(&truth, &READ)),
    ];
    let c = calibrate_with_probe(&model(), Some(&pp), &runs, &Param::ALL).unwrap();
    for v in &pp.values {
        // Exactly the probe's value: nothing moved it.
        assert!(probed(&c, v.param).to_bits() == v.value.to_bits(), "{v:?}");
        // Read back through the resolved system: nanosecond rounding.
        let now = current_value(&c.model, v.param).unwrap().unwrap();
        assert!((now / v.value - 1.0).abs() < 1e-6, "{v:?}: {now}");
    }
    let client = fitted(outcome(&c, Param::ClientCpuUs));
    assert!((client / 20.0 - 1.0).abs() < 0.05, "{}", c.report());
    for run in &c.runs {
        for &(m, measured, predicted) in &run.rows {
            assert!(
                (predicted / measured - 1.0).abs() < 0.03,
                "{} {}: {measured} vs {predicted}\n{}",
                run.id,
                m.name(),
                c.report()
            );
        }
    }
}

#[test]
fn a_probe_over_another_transport_than_the_systems_is_refused() {
    let e = probe_params(&model(), "nfs.json", &probe("probe-nfs-ganesha.json"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("nfs.json: a probe over NFS (transport nfs3)"),
        "{e}"
    );
    let nfs = SystemModel::from_toml(NFS_STABLE).unwrap();
    let e = probe_params(&nfs, "local.json", &probe("probe-local-ext4.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("probe the export itself"), "{e}");
    assert_eq!(e.lines().count(), 1);
}

/// A guest on an ESXi NFS datastore whose log device is a SATA SSD: the
/// system of issue 35's calibration that fitted a 1.4 µs flush.
const ESXI_SSD_LOG: &str = r#"
name = "esxi-ssd-log"
log = "ssd-sata"
[client]
protocol = "esxi-nfs"
[link]
link = "10G"
[server]
ram = "4G"
[pool]
layout = "1xmirror-2"
disk = "hdd-7200"
recordsize = "4K"
"#;

#[test]
fn a_run_faster_than_the_model_can_reach_stops_at_physical_bounds_and_says_so() {
    use sim::calibrate::CalibrationWarning;
    let system = SystemModel::from_toml(ESXI_SSD_LOG).unwrap();
    let access = system.client.protocol;
    // The "measurement": a flush, a round trip and a server no real device,
    // link or CPU has (set past every bound), and 1 µs of ZIL software a
    // commit: every fsync is several times faster than the model's floor.
    let mut impossible = system.clone();
    impossible.server.commit_cpu_us = 1.0;
    for (p, v) in [
        (Param::CommitFlushMs, 1e-4),
        (Param::RttMs, 0.002),
        (Param::ServerCpuUs, 0.4),
        (Param::ClientCpuUs, 0.1),
    ] {
        assert!(v < p.bounds(access).low, "{p:?} must start past its bound");
        set_value(&mut impossible, p, v).unwrap();
    }
    let run = measured(
        &impossible,
        &[
            "--file-test-mode=rndwr",
            "--file-fsync-all",
            "--threads=1",
            "--events=2000",
        ],
    );
    let c = calibrate(&system, &[measurement("fast.json", &run)]).unwrap();
    let report = c.report();
    // The flush, which one writer's fsyncs identify, stops at its floor.
    match outcome(&c, Param::CommitFlushMs) {
        Outcome::AtBound { value, side, .. } => {
            assert_eq!(*side, sim::profile::BoundSide::Low);
            let b = Param::CommitFlushMs.bounds(access);
            assert!((value / b.low - 1.0).abs() < 0.011, "{value}\n{report}");
        }
        other => panic!("{other:?}\n{report}"),
    }
    // Every value printed is within its bounds.
    for (p, o) in &c.params {
        let v = match o {
            Outcome::Fitted { value, .. } | Outcome::AtBound { value, .. } => Some(*value),
            Outcome::Probed { value, .. } => Some(*value),
            Outcome::NotIdentified { value, .. } => *value,
        };
        if let Some(v) = v {
            let b = p.bounds(access);
            assert!(b.low <= v && v <= b.high, "{p:?} = {v}\n{report}");
        }
    }
    // The report says "at its bound" where a measured value's ±1σ would be.
    let line = report
        .lines()
        .find(|l| l.starts_with("commit_device.flush_ms"))
        .unwrap();
    assert!(
        line.contains("at its bound") && line.contains("lower bound"),
        "{line}"
    );
    // The warnings name the parameter and its bound, and give the gap.
    let warnings = c.warnings();
    assert!(
        warnings.iter().any(|w| matches!(
            w,
            CalibrationWarning::AtBound { param: Param::CommitFlushMs, bound, .. }
                if (*bound - Param::CommitFlushMs.bounds(access).low).abs() < 1e-12
        )),
        "{warnings:?}"
    );
    let gap = warnings
        .iter()
        .find_map(|w| match w {
            CalibrationWarning::Gap { run, errors } if run == "fast.json" => Some(errors),
            _ => None,
        })
        .expect("the run's gap");
    let fsyncs = gap
        .iter()
        .find(|(m, _)| m.name() == "fsyncs/s")
        .map(|(_, e)| *e)
        .unwrap();
    assert!(fsyncs < -50.0, "the model reaches under half: {fsyncs} %");
    let text = warnings[0].to_string();
    assert!(
        text.starts_with("commit_device.flush_ms is at its lower bound, 0.00290 ms"),
        "{text}"
    );
    // The profile marks the value, so an interval does not narrow on it.
    let profile = c.profile();
    let saved = &profile.parameters["commit_device.flush_ms"];
    assert_eq!(saved.at_bound, Some(sim::profile::BoundSide::Low));
    let back = sim::profile::Profile::from_toml(&profile.to_toml()).unwrap();
    assert_eq!(back, profile);
    let mut applied = system.clone();
    apply_profile(&mut applied, &back).unwrap();
    let flush = sim::uncertainty::spans(&applied, Some(&back))
        .unwrap()
        .into_iter()
        .find(|s| s.param == Param::CommitFlushMs)
        .expect("sampled over its range, not left out");
    assert!(flush.high / flush.low > 2.0, "{flush:?}");
}

//! `tankbench simulate calibrate` and `simulate --profile` through the
//! binary. The "measurements" are the simulator's own predictions relabelled
//! as measured, so the parameters they were made with are known.

mod common;

use common::{example_system, listing, mkfifo, refused_naming, scratch, tb, Run};
use std::path::{Path, PathBuf};

const WORKLOAD: [&str; 8] = [
    "--file-total-size=16M",
    "--file-num=4",
    "--file-block-size=4K",
    "--file-test-mode=rndwr",
    "--file-fsync-all",
    "--threads=1",
    "--time=2",
    "--rand-seed=1",
];

/// A profile that sets the commit device's flush to `ms`.
fn write_profile(dir: &Path, name: &str, ms: f64) -> String {
    let text = format!(
        "system = \"test\"\nmethod = \"by hand\"\nruns = []\n[parameters.\"commit_device.flush_ms\"]\nvalue = {ms}\nuncertainty = 0.0\n"
    );
    std::fs::write(dir.join(name), text).expect("profile");
    name.to_string()
}

/// Predict WORKLOAD on the ext4 example system, with `own` options.
fn predict(dir: &Path, own: &[&str]) -> serde_json::Value {
    let sys = example_system("this-machine-ext4.toml");
    let mut args = vec!["simulate", "--system", &sys];
    args.extend_from_slice(own);
    args.push("--");
    args.extend_from_slice(&WORKLOAD);
    args.extend_from_slice(&["--format=json", "run"]);
    let r = tb(dir, &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(&r.stdout).expect("json")
}

/// A "measured" result made by the simulator with the flush at `ms`.
fn fake_measurement(dir: &Path, name: &str, ms: f64) {
    let profile = write_profile(dir, &format!("{name}.truth.toml"), ms);
    let mut doc = predict(dir, &["--profile", &profile]);
    doc["kind"] = "measured".into();
    std::fs::write(dir.join(name), serde_json::to_vec(&doc).unwrap()).expect("write");
}

fn calibrate(dir: &Path, args: &[&str]) -> Run {
    let sys = example_system("this-machine-ext4.toml");
    let mut all = vec!["simulate", "calibrate", "--system", &sys];
    all.extend_from_slice(args);
    tb(dir, &all)
}

/// Refused: exit 1, one line on stderr containing `what`, nothing written.
#[track_caller]
fn refused(r: &Run, dir: &Path, before: &[(String, u64)], what: &str) {
    refused_naming(r, &[what]);
    assert_eq!(listing(dir), before, "something was written");
}

#[test]
fn profile_changes_the_prediction() {
    let d = scratch();
    let slow = write_profile(d.path(), "slow.toml", 8.0);
    let base = predict(d.path(), &[]);
    let with = predict(d.path(), &["--profile", &slow]);
    let w0 = base["rates"]["writes_per_s"].as_f64().unwrap();
    let w1 = with["rates"]["writes_per_s"].as_f64().unwrap();
    // An 8 ms flush instead of the file's 1 ms: well under half the writes.
    assert!(w1 < 0.5 * w0, "{w0} -> {w1}");
    // A fitted value that does not apply to this (local) system is left out
    // with a note, and the prediction is the system file's own.
    std::fs::write(
        d.path().join("rtt.toml"),
        "system = \"nas\"\nmethod = \"m\"\nruns = []\n[parameters.\"link.rtt_ms\"]\nvalue = 0.5\nuncertainty = 0.0\n",
    )
    .unwrap();
    let sys = example_system("this-machine-ext4.toml");
    let mut args = vec!["simulate", "--system", &sys, "--profile", "rtt.toml", "--"];
    args.extend_from_slice(&WORKLOAD);
    args.extend_from_slice(&["--format=json", "run"]);
    let r = tb(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("link.rtt_ms not applied"), "{}", r.stderr);
    let same: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(same["counts"], base["counts"]);
}

#[test]
fn calibrate_recovers_the_flush_and_saves_a_profile_predictions_use() {
    let d = scratch();
    fake_measurement(d.path(), "m.json", 3.0);
    let r = calibrate(d.path(), &["--save-profile", "p.toml", "m.json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    for part in [
        "commit_device.flush_ms",
        "fitted",
        "server.cpu_us",
        "not identified",
        "link.rtt_ms",
        "m.json: writes/s",
    ] {
        assert!(r.stdout.contains(part), "{part}:\n{}", r.stdout);
    }
    let text = std::fs::read_to_string(d.path().join("p.toml")).expect("profile");
    // The value line of the fitted flush's table (no TOML parser here: the
    // profile is read back by `simulate --profile` below).
    let flush: f64 = text
        .split("[parameters.\"commit_device.flush_ms\"]")
        .nth(1)
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("value = ")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no fitted flush in:\n{text}"));
    assert!((flush / 3.0 - 1.0).abs() < 0.03, "{flush}\n{}", r.stdout);
    // The saved profile reproduces the measurement.
    let measured: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("m.json")).unwrap()).unwrap();
    let predicted = predict(d.path(), &["--profile", "p.toml"]);
    let (m, p) = (
        measured["rates"]["writes_per_s"].as_f64().unwrap(),
        predicted["rates"]["writes_per_s"].as_f64().unwrap(),
    );
    assert!((p / m - 1.0).abs() < 0.03, "{m} vs {p}");
    // An existing profile is never replaced.
    let before = listing(d.path());
    let again = calibrate(d.path(), &["--save-profile", "p.toml", "m.json"]);
    refused(&again, d.path(), &before, "--save-profile");
}

#[test]
fn a_store_directory_gives_its_measured_runs() {
    let d = scratch();
    std::fs::create_dir(d.path().join("store")).unwrap();
    fake_measurement(&d.path().join("store"), "m.json", 2.0);
    // A prediction saved in the same store is left out with a note.
    let mut doc = predict(d.path(), &[]);
    doc["kind"] = "predicted".into();
    std::fs::write(
        d.path().join("store/p.json"),
        serde_json::to_vec(&doc).unwrap(),
    )
    .unwrap();
    let r = calibrate(d.path(), &["store"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("on 1 measured run"), "{}", r.stdout);
    assert!(r.stderr.contains("p.json: a prediction"), "{}", r.stderr);
    // A directory with no measured result at all is refused.
    std::fs::create_dir(d.path().join("empty")).unwrap();
    let r = calibrate(d.path(), &["empty"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stderr.contains("no measured results"), "{}", r.stderr);
}

#[test]
fn bad_inputs_are_one_line_and_write_nothing() {
    let d = scratch();
    // A prediction given as a measurement.
    let sys = example_system("this-machine-ext4.toml");
    let mut args = vec!["simulate", "--system", &sys, "--"];
    args.extend_from_slice(&WORKLOAD);
    args.extend_from_slice(&["--json=pred.json", "run"]);
    assert_eq!(tb(d.path(), &args).code, 0);
    std::fs::write(d.path().join("notes.txt"), "not a result").unwrap();
    let before = listing(d.path());
    let r = calibrate(d.path(), &["--save-profile", "p.toml", "pred.json"]);
    refused(&r, d.path(), &before, "a predicted result");
    let r = calibrate(d.path(), &["--save-profile", "p.toml", "notes.txt"]);
    refused(&r, d.path(), &before, "notes.txt");
    let r = calibrate(d.path(), &["--save-profile", "p.toml"]);
    refused(&r, d.path(), &before, "no measured runs");
    let r = calibrate(d.path(), &["--bogus", "pred.json"]);
    refused(&r, d.path(), &before, "--bogus");
    let r = tb(
        d.path(),
        &[
            "simulate",
            "calibrate",
            "--system",
            "missing.toml",
            "pred.json",
        ],
    );
    refused(&r, d.path(), &before, "--system missing.toml");
    // A profile with a parameter it cannot hold.
    std::fs::write(
        d.path().join("bad.toml"),
        "system = \"x\"\nmethod = \"m\"\nruns = []\n[parameters.\"server.ram\"]\nvalue = 1.0\nuncertainty = 0.0\n",
    )
    .unwrap();
    let before = listing(d.path());
    let mut args = vec!["simulate", "--system", &sys, "--profile", "bad.toml", "--"];
    args.extend_from_slice(&WORKLOAD);
    args.push("run");
    let r = tb(d.path(), &args);
    refused(&r, d.path(), &before, "unknown parameter 'server.ram'");
}

#[test]
fn fit_names_the_only_parameters_fitted() {
    let d = scratch();
    fake_measurement(d.path(), "m.json", 3.0);
    let r = calibrate(
        d.path(),
        &[
            "--fit",
            "server.cpu_us",
            "--save-profile",
            "p.toml",
            "m.json",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    // The flush, which alone would be fitted, keeps the system's value.
    let flush_line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("commit_device.flush_ms"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(flush_line.contains("not fitted"), "{flush_line}");
    let text = std::fs::read_to_string(d.path().join("p.toml")).expect("profile");
    assert!(!text.contains("commit_device.flush_ms\"]"), "{text}");
    // An unknown name: one line with the accepted ones, nothing written.
    let before = listing(d.path());
    let r = calibrate(d.path(), &["--fit", "server.cpu", "m.json"]);
    refused(&r, d.path(), &before, "accepted: commit_device.flush_ms");
}

#[test]
fn copies_of_one_run_are_fitted_once_with_their_weight() {
    let d = scratch();
    fake_measurement(d.path(), "m.json", 3.0);
    let one = calibrate(d.path(), &["m.json"]);
    assert_eq!(one.code, 0, "{}", one.stderr);
    let bytes = std::fs::read(d.path().join("m.json")).unwrap();
    let mut names = Vec::new();
    for i in 0..200 {
        let name = format!("copy-{i}.json");
        std::fs::write(d.path().join(&name), &bytes).unwrap();
        names.push(name);
    }
    let args: Vec<&str> = names.iter().map(String::as_str).collect();
    let started = std::time::Instant::now();
    let many = calibrate(d.path(), &args);
    assert_eq!(many.code, 0, "{}", many.stderr);
    assert!(started.elapsed().as_secs() < 60);
    assert!(
        many.stdout
            .contains("on 200 measured runs, 199 of them identical to another"),
        "{}",
        many.stdout
    );
    // One copy weighing 200 moves no fitted value: the fitted flush is the
    // same line as with the single run.
    let flush = |out: &str| {
        out.lines()
            .find(|l| l.starts_with("commit_device.flush_ms"))
            .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_string())
    };
    assert_eq!(flush(&one.stdout), flush(&many.stdout), "{}", many.stdout);
}

#[test]
fn a_forged_result_claiming_a_billion_threads_is_refused_naming_the_field() {
    let d = scratch();
    fake_measurement(d.path(), "m.json", 3.0);
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("m.json")).unwrap()).unwrap();
    doc["workload"]["threads"] = 1_000_000_000.into();
    std::fs::write(
        d.path().join("forged.json"),
        serde_json::to_vec(&doc).unwrap(),
    )
    .unwrap();
    let before = listing(d.path());
    let r = calibrate(d.path(), &["--save-profile", "p.toml", "forged.json"]);
    refused(
        &r,
        d.path(),
        &before,
        "forged.json: workload.threads: 1000000000",
    );
}

#[test]
fn a_fifo_as_system_or_profile_is_refused_at_once() {
    let d = scratch();
    fake_measurement(d.path(), "m.json", 3.0);
    mkfifo(&d.path().join("fifo"));
    let before = listing(d.path());
    let r = tb(
        d.path(),
        &["simulate", "calibrate", "--system", "fifo", "m.json"],
    );
    refused(&r, d.path(), &before, "--system fifo: a FIFO");
    let r = tb(
        d.path(),
        &["simulate", "calibrate", "--system", "/dev/zero", "m.json"],
    );
    refused(
        &r,
        d.path(),
        &before,
        "--system /dev/zero: a character device",
    );
}

// A `tankbench probe` result among the RESULTS, and a `tankbench slog`
// result as a system's log device: recorded fixtures of the sim crate
// (crates/sim/tests/data/README.md).

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sim/tests/data")
        .join(name)
}

/// Copy a fixture into `dir` as `name`.
fn copy_fixture(dir: &Path, fixture_name: &str, name: &str) {
    std::fs::copy(fixture(fixture_name), dir.join(name)).expect("copy fixture");
}

/// The status column of `param`'s line in a calibration report.
fn status_of<'a>(report: &'a str, param: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.starts_with(param))
        .unwrap_or_else(|| panic!("no {param} line:\n{report}"))
}

#[test]
fn a_probe_among_the_results_fixes_what_it_measures_and_the_profile_keeps_it() {
    let d = scratch();
    fake_measurement(d.path(), "m.json", 3.0);
    // Named like a run: told apart by its content.
    copy_fixture(d.path(), "probe-local-ext4.json", "run-7.json");
    let r = calibrate(
        d.path(),
        &["--save-profile", "p.toml", "run-7.json", "m.json"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("Probe run-7.json:"), "{}", r.stdout);
    assert!(r.stdout.contains("on 1 measured run"), "{}", r.stdout);
    for p in ["server.cpu_us", "commit_device.flush_ms"] {
        assert!(
            status_of(&r.stdout, p).contains("from the probe: "),
            "{p}:\n{}",
            r.stdout
        );
    }
    // Local: the probe has no round trip to give.
    assert!(status_of(&r.stdout, "link.rtt_ms").contains("does not apply"));
    let text = std::fs::read_to_string(d.path().join("p.toml")).expect("profile");
    for part in [
        "[parameters.\"server.cpu_us\"]",
        "[parameters.\"commit_device.flush_ms\"]",
        "from the probe run-7.json",
    ] {
        assert!(text.contains(part), "{part}:\n{text}");
    }
    // The saved profile is one `simulate --profile` takes.
    let predicted = predict(d.path(), &["--profile", "p.toml"]);
    assert!(predicted["rates"]["writes_per_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_probe_alone_calibrates_and_other_documents_are_refused_in_one_line() {
    let d = scratch();
    copy_fixture(d.path(), "probe-local-ext4.json", "probe.json");
    copy_fixture(d.path(), "probe-local-ext4.json", "again.json");
    copy_fixture(d.path(), "probe-nfs-ganesha.json", "nfs.json");
    copy_fixture(d.path(), "slog-vm-disk.json", "slog.json");
    let r = calibrate(d.path(), &["probe.json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("No measured runs: nothing fitted."),
        "{}",
        r.stdout
    );
    assert!(status_of(&r.stdout, "client.cpu_us").contains("no measured runs given"));
    // Without --system: this machine as a local system, which a local
    // probe fits.
    let sys_less = tb(d.path(), &["simulate", "calibrate", "probe.json"]);
    assert_eq!(sys_less.code, 0, "{}", sys_less.stderr);
    let before = listing(d.path());
    for (args, what) in [
        (
            vec!["--save-profile", "p.toml", "probe.json", "again.json"],
            "again.json: a second probe result (probe.json is the first)",
        ),
        (
            vec!["--save-profile", "p.toml", "nfs.json"],
            "nfs.json: a probe over NFS (transport nfs3), but the system's client is local",
        ),
        (
            vec!["--save-profile", "p.toml", "slog.json"],
            "slog.json: a `tankbench slog` result, not a run or a probe",
        ),
    ] {
        let r = calibrate(d.path(), &args);
        refused(&r, d.path(), &before, what);
    }
}

/// A local system whose log device is the measured `slog`, beside it.
fn measured_system(dir: &Path, slog: &str) -> String {
    let text = format!(
        "name = \"measured\"\nlog = {{ measured = \"{slog}\" }}\n[server]\ncpu_us = 1.0\ncommit_cpu_us = 0.0\n[pool]\nlayout = \"1xstripe\"\ndisk = \"ssd-sata\"\nrecordsize = \"4K\"\n"
    );
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("measured.toml"), text).unwrap();
    "sys/measured.toml".to_string()
}

#[test]
fn a_measured_log_device_is_read_relative_to_the_system_file() {
    let d = scratch();
    let sys_dir = d.path().join("sys");
    let sys = measured_system(&sys_dir, "slog.json");
    copy_fixture(&sys_dir, "slog-vm-disk.json", "slog.json");
    copy_fixture(d.path(), "probe-local-ext4.json", "probe.json");
    // The system file is in sys/, the command runs in its parent: the
    // measurement is found beside the system file. Its mapped flush is the
    // commit device's flush the probe then fixes.
    let r = tb(
        d.path(),
        &["simulate", "calibrate", "--system", &sys, "probe.json"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let before_flush = status_of(&r.stdout, "commit_device.flush_ms")
        .split_whitespace()
        .nth(3)
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("{}", r.stdout));
    // The measured device's fixed cost: its 4 KiB write + flush (3.7 ms)
    // less the transfer of 4 KiB.
    assert!(
        (3.6..3.8).contains(&before_flush),
        "{before_flush}\n{}",
        r.stdout
    );
    // A prediction on it, run from the system file's own directory.
    let mut args = vec!["simulate", "--system", "measured.toml", "--"];
    args.extend_from_slice(&WORKLOAD);
    args.extend_from_slice(&["--format=json", "run"]);
    let p = tb(&sys_dir, &args);
    assert_eq!(p.code, 0, "{}", p.stderr);
    let doc: serde_json::Value = serde_json::from_str(&p.stdout).unwrap();
    let w = doc["rates"]["writes_per_s"].as_f64().unwrap();
    // One writer, each 4 KiB write followed by a ~3.7 ms commit.
    assert!(w > 200.0 && w < 300.0, "{w}");
    // A missing measurement: one line naming the field and the file.
    let d2 = scratch();
    let sys = measured_system(&d2.path().join("sys"), "gone.json");
    copy_fixture(d2.path(), "probe-local-ext4.json", "probe.json");
    let before = listing(d2.path());
    let r = tb(
        d2.path(),
        &["simulate", "calibrate", "--system", &sys, "probe.json"],
    );
    refused(
        &r,
        d2.path(),
        &before,
        "log.measured: sys/gone.json: No such file",
    );
}

/// A guest on an ESXi NFS datastore with a SATA SSD log device.
const ESXI_SSD_LOG: &str = r#"name = "esxi-ssd-log"
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

/// The same box with a log device, a round trip and a server faster than
/// any that exist: its runs are faster than ESXI_SSD_LOG can be made.
const IMPOSSIBLE: &str = r#"name = "impossible"
log = { kind = "flash", read_ms = 0.001, write_ms = 0.0001, flush_ms = 0.0001, flush_ms_per_mb = 0.0, read_mb_s = 6000.0, write_mb_s = 6000.0, parallelism = 4 }
[client]
protocol = "esxi-nfs"
cpu_us = 0.1
[link]
link = "10G"
rtt_ms = 0.002
[server]
ram = "4G"
cpu_us = 0.4
commit_cpu_us = 1.0
[pool]
layout = "1xmirror-2"
disk = "hdd-7200"
recordsize = "4K"
"#;

#[test]
fn a_run_faster_than_the_model_can_reach_is_fitted_at_physical_bounds_with_a_warning() {
    let d = scratch();
    std::fs::write(d.path().join("esxi.toml"), ESXI_SSD_LOG).unwrap();
    std::fs::write(d.path().join("impossible.toml"), IMPOSSIBLE).unwrap();
    let mut args = vec![
        "simulate",
        "--system",
        "impossible.toml",
        "--intervals=off",
        "--",
    ];
    args.extend_from_slice(&WORKLOAD);
    args.extend_from_slice(&["--format=json", "run"]);
    let r = tb(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    doc["kind"] = "measured".into();
    std::fs::write(
        d.path().join("fast.json"),
        serde_json::to_vec(&doc).unwrap(),
    )
    .unwrap();

    let r = tb(
        d.path(),
        &[
            "simulate",
            "calibrate",
            "--system",
            "esxi.toml",
            "--save-profile",
            "p.toml",
            "fast.json",
        ],
    );
    // The best physical fit is an answer: exit 0, the profile saved.
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(d.path().join("p.toml").exists());
    // Every value printed is within its bounds for this client.
    let access = sim::system::Protocol::EsxiNfs;
    for p in sim::profile::Param::ALL {
        let line = r
            .stdout
            .lines()
            .find(|l| l.starts_with(p.name()))
            .unwrap_or_else(|| panic!("{}:\n{}", p.name(), r.stdout));
        // The value column; "-" for a parameter that does not apply.
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Ok(v) = words[1].parse::<f64>() {
            let b = p.bounds(access);
            assert!(b.low <= v && v <= b.high, "{line}");
        }
    }
    let flush = r
        .stdout
        .lines()
        .find(|l| l.starts_with("commit_device.flush_ms"))
        .unwrap();
    assert!(
        flush.contains("at its bound"),
        "no ±1σ as if measured: {flush}"
    );
    // The warning names the parameter and the bound, and the gap per run.
    let bound = sim::profile::Param::CommitFlushMs.bounds(access).low;
    assert!(
        r.stderr.lines().any(|l| l.starts_with(&format!(
            "warning: commit_device.flush_ms is at its lower bound, {bound:.5} ms"
        ))),
        "{}",
        r.stderr
    );
    let gap = r
        .stderr
        .lines()
        .find(|l| l.starts_with("warning: fast.json: the best physical fit is off by"))
        .unwrap_or_else(|| panic!("{}", r.stderr));
    assert!(gap.contains("fsyncs/s -") && gap.contains(" %"), "{gap}");
    // The profile marks the value.
    let text = std::fs::read_to_string(d.path().join("p.toml")).unwrap();
    assert!(text.contains("at_bound = \"low\""), "{text}");
}

#[test]
fn a_matrix_cell_equal_to_the_calibrated_system_predicts_what_simulate_profile_does() {
    let d = scratch();
    std::fs::copy(
        example_system("reference-nas.toml"),
        d.path().join("reference-nas.toml"),
    )
    .unwrap();
    // Fitted on the reference NAS as it is (ssd-sata log, 2x10G).
    std::fs::write(
        d.path().join("p.toml"),
        "system = \"reference-nas\"\nmethod = \"by hand\"\nruns = []\n[parameters.\"commit_device.flush_ms\"]\nvalue = 0.3\nuncertainty = 0.01\n[parameters.\"link.rtt_ms\"]\nvalue = 0.09\nuncertainty = 0.005\n[parameters.\"server.cpu_us\"]\nvalue = 30.0\nuncertainty = 1.0\n",
    )
    .unwrap();
    let workload = [
        "--file-total-size=64M",
        "--file-test-mode=rndwr",
        "--file-fsync-all",
        "--threads=4",
        "--events=3000",
        "--rand-seed=5",
    ];
    let quoted: Vec<String> = workload.iter().map(|w| format!("\"{w}\"")).collect();
    std::fs::write(
        d.path().join("m.toml"),
        format!(
            "system = \"reference-nas.toml\"\nworkload = [{}]\n[[axis]]\nkey = \"log\"\nvalues = [\"ssd-sata\", \"nvme\"]\n[[axis]]\nkey = \"link\"\nvalues = [\"2x10G\", \"2x1G\"]\n",
            quoted.join(", ")
        ),
    )
    .unwrap();
    let r = tb(
        d.path(),
        &[
            "simulate",
            "matrix",
            "m.toml",
            "--profile",
            "p.toml",
            "--intervals=off",
            "--format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let writes = |log: &str, link: &str| {
        doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["labels"]["log"] == log && c["labels"]["link"] == link)
            .unwrap_or_else(|| panic!("no cell log={log} link={link}"))["rates"]["writes_per_s"]
            .as_f64()
            .unwrap()
    };
    let alone = |overrides: &[&str]| {
        let mut args = vec![
            "simulate",
            "--system",
            "reference-nas.toml",
            "--profile",
            "p.toml",
            "--intervals=off",
        ];
        args.extend_from_slice(overrides);
        args.push("--");
        args.extend_from_slice(&workload);
        args.extend_from_slice(&["--format=json", "run"]);
        let r = tb(d.path(), &args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        (doc["rates"]["writes_per_s"].as_f64().unwrap(), r.stderr)
    };
    let calibrated = writes("ssd-sata", "2x10G");
    // The same simulation: the same figure to the bit.
    assert_eq!(
        calibrated.to_bits(),
        alone(&[]).0.to_bits(),
        "the calibrated cell"
    );
    // An override is a one-cell axis: the fit carries the same way, and
    // says so.
    let (nvme, notes) = alone(&["--log", "nvme"]);
    assert_eq!(nvme.to_bits(), writes("nvme", "2x10G").to_bits());
    assert!(notes.contains("commit_device.flush_ms carried"), "{notes}");
    // A slower link class writes less, a faster log class more.
    assert!(writes("ssd-sata", "2x1G") < calibrated);
    assert!(writes("nvme", "2x10G") > calibrated);
}

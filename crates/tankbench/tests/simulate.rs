//! `tankbench simulate` through the binary: a prediction of a fileio run on a
//! described system (no peers needed; the simulated time is kept short).

mod common;

use common::{listing, scratch, tb, Run};
use std::path::{Path, PathBuf};

/// The repository's example systems.
fn system(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/systems")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The reference user's workload, 5 simulated seconds.
const RNDRW: [&str; 8] = [
    "--file-total-size=4G",
    "--file-test-mode=rndrw",
    "--file-block-size=4K",
    "--threads=4",
    "--file-fsync-all",
    "--time=5",
    "--rand-seed=1",
    "run",
];

/// `tankbench simulate <own> -- <RNDRW with extra before run>` in `dir`.
fn simulate(dir: &Path, own: &[&str], extra: &[&str]) -> Run {
    let sys = system("reference-nas.toml");
    let mut args = vec!["simulate", "--system", &sys];
    args.extend_from_slice(own);
    args.push("--");
    args.extend_from_slice(&RNDRW[..RNDRW.len() - 1]);
    args.extend_from_slice(extra);
    args.push("run");
    tb(dir, &args)
}

fn json(r: &Run) -> serde_json::Value {
    assert_eq!(r.code, 0, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

fn count(v: &serde_json::Value, what: &str) -> f64 {
    v["counts"][what].as_f64().expect(what)
}

/// Refused: exit 1, one line on stderr naming `option`, nothing on stdout,
/// nothing written in the working directory.
fn refused(r: &Run, dir: &Path, option: &str) {
    assert_eq!(r.code, 1, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(option),
        "{option} not named: {}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(listing(dir).is_empty(), "{:?}", listing(dir));
}

#[test]
fn reference_system_prints_a_prediction_in_sysbench_layout() {
    let d = scratch();
    let r = simulate(d.path(), &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let first = r.stdout.lines().next().unwrap_or("");
    assert!(first.starts_with("PREDICTION"), "{first}");
    for part in [
        "reference-nas",
        "3xraidz2-8",
        "log ssd-sata",
        "2x10G",
        "esxi-nfs",
    ] {
        assert!(first.contains(part), "{part} missing from: {first}");
    }
    for section in [
        "File operations:",
        "    reads/s:",
        "Throughput:",
        "    written, MiB/s:",
        "General statistics:",
        "    total number of events:",
        "Latency (ms):",
        "         95th percentile:",
        "Threads fairness:",
        "Latency by operation (ms):",
    ] {
        assert!(
            r.stdout.contains(section),
            "{section} missing:\n{}",
            r.stdout
        );
    }
    assert!(
        listing(d.path()).is_empty(),
        "a text prediction wrote files"
    );
}

#[test]
fn json_is_a_predicted_result_with_rndrw_proportions() {
    let d = scratch();
    let v = json(&simulate(d.path(), &[], &["--format=json"]));
    assert_eq!(v["kind"], "predicted");
    let ratio = count(&v, "reads") / count(&v, "writes");
    assert!((ratio - 1.5).abs() < 0.01, "reads/writes = {ratio}");
    assert_eq!(
        v["counts"]["fsyncs"].as_u64(),
        v["counts"]["writes"].as_u64()
    );
}

#[test]
fn a_faster_log_device_gives_more_writes() {
    let d = scratch();
    let writes = |log: &str| {
        let v = json(&simulate(d.path(), &["--log", log], &["--format=json"]));
        count(&v, "writes")
    };
    let (none, nvme) = (writes("none"), writes("nvme"));
    assert!(nvme > none, "nvme {nvme} writes, none {none}");
}

#[test]
fn overrides_reach_the_model() {
    let d = scratch();
    let v = json(&simulate(
        d.path(),
        &[
            "--layout=1xraidz3-24",
            "--log=none",
            "--link",
            "2x1G",
            "--client=linux-nfs",
        ],
        &["--format=json"],
    ));
    let labels = &v["labels"];
    assert_eq!(labels["layout"], "1xraidz3-24", "{labels}");
    assert_eq!(labels["slog"], "no", "{labels}");
    assert_eq!(labels["client"], "linux-nfs", "{labels}");
    assert!(
        labels["link"].as_str().unwrap_or("").starts_with("2x1G"),
        "{labels}"
    );
}

#[test]
fn bad_layout_is_one_line_naming_the_option() {
    let d = scratch();
    let r = simulate(d.path(), &["--layout", "3xraidz9-8"], &[]);
    refused(&r, d.path(), "--layout");
    assert!(r.stderr.contains("raidz2-WIDTH"), "{}", r.stderr);
}

#[test]
fn bad_client_is_one_line_with_the_accepted_values() {
    let d = scratch();
    let r = simulate(d.path(), &["--client", "smb"], &[]);
    refused(&r, d.path(), "--client");
    assert!(r.stderr.contains("linux-nfs"), "{}", r.stderr);
}

#[test]
fn unknown_system_field_is_one_line() {
    let d = scratch();
    let path = d.path().join("bad.toml");
    std::fs::write(&path, "name = \"x\"\n[pool]\nlayuot = \"1xmirror-2\"\n").expect("write");
    let sys = path.to_string_lossy().into_owned();
    let r = tb(
        d.path(),
        &[
            "simulate",
            "--system",
            &sys,
            "--",
            "--file-test-mode=rndrw",
            "--time=5",
            "run",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("layuot"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert_eq!(listing(d.path()).len(), 1, "only the system file");
}

#[test]
fn prepare_and_cleanup_are_refused() {
    for command in ["prepare", "cleanup"] {
        let d = scratch();
        let sys = system("local-mirror.toml");
        let r = tb(
            d.path(),
            &[
                "simulate",
                "--system",
                &sys,
                "--",
                "--file-total-size=8M",
                command,
            ],
        );
        refused(&r, d.path(), "run");
    }
}

#[test]
fn a_bad_fileio_option_is_fileios_error() {
    let d = scratch();
    // fileio's own check and message (sysbench 1.0.20's wording, which names
    // the mode rather than the option).
    let r = simulate(d.path(), &[], &["--file-test-mode=sideways"]);
    refused(&r, d.path(), "Invalid IO operations mode: sideways");
}

#[test]
fn save_writes_one_record_that_results_lists() {
    let d = scratch();
    let r = simulate(d.path(), &[], &["--save=store", "--label=cell=a"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let records = listing(&d.path().join("store"));
    assert_eq!(records.len(), 1, "{records:?}");
    let listed = tb(d.path(), &["results", "store"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    for part in ["cell=a", "layout=3xraidz2-8", "(predicted)"] {
        assert!(listed.stdout.contains(part), "{part}:\n{}", listed.stdout);
    }
}

#[test]
fn json_file_is_written_once_and_never_replaced() {
    let d = scratch();
    let r = simulate(d.path(), &[], &["--json=p.json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("p.json")).expect("p.json"))
            .expect("json");
    assert_eq!(doc["kind"], "predicted");
    let before = std::fs::read(d.path().join("p.json")).expect("p.json");
    let again = simulate(d.path(), &[], &["--json=p.json"]);
    assert_eq!(again.code, 1, "{}", again.stdout);
    assert!(again.stderr.contains("--json"), "{}", again.stderr);
    assert_eq!(
        std::fs::read(d.path().join("p.json")).expect("p.json"),
        before
    );
}

#[test]
fn an_unmodelled_io_mode_is_one_line() {
    let d = scratch();
    let r = simulate(d.path(), &[], &["--file-io-mode=async"]);
    refused(&r, d.path(), "--file-io-mode");
    assert_eq!(r.stderr.matches("simulate:").count(), 1, "{}", r.stderr);
}

#[test]
fn a_bad_log_override_names_the_option_and_the_devices() {
    let d = scratch();
    let r = simulate(d.path(), &["--log=floppy"], &[]);
    refused(&r, d.path(), "--log");
    assert!(r.stderr.contains("ssd-sata"), "{}", r.stderr);
}

#[test]
fn sysbench_percentile_option_reaches_the_report() {
    let d = scratch();
    let off = simulate(d.path(), &[], &["--percentile=0"]);
    assert_eq!(off.code, 0, "{}", off.stderr);
    assert!(
        off.stdout
            .contains("         percentile stats:               disabled"),
        "{}",
        off.stdout
    );
    let p90 = simulate(d.path(), &[], &["--percentile=90"]);
    assert_eq!(p90.code, 0, "{}", p90.stderr);
    assert!(
        p90.stdout.contains("         90th percentile: "),
        "{}",
        p90.stdout
    );
}

//! `tankbench simulate` through the binary: a prediction of a fileio run on a
//! described system (no peers needed; the simulated time is kept short).

mod common;

use common::{example_system, listing, mkfifo, refused_naming, scratch, tb, Run};
use std::path::Path;

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
    simulate_on(dir, &example_system("reference-nas.toml"), own, extra)
}

/// [`simulate`] on the system file `sys`.
fn simulate_on(dir: &Path, sys: &str, own: &[&str], extra: &[&str]) -> Run {
    let mut args = vec!["simulate", "--system", sys];
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
#[track_caller]
fn refused(r: &Run, dir: &Path, option: &str) {
    refused_keeping(r, option);
    assert!(listing(dir).is_empty(), "{:?}", listing(dir));
}

/// [`simulate`] with `own` and `extra` in a fresh directory, refused as
/// [`refused`] says, naming `option`.
#[track_caller]
fn simulation_refused(own: &[&str], extra: &[&str], option: &str) -> Run {
    let d = scratch();
    let r = simulate(d.path(), own, extra);
    refused(&r, d.path(), option);
    r
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
        "log flash-unknown",
        "2x10G",
        "esxi-6.5-nfs",
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
    let r = simulation_refused(&["--layout", "3xraidz9-8"], &[], "--layout");
    assert!(r.stderr.contains("raidz2-WIDTH"), "{}", r.stderr);
}

#[test]
fn bad_client_is_one_line_with_the_accepted_values() {
    let r = simulation_refused(&["--client", "nfs4"], &[], "--client");
    assert!(r.stderr.contains("linux-nfs"), "{}", r.stderr);
}

#[test]
fn every_client_preset_is_accepted_on_the_command_line() {
    let d = scratch();
    for client in [
        "local",
        "linux-nfs",
        "esxi-nfs",
        "esxi-6.5-nfs",
        "iscsi",
        "smb",
    ] {
        let r = simulate(d.path(), &["--client", client], &["--format=json"]);
        let v = json(&r);
        assert!(count(&v, "writes") > 0.0, "{client}: {}", r.stdout);
    }
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
        let sys = example_system("local-mirror.toml");
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
    // fileio's own check and message (sysbench 1.0.20's wording, which names
    // the mode rather than the option).
    simulation_refused(
        &[],
        &["--file-test-mode=sideways"],
        "Invalid IO operations mode: sideways",
    );
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
fn disk_trace_writes_the_lab_traces_format_once_and_never_replaces_it() {
    let d = scratch();
    let r = simulate(
        d.path(),
        &["--intervals", "off", "--disk-trace", "t.txt"],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("disk requests to t.txt"), "{}", r.stderr);
    let text = std::fs::read_to_string(d.path().join("t.txt")).expect("t.txt");
    // The reference NAS: 24 pool disks (0-23) and its log device (24).
    let mut disks = std::collections::BTreeSet::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        assert_eq!(f.len(), 6, "{line}");
        let (at, done): (u64, u64) = (f[0].parse().unwrap(), f[4].parse().unwrap());
        assert!(done >= at, "{line}");
        disks.insert(f[1].parse::<usize>().unwrap());
        match f[2] {
            "F" => assert_eq!((f[3], f[5]), ("0", "-"), "{line}"),
            "R" | "W" => assert!(f[5].parse::<u64>().is_ok(), "{line}"),
            other => panic!("op {other}: {line}"),
        }
    }
    assert!(
        disks.contains(&24) && disks.iter().all(|&k| k <= 24),
        "{disks:?}"
    );
    let before = std::fs::read(d.path().join("t.txt")).expect("t.txt");
    let again = simulate(d.path(), &["--disk-trace", "t.txt"], &[]);
    assert_eq!(again.code, 1, "{}", again.stdout);
    assert_eq!(again.stderr.lines().count(), 1, "{}", again.stderr);
    assert!(again.stderr.contains("--disk-trace"), "{}", again.stderr);
    assert_eq!(
        std::fs::read(d.path().join("t.txt")).expect("t.txt"),
        before
    );
    // One prediction only: a table of them is refused, nothing written.
    let table = simulate(
        d.path(),
        &[
            "--layout",
            "2xraidz2-12,3xraidz2-8",
            "--disk-trace",
            "u.txt",
        ],
        &[],
    );
    assert_eq!(table.code, 1, "{}", table.stdout);
    assert!(table.stderr.contains("--disk-trace"), "{}", table.stderr);
    assert!(!d.path().join("u.txt").exists());
}

/// `scripts/pool-trace-phases TRACE ARGS`.
fn pool_trace_phases(trace: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(testkit::workspace_root().join("scripts/pool-trace-phases"))
        .arg(trace)
        .args(args)
        .output()
        .expect("python3 runs scripts/pool-trace-phases")
}

/// `scripts/pool-trace-phases` reads the simulator's trace: its table's
/// flushes and writes a second are the trace's own, counted here.
#[test]
fn pool_trace_phases_counts_a_simulated_trace_second_by_second() {
    let d = scratch();
    let r = simulate(
        d.path(),
        &[
            "--intervals",
            "off",
            "--log",
            "none",
            "--disk-trace",
            "t.txt",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(d.path().join("t.txt")).expect("t.txt");
    let requests: Vec<(u64, &str)> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[0].parse().unwrap(), f[2])
        })
        .collect();
    let first = requests.iter().map(|r| r.0).min().unwrap();
    let (mut flushes, mut writes) = (
        std::collections::BTreeMap::new(),
        std::collections::BTreeMap::new(),
    );
    for &(at, op) in &requests {
        let second = (at - first) / 1_000_000_000;
        match op {
            "F" => *flushes.entry(second).or_insert(0u64) += 1,
            "W" => *writes.entry(second).or_insert(0u64) += 1,
            _ => {}
        }
    }
    let out = pool_trace_phases(&d.path().join("t.txt"), &["--flushes-per-round", "2"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    // Whole seconds only (5 simulated seconds, the last one partial).
    assert!(rows.len() >= 3, "{stdout}");
    for row in &rows {
        let second: u64 = row[0].parse().unwrap();
        let f = flushes.get(&second).copied().unwrap_or(0);
        assert_eq!(row[1], f.to_string(), "second {second}: {stdout}");
        assert_eq!(row[2], format!("{:.1}", f as f64 / 2.0), "{stdout}");
        let w = writes.get(&second).copied().unwrap_or(0);
        assert_eq!(row[3], w.to_string(), "second {second}: {stdout}");
    }
    // Without a log device every commit flushes the pool: every second
    // between syncs has flushes.
    assert!(rows.iter().all(|r| r[1] != "0"), "{stdout}");
    assert!(stdout.contains("between txg syncs:"), "{stdout}");
    // Bad input: one line naming the option, exit status 1.
    let bad = pool_trace_phases(&d.path().join("t.txt"), &["--flushes-per-round", "0"]);
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--flushes-per-round"), "{stderr}");
}

#[test]
fn an_unmodelled_io_mode_is_one_line() {
    let r = simulation_refused(&[], &["--file-io-mode=async"], "--file-io-mode");
    assert_eq!(r.stderr.matches("simulate:").count(), 1, "{}", r.stderr);
}

#[test]
fn a_bad_log_override_names_the_option_and_the_devices() {
    let r = simulation_refused(&["--log=floppy"], &[], "--log");
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

/// `tankbench simulate` with comma lists in `own`, the reference workload
/// cut to `--time=1`, `extra` before `run`.
fn simulate_matrix(dir: &Path, own: &[&str], extra: &[&str]) -> Run {
    let mut words: Vec<&str> = RNDRW[..RNDRW.len() - 1]
        .iter()
        .copied()
        .filter(|w| !w.starts_with("--time="))
        .collect();
    words.push("--time=1");
    words.extend_from_slice(extra);
    words.push("run");
    let sys = example_system("reference-nas.toml");
    let mut args = vec!["simulate", "--system", &sys];
    args.extend_from_slice(own);
    args.push("--");
    args.extend_from_slice(&words);
    tb(dir, &args)
}

const TWO_BY_TWO: [&str; 4] = [
    "--layout",
    "1xraidz3-24,3xraidz2-8",
    "--log",
    "none,ssd-sata",
];

#[test]
fn comma_lists_print_one_table_row_per_cell() {
    let d = scratch();
    let r = simulate_matrix(d.path(), &TWO_BY_TWO, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    for column in [
        "layout",
        "log",
        "reads/s",
        "writes/s",
        "read MiB/s",
        "write MiB/s",
        "avg lat ms",
        "p95 ms",
    ] {
        assert!(lines[0].contains(column), "{column} missing: {}", lines[0]);
    }
    assert!(lines[2].starts_with("1xraidz3-24  none"), "{}", r.stdout);
    assert!(
        lines[5].starts_with("3xraidz2-8   ssd-sata"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("PREDICTION (simulated, not measured)"));
    assert!(r.stderr.contains("predicted 4 cell(s) in"), "{}", r.stderr);
    assert!(listing(d.path()).is_empty(), "a table wrote files");
}

#[test]
fn a_bad_axis_value_is_one_line_naming_the_option_and_accepted_values() {
    let d = scratch();
    let r = simulate_matrix(
        d.path(),
        &["--layout", "3xraidz2-8,2xraidz9-4"],
        &["--save=store"],
    );
    refused(&r, d.path(), "--layout '2xraidz9-4'");
    assert!(r.stderr.contains("raidz2-WIDTH"), "{}", r.stderr);
    assert!(!d.path().join("store").exists());
    let r = simulate_matrix(d.path(), &["--client", "esxi-nfs,nfs3"], &[]);
    refused(&r, d.path(), "--client 'nfs3'");
    assert!(r.stderr.contains("linux-nfs"), "{}", r.stderr);
    let r = simulate_matrix(d.path(), &["--log", "none,tape"], &[]);
    refused(&r, d.path(), "--log 'tape'");
    assert!(r.stderr.contains("ssd-sata"), "{}", r.stderr);
}

#[test]
fn matrix_json_has_every_cell_with_distinct_labels() {
    let d = scratch();
    let v = json(&simulate_matrix(d.path(), &TWO_BY_TWO, &["--format=json"]));
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 4);
    let mut labels: Vec<String> = results.iter().map(|r| r["labels"].to_string()).collect();
    labels.sort();
    labels.dedup();
    assert_eq!(labels.len(), 4, "{labels:?}");
    for r in results {
        assert_eq!(r["kind"], "predicted");
    }
    assert_eq!(results[1]["labels"]["log"], "ssd-sata");
    assert_eq!(results[1]["labels"]["layout"], "1xraidz3-24");
}

#[test]
fn matrix_save_stores_every_cell_as_a_prediction() {
    let d = scratch();
    let r = simulate_matrix(d.path(), &TWO_BY_TWO, &["--save=store", "--label=run=m"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("saved 4 prediction(s)"), "{}", r.stderr);
    let stored = listing(&d.path().join("store"));
    assert_eq!(stored.len(), 4, "{stored:?}");
    let listed = tb(d.path(), &["results", "store"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    assert_eq!(
        listed.stdout.matches("run=m").count(),
        4,
        "{}",
        listed.stdout
    );
}

#[test]
fn the_matrix_file_form_runs_the_reference_cells() {
    let d = scratch();
    let m = d.path().join("m.toml");
    let example = std::fs::read_to_string(example_system("reference-matrix.toml")).unwrap();
    // The shipped matrix, its system found next to it, cut to one second.
    let text = example
        .replace(
            "\"reference-nas.toml\"",
            &format!("{:?}", example_system("reference-nas.toml")),
        )
        .replace("--time=240", "--time=1");
    std::fs::write(&m, text).unwrap();
    let r = simulate_matrix_file(d.path(), &["--format=csv"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].starts_with("\"layout\",\"log\",\"link\",\"client\",\"reads/s\""),
        "{}",
        lines[0]
    );
    assert_eq!(lines.len(), 13, "{}", r.stdout);
    let r = simulate_matrix_file(d.path(), &["--format=xml"]);
    // clap's refusal of a value: the option, the value and the accepted ones.
    refused_keeping(&r, "invalid value 'xml' for '--format");
    refused_keeping(&r, "text, markdown, csv, json");
    let r = tb(d.path(), &["simulate", "matrix", "missing.toml"]);
    refused_keeping(&r, "missing.toml");
    // Output options belong on the command line, not in the workload.
    let text = std::fs::read_to_string(&m).unwrap();
    std::fs::write(
        &m,
        text.replace("\"--time=1\"", "\"--time=1\", \"--save=x\""),
    )
    .unwrap();
    let r = simulate_matrix_file(d.path(), &[]);
    refused_keeping(&r, "--save");
    assert!(!d.path().join("x").exists());
}

/// `tankbench simulate matrix m.toml <opts>` in `dir`.
fn simulate_matrix_file(dir: &Path, opts: &[&str]) -> Run {
    let mut args = vec!["simulate", "matrix", "m.toml"];
    args.extend_from_slice(opts);
    tb(dir, &args)
}

/// Refused with one line naming `what`, nothing on stdout.
#[track_caller]
fn refused_keeping(r: &Run, what: &str) {
    refused_naming(r, &[what]);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

#[test]
fn plan_prints_the_simulators_table_per_layout() {
    let d = scratch();
    let fileio = "--file-total-size=4G --file-test-mode=rndrw --file-block-size=4K --file-fsync-all --time=240 --rand-seed=1";
    let layouts = "1xraidz3-24,3xraidz2-8";
    let r = tb(
        d.path(),
        &[
            "plan", "--disks", "24x8TB", "--log", "10GB", "--link", "2x10G", "--ram", "32GiB",
            "--layout", layouts, "--fileio", fileio,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let table = r
        .stdout
        .split("Predicted workload by layout:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no predicted table:\n{}", r.stdout));
    let rows: Vec<&str> = table
        .lines()
        .skip(2)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 4, "{table}");
    // The SLOG row of 3xraidz2-8 is the simulator's prediction of the same
    // system over the plan's 4,000 events, counted as plan counts them
    // (from the end of the first txg sync). The same system: plan
    // builds it from its options and names no platform (today's pipelined
    // ZIL), where the reference box of 2017 is FreeNAS 11's.
    let reference = std::fs::read_to_string(example_system("reference-nas.toml")).unwrap();
    let todays: String = reference
        .lines()
        .filter(|l| !l.trim_start().starts_with("platform"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(todays, reference, "the reference names its platform");
    let todays_path = d.path().join("reference-today.toml");
    std::fs::write(&todays_path, todays).unwrap();
    let sim = simulate_on(
        d.path(),
        todays_path.to_str().unwrap(),
        &[
            "--layout",
            "3xraidz2-8",
            "--log",
            "ssd-sata",
            "--link",
            "2x10G",
            "--count-after-first-sync",
        ],
        &["--time=240", "--events=4000", "--format=json"],
    );
    let v = json(&sim);
    // It says from where it counted, on stderr and in its notes.
    assert!(sim.stderr.contains("note: counted from "), "{}", sim.stderr);
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "predicted_after_warmup"),
        "{}",
        sim.stdout
    );
    let writes = format!("{:.0}", v["rates"]["writes_per_s"].as_f64().unwrap());
    let row = rows
        .iter()
        .find(|l| l.starts_with("3xraidz2-8   ssd-sata"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        row.contains(&format!(" {writes} ")),
        "{writes} not in: {row}"
    );
    let bad = tb(
        d.path(),
        &[
            "plan",
            "--disks",
            "24x8TB",
            "--fileio",
            "--file-test-mode=sideways",
        ],
    );
    refused_keeping(&bad, "--fileio");
    assert!(bad.stderr.contains("sideways"), "{}", bad.stderr);
}

#[test]
fn plan_says_disk_sync_ms_changes_no_figure() {
    let d = scratch();
    let args = [
        "plan",
        "--disks",
        "24x8TB",
        "--layout",
        "3xraidz2-8",
        "--format",
        "json",
    ];
    let plain = tb(d.path(), &args);
    let mut with = args.to_vec();
    with.extend(["--disk-sync-ms", "9"]);
    let overridden = tb(d.path(), &with);
    assert_eq!(overridden.code, 0, "{}", overridden.stderr);
    assert!(
        overridden
            .stderr
            .contains("--disk-sync-ms changes no figure"),
        "{}",
        overridden.stderr
    );
    let predicted = |r: &Run| -> serde_json::Value {
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        v["entries"][0]["performance"]["predicted"].clone()
    };
    assert!(predicted(&plain)["writes_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(predicted(&plain), predicted(&overridden));
}

#[test]
fn plan_json_is_schema_2_with_the_predicted_figures() {
    let d = scratch();
    let r = tb(
        d.path(),
        &[
            "plan",
            "--disks",
            "24x8TB",
            "--log",
            "10GB",
            "--link",
            "2x1G",
            "--layout",
            "2xraidz2-12",
            "--format",
            "json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["schema_version"], 2);
    let perf = &v["entries"][0]["performance"];
    for key in ["predicted", "predicted_with_log"] {
        for figure in [
            "writes_per_s",
            "read_mib_per_s",
            "write_mib_per_s",
            "write_latency_ms",
        ] {
            assert!(
                perf[key][figure].as_f64().is_some_and(|x| x > 0.0),
                "{key}.{figure}: {perf}"
            );
        }
    }
    assert!(perf.get("sync_write_iops").is_none(), "{perf}");
    assert!(v["prediction_assumptions"][0]
        .as_str()
        .unwrap_or("")
        .contains("simulator"));
}

// ---- Runaway simulations (issue 19): each ends in one line and exit 1,
// or in a bounded result that says where it stopped, in a few seconds.

/// A system whose every request costs 0 ns: simulated time never advances.
const ZERO_COST: &str = r#"
name = "zero"
[client]
protocol = "local"
cpu_us = 0.0
cache_hit_us = 0.0
[server]
ram = "64G"
cpu_us = 0.0
cpu_us_per_mib = 0.0
[pool]
layout = "1xstripe"
disk_size = "1T"
disk = "ssd-sata"
"#;

const SMALL_READS: [&str; 3] = [
    "--file-total-size=16M",
    "--file-test-mode=rndrd",
    "--rand-seed=1",
];

fn simulate_small(dir: &Path, own: &[&str], extra: &[&str]) -> Run {
    let mut args = vec!["simulate"];
    args.extend_from_slice(own);
    args.push("--");
    args.extend_from_slice(&SMALL_READS);
    args.extend_from_slice(extra);
    args.push("run");
    tb(dir, &args)
}

#[test]
fn a_zero_cost_system_is_refused_naming_its_fields() {
    let d = scratch();
    std::fs::write(d.path().join("zero.toml"), ZERO_COST).unwrap();
    let r = simulate_small(d.path(), &["--system", "zero.toml"], &["--time=10"]);
    refused_naming(
        &r,
        &[
            "simulated time stopped",
            "client.cpu_us = 0",
            "server.cpu_us = 0",
            "server.cpu_us_per_mib = 0",
        ],
    );
    // The same through a matrix of overrides.
    let r = simulate_small(
        d.path(),
        &["--system", "zero.toml", "--ram", "32G,64G"],
        &["--time=10"],
    );
    refused_naming(&r, &["simulated time stopped", "client.cache_hit_us = 0"]);
}

#[test]
fn a_fifo_or_a_device_as_system_or_profile_is_refused_at_once() {
    let d = scratch();
    mkfifo(&d.path().join("fifo"));
    let ext4 = example_system("this-machine-ext4.toml");
    for own in [
        vec!["--system", "fifo"],
        vec!["--system", "/dev/zero"],
        vec!["--system", &ext4, "--profile", "fifo"],
        vec!["--system", &ext4, "--profile", "/dev/zero"],
        vec!["--system", "."],
    ] {
        let started = std::time::Instant::now();
        let r = simulate_small(d.path(), &own, &["--time=1"]);
        assert!(started.elapsed().as_secs() < 10, "{own:?} took too long");
        refused_naming(
            &r,
            &[own[own.len() - 2], own[own.len() - 1], "not a regular file"],
        );
    }
    let r = tb(d.path(), &["simulate", "matrix", "fifo"]);
    refused_naming(&r, &["fifo", "not a regular file"]);
    let r = tb(d.path(), &["simulate", "matrix", "/dev/zero"]);
    refused_naming(&r, &["/dev/zero", "not a regular file"]);
    // A matrix whose system file is a FIFO.
    std::fs::write(
        d.path().join("m.toml"),
        "system = \"fifo\"\nworkload = [\"--file-test-mode=rndrd\", \"--time=1\"]\n",
    )
    .unwrap();
    let r = simulate_matrix_file(d.path(), &[]);
    refused_naming(&r, &["m.toml", "fifo", "not a regular file"]);
}

#[test]
fn a_config_file_above_16_mib_is_refused() {
    let d = scratch();
    let f = std::fs::File::create(d.path().join("huge.toml")).unwrap();
    f.set_len((16 << 20) + 1).unwrap();
    let r = simulate_small(d.path(), &["--system", "huge.toml"], &["--time=1"]);
    refused_naming(&r, &["--system", "huge.toml", "larger than 16777216 bytes"]);
}

#[test]
fn runaway_workloads_are_refused_before_anything_is_simulated() {
    let d = scratch();
    let ext4 = example_system("this-machine-ext4.toml");
    let r = simulate_small(d.path(), &["--system", &ext4], &["--time=1000000000"]);
    refused_naming(&r, &["--time=1000000000", "at most 86400"]);
    let r = simulate_small(d.path(), &["--system", &ext4], &["--threads=1000000000"]);
    refused_naming(&r, &["--threads=1000000000", "at most 4096"]);
    let r = simulate_small(
        d.path(),
        &["--system", &ext4],
        &["--time=0", "--events=1000000000"],
    );
    refused_naming(&r, &["--events=1000000000", "--max-sim-events"]);
    let r = simulate_small(d.path(), &["--system", &ext4, "--max-sim-events", "0"], &[]);
    refused_naming(&r, &["--max-sim-events=0"]);
    // A huge client page cache over a file set of 512-byte blocks: the
    // cache model's size is refused naming the fields.
    let r = tb(
        d.path(),
        &[
            "simulate",
            "--system",
            &example_system("reference-nas.toml"),
            "--client",
            "linux-nfs",
            "--",
            "--file-total-size=64G",
            "--file-block-size=512",
            "--file-test-mode=rndrd",
            "--time=1",
            "run",
        ],
    );
    refused_naming(&r, &["--file-block-size", "client.page_cache"]);
    // The same workloads in a matrix of overrides and a matrix file.
    let r = simulate_small(
        d.path(),
        &["--system", &ext4, "--ram", "8G,16G"],
        &["--time=1000000000"],
    );
    refused_naming(&r, &["--time=1000000000"]);
    std::fs::write(
        d.path().join("m.toml"),
        format!(
            "system = \"{ext4}\"\nworkload = [\"--file-test-mode=rndrd\", \"--time=1000000000\"]\n[[axis]]\nkey = \"ram\"\nvalues = [\"8G\", \"16G\"]\n"
        ),
    )
    .unwrap();
    let r = simulate_matrix_file(d.path(), &[]);
    refused_naming(&r, &["--time=1000000000"]);
}

/// A day of [`SMALL_READS`] on this machine's ext4 with `own` (an event
/// budget among them), as JSON: it must succeed and say `says` on stderr.
fn a_day_within_a_budget(own: &[&str], says: &str) -> serde_json::Value {
    let d = scratch();
    let ext4 = example_system("this-machine-ext4.toml");
    let mut args = vec!["--system", ext4.as_str()];
    args.extend_from_slice(own);
    let r = simulate_small(d.path(), &args, &["--time=86400", "--format=json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains(says), "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

#[test]
fn a_long_run_stops_at_its_event_budget_and_says_so() {
    let doc = a_day_within_a_budget(
        &["--max-sim-events", "20000"],
        "stopped at the simulation budget of 20000 events",
    );
    assert_eq!(doc["counts"]["events"], 20000);
    assert!(doc["total_time_s"].as_f64().unwrap() < 86400.0);
    let codes: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["code"].as_str())
        .collect();
    assert!(codes.contains(&"predicted_budget_reached"), "{codes:?}");
}

#[test]
fn matrices_are_counted_before_they_are_expanded() {
    let d = scratch();
    let ext4 = example_system("this-machine-ext4.toml");
    // 600 x 400 = 240,000 cells.
    let rams: Vec<String> = (1..=600).map(|g| format!("\"{g}G\"")).collect();
    let cores: Vec<String> = (0..400).map(|_| "2".to_string()).collect();
    std::fs::write(
        d.path().join("big.toml"),
        format!(
            "system = \"{ext4}\"\nworkload = [\"--file-test-mode=rndrd\", \"--time=1\"]\n[[axis]]\nkey = \"ram\"\nvalues = [{}]\n[[axis]]\nkey = \"server.cores\"\nvalues = [{}]\n",
            rams.join(","),
            cores.join(",")
        ),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let r = tb(d.path(), &["simulate", "matrix", "big.toml"]);
    refused_naming(&r, &["big.toml", "240000 cells", "--max-cells"]);
    assert!(started.elapsed().as_secs() < 10);
    // 2.4 M cells from the command line's comma lists.
    let many: Vec<String> = (1..=1550).map(|g| format!("{g}G")).collect();
    let many = many.join(",");
    let r = simulate_small(
        d.path(),
        &["--system", &ext4, "--ram", &many, "--layout", &many],
        &["--time=1"],
    );
    refused_naming(&r, &["2402500 cells", "--max-cells"]);
    // --max-cells lowers (or raises) the limit.
    let r = simulate_small(
        d.path(),
        &["--system", &ext4, "--ram", "8G,16G,32G", "--max-cells", "2"],
        &["--time=1"],
    );
    refused_naming(&r, &["3 cells", "limit of 2"]);
}

#[test]
fn a_matrix_shares_its_event_budget_and_reports_the_cells_it_stopped() {
    let doc = a_day_within_a_budget(
        &["--ram", "8G,16G", "--max-sim-events", "40000"],
        "2 of 2 cell(s) stopped at their share (20000 events)",
    );
    for cell in doc["results"].as_array().unwrap() {
        assert_eq!(cell["counts"]["events"], 20000);
    }
}

#[test]
fn plan_fileio_takes_the_same_bounds_as_simulate() {
    let d = scratch();
    for (extra, named) in [
        ("--threads=1000000000", "at most 4096"),
        ("--time=1000000000", "at most 86400"),
        ("--events=1000000000", "--max-sim-events"),
    ] {
        let fileio = format!("--file-total-size=4G --file-test-mode=rndrw {extra}");
        let started = std::time::Instant::now();
        let r = tb(
            d.path(),
            &[
                "plan",
                "--disks",
                "24x8TB",
                "--layout",
                "3xraidz2-8",
                "--fileio",
                &fileio,
            ],
        );
        refused_naming(&r, &["--fileio", extra, named]);
        assert!(started.elapsed().as_secs() < 10, "{extra} took too long");
    }
}

#[test]
fn a_run_without_zfs_facts_is_refused_as_a_system_in_one_line() {
    let d = scratch();
    // A run on this scratch directory (not ZFS) records no ZFS facts.
    let r = tb(
        d.path(),
        &["fileio", "--file-total-size=1M", "--file-num=1", "prepare"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = tb(
        d.path(),
        &[
            "fileio",
            "--file-total-size=1M",
            "--file-num=1",
            "--file-test-mode=rndrd",
            "--time=1",
            "--json=run.json",
            "run",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = tb(
        d.path(),
        &[
            "simulate",
            "--system-from=run.json",
            "--",
            "--file-test-mode=rndrd",
            "run",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("--system-from run.json") && r.stderr.contains("no ZFS facts"),
        "{}",
        r.stderr
    );
    // --system and --system-from name one system.
    let r = tb(
        d.path(),
        &[
            "simulate",
            "--system=a.toml",
            "--system-from=run.json",
            "--",
            "--file-test-mode=rndrd",
            "run",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
}

/// `tankbench simulate` over the two links of the reference NAS with its
/// log device, `samples` interval samples (or `--intervals=off`), the
/// reference workload cut to one second.
fn link_matrix(dir: &Path, intervals: &[&str], extra: &[&str]) -> Run {
    let mut own = vec!["--log", "ssd-sata", "--link", "2x1G,2x10G"];
    own.extend_from_slice(intervals);
    simulate_matrix(dir, &own, extra)
}

/// The interval of figure `name` of a result's JSON: (low, point, high).
fn range_of(result: &serde_json::Value, name: &str) -> (f64, f64, f64) {
    let f = &result["prediction"]["figures"][name];
    let n = |k: &str| {
        f[k].as_f64()
            .unwrap_or_else(|| panic!("{name}.{k}: {result}"))
    };
    (n("low"), n("point"), n("high"))
}

#[test]
fn matrix_json_carries_each_cells_interval_and_what_to_measure_first() {
    let d = scratch();
    let v = json(&link_matrix(
        d.path(),
        &["--samples", "4"],
        &["--format=json"],
    ));
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    for r in results {
        assert_eq!(r["prediction"]["samples"], 4, "{r}");
        for name in [
            "reads_per_s",
            "writes_per_s",
            "event_mean_ms",
            "event_p95_ms",
        ] {
            let (low, point, high) = range_of(r, name);
            assert!(
                low <= point && point <= high,
                "{name}: {low} {point} {high}"
            );
        }
        // The typical value is the cell's own figure.
        assert_eq!(
            r["prediction"]["figures"]["writes_per_s"]["point"],
            r["rates"]["writes_per_s"]
        );
    }
    // Common random numbers: the cells differ only in the link, and the
    // faster link's interval is above the slower one's at both ends, as
    // its typical figure is.
    let (slow, fast) = (
        range_of(&results[0], "writes_per_s"),
        range_of(&results[1], "writes_per_s"),
    );
    assert!(
        results[1]["labels"]["link"]
            .as_str()
            .is_some_and(|l| l.starts_with("2x10G")),
        "{}",
        results[1]["labels"]
    );
    assert!(fast.1 > slow.1, "{slow:?} {fast:?}");
    assert!(fast.0 > slow.0 && fast.2 > slow.2, "{slow:?} {fast:?}");
    let first = v["measure_first"].as_array().expect("measure_first");
    assert!(!first.is_empty(), "{v}");
    assert_eq!(first[0]["cells"], 2);
    // Deterministic for the seed.
    let again = json(&link_matrix(
        d.path(),
        &["--samples", "4"],
        &["--format=json"],
    ));
    for (a, b) in again["results"].as_array().unwrap().iter().zip(results) {
        assert_eq!(a["prediction"], b["prediction"]);
    }
    assert_eq!(again["measure_first"], v["measure_first"]);
}

#[test]
fn matrix_text_shows_ranges_and_intervals_off_gives_the_point_table() {
    let d = scratch();
    let on = link_matrix(d.path(), &["--samples", "3"], &[]);
    assert_eq!(on.code, 0, "{}", on.stderr);
    let rows: Vec<&str> = on
        .stdout
        .lines()
        .filter(|l| l.starts_with("ssd-sata"))
        .collect();
    assert_eq!(rows.len(), 2, "{}", on.stdout);
    for row in &rows {
        // Seven figures, each "typical (low–high)".
        assert_eq!(row.matches('–').count(), 7, "{row}");
        assert_eq!(row.matches(" (").count(), 7, "{row}");
    }
    assert!(on.stdout.contains("80 % interval"), "{}", on.stdout);
    assert!(on.stdout.contains("Measure this first"), "{}", on.stdout);
    assert!(
        on.stderr.contains(", 3 interval samples each"),
        "{}",
        on.stderr
    );

    let off = link_matrix(d.path(), &["--intervals=off"], &[]);
    assert_eq!(off.code, 0, "{}", off.stderr);
    assert!(!off.stdout.contains('–'), "{}", off.stdout);
    assert!(!off.stdout.contains("Measure this first"), "{}", off.stdout);
    let off = json(&link_matrix(
        d.path(),
        &["--intervals=off"],
        &["--format=json"],
    ));
    for r in off["results"].as_array().unwrap() {
        assert!(r.get("prediction").is_none(), "{r}");
    }
    assert!(off.get("measure_first").is_none(), "{off}");
}

#[test]
fn the_matrix_file_form_takes_intervals_samples_and_saves_them() {
    let d = scratch();
    let m = d.path().join("m.toml");
    let text = format!(
        "system = {:?}\nworkload = [\"--file-total-size=64M\", \"--file-test-mode=rndwr\", \"--file-fsync-all\", \"--threads=2\", \"--time=1\"]\n[[axis]]\nkey = \"link\"\nvalues = [\"2x1G\", \"2x10G\"]\n",
        example_system("reference-nas.toml")
    );
    std::fs::write(&m, text).unwrap();
    let r = simulate_matrix_file(d.path(), &["--samples", "3", "--format=csv"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let header = r.stdout.lines().next().unwrap_or_default();
    assert!(
        header.contains("\"writes/s\",\"writes/s low\",\"writes/s high\""),
        "{header}"
    );
    let r = simulate_matrix_file(d.path(), &["--intervals=off", "--format=csv"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains(" low\""), "{}", r.stdout);
    let r = tb(
        d.path(),
        &["simulate", "matrix", "m.toml", "--samples", "1"],
    );
    refused_keeping(&r, "--samples=1: accepted: 2 or more");
    // The stored predictions carry their intervals.
    let r = simulate_matrix_file(d.path(), &["--samples", "3", "--save=store"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let stored = listing(&d.path().join("store"));
    assert_eq!(stored.len(), 2, "{stored:?}");
    for (name, _) in stored {
        let text = std::fs::read_to_string(d.path().join("store").join(name)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["prediction"]["samples"], 3, "{v}");
    }
}

#[test]
fn a_measured_log_device_is_read_beside_its_system_file() {
    // The system file names a tankbench slog result by a relative path; it
    // is found next to the system file, whatever the current directory.
    let d = scratch();
    let boxdir = d.path().join("box");
    std::fs::create_dir(&boxdir).unwrap();
    let fixture = testkit::workspace_root().join("crates/sim/tests/data/slog-vm-disk.json");
    std::fs::copy(&fixture, boxdir.join("slog.json")).unwrap();
    std::fs::write(
        boxdir.join("sys.toml"),
        "name = \"measured\"\nlog = { measured = \"slog.json\" }\n[client]\nprotocol = \"local\"\n[pool]\nlayout = \"1xmirror-2\"\n",
    )
    .unwrap();
    let r = tb(
        d.path(),
        &[
            "simulate",
            "--system=box/sys.toml",
            "--intervals=off",
            "--",
            "--file-test-mode=rndwr",
            "--file-fsync-all",
            "--time=5",
            "--format=json",
            "run",
        ],
    );
    let v = json(&r);
    // The VM disk's 4 KiB write + flush took 3.7 ms: a few hundred commits a second.
    let writes = v["rates"]["writes_per_s"].as_f64().unwrap();
    assert!((100.0..300.0).contains(&writes), "{writes} writes/s");
}

/// Issue 37: `--warmup` is refused in one line rather than taken and
/// ignored (a prediction has no warm-up), for one prediction and a matrix.
#[test]
fn warmup_is_refused_not_ignored() {
    let r = simulation_refused(&[], &["--time=10", "--warmup=2"], "--warmup=2");
    assert!(r.stderr.contains("is not simulated"), "{}", r.stderr);
    simulation_refused(
        &["--layout=1xraidz3-24,3xraidz2-8"],
        &["--time=10", "--warmup=2"],
        "--warmup=2",
    );
}

/// A mirrored log device: each log block waits for the slower member, so a
/// mirror whose second member is slower commits slower than its first alone;
/// a second member without a first is refused in one line.
#[test]
fn a_mirrored_log_waits_for_its_slower_member() {
    let d = scratch();
    let write = |name: &str, log: &str| {
        let path = d.path().join(name);
        std::fs::write(
            &path,
            format!("name = \"m\"\n{log}[pool]\nlayout = \"3xmirror-2\"\ndisk = \"hdd-7200\"\n"),
        )
        .expect("write");
        path.to_string_lossy().into_owned()
    };
    let one = write("one.toml", "log = \"ssd-sata\"\n");
    let mirrored = write(
        "mirror.toml",
        "log = \"ssd-sata\"\nlog_mirror = \"ssd-sata-noplp\"\n",
    );
    let writes = |sys: &str| {
        let v = json(&simulate_on(
            d.path(),
            sys,
            &["--intervals=off"],
            &["--format=json"],
        ));
        v["rates"]["writes_per_s"].as_f64().expect("writes_per_s")
    };
    let (w_one, w_mirror) = (writes(&one), writes(&mirrored));
    assert!(
        w_mirror < 0.8 * w_one,
        "a PLP SSD mirrored with a consumer one: {w_mirror} writes/s against {w_one} alone"
    );
    let lonely = write("lonely.toml", "log_mirror = \"ssd-sata\"\n");
    let e = tempfile::tempdir().expect("tempdir");
    let r = simulate_on(e.path(), &lonely, &[], &[]);
    refused(&r, e.path(), "log_mirror");
}

/// `--log-mirror`: what mirroring the log device costs, named in the header;
/// a comma list is a table; an unknown device is refused naming the option.
#[test]
fn log_mirror_asks_what_mirroring_the_log_costs() {
    let d = scratch();
    let one = json(&simulate(
        d.path(),
        &["--log", "ssd-sata", "--intervals=off"],
        &["--format=json"],
    ));
    let two = json(&simulate(
        d.path(),
        &[
            "--log",
            "ssd-sata",
            "--log-mirror",
            "ssd-sata-noplp",
            "--intervals=off",
        ],
        &["--format=json"],
    ));
    let writes = |v: &serde_json::Value| v["rates"]["writes_per_s"].as_f64().expect("writes");
    assert!(
        writes(&two) < writes(&one),
        "{} vs {}",
        writes(&two),
        writes(&one)
    );
    let text = simulate(
        d.path(),
        &[
            "--log",
            "ssd-sata",
            "--log-mirror",
            "ssd-sata",
            "--intervals=off",
        ],
        &[],
    );
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stdout.contains("log ssd-sata mirrored with ssd-sata"),
        "{}",
        text.stdout
    );
    let table = simulate(
        d.path(),
        &[
            "--log",
            "ssd-sata",
            "--log-mirror",
            "none,ssd-sata-noplp",
            "--intervals=off",
        ],
        &[],
    );
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(table.stdout.contains("ssd-sata-noplp"), "{}", table.stdout);
    simulation_refused(
        &["--log", "ssd-sata", "--log-mirror", "floppy"],
        &[],
        "--log-mirror",
    );
}

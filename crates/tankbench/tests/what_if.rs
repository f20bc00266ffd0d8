//! `simulate --baseline RUN` and `simulate matrix --baseline RUN` through
//! the binary (issue 36): a real measured run (tankbench's own, and
//! sysbench's and fio's reports recorded from the real tools) anchors the
//! prediction; what is not a baseline is refused in one line, exit 1.

mod common;

use common::{example_system, refused_naming, scratch, tb};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/data/import")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The workload of the recorded sysbench report
/// (sysbench-rndrw-4threads-fsyncall.txt: 128 files, 64 MiB, 4 KiB,
/// fsync after each write), short.
const SYSBENCH_WORKLOAD: [&str; 5] = [
    "--file-total-size=64M",
    "--file-block-size=4K",
    "--file-test-mode=rndrw",
    "--file-fsync-all",
    "--events=2000",
];

/// `simulate --baseline RUN --system ext4 <extra> -- <workload> run` in `dir`.
fn what_if(dir: &Path, run: &str, extra: &[&str], workload: &[&str]) -> common::Run {
    let system = example_system("this-machine-ext4.toml");
    let mut words = vec!["simulate", "--baseline", run, "--system", &system];
    words.extend_from_slice(extra);
    words.push("--");
    words.extend_from_slice(workload);
    words.push("run");
    tb(dir, &words)
}

/// A real tankbench run in `dir` (ext4 or whatever the scratch space is),
/// kept as `name`.
fn measure(dir: &Path, name: &str, workload: &[&str]) -> PathBuf {
    let json = dir.join(name);
    let json_opt = format!("--json={}", json.display());
    let mut words = vec!["fileio"];
    words.extend_from_slice(workload);
    for verb in ["prepare", "run", "cleanup"] {
        let mut w = words.clone();
        if verb == "run" {
            w.push(&json_opt);
        }
        w.push(verb);
        let r = tb(dir, &w);
        assert_eq!(r.code, 0, "{verb}: {}", r.stderr);
    }
    json
}

const OWN_WORKLOAD: [&str; 6] = [
    "--file-total-size=8M",
    "--file-num=2",
    "--file-test-mode=rndwr",
    "--file-fsync-all",
    "--time=1",
    "--threads=2",
];

#[test]
fn a_measured_run_anchors_the_prediction_and_is_shown_as_measured() {
    let d = scratch();
    let run = measure(d.path(), "a.json", &OWN_WORKLOAD);
    let measured: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&run).unwrap()).unwrap();
    let writes = measured["rates"]["writes_per_s"].as_f64().unwrap();
    let run = run.to_string_lossy().into_owned();
    // Another thread count: the one part of the workload that may change.
    let mut workload = OWN_WORKLOAD.to_vec();
    workload.push("--threads=8");
    let r = what_if(d.path(), &run, &[], &workload);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("PREDICTION FROM A MEASUREMENT"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!("baseline:  {run}")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("2 threads") && r.stdout.contains("8 threads"));
    assert!(r.stdout.contains("80 % interval"), "{}", r.stdout);
    // The JSON: the anchored figures, the measured one and the ratio.
    let mut json_words = workload.clone();
    json_words.push("--format=json");
    let r = what_if(d.path(), &run, &[], &json_words);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["kind"], "predicted");
    let w = &doc["anchor"]["figures"]["writes_per_s"];
    assert_eq!(w["measured"].as_f64(), Some(writes));
    let ratio = w["ratio"].as_f64().unwrap();
    let predicted = doc["rates"]["writes_per_s"].as_f64().unwrap();
    assert!(
        (predicted - writes * ratio).abs() < 1e-6 * predicted,
        "{doc}"
    );
    let i = &doc["prediction"]["figures"]["writes_per_s"];
    assert!(i["low"].as_f64() <= Some(predicted) && Some(predicted) <= i["high"].as_f64());

    // Its own configuration at its own thread count is the measurement.
    let mut own = OWN_WORKLOAD.to_vec();
    own.push("--format=json");
    let r = what_if(d.path(), &run, &[], &own);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["anchor"]["is_baseline"], true);
    assert_eq!(doc["rates"]["writes_per_s"].as_f64(), Some(writes));
}

#[test]
fn runs_measured_again_are_one_baseline_each_figure_their_median() {
    let d = scratch();
    let runs: Vec<PathBuf> = ["a.json", "b.json", "c.json"]
        .iter()
        .map(|n| measure(d.path(), n, &OWN_WORKLOAD))
        .collect();
    let mut writes: Vec<f64> = runs
        .iter()
        .map(|p| {
            let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
            v["rates"]["writes_per_s"].as_f64().unwrap()
        })
        .collect();
    writes.sort_by(f64::total_cmp);
    let names: Vec<String> = runs
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let system = example_system("this-machine-ext4.toml");
    let mut words = vec!["simulate"];
    for n in &names {
        words.extend(["--baseline", n.as_str()]);
    }
    words.extend(["--system", &system, "--"]);
    words.extend_from_slice(&OWN_WORKLOAD);
    words.extend(["--format=json", "run"]);
    let r = tb(d.path(), &words);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["anchor"]["is_baseline"], true);
    assert_eq!(doc["rates"]["writes_per_s"].as_f64(), Some(writes[1]));
    // The text names every run and their figures.
    words.retain(|w| *w != "--format=json");
    let r = tb(d.path(), &words);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("3 runs measured") && r.stdout.contains("median of 3 runs"),
        "{}",
        r.stdout
    );
    // A run of another thread count is not the same configuration again.
    let mut other = OWN_WORKLOAD.to_vec();
    other.push("--threads=1");
    let odd = measure(d.path(), "t1.json", &other);
    let odd = odd.to_string_lossy().into_owned();
    let mut words = vec!["simulate", "--baseline", &names[0], "--baseline", &odd];
    words.extend(["--system", &system, "--"]);
    words.extend_from_slice(&OWN_WORKLOAD);
    words.push("run");
    let r = tb(d.path(), &words);
    refused_naming(&r, &["--baseline", "--threads 1"]);
}

#[test]
fn reports_of_sysbench_and_fio_are_baselines_too() {
    let d = scratch();
    let r = what_if(
        d.path(),
        &fixture("sysbench-rndrw-4threads-fsyncall.txt"),
        &["--intervals=off", "--ram", "24G,2G"],
        &SYSBENCH_WORKLOAD,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A table: the baseline's row as measured (19832.85 reads/s in the
    // report), the other row from it.
    let measured_row = r
        .stdout
        .lines()
        .find(|l| l.starts_with("baseline (measured)"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(measured_row.contains("19833"), "{measured_row}");
    assert!(r.stdout.contains("baseline x change"), "{}", r.stdout);
    // fio's JSON: 4 files of 8 MiB, 1:1 mix, random data.
    let r = what_if(
        d.path(),
        &fixture("fio-randrw-4jobs-fsync1-group.json"),
        &["--intervals=off"],
        &[
            "--file-total-size=32M",
            "--file-num=4",
            "--file-test-mode=rndrw",
            "--file-rw-ratio=1",
            "--file-block-size=4K",
            "--file-fsync-all",
            "--file-data=random",
            "--events=2000",
            "--threads=16",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("4 threads") && r.stdout.contains("16 threads"));
}

#[test]
fn a_sysbench_0_4_report_gives_the_reference_users_twelve_cells() {
    // The reference user's box as it was measured (no log device, 2x1G),
    // and their workload's report from the sysbench of the time.
    let d = scratch();
    let nas = std::fs::read_to_string(example_system("reference-nas.toml")).unwrap();
    let measured = nas
        .replace("log = \"flash-unknown\"", "")
        .replace("link = \"2x10G\"", "link = \"2x1G\"");
    assert_ne!(measured, nas);
    let system = d.path().join("measured-cell.toml");
    std::fs::write(&system, measured).unwrap();
    let system = system.to_string_lossy().into_owned();
    let report = fixture("sysbench-0.4.12-rndrw-4threads-fsyncall.txt");
    let r = tb(
        d.path(),
        &[
            "simulate",
            "--baseline",
            &report,
            "--system",
            &system,
            "--intervals=off",
            "--layout",
            "1xraidz3-24,2xraidz2-12,3xraidz2-8",
            "--log",
            "none,flash-unknown",
            "--link",
            "2x1G,2x10G",
            "--",
            "--file-total-size=4G",
            "--file-test-mode=rndrw",
            "--file-block-size=4K",
            "--threads=4",
            "--file-fsync-all",
            "--time=60",
            "run",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("baseline "))
        .collect();
    assert_eq!(rows.len(), 12, "{}", r.stdout);
    // Its own cell is the report's counts over its time: 7042 writes in
    // 60.0124 s.
    let own = rows
        .iter()
        .find(|l| l.starts_with("baseline (measured)"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(
        own.contains("3xraidz2-8") && own.contains("none") && own.contains("117.3"),
        "{own}"
    );
    // A log device multiplies what the box measured.
    let with_log = rows
        .iter()
        .find(|l| l.contains("3xraidz2-8") && l.contains("flash-unknown") && l.contains("2x1G"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    let writes = |row: &str| -> f64 {
        row.split_whitespace()
            .filter_map(|w| w.parse::<f64>().ok())
            .nth(1)
            .unwrap_or_else(|| panic!("{row}"))
    };
    assert!(writes(with_log) > 5.0 * writes(own), "{own}\n{with_log}");
    // Twelve predictions that stopped early: one note line, not twelve.
    let converged: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("converged after"))
        .collect();
    assert!(converged.len() <= 1, "{}", r.stderr);
    if let Some(line) = converged.first() {
        assert!(line.contains("predictions that note it"), "{line}");
    }
}

#[test]
fn what_is_not_a_baseline_is_refused_in_one_line() {
    let d = scratch();
    let dir = d.path();
    let run = measure(dir, "a.json", &OWN_WORKLOAD);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&run).unwrap()).unwrap();
    let edited = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| -> String {
        let mut d = doc.clone();
        edit(&mut d);
        let path = dir.join(name);
        std::fs::write(&path, serde_json::to_vec(&d).unwrap()).unwrap();
        path.to_string_lossy().into_owned()
    };
    let interrupted = edited("int.json", &|d| d["interrupted"] = true.into());
    let failed = edited("fail.json", &|d| d["counts"]["events"] = 0.into());
    let run = run.to_string_lossy().into_owned();
    // A prediction kept with --json.
    let system = example_system("this-machine-ext4.toml");
    let prediction = dir.join("p.json").to_string_lossy().into_owned();
    let json_opt = format!("--json={prediction}");
    let mut words = vec!["simulate", "--system", &system, "--intervals=off", "--"];
    words.extend_from_slice(&OWN_WORKLOAD);
    words.extend([json_opt.as_str(), "run"]);
    assert_eq!(tb(dir, &words).code, 0);

    let cases: [(&str, Vec<&str>, &[&str]); 6] = [
        (
            &prediction,
            vec![],
            &["--baseline", "p.json", "a prediction"],
        ),
        (
            &interrupted,
            vec![],
            &["--baseline", "int.json", "interrupted"],
        ),
        (
            &failed,
            vec![],
            &["--baseline", "fail.json", "failed", "0 events"],
        ),
        (
            &run,
            vec!["--file-block-size=8K"],
            &["--file-block-size", "16K", "8K"],
        ),
        (
            &run,
            vec!["--file-test-mode=rndrw"],
            &["--file-test-mode", "rndwr", "rndrw"],
        ),
        (
            &run,
            vec!["--file-fsync-all=off"],
            &["--file-fsync-all", "on", "off"],
        ),
    ];
    for (baseline, change, named) in cases {
        let mut workload = OWN_WORKLOAD.to_vec();
        workload.extend(change);
        let r = what_if(dir, baseline, &["--intervals=off"], &workload);
        refused_naming(&r, named);
        assert!(r.stdout.is_empty(), "{}", r.stdout);
    }
    // Without --system, a run on a file system that is not ZFS has no system.
    let mut words = vec!["simulate", "--baseline", &run, "--"];
    words.extend_from_slice(&OWN_WORKLOAD);
    words.push("run");
    let r = tb(dir, &words);
    refused_naming(&r, &["--baseline", "no ZFS facts", "--system"]);
    // Neither a result nor a report.
    std::fs::write(dir.join("notes.txt"), "hello\n").unwrap();
    let r = what_if(dir, "notes.txt", &[], &OWN_WORKLOAD);
    refused_naming(&r, &["--baseline notes.txt", "accepted", "fio JSON"]);
    // A fio report of two groups is two runs.
    let r = what_if(
        dir,
        &fixture("fio-two-groups-stonewall.json"),
        &[],
        &OWN_WORKLOAD,
    );
    refused_naming(&r, &["--baseline", "2 runs"]);
}

#[test]
fn a_matrix_file_is_anchored_too() {
    let d = scratch();
    let system = example_system("this-machine-ext4.toml");
    std::fs::write(
        d.path().join("m.toml"),
        format!(
            "system = \"{system}\"\nworkload = {:?}\n[[axis]]\nkey = \"ram\"\nvalues = [\"24G\", \"1G\"]\n",
            [&SYSBENCH_WORKLOAD[..], &["--threads=4"]].concat()
        ),
    )
    .unwrap();
    let report = fixture("sysbench-rndrw-4threads-fsyncall.txt");
    let r = tb(
        d.path(),
        &[
            "simulate",
            "matrix",
            "m.toml",
            "--baseline",
            &report,
            "--system",
            &system,
            "--intervals=off",
            "--format=csv",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].starts_with("\"from\",\"ram\","), "{}", r.stdout);
    // The report's own configuration (24G, 4 threads) is its row.
    assert!(
        lines[1].starts_with("\"baseline (measured)\",\"24G\",19832.85,"),
        "{}",
        r.stdout
    );
    assert!(
        lines[2].starts_with("\"baseline x change\",\"1G\","),
        "{}",
        r.stdout
    );
    // Without a system: the report has no ZFS facts.
    let r = tb(
        d.path(),
        &["simulate", "matrix", "m.toml", "--baseline", &report],
    );
    refused_naming(&r, &["simulate matrix: --baseline", "--system"]);
}

#[test]
fn a_plan_is_anchored_to_the_measured_cell_and_marks_it() {
    let d = scratch();
    let report = fixture("sysbench-rndrw-4threads-fsyncall.txt");
    let system = example_system("this-machine-ext4.toml");
    let plan = |extra: &[&str]| {
        let mut words = vec![
            "plan",
            "--disks",
            "3x100GB",
            "--stripes",
            "--layout",
            "1xstripe-1,3xstripe-1",
            "--baseline",
            &report,
            "--system",
            &system,
            "--intervals",
            "off",
        ];
        words.extend_from_slice(extra);
        tb(d.path(), &words)
    };
    let r = plan(&[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The box's own layout is the measurement (13223.71 writes/s in the
    // report), the other from it.
    let own = r
        .stdout
        .lines()
        .find(|l| l.starts_with("1xstripe ") && l.contains("(baseline, measured)"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(own.contains("13224"), "{own}");
    assert!(
        r.stdout
            .contains("The baseline's own configuration: 1xstripe without a log device"),
        "{}",
        r.stdout
    );
    // A workload other than the baseline's is refused.
    let r = plan(&["--fileio", "--file-test-mode=rndwr"]);
    refused_naming(
        &r,
        &["plan: --baseline", "--file-test-mode", "rndrw", "rndwr"],
    );
}

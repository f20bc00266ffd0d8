//! Distributed jobs under MPI (`--features mpi`), run with Open MPI's
//! `mpirun` on this machine (ranks oversubscribe the cores, traffic stays on
//! loopback, files on tmpfs). Without the feature: the refusal of a
//! multi-process launch.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

/// Variables of launchers that the test process itself might have inherited;
/// every child starts without them unless a test sets one.
const LAUNCHER_VARIABLES: &[&str] = &[
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_RANK",
    "PMI_SIZE",
    "PMI_RANK",
    "PMIX_RANK",
    "MV2_COMM_WORLD_SIZE",
    "MV2_COMM_WORLD_RANK",
    "SLURM_STEP_NUM_TASKS",
    "SLURM_PROCID",
];

fn clean_command(program: &Path) -> Command {
    let mut c = Command::new(program);
    for v in LAUNCHER_VARIABLES {
        c.env_remove(v);
    }
    c
}

#[cfg(not(feature = "mpi"))]
#[test]
fn a_multi_process_launch_is_refused_without_the_feature() {
    let d = scratch();
    let args = ["fileio", "--file-total-size=1M", "--file-num=2", "prepare"];
    for (var, value) in [
        ("OMPI_COMM_WORLD_SIZE", "2"),
        ("PMI_SIZE", "3"),
        ("PMIX_RANK", "1"),
        ("SLURM_STEP_NUM_TASKS", "2"),
    ] {
        let out = clean_command(&tankbench_bin())
            .args(args)
            .env(var, value)
            .current_dir(d.path())
            .output()
            .unwrap();
        let r = Run::from(out);
        assert_eq!(r.code, 1, "{var}={value}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.stdout, "", "nothing on stdout");
        assert_eq!(r.stderr.lines().count(), 1, "one line: {}", r.stderr);
        assert!(
            r.stderr
                .contains("cargo build --release -p tankbench --features mpi"),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains(&format!("{var}={value}")), "{}", r.stderr);
        assert!(listing(d.path()).is_empty(), "nothing was prepared");
    }
    // One process under a launcher (mpirun -np 1, a plain Slurm batch step) runs.
    let out = clean_command(&tankbench_bin())
        .args(args)
        .env("OMPI_COMM_WORLD_SIZE", "1")
        .env("SLURM_NTASKS", "8")
        .env("SLURM_PROCID", "0")
        .current_dir(d.path())
        .output()
        .unwrap();
    assert_eq!(Run::from(out).code, 0);
    assert_eq!(listing(d.path()).len(), 2);
}

#[cfg(feature = "mpi")]
mod under_mpirun {
    use super::*;
    use serde_json::Value;
    use std::collections::BTreeSet;

    fn tmpfs_scratch() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("tb-mpi-")
            .tempdir_in("/dev/shm")
            .expect("a scratch directory on /dev/shm (tmpfs)")
    }

    /// `mpirun` with `np` ranks, each running `tankbench fileio <args>` in `dir`.
    /// Several `(np, args)` groups make an MPMD job (`A : B`), rank order as given.
    fn mpirun(dir: &Path, groups: &[(usize, Vec<String>)]) -> Run {
        // Allowed as root (CI), more ranks than cores, MPI messages through
        // shared memory and the runtime's own traffic on loopback only;
        // `timeout` keeps a hung job from hanging CI.
        let mut c = clean_command(Path::new("timeout"));
        c.args(["120", "mpirun", "--allow-run-as-root", "--oversubscribe"])
            .args(["--mca", "btl", "self,vader"])
            .args(["--mca", "oob_tcp_if_include", "lo"]);
        for (i, (np, args)) in groups.iter().enumerate() {
            if i > 0 {
                c.arg(":");
            }
            c.args(["-np", &np.to_string()])
                .arg(tankbench_bin())
                .arg("fileio")
                .args(args);
        }
        let out = c.current_dir(dir).output().expect("start mpirun");
        Run::from(out)
    }

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn job(dir: &Path, np: usize, args: &[&str]) -> Run {
        mpirun(dir, &[(np, words(args))])
    }

    fn ok(r: &Run) {
        assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    }

    fn json_of(r: &Run) -> Value {
        ok(r);
        serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("one JSON document on stdout ({e}):\n{}", r.stdout))
    }

    fn u(v: &Value) -> u64 {
        v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
    }

    fn f(v: &Value) -> f64 {
        v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
    }

    fn histogram_count(latency: &Value) -> u64 {
        latency["histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| u(&b[1]))
            .sum()
    }

    /// The job's result against its ranks': summed counts, merged histograms
    /// whose percentiles lie within the ranks', times that span them.
    fn check_job(j: &Value, np: usize) {
        let ranks = j["ranks"].as_array().expect("ranks");
        assert_eq!(ranks.len(), np);
        for (i, r) in ranks.iter().enumerate() {
            assert_eq!(u(&r["distributed"]["rank"]), i as u64);
            assert!(r["ranks"].is_null(), "ranks do not nest");
        }
        for field in [
            "events",
            "reads",
            "writes",
            "fsyncs",
            "bytes_read",
            "bytes_written",
        ] {
            let sum: u64 = ranks.iter().map(|r| u(&r["counts"][field])).sum();
            assert_eq!(u(&j["counts"][field]), sum, "counts.{field}");
        }
        assert!(u(&j["counts"]["events"]) > 0);
        for (key, merged) in j["latency"].as_object().unwrap() {
            let parts: Vec<&Value> = ranks
                .iter()
                .map(|r| &r["latency"][key])
                .filter(|l| !l.is_null() && u(&l["count"]) > 0)
                .collect();
            let sum: u64 = parts.iter().map(|l| histogram_count(l)).sum();
            assert_eq!(
                histogram_count(merged),
                sum,
                "latency.{key}: merged histogram"
            );
            if parts.is_empty() {
                continue; // e.g. no fsyncs in a read-only run
            }
            for (i, p) in merged["percentiles"].as_array().unwrap().iter().enumerate() {
                let values: Vec<f64> = parts
                    .iter()
                    .map(|l| f(&l["percentiles"][i]["ms"]))
                    .collect();
                let lo = values.iter().cloned().fold(f64::INFINITY, f64::min);
                let hi = values.iter().cloned().fold(0.0, f64::max);
                let v = f(&p["ms"]);
                // Exact quantiles of a merged set lie between the parts'
                // quantiles; histogram values are bucket values (1024 buckets
                // per octave, so within 0.1 %) and each part's is clamped to
                // its own [min, max], so allow one bucket either side.
                let bucket = hi * 2.0 / 1024.0;
                assert!(
                    v >= lo - bucket && v <= hi + bucket,
                    "latency.{key} p{}: {v} ms outside the ranks' [{lo}, {hi}]",
                    p["p"]
                );
            }
        }
        let event_sum: u64 = ranks
            .iter()
            .map(|r| u(&r["latency"]["event"]["count"]))
            .sum();
        assert_eq!(u(&j["latency"]["event"]["count"]), event_sum);
        // The job runs from the earliest start to the latest end.
        let d = &j["distributed"];
        let total = f(&j["total_time_s"]);
        let starts: Vec<f64> = ranks
            .iter()
            .map(|r| f(&r["distributed"]["start_s"]))
            .collect();
        let ends: Vec<f64> = ranks
            .iter()
            .map(|r| f(&r["distributed"]["end_s"]))
            .collect();
        // Times are measured from the earliest rank's start, which is therefore
        // exactly zero (a subtraction of equal values), not merely close to it.
        let earliest = starts.iter().cloned().fold(f64::INFINITY, f64::min);
        assert_eq!(
            earliest.to_bits(),
            0.0f64.to_bits(),
            "earliest start {earliest}"
        );
        let last = ends.iter().cloned().fold(0.0, f64::max);
        let first = ends.iter().cloned().fold(f64::INFINITY, f64::min);
        assert!(
            (total - last).abs() < 1e-9,
            "total {total} vs last end {last}"
        );
        assert!((f(&d["last_done_s"]) - last).abs() < 1e-9);
        assert!((f(&d["first_done_s"]) - first).abs() < 1e-9);
        let reads_per_s = u(&j["counts"]["reads"]) as f64 / total;
        assert!((f(&j["rates"]["reads_per_s"]) - reads_per_s).abs() <= 1e-6 * reads_per_s.max(1.0));
    }

    /// Wall-clock start of every rank (the barrier's exit plus the rank's own
    /// delay to its clock start); on one host they share one clock.
    fn start_spread_ms(j: &Value) -> f64 {
        let starts: Vec<f64> = j["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                u(&r["distributed"]["barrier_unix_ns"]) as f64 / 1e6
                    + f(&r["distributed"]["start_s"]) * 1e3
            })
            .collect();
        let lo = starts.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = starts.iter().cloned().fold(0.0, f64::max);
        hi - lo
    }

    fn test_files(rank: &Value) -> Vec<(String, u64)> {
        rank["distributed"]["test_files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e[0].as_str().unwrap().to_string(), u(&e[1])))
            .collect()
    }

    /// Everything under `dir`, recursively (hidden files too), sorted.
    fn tree(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            out.push(p.to_string_lossy().into_owned());
            if p.is_dir() {
                out.extend(tree(&p));
            }
        }
        out.sort();
        out
    }

    /// The text report of a 2-rank job: one sysbench report for the job, then
    /// the ranks, and its warnings (silenced at --verbosity=2).
    fn text_report_of_two_ranks(dir: &Path, set: &[&str]) {
        // The text report: one sysbench report for the job, then the ranks.
        let text = job(
            dir,
            2,
            &[set, &["--file-test-mode=rndrd", "--events=2000", "run"]].concat(),
        );
        ok(&text);
        assert_eq!(
            text.stdout.matches("sysbench 1.0.20").count(),
            1,
            "{}",
            text.stdout
        );
        assert_eq!(text.stdout.matches("General statistics:").count(), 1);
        assert!(
            text.stdout
                .contains("    total number of events:              4000"),
            "{}",
            text.stdout
        );
        assert!(
            text.stdout.contains("MPI job (2 ranks, files per rank"),
            "{}",
            text.stdout
        );
        let rank_lines = text
            .stdout
            .lines()
            .skip_while(|l| !l.starts_with("Per rank"))
            .filter(|l| l.split_whitespace().nth(4) == Some("2000"))
            .count();
        assert_eq!(rank_lines, 2, "{}", text.stdout);
        // The job's warnings close the report (this small set is cached)...
        assert!(
            text.stdout.contains(
                "WARNING: Every rank; rank 0's figures: The file set (0.01 GiB) fits in RAM"
            ),
            "{}",
            text.stdout
        );
        // ... and belong to it: at --verbosity=2 a successful job prints
        // nothing, as one process does (and sysbench).
        let quiet = job(
            dir,
            2,
            &[
                set,
                &[
                    "--file-test-mode=rndrd",
                    "--events=2000",
                    "--verbosity=2",
                    "run",
                ],
            ]
            .concat(),
        );
        ok(&quiet);
        assert_eq!(quiet.stdout, "", "{}", quiet.stderr);
    }

    #[test]
    fn two_ranks_each_with_its_own_files() {
        testkit::require!("mpirun");
        let d = tmpfs_scratch();
        let dir = d.path();
        let set = ["--file-total-size=8M", "--file-num=4"];
        let r = job(dir, 2, &[&set[..], &["prepare"]].concat());
        ok(&r);
        assert!(
            r.stdout.contains("MPI job: 2 ranks wrote 16777216 bytes"),
            "{}",
            r.stdout
        );
        for rank in 0..2 {
            let files = listing(&dir.join(format!("rank-{rank}")));
            let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
            assert_eq!(
                names,
                [
                    ".tankbench-rank-dir",
                    "test_file.0",
                    "test_file.1",
                    "test_file.2",
                    "test_file.3"
                ]
            );
            assert!(files[1..].iter().all(|f| f.1 == 2 << 20));
        }

        // Rank 1 reaches the barrier 300 ms after rank 0; the clocks must
        // still start together.
        let run = [
            "--file-test-mode=rndrw",
            "--events=4000",
            "--percentiles=50,95,99",
            "--tb-rank-delay=300",
            "--format=json",
            "run",
        ];
        let j = json_of(&job(dir, 2, &[&set[..], &run[..]].concat()));
        check_job(&j, 2);
        assert_eq!(u(&j["counts"]["events"]), 8000, "--events applies per rank");
        assert_eq!(u(&j["workload"]["threads"]), 2);
        let spread = start_spread_ms(&j);
        assert!(spread < 25.0, "ranks started {spread:.3} ms apart");
        // During the run each rank had its own four files, full size.
        let mut seen = BTreeSet::new();
        for (i, rank) in j["ranks"].as_array().unwrap().iter().enumerate() {
            let files = test_files(rank);
            assert_eq!(files.len(), 4, "rank {i}: {files:?}");
            for (path, size) in files {
                let expected_dir = std::fs::canonicalize(dir.join(format!("rank-{i}"))).unwrap();
                assert!(Path::new(&path).starts_with(&expected_dir), "{path}");
                assert_eq!(size, 2 << 20);
                assert!(seen.insert(path), "files are per rank");
            }
        }

        text_report_of_two_ranks(dir, &set);

        let r = job(dir, 2, &[&set[..], &["cleanup"]].concat());
        ok(&r);
        assert_eq!(
            tree(dir),
            Vec::<String>::new(),
            "cleanup removes files and rank directories"
        );
    }

    #[test]
    fn three_ranks_share_one_file_set() {
        testkit::require!("mpirun");
        let d = tmpfs_scratch();
        let dir = d.path();
        let set = ["--file-total-size=7M", "--file-num=7", "--mpi-shared-files"];
        ok(&job(dir, 3, &[&set[..], &["prepare"]].concat()));
        let names: Vec<String> = listing(dir).into_iter().map(|f| f.0).collect();
        assert_eq!(names.len(), 7, "{names:?}");
        assert!(
            names.iter().all(|n| n.starts_with("test_file.")),
            "no rank directories"
        );

        let run = [
            "--file-test-mode=rndrd",
            "--threads=2",
            "--events=3000",
            "--tb-rank-delay=150",
            "--format=json",
            "run",
        ];
        let j = json_of(&job(dir, 3, &[&set[..], &run[..]].concat()));
        check_job(&j, 3);
        assert_eq!(u(&j["workload"]["threads"]), 6);
        assert_eq!(j["threads"].as_array().unwrap().len(), 6);
        assert!(
            start_spread_ms(&j) < 25.0,
            "spread {} ms",
            start_spread_ms(&j)
        );
        // The shares are disjoint and cover the set.
        let mut all = Vec::new();
        for rank in j["ranks"].as_array().unwrap() {
            let files = test_files(rank);
            assert!((2..=3).contains(&files.len()), "{files:?}");
            all.extend(files.into_iter().map(|f| f.0));
        }
        let unique: BTreeSet<_> = all.iter().collect();
        assert_eq!(unique.len(), 7, "{all:?}");

        ok(&job(dir, 3, &[&set[..], &["cleanup"]].concat()));
        assert_eq!(tree(dir), Vec::<String>::new());
    }

    #[test]
    fn stonewall_stops_every_rank_when_the_first_finishes() {
        testkit::require!("mpirun");
        let d = tmpfs_scratch();
        let dir = d.path();
        let set = ["--file-total-size=1M", "--file-num=1"];
        ok(&job(dir, 2, &[&set[..], &["prepare"]].concat()));
        // Rank 0 has 20 events of 1 ms, rank 1 has 800 (an MPMD launch gives
        // the ranks different limits).
        let run = |events: u64, stonewall: bool| -> Vec<String> {
            let mut a = words(&set);
            a.extend(words(&[
                "--file-test-mode=rndrd",
                "--tb-inject-latency=fixed:1ms",
                "--format=json",
            ]));
            a.push(format!("--events={events}"));
            if stonewall {
                a.push("--mpi-stonewall".to_string());
            }
            a.push("run".to_string());
            a
        };
        let j = json_of(&mpirun(dir, &[(1, run(20, true)), (1, run(800, true))]));
        check_job(&j, 2);
        let ranks = j["ranks"].as_array().unwrap();
        assert_eq!(u(&ranks[0]["counts"]["events"]), 20);
        let stopped = u(&ranks[1]["counts"]["events"]);
        assert!(stopped < 400, "rank 1 went on for {stopped} events");
        let d = &j["distributed"];
        assert_eq!(d["stonewall"], Value::Bool(true));
        let (first, last) = (f(&d["first_done_s"]), f(&d["last_done_s"]));
        assert!(
            first < last && last - first < 0.5,
            "first {first} s, last {last} s"
        );

        // Without the stonewall the long rank runs to its limit.
        let j = json_of(&mpirun(dir, &[(1, run(20, false)), (1, run(800, false))]));
        assert_eq!(u(&j["ranks"][1]["counts"]["events"]), 800);
        ok(&job(dir, 2, &[&set[..], &["cleanup"]].concat()));
    }

    #[test]
    fn a_failing_rank_fails_the_job_without_hanging_it() {
        testkit::require!("mpirun");
        let d = tmpfs_scratch();
        let dir = d.path();
        let set = ["--file-total-size=1M", "--file-num=2"];
        ok(&job(dir, 2, &[&set[..], &["prepare"]].concat()));
        std::fs::remove_file(dir.join("rank-1/test_file.1")).unwrap();
        let r = job(
            dir,
            2,
            &[&set[..], &["--file-test-mode=rndrd", "run"]].concat(),
        );
        assert_ne!(r.code, 0);
        assert!(r.stdout.contains("FATAL: rank 1 of 2"), "{}", r.stdout);
        assert!(
            r.stdout.contains("Cannot open file 'test_file.1'"),
            "{}",
            r.stdout
        );
        assert!(!r.stdout.contains("General statistics"), "{}", r.stdout);

        // Interval reports would mix ranks: refused in one line naming the option.
        let r = job(
            dir,
            2,
            &[
                &set[..],
                &["--file-test-mode=rndrd", "--report-interval=1", "run"],
            ]
            .concat(),
        );
        assert_eq!(r.code, 1);
        let fatal: Vec<&str> = r
            .stdout
            .lines()
            .filter(|l| l.starts_with("FATAL"))
            .collect();
        assert_eq!(fatal.len(), 1, "{}", r.stdout);
        assert!(fatal[0].contains("--report-interval"), "{}", fatal[0]);

        ok(&job(dir, 2, &[&set[..], &["cleanup"]].concat()));
        assert_eq!(tree(dir), Vec::<String>::new());
    }
}

//! tankbench's fio job language against the real fio 3.33 (issue 39).
//!
//! - Acceptance: for every supported option, the same job through `fio
//!   --parse-only` and through tankbench's parser and mapping: both take
//!   it, both refuse it, or tankbench refuses what fio takes, with the
//!   reason checked (a value fio reads in a surprising way, a feature
//!   fileio does not have).
//! - Meaning: what fio makes of a value, from its JSON report of the same
//!   job on the `null` engine (no files, no I/O): the block size, the
//!   number of I/Os of sizes, files, loops and clones, the mix of reads
//!   and writes, the syncs of `fsync=N`, the runtime, the groups.
//! - Refusal: options outside the subset are refused by name, one line,
//!   though fio knows them.
//!
//! fio is a peer program: without it the tests skip (or fail under
//! TANKBENCH_REQUIRE_PEERS=1), see testkit.

use fileio::fio::error::FioError;
use fileio::fio::job::Jobs;
use fileio::fio::parse::{parse_command_line, Expansion};
use fileio::fio::plan::Plan;
use fileio::fio::value::parse_size;
use fileio::run::generator::{Op, Request, SyncEveryWrites};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn expansion() -> Expansion<'static> {
    Expansion::of_this_machine()
}

/// tankbench's reading of a command-line job, as far as a plan.
fn tankbench(args: &[&str]) -> Result<(Jobs, Plan), FioError> {
    let inv = parse_command_line(&words(args), &expansion())?;
    let text = inv.command_line_jobs.expect("a job");
    let jobs = Jobs::from_texts(&[text])?;
    let plan = Plan::of(&jobs)?;
    Ok((jobs, plan))
}

/// Whether `fio --parse-only` takes the job.
fn fio_accepts(fio: &Path, args: &[&str]) -> bool {
    let dir = tempfile::tempdir().unwrap();
    testkit::output(
        Command::new(fio)
            .arg("--parse-only")
            .args(args)
            .current_dir(dir.path()),
    )
    .expect("run fio")
    .status
    .success()
}

/// fio's JSON report of the job run on the null engine (`--ioengine=null`
/// added after the options, so it wins).
fn fio_null(fio: &Path, args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = testkit::output(
        Command::new(fio)
            .arg("--output-format=json")
            .args(args)
            .arg("--ioengine=null")
            .current_dir(dir.path()),
    )
    .expect("run fio");
    assert!(
        out.status.success(),
        "fio {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text.find('{').expect("a JSON document");
    serde_json::from_str(&text[start..]).expect("fio's JSON")
}

fn jobs_of(doc: &Value) -> &Vec<Value> {
    doc["jobs"].as_array().expect("jobs")
}

fn total(doc: &Value, dir: &str, key: &str) -> u64 {
    jobs_of(doc)
        .iter()
        .map(|j| j[dir][key].as_u64().unwrap())
        .sum()
}

/// What tankbench's plan makes of each case: accepted, or refused with a
/// message holding the words given.
enum Expect {
    /// fio and tankbench both take it.
    Both,
    /// Both refuse it.
    Neither,
    /// fio takes it; tankbench refuses, saying this.
    Refused(&'static str),
}

/// Each case: the options after `--name=j --size=1m`, and what both make of it.
const ACCEPTANCE: &[(&[&str], Expect)] = &[
    (&["--description=nightly 4k test"], Expect::Both),
    (&["--rw=read"], Expect::Both),
    (&["--rw=write"], Expect::Both),
    (&["--rw=randread"], Expect::Both),
    (&["--rw=randwrite"], Expect::Both),
    (&["--rw=rw"], Expect::Both),
    (&["--rw=readwrite"], Expect::Both),
    (&["--readwrite=randrw"], Expect::Both),
    (&["--rw=randrw"], Expect::Both),
    (&["--rw=trim"], Expect::Refused("no trim")),
    (&["--rw=READ"], Expect::Neither),
    (&["--rw=bogus"], Expect::Neither),
    (&["--rw=randrw", "--rwmixread=70"], Expect::Both),
    (
        &["--rw=randrw", "--rwmixread=70%"],
        Expect::Refused("'%' is not supported"),
    ),
    (&["--rw=randrw", "--rwmixread=101"], Expect::Neither),
    (&["--rw=randrw", "--rwmixwrite=30"], Expect::Both),
    (&["--bs=8k"], Expect::Both),
    (&["--blocksize=16k"], Expect::Both),
    (&["--bs=4KiB"], Expect::Both),
    (&["--bs=abc"], Expect::Neither),
    (&["--bs=0"], Expect::Neither),
    (
        &["--bs=1.5k"],
        Expect::Refused("fractions are not supported"),
    ),
    (
        &["--bs=4k,8k"],
        Expect::Refused("separate values for reads"),
    ),
    (&["--size=2m"], Expect::Both),
    (&["--size=10%"], Expect::Refused("percentage")),
    (&["--filesize=256k"], Expect::Both),
    (
        &["--filesize=256k-512k"],
        Expect::Refused("a range is not supported"),
    ),
    (&["--nrfiles=3"], Expect::Both),
    (&["--nr_files=2"], Expect::Both),
    (&["--nrfiles=0"], Expect::Refused("from 1 to")),
    (&["--filename=a.dat:b.dat"], Expect::Both),
    (&["--directory=."], Expect::Both),
    (&["--numjobs=3"], Expect::Both),
    (&["--numjobs=0"], Expect::Refused("from 1 to")),
    (&["--iodepth=8"], Expect::Both),
    (&["--iodepth=0"], Expect::Neither),
    (&["--ioengine=sync"], Expect::Both),
    (&["--ioengine=psync"], Expect::Both),
    (&["--ioengine=io_uring", "--iodepth=16"], Expect::Both),
    (&["--ioengine=mmap"], Expect::Both),
    (&["--ioengine=libaio"], Expect::Refused("ioengine=io_uring")),
    (&["--ioengine=bogus"], Expect::Neither),
    (&["--direct=1"], Expect::Both),
    (&["--direct"], Expect::Neither),
    (&["--direct=2"], Expect::Neither),
    (&["--buffered=0"], Expect::Both),
    (&["--sync=1"], Expect::Both),
    (&["--sync=sync"], Expect::Both),
    (&["--sync=dsync"], Expect::Both),
    (&["--sync=none"], Expect::Both),
    (&["--sync=bogus"], Expect::Neither),
    (&["--rw=randwrite", "--fsync=4"], Expect::Both),
    (&["--rw=randwrite", "--fdatasync=4"], Expect::Both),
    (&["--rw=write", "--end_fsync=1"], Expect::Both),
    (&["--end_fsync"], Expect::Neither),
    (&["--runtime=10"], Expect::Both),
    (&["--timeout=10"], Expect::Both),
    (&["--runtime=2m"], Expect::Both),
    (&["--runtime=500ms"], Expect::Refused("whole seconds")),
    (&["--runtime=1sec"], Expect::Refused("microseconds")),
    (&["--time_based", "--runtime=5"], Expect::Both),
    (
        &["--time_based", "--runtime=5", "--ramp_time=1"],
        Expect::Both,
    ),
    (&["--startdelay=1"], Expect::Both),
    (
        &["--startdelay=1-2"],
        Expect::Refused("a range is not supported"),
    ),
    (&["--loops=2"], Expect::Both),
    (&["--loops=0"], Expect::Refused("from 1 to")),
    (&["--rw=randread", "--rate_iops=100"], Expect::Both),
    (&["--group_reporting"], Expect::Both),
    (&["--stonewall"], Expect::Both),
    (&["--wait_for_previous"], Expect::Both),
    (&["--thread"], Expect::Both),
    (&["--randrepeat=0"], Expect::Both),
    (&["--randrepeat"], Expect::Neither),
    (&["--random_distribution=random"], Expect::Both),
    (
        &["--random_distribution=zipf:1.2"],
        Expect::Refused("uniformly"),
    ),
    (&["--buffer_compress_percentage=100"], Expect::Both),
    (
        &["--buffer_compress_percentage=50"],
        Expect::Refused("incompressible random bytes or zeros"),
    ),
    (&["--refill_buffers"], Expect::Both),
    (&["--zero_buffers"], Expect::Both),
];

#[test]
fn every_supported_option_is_accepted_or_refused_as_fio_and_tankbench_agree() {
    let Some([fio]) = testkit::require(["fio"]) else {
        return;
    };
    let mut failures = Vec::new();
    use Expect::*;
    for (options, expect) in ACCEPTANCE {
        let mut args = vec!["--name=j", "--size=1m"];
        args.extend_from_slice(options);
        let fio_takes = fio_accepts(&fio, &args);
        let ours = tankbench(&args);
        let fine = match (expect, fio_takes, &ours) {
            (Both, true, Ok(_)) | (Neither, false, Err(_)) => true,
            (Refused(why), true, Err(e)) => {
                let text = e.to_string();
                text.contains(why) && !text.contains('\n')
            }
            _ => false,
        };
        if !fine {
            failures.push(format!(
                "{options:?}: fio {}, tankbench {}",
                if fio_takes { "takes it" } else { "refuses it" },
                match &ours {
                    Ok(_) => "takes it".to_string(),
                    Err(e) => format!("refuses it: {e}"),
                }
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn sizes_mean_what_fio_makes_of_them() {
    let Some([fio]) = testkit::require(["fio"]) else {
        return;
    };
    for bs in [
        "4096", "4k", "4K", "4kb", "4KB", "4KiB", "4ki", "1m", "1mi", "1MiB", "0x1000", "512b",
        "512B", "8M",
    ] {
        let doc = fio_null(&fio, &["--name=j", "--size=64m", &format!("--bs={bs}")]);
        let ios = total(&doc, "read", "total_ios");
        let bytes = total(&doc, "read", "io_bytes");
        let fio_bs = bytes / ios;
        assert_eq!(parse_size(bs), Ok(fio_bs), "bs={bs}");
        let (_, plan) = tankbench(&["--name=j", "--size=64m", &format!("--bs={bs}")]).unwrap();
        assert_eq!(
            plan.groups[0].clones[0].spec.files.block_size, fio_bs,
            "bs={bs}"
        );
    }
}

#[test]
fn counts_of_sizes_files_loops_and_clones_are_fio_s() {
    let Some([fio]) = testkit::require(["fio"]) else {
        return;
    };
    let cases: &[&[&str]] = &[
        &["--size=1m"],
        &["--size=400k", "--nrfiles=3"],
        &["--size=1m", "--filesize=256k"],
        &["--size=256k", "--filesize=1m"],
        &["--filesize=256k", "--nrfiles=3"],
        &["--size=1m", "--loops=3"],
        &["--size=1m", "--numjobs=3"],
        &["--size=1m", "--bs=3000"],
        &["--size=1m", "--rw=randwrite", "--bs=8k"],
        &["--size=1m", "--filename=a.dat:b.dat", "--numjobs=2"],
        &["--size=1m", "--rw=rw", "--rwmixread=70"],
    ];
    for options in cases {
        let mut args = vec!["--name=j"];
        args.extend_from_slice(options);
        let doc = fio_null(&fio, &args);
        let fio_ios = total(&doc, "read", "total_ios") + total(&doc, "write", "total_ios");
        let (_, plan) = tankbench(&args).unwrap();
        let ours: u64 = plan
            .groups
            .iter()
            .flat_map(|g| &g.clones)
            .map(|c| c.spec.events)
            .sum();
        assert_eq!(ours, fio_ios, "{options:?}");
    }
}

#[test]
fn mixes_are_fio_s_within_its_randomness() {
    let Some([fio]) = testkit::require(["fio"]) else {
        return;
    };
    for (rw, mix) in [("randrw", 70u32), ("randrw", 25), ("rw", 50), ("rw", 90)] {
        let args = [
            "--name=j".to_string(),
            "--size=32m".to_string(),
            format!("--rw={rw}"),
            format!("--rwmixread={mix}"),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let doc = fio_null(&fio, &args);
        let (r, w) = (
            total(&doc, "read", "total_ios"),
            total(&doc, "write", "total_ios"),
        );
        let fio_share = r as f64 / (r + w) as f64;
        let (_, plan) = tankbench(&args).unwrap();
        let ratio = plan.groups[0].clones[0].spec.rw_ratio;
        let our_share = ratio / (1.0 + ratio);
        assert!(
            (fio_share - our_share).abs() < 0.03,
            "{rw} {mix}: fio {fio_share:.3}, tankbench {our_share:.3}"
        );
        assert!((our_share - f64::from(mix) / 100.0).abs() < 1e-6);
    }
}

/// fio's syncs of `fsync=N` on a write-only job, and tankbench's rule on
/// the same number of writes.
#[test]
fn syncs_every_n_writes_are_fio_s() {
    let Some([fio]) = testkit::require(["fio"]) else {
        return;
    };
    for (option, every) in [
        ("--fsync=1", 1u64),
        ("--fsync=3", 3),
        ("--fsync=32", 32),
        ("--fdatasync=2", 2),
    ] {
        for rw in ["randwrite", "write"] {
            let rw = format!("--rw={rw}");
            let args = ["--name=j", "--size=1m", &rw, option, "--end_fsync=1"];
            let doc = fio_null(&fio, &args);
            // fio counts fdatasync in lat_ns.N only (its total_ios stays 0).
            let fio_syncs: u64 = jobs_of(&doc)
                .iter()
                .map(|j| j["sync"]["lat_ns"]["N"].as_u64().unwrap())
                .sum();
            let writes = total(&doc, "write", "total_ios");
            let (_, plan) = tankbench(&args).unwrap();
            let spec = &plan.groups[0].clones[0].spec;
            assert_eq!((spec.events, spec.sync_every_writes), (writes, every));
            let mut rule = SyncEveryWrites::new(every);
            let mut ours = 0;
            let write = Request {
                op: Op::Write,
                file: 0,
                pos: 0,
                size: 4096,
            };
            for _ in 0..writes {
                if rule.due().is_some() {
                    ours += 1;
                }
                rule.issued(&write);
            }
            assert_eq!(
                ours, fio_syncs,
                "{args:?} (end_fsync is not counted by either)"
            );
        }
    }
}

#[test]
fn runtimes_ramps_and_rates_are_fio_s() {
    let Some([fio]) = testkit::require(["fio"]) else {
        return;
    };
    for (options, seconds) in [
        (&["--time_based", "--runtime=1"][..], 1u64),
        (&["--time_based", "--runtime=1s", "--ramp_time=1"][..], 1),
    ] {
        let mut args = vec!["--name=j", "--size=1m"];
        args.extend_from_slice(options);
        let doc = fio_null(&fio, &args);
        let ms = jobs_of(&doc)[0]["job_runtime"].as_u64().unwrap();
        assert!(
            ms.abs_diff(seconds * 1000) < 100,
            "{options:?}: fio ran {ms} ms"
        );
        let (_, plan) = tankbench(&args).unwrap();
        let c = &plan.groups[0].clones[0];
        assert_eq!(c.spec.time_s, seconds, "{options:?}");
        assert_eq!(c.spec.events, 0);
        assert_eq!(c.warmup_s, u64::from(options.contains(&"--ramp_time=1")));
    }
    let args = [
        "--name=j",
        "--size=1m",
        "--rw=randread",
        "--time_based",
        "--runtime=1",
        "--rate_iops=50",
        "--numjobs=2",
    ];
    let doc = fio_null(&fio, &args);
    let per_job = total(&doc, "read", "total_ios") / 2;
    assert!(per_job.abs_diff(50) <= 2, "fio did {per_job} per job");
    let (_, plan) = tankbench(&args).unwrap();
    assert!(plan.groups[0].clones.iter().all(|c| c.spec.rate == 50));
}

#[test]
fn groups_are_fio_s() {
    let Some([fio]) = testkit::require(["fio"]) else {
        return;
    };
    let args = [
        "--size=64k",
        "--name=a",
        "--stonewall",
        "--name=b",
        "--name=c",
        "--stonewall",
        "--name=d",
        "--wait_for_previous",
    ];
    let doc = fio_null(&fio, &args);
    let fio_groups: Vec<u64> = jobs_of(&doc)
        .iter()
        .map(|j| j["groupid"].as_u64().unwrap())
        .collect();
    let (jobs, _) = tankbench(&args).unwrap();
    let ours: Vec<u64> = jobs.jobs.iter().map(|j| u64::from(j.group)).collect();
    assert_eq!(ours, fio_groups);
}

#[test]
fn the_job_file_form_is_fio_s_command_line_form() {
    let Some([fio]) = testkit::require(["fio"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("inc.fio"), "bs=8k ; from the include\n").unwrap();
    let job = dir.path().join("job.fio");
    std::fs::write(
        &job,
        "; a job file\n[global]\nsize=${TB_GOLDEN_SIZE}\ninclude inc.fio\n\n[w]\nrw=randwrite # inline\nfsync=4\n[r]\nstonewall\nrw=read\nnumjobs=$ncpus\n",
    )
    .unwrap();
    let out = testkit::output(
        Command::new(&fio)
            .arg("--showcmd")
            .arg(&job)
            .env("TB_GOLDEN_SIZE", "2m")
            .current_dir(dir.path()),
    )
    .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // fio --showcmd: `fio --size=2m --bs=8k --name=w --rw=randwrite ...`.
    let words: Vec<String> = shown
        .split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect();
    let var = |name: &str| (name == "TB_GOLDEN_SIZE").then(|| "2m".to_string());
    let expansion = Expansion {
        var: &var,
        keywords: Expansion::of_this_machine().keywords,
    };
    let from_file = fileio::fio::parse::read_job_file(&job, &expansion).unwrap();
    let from_words = parse_command_line(&words, &expansion)
        .unwrap()
        .command_line_jobs
        .unwrap();
    let a = Jobs::from_texts(&[from_file]).unwrap();
    let b = Jobs::from_texts(&[from_words]).unwrap();
    let settings = |j: &Jobs| {
        j.jobs
            .iter()
            .map(|j| (j.name.clone(), j.group, j.settings.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(settings(&a), settings(&b), "fio --showcmd: {shown}");
    assert_eq!(a.jobs[0].settings.bs, 8192);
    assert_eq!(a.jobs[0].settings.size, Some(2 << 20));
}

#[test]
fn options_outside_the_subset_are_refused_by_name_though_fio_knows_them() {
    let Some([fio]) = testkit::require(["fio"]) else {
        return;
    };
    for option in [
        "verify=crc32c",
        "bssplit=4k/50:8k/50",
        "io_size=1m",
        "offset=4k",
        "norandommap",
        "thinktime=10",
        "file_service_type=random",
        "kb_base=1000",
        "unlink=1",
        "new_group",
        "rate=1m",
        "cpus_allowed=0",
        "nice=1",
        "invalidate=0",
        "percentile_list=50:99",
        "write_lat_log=x",
    ] {
        let word = format!("--{option}");
        let args = ["--name=j", "--size=1m", word.as_str()];
        assert!(fio_accepts(&fio, &args), "fio knows {option}");
        let e = tankbench(&args).unwrap_err().to_string();
        let name = option.split('=').next().unwrap();
        assert!(
            e.contains(&format!("option '{name}' is not supported")),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }
    let args = ["--name=j", "--size=1m", "--nosuchoption=1"];
    assert!(!fio_accepts(&fio, &args));
    assert!(tankbench(&args).is_err());
}

/// The files a plan names are fio's: `name.clone.file` in the directory.
#[test]
fn files_are_named_as_fio_names_them() {
    let Some([fio]) = testkit::require(["fio"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = testkit::output(
        Command::new(&fio)
            .args([
                "--name=w",
                "--rw=write",
                "--size=64k",
                "--nrfiles=2",
                "--numjobs=2",
            ])
            .current_dir(dir.path()),
    )
    .unwrap();
    assert!(out.status.success());
    let mut fio_files: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| PathBuf::from(e.unwrap().file_name()))
        .collect();
    fio_files.sort();
    let (_, plan) = tankbench(&[
        "--name=w",
        "--rw=write",
        "--size=64k",
        "--nrfiles=2",
        "--numjobs=2",
    ])
    .unwrap();
    let mut ours: Vec<PathBuf> = plan
        .files
        .iter()
        .map(|f| PathBuf::from(f.path.file_name().unwrap()))
        .collect();
    ours.sort();
    assert_eq!(ours, fio_files);
    let sizes: Vec<u64> = plan.files.iter().map(|f| f.size).collect();
    assert!(sizes.iter().all(|&s| s == 32 << 10));
}

//! `report::import`: recorded fio and sysbench reports (tests/data/import,
//! made by fio 3.33 and sysbench 1.0.20 on this project's machine; the
//! sysbench 0.4.12 one is written from that version's message formats and
//! tested in src/import/sysbench_text.rs) and live
//! runs of the real tools become measured results whose figures are the
//! report's own numbers and whose workload maps as docs/report.md says.

// The imported figures are the printed numbers, read from the same text: exact
// equality is the point. Counts are printed whole numbers read as f64.
#![allow(
    clippy::float_cmp,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]

use fileio::result::{LatencyKey, ResultKind, RunResult};
use fileio::spec::{FsyncMode, IoMode, Mode};
use report::import::{import_file, parse_report, ImportError};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/import")
        .join(name)
}

fn fio_doc(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(data(name)).unwrap()).unwrap()
}

fn one(name: &str) -> RunResult {
    let mut runs = import_file(&data(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(runs.len(), 1, "{name}");
    runs.remove(0)
}

/// The number after `label` in a sysbench report (`    writes/s:   6883.31`).
fn printed(text: &str, label: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label}"));
    line.trim_start()[label.len()..]
        .trim()
        .trim_end_matches('s')
        .parse()
        .unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// fio's own figures of one direction of a one-entry report.
fn check_fio_direction(r: &RunResult, job: &Value, dir: &str) {
    let d = &job[dir];
    let (ios, bytes) = (
        d["total_ios"].as_u64().unwrap(),
        d["io_bytes"].as_u64().unwrap(),
    );
    let (count, rate, mib, key) = match dir {
        "read" => (
            r.counts.reads,
            r.rates.reads_per_s,
            r.rates.read_mib_per_s,
            LatencyKey::Read,
        ),
        _ => (
            r.counts.writes,
            r.rates.writes_per_s,
            r.rates.written_mib_per_s,
            LatencyKey::Write,
        ),
    };
    assert_eq!(count, ios, "{dir} count");
    let counted_bytes = match dir {
        "read" => r.counts.bytes_read,
        _ => r.counts.bytes_written,
    };
    assert_eq!(counted_bytes, bytes, "{dir} bytes");
    assert!(
        close(rate, d["iops"].as_f64().unwrap()),
        "{dir} iops {rate}"
    );
    assert!(close(mib, d["bw_bytes"].as_f64().unwrap() / 1048576.0));
    let l = &r.latency[&key];
    let lat = &d["lat_ns"];
    assert_eq!(l.count, lat["N"].as_u64().unwrap());
    assert!(close(l.mean_ms, lat["mean"].as_f64().unwrap() / 1e6));
    assert!(close(l.min_ms, lat["min"].as_f64().unwrap() / 1e6));
    assert!(close(l.max_ms, lat["max"].as_f64().unwrap() / 1e6));
    // fio's default percentiles are of the completion latency (clat).
    let p99 = d["clat_ns"]["percentile"]["99.000000"].as_f64().unwrap() / 1e6;
    assert!(close(l.at(99.0).unwrap(), p99.min(l.max_ms)), "{dir} p99");
}

#[test]
fn fio_group_reporting_randrw_fsync1() {
    let name = "fio-randrw-4jobs-fsync1-group.json";
    let doc = fio_doc(name);
    let job = &doc["jobs"][0];
    let r = one(name);
    assert_eq!(r.kind, ResultKind::Measured);
    assert_eq!(
        (r.tool.name.as_str(), r.tool.version.as_str()),
        ("fio", "3.33")
    );
    check_fio_direction(&r, job, "read");
    check_fio_direction(&r, job, "write");
    let syncs = job["sync"]["lat_ns"]["N"].as_u64().unwrap();
    assert_eq!(r.counts.fsyncs, syncs);
    assert_eq!(r.latency[&LatencyKey::Fsync].count, syncs);
    let runtime = job["read"]["runtime"].as_f64().unwrap() / 1000.0;
    assert!(close(r.total_time_s, runtime));
    assert!(close(r.rates.fsyncs_per_s, syncs as f64 / runtime));
    // fsync-all: the fsync is part of its write's event.
    assert_eq!(r.counts.events, r.counts.reads + r.counts.writes);
    assert!(!r.latency.contains_key(&LatencyKey::Event));

    let w = &r.workload;
    assert_eq!(w.mode, Mode::RndRw);
    assert_eq!(w.rw_ratio, 1.0, "rwmixread=50");
    assert_eq!((w.threads, w.queue_depth), (4, 1));
    assert_eq!((w.io_mode, w.engine.as_str()), (IoMode::Sync, "psync"));
    assert_eq!((w.block_size, w.request_size), (4096, 4096));
    assert_eq!(
        (w.file_num, w.file_size, w.total_size),
        (4, 8 << 20, 32 << 20)
    );
    assert!(w.fsync_all && !w.fsync_end && w.fsync_freq == 0);
    assert_eq!((w.time_limit_s, w.events_limit), (2, 0));
    assert!(w.extra_flags.is_empty());
    assert_eq!(
        w.directory,
        job["job options"]["directory"].as_str().unwrap()
    );
    // fio stamped the report at the end; the run began runtime earlier.
    let end = doc["timestamp"].as_u64().unwrap();
    assert_eq!(
        r.started_at,
        fileio::clock::rfc3339_of_unix_seconds(end - 3)
    );
    // fio syncs after reads too (about one sync per I/O): said, with advice.
    assert!(r.counts.fsyncs > r.counts.writes * 3 / 2);
    assert!(
        r.warnings.iter().any(|w| w.code == "fio_syncs_after_reads"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn fio_per_job_json_plus_is_added_up() {
    let name = "fio-randwrite-2jobs-fdatasync4-perjob.jsonplus.json";
    let doc = fio_doc(name);
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "one entry per numjobs clone");
    let r = one(name);
    let sum = |f: &dyn Fn(&Value) -> u64| jobs.iter().map(f).sum::<u64>();
    assert_eq!(
        r.counts.writes,
        sum(&|j| j["write"]["total_ios"].as_u64().unwrap())
    );
    assert_eq!(
        r.counts.bytes_written,
        sum(&|j| j["write"]["io_bytes"].as_u64().unwrap())
    );
    // fdatasync calls show in the sync latency's N (fio's total_ios stays 0).
    let syncs = sum(&|j| j["sync"]["lat_ns"]["N"].as_u64().unwrap());
    assert!(syncs > 0);
    assert_eq!(r.counts.fsyncs, syncs);
    // Periodic syncs are events, as sysbench counts them.
    assert_eq!(r.counts.events, r.counts.writes + syncs);
    let runtime = jobs
        .iter()
        .map(|j| j["write"]["runtime"].as_u64().unwrap())
        .max()
        .unwrap() as f64
        / 1000.0;
    assert!(close(
        r.rates.writes_per_s,
        r.counts.writes as f64 / runtime
    ));

    let l = &r.latency[&LatencyKey::Write];
    let lat = |j: &Value, k: &str| j["write"]["lat_ns"][k].as_f64().unwrap();
    assert_eq!(
        l.count,
        sum(&|j| j["write"]["lat_ns"]["N"].as_u64().unwrap())
    );
    let min = jobs.iter().map(|j| lat(j, "min")).fold(f64::MAX, f64::min);
    let max = jobs.iter().map(|j| lat(j, "max")).fold(0.0, f64::max);
    assert!(close(l.min_ms, min / 1e6) && close(l.max_ms, max / 1e6));
    let weighted: f64 = jobs.iter().map(|j| lat(j, "mean") * lat(j, "N")).sum();
    assert!(close(l.mean_ms, weighted / l.count as f64 / 1e6));
    // json+ bins of both jobs, added: the histogram and its percentiles.
    let bins: u64 = l.histogram.iter().map(|(_, c)| c).sum();
    assert_eq!(bins, l.count);
    let p50 = l.at(50.0).expect("p50 from the merged bins");
    assert!(l.min_ms <= p50 && p50 <= l.max_ms);
    assert_eq!(r.threads.len(), 2);
    assert_eq!(
        r.threads.iter().map(|t| t.events).sum::<u64>(),
        r.counts.writes
    );

    let w = &r.workload;
    assert_eq!(w.mode, Mode::RndWr);
    assert_eq!((w.threads, w.block_size), (2, 8192));
    assert_eq!((w.fsync_freq, w.fsync_all, w.fsync_end), (4, false, true));
    assert_eq!(w.fsync_mode, FsyncMode::Fdatasync);
    assert_eq!((w.file_num, w.total_size), (2, 8 << 20));
    // runtime=1 without time_based: a limit of one second.
    assert_eq!((w.time_limit_s, w.events_limit), (1, 0));
}

#[test]
fn fio_async_direct_maps_to_async_io_with_its_depth() {
    let r = one("fio-randread-libaio-qd16-direct.json");
    let w = &r.workload;
    assert_eq!(w.mode, Mode::RndRd);
    assert_eq!((w.io_mode, w.engine.as_str()), (IoMode::Async, "libaio"));
    assert_eq!(w.queue_depth, 16);
    assert_eq!(w.extra_flags, ["direct"]);
    assert_eq!(r.counts.writes, 0);
    assert!(!r.latency.contains_key(&LatencyKey::Write));
    let doc = fio_doc("fio-randread-libaio-qd16-direct.json");
    check_fio_direction(&r, &doc["jobs"][0], "read");
}

#[test]
fn fio_groups_in_turn_are_runs_of_their_own() {
    let runs = import_file(&data("fio-two-groups-stonewall.json")).unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].workload.mode, Mode::SeqRd);
    assert_eq!(runs[0].counts.writes, 0);
    assert_eq!(runs[1].workload.mode, Mode::SeqWr);
    assert_eq!(runs[1].workload.fsync_freq, 16);
    assert_eq!(runs[1].counts.reads, 0);
    assert!(runs[1].counts.fsyncs > 0);
}

/// A refusal: the error's text names the file and each of `words`.
fn refused(name: &str, bytes: &[u8], words: &[&str]) -> ImportError {
    let e = parse_report(Path::new(name), bytes, None).expect_err(name);
    let msg = e.to_string();
    assert_eq!(msg.lines().count(), 1, "{msg}");
    assert!(msg.starts_with(name), "{msg}");
    for w in words {
        assert!(msg.contains(w), "{w} not named: {msg}");
    }
    e
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(data(name)).unwrap()
}

#[test]
fn fio_jobs_that_cannot_be_mapped_are_refused_by_job_and_field() {
    let e = refused(
        "fio-reader-and-writer-together.json",
        &fixture("fio-reader-and-writer-together.json"),
        &["'writer'", "rw=randwrite", "'reader'", "rw=randread"],
    );
    assert!(matches!(e, ImportError::FioJobsDiffer(_)));
    let e = refused(
        "fio-readwrite-sequential-mixed.json",
        &fixture("fio-readwrite-sequential-mixed.json"),
        &["'mixed'", "rw=readwrite", "randrw"],
    );
    assert!(matches!(e, ImportError::FioUnsupported(ref u) if u.field == "rw"));

    // A real report with one job setting changed to what fileio cannot run.
    let edited = |field: &str, value: Option<&str>| {
        let mut doc = fio_doc("fio-randrw-4jobs-fsync1-group.json");
        let opts = doc["jobs"][0]["job options"].as_object_mut().unwrap();
        match value {
            Some(v) => opts.insert(field.into(), v.into()),
            None => opts.remove(field),
        };
        serde_json::to_vec(&doc).unwrap()
    };
    for (field, value, named) in [
        ("rw", Some("randtrim"), "rw=randtrim"),
        ("zonemode", Some("zbd"), "zonemode=zbd"),
        ("bs", Some("4k,64k"), "bs=4k,64k"),
        ("bssplit", Some("4k/50:64k/50"), "bssplit="),
        ("ioengine", Some("null"), "ioengine=null"),
        ("size", None, "size=(not given)"),
        ("size", Some("50%"), "size=50%"),
        ("fdatasync", Some("8"), "fdatasync=8"),
        ("rate_iops", Some("100"), "rate_iops=100"),
    ] {
        let e = refused("edited.json", &edited(field, value), &["'rr'", named]);
        assert!(matches!(e, ImportError::FioUnsupported(_)), "{field}: {e}");
    }
    // A group_reporting entry whose job time says more jobs ran than numjobs.
    let mut doc = fio_doc("fio-randrw-4jobs-fsync1-group.json");
    doc["jobs"][0]["job_runtime"] = 20_000.into();
    refused(
        "crowded.json",
        &serde_json::to_vec(&doc).unwrap(),
        &["group_reporting", "numjobs"],
    );
}

#[test]
fn sysbench_rndrw_figures_are_the_printed_ones() {
    let name = "sysbench-rndrw-4threads-fsyncall.txt";
    let text = String::from_utf8(fixture(name)).unwrap();
    let r = one(name);
    assert_eq!(r.kind, ResultKind::Measured);
    assert_eq!(
        (r.tool.name.as_str(), r.tool.version.as_str()),
        ("sysbench", "1.0.20")
    );
    assert_eq!(r.rates.reads_per_s, printed(&text, "reads/s:"));
    assert_eq!(r.rates.writes_per_s, printed(&text, "writes/s:"));
    assert_eq!(r.rates.fsyncs_per_s, printed(&text, "fsyncs/s:"));
    assert_eq!(r.rates.read_mib_per_s, printed(&text, "read, MiB/s:"));
    assert_eq!(r.rates.written_mib_per_s, printed(&text, "written, MiB/s:"));
    assert_eq!(r.total_time_s, printed(&text, "total time:"));
    assert_eq!(
        r.counts.events,
        printed(&text, "total number of events:") as u64
    );
    let l = &r.latency[&LatencyKey::Event];
    assert_eq!(l.count, r.counts.events);
    assert_eq!(l.min_ms, printed(&text, "min:"));
    assert_eq!(l.mean_ms, printed(&text, "avg:"));
    assert_eq!(l.max_ms, printed(&text, "max:"));
    assert_eq!(l.sum_ms, printed(&text, "sum:"));
    assert_eq!(l.at(95.0), Some(printed(&text, "95th percentile:")));
    // Counts are the rates over the total time.
    let writes = (r.rates.writes_per_s * r.total_time_s).round() as u64;
    assert_eq!(r.counts.writes, writes);
    assert_eq!(r.counts.bytes_written, writes * 4096);

    let w = &r.workload;
    assert_eq!(w.mode, Mode::RndRw);
    assert_eq!((w.threads, w.block_size), (4, 4096));
    assert_eq!(
        (w.file_num, w.file_size, w.total_size),
        (128, 512 << 10, 64 << 20)
    );
    assert!((w.rw_ratio - 1.5).abs() < 1e-6);
    assert!(w.fsync_all && !w.fsync_end && w.fsync_freq == 0);
    assert_eq!((w.io_mode, w.engine.as_str()), (IoMode::Sync, "psync"));
    assert_eq!((w.time_limit_s, w.events_limit), (2, 0));
}

#[test]
fn sysbench_header_lines_map_to_the_workload() {
    let r = one("sysbench-seqrd-p99.txt");
    assert_eq!(r.workload.mode, Mode::SeqRd);
    assert!(r.latency[&LatencyKey::Event].at(99.0).is_some());
    assert_eq!((r.workload.fsync_freq, r.workload.fsync_end), (100, true));

    let r = one("sysbench-rndwr-async-direct.txt");
    let w = &r.workload;
    assert_eq!((w.mode, w.io_mode), (Mode::RndWr, IoMode::Async));
    assert_eq!(w.extra_flags, ["direct"]);
    assert_eq!((w.fsync_freq, w.fsync_end, w.block_size), (10, true, 16384));

    let r = one("sysbench-seqrewr-merged.txt");
    let w = &r.workload;
    assert_eq!(w.mode, Mode::SeqRewr);
    assert_eq!(
        (w.file_num, w.file_size, w.request_size),
        (8, 8 << 20, 64 << 10)
    );
    let text = String::from_utf8(fixture("sysbench-seqrewr-merged.txt")).unwrap();
    // A merged request counts once and moves 64 KiB.
    let mib = r.counts.bytes_written as f64 / 1048576.0 / r.total_time_s;
    assert!(
        (mib - printed(&text, "written, MiB/s:")).abs() < 0.05,
        "{mib}"
    );

    let r = one("sysbench-rndrd-events2000.txt");
    assert_eq!(
        (r.workload.events_limit, r.workload.time_limit_s),
        (2000, 0)
    );
    assert_eq!(r.counts.events, 2000);
}

#[test]
fn reports_that_are_not_fileio_runs_are_refused() {
    refused(
        "sysbench-seqrewr-failed-no-report.txt",
        &fixture("sysbench-seqrewr-failed-no-report.txt"),
        &["General statistics"],
    );
    refused(
        "sysbench-cpu-not-fileio.txt",
        &fixture("sysbench-cpu-not-fileio.txt"),
        &["no fileio run"],
    );
    let e = refused(
        "notes.txt",
        b"just some notes\n",
        &["not a report tankbench imports", "fio JSON", "sysbench"],
    );
    assert!(matches!(e, ImportError::UnknownFormat { .. }));
    // A tankbench result is JSON but not fio's.
    refused(
        "result.json",
        br#"{"schema_version": 1}"#,
        &["JSON without a \"fio version\""],
    );
    // A report cut off in the middle.
    let text = fixture("fio-randrw-4jobs-fsync1-group.json");
    refused("cut.json", &text[..text.len() / 2], &["not a report"]);
}

/// Run a peer in `dir`; its stdout.
fn run(dir: &Path, program: &Path, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run peer");
    assert!(
        out.status.success(),
        "{} {args:?}: {}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn live_fio_output_imports_with_its_own_figures() {
    let fio = testkit::require!("fio");
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let out = run(
        d.path(),
        &fio,
        &[
            "--name=live",
            &format!("--directory={dir}"),
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=4k",
            "--numjobs=2",
            "--fsync=8",
            "--size=4M",
            "--runtime=1",
            "--time_based=1",
            "--group_reporting",
            "--output-format=json",
        ],
    );
    let runs = parse_report(Path::new("live.json"), out.as_bytes(), None).unwrap();
    assert_eq!(runs.len(), 1);
    let r = &runs[0];
    let doc: Value = serde_json::from_str(&out).unwrap();
    check_fio_direction(r, &doc["jobs"][0], "read");
    check_fio_direction(r, &doc["jobs"][0], "write");
    let w = &r.workload;
    assert_eq!((w.mode, w.threads, w.fsync_freq), (Mode::RndRw, 2, 8));
    assert!((w.rw_ratio - 70.0 / 30.0).abs() < 1e-6, "{}", w.rw_ratio);
}

#[test]
fn live_sysbench_output_imports_with_its_own_figures() {
    let sysbench = testkit::require!("sysbench");
    let d = tempfile::tempdir().unwrap();
    let size = "--file-total-size=16M";
    run(
        d.path(),
        &sysbench,
        &["fileio", size, "--file-num=4", "prepare"],
    );
    let out = run(
        d.path(),
        &sysbench,
        &[
            "fileio",
            size,
            "--file-num=4",
            "--file-test-mode=rndwr",
            "--file-fsync-freq=5",
            "--file-block-size=8K",
            "--threads=2",
            "--time=1",
            "run",
        ],
    );
    let r = parse_report(Path::new("live.txt"), out.as_bytes(), None)
        .unwrap()
        .remove(0);
    assert_eq!(r.rates.writes_per_s, printed(&out, "writes/s:"));
    assert_eq!(r.rates.fsyncs_per_s, printed(&out, "fsyncs/s:"));
    assert_eq!(
        r.counts.events,
        printed(&out, "total number of events:") as u64
    );
    assert_eq!(r.latency[&LatencyKey::Event].mean_ms, printed(&out, "avg:"));
    let w = &r.workload;
    assert_eq!((w.mode, w.threads, w.block_size), (Mode::RndWr, 2, 8192));
    assert_eq!((w.file_num, w.total_size, w.fsync_freq), (4, 16 << 20, 5));
}

/// Issue 37: a run of no time is refused, naming the field, in both formats.
#[test]
fn a_run_of_no_time_is_refused_naming_the_field() {
    let mut doc = fio_doc("fio-randrw-4jobs-fsync1-group.json");
    doc["jobs"][0]["read"]["runtime"] = 0.into();
    doc["jobs"][0]["write"]["runtime"] = 0.into();
    let e = refused(
        "zero.json",
        &serde_json::to_vec(&doc).unwrap(),
        &["'rr'", "\"runtime\" is 0 ms", "more than 0"],
    );
    assert!(matches!(e, ImportError::FioMalformed { .. }));

    let text = String::from_utf8(fixture("sysbench-rndrw-4threads-fsyncall.txt")).unwrap();
    let zero = text.replace("2.0198s", "0.0000s");
    assert_ne!(zero, text);
    let e = refused(
        "zero.txt",
        zero.as_bytes(),
        &["\"total time:\" is 0s", "more than 0"],
    );
    assert!(matches!(e, ImportError::Sysbench { .. }));
}

/// Issue 37: a count that is there but out of range says so (it used to
/// read as missing: `read: no "total_ios"`).
#[test]
fn counts_out_of_range_are_named_as_such() {
    let text = String::from_utf8(fixture("fio-randrw-4jobs-fsync1-group.json")).unwrap();
    let original = "\"total_ios\" : 6425,";
    assert!(text.contains(original));
    for value in ["18446744073709551616", "1e30", "-1", "2.5"] {
        let edited = text.replacen(original, &format!("\"total_ios\" : {value},"), 1);
        let e = refused(
            "range.json",
            edited.as_bytes(),
            &[
                "read: \"total_ios\" is",
                "out of range",
                "18446744073709551615",
            ],
        );
        assert!(!e.to_string().contains("no \"total_ios\""), "{e}");
    }
    // Two jobs whose counts add up past 2^64 - 1 are refused, not wrapped.
    let mut doc = fio_doc("fio-randwrite-2jobs-fdatasync4-perjob.jsonplus.json");
    for job in doc["jobs"].as_array_mut().unwrap() {
        job["write"]["total_ios"] = u64::MAX.into();
    }
    refused(
        "sum.json",
        &serde_json::to_vec(&doc).unwrap(),
        &["write: \"total_ios\" summed", "out of range"],
    );
}

/// Issue 37: a NaN in fio's JSON says the JSON does not parse and where,
/// not that the "fio version" is missing.
#[test]
fn a_nan_in_fio_json_is_named_where_it_stands() {
    let text = String::from_utf8(fixture("fio-randrw-4jobs-fsync1-group.json")).unwrap();
    for bad in ["NaN", "nan", "-inf"] {
        let edited = text.replacen("\"runtime\" : 2001,", &format!("\"runtime\" : {bad},"), 1);
        let e = refused(
            "nan.json",
            edited.as_bytes(),
            &["does not parse", "line 30", bad, "JSON has no NaN"],
        );
        assert!(!e.to_string().contains("fio version"), "{e}");
    }
}

/// Issue 37: a UTF-8 byte order mark before a report is accepted.
#[test]
fn a_byte_order_mark_is_accepted() {
    for name in [
        "fio-randrw-4jobs-fsync1-group.json",
        "sysbench-rndrw-4threads-fsyncall.txt",
    ] {
        let plain = parse_report(Path::new(name), &fixture(name), None).unwrap();
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend(fixture(name));
        let marked = parse_report(Path::new(name), &bytes, None)
            .unwrap_or_else(|e| panic!("{name} with a BOM: {e}"));
        assert_eq!(marked.len(), plain.len());
        assert_eq!(marked[0].counts, plain[0].counts);
        assert_eq!(marked[0].workload, plain[0].workload);
    }
}

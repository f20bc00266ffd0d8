//! The simulator against fileio's own generator, against itself, and against
//! closed forms and the direction of the physics.

use fileio::options::RunSpec;
use fileio::result::{LatencyKey, RunResult};
use fileio::run::generator::Generator;
use fileio::run::runner::worker_seeds;
use sim::{Simulated, Simulation, SystemModel};
use zfs_model::diskmodel::Op;

fn spec(extra: &[&str]) -> RunSpec {
    let mut words = vec!["--file-total-size=16M", "--file-num=4", "--rand-seed=7"];
    words.extend_from_slice(extra);
    RunSpec::from_words(&words).unwrap_or_else(|e| panic!("{words:?}: {e}"))
}

fn system(toml: &str) -> SystemModel {
    SystemModel::from_toml(toml).unwrap_or_else(|e| panic!("{e}"))
}

/// The reference user's kind of system: a guest on ESXi over NFS, three
/// raidz2 vdevs of 8 disks.
const ESXI: &str = r#"
name = "esxi"
[client]
protocol = "esxi-nfs"
[link]
link = "1G"
[pool]
layout = "3xraidz2-8"
disk = "hdd-7200"
"#;

fn with_log(base: &str, log: &str) -> SystemModel {
    system(&format!("log = {log}\n{base}"))
}

#[test]
fn the_request_stream_is_fileios_for_the_same_seed() {
    // Periodic fsyncs (the default every 100 requests) go through the
    // generator's shared cursor, so the stream depends on the order the
    // threads ask: replay the simulator's order on a fresh generator. The
    // run is long enough to issue the 1000 requests traced (about 130 a
    // second on this system).
    let s = spec(&["--file-test-mode=rndwr", "--threads=4", "--time=20"]);
    let Simulated {
        result: _,
        trace: issued,
        ..
    } = Simulation::new(&s, &system(ESXI))
        .trace(1000)
        .run()
        .unwrap();
    assert_eq!(issued.len(), 1000);
    let generator = Generator::new(&s);
    let mut rngs = worker_seeds(&s, 0);
    for (i, got) in issued.iter().enumerate() {
        let want = generator.next(&mut rngs[got.thread], got.thread);
        assert_eq!(got.request, want, "request {i} of thread {}", got.thread);
    }
    assert!(issued
        .iter()
        .any(|i| i.request.op == fileio::run::generator::Op::Fsync));
    assert!((0..4).all(|t| issued.iter().any(|i| i.thread == t)));
}

#[test]
fn rndrw_offsets_per_thread_are_fileios() {
    // rndrw's read/write choice follows completions (timing), the offsets
    // follow each thread's own generator: compare those per thread.
    let s = spec(&[
        "--file-test-mode=rndrw",
        "--threads=4",
        "--time=2",
        "--file-fsync-all",
    ]);
    let Simulated {
        result: _,
        trace: issued,
        ..
    } = Simulation::new(&s, &system(ESXI))
        .trace(1000)
        .run()
        .unwrap();
    let generator = Generator::new(&s);
    let mut rngs = worker_seeds(&s, 0);
    for got in &issued {
        let want = generator.next(&mut rngs[got.thread], got.thread);
        assert_eq!(
            (got.request.file, got.request.pos, got.request.size),
            (want.file, want.pos, want.size)
        );
    }
}

fn without_clock(mut r: RunResult) -> RunResult {
    r.started_at.clear();
    r
}

#[test]
fn same_input_same_prediction() {
    let s = spec(&[
        "--file-test-mode=rndrw",
        "--threads=4",
        "--time=5",
        "--file-fsync-all",
    ]);
    let a = without_clock(Simulation::new(&s, &system(ESXI)).run().unwrap().result);
    let b = without_clock(Simulation::new(&s, &system(ESXI)).run().unwrap().result);
    assert_eq!(a, b);
    assert_eq!(a.kind, fileio::result::ResultKind::Predicted);
    assert!(a.counts.events > 0);
}

#[test]
fn rndrw_keeps_its_ratio_and_fsync_all_one_fsync_per_write() {
    let s = spec(&[
        "--file-test-mode=rndrw",
        "--threads=4",
        "--time=10",
        "--file-fsync-all",
    ]);
    let r = Simulation::new(&s, &system(ESXI)).run().unwrap().result;
    let c = r.counts;
    assert!(c.writes > 100, "{c:?}");
    // sysbench reads when (completed reads + 1) / (counted writes + 1) is
    // below the ratio, and counts a write only after its fsync. When a
    // thread chooses, each of the other threads may have one operation
    // chosen and not counted, so the counts lag the choices by at most
    // threads - 1. The last read chosen (the R-th) saw at least R - threads
    // completed reads and at most W writes: R - threads + 1 < 1.5 (W + 1).
    // The last write chosen (the W-th) saw at least W - threads counted
    // writes and at most R reads: R + 1 >= 1.5 (W - threads + 1). So
    // -1.5 threads + 0.5 <= R - 1.5 W < threads + 0.5, whatever the length.
    let threads = 4.0;
    let excess = c.reads as f64 - 1.5 * c.writes as f64;
    assert!(
        (-1.5 * threads + 0.5..threads + 0.5).contains(&excess),
        "reads {} - 1.5 x writes {} = {excess}",
        c.reads,
        c.writes
    );
    assert_eq!(c.fsyncs, c.writes);
    assert_eq!(c.events, c.reads + c.writes);
    assert_eq!(r.latency[&LatencyKey::Fsync].count, c.fsyncs);
}

#[test]
fn littles_law_holds_on_the_output() {
    for threads in ["1", "4", "16"] {
        let s = spec(&[
            "--file-test-mode=rndrw",
            &format!("--threads={threads}"),
            "--time=20",
            "--file-fsync-all",
        ]);
        let r = Simulation::new(&s, &system(ESXI)).run().unwrap().result;
        let throughput = r.counts.events as f64 / r.total_time_s;
        let mean_s = r.latency[&LatencyKey::Event].mean_ms / 1e3;
        let n: f64 = threads.parse().unwrap();
        let l = throughput * mean_s;
        assert!((l - n).abs() / n < 0.01, "{threads} threads: X*R = {l}");
    }
}

#[test]
fn one_sync_writer_on_a_fixed_latency_log_matches_the_closed_form() {
    // Local client, sync=always: each write is server CPU + the commit's
    // software time (zil_commit before it issues the block) + one log
    // block (4 KiB + a 184-byte record, 8 KiB on 4 KiB sectors) written and
    // flushed.
    let sys = system(
        r#"
[client]
protocol = "local"
[server]
sync = "always"
cpu_us = 30
commit_cpu_us = 100
[log]
kind = "flash"
read_ms = 0.1
write_ms = 0.2
flush_ms = 0.5
flush_ms_per_mb = 0.0
read_mb_s = 1000.0
write_mb_s = 1000.0
parallelism = 1
"#,
    );
    let s = spec(&[
        "--file-test-mode=rndwr",
        "--threads=1",
        "--file-block-size=4K",
        "--time=5",
        "--file-fsync-freq=0",
    ]);
    let r = Simulation::new(&s, &sys).run().unwrap().result;
    let per_write_s = 30e-6 + 100e-6 + 0.2e-3 + 8192.0 / 1e9 + 0.5e-3;
    let expect = 1.0 / per_write_s;
    let got = r.rates.writes_per_s;
    assert!((got - expect).abs() / expect < 0.01, "{got} vs {expect}");
}

#[test]
fn a_faster_log_device_never_lowers_writes() {
    let s = spec(&[
        "--file-test-mode=rndrw",
        "--threads=4",
        "--time=10",
        "--file-fsync-all",
    ]);
    let mut last = Simulation::new(&s, &system(ESXI))
        .run()
        .unwrap()
        .result
        .rates
        .writes_per_s;
    for flush_ms in [2.0, 0.5, 0.1, 0.01] {
        let log = format!(
            "{{ kind = \"flash\", read_ms = 0.09, write_ms = 0.05, flush_ms = {flush_ms}, flush_ms_per_mb = 0.0, read_mb_s = 530.0, write_mb_s = 500.0, parallelism = 4 }}"
        );
        let w = Simulation::new(&s, &with_log(ESXI, &log))
            .run()
            .unwrap()
            .result
            .rates
            .writes_per_s;
        assert!(w >= last, "flush {flush_ms} ms: {w} < {last}");
        last = w;
    }
}

#[test]
fn sync_disabled_removes_the_commit_cost() {
    let s = spec(&[
        "--file-test-mode=rndwr",
        "--threads=4",
        "--time=10",
        "--file-fsync-all",
    ]);
    let disabled = |log: &str| {
        let text = format!("log = {log}\n{ESXI}")
            .replace("[pool]", "[server]\nsync = \"disabled\"\n[pool]");
        Simulation::new(&s, &system(&text)).run().unwrap().result
    };
    let standard = Simulation::new(&s, &system(ESXI)).run().unwrap().result;
    let in_pool = without_clock(disabled("\"none\""));
    let nvme = without_clock(disabled("\"nvme\""));
    // No commit: the log device no longer matters, and a write costs the
    // round trip, not a disk access.
    assert_eq!(in_pool.counts, nvme.counts);
    let w = |r: &RunResult| r.latency[&LatencyKey::Write].mean_ms;
    assert!(w(&in_pool) < 1.0, "{}", w(&in_pool));
    assert!(w(&standard) > 3.0, "{}", w(&standard));
    assert!(in_pool.rates.writes_per_s > 5.0 * standard.rates.writes_per_s);
}

#[test]
fn lacp_does_not_change_one_clients_latency() {
    let s = spec(&[
        "--file-test-mode=rndrw",
        "--threads=4",
        "--time=5",
        "--file-fsync-all",
    ]);
    let one = without_clock(Simulation::new(&s, &system(ESXI)).run().unwrap().result);
    let two = without_clock(
        Simulation::new(&s, &system(&ESXI.replace("\"1G\"", "\"2x1G\"")))
            .run()
            .unwrap()
            .result,
    );
    assert_eq!(one.counts, two.counts);
    assert_eq!(one.latency, two.latency);
}

#[test]
fn bad_system_fields_are_named() {
    let e = SystemModel::from_toml("[pool]\nlayout = \"3xraidz9-8\"")
        .unwrap()
        .resolve()
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("system model: pool.layout:"), "{e}");
    assert!(!e.contains('\n'));
    let e = SystemModel::from_toml("[server]\nsink = \"always\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("sink"), "{e}");
    let e = SystemModel::from_toml("log = \"floppy\"")
        .unwrap()
        .resolve()
        .unwrap_err()
        .to_string();
    assert!(e.contains("log: unknown device 'floppy'"), "{e}");
}

/// One writer, fsync after every write, in-pool ZIL on 7200 rpm disks: the
/// write's and the fsync's mean latency, ms, on a client of `protocol`.
fn write_and_fsync_ms(protocol: &str, client_extra: &str, fileio_extra: &[&str]) -> (f64, f64) {
    let text = ESXI.replace(
        "protocol = \"esxi-nfs\"",
        &format!("protocol = \"{protocol}\"\n{client_extra}"),
    );
    let mut words = vec![
        "--file-test-mode=rndwr",
        "--threads=1",
        "--time=10",
        "--file-fsync-all",
    ];
    words.extend_from_slice(fileio_extra);
    let r = Simulation::new(&spec(&words), &system(&text))
        .run()
        .unwrap()
        .result;
    (
        r.latency[&LatencyKey::Write].mean_ms,
        r.latency[&LatencyKey::Fsync].mean_ms,
    )
}

#[test]
fn iscsi_and_smb_write_back_and_commit_on_fsync() {
    for protocol in ["iscsi", "smb", "linux-nfs"] {
        let (write, fsync) = write_and_fsync_ms(protocol, "", &[]);
        // A write-back WRITE is one round trip; the flush (SYNCHRONIZE
        // CACHE, SMB2 FLUSH, COMMIT) waits for a log block on the disks.
        assert!(write < 1.0, "{protocol}: write {write} ms");
        assert!(fsync > 3.0, "{protocol}: fsync {fsync} ms");
        // FUA / WRITE_THROUGH / FILE_SYNC writes wait for the log too.
        let (write, _) = write_and_fsync_ms(protocol, "stable_writes = true", &[]);
        assert!(write > 3.0, "{protocol} stable: write {write} ms");
        // So does a write to a file opened O_SYNC or O_DSYNC.
        for flag in ["sync", "dsync"] {
            let extra = format!("--file-extra-flags={flag}");
            let (write, _) = write_and_fsync_ms(protocol, "", &[&extra]);
            assert!(write > 3.0, "{protocol} O_{flag}: write {write} ms");
        }
    }
    // ESXi sends every WRITE stable by default; turning that off is allowed.
    let (write, _) = write_and_fsync_ms("esxi-nfs", "", &[]);
    assert!(write > 3.0, "esxi-nfs: write {write} ms");
    let (write, _) = write_and_fsync_ms("esxi-nfs", "stable_writes = false", &[]);
    assert!(write < 1.0, "esxi-nfs unstable: write {write} ms");
}

#[test]
fn protocol_names_parse_and_are_refused_with_the_accepted_list() {
    for p in sim::system::Protocol::ALL {
        assert_eq!(sim::system::Protocol::parse(p.name()), Some(p));
    }
    let e = SystemModel::from_toml("[client]\nprotocol = \"afp\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("afp") && !e.contains('\n'), "{e}");
}

/// The reference user's box as shipped in examples/systems.
const REFERENCE: &str = include_str!("../../../examples/systems/reference-nas.toml");

/// Standard deviation of the per-thread event counts over their mean.
fn fairness_spread(r: &RunResult) -> f64 {
    let n = r.threads.len() as f64;
    let mean = r.threads.iter().map(|t| t.events as f64).sum::<f64>() / n;
    let var = r
        .threads
        .iter()
        .map(|t| (t.events as f64 - mean).powi(2))
        .sum::<f64>()
        / n;
    var.sqrt() / mean
}

/// The largest and the smallest thread's events apart, over their mean.
fn fairness_range(r: &RunResult) -> f64 {
    let events: Vec<f64> = r.threads.iter().map(|t| t.events as f64).collect();
    let mean = events.iter().sum::<f64>() / events.len() as f64;
    let max = events.iter().copied().fold(f64::MIN, f64::max);
    let min = events.iter().copied().fold(f64::MAX, f64::min);
    (max - min) / mean
}

#[test]
fn every_reference_cell_keeps_its_threads_within_five_per_cent() {
    // Issue 21 found 1xraidz3-24 without a log device at [2383, 16666,
    // 2383, 2383] events for four identical threads. Each of the shipped
    // matrix's 12 cells, with the matrix's own workload, must keep its
    // fastest and slowest thread within 5 % of the mean (measured
    // 2026-12-04: 0.4-3.3 %).
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/systems");
    let text = std::fs::read_to_string(dir.join("reference-matrix.toml")).unwrap();
    let m = sim::matrix::MatrixSpec::from_toml(&text, &dir, sim::limits::DEFAULT_MAX_CELLS)
        .unwrap_or_else(|e| panic!("{e}"));
    let spec = RunSpec::from_words(&m.workload).unwrap_or_else(|e| panic!("{e}"));
    let cells = m.cells().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cells.len(), 12);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let results = sim::matrix::run_cells(&spec, &cells, cores).unwrap_or_else(|e| panic!("{e}"));
    for r in &results {
        assert_eq!(r.threads.len(), 4);
        let range = fairness_range(r);
        assert!(
            range <= 0.05,
            "{:?}: per-thread events {:?} ({:.1} % apart)",
            r.labels,
            r.threads.iter().map(|t| t.events).collect::<Vec<_>>(),
            range * 100.0
        );
    }
}

#[test]
fn threads_share_the_work_fairly_on_the_reference_command() {
    // Real runs share the events evenly. Two model errors once made them
    // not: rndrw's write counted before its fsync (one thread did every
    // read, the others only wrote), and each guest fsync sending journal
    // writes of its own (the threads split into groups taking turns at the
    // ZIL, the larger group taking more of the reads). With the write
    // counted after its fsync, as sysbench does, and one guest journal
    // whose commit wakes every fsync waiting for it, the threads are even
    // with varied service times and with every time fixed (measured: a
    // spread of 1.2 % and 0.1 % of the mean).
    let s = RunSpec::from_words(&[
        "--file-total-size=4G",
        "--file-test-mode=rndrw",
        "--file-block-size=4K",
        "--threads=4",
        "--time=30",
        "--file-fsync-all",
        "--rand-seed=1",
    ])
    .unwrap();
    let r = Simulation::new(&s, &system(REFERENCE))
        .run()
        .unwrap()
        .result;
    let spread = fairness_spread(&r);
    assert!(spread < 0.03, "per-thread events {:?}", r.threads);
    let fixed = REFERENCE
        .replace("[server]", "[server]\ncpu_service = \"fixed\"")
        .replace("[client]", "[client]\ncpu_service = \"fixed\"")
        .replace("[link]", "[link]\nrtt_spread = 0.0");
    let fixed = Simulation::new(&s, &system(&fixed)).run().unwrap().result;
    assert!(
        fairness_spread(&fixed) < 0.03,
        "fixed service times: per-thread events {:?}",
        fixed.threads
    );
    // Deterministic for a seed, and the variation does come from the seed.
    let again = Simulation::new(&s, &system(REFERENCE))
        .run()
        .unwrap()
        .result;
    assert_eq!(r.threads, again.threads);
    let mut other = s.clone();
    other.rand_seed += 1;
    let other = Simulation::new(&other, &system(REFERENCE))
        .run()
        .unwrap()
        .result;
    assert_ne!(r.threads, other.threads);
}

/// Largest per-thread event count over the smallest, less one.
fn max_over_min(r: &RunResult) -> f64 {
    let max = r.threads.iter().map(|t| t.events).max().unwrap() as f64;
    let min = r.threads.iter().map(|t| t.events).min().unwrap() as f64;
    max / min - 1.0
}

#[test]
fn threads_are_within_five_percent_on_a_no_log_raidz_cell() {
    // Issue 21: 1xraidz3-24 without a log device gave [2383, 16666, 2383,
    // 2383] events to four identical threads. rndrw's choice counted a
    // write before its fsync (sysbench counts it after), so the read quota
    // each write opened went to the one thread that was reading.
    let s = RunSpec::from_words(&[
        "--file-total-size=4G",
        "--file-test-mode=rndrw",
        "--file-block-size=4K",
        "--threads=4",
        "--time=60",
        "--file-fsync-all",
        "--rand-seed=1",
    ])
    .unwrap();
    for layout in ["1xraidz3-24", "2xraidz2-12", "3xraidz2-8"] {
        let text = REFERENCE
            .replace("log = \"flash-unknown\"", "log = \"none\"")
            .replace("layout = \"3xraidz2-8\"", &format!("layout = \"{layout}\""));
        let r = Simulation::new(&s, &system(&text)).run().unwrap().result;
        assert!(
            max_over_min(&r) < 0.05,
            "{layout}: per-thread events {:?}",
            r.threads.iter().map(|t| t.events).collect::<Vec<_>>()
        );
        let again = Simulation::new(&s, &system(&text)).run().unwrap().result;
        assert_eq!(r.threads, again.threads, "{layout}: deterministic");
    }
}

#[test]
fn service_time_variation_keeps_the_means() {
    // One request at a time: the exponential server CPU time and the varied
    // link trips keep their means, so the mean latency is the fixed one's.
    let base = r#"
[client]
protocol = "linux-nfs"
cpu_us = 0
page_cache = "0"
[link]
link = "10G"
rtt_ms = 0.5
[server]
cpu_us = 200
"#;
    let fixed = base
        .replace("cpu_us = 200", "cpu_us = 200\ncpu_service = \"fixed\"")
        .replace("rtt_ms = 0.5", "rtt_ms = 0.5\nrtt_spread = 0.0");
    let s = spec(&["--file-test-mode=rndrd", "--threads=1", "--time=20"]);
    let varied = Simulation::new(&s, &system(base)).run().unwrap().result;
    let fixed = Simulation::new(&s, &system(&fixed)).run().unwrap().result;
    let (v, f) = (
        varied.latency[&LatencyKey::Read].mean_ms,
        fixed.latency[&LatencyKey::Read].mean_ms,
    );
    assert!((v - f).abs() / f < 0.01, "{v} vs {f}");
    let spread = |r: &RunResult| {
        let l = &r.latency[&LatencyKey::Read];
        l.max_ms - l.min_ms
    };
    assert!(spread(&varied) > 0.2, "{}", spread(&varied));
    assert!(spread(&fixed) < 0.01, "{}", spread(&fixed));
}

#[test]
fn the_client_page_cache_serves_reads_of_a_small_file_set() {
    // A 16 MiB file set fits the default 2 GiB client cache: a buffered 4 KiB
    // random read never leaves the client; O_DIRECT or no cache crosses the
    // link every time; writes with fsync go through either way.
    let nfs = r#"
[client]
protocol = "linux-nfs"
cpu_service = "fixed"
[link]
link = "10G"
[server]
cpu_service = "fixed"
"#;
    let rndrd = |extra: &[&str], sys: &str| {
        let mut words = vec!["--file-test-mode=rndrd", "--threads=1", "--time=1"];
        words.extend_from_slice(extra);
        Simulation::new(&spec(&words), &system(sys))
            .run()
            .unwrap()
            .result
    };
    let cached = rndrd(&[], nfs);
    let read_ms = cached.latency[&LatencyKey::Read].mean_ms;
    // The latency histogram's buckets are coarser than 3 digits this low;
    // the rate below is exact.
    assert!((read_ms - 0.005).abs() < 0.0003, "cached read {read_ms} ms");
    let expect = 1.0 / 5e-6;
    let got = cached.rates.reads_per_s;
    assert!((got - expect).abs() / expect < 0.01, "{got} reads/s");
    // RTT 0.04 ms + 2 x 20 µs server and client CPU, at least.
    let direct = rndrd(&["--file-extra-flags=direct"], nfs);
    assert!(direct.latency[&LatencyKey::Read].min_ms > 0.05);
    let none = rndrd(&[], &nfs.replace("[link]", "page_cache = \"0\"\n[link]"));
    assert!(none.latency[&LatencyKey::Read].min_ms > 0.05);
    // The server itself keeps file data in the ARC, not a page cache: a
    // read costs at least the server's CPU time per request (the reported
    // minimum is its histogram bucket's lower edge, 1 % below at 15 µs).
    let local_text = "[server]\ncpu_service = \"fixed\"\n";
    let local = rndrd(&[], local_text);
    let server_cpu_ms = system(local_text).resolve().unwrap().server_cpu_ns as f64 / 1e6;
    let local_min = local.latency[&LatencyKey::Read].min_ms;
    assert!(
        local_min > 0.97 * server_cpu_ms && local_min > 2.0 * read_ms,
        "local read {local_min} ms, server CPU {server_cpu_ms} ms"
    );
    // Writes with --file-fsync-all still reach the server.
    let s = spec(&[
        "--file-test-mode=rndrw",
        "--threads=1",
        "--time=2",
        "--file-fsync-all",
    ]);
    let r = Simulation::new(&s, &system(nfs)).run().unwrap().result;
    assert!(r.latency[&LatencyKey::Write].min_ms > 0.05);
    assert!(r.latency[&LatencyKey::Fsync].min_ms > 0.05);
    assert!(r.latency[&LatencyKey::Read].max_ms < 0.01);
}

#[test]
fn a_file_set_larger_than_the_client_cache_misses_in_proportion() {
    // 64 MiB of files, 16 MiB of cache: about a quarter of uniform random
    // reads hit it.
    let sys = system(
        "[client]\nprotocol = \"linux-nfs\"\npage_cache = \"16M\"\n[link]\nlink = \"10G\"\n",
    );
    let mut s = spec(&["--file-test-mode=rndrd", "--threads=1", "--time=5"]);
    s.files.file_size *= 4;
    s.files.total_size *= 4;
    s.percentiles = vec![20.0, 30.0];
    let r = Simulation::new(&s, &sys).run().unwrap().result;
    let hits = r.latency[&LatencyKey::Read]
        .at(20.0)
        .map(|ms| ms < 0.01)
        .unwrap_or(false);
    assert!(hits, "{:?}", r.latency[&LatencyKey::Read]);
    let misses = r.latency[&LatencyKey::Read].at(30.0).unwrap_or(0.0);
    assert!(misses > 0.05, "30th percentile {misses} ms");
}

fn words_spec(words: &[&str]) -> RunSpec {
    let mut all = Vec::<&str>::new();
    all.extend_from_slice(words);
    RunSpec::from_words(&all).unwrap_or_else(|e| panic!("{all:?}: {e}"))
}

#[test]
fn the_write_throttle_holds_ingest_to_what_the_pool_writes() {
    // sync=disabled, whole-record writes: nothing but the txg limits the
    // writers. Without dirty-data throttling they would run at CPU speed
    // (tens of thousands of 128 KiB writes a second); with it the rate
    // converges to the mirror's sequential write rate, 180 MB/s.
    let sys = system(
        r#"
[server]
ram = "2G"
sync = "disabled"
[pool]
layout = "1xmirror-2"
disk = "hdd-7200"
"#,
    );
    let s = words_spec(&[
        "--file-total-size=4G",
        "--file-test-mode=rndwr",
        "--file-block-size=128K",
        "--file-fsync-freq=0",
        "--threads=4",
        "--time=60",
    ]);
    let r = Simulation::new(&s, &sys).run().unwrap().result;
    let mb_s = r.rates.writes_per_s * 131_072.0 / 1e6;
    assert!((60.0..=200.0).contains(&mb_s), "{mb_s} MB/s");
    // Some writes waited on the delay curve or at the limit.
    let write = &r.latency[&LatencyKey::Write];
    assert!(write.max_ms > 1.0, "{write:?}");
}

#[test]
fn log_blocks_overtake_queued_txg_writes() {
    // In-pool ZIL on flash, each 4 KiB write dirtying a 128 KiB record: the
    // txg writes are large. With the vdev queue's priority a commit waits
    // behind at most the txg writes in flight; with every txg write handed
    // to the disk at once (the FIFO of a queue without classes), behind all.
    let base = r#"
[server]
ram = "8G"
[pool]
layout = "1xmirror-2"
disk = "ssd-sata"
"#;
    let fifo = base.replace(
        "ram = \"8G\"",
        "ram = \"8G\"\nvdev_async_write_min_active = 1000\nvdev_async_write_max_active = 1000\nvdev_aggregation_limit = \"16M\"",
    );
    let s = words_spec(&[
        "--file-total-size=2G",
        "--file-test-mode=rndwr",
        "--file-fsync-all",
        "--threads=4",
        "--time=30",
    ]);
    let fsync = |text: &str| {
        let r = Simulation::new(&s, &system(text)).run().unwrap().result;
        (r.latency[&LatencyKey::Fsync].max_ms, r.rates.writes_per_s)
    };
    let (prio_max, prio_w) = fsync(base);
    let (fifo_max, fifo_w) = fsync(&fifo);
    assert!(
        prio_max * 3.0 < fifo_max,
        "max fsync {prio_max} vs {fifo_max} ms"
    );
    // The writes wait on the same commits either way: the rates agree
    // within the runs' own noise (1 %), never faster behind a FIFO.
    assert!(prio_w >= 0.99 * fifo_w, "{prio_w} vs {fifo_w} writes/s");
}

#[test]
fn one_reader_missing_the_arc_on_a_fixed_latency_pool_matches_the_closed_form() {
    // Local client, an ARC of 4 records over 32,768 (a hit in 8,000), every
    // read a 128 KiB record from one mirror child: server CPU + the
    // device's read latency + the record's transfer.
    let sys = system(
        r#"
[server]
ram = "1M"
cpu_us = 30
cpu_service = "fixed"
[pool]
layout = "1xmirror-2"
disk = { kind = "flash", read_ms = 0.1, write_ms = 0.2, flush_ms = 0.5, flush_ms_per_mb = 0.0, read_mb_s = 1000.0, write_mb_s = 1000.0, parallelism = 1 }
"#,
    );
    let s = words_spec(&[
        "--file-total-size=4G",
        "--file-test-mode=rndrd",
        "--threads=1",
        "--time=5",
    ]);
    let r = Simulation::new(&s, &sys).run().unwrap().result;
    // fileio's default 16 KiB request: 12 KiB beyond the 4 KiB of
    // `server.cpu_us`, at the default 780 µs a MiB.
    let copy = 780e-6 * 12_288.0 / 1_048_576.0;
    let expect = 1.0 / (30e-6 + copy + 0.1e-3 + 131_072.0 / 1e9);
    let got = r.rates.reads_per_s;
    assert!((got - expect).abs() / expect < 0.01, "{got} vs {expect}");
}

#[test]
fn one_reader_over_the_link_matches_the_closed_form() {
    // Reads served from the ARC over NFS, no client cache: client CPU, the
    // call on the wire, half the round trip, server CPU, the 4 KiB reply
    // on the wire, half the round trip. The trips vary (default spread)
    // but keep their mean.
    let sys = system(
        r#"
[client]
protocol = "linux-nfs"
cpu_us = 10
cpu_service = "fixed"
page_cache = "0"
[link]
link = "1G"
rtt_ms = 0.2
[server]
cpu_us = 30
cpu_service = "fixed"
"#,
    );
    let s = spec(&[
        "--file-test-mode=rndrd",
        "--file-block-size=4K",
        "--threads=1",
        "--time=5",
    ]);
    let r = Simulation::new(&s, &sys).run().unwrap().result;
    let wire_ns = |bytes: f64| bytes * 8.0; // 1 Gbit/s: 8 ns a byte
    let call = wire_ns(134.0 + 90.0);
    let reply = wire_ns(4096.0 + 134.0 + 3.0 * 90.0);
    let per_read_ns = 10e3 + call + 100e3 + 30e3 + reply + 100e3;
    let expect = 1e9 / per_read_ns;
    let got = r.rates.reads_per_s;
    assert!((got - expect).abs() / expect < 0.01, "{got} vs {expect}");
}

#[test]
fn more_threads_raise_throughput_until_the_server_cpu_saturates() {
    // One server core at 100 µs a request: 10,000 requests/s at most. A
    // 0.5 ms round trip keeps one thread well below that.
    let sys = system(
        r#"
[client]
protocol = "linux-nfs"
page_cache = "0"
[link]
link = "10G"
rtt_ms = 0.5
[server]
cpu_us = 100
cores = 1
"#,
    );
    let mut last = 0.0;
    let mut first = None;
    for threads in [1, 2, 4, 8, 16, 32] {
        let t = format!("--threads={threads}");
        // 4 KiB requests: `server.cpu_us` alone (no per-MiB copy).
        let s = spec(&[
            "--file-test-mode=rndrd",
            "--file-block-size=4K",
            &t,
            "--time=5",
        ]);
        let Simulated {
            result: r,
            utilisation: u,
            ..
        } = Simulation::new(&s, &sys).run().unwrap();
        let x = r.rates.reads_per_s;
        assert!(x >= last * 0.99, "{threads} threads: {x} < {last}");
        first.get_or_insert(x);
        last = x;
        if threads == 2 {
            assert!(x > 1.8 * first.unwrap(), "{x}");
        }
        if threads >= 16 {
            assert_eq!(u.bottleneck().map(|b| b.0), Some("server CPU"), "{u:?}");
            // Exponential service times: the sample mean is within 1 %.
            assert!(x > 9_500.0 && x <= 10_000.0 * 1.01, "{x}");
            assert!(r
                .warnings
                .iter()
                .any(|w| w.code == "predicted_saturation" && w.message.starts_with("server CPU")));
        }
        if threads == 1 {
            assert_eq!(u.bottleneck(), None, "{u:?}");
        }
    }
}

#[test]
fn a_slow_log_device_is_named_as_the_bottleneck() {
    // Sixteen sync writers on a consumer SSD without power-loss protection
    // as log device (2 ms a flush): the log device is what saturates.
    let s = spec(&[
        "--file-test-mode=rndwr",
        "--threads=16",
        "--time=5",
        "--file-fsync-all",
    ]);
    let Simulated {
        result: r,
        utilisation: u,
        ..
    } = Simulation::new(&s, &with_log(ESXI, "\"ssd-sata-noplp\""))
        .run()
        .unwrap();
    assert_eq!(u.bottleneck().map(|b| b.0), Some("log device"), "{u:?}");
    let note = r
        .warnings
        .iter()
        .find(|w| w.code == "predicted_utilisation")
        .expect("utilisation note");
    assert!(note.message.contains("log device"), "{}", note.message);
}

// A log device measured by `tankbench slog` (tests/data/README.md says how
// each fixture was recorded).

fn data_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// fileio on the server itself with no cost but the log device's: no CPU
/// per request or per commit, a pool that adds no latency, and the
/// measured device `slog` (a file in tests/data) as log.
fn on_measured_log(slog: &str) -> SystemModel {
    let text = format!(
        "name = \"measured\"\nlog = {{ measured = \"{slog}\" }}\n[server]\ncpu_us = 0.0\ncommit_cpu_us = 0.0\n[pool]\nlayout = \"1xstripe\"\ndisk = \"none\"\n"
    );
    SystemModel::from_toml_in(&text, &data_dir()).unwrap_or_else(|e| panic!("{e}"))
}

/// The fixture's mean latency of one `size`-byte write + flush, ms.
fn slog_mean_ms(slog: &str, size: u64) -> f64 {
    let text = std::fs::read_to_string(data_dir().join(slog)).unwrap();
    let r = fileio::slog::SlogResult::from_json(&text).unwrap();
    r.sizes
        .iter()
        .find(|s| s.size_bytes == size)
        .map(|s| s.latency.mean_ms)
        .unwrap_or_else(|| panic!("{slog} has no {size}-byte size"))
}

const ONE_SYNC_WRITER: [&str; 4] = [
    "--file-test-mode=rndwr",
    "--file-block-size=4096",
    "--file-fsync-all",
    "--threads=1",
];

#[test]
fn a_measured_log_device_commits_in_its_measured_4k_latency() {
    // One writer, an fsync after each 4 KiB write, nothing else costing
    // time: each fsync is one log block on the measured device. The block
    // is the write's 4,096 bytes plus its 184-byte record, 8 KiB on the
    // device, so the prediction is the 4 KiB latency plus the fitted
    // transfer of 4 KiB more: on this disk, whose latency is flat over the
    // sizes, within 3 % of the measured 4 KiB write + flush.
    let mut words = ONE_SYNC_WRITER.to_vec();
    words.push("--time=2");
    let r = Simulation::new(&spec(&words), &on_measured_log("slog-vm-disk.json"))
        .run()
        .unwrap()
        .result;
    let fsync = r.latency[&LatencyKey::Fsync].mean_ms;
    let measured = slog_mean_ms("slog-vm-disk.json", 4096);
    assert!(
        (fsync / measured - 1.0).abs() < 0.03,
        "simulated commit {fsync} ms, measured 4 KiB write + flush {measured} ms"
    );
    // And the model is the mapping's line: 8 KiB at the fitted rate plus
    // the fixed cost, within the latency histogram's resolution (three
    // significant digits: 2 µs buckets at 3.7 ms).
    let line = log_block_ms(&on_measured_log("slog-vm-disk.json"));
    assert!((fsync / line - 1.0).abs() < 1e-3, "{fsync} vs {line}");
}

#[test]
fn a_slower_measured_log_device_predicts_fewer_writes() {
    // tmpfs (fdatasync does nothing) against the virtual disk (~4 ms a
    // flush): the same workload, the device the only difference.
    let mut words = ONE_SYNC_WRITER.to_vec();
    words.push("--events=2000");
    let s = spec(&words);
    let fast = Simulation::new(&s, &on_measured_log("slog-tmpfs.json"))
        .run()
        .unwrap()
        .result;
    let slow = Simulation::new(&s, &on_measured_log("slog-vm-disk.json"))
        .run()
        .unwrap()
        .result;
    let (wf, ws) = (fast.rates.writes_per_s, slow.rates.writes_per_s);
    assert!(ws < wf, "slow device {ws} writes/s, fast {wf}");
    // One write per commit and nothing else costing time: the writes a
    // second are in the inverse ratio of the two devices' 8 KiB log block
    // times (from the mapped models: the latency summaries' histogram
    // cannot resolve the fast device's 1.5 µs).
    let (lf, ls) = (
        log_block_ms(&on_measured_log("slog-tmpfs.json")),
        log_block_ms(&on_measured_log("slog-vm-disk.json")),
    );
    assert!(
        ((wf / ws) / (ls / lf) - 1.0).abs() < 0.01,
        "{wf}/{ws} against {ls}/{lf}"
    );
    assert!(ws * 100.0 < wf, "{ws} vs {wf}");
}

/// The time of one 8 KiB log block (a 4 KiB write's) on a measured log
/// device's mapped flash model, ms.
fn log_block_ms(m: &SystemModel) -> f64 {
    let Some(sim::system::DeviceSpec::Model(zfs_model::diskmodel::ModelParams::Flash(f))) = &m.log
    else {
        panic!("a measured log device is a flash model: {:?}", m.log);
    };
    f.flush_ms + 8192.0 / (f.write_mb_s * 1e3)
}

#[test]
fn a_measured_log_device_that_cannot_be_read_is_one_line_naming_it() {
    let dir = data_dir();
    let with = |log: &str, dir: &std::path::Path| {
        SystemModel::from_toml_in(&format!("log = {log}\n"), dir)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    for (log, at, what) in [
        (
            "{ measured = \"missing.json\" }",
            dir.clone(),
            "missing.json: No such file",
        ),
        // Relative to the directory given, not the process's.
        (
            "{ measured = \"slog-vm-disk.json\" }",
            dir.join("elsewhere"),
            "elsewhere/slog-vm-disk.json: No such file",
        ),
        (
            "{ measured = \"probe-local-ext4.json\" }",
            dir.clone(),
            "probe-local-ext4.json: not a `tankbench slog` result (its kind is \"tankbench.probe\")",
        ),
        (
            "{ measured = \"README.md\" }",
            dir.clone(),
            "README.md: not a readable `tankbench slog` result",
        ),
        (
            "{ measured = \"slog-one-size.json\" }",
            dir.clone(),
            "slog-one-size.json: 1 write size of 4 KiB or more measured; a log device needs at least 2",
        ),
        ("{ measured = 3 }", dir.clone(), "log.measured: must be the path"),
        (
            "{ measured = \"slog-vm-disk.json\", kind = \"flash\" }",
            dir.clone(),
            "log: a measured log device takes only `measured`",
        ),
    ] {
        let e = with(log, &at);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(what), "{log}: {e}");
        if what.contains(".json") {
            assert!(e.contains("log.measured: "), "{e}");
        }
    }
}

#[test]
fn a_measured_mirror_member_is_read_beside_the_system_file_and_named_as_its_field() {
    let dir = data_dir();
    let text = "log = \"ssd-sata\"\nlog_mirror = { measured = \"slog-vm-disk.json\" }\n";
    let m = SystemModel::from_toml_in(text, &dir).unwrap();
    let measured = SystemModel::from_toml_in("log = { measured = \"slog-vm-disk.json\" }\n", &dir)
        .unwrap()
        .log;
    assert_eq!(
        m.log_mirror, measured,
        "the same device as a measured first member"
    );
    let e = SystemModel::from_toml_in(
        "log = \"ssd-sata\"\nlog_mirror = { measured = \"missing.json\" }\n",
        &dir,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("log_mirror.measured: ") && e.contains("missing.json") && e.lines().count() == 1,
        "{e}"
    );
}

#[test]
fn a_measured_log_device_reads_back_as_the_same_system() {
    // The model holds the mapped flash parameters: written out and read
    // again (no file needed any more) it is the same system.
    let m = on_measured_log("slog-vm-disk.json");
    let back = SystemModel::from_toml(&m.to_toml().unwrap()).unwrap();
    assert_eq!(back, m);
    assert_eq!(back.resolve().unwrap(), m.resolve().unwrap());
}

#[test]
fn a_measured_log_device_in_a_text_without_a_file_is_relative_to_the_current_directory() {
    // `from_toml` and a matrix's cells (built from the base as a TOML
    // value) have no file to be relative to: the process's directory,
    // here the crate's (cargo runs tests there).
    let text = "log = { measured = \"tests/data/slog-vm-disk.json\" }\n";
    let m = SystemModel::from_toml(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m, on_measured_log_text(text));
    let spec = sim::matrix::MatrixSpec::from_system_text(
        text,
        vec!["--file-test-mode=rndwr".into()],
        &[("layout", vec!["1xmirror-2".into(), "2xmirror-2".into()])],
        100,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for cell in spec.cells().unwrap() {
        assert_eq!(cell.system.log, m.log, "{:?}", cell.choices);
    }
    // The same refusal, naming the field and the file, from a cell.
    let Err(e) = sim::matrix::MatrixSpec::from_system_text(
        "log = { measured = \"tests/data/gone.json\" }\n",
        vec!["--file-test-mode=rndwr".into()],
        &[("layout", vec!["1xmirror-2".into()])],
        100,
    ) else {
        panic!("a missing measurement was accepted");
    };
    let e = e.to_string();
    assert!(
        e.contains("log.measured: tests/data/gone.json: No such file"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
}

/// `text` read with the fixtures' directory given explicitly.
fn on_measured_log_text(text: &str) -> SystemModel {
    let text = text.replace("tests/data/", "");
    SystemModel::from_toml_in(&text, &data_dir()).unwrap()
}

/// One local reader of a file set the ARC holds, with fixed service times:
/// reads/s for `block` bytes a request and `per_mib` µs of
/// `server.cpu_us_per_mib`.
fn cached_reads_per_s(block: &str, per_mib: f64) -> f64 {
    let sys = system(&format!(
        "[server]\ncpu_us = 10\ncpu_service = \"fixed\"\ncpu_us_per_mib = {per_mib}\n"
    ));
    let b = format!("--file-block-size={block}");
    let s = spec(&["--file-test-mode=seqrd", &b, "--threads=1", "--time=2"]);
    Simulation::new(&s, &sys)
        .run()
        .unwrap()
        .result
        .rates
        .reads_per_s
}

#[test]
fn a_requests_data_costs_cpu_beyond_the_4k_cpu_us_was_measured_at() {
    // 4 KiB: `cpu_us` alone, whatever the per-MiB cost.
    let (a, b) = (
        cached_reads_per_s("4K", 0.0),
        cached_reads_per_s("4K", 780.0),
    );
    assert!((a - b).abs() / a < 1e-9, "{a} vs {b}");
    assert!((a - 1e5).abs() / 1e5 < 0.01, "{a}");
    // 1 MiB: cpu_us + 1020 KiB at 780 µs a MiB, the closed form.
    let got = cached_reads_per_s("1M", 780.0);
    let expect = 1.0 / (10e-6 + 780e-6 * (1_048_576.0 - 4096.0) / 1_048_576.0);
    assert!((got - expect).abs() / expect < 0.01, "{got} vs {expect}");
    // Without the cost a 1 MiB cached read would cost what a 4 KiB one does.
    let free = cached_reads_per_s("1M", 0.0);
    assert!(free > 50.0 * got, "{free} vs {got}");
}

/// Cached 4 KiB reads/s of `threads` local readers on `cores` cores, fixed
/// service times of 10 µs, and `contention` (`server.cpu_contention`).
fn cached_reads_with_contention(threads: u32, cores: u32, contention: f64) -> f64 {
    let sys = system(&format!(
        "[server]\ncpu_us = 10\ncpu_service = \"fixed\"\ncores = {cores}\ncpu_contention = {contention}\n"
    ));
    let t = format!("--threads={threads}");
    let s = spec(&[
        "--file-test-mode=rndrd",
        "--file-block-size=4K",
        &t,
        "--time=1",
    ]);
    Simulation::new(&s, &sys)
        .run()
        .unwrap()
        .result
        .rates
        .reads_per_s
}

#[test]
fn cpu_work_takes_longer_for_each_other_busy_core() {
    // One reader never has company on the CPU: 10 µs a read, contention or
    // not.
    for c in [0.0, 0.2] {
        let one = cached_reads_with_contention(1, 8, c);
        assert!((one - 1e5).abs() / 1e5 < 0.01, "contention {c}: {one}");
    }
    // Sixteen readers keep all 8 cores busy: without contention 8 reads
    // per 10 µs; with 0.2, each read runs beside 7 others and takes
    // 10 * (1 + 7 * 0.2) = 24 µs, the closed form 8 / 24 µs.
    let free = cached_reads_with_contention(16, 8, 0.0);
    assert!((free - 8e5).abs() / 8e5 < 0.01, "{free}");
    let contended = cached_reads_with_contention(16, 8, 0.2);
    let expect = 8.0 / 24e-6;
    assert!(
        (contended - expect).abs() / expect < 0.01,
        "{contended} vs {expect}"
    );
}

#[test]
fn a_cpu_contention_outside_0_to_1_is_refused_naming_the_field() {
    for bad in ["-0.1", "1.5", "nan"] {
        let e = SystemModel::from_toml(&format!("[server]\ncpu_contention = {bad}\n"))
            .and_then(|m| m.resolve().map(|_| ()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("server.cpu_contention") && e.contains("0 to 1"),
            "{bad}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

/// Run options that count after the first txg sync, or after `most`
/// events of warm-up.
fn warming_up(most: u64) -> sim::RunOptions {
    sim::RunOptions {
        warmup_events: Some(most),
        ..sim::RunOptions::default()
    }
}

#[test]
fn a_warmed_up_run_counts_its_events_from_the_end_of_the_first_txg_sync() {
    // A 4 KiB sync workload on a SATA SSD log device: before the first
    // txg sync nothing competes with the writes, so the run's start is
    // faster than what follows. Counted from the end of that sync, the
    // same 2,000 events give the slower rate; --events counts from there
    // (plus the requests in flight when counting began) and lasts at
    // least one txg timeout, so it spans a txg cycle. A 4 GiB file of
    // 128 KiB records, as a plan's workload: each write dirties a record,
    // so the first sync has 1.5 GB to write.
    let s = RunSpec::from_words(&[
        "--file-total-size=4G",
        "--file-test-mode=rndrw",
        "--file-block-size=4K",
        "--file-fsync-all",
        "--threads=4",
        "--time=240",
        "--events=4000",
        "--rand-seed=1",
    ])
    .unwrap();
    let m = with_log(&ESXI.replace("\"1G\"", "\"2x10G\""), "\"ssd-sata\"");
    let cold = Simulation::new(&s, &m).run().unwrap().result;
    let warm = sim::Simulation::new(&s, &m)
        .options(&warming_up(100_000))
        .run()
        .unwrap()
        .result;
    // The counted part holds --events and lasts at least one txg timeout
    // (5 s): the 4,000 events alone would take under a second.
    assert!(warm.counts.events >= 4000, "{:?}", warm.counts);
    assert!(
        (5.0..6.0).contains(&warm.total_time_s),
        "{} s counted",
        warm.total_time_s
    );
    // It says where counting began; a run from 0 says nothing of it.
    let note = |r: &RunResult, code: &str| r.warnings.iter().any(|w| w.code == code);
    assert!(note(&warm, "predicted_after_warmup"), "{:?}", warm.warnings);
    assert!(
        !note(&cold, "predicted_after_warmup"),
        "{:?}",
        cold.warnings
    );
    // A run that ends before its first sync says it was counted from 0.
    let short = RunSpec::from_words(&[
        "--file-total-size=4G",
        "--file-test-mode=rndrw",
        "--file-fsync-all",
        "--threads=4",
        "--time=1",
        "--events=0",
        "--rand-seed=1",
    ])
    .unwrap();
    let unfinished = sim::Simulation::new(&short, &m)
        .options(&warming_up(1_000_000))
        .run()
        .unwrap()
        .result;
    assert!(
        note(&unfinished, "predicted_warmup_unfinished"),
        "{:?}",
        unfinished.warnings
    );
    assert!(
        warm.rates.writes_per_s < 0.95 * cold.rates.writes_per_s,
        "{} vs {} writes/s",
        warm.rates.writes_per_s,
        cold.rates.writes_per_s
    );
    // A read-only workload never syncs: the warm-up ends at its bound of
    // events, and then counts as a run from the start would.
    let reads = spec(&["--file-test-mode=rndrd", "--threads=2", "--events=2000"]);
    let plain = Simulation::new(&reads, &m).run().unwrap().result;
    let bounded = sim::Simulation::new(&reads, &m)
        .options(&warming_up(500))
        .run()
        .unwrap()
        .result;
    assert!(
        (2000..=2002).contains(&bounded.counts.events),
        "{:?}",
        bounded.counts
    );
    let (a, b) = (plain.rates.reads_per_s, bounded.rates.reads_per_s);
    assert!((a - b).abs() / a < 0.05, "{a} vs {b} reads/s");
}

#[test]
fn the_disk_trace_has_every_commit_write_and_flush_on_each_mirror_child() {
    // One writer on one 2-way mirror, no log device, an fsync after each
    // 4 KiB write: each commit writes its log block to both children and
    // flushes both (the txg's writes come on top). The trace is what `lab
    // up --disk-trace` would show of a lab of this pool.
    let sys = system(
        r#"
[client]
protocol = "local"
[pool]
layout = "1xmirror-2"
disk = "hdd-7200"
"#,
    );
    let mut words = ONE_SYNC_WRITER.to_vec();
    words.push("--time=2");
    let spec = spec(&words);
    let plain = Simulation::new(&spec, &sys).run().unwrap();
    assert!(plain.disk_trace.is_empty(), "traced without being asked");
    let traced = Simulation::new(&spec, &sys).disk_trace(true).run().unwrap();
    // Tracing changes nothing simulated.
    assert_eq!(traced.result.counts, plain.result.counts);
    let t = &traced.disk_trace;
    assert!(
        t.windows(2).all(|w| w[0].at <= w[1].at),
        "in submission order"
    );
    assert!(t.iter().all(|r| r.disk < 2 && r.done >= r.at));
    let count = |disk: usize, flush: bool| {
        t.iter()
            .filter(|r| r.disk == disk && matches!(r.op, Op::Flush) == flush)
            .count()
    };
    let fsyncs = usize::try_from(traced.result.counts.fsyncs).unwrap();
    for disk in 0..2 {
        // A flush for every commit, and a write for every log block (the
        // txg's writes and flushes come on top).
        assert!(count(disk, true) >= fsyncs, "disk {disk}: flushes");
        assert!(count(disk, false) >= fsyncs, "disk {disk}: writes");
    }
    // The children take the same writes: a mirror writes each block to both.
    let writes = |disk: usize| -> Vec<(u64, u64)> {
        t.iter()
            .filter_map(|r| match r.op {
                Op::Write { offset, len } if r.disk == disk => Some((offset, len)),
                _ => None,
            })
            .collect()
    };
    assert_eq!(writes(0), writes(1));
    // Each line as `lab up --disk-trace` writes it.
    let first_flush = t.iter().find(|r| matches!(r.op, Op::Flush)).unwrap();
    assert_eq!(
        first_flush.to_string(),
        format!(
            "{} {} F 0 {} -",
            first_flush.at, first_flush.disk, first_flush.done
        )
    );
}

//! The simulator against published single-operation figures: the latency of
//! one synchronous 4 KiB write, on the server and end to end from an NFS
//! client, for each kind of log device. Each figure, its range and its
//! source are listed in docs/validation.md ("Single operations").
//!
//! One thread, one request at a time, so what is measured is one
//! operation's latency, not a queue.

use fileio::options::RunSpec;
use fileio::result::{LatencyKey, RunResult};
use sim::{Simulation, SystemModel};

/// One writer, 4 KiB random writes each followed by its fsync, a file set
/// the ARC holds (no record is read before it is changed).
fn one_writer() -> RunSpec {
    let words = [
        "--file-total-size=16M",
        "--file-num=4",
        "--file-test-mode=rndwr",
        "--file-block-size=4K",
        "--file-fsync-all",
        "--threads=1",
        "--time=20",
        "--events=2000",
        "--rand-seed=1",
    ];
    RunSpec::from_words(&words).unwrap_or_else(|e| panic!("{words:?}: {e}"))
}

fn mean_ms(r: &RunResult, key: LatencyKey) -> f64 {
    r.latency
        .get(&key)
        .unwrap_or_else(|| panic!("no {key:?} latency"))
        .mean_ms
}

/// The commit of one 4 KiB synchronous write on the server: fileio on the
/// server itself (`local`), no CPU time (neither per request nor ZFS's
/// per-commit software time), so an fsync after a 4 KiB write is the log
/// device's write + flush and nothing else, as `diskinfo -S` measures it.
fn commit_ms(layout: &str, log: &str) -> f64 {
    let m = SystemModel::from_toml(&format!(
        r#"
log = "{log}"
[server]
cpu_us = 0
commit_cpu_us = 0
cpu_service = "fixed"
[pool]
layout = "{layout}"
disk = "hdd-7200"
"#
    ))
    .unwrap();
    mean_ms(
        &Simulation::new(&one_writer(), &m).run().unwrap().result,
        LatencyKey::Fsync,
    )
}

/// The system of [`nfs_sync_write_ms`].
fn nfs_system(link: &str, layout: &str, log: &str) -> SystemModel {
    SystemModel::from_toml(&format!(
        r#"
log = "{log}"
[client]
protocol = "linux-nfs"
stable_writes = true
[link]
link = "{link}"
[pool]
layout = "{layout}"
disk = "hdd-7200"
"#
    ))
    .unwrap()
}

/// One stable 4 KiB WRITE from an NFS client (FILE_SYNC: the write returns
/// once committed) over `link`, as the write latency of one writer. CPU
/// times are the simulator's documented defaults.
fn nfs_sync_write_ms(link: &str, layout: &str, log: &str) -> f64 {
    let m = nfs_system(link, layout, log);
    mean_ms(
        &Simulation::new(&one_writer(), &m).run().unwrap().result,
        LatencyKey::Write,
    )
}

/// The CPU times no source publishes separately, ms: the client's per
/// request, the server's per request and ZFS's per commit (the defaults
/// docs/model-reference.md gives with their ranges).
fn unpublished_cpu_ms() -> f64 {
    let sys = nfs_system("1G", "1xmirror-2", "ssd-sata")
        .resolve()
        .unwrap();
    (sys.client_cpu_ns + sys.server_cpu_ns + sys.commit_cpu_ns) as f64 / 1e6
}

fn assert_within(what: &str, got: f64, low: f64, high: f64) {
    println!("{what}: {got:.4} ms (published {low:.4}-{high:.4} ms)");
    assert!(
        (low..=high).contains(&got),
        "{what}: {got:.4} ms, published {low}-{high} ms"
    );
}

#[test]
fn a_sata_ssd_log_device_commits_4k_as_the_intel_710_measured() {
    // Intel 710 (power-loss protection): 0.158 ms per 4 KiB write + flush,
    // FreeBSD `diskinfo -S` (r320683); class 0.05-0.2 ms.
    // The log block of a 4 KiB write is 8 KiB (its data and the 184-byte
    // lr_write_t, in 4 KiB sectors): 4 KiB more at 500 MB/s, 8 µs.
    let got = commit_ms("1xmirror-2", "ssd-sata");
    assert_within("SATA SSD log", got, 0.05, 0.2);
    assert!((got / 0.158 - 1.0).abs() < 0.10, "{got} ms vs 0.158 ms");
}

#[test]
fn a_plp_nvme_log_device_commits_4k_in_the_class_range() {
    // NVMe with power-loss protection / Optane: 0.01-0.1 ms per
    // synchronous write (OpenZFS hardware docs, class figure).
    assert_within("PLP NVMe log", commit_ms("1xmirror-2", "nvme"), 0.01, 0.1);
}

#[test]
fn a_consumer_nvme_log_device_pays_for_its_flush() {
    // Samsung 950 PRO (no power-loss protection): 2.09 ms per 4 KiB write +
    // flush (same diskinfo -S measurements); flushes are what matter.
    let got = commit_ms("1xmirror-2", "nvme-noplp");
    println!("consumer NVMe log: {got:.4} ms (published 2.09 ms)");
    assert!((got / 2.09 - 1.0).abs() < 0.10, "{got} ms vs 2.09 ms");
}

#[test]
fn an_in_pool_zil_on_7200_rpm_disks_commits_in_milliseconds() {
    // In-pool ZIL on a 7200 rpm mirror: a log write + flush costs about one
    // random access, 5-15 ms (rotation 4.17 ms + seek + flush; OpenZFS
    // hardware docs: 13-16 ms per random access on a busy disk; a nearly
    // empty pool seeks short).
    let mirror = commit_ms("1xmirror-2", "none");
    assert_within("HDD mirror in-pool ZIL", mirror, 5.0, 15.0);
    // raidz: the log block spans p+1 or more disks and waits for the
    // slowest: the same or slightly worse, never better.
    let raidz = commit_ms("1xraidz2-8", "none");
    assert_within("HDD raidz2 in-pool ZIL", raidz, 5.0, 15.0);
    assert!(
        raidz >= mirror * 0.95,
        "raidz {raidz} ms vs mirror {mirror} ms"
    );
}

#[test]
fn one_nfs_sync_write_costs_a_round_trip_plus_the_commit() {
    // End to end from an NFS client: the published round trip of a small
    // request (1 GbE 0.10-0.20 ms, AppNeta ping-pong 120-180 µs; 10 GbE
    // 0.02-0.06 ms kernel TCP), the 4 KiB write's serialisation (about
    // 4,500 bytes on the wire: 36 µs at 1 Gb/s, 3.6 µs at 10 Gb/s), the log
    // device's commit (SATA SSD 0.05-0.2 ms; HDD in-pool 5-15 ms), plus the
    // client and server CPU times, which no source publishes apart (the
    // simulator's estimates: client 20 µs, server 15 µs, commit 100 µs).
    let cpu = unpublished_cpu_ms();
    let ssd_1g = nfs_sync_write_ms("1G", "1xmirror-2", "ssd-sata");
    assert_within(
        "4K sync write, 1 GbE, SATA SSD log",
        ssd_1g,
        0.10 + 0.036 + 0.05 + cpu,
        0.20 + 0.036 + 0.2 + cpu,
    );
    let ssd_10g = nfs_sync_write_ms("10G", "1xmirror-2", "ssd-sata");
    assert_within(
        "4K sync write, 10 GbE, SATA SSD log",
        ssd_10g,
        0.02 + 0.0036 + 0.05 + cpu,
        0.06 + 0.0036 + 0.2 + cpu,
    );
    assert!(ssd_10g < ssd_1g, "10 GbE {ssd_10g} ms vs 1 GbE {ssd_1g} ms");
    let nvme_1g = nfs_sync_write_ms("1G", "1xmirror-2", "nvme");
    assert_within(
        "4K sync write, 1 GbE, PLP NVMe log",
        nvme_1g,
        0.10 + 0.036 + 0.01 + cpu,
        0.20 + 0.036 + 0.1 + cpu,
    );
    // Without a log device the disks decide, on either link.
    let hdd_1g = nfs_sync_write_ms("1G", "1xmirror-2", "none");
    let hdd_10g = nfs_sync_write_ms("10G", "1xmirror-2", "none");
    assert_within("4K sync write, 1 GbE, HDD in-pool", hdd_1g, 5.0, 15.5);
    assert_within("4K sync write, 10 GbE, HDD in-pool", hdd_10g, 5.0, 15.5);
}

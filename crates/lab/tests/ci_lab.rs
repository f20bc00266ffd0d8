//! The CI lab, from real parts: six sparse 8 TB disks as raidz2 on the HDD
//! model, a log device on the SSD model, a 1 GbE link with sshfs. A short
//! random read/write workload with fsync after every write runs with and
//! without the log device; physics says the log device must raise writes/s
//! several times. Afterwards nothing of either lab may remain.

mod common;

use lab::lab::Lab;
use lab::spec::LabSpec;
use std::path::Path;

const WORKLOAD: &[&str] = &[
    "--file-total-size=32M",
    "--file-num=4",
    "--file-test-mode=rndrw",
    "--file-block-size=4K",
    "--threads=4",
    "--file-fsync-all",
    "--time=8",
    "--max-requests=0",
];

fn spec(name: &str, root: &Path, log: bool) -> LabSpec {
    let text = format!(
        r#"
name = "{name}"
root = "{root}"
[pool]
layout = "raidz2-6"
disk = "hdd"
disk_size = "8TB"
ashift = 12
recordsize = "4K"
log = "{log}"
[link]
kind = "1G"
"#,
        root = root.display(),
        log = if log { "ssd-plp:1GB" } else { "none" }
    );
    LabSpec::from_toml(&text).unwrap()
}

/// Everything a lab could leave behind, by its marks.
fn leftovers(id: &str, root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let pools = lab::parts::sys::run("zpool", ["list", "-H", "-o", "name"]).unwrap_or_default();
    for p in pools.lines().filter(|p| p.trim() == id) {
        found.push(format!("pool {p}"));
    }
    for ns in [format!("{id}-client"), format!("{id}-server")] {
        if lab::parts::sys::netns_path(&ns).exists() {
            found.push(format!("netns {ns}"));
        }
    }
    found.extend(common::mounts_and_processes_under(root));
    if root.join(id).exists() {
        found.push(format!("directory {}", root.join(id).display()));
    }
    found
}

fn run_cell(
    spec: &LabSpec,
    tankbench: &Path,
) -> (
    f64,
    lab::experiments::run::Outcome,
    lab::parts::net::LinkMeasurement,
) {
    let opts = common::up_options(tankbench, true);
    let lab = Lab::up(spec, &opts).expect("lab up");
    let link = lab.info().unwrap().link.clone().expect("link measured");
    let args: Vec<String> = WORKLOAD.iter().map(|s| s.to_string()).collect();
    let outcome = lab::experiments::run::run_workload(&lab, tankbench, &args);
    let stats = lab.disk_stats();
    lab.down().expect("lab down");
    let outcome = outcome.expect("workload");
    eprintln!("disk stats: {stats:?}");
    (outcome.result.rates.writes_per_s, outcome, link)
}

#[test]
fn log_device_multiplies_sync_writes_and_nothing_is_left_behind() {
    testkit::require!(
        "root",
        "/dev/fuse",
        "zfs-fuse",
        "ip",
        "tc",
        "sshd",
        "ssh",
        "ssh-keygen",
        "sshfs"
    );
    let tankbench = common::tankbench();
    let root = common::lab_root("tb-labtest");
    let (with_name, without_name) = (common::run_name("cs"), common::run_name("cn"));
    let with = spec(&with_name, &root, true);
    let without = spec(&without_name, &root, false);

    let (w_log, o_log, link) = run_cell(&with, &tankbench);
    common::assert_nothing_left(&leftovers(&format!("tb-{with_name}"), &root));
    let (w_none, o_none, _) = run_cell(&without, &tankbench);
    common::assert_nothing_left(&leftovers(&format!("tb-{without_name}"), &root));
    assert!(
        !root.exists(),
        "lab root {} was not removed",
        root.display()
    );

    eprintln!(
        "writes/s with log {w_log:.1}, without {w_none:.1} (x{:.1}); link rtt {:.3} ms, {:.0} Mbit/s",
        w_log / w_none,
        link.rtt_ms_median,
        link.single_flow_mbit_s
    );
    // The results carry the lab's labels, with classes named as `plan`
    // names them (the spec says ssd-plp, the SATA SSD with PLP).
    let r = &o_log.result;
    assert_eq!(r.labels["slog"], "ssd-sata");
    assert_eq!(r.labels["link"], "1G");
    assert_eq!(r.labels["layout"], "1xraidz2-6");
    assert_eq!(o_none.result.labels["slog"], "none");
    assert!(
        r.environment.fs_type.contains("sshfs"),
        "ran on {}",
        r.environment.fs_type
    );
    assert!(w_none > 0.0);
    // Physics: an fsync waits for a log write + flush, ~0.16 ms on the SSD
    // model against one HDD rotation plus seek (~5-13 ms) without it.
    assert!(
        w_log >= 3.0 * w_none,
        "with log {w_log:.1} writes/s, without {w_none:.1}: expected at least 3x"
    );
    // The shaped link: a 1 GbE flow cannot exceed 1 Gbit/s, and the added
    // round trip (0.1 ms) is on top of the veth pair's.
    assert!(
        link.single_flow_mbit_s < 1050.0 && link.single_flow_mbit_s > 500.0,
        "{link:?}"
    );
    assert!(link.rtt_ms_min >= 0.1, "{link:?}");
}

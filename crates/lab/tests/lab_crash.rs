//! `lab crash` from real parts: a lab with its own zfs-fuse daemon is built,
//! a file is written with an fsync after every write, and the lab crashes
//! right after the last fsync returned. On disks that honour flushes (HDDs
//! with a protected log device) every acknowledged byte must come back; when
//! every device lies about flushes, acknowledged writes must be lost (the
//! negative control: if they survive, the crash does not cut anything).
//! Nothing of either lab may remain afterwards.

mod common;

use lab::lab::Lab;
use lab::spec::LabSpec;
use std::io::Write;
use std::path::Path;

fn spec(name: &str, root: &Path, disk: &str, log: &str) -> LabSpec {
    LabSpec::from_toml(&format!(
        r#"
name = "{name}"
root = "{root}"
[pool]
layout = "mirror"
disk = "{disk}"
disk_size = "1GB"
log = "{log}"
"#,
        root = root.display(),
    ))
    .unwrap()
}

/// Tears the lab down however the test ends (the crash rewrote its state,
/// so it is opened again from the state file).
struct Down<'a>(&'a LabSpec);

impl Drop for Down<'_> {
    fn drop(&mut self) {
        if let Ok(l) = Lab::open(&self.0.root, &self.0.name) {
            if let Err(e) = l.down() {
                eprintln!("lab down: {e}");
            }
        }
    }
}

/// 16 x 64 KiB, each fsync'd: the bytes, once every fsync returned.
fn write_synced(path: &Path) -> Vec<u8> {
    let data: Vec<u8> = (0..16 * 65536u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let mut f = std::fs::File::create(path).unwrap();
    for chunk in data.chunks(65536) {
        f.write_all(chunk).unwrap();
        f.sync_all().unwrap();
    }
    data
}

/// Build, write, crash: (the file after the crash, the report).
fn crash_after_synced_writes(
    spec: &LabSpec,
    tankbench: &Path,
) -> (
    Vec<u8>,
    Option<Vec<u8>>,
    lab::experiments::crash::CrashReport,
) {
    let opts = common::up_options(tankbench, false);
    let _down = Down(spec);
    let mut lab = Lab::up(spec, &opts).expect("lab up");
    // The pool's creation is older than any device's destage window
    // (700 ms): what the crash may take is the file's writes, not the pool.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let file = lab.info().unwrap().pool_mountpoint.join("synced");
    let written = write_synced(&file);
    let report = lab::experiments::crash::crash(&mut lab, &|s| eprintln!("{s}")).expect("crash");
    let after = std::fs::read(&file).ok();
    (written, after, report)
}

/// What lab `id` under `root` left behind: mounts, processes, its directory.
fn leftovers(id: &str, root: &Path) -> Vec<String> {
    let mut found = common::mounts_and_processes_under(root);
    if root.join(id).exists() {
        found.push(format!("directory {}", root.join(id).display()));
    }
    found
}

#[test]
fn acknowledged_writes_survive_honest_disks_and_die_on_lying_ones() {
    testkit::require!("root", "/dev/fuse", "zfs-fuse");
    let tankbench = common::tankbench();
    let root = common::lab_root("tb-h24-crashtest");

    // Honest: HDDs honour flushes, the log device has power-loss protection.
    let honest_name = common::run_name("ch");
    let honest = spec(&honest_name, &root, "hdd", "ssd-sata:1GB");
    let (written, after, report) = crash_after_synced_writes(&honest, &tankbench);
    eprintln!("honest: {:?}", report.disks);
    assert_ne!(report.killed_pid, report.new_pid);
    assert_eq!(report.disks.len(), 3);
    let log = report.disks.iter().find(|d| d.name == "tb-log0").unwrap();
    assert_eq!(
        log.loss.lost_writes, 0,
        "a protected log device lost writes"
    );
    assert!(
        after.as_deref() == Some(written.as_slice()),
        "acknowledged writes lost on honest disks: {:?} bytes back of {}",
        after.map(|a| a.len()),
        written.len()
    );
    common::assert_nothing_left(&leftovers(&format!("tb-{honest_name}"), &root));

    // Lying: every device acknowledges flushes without persisting, and the
    // crash comes well inside their destage window (700 ms).
    let lying_name = common::run_name("cl");
    let lying = spec(&lying_name, &root, "ssd-sata-lying", "ssd-sata-lying:1GB");
    let (written, after, report) = crash_after_synced_writes(&lying, &tankbench);
    eprintln!("lying: {:?}", report.disks);
    let lost: u64 = report.disks.iter().map(|d| d.loss.lost_bytes).sum();
    assert!(
        lost > 0,
        "the lying devices lost nothing: {:?}",
        report.disks
    );
    assert!(
        after.as_deref() != Some(written.as_slice()),
        "every acknowledged byte survived devices whose flushes lie: the crash cut nothing"
    );
    common::assert_nothing_left(&leftovers(&format!("tb-{lying_name}"), &root));
    let _ = std::fs::remove_dir(&root);
    assert!(!root.exists(), "lab root {} remains", root.display());
}

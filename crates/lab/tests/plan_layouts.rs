//! A layout `tankbench plan` lists is a layout a lab spec builds, and a disk
//! size means the same bytes in both: every layout the real `plan` command
//! enumerates (or evaluates on request) for a few disk sets passes the lab's
//! spec validation with the same disks, or is refused with a limit the lab
//! states (at most 1,024 disks on one machine). Needs no root: nothing is
//! built.

mod common;

use lab::spec::{LabSpec, MAX_DISKS};
use serde_json::Value;
use std::process::Command;

/// `tankbench plan ARGS --format json`, parsed.
fn plan(args: &[&str]) -> Value {
    let out = Command::new(common::tankbench())
        .arg("plan")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "plan {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn spec(layout: &str, disk_size: &str) -> Result<LabSpec, lab::LabError> {
    LabSpec::from_toml(&format!(
        "name = \"x\"\nroot = \"/var/tmp/tb-lab-plantest-none\"\n[pool]\nlayout = \"{layout}\"\ndisk_size = \"{disk_size}\"\n"
    ))
}

#[test]
fn every_layout_plan_lists_is_a_lab_layout() {
    let cases: [&[&str]; 6] = [
        &["--disks", "24x8TB", "--stripes", "--max-idle", "100"],
        &["--disks", "6x4TB", "--stripes", "--max-idle", "100"],
        &["--disks", "12x8TB,12x4TB", "--max-idle", "100"],
        &["--disks", "3x1.92TB:ssd-sata", "--stripes"],
        // More disks than a lab builds: the lab's stated limit.
        &["--disks", "1030x8TB"],
        &[
            "--disks",
            "255x8T",
            "--layout",
            "1xraidz3-255,1xmirror-8,85xmirror-3,255xstripe,2xraidz1-3",
        ],
    ];
    let (mut accepted, mut refused) = (0, 0);
    for args in cases {
        let plan = plan(args);
        let group = &plan["request"]["groups"][0];
        let size = group["label"].as_str().unwrap();
        let entries = plan["entries"].as_array().unwrap();
        assert!(!entries.is_empty(), "{args:?}");
        for entry in entries {
            let layout = entry["layout"].as_str().unwrap();
            let shape = &entry["shape"];
            let disks = shape["count"].as_u64().unwrap() * shape["width"].as_u64().unwrap();
            match spec(layout, size) {
                Ok(s) => {
                    accepted += 1;
                    // The same words, the same disks, the same bytes.
                    assert_eq!(s.pool.disk_count() as u64, disks, "{layout}");
                    assert_eq!(s.labels()["layout"], layout);
                    assert_eq!(s.pool.disk_size, group["bytes"].as_u64().unwrap(), "{size}");
                }
                Err(e) => {
                    refused += 1;
                    let e = e.to_string();
                    assert!(
                        disks > MAX_DISKS && e.contains("at most 1024 disks in all"),
                        "{args:?}: the lab refuses plan's {layout}: {e}"
                    );
                }
            }
        }
    }
    // Both paths were taken.
    assert!(accepted > 100 && refused > 0, "{accepted} / {refused}");
}

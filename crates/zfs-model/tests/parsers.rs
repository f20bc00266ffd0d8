//! The parsers behind `tankbench plan` take whatever a user types: random text
//! and near misses of valid input must give a value or a one-line error,
//! never a panic (an overflow in a debug build is a panic too).

use proptest::prelude::*;
use zfs_model::disk::{DiskClass, DiskGroup, OsPartitioning, PerfOverrides};
use zfs_model::layout::{Layout, Shape};
use zfs_model::network::{Link, Protocol};
use zfs_model::perf::LogDevice;
use zfs_model::rules::RuleSet;
use zfs_model::units::{parse_block_size, parse_size, SizeMeaning, KIB, MIB};
use zfs_model::workload::Workload;

/// Numbers as people type them, and the extremes: empty, zero, huge, with
/// decimals, more digits than any integer type holds.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("0".to_string()),
        (1u64..=300).prop_map(|n| n.to_string()),
        any::<u32>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        "[0-9]{20,45}",
        "[0-9]{0,4}\\.[0-9]{0,14}",
        "[0-9.]{1,6}",
    ]
}

fn unit() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        prop::sample::select(vec![
            "B", "KB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "PiB", "K", "M", "G",
            "tb", " TB", "XB", "T B",
        ])
        .prop_map(str::to_string),
        "[A-Za-z]{1,3}",
    ]
}

fn size() -> impl Strategy<Value = String> {
    (number(), unit()).prop_map(|(n, u)| format!("{n}{u}"))
}

/// Text that looks like a disk group, a layout or a link, with any part
/// possibly wrong, plus arbitrary text.
fn disk_group() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            number(),
            prop::sample::select(vec!["x", "X", "*", "", "xx"]),
            size(),
            prop::sample::select(vec!["", ":ssd-sata", ":nvme", ":tape", ":", "::hdd-5400"]),
        )
            .prop_map(|(c, x, s, class)| format!("{c}{x}{s}{class}")),
        ".*",
    ]
}

fn layout() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            number(),
            prop::sample::select(vec!["x", "X", "", " x "]),
            prop::sample::select(vec![
                "raidz", "raidz1", "raidz2", "raidz3", "raidz4", "mirror", "stripe", "disk", "",
            ]),
            prop::sample::select(vec!["-", "", "--"]),
            number(),
        )
            .prop_map(|(c, x, k, dash, w)| format!("{c}{x}{k}{dash}{w}")),
        ".*",
    ]
}

fn link() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            number(),
            prop::sample::select(vec!["x", ""]),
            number(),
            prop::sample::select(vec!["G", "g", "GbE", "gbit/s", "gbps", "", "M"]),
        )
            .prop_map(|(c, x, s, u)| format!("{c}{x}{s}{u}")),
        ".*",
    ]
}

fn one_line(e: impl std::fmt::Display) {
    let text = e.to_string();
    assert!(!text.is_empty() && !text.contains('\n'), "{text:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn sizes_parse_or_fail_in_one_line(text in prop_oneof![size(), ".*".prop_map(|s: String| s)]) {
        for meaning in [SizeMeaning::MarketedDisk, SizeMeaning::Exact] {
            match parse_size(&text, meaning) {
                Ok(bytes) => prop_assert!(bytes > 0),
                Err(e) => one_line(e),
            }
        }
        match parse_block_size(&text, 512, 16 * MIB) {
            Ok(bytes) => prop_assert!(bytes.is_power_of_two() && (512..=16 * MIB).contains(&bytes)),
            Err(e) => one_line(e),
        }
        if let Err(e) = parse_block_size(&text, 512, 128 * KIB) {
            one_line(e);
        }
    }

    #[test]
    fn disk_groups_parse_or_fail_in_one_line(text in disk_group()) {
        match DiskGroup::parse(&text, DiskClass::Hdd7200, &PerfOverrides::default()) {
            Ok(group) => {
                prop_assert!((1..=zfs_model::disk::MAX_DISKS).contains(&group.count));
                prop_assert!(group.bytes <= zfs_model::disk::MAX_DISK_BYTES);
            }
            Err(e) => one_line(e),
        }
        match LogDevice::parse(&text, DiskClass::SsdSata, DiskClass::SsdSata.default_perf()) {
            Ok(log) => prop_assert!(log.devices >= 1),
            Err(e) => one_line(e),
        }
    }

    #[test]
    fn layouts_parse_and_fit_or_fail_in_one_line(text in layout(), disks in disk_group(), spares in any::<u32>()) {
        match Shape::parse(&text) {
            Ok(shape) => {
                prop_assert!(shape.count >= 1 && shape.width >= 1);
                // A parsed shape names itself in a form that parses back.
                prop_assert_eq!(Shape::parse(&shape.name()).unwrap(), shape);
                let group = DiskGroup::parse(&disks, DiskClass::Hdd7200, &PerfOverrides::default());
                if let Ok(group) = group {
                    if let Err(e) = Layout::fit(shape, &[group], spares % 64) {
                        one_line(e);
                    }
                }
            }
            Err(e) => one_line(e),
        }
    }

    #[test]
    fn links_and_choices_parse_or_fail_in_one_line(text in link()) {
        match Link::parse(&text) {
            Ok(Some(l)) => prop_assert!(l.members >= 1 && l.gbit_per_s.is_finite() && !l.name().is_empty()),
            Ok(None) => {}
            Err(e) => one_line(e),
        }
        for result in [
            Protocol::parse(&text).err(),
            DiskClass::parse(&text).err(),
            OsPartitioning::parse(&text).err(),
            RuleSet::parse(&text).err(),
            Workload::parse(&text).err(),
        ]
        .into_iter()
        .flatten()
        {
            one_line(result);
        }
    }
}

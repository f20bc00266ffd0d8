//! The ZFS fact parsers on recorded samples (tests/data/zfs): OpenZFS on
//! Linux and FreeBSD do not run here, so their formats are read from
//! hand-made samples of the documented formats (see tests/data/zfs/README.md);
//! zfs-fuse's are recorded from the real tools.

// The parsers' figures are exact: integers, or a human form times a power
// of two, so they compare exactly.
#![allow(clippy::float_cmp)]

use fileio::zfs_facts::parse;
use fileio::zfs_facts::{ArcCounters, VdevClass, VdevGroup, VdevKind};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/data/zfs/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn openzfs_status_gives_the_vdev_tree_with_every_class() {
    let pool = parse::zpool_status(&fixture("openzfs-zpool-status-P.txt")).unwrap();
    assert_eq!(
        (pool.name.as_str(), pool.state.as_str()),
        ("tank", "ONLINE")
    );
    assert_eq!(pool.data.len(), 2);
    for (i, v) in pool.data.iter().enumerate() {
        assert_eq!(v.name, format!("raidz2-{i}"));
        assert_eq!((v.kind, v.parity), (VdevKind::Raidz, Some(2)));
        assert_eq!(v.children.len(), 6);
        assert!(v.children.iter().all(|d| d.kind == VdevKind::Device
            && d.name.starts_with("/dev/disk/by-id/ata-ST12000NM0008")
            && d.state == "ONLINE"));
    }
    assert_eq!(
        pool.data_groups(),
        [VdevGroup {
            kind: VdevKind::Raidz,
            parity: Some(2),
            width: 6,
            count: 2
        }]
    );
    let only = |class: &[fileio::zfs_facts::Vdev]| {
        assert_eq!(class.len(), 1, "{class:?}");
        class[0].clone()
    };
    let special = only(&pool.special);
    assert_eq!(
        (special.name.as_str(), special.kind),
        ("mirror-2", VdevKind::Mirror)
    );
    assert_eq!(special.devices().len(), 2);
    let log = only(&pool.logs);
    assert_eq!(
        (log.name.as_str(), log.kind),
        ("mirror-3", VdevKind::Mirror)
    );
    assert!(log
        .devices()
        .iter()
        .all(|d| d.contains("INTEL_SSDPE21D280GA")));
    let cache = only(&pool.cache);
    assert_eq!(cache.kind, VdevKind::Device);
    assert!(cache.name.ends_with("S4EWNX0N123456"));
    let spare = only(&pool.spares);
    assert_eq!(spare.state, "AVAIL");
    assert_eq!(pool.class_of(log.devices()[1]), Some(VdevClass::Log));
    assert_eq!(pool.class_of("raidz2-1"), Some(VdevClass::Data));
    assert_eq!(pool.class_of("nothing"), None);
}

#[test]
fn openzfs_scripted_iostat_gives_two_intervals_with_latency() {
    let pool = parse::zpool_status(&fixture("openzfs-zpool-status-P.txt")).unwrap();
    let samples = parse::iostat_samples(
        &fixture("openzfs-zpool-iostat-Hpvly.txt"),
        "tank",
        Some(pool),
        1.0,
    );
    assert_eq!(samples.len(), 2);
    // pool, 2 raidz2 + 12 disks, special mirror + 2, log mirror + 2, cache.
    for s in &samples {
        assert_eq!(s.rows.len(), 1 + 14 + 3 + 3 + 1);
    }
    let (first, second) = (&samples[0], &samples[1]);
    assert_eq!(first.t_s, 1.0);
    assert_eq!(second.t_s, 2.0);
    let pool_row = first.pool_row().unwrap();
    assert_eq!(pool_row.alloc_bytes, Some(52143299051520));
    assert_eq!(pool_row.write_ops_per_s, 2380.0);
    assert_eq!(pool_row.write_bytes_per_s, 311427072.0);
    let lat = pool_row.latency.unwrap();
    assert_eq!(lat.total_wait_read_ns, Some(8123456));
    assert_eq!(lat.asyncq_wait_read_ns, None); // "-"
    assert_eq!(lat.asyncq_wait_write_ns, Some(1900000));
    let classes = |class| first.rows.iter().filter(|r| r.class == class).count();
    assert_eq!(classes(VdevClass::Data), 14);
    assert_eq!(classes(VdevClass::Special), 3);
    assert_eq!(classes(VdevClass::Log), 3);
    assert_eq!(classes(VdevClass::Cache), 1);
    let log_disk = first
        .rows
        .iter()
        .find(|r| r.name.contains("PHM2913000QN"))
        .unwrap();
    assert_eq!(log_disk.class, VdevClass::Log);
    assert_eq!(log_disk.alloc_bytes, None);
    assert_eq!(log_disk.write_ops_per_s, 150.0);
    // The second interval writes half as much again.
    assert_eq!(second.pool_row().unwrap().write_ops_per_s, 3570.0);
}

#[test]
fn an_interval_cut_off_by_the_stop_is_dropped() {
    let text = fixture("openzfs-zpool-iostat-Hpvly.txt");
    let lines: Vec<&str> = text.lines().collect();
    let cut = lines[..lines.len() - 3].join("\n");
    let samples = parse::iostat_samples(&cut, "tank", None, 1.0);
    assert_eq!(samples.len(), 1);
}

#[test]
fn linux_arcstats_and_freebsd_sysctl_give_the_same_snapshot() {
    let linux = parse::arc_snapshot(
        &parse::linux_arcstats(&fixture("openzfs-linux-arcstats.txt")),
        "arcstats",
    )
    .unwrap();
    let freebsd = parse::arc_snapshot(
        &parse::freebsd_arcstats(&fixture("freebsd-sysctl-arcstats.txt")),
        "sysctl",
    )
    .unwrap();
    assert_eq!(linux, freebsd);
    assert_eq!(linux.size_bytes, 52301782016);
    assert_eq!(linux.target_bytes, 52345116672);
    assert_eq!(linux.max_bytes, 65498537984);
    assert_eq!(
        linux.counters,
        ArcCounters {
            hits: 902845517,
            misses: 48712245,
            demand_data_hits: 512881023,
            demand_data_misses: 21044875,
            l2_hits: 3120044,
            l2_misses: 45592201,
        }
    );
}

#[test]
fn arc_deltas_and_the_hit_ratio() {
    let before = ArcCounters {
        hits: 100,
        misses: 50,
        demand_data_hits: 80,
        demand_data_misses: 20,
        l2_hits: 0,
        l2_misses: 0,
    };
    let after = ArcCounters {
        hits: 1100,
        misses: 150,
        demand_data_hits: 980,
        demand_data_misses: 120,
        l2_hits: 3,
        l2_misses: 1,
    };
    let d = after.since(&before);
    assert_eq!((d.hits, d.misses), (1000, 100));
    // Demand data: 900 hits of 1000.
    assert_eq!(d.hit_ratio(), Some(0.9));
    assert_eq!(d.accesses(), 1000);
    // Without demand data counts, all accesses.
    let all = ArcCounters {
        demand_data_hits: 0,
        demand_data_misses: 0,
        ..d
    };
    assert_eq!(all.hit_ratio(), Some(1000.0 / 1100.0));
    assert_eq!(ArcCounters::default().hit_ratio(), None);
    // A counter that went back (module reload) counts as zero, not a wrap.
    assert_eq!(before.since(&after).hits, 0);
}

#[test]
fn a_missing_counter_is_named() {
    let e = parse::arc_snapshot(&parse::linux_arcstats("h\nname type data\nhits 4 1\n"), "x")
        .unwrap_err();
    assert_eq!(e.to_string(), "x: no `size` counter");
}

#[test]
fn zfs_fuse_status_iostat_and_properties_as_recorded() {
    let pool = parse::zpool_status(&fixture("zfs-fuse-zpool-status.txt")).unwrap();
    assert_eq!(pool.name, "tb-fixture");
    assert_eq!(pool.data.len(), 1);
    assert_eq!(pool.data[0].name, "raidz1-0");
    assert_eq!(
        pool.data[0].devices(),
        [
            "/tmp/tb-fixture/d1",
            "/tmp/tb-fixture/d2",
            "/tmp/tb-fixture/d3"
        ]
    );
    assert_eq!(pool.logs.len(), 1);
    assert_eq!(pool.logs[0].name, "/tmp/tb-fixture/l1");
    assert!(pool.cache.is_empty());

    let samples = parse::iostat_samples(
        &fixture("zfs-fuse-zpool-iostat-v.txt"),
        "tb-fixture",
        Some(pool),
        1.0,
    );
    // Three reports: since boot, then two intervals (the sampler drops the first).
    assert_eq!(samples.len(), 3);
    let second = &samples[1];
    let row = |name: &str| second.rows.iter().find(|r| r.name == name).unwrap();
    assert_eq!(row("tb-fixture").class, VdevClass::Pool);
    assert_eq!(row("tb-fixture").write_bytes_per_s, 28.0 * 1048576.0);
    assert_eq!(
        row("tb-fixture").alloc_bytes,
        Some(43306189) // 41.3M, rounded
    );
    // zfs-fuse prints no "logs" heading: the layout says l1 is the log.
    assert_eq!(row("/tmp/tb-fixture/l1").class, VdevClass::Log);
    assert_eq!(row("raidz1").class, VdevClass::Data);
    assert_eq!(row("/tmp/tb-fixture/d2").write_ops_per_s, 373.0);
    assert_eq!(row("/tmp/tb-fixture/d2").alloc_bytes, None);
    assert!(row("tb-fixture").latency.is_none());

    let props = parse::zfs_get(&fixture("zfs-fuse-zfs-get.txt"));
    assert_eq!(props["recordsize"].value, "131072");
    assert_eq!(props["logbias"].value, "latency");
    assert_eq!(props["compression"].source, "default");
    assert!(!props.contains_key("sync"), "zfs-fuse has no sync property");
}

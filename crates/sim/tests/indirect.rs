//! `logbias` and WR_INDIRECT log records: a commit writes each record's
//! data block to the pool (`dmu_sync`) beside its log block and flushes
//! every vdev they touched (docs/model-reference.md, "Indirect writes").

use fileio::options::RunSpec;
use sim::system::{LogWriteRule, Logbias};
use sim::{SimError, Simulated, Simulation, SystemModel};

fn spec(extra: &[&str]) -> RunSpec {
    let mut words = vec![
        "--file-total-size=16M",
        "--file-num=4",
        "--file-test-mode=rndwr",
        "--file-block-size=4K",
        "--file-extra-flags=sync",
        "--rand-seed=3",
    ];
    words.extend_from_slice(extra);
    RunSpec::from_words(&words).unwrap_or_else(|e| panic!("{words:?}: {e}"))
}

fn system(toml: &str) -> SystemModel {
    SystemModel::from_toml(toml).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

/// Sync 4 KiB writes on the server itself into 4 KiB records: two
/// mirrors of protected SATA SSDs, `server` lines and `top` lines (a log
/// device) added.
fn ssd_pool(top: &str, server: &str) -> SystemModel {
    system(&format!(
        "name = \"t\"\n{top}\n[client]\nprotocol = \"local\"\n[server]\nram = \"4G\"\n{server}\n[pool]\nlayout = \"2xmirror-2\"\ndisk = \"ssd-sata\"\ndisk_size = \"800GB\"\nrecordsize = \"4K\"\n"
    ))
}

/// The same on a pool of two mirrors of 7,200 rpm disks with a protected
/// SATA SSD as log device: the log device is much faster than the pool,
/// which is why one has it. (With a log device of the pool disks' own class
/// a commit costs about the same either way at one writer: the record's
/// data block and the log block are written at once, then one flush.)
fn hdd_pool_with_log(server: &str) -> SystemModel {
    system(&format!(
        "name = \"t\"\nlog = \"ssd-sata\"\n[client]\nprotocol = \"local\"\n[server]\nram = \"4G\"\n{server}\n[pool]\nlayout = \"2xmirror-2\"\ndisk = \"hdd-7200\"\nrecordsize = \"4K\"\n"
    ))
}

fn writes_per_s(s: &RunSpec, sys: &SystemModel) -> f64 {
    Simulation::new(s, sys)
        .run()
        .unwrap()
        .result
        .rates
        .writes_per_s
}

#[test]
fn throughput_costs_more_per_commit_and_bypasses_the_log_device_before_7578() {
    // ZoL 0.6: `zio_alloc_zil(..., use_slog)` with USE_SLOG true only
    // under logbias=latency, so under throughput the log block goes to the
    // pool beside the record's dmu_sync data block, and the commit
    // flushes the pool vdev; under latency it is one log-device write.
    let s = spec(&["--threads=1", "--time=3"]);
    let latency = hdd_pool_with_log("platform = \"zol-0.6\"\nlogbias = \"latency\"");
    let throughput = hdd_pool_with_log("platform = \"zol-0.6\"\nlogbias = \"throughput\"");
    let Simulated {
        result: lat,
        utilisation: lat_u,
        ..
    } = Simulation::new(&s, &latency).run().unwrap();
    let Simulated {
        result: thr,
        utilisation: thr_u,
        ..
    } = Simulation::new(&s, &throughput).run().unwrap();
    assert!(
        lat_u.log_device > 0.0,
        "latency uses the log device: {lat_u:?}"
    );
    // A busy share: no time at all with a log block outstanding.
    assert!(
        thr_u.log_device <= 0.0,
        "throughput never writes the log device: {thr_u:?}"
    );
    assert!(
        thr_u.pool_disk > lat_u.pool_disk,
        "the data blocks and log blocks land on the pool: {thr_u:?} vs {lat_u:?}"
    );
    let (l, t) = (lat.rates.writes_per_s, thr.rates.writes_per_s);
    assert!(
        t < 0.9 * l,
        "a commit costs a data write, a pool log block and a vdev flush: {t} vs {l} writes/s"
    );
}

#[test]
fn since_7578_throughput_keeps_pointer_blocks_on_the_log_device_and_still_costs_more() {
    // zio_alloc_zil tries the log class first whatever the logbias since
    // OpenZFS 7578: the pointer-only log blocks stay on the log device,
    // the data blocks go to the pool.
    let s = spec(&["--threads=1", "--time=3"]);
    let latency = hdd_pool_with_log("");
    let throughput = hdd_pool_with_log("logbias = \"throughput\"");
    let Simulated {
        result: lat,
        utilisation: lat_u,
        ..
    } = Simulation::new(&s, &latency).run().unwrap();
    let Simulated {
        result: thr,
        utilisation: thr_u,
        ..
    } = Simulation::new(&s, &throughput).run().unwrap();
    assert!(thr_u.log_device > 0.0, "{thr_u:?}");
    assert!(thr_u.pool_disk > lat_u.pool_disk, "{thr_u:?} vs {lat_u:?}");
    let (l, t) = (lat.rates.writes_per_s, thr.rates.writes_per_s);
    assert!(t < 0.9 * l, "{t} vs {l} writes/s");
}

#[test]
fn a_batch_costs_a_data_write_per_record_so_writers_scale_less_under_throughput() {
    // Without a log device a latency commit of any batch is one log block
    // and one vdev flush; under throughput each record adds its dmu_sync
    // block write, so 16 writers gain less over 1 than under latency. For
    // both ZIL batchings (ZoL 0.6's one batch in flight, today's pipeline).
    // Without CPU contention: with it 16 writers are CPU-bound under either
    // logbias, which hides the disks' part this test is about.
    for platform in ["zol-0.6", "openzfs-2.2"] {
        let scaling = |logbias: &str| {
            let sys = ssd_pool(
                "",
                &format!(
                    "platform = \"{platform}\"\nlogbias = \"{logbias}\"\ncores = 8\ncpu_contention = 0"
                ),
            );
            let one = writes_per_s(&spec(&["--threads=1", "--time=2"]), &sys);
            let many = writes_per_s(&spec(&["--threads=16", "--time=2"]), &sys);
            (one, many)
        };
        let (l1, l16) = scaling("latency");
        let (t1, t16) = scaling("throughput");
        // One writer: a 4 KiB data block and a log block at once, then one
        // flush, against one 8 KiB log block and its flush: about the
        // same on these disks. Sixteen: one larger log block against
        // sixteen data blocks beside a small one.
        assert!(t16 < l16, "{platform}: 16 writers: {t16} vs {l16}");
        assert!(
            t16 / t1 < 0.9 * (l16 / l1),
            "{platform}: 16 vs 1 writers: throughput x{:.2}, latency x{:.2}",
            t16 / t1,
            l16 / l1
        );
    }
}

#[test]
fn a_bad_logbias_is_refused_in_one_line_naming_the_option_and_the_values() {
    let model = system("[server]\nlogbias = \"fast\"\n");
    let e = model.resolve().unwrap_err();
    match &e {
        SimError::Field(f) => assert_eq!(f.field, "server.logbias"),
        other => panic!("not a field error: {other:?}"),
    }
    let text = e.to_string();
    assert!(!text.contains('\n'), "{text}");
    for part in ["server.logbias", "'fast'", Logbias::ACCEPTED] {
        assert!(text.contains(part), "{part}: {text}");
    }
    // The accepted values are accepted, in any case and with spaces.
    for word in ["latency", "throughput", " Throughput "] {
        let m = system(&format!("[server]\nlogbias = \"{word}\"\n"));
        assert!(m.resolve().is_ok(), "{word}");
    }
}

#[test]
fn the_latency_default_leaves_the_figures_unchanged() {
    // With and without a log device, sync writes and an fsync workload:
    // the file that says `logbias = "latency"` predicts what the file
    // without it does, figure for figure.
    for top in ["", "log = \"ssd-sata\""] {
        let implicit = ssd_pool(top, "");
        let explicit = ssd_pool(top, "logbias = \"latency\"");
        assert_eq!(
            implicit.resolve().unwrap().logbias,
            Logbias::Latency,
            "the default"
        );
        for s in [
            spec(&["--threads=4", "--time=2"]),
            RunSpec::from_words(&[
                "--file-total-size=16M",
                "--file-num=4",
                "--file-test-mode=rndrw",
                "--file-fsync-all",
                "--threads=2",
                "--time=2",
                "--rand-seed=5",
            ])
            .unwrap(),
        ] {
            let a = Simulation::new(&s, &implicit).run().unwrap().result;
            let b = Simulation::new(&s, &explicit).run().unwrap().result;
            assert_eq!(a.rates, b.rates, "{top}");
            assert_eq!(a.counts, b.counts, "{top}");
        }
    }
}

#[test]
fn each_platform_has_the_write_state_rule_of_its_code_base() {
    // OpenZFS 7578 (ZoL 0.7.0) changed zfs_log_write and zio_alloc_zil.
    for (platform, rule) in [
        ("openzfs-2.2", LogWriteRule::Since7578),
        ("truenas-13", LogWriteRule::Since7578),
        ("freenas-11", LogWriteRule::Since7578),
        ("zol-0.7", LogWriteRule::Since7578),
        ("zol-0.6", LogWriteRule::Before7578),
        ("zfs-fuse", LogWriteRule::Before7578),
    ] {
        let m = system(&format!("[server]\nplatform = \"{platform}\"\n"));
        assert_eq!(m.resolve().unwrap().log_write_rule, rule, "{platform}");
    }
    let today = SystemModel::default().resolve().unwrap();
    assert_eq!(today.log_write_rule, LogWriteRule::Since7578);
}

#[test]
fn large_latency_writes_without_a_log_device_go_indirect_since_7578_from_32k() {
    // zfs_log_write: `resid >= zfs_immediate_write_sz` since 7578 (ZoL
    // 0.7), `resid > immediate_write_sz` before (ZoL 0.6). At exactly
    // 32 KiB into 128 KiB records, 0.7 writes the whole record by dmu_sync
    // and 0.6 copies the 32 KiB into the log block; 0.6 and 0.7 differ in
    // nothing else the model has. Above it both go
    // indirect.
    let sys = |platform: &str| {
        system(&format!(
            "name = \"t\"\n[client]\nprotocol = \"local\"\n[server]\nram = \"4G\"\nplatform = \"{platform}\"\n[pool]\nlayout = \"2xmirror-2\"\ndisk = \"ssd-sata\"\nrecordsize = \"128K\"\n"
        ))
    };
    let at = |block: &str| {
        let b = format!("--file-block-size={block}");
        let s = spec(&["--threads=1", "--time=2", &b]);
        (
            Simulation::new(&s, &sys("zol-0.6"))
                .run()
                .map(|s| (s.result, s.utilisation))
                .unwrap(),
            Simulation::new(&s, &sys("zol-0.7"))
                .run()
                .map(|s| (s.result, s.utilisation))
                .unwrap(),
        )
    };
    let ((old, old_u), (new, new_u)) = at("32K");
    assert_ne!(old.rates, new.rates);
    assert!(
        new_u.pool_disk > old_u.pool_disk,
        "0.7 writes 128 KiB a commit, 0.6 32 KiB: {new_u:?} vs {old_u:?}"
    );
    // 64 KiB (aligned, within one record): above the threshold for both,
    // so the same record and the same figures.
    let ((old, _), (new, _)) = at("64K");
    assert_eq!(old.rates, new.rates);
}

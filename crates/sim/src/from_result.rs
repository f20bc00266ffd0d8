//! A system from a measured run: the ZFS facts a run recorded on the box it
//! ran on (`environment.zfs`: pool layout, log vdevs, dataset properties,
//! ZFS version, `zfs_txg_timeout`) and its host (RAM, cores) become a
//! [`SystemModel`], so that after one real run a user changes one thing
//! (`--layout`, `--log`, `--link`) and predicts the box they do not have.
//!
//! What a run cannot record is assumed and said so ([`Derived::assumed`]):
//! the disks' and the log device's kind (a vdev names its device, not what
//! it is), the disks' size. The client is the box itself (`local`): a run
//! over NFS records no ZFS facts, and is refused here with that reason.

use fileio::result::RunResult;
use fileio::zfs_facts::{self, VdevKind, ZfsFacts};

use crate::system::{DeviceSpec, Platform, SyncProperty, SystemModel};
use crate::SimError;

/// The disk class taken when a run does not say (the reference user's
/// disks; the assumption is printed).
const ASSUMED_DISK: &str = "hdd-7200";
/// The log device class taken for a pool with a log vdev.
const ASSUMED_LOG: &str = "ssd-sata";

/// A system derived from a run, and what had to be assumed for it.
#[derive(Debug, Clone)]
pub struct Derived {
    pub model: SystemModel,
    /// One line per value the run did not record, naming the default taken
    /// and the option or field that sets it.
    pub assumed: Vec<String>,
}

impl Derived {
    /// The system as a system file's TOML, to edit and pass to `--system`.
    pub fn to_toml(&self) -> String {
        // A SystemModel is plain data (strings, numbers, enums, tables):
        // serialising it cannot fail.
        toml::to_string(&self.model).expect("a system model serialises to TOML")
    }
}

/// The system of the box `result` ran on. `id` names the result in
/// refusals (its file name).
pub fn system_from_result(id: &str, result: &RunResult) -> Result<Derived, SimError> {
    let refuse = |reason: String| SimError::Measurement {
        id: id.to_string(),
        reason,
    };
    let env = &result.environment;
    let facts = env.zfs.as_ref().ok_or_else(|| {
        refuse(format!(
            "the run recorded no ZFS facts (its directory was on {}, not ZFS); its system is known only from a run on the ZFS box itself",
            if env.fs_type.is_empty() { "an unknown file system" } else { &env.fs_type }
        ))
    })?;
    if let Some(why) = &facts.absent {
        return Err(refuse(format!("the run recorded no ZFS facts: {why}")));
    }
    let pool = facts.pool.as_ref().ok_or_else(|| {
        refuse(format!(
            "the run recorded no pool layout ({})",
            facts
                .missing
                .get("pool")
                .map_or("no reason recorded", String::as_str)
        ))
    })?;
    let layout = report::labels::layout_name(pool).ok_or_else(|| {
        let groups: Vec<String> = pool
            .data_groups()
            .iter()
            .map(|g| format!("{}x{:?}-{}", g.count, g.kind, g.width).to_lowercase())
            .collect();
        refuse(format!(
            "the pool's data vdevs ({}) are not one layout the simulator models (COUNTxVDEV of one shape)",
            groups.join(" + ")
        ))
    })?;

    let mut model = SystemModel::default();
    let mut assumed = Vec::new();
    model.name = format!("{} (from its run of {})", env.hostname, result.started_at);
    model.client.protocol = crate::system::Protocol::Local;
    model.pool.layout = layout.into();
    match labelled_class(result, "disk") {
        Some(class) => model.pool.disk = DeviceSpec::Name(class),
        None => {
            model.pool.disk = DeviceSpec::Name(ASSUMED_DISK.into());
            assumed.push(format!(
                "pool.disk: {ASSUMED_DISK} (a run does not record what its disks are; set pool.disk in a system file written with --write-system, or label the run disk=CLASS)"
            ));
        }
    }
    if pool.logs.is_empty() {
        model.log = None;
    } else if let Some(class) = labelled_class(result, "slog") {
        model.log = Some(DeviceSpec::Name(class));
    } else {
        model.log = Some(DeviceSpec::Name(ASSUMED_LOG.into()));
        assumed.push(format!(
            "log: {ASSUMED_LOG} for the pool's log vdev {} (its kind is not recorded; --log CLASS, or log = {{ measured = \"slog.json\" }} after tankbench slog)",
            pool.logs.iter().map(|v| v.name.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    // A mirrored log vdev: its second member of the same kind as the first
    // (the facts name devices, not kinds).
    let mirrored_log = pool
        .logs
        .first()
        .is_some_and(|v| v.kind == VdevKind::Mirror && v.children.len() >= 2);
    model.log_mirror = model.log.clone().filter(|_| mirrored_log);
    if let Some(dataset) = &facts.dataset {
        if let Some(bytes) = dataset.recordsize_bytes() {
            model.pool.recordsize = bytes.into();
        }
        match dataset.property("sync").and_then(SyncProperty::parse) {
            Some(sync) => model.server.sync = sync,
            None => model.server.sync = SyncProperty::Standard,
        }
    } else {
        assumed.push("pool.recordsize and server.sync: the defaults (the run recorded no dataset properties)".into());
    }
    server_from(&mut model, &mut assumed, env, facts);
    Ok(Derived { model, assumed })
}

/// The server's part of a run's system: the host's RAM and cores, the ZFS
/// code base, and what the facts time or compile in.
fn server_from(
    model: &mut SystemModel,
    assumed: &mut Vec<String>,
    env: &fileio::result::Environment,
    facts: &ZfsFacts,
) {
    if env.mem_total_bytes > 0 {
        model.server.ram = env.mem_total_bytes.into();
    } else {
        assumed.push(format!(
            "server.ram: {} (the run recorded no RAM size)",
            model.server.ram
        ));
    }
    if env.cpus > 0 {
        model.server.cores = env.cpus.min(1024);
    }
    // A lab's pool: its write path as the lab timed it (one request's time,
    // how many at once), as `lab predict` takes it, instead of kernel ZFS's
    // figures for a server that shares a small host with its FUSE daemons.
    if let Some(w) = facts.write_path.filter(|w| w.is_usable()) {
        model.server.cpu_us = w.request_us();
        model.server.cores = model.server.cores.min(w.parallel_requests(env.cpus));
    }
    if let Some(t) = facts.txg_timeout_s {
        model.server.txg_timeout_s = t as f64;
    }
    match platform_of(facts) {
        (Some(p), note) => {
            model.server.platform = Some(p);
            assumed.extend(note);
        }
        (None, note) => assumed.extend(note),
    }
    if facts.platform == Some(zfs_facts::Platform::ZfsFuse) {
        // What zfs-fuse compiles in and no tool reads; as `lab predict`
        // takes them.
        if facts.txg_timeout_s.is_none() {
            model.server.txg_timeout_s = crate::system::ZFS_FUSE_TXG_TIMEOUT_S;
        }
        if env.mem_total_bytes > 0 {
            model.server.dirty_data_max =
                Some(crate::system::zfs_fuse_dirty_data_max(env.mem_total_bytes).into());
        }
        let write_path = facts.write_path.filter(|w| w.is_usable());
        model
            .server
            .set_log_writer(crate::system::zfs_fuse_commit_costs(
                write_path.map(|w| w.request_us()),
            ));
    }
}

/// The device class a run's label `key` names (`disk=ssd-sata`,
/// `slog=nvme`): what its facts cannot say (a vdev names its device, not
/// what it is), as a lab labels its runs and a user may with `--label`.
/// A label that names no class is not taken.
fn labelled_class(result: &RunResult, key: &str) -> Option<String> {
    let text = result.labels.get(key)?;
    zfs_model::disk::DiskClass::parse(text)
        .ok()
        .map(|c| c.name().to_string())
}

/// The simulator's platform for the ZFS a run names, with a line when the
/// mapping is a judgement rather than the version itself.
fn platform_of(facts: &ZfsFacts) -> (Option<Platform>, Option<String>) {
    let version = facts.version.as_deref().unwrap_or("");
    let release = major_minor(version);
    match facts.platform {
        Some(zfs_facts::Platform::ZfsFuse) => (Some(Platform::ZfsFuse), None),
        Some(zfs_facts::Platform::OpenzfsLinux) => match release {
            Some((0, 6)) => (Some(Platform::Zol06), None),
            Some((0, 7)) => (Some(Platform::Zol07), None),
            Some((major, minor)) => (
                Some(Platform::OpenZfs22),
                ((major, minor) != (2, 2)).then(|| {
                    format!(
                        "server.platform: openzfs-2.2 for OpenZFS {major}.{minor} (the modelled behaviours, ZIL pipelining and NFS sync, are those of every release since 0.8)"
                    )
                }),
            ),
            None => (
                Some(Platform::OpenZfs22),
                Some(format!(
                    "server.platform: openzfs-2.2 (the ZFS version '{version}' was not recognised)"
                )),
            ),
        },
        Some(zfs_facts::Platform::Freebsd) => match release {
            Some((major, _)) if major >= 2 => (Some(Platform::TrueNas13), None),
            _ => (
                Some(Platform::FreeNas11),
                Some(format!(
                    "server.platform: freenas-11 (FreeBSD's ZFS before OpenZFS 2.0, version '{version}')"
                )),
            ),
        },
        None => (
            None,
            Some("server.platform: none, today's OpenZFS (the run did not record which ZFS)".into()),
        ),
    }
}

/// `2.1` of `2.1.5-1ubuntu6`, `zfs-2.2.2-0ubuntu9`, `zfs-kmod-0.8.3`.
fn major_minor(version: &str) -> Option<(u32, u32)> {
    let start = version.find(|c: char| c.is_ascii_digit())?;
    let mut parts = version[start..]
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_their_release() {
        assert_eq!(major_minor("2.1.5-1ubuntu6"), Some((2, 1)));
        assert_eq!(major_minor("zfs-2.2.2-0ubuntu9"), Some((2, 2)));
        assert_eq!(major_minor("zfs-kmod-0.8.3"), Some((0, 8)));
        assert_eq!(major_minor("zfs-fuse"), None);
    }

    fn facts(platform: zfs_facts::Platform, version: &str) -> ZfsFacts {
        ZfsFacts {
            platform: Some(platform),
            version: Some(version.into()),
            ..ZfsFacts::default()
        }
    }

    #[test]
    fn a_mirrored_log_vdev_gives_both_members_the_logs_class() {
        use fileio::result::ResultKind;
        use zfs_facts::{PoolLayout, Vdev};
        let leaf = |name: &str| Vdev {
            name: name.into(),
            kind: VdevKind::Device,
            parity: None,
            state: "ONLINE".into(),
            children: Vec::new(),
        };
        let mirror = |name: &str, a: &str, b: &str| Vdev {
            name: name.into(),
            kind: VdevKind::Mirror,
            parity: None,
            state: "ONLINE".into(),
            children: vec![leaf(a), leaf(b)],
        };
        let spec =
            fileio::options::RunSpec::from_words(&["--file-test-mode=rndwr".to_string()]).unwrap();
        let mut r = RunResult::new(ResultKind::Measured, spec.summary("psync"));
        let with_logs = |logs: Vec<Vdev>| ZfsFacts {
            pool: Some(PoolLayout {
                name: "tank".into(),
                state: "ONLINE".into(),
                data: vec![mirror("mirror-0", "sda", "sdb")],
                logs,
                ..PoolLayout::default()
            }),
            ..facts(zfs_facts::Platform::OpenzfsLinux, "2.2.2")
        };
        r.environment.zfs = Some(with_logs(vec![mirror("mirror-1", "nvme0n1", "nvme1n1")]));
        let m = system_from_result("run.json", &r).unwrap().model;
        assert!(m.log.is_some());
        assert_eq!(m.log_mirror, m.log);
        r.environment.zfs = Some(with_logs(vec![leaf("nvme0n1")]));
        let m = system_from_result("run.json", &r).unwrap().model;
        assert!(m.log.is_some() && m.log_mirror.is_none());
    }

    #[test]
    fn a_labs_timed_write_path_gives_the_servers_time_a_request_and_its_cores() {
        use fileio::result::ResultKind;
        use zfs_facts::{PoolLayout, Vdev, WritePathMeasurement};
        let disk = Vdev {
            name: "sda".into(),
            kind: VdevKind::Device,
            parity: None,
            state: "ONLINE".into(),
            children: Vec::new(),
        };
        let spec =
            fileio::options::RunSpec::from_words(&["--file-test-mode=rndwr".to_string()]).unwrap();
        let mut r = RunResult::new(ResultKind::Measured, spec.summary("psync"));
        r.environment.cpus = 2;
        let with = |write_path| ZfsFacts {
            pool: Some(PoolLayout {
                name: "tb-lab".into(),
                state: "ONLINE".into(),
                data: vec![disk.clone()],
                ..PoolLayout::default()
            }),
            write_path,
            ..facts(zfs_facts::Platform::ZfsFuse, "zfs-fuse, pool version 23")
        };
        r.environment.zfs = Some(with(None));
        let plain = system_from_result("run.json", &r).unwrap().model;
        assert_eq!(plain.server.cores, 2);
        // 20,000 writes/s from one thread, fewer from two: 50 us, one at a time.
        r.environment.zfs = Some(with(Some(WritePathMeasurement {
            one_thread_writes_per_s: 20_000.0,
            two_threads_writes_per_s: 12_000.0,
        })));
        let timed = system_from_result("run.json", &r).unwrap().model;
        assert!((timed.server.cpu_us - 50.0).abs() < 1e-9);
        assert_eq!(timed.server.cores, 1);
        assert!((plain.server.cpu_us - 50.0).abs() > 1.0);
        // zfs-fuse's log block writer, as the lab takes it: its figures at
        // the host of their measurement without a timed write path, scaled
        // to the run's write path with one.
        let writer = |s: &crate::system::ServerModel| crate::system::LogWriterCosts {
            block_us: s.log_block_us,
            request_us: s.device_request_us,
            commit_us: s.log_commit_us,
        };
        assert_eq!(
            writer(&plain.server),
            crate::system::zfs_fuse_commit_costs(None)
        );
        assert_eq!(
            writer(&timed.server),
            crate::system::zfs_fuse_commit_costs(Some(50.0))
        );
        assert!(timed.server.log_block_us > plain.server.log_block_us);
        assert!(timed.server.log_commit_us > plain.server.log_commit_us);
    }

    #[test]
    fn each_zfs_maps_to_the_platform_of_its_code_base() {
        use zfs_facts::Platform as Z;
        let p = |z, v| platform_of(&facts(z, v)).0;
        assert_eq!(p(Z::OpenzfsLinux, "0.6.5.9-1"), Some(Platform::Zol06));
        assert_eq!(p(Z::OpenzfsLinux, "0.7.12-1"), Some(Platform::Zol07));
        assert_eq!(
            p(Z::OpenzfsLinux, "2.1.5-1ubuntu6"),
            Some(Platform::OpenZfs22)
        );
        assert_eq!(
            p(Z::Freebsd, "zfs-2.1.9-FreeBSD_g92e0d9d18"),
            Some(Platform::TrueNas13)
        );
        assert_eq!(p(Z::Freebsd, ""), Some(Platform::FreeNas11));
        assert_eq!(p(Z::ZfsFuse, "zfs-fuse 0.7.0"), Some(Platform::ZfsFuse));
        // Only a judgement is noted: 2.2 itself is not.
        assert!(platform_of(&facts(Z::OpenzfsLinux, "2.2.2")).1.is_none());
        assert!(platform_of(&facts(Z::OpenzfsLinux, "2.1.5")).1.is_some());
    }
}

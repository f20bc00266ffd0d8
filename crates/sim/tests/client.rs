//! The client presets and the guest file system part of a client
//! (`client.protocol`, `client.guest_fs`): what each sets, what a guest
//! fsync and fdatasync become, and the one-line refusals.

use fileio::options::RunSpec;
use fileio::result::LatencyKey;
use sim::system::{GuestFs, GuestSync, Protocol, System};
use sim::{Simulation, SystemModel};

fn resolved(text: &str) -> System {
    SystemModel::from_toml(text)
        .and_then(|m| m.resolve())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn client(lines: &str) -> System {
    resolved(&format!("[client]\n{lines}\n[link]\nlink = \"10G\"\n"))
}

/// The refusal of a client section, as one line.
fn refused(lines: &str) -> String {
    let e = SystemModel::from_toml(&format!("[client]\n{lines}\n"))
        .and_then(|m| m.resolve())
        .map(|_| ())
        .expect_err(lines)
        .to_string();
    assert!(!e.contains('\n'), "more than one line: {e}");
    e
}

#[test]
fn esxi_6_5_nfs_is_esxi_nfs_in_every_field_but_its_name() {
    // No source in sync-write-facts.md names a behaviour of ESXi 6.5's NFS
    // client that differs from the ESXi NFS client it describes (every
    // WRITE stable, no COMMIT; its request size and outstanding-request
    // limits are not given there): the preset documents exactly that, so
    // every resolved field but the protocol's name is the old preset's.
    let old = client("protocol = \"esxi-nfs\"");
    let new = client("protocol = \"esxi-6.5-nfs\"");
    assert_eq!(new.protocol, Protocol::Esxi65Nfs);
    assert!(new.stable_writes, "every WRITE FILE_SYNC");
    assert_eq!(new.guest_fs, Some(GuestFs::Ext4), "ext4 unless told");
    assert_eq!(new.fsync_round_trips, 2, "descriptor, then commit block");
    assert!(new.protocol.is_nfs());
    let mut renamed = new.clone();
    renamed.protocol = old.protocol;
    assert_eq!(renamed, old);
    // And a field set in the file wins over either preset alike.
    let set = "stable_writes = false\nfsync_round_trips = 3\ncpu_us = 7.0\npage_cache = \"1G\"";
    let mut a = client(&format!("protocol = \"esxi-6.5-nfs\"\n{set}"));
    let b = client(&format!("protocol = \"esxi-nfs\"\n{set}"));
    assert!(!a.stable_writes && a.fsync_round_trips == 3);
    a.protocol = b.protocol;
    assert_eq!(a, b);
}

#[test]
fn every_existing_client_name_still_reads_and_round_trips() {
    for p in Protocol::ALL {
        assert_eq!(Protocol::parse(p.name()), Some(p), "{}", p.name());
        let s = client(&format!("protocol = \"{}\"", p.name()));
        assert_eq!(s.protocol, p);
        // Only a hypervisor client has a guest file system part.
        let esxi = matches!(p, Protocol::EsxiNfs | Protocol::Esxi65Nfs);
        assert_eq!(s.guest_fs.is_some(), esxi, "{}", p.name());
    }
    for name in [
        "local",
        "linux-nfs",
        "esxi-nfs",
        "esxi-6.5-nfs",
        "iscsi",
        "smb",
    ] {
        assert!(Protocol::parse(name).is_some(), "{name}");
    }
    // The file a system writes reads back as the same system, guest part
    // and all.
    let m = SystemModel::from_toml(
        "[client]\nprotocol = \"esxi-6.5-nfs\"\nguest_fs = \"none\"\n[link]\nlink = \"1G\"\n",
    )
    .unwrap();
    let back = SystemModel::from_toml(&m.to_toml().unwrap()).unwrap();
    assert_eq!(back.resolve().unwrap(), m.resolve().unwrap());
    assert_eq!(back.resolve().unwrap().guest_fs, Some(GuestFs::None));
}

#[test]
fn the_guest_file_system_decides_what_fsync_and_fdatasync_become() {
    use fileio::options::FsyncMode::{Fdatasync, Fsync};
    // sync-write-facts.md (b): an ext4 fsync of an overwrite commits the
    // journal (mtime is in the running transaction); its fdatasync does
    // not (timestamps alone leave i_datasync_tid), only the flush is left.
    assert_eq!(GuestFs::Ext4.sync(Fsync), GuestSync::JournalCommit);
    assert_eq!(GuestFs::Ext4.sync(Fdatasync), GuestSync::Flush);
    // No file system: the block device's fsync is its cache flush.
    assert_eq!(GuestFs::None.sync(Fsync), GuestSync::Flush);
    assert_eq!(GuestFs::None.sync(Fdatasync), GuestSync::Flush);
}

/// One writer, fsync (or fdatasync) after every 4 KiB write, in-pool ZIL on
/// 7200 rpm disks: the mean fsync latency, ms, and the fsyncs done.
fn fsync_ms(client_lines: &str, mode: &str) -> (f64, u64) {
    let text = format!(
        "[client]\n{client_lines}\n[link]\nlink = \"1G\"\n[pool]\nlayout = \"1xmirror-2\"\ndisk = \"hdd-7200\"\n"
    );
    let words = [
        "--file-total-size=16M",
        "--file-num=4",
        "--rand-seed=7",
        "--file-test-mode=rndwr",
        "--file-block-size=4K",
        "--threads=1",
        "--file-fsync-all",
        "--events=300",
        &format!("--file-fsync-mode={mode}"),
    ];
    let spec = RunSpec::from_words(&words).unwrap_or_else(|e| panic!("{e}"));
    let m = SystemModel::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let r = Simulation::new(&spec, &m)
        .run()
        .map(|s| s.result)
        .unwrap_or_else(|e| panic!("{e}"));
    (r.latency[&LatencyKey::Fsync].mean_ms, r.counts.fsyncs)
}

#[test]
fn an_ext4_fdatasync_skips_the_journal_commit_an_fsync_waits_for() {
    let esxi = "protocol = \"esxi-6.5-nfs\"";
    let (fsync, n) = fsync_ms(esxi, "fsync");
    let (fdatasync, m) = fsync_ms(esxi, "fdatasync");
    assert_eq!((n, m), (300, 300));
    // An fsync waits for two stable journal WRITEs, each a zil_commit on
    // the hard disks (milliseconds); an fdatasync's flush sends nothing to
    // a datastore whose every WRITE is stable: the client's CPU only.
    assert!(fsync > 3.0, "fsync {fsync} ms");
    assert!(fdatasync < 0.1, "fdatasync {fdatasync} ms");
    // The same for the old preset name, which has the same guest part.
    let (old, _) = fsync_ms("protocol = \"esxi-nfs\"", "fdatasync");
    assert!((old - fdatasync).abs() < 1e-9, "{old} vs {fdatasync}");
    // With no guest file system an fsync is that flush too.
    let (raw, _) = fsync_ms(&format!("{esxi}\nguest_fs = \"none\""), "fsync");
    assert!(raw < 0.1, "raw device fsync {raw} ms");
    // ESXi told to write unstable: the flush is one COMMIT, which waits for
    // the log (facts (a): UNSTABLE + COMMIT).
    let unstable = format!("{esxi}\nguest_fs = \"none\"\nstable_writes = false");
    let (commit, _) = fsync_ms(&unstable, "fsync");
    assert!(
        commit > 3.0,
        "unstable writes, flush as COMMIT: {commit} ms"
    );
}

#[test]
fn fdatasync_changes_nothing_on_a_client_without_a_guest_part() {
    // The Linux NFS client's fsync and fdatasync both send one COMMIT
    // (nfs_file_fsync ignores datasync for it); iscsi and smb send their
    // one flush either way. Same seed, same requests: the same figures.
    for p in ["linux-nfs", "iscsi", "smb", "local"] {
        let lines = format!("protocol = \"{p}\"");
        let (fsync, _) = fsync_ms(&lines, "fsync");
        let (fdatasync, _) = fsync_ms(&lines, "fdatasync");
        assert!(
            (fsync - fdatasync).abs() < 1e-9,
            "{p}: {fsync} vs {fdatasync}"
        );
    }
}

#[test]
fn bad_client_names_are_refused_in_one_line_with_what_is_accepted() {
    let e = refused("protocol = \"esxi-7-nfs\"");
    assert!(
        e.contains("esxi-7-nfs") && e.contains("esxi-6.5-nfs"),
        "{e}"
    );
    let e = refused("protocol = \"esxi-nfs\"\nguest_fs = \"btrfs\"");
    assert!(
        e.contains("client.guest_fs: ") && e.contains("'btrfs'") && e.contains("ext4, none"),
        "{e}"
    );
    // xfs: the facts file has nothing on its log writes, so it is not
    // guessed at; the refusal says why.
    let e = refused("protocol = \"esxi-6.5-nfs\"\nguest_fs = \"xfs\"");
    assert!(
        e.contains("client.guest_fs: ") && e.contains("xfs is not modelled"),
        "{e}"
    );
    // The name is checked on every client, so a bad one is refused even
    // where it would not apply.
    let e = refused("protocol = \"linux-nfs\"\nguest_fs = \"btrfs\"");
    assert!(
        e.contains("client.guest_fs: ") && e.contains("'btrfs'"),
        "{e}"
    );
}

#[test]
fn a_guest_file_system_applies_only_under_esxi() {
    // A system file keeps its guest part across a `--client` override: on
    // a client with no guest between fileio and the protocol it is
    // accepted and changes nothing.
    for p in ["local", "linux-nfs", "iscsi", "smb"] {
        let with = client(&format!("protocol = \"{p}\"\nguest_fs = \"ext4\""));
        let without = client(&format!("protocol = \"{p}\""));
        assert_eq!(with.guest_fs, None, "{p}");
        assert_eq!(with, without, "{p}");
    }
    // Under ESXi the part is what the file says.
    let raw = client("protocol = \"esxi-nfs\"\nguest_fs = \"none\"");
    assert_eq!(raw.guest_fs, Some(GuestFs::None));
}

#[test]
fn the_reference_system_names_its_client_and_guest_file_system() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/systems");
    let text = std::fs::read_to_string(format!("{dir}/reference-nas.toml")).unwrap();
    let m = SystemModel::from_toml(&text).unwrap();
    assert_eq!(m.client.protocol, Protocol::Esxi65Nfs);
    assert_eq!(m.client.guest_fs.as_deref(), Some("ext4"));
    let matrix = std::fs::read_to_string(format!("{dir}/reference-matrix.toml")).unwrap();
    assert!(matrix.contains("\"esxi-6.5-nfs\""), "{matrix}");
}

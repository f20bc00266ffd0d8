//! Power cuts through the real FUSE disks: what each disk model keeps and
//! loses when the power fails, seen by reading the mounted disk afterwards.
//! Old content is put into the backing files before mounting; new content is
//! written through the mount; the cut is the control file's `power-cut`.

mod common;

use lab::parts::diskfs::{DiskConfig, DiskCut, DiskStats, CONTROL_FILE};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::time::Duration;
use zfs_model::diskmodel::{FlashParams, HddParams, ModelParams, Rotation, TEAR_UNIT};

const SIZE: u64 = 1 << 30;
/// Where the tests write: inside the disk, away from the start.
const AT: u64 = 256 << 20;
/// A second place, half a disk away from AT (a long seek).
const FAR: u64 = AT + (512 << 20);
const OLD: u8 = b'o';
const NEW: u8 = b'n';

use common::MountedDisks as Mounted;

/// What the power-cut tests ask of a mount beyond its disks.
trait PowerCut {
    fn cut(&self) -> Vec<DiskCut>;
    fn stats(&self) -> Vec<DiskStats>;
}

impl PowerCut for Mounted {
    /// Cut the power of every disk; the control file's report.
    fn cut(&self) -> Vec<DiskCut> {
        let mut f = OpenOptions::new()
            .write(true)
            .open(self.path(CONTROL_FILE))
            .unwrap();
        f.write_all(b"power-cut\n").unwrap();
        let mut text = String::new();
        File::open(self.path(CONTROL_FILE))
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("report {text:?}: {e}"))
    }

    /// The stats file (written at each cut and about once a second; none
    /// before the first).
    fn stats(&self) -> Vec<DiskStats> {
        std::fs::read_to_string(self.dir.path().join("stats.json"))
            .map(|text| serde_json::from_str(&text).unwrap())
            .unwrap_or_default()
    }
}

/// Mount disks (name, model), each 1 GiB with `len` bytes of OLD at AT and
/// at FAR.
fn mount(disks: Vec<(&str, ModelParams)>, len: usize) -> Mounted {
    common::mount_disks(
        "tb-h24-powercut-",
        "tb-powercut-test",
        (true, false),
        |dir| {
            disks
                .into_iter()
                .map(|(name, model)| {
                    let backing = dir.join(format!("{name}.img"));
                    let f = File::create(&backing).unwrap();
                    f.set_len(SIZE).unwrap();
                    f.write_all_at(&vec![OLD; len], AT).unwrap();
                    f.write_all_at(&vec![OLD; len], FAR).unwrap();
                    DiskConfig {
                        name: name.into(),
                        backing,
                        size: SIZE,
                        model,
                    }
                })
                .collect()
        },
    )
}

fn read(f: &File, len: usize) -> Vec<u8> {
    read_at(f, AT, len)
}

fn read_at(f: &File, at: u64, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    f.read_exact_at(&mut b, at).unwrap();
    b
}

fn cut_of<'a>(report: &'a [DiskCut], name: &str) -> &'a DiskCut {
    report.iter().find(|c| c.name == name).unwrap()
}

/// A hard disk whose cache takes seconds to destage (a second-long seek),
/// so idle time never saves a write before the test's cut does, unless the
/// write continues where the head stands (no seek).
fn slow_destage_hdd() -> HddParams {
    HddParams {
        avg_seek_ms: 2000.0,
        rotation: Rotation::Average,
        ..HddParams::default()
    }
}

/// A flash model whose background destage never comes within a test.
fn never_destaged(p: FlashParams) -> FlashParams {
    FlashParams {
        destage_ms: 600_000.0,
        ..p
    }
}

#[test]
fn unflushed_writes_in_a_volatile_cache_are_lost_flushed_ones_survive() {
    testkit::require!("root", "/dev/fuse");
    let m = mount(
        vec![
            ("hdd", ModelParams::Hdd(slow_destage_hdd())),
            (
                "ssd",
                ModelParams::Flash(never_destaged(FlashParams::sata_consumer())),
            ),
            (
                "nvme",
                ModelParams::Flash(never_destaged(FlashParams::nvme_consumer())),
            ),
        ],
        4096,
    );
    for name in ["hdd", "ssd", "nvme"] {
        let f = m.open(name);
        // One block flushed, then one far from it (the HDD's head must
        // seek to destage it) not.
        f.write_all_at(&[NEW; 4096], FAR).unwrap();
        f.sync_all().unwrap();
        f.write_all_at(&[NEW; 4096], AT).unwrap();
    }
    let report = m.cut();
    for name in ["hdd", "ssd", "nvme"] {
        let f = m.open(name);
        assert!(
            read_at(&f, FAR, 4096).iter().all(|b| *b == NEW),
            "{name}: flushed block lost"
        );
        assert!(
            read(&f, 4096).iter().all(|b| *b == OLD),
            "{name}: unflushed block survived the cut"
        );
        let c = cut_of(&report, name);
        assert_eq!((c.loss.lost_writes, c.loss.lost_bytes), (1, 4096), "{name}");
        assert_eq!(c.loss.torn_writes, 0, "{name}");
    }
    // The counters reach the stats file the lab reads.
    let stats = m.stats();
    for name in ["hdd", "ssd", "nvme"] {
        let s = stats.iter().find(|s| s.name == name).unwrap();
        assert_eq!((s.power_cuts, s.lost_writes, s.lost_bytes), (1, 1, 4096));
        assert_eq!(s.volatile_bytes, 0);
    }
}

#[test]
fn protected_flash_keeps_every_acknowledged_write() {
    testkit::require!("root", "/dev/fuse");
    let m = mount(
        vec![
            ("ssd", ModelParams::Flash(FlashParams::sata_plp())),
            ("nvme", ModelParams::Flash(FlashParams::nvme_plp())),
            (
                "hdd-nocache",
                ModelParams::Hdd(HddParams {
                    write_cache: false,
                    ..HddParams::default()
                }),
            ),
        ],
        4096,
    );
    for name in ["ssd", "nvme", "hdd-nocache"] {
        m.open(name).write_all_at(&[NEW; 4096], AT).unwrap();
    }
    let report = m.cut();
    for name in ["ssd", "nvme", "hdd-nocache"] {
        assert!(
            read(&m.open(name), 4096).iter().all(|b| *b == NEW),
            "{name} lost an acknowledged write without a volatile cache"
        );
        assert_eq!(cut_of(&report, name).loss, Default::default(), "{name}");
    }
}

#[test]
fn a_lying_flush_saves_nothing() {
    testkit::require!("root", "/dev/fuse");
    let (_, lying) = ModelParams::builtin("ssd-sata-lying").unwrap();
    let ModelParams::Flash(p) = lying else {
        panic!("flash")
    };
    let honest = FlashParams {
        flush_honoured: true,
        ..p.clone()
    };
    let m = mount(
        vec![
            ("lying", ModelParams::Flash(never_destaged(p))),
            ("honest", ModelParams::Flash(never_destaged(honest))),
        ],
        4096,
    );
    for name in ["lying", "honest"] {
        let f = m.open(name);
        f.write_all_at(&[NEW; 4096], AT).unwrap();
        f.sync_all().unwrap();
    }
    let report = m.cut();
    assert!(
        read(&m.open("lying"), 4096).iter().all(|b| *b == OLD),
        "the lying drive kept a write its flush did not persist"
    );
    assert_eq!(cut_of(&report, "lying").loss.lost_writes, 1);
    assert!(read(&m.open("honest"), 4096).iter().all(|b| *b == NEW));
    assert_eq!(cut_of(&report, "honest").loss.lost_writes, 0);
}

#[test]
fn idle_destage_makes_hdd_writes_durable() {
    testkit::require!("root", "/dev/fuse");
    let m = mount(vec![("hdd", ModelParams::Hdd(HddParams::default()))], 4096);
    m.open("hdd").write_all_at(&[NEW; 4096], AT).unwrap();
    // One random access takes the model ~13 ms; half a second of idle time
    // writes the cache to the platters.
    std::thread::sleep(Duration::from_millis(500));
    let report = m.cut();
    assert!(read(&m.open("hdd"), 4096).iter().all(|b| *b == NEW));
    assert_eq!(cut_of(&report, "hdd").loss, Default::default());
    // Unmounted, the disks' directory goes whole: the final counters the
    // file system writes as it is unmounted are written before it goes.
    let dir = m.dir.path().to_path_buf();
    drop(m);
    assert!(!dir.exists(), "{} left behind", dir.display());
}

#[test]
fn the_disks_serve_again_after_a_cut_and_cut_again() {
    testkit::require!("root", "/dev/fuse");
    let m = mount(vec![("hdd", ModelParams::Hdd(slow_destage_hdd()))], 4096);
    m.open("hdd").write_all_at(&[NEW; 4096], AT).unwrap();
    m.cut();
    let f = m.open("hdd");
    assert!(read(&f, 4096).iter().all(|b| *b == OLD));
    // Power is back: writes work, and a second cut loses the new unflushed one.
    f.write_all_at(b"second", AT).unwrap();
    assert_eq!(&read(&f, 6)[..], b"second");
    let report = m.cut();
    assert_eq!(cut_of(&report, "hdd").loss.lost_bytes, 6);
    assert!(read(&f, 4096).iter().all(|b| *b == OLD));
    let s = &m.stats()[0];
    assert_eq!(
        (s.power_cuts, s.lost_writes, s.lost_bytes),
        (2, 2, 4096 + 6)
    );
}

#[test]
fn the_control_file_is_hidden_and_takes_only_power_cut() {
    testkit::require!("root", "/dev/fuse");
    let m = mount(vec![("hdd", ModelParams::Hdd(slow_destage_hdd()))], 4096);
    assert_eq!(
        testkit::dir_names(&m.dir.path().join("disks")),
        vec!["hdd".to_string()]
    );
    m.open("hdd").write_all_at(&[NEW; 4096], AT).unwrap();
    let mut ctl = OpenOptions::new()
        .write(true)
        .open(m.path(CONTROL_FILE))
        .unwrap();
    let err = ctl.write_all(b"power cut").unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    // Refused: nothing was cut.
    assert!(read(&m.open("hdd"), 4096).iter().all(|b| *b == NEW));
    assert_eq!(m.stats().first().map_or(0, |s| s.power_cuts), 0);
}

/// The first seed whose first tear of a `len`-byte write keeps some but not
/// all of it, and that tear (the test then knows exactly what to expect).
fn seed_with_partial_tear(model: impl Fn(u64) -> ModelParams, len: u64) -> (u64, Vec<(u64, u64)>) {
    (1..100u64)
        .find_map(|seed| {
            let mut twin = model(seed).instantiate(SIZE);
            twin.track_writes();
            let kept = twin.tear(AT, len);
            let bytes: u64 = kept.iter().map(|(s, e)| e - s).sum();
            (bytes > 0 && bytes < len).then_some((seed, kept))
        })
        .expect("a seed tears partially")
}

/// 128 KiB on a page boundary: the kernel sends a direct write from an
/// unaligned buffer as two requests (its pages are pinned one by one), and
/// the test wants one request in flight.
#[repr(C, align(4096))]
struct AlignedBuf([u8; BUF_LEN]);

/// 32 sectors or pages of TEAR_UNIT (checked in the tests that use it).
const BUF_LEN: usize = 128 * 1024;

/// Write 128 KiB on a slow disk from another thread, cut while it is in
/// flight; the write must fail (never acknowledged) and the disk hold NEW
/// exactly in the `kept` ranges.
fn torn_write_case(model: ModelParams, kept: &[(u64, u64)]) {
    let buf = Box::new(AlignedBuf([NEW; BUF_LEN]));
    let len = buf.0.len();
    let m = mount(vec![("d", model)], len);
    let f = m.open("d");
    let writer = std::thread::spawn(move || f.write_all_at(&buf.0, AT));
    // The write takes the model about a second; cut well inside it.
    std::thread::sleep(Duration::from_millis(300));
    let report = m.cut();
    let result = writer.join().unwrap();
    assert!(
        result.is_err(),
        "a write cut short must not be acknowledged"
    );
    let got = read(&m.open("d"), len);
    for (i, b) in got.iter().enumerate() {
        let i = i as u64;
        let expect = if kept.iter().any(|(s, e)| (*s..*e).contains(&i)) {
            NEW
        } else {
            OLD
        };
        assert_eq!(*b, expect, "byte {i}: kept ranges {kept:?}");
    }
    let c = cut_of(&report, "d");
    let kept_bytes: u64 = kept.iter().map(|(s, e)| e - s).sum();
    assert_eq!(c.loss.torn_writes, 1);
    assert_eq!(c.loss.torn_bytes_lost, len as u64 - kept_bytes);
    assert_eq!(c.loss.lost_writes, 0);
}

#[test]
fn an_hdd_write_in_flight_keeps_a_prefix_of_its_sectors() {
    testkit::require!("root", "/dev/fuse");
    let len = BUF_LEN as u64;
    assert_eq!(len, 32 * TEAR_UNIT);
    // No write cache, 128 KiB at 0.125 MB/s: a second on the platters.
    let model = |seed| {
        ModelParams::Hdd(HddParams {
            write_cache: false,
            media_mb_s: 0.125,
            seed,
            ..HddParams::default()
        })
    };
    let (seed, kept) = seed_with_partial_tear(model, len);
    assert_eq!(kept.len(), 1, "one prefix");
    assert_eq!(kept[0].0, 0);
    torn_write_case(model(seed), &kept);
}

#[test]
fn a_flash_write_in_flight_keeps_a_subset_of_its_pages() {
    testkit::require!("root", "/dev/fuse");
    let len = BUF_LEN as u64;
    assert_eq!(len, 32 * TEAR_UNIT);
    let model = |seed| {
        ModelParams::Flash(FlashParams {
            write_mb_s: 0.125,
            seed,
            ..FlashParams::sata_plp()
        })
    };
    let (seed, kept) = seed_with_partial_tear(model, len);
    assert!(kept.len() > 1, "pages, not a prefix: {kept:?}");
    torn_write_case(model(seed), &kept);
}

//! `tankbench slog`: the log-device test on a scratch file, its table and
//! result document, the refusals (bad options, an existing file, a device
//! without --destructive, a device with a file system) and a stop signal.

mod common;

use common::{listing, scratch, tb};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn slog_on_a_directory_prints_each_size_saves_the_document_and_leaves_nothing() {
    let target = scratch();
    let out = scratch();
    let json_path = out.path().join("slog.json");
    let r = tb(
        out.path(),
        &[
            "slog",
            target.path().to_str().unwrap(),
            "--min-size=4K",
            "--max-size=64K",
            "--time-per-size=200ms",
            "--region=1M",
            &format!("--json={}", json_path.display()),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let header = r
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("size"))
        .unwrap_or_else(|| panic!("no table header: {}", r.stdout));
    for col in ["writes", "µs/write", "p50 µs", "p99.9 µs", "MB/s", "IOPS"] {
        assert!(header.contains(col), "{col} missing: {header}");
    }
    let sizes: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| {
            let t = l.trim_start();
            ["4 KiB", "8 KiB", "16 KiB", "32 KiB", "64 KiB"]
                .into_iter()
                .find(|s| t.starts_with(&format!("{s} ")))
        })
        .collect();
    assert_eq!(
        sizes,
        ["4 KiB", "8 KiB", "16 KiB", "32 KiB", "64 KiB"],
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("a scratch file in"), "{}", r.stdout);

    let doc = json_of(&std::fs::read_to_string(&json_path).unwrap());
    assert_eq!(doc["kind"], "tankbench.slog");
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["target"], "file");
    assert_eq!(doc["sync"], "fdatasync");
    assert_eq!(doc["region_bytes"], 1 << 20);
    assert_eq!(doc["interrupted"], false);
    let sizes = doc["sizes"].as_array().unwrap();
    assert_eq!(sizes.len(), 5);
    for (i, s) in sizes.iter().enumerate() {
        let bytes = s["size_bytes"].as_u64().unwrap();
        assert_eq!(bytes, 4096 << i);
        let writes = s["writes"].as_u64().unwrap();
        assert!(writes > 0, "{s}");
        assert_eq!(s["latency"]["count"].as_u64(), Some(writes));
        let secs = s["seconds"].as_f64().unwrap();
        assert!((0.2..5.0).contains(&secs), "{s}");
        let bps = s["bytes_per_second"].as_f64().unwrap();
        let expected = (bytes * writes) as f64 / secs;
        assert!((bps - expected).abs() <= expected * 1e-9, "{s}");
        let p: Vec<(f64, f64)> = s["latency"]["percentiles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| (q["p"].as_f64().unwrap(), q["ms"].as_f64().unwrap()))
            .collect();
        assert_eq!(
            p.iter().map(|q| q.0).collect::<Vec<_>>(),
            [50.0, 95.0, 99.0, 99.9]
        );
        assert!(p.windows(2).all(|w| w[0].1 <= w[1].1), "{s}");
        let (min, max) = (
            s["latency"]["min_ms"].as_f64().unwrap(),
            s["latency"]["max_ms"].as_f64().unwrap(),
        );
        assert!(min > 0.0 && min <= p[0].1 && p[3].1 <= max, "{s}");
    }
    assert!(doc["fit"]["overhead_us"].as_f64().unwrap() >= 0.0, "{doc}");
    // The library reads back what the command wrote.
    let back =
        fileio::slog::SlogResult::from_json(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(back.sizes.len(), 5);
    assert_eq!(
        testkit::dir_names(target.path()),
        Vec::<String>::new(),
        "scratch file left"
    );
}

#[test]
fn json_format_prints_only_the_document_and_count_fixes_the_writes() {
    let target = scratch();
    let r = tb(
        target.path(),
        &[
            "slog",
            ".",
            "--min-size=512",
            "--max-size=2K",
            "--count=7",
            "--sync=dsync",
            "--region=64K",
            "--format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = json_of(&r.stdout);
    assert_eq!(doc["sync"], "dsync");
    let writes: Vec<u64> = doc["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["writes"].as_u64().unwrap())
        .collect();
    assert_eq!(writes, [7, 7, 7]);
    assert_eq!(testkit::dir_names(target.path()), Vec::<String>::new());
}

#[test]
fn bad_options_are_refused_in_one_line_and_nothing_is_written() {
    let target = scratch();
    let dir = target.path().to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--min-size=3K"],
            "--min-size=3072: accepted: a power of two",
        ),
        (&["--min-size=256"], "--min-size=256: accepted"),
        (
            &["--min-size=4K", "--max-size=1K"],
            "--max-size=1024: accepted",
        ),
        (&["--max-size=32M"], "--max-size=33554432: accepted"),
        (&["--max-size=lots"], "--max-size=lots: not a size"),
        (
            &["--region=100K"],
            "--region=102400: accepted: a multiple of --max-size",
        ),
        (&["--count=0"], "--count=0: accepted: 1 or more"),
        (
            &["--time-per-size=soon"],
            "--time-per-size=soon: not a duration",
        ),
        (&["--time-per-size=0s"], "--time-per-size=0: accepted"),
        (&["--sync=fsync"], "invalid value 'fsync' for '--sync"),
        (&["--format=xml"], "invalid value 'xml' for '--format"),
        (&["--count=3", "--time-per-size=1s"], "cannot be used with"),
        (&["--destructive"], "--destructive is for a block device"),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["slog", dir];
        args.extend_from_slice(extra);
        let r = tb(target.path(), &args);
        assert_eq!(r.code, 1, "{extra:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{extra:?}: {}", r.stderr);
        assert!(r.stderr.contains(expected), "{extra:?}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{extra:?}");
        assert_eq!(
            testkit::dir_names(target.path()),
            Vec::<String>::new(),
            "{extra:?}"
        );
    }
    // The result destination is checked before the test runs.
    let existing = target.path().join("old.json");
    std::fs::write(&existing, "keep").unwrap();
    let r = tb(
        target.path(),
        &[
            "slog",
            dir,
            "--count=1",
            &format!("--json={}", existing.display()),
        ],
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("refusing to overwrite"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep");
    assert_eq!(listing(target.path()), [("old.json".to_string(), 4)]);
}

#[test]
fn an_existing_file_is_never_written_even_one_holding_a_file_system() {
    let target = scratch();
    let image = target.path().join("image");
    std::fs::write(&image, vec![7u8; 1 << 20]).unwrap();
    if let Some(mkfs) = testkit::which("mkfs.ext4") {
        let ok = Command::new(mkfs)
            .args(["-q", "-F"])
            .arg(&image)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mkfs.ext4 on a plain file");
    }
    let before = std::fs::read(&image).unwrap();
    for extra in [&[][..], &["--destructive"][..]] {
        let mut args = vec!["slog", image.to_str().unwrap(), "--count=1"];
        args.extend_from_slice(extra);
        let r = tb(target.path(), &args);
        assert_eq!(r.code, 1, "{extra:?}");
        assert!(r.stderr.contains("an existing file"), "{}", r.stderr);
    }
    assert_eq!(std::fs::read(&image).unwrap(), before);
    assert_eq!(testkit::dir_names(target.path()), ["image"]);
}

#[test]
fn a_device_path_that_does_not_exist_is_refused() {
    let here = scratch();
    let r = tb(
        here.path(),
        &["slog", "/dev/tankbench-no-such-device", "--destructive"],
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr.trim(),
        "tankbench: /dev/tankbench-no-such-device: no such directory or block device"
    );
}

/// A loop device over an image file, detached when dropped.
struct Loop {
    device: PathBuf,
}

impl Loop {
    fn over(image: &Path) -> Loop {
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(image)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Loop {
            device: PathBuf::from(String::from_utf8(out.stdout).unwrap().trim()),
        }
    }
    fn path(&self) -> &str {
        self.device.to_str().unwrap()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.device).status();
    }
}

#[test]
fn a_device_is_written_only_with_destructive_and_never_over_a_file_system() {
    let _ = testkit::require!(
        "root",
        "losetup",
        "mkfs.ext4",
        "wipefs",
        "/dev/loop-control"
    );
    let dir = scratch();
    let image = dir.path().join("disk.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    let ok = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&image)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let before = std::fs::read(&image).unwrap();
    let lo = Loop::over(&image);
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "slog",
            lo.path(),
            "--min-size=4K",
            "--max-size=8K",
            "--count=5",
        ];
        a.extend_from_slice(extra);
        a
    };
    let r = tb(dir.path(), &args(&[]));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("is a block device"), "{}", r.stderr);
    assert!(r.stderr.contains("--destructive"), "{}", r.stderr);
    let r = tb(dir.path(), &args(&["--destructive"]));
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("refusing to overwrite the device")
            && r.stderr.contains("ext2/3/4")
            && r.stderr.contains("1080"),
        "{}",
        r.stderr
    );
    assert!(
        std::fs::read(&image).unwrap() == before,
        "the file system was touched"
    );
    // Mounted (which changes its superblock), it is refused for the mount
    // before anything else.
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .arg(lo.path())
        .arg(&mnt)
        .status()
        .unwrap()
        .success();
    assert!(mounted, "mount the loop device");
    let r = tb(dir.path(), &args(&["--destructive"]));
    let _ = Command::new("umount").arg(&mnt).status();
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains(&format!("{} is mounted on {}", lo.path(), mnt.display())),
        "{}",
        r.stderr
    );
    std::fs::remove_dir(&mnt).unwrap();

    // Wiped, the same device is tested, and only through the device.
    let ok = Command::new("wipefs")
        .args(["-a", "-q", lo.path()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let r = tb(dir.path(), &args(&["--destructive", "--format=json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = json_of(&r.stdout);
    assert_eq!(doc["target"], "block_device");
    assert_eq!(doc["path"], lo.path());
    // The default region is at most the device.
    assert_eq!(doc["region_bytes"], 32 << 20);
    let writes: Vec<u64> = doc["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["writes"].as_u64().unwrap())
        .collect();
    assert_eq!(writes, [5, 5]);
    assert_eq!(testkit::dir_names(dir.path()), ["disk.img"]);
}

#[test]
fn a_device_holding_a_zfs_pool_is_refused_by_its_labels() {
    let [_, zpool, _] = testkit::require!("root", "zfs-fuse", "losetup");
    let dir = scratch();
    let image = dir.path().join("vdev.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(128 << 20)
        .unwrap();
    let pool = format!("tbslog{}", std::process::id());
    let zp = |args: &[&str]| {
        let out = testkit::output(Command::new(&zpool).args(args)).unwrap();
        assert!(
            out.status.success(),
            "zpool {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    zp(&["create", &pool, image.to_str().unwrap()]);
    // Exported, nothing holds the file: only its labels say it is a pool.
    zp(&["export", &pool]);
    let lo = Loop::over(&image);
    let r = tb(
        dir.path(),
        &["slog", lo.path(), "--destructive", "--count=1"],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("refusing to overwrite the device: it holds a signature of ZFS label"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_stop_signal_ends_the_test_with_what_was_measured_and_removes_the_file() {
    let target = scratch();
    let child = Command::new(common::tankbench_bin())
        .args([
            "slog",
            target.path().to_str().unwrap(),
            "--min-size=4K",
            "--max-size=8K",
            "--time-per-size=30s",
            "--region=1M",
            "--format=json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first size is running: the scratch file exists and the
    // preparation line has been written.
    let start = std::time::Instant::now();
    while testkit::dir_names(target.path()).is_empty() {
        assert!(start.elapsed().as_secs() < 30, "no scratch file appeared");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child's pid, which it still holds (not reaped).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(128 + libc::SIGINT),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json_of(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(doc["interrupted"], true);
    let sizes = doc["sizes"].as_array().unwrap();
    assert_eq!(sizes.len(), 1, "{doc}");
    assert!(sizes[0]["writes"].as_u64().unwrap() > 0);
    assert_eq!(testkit::dir_names(target.path()), Vec::<String>::new());
}

//! `tankbench durability` end to end: a recorder on loopback, writers killed
//! with SIGKILL, verify finding every acknowledged block intact, then finding
//! exactly the blocks a test damaged.

mod common;

use common::*;
use durability::journal::Journal;
use durability::record::{encode, Header, RunId};
use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process killed (SIGKILL) and reaped when the test ends, also on failure.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `tankbench durability record` on 127.0.0.1, a port the kernel chose.
fn start_recorder(dir: &Path, journal: &Path) -> (Killed, String) {
    let mut child = Command::new(tankbench_bin())
        .args([
            "durability",
            "record",
            "--listen",
            "127.0.0.1:0",
            "--journal",
        ])
        .arg(journal)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the recorder");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the recorder's first line");
    let guard = Killed(child);
    let addr = line
        .split("listening on ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (guard, addr)
}

const LAYOUT: [&str; 4] = [
    "--file-num=2",
    "--file-total-size=2M",
    "--threads=2",
    "--commit=fdatasync",
];

fn write_args<'a>(dir: &'a str, recorder: &'a str) -> Vec<&'a str> {
    let mut a = vec!["durability", "write", dir, "--recorder", recorder];
    a.extend_from_slice(&LAYOUT);
    a
}

/// Acknowledgements in a journal file so far.
fn acks_in(journal: &Path) -> usize {
    std::fs::read(journal)
        .ok()
        .and_then(|b| Journal::parse(&b).ok())
        .map_or(0, |j| j.acks.len())
}

/// The latest acknowledged (run, seq) of each (file, block), sessions in order.
fn latest_acks(journal: &Path) -> BTreeMap<(u32, u64), (RunId, u64, u32)> {
    let j = Journal::parse(&std::fs::read(journal).unwrap()).unwrap();
    let order: BTreeMap<RunId, usize> = j
        .sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (s.run, i))
        .collect();
    let mut latest: BTreeMap<(u32, u64), (usize, u64, RunId, u32)> = BTreeMap::new();
    for a in &j.acks {
        let key = (order[&a.run], a.seq);
        let e = latest
            .entry((a.file, a.block))
            .or_insert((key.0, key.1, a.run, a.checksum));
        if key > (e.0, e.1) {
            *e = (key.0, key.1, a.run, a.checksum);
        }
    }
    latest
        .into_iter()
        .map(|(k, (_, seq, run, c))| (k, (run, seq, c)))
        .collect()
}

fn verify_json(dir: &Path, from: &str, json: &Path) -> (Run, serde_json::Value) {
    let r = tb(
        dir,
        &[
            "durability",
            "verify",
            "d",
            "--from",
            from,
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let doc = serde_json::from_slice(&std::fs::read(json).unwrap_or_default())
        .unwrap_or(serde_json::Value::Null);
    let _ = std::fs::remove_file(json);
    (r, doc)
}

const BS: u64 = 4096;

fn block_path(dir: &Path, file: u32) -> PathBuf {
    dir.join(format!("durability.{file}"))
}

/// Damage three acknowledged blocks, each its own way: an older version of
/// the block (same run, an earlier sequence number), a flipped bit, zeros.
/// Returns the (outcome, file, block) verify must report, sorted.
fn damage_three_blocks(dir: &Path, journal: &Path) -> Vec<(String, u64, u64)> {
    let latest = latest_acks(journal);
    assert!(latest.len() >= 3, "{} blocks", latest.len());
    let picks: Vec<Pick> = latest
        .iter()
        .filter(|(_, (_, seq, _))| *seq > 1)
        .take(3)
        .map(|(k, v)| (*k, *v))
        .collect();
    assert_eq!(picks.len(), 3);
    // An older version of the block: the same run, an earlier sequence number.
    let ((f0, b0), (run0, seq0, _)) = picks[0];
    let mut older = vec![0u8; 4096];
    encode(
        &Header {
            run: run0,
            file: f0,
            block: b0,
            seq: seq0 - 1,
            thread: 0,
            generation: 1,
            block_size: 4096,
        },
        &mut older,
    );
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(block_path(dir, f0))
        .unwrap();
    file.write_all_at(&older, b0 * BS).unwrap();
    // A flipped bit in the middle of a block.
    let ((f1, b1), _) = picks[1];
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(block_path(dir, f1))
        .unwrap();
    let mut byte = [0u8; 1];
    file.read_exact_at(&mut byte, b1 * BS + 1000).unwrap();
    byte[0] ^= 0x04;
    file.write_all_at(&byte, b1 * BS + 1000).unwrap();
    // Zeros.
    let ((f2, b2), _) = picks[2];
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(block_path(dir, f2))
        .unwrap();
    file.write_all_at(&[0u8; 4096], b2 * BS).unwrap();

    let mut want = vec![
        ("lost".to_string(), u64::from(f0), b0),
        ("corrupt".to_string(), u64::from(f1), b1),
        ("lost".to_string(), u64::from(f2), b2),
    ];
    want.sort();
    want
}

/// A block and its latest acknowledged (run, seq, checksum).
type Pick = ((u32, u64), (RunId, u64, u32));

/// Issue 15: the recorder survives a writer's SIGKILL and takes a second
/// writer session; verify finds every acknowledged block intact, and after
/// three blocks are damaged (an older version, a flipped bit, zeros) it names
/// exactly those and fails.
#[test]
fn acknowledged_writes_survive_a_killed_writer_and_damage_is_found_exactly() {
    let t = scratch();
    let dir = t.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let journal = t.path().join("recorder.journal");
    let (_recorder, addr) = start_recorder(t.path(), &journal);

    // Writer 1: killed with SIGKILL mid-run, once it has reported something.
    let mut w1 = Killed(
        Command::new(tankbench_bin())
            .args(write_args("d", &addr))
            .current_dir(t.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_secs(2));
    let deadline = Instant::now() + Duration::from_secs(60);
    while acks_in(&journal) == 0 {
        assert!(Instant::now() < deadline, "writer 1 reported nothing");
        std::thread::sleep(Duration::from_millis(100));
    }
    w1.0.kill().unwrap();
    w1.0.wait().unwrap();

    let json = t.path().join("v.json");
    let (r, doc) = verify_json(t.path(), &addr, &json);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let d = &doc["durability"];
    assert_eq!(d["verdict"], "passed", "{doc}");
    assert!(d["acknowledged"].as_u64().unwrap() > 0);
    // A write committed but not yet reported when SIGKILL came shows as a
    // later, unacknowledged version: allowed, and counted apart.
    assert_eq!(
        d["intact"].as_u64().unwrap() + d["unacknowledged_newer"].as_u64().unwrap(),
        d["acknowledged"].as_u64().unwrap(),
        "{d}"
    );
    assert_eq!(
        (
            d["lost"].as_u64(),
            d["torn"].as_u64(),
            d["corrupt"].as_u64()
        ),
        (Some(0), Some(0), Some(0))
    );

    // Writer 2 on the same recorder and file set: a new session.
    let mut args = write_args("d", &addr);
    args.push("--time=1");
    let r = tb(t.path(), &args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("writes acknowledged"), "{}", r.stdout);
    let j = Journal::parse(&std::fs::read(&journal).unwrap()).unwrap();
    assert_eq!(j.sessions.len(), 2, "two writer sessions recorded");

    let want = damage_three_blocks(&dir, &journal);
    let (r, doc) = verify_json(t.path(), journal.to_str().unwrap(), &json);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("FAILED: 3 of"), "{}", r.stdout);
    let d = &doc["durability"];
    assert_eq!(d["verdict"], "failed");
    assert_eq!(
        (
            d["lost"].as_u64(),
            d["corrupt"].as_u64(),
            d["torn"].as_u64()
        ),
        (Some(2), Some(1), Some(0)),
        "{d}"
    );
    assert_eq!(
        d["intact"].as_u64().unwrap() + d["unacknowledged_newer"].as_u64().unwrap() + 3,
        d["acknowledged"].as_u64().unwrap()
    );
    let found: Vec<(String, u64, u64)> = d["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["outcome"].as_str().unwrap().to_string(),
                e["file"].as_u64().unwrap(),
                e["block"].as_u64().unwrap(),
            )
        })
        .filter(|e| e.0 != "unacknowledged_newer")
        .collect();
    let mut found_sorted = found.clone();
    found_sorted.sort();
    assert_eq!(found_sorted, want, "{d}");
    assert!(
        doc["warnings"][0]["code"] == "acknowledged_writes_lost",
        "{doc}"
    );
}

/// A recorder that saw nothing, and a journal with nothing of this file set:
/// verify says so and does not claim success.
#[test]
fn verify_against_a_recorder_that_saw_nothing_fails_clearly() {
    let t = scratch();
    std::fs::create_dir(t.path().join("d")).unwrap();
    let own = t.path().join("own.journal");
    let mut args = vec![
        "durability",
        "write",
        "d",
        "--journal",
        own.to_str().unwrap(),
    ];
    args.extend_from_slice(&LAYOUT);
    args.push("--time=1");
    let r = tb(t.path(), &args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    let empty = t.path().join("empty.journal");
    let (_recorder, addr) = start_recorder(t.path(), &empty);
    for from in [addr.as_str(), empty.to_str().unwrap()] {
        let r = tb(t.path(), &["durability", "verify", "d", "--from", from]);
        assert_eq!(r.code, 1, "{from}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("nothing to verify"),
            "{from}: {}",
            r.stderr
        );
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
        assert!(!r.stdout.contains("PASSED"));
    }
    // A session that acknowledged nothing is not a success either.
    let text = std::fs::read_to_string(&own).unwrap();
    let header_and_session: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    let bare = t.path().join("bare.journal");
    std::fs::write(&bare, header_and_session).unwrap();
    let r = tb(
        t.path(),
        &[
            "durability",
            "verify",
            "d",
            "--from",
            bare.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no acknowledged write"), "{}", r.stderr);
    // The writer's own journal verifies.
    let r = tb(
        t.path(),
        &["durability", "verify", "d", "--from", own.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// Bad options: one line naming the option, exit 1, nothing written.
#[test]
fn bad_options_are_refused_in_one_line_and_write_nothing() {
    let t = scratch();
    std::fs::create_dir(t.path().join("d")).unwrap();
    let cases: [(&[&str], &str); 9] = [
        (&["write", "d", "--journal=j", "--commit=never"], "--commit"),
        (
            &["write", "d", "--journal=j", "--file-test-mode=rndrw"],
            "--file-test-mode",
        ),
        (
            &["write", "d", "--journal=j", "--file-block-size=100"],
            "--file-block-size",
        ),
        (&["write", "d", "--journal=j", "--threads=0"], "threads"),
        (&["write", "d", "--journal=j", "--time=x"], "--time"),
        (&["write", "d"], "--recorder"),
        (&["write", "d", "--recorder=localhost"], "--recorder"),
        (&["record", "--listen=nowhere", "--journal=j"], "--listen"),
        (&["verify", "d", "--from=missing.journal"], "--from"),
    ];
    for (words, option) in cases {
        let mut args = vec!["durability"];
        args.extend_from_slice(words);
        let r = tb(t.path(), &args);
        assert_eq!(r.code, 1, "{words:?}: {}{}", r.stdout, r.stderr);
        assert_eq!(
            r.stderr.trim().lines().count(),
            1,
            "{words:?}: {}",
            r.stderr
        );
        assert!(r.stderr.contains(option), "{words:?}: {}", r.stderr);
        assert_eq!(listing(&t.path().join("d")), vec![], "{words:?} wrote");
        assert!(!t.path().join("j").exists(), "{words:?} wrote the journal");
    }
    // Files tankbench did not create are left alone.
    std::fs::write(t.path().join("d/durability.0"), b"someone's").unwrap();
    let r = tb(
        t.path(),
        &[
            "durability",
            "write",
            "d",
            "--journal=j",
            "--file-num=1",
            "--file-total-size=64K",
        ],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("not created by tankbench"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read(t.path().join("d/durability.0")).unwrap(),
        b"someone's"
    );
    assert!(!t.path().join("j").exists());
}

/// A tmpfs mounted for one test; lazily unmounted on drop (also on failure).
struct Tmpfs(PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Issue 15: when the storage goes away (here its mount disappears under the
/// writer), the writer stops with exit 2 and one line saying how many writes
/// were acknowledged.
#[test]
fn the_storage_going_away_ends_the_writer_with_its_count() {
    testkit::require!("root");
    let t = scratch();
    let mnt = t.path().join("h23-mnt");
    std::fs::create_dir(&mnt).unwrap();
    let status = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(&mnt)
        .status();
    if !status.is_ok_and(|s| s.success()) {
        testkit::skip_or_fail("a tmpfs mount (mount -t tmpfs failed)");
        return;
    }
    let guard = Tmpfs(mnt.clone());
    std::fs::create_dir(mnt.join("d")).unwrap();
    let journal = t.path().join("j");
    let child = Command::new(tankbench_bin())
        .args(["durability", "write", "h23-mnt/d", "--journal", "j"])
        .args(["--file-num=1", "--file-total-size=1M"])
        .current_dir(t.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut writer = Killed(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    while acks_in(&journal) == 0 {
        assert!(Instant::now() < deadline, "the writer reported nothing");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(guard);
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = writer.0.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the writer did not notice");
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut writer.0.stdout.take().unwrap(), &mut stdout).unwrap();
    assert_eq!(status.code(), Some(2), "{stdout}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.contains("the storage under test failed") && stdout.contains("writes acknowledged"),
        "{stdout}"
    );
    let j = Journal::parse(&std::fs::read(&journal).unwrap()).unwrap();
    assert!(
        j.ends
            .iter()
            .any(|(_, e)| e.contains("reason=storage_failed")),
        "{:?}",
        j.ends
    );
}

/// SIGTERM stops a writer cleanly: exit 0, its count, and an end line in
/// the journal.
#[test]
fn sigterm_stops_the_writer_with_its_count() {
    let t = scratch();
    std::fs::create_dir(t.path().join("d")).unwrap();
    let journal = t.path().join("j");
    let mut args = vec!["durability", "write", "d", "--journal", "j"];
    args.extend_from_slice(&LAYOUT);
    let child = Command::new(tankbench_bin())
        .args(&args)
        .current_dir(t.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut writer = Killed(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    while acks_in(&journal) == 0 {
        assert!(Instant::now() < deadline, "the writer reported nothing");
        std::thread::sleep(Duration::from_millis(100));
    }
    let pid = i32::try_from(writer.0.id()).unwrap();
    // SAFETY: kill(2) on our own child's pid, which it still holds (not reaped).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = writer.0.wait().unwrap();
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut writer.0.stdout.take().unwrap(), &mut stdout).unwrap();
    assert_eq!(status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("stopped by signal"), "{stdout}");
    let j = Journal::parse(&std::fs::read(&journal).unwrap()).unwrap();
    let acknowledged: u64 = stdout
        .split(": ")
        .nth(2)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {stdout}"));
    assert_eq!(
        j.acks.len() as u64,
        acknowledged,
        "every acknowledged write reported"
    );
    assert!(j.ends[0].1.contains("reason=stopped"), "{:?}", j.ends);
}

/// A recorder that cannot be reached, or a journal path holding another
/// file: refused before anything is created in DIR.
#[test]
fn an_unreachable_recorder_or_a_foreign_journal_writes_nothing() {
    let t = scratch();
    std::fs::create_dir(t.path().join("d")).unwrap();
    // A port nothing listens on: bind one, note it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let r = tb(t.path(), &write_args("d", &addr));
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains(&addr), "{}", r.stderr);
    assert_eq!(std::fs::read_dir(t.path().join("d")).unwrap().count(), 0);
    std::fs::write(t.path().join("notes"), b"mine\n").unwrap();
    let mut args = vec!["durability", "write", "d", "--journal", "notes"];
    args.extend_from_slice(&LAYOUT);
    let r = tb(t.path(), &args);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("not a durability journal"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_dir(t.path().join("d")).unwrap().count(), 0);
    assert_eq!(std::fs::read(t.path().join("notes")).unwrap(), b"mine\n");
}

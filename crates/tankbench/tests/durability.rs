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

/// `tankbench <args>` started in `dir`, stdin closed, killed when dropped.
fn spawn_tankbench(dir: &Path, args: &[&str], stdout: Stdio, stderr: Stdio) -> Killed {
    Killed(
        Command::new(tankbench_bin())
            .args(args)
            .current_dir(dir)
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .unwrap(),
    )
}

/// Wait (at most `limit`) for `child` to end; `what` says what a timeout
/// means.
fn exit_within(child: &mut Killed, limit: Duration, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            return s;
        }
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Everything left on a child's piped stdout or stderr.
fn drain(pipe: Option<impl std::io::Read>) -> String {
    let mut text = String::new();
    pipe.expect("a piped stream")
        .read_to_string(&mut text)
        .unwrap();
    text
}

/// Wait (at most a minute) for the first acknowledgement in `journal`.
fn until_acknowledged(journal: &Path, writer: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while acks_in(journal) == 0 {
        assert!(Instant::now() < deadline, "{writer} reported nothing");
        std::thread::sleep(Duration::from_millis(100));
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

/// A scratch directory, an empty file-set directory `d` in it, and a
/// recorder journaling to `recorder.journal` there with its address: in this
/// order, so that (locals dropping in reverse) the recorder is killed before
/// the directory is removed.
fn recorder_and_file_set() -> (tempfile::TempDir, PathBuf, PathBuf, Killed, String) {
    let t = scratch();
    let dir = t.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let journal = t.path().join("recorder.journal");
    let (recorder, addr) = start_recorder(t.path(), &journal);
    (t, dir, journal, recorder, addr)
}

const LAYOUT: [&str; 4] = [
    "--file-num=2",
    "--file-total-size=2M",
    "--threads=2",
    "--commit=fdatasync",
];

/// The key file a recorder started by [`start_recorder`] creates.
const KEY: &str = "recorder.journal.key";

fn write_args<'a>(dir: &'a str, recorder: &'a str) -> Vec<&'a str> {
    let mut a = vec![
        "durability",
        "write",
        dir,
        "--recorder",
        recorder,
        "--key",
        KEY,
    ];
    a.extend_from_slice(&LAYOUT);
    a
}

/// A writer of [`LAYOUT`] in `d` keeping its own journal.
fn journal_write_args(journal: &str) -> Vec<&str> {
    let mut a = vec!["durability", "write", "d", "--journal", journal];
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
    let mut args = vec![
        "durability",
        "verify",
        "d",
        "--from",
        from,
        "--json",
        json.to_str().unwrap(),
    ];
    if !from.contains('/') {
        args.extend(["--key", KEY]);
    }
    let r = tb(dir, &args);
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
    let (t, dir, journal, _recorder, addr) = recorder_and_file_set();

    // Writer 1: killed with SIGKILL mid-run, once it has reported something.
    let mut w1 = spawn_tankbench(
        t.path(),
        &write_args("d", &addr),
        Stdio::null(),
        Stdio::null(),
    );
    std::thread::sleep(Duration::from_secs(2));
    until_acknowledged(&journal, "writer 1");
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
    let mut args = journal_write_args(own.to_str().unwrap());
    args.push("--time=1");
    let r = tb(t.path(), &args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    let empty = t.path().join("empty.journal");
    let (_recorder, addr) = start_recorder(t.path(), &empty);
    for from in [addr.as_str(), empty.to_str().unwrap()] {
        let mut args = vec!["durability", "verify", "d", "--from", from];
        if from == addr {
            args.extend(["--key", "empty.journal.key"]);
        }
        let r = tb(t.path(), &args);
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
    let cases: [(&[&str], &str); 11] = [
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
        (
            &["write", "d", "--recorder=localhost", "--key=k"],
            "--recorder",
        ),
        (&["write", "d", "--recorder=127.0.0.1:9"], "--key"),
        (&["verify", "d", "--from=127.0.0.1:9"], "--key"),
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
    let mut writer = spawn_tankbench(
        t.path(),
        &[
            "durability",
            "write",
            "h23-mnt/d",
            "--journal",
            "j",
            "--file-num=1",
            "--file-total-size=1M",
        ],
        Stdio::piped(),
        Stdio::piped(),
    );
    until_acknowledged(&journal, "the writer");
    drop(guard);
    let status = exit_within(
        &mut writer,
        Duration::from_secs(60),
        "the writer did not notice",
    );
    let stdout = drain(writer.0.stdout.take());
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
    let mut writer = spawn_tankbench(
        t.path(),
        &journal_write_args("j"),
        Stdio::piped(),
        Stdio::null(),
    );
    until_acknowledged(&journal, "the writer");
    let pid = i32::try_from(writer.0.id()).unwrap();
    // SAFETY: kill(2) on our own child's pid, which it still holds (not reaped).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = writer.0.wait().unwrap();
    let stdout = drain(writer.0.stdout.take());
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
    durability::wire::Key::load_or_create(&t.path().join(KEY)).unwrap();
    let r = tb(t.path(), &write_args("d", &addr));
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains(&addr), "{}", r.stderr);
    assert_eq!(std::fs::read_dir(t.path().join("d")).unwrap().count(), 0);
    std::fs::write(t.path().join("notes"), b"mine\n").unwrap();
    let r = tb(t.path(), &journal_write_args("notes"));
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("not a durability journal"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_dir(t.path().join("d")).unwrap().count(), 0);
    assert_eq!(std::fs::read(t.path().join("notes")).unwrap(), b"mine\n");
}

/// A scripted recorder on 127.0.0.1 running `script` on each connection
/// (with the key, so it can say an authenticated OK).
fn fake_recorder(
    key: durability::wire::Key,
    script: fn(std::net::TcpStream, &durability::wire::Key),
) -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    // A small receive window, inherited by the accepted connections: a
    // recorder that stops reading is felt at once.
    let size: libc::c_int = 4096;
    // SAFETY: setsockopt(2) on the listener with a pointer to an int and its size.
    unsafe {
        libc::setsockopt(
            std::os::unix::io::AsRawFd::as_raw_fd(&l),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            std::ptr::from_ref(&size).cast::<libc::c_void>(),
            4,
        );
    }
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let key = key.clone();
            std::thread::spawn(move || script(s, &key));
        }
    });
    addr
}

/// The recorder's side of the handshake: greeting, hello and session line
/// read; returns the tagger to answer with.
fn accept_hello(s: &std::net::TcpStream, key: &durability::wire::Key) -> durability::wire::Tagger {
    use durability::wire::{hex, parse_nonce, Side, Tagger};
    use std::io::Write as _;
    let nr = [7u8; 16];
    (&*s)
        .write_all(format!("tankbench-durability 2 recorder nonce={}\n", hex(&nr)).as_bytes())
        .unwrap();
    let mut r = BufReader::new(s);
    let mut hello = String::new();
    r.read_line(&mut hello).unwrap();
    let nc = parse_nonce(
        hello
            .split(' ')
            .nth(3)
            .unwrap()
            .trim_start_matches("nonce="),
    )
    .unwrap();
    let mut t = Tagger::new(key, &nr, &nc, Side::Recorder);
    t.open(hello.trim_end()).unwrap();
    let mut session = String::new();
    r.read_line(&mut session).unwrap();
    t.open(session.trim_end()).unwrap();
    t
}

fn key_in(dir: &Path) -> durability::wire::Key {
    durability::wire::Key::load_or_create(&dir.join(KEY))
        .unwrap()
        .0
}

/// Issue 19: a recorder that refuses the session, or closes at once, leaves
/// DIR as it was: the file set is made only after an authenticated OK.
#[test]
fn a_refused_or_closed_session_creates_no_file_set() {
    let t = scratch();
    std::fs::create_dir(t.path().join("d")).unwrap();
    let key = key_in(t.path());
    let refusing = fake_recorder(key.clone(), |s, key| {
        use std::io::Write as _;
        let mut t = accept_hello(&s, key);
        let mut line = String::new();
        t.seal("ERR no thanks", &mut line);
        let _ = (&s).write_all(line.as_bytes());
    });
    let closing = fake_recorder(key.clone(), |s, key| {
        let _ = accept_hello(&s, key);
        drop(s);
    });
    let mute = fake_recorder(key, |s, _| drop(s));
    for (addr, says) in [
        (&refusing, "no thanks"),
        (&closing, "closed the connection"),
        (&mute, "no greeting"),
    ] {
        let start = Instant::now();
        let r = tb(t.path(), &write_args("d", addr));
        assert_eq!(r.code, 1, "{addr}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(says), "{addr}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
        assert!(
            listing(&t.path().join("d")).is_empty(),
            "{addr}: a file set was made"
        );
        assert!(start.elapsed() < Duration::from_secs(20));
    }
}

/// Wait until the recorder has appended (and flushed) all it was sent.
fn settled(journal: &Path) {
    let mut last = usize::MAX;
    loop {
        std::thread::sleep(Duration::from_millis(400));
        let now = acks_in(journal);
        if now == last {
            return;
        }
        last = now;
    }
}

/// The writer's resident memory, in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Issue 19: a recorder that says OK and then stops reading holds the
/// writer no longer than --time, or SIGTERM: it ends with a clear error
/// (exit 1), its queue bounded.
#[test]
fn a_recorder_that_stops_reading_cannot_hold_the_writer() {
    let t = scratch();
    std::fs::create_dir(t.path().join("d")).unwrap();
    let key = key_in(t.path());
    let addr = fake_recorder(key, |s, key| {
        use std::io::Write as _;
        let mut t = accept_hello(&s, key);
        let mut line = String::new();
        t.seal("OK", &mut line);
        let _ = (&s).write_all(line.as_bytes());
        // Never read again; keep the connection open.
        std::thread::sleep(Duration::from_secs(120));
    });
    let base = [
        "durability",
        "write",
        "d",
        "--recorder",
        addr.as_str(),
        "--key",
        KEY,
        "--file-num=2",
        "--file-total-size=64M",
        "--threads=2",
        "--commit=osync",
    ];
    let mut args = base.to_vec();
    args.push("--time=4");
    let mut child = spawn_tankbench(t.path(), &args, Stdio::piped(), Stdio::piped());
    let status = exit_within(
        &mut child,
        Duration::from_secs(30),
        "--time was not honoured",
    );
    let out = drain(child.0.stdout.take());
    let err = drain(child.0.stderr.take());
    assert_eq!(status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("stopped taking acknowledgements"),
        "{out}{err}"
    );

    // SIGTERM, without --time; memory bounded meanwhile.
    let mut child = spawn_tankbench(t.path(), &base, Stdio::piped(), Stdio::null());
    std::thread::sleep(Duration::from_secs(6));
    let hwm = rss_kib(child.0.id());
    assert!(hwm > 0 && hwm < 128 * 1024, "the writer grew to {hwm} KiB");
    let pid = i32::try_from(child.0.id()).unwrap();
    // SAFETY: kill(2) on our own child's pid, which it still holds (not reaped).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = exit_within(
        &mut child,
        Duration::from_secs(15),
        "SIGTERM was not honoured",
    );
    let out = drain(child.0.stdout.take());
    assert_eq!(status.code(), Some(1), "{out}");
    assert!(out.contains("reporting failed"), "{out}");
}

/// Send `lines` to the recorder at `addr` as a writer holding `key` would:
/// protocol 2's hello with the client nonce `nc`, then each line tagged.
/// Returns whether the lines were all sent, and the recorder's answer lines.
fn send_tagged(
    addr: &str,
    key: &durability::wire::Key,
    nc: [u8; 16],
    lines: &[String],
) -> (std::io::Result<()>, String) {
    use durability::wire::{hex, parse_nonce, Side, Tagger};
    use std::io::Write as _;
    let s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut r = BufReader::new(&s);
    let mut greeting = String::new();
    r.read_line(&mut greeting).unwrap();
    let nr = parse_nonce(greeting.trim_end().rsplit_once("nonce=").unwrap().1).unwrap();
    let mut t = Tagger::new(key, &nr, &nc, Side::Client);
    let mut out = String::new();
    t.seal(
        &format!("tankbench-durability 2 writer nonce={}", hex(&nc)),
        &mut out,
    );
    for l in lines {
        t.seal(l, &mut out);
    }
    let sent = (&s).write_all(out.as_bytes());
    let mut answer = String::new();
    let _ = std::io::Read::read_to_string(&mut r, &mut answer);
    (sent, answer)
}

/// Send `lines` as a stranger would: protocol 2's words, tags made with a
/// key of its own. Returns the recorder's answer lines (the recorder may
/// close before it has read them all, so a failed send is no failure here).
fn as_stranger(addr: &str, lines: &[String]) -> String {
    let d = tempfile::tempdir().unwrap();
    let key = durability::wire::Key::load_or_create(&d.path().join("k"))
        .unwrap()
        .0;
    send_tagged(addr, &key, [3u8; 16], lines).1
}

/// Issue 19, the two forged verdicts: a stranger's acknowledgements under
/// the victim's run id (which would make verify FAIL) and an earlier session
/// announced again after a real loss (which would make it PASS) are refused;
/// verify gives the true verdict each time.
#[test]
fn forged_acknowledgements_and_a_reannounced_session_do_not_change_the_verdict() {
    let (t, dir, journal, _recorder, addr) = recorder_and_file_set();
    let mut args = write_args("d", &addr);
    args.push("--time=1");
    let r = tb(t.path(), &args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    settled(&journal);
    let j = Journal::parse(&std::fs::read(&journal).unwrap()).unwrap();
    let victim = j.sessions[0].clone();
    // Forged acks of blocks the victim wrote, with sequence numbers no block holds.
    let mut forged = vec![victim.line()];
    for a in j.acks.iter().take(5) {
        let mut l = String::new();
        durability::journal::Ack {
            seq: a.seq + 1_000_000,
            ..*a
        }
        .write_line(&mut l);
        forged.push(l.trim_end().to_string());
    }
    let answer = as_stranger(&addr, &forged);
    assert!(answer.contains("ERR authentication failed"), "{answer}");
    let mut run = victim.clone();
    run.run = RunId([0xab; 16]);
    forged[0] = run.line();
    let answer = as_stranger(&addr, &forged);
    assert!(answer.contains("ERR authentication failed"), "{answer}");
    let json = t.path().join("v.json");
    let (r, doc) = verify_json(t.path(), &addr, &json);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(doc["durability"]["verdict"], "passed", "{doc}");
    assert_eq!(
        Journal::parse(&std::fs::read(&journal).unwrap())
            .unwrap()
            .acks
            .len(),
        j.acks.len()
    );

    // A real loss: session 2's writes undone by putting session 1's file
    // set back.
    let before: Vec<Vec<u8>> = (0..2)
        .map(|f| std::fs::read(block_path(&dir, f)).unwrap())
        .collect();
    let r = tb(t.path(), &args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    for (f, bytes) in before.iter().enumerate() {
        std::fs::write(block_path(&dir, u32::try_from(f).unwrap()), bytes).unwrap();
    }
    let (r, doc) = verify_json(t.path(), &addr, &json);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(doc["durability"]["verdict"], "failed");
    // Session 1 announced again, by a stranger and by the key's holder.
    let answer = as_stranger(&addr, &[victim.line()]);
    assert!(answer.contains("ERR authentication failed"), "{answer}");
    let key = durability::wire::Key::load(&t.path().join(KEY)).unwrap();
    let (sent, again) = send_tagged(&addr, &key, [4u8; 16], &[victim.line()]);
    sent.unwrap();
    assert!(again.contains("already in the journal"), "{again}");
    let (r, doc) = verify_json(t.path(), &addr, &json);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(doc["durability"]["verdict"], "failed", "{doc}");
    assert!(doc["durability"]["lost"].as_u64().unwrap() > 0);
}

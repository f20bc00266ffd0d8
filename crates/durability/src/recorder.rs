//! `durability record`: the recorder, a TCP server on a machine other than
//! the one under test, appending every authenticated acknowledgement it
//! receives to its journal.
//!
//! Protocol 2 (text lines ending in `\n`; documented in docs/durability.md):
//!
//! - on every connection the recorder speaks first:
//!   `tankbench-durability 2 recorder nonce=<32 hex>`;
//! - a writer answers `tankbench-durability 2 writer nonce=<32 hex>` and its
//!   session line (`S ...`), each with its tag ([`crate::wire`]); the
//!   recorder checks both, refuses a run id the journal already holds and a
//!   file set it knows with another layout, appends the session line, flushes
//!   the journal to its storage and answers `OK` (or `ERR <reason>` and
//!   closes). Then the writer sends `A`, `K` (keep-alive) and maybe a final
//!   `E` line; the recorder answers only to refuse (`ERR journal full`).
//! - `verify` answers the nonce line with `tankbench-durability 2 fetch
//!   nonce=...`; the recorder flushes the journal and sends `J bytes=<n>`,
//!   the journal's first n bytes, and `T sha256=<hex>`, then closes.
//!
//! Nothing unauthenticated is ever journalled: a line whose tag does not
//! verify ends its connection and is counted. Sessions are independent
//! threads: a writer that dies never blocks the next one; one silent past
//! the idle deadline is ended. Appends reach the journal's storage in
//! batches (fdatasync every 100 ms).

use crate::journal::{check_line, Journal, Session};
use crate::options::RecordOptions;
use crate::record::RunId;
use crate::wire::{
    self, hex, never, parse_nonce, write_all_by, Key, Limits, LineReader, Side, Tagger, WireError,
    PROTOCOL_VERSION,
};
use crate::writer::{open_journal, stop_requested};
use sha2::{Digest as _, Sha256};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The journal being appended to, and what the recorder knows of it.
struct Book {
    out: BufWriter<File>,
    file: File,
    dirty: bool,
    /// The first write or flush error; after it the recorder refuses sessions.
    failed: Option<String>,
    /// The journal's size (what is written, flushed or not).
    bytes: u64,
    max_bytes: u64,
    /// Every run id the journal holds a session of: a run is announced once.
    runs: HashSet<RunId>,
    /// Each file set's layout (block size, files, file size), as its first
    /// session gave it.
    layouts: HashMap<RunId, (u64, u64, u64)>,
}

impl Book {
    fn append(&mut self, line: &str) -> Result<(), String> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let len = line.len() as u64 + 1;
        if self.bytes + len > self.max_bytes {
            return Err(format!(
                "journal full ({} bytes; --max-journal-size {})",
                self.bytes, self.max_bytes
            ));
        }
        let r = self
            .out
            .write_all(line.as_bytes())
            .and_then(|()| self.out.write_all(b"\n"));
        match r {
            Ok(()) => {
                self.dirty = true;
                self.bytes += len;
                Ok(())
            }
            Err(e) => Err(self.fail(&e)),
        }
    }

    fn sync(&mut self) -> Result<(), String> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if !self.dirty {
            return Ok(());
        }
        match self.out.flush().and_then(|()| self.file.sync_data()) {
            Ok(()) => {
                self.dirty = false;
                Ok(())
            }
            Err(e) => Err(self.fail(&e)),
        }
    }

    fn fail(&mut self, e: &std::io::Error) -> String {
        let msg = format!("journal write failed: {e}");
        self.failed = Some(msg.clone());
        msg
    }

    /// Accept a session: a new run, a file set's own layout, room in the
    /// journal; its line appended and on the journal's storage.
    fn open_session(&mut self, s: &Session) -> Result<(), String> {
        if self.runs.contains(&s.run) {
            return Err(format!(
                "run {} is already in the journal; a session is announced once",
                s.run
            ));
        }
        let layout = (s.block_size, s.file_num, s.file_size);
        if let Some(known) = self.layouts.get(&s.fileset) {
            if *known != layout {
                return Err(format!(
                    "file set {} was recorded with another layout ({} files of {} bytes, blocks of {})",
                    s.fileset, known.1, known.2, known.0
                ));
            }
        }
        self.append(&s.line()).and_then(|()| self.sync())?;
        self.runs.insert(s.run);
        self.layouts.insert(s.fileset, layout);
        Ok(())
    }
}

/// What the sessions share.
struct Shared {
    book: Mutex<Book>,
    key: Key,
    limits: Limits,
    path: PathBuf,
    stop: AtomicBool,
    sessions: AtomicUsize,
    unauthenticated: AtomicUsize,
    refused: AtomicU64,
    log: Arc<dyn Fn(&str) + Send + Sync>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn refuse(&self, peer: &str, why: &str) {
        self.refused.fetch_add(1, SeqCst);
        (self.log)(&format!("{peer}: refused: {why}"));
    }
}

/// A count held while a connection is in one state; released on drop.
struct Slot<'a>(&'a AtomicUsize);

impl<'a> Slot<'a> {
    fn take(counter: &'a AtomicUsize, max: usize) -> Option<Slot<'a>> {
        let prev = counter.fetch_add(1, SeqCst);
        if prev >= max {
            counter.fetch_sub(1, SeqCst);
            return None;
        }
        Some(Slot(counter))
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// A running recorder. Dropping it does not stop it; call [`Recorder::stop`].
pub struct Recorder {
    pub addr: std::net::SocketAddr,
    /// The key file writers and verify are given.
    pub key_path: PathBuf,
    /// Whether the key file was created by this start (a restarted recorder
    /// keeps the key it made before).
    pub key_created: bool,
    shared: Arc<Shared>,
    accept: Option<std::thread::JoinHandle<()>>,
}

/// What a journal file already holds, for a recorder that appends to it.
fn index(path: &Path) -> Result<(u64, HashSet<RunId>, HashMap<RunId, (u64, u64, u64)>), String> {
    let bytes = report::store::read_regular_file(path)
        .map_err(|e| format!("durability record: --journal {}: {e}", path.display()))?;
    let j = Journal::parse(&bytes)
        .map_err(|e| format!("durability record: --journal {}: {e}", path.display()))?;
    let mut layouts = HashMap::new();
    for s in &j.sessions {
        layouts
            .entry(s.fileset)
            .or_insert((s.block_size, s.file_num, s.file_size));
    }
    let runs = j.sessions.iter().map(|s| s.run).collect();
    Ok((bytes.len() as u64, runs, layouts))
}

impl Recorder {
    /// Bind, open the journal and the key and start serving in the
    /// background. `log` receives one line per event (session start, end,
    /// refusal).
    pub fn start(
        opts: &RecordOptions,
        log: Arc<dyn Fn(&str) + Send + Sync>,
    ) -> Result<Recorder, String> {
        let listener = TcpListener::bind(&opts.listen)
            .map_err(|e| format!("durability record: --listen {}: {e}", opts.listen))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("durability record: --listen {}: {e}", opts.listen))?;
        let file = open_journal(&opts.journal).map_err(|e| format!("durability record: --{e}"))?;
        let (bytes, runs, layouts) = index(&opts.journal)?;
        let (key, key_created) = Key::load_or_create(&opts.key)
            .map_err(|e| format!("durability record: --key: {e}"))?;
        let out = BufWriter::new(
            file.try_clone()
                .map_err(|e| format!("durability record: --journal: {e}"))?,
        );
        if bytes >= opts.limits.max_journal_bytes {
            log(&format!(
                "the journal holds {bytes} bytes, --max-journal-size {}: new sessions are refused",
                opts.limits.max_journal_bytes
            ));
        }
        let shared = Arc::new(Shared {
            book: Mutex::new(Book {
                out,
                file,
                dirty: false,
                failed: None,
                bytes,
                max_bytes: opts.limits.max_journal_bytes,
                runs,
                layouts,
            }),
            key,
            limits: opts.limits,
            path: opts.journal.clone(),
            stop: AtomicBool::new(false),
            sessions: AtomicUsize::new(0),
            unauthenticated: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
            log,
        });
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("durability record: {e}"))?;
        let accept = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("durability-recorder".into())
                .spawn(move || accept_loop(&listener, &shared))
                .map_err(|e| format!("durability record: {e}"))?
        };
        Ok(Recorder {
            addr,
            key_path: opts.key.clone(),
            key_created,
            shared,
            accept: Some(accept),
        })
    }

    /// Connections refused so far (unauthenticated, malformed, over a bound).
    pub fn refused(&self) -> u64 {
        self.shared.refused.load(SeqCst)
    }

    /// Stop accepting, flush the journal to its storage, and return.
    /// Sessions still connected end at their next line.
    pub fn stop(mut self) -> Result<(), String> {
        self.shared.stop.store(true, SeqCst);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        self.shared.lock().sync()
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    let mut since_sync = Instant::now();
    while !shared.stop.load(SeqCst) {
        match listener.accept() {
            Ok((stream, peer)) => {
                let peer = peer.to_string();
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_nodelay(true);
                // A flood of connections costs no thread and no memory past
                // the bound: the one over it is told and closed at once.
                let Some(slot) =
                    Slot::take(&shared.unauthenticated, shared.limits.max_unauthenticated)
                else {
                    let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
                    let _ = (&stream).write_all(b"ERR busy: too many connections at once\n");
                    shared.refuse(&peer, "too many unauthenticated connections at once");
                    continue;
                };
                std::mem::forget(slot);
                let mine = Arc::clone(shared);
                let spawned = std::thread::Builder::new()
                    .name("durability-session".into())
                    .spawn(move || {
                        // The slot taken above, released when this ends.
                        let slot = Slot(&mine.unauthenticated);
                        serve(&stream, &peer, &mine, slot);
                    });
                if spawned.is_err() {
                    shared.unauthenticated.fetch_sub(1, SeqCst);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => {
                (shared.log)(&format!("accept failed: {e}"));
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        if since_sync.elapsed() >= Duration::from_millis(100) {
            since_sync = Instant::now();
            if let Err(e) = shared.lock().sync() {
                (shared.log)(&e);
            }
        }
    }
}

/// `ERR <why>` to the peer (tagged once the connection is authenticated, so
/// the peer can tell the recorder's refusal from a stranger's), bounded by
/// the line deadline.
fn send_err(stream: &TcpStream, tagger: Option<&mut Tagger>, why: &str, limits: &Limits) {
    let payload = format!("ERR {}", why.replace('\n', " "));
    let mut line = String::new();
    match tagger {
        Some(t) => t.seal(&payload, &mut line),
        None => {
            line = payload;
            line.push('\n');
        }
    }
    let _ = write_all_by(
        stream,
        line.as_bytes(),
        Instant::now() + limits.line_deadline,
        &never,
    );
}

/// The hello a client sends: its kind and its nonce.
fn parse_hello(payload: &str) -> Result<(&str, [u8; wire::NONCE_BYTES]), String> {
    let w: Vec<&str> = payload.split(' ').collect();
    match w.as_slice() {
        ["tankbench-durability", v, kind, nonce] if *v == PROTOCOL_VERSION.to_string() => {
            let nonce = nonce
                .strip_prefix("nonce=")
                .and_then(parse_nonce)
                .ok_or("the hello's nonce is not nonce=<32 hex>")?;
            Ok((kind, nonce))
        }
        ["tankbench-durability", v, ..] => Err(format!(
            "protocol {v}; this recorder speaks protocol {PROTOCOL_VERSION} (tankbench of the same version on both sides)"
        )),
        _ => Err("not a tankbench durability hello".into()),
    }
}

/// One connection: a writer session or a fetch.
fn serve(stream: &TcpStream, peer: &str, shared: &Shared, slot: Slot<'_>) {
    let limits = &shared.limits;
    let Ok(ours) = wire::nonce() else {
        shared.refuse(peer, "getrandom failed");
        return;
    };
    let challenge = format!(
        "tankbench-durability {PROTOCOL_VERSION} recorder nonce={}\n",
        hex(&ours)
    );
    let deadline = Instant::now() + limits.line_deadline;
    if write_all_by(stream, challenge.as_bytes(), deadline, &never).is_err() {
        return;
    }
    let mut reader = LineReader::new(limits.max_line);
    let hello = match reader.read(stream, limits.line_deadline, limits.line_deadline, &never) {
        Ok(h) => h,
        // A connection that closes unsaid is a probe (is the port open?).
        Err(WireError::Closed) => return,
        Err(e) => {
            send_err(stream, None, &format!("hello: {e}"), limits);
            shared.refuse(peer, &format!("hello: {e}"));
            return;
        }
    };
    // The nonce is read before the tag is checked: the tag is under the
    // connection's key, which both nonces make.
    let unverified = hello.rsplit_once(' ').map_or(hello.as_str(), |(p, _)| p);
    let (kind, theirs) = match parse_hello(unverified) {
        Ok(k) => k,
        Err(e) => {
            send_err(stream, None, &e, limits);
            shared.refuse(peer, &e);
            return;
        }
    };
    let kind = kind.to_string();
    let mut tagger = Tagger::new(&shared.key, &ours, &theirs, Side::Recorder);
    if tagger.open(&hello).is_err() {
        let why = "authentication failed: the hello's tag does not verify (the writer or verify needs --key with this recorder's key file)";
        send_err(stream, None, why, limits);
        shared.refuse(peer, why);
        return;
    }
    match kind.as_str() {
        "writer" => {
            let Some(session_slot) = Slot::take(&shared.sessions, limits.max_sessions) else {
                let why = format!(
                    "busy: {} writer sessions at once already",
                    limits.max_sessions
                );
                send_err(stream, Some(&mut tagger), &why, limits);
                shared.refuse(peer, &why);
                return;
            };
            drop(slot);
            writer_session(stream, reader, tagger, peer, shared);
            drop(session_slot);
        }
        "fetch" => match send_journal(stream, &mut tagger, shared) {
            Ok(n) => (shared.log)(&format!("{peer}: sent the journal ({n} bytes) to verify")),
            Err(e) => (shared.log)(&format!("{peer}: fetch failed: {e}")),
        },
        other => {
            let why = format!(
                "unknown hello '{}'; expected writer or fetch",
                other.chars().take(20).collect::<String>()
            );
            send_err(stream, Some(&mut tagger), &why, limits);
            shared.refuse(peer, &why);
        }
    }
}

/// The journal's first n bytes (n: its size now), framed by two tagged
/// lines: `J bytes=<n>` before, `T sha256=<hex>` after. Streamed from the
/// file: a fetch holds one chunk in memory, not the journal.
fn send_journal(stream: &TcpStream, tagger: &mut Tagger, shared: &Shared) -> Result<u64, String> {
    let n = {
        let mut book = shared.lock();
        book.sync()?;
        book.bytes
    };
    let path = &shared.path;
    let f = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // The whole answer's deadline grows with its size (1 MiB/s at least).
    let deadline = Instant::now() + shared.limits.line_deadline + Duration::from_secs(n >> 20);
    let mut head = String::new();
    tagger.seal(&format!("J bytes={n}"), &mut head);
    write_all_by(stream, head.as_bytes(), deadline, &never).map_err(|e| e.to_string())?;
    let mut hash = Sha256::new();
    let mut body = f.take(n);
    let mut chunk = vec![0u8; 1 << 16];
    let mut sent = 0u64;
    loop {
        let got = body
            .read(&mut chunk)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if got == 0 {
            break;
        }
        hash.update(&chunk[..got]);
        write_all_by(stream, &chunk[..got], deadline, &never).map_err(|e| e.to_string())?;
        sent += got as u64;
    }
    if sent != n {
        return Err(format!(
            "{}: shorter than the {n} bytes written to it",
            path.display()
        ));
    }
    let mut tail = String::new();
    tagger.seal(&format!("T sha256={}", hex(&hash.finalize())), &mut tail);
    write_all_by(stream, tail.as_bytes(), deadline, &never).map_err(|e| e.to_string())?;
    Ok(n)
}

fn writer_session(
    stream: &TcpStream,
    mut reader: LineReader,
    mut tagger: Tagger,
    peer: &str,
    shared: &Shared,
) {
    let limits = &shared.limits;
    let line = reader.read(stream, limits.line_deadline, limits.line_deadline, &never);
    let session = match line {
        Err(e) => Err(format!("no session line: {e}")),
        Ok(l) => match tagger.open(&l) {
            Err(e) => Err(format!("the session line: {e}")),
            Ok(payload) => Session::parse(payload),
        },
    };
    let accepted = session.and_then(|s| shared.lock().open_session(&s).map(|()| s));
    // The session line is on the journal's storage before the writer may
    // write a block: a verify then knows of the session even if no
    // acknowledgement of it ever arrives.
    let session = match accepted {
        Ok(s) => s,
        Err(e) => {
            send_err(stream, Some(&mut tagger), &e, limits);
            shared.refuse(peer, &e);
            return;
        }
    };
    let mut ok = String::new();
    tagger.seal("OK", &mut ok);
    let deadline = Instant::now() + limits.line_deadline;
    if write_all_by(stream, ok.as_bytes(), deadline, &never).is_err() {
        return;
    }
    (shared.log)(&format!(
        "{peer}: session {} (file set {}, generation {}) started",
        session.run, session.fileset, session.generation
    ));
    let (acks, why) = session_lines(stream, &mut reader, &mut tagger, &session.run, shared);
    let _ = shared.lock().sync();
    (shared.log)(&format!(
        "{peer}: session {} ended ({why}): {acks} acknowledgements recorded",
        session.run
    ));
}

/// Append the session's lines; returns the acks recorded and why it ended.
fn session_lines(
    stream: &TcpStream,
    reader: &mut LineReader,
    tagger: &mut Tagger,
    run: &RunId,
    shared: &Shared,
) -> (u64, String) {
    let limits = &shared.limits;
    let mut acks = 0u64;
    let own_run = run.hex();
    let stop = || shared.stop.load(SeqCst);
    loop {
        // A writer blocked on hung storage still sends its keep-alive lines;
        // one silent past the idle deadline lost power or its network.
        let line = match reader.read(stream, limits.idle_deadline, limits.line_deadline, &stop) {
            Ok(l) => l,
            Err(WireError::Closed) => return (acks, "connection closed".into()),
            Err(WireError::ClosedMidLine) => {
                return (
                    acks,
                    "connection closed in the middle of a line (dropped)".into(),
                )
            }
            Err(WireError::Stopped) => return (acks, "the recorder stopped".into()),
            Err(e) => {
                shared.refuse(&own_run, &e.to_string());
                return (acks, format!("{e}; session ended"));
            }
        };
        let text = match tagger.open(&line) {
            Ok(t) => t,
            Err(e) => {
                shared.refuse(&own_run, &e.to_string());
                return (acks, format!("{e}; session ended"));
            }
        };
        if text == "K" {
            continue;
        }
        if let Err(e) = check_line(text) {
            return (acks, format!("bad line ({e}); session ended"));
        }
        let is_ack = text.starts_with("A ");
        let ours = text.split(' ').nth(1) == Some(own_run.as_str());
        if !(is_ack || text.starts_with("E ")) || !ours {
            return (acks, "a line of another session; session ended".into());
        }
        if let Err(e) = shared.lock().append(text) {
            send_err(stream, Some(tagger), &e, limits);
            return (acks, e);
        }
        if is_ack {
            acks += 1;
        }
    }
}

/// Fetch the whole journal from a recorder (for `verify --from ADDR:PORT`),
/// refusing an answer larger than `limits.max_journal_bytes` or one that
/// does not verify under `key`.
pub fn fetch(addr: &str, key: &Key, limits: &Limits) -> Result<Vec<u8>, String> {
    let stream = crate::writer::connect(addr)?;
    let err = |e: WireError| format!("recorder {addr}: {e}");
    let mut reader = LineReader::new(limits.max_line);
    let mut tagger = crate::writer::handshake(&stream, &mut reader, addr, key, limits, "fetch", &[])?;
    let head = reader
        .read(&stream, limits.line_deadline, limits.line_deadline, &never)
        .map_err(err)?;
    let head = answer(&mut tagger, &head, addr)?;
    let n: u64 = head
        .strip_prefix("J bytes=")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("recorder {addr}: an answer that is not a journal"))?;
    if n > limits.max_journal_bytes {
        return Err(format!(
            "recorder {addr}: the journal is {n} bytes, more than --max-journal-size {}; refused (give a larger --max-journal-size to fetch it)",
            limits.max_journal_bytes
        ));
    }
    let deadline = Instant::now() + limits.line_deadline + Duration::from_secs(n >> 20);
    let n = usize::try_from(n).map_err(|_| format!("recorder {addr}: journal too large"))?;
    let mut body = reader.leftover();
    let mut rest = if body.len() > n { body.split_off(n) } else { Vec::new() };
    body.reserve_exact(n - body.len());
    let mut chunk = vec![0u8; 1 << 16];
    while body.len() < n {
        let now = Instant::now();
        if now >= deadline {
            return Err(format!(
                "recorder {addr}: the journal did not arrive by its deadline ({} of {n} bytes)",
                body.len()
            ));
        }
        stream
            .set_read_timeout(Some((deadline - now).max(Duration::from_millis(1))))
            .map_err(|e| format!("recorder {addr}: {e}"))?;
        let want = (n - body.len()).min(chunk.len());
        match (&stream).read(&mut chunk[..want]) {
            Ok(0) => {
                return Err(format!(
                    "recorder {addr}: the connection closed after {} of the journal's {n} bytes",
                    body.len()
                ))
            }
            Ok(got) => body.extend_from_slice(&chunk[..got]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(format!("recorder {addr}: {e}")),
        }
    }
    let mut tail_reader = LineReader::with_bytes(limits.max_line, std::mem::take(&mut rest));
    let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    let tail = tail_reader.read(&stream, left, left, &never).map_err(err)?;
    let tail = answer(&mut tagger, &tail, addr)?;
    let want = format!("T sha256={}", hex(&Sha256::digest(&body)));
    if tail != want {
        return Err(format!(
            "recorder {addr}: the journal's bytes do not match their authenticated hash; refused"
        ));
    }
    Ok(body)
}

/// A line from the recorder: its payload when its tag verifies; its
/// refusal as an error (saying when the refusal itself is unauthenticated).
pub(crate) fn answer(tagger: &mut Tagger, line: &str, addr: &str) -> Result<String, String> {
    match tagger.open(line) {
        Ok(p) if p.starts_with("ERR ") => Err(format!("recorder {addr}: refused: {}", &p[4..])),
        Ok(p) => Ok(p.to_string()),
        Err(_) if line.starts_with("ERR ") => Err(format!(
            "recorder {addr}: refused: {}",
            line[4..].chars().take(300).collect::<String>()
        )),
        Err(e) => Err(format!("recorder {addr}: {e}; refused")),
    }
}

/// Run a recorder until SIGINT/SIGTERM: the `durability record` command.
/// Prints `listening on ADDR` first (the port, when 0 was asked for).
pub fn run(opts: &RecordOptions) -> Result<(), String> {
    let log: Arc<dyn Fn(&str) + Send + Sync> =
        Arc::new(|l: &str| eprintln!("durability record: {l}"));
    let r = Recorder::start(opts, log)?;
    println!(
        "durability record: listening on {} (journal {}, key {}{})",
        r.addr,
        opts.journal.display(),
        r.key_path.display(),
        if r.key_created { ", created now" } else { "" }
    );
    let _ = std::io::stdout().flush();
    while !stop_requested() {
        std::thread::sleep(Duration::from_millis(50));
    }
    r.stop()?;
    eprintln!("durability record: stopped; journal flushed");
    Ok(())
}


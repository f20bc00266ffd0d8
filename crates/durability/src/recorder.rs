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

use crate::client::answer;
use crate::error::{DurabilityError, RecorderProblem};
use crate::journal::{check_line, Journal, LineError, Session};
use crate::journal_file::open_journal;
use crate::options::RecordOptions;
use crate::record::RunId;
use crate::wire::{
    self, hex, never, parse_nonce, write_all_by, Key, Limits, LineReader, Side, Tagger, WireError,
    PROTOCOL_VERSION,
};
use fileio::signals::stop_requested;
use fileio::text::printable;
use sha2::{Digest as _, Sha256};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Why the recorder refuses a session or a line: sent to the peer as
/// `ERR <text>` and logged.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("journal full ({bytes} bytes; --max-journal-size {max})")]
    JournalFull { bytes: u64, max: u64 },
    #[error("journal write failed: {0}")]
    JournalFailed(String),
    #[error("run {0} is already in the journal; a session is announced once")]
    RunAgain(RunId),
    #[error("file set {fileset} was recorded with another layout ({file_num} files of {file_size} bytes, blocks of {block_size})")]
    OtherLayout {
        fileset: RunId,
        block_size: u64,
        file_num: u64,
        file_size: u64,
    },
    #[error("no session line: {0}")]
    NoSession(WireError),
    #[error("the session line: {0}")]
    SessionTag(WireError),
    #[error("{0}")]
    SessionLine(LineError),
    #[error("the hello's nonce is not nonce=<32 hex>")]
    HelloNonce,
    #[error("protocol {}; this recorder speaks protocol {PROTOCOL_VERSION} (tankbench of the same version on both sides)", printable(theirs))]
    Protocol { theirs: String },
    #[error("not a tankbench durability hello")]
    NotAHello,
}

/// The journal being appended to, and what the recorder knows of it.
struct Book {
    out: BufWriter<File>,
    file: File,
    dirty: bool,
    /// The first write or flush error; after it the recorder refuses sessions.
    failed: Option<Refusal>,
    /// The journal's size (what is written, flushed or not).
    bytes: u64,
    max_bytes: u64,
    /// Every run id the journal holds a session of: a run is announced once.
    runs: HashSet<RunId>,
    /// Each file set's layout (block size, files, file size), as its first
    /// session gave it.
    layouts: HashMap<RunId, LayoutKey>,
}

impl Book {
    fn append(&mut self, line: &str) -> Result<(), Refusal> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let len = line.len() as u64 + 1;
        if self.bytes + len > self.max_bytes {
            return Err(Refusal::JournalFull {
                bytes: self.bytes,
                max: self.max_bytes,
            });
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

    fn sync(&mut self) -> Result<(), Refusal> {
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

    fn fail(&mut self, e: &std::io::Error) -> Refusal {
        let refusal = Refusal::JournalFailed(e.to_string());
        self.failed = Some(refusal.clone());
        refusal
    }

    /// Accept a session: a new run, a file set's own layout, room in the
    /// journal; its line appended and on the journal's storage.
    fn open_session(&mut self, s: &Session) -> Result<(), Refusal> {
        if self.runs.contains(&s.run) {
            return Err(Refusal::RunAgain(s.run));
        }
        let layout = (s.block_size, s.file_num, s.file_size);
        if let Some(&(block_size, file_num, file_size)) = self.layouts.get(&s.fileset) {
            if (block_size, file_num, file_size) != layout {
                return Err(Refusal::OtherLayout {
                    fileset: s.fileset,
                    block_size,
                    file_num,
                    file_size,
                });
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
pub(crate) struct Recorder {
    pub addr: std::net::SocketAddr,
    /// The key file writers and verify are given.
    pub key_path: PathBuf,
    /// Whether the key file was created by this start (a restarted recorder
    /// keeps the key it made before).
    pub key_created: bool,
    shared: Arc<Shared>,
    accept: Option<std::thread::JoinHandle<()>>,
}

/// A file set's layout as a session gives it: block size, files, file size.
type LayoutKey = (u64, u64, u64);

/// What a journal file already holds, for a recorder that appends to it:
/// its size, its runs and its file sets' layouts.
type Index = (u64, HashSet<RunId>, HashMap<RunId, LayoutKey>);

/// What a journal file already holds, for a recorder that appends to it.
fn index(path: &Path) -> Result<Index, DurabilityError> {
    let bytes = report::store::read_regular_file(path)?;
    let j = Journal::parse(&bytes).map_err(|e| {
        DurabilityError::journal_file(path, crate::error::JournalFileProblem::Content(e))
    })?;
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
    ) -> Result<Recorder, DurabilityError> {
        let listen_err = |source| DurabilityError::Listen {
            addr: opts.listen.clone(),
            source,
        };
        let listener = TcpListener::bind(&opts.listen).map_err(listen_err)?;
        let addr = listener.local_addr().map_err(listen_err)?;
        // Both files are checked before either is made: a refused key must
        // not leave a new journal behind, nor a refused journal a new key.
        crate::journal_file::check_journal(&opts.journal)?;
        let (key, key_created) = Key::load_or_create(&opts.key)?;
        let file = open_journal(&opts.journal)?;
        let (bytes, runs, layouts) = index(&opts.journal)?;
        let out = BufWriter::new(
            file.try_clone()
                .map_err(DurabilityError::io(&opts.journal))?,
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
        listener.set_nonblocking(true).map_err(listen_err)?;
        let accept = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("durability-recorder".into())
                .spawn(move || accept_loop(&listener, &shared))
                .map_err(|source| DurabilityError::System {
                    what: "cannot start the recorder's thread",
                    source,
                })?
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
    /// Open (or create, with its header line) a journal file for appending. An
    #[cfg(test)]
    fn refused(&self) -> u64 {
        self.shared.refused.load(SeqCst)
    }

    /// Stop accepting, flush the journal to its storage, and return.
    /// Sessions still connected end at their next line.
    pub fn stop(mut self) -> Result<(), DurabilityError> {
        self.shared.stop.store(true, SeqCst);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        self.shared
            .lock()
            .sync()
            .map_err(|e| DurabilityError::JournalFile {
                path: self.shared.path.clone(),
                problem: crate::error::JournalFileProblem::Failed(e.to_string()),
            })
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
                (shared.log)(&e.to_string());
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
fn parse_hello(payload: &str) -> Result<(&str, [u8; wire::NONCE_BYTES]), Refusal> {
    let w: Vec<&str> = payload.split(' ').collect();
    match w.as_slice() {
        ["tankbench-durability", v, kind, nonce] if *v == PROTOCOL_VERSION.to_string() => {
            let nonce = nonce
                .strip_prefix("nonce=")
                .and_then(parse_nonce)
                .ok_or(Refusal::HelloNonce)?;
            Ok((kind, nonce))
        }
        ["tankbench-durability", v, ..] => Err(Refusal::Protocol {
            theirs: v.chars().take(20).collect(),
        }),
        _ => Err(Refusal::NotAHello),
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
            let why = e.to_string();
            send_err(stream, None, &why, limits);
            shared.refuse(peer, &why);
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
fn send_journal(
    stream: &TcpStream,
    tagger: &mut Tagger,
    shared: &Shared,
) -> Result<u64, FetchFailure> {
    let n = {
        let mut book = shared.lock();
        book.sync()?;
        book.bytes
    };
    let path = &shared.path;
    let f = File::open(path)?;
    // The whole answer's deadline grows with its size (1 MiB/s at least).
    let deadline = Instant::now() + shared.limits.line_deadline + Duration::from_secs(n >> 20);
    let mut head = String::new();
    tagger.seal(&format!("J bytes={n}"), &mut head);
    write_all_by(stream, head.as_bytes(), deadline, &never)?;
    let mut hash = Sha256::new();
    let mut body = f.take(n);
    let mut chunk = vec![0u8; 1 << 16];
    let mut sent = 0u64;
    loop {
        let got = body.read(&mut chunk)?;
        if got == 0 {
            break;
        }
        hash.update(&chunk[..got]);
        write_all_by(stream, &chunk[..got], deadline, &never)?;
        sent += got as u64;
    }
    if sent != n {
        return Err(FetchFailure::Short { bytes: n });
    }
    let mut tail = String::new();
    tagger.seal(&format!("T sha256={}", hex(&hash.finalize())), &mut tail);
    write_all_by(stream, tail.as_bytes(), deadline, &never)?;
    Ok(n)
}

/// Why the recorder could not send its journal to a fetch (logged).
#[derive(Debug, thiserror::Error)]
enum FetchFailure {
    #[error(transparent)]
    Journal(#[from] Refusal),
    #[error("the journal: {0}")]
    Read(#[from] std::io::Error),
    #[error("the journal is shorter than the {bytes} bytes written to it")]
    Short { bytes: u64 },
    #[error(transparent)]
    Wire(#[from] WireError),
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
        Err(e) => Err(Refusal::NoSession(e)),
        Ok(l) => match tagger.open(&l) {
            Err(e) => Err(Refusal::SessionTag(e)),
            Ok(payload) => Session::parse(payload).map_err(Refusal::SessionLine),
        },
    };
    let accepted = session.and_then(|s| shared.lock().open_session(&s).map(|()| s));
    // The session line is on the journal's storage before the writer may
    // write a block: a verify then knows of the session even if no
    // acknowledgement of it ever arrives.
    let session = match accepted {
        Ok(s) => s,
        Err(e) => {
            let why = e.to_string();
            send_err(stream, Some(&mut tagger), &why, limits);
            shared.refuse(peer, &why);
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
            let why = e.to_string();
            send_err(stream, Some(tagger), &why, limits);
            return (acks, why);
        }
        if is_ack {
            acks += 1;
        }
    }
}

/// Fetch the whole journal from a recorder (for `verify --from ADDR:PORT`),
/// refusing an answer larger than `limits.max_journal_bytes` or one that
/// does not verify under `key`.
pub(crate) fn fetch(addr: &str, key: &Key, limits: &Limits) -> Result<Vec<u8>, DurabilityError> {
    let fail = |problem| DurabilityError::recorder(addr, problem);
    let stream = crate::client::connect(addr)?;
    let mut reader = LineReader::new(limits.max_line);
    let mut tagger =
        crate::client::handshake(&stream, &mut reader, addr, key, limits, "fetch", &[])?;
    let head = reader
        .read(&stream, limits.line_deadline, limits.line_deadline, &never)
        .map_err(|e| fail(RecorderProblem::Wire(e)))?;
    let head = answer(&mut tagger, &head).map_err(fail)?;
    let n: u64 = head
        .strip_prefix("J bytes=")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| fail(RecorderProblem::NotAJournalAnswer))?;
    if n > limits.max_journal_bytes {
        return Err(fail(RecorderProblem::JournalTooLarge {
            bytes: n,
            max: limits.max_journal_bytes,
        }));
    }
    let deadline = Instant::now() + limits.line_deadline + Duration::from_secs(n >> 20);
    // A journal within --max-journal-size fits in memory: the bound is the
    // user's, and so is the machine.
    let n = usize::try_from(n).map_err(|_| {
        fail(RecorderProblem::JournalTooLarge {
            bytes: n,
            max: limits.max_journal_bytes,
        })
    })?;
    let mut body = reader.leftover();
    let mut rest = if body.len() > n {
        body.split_off(n)
    } else {
        Vec::new()
    };
    body.reserve_exact(n - body.len());
    let mut chunk = vec![0u8; 1 << 16];
    while body.len() < n {
        let now = Instant::now();
        if now >= deadline {
            return Err(fail(RecorderProblem::JournalLate {
                got: body.len(),
                bytes: n,
            }));
        }
        stream
            .set_read_timeout(Some((deadline - now).max(Duration::from_millis(1))))
            .map_err(|e| fail(RecorderProblem::Wire(WireError::Io(e.to_string()))))?;
        let want = (n - body.len()).min(chunk.len());
        match (&stream).read(&mut chunk[..want]) {
            Ok(0) => {
                return Err(fail(RecorderProblem::JournalCut {
                    got: body.len(),
                    bytes: n,
                }))
            }
            Ok(got) => body.extend_from_slice(&chunk[..got]),
            Err(e) if wire::is_wait(&e) => {}
            Err(e) => return Err(fail(RecorderProblem::Wire(WireError::Io(e.to_string())))),
        }
    }
    let mut tail_reader = LineReader::with_bytes(limits.max_line, std::mem::take(&mut rest));
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    let tail = tail_reader
        .read(&stream, left, left, &never)
        .map_err(|e| fail(RecorderProblem::Wire(e)))?;
    let tail = answer(&mut tagger, &tail).map_err(fail)?;
    let want = format!("T sha256={}", hex(&Sha256::digest(&body)));
    if tail != want {
        return Err(fail(RecorderProblem::JournalHash));
    }
    Ok(body)
}

/// Run a recorder until SIGINT/SIGTERM: the `durability record` command.
/// Prints `listening on ADDR` first (the port, when 0 was asked for).
pub fn run(opts: &RecordOptions) -> Result<(), DurabilityError> {
    // The log goes on whatever stderr does (a closed pipe, a terminal gone).
    let log: Arc<dyn Fn(&str) + Send + Sync> =
        Arc::new(|l: &str| fileio::console::to_stderr(&format!("durability record: {l}\n")));
    let r = Recorder::start(opts, log)?;
    let listening = format!(
        "durability record: listening on {} (journal {}, key {}{})\n",
        r.addr,
        opts.journal.display(),
        r.key_path.display(),
        if r.key_created { ", created now" } else { "" }
    );
    let mut out = std::io::stdout().lock();
    // The line is how a script learns the port: when it cannot be written
    // (a full disk), the recorder stops rather than serve unannounced. A
    // reader that closed the pipe after reading it is fine.
    match out
        .write_all(listening.as_bytes())
        .and_then(|()| out.flush())
    {
        Err(source) if source.kind() != std::io::ErrorKind::BrokenPipe => {
            drop(out);
            r.stop()?;
            return Err(DurabilityError::System {
                what: "writing to stdout",
                source,
            });
        }
        _ => drop(out),
    }
    while !stop_requested() {
        std::thread::sleep(Duration::from_millis(50));
    }
    r.stop()?;
    fileio::console::to_stderr("durability record: stopped; journal flushed\n");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{Ack, Commit};
    use crate::wire::KeyError;
    use std::io::{BufRead as _, BufReader};

    fn limits() -> Limits {
        Limits {
            line_deadline: Duration::from_millis(1500),
            idle_deadline: Duration::from_secs(3),
            ..Limits::default()
        }
    }

    fn start_with(dir: &Path, limits: Limits) -> (Recorder, Key) {
        let opts = RecordOptions {
            listen: "127.0.0.1:0".into(),
            journal: dir.join("j"),
            key: dir.join("k"),
            limits,
        };
        let r = Recorder::start(&opts, Arc::new(|_: &str| {})).unwrap();
        let key = Key::load(&dir.join("k")).unwrap();
        (r, key)
    }

    fn start(dir: &Path) -> (Recorder, Key) {
        start_with(dir, limits())
    }

    fn session(run: u8) -> Session {
        Session {
            run: RunId([run; 16]),
            fileset: RunId([1; 16]),
            generation: 1,
            block_size: 4096,
            file_num: 1,
            file_size: 8192,
            mode: "rndwr".into(),
            commit: Commit::Fsync,
            direct: false,
            threads: 1,
            started: "2026-12-01T00:00:00Z".into(),
        }
    }

    fn ack_line(run: u8, seq: u64) -> String {
        let mut s = String::new();
        Ack {
            run: RunId([run; 16]),
            file: 0,
            block: 1,
            seq,
            checksum: 5,
        }
        .write_line(&mut s);
        s.trim_end().to_string()
    }

    /// A scripted client: the recorder's greeting read, then lines sealed
    /// with `key` (any key: a stranger's too).
    struct Client {
        stream: TcpStream,
        reader: LineReader,
        tagger: Tagger,
    }

    impl Client {
        fn new(addr: &std::net::SocketAddr, key: &Key, kind: &str, lines: &[String]) -> Client {
            let stream = TcpStream::connect(addr).unwrap();
            let mut reader = LineReader::new(4096);
            let tagger = crate::client::handshake(
                &stream,
                &mut reader,
                &addr.to_string(),
                key,
                &limits(),
                kind,
                lines,
            )
            .unwrap();
            Client {
                stream,
                reader,
                tagger,
            }
        }
        fn send(&mut self, lines: &[String]) {
            let mut out = String::new();
            for l in lines {
                self.tagger.seal(l, &mut out);
            }
            let _ = (&self.stream).write_all(out.as_bytes());
        }
        fn send_raw(&self, text: &str) {
            let _ = (&self.stream).write_all(text.as_bytes());
        }
        fn answer(&mut self) -> Result<String, String> {
            let l = self
                .reader
                .read(
                    &self.stream,
                    Duration::from_secs(5),
                    Duration::from_secs(5),
                    &never,
                )
                .map_err(|e| e.to_string())?;
            answer(&mut self.tagger, &l).map_err(|e| e.to_string())
        }
    }

    fn writer(addr: &std::net::SocketAddr, key: &Key, run: u8) -> Client {
        Client::new(addr, key, "writer", &[session(run).line()])
    }

    /// The journal as a fetch returns it, once it holds `acks` acks.
    fn fetch_until(addr: &std::net::SocketAddr, key: &Key, acks: usize) -> Journal {
        for _ in 0..200 {
            let j = Journal::parse(&fetch(&addr.to_string(), key, &limits()).unwrap()).unwrap();
            if j.acks.len() >= acks {
                return j;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("the recorder never held {acks} acks");
    }

    #[test]
    fn writer_sessions_are_recorded_and_cut_or_foreign_lines_are_not() {
        let d = tempfile::tempdir().unwrap();
        let (r, key) = start(d.path());
        // A session whose connection ends in the middle of a line.
        let mut c = writer(&r.addr, &key, 7);
        assert_eq!(c.answer(), Ok("OK".into()));
        c.send(&[ack_line(7, 1)]);
        c.send_raw(&ack_line(7, 2)[..20]);
        drop(c);
        // A second session that sends a line of another run: ended there.
        let mut c = writer(&r.addr, &key, 8);
        assert_eq!(c.answer(), Ok("OK".into()));
        c.send(&[ack_line(8, 1), ack_line(9, 1), ack_line(8, 2)]);
        let j = fetch_until(&r.addr, &key, 2);
        std::thread::sleep(Duration::from_millis(200));
        let j2 = Journal::parse(&fetch(&r.addr.to_string(), &key, &limits()).unwrap()).unwrap();
        assert_eq!(j.acks.len(), j2.acks.len(), "nothing more arrives");
        assert_eq!(j2.sessions.len(), 2);
        let seqs: Vec<(u8, u64)> = j2.acks.iter().map(|a| (a.run.0[0], a.seq)).collect();
        assert_eq!(seqs, vec![(7, 1), (8, 1)]);
        assert!(j2.bad_lines.is_empty() && !j2.truncated_tail);
        drop(c);
        r.stop().unwrap();
        // A restarted recorder appends to the same journal with the same key,
        // and still refuses a run it recorded before.
        let (r, key2) = start(d.path());
        assert_eq!(key, key2);
        assert!(!r.key_created);
        let mut c = writer(&r.addr, &key, 10);
        assert_eq!(c.answer(), Ok("OK".into()));
        c.send(&[ack_line(10, 1)]);
        let j = fetch_until(&r.addr, &key, 3);
        assert_eq!(j.sessions.len(), 3);
        let e = writer(&r.addr, &key, 7).answer().unwrap_err();
        assert!(e.contains("already in the journal"), "{e}");
        r.stop().unwrap();
    }

    /// Issue 19: a stranger (no key, another key, a replay of a real
    /// writer's bytes) is refused at the hello; a key holder cannot announce
    /// a run again, nor a file set in another layout. Nothing of it reaches
    /// the journal, and every refusal is counted.
    #[test]
    fn strangers_replays_repeated_runs_and_other_layouts_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let (r, key) = start(d.path());
        let mut victim = writer(&r.addr, &key, 7);
        assert_eq!(victim.answer(), Ok("OK".into()));
        victim.send(&[ack_line(7, 1)]);
        fetch_until(&r.addr, &key, 1);

        // Protocol 1's plain lines, forging an ack under the victim's run.
        let s = TcpStream::connect(r.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        (&s).write_all(
            format!(
                "tankbench-durability 1 writer\n{}\n{}\n",
                session(7).line(),
                ack_line(7, 99)
            )
            .as_bytes(),
        )
        .unwrap();
        let mut answer = String::new();
        let mut br = BufReader::new(&s);
        br.read_line(&mut answer).unwrap(); // the greeting
        answer.clear();
        br.read_line(&mut answer).unwrap();
        assert!(answer.starts_with("ERR "), "{answer}");
        // The right protocol under another key.
        let stranger = Key::load_or_create(&d.path().join("other-key")).unwrap().0;
        let mut c = Client::new(&r.addr, &stranger, "writer", &[session(11).line()]);
        let e = c.answer().unwrap_err();
        assert!(e.contains("authentication failed"), "{e}");
        // A real writer's bytes sent again on another connection.
        let s = TcpStream::connect(r.addr).unwrap();
        let mut rd = LineReader::new(4096);
        let greeting = rd
            .read(&s, Duration::from_secs(5), Duration::from_secs(5), &never)
            .unwrap();
        let nr = parse_nonce(greeting.rsplit_once("nonce=").unwrap().1).unwrap();
        let nc = [5u8; 16];
        let mut t = Tagger::new(&key, &nr, &nc, Side::Client);
        let mut recorded = String::new();
        t.seal(
            &format!("tankbench-durability 2 writer nonce={}", hex(&nc)),
            &mut recorded,
        );
        t.seal(&session(12).line(), &mut recorded);
        t.seal(&ack_line(12, 1), &mut recorded);
        (&s).write_all(recorded.as_bytes()).unwrap();
        let mut c2 = Client {
            stream: s,
            reader: rd,
            tagger: t,
        };
        assert_eq!(c2.answer(), Ok("OK".into()));
        fetch_until(&r.addr, &key, 2);
        let s = TcpStream::connect(r.addr).unwrap();
        let mut rd = LineReader::new(4096);
        rd.read(&s, Duration::from_secs(5), Duration::from_secs(5), &never)
            .unwrap();
        (&s).write_all(recorded.replace("12121212", "13131313").as_bytes())
            .unwrap();
        let l = rd
            .read(&s, Duration::from_secs(5), Duration::from_secs(5), &never)
            .unwrap();
        assert!(l.starts_with("ERR authentication failed"), "{l}");
        let s = TcpStream::connect(r.addr).unwrap();
        let mut rd = LineReader::new(4096);
        rd.read(&s, Duration::from_secs(5), Duration::from_secs(5), &never)
            .unwrap();
        (&s).write_all(recorded.as_bytes()).unwrap();
        let l = rd
            .read(&s, Duration::from_secs(5), Duration::from_secs(5), &never)
            .unwrap();
        assert!(l.starts_with("ERR authentication failed"), "replayed: {l}");
        // A key holder announcing the victim's run again.
        let e = writer(&r.addr, &key, 7).answer().unwrap_err();
        assert!(e.contains("already in the journal"), "{e}");
        // The victim's file set in another layout.
        let mut other = session(14);
        other.file_num = 3;
        let e = Client::new(&r.addr, &key, "writer", &[other.line()])
            .answer()
            .unwrap_err();
        assert!(e.contains("another layout"), "{e}");
        // A line whose tag was made for another place in the connection.
        let mut c = writer(&r.addr, &key, 15);
        assert_eq!(c.answer(), Ok("OK".into()));
        let mut t2 = Tagger::new(&key, &[0; 16], &[0; 16], Side::Client);
        let mut forged = String::new();
        t2.seal(&ack_line(15, 1), &mut forged);
        c.send_raw(&forged);

        std::thread::sleep(Duration::from_millis(300));
        let j = Journal::parse(&fetch(&r.addr.to_string(), &key, &limits()).unwrap()).unwrap();
        let runs: Vec<u8> = j.sessions.iter().map(|s| s.run.0[0]).collect();
        assert_eq!(runs, vec![7, 12, 15]);
        let acks: Vec<(u8, u64)> = j.acks.iter().map(|a| (a.run.0[0], a.seq)).collect();
        assert_eq!(acks, vec![(7, 1), (12, 1)]);
        assert!(r.refused() >= 7, "{}", r.refused());
        drop(victim);
        r.stop().unwrap();
    }

    /// Issue 19: the journal is sent only to a key holder.
    #[test]
    fn a_fetch_without_the_key_gets_nothing() {
        let d = tempfile::tempdir().unwrap();
        let (r, key) = start(d.path());
        let mut c = writer(&r.addr, &key, 7);
        assert_eq!(c.answer(), Ok("OK".into()));
        let stranger = Key::load_or_create(&d.path().join("other-key")).unwrap().0;
        let e = fetch(&r.addr.to_string(), &stranger, &limits())
            .unwrap_err()
            .to_string();
        assert!(e.contains("authentication failed"), "{e}");
        let s = TcpStream::connect(r.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        (&s).write_all(b"tankbench-durability 1 fetch\n").unwrap();
        let mut all = Vec::new();
        let _ = (&s).read_to_end(&mut all);
        let text = String::from_utf8_lossy(&all);
        assert!(!text.contains("tankbench-durability-journal"), "{text}");
        assert!(text.contains("ERR "), "{text}");
        r.stop().unwrap();
    }

    fn rss_kib() -> u64 {
        std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap()
    }

    /// Issue 19: a 100 MiB line without a newline is never buffered: the
    /// connection is closed at the line bound and others are served.
    #[test]
    fn a_huge_line_is_cut_at_the_bound_and_others_are_served() {
        let d = tempfile::tempdir().unwrap();
        let (r, key) = start(d.path());
        let before = rss_kib();
        let chunk = vec![b'x'; 1 << 20];
        let mut sent = 0usize;
        let s = TcpStream::connect(r.addr).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
        for _ in 0..100 {
            match (&s).write_all(&chunk) {
                Ok(()) => sent += chunk.len(),
                Err(_) => break,
            }
        }
        assert!(sent < 100 << 20, "the recorder took all {sent} bytes");
        let grown = rss_kib().saturating_sub(before);
        assert!(grown < 32 * 1024, "the recorder grew by {grown} KiB");
        // And after a session's start too.
        let mut c = writer(&r.addr, &key, 7);
        assert_eq!(c.answer(), Ok("OK".into()));
        let mut sent = 0usize;
        c.stream
            .set_write_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        for _ in 0..100 {
            match (&c.stream).write_all(&chunk) {
                Ok(()) => sent += chunk.len(),
                Err(_) => break,
            }
        }
        assert!(sent < 100 << 20, "the recorder took all {sent} bytes");
        let mut c = writer(&r.addr, &key, 8);
        assert_eq!(c.answer(), Ok("OK".into()));
        c.send(&[ack_line(8, 1)]);
        fetch_until(&r.addr, &key, 1);
        assert!(r.refused() >= 2);
        r.stop().unwrap();
    }

    /// Issue 19: past --max-journal-size the recorder stops appending, tells
    /// the writer, and refuses new sessions; past --max-sessions it refuses
    /// the next writer; a silent writer is ended at the idle deadline.
    #[test]
    fn journal_size_sessions_and_silence_are_bounded() {
        let d = tempfile::tempdir().unwrap();
        let (r, key) = start_with(
            d.path(),
            Limits {
                max_journal_bytes: 1000,
                max_sessions: 1,
                ..limits()
            },
        );
        let mut c = writer(&r.addr, &key, 7);
        assert_eq!(c.answer(), Ok("OK".into()));
        // The one session slot is taken.
        let e = writer(&r.addr, &key, 8).answer().unwrap_err();
        assert!(e.contains("busy"), "{e}");
        let acks: Vec<String> = (1..=40).map(|i| ack_line(7, i)).collect();
        c.send(&acks);
        let e = c.answer().unwrap_err();
        assert!(e.contains("journal full"), "{e}");
        drop(c);
        std::thread::sleep(Duration::from_millis(200));
        let e = writer(&r.addr, &key, 9).answer().unwrap_err();
        assert!(e.contains("journal full"), "{e}");
        assert!(std::fs::metadata(d.path().join("j")).unwrap().len() <= 1000);
        r.stop().unwrap();

        let d = tempfile::tempdir().unwrap();
        let (r, key) = start(d.path());
        let mut c = writer(&r.addr, &key, 7);
        assert_eq!(c.answer(), Ok("OK".into()));
        let t = Instant::now();
        let e = c.answer().unwrap_err();
        assert!(e.contains("closed"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        r.stop().unwrap();
    }

    /// A scripted recorder on 127.0.0.1 that runs `script` on its one
    /// connection.
    fn fake_recorder(script: impl FnOnce(TcpStream) + Send + 'static) -> String {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            if let Ok((s, _)) = l.accept() {
                script(s);
            }
        });
        addr
    }

    /// Issue 19: verify's fetch ends by its deadline against a recorder that
    /// drips, and refuses an answer past its bound without reading it.
    #[test]
    fn a_fetch_is_bounded_in_time_and_size() {
        let d = tempfile::tempdir().unwrap();
        let key = Key::load_or_create(&d.path().join("k")).unwrap().0;
        // One byte every 300 ms.
        let addr = fake_recorder(|s| {
            for b in b"tankbench-durability 2 recorder nonce=00000000000000000000000000000000\n" {
                if (&s).write_all(&[*b]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        });
        let t = Instant::now();
        let e = fetch(&addr, &key, &limits()).unwrap_err().to_string();
        assert!(e.contains("deadline"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
        // 900 MiB announced, by a recorder with the key.
        let k2 = key.clone();
        let addr = fake_recorder(move |s| {
            let nr = [1u8; 16];
            (&s).write_all(
                format!("tankbench-durability 2 recorder nonce={}\n", hex(&nr)).as_bytes(),
            )
            .unwrap();
            let mut rd = LineReader::new(4096);
            let hello = rd
                .read(&s, Duration::from_secs(5), Duration::from_secs(5), &never)
                .unwrap();
            let nc = parse_nonce(
                hello
                    .split(' ')
                    .nth(3)
                    .unwrap()
                    .strip_prefix("nonce=")
                    .unwrap(),
            )
            .unwrap();
            let mut t = Tagger::new(&k2, &nr, &nc, Side::Recorder);
            let mut out = String::new();
            t.seal("J bytes=943718400", &mut out);
            let _ = (&s).write_all(out.as_bytes());
            let chunk = vec![b'A'; 1 << 20];
            for _ in 0..900 {
                if (&s).write_all(&chunk).is_err() {
                    return;
                }
            }
        });
        let before = rss_kib();
        let e = fetch(&addr, &key, &limits()).unwrap_err().to_string();
        assert!(e.contains("--max-journal-size"), "{e}");
        assert!(rss_kib().saturating_sub(before) < 64 * 1024);
        // 900 MiB of anything without a newline, by a stranger.
        let addr = fake_recorder(|s| {
            let chunk = vec![b'A'; 1 << 20];
            for _ in 0..900 {
                if (&s).write_all(&chunk).is_err() {
                    return;
                }
            }
        });
        let e = fetch(&addr, &key, &limits()).unwrap_err().to_string();
        assert!(e.contains("longer than 4096"), "{e}");
        assert!(rss_kib().saturating_sub(before) < 64 * 1024);
        let _ = KeyError::NotAKey { path: "x".into() };
    }

    #[test]
    fn a_file_that_is_not_a_journal_is_never_appended_to() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("j"), b"precious\n").unwrap();
        let opts = RecordOptions {
            listen: "127.0.0.1:0".into(),
            journal: d.path().join("j"),
            key: d.path().join("k"),
            limits: limits(),
        };
        let e = Recorder::start(&opts, Arc::new(|_: &str| {}))
            .err()
            .unwrap();
        assert!(
            matches!(
                e,
                DurabilityError::JournalFile {
                    problem: crate::error::JournalFileProblem::NotAJournal,
                    ..
                }
            ),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(e.contains("not a durability journal"), "{e}");
        assert_eq!(std::fs::read(d.path().join("j")).unwrap(), b"precious\n");
        assert!(
            !d.path().join("k").exists(),
            "no key made for a refused start"
        );
    }
}

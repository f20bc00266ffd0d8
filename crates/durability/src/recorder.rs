//! `durability record`: the recorder, a plain TCP server on a machine other
//! than the one under test, appending every acknowledgement it receives to
//! its journal.
//!
//! Protocol (text lines ending in `\n`, documented in docs/durability.md):
//!
//! - a writer sends `tankbench-durability 1 writer`, then its session line
//!   (`S ...`); the recorder appends the session line, flushes the journal to
//!   its storage and answers `OK` (or `ERR <reason>` and closes). Then the
//!   writer sends `A` lines and maybe a final `E` line; the recorder sends
//!   nothing more. A line cut short by the connection's end is dropped.
//! - `verify` sends `tankbench-durability 1 fetch`; the recorder flushes the
//!   journal and sends the whole file, then closes.
//!
//! Sessions are independent threads: a writer that dies (its connection
//! drops, or hangs half-open after a power cut) never blocks the next one.
//! Appends reach the journal's storage in batches (fdatasync every 100 ms).

use crate::journal::{check_line, Session};
use crate::options::RecordOptions;
use crate::record::RunId;
use crate::writer::{open_journal, stop_requested, HELLO_FETCH, HELLO_WRITER};
use std::fs::File;
use std::io::{BufRead as _, BufReader, BufWriter, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct JournalOut {
    out: BufWriter<File>,
    file: File,
    dirty: bool,
    /// The first write or flush error; after it the recorder refuses sessions.
    failed: Option<String>,
}

impl JournalOut {
    fn append(&mut self, line: &str) -> Result<(), String> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = self
            .out
            .write_all(line.as_bytes())
            .and_then(|()| self.out.write_all(b"\n"));
        match r {
            Ok(()) => {
                self.dirty = true;
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
}

/// A running recorder. Dropping it does not stop it; call [`Recorder::stop`].
pub struct Recorder {
    pub addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<std::thread::JoinHandle<()>>,
    journal: Arc<Mutex<JournalOut>>,
}

impl Recorder {
    /// Bind, open the journal and start serving in the background. `log`
    /// receives one line per event (session start, end, refusal).
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
        let out = BufWriter::new(
            file.try_clone()
                .map_err(|e| format!("durability record: --journal: {e}"))?,
        );
        let journal = Arc::new(Mutex::new(JournalOut {
            out,
            file,
            dirty: false,
            failed: None,
        }));
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("durability record: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let accept = {
            let stop = Arc::clone(&stop);
            let journal = Arc::clone(&journal);
            let path = opts.journal.clone();
            std::thread::Builder::new()
                .name("durability-recorder".into())
                .spawn(move || accept_loop(&listener, &stop, &journal, &path, &log))
                .map_err(|e| format!("durability record: {e}"))?
        };
        Ok(Recorder {
            addr,
            stop,
            accept: Some(accept),
            journal,
        })
    }

    /// Stop accepting, flush the journal to its storage, and return.
    /// Sessions still connected end with it.
    pub fn stop(mut self) -> Result<(), String> {
        self.stop.store(true, SeqCst);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        lock(&self.journal).sync()
    }
}

fn lock(j: &Mutex<JournalOut>) -> std::sync::MutexGuard<'_, JournalOut> {
    j.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn accept_loop(
    listener: &TcpListener,
    stop: &AtomicBool,
    journal: &Arc<Mutex<JournalOut>>,
    path: &Path,
    log: &Arc<dyn Fn(&str) + Send + Sync>,
) {
    let mut since_sync = std::time::Instant::now();
    while !stop.load(SeqCst) {
        match listener.accept() {
            Ok((stream, peer)) => {
                let journal = Arc::clone(journal);
                let log = Arc::clone(log);
                let path = path.to_path_buf();
                let _ = std::thread::Builder::new()
                    .name("durability-session".into())
                    .spawn(move || {
                        let _ = stream.set_nonblocking(false);
                        serve(stream, &peer.to_string(), &journal, &path, &*log);
                    });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => {
                log(&format!("accept failed: {e}"));
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        if since_sync.elapsed() >= Duration::from_millis(100) {
            since_sync = std::time::Instant::now();
            if let Err(e) = lock(journal).sync() {
                log(&e);
            }
        }
    }
}

/// One connection: a writer session or a fetch.
fn serve(
    stream: TcpStream,
    peer: &str,
    journal: &Mutex<JournalOut>,
    path: &Path,
    log: &dyn Fn(&str),
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(&stream);
    let mut hello = String::new();
    if reader.read_line(&mut hello).is_err() {
        return;
    }
    match hello.trim_end() {
        HELLO_WRITER => writer_session(&stream, reader, peer, journal, log),
        HELLO_FETCH => {
            let sent = lock(journal)
                .sync()
                .and_then(|()| send_journal(&stream, path));
            match sent {
                Ok(n) => log(&format!("{peer}: sent the journal ({n} bytes) to verify")),
                Err(e) => log(&format!("{peer}: fetch failed: {e}")),
            }
        }
        other => {
            let _ = (&stream).write_all(b"ERR unknown hello; expected 'tankbench-durability 1 writer' or 'tankbench-durability 1 fetch'\n");
            log(&format!(
                "{peer}: refused: unknown hello '{}'",
                other.chars().take(60).collect::<String>()
            ));
        }
    }
}

fn send_journal(stream: &TcpStream, path: &Path) -> Result<u64, String> {
    let mut f = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut s = stream;
    s.write_all(&bytes).map_err(|e| e.to_string())?;
    s.flush().map_err(|e| e.to_string())?;
    Ok(bytes.len() as u64)
}

fn writer_session(
    stream: &TcpStream,
    mut reader: BufReader<&TcpStream>,
    peer: &str,
    journal: &Mutex<JournalOut>,
    log: &dyn Fn(&str),
) {
    let mut first = String::new();
    let session = match reader.read_line(&mut first) {
        Ok(_) if first.ends_with('\n') => Session::parse(first.trim_end()),
        _ => Err("no session line".to_string()),
    };
    let session = match session {
        Ok(s) => s,
        Err(e) => {
            let _ = (&*stream).write_all(format!("ERR {e}\n").as_bytes());
            log(&format!("{peer}: refused: {e}"));
            return;
        }
    };
    // The session line is on the journal's storage before the writer may
    // write a block: a verify then knows of the session even if no
    // acknowledgement of it ever arrives.
    let accepted = {
        let mut j = lock(journal);
        j.append(&session.line()).and_then(|()| j.sync())
    };
    if let Err(e) = accepted {
        let _ = (&*stream).write_all(format!("ERR {e}\n").as_bytes());
        log(&format!("{peer}: refused: {e}"));
        return;
    }
    if (&*stream).write_all(b"OK\n").is_err() {
        return;
    }
    log(&format!(
        "{peer}: session {} (file set {}, generation {}) started",
        session.run, session.fileset, session.generation
    ));
    // No timeout from here: a writer blocked on hung storage may be silent
    // for as long as the storage hangs. A writer that lost power leaves a
    // half-open connection whose thread waits on alone, blocking no one.
    let _ = stream.set_read_timeout(None);
    let (acks, why) = session_lines(&mut reader, &session.run, journal);
    let _ = lock(journal).sync();
    log(&format!(
        "{peer}: session {} ended ({why}): {acks} acknowledgements recorded",
        session.run
    ));
}

/// Append the session's lines; returns the acks recorded and why it ended.
fn session_lines(
    reader: &mut BufReader<&TcpStream>,
    run: &RunId,
    journal: &Mutex<JournalOut>,
) -> (u64, String) {
    let mut acks = 0u64;
    let mut line = Vec::new();
    let own_run = run.hex();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => return (acks, "connection closed".into()),
            Ok(_) if line.last() != Some(&b'\n') => {
                return (
                    acks,
                    "connection closed in the middle of a line (dropped)".into(),
                )
            }
            Ok(_) => {}
            Err(e) => return (acks, format!("connection failed: {e}")),
        }
        let Ok(text) = std::str::from_utf8(&line[..line.len() - 1]) else {
            return (acks, "a line is not text; session dropped".into());
        };
        if let Err(e) = check_line(text) {
            return (acks, format!("bad line ({e}); session dropped"));
        }
        let is_ack = text.starts_with("A ");
        let ours = text.split(' ').nth(1) == Some(own_run.as_str());
        if !(is_ack || text.starts_with("E ")) || !ours {
            return (acks, "a line of another session; session dropped".into());
        }
        if let Err(e) = lock(journal).append(text) {
            return (acks, e);
        }
        if is_ack {
            acks += 1;
        }
    }
}

/// Fetch the whole journal from a recorder (for `verify --from ADDR:PORT`).
pub fn fetch(addr: &str) -> Result<Vec<u8>, String> {
    let stream = crate::writer::connect(addr)?;
    (&stream)
        .write_all(format!("{HELLO_FETCH}\n").as_bytes())
        .map_err(|e| format!("recorder {addr}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .map_err(|e| format!("recorder {addr}: {e}"))?;
    let mut bytes = Vec::new();
    (&stream)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("recorder {addr}: {e}"))?;
    if bytes.starts_with(b"ERR ") {
        let msg = String::from_utf8_lossy(&bytes);
        return Err(format!("recorder {addr}: {}", msg.trim_end()));
    }
    Ok(bytes)
}

/// Run a recorder until SIGINT/SIGTERM: the `durability record` command.
/// Prints `listening on ADDR` first (the port, when 0 was asked for).
pub fn run(opts: &RecordOptions) -> Result<(), String> {
    let journal: PathBuf = opts.journal.clone();
    let log: Arc<dyn Fn(&str) + Send + Sync> =
        Arc::new(|l: &str| eprintln!("durability record: {l}"));
    let r = Recorder::start(opts, log)?;
    println!(
        "durability record: listening on {} (journal {})",
        r.addr,
        journal.display()
    );
    let _ = std::io::stdout().flush();
    while !stop_requested() {
        std::thread::sleep(Duration::from_millis(50));
    }
    r.stop()?;
    eprintln!("durability record: stopped; journal flushed");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{Ack, Commit, Journal};

    fn start(dir: &Path) -> Recorder {
        let opts = RecordOptions {
            listen: "127.0.0.1:0".into(),
            journal: dir.join("j"),
        };
        Recorder::start(&opts, Arc::new(|_: &str| {})).unwrap()
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
        s
    }

    /// Send `text` as a writer and return the recorder's first answer line.
    fn send(addr: &std::net::SocketAddr, text: &str) -> String {
        let s = TcpStream::connect(addr).unwrap();
        (&s).write_all(text.as_bytes()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut answer = String::new();
        let _ = BufReader::new(&s).read_line(&mut answer);
        answer
    }

    /// The journal as a fetch returns it, once the recorder has caught up
    /// with the writers (sessions end asynchronously).
    fn fetch_until(addr: &std::net::SocketAddr, acks: usize) -> Journal {
        for _ in 0..200 {
            let j = Journal::parse(&fetch(&addr.to_string()).unwrap()).unwrap();
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
        let r = start(d.path());
        // A session whose connection ends in the middle of a line.
        let text = format!(
            "{HELLO_WRITER}\n{}\n{}{}",
            session(7).line(),
            ack_line(7, 1),
            &ack_line(7, 2)[..20]
        );
        assert_eq!(send(&r.addr, &text), "OK\n");
        // A second session that sends a line of another run: dropped there.
        let text = format!(
            "{HELLO_WRITER}\n{}\n{}{}{}",
            session(8).line(),
            ack_line(8, 1),
            ack_line(9, 1),
            ack_line(8, 2)
        );
        assert_eq!(send(&r.addr, &text), "OK\n");
        let j = fetch_until(&r.addr, 2);
        std::thread::sleep(Duration::from_millis(200));
        let j2 = Journal::parse(&fetch(&r.addr.to_string()).unwrap()).unwrap();
        assert_eq!(j.acks.len(), j2.acks.len(), "nothing more arrives");
        assert_eq!(j2.sessions.len(), 2);
        let seqs: Vec<(u8, u64)> = j2.acks.iter().map(|a| (a.run.0[0], a.seq)).collect();
        assert_eq!(seqs, vec![(7, 1), (8, 1)]);
        assert!(j2.bad_lines.is_empty() && !j2.truncated_tail);
        r.stop().unwrap();
        // A restarted recorder appends to the same journal.
        let r = start(d.path());
        assert_eq!(
            send(
                &r.addr,
                &format!(
                    "{HELLO_WRITER}\n{}\n{}",
                    session(10).line(),
                    ack_line(10, 1)
                )
            ),
            "OK\n"
        );
        let j = fetch_until(&r.addr, 3);
        assert_eq!(j.sessions.len(), 3);
        r.stop().unwrap();
    }

    #[test]
    fn bad_hellos_are_refused_and_recorded_nowhere() {
        let d = tempfile::tempdir().unwrap();
        let r = start(d.path());
        assert!(send(&r.addr, "hello there\n").starts_with("ERR "));
        assert!(send(&r.addr, &format!("{HELLO_WRITER}\nS run=zz\n")).starts_with("ERR "));
        let j = Journal::parse(&fetch(&r.addr.to_string()).unwrap()).unwrap();
        assert!(j.sessions.is_empty() && j.acks.is_empty());
        r.stop().unwrap();
    }

    #[test]
    fn a_file_that_is_not_a_journal_is_never_appended_to() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("j"), b"precious\n").unwrap();
        let opts = RecordOptions {
            listen: "127.0.0.1:0".into(),
            journal: d.path().join("j"),
        };
        let e = Recorder::start(&opts, Arc::new(|_: &str| {}))
            .err()
            .unwrap();
        assert!(e.contains("not a durability journal"), "{e}");
        assert_eq!(std::fs::read(d.path().join("j")).unwrap(), b"precious\n");
    }
}

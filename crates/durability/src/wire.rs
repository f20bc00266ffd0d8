//! The recorder protocol's authenticated lines, its key file and its bounds.
//!
//! Every line on a recorder connection, in both directions, carries an
//! HMAC-SHA-256 tag under a per-connection key. That key is derived from the
//! run's secret (the key file the recorder creates) and two nonces, one the
//! recorder sends first and one the client puts in its hello, so a line taken
//! from one connection never verifies on another. Each direction numbers its
//! lines from 0 and the number is part of the tag, so a line cannot be
//! dropped, repeated or moved within a connection either. The format is in
//! docs/durability.md ("Protocol").
//!
//! Every read and write has a deadline for the whole line (a peer that drips
//! one byte at a time gains nothing) and every line has a maximum length
//! (a line is never buffered past it).

use hmac::{Hmac, Mac as _};
use sha2::Sha256;
use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::os::unix::io::AsRawFd as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

type HmacSha256 = Hmac<Sha256>;

/// The protocol version in every hello.
pub const PROTOCOL_VERSION: u32 = 2;
/// The first line of a key file.
const KEY_HEADER: &str = "tankbench-durability-key 1";
/// Bytes of secret in a key (256 bits, HMAC-SHA-256's block-size-safe length).
const KEY_BYTES: usize = 32;
/// Bytes of a nonce.
pub(crate) const NONCE_BYTES: usize = 16;
/// Hex digits of a line's tag (the whole HMAC-SHA-256 output).
const TAG_HEX: usize = 64;

/// The test-only environment variable that shortens every deadline (in
/// milliseconds: the line deadline; the idle deadline is 4 times it). Tests
/// use it so hostile-peer cases end in seconds; see docs/durability.md.
pub const DEADLINE_ENV: &str = "TANKBENCH_DURABILITY_DEADLINE_MS";

/// What went wrong with a line on a recorder connection.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum WireError {
    #[error("no whole line within the deadline of {0:?}")]
    Deadline(Duration),
    #[error("the peer was silent for longer than {0:?}")]
    Idle(Duration),
    #[error("a line longer than {max} bytes (the connection is closed, the line is not kept)")]
    TooLong { max: usize },
    #[error("the connection closed")]
    Closed,
    #[error("the connection closed in the middle of a line")]
    ClosedMidLine,
    #[error("a line is not text")]
    NotText,
    #[error("a line's tag does not verify (another key, or a forged, replayed or reordered line)")]
    BadTag,
    #[error("stopped")]
    Stopped,
    #[error("{0}")]
    Io(String),
}

/// Bounds and deadlines of the protocol. The defaults suit a recorder on a
/// LAN; tests shorten the deadlines through [`DEADLINE_ENV`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest line accepted, in bytes, newline and tag included.
    pub max_line: usize,
    /// A whole line (read or written, once its first byte is on its way),
    /// the hello included.
    pub line_deadline: Duration,
    /// How long an accepted writer may be silent; the writer sends a
    /// keep-alive line every quarter of it.
    pub idle_deadline: Duration,
    /// Writer sessions at once.
    pub max_sessions: usize,
    /// Connections not yet authenticated, at once.
    pub max_unauthenticated: usize,
    /// The journal's largest size in bytes (the recorder stops appending and
    /// refuses sessions past it; verify refuses a larger answer).
    pub max_journal_bytes: u64,
}

/// `--max-journal-size` when none is given.
pub const DEFAULT_MAX_JOURNAL_BYTES: u64 = 256 << 20;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_line: 4096,
            line_deadline: Duration::from_secs(30),
            idle_deadline: Duration::from_secs(120),
            max_sessions: 16,
            max_unauthenticated: 32,
            max_journal_bytes: DEFAULT_MAX_JOURNAL_BYTES,
        }
    }
}

impl Limits {
    /// The defaults, with the deadlines of [`DEADLINE_ENV`] when it is set.
    pub fn from_env() -> Limits {
        let mut l = Limits::default();
        if let Some(ms) = std::env::var(DEADLINE_ENV)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|ms| *ms > 0)
        {
            l.line_deadline = Duration::from_millis(ms);
            l.idle_deadline = Duration::from_millis(ms.saturating_mul(4));
        }
        l
    }

    /// How often an idle writer sends a keep-alive line.
    pub fn keepalive(&self) -> Duration {
        self.idle_deadline / 4
    }
}

/// The run's secret, shared by the recorder, its writers and verify.
#[derive(Clone, PartialEq, Eq)]
pub struct Key([u8; KEY_BYTES]);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

/// What went wrong with a key file.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("key file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("key file {path}: not a tankbench durability key (its first line is not '{KEY_HEADER}'); it is left alone")]
    NotAKey { path: PathBuf },
    #[error("key file {path}: readable or writable by others (mode {mode:04o}); accepted: mode 0600 or stricter (chmod 600)")]
    Exposed { path: PathBuf, mode: u32 },
    #[error("key file {path}: getrandom: {source}")]
    Random {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Key {
    /// Read an existing key file. It must be one (its header line) and be
    /// readable by its owner only.
    pub fn load(path: &Path) -> Result<Key, KeyError> {
        let io = |source| KeyError::Io {
            path: path.to_path_buf(),
            source,
        };
        // O_NONBLOCK: a FIFO named like the key must not block the open;
        // only a regular file is a key.
        let mut f = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(io)?;
        let meta = f.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(KeyError::NotAKey {
                path: path.to_path_buf(),
            });
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(KeyError::Exposed {
                path: path.to_path_buf(),
                mode,
            });
        }
        // A key file is two short lines; anything much longer is not one.
        let mut text = String::new();
        let not_key = || KeyError::NotAKey {
            path: path.to_path_buf(),
        };
        (&mut f)
            .take(256)
            .read_to_string(&mut text)
            .map_err(|_| not_key())?;
        let mut lines = text.lines();
        if lines.next() != Some(KEY_HEADER) {
            return Err(not_key());
        }
        let bytes = lines.next().and_then(parse_hex).ok_or_else(not_key)?;
        let key: [u8; KEY_BYTES] = bytes.try_into().map_err(|_| not_key())?;
        Ok(Key(key))
    }

    /// Create a new key file with a fresh secret (mode 0600, O_EXCL: an
    /// existing file is never replaced), or load the key file this recorder
    /// created before. Returns the key and whether it was created now.
    pub fn load_or_create(path: &Path) -> Result<(Key, bool), KeyError> {
        let io = |source| KeyError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut secret = [0u8; KEY_BYTES];
        fill_random(&mut secret).map_err(|source| KeyError::Random {
            path: path.to_path_buf(),
            source,
        })?;
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
        {
            Ok(mut f) => {
                let text = format!("{KEY_HEADER}\n{}\n", hex(&secret));
                f.write_all(text.as_bytes())
                    .and_then(|()| f.sync_all())
                    .map_err(io)?;
                if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
                }
                Ok((Key(secret), true))
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Key::load(path).map(|k| (k, false))
            }
            Err(e) => Err(io(e)),
        }
    }

    /// The key of one connection, from both sides' nonces.
    fn connection(&self, recorder: &[u8; NONCE_BYTES], client: &[u8; NONCE_BYTES]) -> [u8; 32] {
        let mut m = mac(&self.0);
        m.update(b"tankbench-durability 2 connection\n");
        m.update(recorder);
        m.update(client);
        m.finalize().into_bytes().into()
    }
}

fn mac(key: &[u8]) -> HmacSha256 {
    // HMAC takes a key of any length; this cannot fail.
    <HmacSha256 as hmac::Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!())
}

/// Fill `buf` from the kernel's generator (getrandom(2)).
pub(crate) fn fill_random(buf: &mut [u8]) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        // SAFETY: the pointer and length describe the unfilled tail of `buf`.
        let n = unsafe {
            libc::getrandom(
                buf[filled..].as_mut_ptr().cast::<libc::c_void>(),
                buf.len() - filled,
                0,
            )
        };
        match usize::try_from(n) {
            Ok(n) => filled += n,
            Err(_) => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

pub fn hex(b: &[u8]) -> String {
    use std::fmt::Write as _;
    b.iter()
        .fold(String::with_capacity(b.len() * 2), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
}

pub(crate) fn parse_hex(t: &str) -> Option<Vec<u8>> {
    if !t.len().is_multiple_of(2) || !t.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    (0..t.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&t[i..i + 2], 16).ok())
        .collect()
}

pub(crate) fn nonce() -> std::io::Result<[u8; NONCE_BYTES]> {
    let mut n = [0u8; NONCE_BYTES];
    fill_random(&mut n)?;
    Ok(n)
}

pub fn parse_nonce(t: &str) -> Option<[u8; NONCE_BYTES]> {
    parse_hex(t)?.try_into().ok()
}

/// Which side a line comes from (public for peers written elsewhere, such
/// as the scripted recorders of the tests): part of its tag, so a line never verifies
/// in the other direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Client,
    Recorder,
}

/// The tagging state of one connection: its key and each direction's next
/// line number.
pub struct Tagger {
    key: [u8; 32],
    me: Side,
    sent: u64,
    received: u64,
}

impl Tagger {
    pub fn new(
        key: &Key,
        recorder: &[u8; NONCE_BYTES],
        client: &[u8; NONCE_BYTES],
        me: Side,
    ) -> Tagger {
        Tagger {
            key: key.connection(recorder, client),
            me,
            sent: 0,
            received: 0,
        }
    }

    fn tag(&self, from: Side, n: u64, payload: &[u8]) -> HmacSha256 {
        let mut m = mac(&self.key);
        m.update(match from {
            Side::Client => b"C",
            Side::Recorder => b"R",
        });
        m.update(&n.to_be_bytes());
        m.update(payload);
        m
    }

    /// `payload` with its tag, as sent (with the newline).
    pub fn seal(&mut self, payload: &str, out: &mut String) {
        debug_assert!(!payload.contains('\n'));
        let tag = self.tag(self.me, self.sent, payload.as_bytes());
        self.sent += 1;
        out.push_str(payload);
        out.push(' ');
        out.push_str(&hex(&tag.finalize().into_bytes()));
        out.push('\n');
    }

    /// The payload of a received line (without its newline) whose tag
    /// verifies as the peer's next line.
    pub fn open<'l>(&mut self, line: &'l str) -> Result<&'l str, WireError> {
        let (payload, tag) = line.rsplit_once(' ').ok_or(WireError::BadTag)?;
        if tag.len() != TAG_HEX {
            return Err(WireError::BadTag);
        }
        let tag = parse_hex(tag).ok_or(WireError::BadTag)?;
        let peer = match self.me {
            Side::Client => Side::Recorder,
            Side::Recorder => Side::Client,
        };
        // verify_slice compares in constant time.
        self.tag(peer, self.received, payload.as_bytes())
            .verify_slice(&tag)
            .map_err(|_| WireError::BadTag)?;
        self.received += 1;
        Ok(payload)
    }
}

/// Lines from a socket, each read whole within a deadline and never longer
/// than the limit.
pub(crate) struct LineReader {
    buf: Vec<u8>,
    /// Bytes of `buf` already returned.
    used: usize,
    max: usize,
}

impl LineReader {
    pub(crate) fn new(max: usize) -> LineReader {
        LineReader {
            buf: Vec::with_capacity(max.min(1 << 16)),
            used: 0,
            max,
        }
    }

    /// A whole line already buffered, if any (without its newline).
    fn take_line(&mut self) -> Option<Result<String, WireError>> {
        let rest = &self.buf[self.used..];
        let end = rest.iter().position(|b| *b == b'\n')?;
        if end + 1 > self.max {
            return Some(Err(WireError::TooLong { max: self.max }));
        }
        let line = std::str::from_utf8(&rest[..end])
            .map(str::to_string)
            .map_err(|_| WireError::NotText);
        self.used += end + 1;
        Some(line)
    }

    fn compact(&mut self) {
        if self.used > 0 {
            self.buf.drain(..self.used);
            self.used = 0;
        }
    }

    /// The next line. The peer may be silent for `idle` before it starts
    /// one; once it has, the line must be whole within `line` (and never
    /// past `idle`'s end either, when that is sooner). `stop` is asked
    /// between waits of at most 200 ms.
    pub(crate) fn read(
        &mut self,
        stream: &TcpStream,
        idle: Duration,
        line: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<String, WireError> {
        let start = Instant::now();
        let mut deadline = start + idle;
        let mut started = self.used < self.buf.len();
        if started {
            deadline = deadline.min(start + line);
        }
        loop {
            if let Some(l) = self.take_line() {
                return l;
            }
            self.compact();
            if self.buf.len() >= self.max {
                return Err(WireError::TooLong { max: self.max });
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(if started {
                    WireError::Deadline(line)
                } else {
                    WireError::Idle(idle)
                });
            }
            if stop() {
                return Err(WireError::Stopped);
            }
            let wait = (deadline - now)
                .min(Duration::from_millis(200))
                .max(Duration::from_millis(1));
            stream
                .set_read_timeout(Some(wait))
                .map_err(|e| WireError::Io(e.to_string()))?;
            let mut chunk = [0u8; 4096];
            let room = (self.max - self.buf.len()).min(chunk.len());
            match (&*stream).read(&mut chunk[..room]) {
                Ok(0) => {
                    return Err(if self.buf.is_empty() {
                        WireError::Closed
                    } else {
                        WireError::ClosedMidLine
                    })
                }
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    if !started {
                        started = true;
                        deadline = deadline.min(Instant::now() + line);
                    }
                }
                Err(e) if is_wait(&e) => {}
                Err(e) => return Err(WireError::Io(e.to_string())),
            }
        }
    }

    /// A line that has already arrived, without waiting: for a writer that
    /// watches for the recorder's refusal while it sends.
    pub(crate) fn poll(&mut self, stream: &TcpStream) -> Option<Result<String, WireError>> {
        if let Some(l) = self.take_line() {
            return Some(l);
        }
        self.compact();
        if self.buf.len() >= self.max {
            return Some(Err(WireError::TooLong { max: self.max }));
        }
        let mut chunk = [0u8; 4096];
        let room = (self.max - self.buf.len()).min(chunk.len());
        // SAFETY: recv(2) into the first `room` bytes of `chunk`, which is
        // that long; MSG_DONTWAIT makes it return at once.
        let n = unsafe {
            libc::recv(
                stream.as_raw_fd(),
                chunk.as_mut_ptr().cast::<libc::c_void>(),
                room,
                libc::MSG_DONTWAIT,
            )
        };
        match usize::try_from(n) {
            Ok(0) => Some(Err(if self.buf.is_empty() {
                WireError::Closed
            } else {
                WireError::ClosedMidLine
            })),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                self.take_line()
            }
            Err(_) => None,
        }
    }

    /// A reader that starts with `bytes` already received.
    pub(crate) fn with_bytes(max: usize, bytes: Vec<u8>) -> LineReader {
        LineReader {
            buf: bytes,
            used: 0,
            max,
        }
    }

    /// Bytes read past the last line returned (the start of a body).
    pub(crate) fn leftover(&mut self) -> Vec<u8> {
        let rest = self.buf[self.used..].to_vec();
        self.buf.clear();
        self.used = 0;
        rest
    }
}

/// Write all of `bytes` by `deadline`. `stop` is asked between waits of at
/// most 200 ms, so a signal or a time limit is never held up by a peer that
/// stopped reading.
pub(crate) fn write_all_by(
    stream: &TcpStream,
    bytes: &[u8],
    deadline: Instant,
    stop: &dyn Fn() -> bool,
) -> Result<(), WireError> {
    let mut done = 0;
    while done < bytes.len() {
        let now = Instant::now();
        if now >= deadline {
            return Err(WireError::Deadline(Duration::ZERO));
        }
        if stop() {
            return Err(WireError::Stopped);
        }
        let wait = (deadline - now)
            .min(Duration::from_millis(200))
            .max(Duration::from_millis(1));
        stream
            .set_write_timeout(Some(wait))
            .map_err(|e| WireError::Io(e.to_string()))?;
        match (&*stream).write(&bytes[done..]) {
            Ok(0) => return Err(WireError::Closed),
            Ok(n) => done += n,
            Err(e) if is_wait(&e) => {}
            Err(e) => return Err(WireError::Io(e.to_string())),
        }
    }
    Ok(())
}

/// Whether a socket error only means "not yet": a timeout of one wait, or
/// a signal.
pub(crate) fn is_wait(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    )
}

/// Never stop early.
pub(crate) fn never() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_line_opens_once_in_order_and_only_with_its_key_and_nonces() {
        let key = Key([3; 32]);
        let (nr, nc) = ([1; 16], [2; 16]);
        let mut client = Tagger::new(&key, &nr, &nc, Side::Client);
        let mut recorder = Tagger::new(&key, &nr, &nc, Side::Recorder);
        let mut wire = String::new();
        client.seal("A one", &mut wire);
        client.seal("A two", &mut wire);
        let lines: Vec<&str> = wire.lines().collect();
        // Out of order: refused; in order: accepted; repeated: refused.
        assert_eq!(
            Tagger::new(&key, &nr, &nc, Side::Recorder).open(lines[1]),
            Err(WireError::BadTag)
        );
        assert_eq!(recorder.open(lines[0]), Ok("A one"));
        assert_eq!(recorder.open(lines[0]), Err(WireError::BadTag));
        assert_eq!(recorder.open(lines[1]), Ok("A two"));
        // Another connection's nonce, another key, the other direction.
        let mut other = Tagger::new(&key, &[9; 16], &nc, Side::Recorder);
        assert_eq!(other.open(lines[0]), Err(WireError::BadTag));
        let mut other = Tagger::new(&Key([4; 32]), &nr, &nc, Side::Recorder);
        assert_eq!(other.open(lines[0]), Err(WireError::BadTag));
        let mut back = Tagger::new(&key, &nr, &nc, Side::Client);
        assert_eq!(back.open(lines[0]), Err(WireError::BadTag));
        // A changed payload.
        let forged = lines[0].replacen("one", "onf", 1);
        let mut r = Tagger::new(&key, &nr, &nc, Side::Recorder);
        assert_eq!(r.open(&forged), Err(WireError::BadTag));
        assert_eq!(r.open("A one"), Err(WireError::BadTag));
    }

    #[test]
    fn key_files_are_created_private_and_never_replaced() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k");
        let (k1, created) = Key::load_or_create(&p).unwrap();
        assert!(created);
        assert_eq!(
            std::fs::metadata(&p).unwrap().mode() & 0o777,
            0o600,
            "owner only"
        );
        let (k2, created) = Key::load_or_create(&p).unwrap();
        assert!(!created);
        assert_eq!(k1, k2);
        assert_eq!(Key::load(&p).unwrap(), k1);
        // Someone else's file: left alone, refused.
        let other = d.path().join("notes");
        std::fs::write(&other, b"mine\n").unwrap();
        std::fs::set_permissions(&other, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        assert!(matches!(
            Key::load_or_create(&other),
            Err(KeyError::NotAKey { .. })
        ));
        assert_eq!(std::fs::read(&other).unwrap(), b"mine\n");
        // A key others can read is refused.
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
        assert!(matches!(Key::load(&p), Err(KeyError::Exposed { .. })));
    }
}

//! The NFSv3 procedures a file benchmark needs (RFC 1813) and MOUNT v3's MNT.

use super::error::{CallError, Error};
use super::protocol::{Attr, Fh, Stable};
use super::rpc::{self, Connection};
use super::target::{Target, COMMIT_DEADLINE_FACTOR};
use super::xdr::{Dec, Enc};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const NFS_PROGRAM: u32 = 100_003;
const MOUNT_PROGRAM: u32 = 100_005;
const FHSIZE3: usize = 64;
/// Size of fattr3 on the wire: type, mode, nlink, uid, gid (4 bytes each),
/// size, used, rdev, fsid, fileid (8 each), atime, mtime, ctime (8 each).
const FATTR3_BYTES: usize = 5 * 4 + 5 * 8 + 3 * 8;
/// wcc_attr: size (8), mtime (8), ctime (8).
const WCC_ATTR_BYTES: usize = 24;

/// Calls after short WRITEs (or READs) that one transfer makes beyond one
/// per `max_write` (`max_read`) bytes: a server may take or return fewer
/// bytes than asked (RFC 1813 3.3.6, 3.3.7) and the rest is asked again,
/// but one that keeps doing it a few bytes at a time is broken, not slow.
pub const MAX_SHORT_RESENDS: u32 = 16;
/// The largest file size believed: a file on Linux (and so on the servers a
/// benchmark meets) is at most 2^63 - 1 bytes (off_t), and nothing the
/// client does with a size may go past it.
const MAX_FILE_SIZE: u64 = i64::MAX as u64;

/// Calls made, by procedure (MNT excluded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub read: u64,
    pub write: u64,
    /// Of `write`, those sent FILE_SYNC or DATA_SYNC.
    pub stable_write: u64,
    pub commit: u64,
    pub other: u64,
}

/// Calls of every client of this process, for tests that compare a
/// benchmark's request counts with the calls that reached the server.
static PROCESS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];
const READ: usize = 0;
const WRITE: usize = 1;
const STABLE_WRITE: usize = 2;
const COMMIT: usize = 3;
const OTHER: usize = 4;

/// The calls all clients of this process have made so far.
pub fn process_counts() -> Counts {
    let n = |i: usize| PROCESS[i].load(Ordering::Relaxed);
    Counts {
        read: n(READ),
        write: n(WRITE),
        stable_write: n(STABLE_WRITE),
        commit: n(COMMIT),
        other: n(OTHER),
    }
}

impl Counts {
    fn add(&mut self, which: usize) {
        PROCESS[which].fetch_add(1, Ordering::Relaxed);
        let field = match which {
            READ => &mut self.read,
            WRITE => &mut self.write,
            STABLE_WRITE => &mut self.stable_write,
            COMMIT => &mut self.commit,
            _ => &mut self.other,
        };
        *field += 1;
    }
}

/// One TCP connection to an export's NFS service.
pub struct Client {
    conn: Connection,
    target: Target,
    nfs_port: u16,
    root: Fh,
    rtmax: u32,
    wtmax: u32,
    /// The largest file size the server may report (FSINFO maxfilesize,
    /// at most [`MAX_FILE_SIZE`]).
    max_file_size: u64,
    counts: Counts,
    added_rtt: Duration,
    /// How long one call may take (COMMIT: [`COMMIT_DEADLINE_FACTOR`] times).
    timeout: Duration,
    /// Write verifier of the last WRITE: if COMMIT returns another, the
    /// server restarted and dropped unstable data, which must be an error.
    write_verf: Option<[u8; 8]>,
    /// No call runs past this ([`Client::set_deadline`]).
    deadline: Option<Deadline>,
}

/// An instant no call may run past, and the time that was allowed up to it
/// (for the message when it has passed).
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    pub at: Instant,
    pub allowed: Duration,
}

impl Deadline {
    /// `allowed` from now.
    pub fn after(allowed: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + allowed,
            allowed,
        }
    }
}

/// A call's own `timeout`, shortened to what is left before `deadline`.
fn time_left(timeout: Duration, deadline: Option<Deadline>) -> Result<Duration, CallError> {
    let Some(d) = deadline else {
        return Ok(timeout);
    };
    match d.at.checked_duration_since(Instant::now()) {
        Some(left) if !left.is_zero() => Ok(timeout.min(left)),
        _ => Err(CallError::NoTimeLeft { allowed: d.allowed }),
    }
}

fn post_op_attr(d: &mut Dec<'_>) -> Result<Option<Attr>, CallError> {
    if !d.bool()? {
        return Ok(None);
    }
    fattr3(d).map(Some)
}

fn fattr3(d: &mut Dec<'_>) -> Result<Attr, CallError> {
    let ftype = d.u32()?;
    d.skip(4 * 4)?; // mode, nlink, uid, gid
    let size = d.u64()?;
    d.skip(FATTR3_BYTES - 4 * 5 - 8)?;
    Ok(Attr { ftype, size })
}

fn wcc_data(d: &mut Dec<'_>) -> Result<(), CallError> {
    if d.bool()? {
        d.skip(WCC_ATTR_BYTES)?;
    }
    post_op_attr(d).map(|_| ())
}

fn fh(d: &mut Dec<'_>) -> Result<Fh, CallError> {
    Ok(Fh(d.opaque(FHSIZE3, "a file handle")?.to_vec()))
}

fn name_arg(e: &mut Enc, dir: &Fh, name: &str) -> Result<(), CallError> {
    e.opaque(&dir.0)?.opaque(name.as_bytes())?;
    Ok(())
}

/// Attributes whose size the client can act on: a size past `max` (the
/// largest file there can be) is a broken server, and believing it would
/// make a benchmark reuse a "file" it can never have written.
fn sane(attr: Attr, max: u64) -> Result<Attr, CallError> {
    if attr.size > max {
        return Err(CallError::ImplausibleSize {
            size: attr.size,
            max,
        });
    }
    Ok(attr)
}

/// MNT's result: the export's handle, or the MNT status it failed with.
fn decode_mnt(body: &[u8]) -> Result<Result<Fh, u32>, CallError> {
    let mut d = Dec::new(body);
    match d.u32()? {
        0 => Ok(Ok(fh(&mut d)?)),
        s => Ok(Err(s)),
    }
}

/// FSINFO's rtmax, wtmax (clamped to what this client sends) and
/// maxfilesize (at most [`MAX_FILE_SIZE`]; 0, "unknown", is that too).
fn decode_fsinfo(body: &[u8]) -> Result<(u32, u32, u64), CallError> {
    let mut d = Dec::new(body);
    let s = d.u32()?;
    post_op_attr(&mut d)?;
    if s != 0 {
        return Err(CallError::Status(s));
    }
    let rtmax = d.u32()?;
    d.skip(8)?; // rtpref, rtmult
    let wtmax = d.u32()?;
    d.skip(12)?; // wtpref, wtmult, dtpref
    let max_file_size = match d.u64()? {
        0 => MAX_FILE_SIZE,
        m => m.min(MAX_FILE_SIZE),
    };
    // A server that announces 0 gets the RFC's smallest sane transfer.
    Ok((
        rtmax.clamp(4096, 1 << 20),
        wtmax.clamp(4096, 1 << 20),
        max_file_size,
    ))
}

/// LOOKUP's result: None if the name does not exist, else the handle and
/// the attributes if the server sent them.
fn decode_lookup(body: &[u8], max_size: u64) -> Result<Option<(Fh, Option<Attr>)>, CallError> {
    let mut d = Dec::new(body);
    match d.u32()? {
        0 => {
            let h = fh(&mut d)?;
            let attr = post_op_attr(&mut d)?
                .map(|a| sane(a, max_size))
                .transpose()?;
            Ok(Some((h, attr)))
        }
        2 => Ok(None),
        s => Err(CallError::Status(s)),
    }
}

fn decode_getattr(body: &[u8], max_size: u64) -> Result<Attr, CallError> {
    let mut d = Dec::new(body);
    match d.u32()? {
        0 => sane(fattr3(&mut d)?, max_size),
        s => Err(CallError::Status(s)),
    }
}

/// READ's data (at most `asked` bytes, and as many as its count says) and
/// whether it ends the file.
fn decode_read(body: &[u8], asked: usize) -> Result<(&[u8], bool), CallError> {
    let mut d = Dec::new(body);
    let s = d.u32()?;
    post_op_attr(&mut d)?;
    if s != 0 {
        return Err(CallError::Status(s));
    }
    let count = d.u32()?;
    if count as usize > asked {
        return Err(CallError::ReadCountOver { count, asked });
    }
    let eof = d.bool()?;
    let data = d.opaque(asked, "READ data")?;
    if data.len() != count as usize {
        return Err(CallError::ReadCountMismatch {
            count,
            data: data.len(),
        });
    }
    Ok((data, eof))
}

/// What a WRITE reply says.
#[derive(Debug, PartialEq, Eq)]
struct Written {
    count: usize,
    committed: Stable,
    verf: [u8; 8],
}

/// WRITE's result for `sent` bytes: a count past what was sent is a lie,
/// and 0 of a non-empty write is no progress (Linux's client fails such a
/// write with EIO too rather than sending it again for ever).
fn decode_write(body: &[u8], sent: usize) -> Result<Written, CallError> {
    let mut d = Dec::new(body);
    let s = d.u32()?;
    wcc_data(&mut d)?;
    if s != 0 {
        return Err(CallError::Status(s));
    }
    let count = d.u32()?;
    if count as usize > sent {
        return Err(CallError::WriteCountOver { count, sent });
    }
    if count == 0 && sent > 0 {
        return Err(CallError::NoProgress { sent });
    }
    let committed = match d.u32()? {
        0 => Stable::Unstable,
        1 => Stable::DataSync,
        2 => Stable::FileSync,
        value => return Err(CallError::BadStableHow { value }),
    };
    let mut verf = [0u8; 8];
    verf.copy_from_slice(d.take_fixed(8)?);
    Ok(Written {
        count: count as usize,
        committed,
        verf,
    })
}

fn decode_commit(body: &[u8]) -> Result<[u8; 8], CallError> {
    let mut d = Dec::new(body);
    let s = d.u32()?;
    wcc_data(&mut d)?;
    if s != 0 {
        return Err(CallError::Status(s));
    }
    let mut verf = [0u8; 8];
    verf.copy_from_slice(d.take_fixed(8)?);
    Ok(verf)
}

fn decode_status(body: &[u8]) -> Result<u32, CallError> {
    Dec::new(body).u32()
}

/// Sleep until `deadline` with little overshoot and little CPU: timer slack
/// of 1 ns for this thread (the default 50 µs slack alone would blur a 10 GbE
/// round trip) and a spin of only the last 10 µs, so emulating the round trip
/// costs a wake-up per call, not a busy core.
fn wait_until(deadline: Instant) {
    const SPIN: Duration = Duration::from_micros(10);
    thread_local! {
        static PRECISE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if !PRECISE.with(std::cell::Cell::get) {
        // SAFETY: PR_SET_TIMERSLACK takes one integer and changes only the
        // calling thread's timer slack (prctl(2)); no pointers are passed.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        }
        PRECISE.with(|p| p.set(true));
    }
    let now = Instant::now();
    if deadline > now + SPIN {
        std::thread::sleep(deadline - now - SPIN);
    }
    while Instant::now() < deadline {
        std::hint::spin_loop();
    }
}

impl Client {
    /// Mount `target` (MOUNT v3 MNT) and open an NFS connection. PATH may be
    /// a directory below an export: the longest prefix the server mounts is
    /// mounted and the rest looked up. Every call has `target`'s deadline.
    pub fn mount(target: &Target) -> Result<Client, Error> {
        Client::mount_by(target, None)
    }

    /// [`mount`](Client::mount), with no call running past `deadline`,
    /// which the client keeps for every later call.
    pub fn mount_by(target: &Target, deadline: Option<Deadline>) -> Result<Client, Error> {
        let timeout = |procedure: &'static str| {
            time_left(target.call_timeout, deadline).map_err(|kind| Error::Call {
                server: target.host.clone(),
                procedure,
                kind,
            })
        };
        let mount_port = match target.mount_port {
            Some(p) => p,
            None => rpc::getport(&target.host, MOUNT_PROGRAM, 3, timeout("GETPORT")?)?,
        };
        let nfs_port = match target.nfs_port {
            Some(p) => p,
            None => rpc::getport(&target.host, NFS_PROGRAM, 3, timeout("GETPORT")?).unwrap_or(2049),
        };
        let mut m = Connection::connect(
            &target.host,
            mount_port,
            timeout("MOUNT connect")?,
            "MOUNT connect",
        )?;
        let server = m.server().to_string();
        let mnt = |kind| Error::Call {
            server: server.clone(),
            procedure: "MNT",
            kind,
        };
        let parts: Vec<&str> = target.path.split('/').filter(|p| !p.is_empty()).collect();
        let mut mounted = None;
        let mut first_error = None;
        for n in (0..=parts.len()).rev() {
            let prefix = format!("/{}", parts[..n].join("/"));
            let mut a = Enc::default();
            a.opaque(prefix.as_bytes()).map_err(mnt)?;
            let left = time_left(target.call_timeout, deadline).map_err(mnt)?;
            let body = m.call(MOUNT_PROGRAM, 3, 1, &a.buf, left).map_err(mnt)?;
            match decode_mnt(body).map_err(mnt)? {
                Ok(root) => {
                    mounted = Some((n, root));
                    break;
                }
                Err(s) => {
                    first_error.get_or_insert(s);
                }
            }
        }
        let Some((n, mut root)) = mounted else {
            return Err(mnt(CallError::NotExported {
                path: target.path.clone(),
                status: first_error.unwrap_or(2),
            }));
        };
        let mut c = Client::connect(target.clone(), nfs_port, root.clone(), deadline)?;
        for name in &parts[n..] {
            let lookup = |c: &Client, kind| Error::Call {
                server: c.conn.server().to_string(),
                procedure: "LOOKUP",
                kind,
            };
            root = match c.lookup(&root, name)? {
                Some((h, a)) if a.ftype == 2 => h,
                Some(_) => {
                    return Err(lookup(
                        &c,
                        CallError::NotADirectory {
                            name: name.to_string(),
                        },
                    ))
                }
                None => {
                    return Err(lookup(
                        &c,
                        CallError::NoSuchDirectory {
                            name: name.to_string(),
                        },
                    ))
                }
            };
        }
        c.root = root;
        c.on("FSINFO", Client::fsinfo)?;
        c.added_rtt = Duration::from_micros(target.added_rtt_us);
        Ok(c)
    }

    fn connect(
        target: Target,
        nfs_port: u16,
        root: Fh,
        deadline: Option<Deadline>,
    ) -> Result<Client, Error> {
        let timeout = target.call_timeout;
        let connect_within = time_left(timeout, deadline).map_err(|kind| Error::Call {
            server: format!("{}:{nfs_port}", target.host),
            procedure: "NFS connect",
            kind,
        })?;
        Ok(Client {
            conn: Connection::connect(&target.host, nfs_port, connect_within, "NFS connect")?,
            target,
            nfs_port,
            root,
            rtmax: 32 * 1024,
            wtmax: 32 * 1024,
            max_file_size: MAX_FILE_SIZE,
            counts: Counts::default(),
            added_rtt: Duration::ZERO,
            timeout,
            write_verf: None,
            deadline,
        })
    }

    /// From now on no call runs past `deadline` (`None`: each call has only
    /// its own deadline). A call that would start after it fails at once.
    pub fn set_deadline(&mut self, deadline: Option<Deadline>) {
        self.deadline = deadline;
    }

    /// A second connection to the same export (one per benchmark thread, so
    /// threads do not queue behind each other's calls in the client).
    pub fn another(&self) -> Result<Client, Error> {
        let mut c = Client::connect(
            self.target.clone(),
            self.nfs_port,
            self.root.clone(),
            self.deadline,
        )?;
        c.rtmax = self.rtmax;
        c.wtmax = self.wtmax;
        c.max_file_size = self.max_file_size;
        c.added_rtt = self.added_rtt;
        c.timeout = self.timeout;
        Ok(c)
    }

    /// The directory `target` named.
    pub fn root(&self) -> &Fh {
        &self.root
    }
    /// Largest READ and WRITE the server takes in one call (FSINFO rtmax, wtmax).
    pub fn max_read(&self) -> u32 {
        self.rtmax
    }
    pub fn max_write(&self) -> u32 {
        self.wtmax
    }
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Run one procedure's body; its failure becomes one error naming the
    /// server and the procedure.
    fn on<T>(
        &mut self,
        procedure: &'static str,
        f: impl FnOnce(&mut Client) -> Result<T, CallError>,
    ) -> Result<T, Error> {
        f(self).map_err(|kind| Error::Call {
            server: self.conn.server().to_string(),
            procedure,
            kind,
        })
    }

    fn nfs(&mut self, proc: u32, args: &[u8], timeout: Duration) -> Result<&[u8], CallError> {
        let timeout = time_left(timeout, self.deadline)?;
        if self.added_rtt.is_zero() {
            return self.conn.call(NFS_PROGRAM, 3, proc, args, timeout);
        }
        // The reply is handed back the added round trip after it arrived.
        // (`call`'s result borrows the connection, so the wait goes between
        // the call and re-reading the reply it stored.)
        self.conn.call(NFS_PROGRAM, 3, proc, args, timeout)?;
        wait_until(Instant::now() + self.added_rtt);
        Ok(self.conn.last_reply())
    }

    fn fsinfo(&mut self) -> Result<(), CallError> {
        let mut a = Enc::default();
        a.opaque(&self.root.0.clone())?;
        self.counts.add(OTHER);
        let body = self.nfs(19, &a.buf, self.timeout)?;
        (self.rtmax, self.wtmax, self.max_file_size) = decode_fsinfo(body)?;
        Ok(())
    }

    /// LOOKUP `name` in `dir`: None when it does not exist.
    pub fn lookup(&mut self, dir: &Fh, name: &str) -> Result<Option<(Fh, Attr)>, Error> {
        self.on("LOOKUP", |c| {
            let mut a = Enc::default();
            name_arg(&mut a, dir, name)?;
            c.counts.add(OTHER);
            let max_size = c.max_file_size;
            let body = c.nfs(3, &a.buf, c.timeout)?;
            match decode_lookup(body, max_size)? {
                None => Ok(None),
                Some((h, Some(attr))) => Ok(Some((h, attr))),
                Some((h, None)) => {
                    let attr = c.getattr_call(&h)?;
                    Ok(Some((h, attr)))
                }
            }
        })
    }

    /// The NULL procedure: no arguments, no result, no file system work, so
    /// its time is the round trip of the network and the server's RPC layer
    /// (what `tankbench probe` measures first).
    pub fn null(&mut self) -> Result<(), Error> {
        self.on("NULL", |c| {
            c.counts.add(OTHER);
            c.nfs(0, &[], c.timeout).map(|_| ())
        })
    }

    pub fn getattr(&mut self, file: &Fh) -> Result<Attr, Error> {
        self.on("GETATTR", |c| c.getattr_call(file))
    }

    fn getattr_call(&mut self, file: &Fh) -> Result<Attr, CallError> {
        let mut a = Enc::default();
        a.opaque(&file.0)?;
        self.counts.add(OTHER);
        let max_size = self.max_file_size;
        let body = self.nfs(1, &a.buf, self.timeout)?;
        decode_getattr(body, max_size)
    }

    /// CREATE `name` in `dir` with mode 0600. `exclusive`: fail with
    /// NFS3ERR_EXIST if it exists (GUARDED), else open it as it is (UNCHECKED
    /// without a size, so existing data stays).
    pub fn create(&mut self, dir: &Fh, name: &str, exclusive: bool) -> Result<Fh, Error> {
        let handle = self.on("CREATE", |c| {
            let mut a = Enc::default();
            name_arg(&mut a, dir, name)?;
            a.u32(u32::from(exclusive)); // createmode3: UNCHECKED 0, GUARDED 1
                                         // sattr3: mode 0600, nothing else.
            a.bool(true).u32(0o600);
            a.bool(false).bool(false).bool(false).u32(0).u32(0);
            c.counts.add(OTHER);
            let body = c.nfs(8, &a.buf, c.timeout)?;
            let mut d = Dec::new(body);
            let s = d.u32()?;
            if s != 0 {
                return Err(CallError::Status(s));
            }
            Ok(if d.bool()? { Some(fh(&mut d)?) } else { None })
        })?;
        match handle {
            Some(h) => Ok(h),
            // RFC 1813 lets the server omit the handle; then LOOKUP finds it.
            None => match self.lookup(dir, name)? {
                Some((h, _)) => Ok(h),
                None => self.on("CREATE", |_| Err(CallError::Status(2))),
            },
        }
    }

    /// SETATTR the size (truncate or extend).
    pub fn set_size(&mut self, file: &Fh, size: u64) -> Result<(), Error> {
        self.on("SETATTR", |c| {
            let mut a = Enc::default();
            a.opaque(&file.0)?;
            a.bool(false)
                .bool(false)
                .bool(false)
                .bool(true)
                .u64(size)
                .u32(0)
                .u32(0);
            a.bool(false); // no guard
            c.counts.add(OTHER);
            let body = c.nfs(2, &a.buf, c.timeout)?;
            match decode_status(body)? {
                0 => Ok(()),
                s => Err(CallError::Status(s)),
            }
        })
    }

    /// One READ call of `buf.len()` bytes (at most `max_read`) at `offset`;
    /// returns the bytes read (fewer at end of file, never more than asked).
    pub fn read(&mut self, file: &Fh, offset: u64, buf: &mut [u8]) -> Result<usize, Error> {
        self.on("READ", |c| {
            let count = u32::try_from(buf.len())
                .ok()
                .filter(|&n| n <= c.rtmax)
                .ok_or(CallError::TransferTooLarge {
                    len: buf.len(),
                    max: c.rtmax,
                })?;
            let mut a = Enc::default();
            a.opaque(&file.0)?.u64(offset).u32(count);
            c.counts.add(READ);
            let body = c.nfs(6, &a.buf, c.timeout)?;
            let (data, _eof) = decode_read(body, buf.len())?;
            buf[..data.len()].copy_from_slice(data);
            Ok(data.len())
        })
    }

    /// One WRITE call (at most `max_write` bytes); returns the bytes the
    /// server took (at least one, at most `data.len()`) and how durable it
    /// says they are.
    pub fn write(
        &mut self,
        file: &Fh,
        offset: u64,
        data: &[u8],
        stable: Stable,
    ) -> Result<(usize, Stable), Error> {
        self.on("WRITE", |c| c.write_call(file, offset, data, stable))
    }

    /// Write all of `data` at `offset`: one WRITE per `max_write` bytes, and
    /// what a server leaves of a short WRITE sent again, at most
    /// [`MAX_SHORT_RESENDS`] times. Returns the least durable answer.
    pub fn write_all(
        &mut self,
        file: &Fh,
        offset: u64,
        data: &[u8],
        stable: Stable,
    ) -> Result<Stable, Error> {
        self.on("WRITE", |c| {
            let wtmax = c.wtmax as usize;
            let most = u32::try_from(data.len().div_ceil(wtmax))
                .unwrap_or(u32::MAX)
                .saturating_add(MAX_SHORT_RESENDS);
            let mut weakest = Stable::FileSync;
            let mut done = 0;
            let mut calls = 0;
            while done < data.len() {
                if calls == most {
                    return Err(CallError::ShortWrites {
                        done,
                        sent: data.len(),
                        calls,
                    });
                }
                let chunk = &data[done..data.len().min(done + wtmax)];
                let (n, committed) = c.write_call(file, offset + done as u64, chunk, stable)?;
                calls += 1;
                done += n;
                if (committed as u32) < (weakest as u32) {
                    weakest = committed;
                }
            }
            Ok(weakest)
        })
    }

    fn write_call(
        &mut self,
        file: &Fh,
        offset: u64,
        data: &[u8],
        stable: Stable,
    ) -> Result<(usize, Stable), CallError> {
        let len = u32::try_from(data.len())
            .ok()
            .filter(|&n| n <= self.wtmax)
            .ok_or(CallError::TransferTooLarge {
                len: data.len(),
                max: self.wtmax,
            })?;
        let mut a = Enc::default();
        a.opaque(&file.0)?.u64(offset);
        a.u32(len).u32(stable as u32);
        a.opaque(data)?;
        self.counts.add(WRITE);
        if stable != Stable::Unstable {
            self.counts.add(STABLE_WRITE);
        }
        let body = self.nfs(7, &a.buf, self.timeout)?;
        let w = decode_write(body, data.len())?;
        if w.committed == Stable::Unstable {
            self.write_verf = Some(w.verf);
        }
        if (w.committed as u32) < (stable as u32) {
            return Err(CallError::WeakerStability {
                asked: stable,
                got: w.committed,
            });
        }
        Ok((w.count, w.committed))
    }

    /// COMMIT the whole file: everything written unstable reaches stable
    /// storage (what fsync(2) does on a Linux NFS client). It may take
    /// ten times the call timeout (`COMMIT_DEADLINE_FACTOR`).
    pub fn commit(&mut self, file: &Fh) -> Result<(), Error> {
        self.on("COMMIT", |c| {
            let mut a = Enc::default();
            a.opaque(&file.0)?.u64(0).u32(0);
            c.counts.add(COMMIT);
            let timeout = c.timeout.saturating_mul(COMMIT_DEADLINE_FACTOR);
            let verf = decode_commit(c.nfs(21, &a.buf, timeout)?)?;
            match c.write_verf {
                Some(w) if w != verf => Err(CallError::VerifierChanged),
                _ => Ok(()),
            }
        })
    }

    /// REMOVE `name` from `dir`; Ok(false) if it did not exist.
    pub fn remove(&mut self, dir: &Fh, name: &str) -> Result<bool, Error> {
        self.on("REMOVE", |c| {
            let mut a = Enc::default();
            name_arg(&mut a, dir, name)?;
            c.counts.add(OTHER);
            let body = c.nfs(12, &a.buf, c.timeout)?;
            match decode_status(body)? {
                0 => Ok(true),
                2 => Ok(false),
                s => Err(CallError::Status(s)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded result bodies (after the RPC reply header) of hostile
    /// servers, decoded without a socket.
    const WRITE_COUNT_ZERO: [u8; 28] = [
        0, 0, 0, 0, // NFS3_OK
        0, 0, 0, 0, 0, 0, 0, 0, // wcc_data: no attributes before or after
        0, 0, 0, 0, // count 0
        0, 0, 0, 2, // FILE_SYNC
        1, 2, 3, 4, 5, 6, 7, 8, // verifier
    ];
    const WRITE_COUNT_4097: [u8; 28] = [
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x01, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8,
    ];

    /// LOOKUP of a regular file whose size is 2^64 - 1.
    fn lookup_of_size(size: u64) -> Vec<u8> {
        let mut b = vec![0, 0, 0, 0, 0, 0, 0, 4, b'f', b'h', b'!', b'!', 0, 0, 0, 1];
        b.extend_from_slice(&[
            0, 0, 0, 1, 0, 0, 1, 0xa4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
        ]);
        b.extend_from_slice(&size.to_be_bytes());
        b.extend_from_slice(&[0; FATTR3_BYTES - 28]);
        b.extend_from_slice(&[0, 0, 0, 0]); // no directory attributes
        b
    }

    #[test]
    fn write_counts_are_checked_against_what_was_sent() {
        let e = decode_write(&WRITE_COUNT_ZERO, 4096).unwrap_err();
        assert!(matches!(e, CallError::NoProgress { sent: 4096 }), "{e}");
        let e = decode_write(&WRITE_COUNT_4097, 4096).unwrap_err();
        assert!(
            matches!(
                e,
                CallError::WriteCountOver {
                    count: 4097,
                    sent: 4096
                }
            ),
            "{e}"
        );
        let w = decode_write(&WRITE_COUNT_4097, 8192).unwrap();
        assert_eq!(
            w,
            Written {
                count: 4097,
                committed: Stable::Unstable,
                verf: [1, 2, 3, 4, 5, 6, 7, 8]
            }
        );
        let mut how = WRITE_COUNT_4097;
        how[19] = 3;
        assert!(matches!(
            decode_write(&how, 8192),
            Err(CallError::BadStableHow { value: 3 })
        ));
        // NFS3ERR_NOSPC with wcc_data.
        let e = decode_write(&[0, 0, 0, 28, 0, 0, 0, 0, 0, 0, 0, 0], 10).unwrap_err();
        assert!(matches!(e, CallError::Status(28)), "{e}");
        // Cut short before the verifier.
        let e = decode_write(&WRITE_COUNT_ZERO[..20], 0).unwrap_err();
        assert!(
            matches!(e, CallError::Truncated { len: 20, more: 8 }),
            "{e}"
        );
    }

    #[test]
    fn a_file_larger_than_any_file_can_be_is_refused() {
        let e = decode_lookup(&lookup_of_size(u64::MAX), MAX_FILE_SIZE).unwrap_err();
        assert!(
            matches!(e, CallError::ImplausibleSize { size: u64::MAX, .. }),
            "{e}"
        );
        let (h, attr) = decode_lookup(&lookup_of_size(1 << 40), MAX_FILE_SIZE)
            .unwrap()
            .unwrap();
        assert_eq!(h.0, b"fh!!");
        assert_eq!(
            attr,
            Some(Attr {
                ftype: 1,
                size: 1 << 40
            })
        );
        // The server's own FSINFO maxfilesize bounds it further.
        assert!(decode_lookup(&lookup_of_size(1 << 40), 1 << 30).is_err());
        assert!(decode_lookup(&[0, 0, 0, 2], MAX_FILE_SIZE)
            .unwrap()
            .is_none());
        // GETATTR's fattr3 has the same check.
        let getattr = &lookup_of_size(u64::MAX)[16..16 + FATTR3_BYTES];
        let mut body = vec![0, 0, 0, 0];
        body.extend_from_slice(getattr);
        assert!(matches!(
            decode_getattr(&body, MAX_FILE_SIZE),
            Err(CallError::ImplausibleSize { .. })
        ));
    }

    #[test]
    fn a_file_handle_longer_than_nfs3_allows_is_refused() {
        // MNT3_OK and a handle of 65 bytes.
        let mut b = vec![0, 0, 0, 0, 0, 0, 0, 65];
        b.extend_from_slice(&[0xaa; 68]);
        let e = decode_mnt(&b).unwrap_err();
        assert!(
            matches!(
                e,
                CallError::LengthField {
                    len: 65,
                    max: 64,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(decode_mnt(&[0, 0, 0, 13]).unwrap(), Err(13));
    }

    #[test]
    fn read_data_must_be_what_was_asked_and_what_the_count_says() {
        let read = |count: u32, data: &[u8]| {
            let mut b = vec![0, 0, 0, 0, 0, 0, 0, 0];
            b.extend_from_slice(&count.to_be_bytes());
            b.extend_from_slice(&[0, 0, 0, 1]); // eof
            b.extend_from_slice(&u32::try_from(data.len()).unwrap().to_be_bytes());
            b.extend_from_slice(data);
            b.resize(b.len().div_ceil(4) * 4, 0);
            b
        };
        assert_eq!(
            decode_read(&read(3, b"abc"), 4).unwrap(),
            (&b"abc"[..], true)
        );
        assert!(matches!(
            decode_read(&read(8, b"abcdefgh"), 4),
            Err(CallError::ReadCountOver { count: 8, asked: 4 })
        ));
        // A count within what was asked, but more data than that.
        assert!(matches!(
            decode_read(&read(4, b"abcdefgh"), 4),
            Err(CallError::LengthField { len: 8, max: 4, .. })
        ));
        assert!(matches!(
            decode_read(&read(4, b"ab"), 4),
            Err(CallError::ReadCountMismatch { count: 4, data: 2 })
        ));
    }

    #[test]
    fn fsinfo_transfer_sizes_and_the_largest_file_are_clamped() {
        let fsinfo = |rtmax: u32, wtmax: u32, maxfilesize: u64| {
            let mut b = vec![0, 0, 0, 0, 0, 0, 0, 0];
            for v in [rtmax, 0, 0, wtmax, 0, 0, 0] {
                b.extend_from_slice(&v.to_be_bytes());
            }
            b.extend_from_slice(&maxfilesize.to_be_bytes());
            b
        };
        assert_eq!(
            decode_fsinfo(&fsinfo(0, u32::MAX, u64::MAX)).unwrap(),
            (4096, 1 << 20, MAX_FILE_SIZE)
        );
        assert_eq!(
            decode_fsinfo(&fsinfo(65536, 65536, 0)).unwrap(),
            (65536, 65536, MAX_FILE_SIZE),
            "0 means unknown"
        );
        assert_eq!(
            decode_fsinfo(&fsinfo(65536, 65536, 1 << 40)).unwrap().2,
            1 << 40
        );
    }
}

//! The NFSv3 procedures a file benchmark needs (RFC 1813) and MOUNT v3's MNT.

use crate::rpc::{self, Connection};
use crate::xdr::{Dec, Enc};
use crate::{Error, Target};
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

/// An NFSv3 file handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fh(pub Vec<u8>);

/// How durable a WRITE must be before the server answers (stable_how).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stable {
    /// The server may answer before the data is on stable storage; COMMIT
    /// makes it durable.
    Unstable = 0,
    /// Data and the metadata needed to find it are durable on return.
    DataSync = 1,
    /// Data and all metadata are durable on return.
    FileSync = 2,
}

/// The attributes a benchmark uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr {
    /// ftype3: 1 regular file, 2 directory, ...
    pub ftype: u32,
    pub size: u64,
}

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
    counts: Counts,
    added_rtt: Duration,
    /// Write verifier of the last WRITE: if COMMIT returns another, the
    /// server restarted and dropped unstable data, which must be an error.
    write_verf: Option<[u8; 8]>,
}

fn fail(procedure: &'static str, status: u32) -> Error {
    Error::Status { procedure, status }
}

fn post_op_attr(d: &mut Dec<'_>) -> Result<Option<Attr>, Error> {
    if !d.bool()? {
        return Ok(None);
    }
    let ftype = d.u32()?;
    d.skip(4 * 4)?; // mode, nlink, uid, gid
    let size = d.u64()?;
    d.skip(FATTR3_BYTES - 4 * 5 - 8)?;
    Ok(Some(Attr { ftype, size }))
}

fn wcc_data(d: &mut Dec<'_>) -> Result<(), Error> {
    if d.bool()? {
        d.skip(WCC_ATTR_BYTES)?;
    }
    post_op_attr(d).map(|_| ())
}

fn fh(d: &mut Dec<'_>) -> Result<Fh, Error> {
    Ok(Fh(d.opaque(FHSIZE3)?.to_vec()))
}

fn name_arg(e: &mut Enc, dir: &Fh, name: &str) -> Result<(), Error> {
    e.opaque(&dir.0)?.opaque(name.as_bytes())?;
    Ok(())
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
    /// mounted and the rest looked up.
    pub fn mount(target: &Target) -> Result<Client, Error> {
        let mount_port = match target.mount_port {
            Some(p) => p,
            None => rpc::getport(&target.host, MOUNT_PROGRAM, 3)?,
        };
        let nfs_port = match target.nfs_port {
            Some(p) => p,
            None => rpc::getport(&target.host, NFS_PROGRAM, 3).unwrap_or(2049),
        };
        let mut m = Connection::connect(&target.host, mount_port)?;
        let parts: Vec<&str> = target.path.split('/').filter(|p| !p.is_empty()).collect();
        let mut mounted = None;
        let mut first_error = None;
        for n in (0..=parts.len()).rev() {
            let prefix = format!("/{}", parts[..n].join("/"));
            let mut a = Enc::default();
            a.opaque(prefix.as_bytes())?;
            let body = m.call(MOUNT_PROGRAM, 3, 1, &a.buf)?;
            let mut d = Dec::new(body);
            match d.u32()? {
                0 => {
                    mounted = Some((n, fh(&mut d)?));
                    break;
                }
                s => {
                    first_error.get_or_insert(s);
                }
            }
        }
        let Some((n, mut root)) = mounted else {
            let s = first_error.unwrap_or(2);
            return Err(Error::Protocol(format!(
                "{target}: the server exports no directory on this path (MNT status {s})"
            )));
        };
        let mut c = Client::connect(target.clone(), nfs_port, root.clone())?;
        for name in &parts[n..] {
            root = match c.lookup(&root, name)? {
                Some((h, a)) if a.ftype == 2 => h,
                Some(_) => {
                    return Err(Error::Protocol(format!(
                        "{target}: {name} is not a directory"
                    )))
                }
                None => {
                    return Err(Error::Protocol(format!(
                        "{target}: no directory {name} in the export"
                    )))
                }
            };
        }
        c.root = root;
        c.fsinfo()?;
        c.added_rtt = Duration::from_micros(target.added_rtt_us);
        Ok(c)
    }

    fn connect(target: Target, nfs_port: u16, root: Fh) -> Result<Client, Error> {
        Ok(Client {
            conn: Connection::connect(&target.host, nfs_port)?,
            target,
            nfs_port,
            root,
            rtmax: 32 * 1024,
            wtmax: 32 * 1024,
            counts: Counts::default(),
            added_rtt: Duration::ZERO,
            write_verf: None,
        })
    }

    /// A second connection to the same export (one per benchmark thread, so
    /// threads do not queue behind each other's calls in the client).
    pub fn another(&self) -> Result<Client, Error> {
        let mut c = Client::connect(self.target.clone(), self.nfs_port, self.root.clone())?;
        c.rtmax = self.rtmax;
        c.wtmax = self.wtmax;
        c.added_rtt = self.added_rtt;
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
    /// Emulated network round trip added to every NFS call: each reply is
    /// handed back this much later than it arrived. With one call in flight
    /// per connection this is what a longer cable does, and it costs one timed
    /// wait per call instead of a relay process copying every byte.
    pub fn set_added_rtt(&mut self, rtt: Duration) {
        self.added_rtt = rtt;
    }

    fn nfs(&mut self, proc: u32, args: &[u8]) -> Result<&[u8], Error> {
        if self.added_rtt.is_zero() {
            return self.conn.call(NFS_PROGRAM, 3, proc, args);
        }
        // The reply is handed back the added round trip after it arrived.
        // (`call`'s result borrows the connection, so the wait goes between
        // the call and re-reading the reply it stored.)
        self.conn.call(NFS_PROGRAM, 3, proc, args)?;
        wait_until(Instant::now() + self.added_rtt);
        Ok(self.conn.last_reply())
    }

    fn fsinfo(&mut self) -> Result<(), Error> {
        let mut a = Enc::default();
        a.opaque(&self.root.0.clone())?;
        self.counts.add(OTHER);
        let body = self.nfs(19, &a.buf)?;
        let mut d = Dec::new(body);
        let s = d.u32()?;
        post_op_attr(&mut d)?;
        if s != 0 {
            return Err(fail("FSINFO", s));
        }
        let rtmax = d.u32()?;
        d.skip(8)?; // rtpref, rtmult
        let wtmax = d.u32()?;
        // A server that announces 0 gets the RFC's smallest sane transfer.
        self.rtmax = rtmax.clamp(4096, 1 << 20);
        self.wtmax = wtmax.clamp(4096, 1 << 20);
        Ok(())
    }

    /// LOOKUP `name` in `dir`: None when it does not exist.
    pub fn lookup(&mut self, dir: &Fh, name: &str) -> Result<Option<(Fh, Attr)>, Error> {
        let mut a = Enc::default();
        name_arg(&mut a, dir, name)?;
        self.counts.add(OTHER);
        let body = self.nfs(3, &a.buf)?;
        let mut d = Dec::new(body);
        match d.u32()? {
            0 => {
                let h = fh(&mut d)?;
                let attr = post_op_attr(&mut d)?;
                let attr = match attr {
                    Some(a) => a,
                    None => self.getattr(&h)?,
                };
                Ok(Some((h, attr)))
            }
            2 => Ok(None),
            s => Err(fail("LOOKUP", s)),
        }
    }

    pub fn getattr(&mut self, file: &Fh) -> Result<Attr, Error> {
        let mut a = Enc::default();
        a.opaque(&file.0)?;
        self.counts.add(OTHER);
        let body = self.nfs(1, &a.buf)?;
        let mut d = Dec::new(body);
        match d.u32()? {
            0 => {
                let ftype = d.u32()?;
                d.skip(16)?;
                let size = d.u64()?;
                Ok(Attr { ftype, size })
            }
            s => Err(fail("GETATTR", s)),
        }
    }

    /// CREATE `name` in `dir` with mode 0600. `exclusive`: fail with
    /// NFS3ERR_EXIST if it exists (GUARDED), else open it as it is (UNCHECKED
    /// without a size, so existing data stays).
    pub fn create(&mut self, dir: &Fh, name: &str, exclusive: bool) -> Result<Fh, Error> {
        let mut a = Enc::default();
        name_arg(&mut a, dir, name)?;
        a.u32(u32::from(exclusive)); // createmode3: UNCHECKED 0, GUARDED 1
                                     // sattr3: mode 0600, nothing else.
        a.bool(true).u32(0o600);
        a.bool(false).bool(false).bool(false).u32(0).u32(0);
        self.counts.add(OTHER);
        let body = self.nfs(8, &a.buf)?;
        let mut d = Dec::new(body);
        let s = d.u32()?;
        if s != 0 {
            return Err(fail("CREATE", s));
        }
        let handle = if d.bool()? { Some(fh(&mut d)?) } else { None };
        match handle {
            Some(h) => Ok(h),
            // RFC 1813 lets the server omit the handle; then LOOKUP finds it.
            None => match self.lookup(dir, name)? {
                Some((h, _)) => Ok(h),
                None => Err(fail("CREATE", 2)),
            },
        }
    }

    /// SETATTR the size (truncate or extend).
    pub fn set_size(&mut self, file: &Fh, size: u64) -> Result<(), Error> {
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
        self.counts.add(OTHER);
        let body = self.nfs(2, &a.buf)?;
        let mut d = Dec::new(body);
        match d.u32()? {
            0 => Ok(()),
            s => Err(fail("SETATTR", s)),
        }
    }

    /// One READ call of `buf.len()` bytes (at most `max_read`) at `offset`;
    /// returns the bytes read (fewer at end of file).
    pub fn read(&mut self, file: &Fh, offset: u64, buf: &mut [u8]) -> Result<usize, Error> {
        let count = u32::try_from(buf.len())
            .ok()
            .filter(|&c| c <= self.rtmax)
            .ok_or_else(|| {
                Error::Protocol(format!(
                    "READ of {} bytes exceeds the server's {}",
                    buf.len(),
                    self.rtmax
                ))
            })?;
        let mut a = Enc::default();
        a.opaque(&file.0)?.u64(offset).u32(count);
        self.counts.add(READ);
        let body = self.nfs(6, &a.buf)?;
        let mut d = Dec::new(body);
        let s = d.u32()?;
        post_op_attr(&mut d)?;
        if s != 0 {
            return Err(fail("READ", s));
        }
        d.u32()?; // count, repeated by the data's length
        d.bool()?; // eof
        let data = d.opaque(buf.len())?;
        buf[..data.len()].copy_from_slice(data);
        Ok(data.len())
    }

    /// One WRITE call (at most `max_write` bytes); returns the bytes the
    /// server took and how durable it says they are.
    pub fn write(
        &mut self,
        file: &Fh,
        offset: u64,
        data: &[u8],
        stable: Stable,
    ) -> Result<(usize, Stable), Error> {
        if data.len() > self.wtmax as usize {
            return Err(Error::Protocol(format!(
                "WRITE of {} bytes exceeds the server's {}",
                data.len(),
                self.wtmax
            )));
        }
        let mut a = Enc::default();
        a.opaque(&file.0)?.u64(offset);
        // Checked above: at most wtmax, itself at most 1 MiB.
        a.u32(u32::try_from(data.len()).unwrap_or(u32::MAX))
            .u32(stable as u32);
        a.opaque(data)?;
        self.counts.add(WRITE);
        if stable != Stable::Unstable {
            self.counts.add(STABLE_WRITE);
        }
        let body = self.nfs(7, &a.buf)?;
        let mut d = Dec::new(body);
        let s = d.u32()?;
        wcc_data(&mut d)?;
        if s != 0 {
            return Err(fail("WRITE", s));
        }
        let count = d.u32()? as usize;
        let committed = match d.u32()? {
            0 => Stable::Unstable,
            1 => Stable::DataSync,
            _ => Stable::FileSync,
        };
        let mut verf = [0u8; 8];
        verf.copy_from_slice(d.take_fixed(8)?);
        if committed == Stable::Unstable {
            self.write_verf = Some(verf);
        }
        if (committed as u32) < (stable as u32) {
            return Err(Error::Protocol(format!(
                "the server answered a {stable:?} WRITE as only {committed:?}"
            )));
        }
        Ok((count.min(data.len()), committed))
    }

    /// COMMIT the whole file: everything written unstable reaches stable
    /// storage (what fsync(2) does on a Linux NFS client).
    pub fn commit(&mut self, file: &Fh) -> Result<(), Error> {
        let mut a = Enc::default();
        a.opaque(&file.0)?.u64(0).u32(0);
        self.counts.add(COMMIT);
        let body = self.nfs(21, &a.buf)?;
        let mut d = Dec::new(body);
        let s = d.u32()?;
        wcc_data(&mut d)?;
        if s != 0 {
            return Err(fail("COMMIT", s));
        }
        let mut verf = [0u8; 8];
        verf.copy_from_slice(d.take_fixed(8)?);
        match self.write_verf {
            Some(w) if w != verf => Err(Error::Protocol(
                "the server restarted between WRITE and COMMIT: unstable data was lost".into(),
            )),
            _ => Ok(()),
        }
    }

    /// REMOVE `name` from `dir`; Ok(false) if it did not exist.
    pub fn remove(&mut self, dir: &Fh, name: &str) -> Result<bool, Error> {
        let mut a = Enc::default();
        name_arg(&mut a, dir, name)?;
        self.counts.add(OTHER);
        let body = self.nfs(12, &a.buf)?;
        let mut d = Dec::new(body);
        match d.u32()? {
            0 => Ok(true),
            2 => Ok(false),
            s => Err(fail("REMOVE", s)),
        }
    }
}

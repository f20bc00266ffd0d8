//! ONC RPC version 2 (RFC 5531) over TCP: record marking, AUTH_SYS
//! credentials, one call in flight per connection.
//!
//! Every call has one deadline for all of it: sending the call and
//! receiving every byte of its reply. Each blocking read or write waits at
//! most until that deadline, so a server that drips its reply a byte at a
//! time, or sends replies to other calls for ever, fails the call when the
//! deadline passes instead of holding it for ever. Nothing is allocated from
//! a length the server sent without checking it against a limit first.

use super::error::{CallError, Error};
use super::xdr::{Dec, Enc};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

const CALL: u32 = 0;
const REPLY: u32 = 1;
const MSG_ACCEPTED: u32 = 0;
const AUTH_NONE: u32 = 0;
const AUTH_SYS: u32 = 1;
const LAST_FRAGMENT: u32 = 0x8000_0000;
/// Largest record accepted from a server: the largest READ reply this client
/// can ask for (transfers are clamped to 1 MiB) plus headers, with room to
/// spare; anything bigger is a broken or hostile stream, refused before any
/// of it is allocated.
pub(crate) const MAX_RECORD: usize = (1 << 20) + (64 << 10);
/// RFC 5531 limits an authentication body (the reply's verifier) to 400 bytes.
const MAX_AUTH_BYTES: usize = 400;
/// Replies to other calls skipped before the call fails. With one call in
/// flight per connection the only legitimate ones are late replies to a call
/// that already failed; a server sending more is broken.
pub(crate) const MAX_STRAY_REPLIES: u32 = 16;
/// How far a socket timeout may run past the call's deadline before it is
/// set again: resetting it before every read would cost a system call per
/// read on the benchmark's hot path, and a few milliseconds late is still
/// within any deadline worth setting.
const TIMEOUT_SLACK: Duration = Duration::from_millis(5);

pub(crate) struct Connection {
    stream: TcpStream,
    /// `host:port`, for errors.
    server: String,
    xid: u32,
    cred: Vec<u8>,
    reply: Vec<u8>,
    /// Where the result body of the last reply starts in `reply`.
    body_at: usize,
    /// The socket's current receive and send timeouts.
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    /// A call failed in a way that leaves the stream in an unknown state
    /// (part of a record read or sent): later calls fail at once.
    broken: bool,
}

/// The time left until `deadline`, or the deadline error.
fn left(deadline: Instant, timeout: Duration, received: usize) -> Result<Duration, CallError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(CallError::Deadline {
            deadline: timeout,
            received,
        })
    } else {
        Ok(left)
    }
}

/// Whether a socket timeout `current` must be lowered (or set) so that a
/// blocking call ends by the deadline `left` from now.
fn needs_reset(current: Option<Duration>, left: Duration) -> bool {
    current.is_none_or(|c| c > left + TIMEOUT_SLACK)
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

impl Connection {
    /// Connect to `host:port` within `timeout`; `procedure` names the
    /// connection in the error ("NFS connect", "MOUNT connect").
    pub(crate) fn connect(
        host: &str,
        port: u16,
        timeout: Duration,
        procedure: &'static str,
    ) -> Result<Connection, Error> {
        let server = format!("{host}:{port}");
        let fail = |kind| Error::Call {
            server: server.clone(),
            procedure,
            kind,
        };
        let addrs: Vec<SocketAddr> = (host, port)
            .to_socket_addrs()
            .map_err(|e| fail(CallError::Connect(e)))?
            .collect();
        let mut last = None;
        for a in &addrs {
            match TcpStream::connect_timeout(a, timeout) {
                Ok(stream) => return Connection::over(stream, server.clone()).map_err(fail),
                Err(e) => last = Some(e),
            }
        }
        Err(fail(CallError::Connect(last.unwrap_or_else(|| {
            std::io::Error::new(ErrorKind::NotFound, "the name has no address")
        }))))
    }

    fn over(stream: TcpStream, server: String) -> Result<Connection, CallError> {
        stream.set_nodelay(true).map_err(CallError::Connect)?;
        // AUTH_SYS as root (RFC 5531 appendix A): the lab's exports squash
        // nothing, and a NAS export for a hypervisor is mounted the same way.
        let mut cred = Enc::default();
        cred.u32(0).opaque(b"tankbench")?.u32(0).u32(0).u32(0);
        // Seed transaction ids from the clock, so a reconnect after a server
        // restart does not replay ids its duplicate-request cache may hold.
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.subsec_nanos() ^ std::process::id());
        Ok(Connection {
            stream,
            server,
            xid: seed,
            cred: cred.buf,
            reply: Vec::new(),
            body_at: 0,
            read_timeout: None,
            write_timeout: None,
            broken: false,
        })
    }

    /// The result body of the last successful call.
    pub(crate) fn last_reply(&self) -> &[u8] {
        &self.reply[self.body_at..]
    }

    /// `host:port` of the server.
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// Call `prog`.`vers`.`proc` with an encoded argument body; returns the
    /// result body (after an accepted, successful reply header). The whole
    /// call, send and complete reply, must finish within `timeout`.
    pub(crate) fn call(
        &mut self,
        prog: u32,
        vers: u32,
        proc: u32,
        args: &[u8],
        timeout: Duration,
    ) -> Result<&[u8], CallError> {
        if self.broken {
            return Err(CallError::Unusable);
        }
        let deadline = Instant::now() + timeout;
        match self.exchange(prog, vers, proc, args, deadline, timeout) {
            Ok(at) => {
                self.body_at = at;
                Ok(&self.reply[at..])
            }
            Err(e) => {
                if matches!(
                    e,
                    CallError::Transport(_)
                        | CallError::Deadline { .. }
                        | CallError::RecordTooLong { .. }
                        | CallError::XidMismatch { .. }
                ) {
                    self.broken = true;
                }
                Err(e)
            }
        }
    }

    /// Send the call and read replies until its own; returns where the
    /// result body starts in `self.reply`.
    fn exchange(
        &mut self,
        prog: u32,
        vers: u32,
        proc: u32,
        args: &[u8],
        deadline: Instant,
        timeout: Duration,
    ) -> Result<usize, CallError> {
        self.xid = self.xid.wrapping_add(1);
        let xid = self.xid;
        let mut msg = Enc::default();
        msg.u32(0) // record mark, filled below
            .u32(xid)
            .u32(CALL)
            .u32(2)
            .u32(prog)
            .u32(vers)
            .u32(proc)
            .u32(AUTH_SYS);
        msg.opaque(&self.cred)?;
        msg.u32(AUTH_NONE).u32(0);
        msg.buf.extend_from_slice(args);
        let len = u32::try_from(msg.buf.len() - 4)
            .ok()
            .filter(|&l| l < LAST_FRAGMENT)
            .ok_or(CallError::CallTooLarge {
                len: msg.buf.len() - 4,
            })?;
        msg.buf[..4].copy_from_slice(&(LAST_FRAGMENT | len).to_be_bytes());
        self.send(&msg.buf, deadline, timeout)?;
        let mut skipped = 0;
        let mut received = 0;
        loop {
            self.read_record(deadline, timeout, &mut received)?;
            if let Some(at) = decode_reply_header(&self.reply, xid)? {
                return Ok(at);
            }
            // A late reply to a call that failed earlier: not ours.
            skipped += 1;
            if skipped >= MAX_STRAY_REPLIES {
                return Err(CallError::XidMismatch { skipped });
            }
        }
    }

    fn send(
        &mut self,
        mut data: &[u8],
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(), CallError> {
        while !data.is_empty() {
            let left = left(deadline, timeout, 0)?;
            if needs_reset(self.write_timeout, left) {
                self.stream
                    .set_write_timeout(Some(left))
                    .map_err(CallError::Transport)?;
                self.write_timeout = Some(left);
            }
            match self.stream.write(data) {
                Ok(0) => {
                    return Err(CallError::Transport(ErrorKind::WriteZero.into()));
                }
                Ok(n) => data = &data[n..],
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // Timed out early (the timeout was set for an earlier,
                // later deadline): wait again for what is left.
                Err(e) if is_timeout(&e) => self.write_timeout = None,
                Err(e) => return Err(CallError::Transport(e)),
            }
        }
        Ok(())
    }

    /// Fill `self.reply[from..]` from the socket by the deadline.
    fn fill(
        &mut self,
        from: usize,
        deadline: Instant,
        timeout: Duration,
        received: &mut usize,
    ) -> Result<(), CallError> {
        let mut at = from;
        while at < self.reply.len() {
            let left = left(deadline, timeout, *received)?;
            if needs_reset(self.read_timeout, left) {
                self.stream
                    .set_read_timeout(Some(left))
                    .map_err(CallError::Transport)?;
                self.read_timeout = Some(left);
            }
            match self.stream.read(&mut self.reply[at..]) {
                Ok(0) => {
                    return Err(CallError::Transport(std::io::Error::new(
                        ErrorKind::UnexpectedEof,
                        format!(
                            "the server closed it after {} bytes of the reply",
                            *received
                        ),
                    )))
                }
                Ok(n) => {
                    at += n;
                    *received += n;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // See `send`: a timeout set for an earlier call's deadline.
                Err(e) if is_timeout(&e) => self.read_timeout = None,
                Err(e) => return Err(CallError::Transport(e)),
            }
        }
        Ok(())
    }

    fn read_record(
        &mut self,
        deadline: Instant,
        timeout: Duration,
        received: &mut usize,
    ) -> Result<(), CallError> {
        self.reply.clear();
        loop {
            let start = self.reply.len();
            self.reply.resize(start + 4, 0);
            self.fill(start, deadline, timeout, received)?;
            let mark = u32::from_be_bytes([
                self.reply[start],
                self.reply[start + 1],
                self.reply[start + 2],
                self.reply[start + 3],
            ]);
            self.reply.truncate(start);
            let len = check_fragment(start, mark)?;
            self.reply.resize(start + len, 0);
            self.fill(start, deadline, timeout, received)?;
            if mark & LAST_FRAGMENT != 0 {
                return Ok(());
            }
        }
    }
}

/// The length of a fragment with record mark `mark` after `so_far` bytes of
/// the record, if the whole record stays within [`MAX_RECORD`].
pub(crate) fn check_fragment(so_far: usize, mark: u32) -> Result<usize, CallError> {
    let len = (mark & !LAST_FRAGMENT) as usize;
    let total = so_far + len;
    if total > MAX_RECORD {
        return Err(CallError::RecordTooLong {
            len: total as u64,
            max: MAX_RECORD,
        });
    }
    Ok(len)
}

/// Decode an RPC reply's header: Ok(None) if it answers another call (its
/// xid is not `xid`), else where the result body starts, or why the call was
/// not run.
pub(crate) fn decode_reply_header(record: &[u8], xid: u32) -> Result<Option<usize>, CallError> {
    let mut d = Dec::new(record);
    if d.u32()? != xid {
        return Ok(None);
    }
    let kind = d.u32()?;
    if kind != REPLY {
        return Err(CallError::NotAReply { kind });
    }
    if d.u32()? != MSG_ACCEPTED {
        return Err(CallError::Denied);
    }
    d.u32()?; // verifier flavor
    d.opaque(MAX_AUTH_BYTES, "a verifier")?;
    match d.u32()? {
        0 => Ok(Some(record.len() - d.remaining())),
        status => Err(CallError::NotAccepted { status }),
    }
}

/// The port of `prog` version `vers` over TCP, from the portmapper
/// (RFC 1833, version 2 PMAPPROC_GETPORT) on port 111 of `host`.
pub(crate) fn getport(host: &str, prog: u32, vers: u32, timeout: Duration) -> Result<u16, Error> {
    let mut c = Connection::connect(host, 111, timeout, "portmapper connect")?;
    let fail = |kind| Error::Call {
        server: format!("{host}:111"),
        procedure: "GETPORT",
        kind,
    };
    let mut a = Enc::default();
    a.u32(prog).u32(vers).u32(6).u32(0);
    let body = c.call(100_000, 2, 3, &a.buf, timeout).map_err(fail)?;
    let port = Dec::new(body).u32().map_err(fail)?;
    match u16::try_from(port) {
        Ok(p) if p != 0 => Ok(p),
        _ => Err(fail(CallError::NoPort { prog, vers })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply header as a server sends it: xid, REPLY, MSG_ACCEPTED,
    /// AUTH_NONE verifier, SUCCESS, then the body.
    fn reply(xid: u32, body: &[u8]) -> Vec<u8> {
        let mut e = Enc::default();
        e.u32(xid)
            .u32(REPLY)
            .u32(MSG_ACCEPTED)
            .u32(AUTH_NONE)
            .u32(0)
            .u32(0);
        e.buf.extend_from_slice(body);
        e.buf
    }

    #[test]
    fn a_reply_header_is_decoded_and_another_calls_reply_is_told_apart() {
        let r = reply(7, &[0, 0, 0, 9]);
        assert_eq!(decode_reply_header(&r, 7).unwrap(), Some(24));
        assert_eq!(decode_reply_header(&r, 8).unwrap(), None);
    }

    #[test]
    fn hostile_reply_headers_are_refused_with_what_is_wrong() {
        // Recorded: a verifier announcing 0x7fffffff bytes.
        let r = [
            0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff,
        ];
        let e = decode_reply_header(&r, 7).unwrap_err();
        assert!(
            matches!(
                e,
                CallError::LengthField {
                    len: 0x7fff_ffff,
                    max: 400,
                    ..
                }
            ),
            "{e}"
        );
        // A CALL where a reply belongs.
        let r = [0, 0, 0, 7, 0, 0, 0, 0];
        assert!(matches!(
            decode_reply_header(&r, 7),
            Err(CallError::NotAReply { kind: 0 })
        ));
        // MSG_DENIED.
        let r = [0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1];
        assert!(matches!(decode_reply_header(&r, 7), Err(CallError::Denied)));
        // PROC_UNAVAIL.
        let mut r = reply(7, &[]);
        r[23] = 3;
        let e = decode_reply_header(&r, 7).unwrap_err();
        assert!(e.to_string().contains("PROC_UNAVAIL"), "{e}");
        // Cut short in the middle of the verifier.
        let e = decode_reply_header(&reply(7, &[])[..14], 7).unwrap_err();
        assert!(matches!(e, CallError::Truncated { len: 14, .. }), "{e}");
    }

    #[test]
    fn a_record_mark_beyond_the_largest_reply_is_refused_before_allocation() {
        // Recorded: the last-fragment bit and a length of 2^31 - 1.
        let e = check_fragment(0, 0xffff_ffff).unwrap_err();
        assert!(
            matches!(
                e,
                CallError::RecordTooLong {
                    len: 0x7fff_ffff,
                    max: MAX_RECORD
                }
            ),
            "{e}"
        );
        // Fragments that add up past the limit.
        assert_eq!(check_fragment(0, 1 << 20).unwrap(), 1 << 20);
        assert!(check_fragment(1 << 20, 1 << 20).is_err());
    }

    #[test]
    fn a_socket_timeout_is_reset_only_when_it_would_outlast_the_deadline() {
        let s = Duration::from_secs;
        assert!(needs_reset(None, s(1)));
        assert!(needs_reset(Some(s(60)), s(1)));
        assert!(!needs_reset(Some(s(1)), s(1)));
        assert!(!needs_reset(Some(s(1)), s(1) - Duration::from_millis(2)));
    }
}

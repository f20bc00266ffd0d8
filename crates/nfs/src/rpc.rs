//! ONC RPC version 2 (RFC 5531) over TCP: record marking, AUTH_SYS
//! credentials, one call in flight per connection.

use crate::xdr::{Dec, Enc};
use crate::Error;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

const CALL: u32 = 0;
const REPLY: u32 = 1;
const MSG_ACCEPTED: u32 = 0;
const AUTH_NONE: u32 = 0;
const AUTH_SYS: u32 = 1;
const LAST_FRAGMENT: u32 = 0x8000_0000;
/// Largest record accepted from a server: a READ reply of the largest
/// transfer any common server offers (ganesha and Linux knfsd: 1 MiB) plus
/// headers, with room to spare; anything bigger is a broken stream.
const MAX_RECORD: usize = 8 << 20;

/// How long a reply may take before the call fails instead of hanging: a
/// COMMIT on a slow pool waits for a transaction group (seconds), so this is
/// generous.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

pub struct Connection {
    stream: TcpStream,
    xid: u32,
    cred: Vec<u8>,
    reply: Vec<u8>,
    /// Where the result body of the last reply starts in `reply`.
    body_at: usize,
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { what, source }
}

impl Connection {
    pub fn connect(host: &str, port: u16) -> Result<Connection, Error> {
        let addrs: Vec<SocketAddr> = (host, port)
            .to_socket_addrs()
            .map_err(io(format!("resolve {host}")))?
            .collect();
        let mut last = None;
        for a in &addrs {
            match TcpStream::connect_timeout(a, Duration::from_secs(10)) {
                Ok(stream) => return Connection::over(stream),
                Err(e) => last = Some(e),
            }
        }
        Err(Error::Io {
            what: format!("connect to {host}:{port}"),
            source: last.unwrap_or_else(|| std::io::Error::other("no address")),
        })
    }

    fn over(stream: TcpStream) -> Result<Connection, Error> {
        stream
            .set_nodelay(true)
            .map_err(io("set TCP_NODELAY".into()))?;
        stream
            .set_read_timeout(Some(REPLY_TIMEOUT))
            .map_err(io("set the reply timeout".into()))?;
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
            xid: seed,
            cred: cred.buf,
            reply: Vec::new(),
            body_at: 0,
        })
    }

    /// Call `prog`.`vers`.`proc` with an encoded argument body; returns the
    /// result body (after an accepted, successful reply header).
    pub fn call(&mut self, prog: u32, vers: u32, proc: u32, args: &[u8]) -> Result<&[u8], Error> {
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
            .ok_or_else(|| Error::Protocol("call too large for one RPC record".into()))?;
        msg.buf[..4].copy_from_slice(&(LAST_FRAGMENT | len).to_be_bytes());
        self.stream
            .write_all(&msg.buf)
            .map_err(io("send an RPC call".into()))?;
        loop {
            self.read_record()?;
            let mut d = Dec::new(&self.reply);
            if d.u32()? != xid {
                // A late reply to a call that timed out earlier: not ours.
                continue;
            }
            if d.u32()? != REPLY {
                return Err(Error::Protocol("RPC message is not a reply".into()));
            }
            if d.u32()? != MSG_ACCEPTED {
                return Err(Error::Protocol(format!(
                    "RPC call to program {prog} denied by the server (authentication or version)"
                )));
            }
            d.u32()?; // verifier flavor
            d.opaque(400)?;
            match d.u32()? {
                0 => {}
                1 => return Err(Error::Protocol(format!("program {prog} unavailable"))),
                2 => {
                    return Err(Error::Protocol(format!(
                        "program {prog} version {vers} unavailable"
                    )))
                }
                3 => {
                    return Err(Error::Protocol(format!(
                        "procedure {proc} of program {prog} unavailable"
                    )))
                }
                s => {
                    return Err(Error::Protocol(format!(
                        "RPC call failed (accept status {s})"
                    )))
                }
            }
            self.body_at = self.reply.len() - d.remaining();
            return Ok(&self.reply[self.body_at..]);
        }
    }

    /// The result body of the last successful call.
    pub fn last_reply(&self) -> &[u8] {
        &self.reply[self.body_at..]
    }

    fn read_record(&mut self) -> Result<(), Error> {
        self.reply.clear();
        loop {
            let mut mark = [0u8; 4];
            self.stream
                .read_exact(&mut mark)
                .map_err(io("read an RPC reply".into()))?;
            let mark = u32::from_be_bytes(mark);
            let len = (mark & !LAST_FRAGMENT) as usize;
            if self.reply.len() + len > MAX_RECORD {
                return Err(Error::Protocol(format!(
                    "RPC reply larger than {MAX_RECORD} bytes"
                )));
            }
            let start = self.reply.len();
            self.reply.resize(start + len, 0);
            self.stream
                .read_exact(&mut self.reply[start..])
                .map_err(io("read an RPC reply".into()))?;
            if mark & LAST_FRAGMENT != 0 {
                return Ok(());
            }
        }
    }
}

/// The port of `prog` version `vers` over TCP, from the portmapper
/// (RFC 1833, version 2 PMAPPROC_GETPORT) on port 111 of `host`.
pub fn getport(host: &str, prog: u32, vers: u32) -> Result<u16, Error> {
    let mut c = Connection::connect(host, 111)?;
    let mut a = Enc::default();
    a.u32(prog).u32(vers).u32(6).u32(0);
    let body = c.call(100_000, 2, 3, &a.buf)?;
    let port = Dec::new(body).u32()?;
    match u16::try_from(port) {
        Ok(p) if p != 0 => Ok(p),
        _ => Err(Error::Protocol(format!(
            "the portmapper of {host} knows no TCP service for program {prog} version {vers}"
        ))),
    }
}

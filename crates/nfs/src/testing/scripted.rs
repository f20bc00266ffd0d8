//! A scripted ONC RPC peer on 127.0.0.1 for tests: it speaks just enough
//! record marking to read calls, and answers each with whatever a test's
//! script writes, so the client can be tried against servers that are
//! broken or hostile in one exact way (wrong transaction ids, a reply
//! dripped a byte at a time, WRITE counts that lie) without root or
//! nfs-ganesha. Not used by tankbench itself.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

pub const MOUNT_PROGRAM: u32 = 100_005;
pub const NFS_PROGRAM: u32 = 100_003;
/// The handle the scripted MNT hands out, and the one CREATE does.
pub const ROOT_FH: &[u8] = b"root-fh!";
pub const FILE_FH: &[u8] = b"file-fh!";

/// One call as the peer read it.
#[derive(Debug, Clone)]
pub struct Call {
    pub xid: u32,
    pub prog: u32,
    pub proc_: u32,
    /// The argument body (after the credential and verifier).
    pub(crate) args: Vec<u8>,
}

impl Call {
    /// For a WRITE: the count of bytes sent (after the handle and offset).
    pub fn write_count(&self) -> u32 {
        let fh_len = be32(&self.args, 0) as usize;
        be32(&self.args, 4 + fh_len.div_ceil(4) * 4 + 8)
    }
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// What a script does with one call: write to the connection (usually one
/// [`reply`]) or fail, which closes it.
pub(crate) type Script = dyn Fn(&Call, &mut TcpStream) -> std::io::Result<()> + Send + Sync;

/// A peer listening on 127.0.0.1; each connection gets its own thread
/// running the script for every call, until the client goes away.
pub struct Peer {
    pub port: u16,
}

impl Peer {
    pub fn start(
        script: impl Fn(&Call, &mut TcpStream) -> std::io::Result<()> + Send + Sync + 'static,
    ) -> Peer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("local address").port();
        let script: Arc<Script> = Arc::new(script);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let script = Arc::clone(&script);
                std::thread::spawn(move || {
                    while let Ok(call) = read_call(&mut stream) {
                        if script(&call, &mut stream).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Peer { port }
    }

    /// `nfs://127.0.0.1/export` with both MOUNT and NFS on this peer.
    pub fn url(&self) -> String {
        format!(
            "nfs://127.0.0.1/export?mountport={0}&nfsport={0}",
            self.port
        )
    }
}

fn read_call(s: &mut TcpStream) -> std::io::Result<Call> {
    let mut record = Vec::new();
    loop {
        let mut mark = [0u8; 4];
        s.read_exact(&mut mark)?;
        let mark = u32::from_be_bytes(mark);
        let start = record.len();
        record.resize(start + (mark & 0x7fff_ffff) as usize, 0);
        s.read_exact(&mut record[start..])?;
        if mark & 0x8000_0000 != 0 {
            break;
        }
    }
    let bad = || std::io::Error::other("not an RPC call");
    if record.len() < 40 {
        return Err(bad());
    }
    // xid, CALL, rpcvers, prog, vers, proc, then credential and verifier.
    let mut at = 24;
    for _ in 0..2 {
        let len = be32(&record, at + 4) as usize;
        at += 8 + len.div_ceil(4) * 4;
        if at > record.len() {
            return Err(bad());
        }
    }
    Ok(Call {
        xid: be32(&record, 0),
        prog: be32(&record, 12),
        proc_: be32(&record, 20),
        args: record[at..].to_vec(),
    })
}

/// XDR building for scripts.
#[derive(Default, Clone)]
pub struct Xdr(pub Vec<u8>);

impl Xdr {
    pub fn u32(mut self, v: u32) -> Xdr {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub(crate) fn u64(mut self, v: u64) -> Xdr {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn opaque(mut self, data: &[u8]) -> Xdr {
        self = self.u32(u32::try_from(data.len()).expect("a scripted opaque under 4 GiB"));
        self.0.extend_from_slice(data);
        self.0.resize(self.0.len().div_ceil(4) * 4, 0);
        self
    }
    pub fn bytes(mut self, data: &[u8]) -> Xdr {
        self.0.extend_from_slice(data);
        self
    }
    /// fattr3 of a regular file (or a directory) of `size` bytes.
    pub(crate) fn fattr3(self, ftype: u32, size: u64) -> Xdr {
        self.u32(ftype)
            .u32(0o644)
            .u32(1)
            .u32(0)
            .u32(0)
            .u64(size)
            .u64(size)
            .u64(0)
            .u64(1)
            .u64(2)
            .bytes(&[0; 24])
    }
}

/// A whole record: one last fragment holding `msg`.
pub(crate) fn record(msg: &[u8]) -> Vec<u8> {
    let len = u32::try_from(msg.len()).expect("a scripted record under 2 GiB");
    let mut r = (0x8000_0000 | len).to_be_bytes().to_vec();
    r.extend_from_slice(msg);
    r
}

/// An accepted, successful reply to `xid` with result `body`, as a record.
pub fn reply(xid: u32, body: &[u8]) -> Vec<u8> {
    record(
        &Xdr::default()
            .u32(xid)
            .u32(1) // REPLY
            .u32(0) // MSG_ACCEPTED
            .u32(0)
            .u32(0) // AUTH_NONE verifier
            .u32(0) // SUCCESS
            .bytes(body)
            .0,
    )
}

/// The result a sane server gives for MNT, FSINFO, CREATE, LOOKUP (a file
/// of `file_size` bytes), WRITE (all of it, FILE_SYNC), COMMIT and REMOVE;
/// None for other procedures.
pub fn sane_result(call: &Call, file_size: u64) -> Option<Vec<u8>> {
    let ok = Xdr::default().u32(0);
    let verf = [7u8; 8];
    let body = match (call.prog, call.proc_) {
        (MOUNT_PROGRAM, 1) => ok.opaque(ROOT_FH).u32(1).u32(1),
        (NFS_PROGRAM, 19) => ok
            .u32(0) // no attributes
            .u32(65536)
            .u32(65536)
            .u32(4096)
            .u32(65536)
            .u32(65536)
            .u32(4096)
            .u32(4096)
            .u64(u64::MAX) // maxfilesize: "no limit", as some servers say
            .u32(0)
            .u32(1)
            .u32(0x1b),
        (NFS_PROGRAM, 8) => ok.u32(1).opaque(FILE_FH).u32(0).u32(0).u32(0),
        (NFS_PROGRAM, 3) => ok.opaque(FILE_FH).u32(1).fattr3(1, file_size).u32(0),
        (NFS_PROGRAM, 7) => ok.u32(0).u32(0).u32(call.write_count()).u32(2).bytes(&verf),
        (NFS_PROGRAM, 21) => ok.u32(0).u32(0).bytes(&verf),
        (NFS_PROGRAM, 12) => ok.u32(0).u32(0),
        _ => return None,
    };
    Some(body.0)
}

/// Answer `call` as a sane server would (see [`sane_result`]).
pub fn answer_sanely(call: &Call, s: &mut TcpStream, file_size: u64) -> std::io::Result<()> {
    let body = sane_result(call, file_size)
        .ok_or_else(|| std::io::Error::other(format!("no script for procedure {}", call.proc_)))?;
    s.write_all(&reply(call.xid, &body))
}

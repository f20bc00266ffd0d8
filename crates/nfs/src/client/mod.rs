//! A small NFSv3 client (RFC 1813) over TCP, written for benchmarking: one
//! call in flight per connection, every READ, WRITE and COMMIT one RPC the
//! caller asked for (no client cache, no read-ahead, no write-behind), so a
//! benchmark's requests reach the server one for one, and writes can be sent
//! stable (FILE_SYNC, as VMware ESXi's NFS client sends every write of a
//! virtual disk) or unstable followed by COMMIT on fsync (as the Linux client
//! does). Also: the nfs-ganesha server configuration the lab runs.
//!
//! Why not libnfs: linking it would make the tankbench binary need
//! libnfs.so at run time even for local runs, and its synchronous API hides
//! the RPCs a benchmark needs to count and to delay; the procedures used here
//! are a few hundred lines of XDR.

pub mod fixture;
pub mod ganesha;
pub mod mountns;
mod nfs3;
mod rpc;
pub mod scripted;
mod xdr;

pub use nfs3::{process_counts, Attr, Client, Counts, Fh, Stable, MAX_SHORT_RESENDS};
use std::time::Duration;

/// How long one call may take, from sending it to the last byte of its
/// reply, before it fails (the whole reply, not each read): the Linux
/// client's default `timeo` for TCP mounts. A COMMIT gets
/// [`COMMIT_DEADLINE_FACTOR`] times as long. Set per export with the URL's
/// `timeout_s=N`.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// A COMMIT makes durable everything written unstably since the last one,
/// which on a slow pool can be gigabytes at tens of MB/s, so it may take
/// this many times the call timeout (10 minutes by default).
pub const COMMIT_DEADLINE_FACTOR: u32 = 10;

/// What went wrong, with the errno a file system call would have failed with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A local step (starting the lab's server, a namespace) failed.
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    /// A call to a server failed: one line naming the server (host:port),
    /// the procedure and why.
    #[error("NFS server {server}: {procedure} {kind}")]
    Call {
        server: String,
        procedure: &'static str,
        kind: CallError,
    },
    /// The lab's local server setup is not as expected.
    #[error("{0}")]
    Protocol(String),
    /// A bad `nfs://` address (one line naming what is wrong).
    #[error("{0}")]
    Address(String),
}

/// Why one call failed; the text follows the procedure's name.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("failed: {0}")]
    Connect(#[source] std::io::Error),
    #[error("failed: the connection broke: {0}")]
    Transport(#[source] std::io::Error),
    #[error("was not sent: the connection failed on an earlier call")]
    Unusable,
    #[error("got no complete reply within its {} s deadline ({received} bytes of it received)", secs(*.deadline))]
    Deadline { deadline: Duration, received: usize },
    #[error("got {skipped} replies with another call's transaction id and none with its own")]
    XidMismatch { skipped: u32 },
    #[error("reply announced a record of {len} bytes, more than the {max} a reply can need")]
    RecordTooLong { len: u64, max: usize },
    #[error("reply announced {field} of {len} bytes, more than the {max} allowed")]
    LengthField {
        field: &'static str,
        len: u64,
        max: u64,
    },
    #[error("reply ends after {len} bytes, {more} more expected")]
    Truncated { len: usize, more: usize },
    #[error("reply holds {value} where an XDR bool (0 or 1) belongs")]
    BadBool { value: u32 },
    #[error("reply holds {value} where a stable_how (0 to 2) belongs")]
    BadStableHow { value: u32 },
    #[error("reply is not an RPC reply (message type {kind})")]
    NotAReply { kind: u32 },
    #[error("was denied by the server (RPC authentication or version)")]
    Denied,
    #[error("was not run: {}", accept_status_name(*.status))]
    NotAccepted { status: u32 },
    #[error("failed: {}", status_name(*.0))]
    Status(u32),
    #[error("was not sent: an argument of {len} bytes does not fit one XDR opaque")]
    ArgumentTooLarge { len: usize },
    #[error("was not sent: {len} bytes do not fit one RPC record")]
    CallTooLarge { len: usize },
    #[error("of {len} bytes was not sent: the server takes at most {max}")]
    TransferTooLarge { len: usize, max: u32 },
    #[error("reply claims {count} bytes written of the {sent} sent")]
    WriteCountOver { count: u32, sent: usize },
    #[error("took 0 of {sent} bytes (no progress is an error, as in the Linux client)")]
    NoProgress { sent: usize },
    #[error("took only {done} of {sent} bytes in {calls} calls")]
    ShortWrites {
        done: usize,
        sent: usize,
        calls: u32,
    },
    #[error("reply claims {count} bytes read where {asked} were asked")]
    ReadCountOver { count: u32, asked: usize },
    #[error("reply claims {count} bytes read but carries {data}")]
    ReadCountMismatch { count: u32, data: usize },
    #[error("reply claims a file of {size} bytes, more than the {max} a file can have")]
    ImplausibleSize { size: u64, max: u64 },
    #[error("was answered {got:?} where {asked:?} was asked")]
    WeakerStability { asked: Stable, got: Stable },
    #[error("returned another write verifier: the server restarted and dropped unstable data")]
    VerifierChanged,
    #[error("found no TCP service for program {prog} version {vers}")]
    NoPort { prog: u32, vers: u32 },
    #[error("found no exported directory on the path {path} (MNT status {status})")]
    NotExported { path: String, status: u32 },
    #[error("found {name}, which is not a directory")]
    NotADirectory { name: String },
    #[error("found no directory {name} in the export")]
    NoSuchDirectory { name: String },
}

/// Seconds, as short as they print exactly to the millisecond.
fn secs(d: Duration) -> String {
    let s = format!("{:.3}", d.as_secs_f64());
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn accept_status_name(s: u32) -> String {
    match s {
        1 => "PROG_UNAVAIL (the server does not offer this program)".into(),
        2 => "PROG_MISMATCH (the server does not offer this version)".into(),
        3 => "PROC_UNAVAIL (the server does not offer this procedure)".into(),
        4 => "GARBAGE_ARGS (the server could not decode the arguments)".into(),
        5 => "SYSTEM_ERR (the server failed)".into(),
        s => format!("RPC accept status {s}"),
    }
}

impl Error {
    /// The errno a local file system would report for this failure: NFS3ERR
    /// codes below 100 are errno values by design (RFC 1813 section 2.6),
    /// except those Linux numbers differently; a missed deadline is
    /// ETIMEDOUT; everything else is EIO.
    pub fn errno(&self) -> i32 {
        match self {
            Error::Io { source, .. } => source.raw_os_error().unwrap_or(libc::EIO),
            Error::Call { kind, .. } => match kind {
                CallError::Status(status) => match *status {
                    s @ (1 | 2 | 5 | 6 | 13 | 17 | 18 | 19 | 20 | 21 | 22 | 27 | 28 | 30 | 31) => {
                        i32::try_from(s).unwrap_or(libc::EIO)
                    }
                    63 => libc::ENAMETOOLONG,
                    66 => libc::ENOTEMPTY,
                    69 => libc::EDQUOT,
                    70 => libc::ESTALE,
                    _ => libc::EIO,
                },
                CallError::Deadline { .. } => libc::ETIMEDOUT,
                CallError::Connect(e) | CallError::Transport(e) => {
                    e.raw_os_error().unwrap_or(libc::EIO)
                }
                _ => libc::EIO,
            },
            Error::Protocol(_) | Error::Address(_) => libc::EIO,
        }
    }

    /// Why the call failed, when it was a call.
    pub fn call_error(&self) -> Option<&CallError> {
        match self {
            Error::Call { kind, .. } => Some(kind),
            _ => None,
        }
    }
}

fn status_name(s: u32) -> String {
    let name = match s {
        1 => "NFS3ERR_PERM",
        2 => "NFS3ERR_NOENT",
        5 => "NFS3ERR_IO",
        6 => "NFS3ERR_NXIO",
        13 => "NFS3ERR_ACCES",
        17 => "NFS3ERR_EXIST",
        18 => "NFS3ERR_XDEV",
        19 => "NFS3ERR_NODEV",
        20 => "NFS3ERR_NOTDIR",
        21 => "NFS3ERR_ISDIR",
        22 => "NFS3ERR_INVAL",
        27 => "NFS3ERR_FBIG",
        28 => "NFS3ERR_NOSPC",
        30 => "NFS3ERR_ROFS",
        63 => "NFS3ERR_NAMETOOLONG",
        66 => "NFS3ERR_NOTEMPTY",
        69 => "NFS3ERR_DQUOT",
        70 => "NFS3ERR_STALE",
        10001 => "NFS3ERR_BADHANDLE",
        10004 => "NFS3ERR_NOTSUPP",
        10006 => "NFS3ERR_SERVERFAULT",
        10008 => "NFS3ERR_JUKEBOX",
        _ => return format!("status {s}"),
    };
    name.to_string()
}

/// Where an export is: `nfs://HOST[:PORT]/PATH[?mountport=N&nfsport=N&version=3&timeout_s=N]`,
/// the URL form of libnfs (and so of fio's nfs engine). PATH is the export,
/// or a directory below one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: String,
    pub path: String,
    /// None: ask the portmapper.
    pub nfs_port: Option<u16>,
    pub mount_port: Option<u16>,
    /// `added_rtt_us=N` (a tankbench extension of the URL): emulated round
    /// trip added to every NFS call (see [`Client::set_added_rtt`]).
    pub added_rtt_us: u64,
    /// `timeout_s=N` (a tankbench extension): how long one call may take
    /// before it fails ([`DEFAULT_CALL_TIMEOUT`] unless set).
    pub call_timeout: Duration,
}

impl Target {
    /// Whether `s` is meant as an NFS address (and so must parse as one).
    pub fn is_nfs_url(s: &str) -> bool {
        s.starts_with("nfs://")
    }

    pub fn parse(s: &str) -> Result<Target, Error> {
        let bad = |why: &str| {
            Error::Address(format!(
                "{s}: {why} (expected nfs://HOST[:PORT]/EXPORT[?mountport=N&nfsport=N&version=3])"
            ))
        };
        let rest = s
            .strip_prefix("nfs://")
            .ok_or_else(|| bad("not an nfs:// address"))?;
        let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = match main.find('/') {
            Some(i) => (&main[..i], &main[i..]),
            None => return Err(bad("no export path")),
        };
        if authority.contains(['[', ']', '@']) {
            return Err(bad("the host must be a name or an IPv4 address"));
        }
        let (host, mut nfs_port) = match authority.rsplit_once(':') {
            Some((h, p)) => (
                h,
                Some(
                    p.parse::<u16>()
                        .ok()
                        .filter(|&p| p != 0)
                        .ok_or_else(|| bad("the port is not a number from 1 to 65535"))?,
                ),
            ),
            None => (authority, None),
        };
        if host.is_empty() {
            return Err(bad("the host must be a name or an IPv4 address"));
        }
        let mut mount_port = None;
        let mut added_rtt_us = 0;
        let mut call_timeout = DEFAULT_CALL_TIMEOUT;
        for kv in query.split('&').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            let port = || v.parse::<u16>().ok().filter(|&p| p != 0);
            match k {
                "nfsport" => {
                    nfs_port =
                        Some(port().ok_or_else(|| bad("nfsport is not a number from 1 to 65535"))?)
                }
                "mountport" => {
                    mount_port = Some(
                        port().ok_or_else(|| bad("mountport is not a number from 1 to 65535"))?,
                    )
                }
                "added_rtt_us" => {
                    added_rtt_us = v
                        .parse::<u64>()
                        .ok()
                        .filter(|&us| us <= 1_000_000)
                        .ok_or_else(|| {
                            bad("added_rtt_us is not a number of microseconds from 0 to 1000000")
                        })?;
                }
                "timeout_s" => {
                    call_timeout = v
                        .parse::<u64>()
                        .ok()
                        .filter(|s| (1..=3600).contains(s))
                        .map(Duration::from_secs)
                        .ok_or_else(|| {
                            bad("timeout_s is not a number of seconds from 1 to 3600")
                        })?;
                }
                "version" if v == "3" => {}
                "version" => return Err(bad("only NFS version 3 is supported")),
                _ => return Err(bad(&format!("unknown parameter '{k}'"))),
            }
        }
        let path = path.trim_end_matches('/');
        Ok(Target {
            host: host.to_string(),
            path: if path.is_empty() {
                "/".into()
            } else {
                path.to_string()
            },
            nfs_port,
            mount_port,
            added_rtt_us,
            call_timeout,
        })
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "nfs://{}{}", self.host, self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_in_libnfs_form_parse_and_bad_ones_say_why() {
        let t = Target::parse("nfs://10.77.0.2/tank/vm?mountport=20048&nfsport=2049&version=3")
            .unwrap();
        assert_eq!(
            t,
            Target {
                host: "10.77.0.2".into(),
                path: "/tank/vm".into(),
                nfs_port: Some(2049),
                mount_port: Some(20048),
                added_rtt_us: 0,
                call_timeout: DEFAULT_CALL_TIMEOUT,
            }
        );
        let t = Target::parse("nfs://nas:2050/").unwrap();
        assert_eq!(
            (t.path.as_str(), t.nfs_port, t.mount_port),
            ("/", Some(2050), None)
        );
        for (url, why) in [
            ("nfs://nas", "no export path"),
            ("nfs:///x", "host"),
            ("nfs://nas:0/x", "port"),
            ("nfs://nas/x?version=4", "version 3"),
            ("nfs://nas/x?mountport=abc", "mountport"),
            ("nfs://nas/x?timeo=3", "unknown parameter 'timeo'"),
            ("nfs://nas/x?added_rtt_us=2000000", "added_rtt_us"),
            ("nfs://nas/x?timeout_s=0", "timeout_s"),
            ("nfs://nas/x?timeout_s=5s", "timeout_s"),
            ("nfs://[::1]/x", "IPv4"),
        ] {
            let e = Target::parse(url).unwrap_err().to_string();
            assert!(e.contains(why) && !e.contains('\n'), "{url}: {e}");
        }
        assert_eq!(
            Target::parse("nfs://nas/x?added_rtt_us=150")
                .unwrap()
                .added_rtt_us,
            150
        );
        assert_eq!(
            Target::parse("nfs://nas/x?timeout_s=5")
                .unwrap()
                .call_timeout,
            Duration::from_secs(5)
        );
        assert!(Target::is_nfs_url("nfs://x/y") && !Target::is_nfs_url("/nfs/x"));
    }

    #[test]
    fn nfs_statuses_map_to_the_errno_of_a_local_file_system() {
        let st = |status| {
            Error::Call {
                server: "10.77.0.2:2049".into(),
                procedure: "WRITE",
                kind: CallError::Status(status),
            }
            .errno()
        };
        assert_eq!(st(28), libc::ENOSPC);
        assert_eq!(st(70), libc::ESTALE);
        assert_eq!(st(10001), libc::EIO);
        assert_eq!(
            Error::Call {
                server: "10.77.0.2:2049".into(),
                procedure: "WRITE",
                kind: CallError::Status(28),
            }
            .to_string(),
            "NFS server 10.77.0.2:2049: WRITE failed: NFS3ERR_NOSPC"
        );
        let late = Error::Call {
            server: "10.77.0.2:20048".into(),
            procedure: "MNT",
            kind: CallError::Deadline {
                deadline: Duration::from_millis(1500),
                received: 3,
            },
        };
        assert_eq!(late.errno(), libc::ETIMEDOUT);
        assert_eq!(
            late.to_string(),
            "NFS server 10.77.0.2:20048: MNT got no complete reply within its 1.5 s deadline (3 bytes of it received)"
        );
    }
}

//! The client's errors: a bad address, or one call that failed, named by
//! server and procedure, with the errno a local file system would report.

use super::protocol::Stable;
use std::time::Duration;

/// What went wrong in the client, with the errno a file system call would have failed with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A call to a server failed: one line naming the server (host:port),
    /// the procedure and why.
    #[error("NFS server {server}: {procedure} {kind}")]
    Call {
        server: String,
        procedure: &'static str,
        kind: CallError,
    },
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
    #[error("was not sent: the {} s the caller allowed for all its calls ran out", secs(*.allowed))]
    NoTimeLeft { allowed: Duration },
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
    /// MNT refused the path; the status says why (RFC 1813 section 5.1.5).
    #[error("{}", mount_refusal(path, *.status))]
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

/// Why MNT refused `path`, by its mountstat3.
fn mount_refusal(path: &str, status: u32) -> String {
    match status {
        1 | 13 => format!(
            "was denied access to the export {path} (MNT status {status}, {}): \
             the server does not export it to this client",
            if status == 1 {
                "MNT3ERR_PERM"
            } else {
                "MNT3ERR_ACCES"
            }
        ),
        20 => format!("found {path}, which is not a directory (MNT status 20, MNT3ERR_NOTDIR)"),
        _ => format!("found no exported directory on the path {path} (MNT status {status})"),
    }
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
                CallError::Deadline { .. } | CallError::NoTimeLeft { .. } => libc::ETIMEDOUT,
                CallError::NotExported { status: 1, .. } => libc::EPERM,
                CallError::NotExported { status: 13, .. } => libc::EACCES,
                CallError::Connect(e) | CallError::Transport(e) => {
                    e.raw_os_error().unwrap_or(libc::EIO)
                }
                _ => libc::EIO,
            },
            Error::Address(_) => libc::EIO,
        }
    }

    /// Why the call failed, when it was a call.
    pub fn call_error(&self) -> Option<&CallError> {
        match self {
            Error::Call { kind, .. } => Some(kind),
            Error::Address(_) => None,
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

#[cfg(test)]
mod tests {
    use super::*;

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
        // Issue 37: MNT status 13 is a refusal, not a missing export.
        let denied = Error::Call {
            server: "10.77.0.2:20048".into(),
            procedure: "MNT",
            kind: CallError::NotExported {
                path: "/export".into(),
                status: 13,
            },
        };
        assert_eq!(denied.errno(), libc::EACCES);
        let text = denied.to_string();
        assert!(
            text.contains("denied access to the export /export"),
            "{text}"
        );
        assert!(
            text.contains("MNT3ERR_ACCES") && !text.contains("found no"),
            "{text}"
        );
        assert_eq!(
            late.to_string(),
            "NFS server 10.77.0.2:20048: MNT got no complete reply within its 1.5 s deadline (3 bytes of it received)"
        );
    }
}

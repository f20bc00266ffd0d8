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
mod xdr;

pub use nfs3::{process_counts, Attr, Client, Counts, Fh, Stable};

/// What went wrong, with the errno a file system call would have failed with.
#[derive(Debug)]
pub enum Error {
    Io {
        what: String,
        source: std::io::Error,
    },
    /// The server answered a procedure with an NFS3ERR status.
    Status {
        procedure: &'static str,
        status: u32,
    },
    Protocol(String),
    /// A bad `nfs://` address (one line naming what is wrong).
    Address(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io { what, source } => write!(f, "{what}: {source}"),
            Error::Status { procedure, status } => {
                write!(f, "NFS {procedure} failed: {}", status_name(*status))
            }
            Error::Protocol(m) | Error::Address(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The errno a local file system would report for this failure: NFS3ERR
    /// codes below 100 are errno values by design (RFC 1813 section 2.6),
    /// except those Linux numbers differently; everything else is EIO.
    pub fn errno(&self) -> i32 {
        match self {
            Error::Io { source, .. } => source.raw_os_error().unwrap_or(libc::EIO),
            Error::Status { status, .. } => match *status {
                s @ (1 | 2 | 5 | 6 | 13 | 17 | 18 | 19 | 20 | 21 | 22 | 27 | 28 | 30 | 31) => {
                    i32::try_from(s).unwrap_or(libc::EIO)
                }
                63 => libc::ENAMETOOLONG,
                66 => libc::ENOTEMPTY,
                69 => libc::EDQUOT,
                70 => libc::ESTALE,
                _ => libc::EIO,
            },
            Error::Protocol(_) | Error::Address(_) => libc::EIO,
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

/// Where an export is: `nfs://HOST[:PORT]/PATH[?mountport=N&nfsport=N&version=3]`,
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
        assert!(Target::is_nfs_url("nfs://x/y") && !Target::is_nfs_url("/nfs/x"));
    }

    #[test]
    fn nfs_statuses_map_to_the_errno_of_a_local_file_system() {
        let st = |status| {
            Error::Status {
                procedure: "WRITE",
                status,
            }
            .errno()
        };
        assert_eq!(st(28), libc::ENOSPC);
        assert_eq!(st(70), libc::ESTALE);
        assert_eq!(st(10001), libc::EIO);
        assert_eq!(
            Error::Status {
                procedure: "WRITE",
                status: 28
            }
            .to_string(),
            "NFS WRITE failed: NFS3ERR_NOSPC"
        );
    }
}

//! Where an export is: the `nfs://` URL (libnfs's form, plus tankbench's
//! `added_rtt_us=` and `timeout_s=`).

use super::Error;
use std::time::Duration;

/// How long one call may take, from sending it to the last byte of its
/// reply, before it fails (the whole reply, not each read): the Linux
/// client's default `timeo` for TCP mounts. A COMMIT gets ten times as
/// long ([`Client::commit`](super::Client::commit)). Set per export with the
/// URL's `timeout_s=N`.
pub(crate) const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// A COMMIT makes durable everything written unstably since the last one,
/// which on a slow pool can be gigabytes at tens of MB/s, so it may take
/// this many times the call timeout (10 minutes by default).
pub(crate) const COMMIT_DEADLINE_FACTOR: u32 = 10;

/// Where an export is: `nfs://HOST[:PORT]/PATH[?mountport=N&nfsport=N&version=3&timeout_s=N]`,
/// the URL form of libnfs (and so of fio's nfs engine). PATH is the export,
/// or a directory below one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub(crate) host: String,
    pub(crate) path: String,
    /// None: ask the portmapper.
    pub(crate) nfs_port: Option<u16>,
    pub(crate) mount_port: Option<u16>,
    /// `added_rtt_us=N` (a tankbench extension of the URL): emulated round
    /// trip added to every NFS call, each reply handed back this much later
    /// than it arrived. With one call in flight per connection this is what
    /// a longer cable does, and it costs one timed wait per call instead of
    /// a relay process copying every byte.
    pub(crate) added_rtt_us: u64,
    /// `timeout_s=N` (a tankbench extension): how long one call may take
    /// before it fails (60 s unless set: the Linux client's `timeo`).
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
}

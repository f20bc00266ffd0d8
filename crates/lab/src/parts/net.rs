//! Network links: a client and a server network namespace joined by one veth
//! pair per member link, each end shaped with `tc tbf`. netem is not available
//! everywhere, so base latency comes from a delaying TCP relay in the server
//! namespace: it holds every chunk of data for half the added round trip in
//! each direction (a pipelined delay line, so bandwidth is not reduced).
//!
//! Addresses are private 10.77.M.0/24 networks that exist only inside the
//! lab's own namespaces; nothing is routed anywhere else.

use crate::parts::sys;
use crate::spec::LinkSpec;
use crate::LabError;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Port the relay listens on for ssh (forwarded to sshd on the server's
/// loopback).
pub(crate) const SSH_PORT: u16 = 2222;
/// Port the relay listens on for the lab's probe service.
pub(crate) const PROBE_PORT: u16 = 7007;
/// Where the probe service listens inside the server namespace.
pub(crate) const PROBE_BACKEND: &str = "127.0.0.1:7008";

pub(crate) fn client_ns(id: &str) -> String {
    format!("{id}-client")
}
pub(crate) fn server_ns(id: &str) -> String {
    format!("{id}-server")
}
pub(crate) fn client_addr(member: u32) -> String {
    format!("10.77.{member}.1")
}
pub(crate) fn server_addr(member: u32) -> String {
    format!("10.77.{member}.2")
}

/// Token bucket depth: about 1 ms of traffic at the shaped rate, and at least
/// a few full frames (tbf needs burst >= rate / timer frequency to reach the
/// rate).
fn burst_bytes(rate_bps: u64) -> u64 {
    (rate_bps / 8 / 1000).max(32 * 1024)
}

/// The longest owner mark a namespace can carry: an interface alias holds
/// up to 255 bytes (IFALIASZ, 256 with its NUL, in linux/if.h).
const MAX_OWNER_MARK: usize = 255;

/// Mark namespace `ns` as made by the lab in `lab_dir`: the directory's
/// path becomes the alias of the namespace's loopback interface. Namespace
/// names are global (`/run/netns`) while labs live under different roots;
/// the mark is how `lab down --all ROOT` tells a leftover of a lab under
/// ROOT from a namespace of a lab under another root that is still up. A
/// path longer than an alias holds is left unmarked (such a namespace is
/// never swept, only torn down from its lab's state).
pub(crate) fn mark_owner(ns: &str, lab_dir: &Path) -> Result<(), LabError> {
    let abs = std::path::absolute(lab_dir).unwrap_or_else(|_| lab_dir.to_path_buf());
    let Some(dir) = abs.to_str().filter(|d| d.len() <= MAX_OWNER_MARK) else {
        return Ok(());
    };
    sys::run("ip", ["-n", ns, "link", "set", "dev", "lo", "alias", dir])?;
    Ok(())
}

/// The lab directory namespace `ns` was marked with, if any.
pub fn owner(ns: &str) -> Option<PathBuf> {
    let json = sys::run("ip", ["-j", "-n", ns, "link", "show", "dev", "lo"]).ok()?;
    owner_from_ip_json(&json)
}

/// The loopback's alias in `ip -j link show dev lo` output.
fn owner_from_ip_json(json: &str) -> Option<PathBuf> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let alias = v.get(0)?.get("ifalias")?.as_str()?;
    Some(PathBuf::from(alias)).filter(|p| p.is_absolute())
}

/// Create the namespaces and member links, each namespace marked as the
/// lab's in `lab_dir` ([`mark_owner`]). `record` is called for each
/// namespace right after it exists, so teardown knows about it even if a
/// later step fails.
pub fn create(
    id: &str,
    lab_dir: &Path,
    link: &LinkSpec,
    record: &mut dyn FnMut(String) -> Result<(), LabError>,
) -> Result<(), LabError> {
    let (c, s) = (client_ns(id), server_ns(id));
    for ns in [&c, &s] {
        sys::run("ip", ["netns", "add", ns.as_str()])?;
        record(ns.clone())?;
        mark_owner(ns, lab_dir)?;
        sys::run("ip", ["-n", ns.as_str(), "link", "set", "lo", "up"])?;
    }
    for m in 0..link.members {
        let cdev = format!("{id}-c{m}");
        let sdev = format!("{id}-s{m}");
        // Created directly inside the namespaces: nothing appears in the
        // host's namespace even for a moment.
        sys::run(
            "ip",
            [
                "link", "add", &cdev, "netns", &c, "type", "veth", "peer", "name", &sdev, "netns",
                &s,
            ],
        )?;
        for (ns, dev, addr) in [(&c, &cdev, client_addr(m)), (&s, &sdev, server_addr(m))] {
            sys::run(
                "ip",
                ["-n", ns, "addr", "add", &format!("{addr}/24"), "dev", dev],
            )?;
            sys::run("ip", ["-n", ns, "link", "set", dev, "up"])?;
            sys::run(
                "tc",
                [
                    "-n",
                    ns,
                    "qdisc",
                    "add",
                    "dev",
                    dev,
                    "root",
                    "tbf",
                    "rate",
                    &format!("{}bit", link.rate_bps),
                    "burst",
                    &burst_bytes(link.rate_bps).to_string(),
                    "latency",
                    "50ms",
                ],
            )?;
        }
    }
    Ok(())
}

/// What the relay daemon does, written as JSON by the lab.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RelayConfig {
    /// (listen, connect) pairs.
    pub forwards: Vec<(String, String)>,
    /// Delay added in each direction, µs (half the added round trip).
    pub one_way_us: u64,
    /// Address of the probe (echo / sink) service.
    pub probe_listen: String,
    /// Created once every listener is bound.
    pub ready_file: PathBuf,
}

/// The relay daemon: forwards and delays, plus the probe service. Runs until
/// killed.
pub(crate) fn serve_relay(cfg: &RelayConfig) -> Result<(), LabError> {
    let io = |what: &str, e: std::io::Error| LabError::Io {
        what: what.to_string(),
        source: e,
    };
    let probe = TcpListener::bind(&cfg.probe_listen)
        .map_err(|e| io(&format!("bind {}", cfg.probe_listen), e))?;
    std::thread::spawn(move || {
        for conn in probe.incoming().flatten() {
            std::thread::spawn(move || probe_session(conn));
        }
    });
    let delay = Duration::from_micros(cfg.one_way_us);
    for (listen, connect) in &cfg.forwards {
        let l = TcpListener::bind(listen).map_err(|e| io(&format!("bind {listen}"), e))?;
        let target: SocketAddr = connect.parse().map_err(|_| LabError::Invalid {
            field: "relay target".into(),
            value: connect.clone(),
            reason: None,
            accepted: "an IP address and port, e.g. 127.0.0.1:22".into(),
        })?;
        std::thread::spawn(move || {
            for conn in l.incoming().flatten() {
                std::thread::spawn(move || {
                    if let Ok(up) = TcpStream::connect(target) {
                        relay_pair(conn, up, delay);
                    }
                });
            }
        });
    }
    std::fs::write(&cfg.ready_file, b"ready\n").map_err(|e| io("write relay ready file", e))?;
    loop {
        std::thread::park();
    }
}

fn relay_pair(a: TcpStream, b: TcpStream, delay: Duration) {
    let _ = a.set_nodelay(true);
    let _ = b.set_nodelay(true);
    let (a2, b2) = match (a.try_clone(), b.try_clone()) {
        (Ok(a2), Ok(b2)) => (a2, b2),
        _ => return,
    };
    let t = std::thread::spawn(move || delay_line(a, b2, delay));
    delay_line(b, a2, delay);
    let _ = t.join();
}

/// Copy `from` to `to`, releasing each chunk `delay` after it arrived. A
/// reader and a writer thread joined by a queue keep chunks in flight
/// concurrently, as a long cable does.
fn delay_line(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let writer = std::thread::spawn(move || {
        sys::precise_timers();
        while let Ok((due, chunk)) = rx.recv() {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if to.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if tx
                    .send((Instant::now() + delay, buf[..n].to_vec()))
                    .is_err()
                {
                    break;
                }
            }
        }
    }
    drop(tx);
    let _ = writer.join();
}

const PING_SIZE: usize = 64;

/// The probe protocol: first byte `P` = ping-pong (echo 64-byte messages),
/// `S` = sink (count bytes until EOF, then answer the count as 8 bytes LE).
fn probe_session(mut s: TcpStream) {
    let _ = s.set_nodelay(true);
    let mut mode = [0u8; 1];
    if s.read_exact(&mut mode).is_err() {
        return;
    }
    match mode[0] {
        b'P' => {
            let mut msg = [0u8; PING_SIZE];
            while s.read_exact(&mut msg).is_ok() {
                if s.write_all(&msg).is_err() {
                    break;
                }
            }
        }
        b'S' => {
            let mut buf = vec![0u8; 256 * 1024];
            let mut total: u64 = 0;
            loop {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => total += n as u64,
                }
            }
            let _ = s.write_all(&total.to_le_bytes());
        }
        _ => {}
    }
}

/// The link as measured from the client namespace.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LinkMeasurement {
    /// Application round trip of a 64-byte ping-pong over TCP, ms.
    pub rtt_ms_median: f64,
    pub rtt_ms_min: f64,
    /// One TCP flow (uses one member link), Mbit/s of payload.
    pub single_flow_mbit_s: f64,
    /// One flow per member link at once, Mbit/s of payload.
    pub aggregate_mbit_s: f64,
}

/// Measure RTT and bandwidth through the relay, from the client namespace.
pub fn measure(id: &str, link: &LinkSpec, seconds: f64) -> Result<LinkMeasurement, LabError> {
    let ns = client_ns(id);
    let members = link.members;
    sys::with_netns(&ns, move || {
        let io = |what: &str, e: std::io::Error| LabError::Io {
            what: what.to_string(),
            source: e,
        };
        let target: SocketAddr = format!("{}:{PROBE_PORT}", server_addr(0)).parse().unwrap();
        let mut s = TcpStream::connect_timeout(&target, Duration::from_secs(5))
            .map_err(|e| io("connect to the lab probe", e))?;
        s.set_nodelay(true).ok();
        s.set_read_timeout(Some(Duration::from_secs(10))).ok();
        s.write_all(b"P").map_err(|e| io("probe ping", e))?;
        let mut msg = [7u8; PING_SIZE];
        let mut rtts = Vec::new();
        for i in 0..220 {
            let t = Instant::now();
            s.write_all(&msg).map_err(|e| io("probe ping", e))?;
            s.read_exact(&mut msg).map_err(|e| io("probe pong", e))?;
            // The first exchanges warm up the path (thread wake-ups, caches).
            if i >= 20 {
                rtts.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        drop(s);
        let (rtt_ms_median, rtt_ms_min) = median_and_min(&mut rtts);
        let single = bulk(&[0], seconds)?;
        let aggregate = if members > 1 {
            bulk(&(0..members).collect::<Vec<_>>(), seconds)?
        } else {
            single
        };
        Ok(LinkMeasurement {
            rtt_ms_median,
            rtt_ms_min,
            single_flow_mbit_s: single,
            aggregate_mbit_s: aggregate,
        })
    })
}

/// Median and minimum of round-trip samples (ms); NaN for no samples. The
/// order is f64::total_cmp, so a NaN sample sorts last instead of panicking
/// the sort.
fn median_and_min(samples: &mut [f64]) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    match samples.first() {
        None => (f64::NAN, f64::NAN),
        Some(min) => (samples[samples.len() / 2], *min),
    }
}

/// Send as fast as possible for `seconds` on one flow per listed member;
/// returns total payload Mbit/s acknowledged by the sink.
fn bulk(members: &[u32], seconds: f64) -> Result<f64, LabError> {
    let start = Instant::now();
    let handles: Vec<_> = members
        .iter()
        .map(|m| {
            let target: SocketAddr = format!("{}:{PROBE_PORT}", server_addr(*m)).parse().unwrap();
            std::thread::spawn(move || -> std::io::Result<u64> {
                let mut s = TcpStream::connect_timeout(&target, Duration::from_secs(5))?;
                s.set_read_timeout(Some(Duration::from_secs(30)))?;
                s.write_all(b"S")?;
                let chunk = vec![0x5au8; 256 * 1024];
                let until = Instant::now() + Duration::from_secs_f64(seconds);
                while Instant::now() < until {
                    s.write_all(&chunk)?;
                }
                s.shutdown(Shutdown::Write)?;
                let mut n = [0u8; 8];
                s.read_exact(&mut n)?;
                Ok(u64::from_le_bytes(n))
            })
        })
        .collect();
    let mut total = 0u64;
    for h in handles {
        total += h
            .join()
            .map_err(|_| LabError::Panicked {
                what: "a bandwidth probe thread",
            })?
            .map_err(|e| LabError::Io {
                what: "bandwidth probe".into(),
                source: e,
            })?;
    }
    let secs = start.elapsed().as_secs_f64();
    Ok(total as f64 * 8.0 / secs / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The owner mark is read back from what `ip -j link show dev lo`
    /// prints; an unmarked loopback, a relative path or output that is not
    /// iproute2's JSON name no owner.
    #[test]
    fn owner_mark_from_ip_json() {
        let marked = r#"[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK"],"ifalias":"/var/tmp/h27 lab/tb-x"}]"#;
        assert_eq!(
            owner_from_ip_json(marked),
            Some(PathBuf::from("/var/tmp/h27 lab/tb-x"))
        );
        let unmarked = r#"[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK"]}]"#;
        assert_eq!(owner_from_ip_json(unmarked), None);
        assert_eq!(owner_from_ip_json(r#"[{"ifalias":"tb-x"}]"#), None);
        assert_eq!(owner_from_ip_json("Cannot find device"), None);
        assert_eq!(owner_from_ip_json("[]"), None);
    }

    #[test]
    fn median_and_min_of_round_trips() {
        let mut v = vec![0.3, 0.1, 0.2];
        assert_eq!(median_and_min(&mut v), (0.2, 0.1));
    }

    #[test]
    fn a_nan_sample_does_not_panic_the_median() {
        let mut v = vec![0.3, f64::NAN, 0.1, 0.2, 0.25];
        let (median, min) = median_and_min(&mut v);
        assert_eq!((median, min), (0.25, 0.1));
        assert!(median_and_min(&mut []).0.is_nan());
    }
}

//! Client links and file/block protocols: what a request pays to cross the
//! network (IEEE 802.3 framing, published LAN round-trip measurements), and
//! which writes a protocol turns into synchronous commits (NFSv3 stable writes
//! and COMMIT, RFC 1813; SCSI FUA and SYNCHRONIZE CACHE).

use serde::Serialize;

use crate::error::{ModelError, Result};
use crate::estimate::Estimate;

/// Fraction of the line rate left for TCP payload after Ethernet framing,
/// inter-frame gap (IEEE 802.3) and IP/TCP headers with timestamps (1448 of
/// 1538 bytes per frame).
pub const TCP_GOODPUT_FRACTION: f64 = 0.94;
/// Bytes on the wire for one 4 KiB write: payload plus NFS/RPC, TCP/IP and
/// Ethernet overhead over three 1500-byte frames.
pub const WIRE_BYTES_4K_WRITE: f64 = 4500.0;

/// Ethernet links between client and server; several members form a LACP
/// aggregate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Link {
    pub members: u32,
    pub gbit_per_s: f64,
}

impl Link {
    pub const ACCEPTED: &'static str =
        "[COUNTx]SPEED with SPEED 1G, 2.5G, 5G, 10G, 25G, 40G, 100G (e.g. 2x10G), or none";

    /// Parse "2x10G", "10G", "1GbE", "2x1G"; `None` for "none"/"local".
    pub fn parse(input: &str) -> Result<Option<Link>> {
        let text = input.trim().to_ascii_lowercase();
        if text == "none" || text == "local" {
            return Ok(None);
        }
        let bad = || ModelError::UnknownChoice {
            what: "link",
            input: input.to_string(),
            accepted: Link::ACCEPTED.into(),
        };
        let (members, speed) = match text.split_once('x') {
            Some((count, speed)) => (count.parse::<u32>().map_err(|_| bad())?, speed),
            None => (1, text.as_str()),
        };
        let speed = speed
            .trim_end_matches("bit/s")
            .trim_end_matches("bps")
            .trim_end_matches("be")
            .trim_end_matches("bit")
            .trim_end_matches('g');
        let gbit: f64 = speed.parse().map_err(|_| bad())?;
        if members == 0 || !(0.1..=800.0).contains(&gbit) {
            return Err(bad());
        }
        Ok(Some(Link {
            members,
            gbit_per_s: gbit,
        }))
    }

    pub fn name(&self) -> String {
        let speed = format!("{}G", self.gbit_per_s);
        if self.members > 1 {
            format!("{}x{speed} LACP", self.members)
        } else {
            speed
        }
    }

    /// TCP payload rate of one member link, MB/s. A LACP hash pins each flow
    /// (one NFS mount, one iSCSI session) to one member, so this is also what
    /// a single client connection gets.
    pub fn flow_goodput_mb_s(&self) -> f64 {
        self.gbit_per_s * 1e3 / 8.0 * TCP_GOODPUT_FRACTION
    }

    /// TCP payload rate of all members together, MB/s (many clients).
    pub fn aggregate_goodput_mb_s(&self) -> f64 {
        self.flow_goodput_mb_s() * self.members as f64
    }

    /// Application-to-application round trip of a small request, ms.
    /// 1 GbE 100–200 µs (AppNeta, "Why is 10G better for network latency?",
    /// 2009; Evan Jones, "Ethernet latency"), 10 GbE 20–60 µs. Faster links are not
    /// covered by those measurements: kernel TCP sets a floor, so they get the 10 GbE
    /// range shrunk a little — an extrapolation, and reported as one.
    pub fn round_trip_ms(&self) -> Estimate {
        let g = self.gbit_per_s;
        if g < 5.0 {
            Estimate::new(0.100, 0.150, 0.200)
        } else if g < 20.0 {
            Estimate::new(0.020, 0.040, 0.060)
        } else {
            Estimate::new(0.015, 0.030, 0.050)
        }
    }

    /// Time to put one 4 KiB write on the wire, ms (36 µs at 1 GbE, 3.6 µs at 10 GbE).
    pub fn serialization_4k_ms(&self) -> f64 {
        WIRE_BYTES_4K_WRITE * 8.0 / (self.gbit_per_s * 1e9) * 1e3
    }

    pub fn measured_range(&self) -> bool {
        self.gbit_per_s < 20.0
    }
}

/// How clients reach the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    Nfs,
    Iscsi,
    Smb,
    Local,
}

impl Protocol {
    pub const ACCEPTED: &'static str = "nfs, iscsi, smb, local";

    pub fn parse(input: &str) -> Result<Protocol> {
        match input.trim().to_ascii_lowercase().as_str() {
            "nfs" => Ok(Protocol::Nfs),
            "iscsi" => Ok(Protocol::Iscsi),
            "smb" | "cifs" => Ok(Protocol::Smb),
            "local" => Ok(Protocol::Local),
            _ => Err(ModelError::UnknownChoice {
                what: "protocol",
                input: input.to_string(),
                accepted: Protocol::ACCEPTED.into(),
            }),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Nfs => "nfs",
            Protocol::Iscsi => "iscsi",
            Protocol::Smb => "smb",
            Protocol::Local => "local",
        }
    }

    /// Client + server software time per request (RPC / SCSI / SMB stacks and
    /// the ZFS write path), ms. A model assumption, not a measurement.
    pub fn stack_ms(self) -> Estimate {
        match self {
            Protocol::Nfs | Protocol::Iscsi => Estimate::new(0.010, 0.020, 0.050),
            Protocol::Smb => Estimate::new(0.020, 0.040, 0.100),
            Protocol::Local => Estimate::new(0.003, 0.005, 0.010),
        }
    }

    /// Which client writes reach the ZIL as commits: NFSv3 FILE_SYNC writes
    /// and COMMIT (RFC 1813), iSCSI FUA and SYNCHRONIZE CACHE, SMB flushes.
    pub fn sync_semantics(self) -> &'static str {
        match self {
            Protocol::Nfs => "NFS: ESXi datastores make every WRITE stable, so each one is a ZIL commit; Linux/BSD clients commit on fsync/close",
            Protocol::Iscsi => "iSCSI: writes are async unless the initiator sets FUA or sends SYNCHRONIZE CACHE (or the zvol has sync=always)",
            Protocol::Smb => "SMB: async unless the client asks for write-through or a flush (varies by client; treat as an assumption)",
            Protocol::Local => "local: only fsync / O_SYNC / O_DSYNC writes are commits",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    // "10" and "1" parse to exactly 10.0 and 1.0 (integers are exact in f64).
    #[allow(clippy::float_cmp)]
    fn links_parse() {
        let l = Link::parse("2x10G").unwrap().unwrap();
        assert_eq!((l.members, l.gbit_per_s), (2, 10.0));
        assert_eq!(Link::parse("1GbE").unwrap().unwrap().gbit_per_s, 1.0);
        assert_eq!(Link::parse("none").unwrap(), None);
        let err = Link::parse("2xfast").unwrap_err().to_string();
        assert!(err.contains("2x10G"), "{err}");
    }

    #[test]
    fn link_figures_match_the_spec() {
        let one = Link::parse("1G").unwrap().unwrap();
        let ten = Link::parse("10G").unwrap().unwrap();
        assert!((one.flow_goodput_mb_s() - 117.5).abs() < 0.5);
        assert!((ten.flow_goodput_mb_s() - 1175.0).abs() < 10.0);
        assert!((one.serialization_4k_ms() - 0.036).abs() < 0.001);
        assert!((ten.serialization_4k_ms() - 0.0036).abs() < 0.0001);
        let lacp = Link::parse("2x1G").unwrap().unwrap();
        // One flow uses one member link: the same arithmetic on the same
        // link speed, so the same bits.
        assert_eq!(
            lacp.flow_goodput_mb_s().to_bits(),
            one.flow_goodput_mb_s().to_bits()
        );
    }
}

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
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Link {
    pub members: u32,
    pub gbit_per_s: f64,
}

impl Link {
    pub const ACCEPTED: &'static str =
        "[COUNTx]RATE with RATE in bits per second, e.g. 1G, 2.5G, 10G, 25G, 100G, 500M (2x10G: a LACP aggregate of two 10G links), or none";

    /// Fastest and slowest member link the planner models, bits per second.
    pub const PLAN_RATES: std::ops::RangeInclusive<u64> = 100_000_000..=800_000_000_000;

    /// Parse "2x10G", "10G", "1GbE", "2x1G", "500M" within the planner's rates
    /// ([`Link::PLAN_RATES`]); `None` for "none"/"local".
    pub fn parse(input: &str) -> Result<Option<Link>> {
        let link = Link::parse_any_rate(input)?;
        if link.is_some_and(|l| !Link::PLAN_RATES.contains(&l.bits_per_s())) {
            return Err(ModelError::UnknownChoice {
                what: "link",
                input: input.to_string(),
                accepted: format!("{}; one link from 100M to 800G", Link::ACCEPTED),
            });
        }
        Ok(link)
    }

    /// [`Link::parse`] without the planner's range of rates: any member count
    /// from 1 and any rate [`parse_rate`] reads. The lab holds it to the rates
    /// it can shape.
    pub fn parse_any_rate(input: &str) -> Result<Option<Link>> {
        let text = input.trim().to_ascii_lowercase();
        if text == "none" || text == "local" {
            return Ok(None);
        }
        let bad = || ModelError::UnknownChoice {
            what: "link",
            input: input.to_string(),
            accepted: Link::ACCEPTED.into(),
        };
        let (members, rate) = match text.split_once('x') {
            Some((count, rate)) => (count.trim().parse::<u32>().map_err(|_| bad())?, rate),
            None => (1, text.as_str()),
        };
        let bits = parse_rate(rate).map_err(|_| bad())?;
        if members == 0 {
            return Err(bad());
        }
        Ok(Some(Link {
            members,
            gbit_per_s: bits as f64 / 1e9,
        }))
    }

    /// Rate of one member link, bits per second.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    pub fn bits_per_s(&self) -> u64 {
        // The rate came from `parse_rate`, which holds it to 1 bit/s ..= 1 Pbit/s:
        // positive and far inside u64.
        (self.gbit_per_s * 1e9).round() as u64
    }

    /// The link as `--link` and a matrix axis take it (`2x10G`, `1G`): a
    /// result's `link` label is this, so `compare link=2x10G` finds the runs
    /// of the axis value `2x10G` (several members are a LACP aggregate).
    pub fn name(&self) -> String {
        let speed = format!("{}G", self.gbit_per_s);
        if self.members > 1 {
            format!("{}x{speed}", self.members)
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
}

/// Parse a line rate, bits per second: a number with the unit K, M or G
/// (powers of 1000, as link rates are given), optionally followed by `bit`,
/// `bps`, `bit/s` or `bE` (Ethernet): "1G", "2.5G", "100M", "1gbit", "10GbE",
/// "8kbit". A number without a unit is refused: whether "10" meant bits or
/// gigabits is anyone's guess. The one rate parser of `plan` and the lab.
pub fn parse_rate(input: &str) -> Result<u64> {
    let bad = || ModelError::InvalidValue {
        input: input.to_string(),
        reason: "expected a rate in bits per second with a unit, e.g. 1G, 2.5G, 100M, 1gbit".into(),
    };
    let text = input.trim().to_ascii_lowercase();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit = unit.trim();
    let unit = ["bit/s", "bps", "bit", "be"]
        .iter()
        .find_map(|suffix| unit.strip_suffix(suffix))
        .unwrap_or(unit);
    let multiplier = match unit {
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        _ => return Err(bad()),
    };
    // Only digits and one point: "1e9" or "inf" never get here as a number.
    if number.is_empty() || number.matches('.').count() > 1 || number == "." {
        return Err(bad());
    }
    let value: f64 = number.parse().map_err(|_| bad())?;
    let bits = value * multiplier;
    // Up to 1 Pbit/s, so the result is a whole u64 and far beyond any link.
    if !(1.0..=1e15).contains(&bits) {
        return Err(bad());
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    // In 1 ..= 1e15 (checked above): positive and exactly representable.
    let whole = bits.round() as u64;
    Ok(whole)
}

/// A rate in the form [`parse_rate`] reads: "1G", "2.5G", "100M", "8K".
pub fn format_rate(bits_per_s: u64) -> String {
    let (value, unit) = if bits_per_s >= 1_000_000_000 {
        (bits_per_s as f64 / 1e9, "G")
    } else if bits_per_s >= 1_000_000 {
        (bits_per_s as f64 / 1e6, "M")
    } else {
        (bits_per_s as f64 / 1e3, "K")
    };
    // Up to three decimals, trailing zeros dropped: 2.5G, 1.25G, 100M.
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}{unit}")
}

/// How clients reach the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    Nfs,
    Iscsi,
    Smb,
    Local,
}

impl Protocol {
    /// Every protocol, by [`Protocol::name`] the one list `--protocol`
    /// offers; [`Protocol::ACCEPTED`] is the same names, with what `nfs`
    /// means, for a refusal.
    pub const ALL: [Protocol; 4] = [
        Protocol::Nfs,
        Protocol::Iscsi,
        Protocol::Smb,
        Protocol::Local,
    ];

    /// How the plan takes a protocol, in a few words (`--help`, completions).
    pub fn describe(self) -> &'static str {
        match self {
            Protocol::Nfs => "an ESXi NFS datastore: every write stable (also esxi-nfs)",
            Protocol::Iscsi => "a zvol over iSCSI",
            Protocol::Smb => "an SMB share",
            Protocol::Local => "on the server itself",
        }
    }

    /// `nfs` is planned as an ESXi NFS datastore (every WRITE stable), the
    /// reference user's client; the list says so, so nobody takes it for a
    /// Linux mount.
    pub const ACCEPTED: &'static str =
        "nfs (an ESXi NFS datastore; also esxi-nfs), iscsi, smb, local";

    pub fn parse(input: &str) -> Result<Protocol> {
        match input.trim().to_ascii_lowercase().as_str() {
            "nfs" | "esxi-nfs" => Ok(Protocol::Nfs),
            "linux-nfs" => Err(ModelError::UnknownChoice {
                what: "protocol",
                input: input.to_string(),
                accepted: format!(
                    "{} (plan does not model a Linux NFS client yet: simulate --client linux-nfs predicts one)",
                    Protocol::ACCEPTED
                ),
            }),
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
    fn every_protocol_is_accepted_and_listed_under_its_name() {
        for p in Protocol::ALL {
            assert_eq!(Protocol::parse(p.name()).unwrap(), p);
            assert!(Protocol::ACCEPTED.contains(p.name()), "{}", p.name());
        }
        // One entry per protocol, nothing else listed.
        assert_eq!(
            Protocol::ACCEPTED.matches(", ").count() + 1,
            Protocol::ALL.len()
        );
    }

    #[test]
    fn a_link_is_named_as_it_is_typed() {
        for typed in ["2x10G", "1G", "2x1G", "2.5G", "4x25G"] {
            let link = Link::parse(typed).unwrap().unwrap();
            assert_eq!(link.name(), typed);
            assert_eq!(Link::parse(&link.name()).unwrap(), Some(link));
        }
    }

    #[test]
    fn nfs_says_it_is_an_esxi_datastore_and_linux_nfs_says_where_it_is_modelled() {
        assert_eq!(Protocol::parse("esxi-nfs").unwrap(), Protocol::Nfs);
        let refused = Protocol::parse("afp").unwrap_err().to_string();
        assert!(refused.contains("nfs (an ESXi NFS datastore"), "{refused}");
        let linux = Protocol::parse("linux-nfs").unwrap_err().to_string();
        assert!(
            linux.contains("linux-nfs") && linux.contains("simulate --client linux-nfs"),
            "{linux}"
        );
    }

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
        assert_eq!(Link::parse("500M").unwrap().unwrap().gbit_per_s, 0.5);
        assert_eq!(
            Link::parse("10gbit/s").unwrap().unwrap().bits_per_s(),
            10_000_000_000
        );
        // Outside the planner's rates, but a rate all the same.
        let err = Link::parse("10M").unwrap_err().to_string();
        assert!(err.contains("100M to 800G"), "{err}");
        assert_eq!(
            Link::parse_any_rate("10M").unwrap().unwrap().bits_per_s(),
            10_000_000
        );
    }

    #[test]
    fn rates_have_units_and_format_back() {
        for (text, bits) in [
            ("1G", 1_000_000_000),
            ("2.5gbit", 2_500_000_000),
            ("100mbit", 100_000_000),
            ("10GbE", 10_000_000_000),
            ("8kbit", 8_000),
            ("1.25 Gbps", 1_250_000_000),
        ] {
            assert_eq!(parse_rate(text).unwrap(), bits, "{text}");
            assert_eq!(parse_rate(&format_rate(bits)).unwrap(), bits, "{text}");
        }
        assert_eq!(format_rate(2_500_000_000), "2.5G");
        assert_eq!(format_rate(100_000_000), "100M");
        for bad in [
            "10",
            "fast",
            "1e9G",
            "G",
            "1..5G",
            "1T",
            "0G",
            "9999999999G",
        ] {
            let err = parse_rate(bad).unwrap_err().to_string();
            assert!(err.contains("e.g. 1G"), "{bad}: {err}");
        }
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

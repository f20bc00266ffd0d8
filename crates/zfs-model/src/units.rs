//! Byte sizes: parsing what users type, the IDEMA rule that turns a marketed
//! "8 TB" into the disk's real byte count, and printing sizes the way `zpool
//! list` does.

use crate::error::{ModelError, Result};

pub const KIB: u64 = 1 << 10;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;
pub const TIB: u64 = 1 << 40;

/// How a decimal-unit size is meant: a marketed disk capacity (apply the IDEMA
/// LBA rule, because that is what a drive labelled "8 TB" really holds) or a
/// plain number of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeMeaning {
    MarketedDisk,
    Exact,
}

/// Bytes of a drive marketed as `gb` decimal gigabytes, by the IDEMA LBA rule
/// (LBA1-03): 97,696,368 + 1,953,504 × (GB − 50) sectors of 512 bytes.
/// Defined for drives of at least 50 GB.
pub fn idema_disk_bytes(gb: u64) -> Option<u64> {
    if gb < 50 {
        return None;
    }
    // None also when the byte count would not fit in a u64.
    1_953_504u64
        .checked_mul(gb - 50)?
        .checked_add(97_696_368)?
        .checked_mul(512)
}

/// A decimal number kept exact: `mantissa / 10^decimals`.
struct ExactDecimal {
    mantissa: u128,
    decimals: u32,
}

fn parse_exact_decimal(text: &str) -> Option<ExactDecimal> {
    let (int_part, frac_part) = match text.split_once('.') {
        Some((i, f)) => (i, f),
        None => (text, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part.chars().all(|c| c.is_ascii_digit())
        || !frac_part.chars().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    if frac_part.len() > 12 {
        return None;
    }
    let digits = format!("{int_part}{frac_part}");
    // More digits than a u128 holds: saturate, so the caller reports the
    // number as too large rather than as not a number.
    let mantissa: u128 = digits.parse().unwrap_or(u128::MAX);
    Some(ExactDecimal {
        mantissa,
        // More fraction digits than a u32 counts is not a size anyone types.
        decimals: u32::try_from(frac_part.len()).ok()?,
    })
}

/// Parse "8TB", "7.5 TiB", "8T", "10GB", "8001563222016" or "4096B": the one
/// size parser of `plan`, the lab and every other place that reads a size a
/// user typed.
///
/// Decimal units (KB…PB) with `SizeMeaning::MarketedDisk` and a value of at least
/// 50 GB go through the IDEMA rule; binary units (KiB…PiB, and K…P, which
/// zfs(8) and zpool(8) read as powers of 1024) and bare byte counts are always
/// exact. The result must be a whole number of bytes.
pub fn parse_size(input: &str, meaning: SizeMeaning) -> Result<u64> {
    let text = input.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit = unit.trim();
    let value = parse_exact_decimal(number).ok_or_else(|| ModelError::InvalidSize {
        input: input.to_string(),
        reason: "expected a number followed by a unit, e.g. 8TB or 7.3TiB".into(),
    })?;
    let (multiplier, decimal): (u128, bool) = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => (1, false),
        "kb" => (1_000, true),
        "mb" => (1_000_000, true),
        "gb" => (1_000_000_000, true),
        "tb" => (1_000_000_000_000, true),
        "pb" => (1_000_000_000_000_000, true),
        "kib" | "k" => (KIB as u128, false),
        "mib" | "m" => (MIB as u128, false),
        "gib" | "g" => (GIB as u128, false),
        "tib" | "t" => (TIB as u128, false),
        "pib" | "p" => ((TIB as u128) << 10, false),
        _ => {
            return Err(ModelError::UnknownUnit {
                input: input.to_string(),
                unit: unit.to_string(),
            })
        }
    };
    let too_large = || ModelError::InvalidSize {
        input: input.to_string(),
        reason: "too large".into(),
    };
    let scale = 10u128.pow(value.decimals);
    let scaled = value
        .mantissa
        .checked_mul(multiplier)
        .ok_or_else(too_large)?;
    if scaled % scale != 0 {
        return Err(ModelError::InvalidSize {
            input: input.to_string(),
            reason: "not a whole number of bytes".into(),
        });
    }
    let bytes = scaled / scale;
    if bytes == 0 {
        return Err(ModelError::InvalidSize {
            input: input.to_string(),
            reason: "size must be greater than zero".into(),
        });
    }
    if decimal && meaning == SizeMeaning::MarketedDisk && bytes >= 50_000_000_000 {
        if bytes % 1_000_000_000 != 0 {
            return Err(ModelError::InvalidSize {
                input: input.to_string(),
                reason: "a marketed disk size must be a whole number of GB (the IDEMA rule counts GB); give exact bytes instead".into(),
            });
        }
        let gb = u64::try_from(bytes / 1_000_000_000).map_err(|_| too_large())?;
        // At least 50 GB here, so only a byte count beyond u64 fails.
        return idema_disk_bytes(gb).ok_or_else(too_large);
    }
    u64::try_from(bytes).map_err(|_| too_large())
}

/// Parse a ZFS block size ("128K", "1M", "16KiB", "4096"): K and M mean KiB
/// and MiB as in `zfs set recordsize=`. Must be a power of two in `min..=max`.
pub fn parse_block_size(input: &str, min: u64, max: u64) -> Result<u64> {
    let bytes = parse_size(input, SizeMeaning::Exact).map_err(|_| ModelError::InvalidSize {
        input: input.to_string(),
        reason: "expected a block size such as 4K, 16K, 128K or 1M".into(),
    })?;
    if !bytes.is_power_of_two() || bytes < min || bytes > max {
        return Err(ModelError::InvalidSize {
            input: input.to_string(),
            reason: format!(
                "must be a power of two from {} to {}",
                human_binary(min),
                human_binary(max)
            ),
        });
    }
    Ok(bytes)
}

/// Print a byte count the way `zpool list` / `zfs list` do (`zfs_nicenum`):
/// divide by 1024 while the value is at least 1024 to choose the unit; an exact
/// multiple of the unit prints without decimals; otherwise the first of
/// `%.2f`, `%.1f`, `%.0f` that fits in five characters including the suffix.
/// Rust's float formatting rounds the exact binary value half to even, as C's
/// printf does, so "27.25T" becomes "27.2T" just as zpool prints it.
pub fn zpool_nicenum(bytes: u64) -> String {
    const SUFFIXES: [char; 7] = [' ', 'K', 'M', 'G', 'T', 'P', 'E'];
    let mut index = 0usize;
    let mut reduced = bytes;
    while reduced >= 1024 && index < SUFFIXES.len() - 1 {
        reduced /= 1024;
        index += 1;
    }
    if index == 0 {
        return bytes.to_string();
    }
    let suffix = SUFFIXES[index];
    let unit = 1u128 << (10 * index);
    if (bytes as u128).is_multiple_of(unit) {
        return format!("{reduced}{suffix}");
    }
    let value = bytes as f64 / unit as f64;
    for precision in [2usize, 1, 0] {
        let text = format!("{value:.precision$}{suffix}");
        if text.len() <= 5 {
            return text;
        }
    }
    format!("{value:.0}{suffix}")
}

/// Bytes as TiB for display.
pub fn tib(bytes: u64) -> f64 {
    bytes as f64 / TIB as f64
}

/// Bytes as decimal TB for display.
pub fn tb(bytes: u64) -> f64 {
    bytes as f64 / 1e12
}

/// Group digits in threes ("8,001,563,222,016") so long byte counts can be read
/// and compared with `zfs get -p` and `zdb` output.
pub fn group_digits(value: u128) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Human size in the binary unit that keeps 1–3 integer digits, e.g. "10.0 GiB".
pub fn human_binary(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut index = 0;
    while value >= 1024.0 && index < units.len() - 1 {
        value /= 1024.0;
        index += 1;
    }
    if index == 0 {
        format!("{bytes} B")
    } else if value.fract() == 0.0 {
        format!("{value:.0} {}", units[index])
    } else {
        format!("{value:.1} {}", units[index])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idema_rule_gives_the_spec_8tb_bytes() {
        assert_eq!(idema_disk_bytes(8000), Some(8_001_563_222_016));
        assert_eq!(
            parse_size("8TB", SizeMeaning::MarketedDisk).unwrap(),
            8_001_563_222_016
        );
        assert_eq!(
            parse_size("8 tb", SizeMeaning::MarketedDisk).unwrap(),
            8_001_563_222_016
        );
    }

    #[test]
    fn binary_and_exact_sizes_are_not_rewritten() {
        assert_eq!(
            parse_size("8TiB", SizeMeaning::MarketedDisk).unwrap(),
            8_796_093_022_208
        );
        assert_eq!(
            parse_size("8001563222016", SizeMeaning::MarketedDisk).unwrap(),
            8_001_563_222_016
        );
        assert_eq!(
            parse_size("10GB", SizeMeaning::Exact).unwrap(),
            10_000_000_000
        );
        assert_eq!(parse_size("1.5KiB", SizeMeaning::Exact).unwrap(), 1536);
        // One-letter units are binary, as zfs(8) reads them, and never marketed.
        assert_eq!(
            parse_size("8T", SizeMeaning::MarketedDisk).unwrap(),
            8 * TIB
        );
        assert_eq!(
            parse_size("1.5g", SizeMeaning::Exact).unwrap(),
            1_610_612_736
        );
        assert_eq!(parse_size("4K", SizeMeaning::Exact).unwrap(), 4096);
        assert_eq!(parse_size("1P", SizeMeaning::Exact).unwrap(), 1 << 50);
        assert_eq!(
            parse_size("1.92TB", SizeMeaning::MarketedDisk).unwrap(),
            idema_disk_bytes(1920).unwrap()
        );
    }

    #[test]
    fn bad_sizes_are_rejected_with_the_reason() {
        let err = parse_size("8XB", SizeMeaning::Exact).unwrap_err();
        assert!(err.to_string().contains("unknown unit 'XB'"), "{err}");
        assert!(err.to_string().contains("TiB"), "{err}");
        assert!(parse_size("TB", SizeMeaning::Exact).is_err());
        assert!(parse_size("0TB", SizeMeaning::Exact).is_err());
        assert!(parse_size("0.1B", SizeMeaning::Exact).is_err());
        assert!(parse_size("8.0001TB", SizeMeaning::MarketedDisk).is_err());
        // Too large for any integer on the way: an error, not an overflow.
        for huge in [
            "99999999999999999999999999999999999PB",
            "999999999999999999999999999999999999999999",
            "20000000000000000000",
        ] {
            let err = parse_size(huge, SizeMeaning::Exact).unwrap_err();
            assert!(err.to_string().contains("too large"), "{huge}: {err}");
        }
        for huge in ["99999999999999999999999TB", "10000000000PB"] {
            let err = parse_size(huge, SizeMeaning::MarketedDisk).unwrap_err();
            assert!(err.to_string().contains("too large"), "{huge}: {err}");
        }
    }

    #[test]
    fn zpool_prints_sizes_like_zfs_nicenum() {
        // As `zpool list` printed SIZE on zfs-fuse 0.7.0 pools: an exact
        // multiple without decimals, otherwise %.2f/%.1f/%.0f, ties to even.
        assert_eq!(zpool_nicenum(87 * TIB), "87T");
        assert_eq!(zpool_nicenum(27 * TIB + TIB / 4), "27.2T");
        assert_eq!(zpool_nicenum(1016 * GIB + GIB / 3), "1016G");
        assert_eq!(zpool_nicenum(191 * TIB), "191T");
        assert_eq!(zpool_nicenum(190 * TIB + TIB / 2), "190T");
        assert_eq!(zpool_nicenum(143 * (1u64 << 37)), "17.9T");
        assert_eq!(zpool_nicenum(512), "512");
        assert_eq!(zpool_nicenum(1_363_968), "1.30M");
    }

    #[test]
    fn block_sizes_use_zfs_suffixes() {
        assert_eq!(parse_block_size("128K", 512, 16 * MIB).unwrap(), 128 * KIB);
        assert_eq!(parse_block_size("1M", 512, 16 * MIB).unwrap(), MIB);
        assert_eq!(parse_block_size("16KiB", 512, 16 * MIB).unwrap(), 16 * KIB);
        assert!(parse_block_size("100K", 512, 16 * MIB).is_err());
        assert!(parse_block_size("32M", 512, 16 * MIB).is_err());
        assert!(parse_block_size("fast", 512, 16 * MIB).is_err());
    }

    #[test]
    fn digits_are_grouped() {
        assert_eq!(group_digits(8_001_563_222_016), "8,001,563,222,016");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1000), "1,000");
    }
}

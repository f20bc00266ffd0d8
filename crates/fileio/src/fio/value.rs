//! fio's value syntax, for the kinds of value the supported options take:
//! sizes, times, whole numbers, booleans and percentages.
//!
//! fio 3.33 reads numbers with `strtoll` and then looks at the letters that
//! follow (`str_to_decimal`, `get_mult_bytes` and `get_mult_time` in its
//! parse.c), which makes it lax in ways that surprise: `bs=1.5k` is 1 byte
//! (the digits stop at the `.`, and a suffix that does not follow digits is
//! ignored), `runtime=1sec` is 1 microsecond (only `s` means seconds), and
//! `rwmixread=70%` turns into a huge number. Here a value is digits and one
//! suffix from fio's list, or it is refused naming what is accepted; every
//! value that is accepted means what fio makes of it (tests/fio_golden.rs
//! checks each kind against the real fio).
//!
//! Sizes follow fio's default `kb_base=1024`, whose prefixes are the
//! opposite of the standards' "to provide compatibility with old scripts"
//! (fio's HOWTO, "Parameter types"): `4k`, `4kb` and `4KB` are 4096 bytes,
//! `4KiB` is 4000 (and, unlike the HOWTO's table, fio 3.33 reads `4ki` as
//! `4k`: only the three-letter `kib` forms are powers of 1000).

/// Why a value was refused: what was wrong, and what the option accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueError {
    pub problem: String,
    pub accepted: String,
}

impl ValueError {
    fn new(problem: impl Into<String>, accepted: impl Into<String>) -> ValueError {
        ValueError {
            problem: problem.into(),
            accepted: accepted.into(),
        }
    }
}

/// What a size accepts, for messages.
pub const SIZE_ACCEPTED: &str =
    "a whole number of bytes with an optional suffix k, m, g, t, p (powers of 1024; kib, mib... are powers of 1000 in fio), e.g. 4k, 64m, 10g";

/// What a time accepts, for messages.
pub const TIME_ACCEPTED: &str =
    "a whole number with an optional unit us, ms, s, m, h or d (seconds without one), e.g. 30, 500ms, 2m";

/// fio's size suffixes with `kb_base=1024`: (suffix, power, base).
const SIZE_SUFFIXES: &[(&str, u32, u64)] = &[
    ("", 0, 1),
    ("b", 0, 1),
    ("k", 1, 1024),
    ("kb", 1, 1024),
    ("ki", 1, 1024),
    ("kib", 1, 1000),
    ("m", 2, 1024),
    ("mb", 2, 1024),
    ("mi", 2, 1024),
    ("mib", 2, 1000),
    ("g", 3, 1024),
    ("gb", 3, 1024),
    ("gi", 3, 1024),
    ("gib", 3, 1000),
    ("t", 4, 1024),
    ("tb", 4, 1024),
    ("ti", 4, 1024),
    ("tib", 4, 1000),
    ("p", 5, 1024),
    ("pb", 5, 1024),
    ("pi", 5, 1024),
    ("pib", 5, 1000),
];

/// fio's time units, in microseconds (`get_mult_time`).
const TIME_UNITS: &[(&str, u64)] = &[
    ("us", 1),
    ("usec", 1),
    ("ms", 1_000),
    ("msec", 1_000),
    ("s", 1_000_000),
    ("m", 60_000_000),
    ("h", 3_600_000_000),
    ("d", 86_400_000_000),
];

/// The digits at the start of `text` and the rest. A hexadecimal `0x`
/// number takes no suffix.
fn split_number(text: &str) -> Option<(u64, &str)> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok().map(|v| (v, ""));
    }
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    if end == 0 {
        return None;
    }
    Some((text[..end].parse().ok()?, &text[end..]))
}

/// A size in bytes (fio's "int" with a data suffix).
pub fn parse_size(text: &str) -> Result<u64, ValueError> {
    let t = text.trim();
    if t.ends_with('%') {
        return Err(ValueError::new(
            "a percentage of an existing file or device is not supported (tankbench creates the files it tests)",
            SIZE_ACCEPTED,
        ));
    }
    if t.starts_with('(') || t.contains(['*', '+', '/', '^']) {
        return Err(ValueError::new(
            "arithmetic expressions are not supported",
            SIZE_ACCEPTED,
        ));
    }
    let Some((number, suffix)) = split_number(t) else {
        return Err(ValueError::new("not a size", SIZE_ACCEPTED));
    };
    let lower = suffix.to_ascii_lowercase();
    let Some(&(_, power, base)) = SIZE_SUFFIXES.iter().find(|(s, _, _)| *s == lower) else {
        return Err(ValueError::new(
            if suffix.starts_with('.') {
                "fractions are not supported (fio reads the digits before the point and drops the rest)".to_string()
            } else {
                format!("unknown suffix '{suffix}'")
            },
            SIZE_ACCEPTED,
        ));
    };
    base.checked_pow(power)
        .and_then(|m| number.checked_mul(m))
        .ok_or_else(|| ValueError::new("too large", SIZE_ACCEPTED))
}

/// A time in microseconds; a number without a unit is in `default_unit_us`
/// (seconds for every time option supported).
pub fn parse_time_us(text: &str, default_unit_us: u64) -> Result<u64, ValueError> {
    let t = text.trim();
    if t.starts_with('(') {
        return Err(ValueError::new(
            "arithmetic expressions are not supported",
            TIME_ACCEPTED,
        ));
    }
    let Some((number, unit)) = split_number(t) else {
        return Err(ValueError::new("not a time", TIME_ACCEPTED));
    };
    let multiplier = if unit.is_empty() {
        default_unit_us
    } else {
        let lower = unit.to_ascii_lowercase();
        match TIME_UNITS.iter().find(|(u, _)| *u == lower) {
            Some(&(_, m)) => m,
            None if lower == "sec" => {
                return Err(ValueError::new(
                    "unit 'sec' is not supported (fio's documentation lists it, but fio 3.33 reads it as microseconds); write s",
                    TIME_ACCEPTED,
                ))
            }
            None => {
                return Err(ValueError::new(
                    format!("unknown unit '{unit}'"),
                    TIME_ACCEPTED,
                ))
            }
        }
    };
    number
        .checked_mul(multiplier)
        .ok_or_else(|| ValueError::new("too large", TIME_ACCEPTED))
}

/// A whole number from `min` to `max` (fio's "int" without a suffix).
pub fn parse_count(text: &str, min: u64, max: u64) -> Result<u64, ValueError> {
    let accepted = || format!("a whole number from {min} to {max}");
    let t = text.trim();
    let Some((number, rest)) = split_number(t) else {
        return Err(ValueError::new("not a whole number", accepted()));
    };
    if !rest.is_empty() {
        return Err(ValueError::new(
            format!("'{rest}' after the number"),
            accepted(),
        ));
    }
    if number < min || number > max {
        return Err(ValueError::new("out of range", accepted()));
    }
    Ok(number)
}

/// A boolean: 0 or 1 (fio's "bool"; `bare` is what a bare flag means, for
/// options fio lets stand alone).
pub fn parse_bool(text: Option<&str>, bare: Option<bool>) -> Result<bool, ValueError> {
    let accepted = if bare.is_some() {
        "0 or 1, or the option alone for 1"
    } else {
        "0 or 1"
    };
    match text.map(str::trim) {
        None => bare.ok_or_else(|| ValueError::new("a value is needed", accepted)),
        Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(_) => Err(ValueError::new("not 0 or 1", accepted)),
    }
}

/// A percentage 0 to 100, without a `%` (fio reads `70%` as a huge number).
pub fn parse_percentage(text: &str) -> Result<u32, ValueError> {
    let accepted = "a whole number from 0 to 100, without %";
    let t = text.trim();
    if t.ends_with('%') {
        return Err(ValueError::new(
            "'%' is not supported (fio 3.33 reads 70% as a number far above 100)",
            accepted,
        ));
    }
    parse_count(t, 0, 100)
        .map(|v| u32::try_from(v).expect("at most 100"))
        .map_err(|e| ValueError::new(e.problem, accepted))
}

/// A size in fio's report style: `4096B`, `4KiB`, `1MiB` (exact binary
/// multiples, as fio's `num2str` prints block sizes), else bytes.
pub fn size_label(bytes: u64) -> String {
    for (unit, shift) in [
        ("PiB", 50),
        ("TiB", 40),
        ("GiB", 30),
        ("MiB", 20),
        ("KiB", 10),
    ] {
        let m = 1u64 << shift;
        if bytes >= m && bytes.is_multiple_of(m) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_kb_base_1024() {
        for (text, bytes) in [
            ("4096", 4096),
            ("4k", 4096),
            ("4K", 4096),
            ("4kb", 4096),
            ("4KB", 4096),
            ("4KiB", 4000),
            ("1m", 1 << 20),
            // fio 3.33 reads `mi` as `m` (its HOWTO says 10^6; the real fio
            // gives 2^20, tests/fio_golden.rs).
            ("1mi", 1 << 20),
            ("4ki", 4096),
            ("1mib", 1_000_000),
            ("2g", 2 << 30),
            ("1t", 1 << 40),
            ("1p", 1 << 50),
            ("512b", 512),
            (" 4k", 4096),
            ("0x1000", 4096),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
    }

    #[test]
    fn lax_fio_sizes_are_refused_with_the_reason() {
        let e = parse_size("1.5k").unwrap_err();
        assert!(e.problem.contains("fractions"), "{e:?}");
        assert!(parse_size("10%")
            .unwrap_err()
            .problem
            .contains("percentage"));
        assert!(parse_size("(4k*2)")
            .unwrap_err()
            .problem
            .contains("arithmetic"));
        assert!(parse_size("4kx").unwrap_err().problem.contains("suffix"));
        assert!(parse_size("abc").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("16777216p")
            .unwrap_err()
            .problem
            .contains("too large"));
    }

    #[test]
    fn times_default_to_seconds_and_take_fio_units() {
        let s = 1_000_000;
        assert_eq!(parse_time_us("30", s), Ok(30 * s));
        assert_eq!(parse_time_us("500ms", s), Ok(500_000));
        assert_eq!(parse_time_us("2m", s), Ok(120 * s));
        assert_eq!(parse_time_us("1h", s), Ok(3600 * s));
        assert_eq!(parse_time_us("1D", s), Ok(86400 * s));
        assert_eq!(parse_time_us("250us", s), Ok(250));
        assert_eq!(parse_time_us("10S", s), Ok(10 * s));
        assert!(parse_time_us("1sec", s)
            .unwrap_err()
            .problem
            .contains("microseconds"));
        assert!(parse_time_us("1x", s).is_err());
    }

    #[test]
    fn counts_booleans_and_percentages() {
        assert_eq!(parse_count("4", 1, 10), Ok(4));
        assert!(parse_count("0", 1, 10).is_err());
        assert!(
            parse_count("4k", 1, 10_000).is_err(),
            "no suffix on a count"
        );
        assert_eq!(parse_bool(Some("1"), None), Ok(true));
        assert_eq!(parse_bool(None, Some(true)), Ok(true));
        assert!(parse_bool(None, None).is_err(), "fio: requires an argument");
        assert!(parse_bool(Some("yes"), None).is_err());
        assert_eq!(parse_percentage("70"), Ok(70));
        assert!(parse_percentage("70%").is_err());
        assert!(parse_percentage("101").is_err());
    }

    #[test]
    fn size_labels_are_exact_binary_multiples() {
        assert_eq!(size_label(4096), "4KiB");
        assert_eq!(size_label(1 << 20), "1MiB");
        assert_eq!(size_label(4000), "4000B");
        assert_eq!(size_label(349_525), "349525B");
    }
}

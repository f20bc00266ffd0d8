//! The one syntax of every duration option tankbench adds (`quick --time`,
//! `slog --time-per-size`, `probe --time-per-op`, `durability write
//! --time`, `fileio --warmup`): a number of seconds, or a number with a
//! unit, as hyperfine and fio users type them. sysbench's own options
//! (`--time`, `--report-interval`) keep sysbench's whole seconds, so a
//! script written for sysbench means the same thing here.

use std::time::Duration;

/// What a duration option accepts, for its refusal and its `--help`.
pub const SYNTAX: &str =
    "a number with an optional ms, s, m or h suffix, e.g. 5, 5s, 500ms, 2m, 1h";

/// The longest duration taken: about 30 years, beyond any run (and within
/// what `Duration` and the clocks hold).
const LONGEST_MS: f64 = 1e12;

/// A duration as typed: `5` (seconds), `5s`, `500ms`, `2m`, `1h`, a
/// fraction allowed (`1.5s`); None when the text is none of these,
/// negative or beyond ~30 years.
pub fn parse(text: &str) -> Option<Duration> {
    let text = text.trim();
    let (number, unit_ms) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1e3)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60e3)
    } else if let Some(n) = text.strip_suffix('h') {
        (n, 3600e3)
    } else {
        (text, 1e3)
    };
    let v: f64 = number.trim().parse().ok()?;
    if !v.is_finite() || v < 0.0 || v * unit_ms > LONGEST_MS {
        return None;
    }
    Some(Duration::from_secs_f64(v * unit_ms / 1e3))
}

/// [`parse`] for an option that counts whole seconds (`--warmup`,
/// `durability write --time`): `2m` is 120, `1.5s` is refused.
pub fn whole_seconds(text: &str) -> Option<u64> {
    let d = parse(text)?;
    (d.subsec_nanos() == 0).then_some(d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_syntax_reads_every_duration() {
        assert_eq!(parse("5"), Some(Duration::from_secs(5)));
        assert_eq!(parse("5s"), Some(Duration::from_secs(5)));
        assert_eq!(parse("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse(" 1.5s "), Some(Duration::from_millis(1500)));
        for bad in ["", "s", "-1s", "2d", "inf", "NaN", "1e300m", "5 sec"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(whole_seconds("2m"), Some(120));
        assert_eq!(whole_seconds("0"), Some(0));
        assert_eq!(whole_seconds("1.5s"), None);
    }
}

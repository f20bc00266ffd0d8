//! The wall clock as results record it: the one home for an RFC 3339 time
//! stamp. (The run's own monotonic clock is [`crate::run::clock`].)

use std::time::{SystemTime, UNIX_EPOCH};

/// The current UTC time, RFC 3339 with whole seconds (`2026-11-30T23:33:03Z`).
pub fn utc_now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// `t` in UTC, RFC 3339 with whole seconds; a time before 1970 (a clock set
/// wrong) reads as the epoch.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    rfc3339_of_unix_seconds(secs)
}

/// Seconds since the Unix epoch, as an RFC 3339 UTC time stamp.
pub fn rfc3339_of_unix_seconds(secs: u64) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // At most u64::MAX / 86400 days: well inside i64.
    #[allow(clippy::cast_possible_wrap)]
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day), by
/// Howard Hinnant's `civil_from_days`, so one time stamp needs no date crate.
// The day (1..=31) and month (1..=12) the algorithm derives always fit a u32.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The inverse of [`rfc3339_of_unix_seconds`]: seconds since the Unix epoch of
/// a time stamp as results record it (`2026-11-30T23:33:03Z`, UTC, whole
/// seconds); `None` for any other text or a time before 1970.
pub fn unix_seconds_of_rfc3339(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || b[19] != b'Z' {
        return None;
    }
    let field = |from: usize, to: usize| -> Option<i64> {
        let text = s.get(from..to)?;
        text.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| text.parse().ok())
            .flatten()
    };
    let (y, m, d) = (field(0, 4)?, field(5, 7)?, field(8, 10)?);
    let (hh, mm, ss) = (field(11, 13)?, field(14, 16)?, field(17, 19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 59 {
        return None;
    }
    let secs = days_from_civil(y, m, d) * 86_400 + hh * 3600 + mm * 60 + ss;
    // Round trip: a day past the month's end (`02-30`) is not a date.
    let back = u64::try_from(secs).ok()?;
    (rfc3339_of_unix_seconds(back - back % 86_400)[..10] == s[..10]).then_some(back)
}

/// Howard Hinnant's `days_from_civil`, the inverse of [`civil_from_days`].
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(rfc3339_of_unix_seconds(0), "1970-01-01T00:00:00Z");
        // date -u -d @951782400: the leap day of 2000.
        assert_eq!(rfc3339_of_unix_seconds(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_of_unix_seconds(951_868_799), "2000-02-29T23:59:59Z");
        // date -u -d @1796081583
        assert_eq!(
            rfc3339_of_unix_seconds(1_796_081_583),
            "2026-11-30T23:33:03Z"
        );
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn time_stamps_read_back() {
        for secs in [0, 951_782_400, 951_868_799, 1_796_081_583, 4_102_444_800] {
            let text = rfc3339_of_unix_seconds(secs);
            assert_eq!(unix_seconds_of_rfc3339(&text), Some(secs), "{text}");
        }
        for bad in [
            "",
            "2026-11-30 23:33:03Z",
            "2026-11-30T23:33:03",
            "2026-11-30T23:33:03+01:00",
            "2026-02-30T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "1969-12-31T23:59:59Z",
            "2026-1a-30T23:33:03Z",
            "+026-11-30T23:33:03Z",
        ] {
            assert_eq!(unix_seconds_of_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn now_is_well_formed() {
        let s = utc_now_rfc3339();
        assert_eq!(s.len(), 20);
        assert!(s.ends_with('Z') && s.as_bytes()[10] == b'T');
        assert!(s.as_str() >= "2024");
    }
}

//! A log device measured by `tankbench slog`: its result document read and
//! mapped to the simulator's flash model.

use std::path::Path;

use fileio::slog::{ResultDocError, SlogResult, SlogSize};
use zfs_model::diskmodel::FlashParams;

use crate::FieldError;

/// The field a measured log device's errors name.
pub const MEASURED_LOG_FIELD: &str = "log.measured";

/// Largest write rate a measured log device is given, MB/s (10^6, a
/// terabyte a second): when the measured latency does not grow with the
/// size, the transfer time is below what the measurement resolves.
pub const MEASURED_MAX_MB_S: f64 = 1e6;

/// A log device measured by `tankbench slog` (its result file at `path`), as
/// the simulator's flash model ([`flash_from_slog`]). Every refusal is one
/// line naming `log.measured` and the file.
pub fn measured_log(path: &Path) -> Result<FlashParams, FieldError> {
    let bad = |problem: String| {
        FieldError::new(MEASURED_LOG_FIELD, format!("{}: {problem}", path.display()))
    };
    let text = zfs_model::config_file::read_config(path).map_err(|e| bad(e.to_string()))?;
    let result = SlogResult::from_json(&text).map_err(|e| match e {
        ResultDocError::Kind { found, .. } => bad(format!(
            "not a `tankbench slog` result (its kind is {})",
            found.map_or_else(|| "missing".to_string(), |k| format!("\"{k}\""))
        )),
        e => bad(format!("not a readable `tankbench slog` result: {e}")),
    })?;
    flash_from_slog(&result).map_err(bad)
}

/// The flash model of a measured log device (docs/slog-and-probe.md, "As a
/// log device"). The simulator's log device writes a block and then flushes
/// it, one after the other: `flush_ms + bytes / write_mb_s` with
/// `write_ms = 0`. `tankbench slog` measures exactly that sum per size, one
/// write at a time, so:
///
/// - only sizes of 4 KiB or more count: a log block is whole 4 KiB sectors
///   (ashift 12), so smaller writes never reach the device;
/// - the line is anchored at the smallest of them (4 KiB by default), the
///   size of a small commit, whose mean latency it reproduces exactly;
/// - its slope is the weighted least-squares slope of the mean latencies of
///   the larger sizes through that point, each error relative to its size's
///   latency (weight 1/latency²), so the 8-128 KiB sizes a ZIL mostly writes
///   count as much as the 1 MiB one; a slope at or below 0 (latency flat
///   within noise) is [`MEASURED_MAX_MB_S`], and one steeper than the
///   anchor's latency allows is cut so the fixed cost is not negative;
/// - the whole fixed cost is the flush (`flush_ms`), none of it `write_ms`:
///   the test never overlaps two writes, so it says nothing about overlap,
///   and a flush is the one step the model never overlaps (one lane,
///   `parallelism = 1`). Concurrent commits therefore get no more from the
///   device than the measurement showed;
/// - means, not medians: a commit's mean latency is what sets the commits a
///   second.
///
/// Reads never reach a log device (read fields 0 and the write rate); the
/// power-loss fields change no timing, and the measurement cannot tell
/// them, so they are a protected device's.
pub fn flash_from_slog(r: &SlogResult) -> Result<FlashParams, String> {
    flash_from_sizes(&r.sizes)
}

/// [`flash_from_slog`] of a result's sizes.
fn flash_from_sizes(sizes: &[SlogSize]) -> Result<FlashParams, String> {
    let mut measured: Vec<(u64, f64)> = sizes
        .iter()
        .filter(|s| {
            s.writes > 0
                && s.size_bytes >= crate::components::SECTOR
                && s.latency.mean_ms.is_finite()
                && s.latency.mean_ms > 0.0
        })
        .map(|s| (s.size_bytes, s.latency.mean_ms))
        .collect();
    measured.sort_by_key(|p| p.0);
    measured.dedup_by_key(|p| p.0);
    let points: Vec<(f64, f64)> = measured.iter().map(|&(b, ms)| (b as f64, ms)).collect();
    let Some(&(s0, y0)) = points.first().filter(|_| points.len() >= 2) else {
        return Err(format!(
            "{} write size{} of 4 KiB or more measured; a log device needs at least 2 \
             (run tankbench slog with --max-size of 8K or more)",
            points.len(),
            if points.len() == 1 { "" } else { "s" }
        ));
    };
    let (num, den) = points[1..].iter().fold((0.0, 0.0), |(n, d), &(s, y)| {
        let w = 1.0 / (y * y);
        (n + w * (s - s0) * (y - y0), d + w * (s - s0) * (s - s0))
    });
    // ms per byte, at most what leaves the anchor's latency all transfer.
    let slope = num / den;
    let write_mb_s = if slope.is_finite() && slope > 0.0 {
        (1.0 / (slope.min(y0 / s0) * 1e3)).min(MEASURED_MAX_MB_S)
    } else {
        MEASURED_MAX_MB_S
    };
    let transfer_ms = s0 / (write_mb_s * 1e3);
    Ok(FlashParams {
        read_ms: 0.0,
        write_ms: 0.0,
        flush_ms: (y0 - transfer_ms).max(0.0),
        flush_ms_per_mb: 0.0,
        read_mb_s: write_mb_s,
        write_mb_s,
        parallelism: 1,
        volatile_cache: false,
        cache_bytes: 0,
        destage_ms: 0.0,
        flush_honoured: true,
        seed: 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(bytes: u64, mean_us: f64) -> SlogSize {
        SlogSize {
            size_bytes: bytes,
            writes: 10,
            seconds: 1.0,
            bytes_per_second: 0.0,
            iops: 0.0,
            latency: fileio::result::LatencySummary {
                count: 10,
                mean_ms: mean_us / 1000.0,
                ..fileio::result::LatencySummary::default()
            },
        }
    }

    fn sizes(from: u64, to: u64, us: impl Fn(u64) -> f64) -> Vec<SlogSize> {
        std::iter::successors(Some(from), |s| Some(s * 2))
            .take_while(|&s| s <= to)
            .map(|s| size(s, us(s)))
            .collect()
    }

    #[test]
    fn a_measured_line_maps_to_its_flush_and_rate() {
        // 30 µs + size / (200 MB/s): 200 bytes a µs. The sizes below 4 KiB
        // are ignored, however wrong (a device's read-modify-write).
        let mut all = sizes(512, 2048, |_| 900.0);
        all.extend(sizes(4096, 1 << 20, |s| 30.0 + s as f64 / 200.0));
        let f = flash_from_sizes(&all).unwrap();
        assert!((f.write_mb_s - 200.0).abs() < 1e-6, "{f:?}");
        assert!((f.flush_ms - 0.030).abs() < 1e-9, "{f:?}");
        assert!(
            f.write_ms.abs() < 1e-15 && f.flush_ms_per_mb.abs() < 1e-15,
            "{f:?}"
        );
        assert_eq!(f.parallelism, 1);
        // Flat within noise: the transfer is below what the test resolves.
        let flat =
            flash_from_sizes(&sizes(4096, 65536, |s| 50.0 - (s as f64).log2() * 0.1)).unwrap();
        assert!(
            (flat.write_mb_s - MEASURED_MAX_MB_S).abs() < 1e-9,
            "{flat:?}"
        );
        // The anchor: 48.8 µs at 4 KiB, less 4 KiB at 10^6 MB/s.
        assert!(
            (flat.flush_ms - (0.0488 - 4096.0 / 1e9)).abs() < 1e-9,
            "{flat:?}"
        );
    }

    #[test]
    fn the_4k_latency_is_kept_when_the_slope_would_make_the_fixed_cost_negative() {
        // Latency growing faster than in proportion from 4 KiB on: the
        // anchor keeps its measured latency, all of it transfer.
        let f = flash_from_sizes(&sizes(4096, 1 << 20, |s| (s as f64 / 4096.0).powi(2))).unwrap();
        assert!(f.flush_ms.abs() < 1e-15, "{f:?}");
        let at_4k = 4096.0 / (f.write_mb_s * 1e3);
        assert!((at_4k - 0.001).abs() < 1e-12, "{f:?}");
    }

    #[test]
    fn fewer_than_two_sizes_from_4k_are_refused() {
        let e = flash_from_sizes(&sizes(512, 4096, |_| 10.0)).unwrap_err();
        assert!(e.starts_with("1 write size of 4 KiB or more"), "{e}");
        let mut none = sizes(4096, 8192, |_| 10.0);
        none.iter_mut().for_each(|s| s.writes = 0);
        let e = flash_from_sizes(&none).unwrap_err();
        assert!(e.starts_with("0 write sizes"), "{e}");
    }
}

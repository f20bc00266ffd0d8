//! The report as fio's JSON (`--output-format=json`), and `json+`, which
//! adds each latency's bins, so tools that read fio's JSON read this:
//! `tankbench results import`, fio's `fio_jsonplus_clat2csv`. The fields
//! fio fills from what tankbench does not measure (CPU use, queue depth
//! distributions, per-second bandwidth samples) are left out; tankbench's
//! own additions are under `"tankbench"`.
//!
//! fio 3.33 keeps latencies in buckets of 64 per power of two
//! (`FIO_IO_U_PLAT_BITS` = 6 in stat.h; `plat_val_to_idx` and
//! `plat_idx_to_val` in stat.c), and a json+ bin is keyed by its bucket's
//! value in ns. tankbench's finer HDR buckets are poured into fio's.

use super::{Direction, Entry, Report};
use crate::fio::plan::FIO_PERCENTILES;
use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;
const PLAT_GROUP_NR: u64 = 29;
const PLAT_NR: u64 = PLAT_GROUP_NR * PLAT_VAL;

/// fio's bucket of a latency of `ns`.
pub fn plat_index(ns: u64) -> u64 {
    let msb = if ns == 0 { 0 } else { 63 - ns.leading_zeros() };
    if msb <= PLAT_BITS {
        return ns;
    }
    let error_bits = msb - PLAT_BITS;
    let base = u64::from(error_bits + 1) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (ns >> error_bits);
    (base + offset).min(PLAT_NR - 1)
}

/// The value fio gives bucket `index` (its middle), ns.
pub fn plat_value(index: u64) -> u64 {
    if index < (PLAT_VAL << 1) {
        return index;
    }
    let error_bits = (index >> PLAT_BITS) - 1;
    let base = 1u64 << (error_bits + u64::from(PLAT_BITS));
    let k = index % PLAT_VAL;
    // The middle of the bucket, as fio's `(k + 0.5) * (1 << error_bits)`.
    base + (2 * k + 1) * (1u64 << error_bits) / 2
}

/// A histogram's counts in fio's buckets, keyed by the bucket's value.
pub fn fio_bins(h: &Histogram<u64>) -> BTreeMap<u64, u64> {
    let mut bins = BTreeMap::new();
    for v in h.iter_recorded() {
        let ns = h.highest_equivalent(v.value_iterated_to());
        *bins.entry(plat_value(plat_index(ns))).or_insert(0) += v.count_at_value();
    }
    bins
}

/// fio's `%f` of a percentile key.
fn percentile_key(p: f64) -> String {
    format!("{p:.6}")
}

/// min, max, mean, stddev and N of a latency (fio's lat_ns object), with
/// the percentiles and, for json+, the bins.
fn latency(h: &Histogram<u64>, percentiles: bool, bins: bool) -> Value {
    let mut o = Map::new();
    let n = h.len();
    let (min, max, mean, dev) = if n == 0 {
        (0, 0, 0.0, 0.0)
    } else {
        (h.min(), h.max(), h.mean(), h.stdev())
    };
    o.insert("min".into(), json!(min));
    o.insert("max".into(), json!(max));
    o.insert("mean".into(), json!(mean));
    o.insert("stddev".into(), json!(dev));
    o.insert("N".into(), json!(n));
    if percentiles && n > 0 {
        let p: Map<String, Value> = FIO_PERCENTILES
            .iter()
            .map(|&p| {
                (
                    percentile_key(p),
                    json!(h.value_at_percentile(p).clamp(min, max)),
                )
            })
            .collect();
        o.insert("percentile".into(), Value::Object(p));
    }
    if bins && n > 0 {
        let b: Map<String, Value> = fio_bins(h)
            .into_iter()
            .map(|(ns, c)| (ns.to_string(), json!(c)))
            .collect();
        o.insert("bins".into(), Value::Object(b));
    }
    Value::Object(o)
}

fn zero_latency() -> Value {
    json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0})
}

fn direction(d: &Direction, plus: bool) -> Value {
    let bw = d.bw_bytes();
    json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": bw.round(),
        "bw": (bw / 1024.0).round(),
        "iops": d.iops(),
        "runtime": d.runtime_ms,
        "total_ios": d.ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": zero_latency(),
        "clat_ns": latency(&d.lat, true, plus),
        "lat_ns": latency(&d.lat, false, false),
    })
}

fn options(list: &[(String, String)]) -> Value {
    Value::Object(
        list.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

fn entry(e: &Entry, plus: bool) -> Value {
    let mut job_options = vec![("name".to_string(), e.name.clone())];
    job_options.extend(e.job_options.iter().cloned());
    let empty = super::Direction::new();
    let sync_n = e.sync.len();
    json!({
        "jobname": e.name,
        "groupid": e.group,
        "error": 0,
        "eta": 0,
        "elapsed": e.runtime_ms.div_ceil(1000),
        "job options": options(&job_options),
        "read": direction(&e.read, plus),
        "write": direction(&e.write, plus),
        "trim": direction(&empty, false),
        "sync": {
            "total_ios": sync_n,
            "lat_ns": latency(&e.sync, true, plus),
        },
        "job_runtime": e.job_runtime_ms,
    })
}

/// The report as fio's JSON; `plus` adds the latency bins (json+).
pub fn render(report: &Report, plus: bool) -> String {
    let a = &report.additions;
    let doc = json!({
        "fio version": format!("tankbench-{}", crate::result::ToolInfo::tankbench().version),
        "timestamp": report.timestamp_unix_s,
        "timestamp_ms": report.timestamp_unix_s * 1000,
        "time": crate::clock::rfc3339_of_unix_seconds(report.timestamp_unix_s),
        "global options": options(&report.global_options),
        "jobs": report.entries.iter().map(|e| entry(e, plus)).collect::<Vec<_>>(),
        "tankbench": {
            "interrupted": a.interrupted,
            "warnings": a.warnings,
            "notes": a.notes,
            "results": a.results,
        },
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("the report serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_buckets_are_exact_below_128_and_64_per_power_of_two_above() {
        for ns in 0..128 {
            assert_eq!(plat_value(plat_index(ns)), ns);
        }
        // 1000 ns: msb 9, 3 error bits: bucket 4 x 64 + 61, value 1004.
        assert_eq!(plat_index(1000), 4 * 64 + 61);
        assert_eq!(plat_value(plat_index(1000)), 1004);
        // Every value lands in a bucket whose value is within 1/128 of it.
        for ns in [130, 4_096, 77_777, 1_000_000, 123_456_789, 9_000_000_000] {
            let v = plat_value(plat_index(ns)) as f64;
            assert!((v - ns as f64).abs() <= ns as f64 / 100.0, "{ns} -> {v}");
        }
        assert_eq!(plat_index(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn bins_count_every_recorded_value() {
        let mut h = crate::run::histograms::new_hdr();
        for v in [1_500u64, 1_510, 40_000, 40_100, 2_000_000] {
            h.record(v).unwrap();
        }
        let bins = fio_bins(&h);
        assert_eq!(bins.values().sum::<u64>(), 5);
        assert!(bins.len() >= 3);
    }
}

//! Rank 0's merge of the ranks' results into the job's: counts summed, latency
//! from the ranks' HDR histograms added bucket by bucket, the job spanning the
//! earliest start to the latest end. Pure: no I/O, no coordinator.

use crate::result::{
    Distributed, LatencyKey, LatencySummary, Rates, RunResult, Warning, WorkloadSummary,
};
use crate::run::histograms::{
    new_hdr, sysbench_histogram_of, CountSnapshot, HDR_HIGH_NS, HDR_LOW_NS,
};
use crate::run::runner::PeriodStats;

use hdrhistogram::Histogram;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// A job's merged figures: its result (with the ranks' inside) and the period
/// the sysbench report prints.
#[derive(Debug)]
pub struct Merged {
    pub result: RunResult,
    pub period: PeriodStats,
}

/// An HDR histogram rebuilt from a result's `(highest value ns, count)`
/// buckets. Every bucket's value falls back into the same bucket (same bounds
/// and precision everywhere), so adding several results' buckets this way is
/// an exact bucket-wise sum.
pub fn histogram_of(summaries: &[&LatencySummary]) -> Histogram<u64> {
    let mut h = new_hdr();
    for s in summaries {
        for &(ns, count) in &s.histogram {
            h.saturating_record_n(ns.clamp(HDR_LOW_NS, HDR_HIGH_NS), count);
        }
    }
    h
}

// A float-to-integer `as` saturates (NaN gives 0): the times merged are
// non-negative and far below 2^64 ns (585 years), and a damaged result from a
// rank cannot make the merge panic.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn ns_of_ms(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn ns_of_s(s: f64) -> u64 {
    (s * 1e9).round() as u64
}

/// Merge the ranks' results (each with its `distributed` section) into the
/// job's. `directory` is the job's target directory.
pub fn merge(
    mut ranks: Vec<RunResult>,
    percentiles: &[f64],
    directory: &str,
) -> Result<Merged, String> {
    if ranks.is_empty() {
        return Err("a job needs at least one rank's result".to_string());
    }
    let size =
        u32::try_from(ranks.len()).map_err(|_| format!("a job has at most {} ranks", u32::MAX))?;
    let mut timing = Vec::with_capacity(ranks.len());
    for (i, r) in ranks.iter().enumerate() {
        let d = r
            .distributed
            .as_ref()
            .ok_or_else(|| format!("the result of rank {i} has no 'distributed' section"))?;
        timing.push((d.start_s, d.end_s, d.barrier_unix_ns));
    }
    let start = timing.iter().map(|t| t.0).fold(f64::INFINITY, f64::min);
    let end = timing.iter().map(|t| t.1).fold(f64::NEG_INFINITY, f64::max);
    let first_done = timing.iter().map(|t| t.1).fold(f64::INFINITY, f64::min);
    let first_unix = timing.iter().map(|t| t.2).min().unwrap_or(0);
    let last_unix = timing.iter().map(|t| t.2).max().unwrap_or(0);
    // Every rank's times from the job's start.
    for r in &mut ranks {
        if let Some(d) = r.distributed.as_mut() {
            d.start_s -= start;
            d.end_s -= start;
        }
    }
    let total = (end - start).max(0.0);
    let t = if total > 0.0 {
        total
    } else {
        f64::MIN_POSITIVE
    };

    let mut counts = crate::result::Counts::default();
    for r in &ranks {
        counts.add(&r.counts);
    }

    let (latency, event_histogram) = merged_latency(&ranks, &counts, percentiles);
    let event = latency.get(&LatencyKey::Event).cloned().unwrap_or_default();

    let warnings = merged_warnings(&ranks);

    let first = &ranks[0];
    let workload = merged_workload(&ranks, directory);

    let period = PeriodStats {
        seconds: total,
        total_time_s: total,
        counts: CountSnapshot {
            counts,
            latency_sum_ns: ns_of_ms(event.sum_ms),
        },
        histogram: sysbench_histogram_of(&event_histogram),
        min_ns: ns_of_ms(event.min_ms),
        max_ns: ns_of_ms(event.max_ms),
        threads: ranks
            .iter()
            .flat_map(|r| &r.threads)
            .map(|t| (t.events, ns_of_s(t.busy_time_s)))
            .collect(),
        // Results carry no per-thread extremes; `--debug`'s per-thread block
        // is a single-process report.
        thread_extremes_ns: Vec::new(),
    };
    let distributed = Distributed {
        size,
        rank: None,
        file_layout: first
            .distributed
            .as_ref()
            .map(|d| d.file_layout.clone())
            .unwrap_or_default(),
        stonewall: first.distributed.as_ref().is_some_and(|d| d.stonewall),
        start_s: 0.0,
        end_s: total,
        first_done_s: Some(first_done - start),
        last_done_s: Some(total),
        barrier_unix_ns: first_unix,
        clock_spread_s: Some((last_unix - first_unix) as f64 / 1e9),
        test_files: Vec::new(),
    };
    // No labels, intervals, durability check or prediction of its own.
    let base = RunResult::new(first.kind, workload);
    let result = RunResult {
        schema_version: first.schema_version,
        tool: first.tool.clone(),
        kind: first.kind,
        started_at: ranks
            .iter()
            .map(|r| r.started_at.clone())
            .min()
            .unwrap_or_default(),
        warmup_s: first.warmup_s,
        interrupted: ranks.iter().any(|r| r.interrupted),
        total_time_s: total,
        rates: Rates::of(&counts, t),
        counts,
        latency,
        threads: ranks.iter().flat_map(|r| r.threads.clone()).collect(),
        environment: first.environment.clone(),
        warnings,
        distributed: Some(distributed),
        ranks,
        ..base
    };
    Ok(Merged { result, period })
}

/// Rank 0's workload with the ranks' threads, files and limits added up.
fn merged_workload(ranks: &[RunResult], directory: &str) -> WorkloadSummary {
    let mut workload = ranks[0].workload.clone();
    workload.threads = ranks.iter().map(|r| r.workload.threads).sum();
    workload.file_num = ranks.iter().map(|r| r.workload.file_num).sum();
    workload.total_size = ranks.iter().map(|r| r.workload.total_size).sum();
    workload.events_limit = ranks.iter().map(|r| r.workload.events_limit).sum();
    workload.directory = directory.to_string();
    workload
}

/// Every latency summary of the job, from the ranks' histograms, and the
/// job's event histogram.
fn merged_latency(
    ranks: &[RunResult],
    counts: &crate::result::Counts,
    percentiles: &[f64],
) -> (BTreeMap<LatencyKey, LatencySummary>, Histogram<u64>) {
    let keys: BTreeSet<LatencyKey> = ranks
        .iter()
        .flat_map(|r| r.latency.keys().copied())
        .collect();
    let mut latency = BTreeMap::new();
    let mut event_histogram = new_hdr();
    for key in keys {
        let parts: Vec<&LatencySummary> =
            ranks.iter().filter_map(|r| r.latency.get(&key)).collect();
        let h = histogram_of(&parts);
        let mut summary = crate::summary::summarize(&h, percentiles);
        if key == LatencyKey::Event {
            // As for one process: sysbench's exact counters for count, min,
            // max and sum; percentiles from the merged histogram.
            let seen: Vec<&&LatencySummary> = parts.iter().filter(|s| s.count > 0).collect();
            summary.count = counts.events;
            summary.min_ms = seen.iter().map(|s| s.min_ms).fold(f64::INFINITY, f64::min);
            summary.max_ms = seen.iter().map(|s| s.max_ms).fold(0.0, f64::max);
            if seen.is_empty() {
                summary.min_ms = 0.0;
            }
            summary.sum_ms = parts.iter().map(|s| s.sum_ms).sum();
            summary.mean_ms = if counts.events > 0 {
                summary.sum_ms / counts.events as f64
            } else {
                0.0
            };
            // The ranks' percentiles are kept within their exact extremes;
            // the job's too.
            crate::summary::clamp_percentiles(&mut summary);
            event_histogram = h;
        }
        latency.insert(key, summary);
    }
    (latency, event_histogram)
}

/// A warning raised by several ranks appears once, with the figures of the
/// first rank that raised it, naming the ranks.
fn merged_warnings(ranks: &[RunResult]) -> Vec<Warning> {
    let mut warnings: Vec<(Warning, Vec<usize>)> = Vec::new();
    for (i, r) in ranks.iter().enumerate() {
        for w in &r.warnings {
            match warnings.iter_mut().find(|(x, _)| x.code == w.code) {
                Some((_, who)) => who.push(i),
                None => warnings.push((w.clone(), vec![i])),
            }
        }
    }
    warnings
        .into_iter()
        .map(|(mut w, who)| {
            let list: Vec<String> = who.iter().map(usize::to_string).collect();
            w.message = if who.len() == 1 {
                format!("Rank {}: {}", who[0], w.message)
            } else if who.len() == ranks.len() {
                format!("Every rank; rank {}'s figures: {}", who[0], w.message)
            } else {
                format!(
                    "Ranks {}; rank {}'s figures: {}",
                    list.join(", "),
                    who[0],
                    w.message
                )
            };
            w
        })
        .collect()
}

/// The job's own section after the sysbench report: timing, then one line per
/// rank.
pub fn job_section(job: &RunResult, percentile: u32) -> String {
    let mut s = String::new();
    let Some(d) = &job.distributed else {
        return s;
    };
    let layout = if d.file_layout == "shared" {
        format!("one shared file set in {}", job.workload.directory)
    } else {
        format!("files per rank in {}/rank-<N>", job.workload.directory)
    };
    let _ = writeln!(
        s,
        "MPI job ({} ranks, {layout}, stonewall {}):",
        d.size,
        if d.stonewall { "on" } else { "off" }
    );
    let _ = writeln!(
        s,
        "{:<41}{:.4}s",
        "    first rank done:",
        d.first_done_s.unwrap_or(0.0)
    );
    let _ = writeln!(
        s,
        "{:<41}{:.4}s",
        "    last rank done:",
        d.last_done_s.unwrap_or(0.0)
    );
    let _ = writeln!(
        s,
        "{:<41}{:.3}ms",
        "    wall-clock spread at the barrier:",
        d.clock_spread_s.unwrap_or(0.0) * 1e3
    );
    s.push_str("\nPer rank (seconds from the job's start; latency of events, ms):\n");
    let pct = (percentile > 0).then_some(percentile as f64);
    let mut head = format!(
        "    {:>4}  {:<16} {:>8} {:>8} {:>10} {:>10} {:>10} {:>11} {:>11} {:>8}",
        "rank",
        "host",
        "start",
        "end",
        "events",
        "reads/s",
        "writes/s",
        "read MiB/s",
        "write MiB/s",
        "avg"
    );
    if let Some(p) = pct {
        head.push_str(&format!(" {:>8}", format!("p{p}")));
    }
    head.push_str(&format!(" {:>8}", "max"));
    s.push_str(&head);
    s.push('\n');
    for r in &job.ranks {
        let rd = r.distributed.clone().unwrap_or_default();
        let event = r
            .latency
            .get(&LatencyKey::Event)
            .cloned()
            .unwrap_or_default();
        let mut line = format!(
            "    {:>4}  {:<16} {:>8.4} {:>8.4} {:>10} {:>10.2} {:>10.2} {:>11.2} {:>11.2} {:>8.3}",
            rd.rank.unwrap_or(0),
            truncate(&r.environment.hostname, 16),
            rd.start_s,
            rd.end_s,
            r.counts.events,
            r.rates.reads_per_s,
            r.rates.writes_per_s,
            r.rates.read_mib_per_s,
            r.rates.written_mib_per_s,
            event.mean_ms
        );
        if let Some(p) = pct {
            match event.at(p) {
                Some(ms) => line.push_str(&format!(" {ms:>8.3}")),
                None => line.push_str(&format!(" {:>8}", "-")),
            }
        }
        line.push_str(&format!(" {:>8.3}", event.max_ms));
        s.push_str(&line);
        s.push('\n');
    }
    s.push('\n');
    s
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

// Exact float comparisons in these tests: the compared values are small integers or copies of inputs, exact in
// binary floating point; computed ones are compared with a tolerance.
#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::spec::RunSpec;
    use crate::sysbench::args::ParsedArgs;

    /// A rank's result with event (= read) latencies `samples_ns`, timed
    /// `start_s..end_s` from the barrier.
    fn rank_result(rank: u32, samples_ns: &[u64], start_s: f64, end_s: f64) -> RunResult {
        use crate::options::GeneralOptions;
        use crate::result::{Counts, Environment, ResultKind, ThreadSummary, ToolInfo};
        let mut args = ParsedArgs::parse(["fileio", "--file-test-mode=rndrd", "run"]);
        let g = GeneralOptions::from_args(&mut args).unwrap();
        let w = RunSpec::from_args(&args, &g).unwrap();
        let mut h = new_hdr();
        for &ns in samples_ns {
            h.record(ns).unwrap();
        }
        let n = samples_ns.len() as u64;
        let sum: u64 = samples_ns.iter().sum();
        let pcts = [50.0, 95.0, 99.0];
        let mut event = crate::summary::summarize(&h, &pcts);
        event.min_ms = *samples_ns.iter().min().unwrap() as f64 / 1e6;
        event.max_ms = *samples_ns.iter().max().unwrap() as f64 / 1e6;
        event.sum_ms = sum as f64 / 1e6;
        let mut latency = BTreeMap::new();
        latency.insert(LatencyKey::Event, event);
        latency.insert(LatencyKey::Read, crate::summary::summarize(&h, &pcts));
        RunResult {
            schema_version: crate::result::SCHEMA_VERSION,
            tool: ToolInfo {
                name: "tankbench".into(),
                version: "test".into(),
            },
            kind: ResultKind::Measured,
            started_at: format!("2026-12-01T00:00:0{rank}Z"),
            labels: BTreeMap::new(),
            workload: w.summary("psync"),
            interrupted: false,
            warmup_s: 0,
            total_time_s: end_s - start_s,
            counts: Counts {
                events: n,
                reads: n,
                bytes_read: n * 16384,
                ..Counts::default()
            },
            rates: Rates::default(),
            latency,
            threads: vec![ThreadSummary {
                events: n,
                busy_time_s: sum as f64 / 1e9,
            }],
            intervals: Vec::new(),
            environment: Environment {
                hostname: format!("host{rank}"),
                ..Environment::default()
            },
            warnings: vec![Warning {
                code: "cached".into(),
                message: format!("rank {rank} read from cache"),
                hint: "h".into(),
            }],
            ranks: Vec::new(),
            distributed: Some(Distributed {
                size: 2,
                rank: Some(rank),
                file_layout: "per_rank".into(),
                start_s,
                end_s,
                barrier_unix_ns: 1_000_000_000 + rank as u64 * 2_000_000,
                ..Distributed::default()
            }),
            durability: None,
            prediction: None,
            anchor: None,
        }
    }

    fn hist_count(s: &LatencySummary) -> u64 {
        s.histogram.iter().map(|b| b.1).sum()
    }

    #[test]
    fn merging_adds_counts_and_histograms_and_spans_the_job() {
        // Rank 0: 1000 fast events (1 ms); rank 1: 50 slow ones (10 ms), and
        // it started later and finished earlier.
        let a = rank_result(0, &vec![1_000_000; 1000], 0.000_1, 2.0);
        let b = rank_result(1, &vec![10_000_000; 50], 0.000_3, 1.5);
        let job = merge(vec![a.clone(), b.clone()], &[50.0, 95.0, 99.0], "/t").unwrap();
        let r = &job.result;
        assert_eq!(r.counts.events, 1050);
        assert_eq!(r.counts.bytes_read, 1050 * 16384);
        assert_eq!(r.threads.len(), 2);
        assert_eq!(r.workload.threads, 2);
        assert_eq!(r.workload.directory, "/t");
        let d = r.distributed.as_ref().unwrap();
        assert!(
            (r.total_time_s - (2.0 - 0.000_1)).abs() < 1e-9,
            "earliest start to latest end"
        );
        assert!((d.first_done_s.unwrap() - (1.5 - 0.000_1)).abs() < 1e-9);
        assert_eq!(d.last_done_s, Some(r.total_time_s));
        assert!((d.clock_spread_s.unwrap() - 0.002).abs() < 1e-12);
        assert!((r.rates.reads_per_s - 1050.0 / r.total_time_s).abs() < 1e-6);
        // Ranks' times are from the job's start.
        assert_eq!(r.ranks[0].distributed.as_ref().unwrap().start_s, 0.0);
        assert!((r.ranks[1].distributed.as_ref().unwrap().start_s - 0.000_2).abs() < 1e-12);

        let e = &r.latency[&LatencyKey::Event];
        assert_eq!(hist_count(e), 1050);
        assert_eq!(e.count, 1050);
        assert_eq!(e.min_ms, 1.0);
        assert_eq!(e.max_ms, 10.0);
        assert!((e.sum_ms - (1000.0 + 500.0)).abs() < 1e-6);
        // The merged p95 is the fast ranks's 1 ms (50 of 1050 are slow, under
        // 5 %); averaging the ranks' p95s would have said 5.5 ms.
        let p95 = e.at(95.0).unwrap();
        assert!((p95 - 1.0).abs() < 0.002, "{p95}");
        let p99 = e.at(99.0).unwrap();
        assert!((p99 - 10.0).abs() < 0.02, "{p99}");
        // Per-operation keys merge the same way.
        assert_eq!(hist_count(&r.latency[&LatencyKey::Read]), 1050);
        // The sysbench report's figures come from the same merge.
        assert_eq!(job.period.counts.events, 1050);
        assert_eq!(job.period.histogram.iter().sum::<u64>(), 1050);
        assert_eq!(job.period.min_ns, 1_000_000);
        assert_eq!(job.period.max_ns, 10_000_000);
        let text = crate::sysbench::report_text::sysbench_report(&job.period, 95);
        assert!(
            text.contains("total number of events:              1050"),
            "{text}"
        );
        // One warning for both ranks, saying so.
        assert_eq!(r.warnings.len(), 1);
        assert!(r.warnings[0]
            .message
            .starts_with("Every rank; rank 0's figures"));
        let table = job_section(r, 95);
        assert!(table.contains("host1"), "{table}");
        assert!(table.contains("first rank done:"), "{table}");
    }

    #[test]
    fn merged_percentiles_stay_within_the_ranks() {
        let a = rank_result(
            0,
            &(1..=500).map(|i| i * 7_000).collect::<Vec<_>>(),
            0.0,
            1.0,
        );
        let b = rank_result(
            1,
            &(1..=300).map(|i| 900_000 + i * 13_000).collect::<Vec<_>>(),
            0.0,
            1.0,
        );
        let job = merge(vec![a.clone(), b.clone()], &[50.0, 95.0, 99.0], "/t").unwrap();
        for key in [LatencyKey::Event, LatencyKey::Read] {
            let m = &job.result.latency[&key];
            for (i, p) in m.percentiles.iter().enumerate() {
                let (x, y) = (
                    a.latency[&key].percentiles[i].ms,
                    b.latency[&key].percentiles[i].ms,
                );
                assert!(
                    p.ms >= x.min(y) && p.ms <= x.max(y),
                    "{key} p{}: {} not in [{x}, {y}]",
                    p.p,
                    p.ms
                );
            }
        }
    }

    #[test]
    fn a_result_without_job_timing_is_refused() {
        let mut a = rank_result(0, &[1000], 0.0, 1.0);
        a.distributed = None;
        assert!(merge(vec![a], &[50.0], "/t")
            .unwrap_err()
            .contains("rank 0"));
        assert!(merge(Vec::new(), &[50.0], "/t").is_err());
    }
}

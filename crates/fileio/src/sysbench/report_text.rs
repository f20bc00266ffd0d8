//! Reports: the sysbench 1.0.20 text layout (observed with the
//! 1.0.20 binary), byte for byte apart from
//! timings, then tankbench's additions after it, so parsers of sysbench output
//! keep working. The [`RunResult`] itself is made in [`crate::summary`].

use crate::options::GeneralOptions;
use crate::result::{Counts, LatencyKey, LatencySummary, RunResult, TOOL_VERSION};
use crate::run::fileset::format_size;
use crate::run::histograms::{population_stddev, sb_bucket_value_ms, sb_percentile_ms};
use crate::run::runner::{IntervalStats, PeriodStats};
use crate::spec::{IoMode, RunSpec};
use crate::summary::within;
use crate::text::trim_float;
use std::fmt::Write as _;

/// First line of every sysbench-style output; scripts parse its first token.
/// Under the name `sysbench` it is Debian's sysbench 1.0.20 line, word for
/// word (the drop-in's reference); under tankbench's own name it says which
/// program answers.
pub fn banner() -> String {
    if crate::failure::invoked_as_sysbench() {
        "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)".to_string()
    } else {
        format!("sysbench 1.0.20 (using tankbench {TOOL_VERSION})")
    }
}

/// The `Running the test with following options:` block, up to `Doing … test`.
pub(crate) fn run_header(w: &RunSpec, g: &GeneralOptions, engine_note: Option<&str>) -> String {
    let mut s = String::new();
    push_general_options(&mut s, w, g);
    s.push('\n');
    push_fileio_options(&mut s, w, g, engine_note);
    s
}

/// The general part of the header: threads, limits, reports, seed.
fn push_general_options(s: &mut String, w: &RunSpec, g: &GeneralOptions) {
    s.push_str("Running the test with following options:\n");
    let _ = writeln!(s, "Number of threads: {}", w.threads);
    if w.rate > 0 {
        let _ = writeln!(s, "Target transaction rate: {}/sec", w.rate);
    }
    if g.report_interval_s > 0 {
        let _ = writeln!(
            s,
            "Report intermediate results every {} second(s)",
            g.report_interval_s
        );
    }
    if !g.report_checkpoints_s.is_empty() {
        let list: Vec<String> = g.report_checkpoints_s.iter().map(u64::to_string).collect();
        let _ = writeln!(s, "Report checkpoint(s) at {} seconds", list.join(", "));
    }
    if g.debug {
        s.push_str("Debug mode enabled.\n\n");
    }
    if g.validate {
        s.push_str("Validation checks: on.\n\n");
    }
    if w.rand_seed == 0 {
        s.push_str("Initializing random number generator from current time\n\n");
    } else {
        // sysbench keeps the seed in an unsigned int and prints it with `%d`:
        // --rand-seed=-5 comes back as -5, not 4294967291.
        #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
        let printed = w.rand_seed as u32 as i32;
        let _ = writeln!(
            s,
            "Initializing random number generator from seed ({printed}).\n"
        );
    }
    if let Some(f) = g.forced_shutdown_s {
        let _ = writeln!(s, "Forcing shutdown in {} seconds", w.time_s + f);
    }
}

/// `x` as C's `printf("%2.2f")` prints it: glibc writes a NaN as `nan` or
/// `-nan` (by its sign bit) where Rust writes `NaN`; infinities and finite
/// values come out the same in both.
fn c_fixed_2(x: f64) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    format!("{x:2.2}")
}

/// The fileio part of the header, up to `Doing … test`.
fn push_fileio_options(s: &mut String, w: &RunSpec, g: &GeneralOptions, engine_note: Option<&str>) {
    let mode = w.mode;
    let _ = writeln!(
        s,
        "Extra file open flags: {}",
        w.files.extra_flags.describe()
    );
    let _ = writeln!(
        s,
        "{} files, {}B each",
        w.files.file_num,
        format_size(w.files.file_size)
    );
    let _ = writeln!(
        s,
        "{}B total file size",
        format_size(w.files.file_num * w.files.file_size)
    );
    let _ = writeln!(s, "Block size {}B", format_size(w.files.block_size));
    // sysbench 1.0.20 prints this line whenever --file-merged-requests > 0,
    // in random modes too (where merging does not apply), with block size x
    // merged requests (observed: rndrd with 16K blocks and 4 merged requests
    // prints "Merging requests up to 64KiB for sequential IO.").
    if w.merged_requests > 0 {
        let _ = writeln!(
            s,
            "Merging requests up to {}B for sequential IO.",
            format_size(w.files.block_size.saturating_mul(w.merged_requests))
        );
    }
    if mode.is_random() {
        let _ = writeln!(s, "Number of IO requests: {}", w.events);
        let _ = writeln!(
            s,
            "Read/Write ratio for combined random IO test: {}",
            c_fixed_2(w.rw_ratio)
        );
    }
    if w.fsync_freq > 0 {
        let _ = writeln!(
            s,
            "Periodic FSYNC enabled, calling fsync() each {} requests.",
            w.fsync_freq
        );
    }
    if w.fsync_end {
        s.push_str("Calling fsync() at the end of test, Enabled.\n");
    }
    if w.fsync_all {
        s.push_str("Calling fsync() after each write operation.\n");
    }
    match w.io_mode {
        IoMode::Sync => s.push_str("Using synchronous I/O mode\n"),
        IoMode::Async => {
            let _ = writeln!(
                s,
                "Using asynchronous I/O mode (io_uring, queue depth {} per thread)",
                w.async_backlog
            );
        }
        IoMode::Mmap => s.push_str("Using fast mmaped I/O mode\n"),
    }
    if let Some(note) = engine_note {
        let _ = writeln!(s, "{note}");
    }
    if g.validate {
        s.push_str("Using checksums validation.\n");
    }
    let _ = writeln!(s, "Doing {} test", mode.long_name());
}

/// `[ 1s ] reads: … MiB/s writes: … MiB/s fsyncs: …/s latency (ms,95%): …`
pub(crate) fn interval_line(i: &IntervalStats) -> String {
    let secs = if i.seconds > 0.0 { i.seconds } else { 1.0 };
    format!(
        "[ {:.0}s ] reads: {:4.2} MiB/s writes: {:4.2} MiB/s fsyncs: {:4.2}/s latency (ms,{}%): {:4.3}",
        i.elapsed_s,
        i.delta.bytes_read as f64 / 1048576.0 / secs,
        i.delta.bytes_written as f64 / 1048576.0 / secs,
        i.delta.fsyncs as f64 / secs,
        i.percentile,
        i.latency_ms
    )
}

/// `--histogram` block (src/sb_histogram.c at sysbench 1.0.20).
pub(crate) fn histogram_text(counts: &[u64]) -> String {
    let mut s = String::from("Latency histogram (values are in milliseconds)\n");
    let max = counts.iter().copied().max().unwrap_or(0);
    if max > 0 {
        s.push_str("       value  ------------- distribution ------------- count\n");
        for (i, &c) in counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            // 0 < c <= max, so the bar has 0 to 40 stars.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let stars = ((c as f64 * 40.0 / max as f64) + 0.5).floor() as usize;
            let _ = writeln!(
                s,
                "{:12.3} |{:<40} {}",
                sb_bucket_value_ms(i),
                "*".repeat(stars),
                c
            );
        }
    }
    s.push_str(" \n");
    s
}

/// The `--percentile` line of sysbench's cumulative report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PercentileLine {
    /// `--percentile=0`: "percentile stats: disabled".
    Disabled,
    /// The N-th percentile and its value in ms.
    Value(u32, f64),
    /// A percentile asked for whose value the source does not have (a
    /// prediction that did not compute it).
    NotComputed(u32),
}

/// The figures of sysbench's cumulative report, whether counted by a run or
/// predicted: one layout, filled from either source.
#[derive(Debug, Clone)]
pub struct CumulativeFigures<'a> {
    /// Seconds the rates are taken over.
    pub seconds: f64,
    /// "total time" (from the start of the run).
    pub total_time_s: f64,
    pub counts: &'a Counts,
    pub min_ms: f64,
    pub avg_ms: f64,
    pub max_ms: f64,
    pub sum_ms: f64,
    pub percentile: PercentileLine,
    /// Per thread: (events, busy seconds), for "Threads fairness".
    pub threads: Vec<(f64, f64)>,
}

/// The cumulative report (report_cumulative in src/sysbench.c and
/// file_report_cumulative in sb_fileio.c at 1.0.20), starting with its blank line.
pub(crate) fn sysbench_report(p: &PeriodStats, percentile: u32) -> String {
    let c = &p.counts;
    let avg_ns = c.latency_sum_ns.checked_div(c.events).unwrap_or(0);
    let percentile = if percentile > 0 {
        // sysbench prints the value its log-scale bucket stands for, which can
        // lie above the maximum (or below the minimum) by up to half a bucket
        // (observed with 1.0.20: "max: 1.36", "95th percentile: 1.37" on a
        // 2-event run). No percentile is outside the range of the samples, so
        // it is kept within them.
        PercentileLine::Value(
            percentile,
            within(
                sb_percentile_ms(&p.histogram, f64::from(percentile)),
                p.min_ns as f64 / 1e6,
                p.max_ns as f64 / 1e6,
            ),
        )
    } else {
        PercentileLine::Disabled
    };
    cumulative_report(&CumulativeFigures {
        seconds: p.seconds,
        total_time_s: p.total_time_s,
        counts: &c.counts,
        min_ms: p.min_ns as f64 / 1e6,
        avg_ms: avg_ns as f64 / 1e6,
        max_ms: p.max_ns as f64 / 1e6,
        sum_ms: c.latency_sum_ns as f64 / 1e6,
        percentile,
        threads: p
            .threads
            .iter()
            .map(|&(events, busy_ns)| (events as f64, busy_ns as f64 / 1e9))
            .collect(),
    })
}

/// sysbench's cumulative report in its layout, starting with its blank line.
pub fn cumulative_report(f: &CumulativeFigures) -> String {
    let t = if f.seconds > 0.0 {
        f.seconds
    } else {
        f64::MIN_POSITIVE
    };
    let c = f.counts;
    let mut s = String::from("\nFile operations:\n");
    let _ = writeln!(s, "{:<34}{:4.2}", "    reads/s:", c.reads as f64 / t);
    let _ = writeln!(s, "{:<34}{:4.2}", "    writes/s:", c.writes as f64 / t);
    let _ = writeln!(s, "{:<34}{:4.2}", "    fsyncs/s:", c.fsyncs as f64 / t);
    s.push_str("\nThroughput:\n");
    let _ = writeln!(
        s,
        "{:<34}{:4.2}",
        "    read, MiB/s:",
        c.bytes_read as f64 / 1048576.0 / t
    );
    let _ = writeln!(
        s,
        "{:<34}{:4.2}",
        "    written, MiB/s:",
        c.bytes_written as f64 / 1048576.0 / t
    );
    s.push_str("\nGeneral statistics:\n");
    let _ = writeln!(s, "{:<41}{:.4}s", "    total time:", f.total_time_s);
    let _ = writeln!(s, "{:<41}{}", "    total number of events:", c.events);
    s.push_str("\nLatency (ms):\n");
    let _ = writeln!(s, "         min: {:39.2}", f.min_ms);
    let _ = writeln!(s, "         avg: {:39.2}", f.avg_ms);
    let _ = writeln!(s, "         max: {:39.2}", f.max_ms);
    match f.percentile {
        PercentileLine::Value(n, ms) => {
            let _ = writeln!(s, "        {n:3}th percentile: {ms:27.2}");
        }
        PercentileLine::NotComputed(n) => {
            let _ = writeln!(s, "        {n:3}th percentile:              not computed");
        }
        PercentileLine::Disabled => {
            s.push_str("         percentile stats:               disabled\n")
        }
    }
    let _ = writeln!(s, "         sum: {:39.2}", f.sum_ms);
    s.push_str("\nThreads fairness:\n");
    let events: Vec<f64> = f.threads.iter().map(|t| t.0).collect();
    let busy: Vec<f64> = f.threads.iter().map(|t| t.1).collect();
    let (em, es) = population_stddev(&events);
    let (bm, bs) = population_stddev(&busy);
    let _ = writeln!(s, "{:<35}{:.4}/{:3.2}", "    events (avg/stddev):", em, es);
    let _ = writeln!(
        s,
        "{:<35}{:.4}/{:3.2}",
        "    execution time (avg/stddev):", bm, bs
    );
    s.push('\n');
    s
}

/// `--debug`'s per-thread statistics, printed after the report like sysbench
/// 1.0.20 does (its format strings: `    thread #%3d: min: %.4fs  avg:
/// %.4fs  max: %.4fs  events: %lu` and `total time taken by event execution:
/// %.4fs`). The DEBUG lines, in order; a blank NOTICE line follows them.
pub fn thread_debug_lines(p: &PeriodStats) -> Vec<String> {
    let mut lines = vec!["DEBUG: Verbose per-thread statistics:\n".to_string()];
    for (i, &(events, sum_ns)) in p.threads.iter().enumerate() {
        let (min_ns, max_ns) = p.thread_extremes_ns.get(i).copied().unwrap_or((0, 0));
        let avg_ns = sum_ns.checked_div(events).unwrap_or(0);
        lines.push(format!(
            "DEBUG:     thread #{:3}: min: {:.4}s  avg: {:.4}s  max: {:.4}s  events: {}",
            i,
            min_ns as f64 / 1e9,
            avg_ns as f64 / 1e9,
            max_ns as f64 / 1e9,
            events
        ));
        lines.push(format!(
            "DEBUG:                  total time taken by event execution: {:.4}s",
            sum_ns as f64 / 1e9
        ));
    }
    lines
}

/// tankbench's latency section per operation type, after the sysbench sections.
/// With `--rate` the event shows twice, each under its own label: its response
/// time (what sysbench's report above measures) and its service time.
pub fn latency_section(r: &RunResult) -> String {
    const ORDER: [LatencyKey; 5] = [
        LatencyKey::Read,
        LatencyKey::Write,
        LatencyKey::Fsync,
        LatencyKey::Event,
        LatencyKey::EventService,
    ];
    let open_loop = r.workload.rate > 0;
    let rows: Vec<(LatencyKey, &LatencySummary)> = ORDER
        .iter()
        .filter_map(|k| r.latency.get(k).filter(|l| l.count > 0).map(|l| (*k, l)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let pcts: Vec<f64> = rows[0].1.percentiles.iter().map(|p| p.p).collect();
    let mut s = String::from("Latency by operation (ms):\n");
    let mut head = format!(
        "    {:<15}{:>10} {:>9} {:>9}",
        "operation", "count", "min", "avg"
    );
    for p in &pcts {
        head.push_str(&format!(" {:>9}", format!("p{}", trim_float(*p))));
    }
    head.push_str(&format!(" {:>9}", "max"));
    s.push_str(&head);
    s.push('\n');
    for (key, l) in rows {
        let mut line = format!(
            "    {:<15}{:>10} {:>9.3} {:>9.3}",
            key.label(open_loop),
            l.count,
            l.min_ms,
            l.mean_ms
        );
        for p in &l.percentiles {
            line.push_str(&format!(" {:>9.3}", p.ms));
        }
        line.push_str(&format!(" {:>9.3}", l.max_ms));
        s.push_str(&line);
        s.push('\n');
    }
    s.push('\n');
    s
}

// Exact float comparisons in these tests: the compared values are copies of inputs or clamps to a bound, exact in
// binary floating point; computed ones are compared with a tolerance.
#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::result::Environment;
    use crate::run::histograms::{CountSnapshot, LatencyKind};
    use crate::run::runner::RunOutcome;

    #[test]
    fn report_layout_matches_sysbench_columns() {
        let p = PeriodStats {
            seconds: 2.0,
            total_time_s: 2.0019,
            counts: CountSnapshot {
                counts: crate::result::Counts {
                    events: 126461,
                    reads: 70122,
                    writes: 46748,
                    fsyncs: 9350,
                    bytes_read: 70122 * 16384,
                    bytes_written: 46748 * 16384,
                },
                latency_sum_ns: 1_947_080_000,
            },
            histogram: vec![0; crate::run::histograms::SB_BUCKETS],
            min_ns: 1000,
            max_ns: 3_390_000,
            threads: vec![(126461, 1_947_080_000)],
            thread_extremes_ns: vec![(1000, 3_390_000)],
        };
        let s = sysbench_report(&p, 95);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "");
        assert_eq!(lines[1], "File operations:");
        assert_eq!(lines[2], "    reads/s:                      35061.00");
        assert_eq!(lines[10], "General statistics:");
        assert_eq!(
            lines[11],
            "    total time:                          2.0019s"
        );
        assert_eq!(lines[12], "    total number of events:              126461");
        assert_eq!(
            lines[15],
            "         min:                                    0.00"
        );
        assert_eq!(
            lines[17],
            "         max:                                    3.39"
        );
        assert_eq!(lines[18].len(), 53);
        assert!(lines[18].starts_with("         95th percentile:"));
        assert_eq!(
            lines[19],
            "         sum:                                 1947.08"
        );
        assert_eq!(
            lines[22],
            "    events (avg/stddev):           126461.0000/0.00"
        );
        assert_eq!(lines[23], "    execution time (avg/stddev):   1.9471/0.00");
    }

    /// A period with one event of `ns` and its sysbench histogram.
    fn one_event_period(ns: u64) -> PeriodStats {
        let mut histogram = vec![0; crate::run::histograms::SB_BUCKETS];
        histogram[crate::run::histograms::sb_bucket(ns)] = 1;
        PeriodStats {
            seconds: 1.0,
            total_time_s: 1.0,
            counts: CountSnapshot {
                counts: crate::result::Counts {
                    events: 1,
                    reads: 1,
                    bytes_read: 16384,
                    ..Default::default()
                },
                latency_sum_ns: ns,
            },
            histogram,
            min_ns: ns,
            max_ns: ns,
            threads: vec![(1, ns)],
            thread_extremes_ns: vec![(ns, ns)],
        }
    }

    fn report_line<'a>(report: &'a str, label: &str) -> &'a str {
        report
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .and_then(|l| l.split(':').nth(1))
            .map(str::trim)
            .unwrap_or_else(|| panic!("no {label} in {report}"))
    }

    #[test]
    fn the_printed_percentile_stays_within_min_and_max() {
        // A latency half a percent under the value its bucket stands for:
        // sysbench's bucket walk alone would print the bucket value, above max.
        let bucket = crate::run::histograms::sb_bucket(10_000_000);
        let bucket_ms = sb_bucket_value_ms(bucket);
        // Both latencies are about 10 ms: positive and far below 2^64 ns.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let ns = (bucket_ms * 0.995 * 1e6) as u64;
        assert_eq!(crate::run::histograms::sb_bucket(ns), bucket);
        let p = one_event_period(ns);
        assert!(sb_percentile_ms(&p.histogram, 95.0) > ns as f64 / 1e6 + 0.01);
        let s = sysbench_report(&p, 95);
        assert_eq!(report_line(&s, "max"), report_line(&s, "95th percentile"));
        // And above the bucket value: not under the minimum.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let ns = (bucket_ms * 1.005 * 1e6) as u64;
        assert_eq!(crate::run::histograms::sb_bucket(ns), bucket);
        let s = sysbench_report(&one_event_period(ns), 95);
        assert_eq!(report_line(&s, "min"), report_line(&s, "95th percentile"));
    }

    #[test]
    fn event_percentiles_stay_within_the_exact_min_and_max() {
        // One read at the start of a histogram bucket: the HDR percentiles
        // report a value higher in the bucket, the counters the exact one.
        let ns = 1 << 20;
        let mut thread = crate::run::histograms::ThreadHistograms::default();
        thread.record(LatencyKind::Read, ns);
        let mut histograms = crate::run::histograms::OpHistograms::default();
        histograms.add_thread(&thread);
        histograms.derive_event_from_operations();
        let hdr_p50 = histograms.get(LatencyKind::Event).value_at_percentile(50.0);
        assert!(hdr_p50 > ns, "the case needs an HDR value above the sample");
        let outcome = RunOutcome {
            period: one_event_period(ns),
            histograms,
            thread_histograms: Vec::new(),
            intervals: Vec::new(),
            interrupted: false,
            forced: false,
            engine: "psync",
        };
        let mut a = crate::sysbench::args::ParsedArgs::parse(
            ["fileio", "--file-test-mode=rndrd", "--percentiles=50,99.9"].map(String::from),
        );
        let g = GeneralOptions::from_args(&mut a).unwrap();
        let w = RunSpec::from_args(&a, &g).unwrap();
        let r = crate::summary::measured_result(
            &w,
            &outcome,
            String::new(),
            Environment::default(),
            Vec::new(),
        );
        let event = &r.latency[&LatencyKey::Event];
        assert_eq!(event.max_ms, ns as f64 / 1e6);
        assert_eq!(event.percentiles.len(), 2);
        for p in &event.percentiles {
            assert!(
                p.ms >= event.min_ms && p.ms <= event.max_ms,
                "p{} = {} outside [{}, {}]",
                p.p,
                p.ms,
                event.min_ms,
                event.max_ms
            );
        }
        for (name, l) in &r.latency {
            for p in &l.percentiles {
                assert!(p.ms <= l.max_ms && p.ms >= l.min_ms, "{name}: {l:?}");
            }
        }
    }

    /// A result of one read of 1 ms that, with `rate`, waited 4 ms in the queue.
    fn one_read_result(rate: Option<&str>) -> RunResult {
        let mut thread = crate::run::histograms::ThreadHistograms::default();
        thread.record(LatencyKind::Read, 1_000_000);
        thread.record(LatencyKind::Event, 1_000_000);
        thread.record(LatencyKind::Response, 5_000_000);
        let mut histograms = crate::run::histograms::OpHistograms::default();
        histograms.add_thread(&thread);
        let mut period = one_event_period(5_000_000);
        if rate.is_none() {
            period = one_event_period(1_000_000);
        }
        let outcome = RunOutcome {
            period,
            histograms,
            thread_histograms: Vec::new(),
            intervals: Vec::new(),
            interrupted: false,
            forced: false,
            engine: "psync",
        };
        let mut words = vec!["fileio".to_string(), "--file-test-mode=rndrd".to_string()];
        words.extend(rate.map(str::to_string));
        let mut a = crate::sysbench::args::ParsedArgs::parse(&words);
        let g = GeneralOptions::from_args(&mut a).unwrap();
        let w = RunSpec::from_args(&a, &g).unwrap();
        crate::summary::measured_result(
            &w,
            &outcome,
            String::new(),
            Environment::default(),
            Vec::new(),
        )
    }

    /// (label, avg) of each row of the latency section.
    fn section_rows(r: &RunResult) -> Vec<(String, String)> {
        latency_section(r)
            .lines()
            .skip(2)
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let (label, rest) = l[4..].split_at(15);
                let avg = rest.split_whitespace().nth(2).unwrap().to_string();
                (label.trim().to_string(), avg)
            })
            .collect()
    }

    #[test]
    fn open_loop_rows_name_response_and_service_time() {
        let r = one_read_result(Some("--rate=100"));
        assert_eq!(r.latency[&LatencyKey::Event].mean_ms, 5.0);
        assert_eq!(r.latency[&LatencyKey::EventService].count, 1);
        assert_eq!(
            section_rows(&r),
            [
                ("read".to_string(), "1.000".to_string()),
                ("event response".to_string(), "5.000".to_string()),
                ("event service".to_string(), "1.000".to_string()),
            ]
        );
        let r = one_read_result(None);
        assert!(!r.latency.contains_key(&LatencyKey::EventService));
        assert_eq!(
            section_rows(&r),
            [
                ("read".to_string(), "1.000".to_string()),
                ("event".to_string(), "1.000".to_string()),
            ]
        );
    }

    #[test]
    fn within_never_panics_on_an_empty_range() {
        assert_eq!(within(5.0, 1.0, 3.0), 3.0);
        assert_eq!(within(0.5, 1.0, 3.0), 1.0);
        assert_eq!(within(2.0, 3.0, 1.0), 1.0);
    }

    #[test]
    fn per_thread_debug_lines_have_sysbench_layout() {
        let mut p = one_event_period(800_000);
        p.threads.push((0, 0));
        p.thread_extremes_ns.push((0, 0));
        let lines = thread_debug_lines(&p);
        assert_eq!(
            lines,
            vec![
                "DEBUG: Verbose per-thread statistics:\n",
                "DEBUG:     thread #  0: min: 0.0008s  avg: 0.0008s  max: 0.0008s  events: 1",
                "DEBUG:                  total time taken by event execution: 0.0008s",
                "DEBUG:     thread #  1: min: 0.0000s  avg: 0.0000s  max: 0.0000s  events: 0",
                "DEBUG:                  total time taken by event execution: 0.0000s",
            ]
        );
    }

    #[test]
    fn merging_line_is_printed_in_random_modes_too() {
        for (mode, merged, expect) in [
            (
                "rndrd",
                "4",
                Some("Merging requests up to 64KiB for sequential IO."),
            ),
            (
                "seqrd",
                "4",
                Some("Merging requests up to 64KiB for sequential IO."),
            ),
            (
                "rndrw",
                "1",
                Some("Merging requests up to 16KiB for sequential IO."),
            ),
            ("rndrd", "0", None),
        ] {
            let mut a = crate::sysbench::args::ParsedArgs::parse(&[
                "fileio".to_string(),
                format!("--file-test-mode={mode}"),
                format!("--file-merged-requests={merged}"),
            ]);
            let g = GeneralOptions::from_args(&mut a).unwrap();
            let w = RunSpec::from_args(&a, &g).unwrap();
            let h = run_header(&w, &g, None);
            let line = h.lines().find(|l| l.starts_with("Merging"));
            assert_eq!(line, expect, "{mode} {merged}");
        }
    }

    #[test]
    fn rfc3339_is_well_formed() {
        let s = crate::clock::utc_now_rfc3339();
        assert_eq!(s.len(), 20);
        assert!(s.ends_with('Z') && s.as_bytes()[10] == b'T');
    }
}

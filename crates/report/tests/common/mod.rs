//! Test fixtures: `RunResult`s built in code, with latency histograms and
//! interval samples drawn from a seeded pseudo-random generator, so the report
//! has realistic, varied and reproducible data to show.

#![allow(dead_code)]

use fileio::result::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// xorshift64*: a tiny deterministic generator for fixture data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u = self.next_f64().max(1e-12);
        let v = self.next_f64();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// The upper bound of a value's bucket at 3 significant digits, as the stored
/// histograms use.
fn bucket(ns: u64) -> u64 {
    let ns = ns.max(1000);
    let digits = ns.ilog10();
    let step = 10u64.pow(digits.saturating_sub(2));
    ns.div_ceil(step) * step
}

fn summarize(samples: &[u64]) -> LatencySummary {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let n = sorted.len() as f64;
    let ms: Vec<f64> = sorted.iter().map(|&ns| ns as f64 / 1e6).collect();
    let mean = ms.iter().sum::<f64>() / n;
    let sd = (ms.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    let mut hist: BTreeMap<u64, u64> = BTreeMap::new();
    for &ns in &sorted {
        *hist.entry(bucket(ns)).or_insert(0) += 1;
    }
    // The nearest-rank 95th percentile: the ceil(0.95 n)-th smallest sample.
    let p95 = ms[(sorted.len() * 95).div_ceil(100).saturating_sub(1)];
    LatencySummary {
        count: sorted.len() as u64,
        min_ms: ms[0],
        mean_ms: mean,
        max_ms: *ms.last().unwrap(),
        stddev_ms: sd,
        sum_ms: ms.iter().sum(),
        percentiles: vec![Percentile { p: 95.0, ms: p95 }],
        histogram: hist.into_iter().collect(),
    }
}

/// Log-normal latencies around `median_ms` with a slow tail (1% ten times slower).
fn latencies(rng: &mut Rng, n: usize, median_ms: f64) -> Vec<u64> {
    (0..n)
        .map(|_| {
            let mut ms = median_ms * (0.45 * rng.normal()).exp();
            if rng.next_f64() < 0.01 {
                ms *= 10.0;
            }
            whole(ms * 1e6)
        })
        .collect()
}

/// A fixture figure as a whole number. Fixture values are small, non-negative
/// counts, byte totals and nanoseconds, so truncating toward zero is the
/// intent; the assert keeps a bad fixture from saturating silently.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn whole(x: f64) -> u64 {
    assert!((0.0..9.0e15).contains(&x), "fixture value {x} out of range");
    x as u64
}

/// A measured rndrw run with the given labels, throughput and seed.
// One struct literal of a whole result, field by field: splitting it would
// only scatter the fixture.
#[allow(clippy::too_many_lines)]
pub fn run(labels: &[(&str, &str)], read_mib: f64, write_mib: f64, seed: u64) -> RunResult {
    let mut rng = Rng::new(seed);
    let secs = 30.0;
    let bs = 4096.0;
    let reads_s = read_mib * 1048576.0 / bs;
    let writes_s = write_mib * 1048576.0 / bs;
    let fsyncs_s = writes_s;
    // Latency follows throughput: slower configurations wait longer.
    let read_lat = latencies(&mut rng, 4000, 2.0 / read_mib.max(0.5));
    let write_lat = latencies(&mut rng, 3000, 1.5 / write_mib.max(0.5));
    let fsync_lat = latencies(&mut rng, 3000, 6.0 / write_mib.max(0.5));
    let event: Vec<u64> = read_lat
        .iter()
        .chain(&write_lat)
        .chain(&fsync_lat)
        .copied()
        .collect();
    let mut latency = BTreeMap::new();
    latency.insert(LatencyKey::Event, summarize(&event));
    latency.insert(LatencyKey::Read, summarize(&read_lat));
    latency.insert(LatencyKey::Write, summarize(&write_lat));
    latency.insert(LatencyKey::Fsync, summarize(&fsync_lat));
    let intervals = (1..=30)
        .map(|t| {
            let wobble = 1.0 + 0.08 * rng.normal();
            let warm = if t < 4 { 0.6 + 0.1 * t as f64 } else { 1.0 };
            IntervalSample {
                t_s: t as f64,
                reads_per_s: reads_s * wobble * warm,
                writes_per_s: writes_s * wobble,
                fsyncs_per_s: fsyncs_s * wobble,
                read_mib_per_s: read_mib * wobble * warm,
                written_mib_per_s: write_mib * wobble,
                latency_ms: 1.0,
                latency_percentile: 95.0,
            }
        })
        .collect();
    let started = format!("2026-11-30T10:{:02}:{:02}Z", (seed / 60) % 60, seed % 60);
    RunResult {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "tankbench".into(),
            version: "0.1.0".into(),
        },
        kind: ResultKind::Measured,
        started_at: started,
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        workload: WorkloadSummary {
            mode: fileio::spec::Mode::RndRw,
            io_mode: fileio::spec::IoMode::Sync,
            engine: "psync".into(),
            threads: 4,
            file_num: 128,
            file_size: 32 << 20,
            total_size: 4 << 30,
            block_size: 4096,
            request_size: 4096,
            rw_ratio: 1.5,
            fsync_freq: 100,
            fsync_all: true,
            fsync_end: true,
            fsync_mode: fileio::spec::FsyncMode::Fsync,
            extra_flags: vec![],
            events_limit: 0,
            time_limit_s: 30,
            rate: 0,
            queue_depth: 1,
            data: fileio::spec::DataPattern::Zero,
            sync_every_writes: 0,
            directory: "/mnt/tank/bench".into(),
        },
        interrupted: false,
        warmup_s: 0,
        total_time_s: secs,
        counts: Counts {
            events: whole((reads_s + writes_s + fsyncs_s) * secs),
            reads: whole(reads_s * secs),
            writes: whole(writes_s * secs),
            fsyncs: whole(fsyncs_s * secs),
            bytes_read: whole(read_mib * 1048576.0 * secs),
            bytes_written: whole(write_mib * 1048576.0 * secs),
        },
        rates: Rates {
            reads_per_s: reads_s,
            writes_per_s: writes_s,
            fsyncs_per_s: fsyncs_s,
            read_mib_per_s: read_mib,
            written_mib_per_s: write_mib,
        },
        latency,
        threads: (0..4)
            .map(|_| ThreadSummary {
                events: 1000,
                busy_time_s: 29.9,
            })
            .collect(),
        intervals,
        environment: Environment {
            hostname: "freenas-a".into(),
            kernel: "6.1.0".into(),
            cpus: 8,
            mem_total_bytes: 64 << 30,
            mem_available_bytes: 48 << 30,
            fs_type: "nfs4".into(),
            mount_point: "/mnt/tank".into(),
            mount_options: "rw".into(),
            device: "tank/bench".into(),
            rotational: None,
            caches_dropped: false,
            compression: None,
            zfs: None,
        },
        warnings: vec![],
        ranks: vec![],
        distributed: None,
        durability: None,
        prediction: None,
        anchor: None,
    }
}

/// The reference user's matrix, reduced: layouts x SLOG x link, with
/// throughput shaped like their findings, `repeats` runs per configuration
/// with a few percent of noise, and the page-cache warning on the reads.
pub fn matrix(repeats: usize) -> Vec<RunResult> {
    let mut out = Vec::new();
    let mut seed = 1;
    for (layout, lay_w) in [("1xraidz3", 0.55), ("2xraidz2", 0.8), ("3xraidz2", 1.0)] {
        for (slog, slog_w) in [("none", 0.35), ("10G", 1.0)] {
            for (link, link_w) in [("2x1G", 0.45), ("2x10G", 1.0)] {
                for _ in 0..repeats {
                    let mut rng = Rng::new(seed * 7919);
                    let noise = 1.0 + 0.03 * rng.normal();
                    let write = 40.0 * lay_w * slog_w * link_w * noise;
                    let read = 60.0 * lay_w.sqrt() * link_w * noise;
                    let mut r = run(
                        &[("layout", layout), ("slog", slog), ("link", link)],
                        read,
                        write,
                        seed,
                    );
                    if seed % 3 == 0 {
                        r.warnings.push(Warning {
                            code: "reads_from_page_cache".into(),
                            message: format!(
                                "The 4 GiB file set fits in this host's 48 GiB of free memory; \
                                 reads at {read:.1} MiB/s may come from the page cache."
                            ),
                            hint: "Use --file-total-size larger than RAM, or drop caches.".into(),
                        });
                    }
                    out.push(r);
                    seed += 1;
                }
            }
        }
    }
    out
}

/// Markup that, reaching a page unescaped, would redirect it (a meta refresh to
/// a port where nothing listens) and add an element; the trailing comment
/// opener would swallow the rest of the page.
pub const HOSTILE_MARKUP: &str = "\"'><meta http-equiv=\"refresh\" \
     content=\"0;url=http://127.0.0.1:9/redirected\"><b class=\"injected\">injected</b><!--";

/// A result file as a hostile or careless colleague could share it: markup,
/// Markdown, spreadsheet formulas, terminal escapes and characters XML forbids
/// in every string the report shows. (Latency operation names and workload
/// modes are enums, so a file that carries markup there does not load; see
/// `render.rs`, `hostile_runs`.) `variant` makes
/// the varying labels differ, so they become table columns and chart names;
/// the rest are common to all runs and land in the "All runs" notes.
pub fn hostile(seed: u64, variant: &str) -> RunResult {
    let mut r = run(&[], 30.0, 10.0, seed);
    for (k, v) in [
        (
            HOSTILE_MARKUP.to_string(),
            format!("{variant}{HOSTILE_MARKUP}"),
        ),
        (
            "=cmd|' /C calc'!A0".to_string(),
            format!("=HYPERLINK(\"http://127.0.0.1:9/\",\"{variant}\")"),
        ),
        ("plus".to_string(), format!("+{variant}")),
        ("at".to_string(), format!("@SUM({variant})")),
        ("tab".to_string(), format!("\t={variant}")),
        ("cr".to_string(), format!("\r={variant}")),
        (
            "md".to_string(),
            "a|b `code` <i>x</i> [link](http://127.0.0.1:9/) *b* _i_\n# heading\r\n- item".into(),
        ),
        (
            "term".to_string(),
            "\u{1b}]0;retitled\u{7}\u{1b}[2J\u{1b}[31mred".into(),
        ),
        ("xml".to_string(), "nul\u{0}bell\u{7}vt\u{b}".into()),
    ] {
        r.labels.insert(k, v);
    }
    r.environment.hostname = HOSTILE_MARKUP.into();
    r.environment.fs_type = "=1+1".into();
    r.environment.mount_point = "</td></tr></table><b class=\"injected\">mount</b>".into();
    r.warnings.push(Warning {
        code: HOSTILE_MARKUP.into(),
        message: "<script>document.title='ran'</script>".into(),
        hint: "<img src=\"http://127.0.0.1:9/img.png\">".into(),
    });
    r
}

/// `target/test-artifacts`: pages and screenshots the report tests leave for
/// a person to look at (created when missing).
pub fn artifacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

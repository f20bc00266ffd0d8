//! The statistics against a known latency distribution: an engine that injects
//! fixed or bimodal delays instead of doing I/O, run through the real runner.

use fileio::options::GeneralOptions;
use fileio::run::histograms::LatencyKind;
use fileio::run::runner::{self, RunObserver, RunOutcome, RunSettings};
use fileio::spec::RunSpec;
use fileio::sysbench::args::ParsedArgs;

/// Timing tests run one at a time: on a 2-core machine, parallel tests would
/// compete with each other's spinning waits and blur the latencies under test.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

struct Silent;
impl RunObserver for Silent {}

/// Run and also return every wait the injecting engine really produced.
fn run(dir: &std::path::Path, extra: &[&str]) -> (Vec<u64>, RunOutcome) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut words: Vec<String> = vec![
        "fileio".into(),
        format!("--file-dir={}", dir.display()),
        "--file-total-size=1M".into(),
        "--file-num=2".into(),
        "--file-fsync-freq=0".into(),
        "--file-fsync-end=off".into(),
        "--time=0".into(),
    ];
    words.extend(extra.iter().map(|s| s.to_string()));
    let mut a = ParsedArgs::parse(&words);
    let g = GeneralOptions::from_args(&mut a).unwrap();
    let w = RunSpec::from_args(&a, &g).unwrap();
    fileio::run::fileset::prepare(&w.files, &mut |_| {}, &mut ()).unwrap();
    let files = fileio::run::fileset::open_for_run(&w, &mut |_| {}).unwrap();
    let trace = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let settings = RunSettings {
        injected_trace: Some(trace.clone()),
        ..RunSettings::default()
    };
    let out = runner::run(&w, files, &settings, &Silent).unwrap();
    let mut waits = std::mem::take(&mut *trace.lock().unwrap());
    waits.sort_unstable();
    (waits, out)
}

fn within(measured_ns: u64, expected_ns: u64, tolerance: f64) -> bool {
    let m = measured_ns as f64;
    let e = expected_ns as f64;
    (m - e).abs() / e <= tolerance
}

/// How much later than the engine's own clock the runner's may stop: the
/// runner timestamps around the engine call, so a thread preempted between
/// the end of its wait and the runner's timestamp records more than the engine
/// saw. On the 2-core CI machine under load a p80 of 2.103 ms was seen against
/// 2.073 ms realised (30 µs); 1 % of a 2 ms mode is only 20 µs.
const RUNNER_CLOCK_SLACK_NS: f64 = 60_000.0;

/// A percentile of what the runner recorded against the waits the engine
/// really produced: never more than 1 % early (the runner's interval contains
/// the engine's), and at most 1 % plus the clock slack late.
fn follows_realised(recorded_ns: u64, realised_ns: u64) -> bool {
    let r = recorded_ns as f64;
    let t = realised_ns as f64;
    r >= t * 0.99 && r <= t * 1.01 + RUNNER_CLOCK_SLACK_NS
}

/// Exact percentile of sorted samples (the rank HDR uses: ceil(p/100 * n)).
// The tests ask for percentiles within 0..=100, so the rank is a whole number
// (ceil) from 1 to n: it fits usize.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn exact(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank - 1]
}

#[test]
fn fixed_delay_percentiles_are_within_one_percent() {
    let d = tempfile::tempdir().unwrap();
    let (waits, out) = run(
        d.path(),
        &[
            "--file-test-mode=rndrw",
            "--events=400",
            "--tb-inject-latency=fixed:5ms",
        ],
    );
    let counts = &out.period.counts;
    assert_eq!(counts.events, 400);
    assert_eq!(waits.len(), 400);
    // The injection itself: the median wait is the model's 5 ms.
    assert!(within(exact(&waits, 50.0), 5_000_000, 0.01));
    let all = out.histograms.get(LatencyKind::Event);
    // Upper percentiles of a fixed delay measure only scheduler noise (CPU
    // contention between the end of a wait and the timestamp); the bimodal test
    // checks the tail where the distribution has one.
    for p in [10.0, 50.0, 90.0] {
        let v = all.value_at_percentile(p);
        let truth = exact(&waits, p);
        assert!(
            follows_realised(v, truth),
            "event p{p} = {v} ns, injected {truth} ns"
        );
    }
    for kind in [LatencyKind::Read, LatencyKind::Write] {
        let v = out.histograms.get(kind).value_at_percentile(50.0);
        assert!(
            within(v, 5_000_000, 0.01),
            "{kind:?} p50 = {v} ns, want 5 ms ± 1 %"
        );
    }
    // The sysbench percentile (its own log histogram) lands on 2 ms too: its
    // buckets are 1.8 % wide, so it is checked at that precision.
    let p50 = fileio::run::histograms::sb_percentile_ms(&out.period.histogram, 50.0);
    assert!((p50 - 5.0).abs() / 5.0 < 0.02, "{p50}");
}

#[test]
fn bimodal_delay_percentiles_are_within_one_percent() {
    let d = tempfile::tempdir().unwrap();
    // 10 % at 10 ms, 90 % at 1 ms.
    let (waits, out) = run(
        d.path(),
        &[
            "--file-test-mode=rndrd",
            "--events=600",
            "--tb-inject-latency=bimodal:2ms:20ms:0.1",
        ],
    );
    let h = out.histograms.get(LatencyKind::Read);
    assert_eq!(h.len(), 600);
    // Both modes of the injected distribution come out where the model put
    // them: never early (a wait does not end before its time), and apart. How
    // late a wait ends depends on the machine's load, so the exact values are
    // checked against the waits really produced, below.
    let (p50, p99) = (h.value_at_percentile(50.0), h.value_at_percentile(99.0));
    assert!(p50 as f64 >= 2_000_000.0 * 0.99, "p50 = {p50} ns");
    assert!(p99 as f64 >= 20_000_000.0 * 0.99, "p99 = {p99} ns");
    assert!(p50 < 10_000_000, "p50 = {p50} ns: the fast mode is lost");
    // And every percentile inside a mode follows the waits really produced,
    // to 1 % (plus the runner's clock slack, on the late side only). Not p90
    // nor p99.9: with 6-14 % slow draws, p90 is the fast mode's top or the
    // slow mode's bottom, and p99.9 of 600 is the slowest one; an extreme
    // measures only how late the scheduler woke the thread.
    for p in [10.0, 50.0, 80.0, 95.0, 99.0] {
        let v = h.value_at_percentile(p);
        let truth = exact(&waits, p);
        assert!(
            follows_realised(v, truth),
            "p{p} = {v} ns, injected {truth} ns"
        );
    }
    // The slow share: between 6 % and 14 % of 600 draws (binomial, > 3 sigma).
    let slow = h.count_between(10_000_000, 40_000_000);
    assert!((36..=84).contains(&slow), "{slow} slow samples");
}

#[test]
fn merged_histograms_are_the_sum_of_the_threads() {
    let d = tempfile::tempdir().unwrap();
    let (_, out) = run(
        d.path(),
        &[
            "--file-test-mode=rndrw",
            "--events=600",
            "--threads=3",
            "--tb-inject-latency=bimodal:200us:1ms:0.3",
        ],
    );
    assert_eq!(out.thread_histograms.len(), 3);
    for kind in [LatencyKind::Read, LatencyKind::Write] {
        let merged = out.histograms.get(kind);
        let mut sum = 0u64;
        for t in &out.thread_histograms {
            if let Some(h) = t.get(kind) {
                sum += h.len();
                // Every bucket of every thread is in the merged histogram.
                for v in h.iter_recorded() {
                    assert!(merged.count_at(v.value_iterated_to()) >= v.count_at_value());
                }
            }
        }
        assert_eq!(merged.len(), sum, "{kind:?}");
        // Bucket by bucket: merged = sum over threads.
        for v in merged.iter_recorded() {
            let per_thread: u64 = out
                .thread_histograms
                .iter()
                .filter_map(|t| t.get(kind))
                .map(|h| h.count_at(v.value_iterated_to()))
                .sum();
            assert_eq!(
                v.count_at_value(),
                per_thread,
                "{kind:?} at {}",
                v.value_iterated_to()
            );
        }
    }
    let c = &out.period.counts;
    assert_eq!(out.histograms.get(LatencyKind::Event).len(), c.events);
    assert_eq!(out.histograms.get(LatencyKind::Read).len(), c.reads);
    assert_eq!(out.histograms.get(LatencyKind::Write).len(), c.writes);
    assert_eq!(c.reads + c.writes, 600);
    let sb_total: u64 = out.period.histogram.iter().sum();
    assert_eq!(sb_total, 600, "the sysbench histogram lost no sample");
}

#[test]
fn open_loop_separates_service_from_response_time() {
    let d = tempfile::tempdir().unwrap();
    // One thread serves 2 ms requests: at most 500/s. Arrivals at 1000/s queue up.
    let (_, over) = run(
        d.path(),
        &[
            "--file-test-mode=rndrd",
            "--events=300",
            "--rate=1000",
            "--tb-inject-latency=fixed:2ms",
        ],
    );
    let service = over
        .histograms
        .get(LatencyKind::Event)
        .value_at_percentile(50.0);
    let response = over
        .histograms
        .get(LatencyKind::Response)
        .value_at_percentile(50.0);
    assert!(within(service, 2_000_000, 0.02), "service {service}");
    assert!(
        response > 20 * service,
        "queueing must show: response {response} vs service {service}"
    );
    // Below capacity the two agree closely.
    let (_, under) = run(
        d.path(),
        &[
            "--file-test-mode=rndrd",
            "--events=100",
            "--rate=100",
            "--tb-inject-latency=fixed:2ms",
        ],
    );
    let service = under
        .histograms
        .get(LatencyKind::Event)
        .value_at_percentile(50.0);
    let response = under
        .histograms
        .get(LatencyKind::Response)
        .value_at_percentile(50.0);
    assert!(
        response < service + service / 5,
        "response {response} vs service {service}"
    );
}

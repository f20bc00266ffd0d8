//! Statistics: what a run counted and how long things took.
//!
//! Two kinds of latency record, for two purposes:
//! - [`SysbenchHistogram`]: sysbench's own 1024-bucket log histogram, so the
//!   printed percentile and `--histogram` are quantised exactly as sysbench does.
//!   It is made of single-writer atomic counters so the interval reporter can read
//!   it while the worker writes, without locks.
//! - [`OpHistograms`]: HDR histograms per operation type (1 µs to 1 h, 3
//!   significant digits), owned by one thread and merged at the end; mergeable
//!   across threads and processes.

use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Number of buckets of sysbench's latency histogram.
pub(crate) const SB_BUCKETS: usize = 1024;
const SB_MIN_MS: f64 = 0.001;
const SB_MAX_MS: f64 = 100_000.0;

/// Multiplier M = (buckets - 1) / ln(max / min).
fn sb_multiplier() -> f64 {
    (SB_BUCKETS as f64 - 1.0) / (SB_MAX_MS / SB_MIN_MS).ln()
}

/// Bucket of a latency given in nanoseconds.
#[inline]
pub(crate) fn sb_bucket(ns: u64) -> usize {
    let ms = ns as f64 / 1e6;
    if ms <= SB_MIN_MS {
        return 0;
    }
    let i = ((ms.ln() - SB_MIN_MS.ln()) * sb_multiplier() + 0.5).floor();
    // A whole number (floor), at least 0 and finite (ms is at most about
    // 1.8e13), and capped to the last bucket right after.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let bucket = i.max(0.0) as usize;
    bucket.min(SB_BUCKETS - 1)
}

/// The value (ms) a bucket stands for.
pub(crate) fn sb_bucket_value_ms(i: usize) -> f64 {
    SB_MIN_MS * (i as f64 / sb_multiplier()).exp()
}

/// A counter written by one thread and read by any: plain load + store, no
/// read-modify-write, so the hot path pays no locked instruction.
#[derive(Default, Debug)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    #[inline]
    pub fn add(&self, v: u64) {
        self.0.store(self.0.load(Relaxed).wrapping_add(v), Relaxed);
    }
    #[inline]
    pub fn set(&self, v: u64) {
        self.0.store(v, Relaxed);
    }
    #[inline]
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// sysbench's latency histogram.
pub(crate) struct SysbenchHistogram {
    buckets: Box<[Counter]>,
}

impl Default for SysbenchHistogram {
    fn default() -> Self {
        SysbenchHistogram {
            buckets: (0..SB_BUCKETS).map(|_| Counter::default()).collect(),
        }
    }
}

impl SysbenchHistogram {
    #[inline]
    pub fn record(&self, ns: u64) {
        self.buckets[sb_bucket(ns)].add(1);
    }
    pub fn snapshot(&self) -> Vec<u64> {
        self.buckets.iter().map(Counter::get).collect()
    }
}

/// Percentile over bucket counts, sysbench's algorithm: the first bucket where the
/// running total reaches floor(n·p/100 + 0.5). 0.001 ms with no samples.
pub fn sb_percentile_ms(counts: &[u64], p: f64) -> f64 {
    let n: u64 = counts.iter().sum();
    if n == 0 {
        return SB_MIN_MS;
    }
    // A whole number (floor) between 0 and n + 1 for a percentile within
    // 0..=100; `as` takes anything else to 0 or u64::MAX, which the loop
    // below turns into the first or the last bucket.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let target = (n as f64 * p / 100.0 + 0.5).floor() as u64;
    let mut running = 0;
    for (i, &c) in counts.iter().enumerate() {
        running += c;
        if running >= target {
            return sb_bucket_value_ms(i);
        }
    }
    sb_bucket_value_ms(SB_BUCKETS - 1)
}

/// Live counters of one worker thread. Aligned to two cache lines so threads
/// writing their own counters never share a line (false sharing would make
/// every event of one thread invalidate the other's cache).
#[derive(Default)]
#[repr(align(128))]
pub(crate) struct ThreadCounters {
    pub events: Counter,
    pub reads: Counter,
    pub writes: Counter,
    pub fsyncs: Counter,
    pub bytes_read: Counter,
    pub bytes_written: Counter,
    /// Sum of event latencies, ns.
    pub latency_sum_ns: Counter,
    pub latency_min_ns: Counter,
    pub latency_max_ns: Counter,
    pub histogram: SysbenchHistogram,
}

impl ThreadCounters {
    pub fn new() -> ThreadCounters {
        let c = ThreadCounters::default();
        c.latency_min_ns.set(u64::MAX);
        c
    }

    #[inline]
    pub(crate) fn record_event(&self, ns: u64, with_histogram: bool) {
        self.events.add(1);
        self.latency_sum_ns.add(ns);
        if ns < self.latency_min_ns.get() {
            self.latency_min_ns.set(ns);
        }
        if ns > self.latency_max_ns.get() {
            self.latency_max_ns.set(ns);
        }
        if with_histogram {
            self.histogram.record(ns);
        }
    }

    pub fn snapshot(&self) -> CountSnapshot {
        CountSnapshot {
            counts: crate::result::Counts {
                events: self.events.get(),
                reads: self.reads.get(),
                writes: self.writes.get(),
                fsyncs: self.fsyncs.get(),
                bytes_read: self.bytes_read.get(),
                bytes_written: self.bytes_written.get(),
            },
            latency_sum_ns: self.latency_sum_ns.get(),
        }
    }
}

/// Counter values at one moment (for interval deltas and the final report):
/// the result's [`Counts`](crate::result::Counts) plus the event latency sum,
/// which only the live statistics need. Reads of the counts go through
/// `Deref`, so `snapshot.reads` works as on `Counts`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CountSnapshot {
    pub counts: crate::result::Counts,
    pub latency_sum_ns: u64,
}

impl std::ops::Deref for CountSnapshot {
    type Target = crate::result::Counts;
    fn deref(&self) -> &crate::result::Counts {
        &self.counts
    }
}

impl CountSnapshot {
    /// The result's counts (without the latency sum).
    pub(crate) fn as_counts(&self) -> crate::result::Counts {
        self.counts
    }

    pub fn add(&mut self, o: &CountSnapshot) {
        self.counts.add(&o.counts);
        self.latency_sum_ns += o.latency_sum_ns;
    }

    pub fn minus(&self, o: &CountSnapshot) -> CountSnapshot {
        CountSnapshot {
            counts: self.counts.minus(&o.counts),
            latency_sum_ns: self.latency_sum_ns - o.latency_sum_ns,
        }
    }
}

/// Lowest and highest trackable latency of the HDR histograms, ns.
pub(crate) const HDR_LOW_NS: u64 = 1_000;
pub(crate) const HDR_HIGH_NS: u64 = 3_600_000_000_000;
pub(crate) const HDR_SIGFIG: u8 = 3;

pub fn new_hdr() -> Histogram<u64> {
    Histogram::new_with_bounds(HDR_LOW_NS, HDR_HIGH_NS, HDR_SIGFIG)
        .expect("static histogram bounds are valid")
}

/// Which latency a sample belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyKind {
    /// Whole events as sysbench times them (includes fsync-all); service time.
    Event = 0,
    Read = 1,
    Write = 2,
    Fsync = 3,
    /// Open-loop runs: from scheduled arrival to completion (queueing included).
    Response = 4,
    /// End-of-thread fsyncs (not events).
    FsyncEnd = 5,
}

impl LatencyKind {
    pub const ALL: [LatencyKind; 6] = [
        LatencyKind::Event,
        LatencyKind::Read,
        LatencyKind::Write,
        LatencyKind::Fsync,
        LatencyKind::Response,
        LatencyKind::FsyncEnd,
    ];
    /// Read or write, by operation.
    #[inline]
    pub(crate) fn of_transfer(op: crate::run::generator::Op) -> LatencyKind {
        match op {
            crate::run::generator::Op::Read => LatencyKind::Read,
            crate::run::generator::Op::Fsync => LatencyKind::Fsync,
            crate::run::generator::Op::Write => LatencyKind::Write,
        }
    }
}

/// A log-linear latency recorder for the hot path: 1024 sub-buckets per
/// power of two (0.1 % resolution, like the HDR histograms' 3 significant
/// digits), indexed with a leading-zero count and two shifts. It is turned into
/// an HDR histogram when the run ends; recording into `hdrhistogram` directly
/// cost about 80 instructions per sample, a measurable share of a request
/// served from page cache.
pub struct FastHistogram {
    /// The counts in blocks of 128 buckets (an eighth of an octave, 512
    /// bytes), each allocated when its first sample comes: a recorder holds
    /// only the blocks its samples fell in, and growing copies nothing. A
    /// run's latencies crowd a few octaves and spread thinly over a dozen
    /// more (preempted requests on a loaded machine): per block, the thin
    /// tail costs an eighth of what whole octaves cost. (One array spanning
    /// the lowest to the highest octave, copied at each new one, held and
    /// touched every octave between: with whole octaves instead, 64 threads
    /// still held ~6 MiB of recorders, nearly all of the peak RSS above
    /// sysbench's.) Not the full 33-octave range either: zeroing and reading
    /// 130 KiB per recorder was a fifth of a wide-pool `plan`, which records
    /// into four per layout.
    blocks: [Option<Box<Block>>; BLOCKS],
}

/// Buckets per block, as a power of two.
const BLOCK_BITS: u32 = 7;
type Block = [u32; 1 << BLOCK_BITS];

impl Default for FastHistogram {
    fn default() -> Self {
        FastHistogram {
            blocks: std::array::from_fn(|_| None),
        }
    }
}

const FAST_SUB: u32 = 10; // 2^10 sub-buckets per octave
const FAST_LEN: usize = fast_index(HDR_HIGH_NS) + 1;
/// Blocks of buckets up to the HDR range's top (33 octaves of 8).
const BLOCKS: usize = FAST_LEN.div_ceil(1 << BLOCK_BITS);

/// Bucket of a value already clamped to the HDR range.
// No cast loses anything used: v is below 2^11 in the first branch; then the
// shift is at most 53, and of the shifted value only the low FAST_SUB bits
// are kept, which a narrower usize keeps too.
#[allow(clippy::cast_possible_truncation)]
#[inline]
const fn fast_index(v: u64) -> usize {
    if v < (2 << FAST_SUB) {
        v as usize
    } else {
        let shift = 63 - v.leading_zeros() - FAST_SUB;
        (((shift + 1) as usize) << FAST_SUB) + ((v >> shift) as usize & ((1 << FAST_SUB) - 1))
    }
}

/// Middle value of a bucket.
// `index` is below FAST_LEN (under 33 << FAST_SUB), so its octave fits a u32.
#[allow(clippy::cast_possible_truncation)]
fn fast_value(index: usize) -> u64 {
    if index < (2 << FAST_SUB) {
        return index as u64;
    }
    let shift = (index >> FAST_SUB) as u32 - 1;
    let low = (((1 << FAST_SUB) + (index & ((1 << FAST_SUB) - 1))) as u64) << shift;
    low + ((1u64 << shift) >> 1)
}

impl FastHistogram {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let i = fast_index(ns.clamp(HDR_LOW_NS, HDR_HIGH_NS));
        // i < FAST_LEN, so the block is within the array.
        match &mut self.blocks[i >> BLOCK_BITS] {
            Some(block) => {
                let c = &mut block[i & ((1 << BLOCK_BITS) - 1)];
                *c = c.saturating_add(1);
            }
            None => self.record_in_new_block(i),
        }
    }

    /// Allocate the block of bucket `i` and count its first sample.
    #[cold]
    fn record_in_new_block(&mut self, i: usize) {
        let mut block: Box<Block> = Box::new([0; 1 << BLOCK_BITS]);
        block[i & ((1 << BLOCK_BITS) - 1)] = 1;
        self.blocks[i >> BLOCK_BITS] = Some(block);
    }

    /// The buckets with samples, with their indices, in order.
    fn recorded(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.blocks
            .iter()
            .enumerate()
            .filter_map(|(b, block)| block.as_deref().map(|counts| (b << BLOCK_BITS, counts)))
            .flat_map(|(first, counts)| {
                counts
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c > 0)
                    .map(move |(k, &c)| (first + k, c))
            })
    }

    /// Blocks holding counts (512 bytes each).
    #[cfg(test)]
    fn blocks_held(&self) -> usize {
        self.blocks.iter().filter(|b| b.is_some()).count()
    }

    /// The largest value of a sample's bucket (None: no samples), the
    /// bound an HDR histogram needs to hold them ([`FastHistogram::to_hdr_fitted`]).
    fn highest_recorded(&self) -> Option<u64> {
        let last = self.recorded().last()?.0;
        Some(fast_value(last).clamp(HDR_LOW_NS, HDR_HIGH_NS))
    }

    /// The samples as an HDR histogram (each bucket at its middle value).
    pub fn to_hdr(&self) -> Histogram<u64> {
        let mut h = new_hdr();
        self.add_to(&mut h);
        h
    }

    /// The samples as an HDR histogram of the usual precision whose range
    /// ends at the largest sample, not at an hour: the same buckets with
    /// the same counts (an HDR histogram's bucket of a value does not depend
    /// on its upper bound), so the same mean, deviation and percentiles,
    /// with a fraction of the ~190 KiB to fill and read. For a summary of
    /// the samples alone; merge into [`new_hdr`] histograms with
    /// [`FastHistogram::add_to`].
    pub fn to_hdr_fitted(&self) -> Histogram<u64> {
        let high = self
            .highest_recorded()
            .map_or(2 * HDR_LOW_NS, |v| v.max(2 * HDR_LOW_NS));
        let mut h = Histogram::new_with_bounds(HDR_LOW_NS, high, HDR_SIGFIG)
            .expect("bounds within the static ones are valid");
        self.add_to(&mut h);
        h
    }

    /// Add the samples to an HDR histogram of the same bounds (each bucket at
    /// its middle value): what `to_hdr` and `Histogram::add` give, without a
    /// second HDR histogram per thread. Merging 64 threads through one each
    /// allocated and touched 64 x ~190 KiB at the end of a run, the larger
    /// part of the peak RSS above sysbench's.
    pub fn add_to(&self, h: &mut Histogram<u64>) {
        for (i, c) in self.recorded() {
            h.saturating_record_n(fast_value(i).clamp(HDR_LOW_NS, HDR_HIGH_NS), u64::from(c));
        }
    }
}

/// Per-thread latency histograms, allocated on first use (512 bytes per
/// eighth of an octave of latency recorded, per operation type in use), so
/// 64 threads stay within a few MiB; merged into
/// [`OpHistograms`] when the run ends.
#[derive(Default)]
pub struct ThreadHistograms {
    kinds: [Option<Box<FastHistogram>>; 6],
}

impl ThreadHistograms {
    #[inline]
    pub fn record(&mut self, kind: LatencyKind, ns: u64) {
        self.kinds[kind as usize]
            .get_or_insert_with(Default::default)
            .record(ns);
    }

    /// One kind's samples as an HDR histogram, if any were recorded.
    pub fn get(&self, kind: LatencyKind) -> Option<Histogram<u64>> {
        self.kinds[kind as usize]
            .as_deref()
            .map(FastHistogram::to_hdr)
    }
}

/// Latency per operation type, merged over threads (and, under MPI, ranks).
pub struct OpHistograms {
    kinds: [Histogram<u64>; 6],
}

impl Default for OpHistograms {
    fn default() -> Self {
        OpHistograms {
            kinds: std::array::from_fn(|_| new_hdr()),
        }
    }
}

impl OpHistograms {
    pub fn get(&self, kind: LatencyKind) -> &Histogram<u64> {
        &self.kinds[kind as usize]
    }

    /// Add one thread's histograms (bucket by bucket, nothing lost).
    pub(crate) fn add_thread(&mut self, t: &ThreadHistograms) {
        for kind in LatencyKind::ALL {
            if let Some(fast) = t.kinds[kind as usize].as_deref() {
                fast.add_to(&mut self.kinds[kind as usize]);
            }
        }
    }

    /// When every event was one operation timed end to end, the event
    /// histogram is the sum of the per-operation ones (periodic fsyncs
    /// included, end-of-thread fsyncs not: they are not events).
    pub(crate) fn derive_event_from_operations(&mut self) {
        let mut event = new_hdr();
        for kind in [LatencyKind::Read, LatencyKind::Write, LatencyKind::Fsync] {
            event.add(self.get(kind)).expect("same bounds everywhere");
        }
        self.kinds[LatencyKind::Event as usize] = event;
    }

    /// All fsyncs: in events, after writes, and at the end of each thread.
    pub(crate) fn all_fsyncs(&self) -> Histogram<u64> {
        let mut h = self.get(LatencyKind::Fsync).clone();
        h.add(self.get(LatencyKind::FsyncEnd))
            .expect("same bounds everywhere");
        h
    }

    pub fn merge(&mut self, o: &OpHistograms) {
        for kind in LatencyKind::ALL {
            self.kinds[kind as usize]
                .add(o.get(kind))
                .expect("same bounds everywhere");
        }
    }
}

/// sysbench's histogram rebuilt from an HDR histogram (each HDR bucket, 0.1 %
/// wide, goes whole into the sysbench bucket of its value; the sysbench buckets
/// are 1.8 % wide, so at most samples right at a boundary move by one bucket).
pub(crate) fn sysbench_histogram_of(h: &Histogram<u64>) -> Vec<u64> {
    let mut counts = vec![0u64; SB_BUCKETS];
    for v in h.iter_recorded() {
        counts[sb_bucket(h.median_equivalent(v.value_iterated_to()))] += v.count_at_value();
    }
    counts
}

/// Population standard deviation (sysbench's "Threads fairness").
pub(crate) fn population_stddev(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

// Exact float comparisons in these tests: the expected values are exact in binary floating point (small integers
// and their means), so equality is the precise check.
#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    #[test]
    fn buckets_follow_the_log_scale() {
        assert_eq!(sb_bucket(0), 0);
        assert_eq!(sb_bucket(1_000), 0); // 0.001 ms
        assert_eq!(sb_bucket(100_000_000_000_000), SB_BUCKETS - 1);
        let i = sb_bucket(1_000_000); // 1 ms
        let v = sb_bucket_value_ms(i);
        assert!((v - 1.0).abs() / 1.0 < 0.01, "{v}");
    }

    #[test]
    fn percentile_walks_buckets() {
        let mut counts = vec![0u64; SB_BUCKETS];
        counts[sb_bucket(1_000_000)] = 95;
        counts[sb_bucket(10_000_000)] = 5;
        assert!((sb_percentile_ms(&counts, 95.0) - 1.0).abs() < 0.02);
        assert!((sb_percentile_ms(&counts, 96.0) - 10.0).abs() < 0.2);
        assert_eq!(sb_percentile_ms(&vec![0; SB_BUCKETS], 95.0), 0.001);
    }

    #[test]
    fn fast_histogram_buckets_are_contiguous_and_precise() {
        let mut prev = 0;
        for v in [
            1_000u64,
            2_047,
            2_048,
            2_049,
            4_095,
            4_096,
            1_000_000,
            123_456_789,
            HDR_HIGH_NS,
        ] {
            let i = fast_index(v);
            assert!(i >= prev && i < FAST_LEN, "{v}");
            prev = i;
            let mid = fast_value(i) as f64;
            assert!((mid - v as f64).abs() / (v as f64) < 0.001, "{v} -> {mid}");
        }
        let mut h = FastHistogram::default();
        for v in [5_000_000u64; 99] {
            h.record(v);
        }
        h.record(50_000_000);
        let hdr = h.to_hdr();
        assert_eq!(hdr.len(), 100);
        let p50 = hdr.value_at_percentile(50.0) as f64;
        assert!((p50 - 5e6).abs() / 5e6 < 0.002, "{p50}");
    }

    /// A full-range HDR histogram of each sample's bucket middle: what a
    /// FastHistogram stands for, whatever order its octaves were grown in.
    fn hdr_of_buckets(samples: &[u64]) -> Histogram<u64> {
        let mut h = new_hdr();
        for &v in samples {
            let mid = fast_value(fast_index(v.clamp(HDR_LOW_NS, HDR_HIGH_NS)));
            h.record(mid.clamp(HDR_LOW_NS, HDR_HIGH_NS)).unwrap();
        }
        h
    }

    fn buckets(h: &Histogram<u64>) -> Vec<(u64, u64)> {
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    #[test]
    fn octaves_grown_in_any_order_keep_every_sample() {
        // Middle, then below (the counts move up), then far above, then
        // inside the span, then below the HDR range and at its top.
        let samples = [
            3_000_000u64,
            3_000_001,
            40_000,
            40_000,
            2_000,
            9_000_000_000,
            3_000_000,
            700_000,
            10,
            HDR_HIGH_NS,
            HDR_HIGH_NS + 5,
        ];
        let mut h = FastHistogram::default();
        for (n, &v) in samples.iter().enumerate() {
            h.record(v);
            assert_eq!(h.to_hdr().len(), n as u64 + 1, "after {v}");
        }
        let want = hdr_of_buckets(&samples);
        assert_eq!(buckets(&h.to_hdr()), buckets(&want));
    }

    #[test]
    fn a_recorder_holds_only_the_blocks_its_samples_fell_in() {
        // A run's usual spread on a loaded machine: microseconds, and a few
        // preempted requests at tens of milliseconds. The octaves between
        // hold nothing and must cost nothing, and a lone sample costs one
        // block of 512 bytes, not an octave of 4 KiB (per thread and
        // operation type).
        let mut h = FastHistogram::default();
        for k in 0..10_000u64 {
            h.record(1_500 + k % 300);
        }
        h.record(50_000_000);
        h.record(60_000_000);
        // 1,500-1,799 ns: buckets 1500-1799 (one to one below 2,048), in
        // blocks 11-14; 50 ms and 60 ms: one block each.
        assert_eq!(h.blocks_held(), 6);
        assert_eq!(h.to_hdr().len(), 10_002);
        assert_eq!(
            h.highest_recorded(),
            Some(fast_value(fast_index(60_000_000)))
        );
    }

    #[test]
    fn an_empty_histogram_holds_nothing_and_reads_out_empty() {
        let h = FastHistogram::default();
        assert_eq!(h.blocks_held(), 0);
        assert!(h.to_hdr().is_empty());
        assert!(h.to_hdr_fitted().is_empty());
    }

    #[test]
    fn the_fitted_hdr_summarises_as_the_full_range_one_does() {
        let mut h = FastHistogram::default();
        let mut samples = Vec::new();
        for k in 0..20_000u64 {
            // Two modes and a long tail: 40 us, 8 ms, up to ~2 s.
            let v = match k % 10 {
                0..=5 => 40_000 + k,
                6..=8 => 8_000_000 + 97 * k,
                _ => 1_000 * k * k / 200,
            };
            h.record(v);
            samples.push(v);
        }
        let (full, fitted) = (h.to_hdr(), h.to_hdr_fitted());
        assert!(
            fitted.high() < full.high() / 100,
            "fitted to {}",
            fitted.high()
        );
        assert_eq!(buckets(&fitted), buckets(&full));
        assert_eq!((fitted.min(), fitted.max()), (full.min(), full.max()));
        assert_eq!(fitted.mean().to_bits(), full.mean().to_bits());
        assert_eq!(fitted.stdev().to_bits(), full.stdev().to_bits());
        for p in [0.0, 1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0] {
            assert_eq!(
                fitted.value_at_percentile(p),
                full.value_at_percentile(p),
                "p{p}"
            );
            assert_eq!(
                fitted.highest_equivalent(fitted.value_at_percentile(p)),
                full.highest_equivalent(full.value_at_percentile(p))
            );
        }
        assert_eq!(buckets(&full), buckets(&hdr_of_buckets(&samples)));
    }

    #[test]
    fn stddev_is_population() {
        let (m, s) = population_stddev(&[1.0, 3.0]);
        assert_eq!(m, 2.0);
        assert_eq!(s, 1.0);
    }

    #[test]
    fn merging_threads_directly_equals_merging_their_hdr_histograms() {
        let mut threads: Vec<ThreadHistograms> =
            (0..3).map(|_| ThreadHistograms::default()).collect();
        for (t, h) in threads.iter_mut().enumerate() {
            for k in 0..5000u64 {
                h.record(LatencyKind::Read, 900 + k * k * (t as u64 + 1));
                h.record(LatencyKind::Write, 40_000 + k * 13);
            }
        }
        let mut direct = OpHistograms::default();
        let mut via_hdr = OpHistograms::default();
        for t in &threads {
            direct.add_thread(t);
            for kind in LatencyKind::ALL {
                if let Some(h) = t.get(kind) {
                    via_hdr.kinds[kind as usize].add(&h).unwrap();
                }
            }
        }
        for kind in LatencyKind::ALL {
            let (a, b) = (direct.get(kind), via_hdr.get(kind));
            assert_eq!(a.len(), b.len(), "{kind:?}");
            assert_eq!((a.min(), a.max()), (b.min(), b.max()), "{kind:?}");
            let buckets = |h: &Histogram<u64>| -> Vec<(u64, u64)> {
                h.iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value()))
                    .collect()
            };
            assert_eq!(buckets(a), buckets(b), "{kind:?}");
        }
        assert_eq!(direct.get(LatencyKind::Read).len(), 15_000);
    }
}

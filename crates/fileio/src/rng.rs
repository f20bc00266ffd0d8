//! Seeded random numbers: the one home for them in the workspace above
//! zfs-model.
//!
//! - The request stream, as sysbench 1.0.20 draws it, so `--rand-seed`
//!   reproduces its offsets bit for bit with one thread (src/sb_rand.c at
//!   sysbench 1.0.20): a process-wide glibc `random()` stream
//!   ([`GlibcRandom`]) seeds one xoroshiro128+ generator ([`Xoroshiro`]) per
//!   thread ([`worker_seeds`]).
//! - Everything else that needs repeatable draws (a simulator's jitter, a
//!   lab's crash moments, test fixtures): [`SeededStream`], one of many
//!   independent numbered streams of one seed, and [`splitmix64`] for a single
//!   value derived from a few numbers.

use crate::spec::RunSpec;

/// glibc's `random()` with the default TYPE_3 state (additive feedback, r[i] =
/// r[i-31] + r[i-3]), seeded like `srandom(seed)`.
#[derive(Clone)]
pub(crate) struct GlibcRandom {
    ring: [u32; 34],
    pos: usize,
}

impl GlibcRandom {
    pub fn new(seed: u32) -> GlibcRandom {
        let seed = if seed == 0 { 1 } else { seed };
        let mut r = [0i64; 34];
        r[0] = seed as i32 as i64;
        for i in 1..31 {
            // 16807 * r[i-1] mod (2^31 - 1), computed with Schrage's method as glibc does.
            let hi = r[i - 1] / 127773;
            let lo = r[i - 1] % 127773;
            let mut word = 16807 * lo - 2836 * hi;
            if word < 0 {
                word += 2147483647;
            }
            r[i] = word;
        }
        for i in 31..34 {
            r[i] = r[i - 31];
        }
        let mut ring = [0u32; 34];
        for (d, s) in ring.iter_mut().zip(r.iter()) {
            // glibc stores each word into its int32_t state and the feedback
            // adds the state as uint32_t: keeping the low 32 bits is that store.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let word = *s as u32;
            *d = word;
        }
        let mut g = GlibcRandom { ring, pos: 0 };
        // glibc discards the first 310 outputs after seeding.
        for _ in 34..344 {
            g.step();
        }
        g
    }

    fn step(&mut self) -> u32 {
        // ring holds the last 34 values; pos is the index of r[i-34].
        let i31 = (self.pos + 3) % 34; // r[i-31]
        let i3 = (self.pos + 31) % 34; // r[i-3]
        let v = self.ring[i31].wrapping_add(self.ring[i3]);
        self.ring[self.pos] = v;
        self.pos = (self.pos + 1) % 34;
        v
    }

    /// Next value in [0, 2^31).
    pub(crate) fn next_value(&mut self) -> u32 {
        self.step() >> 1
    }
}

/// xoroshiro128+ (rotations 55/14/36), one per worker thread.
#[derive(Clone, Copy, Debug)]
pub struct Xoroshiro {
    s0: u64,
    s1: u64,
}

impl Xoroshiro {
    /// Seed from four consecutive `random()` outputs, as sysbench's threads do.
    pub(crate) fn from_glibc(g: &mut GlibcRandom) -> Xoroshiro {
        let r1 = g.next_value() as u64;
        let r2 = g.next_value() as u64;
        let r3 = g.next_value() as u64;
        let r4 = g.next_value() as u64;
        Xoroshiro {
            s0: (r1 << 32) | r2,
            s1: (r3 << 32) | r4,
        }
    }

    pub fn from_state(s0: u64, s1: u64) -> Xoroshiro {
        Xoroshiro { s0, s1 }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let mut s1 = self.s1;
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        self.s0 = s0.rotate_left(55) ^ s1 ^ (s1 << 14);
        self.s1 = s1.rotate_left(36);
        result
    }

    /// Uniform double in [0, 1): the top 52 bits scaled by 2^-52.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        // The value fits 52 bits, so the signed conversion (one instruction)
        // gives the same double as the unsigned one (a branchy sequence).
        ((self.next_u64() >> 12) as i64) as f64 * (1.0 / (1u64 << 52) as f64)
    }
}

/// SplitMix64's output function (Steele, Lea and Flood 2014) on `x` plus its
/// increment: one well-mixed value from any 64-bit input, e.g. a seed combined
/// with a cell number.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GOLDEN_GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// 2^64 / golden ratio, SplitMix64's increment (also a good odd multiplier
/// for spreading a small index over 64 bits before [`splitmix64`]).
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// A small, fast, repeatable generator (xorshift64*, Vigna 2016) for draws
/// that are not the request stream: stream `stream` of seed `seed`.
/// Neighbouring streams (and seeds) are unrelated, because the state starts
/// from [`splitmix64`] of the two; the same (seed, stream) always gives the
/// same numbers. Not for cryptography.
#[derive(Debug, Clone)]
pub struct SeededStream {
    state: u64,
}

impl SeededStream {
    pub fn new(seed: u64, stream: u64) -> SeededStream {
        let mixed = splitmix64(seed.wrapping_add(stream.wrapping_mul(GOLDEN_GAMMA)));
        SeededStream {
            // xorshift's state must not be 0 (it would stay 0).
            state: mixed.max(1),
        }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1), from the top 53 bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi) (`lo` when the range is empty).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        if hi <= lo {
            return lo;
        }
        lo + self.unit() * (hi - lo)
    }

    /// Exponentially distributed with mean `mean` (inverse transform); 0 for
    /// a mean that is not positive. Finite: at most about 37 x `mean`.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        if mean.is_nan() || mean <= 0.0 {
            return 0.0;
        }
        -(1.0 - self.unit()).ln() * mean
    }

    /// Standard normal (Box-Muller, one of the pair).
    pub fn normal(&mut self) -> f64 {
        // Away from 0 so the logarithm stays finite.
        let u = self.unit().max(1e-300);
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

// Exact comparisons: the values compared are returned unchanged (the empty-range
// and non-positive-mean cases).
/// Seeds for the worker threads, drawn in thread order from the process-wide
/// stream seeded like sysbench (src/sb_rand.c at
/// 1.0.20). Deterministic for any thread count.
// The seed is an unsigned int, as srandom(3) takes it: C's conversion keeps
// the low 32 bits of time(NULL), and so does the cast. `--rand-seed` is
// already in that range (an INT option kept as unsigned, as sysbench does).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub fn worker_seeds(w: &RunSpec, background_threads: u32) -> Vec<Xoroshiro> {
    let seed = if w.rand_seed == 0 {
        // SAFETY: time(NULL).
        unsafe { libc::time(std::ptr::null_mut()) as u32 }
    } else {
        w.rand_seed as u32
    };
    let mut g = GlibcRandom::new(seed);
    for _ in 0..background_threads {
        Xoroshiro::from_glibc(&mut g);
    }
    (0..w.threads)
        .map(|_| Xoroshiro::from_glibc(&mut g))
        .collect()
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_outputs() {
        // The first output of the reference SplitMix64 seeded with 0.
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn seeded_streams_repeat_and_differ() {
        // Computed independently (Python) from the definition: splitmix64 of
        // seed + stream x gamma, then xorshift64*.
        let mut s = SeededStream::new(42, 3);
        assert_eq!(
            [s.next_u64(), s.next_u64(), s.next_u64()],
            [
                16698540767087908414,
                583894480634740401,
                13952790261748287297
            ]
        );
        let a: Vec<u64> = {
            let mut s = SeededStream::new(7, 0);
            (0..4).map(|_| s.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut s = SeededStream::new(7, 0);
            (0..4).map(|_| s.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut s = SeededStream::new(7, 1);
            (0..4).map(|_| s.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn distributions_have_their_means() {
        let mut s = SeededStream::new(1, 0);
        let n = 200_000;
        let (mut unit, mut exp, mut norm, mut norm2) = (0.0, 0.0, 0.0, 0.0);
        for _ in 0..n {
            let u = s.unit();
            assert!((0.0..1.0).contains(&u));
            unit += u;
            let e = s.exponential(3.0);
            assert!(e >= 0.0 && e.is_finite());
            exp += e;
            let z = s.normal();
            norm += z;
            norm2 += z * z;
            let x = s.uniform(5.0, 7.0);
            assert!((5.0..7.0).contains(&x));
        }
        let n = f64::from(n);
        assert!((unit / n - 0.5).abs() < 0.01, "{}", unit / n);
        assert!((exp / n - 3.0).abs() < 0.05, "{}", exp / n);
        assert!((norm / n).abs() < 0.01, "{}", norm / n);
        assert!((norm2 / n - 1.0).abs() < 0.02, "{}", norm2 / n);
        assert_eq!(s.exponential(0.0), 0.0);
        assert_eq!(s.exponential(f64::NAN), 0.0);
        assert_eq!(s.uniform(2.0, 2.0), 2.0);
    }

    #[test]
    fn glibc_random_matches_known_outputs() {
        // srandom(1); random() x 5 on glibc.
        let mut g = GlibcRandom::new(1);
        let got: Vec<u32> = (0..5).map(|_| g.next_value()).collect();
        assert_eq!(
            got,
            vec![1804289383, 846930886, 1681692777, 1714636915, 1957747793]
        );
    }
}

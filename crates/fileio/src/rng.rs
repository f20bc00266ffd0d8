//! Random numbers as sysbench 1.0.20 draws them, so `--rand-seed` reproduces its
//! offsets bit for bit with one thread (src/sb_rand.c at sysbench 1.0.20): a
//! process-wide glibc `random()` stream seeds one xoroshiro128+ generator per
//! thread.

/// glibc's `random()` with the default TYPE_3 state (additive feedback, r[i] =
/// r[i-31] + r[i-3]), seeded like `srandom(seed)`.
#[derive(Clone)]
pub struct GlibcRandom {
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
    pub fn next_value(&mut self) -> u32 {
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
    pub fn from_glibc(g: &mut GlibcRandom) -> Xoroshiro {
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

#[cfg(test)]
mod tests {
    use super::*;

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

//! Redundancy and risk: failures tolerated, the chance that a given number of
//! simultaneous failures kills the pool, resilver time, mean time to data loss
//! and the annual probability of losing the pool (R. Elling's MTTDL[1]
//! model, "A story of two MTTDL models", 2007).

use serde::Serialize;

use crate::disk::{DiskGroup, DiskPerf};
use crate::estimate::Estimate;
use crate::layout::{Layout, Shape, VdevKind};

const HOURS_PER_YEAR: f64 = 8760.0;

/// Inputs of the risk model that are not part of the layout.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RiskOptions {
    /// Fraction of the pool that is allocated when a disk fails (0..1).
    pub fill: f64,
    /// Hours until a replacement disk is in place when there is no hot spare.
    pub replace_hours: f64,
    /// Block size that dominates the pool (recordsize or volblocksize): the
    /// resilver reads one piece of each block per disk.
    pub block_bytes: u64,
    pub ashift: u32,
}

/// Risk figures of one layout.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Reliability {
    /// Failures the pool always survives (the weakest vdev's tolerance).
    pub failures_tolerated: u32,
    /// Failures it survives at best (each vdev losing as many as it can).
    pub failures_tolerated_best: u32,
    /// (f, probability that f simultaneous random disk failures lose the pool).
    pub kill_probability: Vec<(u32, f64)>,
    /// Time to rebuild one disk: low = data laid out sequentially, high = every
    /// block piece a separate random read; typical = geometric mean of the two.
    pub resilver_hours: Estimate,
    /// Replacement wait (0 with a hot spare) + resilver.
    pub repair_hours: Estimate,
    /// Mean time to data loss, independent exponential failures (Elling's
    /// MTTDL[1] model). Low goes with the long repair time.
    pub mttdl_hours: Estimate,
    /// 1 − exp(−1 year / MTTDL): the independent-failure floor.
    pub annual_loss_probability: Estimate,
    /// Expected unrecoverable read errors while resilvering a vdev that has no
    /// redundancy left (each one normally costs a block or a file, not the pool).
    pub ure_expected_at_last_redundancy: Option<f64>,
}

/// Binomial coefficient, exact.
fn choose(n: u32, k: u32) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k) as u128;
    let mut result: u128 = 1;
    for i in 0..k {
        result = result * (n as u128 - i) / (i + 1);
    }
    result
}

/// Probability that `failures` disks failing at once, chosen uniformly among
/// the disks of `vdevs` top-level vdevs (width, tolerance), lose the pool:
/// 1 − [x^f] Π_v (Σ_{i≤t_v} C(w_v, i) x^i) / C(N, f): the surviving failure
/// sets counted by a generating function, over all C(N, f) sets.
pub fn kill_probability(vdevs: &[(u32, u32)], failures: u32) -> f64 {
    let disks: u32 = vdevs.iter().map(|(w, _)| w).sum();
    if failures > disks {
        return 1.0;
    }
    // Coefficient k of the product = number of ways to spread k failures so
    // that no vdev exceeds its tolerance. Only the coefficient of x^failures
    // is wanted, and terms above it never contribute to it, so the product is
    // cut at that degree: the work grows linearly with the number of vdevs
    // (the full product grew quadratically, and its high coefficients
    // overflowed 128 bits from a few thousand disks on).
    let degree = failures as usize;
    let mut survivable: Vec<u128> = vec![1];
    for &(width, tolerance) in vdevs {
        let factor: Vec<u128> = (0..=tolerance.min(width))
            .map(|i| choose(width, i))
            .collect();
        let len = (survivable.len() + factor.len() - 1).min(degree + 1);
        let mut next = vec![0u128; len];
        for (i, a) in survivable.iter().enumerate() {
            for (j, b) in factor.iter().enumerate().take(len.saturating_sub(i)) {
                next[i + j] += a * b;
            }
        }
        survivable = next;
    }
    let ways_survived = survivable.get(degree).copied().unwrap_or(0);
    1.0 - ways_survived as f64 / choose(disks, failures) as f64
}

/// MTTDL of one vdev of `disks` disks tolerating `tolerance` failures:
/// MTBF^(t+1) / (n (n−1) … (n−t) × MTTR^t)   (Elling's MTTDL[1], the usual
/// Markov-chain approximation for MTTR ≪ MTBF / n).
pub fn vdev_mttdl_hours(disks: u32, tolerance: u32, mtbf_hours: f64, repair_hours: f64) -> f64 {
    let mut falling = 1.0;
    for i in 0..=tolerance {
        falling *= (disks - i) as f64;
    }
    mtbf_hours.powi(tolerance as i32 + 1) / (falling * repair_hours.powi(tolerance as i32))
}

/// The pool is lost when any vdev is: failure rates add.
pub fn pool_mttdl_hours(vdev_mttdls: impl IntoIterator<Item = f64>) -> f64 {
    1.0 / vdev_mttdls.into_iter().map(|m| 1.0 / m).sum::<f64>()
}

pub fn annual_loss_probability(mttdl_hours: f64) -> f64 {
    // 1 − e^−x loses all precision for the tiny x typical here; exp_m1 keeps it.
    -(-HOURS_PER_YEAR / mttdl_hours).exp_m1()
}

/// Bytes a resilver reads from one disk per block piece (each disk holds its
/// share of the block's rows, `vdev_raidz.c`):
/// A × ceil(ceil(B/A) / (w − p)) on raidz, B on mirrors.
pub fn resilver_segment_bytes(shape: &Shape, ashift: u32, block_bytes: u64) -> u64 {
    match shape.kind {
        VdevKind::Raidz { parity } => {
            let sectors = block_bytes.div_ceil(1 << ashift);
            sectors.div_ceil((shape.width - parity) as u64) << ashift
        }
        VdevKind::Mirror | VdevKind::Stripe => block_bytes,
    }
}

/// Resilver time of one disk holding `allocated_bytes` (our heuristic: the
/// sorted scan of `dsl_scan.c` reads allocated data only, in offset order):
/// allocated / min(sequential rate, IOPS × segment × G). The fast end takes
/// G large (pieces merge into sequential reads: a young pool filled by
/// streaming writes), the slow end G = 1 (an old, fragmented pool).
pub fn resilver_hours(allocated_bytes: f64, segment_bytes: u64, perf: &DiskPerf) -> Estimate {
    let seq_bytes_s = perf.seq_mb_s.typical * 1e6;
    let random_bytes_s = (perf.random_iops.typical * segment_bytes as f64).min(seq_bytes_s);
    let best = allocated_bytes / seq_bytes_s / 3600.0;
    let worst = allocated_bytes / random_bytes_s / 3600.0;
    Estimate::new(best, (best * worst).sqrt(), worst)
}

/// Risk figures for `layout` on `groups`; `spares` decides whether a repair
/// waits for a replacement disk.
pub fn reliability(
    groups: &[DiskGroup],
    layout: &Layout,
    leaf_asizes: &[u64],
    options: &RiskOptions,
) -> Reliability {
    let shape = layout.shape;
    let tolerance = shape.vdev_tolerance();
    let vdev_list: Vec<(u32, u32)> = layout
        .placements
        .iter()
        .flat_map(|p| std::iter::repeat_n((shape.width, tolerance), p.vdevs as usize))
        .collect();
    let vdev_count: u32 = layout.placements.iter().map(|p| p.vdevs).sum();
    let disks = shape.width * vdev_count;
    let best_case = tolerance * vdev_count;
    // From the first failure count that can hurt, up to the one that surely
    // kills (or a few steps, whichever comes first).
    let last = disks.min(best_case + 1).min(tolerance + 4);
    let kill_probability = ((tolerance + 1)..=last)
        .map(|f| (f, kill_probability(&vdev_list, f)))
        .collect();

    let wait = if layout.spare_count() > 0 {
        0.0
    } else {
        options.replace_hours
    };
    let segment = resilver_segment_bytes(&shape, options.ashift, options.block_bytes);

    // Per disk group: resilver time and MTTDL of its vdevs at each repair bound.
    let mut resilver = Estimate::exact(0.0);
    let mut rates = [0.0f64; 3];
    for placement in &layout.placements {
        let group = &groups[placement.group];
        let allocated = options.fill * leaf_asizes[placement.group] as f64;
        let hours = resilver_hours(allocated, segment, &group.perf);
        if hours.high > resilver.high {
            resilver = hours;
        }
        let repair = hours.map(|h| h + wait);
        for (slot, repair_hours) in [repair.low, repair.typical, repair.high]
            .into_iter()
            .enumerate()
        {
            let mttdl = vdev_mttdl_hours(
                shape.width,
                tolerance,
                group.perf.mtbf_hours(),
                repair_hours,
            );
            rates[slot] += placement.vdevs as f64 / mttdl;
        }
    }
    let repair_hours = resilver.map(|h| h + wait);
    // Short repairs give the long MTTDL: sort after inverting.
    let mttdl_hours = Estimate::new(1.0 / rates[2], 1.0 / rates[1], 1.0 / rates[0]);
    let annual_loss = mttdl_hours.map(annual_loss_probability);

    let ure = match shape.kind {
        VdevKind::Stripe => None,
        _ => {
            // Once a vdev has lost all its redundancy, every surviving disk
            // holding data must be read in full: 1 for a mirror, w − p for raidz.
            let survivors = match shape.kind {
                VdevKind::Raidz { parity } => (shape.width - parity) as f64,
                _ => 1.0,
            };
            let placement = &layout.placements[0];
            let group = &groups[placement.group];
            let bits = 8.0 * options.fill * group.bytes as f64 * survivors;
            Some(bits * group.perf.uer_per_bit)
        }
    };

    Reliability {
        failures_tolerated: tolerance,
        failures_tolerated_best: best_case,
        kill_probability,
        resilver_hours: resilver,
        repair_hours,
        mttdl_hours,
        annual_loss_probability: annual_loss,
        ure_expected_at_last_redundancy: ure,
    }
}

/// P(at least one URE) for an expected count (Poisson).
pub fn at_least_one(expected: f64) -> f64 {
    -(-expected).exp_m1()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::DiskClass;

    /// P_kill(f) for the five reference layouts, counted by hand.
    #[test]
    fn kill_probability_table() {
        // (name, vdevs as (width, tolerance), P_kill for f = 2, 3, 4)
        type Row = (&'static str, Vec<(u32, u32)>, [f64; 3]);
        let layouts: [Row; 5] = [
            ("1xZ3-24", vec![(24, 3)], [0.0, 0.0, 1.0]),
            ("2xZ2-12", vec![(12, 2); 2], [0.0, 0.217, 0.590]),
            ("3xZ2-8", vec![(8, 2); 3], [0.0, 0.083, 0.273]),
            ("12xmirror", vec![(2, 1); 12], [0.043, 0.130, 0.255]),
            ("4xZ1-6", vec![(6, 1); 4], [0.217, 0.573, 0.878]),
        ];
        for (name, vdevs, expected) in layouts {
            for (f, want) in [2u32, 3, 4].into_iter().zip(expected) {
                let got = kill_probability(&vdevs, f);
                assert!((got - want).abs() < 0.0005 + 1e-12, "{name} f={f}: {got}");
            }
        }
    }

    /// Thousands of vdevs: the count stays exact (the full product overflowed
    /// and took time quadratic in the vdevs). 5,000 two-way mirrors lose the
    /// pool on 2 failures only when both hit one mirror.
    #[test]
    fn kill_probability_of_many_vdevs() {
        let mirrors = vec![(2, 1); 5000];
        let pairs = choose(10_000, 2);
        let want = 1.0 - (pairs - 5000) as f64 / pairs as f64;
        // One pair more or less changes the result by 1 / C(10000, 2) = 2e-8.
        assert!((kill_probability(&mirrors, 2) - want).abs() < 1e-12);
        // 1,111 raidz3 vdevs of 9 disks: every count from the first fatal
        // one up is a probability, and more failures are never safer.
        let raidz3 = vec![(9, 3); 1111];
        let mut last = 0.0;
        for f in 4..=7 {
            let p = kill_probability(&raidz3, f);
            assert!((0.0..=1.0).contains(&p) && p >= last, "f={f}: {p}");
            last = p;
        }
    }

    /// MTTDL[1] annual loss probability at AFR 1 % for MTTR 24 / 72 / 168 h,
    /// quoted to one significant digit.
    #[test]
    fn annual_loss_table() {
        let mtbf = 876_000.0;
        let layouts: [(&str, u32, u32, u32, [f64; 3]); 5] = [
            ("1xZ3-24", 24, 3, 1, [5e-11, 1e-9, 2e-8]),
            ("2xZ2-12", 12, 2, 2, [2e-8, 2e-7, 1e-6]),
            ("3xZ2-8", 8, 2, 3, [8e-9, 7e-8, 4e-7]),
            ("12xmirror", 2, 1, 12, [7e-6, 2e-5, 5e-5]),
            ("4xZ1-6", 6, 1, 4, [3e-5, 1e-4, 2e-4]),
        ];
        for (name, width, tolerance, vdevs, expected) in layouts {
            for (mttr, want) in [24.0, 72.0, 168.0].into_iter().zip(expected) {
                let vdev = vdev_mttdl_hours(width, tolerance, mtbf, mttr);
                let pool = pool_mttdl_hours(std::iter::repeat_n(vdev, vdevs as usize));
                let got = annual_loss_probability(pool);
                // Round to one significant digit as the table does.
                let magnitude = 10f64.powf(got.log10().floor());
                let rounded = (got / magnitude).round() * magnitude;
                assert!(
                    (rounded - want).abs() / want < 1e-9,
                    "{name} MTTR {mttr}: {got:e}"
                );
            }
        }
    }

    /// raidz1-6 of 8 TB, 80 % full, UER 1e-15 per bit (enterprise data
    /// sheets) → 23 % chance of a URE.
    #[test]
    fn ure_during_last_redundancy_resilver() {
        let expected = 5.0 * 0.8 * 8e12 * 8.0 * 1e-15;
        assert!((at_least_one(expected) - 0.23).abs() < 0.005);
    }

    /// 8 TB disk, 80 % full, 180 MB/s, 150 IOPS.
    #[test]
    fn resilver_time_examples() {
        let perf = DiskClass::Hdd7200.default_perf();
        let allocated = 6.4e12;
        let hours = |layout: &str, block: u64| {
            let shape = Shape::parse(layout).unwrap();
            resilver_hours(allocated, resilver_segment_bytes(&shape, 12, block), &perf)
        };
        let mirror = hours("12xmirror-2", 128 * 1024);
        assert!((mirror.low - 9.9).abs() < 0.1, "{mirror:?}");
        assert!((mirror.high / 24.0 - 3.7).abs() < 0.1, "{mirror:?}");
        let z2 = hours("3xraidz2-8", 128 * 1024);
        assert_eq!(
            resilver_segment_bytes(&Shape::parse("3xraidz2-8").unwrap(), 12, 128 * 1024),
            24 * 1024
        );
        assert!((z2.high / 24.0 - 20.0).abs() < 0.5, "{z2:?}");
        let z3 = hours("1xraidz3-24", 128 * 1024);
        assert!((z3.high / 24.0 / 30.0 - 2.0).abs() < 0.1, "{z3:?}");
        // 1 MiB records shrink the slow end.
        assert!(hours("1xraidz3-24", 1 << 20).high < z3.high / 5.0);
    }
}

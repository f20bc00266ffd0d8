//! Statistics for comparing repeated runs: sample summaries, Welch's t-test,
//! confidence intervals for the difference (Welch) and the relative change
//! (Fieller) of two means, and the Student t distribution they need.
//!
//! Welch's test (not Student's pooled test) because two storage configurations
//! rarely have the same run-to-run noise: a pool with a SLOG is often both faster
//! and steadier. The t CDF is computed from the regularized incomplete beta
//! function, evaluated by its continued fraction (modified Lentz method), with
//! ln Γ from the Lanczos approximation; both are accurate to ~1e-10 over the
//! degrees of freedom a benchmark produces (1 to a few hundred).

use std::cmp::Ordering;

/// Mean and spread of one metric over repeated runs.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 for one sample.
    pub sd: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// The same figures in another unit (`1000.0`: ms to µs).
    pub fn scaled(self, k: f64) -> Summary {
        Summary {
            mean: self.mean * k,
            sd: self.sd * k,
            min: self.min * k,
            max: self.max * k,
            ..self
        }
    }

    /// None for an empty slice: there is nothing to summarise.
    pub fn of(xs: &[f64]) -> Option<Summary> {
        if xs.is_empty() {
            return None;
        }
        let n = xs.len();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        Some(Summary {
            n,
            mean,
            sd: var.sqrt(),
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// The outcome of Welch's two-sample t-test.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Welch {
    /// (mean A - mean B) / standard error.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's t-test of `a` against `b`. None unless both sides have at least two
/// samples: with one sample there is no estimate of the noise, so no test.
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Option<Welch> {
    let (sa, sb) = (Summary::of(a)?, Summary::of(b)?);
    if sa.n < 2 || sb.n < 2 {
        return None;
    }
    let (va, vb) = (sa.sd.powi(2) / sa.n as f64, sb.sd.powi(2) / sb.n as f64);
    let se2 = va + vb;
    let diff = sa.mean - sb.mean;
    if se2 == 0.0 {
        // Both sides perfectly repeatable (e.g. a rate-limited run, or the
        // simulator): any difference is real, no difference is no difference.
        let df = (sa.n + sb.n - 2) as f64;
        return Some(if diff == 0.0 {
            Welch { t: 0.0, df, p: 1.0 }
        } else {
            Welch {
                t: diff.signum() * f64::INFINITY,
                df,
                p: 0.0,
            }
        });
    }
    let t = diff / se2.sqrt();
    let df = se2.powi(2) / (va.powi(2) / (sa.n - 1) as f64 + vb.powi(2) / (sb.n - 1) as f64);
    Some(Welch {
        t,
        df,
        p: student_t_two_sided_p(t, df),
    })
}

/// P(|T| >= |t|) for Student's t with `df` degrees of freedom.
pub fn student_t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_infinite() {
        return 0.0;
    }
    // P(|T| > |t|) = I_x(df/2, 1/2) with x = df / (df + t²).
    reg_inc_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// P(T <= t) for Student's t with `df` degrees of freedom.
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    let tail = student_t_two_sided_p(t, df) / 2.0;
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The two-sided confidence level of every interval `compare` prints, from its
/// significance level: an interval at 1 − alpha excludes "no change" exactly
/// when Welch's test calls the change significant at alpha.
pub fn confidence_of(alpha: f64) -> f64 {
    1.0 - alpha
}

/// A confidence interval for the difference of two means (candidate −
/// baseline), in the metric's unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DifferenceInterval {
    /// mean(candidate) − mean(baseline).
    pub difference: f64,
    pub low: f64,
    pub high: f64,
    /// Two-sided confidence level, e.g. 0.95.
    pub confidence: f64,
    /// Welch–Satterthwaite degrees of freedom of the t quantile used.
    pub df: f64,
}

/// Welch's t interval for mean(candidate) − mean(baseline):
/// d ± t(1 − α/2, ν) · √(s²_b/n_b + s²_c/n_c), with ν from Welch–Satterthwaite.
/// It is the inversion of [`welch_t_test`], so it excludes 0 exactly when the
/// test's p is below 1 − confidence. None unless both sides have two samples.
pub fn welch_difference_interval(
    baseline: &[f64],
    candidate: &[f64],
    confidence: f64,
) -> Option<DifferenceInterval> {
    let (sb, sc) = (Summary::of(baseline)?, Summary::of(candidate)?);
    if sb.n < 2 || sc.n < 2 {
        return None;
    }
    let (vb, vc) = (sb.sd.powi(2) / sb.n as f64, sc.sd.powi(2) / sc.n as f64);
    let difference = sc.mean - sb.mean;
    let df = welch_df(vb, sb.n, vc, sc.n);
    if vb + vc == 0.0 {
        // No noise on either side: the difference is known exactly.
        return Some(DifferenceInterval {
            difference,
            low: difference,
            high: difference,
            confidence,
            df,
        });
    }
    let half = student_t_quantile(0.5 + confidence / 2.0, df) * (vb + vc).sqrt();
    Some(DifferenceInterval {
        difference,
        low: difference - half,
        high: difference + half,
        confidence,
        df,
    })
}

/// Welch–Satterthwaite degrees of freedom of `va + vb`, where `va` is the
/// squared standard error of a mean of `na` samples (and so for b). With both
/// zero (no noise) it falls back to the pooled `na + nb − 2`.
fn welch_df(va: f64, na: usize, vb: f64, nb: usize) -> f64 {
    let den = va.powi(2) / (na - 1) as f64 + vb.powi(2) / (nb - 1) as f64;
    if den == 0.0 {
        return (na + nb - 2) as f64;
    }
    (va + vb).powi(2) / den
}

/// A confidence interval for the relative change mean(candidate) /
/// mean(baseline) − 1 (0.12 = +12 %).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangeInterval {
    /// mean(candidate) / mean(baseline) − 1.
    pub change: f64,
    pub low: f64,
    pub high: f64,
    pub confidence: f64,
}

/// Why [`fieller_change_interval`] gives no interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoChangeInterval {
    /// A side has fewer than two samples: its noise is unknown.
    TooFewSamples,
    /// The baseline mean is within the noise of zero, so the set of plausible
    /// ratios is unbounded (Fieller's interval does not exist as an interval).
    BaselineNearZero,
}

/// Fieller's confidence interval for the ratio R = μ_c / μ_b of two independent
/// means with unequal variances, reported as the change R − 1.
///
/// The interval is every R that Welch's test of H₀: μ_c = R·μ_b does not reject:
/// (x̄_c − R·x̄_b)² ≤ t(1 − α/2, ν(R))² · (v_c + R²·v_b), with v = s²/n and ν(R)
/// Welch–Satterthwaite's degrees of freedom for v_c + R²·v_b. At R = 1 that is
/// exactly [`welch_t_test`], so the interval excludes "no change" exactly when
/// the test calls the change significant. Unlike the delta method it is
/// asymmetric around the estimate, as the ratio's distribution is for small n.
///
/// Valid for independent, roughly normal sample means (repeats of a benchmark);
/// it needs two samples per side and a baseline mean clearly away from zero
/// (x̄_b² > t(1 − α/2, n_b − 1)² · v_b), otherwise the set is unbounded.
pub fn fieller_change_interval(
    baseline: &[f64],
    candidate: &[f64],
    confidence: f64,
) -> Result<ChangeInterval, NoChangeInterval> {
    let (Some(sb), Some(sc)) = (Summary::of(baseline), Summary::of(candidate)) else {
        return Err(NoChangeInterval::TooFewSamples);
    };
    if sb.n < 2 || sc.n < 2 {
        return Err(NoChangeInterval::TooFewSamples);
    }
    if sb.mean == 0.0 {
        return Err(NoChangeInterval::BaselineNearZero);
    }
    let (vb, vc) = (sb.sd.powi(2) / sb.n as f64, sc.sd.powi(2) / sc.n as f64);
    let ratio = sc.mean / sb.mean;
    let p = 0.5 + confidence / 2.0;
    if vb + vc == 0.0 {
        let change = ratio - 1.0;
        return Ok(ChangeInterval {
            change,
            low: change,
            high: change,
            confidence,
        });
    }
    // For large |R| the baseline's noise dominates and ν(R) → n_b − 1: the set
    // is bounded exactly when the baseline mean is significantly non-zero there.
    let t_inf = student_t_quantile(p, (sb.n - 1) as f64);
    if vb > 0.0 && sb.mean.powi(2) <= t_inf.powi(2) * vb {
        return Err(NoChangeInterval::BaselineNearZero);
    }
    // g(R) ≤ 0 inside the interval; g(ratio) < 0 since the variances are not both 0.
    let g = |r: f64| {
        let t = student_t_quantile(p, welch_df(r * r * vb, sb.n, vc, sc.n));
        (sc.mean - r * sb.mean).powi(2) - t * t * (vc + r * r * vb)
    };
    // First step out: the delta method's half-width at the widest t.
    let t_max = student_t_quantile(p, (sb.n.min(sc.n) - 1) as f64);
    let step = t_max * (vc + ratio * ratio * vb).sqrt() / sb.mean.abs();
    let low = ratio - boundary_distance(&g, ratio, -1.0, step)?;
    let high = ratio + boundary_distance(&g, ratio, 1.0, step)?;
    Ok(ChangeInterval {
        change: ratio - 1.0,
        low: low - 1.0,
        high: high - 1.0,
        confidence,
    })
}

/// How far from `center` (where g < 0) in `direction` g reaches 0: doubling
/// steps until g ≥ 0, then bisection to full precision.
fn boundary_distance(
    g: &dyn Fn(f64) -> f64,
    center: f64,
    direction: f64,
    step: f64,
) -> Result<f64, NoChangeInterval> {
    // A zero first step (candidate mean 0 and noiseless) starts from a small
    // one; 2100 doublings span every positive f64, so a bounded set (checked
    // by the caller) is always bracketed.
    let (mut inside, mut outside) = (0.0, if step > 0.0 { step } else { 1e-9 });
    let mut doublings = 0;
    while g(center + direction * outside) < 0.0 {
        inside = outside;
        outside *= 2.0;
        doublings += 1;
        if doublings > 2100 {
            return Err(NoChangeInterval::BaselineNearZero);
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (inside + outside);
        if mid <= inside || mid >= outside {
            break;
        }
        if g(center + direction * mid) < 0.0 {
            inside = mid;
        } else {
            outside = mid;
        }
    }
    Ok(0.5 * (inside + outside))
}

/// The quantile t with P(T ≤ t) = p for Student's t with `df` degrees of
/// freedom (0 < p < 1): Newton's method on [`student_t_cdf`], kept inside a
/// bracket that bisection narrows whenever a Newton step would leave it.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    assert!(p > 0.0 && p < 1.0, "quantile of p = {p}");
    // The distribution is symmetric: solve for the upper half only.
    match p.partial_cmp(&0.5) {
        Some(Ordering::Less) => return -student_t_quantile(1.0 - p, df),
        Some(Ordering::Equal) => return 0.0,
        _ => {}
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    while student_t_cdf(hi, df) < p {
        lo = hi;
        hi *= 2.0;
        if !hi.is_finite() {
            return f64::INFINITY;
        }
    }
    let mut t = 0.5 * (lo + hi);
    for _ in 0..200 {
        let f = student_t_cdf(t, df) - p;
        if f == 0.0 {
            return t;
        }
        if f < 0.0 {
            lo = t;
        } else {
            hi = t;
        }
        let newton = t - f / student_t_pdf(t, df);
        let next = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - t).abs() <= 1e-14 * t.abs() {
            return next;
        }
        t = next;
    }
    t
}

/// Student's t density with `df` degrees of freedom.
pub fn student_t_pdf(t: f64, df: f64) -> f64 {
    let ln = ln_gamma((df + 1.0) / 2.0)
        - ln_gamma(df / 2.0)
        - 0.5 * (df * std::f64::consts::PI).ln()
        - (df + 1.0) / 2.0 * (t * t / df).ln_1p();
    ln.exp()
}

/// ln Γ(x) for x > 0: Lanczos approximation (g = 7, 9 terms), with the
/// reflection formula below 0.5 where the series loses accuracy.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function I_x(a, b).
pub fn reg_inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    // The continued fraction converges fast only for x < (a+1)/(a+b+2); use the
    // symmetry I_x(a,b) = 1 - I_{1-x}(b,a) on the other side.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_continued_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_continued_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction for I_x(a,b), evaluated with the modified Lentz method.
fn beta_continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    // Lentz keeps the running terms off zero, where a division would blow up.
    let off_zero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / off_zero(1.0 - (a + b) * x / (a + 1.0));
    let mut h = d;
    // One step with the fraction's next coefficient: the factor h takes.
    let mut step = |coefficient: f64| {
        d = 1.0 / off_zero(1.0 + coefficient * d);
        c = off_zero(1.0 + coefficient / c);
        d * c
    };
    for m in 1..=1000 {
        let m = m as f64;
        // Even step: d_{2m} = m(b-m)x / ((a+2m-1)(a+2m)).
        h *= step(m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)));
        // Odd step: d_{2m+1} = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)).
        let delta = step(-(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)));
        h *= delta;
        if (delta - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, tol: f64) {
        assert!(
            (got - want).abs() <= tol * want.abs().max(1e-300),
            "got {got}, want {want} (relative tolerance {tol})"
        );
    }

    // Reference values below were computed independently with SciPy
    // (scipy.special.gammaln / betainc, scipy.stats.t.cdf and
    // scipy.stats.ttest_ind(..., equal_var=False)), not with this code.

    #[test]
    fn ln_gamma_known_values() {
        close(ln_gamma(0.5), 0.5723649429247, 1e-12); // ln √π
        close(ln_gamma(10.0), 12.801827480081469, 1e-12); // ln 9!
        close(ln_gamma(123.4), 469.3360974421906, 1e-12);
        close(ln_gamma(1.0).abs() + 1.0, 1.0, 1e-12);
    }

    #[test]
    fn incomplete_beta_is_bit_for_bit_what_it_was() {
        // Recorded before the continued fraction's two steps became one
        // closure: compare's p-values print the same to the last digit.
        let got: Vec<u64> = [
            (2.5, 0.5, 0.3),
            (0.5, 7.0, 0.9),
            (12.0, 3.5, 0.61),
            (40.0, 0.5, 0.97),
        ]
        .iter()
        .map(|&(a, b, x)| reg_inc_beta(a, b, x).to_bits())
        .collect();
        assert_eq!(
            got,
            [
                4_581_112_593_499_150_942,
                4_607_182_418_602_491_472,
                4_589_837_478_739_656_591,
                4_593_287_778_996_353_120
            ]
        );
    }

    #[test]
    fn incomplete_beta_known_values() {
        close(reg_inc_beta(2.5, 0.5, 0.3), 0.018927124071945658, 1e-10);
        close(reg_inc_beta(10.0, 20.0, 0.4), 0.7853183897628262, 1e-10);
        close(reg_inc_beta(0.5, 0.5, 0.9), 0.7951672353008665, 1e-10);
        // The ends of [0, 1] are returned as the constants 0.0 and 1.0, not
        // computed, so they compare exactly.
        assert_eq!(reg_inc_beta(3.0, 4.0, 0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(reg_inc_beta(3.0, 4.0, 1.0).to_bits(), 1.0f64.to_bits());
    }

    #[test]
    fn student_t_cdf_known_values() {
        // The textbook table value: t(0.975, 10) = 2.228139.
        close(student_t_cdf(2.228138851986274, 10.0), 0.975, 1e-10);
        // df = 1 is the Cauchy distribution: F(1) = 3/4 exactly.
        close(student_t_cdf(1.0, 1.0), 0.75, 1e-12);
        close(student_t_cdf(0.5, 3.0), 0.6742760175759245, 1e-10);
        close(student_t_cdf(-3.0, 4.5), 0.01719043394437981, 1e-9);
        close(student_t_cdf(12.0, 2.2), 0.9976082930622413, 1e-10);
        close(student_t_cdf(0.0, 7.0), 0.5, 1e-12);
    }

    #[test]
    fn welch_on_students_sleep_data() {
        // Student (1908) sleep data, as in R's `t.test(extra ~ group, data = sleep)`:
        // t = -1.8608, df = 17.776, p-value = 0.07939.
        let g1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
        let g2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];
        let w = welch_t_test(&g1, &g2).unwrap();
        close(w.t, -1.8608134674868526, 1e-10);
        close(w.df, 17.776473516178488, 1e-10);
        close(w.p, 0.0793941401873583, 1e-8);
    }

    #[test]
    fn welch_on_unequal_sizes_and_variances() {
        // The first worked example of Wikipedia's "Welch's t-test" article:
        // t = -2.46, df = 25.0, p = 0.021.
        let a1 = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ];
        let a2 = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ];
        let w = welch_t_test(&a1, &a2).unwrap();
        close(w.t, -2.455356398286006, 1e-10);
        close(w.df, 24.988529290231416, 1e-10);
        close(w.p, 0.021378001462866992, 1e-8);

        // Three against five repeats, as a benchmark produces.
        let w = welch_t_test(&[101.2, 99.8, 100.5], &[96.1, 97.9, 95.4, 96.8, 97.0]).unwrap();
        close(w.t, 6.601104145575115, 1e-10);
        close(w.df, 5.485681320355838, 1e-10);
        close(w.p, 0.0008346227942558919, 1e-7);
        // Swapping the sides flips t and keeps p.
        let back = welch_t_test(&[96.1, 97.9, 95.4, 96.8, 97.0], &[101.2, 99.8, 100.5]).unwrap();
        close(back.t, -w.t, 1e-12);
        close(back.p, w.p, 1e-12);
    }

    // Reference values for the quantile and the intervals: SciPy 1.17
    // (scipy.stats.t.ppf; scipy.stats.ttest_ind(candidate, baseline,
    // equal_var=False).confidence_interval(c) for the difference). Fieller's
    // interval has no SciPy function: its ends were found with
    // scipy.optimize.brentq on (x̄c − R·x̄b)² − t.ppf(½ + c/2, ν(R))²·(vc + R²·vb),
    // a separate implementation of the definition in the doc comment.

    #[test]
    fn t_quantile_known_values() {
        close(student_t_quantile(0.975, 1.0), 12.706204736174694, 1e-10);
        close(student_t_quantile(0.975, 2.0), 4.302652729749462, 1e-10);
        close(
            student_t_quantile(0.975, 5.485681320355838),
            2.5036132501973314,
            1e-10,
        );
        close(student_t_quantile(0.995, 3.0), 5.840909309733355, 1e-10);
        close(student_t_quantile(0.9, 30.0), 1.3104150253913955, 1e-10);
        close(student_t_quantile(0.975, 1000.0), 1.9623390808264083, 1e-10);
        close(student_t_quantile(0.025, 4.0), -2.7764451051977943, 1e-10);
        assert_eq!(student_t_quantile(0.5, 3.0).to_bits(), 0.0f64.to_bits());
        // The inverse of the CDF it is built on.
        for (p, df) in [(0.6, 1.5), (0.999, 2.0), (0.8, 17.7)] {
            close(student_t_cdf(student_t_quantile(p, df), df), p, 1e-12);
        }
    }

    #[test]
    fn welch_difference_interval_matches_scipy() {
        let base = [101.2, 99.8, 100.5];
        let cand = [96.1, 97.9, 95.4, 96.8, 97.0];
        let d = welch_difference_interval(&base, &cand, 0.95).unwrap();
        close(d.difference, -3.8599999999999994, 1e-12);
        close(d.low, -5.323989498217458, 1e-9);
        close(d.high, -2.396010501782541, 1e-9);
        close(d.df, 5.485681320355838, 1e-10);
        let d = welch_difference_interval(&base, &cand, 0.99).unwrap();
        close(d.low, -6.113926559605872, 1e-9);
        close(d.high, -1.6060734403941272, 1e-9);

        // Student's sleep data (R: 95 percent CI -3.3654832 0.2054832 for
        // group 1 − group 2; here candidate − baseline with group 1 as baseline).
        let g1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
        let g2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];
        let d = welch_difference_interval(&g1, &g2, 0.95).unwrap();
        close(d.low, -0.20548323071171137, 1e-8);
        close(d.high, 3.3654832307117104, 1e-9);

        // Two repeats each: ν = 1.47, so t is large and the interval wide.
        let d = welch_difference_interval(&[50.0, 53.0], &[57.0, 58.5], 0.95).unwrap();
        close(d.low, -4.1277842451065965, 1e-9);
        close(d.high, 16.627784245106596, 1e-9);

        assert!(welch_difference_interval(&[1.0], &[2.0, 3.0], 0.95).is_none());
        let exact = welch_difference_interval(&[5.0, 5.0], &[7.0, 7.0, 7.0], 0.95).unwrap();
        assert_eq!(
            (exact.low.to_bits(), exact.high.to_bits()),
            (2.0f64.to_bits(), 2.0f64.to_bits())
        );
    }

    #[test]
    fn fieller_change_interval_matches_reference() {
        let ci = |b: &[f64], c: &[f64], conf: f64| fieller_change_interval(b, c, conf).unwrap();
        let base = [101.2, 99.8, 100.5];
        let cand = [96.1, 97.9, 95.4, 96.8, 97.0];
        let c = ci(&base, &cand, 0.95);
        close(c.change, -0.03840796019900494, 1e-12);
        close(c.low, -0.05250494534588812, 1e-9);
        close(c.high, -0.02406066008406671, 1e-9);
        let c = ci(&base, &cand, 0.99);
        close(c.low, -0.05988198519632115, 1e-9);
        close(c.high, -0.016250061236326552, 1e-9);

        // Noisy and uneven (4 against 3 runs): asymmetric around +18.1 %.
        let (b, k) = ([100.0, 80.0, 120.0, 95.0], [110.0, 150.0, 90.0]);
        let c = ci(&b, &k, 0.95);
        close(c.change, 0.18143459915611815, 1e-12);
        close(c.low, -0.5444635749916138, 1e-8);
        close(c.high, 0.8091148521896612, 1e-8);
        assert!(c.high - c.change < c.change - c.low, "{c:?}");
        let c = ci(&b, &k, 0.99);
        close(c.low, -1.4204156598796898, 1e-8);
        close(c.high, 1.2379452876556862, 1e-8);

        let g1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
        let g2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];
        let c = ci(&g2, &g1, 0.95);
        close(c.low, -1.2358099195305174, 1e-8);
        close(c.high, 0.16337570621721675, 1e-8);
        let c = ci(&g2, &g1, 0.99);
        close(c.low, -1.5068912591836447, 1e-8);
        close(c.high, 1.883391296875283, 1e-8);

        let c = ci(&[50.0, 53.0], &[57.0, 58.5], 0.95);
        close(c.low, -0.060898762268264295, 1e-8);
        close(c.high, 0.513173970681015, 1e-8);

        // A noiseless baseline: only the candidate's noise, ν = 2.
        let c = ci(&[100.0, 100.0, 100.0], &[120.0, 126.0, 123.0], 0.95);
        close(c.low, 0.15547586864749063, 1e-9);
        close(c.high, 0.3045241313525102, 1e-9);
    }

    #[test]
    fn fieller_has_no_interval_without_noise_estimate_or_near_zero_baseline() {
        assert_eq!(
            fieller_change_interval(&[100.0], &[110.0, 111.0], 0.95),
            Err(NoChangeInterval::TooFewSamples)
        );
        // Group 1 of the sleep data has mean 0.75 with a standard error of
        // 0.57: 0 is a plausible baseline mean, so B/A is unbounded.
        let g1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
        let g2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];
        assert_eq!(
            fieller_change_interval(&g1, &g2, 0.95),
            Err(NoChangeInterval::BaselineNearZero)
        );
        // Two repeats with 3 % noise at 99 %: t(0.995, 1) = 63.7 makes even a
        // mean of 51.5 indistinguishable from 0.
        assert_eq!(
            fieller_change_interval(&[50.0, 53.0], &[57.0, 58.5], 0.99),
            Err(NoChangeInterval::BaselineNearZero)
        );
        assert_eq!(
            fieller_change_interval(&[0.0, 0.0], &[1.0, 2.0], 0.95),
            Err(NoChangeInterval::BaselineNearZero)
        );
    }

    #[test]
    fn intervals_agree_with_the_test() {
        // Both intervals exclude "no change" exactly when p < 1 − confidence.
        let cases: [(&[f64], &[f64]); 5] = [
            (&[101.2, 99.8, 100.5], &[96.1, 97.9, 95.4, 96.8, 97.0]),
            (&[100.0, 80.0, 120.0, 95.0], &[110.0, 150.0, 90.0]),
            (&[50.0, 53.0], &[57.0, 58.5]),
            (&[10.0, 10.4, 9.7, 10.1], &[10.6, 10.9, 10.3]),
            (&[10.0, 10.4, 9.7, 10.1], &[10.2, 10.5, 10.0]),
        ];
        for (b, c) in cases {
            let p = welch_t_test(b, c).unwrap().p;
            for conf in [0.9, 0.95, 0.99] {
                let significant = p < 1.0 - conf;
                let d = welch_difference_interval(b, c, conf).unwrap();
                assert_eq!(
                    d.low > 0.0 || d.high < 0.0,
                    significant,
                    "{b:?} {c:?} {conf}"
                );
                if let Ok(r) = fieller_change_interval(b, c, conf) {
                    assert_eq!(
                        r.low > 0.0 || r.high < 0.0,
                        significant,
                        "{b:?} {c:?} {conf}"
                    );
                    assert!(r.low <= r.change && r.change <= r.high);
                }
            }
        }
    }

    #[test]
    fn welch_needs_two_samples_each() {
        assert!(welch_t_test(&[1.0], &[2.0]).is_none());
        assert!(welch_t_test(&[1.0, 1.1], &[2.0]).is_none());
        assert!(welch_t_test(&[], &[2.0, 3.0]).is_none());
    }

    #[test]
    // Zero variance takes the early return of constant t and p (0, 1 or 0),
    // so exact equality is the contract being tested.
    #[allow(clippy::float_cmp)]
    fn welch_without_noise() {
        let same = welch_t_test(&[5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap();
        assert_eq!((same.t, same.p), (0.0, 1.0));
        let differ = welch_t_test(&[5.0, 5.0], &[4.0, 4.0]).unwrap();
        assert_eq!(differ.p, 0.0);
        assert!(differ.t > 0.0);
    }

    #[test]
    fn summary_uses_sample_sd() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        close(s.mean, 5.0, 1e-12);
        close(s.sd, (32.0f64 / 7.0).sqrt(), 1e-12);
        // min and max are copies of input values: exact.
        assert_eq!(
            (s.min.to_bits(), s.max.to_bits()),
            (2.0f64.to_bits(), 9.0f64.to_bits())
        );
        // One sample has no spread: the variance is the constant 0.0 and its
        // square root is exactly 0.0.
        assert_eq!(Summary::of(&[3.0]).unwrap().sd.to_bits(), 0.0f64.to_bits());
        assert!(Summary::of(&[]).is_none());
    }
}

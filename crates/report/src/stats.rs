//! Statistics for comparing repeated runs: sample summaries, Welch's t-test and
//! the Student t distribution it needs.
//!
//! Welch's test (not Student's pooled test) because two storage configurations
//! rarely have the same run-to-run noise: a pool with a SLOG is often both faster
//! and steadier. The t CDF is computed from the regularized incomplete beta
//! function, evaluated by its continued fraction (modified Lentz method), with
//! ln Γ from the Lanczos approximation; both are accurate to ~1e-10 over the
//! degrees of freedom a benchmark produces (1 to a few hundred).

/// Mean and spread of one metric over repeated runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 for one sample.
    pub sd: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
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
#[derive(Debug, Clone, Copy, PartialEq)]
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
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=1000 {
        let m = m as f64;
        // Even step: d_{2m} = m(b-m)x / ((a+2m-1)(a+2m)).
        let num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 + num * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + num / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        // Odd step: d_{2m+1} = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)).
        let num = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 + num * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + num / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
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

//! The numerical helpers of the fit: a dot product, the inverse of a small
//! matrix (the Gauss–Newton covariance) and a minimiser within a box
//! (Nelder–Mead). They know nothing of systems or runs.

pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Inverse of a small symmetric matrix by Gauss–Jordan elimination with
/// partial pivoting; `None` when it is singular.
pub(super) fn invert(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut m: Vec<Vec<f64>> = a
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut r = row.clone();
            r.extend((0..n).map(|j| if i == j { 1.0 } else { 0.0 }));
            r
        })
        .collect();
    for c in 0..n {
        let pivot = (c..n).max_by(|&x, &y| m[x][c].abs().total_cmp(&m[y][c].abs()))?;
        if m[pivot][c].abs() < 1e-12 {
            return None;
        }
        m.swap(c, pivot);
        let d = m[c][c];
        m[c].iter_mut().for_each(|v| *v /= d);
        for r in 0..n {
            if r != c {
                let f = m[r][c];
                if f != 0.0 {
                    let pivot_row = m[c].clone();
                    m[r].iter_mut()
                        .zip(&pivot_row)
                        .for_each(|(v, p)| *v -= f * p);
                }
            }
        }
    }
    Some(m.into_iter().map(|r| r[n..].to_vec()).collect())
}

/// Minimise `f` from `x0` within the box `lo..hi` (each point is clamped
/// into it) with the Nelder–Mead simplex (reflection 1, expansion 2,
/// contraction ½, shrink ½), starting with steps of ln 2, stopping when the
/// simplex's values agree within 1e-6 or after `max_evals` evaluations.
pub(super) fn nelder_mead(
    f: &mut impl FnMut(&[f64]) -> f64,
    x0: &[f64],
    lo: &[f64],
    hi: &[f64],
    max_evals: usize,
) -> (Vec<f64>, f64) {
    let n = x0.len();
    let clamp = |x: &mut Vec<f64>| {
        for i in 0..n {
            x[i] = x[i].clamp(lo[i], hi[i]);
        }
    };
    let mut simplex: Vec<(Vec<f64>, f64)> = Vec::with_capacity(n + 1);
    let mut start = x0.to_vec();
    clamp(&mut start);
    let f0 = f(&start);
    simplex.push((start.clone(), f0));
    for i in 0..n {
        let mut x = start.clone();
        // Step up, or down when the upper bound is that close.
        x[i] = if x[i] + std::f64::consts::LN_2 <= hi[i] {
            x[i] + std::f64::consts::LN_2
        } else {
            x[i] - std::f64::consts::LN_2
        };
        clamp(&mut x);
        let fx = f(&x);
        simplex.push((x, fx));
    }
    let mut evals = n + 1;
    while evals < max_evals {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let best = simplex[0].1;
        let worst = simplex[n].1;
        if (worst - best).abs() <= 1e-6 * (1.0 + best.abs()) {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|i| simplex[..n].iter().map(|(x, _)| x[i]).sum::<f64>() / n as f64)
            .collect();
        let toward = |t: f64, from: &[f64]| -> Vec<f64> {
            let mut x: Vec<f64> = (0..n)
                .map(|i| centroid[i] + t * (from[i] - centroid[i]))
                .collect();
            clamp(&mut x);
            x
        };
        let xr = toward(-1.0, &simplex[n].0);
        let fr = f(&xr);
        evals += 1;
        if fr < best {
            let xe = toward(-2.0, &simplex[n].0);
            let fe = f(&xe);
            evals += 1;
            simplex[n] = if fe < fr { (xe, fe) } else { (xr, fr) };
        } else if fr < simplex[n - 1].1 {
            simplex[n] = (xr, fr);
        } else {
            let xc = if fr < worst {
                toward(-0.5, &simplex[n].0)
            } else {
                toward(0.5, &simplex[n].0)
            };
            let fc = f(&xc);
            evals += 1;
            if fc < worst.min(fr) {
                simplex[n] = (xc, fc);
            } else {
                let x_best = simplex[0].0.clone();
                for point in simplex.iter_mut().skip(1) {
                    let mut x: Vec<f64> = (0..n)
                        .map(|i| x_best[i] + 0.5 * (point.0[i] - x_best[i]))
                        .collect();
                    clamp(&mut x);
                    point.1 = f(&x);
                    point.0 = x;
                    evals += 1;
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    simplex.swap_remove(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nelder_mead_finds_a_bounded_quadratic_minimum() {
        let mut f = |x: &[f64]| (x[0] - 1.0).powi(2) + 10.0 * (x[1] + 2.0).powi(2);
        let (x, fx) = nelder_mead(&mut f, &[0.0, 0.0], &[-5.0, -5.0], &[5.0, 5.0], 400);
        assert!(
            (x[0] - 1.0).abs() < 1e-2 && (x[1] + 2.0).abs() < 1e-2,
            "{x:?}"
        );
        assert!(fx < 1e-3);
        // The minimum outside the box: the fit stops at the bound.
        let mut g = |x: &[f64]| (x[0] - 9.0).powi(2);
        let (x, _) = nelder_mead(&mut g, &[0.0], &[-5.0], &[5.0], 200);
        assert!((x[0] - 5.0).abs() < 1e-2, "{x:?}");
    }

    #[test]
    fn invert_inverts_and_refuses_singular() {
        let a = vec![vec![4.0, 1.0], vec![1.0, 3.0]];
        let inv = invert(&a).unwrap();
        let id: Vec<Vec<f64>> = (0..2)
            .map(|i| {
                (0..2)
                    .map(|j| dot(&a[i], &[inv[0][j], inv[1][j]]))
                    .collect()
            })
            .collect();
        assert!((id[0][0] - 1.0).abs() < 1e-12 && id[0][1].abs() < 1e-12);
        assert!(invert(&[vec![1.0, 2.0], vec![2.0, 4.0]]).is_none());
    }
}

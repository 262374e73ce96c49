//! Paired Wilcoxon signed-rank test, as upstream computes it.
//!
//! Zero differences (|d| <= 1e-12) are dropped; |d| values are ranked with average ranks, and two
//! differences are tied only when their absolute values are equal as 64-bit floats (upstream does
//! not round, and rounding would change one published p-value). The normal approximation uses
//! the tie-corrected variance and no continuity correction; for small n the exact null
//! distribution of W+ (over the actual, possibly tied, ranks) is also reported.

use statrs::distribution::{ContinuousCDF, Normal};

/// Zero threshold used by upstream.
pub const ZERO_EPS: f64 = 1e-12;
/// Largest n for which the exact distribution is computed (as scipy's default).
pub const EXACT_MAX_N: usize = 50;

/// Result of one signed-rank test.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Wilcoxon {
    /// Number of pairs given.
    pub n_pairs: usize,
    /// Non-zero differences used.
    pub n: usize,
    /// Sum of ranks of positive differences.
    pub w_plus: f64,
    /// Sum of ranks of negative differences.
    pub w_minus: f64,
    /// Standardised statistic (W+ - mean) / sd; 0 when the variance is 0.
    pub z: f64,
    /// Two-sided p from the normal approximation (1 when n = 0).
    pub p_normal: f64,
    /// Two-sided exact p (2 x smaller tail, capped at 1), when n <= EXACT_MAX_N.
    pub p_exact: Option<f64>,
    /// Number of tie groups (size > 1) among |d|.
    pub tie_groups: usize,
}

/// Two-sided normal tail probability for |z|.
pub fn two_sided_normal(z: f64) -> f64 {
    let n = Normal::new(0.0, 1.0).expect("standard normal");
    (2.0 * n.sf(z.abs())).min(1.0)
}

/// Average ranks (1-based) of `abs_sorted` (already sorted ascending) and the tie term
/// sum(t^3 - t) and tie group count.
fn average_ranks(abs_sorted: &[f64]) -> (Vec<f64>, f64, usize) {
    let n = abs_sorted.len();
    let mut ranks = vec![0.0; n];
    let mut tie_term = 0.0;
    let mut groups = 0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && abs_sorted[j + 1] == abs_sorted[i] {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for rank in ranks.iter_mut().take(j + 1).skip(i) {
            *rank = r;
        }
        let t = (j - i + 1) as f64;
        if j > i {
            groups += 1;
            tie_term += t * t * t - t;
        }
        i = j + 1;
    }
    (ranks, tie_term, groups)
}

/// Signed-rank test on paired differences `d` (a - b).
pub fn signed_rank(d: &[f64]) -> Wilcoxon {
    let mut nz: Vec<f64> = d.iter().copied().filter(|x| x.abs() > ZERO_EPS).collect();
    // Stable sort by |d| so the ranking does not depend on input order beyond ties.
    nz.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    let abs: Vec<f64> = nz.iter().map(|x| x.abs()).collect();
    let (ranks, tie_term, tie_groups) = average_ranks(&abs);
    let n = nz.len();
    let w_plus: f64 = ranks
        .iter()
        .zip(&nz)
        .filter(|(_, x)| **x > 0.0)
        .map(|(r, _)| r)
        .sum();
    let total = (n * (n + 1)) as f64 / 2.0;
    let w_minus = total - w_plus;
    let nf = n as f64;
    let mu = nf * (nf + 1.0) / 4.0;
    let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_term / 48.0;
    let z = if var > 0.0 {
        (w_plus - mu) / var.sqrt()
    } else {
        0.0
    };
    let p_normal = if n == 0 || var <= 0.0 {
        1.0
    } else {
        two_sided_normal(z)
    };
    let p_exact = (n <= EXACT_MAX_N).then(|| exact_p(&ranks, w_plus));
    Wilcoxon {
        n_pairs: d.len(),
        n,
        w_plus,
        w_minus,
        z,
        p_normal,
        p_exact,
        tie_groups,
    }
}

/// Exact two-sided p of W+ under the null (each sign +/- with probability 1/2), computed by
/// dynamic programming over doubled ranks (average ranks are multiples of 1/2).
pub fn exact_p(ranks: &[f64], w_plus: f64) -> f64 {
    let n = ranks.len();
    if n == 0 {
        return 1.0;
    }
    let doubled: Vec<usize> = ranks.iter().map(|r| (r * 2.0).round() as usize).collect();
    let max: usize = doubled.iter().sum();
    // counts[s] = number of sign patterns whose doubled W+ equals s (as f64: 2^50 fits exactly).
    let mut counts = vec![0.0f64; max + 1];
    counts[0] = 1.0;
    let mut reach = 0;
    for &r in &doubled {
        for s in (0..=reach).rev() {
            if counts[s] != 0.0 {
                counts[s + r] += counts[s];
            }
        }
        reach += r;
    }
    let w2 = (w_plus * 2.0).round() as usize;
    let total = 2f64.powi(n as i32);
    let lower: f64 = counts[..=w2.min(max)].iter().sum::<f64>() / total;
    let upper: f64 = counts[w2.min(max)..].iter().sum::<f64>() / total;
    (2.0 * lower.min(upper)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_are_exact_float_equality() {
        // 0.1+0.2 and 0.3 differ as floats, so they are not tied.
        let r = signed_rank(&[0.1 + 0.2, 0.3, -0.5]);
        assert_eq!(r.tie_groups, 0);
        let r = signed_rank(&[0.3, 0.3, -0.5]);
        assert_eq!(r.tie_groups, 1);
        assert_eq!(r.w_plus, 3.0);
    }

    #[test]
    fn zeros_dropped_and_all_zero_gives_p_one() {
        let r = signed_rank(&[0.0, 0.0]);
        assert_eq!((r.n, r.p_normal), (0, 1.0));
        let r = signed_rank(&[0.0, 1.0, 2.0]);
        assert_eq!(r.n, 2);
        assert_eq!(r.w_plus, 3.0);
    }

    #[test]
    fn exact_all_positive_n5() {
        // All five positive: P(W+ = 15) = 1/32, two-sided 1/16.
        let r = signed_rank(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert!((r.p_exact.unwrap() - 0.0625).abs() < 1e-15);
    }
}

//! Sign-flip permutation tests of a mean paired difference.
//!
//! Under the null each difference's sign is exchangeable. Every iteration draws one `random()`
//! per difference (in data order) and flips the sign when it is < 0.5; the two-sided p-value is
//! (count + 1) / (B + 1) where count is the number of iterations whose |statistic| reaches the
//! observed |statistic| (with a 1e-12 tolerance so float noise does not decide). The stratified
//! variant uses the equal-weight mean of stratum means as the statistic.

use crate::rng::RandomSource;
use serde::Serialize;

/// Tolerance when comparing a permuted statistic with the observed one.
pub const TOL: f64 = 1e-12;

/// Result of a permutation test.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Permutation {
    /// Observed statistic.
    pub observed: f64,
    /// Two-sided p = (count + 1) / (B + 1).
    pub p: f64,
    /// Iterations drawn.
    pub iterations: usize,
}

/// Plain sign-flip test of the mean of `d`.
pub fn sign_flip(d: &[f64], b: usize, rng: &mut dyn RandomSource) -> Permutation {
    stratified_sign_flip(&[d.to_vec()], b, rng)
}

/// Stratified sign-flip test: `strata` are groups of differences (e.g. tiers); the statistic is
/// the mean of the stratum means (equal stratum weight). One stratum = the plain test.
pub fn stratified_sign_flip(
    strata: &[Vec<f64>],
    b: usize,
    rng: &mut dyn RandomSource,
) -> Permutation {
    let strata: Vec<&Vec<f64>> = strata.iter().filter(|s| !s.is_empty()).collect();
    let stat = |vals: &[Vec<f64>]| -> f64 {
        vals.iter().map(|s| super::mean(s)).sum::<f64>() / vals.len() as f64
    };
    let owned: Vec<Vec<f64>> = strata.iter().map(|s| (*s).clone()).collect();
    if owned.is_empty() {
        return Permutation {
            observed: f64::NAN,
            p: 1.0,
            iterations: b,
        };
    }
    let observed = stat(&owned);
    let mut count = 0usize;
    let mut work = owned.clone();
    for _ in 0..b {
        for (w, s) in work.iter_mut().zip(&owned) {
            for (x, v) in w.iter_mut().zip(s) {
                *x = if rng.random() < 0.5 { -v } else { *v };
            }
        }
        if stat(&work).abs() >= observed.abs() - TOL {
            count += 1;
        }
    }
    Permutation {
        observed,
        p: (count + 1) as f64 / (b + 1) as f64,
        iterations: b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ChaChaSource;

    #[test]
    fn all_zero_differences_give_p_one() {
        let mut r = ChaChaSource::new(3);
        assert_eq!(sign_flip(&[0.0; 5], 99, &mut r).p, 1.0);
    }

    #[test]
    fn strong_effect_gives_small_p() {
        let mut r = ChaChaSource::new(3);
        let p = sign_flip(&[1.0; 12], 999, &mut r).p;
        // Only the all-plus and all-minus patterns reach |mean| = 1: p ~ 2/4096.
        assert!(p < 0.01, "{p}");
    }
}

//! Percentile bootstrap CI of a mean (of paired differences).
//!
//! Each resample draws n indices with `below(n)` (CPython's `choice`), and the resample mean is
//! `sum / n` accumulated in draw order. The B means are sorted and the interval is read at sorted
//! indices floor(alpha/2 * B) and floor((1 - alpha/2) * B), upstream's convention.

use crate::rng::RandomSource;
use serde::Serialize;

/// A point estimate with its percentile interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// Mean of the data.
    pub estimate: f64,
    /// Lower percentile bound.
    pub lo: f64,
    /// Upper percentile bound.
    pub hi: f64,
    /// Resamples drawn.
    pub resamples: usize,
}

/// Indices of the percentile bounds in a sorted vector of B values (95 %: 250 and 9750 for 10k).
pub fn percentile_indices(b: usize, level: f64) -> (usize, usize) {
    let a = (1.0 - level) / 2.0;
    let lo = ((a * b as f64) as usize).min(b - 1);
    let hi = (((1.0 - a) * b as f64) as usize).min(b - 1);
    (lo, hi)
}

/// Bootstrap distribution of the mean: `b` resample means (unsorted, in draw order).
pub fn resample_means(data: &[f64], b: usize, rng: &mut dyn RandomSource) -> Vec<f64> {
    let n = data.len();
    let mut out = Vec::with_capacity(b);
    for _ in 0..b {
        let mut s = 0.0;
        for _ in 0..n {
            s += data[rng.below(n)];
        }
        out.push(s / n as f64);
    }
    out
}

/// Percentile CI of the mean of `data` at `level` (e.g. 0.95) from `b` resamples.
/// Returns `None` for empty data or b = 0.
pub fn mean_ci(data: &[f64], b: usize, level: f64, rng: &mut dyn RandomSource) -> Option<Interval> {
    if data.is_empty() || b == 0 {
        return None;
    }
    let mut means = resample_means(data, b, rng);
    means.sort_by(f64::total_cmp);
    let (li, hi) = percentile_indices(b, level);
    Some(Interval {
        estimate: super::mean(data),
        lo: means[li],
        hi: means[hi],
        resamples: b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::CpythonRandom;

    #[test]
    fn indices_follow_upstream() {
        assert_eq!(percentile_indices(10_000, 0.95), (250, 9750));
    }

    #[test]
    fn constant_data_gives_degenerate_interval() {
        let mut r = CpythonRandom::new(1);
        let i = mean_ci(&[0.5; 6], 100, 0.95, &mut r).unwrap();
        assert_eq!((i.lo, i.hi, i.estimate), (0.5, 0.5, 0.5));
    }
}

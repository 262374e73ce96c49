//! Tier-cluster bootstrap: tiers are the resampling unit. Each iteration draws as many tiers as
//! there are, with replacement (`below(k)`), pools the drawn tiers' task differences, and takes
//! the pooled mean. The percentile CI uses the same indices as the plain bootstrap. With only 4
//! clusters the interval is coarse; reports say so.

use super::bootstrap::{percentile_indices, Interval};
use crate::rng::RandomSource;

/// Cluster-bootstrap CI of the pooled mean difference.
pub fn cluster_ci(
    clusters: &[Vec<f64>],
    b: usize,
    level: f64,
    rng: &mut dyn RandomSource,
) -> Option<Interval> {
    let clusters: Vec<&Vec<f64>> = clusters.iter().filter(|c| !c.is_empty()).collect();
    if clusters.is_empty() || b == 0 {
        return None;
    }
    let k = clusters.len();
    let mut means = Vec::with_capacity(b);
    for _ in 0..b {
        let mut s = 0.0;
        let mut n = 0usize;
        for _ in 0..k {
            let c = clusters[rng.below(k)];
            s += c.iter().sum::<f64>();
            n += c.len();
        }
        means.push(s / n as f64);
    }
    means.sort_by(f64::total_cmp);
    let all: Vec<f64> = clusters.iter().flat_map(|c| c.iter().copied()).collect();
    let (li, hi) = percentile_indices(b, level);
    Some(Interval {
        estimate: super::mean(&all),
        lo: means[li],
        hi: means[hi],
        resamples: b,
    })
}

//! The statistics, one module per method. All functions are pure: data and an explicit random
//! source in, numbers out, so each rule is tested against scipy/statsmodels goldens
//! (`analysis/tests/golden/gen_golden.py`). The methods are described in docs/statistics.md.

pub(crate) mod bimodal;
pub(crate) mod bootstrap;
pub(crate) mod cluster;
pub(crate) mod holm;
pub(crate) mod mcnemar;
pub(crate) mod noise;
pub(crate) mod paired;
pub(crate) mod passk;
pub(crate) mod permutation;
pub(crate) mod power;
pub(crate) mod wilcoxon;

pub use bimodal::{split as bimodal_split, Split, MIN_GAP as BIMODAL_MIN_GAP};
pub use bootstrap::{mean_ci, percentile_indices, resample_means, Interval};
pub use cluster::cluster_ci;
pub use holm::holm;
pub use mcnemar::{binom_half_cdf, from_counts as mcnemar_from_counts, mcnemar, McNemar};
pub use noise::{floor as noise_floor, Floor};
pub use paired::{
    components, per_repeat_deltas, sign_consistency, sign_flip_exact, Components, EXACT_FLIP_MAX_N,
};
pub use passk::{choose, pass_hat_k};
pub use permutation::{sign_flip, stratified_sign_flip, Permutation};
pub use power::{
    achieved, nct_cdf, repeats_needed, solve_nobs, t_test_power, tasks_needed, Needed,
    ALPHA as POWER_ALPHA, TARGET as POWER_TARGET,
};
pub use wilcoxon::{exact_p, signed_rank, two_sided_normal, Wilcoxon, ZERO_EPS};

/// Arithmetic mean accumulated left to right (the order Python's `sum(x)/len(x)` uses, so
/// reproduced numbers match upstream bit for bit). `NaN` for an empty slice.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Median (average of the two middle values for even n). `NaN` for an empty slice.
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Sample standard deviation (n - 1); 0 for fewer than two values.
pub fn sample_sd(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    (ss / (xs.len() - 1) as f64).sqrt()
}

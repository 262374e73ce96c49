//! The statistics, one module per method. All functions are pure: data and an explicit random
//! source in, numbers out, so each rule is tested against scipy/statsmodels goldens.

pub mod bootstrap;
pub mod cluster;
pub mod holm;
pub mod mcnemar;
pub mod passk;
pub mod permutation;
pub mod wilcoxon;

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

//! pass^k (τ²-bench): for a task with n trials of which c passed, the chance that k trials drawn
//! without replacement all pass is C(c, k) / C(n, k); pass^k is its mean over tasks.

/// C(n, k) as f64 (exact for the small n of trial counts).
pub fn choose(n: u64, k: u64) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    let mut r = 1.0;
    for i in 0..k {
        r = r * (n - i) as f64 / (i + 1) as f64;
    }
    r
}

/// pass^k over tasks given (trials, passes) per task; `None` if any task has fewer than k trials
/// (the quantity is undefined there) or there are no tasks.
pub fn pass_hat_k(tasks: &[(u64, u64)], k: u64) -> Option<f64> {
    if tasks.is_empty() || k == 0 || tasks.iter().any(|(n, _)| *n < k) {
        return None;
    }
    let s: f64 = tasks
        .iter()
        .map(|&(n, c)| choose(c, k) / choose(n, k))
        .sum();
    Some(s / tasks.len() as f64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn pass_k_values() {
        // 4 trials, 2 passes: pass^1 = 0.5, pass^2 = 1/6.
        assert_eq!(super::pass_hat_k(&[(4, 2)], 1), Some(0.5));
        assert!((super::pass_hat_k(&[(4, 2)], 2).unwrap() - 1.0 / 6.0).abs() < 1e-15);
        assert_eq!(super::pass_hat_k(&[(1, 1)], 2), None);
    }
}

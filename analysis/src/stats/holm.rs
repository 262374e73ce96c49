//! Holm step-down adjustment: sort p ascending, multiply the i-th (0-based) by (m - i), take the
//! running maximum, cap at 1, and return in the original order.

/// Holm-adjusted p-values in input order.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    // Stable: equal p-values keep their input order, as Python's sorted() does.
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        let adj = ((m - rank) as f64 * p[i]).min(1.0);
        running = running.max(adj);
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn running_max_and_cap() {
        let a = super::holm(&[0.01, 0.04, 0.03, 0.9]);
        assert_eq!(a, vec![0.04, 0.09, 0.09, 0.9]);
        assert_eq!(super::holm(&[0.6, 0.7]), vec![1.0, 1.0]);
    }
}

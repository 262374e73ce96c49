//! Exact McNemar test on paired pass/fail outcomes, plus the sign-test z that the binary
//! Wilcoxon reduces to (|b - c| / sqrt(b + c)), as upstream reports both.

use serde::Serialize;

/// Discordant and concordant counts and the test results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct McNemar {
    /// Tasks where only arm A passed (A's wins).
    pub b: u64,
    /// Tasks where only arm B passed (A's losses).
    pub c: u64,
    /// Concordant tasks (ties).
    pub ties: u64,
    /// Two-sided exact p = min(1, 2 * P(X <= min(b, c))), X ~ Bin(b + c, 1/2).
    pub p_exact: f64,
    /// Sign-test z = |b - c| / sqrt(b + c) (0 when b + c = 0).
    pub z: f64,
}

/// Binomial lower tail P(X <= k) for X ~ Bin(n, 1/2), summed in log space so large n is safe.
pub fn binom_half_cdf(k: u64, n: u64) -> f64 {
    let ln2n = n as f64 * std::f64::consts::LN_2;
    let mut total = 0.0;
    let mut ln_c = 0.0; // ln C(n, 0)
    for i in 0..=k.min(n) {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        total += (ln_c - ln2n).exp();
    }
    total.min(1.0)
}

/// McNemar from paired outcomes (a_pass, b_pass).
pub fn mcnemar(pairs: &[(bool, bool)]) -> McNemar {
    let b = pairs.iter().filter(|(a, o)| *a && !*o).count() as u64;
    let c = pairs.iter().filter(|(a, o)| !*a && *o).count() as u64;
    let ties = pairs.len() as u64 - b - c;
    from_counts(b, c, ties)
}

/// McNemar from counts.
pub fn from_counts(b: u64, c: u64, ties: u64) -> McNemar {
    let n = b + c;
    let p_exact = if n == 0 {
        1.0
    } else {
        (2.0 * binom_half_cdf(b.min(c), n)).min(1.0)
    };
    let z = if n == 0 {
        0.0
    } else {
        (b as f64 - c as f64).abs() / (n as f64).sqrt()
    };
    McNemar {
        b,
        c,
        ties,
        p_exact,
        z,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn small_exact() {
        // b=5, c=0: 2 * 1/32.
        let r = super::from_counts(5, 0, 3);
        assert!((r.p_exact - 0.0625).abs() < 1e-15);
        assert_eq!(super::from_counts(0, 0, 4).p_exact, 1.0);
    }
}

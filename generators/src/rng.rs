//! The one random source of all generators: ChaCha8 seeded from a `u64`, read only through
//! integer operations so that draws are identical on every platform and every `rand` release
//! (we do not depend on `rand`'s distribution algorithms, only on the ChaCha8 stream).

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Integer-only view of a seeded ChaCha8 stream.
pub struct SeededRng(ChaCha8Rng);

impl SeededRng {
    /// `ChaCha8Rng::seed_from_u64(seed)`.
    pub fn new(seed: u64) -> Self {
        Self(ChaCha8Rng::seed_from_u64(seed))
    }

    /// Uniform integer in `[0, n)`, unbiased by rejection (`n > 0`; `n == 0` yields 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        // Largest multiple of n that fits; values at or above it would bias `% n`.
        let limit = u64::MAX - (u64::MAX % n);
        loop {
            let v = self.0.next_u64();
            if v < limit {
                return v % n;
            }
        }
    }

    /// Uniform integer in `[lo, hi]` (inclusive; `hi >= lo`).
    pub fn int_in(&mut self, lo: i64, hi: i64) -> i64 {
        debug_assert!(hi >= lo);
        lo + self.below((hi - lo) as u64 + 1) as i64
    }

    /// Approximately normal draw with mean 0 and standard deviation `sd`, rounded to an integer
    /// (so `sd` is given in the caller's fixed-point unit, e.g. tenths of a MPa).
    ///
    /// Irwin–Hall: the sum of 12 uniforms minus 6 has mean 0 and variance exactly 1 and is close
    /// to a standard normal within ±3σ (bounded at ±6σ). Computed on 32-bit uniforms in `i128`,
    /// it is exact integer arithmetic, unlike Box–Muller whose `ln`/`cos` last bits vary with the
    /// platform's libm.
    pub fn normal_int(&mut self, sd: i64) -> i64 {
        let mut sum: i128 = 0;
        for _ in 0..12 {
            sum += (self.0.next_u32() as i128) << 1 | 1; // midpoint of the 2^-33 cell: symmetric
        }
        // Each term is uniform on (0, 2^33) in steps of 2; 12 terms have mean 12 * 2^32.
        let centered = sum - 12 * (1i128 << 32); // = z * 2^33 where z ~ IH(12) - 6
        let scaled = centered * sd as i128; // z * sd * 2^33
        let denom = 1i128 << 33;
        // Round half away from zero so the distribution stays symmetric.
        let q = (scaled.abs() + denom / 2) / denom;
        (if scaled < 0 { -q } else { q }) as i64
    }

    /// Picks an index with probability proportional to `weights[i]` (integer weights, sum > 0).
    pub fn weighted(&mut self, weights: &[u64], total: u64) -> usize {
        let mut r = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if r < w {
                return i;
            }
            r -= w;
        }
        weights.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = SeededRng::new(1);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            let v = r.below(7) as usize;
            seen[v] += 1;
        }
        assert!(seen.iter().all(|&c| c > 800 && c < 1200), "{seen:?}");
    }

    #[test]
    fn normal_int_has_the_requested_spread() {
        let mut r = SeededRng::new(2);
        let n = 20_000i64;
        let draws: Vec<i64> = (0..n).map(|_| r.normal_int(180)).collect();
        let mean = draws.iter().sum::<i64>() as f64 / n as f64;
        let var = draws
            .iter()
            .map(|&d| (d as f64 - mean).powi(2))
            .sum::<f64>()
            / (n - 1) as f64;
        assert!(mean.abs() < 5.0, "mean {mean}");
        assert!((var.sqrt() - 180.0).abs() < 6.0, "sd {}", var.sqrt());
        assert!(draws.iter().all(|d| d.abs() <= 6 * 180));
    }

    #[test]
    fn weighted_follows_weights() {
        let mut r = SeededRng::new(3);
        let w = [1u64, 3];
        let ones = (0..8000).filter(|_| r.weighted(&w, 4) == 1).count();
        assert!((5700..6300).contains(&ones), "{ones}");
    }
}

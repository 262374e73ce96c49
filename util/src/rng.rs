//! A tiny seeded generator for deterministic choices (synthetic schemas, fuzz inputs): the same
//! seed gives the same sequence on every machine, without a dependency.

/// splitmix64 (Steele, Lea and Flood), seeded by its state.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 well-mixed bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_sequence_and_bounds() {
        // splitmix64's published first output for seed 0
        assert_eq!(SplitMix64(0).next_u64(), 0xE220_A839_7B1D_CDAF);
        let mut r = SplitMix64(7);
        assert!((0..1000).all(|_| r.below(5) < 5));
        assert_eq!(r.below(0), 0);
    }
}

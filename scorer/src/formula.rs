//! The score formula: milestones 0.4, finals 0.3, judge dropped and renormalised (/0.7),
//! rounded to 3 decimals like Python's `round(x, 3)`.

/// Rounds to 3 dp with Python's semantics (exact binary value, ties to even), via the
/// correctly-rounded decimal formatter.
pub fn round3(x: f64) -> f64 {
    format!("{x:.3}").parse().unwrap_or(x)
}

/// Mean of check scores; an empty group counts 1.0 (upstream; validation forbids it anyway).
pub fn mean(scores: &[f64]) -> f64 {
    if scores.is_empty() {
        1.0
    } else {
        scores.iter().sum::<f64>() / scores.len() as f64
    }
}

/// `round((0.4*M + 0.3*F) / 0.7, 3)`.
pub fn total(milestone: f64, fin: f64) -> f64 {
    round3((0.4 * milestone + 0.3 * fin) / 0.7)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_lattice() {
        // 2 milestones + 2 finals lattice from the reference.
        assert_eq!(total(0.0, 0.5), 0.214);
        assert_eq!(total(0.5, 0.0), 0.286);
        assert_eq!(total(0.0, 1.0), 0.429);
        assert_eq!(total(0.5, 0.5), 0.5);
        assert_eq!(total(1.0, 0.0), 0.571);
        assert_eq!(total(1.0, 0.5), 0.786);
        assert_eq!(total(1.0, 1.0), 1.0);
        // WF-10 with a half min_words: (0.4 + 0.3*0.75)/0.7.
        assert_eq!(total(1.0, 0.75), 0.893);
        // LH-03 floor: 10/14 finals, no milestones.
        assert_eq!(total(0.0, 10.0 / 14.0), 0.306);
    }

    #[test]
    fn rounding_matches_python() {
        assert_eq!(round3(0.0625), 0.062); // exact tie -> even
        assert_eq!(round3(0.0635), 0.064); // binary value slightly above the tie
        assert_eq!(round3(2.0 / 3.0), 0.667);
        assert_eq!(mean(&[]), 1.0);
        assert_eq!(mean(&[1.0, 0.5]), 0.75);
    }
}

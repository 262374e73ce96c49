//! The noise floor: how far the same arm's mean moves between two repeats of itself.
//!
//! A delta between two arms that is not larger than the shift between two repeats of one arm
//! cannot be told from rerun noise. The floor is the largest |mean(repeat i) − mean(repeat j)|
//! over all pairs of an arm's repeats on the same tasks (the "same-night rerun" shift).

use serde::Serialize;

/// A measured noise floor.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Floor {
    /// Largest shift between two repeats' means.
    pub floor: f64,
    /// The two repeats (indices) that shifted most.
    pub pair: (usize, usize),
    /// Pairs compared.
    pub pairs: usize,
}

/// Floor from the per-repeat means of one arm; `None` with fewer than two repeats.
pub fn floor(repeat_means: &[f64]) -> Option<Floor> {
    let mut best: Option<Floor> = None;
    let mut pairs = 0;
    for i in 0..repeat_means.len() {
        for j in i + 1..repeat_means.len() {
            pairs += 1;
            let s = (repeat_means[i] - repeat_means[j]).abs();
            if best.as_ref().is_none_or(|b| s > b.floor) {
                best = Some(Floor {
                    floor: s,
                    pair: (i, j),
                    pairs: 0,
                });
            }
        }
    }
    best.map(|b| Floor { pairs, ..b })
}

/// Whether a delta clears the floor (strictly larger in absolute value).
pub fn above(delta: f64, floor: f64) -> bool {
    delta.abs() > floor
}

#[cfg(test)]
mod tests {
    #[test]
    fn largest_pairwise_shift() {
        let f = super::floor(&[0.74, 0.81, 0.77]).unwrap();
        assert!((f.floor - 0.07).abs() < 1e-12);
        assert_eq!((f.pair, f.pairs), ((0, 1), 3));
        assert!(super::floor(&[0.5]).is_none());
        assert!(super::above(-0.08, 0.07) && !super::above(0.07, 0.07));
    }
}

//! Flags a task whose repeats split into two modes (e.g. the agent either finds the trick and
//! scores ~0.9, or does not and scores ~0.2). On such a task a per-repeat delta mostly says which
//! mode each arm's repeat landed in, so per-repeat deltas swing and need more repeats.
//!
//! The rule (a flag, not a test): sort the repeat scores, take the largest gap between
//! neighbours; the task is split when that gap is at least [`MIN_GAP`] on the 0–1 score scale
//! and at least twice the spread (max − min) inside either side. Needs ≥ 3 repeats.

use serde::Serialize;

/// Smallest gap between the two modes.
pub const MIN_GAP: f64 = 0.3;
/// Fewest repeats the rule looks at.
pub const MIN_REPEATS: usize = 3;

/// The two modes of a split task.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Split {
    /// Scores below the gap, ascending.
    pub low: Vec<f64>,
    /// Scores above the gap, ascending.
    pub high: Vec<f64>,
    /// The gap.
    pub gap: f64,
}

/// The split of `scores`, when they split into two modes.
pub fn split(scores: &[f64]) -> Option<Split> {
    if scores.len() < MIN_REPEATS {
        return None;
    }
    let mut s = scores.to_vec();
    s.sort_by(f64::total_cmp);
    let (k, gap) = s
        .windows(2)
        .enumerate()
        .map(|(i, w)| (i + 1, w[1] - w[0]))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let (low, high) = s.split_at(k);
    let spread = |v: &[f64]| v[v.len() - 1] - v[0];
    let inner = spread(low).max(spread(high));
    (gap >= MIN_GAP && gap >= 2.0 * inner).then(|| Split {
        low: low.to_vec(),
        high: high.to_vec(),
        gap,
    })
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn two_modes_are_flagged_spread_is_not() {
        let s = split(&[0.191, 0.939, 0.878]).unwrap();
        assert_eq!(s.low, vec![0.191]);
        assert!((s.gap - 0.687).abs() < 1e-12);
        // Evenly spread, no gap twice the inner spread.
        assert!(split(&[0.286, 1.0, 0.714]).is_none());
        // Small gap.
        assert!(split(&[0.714, 1.0, 1.0]).is_none());
        assert!(
            split(&[0.0, 1.0]).is_none(),
            "two repeats cannot show modes"
        );
        assert!(split(&[0.5, 0.5, 0.5]).is_none());
    }
}

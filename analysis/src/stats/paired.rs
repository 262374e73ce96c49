//! Repeated, paired designs: baseline and variant scored on the same tasks in the same batches
//! (one batch = one repeat, run cell by cell together; docs/statistics.md, "Ablations").
//!
//! The unit of independence is the task, not the (task, repeat) pair: repeats of one task share
//! the task's difficulty, so treating them as independent would overstate the evidence. The
//! functions here therefore resample and flip whole tasks.

use super::permutation::TOL;
use serde::Serialize;

/// Largest number of tasks for which [`sign_flip_exact`] enumerates every sign pattern.
pub const EXACT_FLIP_MAX_N: usize = 20;

/// Per-repeat deltas of a balanced design: `base[t][r]`, `var[t][r]` for task t, repeat r.
/// Delta of repeat r = mean over tasks of the baseline − mean over tasks of the variant (the
/// mechanism's contribution: positive when switching it off loses score). Means are summed left
/// to right in task order, as the published per-repeat means are.
pub fn per_repeat_deltas(base: &[Vec<f64>], var: &[Vec<f64>]) -> Vec<(f64, f64, f64)> {
    let repeats = base.first().map_or(0, Vec::len);
    (0..repeats)
        .map(|r| {
            let b = super::mean(&base.iter().map(|t| t[r]).collect::<Vec<_>>());
            let v = super::mean(&var.iter().map(|t| t[r]).collect::<Vec<_>>());
            (b, v, b - v)
        })
        .collect()
}

/// How many of `deltas` have the sign of `effect` (a delta within 1e-12 of 0 has no sign).
pub fn sign_consistency(deltas: &[f64], effect: f64) -> usize {
    if effect.abs() <= TOL {
        return 0;
    }
    deltas
        .iter()
        .filter(|d| d.abs() > TOL && d.signum() == effect.signum())
        .count()
}

/// Exact two-sided sign-flip p of the mean of `d`: the share of all 2^n sign patterns whose
/// |mean| reaches the observed |mean| (tolerance 1e-12), the identity pattern included — the
/// value scipy's `permutation_test(..., permutation_type="samples")` gives when it enumerates.
/// `None` for n = 0 or n > [`EXACT_FLIP_MAX_N`]. Each pattern's sum is formed afresh in data
/// order so rounding cannot accumulate across patterns and decide a tie.
pub fn sign_flip_exact(d: &[f64]) -> Option<f64> {
    let n = d.len();
    if n == 0 || n > EXACT_FLIP_MAX_N {
        return None;
    }
    let observed = super::mean(d).abs();
    let total = 1u64 << n;
    let mut count = 0u64;
    for mask in 0..total {
        let mut s = 0.0;
        for (i, x) in d.iter().enumerate() {
            s += if mask >> i & 1 == 1 { -x } else { *x };
        }
        if (s / n as f64).abs() >= observed - TOL {
            count += 1;
        }
    }
    Some(count as f64 / total as f64)
}

/// Variance components of the deltas of a balanced design (one-way random effects, the ANOVA
/// estimator): `task` = between-task variance of the true per-task effect, `repeat` = the
/// within-task (repeat-to-repeat) variance. For balanced data these equal the REML estimates
/// whenever `task` is positive (checked against statsmodels `MixedLM` in the golden tests).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Components {
    /// Between-task variance (truncated at 0).
    pub task: f64,
    /// Within-task variance across repeats.
    pub repeat: f64,
    /// Tasks.
    pub tasks: usize,
    /// Repeats per task.
    pub repeats: usize,
}

impl Components {
    /// Variance of one task's mean delta over `r` repeats.
    pub fn per_task(&self, r: f64) -> f64 {
        self.task + self.repeat / r
    }
}

/// [`Components`] of `d[t][r]`; `None` unless there are ≥ 2 tasks and ≥ 2 repeats per task,
/// all tasks with the same number of repeats.
pub fn components(d: &[Vec<f64>]) -> Option<Components> {
    let t = d.len();
    let r = d.first()?.len();
    if t < 2 || r < 2 || d.iter().any(|x| x.len() != r) {
        return None;
    }
    let task_means: Vec<f64> = d.iter().map(|x| super::mean(x)).collect();
    let grand = super::mean(&task_means);
    let ss_within: f64 = d
        .iter()
        .zip(&task_means)
        .map(|(x, m)| x.iter().map(|v| (v - m) * (v - m)).sum::<f64>())
        .sum();
    let ss_between: f64 = task_means.iter().map(|m| (m - grand) * (m - grand)).sum();
    let ms_within = ss_within / (t * (r - 1)) as f64;
    let ms_between = r as f64 * ss_between / (t - 1) as f64;
    Some(Components {
        task: ((ms_between - ms_within) / r as f64).max(0.0),
        repeat: ms_within,
        tasks: t,
        repeats: r,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_and_consistency() {
        let base = vec![vec![1.0, 0.5], vec![0.5, 0.5]];
        let var = vec![vec![0.5, 0.5], vec![0.5, 0.75]];
        let d = per_repeat_deltas(&base, &var);
        assert_eq!(d, vec![(0.75, 0.5, 0.25), (0.5, 0.625, -0.125)]);
        assert_eq!(sign_consistency(&[0.25, -0.125], 0.0625), 1);
        assert_eq!(sign_consistency(&[0.0, 0.0], 0.0), 0);
    }

    #[test]
    fn exact_flip_counts_every_pattern() {
        // All four patterns of [1, 1]: |mean| 1, 0, 0, 1 → p = 2/4.
        assert_eq!(sign_flip_exact(&[1.0, 1.0]), Some(0.5));
        assert_eq!(sign_flip_exact(&[0.0; 3]), Some(1.0));
        assert_eq!(sign_flip_exact(&[]), None);
        assert_eq!(sign_flip_exact(&[0.1; 21]), None);
    }

    #[test]
    fn components_of_pure_task_effects_and_pure_noise() {
        // Every repeat identical within a task: no repeat variance.
        let c = components(&[vec![0.2, 0.2], vec![0.4, 0.4], vec![0.0, 0.0]]).unwrap();
        assert!(
            c.repeat.abs() < 1e-15 && (c.task - 0.04).abs() < 1e-12,
            "{c:?}"
        );
        // Same task means, spread within: the task variance is truncated at 0.
        let c = components(&[vec![0.0, 0.2], vec![0.2, 0.0]]).unwrap();
        assert_eq!(c.task, 0.0);
        assert!((c.repeat - 0.02).abs() < 1e-12);
        assert!(components(&[vec![0.1, 0.2]]).is_none());
        assert!(components(&[vec![0.1], vec![0.2]]).is_none());
    }
}

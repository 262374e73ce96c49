//! The analysis of one repeated, paired ablation design (docs/statistics.md, "Ablations"):
//! per-repeat deltas and their sign consistency, a task-cluster bootstrap and a sign-flip test
//! over tasks (repeats stay inside their task), the noise floor from the baseline's own repeats,
//! per-task bimodality, and power.

use super::design::Design;
use super::Config;
use crate::stats::{
    achieved, bimodal_split, cluster_ci, components, mean, noise_floor, per_repeat_deltas,
    repeats_needed, sample_sd, sign_consistency, sign_flip, sign_flip_exact, signed_rank,
    t_test_power, tasks_needed, Components, Interval, Needed, Permutation, Split, Wilcoxon,
    POWER_ALPHA,
};
use serde::Serialize;

/// One repeat's delta.
#[derive(Clone, Debug, Serialize)]
pub struct RepeatDelta {
    /// Batch label (`r1`, or `<run>/r<k>`).
    pub batch: String,
    /// Baseline mean over the tasks in this repeat.
    pub baseline_mean: f64,
    /// Variant mean.
    pub variant_mean: f64,
    /// baseline − variant.
    pub delta: f64,
    /// Whether |delta| clears the noise floor; `None` when no floor was measured.
    pub above_noise: Option<bool>,
}

/// The noise floor of one arm of a design.
#[derive(Clone, Debug, Serialize)]
pub struct NoiseFloor {
    /// Arm whose repeats it comes from.
    pub arm: String,
    /// Largest shift of the arm's mean between two of its repeats.
    pub floor: Option<f64>,
    /// The two batches that shifted most.
    pub between: Option<(String, String)>,
    /// Pairs of repeats compared.
    pub pairs: usize,
    /// Why it could not be measured.
    pub missing: Option<String>,
}

/// Power for one delta.
#[derive(Clone, Debug, Serialize)]
pub struct PowerRow {
    /// The delta (absolute).
    pub delta: f64,
    /// Power of this design (its tasks and repeats) for the delta.
    pub achieved: Option<f64>,
    /// Repeats needed with this design's tasks; `None` when it cannot be computed.
    pub repeats_needed: Option<Needed>,
    /// Tasks needed with this design's repeats.
    pub tasks_needed: Option<Needed>,
    /// What could not be computed, and why.
    pub not_computed: Vec<String>,
}

/// A task whose repeats split into two modes, in one arm.
#[derive(Clone, Debug, Serialize)]
pub struct BimodalTask {
    /// Task.
    pub task: String,
    /// Arm.
    pub arm: String,
    /// The two modes.
    pub split: Split,
}

/// An ablation variant against its baseline.
#[derive(Clone, Debug, Serialize)]
pub struct AblationRow {
    /// Where it came from (file or model).
    pub source: String,
    /// Model, for our cells.
    pub model: Option<String>,
    /// Baseline label.
    pub baseline: String,
    /// Variant label.
    pub variant: String,
    /// Paired tasks.
    pub n: usize,
    /// Repeats (batches).
    pub repeats: usize,
    /// Baseline mean over tasks and repeats.
    pub baseline_mean: f64,
    /// Variant mean over tasks and repeats.
    pub variant_mean: f64,
    /// Mechanism effect: mean over repeats of (baseline − variant); positive when switching the
    /// mechanism off loses score.
    pub effect: f64,
    /// Per-repeat deltas.
    pub per_repeat: Vec<RepeatDelta>,
    /// Repeats whose delta has the effect's sign.
    pub consistent: usize,
    /// Task-cluster bootstrap CI of the effect (tasks resampled, each with all its repeats).
    pub ci: Option<Interval>,
    /// Sign-flip permutation over tasks (Monte Carlo).
    pub perm: Permutation,
    /// Exact sign-flip p over all 2^n task sign patterns (n ≤ 20).
    pub perm_exact: Option<f64>,
    /// Signed-rank test of the per-task mean deltas.
    pub wilcoxon: Wilcoxon,
    /// Noise floor from the baseline's repeats.
    pub noise: NoiseFloor,
    /// Noise floor from the variant's repeats (for comparison).
    pub variant_noise: NoiseFloor,
    /// Whether the effect clears the baseline's noise floor.
    pub effect_above_noise: Option<bool>,
    /// Variance components of the deltas (needs ≥ 2 repeats).
    pub components: Option<Components>,
    /// Power for the observed effect.
    pub power: PowerRow,
    /// Power for `--power D`.
    pub power_at: Option<PowerRow>,
    /// Tasks whose repeats split into modes.
    pub bimodal: Vec<BimodalTask>,
}

impl AblationRow {
    /// One sentence on what the numbers allow, built from them.
    pub fn verdict(&self) -> String {
        let r = self.repeats;
        if r < 2 {
            return format!(
                "single shot (1 repeat): no noise floor could be measured, so Δ {:+.3} is \
                 directional only",
                self.effect
            );
        }
        let floor = self
            .noise
            .floor
            .map_or(String::new(), |f| format!(" ±{f:.3}"));
        let within = self
            .per_repeat
            .iter()
            .filter(|d| d.above_noise == Some(false))
            .count();
        if self.consistent < r {
            format!(
                "the sign flips between repeats ({} of {r} agree with the mean Δ {:+.3}): not \
                 a stable effect",
                self.consistent, self.effect
            )
        } else if within == 0 && self.noise.floor.is_some() {
            format!(
                "same sign in {r} of {r} repeats, every per-repeat Δ above the noise floor{floor}"
            )
        } else if self.noise.floor.is_some() {
            format!(
                "same sign in {r} of {r} repeats, but {within} of {r} per-repeat Δ within the \
                 noise floor{floor}"
            )
        } else {
            format!("same sign in {r} of {r} repeats; noise floor not measured")
        }
    }
}

fn noise(arm: &str, batches: &[String], per_repeat_means: &[f64]) -> NoiseFloor {
    match noise_floor(per_repeat_means) {
        Some(f) => NoiseFloor {
            arm: arm.to_string(),
            floor: Some(f.floor),
            between: Some((batches[f.pair.0].clone(), batches[f.pair.1].clone())),
            pairs: f.pairs,
            missing: None,
        },
        None => NoiseFloor {
            arm: arm.to_string(),
            floor: None,
            between: None,
            pairs: 0,
            missing: Some(format!(
                "needs at least 2 repeats of `{arm}` in the same design; it has {}",
                per_repeat_means.len()
            )),
        },
    }
}

fn power_for(delta: f64, d: &[Vec<f64>], task_means: &[f64], c: Option<&Components>) -> PowerRow {
    let (t, r) = (task_means.len(), d.first().map_or(0, Vec::len));
    let mut not_computed = Vec::new();
    let delta = delta.abs();
    if t < 2 {
        not_computed.push(format!("power needs at least 2 tasks; the design has {t}"));
        return PowerRow {
            delta,
            achieved: None,
            repeats_needed: None,
            tasks_needed: None,
            not_computed,
        };
    }
    match c {
        Some(c) => PowerRow {
            delta,
            achieved: achieved(delta, c, t, r),
            repeats_needed: Some(repeats_needed(delta, c, t)),
            tasks_needed: Some(tasks_needed(delta, c.per_task(r as f64))),
            not_computed,
        },
        None => {
            // One repeat: the spread of the task deltas mixes task differences and repeat
            // noise, which is all a single-repeat design can be planned from.
            not_computed.push(
                "repeats needed: a single repeat cannot separate repeat-to-repeat noise from \
                 task differences (needs at least 2 repeats)"
                    .into(),
            );
            let sd = sample_sd(task_means);
            PowerRow {
                delta,
                achieved: (sd > 0.0).then(|| t_test_power(delta / sd, t as f64, POWER_ALPHA)),
                repeats_needed: None,
                tasks_needed: Some(tasks_needed(delta, sd * sd)),
                not_computed,
            }
        }
    }
}

/// Analyse one design; `i` numbers the designs (seeds are `seed + i`, `perm_seed + i`).
pub(crate) fn analyse(d: &Design, cfg: &Config, i: u64) -> AblationRow {
    let reps = per_repeat_deltas(&d.base, &d.var);
    let deltas: Vec<Vec<f64>> = d
        .base
        .iter()
        .zip(&d.var)
        .map(|(b, v)| b.iter().zip(v).map(|(x, y)| x - y).collect())
        .collect();
    let task_means: Vec<f64> = deltas.iter().map(|x| mean(x)).collect();
    let effect = mean(&reps.iter().map(|r| r.2).collect::<Vec<_>>());
    let base_noise = noise(
        &d.baseline,
        &d.batches,
        &reps.iter().map(|r| r.0).collect::<Vec<_>>(),
    );
    let variant_noise = noise(
        &d.variant,
        &d.batches,
        &reps.iter().map(|r| r.1).collect::<Vec<_>>(),
    );
    let floor = base_noise.floor;
    let per_repeat: Vec<RepeatDelta> = reps
        .iter()
        .zip(&d.batches)
        .map(|((b, v, delta), batch)| RepeatDelta {
            batch: batch.clone(),
            baseline_mean: *b,
            variant_mean: *v,
            delta: *delta,
            above_noise: floor.map(|f| crate::stats::noise::above(*delta, f)),
        })
        .collect();
    let mut rng = cfg.rng.source(cfg.seed + i);
    let ci = cluster_ci(&deltas, cfg.resamples, cfg.level, rng.as_mut());
    let mut prng = cfg.rng.source(cfg.perm_seed + i);
    let perm = sign_flip(&task_means, cfg.resamples, prng.as_mut());
    let comps = components(&deltas);
    let mut bimodal = Vec::new();
    for (t, task) in d.tasks.iter().enumerate() {
        for (arm, rows) in [(&d.baseline, &d.base), (&d.variant, &d.var)] {
            if let Some(split) = bimodal_split(&rows[t]) {
                bimodal.push(BimodalTask {
                    task: task.clone(),
                    arm: arm.clone(),
                    split,
                });
            }
        }
    }
    AblationRow {
        source: d.source.clone(),
        model: d.model.clone(),
        baseline: d.baseline.clone(),
        variant: d.variant.clone(),
        n: d.tasks.len(),
        repeats: d.batches.len(),
        baseline_mean: mean(&reps.iter().map(|r| r.0).collect::<Vec<_>>()),
        variant_mean: mean(&reps.iter().map(|r| r.1).collect::<Vec<_>>()),
        effect,
        consistent: sign_consistency(&reps.iter().map(|r| r.2).collect::<Vec<_>>(), effect),
        per_repeat,
        ci,
        perm,
        perm_exact: sign_flip_exact(&task_means),
        wilcoxon: signed_rank(&task_means),
        effect_above_noise: floor.map(|f| crate::stats::noise::above(effect, f)),
        noise: base_noise,
        variant_noise,
        power: power_for(effect, &deltas, &task_means, comps.as_ref()),
        power_at: cfg
            .power_delta
            .map(|p| power_for(p, &deltas, &task_means, comps.as_ref())),
        components: comps,
        bimodal,
    }
}

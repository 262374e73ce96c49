//! The focal arm against every other arm: per model (signed-rank, bootstrap, tier-cluster and
//! stratified permutation, Holm within the model) and pooled over models.

use super::means::Grid;
use super::{Comparison, Config, Pooled};
use crate::model::Cell;
use crate::stats::{
    cluster_ci, holm, mean, mean_ci, sign_flip, signed_rank, stratified_sign_flip, ZERO_EPS,
};
use std::collections::{BTreeMap, BTreeSet};

/// One paired task: (task, tier, focal score, other score).
type Pair = (String, u8, f64, f64);

/// Paired differences (a - b) over the tasks both have, in task order, with their tiers, plus
/// the tasks only one side has.
fn paired<'a>(
    a: Option<&BTreeMap<&'a str, &'a Cell>>,
    b: Option<&BTreeMap<&'a str, &'a Cell>>,
) -> (Vec<Pair>, Vec<String>) {
    let empty = BTreeMap::new();
    let (a, b) = (a.unwrap_or(&empty), b.unwrap_or(&empty));
    let mut out = Vec::new();
    let mut unpaired = Vec::new();
    let tasks: BTreeSet<&str> = a.keys().chain(b.keys()).copied().collect();
    for t in tasks {
        match (a.get(t), b.get(t)) {
            (Some(x), Some(y)) => out.push((t.to_string(), x.tier, x.score, y.score)),
            _ => unpaired.push(t.to_string()),
        }
    }
    (out, unpaired)
}

fn by_tier(pairs: &[Pair]) -> Vec<Vec<f64>> {
    let mut m: BTreeMap<u8, Vec<f64>> = BTreeMap::new();
    for (_, tier, a, b) in pairs {
        m.entry(*tier).or_default().push(a - b);
    }
    m.into_values().collect()
}

/// Per-model comparisons, models in order, competitors in table order. The i-th comparison
/// (counting across models) uses seeds `seed + i` (tier-cluster) and `perm_seed + i`.
pub(crate) fn per_model(
    g: &Grid,
    cfg: &Config,
    focal: &str,
    models: &[String],
    competitors: &[&String],
) -> Vec<Comparison> {
    let mut comparisons = Vec::new();
    let mut idx = 0u64;
    for m in models {
        let mut block = Vec::new();
        for comp in competitors {
            let fa = g.get(&(focal, m.as_str()));
            let fb = g.get(&(comp.as_str(), m.as_str()));
            if fa.is_none() || fb.is_none() {
                continue;
            }
            let (pairs, unpaired) = paired(fa, fb);
            let d: Vec<f64> = pairs.iter().map(|(_, _, a, b)| a - b).collect();
            let mut rng = cfg.rng.source(cfg.seed);
            let ci = mean_ci(&d, cfg.resamples, cfg.level, rng.as_mut());
            let mut crng = cfg.rng.source(cfg.seed + idx);
            let tiers = by_tier(&pairs);
            let cci = cluster_ci(&tiers, cfg.resamples, cfg.level, crng.as_mut());
            let mut prng = cfg.rng.source(cfg.perm_seed + idx);
            let perm = stratified_sign_flip(&tiers, cfg.resamples, prng.as_mut());
            idx += 1;
            block.push(Comparison {
                model: m.clone(),
                competitor: comp.to_string(),
                n: d.len(),
                unpaired,
                wins: d.iter().filter(|x| **x > ZERO_EPS).count(),
                ties: d.iter().filter(|x| x.abs() <= ZERO_EPS).count(),
                losses: d.iter().filter(|x| **x < -ZERO_EPS).count(),
                mean_diff: mean(&d),
                wilcoxon: signed_rank(&d),
                holm_p: 1.0,
                ci,
                cluster_ci: cci,
                perm,
                perm_holm_p: 1.0,
            });
        }
        let h = holm(
            &block
                .iter()
                .map(|c| c.wilcoxon.p_normal)
                .collect::<Vec<_>>(),
        );
        let hp = holm(&block.iter().map(|c| c.perm.p).collect::<Vec<_>>());
        for ((c, a), b) in block.iter_mut().zip(h).zip(hp) {
            c.holm_p = a;
            c.perm_holm_p = b;
        }
        comparisons.extend(block);
    }
    comparisons
}

/// Pooled overall: per task the mean difference over the models both arms ran; one source
/// (`pooled_seed`) shared by all competitors in order, bootstrap first, then permutation.
pub(crate) fn pooled(
    g: &Grid,
    cfg: &Config,
    focal: &str,
    models: &[String],
    competitors: &[&String],
) -> Vec<Pooled> {
    let mut prng = cfg.rng.source(cfg.pooled_seed);
    let mut pooled = Vec::new();
    for comp in competitors {
        let shared: Vec<&String> = models
            .iter()
            .filter(|m| {
                g.contains_key(&(focal, m.as_str())) && g.contains_key(&(comp.as_str(), m.as_str()))
            })
            .collect();
        if shared.is_empty() {
            continue;
        }
        let mut per_task: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        let (mut ga, mut gb, mut cells) = (0, 0, 0);
        for m in &shared {
            let (pairs, _) = paired(
                g.get(&(focal, m.as_str())),
                g.get(&(comp.as_str(), m.as_str())),
            );
            for (t, _, a, b) in pairs {
                per_task.entry(t).or_default().push(a - b);
                cells += 1;
                ga += usize::from(a >= 0.5);
                gb += usize::from(b >= 0.5);
            }
        }
        let d: Vec<f64> = per_task.values().map(|v| mean(v)).collect();
        let ci = mean_ci(&d, cfg.resamples, cfg.level, prng.as_mut());
        let perm = sign_flip(&d, cfg.resamples, prng.as_mut());
        pooled.push(Pooled {
            competitor: comp.to_string(),
            n_tasks: d.len(),
            models: shared.into_iter().cloned().collect(),
            ci,
            perm,
            ge_half: (ga, gb),
            cells,
        });
    }
    pooled
}

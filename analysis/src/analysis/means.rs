//! The means table: the focal arm, the order of models and arms, and one row per arm.

use super::ArmRow;
use crate::model::{model_size, Cell};
use crate::stats::{mean, noise_floor};
use std::collections::{BTreeMap, BTreeSet};

/// Cells by (arm, model), then by task.
pub(crate) type Grid<'a> = BTreeMap<(&'a str, &'a str), BTreeMap<&'a str, &'a Cell>>;

pub(crate) fn grid(cells: &[Cell]) -> Grid<'_> {
    let mut g: Grid = BTreeMap::new();
    for c in cells {
        g.entry((c.arm.as_str(), c.model.as_str()))
            .or_default()
            .insert(c.task.as_str(), c);
    }
    g
}

/// Models ordered by parameter count (unknown sizes last), then by name.
pub(crate) fn order_models(cells: &[Cell]) -> Vec<String> {
    let set: BTreeSet<&str> = cells.iter().map(|c| c.model.as_str()).collect();
    let mut v: Vec<String> = set.into_iter().map(str::to_string).collect();
    v.sort_by(|a, b| {
        let (sa, sb) = (
            model_size(a).unwrap_or(f64::INFINITY),
            model_size(b).unwrap_or(f64::INFINITY),
        );
        sa.total_cmp(&sb).then_with(|| a.cmp(b))
    });
    v
}

/// The focal arm: `--focal` when present, else `harness`, else `Mingbird` (either spelled in
/// any case), else the first arm. Names are matched ignoring case so the frontier probe's
/// `mingbird` is found too.
pub(crate) fn focal(wanted: Option<&str>, arms: &BTreeSet<&str>) -> String {
    let pick = |w: &str| {
        arms.iter()
            .find(|a| a.eq_ignore_ascii_case(w))
            .map(|s| s.to_string())
    };
    wanted
        .and_then(|w| arms.contains(w).then(|| w.to_string()).or_else(|| pick(w)))
        .or_else(|| pick("harness"))
        .or_else(|| pick("Mingbird"))
        .or_else(|| arms.iter().next().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// One arm's row of the means table.
pub(crate) fn row(arm: &str, models: &[String], g: &Grid) -> ArmRow {
    let per: Vec<Option<&BTreeMap<&str, &Cell>>> =
        models.iter().map(|m| g.get(&(arm, m.as_str()))).collect();
    let per_model: Vec<Option<f64>> = per
        .iter()
        .map(|c| c.map(|c| mean(&c.values().map(|x| x.score).collect::<Vec<_>>())))
        .collect();
    let present: Vec<f64> = per_model.iter().flatten().copied().collect();
    let mut per_tier = [None; 4];
    for (t, slot) in per_tier.iter_mut().enumerate() {
        let v: Vec<f64> = per
            .iter()
            .flatten()
            .flat_map(|c| c.values())
            .filter(|c| c.tier as usize == t + 1)
            .map(|c| c.score)
            .collect();
        *slot = (!v.is_empty()).then(|| mean(&v));
    }
    let named: Vec<(String, f64)> = models
        .iter()
        .zip(&per_model)
        .filter_map(|(m, v)| v.map(|v| (m.clone(), v)))
        .collect();
    let best = named.iter().cloned().max_by(|a, b| a.1.total_cmp(&b.1));
    let worst = named.iter().cloned().min_by(|a, b| a.1.total_cmp(&b.1));
    let cells: Vec<&Cell> = per
        .iter()
        .flatten()
        .flat_map(|c| c.values().copied())
        .collect();
    let multi: Vec<f64> = cells
        .iter()
        .filter(|c| c.repeat_scores.len() > 1)
        .map(|c| c.spread())
        .collect();
    ArmRow {
        arm: arm.to_string(),
        n_per_model: per.iter().map(|c| c.map_or(0, |c| c.len())).collect(),
        ge_half: per
            .iter()
            .map(|c| c.map_or(0, |c| c.values().filter(|x| x.score >= 0.5).count()))
            .collect(),
        overall: (!present.is_empty()).then(|| mean(&present)),
        per_model,
        per_tier,
        best,
        worst,
        repeat_sd: (!multi.is_empty()).then(|| mean(&multi)),
        max_repeats: cells
            .iter()
            .map(|c| c.repeat_scores.len())
            .max()
            .unwrap_or(0),
        noise_floor: arm_noise_floor(&cells),
    }
}

/// The largest shift of this arm's mean between two of its batches, per model, over the tasks
/// every batch of that model ran; the largest over models. `None` with fewer than two batches.
fn arm_noise_floor(cells: &[&Cell]) -> Option<f64> {
    let mut by_model: BTreeMap<&str, Vec<&Cell>> = BTreeMap::new();
    for c in cells {
        by_model.entry(c.model.as_str()).or_default().push(c);
    }
    by_model
        .values()
        .filter_map(|cs| {
            let batches: BTreeSet<&str> = cs
                .iter()
                .flat_map(|c| c.batches.iter().map(String::as_str))
                .collect();
            let complete: Vec<&&Cell> = cs
                .iter()
                .filter(|c| batches.iter().all(|b| c.batches.iter().any(|x| x == b)))
                .collect();
            if complete.is_empty() {
                return None;
            }
            let means: Vec<f64> = batches
                .iter()
                .map(|b| {
                    mean(
                        &complete
                            .iter()
                            .map(|c| {
                                let i = c.batches.iter().position(|x| x == b).expect("complete");
                                c.repeat_scores[i]
                            })
                            .collect::<Vec<_>>(),
                    )
                })
                .collect();
            noise_floor(&means).map(|f| f.floor)
        })
        .max_by(f64::total_cmp)
}

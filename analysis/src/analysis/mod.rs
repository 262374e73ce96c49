//! From a [`Dataset`] to every table and test of the report (pure; no I/O). One module per
//! concern: the means table, the focal-arm comparisons, activity (failure modes, time,
//! resources, mechanisms, extra columns), the ablation designs and their analysis, caveats.

mod ablation;
mod activity;
mod caveats;
mod compare;
mod design;
mod means;
pub mod prompt_cache;

pub use ablation::{AblationRow, BimodalTask, NoiseFloor, PowerRow, RepeatDelta};

use crate::error::Result;
use crate::load::TimeoutPolicy;
use crate::model::Dataset;
use crate::rng::RngKind;
use crate::stats::{holm, mcnemar, mean, pass_hat_k, Interval, McNemar, Permutation, Wilcoxon};
use crate::tau_pairs::tau_pass;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Knobs of the analysis (all reported in the methods paragraph).
#[derive(Clone, Debug, Serialize)]
pub struct Config {
    /// The arm compared against every other arm; default `harness`, else `Mingbird`, else the
    /// first arm.
    pub focal: Option<String>,
    /// Bootstrap / permutation iterations.
    pub resamples: usize,
    /// CI level.
    pub level: f64,
    /// Seed of each per-model bootstrap (fresh source per comparison) and base of the
    /// tier-cluster seeds (seed + i).
    pub seed: u64,
    /// Seed of the pooled overall comparison (one source shared by all competitors in order).
    pub pooled_seed: u64,
    /// Base seed of the stratified sign-flip permutations (perm_seed + i).
    pub perm_seed: u64,
    /// Random source.
    pub rng: RngKind,
    /// `--power D`: also compute the repeats and tasks each ablation needs for this delta.
    pub power_delta: Option<f64>,
    /// What timed-out cells without a score counted as when the data were loaded (reported).
    pub timeouts: TimeoutPolicy,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            focal: None,
            resamples: 10_000,
            level: 0.95,
            seed: 42,
            pooled_seed: 2609,
            perm_seed: 20_260_920,
            rng: RngKind::Chacha,
            power_delta: None,
            timeouts: TimeoutPolicy::Zero,
        }
    }
}

/// One arm's row of the means table.
#[derive(Clone, Debug, Serialize)]
pub struct ArmRow {
    /// Arm name.
    pub arm: String,
    /// Mean score per model (same order as `Analysis::models`); `None` when no cell.
    pub per_model: Vec<Option<f64>>,
    /// Number of tasks per model.
    pub n_per_model: Vec<usize>,
    /// Mean of the model means (`None` when the arm has no cell).
    pub overall: Option<f64>,
    /// Mean per tier 1..4 over all models' cells.
    pub per_tier: [Option<f64>; 4],
    /// Best model and its mean.
    pub best: Option<(String, f64)>,
    /// Worst model and its mean.
    pub worst: Option<(String, f64)>,
    /// Cells scoring >= 0.5 per model.
    pub ge_half: Vec<usize>,
    /// Mean of each model's repeat spread (sd), when any cell has more than one repeat.
    pub repeat_sd: Option<f64>,
    /// Largest number of repeats of any cell.
    pub max_repeats: usize,
    /// Largest shift of the arm's mean between two of its batches (per model, over the tasks
    /// every batch ran); `None` with fewer than two batches.
    pub noise_floor: Option<f64>,
}

impl ArmRow {
    /// Drop from the best model to the worst one (the "cliff").
    pub fn cliff(&self) -> Option<f64> {
        Some(self.best.as_ref()?.1 - self.worst.as_ref()?.1)
    }
}

/// Focal arm vs one competitor on one model.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Model.
    pub model: String,
    /// Competitor arm.
    pub competitor: String,
    /// Paired tasks.
    pub n: usize,
    /// Tasks present for only one of the two arms (left out, reported).
    pub unpaired: Vec<String>,
    /// Wins / ties / losses of the focal arm.
    pub wins: usize,
    /// Ties (|d| <= 1e-12).
    pub ties: usize,
    /// Losses.
    pub losses: usize,
    /// Mean difference focal - competitor.
    pub mean_diff: f64,
    /// Signed-rank test.
    pub wilcoxon: Wilcoxon,
    /// Holm-adjusted normal-approximation p within the model.
    pub holm_p: f64,
    /// Percentile bootstrap CI of the mean difference.
    pub ci: Option<Interval>,
    /// Tier-cluster bootstrap CI.
    pub cluster_ci: Option<Interval>,
    /// Tier-stratified sign-flip permutation.
    pub perm: Permutation,
    /// Holm-adjusted permutation p within the model.
    pub perm_holm_p: f64,
}

/// The pooled overall comparison (per-task mean difference over models).
#[derive(Clone, Debug, Serialize)]
pub struct Pooled {
    /// Competitor arm.
    pub competitor: String,
    /// Tasks used.
    pub n_tasks: usize,
    /// Models both arms have.
    pub models: Vec<String>,
    /// Bootstrap CI of the mean of per-task differences.
    pub ci: Option<Interval>,
    /// Sign-flip permutation of the same differences.
    pub perm: Permutation,
    /// Cells >= 0.5 of (focal, competitor) on the paired cells.
    pub ge_half: (usize, usize),
    /// Paired cells.
    pub cells: usize,
}

/// Wall-time summary of one arm.
#[derive(Clone, Debug, Serialize)]
pub struct WallRow {
    /// Arm.
    pub arm: String,
    /// Cells with a wall time.
    pub n: usize,
    /// Cells without one.
    pub missing: usize,
    /// Median seconds.
    pub median: f64,
    /// Mean seconds.
    pub mean: f64,
}

/// Token / call means of one arm (cells that report them).
#[derive(Clone, Debug, Serialize)]
pub struct ResourceRow {
    /// Arm.
    pub arm: String,
    /// Cells reporting at least one counter.
    pub n: usize,
    /// Mean prompt tokens, completion tokens, model calls, tool calls.
    pub means: [Option<f64>; 4],
}

/// Mechanism activations of one arm (cells whose event logs were found).
#[derive(Clone, Debug, Serialize)]
pub struct MechanismRow {
    /// Arm.
    pub arm: String,
    /// Cells with an event log.
    pub cells: usize,
    /// Mechanism -> (mean firings per cell, cells where it fired at least once).
    pub by_mechanism: BTreeMap<String, (f64, usize)>,
}

/// Summary of one extra per-cell column for one arm.
#[derive(Clone, Debug, Serialize)]
pub struct ExtraStat {
    /// Cells with a value.
    pub n: usize,
    /// Sum (for a flag: cells where it is set).
    pub sum: f64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub median: f64,
}

/// One extra per-cell column (from an annotation file) across the main arms.
#[derive(Clone, Debug, Serialize)]
pub struct ExtraColumn {
    /// Column name.
    pub column: String,
    /// Every value is 0 or 1.
    pub flag: bool,
    /// Per arm (same order as [`Extras::arms`]); `None` when no cell of the arm has a value.
    pub per_arm: Vec<Option<ExtraStat>>,
}

/// The extra per-cell columns.
#[derive(Clone, Debug, Serialize)]
pub struct Extras {
    /// Arms, in table order.
    pub arms: Vec<String>,
    /// Columns, by name.
    pub columns: Vec<ExtraColumn>,
}

/// τ² summary.
#[derive(Clone, Debug, Serialize)]
pub struct TauSummary {
    /// Focal arm.
    pub focal: String,
    /// Arms.
    pub arms: Vec<String>,
    /// Domains.
    pub domains: Vec<String>,
    /// Mean reward (first trial) per arm per domain, then the pooled mean.
    pub means: Vec<(String, Vec<Option<f64>>, Option<f64>)>,
    /// pass^k per arm for k = 1..=max common trials.
    pub pass_k: Vec<(String, Vec<f64>)>,
    /// Pooled exact McNemar focal vs competitor, with Holm p.
    pub mcnemar: Vec<(String, McNemar, f64)>,
    /// McNemar per domain.
    pub per_domain: Vec<(String, String, McNemar)>,
    /// Tasks lacking a reward for one side of a pair (left out).
    pub unpaired: usize,
    /// McNemar for every pair of arms ([`crate::tau_pairs::pairwise`]).
    pub pairwise: Vec<crate::tau_pairs::Pair>,
}

/// Everything the report shows.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// Config used.
    pub config: Config,
    /// Focal arm.
    pub focal: String,
    /// Main arms, focal first, then by overall mean descending.
    pub arms: Vec<String>,
    /// Models by size.
    pub models: Vec<String>,
    /// Means table.
    pub rows: Vec<ArmRow>,
    /// Per-model comparisons.
    pub comparisons: Vec<Comparison>,
    /// Pooled overall comparisons.
    pub pooled: Vec<Pooled>,
    /// Failure modes per arm.
    pub failure_modes: BTreeMap<String, BTreeMap<String, usize>>,
    /// Wall times.
    pub wall: Vec<WallRow>,
    /// Tokens and calls.
    pub resources: Vec<ResourceRow>,
    /// Mechanism activations from event logs.
    pub mechanisms: Vec<MechanismRow>,
    /// Extra per-cell columns from annotation files.
    pub extras: Option<Extras>,
    /// Failure forms coded by the paper's rules, in the paper's layout.
    pub failure_forms: Option<crate::failure_forms::FormsTable>,
    /// The paper's resource table (per arm and per model).
    pub resource_table: Option<crate::resource_table::ResourceTable>,
    /// Prompt-cache use per arm and model, on the same cells.
    pub prompt_cache: Vec<prompt_cache::CacheRow>,
    /// Ablations: each variant against its baseline, with repeats.
    pub ablations: Vec<AblationRow>,
    /// τ².
    pub tau: Option<TauSummary>,
    /// Cells on the simulated backend.
    pub simulated_cells: usize,
    /// τ² rows on the simulated backend.
    pub simulated_tau_rows: usize,
    /// Total cells.
    pub total_cells: usize,
    /// Caveats to print.
    pub caveats: Vec<String>,
}

/// Run the whole analysis. Errors only when the inputs cannot form a design the analysis
/// needs (an ablation variant without its baseline in the same batch, missing repeats).
pub fn analyze(ds: &Dataset, cfg: &Config) -> Result<Analysis> {
    let g = means::grid(&ds.cells);
    let models = means::order_models(&ds.cells);
    let all_arms: BTreeSet<&str> = ds.cells.iter().map(|c| c.arm.as_str()).collect();
    let focal = means::focal(cfg.focal.as_deref(), &all_arms);
    let variants: Vec<(String, String)> = all_arms
        .iter()
        .filter_map(|a| {
            design::baseline_of(a, &all_arms, &focal).map(|b| (a.to_string(), b.to_string()))
        })
        .collect();
    let is_variant = |a: &str| variants.iter().any(|v| v.0 == a);

    let mut rows: Vec<ArmRow> = all_arms
        .iter()
        .filter(|a| !is_variant(a))
        .map(|arm| means::row(arm, &models, &g))
        .collect();
    // Focal first, then competitors by overall mean descending (upstream's order).
    let key = |r: &ArmRow| r.overall.unwrap_or(f64::NEG_INFINITY);
    rows.sort_by(|a, b| {
        (b.arm == focal)
            .cmp(&(a.arm == focal))
            .then(key(b).total_cmp(&key(a)))
            .then(a.arm.cmp(&b.arm))
    });
    let arms: Vec<String> = rows.iter().map(|r| r.arm.clone()).collect();
    let competitors: Vec<&String> = arms.iter().filter(|a| **a != focal).collect();
    let comparisons = compare::per_model(&g, cfg, &focal, &models, &competitors);
    let pooled = compare::pooled(&g, cfg, &focal, &models, &competitors);

    let with_variants: Vec<String> = arms
        .iter()
        .cloned()
        .chain(variants.iter().map(|v| v.0.clone()))
        .collect();
    let mechanisms = activity::mechanisms(ds, &with_variants);
    let (failure_modes, wall, resources) = activity::per_arm(ds, &arms);
    let extras = activity::extras(ds, &arms);
    let failure_forms = crate::failure_forms::table(&ds.forms, &arms, &models);
    let resource_table = crate::resource_table::table(&ds.cells, &arms, &models);

    let mut designs = Vec::new();
    for f in &ds.ablations {
        designs.extend(design::from_file(f)?);
    }
    designs.extend(design::from_cells(&g, &models, &variants)?);
    let ablations = designs
        .iter()
        .enumerate()
        .map(|(i, d)| ablation::analyse(d, cfg, i as u64))
        .collect();

    let prompt_cache = prompt_cache::rows(ds, &arms, &models);
    let mut a = Analysis {
        config: cfg.clone(),
        focal,
        arms,
        models,
        rows,
        comparisons,
        pooled,
        failure_modes,
        wall,
        resources,
        mechanisms,
        extras,
        failure_forms,
        resource_table,
        prompt_cache,
        ablations,
        tau: tau_summary(ds, cfg.focal.as_deref()),
        simulated_cells: ds.cells.iter().filter(|c| c.simulated).count(),
        simulated_tau_rows: ds.tau_simulated,
        total_cells: ds.cells.len(),
        caveats: Vec::new(),
    };
    a.caveats = caveats::caveats(ds, &a);
    Ok(a)
}

fn tau_summary(ds: &Dataset, focal: Option<&str>) -> Option<TauSummary> {
    if ds.tau.is_empty() {
        return None;
    }
    let arms: BTreeSet<String> = ds
        .tau
        .values()
        .flat_map(|d| d.values().flat_map(|t| t.keys().cloned()))
        .collect();
    let pick = |want: &str| arms.iter().find(|a| a.eq_ignore_ascii_case(want)).cloned();
    let focal = focal
        .and_then(pick)
        .or_else(|| pick("harness"))
        .or_else(|| pick("mingbird"))
        .or_else(|| arms.iter().next().cloned())?;
    let domains: Vec<String> = ds.tau.keys().cloned().collect();
    let first = |d: &str, t: &str, a: &str| ds.tau.get(d)?.get(t)?.get(a)?.first().copied();
    let mut means = Vec::new();
    let mut pass_k = Vec::new();
    for a in &arms {
        let mut per = Vec::new();
        let mut all = Vec::new();
        let mut trials = Vec::new();
        for d in &domains {
            let v: Vec<f64> = ds.tau[d].keys().filter_map(|t| first(d, t, a)).collect();
            per.push((!v.is_empty()).then(|| mean(&v)));
            all.extend(v);
            for t in ds.tau[d].values() {
                if let Some(r) = t.get(a) {
                    trials.push((
                        r.len() as u64,
                        r.iter().filter(|x| tau_pass(**x)).count() as u64,
                    ));
                }
            }
        }
        means.push((a.clone(), per, (!all.is_empty()).then(|| mean(&all))));
        let kmax = trials.iter().map(|t| t.0).min().unwrap_or(0);
        pass_k.push((
            a.clone(),
            (1..=kmax).filter_map(|k| pass_hat_k(&trials, k)).collect(),
        ));
    }
    let mut ordered: Vec<String> = vec![focal.clone()];
    ordered.extend(arms.iter().filter(|a| **a != focal).cloned());
    let mut mc = Vec::new();
    let mut per_domain = Vec::new();
    let mut unpaired = 0;
    for comp in ordered.iter().skip(1) {
        let mut all = Vec::new();
        for d in &domains {
            let mut pairs = Vec::new();
            for t in ds.tau[d].keys() {
                match (first(d, t, &focal), first(d, t, comp)) {
                    (Some(a), Some(b)) => pairs.push((tau_pass(a), tau_pass(b))),
                    (None, None) => {}
                    _ => unpaired += 1,
                }
            }
            per_domain.push((comp.clone(), d.clone(), mcnemar(&pairs)));
            all.extend(pairs);
        }
        mc.push((comp.clone(), mcnemar(&all), 1.0));
    }
    let h = holm(&mc.iter().map(|m| m.1.p_exact).collect::<Vec<_>>());
    for (m, p) in mc.iter_mut().zip(h) {
        m.2 = p;
    }
    Some(TauSummary {
        focal,
        arms: ordered,
        domains,
        means,
        pass_k,
        mcnemar: mc,
        per_domain,
        unpaired,
        pairwise: crate::tau_pairs::pairwise(&ds.tau),
    })
}

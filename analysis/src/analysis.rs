//! From a [`Dataset`] to every table and test of the report (pure; no I/O).

use crate::model::{model_size, Cell, Dataset};
use crate::rng::RngKind;
use crate::stats::bootstrap::{mean_ci, Interval};
use crate::stats::cluster::cluster_ci;
use crate::stats::holm::holm;
use crate::stats::mcnemar::{mcnemar, McNemar};
use crate::stats::passk::pass_hat_k;
use crate::stats::permutation::{sign_flip, stratified_sign_flip, Permutation};
use crate::stats::wilcoxon::{signed_rank, Wilcoxon, ZERO_EPS};
use crate::stats::{mean, median};
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
    /// Mean of the model means.
    pub overall: f64,
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

/// An ablation variant against its baseline.
#[derive(Clone, Debug, Serialize)]
pub struct AblationRow {
    /// Where it came from (file or model).
    pub source: String,
    /// Baseline label.
    pub baseline: String,
    /// Variant label.
    pub variant: String,
    /// Paired tasks.
    pub n: usize,
    /// Baseline mean over paired tasks.
    pub baseline_mean: f64,
    /// Variant mean over paired tasks.
    pub variant_mean: f64,
    /// Bootstrap CI of the mean delta (variant - baseline).
    pub ci: Option<Interval>,
    /// Signed-rank test of the deltas.
    pub wilcoxon: Wilcoxon,
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
    /// Ablations.
    pub ablations: Vec<AblationRow>,
    /// τ².
    pub tau: Option<TauSummary>,
    /// Cells on the simulated backend.
    pub simulated_cells: usize,
    /// Total cells.
    pub total_cells: usize,
    /// Caveats to print.
    pub caveats: Vec<String>,
}

fn order_models(cells: &[Cell]) -> Vec<String> {
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

type Grid<'a> = BTreeMap<(&'a str, &'a str), BTreeMap<&'a str, &'a Cell>>;

fn grid(cells: &[Cell]) -> Grid<'_> {
    let mut g: Grid = BTreeMap::new();
    for c in cells {
        g.entry((c.arm.as_str(), c.model.as_str()))
            .or_default()
            .insert(c.task.as_str(), c);
    }
    g
}

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

/// Run the whole analysis.
pub fn analyze(ds: &Dataset, cfg: &Config) -> Analysis {
    let g = grid(&ds.cells);
    let models = order_models(&ds.cells);
    let all_arms: BTreeSet<&str> = ds.cells.iter().map(|c| c.arm.as_str()).collect();
    let focal = cfg
        .focal
        .clone()
        .filter(|f| all_arms.contains(f.as_str()))
        .or_else(|| {
            ["harness", "Mingbird"]
                .iter()
                .find(|a| all_arms.contains(**a))
                .map(|s| s.to_string())
        })
        .or_else(|| all_arms.iter().next().map(|s| s.to_string()))
        .unwrap_or_default();
    let ablation_prefix = format!("{focal}-");
    let is_ablation = |a: &str| a.starts_with(&ablation_prefix);

    // Means table.
    let mut rows: Vec<ArmRow> = all_arms
        .iter()
        .filter(|a| !is_ablation(a))
        .map(|arm| {
            let per: Vec<Option<&BTreeMap<&str, &Cell>>> =
                models.iter().map(|m| g.get(&(*arm, m.as_str()))).collect();
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
                overall: mean(&present),
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
            }
        })
        .collect();
    // Focal first, then competitors by overall mean descending (upstream's order).
    rows.sort_by(|a, b| {
        (b.arm == focal)
            .cmp(&(a.arm == focal))
            .then(b.overall.total_cmp(&a.overall))
            .then(a.arm.cmp(&b.arm))
    });
    let arms: Vec<String> = rows.iter().map(|r| r.arm.clone()).collect();
    let competitors: Vec<&String> = arms.iter().filter(|a| **a != focal).collect();

    // Per-model comparisons.
    let mut comparisons = Vec::new();
    let mut idx = 0u64;
    for m in &models {
        let mut block = Vec::new();
        for comp in &competitors {
            let fa = g.get(&(focal.as_str(), m.as_str()));
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

    // Pooled overall: one source shared by all competitors, bootstrap then permutation.
    let mut prng = cfg.rng.source(cfg.pooled_seed);
    let mut pooled = Vec::new();
    for comp in &competitors {
        let shared: Vec<&String> = models
            .iter()
            .filter(|m| {
                g.contains_key(&(focal.as_str(), m.as_str()))
                    && g.contains_key(&(comp.as_str(), m.as_str()))
            })
            .collect();
        if shared.is_empty() {
            continue;
        }
        let mut per_task: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        let (mut ga, mut gb, mut cells) = (0, 0, 0);
        for m in &shared {
            let (pairs, _) = paired(
                g.get(&(focal.as_str(), m.as_str())),
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

    // Failure modes, wall time, resources over all cells of main arms.
    let mut failure_modes: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let mut wall = Vec::new();
    let mut resources = Vec::new();
    let mut mechanisms = Vec::new();
    let arms_with_ablations: Vec<String> = arms
        .iter()
        .cloned()
        .chain(
            all_arms
                .iter()
                .filter(|a| is_ablation(a))
                .map(|a| a.to_string()),
        )
        .collect();
    for arm in &arms_with_ablations {
        let logged: Vec<&Cell> = ds
            .cells
            .iter()
            .filter(|c| &c.arm == arm && c.repeats_with_events > 0)
            .collect();
        if logged.is_empty() {
            continue;
        }
        let mut by: BTreeMap<String, (f64, usize)> = BTreeMap::new();
        for c in &logged {
            for (k, v) in &c.mechanisms {
                let e = by.entry(k.clone()).or_default();
                e.0 += v / logged.len() as f64;
                e.1 += usize::from(*v > 0.0);
            }
        }
        mechanisms.push(MechanismRow {
            arm: arm.clone(),
            cells: logged.len(),
            by_mechanism: by,
        });
    }
    for arm in &arms {
        let cells: Vec<&Cell> = ds.cells.iter().filter(|c| &c.arm == arm).collect();
        for c in &cells {
            for f in &c.failure_modes {
                *failure_modes
                    .entry(arm.clone())
                    .or_default()
                    .entry(f.clone())
                    .or_default() += 1;
            }
        }
        let w: Vec<f64> = cells.iter().filter_map(|c| c.wall_seconds).collect();
        if !w.is_empty() {
            wall.push(WallRow {
                arm: arm.clone(),
                n: w.len(),
                missing: cells.len() - w.len(),
                median: median(&w),
                mean: mean(&w),
            });
        }
        let fields = |c: &Cell| {
            [
                c.prompt_tokens,
                c.completion_tokens,
                c.model_calls,
                c.tool_calls,
            ]
        };
        let reporting: Vec<&&Cell> = cells
            .iter()
            .filter(|c| fields(c).iter().any(Option::is_some))
            .collect();
        if !reporting.is_empty() {
            let mut means = [None; 4];
            for (k, slot) in means.iter_mut().enumerate() {
                let v: Vec<f64> = reporting.iter().filter_map(|c| fields(c)[k]).collect();
                *slot = (!v.is_empty()).then(|| mean(&v));
            }
            resources.push(ResourceRow {
                arm: arm.clone(),
                n: reporting.len(),
                means,
            });
        }
    }

    // Ablations: upstream files, then our `<focal>-...` arms against the focal arm per model.
    let mut ablations = Vec::new();
    let mut push_ablation = |source: String,
                             baseline: &str,
                             variant: &str,
                             base: &BTreeMap<String, f64>,
                             var: &BTreeMap<String, f64>| {
        let pairs: Vec<(f64, f64)> = base
            .iter()
            .filter_map(|(t, b)| var.get(t).map(|v| (*b, *v)))
            .collect();
        if pairs.is_empty() {
            return;
        }
        let d: Vec<f64> = pairs.iter().map(|(b, v)| v - b).collect();
        let mut rng = cfg.rng.source(cfg.seed);
        ablations.push(AblationRow {
            source,
            baseline: baseline.to_string(),
            variant: variant.to_string(),
            n: d.len(),
            baseline_mean: mean(&pairs.iter().map(|p| p.0).collect::<Vec<_>>()),
            variant_mean: mean(&pairs.iter().map(|p| p.1).collect::<Vec<_>>()),
            ci: mean_ci(&d, cfg.resamples, cfg.level, rng.as_mut()),
            wilcoxon: signed_rank(&d),
        });
    };
    for f in &ds.ablations {
        let base_name = if f.variants.contains_key("baseline") {
            "baseline".to_string()
        } else {
            f.variants.keys().next().cloned().unwrap_or_default()
        };
        let base = &f.variants[&base_name];
        for (v, scores) in &f.variants {
            if *v != base_name {
                push_ablation(f.path.clone(), &base_name, v, base, scores);
            }
        }
    }
    for arm in all_arms.iter().filter(|a| is_ablation(a)) {
        for m in &models {
            let to_map = |a: &str| {
                g.get(&(a, m.as_str())).map(|c| {
                    c.iter()
                        .map(|(t, c)| (t.to_string(), c.score))
                        .collect::<BTreeMap<_, _>>()
                })
            };
            if let (Some(b), Some(v)) = (to_map(&focal), to_map(arm)) {
                push_ablation(format!("model {m}"), &focal, arm, &b, &v);
            }
        }
    }

    let tau = tau_summary(ds, cfg.focal.as_deref());
    let simulated_cells = ds.cells.iter().filter(|c| c.simulated).count();
    let mut caveats = Vec::new();
    if simulated_cells > 0 {
        caveats.push(format!(
            "SIMULATED BACKEND: {simulated_cells} of {} cells ran against the simulated model server. \
             Their scores measure the pipeline, not any real model, and must never be reported as model results.",
            ds.cells.len()
        ));
    }
    let n_tasks: BTreeSet<&str> = ds.cells.iter().map(|c| c.task.as_str()).collect();
    if !ds.cells.is_empty() {
        caveats.push(format!(
            "Small n: each per-model comparison pairs at most {} tasks; the tier-cluster analyses have \
             only {} clusters, so their intervals are coarse and no family-level claim follows from them.",
            n_tasks.len(),
            ds.cells.iter().map(|c| c.tier).collect::<BTreeSet<_>>().len()
        ));
    }
    let tie_total: usize = comparisons.iter().map(|c| c.ties).sum();
    if tie_total > 0 {
        caveats.push(format!(
            "Ties: {tie_total} paired task differences are exactly zero and are dropped by the signed-rank \
             test (so its n is smaller than the number of tasks); tied |d| get average ranks."
        ));
    }
    let unpaired: usize = comparisons.iter().map(|c| c.unpaired.len()).sum();
    if unpaired > 0 {
        caveats.push(format!(
            "Missing cells: {unpaired} task(s) exist for only one arm of a comparison and are left out of \
             that comparison (listed in the comparison table)."
        ));
    }
    if ds.superseded_attempts > 0 {
        caveats.push(format!(
            "{} attempt row(s) were superseded by a later attempt of the same cell (latest attempt wins).",
            ds.superseded_attempts
        ));
    }
    if ds.bad_event_lines > 0 {
        caveats.push(format!(
            "{} unparsable event-log line(s) (truncated writes of killed attempts) were skipped.",
            ds.bad_event_lines
        ));
    }
    if !ds.tau_errors.is_empty() {
        caveats.push(format!(
            "{} τ² cell(s) have no reward (error status) and are left out of the paired τ² tests.",
            ds.tau_errors.len()
        ));
    }
    if !ds.tau_ungraded.is_empty() {
        caveats.push(format!(
            "{} τ² cell(s) are ungraded (an NL assertion needed a judge model that was not \
             configured) and are left out of the paired τ² tests, never counted as passes.",
            ds.tau_ungraded.len()
        ));
    }
    Analysis {
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
        ablations,
        tau,
        simulated_cells,
        total_cells: ds.cells.len(),
        caveats,
    }
}

/// A τ² task counts as passed when its reward is 1 (τ²'s success criterion).
pub fn tau_pass(r: f64) -> bool {
    r >= 1.0 - 1e-9
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
    })
}

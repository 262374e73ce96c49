//! The ablation section: the summary table, per-repeat deltas against the noise floor, the
//! verdict sentence, bimodal tasks and power. Every number that could not be computed says so
//! and why — never a silent zero.

use super::{ci, fp, s, s3, table};
use crate::analysis::{AblationRow, Analysis, PowerRow};
use crate::stats::{Needed, BIMODAL_MIN_GAP, EXACT_FLIP_MAX_N};
use std::fmt::Write as _;

fn repeats_text(n: &Option<Needed>) -> String {
    match n {
        None => "not computed (needs ≥ 2 repeats)".into(),
        Some(Needed::Count(k)) => k.to_string(),
        Some(Needed::Unreachable) => {
            "not reachable: tasks differ too much, more tasks needed".into()
        }
        Some(Needed::NoVariance) => "not computed: the deltas do not vary".into(),
        Some(Needed::NoEffect) => "not computed: Δ = 0".into(),
    }
}

fn tasks_text(n: &Option<Needed>) -> String {
    match n {
        Some(Needed::Unreachable) => format!("more than {}", crate::stats::power::MAX_TASKS),
        other => repeats_text(other).replace("needs ≥ 2 repeats", "needs ≥ 2 tasks"),
    }
}

fn floor_text(r: &AblationRow) -> String {
    match (r.noise.floor, &r.noise.missing) {
        (Some(f), _) => format!("±{f:.3}"),
        (None, Some(why)) => format!("not measured: {why}"),
        (None, None) => "not measured".into(),
    }
}

fn vs_floor(x: Option<bool>) -> &'static str {
    match x {
        Some(true) => "above",
        Some(false) => "within",
        None => "–",
    }
}

fn p_text(r: &AblationRow) -> String {
    match r.perm_exact {
        Some(p) => format!("{} (exact)", fp(p)),
        None => format!("{} (MC)", fp(r.perm.p)),
    }
}

/// The whole section (empty without ablations).
pub(crate) fn section(a: &Analysis) -> String {
    let mut out = String::new();
    if a.ablations.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "## Ablations (mechanism effect Δ = baseline − variant)\n\nPositive Δ: switching the \
         mechanism off loses score. Δ is the mean over repeats of the per-repeat deltas; the CI \
         resamples tasks with all their repeats; the sign-flip test flips whole tasks. The noise \
         floor is the largest shift of the baseline's mean between two of its own repeats.\n"
    );
    let rows: Vec<Vec<String>> = a
        .ablations
        .iter()
        .map(|r| {
            vec![
                r.source.clone(),
                r.variant.clone(),
                r.baseline.clone(),
                r.n.to_string(),
                r.repeats.to_string(),
                format!("{:.3}", r.baseline_mean),
                format!("{:.3}", r.variant_mean),
                s3(r.effect),
                r.per_repeat
                    .iter()
                    .map(|d| s3(d.delta))
                    .collect::<Vec<_>>()
                    .join(" / "),
                format!("{} of {}", r.consistent, r.repeats),
                ci(&r.ci),
                p_text(r),
                fp(r.wilcoxon.p_normal),
                floor_text(r),
                vs_floor(r.effect_above_noise).into(),
                repeats_text(&r.power.repeats_needed),
                tasks_text(&r.power.tasks_needed),
            ]
        })
        .collect();
    table(
        &mut out,
        &[
            s("source"),
            s("variant"),
            s("baseline"),
            s("tasks"),
            s("repeats"),
            s("baseline mean"),
            s("variant mean"),
            s("Δ"),
            s("per-repeat Δ"),
            s("same sign"),
            s("task-cluster CI"),
            s("sign-flip p"),
            s("Wilcoxon p"),
            s("noise floor"),
            s("Δ vs floor"),
            s("repeats for 80 % power"),
            s("tasks for 80 % power"),
        ],
        &rows,
    );
    for r in &a.ablations {
        detail(&mut out, r);
    }
    if let Some(d) = a.config.power_delta {
        power_table(&mut out, a, d);
    }
    out
}

fn detail(out: &mut String, r: &AblationRow) {
    let _ = writeln!(out, "### {} vs {} ({})\n", r.variant, r.baseline, r.source);
    let _ = writeln!(out, "Verdict: {}.\n", r.verdict());
    if r.repeats > 1 {
        let rows: Vec<Vec<String>> = r
            .per_repeat
            .iter()
            .map(|d| {
                vec![
                    d.batch.clone(),
                    format!("{:.3}", d.baseline_mean),
                    format!("{:.3}", d.variant_mean),
                    s3(d.delta),
                    vs_floor(d.above_noise).into(),
                ]
            })
            .collect();
        table(
            out,
            &[
                s("repeat"),
                s("baseline"),
                s("variant"),
                s("Δ"),
                s("vs noise floor"),
            ],
            &rows,
        );
        if let (Some(f), Some((x, y))) = (r.noise.floor, &r.noise.between) {
            let _ = writeln!(
                out,
                "Noise floor ±{f:.3}: `{}` moved by that much between {x} and {y} ({} pair(s) \
                 compared); `{}`'s own repeats moved by up to {}.\n",
                r.baseline,
                r.noise.pairs,
                r.variant,
                r.variant_noise
                    .floor
                    .map_or("–".into(), |v| format!("{v:.3}"))
            );
        }
    }
    if let Some(c) = &r.components {
        let _ = writeln!(
            out,
            "Variance of the deltas: between tasks {:.4}, between repeats of a task {:.4} \
             (sd {:.3} and {:.3}).\n",
            c.task,
            c.repeat,
            c.task.sqrt(),
            c.repeat.sqrt()
        );
    }
    if !r.bimodal.is_empty() {
        let list: Vec<String> = r
            .bimodal
            .iter()
            .map(|b| {
                let f = |v: &[f64]| {
                    v.iter()
                        .map(|x| format!("{x:.3}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                format!(
                    "{} `{}`: {} | {}",
                    b.task,
                    b.arm,
                    f(&b.split.low),
                    f(&b.split.high)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "Bimodal tasks (repeats split into two modes ≥ {BIMODAL_MIN_GAP} apart): {}.\n",
            list.join("; ")
        );
    }
    power_line(out, &r.power, r);
}

fn power_line(out: &mut String, p: &PowerRow, r: &AblationRow) {
    let _ = writeln!(
        out,
        "Power for |Δ| {:.3}: {} with these {} task(s) × {} repeat(s); repeats needed for 80 %: \
         {}; tasks needed at {} repeat(s): {}.{}\n",
        p.delta,
        p.achieved
            .map_or("not computed".into(), |x| format!("{:.0} %", 100.0 * x)),
        r.n,
        r.repeats,
        repeats_text(&p.repeats_needed),
        r.repeats,
        tasks_text(&p.tasks_needed),
        if p.not_computed.is_empty() {
            String::new()
        } else {
            format!(" Not computed: {}.", p.not_computed.join("; "))
        }
    );
}

fn power_table(out: &mut String, a: &Analysis, d: f64) {
    let _ = writeln!(
        out,
        "## Power for Δ = {d:.3} (`--power`)\n\nTwo-sided paired t-test on per-task mean \
         deltas, α = 0.05, target 80 %, from each design's measured variance.\n"
    );
    let rows: Vec<Vec<String>> = a
        .ablations
        .iter()
        .filter_map(|r| r.power_at.as_ref().map(|p| (r, p)))
        .map(|(r, p)| {
            vec![
                r.source.clone(),
                r.variant.clone(),
                r.n.to_string(),
                r.repeats.to_string(),
                p.achieved
                    .map_or("not computed".into(), |x| format!("{:.0} %", 100.0 * x)),
                repeats_text(&p.repeats_needed),
                tasks_text(&p.tasks_needed),
            ]
        })
        .collect();
    table(
        out,
        &[
            s("source"),
            s("variant"),
            s("tasks"),
            s("repeats"),
            s("power now"),
            s("repeats needed"),
            s("tasks needed"),
        ],
        &rows,
    );
}

/// The methods paragraph of the ablations.
pub(crate) fn methods(a: &Analysis) -> String {
    let c = &a.config;
    format!(
        "Ablations: Δ = baseline − variant per repeat (batch: both arms ran together, cell by \
         cell), averaged over repeats; a task-cluster bootstrap CI ({} resamples, seed {} + i, \
         tasks drawn with all their repeats), a sign-flip permutation over per-task mean deltas \
         (seed {} + i; exact over all 2^n sign patterns for n ≤ {EXACT_FLIP_MAX_N}) and the \
         signed-rank test of those means, i numbering the ablations in table order. The noise \
         floor is the largest |mean difference| between two repeats of the baseline; a delta is \
         above it when its |Δ| is larger. Power: two-sided one-sample t-test on per-task mean \
         deltas (noncentral t, α = 0.05, 80 %), variance split into between-task and \
         between-repeat parts (one-way ANOVA estimator). A task is flagged bimodal when its \
         repeats split at a gap ≥ {BIMODAL_MIN_GAP} that is at least twice the spread inside \
         either side.\n\n",
        c.resamples, c.seed, c.perm_seed
    )
}

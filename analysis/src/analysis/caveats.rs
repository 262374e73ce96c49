//! The caveats of a report, each built from the numbers it warns about (never fixed text with
//! numbers that could be stale).

use super::{AblationRow, Analysis, Comparison};
use crate::model::Dataset;
use std::collections::{BTreeMap, BTreeSet};

/// Every caveat that applies, in a fixed order.
pub(crate) fn caveats(ds: &Dataset, a: &Analysis) -> Vec<String> {
    let mut out = Vec::new();
    if a.simulated_cells > 0 {
        out.push(format!(
            "SIMULATED BACKEND: {} of {} cells ran against the simulated model server. \
             Their scores measure the pipeline, not any real model, and must never be reported as model results.",
            a.simulated_cells,
            ds.cells.len()
        ));
    }
    if a.simulated_tau_rows > 0 {
        out.push(format!(
            "SIMULATED BACKEND: {} τ² rows ran against the simulated model server. \
             Their rewards measure the pipeline, not any real model, and must never be reported as model results.",
            a.simulated_tau_rows
        ));
    }
    let n_tasks: BTreeSet<&str> = ds.cells.iter().map(|c| c.task.as_str()).collect();
    if !ds.cells.is_empty() {
        out.push(format!(
            "Small n: each per-model comparison pairs at most {} tasks; the tier-cluster analyses have \
             only {} clusters, so their intervals are coarse and no family-level claim follows from them.",
            n_tasks.len(),
            ds.cells.iter().map(|c| c.tier).collect::<BTreeSet<_>>().len()
        ));
    }
    if ds.think.len() > 1 {
        let each: Vec<String> = ds
            .think
            .iter()
            .map(|(setting, files)| {
                let files: Vec<&str> = files.iter().map(String::as_str).collect();
                format!("{setting} in {}", files.join(", "))
            })
            .collect();
        out.push(format!(
            "The runs compared differ in thinking (--think): {}. A score moves with the setting,              so cells of different settings are not comparable as they stand.",
            each.join("; ")
        ));
    }
    comparisons(&a.comparisons, &mut out);
    timeouts(ds, a, &mut out);
    for (file, label) in &ds.unnamed_models {
        out.push(format!(
            "{file} has no model column (one model ran every cell); its cells are labelled \
             model `{label}`."
        ));
    }
    for (file, n) in &ds.unmatched_annotations {
        out.push(format!(
            "{n} row(s) of {file} match no scored cell in the inputs; their extra columns are \
             not shown."
        ));
    }
    ablations(&a.ablations, &mut out);
    if ds.superseded_attempts > 0 {
        out.push(format!(
            "{} attempt row(s) were superseded by a later attempt of the same cell (latest attempt wins).",
            ds.superseded_attempts
        ));
    }
    if !ds.scorer_errors.is_empty() {
        let shown: Vec<String> = ds.scorer_errors.iter().take(5).map(|e| e.label()).collect();
        out.push(format!(
            "{} attempt(s) are scorer errors (the scoring machine lacked a program or module a \
             check runs) and are left out of every mean, never counted as 0: {}{}.",
            ds.scorer_errors.len(),
            shown.join("; "),
            if ds.scorer_errors.len() > shown.len() {
                "; …"
            } else {
                ""
            }
        ));
    }
    if ds.bad_event_lines > 0 {
        out.push(format!(
            "{} unparsable event-log line(s) (truncated writes of killed attempts) were skipped.",
            ds.bad_event_lines
        ));
    }
    if !ds.tau_errors.is_empty() {
        out.push(format!(
            "{} τ² cell(s) have no reward (error status) and are left out of the paired τ² tests.",
            ds.tau_errors.len()
        ));
    }
    if !ds.tau_zeroed.is_empty() {
        out.push(format!(
            "{} τ² error cell(s) were scored 0 (the paper's policy for error cells left after the \
             retry passes) and count as fails in the paired τ² tests.",
            ds.tau_zeroed.len()
        ));
    }
    if !ds.tau_ungraded.is_empty() {
        out.push(format!(
            "{} τ² cell(s) are ungraded (an NL assertion needed a judge model that was not \
             configured) and are left out of the paired τ² tests, never counted as passes.",
            ds.tau_ungraded.len()
        ));
    }
    out
}

fn comparisons(c: &[Comparison], out: &mut Vec<String>) {
    let tie_total: usize = c.iter().map(|c| c.ties).sum();
    if tie_total > 0 {
        out.push(format!(
            "Ties: {tie_total} paired task differences are exactly zero and are dropped by the signed-rank \
             test (so its n is smaller than the number of tasks); tied |d| get average ranks."
        ));
    }
    let unpaired: usize = c.iter().map(|c| c.unpaired.len()).sum();
    if unpaired > 0 {
        out.push(format!(
            "Missing cells: {unpaired} task(s) exist for only one arm of a comparison and are left out of \
             that comparison (listed in the comparison table)."
        ));
    }
}

/// Timed-out cells without a score: what they count as, and what the means would be the other way.
fn timeouts(ds: &Dataset, a: &Analysis, out: &mut Vec<String>) {
    // (arm, model) -> (timed-out repeats, every cell's score, scores of cells without one).
    type Tally = (usize, Vec<f64>, Vec<f64>);
    let mut by: BTreeMap<(&str, &str), Tally> = BTreeMap::new();
    for c in &ds.cells {
        let e = by.entry((c.arm.as_str(), c.model.as_str())).or_default();
        e.0 += c.timeouts;
        // With the timeouts as 0 (when kept) and without the timed-out cells.
        e.1.push(c.score);
        if c.timeouts == 0 {
            e.2.push(c.score);
        }
    }
    let excluded = a.config.timeouts == crate::load::TimeoutPolicy::Exclude;
    for ((arm, model), (n, all, scored)) in by {
        if n == 0 {
            continue;
        }
        let m = crate::stats::mean(&all);
        if excluded {
            out.push(format!(
                "{arm} × {model}: {n} timed-out repeat(s) without a score are left out \
                 (`--timeouts exclude`); the mean over the rest is {m:.3}."
            ));
        } else {
            let other = if scored.is_empty() {
                "every cell timed out".to_string()
            } else {
                format!(
                    "without the timed-out cells it would be {:.3} over {} task(s), the \
                     published frontier-probe convention (`--timeouts exclude`)",
                    crate::stats::mean(&scored),
                    scored.len()
                )
            };
            out.push(format!(
                "{arm} × {model}: {n} timed-out repeat(s) without a score count as 0 (mean \
                 {m:.3}); {other}."
            ));
        }
    }
}

fn ablations(rows: &[AblationRow], out: &mut Vec<String>) {
    for r in rows {
        let name = format!("{} vs {} ({})", r.variant, r.baseline, r.source);
        let mut s = format!("Ablation {name}: Δ {:+.3}; {}.", r.effect, r.verdict());
        if let (Some(f), Some((x, y))) = (r.noise.floor, &r.noise.between) {
            s.push_str(&format!(
                " A rerun of `{}` in the same design moved its mean by up to {f:.3} ({x} vs {y}).",
                r.baseline
            ));
        }
        if !r.bimodal.is_empty() {
            let tasks: BTreeSet<&str> = r.bimodal.iter().map(|b| b.task.as_str()).collect();
            s.push_str(&format!(
                " {} of {} task(s) have repeats that split into two modes ({}): on them a \
                 per-repeat Δ mostly says which mode each repeat landed in.",
                tasks.len(),
                r.n,
                tasks.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        match &r.power.repeats_needed {
            Some(crate::stats::Needed::Count(k)) => s.push_str(&format!(
                " Detecting |Δ| {:.3} at 80 % power with these {} tasks needs {k} repeat(s) (this design has {}).",
                r.power.delta, r.n, r.repeats
            )),
            Some(crate::stats::Needed::Unreachable) => s.push_str(&format!(
                " |Δ| {:.3} cannot reach 80 % power with {} tasks at any number of repeats: the tasks differ too much; more tasks are needed.",
                r.power.delta, r.n
            )),
            _ => {}
        }
        out.push(s);
    }
}

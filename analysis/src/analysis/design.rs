//! Building the repeated, paired designs of the ablations: for each variant, its baseline's
//! and its own score on every task in every batch (repeat). A design must be balanced: every
//! task has a score of both arms in every batch the variant ran. Anything missing is an error
//! naming it — the per-repeat deltas would otherwise compare different task sets.

use super::means::Grid;
use crate::error::{Error, Result};
use crate::model::AblationFile;
use std::collections::{BTreeMap, BTreeSet};

/// One balanced design.
#[derive(Clone, Debug)]
pub(crate) struct Design {
    /// Where it came from (a file, or `cells.csv` arms of one model).
    pub source: String,
    pub model: Option<String>,
    pub baseline: String,
    pub variant: String,
    pub tasks: Vec<String>,
    pub batches: Vec<String>,
    /// `[task][batch]`.
    pub base: Vec<Vec<f64>>,
    pub var: Vec<Vec<f64>>,
}

/// At most this many missing scores are listed in a message.
const LIST: usize = 8;

fn listed(v: &[String]) -> String {
    let mut s = v.iter().take(LIST).cloned().collect::<Vec<_>>().join(", ");
    if v.len() > LIST {
        s.push_str(&format!(" and {} more", v.len() - LIST));
    }
    s
}

/// `task -> batch -> score` of two arms into a balanced design, or the error naming what is
/// missing. `what` names the source in messages.
#[allow(clippy::too_many_arguments)]
fn balanced(
    what: &str,
    source: String,
    model: Option<String>,
    baseline: &str,
    variant: &str,
    base: &BTreeMap<String, BTreeMap<String, f64>>,
    var: &BTreeMap<String, BTreeMap<String, f64>>,
    batches: Vec<String>,
    tasks: Vec<String>,
) -> Result<Design> {
    let base_batches: BTreeSet<&String> = base.values().flat_map(|b| b.keys()).collect();
    let orphan: Vec<String> = batches
        .iter()
        .filter(|b| !base_batches.contains(b))
        .cloned()
        .collect();
    if !orphan.is_empty() {
        return Err(Error::Design(format!(
            "{what}: variant `{variant}` ran in {} {} but baseline `{baseline}` has no score \
             there: a variant must be compared with its baseline from the same batch (run both \
             with `lrab ablate`)",
            if orphan.len() == 1 {
                "batch"
            } else {
                "batches"
            },
            listed(&orphan)
        )));
    }
    let mut missing = Vec::new();
    let mut b_rows = Vec::new();
    let mut v_rows = Vec::new();
    for t in &tasks {
        let mut br = Vec::new();
        let mut vr = Vec::new();
        for b in &batches {
            match base.get(t).and_then(|x| x.get(b)) {
                Some(s) => br.push(*s),
                None => missing.push(format!("{baseline} {t} in {b}")),
            }
            match var.get(t).and_then(|x| x.get(b)) {
                Some(s) => vr.push(*s),
                None => missing.push(format!("{variant} {t} in {b}")),
            }
        }
        b_rows.push(br);
        v_rows.push(vr);
    }
    if !missing.is_empty() {
        return Err(Error::Design(format!(
            "{what}: {} score(s) missing for the paired design of `{variant}` vs `{baseline}` \
             (every task needs both arms in every repeat): {}",
            missing.len(),
            listed(&missing)
        )));
    }
    Ok(Design {
        source,
        model,
        baseline: baseline.to_string(),
        variant: variant.to_string(),
        tasks,
        batches,
        base: b_rows,
        var: v_rows,
    })
}

/// Designs of a published ablation file: every variant against the file's baseline.
pub(crate) fn from_file(f: &AblationFile) -> Result<Vec<Design>> {
    let label =
        |m: &BTreeMap<String, BTreeMap<u32, f64>>| -> BTreeMap<String, BTreeMap<String, f64>> {
            m.iter()
                .map(|(t, r)| {
                    (
                        t.clone(),
                        r.iter().map(|(k, s)| (format!("r{k}"), *s)).collect(),
                    )
                })
                .collect()
        };
    let base = label(&f.variants[&f.baseline]);
    let mut out = Vec::new();
    for (v, scores) in &f.variants {
        if *v == f.baseline {
            continue;
        }
        let var = label(scores);
        let mut ks: BTreeSet<u32> = scores.values().flat_map(|r| r.keys().copied()).collect();
        ks.extend(
            f.variants[&f.baseline]
                .values()
                .flat_map(|r| r.keys().copied()),
        );
        let batches = ks.into_iter().map(|k| format!("r{k}")).collect();
        let tasks: BTreeSet<String> = base.keys().chain(var.keys()).cloned().collect();
        out.push(balanced(
            &f.path,
            f.path.clone(),
            None,
            &f.baseline,
            v,
            &base,
            &var,
            batches,
            tasks.into_iter().collect(),
        )?);
    }
    Ok(out)
}

/// The baseline of a variant arm: the longest arm `B` with the variant named `B-no-…`, else the
/// focal arm when the variant is named `<focal>-…`. `None` for a main arm.
pub(crate) fn baseline_of<'a>(
    arm: &str,
    arms: &BTreeSet<&'a str>,
    focal: &'a str,
) -> Option<&'a str> {
    arms.iter()
        .filter(|b| **b != arm && arm.starts_with(&format!("{b}-no-")))
        .max_by_key(|b| b.len())
        .copied()
        .or_else(|| {
            (!focal.is_empty() && arm != focal && arm.starts_with(&format!("{focal}-")))
                .then_some(focal)
        })
}

/// Designs of our cells: each variant arm against its baseline, per model, on the batches the
/// variant ran (the baseline's other batches, e.g. a separate main run, are not used).
pub(crate) fn from_cells(
    g: &Grid,
    models: &[String],
    variants: &[(String, String)],
) -> Result<Vec<Design>> {
    let mut out = Vec::new();
    for (variant, baseline) in variants {
        for m in models {
            let Some(vcells) = g.get(&(variant.as_str(), m.as_str())) else {
                continue;
            };
            let what = format!("variant `{variant}`, model `{m}`");
            let Some(bcells) = g.get(&(baseline.as_str(), m.as_str())) else {
                return Err(Error::Design(format!(
                    "{what}: no cells of its baseline `{baseline}` for this model: a variant \
                     must be compared with its baseline from the same batch (run both with \
                     `lrab ablate`)"
                )));
            };
            let mut batches: Vec<String> = Vec::new();
            for c in vcells.values() {
                for b in &c.batches {
                    if !batches.contains(b) {
                        batches.push(b.clone());
                    }
                }
            }
            let as_map = |cells: &BTreeMap<&str, &crate::model::Cell>| {
                cells
                    .iter()
                    .map(|(t, c)| {
                        (
                            t.to_string(),
                            c.batches
                                .iter()
                                .cloned()
                                .zip(c.repeat_scores.iter().copied())
                                .collect::<BTreeMap<_, _>>(),
                        )
                    })
                    .collect::<BTreeMap<_, _>>()
            };
            out.push(balanced(
                &what,
                format!("model {m}"),
                Some(m.clone()),
                baseline,
                variant,
                &as_map(bcells),
                &as_map(vcells),
                batches,
                vcells.keys().map(|t| t.to_string()).collect(),
            )?);
        }
    }
    Ok(out)
}

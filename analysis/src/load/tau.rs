//! The τ² inputs: our results CSV (`domain,task,arm,trial,reward,...`, as `lrab tau2 run`
//! writes it; reward `ungraded` = no judge) and the published per-domain manifests
//! `{task: {arm: {status, reward, wall}}}`. Cells without a reward are kept aside and counted,
//! never read as a fail or a pass (docs/statistics.md, "Inputs").

use super::table::Table;
use crate::error::{input, Error, Result};
use crate::model::Dataset;
use std::collections::BTreeMap;
use std::path::Path;

/// Columns of our τ² results CSV.
pub(crate) const REQUIRED: &[&str] = &["domain", "task", "arm", "reward"];

/// Read our τ² results CSV; "first trial" means trial 0.
pub(crate) fn read_csv(t: &Table, ds: &mut Dataset) -> Result<()> {
    // (domain, task, arm) -> (trial, reward) in trial order, so "first trial" means trial 0.
    let mut trials: BTreeMap<(String, String, String), BTreeMap<u64, f64>> = BTreeMap::new();
    for i in 0..t.rows {
        let domain = t.req("domain", i)?.to_string();
        let task = t.req("task", i)?.to_string();
        let arm = t.req("arm", i)?.to_string();
        // absent in files written before the column existed: those runs were not labelled
        if t.flag("simulated", i)? {
            ds.tau_simulated += 1;
        }
        if t.get("reward", i) == Some("ungraded") {
            ds.tau_ungraded.push(format!(
                "{}:{} ({domain}/{task}/{arm})",
                t.path,
                Table::line(i)
            ));
            continue;
        }
        let trial = if t.columns.contains_key("trial") {
            t.int("trial", i)?
        } else {
            0
        };
        match t.score("reward", i)? {
            Some(r) => {
                let slot = trials
                    .entry((domain.clone(), task.clone(), arm.clone()))
                    .or_default();
                if slot.insert(trial, r).is_some() {
                    return Err(input!(
                        "{}:{}: duplicate row for domain `{domain}`, task `{task}`, arm `{arm}`, trial {trial}",
                        t.path,
                        Table::line(i)
                    ));
                }
            }
            None => ds.tau_errors.push(format!(
                "{}:{} ({domain}/{task}/{arm})",
                t.path,
                Table::line(i)
            )),
        }
    }
    for ((domain, task, arm), rewards) in trials {
        ds.tau
            .entry(domain)
            .or_default()
            .entry(task)
            .or_default()
            .entry(arm)
            .or_default()
            .extend(rewards.into_values());
    }
    Ok(())
}

/// Read a τ² manifest `{task: {arm: {status, reward, wall}}}`; the domain is the file name up to
/// `_manifest` (`retail_manifest_nt0.json` -> `retail`).
pub(crate) fn read_manifest(path: &Path, ds: &mut Dataset) -> Result<()> {
    let shown = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::io(&shown, "cannot read file", e))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| input!("{shown}: not valid JSON: {e}"))?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("tau2");
    let domain = stem.split("_manifest").next().unwrap_or(stem).to_string();
    if ds.tau.contains_key(&domain) {
        return Err(input!(
            "{shown}: a second manifest for domain `{domain}` (give one file per domain)"
        ));
    }
    let obj = v
        .as_object()
        .ok_or_else(|| input!("{shown}: expected an object of tasks"))?;
    let dom = ds.tau.entry(domain.clone()).or_default();
    for (task, arms) in obj {
        let arms = arms
            .as_object()
            .ok_or_else(|| input!("{shown}: task `{task}`: expected an object of arms"))?;
        for (arm, cell) in arms {
            match cell.get("reward").and_then(|r| r.as_f64()) {
                Some(r) if (0.0..=1.0).contains(&r) => dom
                    .entry(task.clone())
                    .or_default()
                    .entry(arm.clone())
                    .or_default()
                    .push(r),
                Some(r) => {
                    return Err(input!(
                        "{shown}: task `{task}`, arm `{arm}`: reward {r} outside [0, 1]"
                    ))
                }
                None => ds
                    .tau_errors
                    .push(format!("{shown} ({domain}/{task}/{arm}: no reward)")),
            }
        }
    }
    Ok(())
}

//! The τ² inputs: our results CSV (`domain,task,arm,trial,reward,...`, as `lrab tau2 run`
//! writes it; reward `ungraded` = no judge) and the published per-domain manifests
//! `{task: {arm: {status, reward, wall}}}`. Cells without a reward are kept aside and counted,
//! never read as a fail or a pass (docs/statistics.md, "Inputs").

use crate::error::{input, Error, Result};
use crate::model::Dataset;
use lrab_records::Tau2Reward;
use std::collections::BTreeMap;
use std::path::Path;

/// Columns of our τ² results CSV (`lrab_records::TAU2_CSV_REQUIRED`).
pub(crate) const REQUIRED: &[&str] = &lrab_records::TAU2_CSV_REQUIRED;

/// Read our τ² results CSV, typed (`lrab_records::read_tau2_csv`); "first trial" means trial 0.
pub(crate) fn read_csv(path: &Path, ds: &mut Dataset) -> Result<()> {
    let shown = path.display().to_string();
    let rows = lrab_records::read_tau2_csv(path).map_err(|e| match e {
        lrab_records::RecordError::Io { err, .. } => Error::io(&shown, "cannot read file", err),
        other => input!("{other}"),
    })?;
    // (domain, task, arm) -> (trial, reward) in trial order, so "first trial" means trial 0.
    let mut trials: BTreeMap<(String, String, String), BTreeMap<u64, f64>> = BTreeMap::new();
    for (i, r) in rows.into_iter().enumerate() {
        let line = i + 2;
        if r.simulated {
            ds.tau_simulated += 1;
        }
        let here = format!("{shown}:{line} ({}/{}/{})", r.domain, r.task, r.arm);
        let score = match r.reward {
            Tau2Reward::Ungraded => {
                ds.tau_ungraded.push(here);
                continue;
            }
            Tau2Reward::SetAside => {
                ds.tau_errors.push(here);
                continue;
            }
            Tau2Reward::Score(x) => x,
        };
        if ["agent_error", "user_error", "infrastructure_error"].contains(&r.termination.as_str()) {
            ds.tau_zeroed.push(here);
        }
        let (domain, task, arm, trial) = (r.domain, r.task, r.arm, r.trial);
        let slot = trials
            .entry((domain.clone(), task.clone(), arm.clone()))
            .or_default();
        if slot.insert(trial, score).is_some() {
            return Err(input!(
                "{shown}:{line}: duplicate row for domain `{domain}`, task `{task}`, arm `{arm}`, trial {trial}"
            ));
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

/// Read a τ² manifest `{task: {arm: {status, reward, wall}}}` (typed:
/// [`lrab_records::Tau2Manifest`]) — a published one or one `lrab tau2 run` wrote; the domain
/// is the file name up to `_manifest` (`retail_manifest_nt0.json` -> `retail`). Several
/// manifests of one domain (a run's and the paper's) are merged, so their arms pair task by
/// task; one task × arm given twice is an error. A cell with `rewards` (a run of several
/// trials) gives every trial; cells without a reward are kept aside and counted (`ungraded`
/// ones as ungraded).
pub(crate) fn read_manifest(path: &Path, ds: &mut Dataset) -> Result<()> {
    let shown = path.display().to_string();
    let m = lrab_records::Tau2Manifest::read(path).map_err(|e| match e {
        lrab_records::RecordError::Io { err, .. } => Error::io(&shown, "cannot read file", err),
        other => input!("{other}"),
    })?;
    let domain = lrab_records::Tau2Manifest::domain_of(path);
    for (task, arms) in &m.tasks {
        for (arm, cell) in arms {
            let slot = ds
                .tau
                .entry(domain.clone())
                .or_default()
                .entry(task.clone())
                .or_default()
                .entry(arm.clone())
                .or_default();
            if !slot.is_empty() {
                return Err(input!(
                    "{shown}: domain `{domain}`, task `{task}`, arm `{arm}` is already in another input (give each arm once per domain; `lrab tau2 run --arm-name` names a run's arm apart from a published one)"
                ));
            }
            for r in cell.trial_rewards() {
                match r {
                    Some(r) => {
                        if cell.status == lrab_records::CellStatus::Error {
                            ds.tau_zeroed
                                .push(format!("{shown} ({domain}/{task}/{arm}: error, scored 0)"));
                        }
                        slot.push(r)
                    }
                    None if cell.status == lrab_records::CellStatus::Ungraded => ds
                        .tau_ungraded
                        .push(format!("{shown} ({domain}/{task}/{arm})")),
                    None => ds
                        .tau_errors
                        .push(format!("{shown} ({domain}/{task}/{arm}: no reward)")),
                }
            }
        }
    }
    Ok(())
}

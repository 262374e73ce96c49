//! Reading the input files into a [`Dataset`].
//!
//! The format of each file is recognised from its header, never from its name (the table of
//! formats is in docs/statistics.md, "Inputs"): our `cells.csv`; the published per-cell CSVs
//! (`harness,task,model,score,...`, or `arm,task,score,...` without a model column); per-cell
//! annotation files (failure forms, resource counts); published ablation files in the long and
//! the wide repeat layout; our τ² results `domain,task,arm,trial,reward,...` (as `lrab tau2 run`
//! writes them; reward `ungraded` = no judge), and τ² manifests (`*.json`). Every value is
//! parsed and checked, and every problem is reported with the file, line and column.

mod ablation;
mod annotations;
mod cells;
mod table;

pub use cells::TimeoutPolicy;

use crate::error::Error;
use crate::model::Dataset;
// The τ² readers below report with anyhow (converted at the boundary by `tau_error`).
use anyhow::{anyhow, bail, Context, Result};
use std::collections::BTreeMap;
use std::path::Path;
use table::Table;

/// Columns of our cells.csv that the analysis needs (the others are optional).
pub const CELLS_REQUIRED: &[&str] = &[
    "run_id", "arm", "model", "task", "repeat", "attempt", "score",
];
/// Columns of a published per-cell CSV (`arm` may stand for `harness`; `model` may be absent).
pub const UPSTREAM_REQUIRED: &[&str] = &["harness", "task", "model", "score"];
/// Columns of the published ablation CSV (long layout).
pub const ABLATION_REQUIRED: &[&str] = ablation::LONG_REQUIRED;
/// Columns of our τ² results CSV.
pub const TAU_REQUIRED: &[&str] = &["domain", "task", "arm", "reward"];

/// How files are read.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// What a timed-out attempt without a score counts as.
    pub timeouts: TimeoutPolicy,
}

fn read_tau_csv(t: &Table, ds: &mut Dataset) -> Result<()> {
    // (domain, task, arm) -> (trial, reward) in trial order, so "first trial" means trial 0.
    let mut trials: BTreeMap<(String, String, String), BTreeMap<u64, f64>> = BTreeMap::new();
    for i in 0..t.rows {
        let domain = t.req("domain", i)?.to_string();
        let task = t.req("task", i)?.to_string();
        let arm = t.req("arm", i)?.to_string();
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
                    bail!(
                        "{}:{}: duplicate row for domain `{domain}`, task `{task}`, arm `{arm}`, trial {trial}",
                        t.path,
                        Table::line(i)
                    );
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
fn read_manifest(path: &Path, ds: &mut Dataset) -> Result<()> {
    let shown = path.display().to_string();
    let text =
        std::fs::read_to_string(path).with_context(|| format!("{shown}: cannot read file"))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| anyhow!("{shown}: not valid JSON: {e}"))?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("tau2");
    let domain = stem.split("_manifest").next().unwrap_or(stem).to_string();
    if ds.tau.contains_key(&domain) {
        bail!("{shown}: a second manifest for domain `{domain}` (give one file per domain)");
    }
    let obj = v
        .as_object()
        .ok_or_else(|| anyhow!("{shown}: expected an object of tasks"))?;
    let dom = ds.tau.entry(domain.clone()).or_default();
    for (task, arms) in obj {
        let arms = arms
            .as_object()
            .ok_or_else(|| anyhow!("{shown}: task `{task}`: expected an object of arms"))?;
        for (arm, cell) in arms {
            match cell.get("reward").and_then(|r| r.as_f64()) {
                Some(r) if (0.0..=1.0).contains(&r) => dom
                    .entry(task.clone())
                    .or_default()
                    .entry(arm.clone())
                    .or_default()
                    .push(r),
                Some(r) => bail!("{shown}: task `{task}`, arm `{arm}`: reward {r} outside [0, 1]"),
                None => ds
                    .tau_errors
                    .push(format!("{shown} ({domain}/{task}/{arm}: no reward)")),
            }
        }
    }
    Ok(())
}

/// Load every input file into one dataset, with the default [`LoadOptions`].
pub fn load(paths: &[std::path::PathBuf]) -> crate::Result<Dataset> {
    load_with(paths, &LoadOptions::default())
}

/// The τ² readers report with anyhow; their messages already name the file and line.
fn tau_error(e: anyhow::Error) -> Error {
    Error::Input(format!("{e:#}"))
}

/// Load every input file into one dataset.
pub fn load_with(paths: &[std::path::PathBuf], opts: &LoadOptions) -> crate::Result<Dataset> {
    let mut ds = Dataset::default();
    let mut b = cells::Builder::default();
    let mut notes: Vec<(String, Vec<annotations::Row>)> = Vec::new();
    for p in paths {
        let shown = p.display().to_string();
        if p.extension().and_then(|e| e.to_str()) == Some("json") {
            read_manifest(p, &mut ds).map_err(tau_error)?;
            ds.sources.push((shown, "tau2 manifest".into()));
            continue;
        }
        let t = Table::read(p)?;
        let per_cell = (t.has(&["harness"]) || t.has(&["arm"])) && t.has(&["task", "score"]);
        let kind = if t.has(CELLS_REQUIRED) {
            cells::read_cells(&t, &mut b)?;
            "cells.csv"
        } else if annotations::is_annotation(&t) {
            notes.push((shown.clone(), annotations::read(&t)?));
            "per-cell annotations"
        } else if per_cell {
            let label = p
                .file_stem()
                .map_or("unnamed".into(), |s| s.to_string_lossy().into_owned());
            if !t.has(&["model"]) {
                ds.unnamed_models.push((shown.clone(), label.clone()));
            }
            cells::read_upstream(&t, &mut b, &label)?;
            "upstream per-cell scores"
        } else if t.has(ABLATION_REQUIRED) {
            ds.ablations.push(ablation::read_long(&t)?);
            "upstream ablation (long)"
        } else if ablation::is_wide(&t) {
            ds.ablations.push(ablation::read_wide(&t)?);
            "upstream ablation (wide repeats)"
        } else if t.has(TAU_REQUIRED) {
            read_tau_csv(&t, &mut ds).map_err(tau_error)?;
            "tau2 results"
        } else {
            let formats = [
                ("cells.csv", CELLS_REQUIRED),
                ("upstream per-cell scores", UPSTREAM_REQUIRED),
                ("upstream ablation (long)", ABLATION_REQUIRED),
                (
                    "upstream ablation (wide: task,baseline_r1,<variant>_r1,…)",
                    &["task", "baseline_r1"][..],
                ),
                ("tau2 results", TAU_REQUIRED),
            ];
            // Name the closest format and what it lacks.
            let (name, cols) = formats
                .iter()
                .min_by_key(|(_, c)| t.missing(c).len() * 100 / c.len())
                .expect("formats");
            return Err(Error::Input(format!(
                "{shown}: unrecognised CSV header [{}]; closest format is {name}, missing \
                 column(s): {}",
                t.header.join(","),
                t.missing(cols).join(", ")
            )));
        };
        ds.sources.push((shown, kind.into()));
    }
    ds.superseded_attempts = b.superseded;
    let (mut cells, bad_event_lines) = b.finish(opts.timeouts);
    for (file, rows) in notes {
        let n = rows.len();
        let unmatched = annotations::attach(&mut cells, rows)?;
        if n > 0 && unmatched == n {
            return Err(Error::Input(format!(
                "{file}: none of its {n} annotation rows matches a scored cell; give the file \
                 with the scores of the same cells too (e.g. lrab_scores.csv)"
            )));
        }
        if unmatched > 0 {
            ds.unmatched_annotations.push((file, unmatched));
        }
    }
    ds.cells = cells;
    ds.bad_event_lines = bad_event_lines;
    Ok(ds)
}

//! `lrab merge`: combines run folders of one matrix (typically the shards of a distributed run)
//! into one. Attempt folders are copied, rows re-labelled with the merged run id; a cell that
//! appears in two inputs, inputs of different matrices, or simulated mixed with real results
//! are errors, and the output is only written when every input checks out.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use lrab_records::CellRow;

use super::manifest::Manifest;
use super::matrix;
use super::resume;

/// What a merge produced.
#[derive(Debug)]
pub struct MergeReport {
    pub out: PathBuf,
    pub rows: usize,
    pub cells_planned: usize,
    /// Planned cells with no final attempt in any input.
    pub missing: usize,
}

pub fn merge(out: &Path, inputs: &[PathBuf]) -> Result<MergeReport> {
    if inputs.is_empty() {
        bail!("merge: give at least one run folder");
    }
    if out.exists() && std::fs::read_dir(out)?.next().is_some() {
        bail!("merge: output {} exists and is not empty", out.display());
    }
    let mut manifests = Vec::new();
    let mut all: Vec<(PathBuf, CellRow)> = Vec::new();
    let mut seen = std::collections::BTreeMap::new();
    for dir in inputs {
        let m = Manifest::read(dir)?;
        if let Some(first) = manifests.first() {
            let f: &Manifest = first;
            let same = f.matrix.arms == m.matrix.arms
                && f.matrix.models == m.matrix.models
                && f.matrix.tasks == m.matrix.tasks
                && f.matrix.repeats == m.matrix.repeats;
            if !same {
                bail!(
                    "merge: {} is a different matrix than {} (arms/models/tasks/repeats differ)",
                    dir.display(),
                    inputs[0].display()
                );
            }
            if f.simulated != m.simulated {
                bail!(
                    "merge: {} mixes simulated and real-backend results",
                    dir.display()
                );
            }
        }
        for r in resume::read_rows_lenient(&dir.join("cells.csv"))? {
            let k = (
                r.arm.clone(),
                r.model.clone(),
                r.task.clone(),
                r.repeat,
                r.attempt,
            );
            if let Some(prev) = seen.insert(k, dir.clone()) {
                bail!(
                    "merge: {} × {} × {} #{} attempt {} is in both {} and {}",
                    r.arm,
                    r.model,
                    r.task,
                    r.repeat,
                    r.attempt,
                    prev.display(),
                    dir.display()
                );
            }
            if !dir.join(&r.attempt_dir).is_dir() {
                bail!(
                    "merge: {}: attempt folder {} is missing",
                    dir.display(),
                    r.attempt_dir
                );
            }
            all.push((dir.clone(), r));
        }
        manifests.push(m);
    }
    let out_id = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .context("merge: output needs a folder name")?;
    std::fs::create_dir_all(out)?;
    all.sort_by(|a, b| {
        (&a.1.arm, &a.1.model, &a.1.task, a.1.repeat, a.1.attempt).cmp(&(
            &b.1.arm,
            &b.1.model,
            &b.1.task,
            b.1.repeat,
            b.1.attempt,
        ))
    });
    for (dir, r) in &all {
        lrab_tasks::fsutil::copy_tree(&dir.join(&r.attempt_dir), &out.join(&r.attempt_dir))
            .map_err(|e| anyhow::anyhow!("merge: copy {}: {e}", r.attempt_dir))?;
        let mut r = r.clone();
        r.run_id = out_id.clone();
        r.append_to(&out.join("cells.csv"))?;
    }
    let mut journal = String::new();
    for dir in inputs {
        if let Ok(t) = std::fs::read_to_string(dir.join("attempts.jsonl")) {
            for l in t
                .lines()
                .filter(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
            {
                journal.push_str(l);
                journal.push('\n');
            }
        }
    }
    std::fs::write(out.join("attempts.jsonl"), journal)?;
    let mut m = manifests[0].clone();
    // a shard whose rows ran on the simulator keeps the merged run labelled simulated
    m.simulated |= all.iter().any(|(_, r)| r.simulated);
    let cells = matrix::expand(
        &m.matrix.arms,
        &m.matrix.models,
        &m.matrix.tasks,
        m.matrix.repeats,
    );
    m.run_id = out_id;
    m.matrix.shard = None;
    m.cells_planned = cells.len();
    m.note = format!(
        "{}merged from: {}",
        if m.simulated {
            "SIMULATED backend; "
        } else {
            ""
        },
        inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    m.write(out)?;
    super::write_plan(&out.join("plan.jsonl"), &cells)?;
    let rows: Vec<CellRow> = all.into_iter().map(|(_, r)| r).collect();
    let missing = resume::pending(&cells, &rows, m.matrix.retries).len();
    Ok(MergeReport {
        out: out.to_path_buf(),
        rows: rows.len(),
        cells_planned: cells.len(),
        missing,
    })
}

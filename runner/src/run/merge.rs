//! `lrab merge`: combines run folders of one matrix (typically the shards of a distributed run)
//! into one. Attempt folders (and the `lost/` attempts a backend broke, and the `interrupted/`
//! ones a resume set aside) are copied, rows re-labelled with the merged run id. A cell that
//! appears in two inputs is an error, and so is an attempt folder under `cells/` without a row
//! (a runner stopped during it and the input was not resumed). So are inputs whose manifests disagree on the work
//! or the code (`Manifest::disagreements`: matrix and knobs, suite commit, task-pack hash, arm
//! versions, model digests, simulated or real) — the error names the field, both values and
//! both files. Shards that differ only in what differs between hosts (host, backend, paths)
//! merge. The output is only written when every input checks out.

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

/// Merges `inputs` into `out`. `allow_backends`: a model without a digest may have been served
/// by different OpenAI-compatible backends in different inputs (nothing tells whether it is
/// one model; refused otherwise).
pub fn merge(out: &Path, inputs: &[PathBuf], allow_backends: bool) -> Result<MergeReport> {
    if inputs.is_empty() {
        bail!("merge: give at least one run folder");
    }
    if out.exists() && std::fs::read_dir(out)?.next().is_some() {
        bail!("merge: output {} exists and is not empty", out.display());
    }
    let (manifests, mut all) = read_inputs(inputs, allow_backends)?;
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
    copy_attempts(out, inputs, &all, &out_id)?;
    let simulated = all.iter().any(|(_, r)| r.simulated);
    let m = merged_manifest(&manifests, simulated, out_id, inputs);
    let cells = matrix::expand(
        &m.matrix.arms,
        &m.matrix.models,
        &m.matrix.tasks,
        m.matrix.repeats,
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

/// A row and the input folder it came from.
type Sourced = (PathBuf, CellRow);

/// Reads every input's manifest and rows, checking them all before anything is written: the
/// manifests agree, no attempt is unrecorded, in two inputs, or missing its folder.
fn read_inputs(inputs: &[PathBuf], allow_backends: bool) -> Result<(Vec<Manifest>, Vec<Sourced>)> {
    let mut manifests: Vec<Manifest> = Vec::new();
    let mut all: Vec<Sourced> = Vec::new();
    let mut seen = std::collections::BTreeMap::new();
    for dir in inputs {
        let m = Manifest::read(dir)
            .with_context(|| format!("merge: {} is not a run folder", dir.display()))?;
        if let Some(first) = manifests.first() {
            refuse_disagreement(first, &inputs[0], &m, dir, allow_backends)?;
        }
        let rows = resume::read_rows_lenient(&dir.join("cells.csv"))?;
        refuse_unrecorded(dir, &rows)?;
        for r in rows {
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
    Ok((manifests, all))
}

/// Inputs whose manifests disagree on the work or the code are not shards of one run; the
/// error names each field, both values and both files.
fn refuse_disagreement(
    first: &Manifest,
    first_dir: &Path,
    m: &Manifest,
    dir: &Path,
    allow_backends: bool,
) -> Result<()> {
    let mut d = Manifest::disagreements(first, m);
    if allow_backends {
        d.retain(|x| !x.field.ends_with(lrab_records::SERVED_BY));
    }
    if d.is_empty() {
        return Ok(());
    }
    let (a, b) = (first_dir.join("manifest.json"), dir.join("manifest.json"));
    let lines: Vec<String> = d
        .iter()
        .map(|x| {
            format!(
                "  {}: {} in {}, {} in {}",
                x.field,
                x.left,
                a.display(),
                x.right,
                b.display()
            )
        })
        .collect();
    bail!(
        "merge: {} and {} are not shards of one run; they disagree on {}:\n{}",
        first_dir.display(),
        dir.display(),
        d.iter()
            .map(|x| x.field.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        lines.join("\n")
    );
}

/// Copies the attempt folders and their rows (re-labelled with the merged run id), the
/// attempts set aside, and the journals into `out`.
fn copy_attempts(
    out: &Path,
    inputs: &[PathBuf],
    all: &[(PathBuf, CellRow)],
    out_id: &str,
) -> Result<()> {
    for (dir, r) in all {
        lrab_tasks::copy_tree(&dir.join(&r.attempt_dir), &out.join(&r.attempt_dir))
            .map_err(|e| anyhow::anyhow!("merge: copy {}: {e}", r.attempt_dir))?;
        let mut r = r.clone();
        r.run_id = out_id.to_string();
        r.append_to(&out.join("cells.csv"))?;
    }
    // attempts a backend broke, and those a resume set aside, stay with the journal lines that
    // name them
    for dir in inputs {
        for aside in ["lost", resume::INTERRUPTED_DIR] {
            let from = dir.join(aside);
            if from.is_dir() {
                lrab_tasks::copy_tree(&from, &out.join(aside))
                    .map_err(|e| anyhow::anyhow!("merge: copy {}: {e}", from.display()))?;
            }
        }
    }
    std::fs::write(
        out.join("attempts.jsonl"),
        journal(inputs, "attempts.jsonl"),
    )?;
    let aside = journal(inputs, resume::INTERRUPTED_JOURNAL);
    if !aside.is_empty() {
        std::fs::write(out.join(resume::INTERRUPTED_JOURNAL), aside)?;
    }
    Ok(())
}

/// The merged run's manifest: the first input's, run on every input's hosts and backends,
/// simulated if any row was, with the whole matrix planned and a note naming the inputs.
fn merged_manifest(
    manifests: &[Manifest],
    simulated: bool,
    out_id: String,
    inputs: &[PathBuf],
) -> Manifest {
    let mut m = manifests[0].clone();
    // the merged run ran on every input's host and backends
    let mut hosts: Vec<String> = manifests.iter().filter_map(|x| x.host.clone()).collect();
    hosts.dedup();
    hosts.sort();
    hosts.dedup();
    m.host = (!hosts.is_empty()).then(|| hosts.join(","));
    m.backends = Vec::new();
    for b in manifests.iter().flat_map(|x| x.backends.iter()) {
        if !m.backends.contains(b) {
            m.backends.push(b.clone());
        }
    }
    // a shard whose rows ran on the simulator keeps the merged run labelled simulated
    m.simulated |= simulated;
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
    m
}

/// An attempt folder under `cells/` with no row is an attempt a runner was in the middle of:
/// merging would either drop it silently or count what was never recorded. The resume sets such
/// folders aside (`interrupted/`), so the fix is to resume the input first.
fn refuse_unrecorded(dir: &Path, rows: &[CellRow]) -> Result<()> {
    let orphans = resume::unrecorded(dir, rows);
    if orphans.is_empty() {
        return Ok(());
    }
    bail!(
        "merge: {} has {} attempt folder(s) without a cells.csv row (a runner stopped during \
         them and the run was not resumed):\n  {}\nresume it first: lrab run --resume {} \
         (the resume sets such folders aside under {}/ and runs the attempts again)",
        dir.display(),
        orphans.len(),
        orphans.join("\n  "),
        dir.display(),
        resume::INTERRUPTED_DIR
    )
}

/// The valid JSON lines of `name` in every input, in input order.
fn journal(inputs: &[PathBuf], name: &str) -> String {
    let mut out = String::new();
    for dir in inputs {
        if let Ok(t) = std::fs::read_to_string(dir.join(name)) {
            for l in t
                .lines()
                .filter(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
            {
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    out
}

//! `lrab tasks check`: for every task, validation, then three scored workdirs: untouched
//! (== expect.untouched), partial (== expect.partial) and reference (== 1.0).

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{bail, Context, Result};
use lrab_records::TaskScore;
use lrab_tasks::{apply_solution, materialize, Pack, SolutionKind, Task};

use super::{problems_of, Exit};

/// Scores are compared at the 3-dp resolution they are reported in.
const EPS: f64 = 5e-4;

/// One verified workdir: the score it got (or why none), and whether it matched.
struct Cell {
    text: String,
    ok: bool,
}

pub fn run(root: &Path, ids: &[String]) -> Result<Exit> {
    let (pack, problems) = Pack::load_lenient(root);
    // Every task folder named by a valid task or a problem.
    let mut all: BTreeSet<String> = pack.tasks.iter().map(|t| t.spec.id.clone()).collect();
    let mut global = Vec::new();
    for p in &problems {
        match p
            .file
            .strip_prefix(root)
            .ok()
            .and_then(|r| r.components().next())
        {
            Some(c) if p.file != root => {
                all.insert(c.as_os_str().to_string_lossy().into_owned());
            }
            _ => global.push(p),
        }
    }
    for p in &global {
        eprintln!("invalid: {p}");
    }
    if !global.is_empty() && all.is_empty() {
        return Ok(Exit::Usage);
    }
    let selected: Vec<String> = if ids.is_empty() {
        all.iter().cloned().collect()
    } else {
        for id in ids {
            if !all.contains(id) {
                bail!("unknown task '{id}' in pack {}", root.display());
            }
        }
        ids.to_vec()
    };

    let tmp = tempfile::tempdir().context("creating a temporary folder")?;
    lrab_util::outln!(
        "{:<10} {:<15} {:<15} {:<10} result",
        "id",
        "untouched",
        "partial",
        "reference"
    );
    let (mut passed, mut failed, mut invalid) = (0, 0, 0);
    let mut notes: Vec<String> = Vec::new();
    for id in &selected {
        let Some(task) = pack.get(id) else {
            invalid += 1;
            lrab_util::outln!("{id:<10} {:<15} {:<15} {:<10} INVALID", "-", "-", "-");
            for p in problems_of(root, id, &problems) {
                notes.push(format!("{id}: invalid: {p}"));
            }
            continue;
        };
        let base = tmp.path().join(id);
        let mut task_notes = Vec::new();
        let u = verify(
            &pack,
            task,
            &base.join("untouched"),
            None,
            Some(task.spec.expect.untouched),
            &mut task_notes,
        );
        let p = match task.spec.expect.partial {
            Some(exp) => verify(
                &pack,
                task,
                &base.join("partial"),
                Some(SolutionKind::Partial),
                Some(exp),
                &mut task_notes,
            ),
            None => Cell {
                text: "(none)".into(),
                ok: true,
            },
        };
        let r = verify(
            &pack,
            task,
            &base.join("reference"),
            Some(SolutionKind::Reference),
            None,
            &mut task_notes,
        );
        let ok = u.ok && p.ok && r.ok;
        lrab_util::outln!(
            "{id:<10} {:<15} {:<15} {:<10} {}",
            u.text,
            p.text,
            r.text,
            if ok { "PASS" } else { "FAIL" }
        );
        if ok {
            passed += 1;
        } else {
            failed += 1;
        }
        notes.extend(task_notes.into_iter().map(|n| format!("{id}: {n}")));
    }
    for n in &notes {
        lrab_util::outln!("{n}");
    }
    lrab_util::outln!("{passed} passed, {failed} failed, {invalid} invalid");
    Ok(if invalid > 0 || !global.is_empty() {
        Exit::Usage
    } else if failed > 0 {
        Exit::Failures
    } else {
        Exit::Ok
    })
}

/// Materializes, optionally applies a solution, scores, compares with `expect` (reference: 1.0).
fn verify(
    pack: &Pack,
    task: &Task,
    workdir: &Path,
    kind: Option<SolutionKind>,
    expect: Option<f64>,
    notes: &mut Vec<String>,
) -> Cell {
    let label = kind.map(|k| k.name()).unwrap_or("untouched");
    let want = expect.unwrap_or(1.0);
    match score_once(pack, task, workdir, kind) {
        Ok(s) => {
            let ok = (s.total - want).abs() < EPS;
            if !ok {
                notes.push(format!(
                    "{label}: scored {:.3}, expected {want:.3}",
                    s.total
                ));
                for d in s.milestone_details.iter().chain(&s.final_details) {
                    notes.push(format!(
                        "    {:.3} {} {}: {}",
                        d.score, d.check, d.artifact, d.detail
                    ));
                }
            }
            let text = if expect.is_some() {
                format!("{:.3}/{want:.3}", s.total)
            } else {
                format!("{:.3}", s.total)
            };
            Cell { text, ok }
        }
        Err(e) => {
            notes.push(format!("{label}: {e:#}"));
            Cell {
                text: "error".into(),
                ok: false,
            }
        }
    }
}

fn score_once(
    pack: &Pack,
    task: &Task,
    workdir: &Path,
    kind: Option<SolutionKind>,
) -> Result<TaskScore> {
    let m = materialize(pack, task, workdir, None)?;
    if let Some(k) = kind {
        let sol = task.solution(k)?;
        apply_solution(workdir, &sol)?;
    }
    Ok(lrab_scorer::score_checked(
        task,
        &m.checks,
        workdir,
        lrab_scorer::ENVIRONMENT_RETRY_PAUSE,
    )?)
}

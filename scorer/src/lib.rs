//! Deterministic artifact scorer: the 14 LRAB check kinds, score formula and failure-mode
//! classification. Scores depend only on the files in a workdir (and the pack's seed files); the
//! records they end up in (`score.json`, `cells.csv`) are `lrab_records`' types.

pub mod checks;
pub mod command;
pub mod failure;
pub mod formula;

use std::path::Path;

use lrab_tasks::{CheckSpec, ResolvedChecks, Task};

pub use failure::{classify, AttemptFacts};
use lrab_records::{CheckDetail, TaskScore};

/// Errors that prevent scoring at all.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    #[error("workdir {0} does not exist or is not a folder")]
    MissingWorkdir(String),
}

/// Scores `workdir` for `task` with its resolved checks.
pub fn score(
    task: &Task,
    checks: &ResolvedChecks,
    workdir: &Path,
) -> Result<TaskScore, ScoreError> {
    if !workdir.is_dir() {
        return Err(ScoreError::MissingWorkdir(workdir.display().to_string()));
    }
    let ctx = checks::Ctx {
        workdir,
        pack_root: &task.pack_root,
    };
    let milestone_details = run_group(&ctx, &checks.milestones);
    let final_details = run_group(&ctx, &checks.finals);
    let m = formula::mean(
        &milestone_details
            .iter()
            .map(|d| d.score)
            .collect::<Vec<_>>(),
    );
    let f = formula::mean(&final_details.iter().map(|d| d.score).collect::<Vec<_>>());
    Ok(TaskScore {
        task_id: task.spec.id.clone(),
        domain: task.spec.domain.clone(),
        tier: task.spec.tier,
        milestone_score: formula::round3(m),
        final_score: formula::round3(f),
        total: formula::total(m, f),
        milestone_details,
        final_details,
    })
}

fn run_group(ctx: &checks::Ctx<'_>, group: &[CheckSpec]) -> Vec<CheckDetail> {
    group
        .iter()
        .map(|c| {
            let o = checks::run(ctx, c);
            CheckDetail {
                artifact: c.artifact.clone(),
                check: c.check.kind().to_string(),
                ok: o.score >= 0.5,
                score: o.score,
                detail: o.detail,
            }
        })
        .collect()
}

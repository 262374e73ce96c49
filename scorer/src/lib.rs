//! Deterministic artifact scorer: the 14 LRAB check kinds, score formula and failure-mode
//! classification. Scores depend only on the files in a workdir (and the pack's seed files); the
//! records they end up in (`score.json`, `cells.csv`) are `lrab_records`' types.

#![deny(missing_docs)]

mod attempt;
mod checks;
mod command;
mod failure;
mod formula;
mod output_needs;
mod preflight;

use std::path::Path;

use lrab_tasks::{CheckSpec, ResolvedChecks, Task};

pub use attempt::{score_attempt, Ending};
pub use checks::image_valid::{encode_rgb as encode_png, PngError};
pub use checks::seed_unchanged::SeedChange;
pub use failure::{classify, produced_files, transcript_read_task_file, AttemptFacts};
use lrab_records::{CheckDetail, TaskScore};
pub use output_needs::missing_in_output;
pub use preflight::{
    check as check_need, group_missing, missing, missing_for_task, missing_for_tasks, missing_in,
    needs_of_checks, needs_of_shell, needs_of_task, Missing, Need, Unmet,
};

/// Errors that prevent scoring at all.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    /// The workdir to score is missing or not a folder.
    #[error("workdir {0} does not exist or is not a folder")]
    MissingWorkdir(String),
    /// The scorer's machine lacks a program or module a check runs (after the retry).
    #[error("scorer error (tried twice): {}", .0.iter().map(|m| m.to_string()).collect::<Vec<_>>().join("; "))]
    Environment(Vec<preflight::Missing>),
}

/// How long [`score_checked`] waits before its one retry (a package manager may be mid-way
/// through reinstalling the missing program).
pub const ENVIRONMENT_RETRY_PAUSE: std::time::Duration = std::time::Duration::from_secs(2);

/// [`score`], but only when the scorer's machine has everything the checks run (looked up
/// from the workdir, as the checks will run), before and after scoring: a program that
/// vanished mid-way makes the check's failure the scorer's, not the arm's. Tried twice,
/// `pause` apart; then [`ScoreError::Environment`] — such an attempt is a `scorer_error`,
/// never a 0.
pub fn score_checked(
    task: &Task,
    checks: &ResolvedChecks,
    workdir: &Path,
    pause: std::time::Duration,
) -> Result<TaskScore, ScoreError> {
    let needs = preflight::needs_of_checks(checks.milestones.iter().chain(&checks.finals));
    let mut last = Vec::new();
    for attempt in 0..2 {
        if attempt > 0 {
            std::thread::sleep(pause);
        }
        let before = preflight::missing_in(&needs, workdir);
        if before.is_empty() {
            let s = score(task, checks, workdir)?;
            let after = preflight::missing_in(&needs, workdir);
            if after.is_empty() {
                return Ok(s);
            }
            last = after;
        } else {
            last = before;
        }
    }
    Err(ScoreError::Environment(last))
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

//! Scoring one attempt: a timed-out attempt has no score; otherwise the workdir is scored and
//! the failure mode classified from the attempt's facts (`lrab_scorer::classify`). A workdir
//! that cannot be scored is an `error` with the reason kept, or a `scorer_error` when the
//! scoring machine lacks a program a check runs (`lrab_scorer::score_checked`).

use std::path::Path;
use std::time::{Duration, Instant};

use lrab_records::{FailureMode, ScoreReport};
use lrab_scorer::AttemptFacts;
use lrab_tasks::{Materialized, Task};

/// The score of an attempt and what it cost.
pub(super) struct Scored {
    /// `score.json` without the runner's facts.
    pub report: ScoreReport,
    /// Why scoring failed, when it did.
    pub error: Option<String>,
    /// Time spent scoring.
    pub took: Duration,
}

/// How the arm ended, as the failure-mode rules need it.
pub(super) struct Ending<'a> {
    pub timed_out: bool,
    pub exit_code: Option<i32>,
    pub wall_seconds: f64,
    pub transcript: &'a str,
}

/// Scores `workdir` (materialized as `mat`) for `task` after an attempt that ended as `end`.
pub(super) fn score(task: &Task, mat: &Materialized, workdir: &Path, end: &Ending<'_>) -> Scored {
    let t = Instant::now();
    let spec = &task.spec;
    let (report, error) = if end.timed_out {
        (
            ScoreReport::timeout(&spec.id, &spec.domain, spec.tier),
            None,
        )
    } else {
        match lrab_scorer::score_checked(
            task,
            &mat.checks,
            workdir,
            lrab_scorer::ENVIRONMENT_RETRY_PAUSE,
        ) {
            Ok(s) => {
                let facts = AttemptFacts {
                    timed_out: false,
                    exit_code: end.exit_code,
                    wall_seconds: end.wall_seconds,
                    total: s.total,
                    produced: lrab_scorer::produced_files(workdir, &mat.files),
                    read_task_file: lrab_scorer::transcript_read_task_file(end.transcript),
                };
                let fm = lrab_scorer::classify(&facts);
                (ScoreReport::scored(s, fm), None)
            }
            Err(e) => {
                // A program a check runs is missing here: the scorer's failure, never the arm's.
                let mode = match e {
                    lrab_scorer::ScoreError::Environment(_) => FailureMode::ScorerError,
                    _ => FailureMode::Error,
                };
                (
                    ScoreReport::unscored(&spec.id, &spec.domain, spec.tier, mode),
                    Some(e.to_string()),
                )
            }
        }
    };
    Scored {
        report,
        error,
        took: t.elapsed(),
    }
}

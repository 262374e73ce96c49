//! Scoring one attempt through the scorer's one entry point (`lrab_scorer::score_attempt`): a
//! timed-out attempt has no score; otherwise the workdir is scored and the failure mode
//! classified. A workdir that cannot be scored is an `error` with the reason kept, or a
//! `scorer_error` when the scoring machine lacks a program a check runs.

use std::path::Path;
use std::time::{Duration, Instant};

use lrab_records::ScoreReport;
use lrab_tasks::{Materialized, ResolvedChecks, Task};

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

/// Scores `workdir` (materialized as `mat`) for `task` with the plan's `checks` after an
/// attempt that ended as `end` (`lrab_scorer::score_attempt`, as `lrab score` does).
pub(super) fn score(
    task: &Task,
    checks: &ResolvedChecks,
    mat: &Materialized,
    workdir: &Path,
    end: &Ending<'_>,
) -> Scored {
    let t = Instant::now();
    let spec = &task.spec;
    let ending = lrab_scorer::Ending {
        timed_out: end.timed_out,
        exit_code: end.exit_code,
        wall_seconds: end.wall_seconds,
        read_task_file: !end.timed_out && lrab_scorer::transcript_read_task_file(end.transcript),
    };
    let pause = lrab_scorer::ENVIRONMENT_RETRY_PAUSE;
    let (report, error) =
        match lrab_scorer::score_attempt(task, checks, workdir, &mat.files, &ending, pause) {
            Ok(r) => (r, None),
            Err(e) => (
                ScoreReport::unscored(&spec.id, &spec.domain, spec.tier, e.failure_mode()),
                Some(e.to_string()),
            ),
        };
    Scored {
        report,
        error,
        took: t.elapsed(),
    }
}

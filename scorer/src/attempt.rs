//! The one scoring entry point of an attempt, for `lrab score` and the runner alike: a
//! timed-out attempt has no score; otherwise the workdir is scored (only when this machine has
//! what the checks run, [`crate::score_checked`]) and the failure mode classified from the
//! attempt's facts ([`crate::classify`]) into a `score.json` report.

use std::path::Path;
use std::time::Duration;

use lrab_records::{FailureMode, ScoreReport};
use lrab_tasks::{ResolvedChecks, Task};

use crate::{classify, produced_files, score_checked, AttemptFacts, ScoreError};

/// How the arm ended, as the failure-mode rules need it.
#[derive(Debug, Clone, PartialEq)]
pub struct Ending {
    /// The runner killed the attempt at its budget.
    pub timed_out: bool,
    /// Exit code of the arm; `None` when it died from a signal.
    pub exit_code: Option<i32>,
    /// How long the attempt ran, in seconds.
    pub wall_seconds: f64,
    /// The transcript shows the agent read `task_input.txt`.
    pub read_task_file: bool,
}

impl ScoreError {
    /// The failure mode of an attempt that could not be scored: a program a check runs missing
    /// here is the scorer's failure (`scorer_error`), never the arm's.
    pub fn failure_mode(&self) -> FailureMode {
        match self {
            ScoreError::Environment(_) => FailureMode::ScorerError,
            _ => FailureMode::Error,
        }
    }
}

/// Scores the attempt that left `workdir` (materialized with the files `inputs`, which are not
/// counted as produced) for `task` with its resolved `checks`, after it ended as `end`;
/// `pause` is the wait before the scorer's one retry.
pub fn score_attempt(
    task: &Task,
    checks: &ResolvedChecks,
    workdir: &Path,
    inputs: &[String],
    end: &Ending,
    pause: Duration,
) -> Result<ScoreReport, ScoreError> {
    let spec = &task.spec;
    if end.timed_out {
        return Ok(ScoreReport::timeout(&spec.id, &spec.domain, spec.tier));
    }
    let s = score_checked(task, checks, workdir, pause)?;
    let facts = AttemptFacts {
        timed_out: false,
        exit_code: end.exit_code,
        wall_seconds: end.wall_seconds,
        total: s.total,
        produced: produced_files(workdir, inputs),
        read_task_file: end.read_task_file,
    };
    Ok(ScoreReport::scored(s, classify(&facts)))
}

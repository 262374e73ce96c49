//! What a cell is run with: where it runs and with which knobs and checks ([`CellEnv`]), its
//! budget and the retry rule (one retry, only for timeouts or missing scores). Running its attempts is
//! `super::attempt`'s.

use std::path::Path;
use std::time::Duration;

use lrab_records::{CellRow, FailureMode, RunSpec};
use lrab_tasks::{Pack, ResolvedChecks, Task};

/// Where and against what a cell runs.
pub struct CellEnv<'a> {
    pub run_dir: &'a Path,
    pub run_id: &'a str,
    pub pack: &'a Pack,
    /// The task's checks as the plan resolved them (plan.rs): the attempt scores with these.
    pub checks: &'a ResolvedChecks,
    pub backend_label: &'a str,
    pub backend_url: &'a str,
    pub simulated: bool,
    /// The API of the backend (recorded per attempt).
    pub backend_kind: lrab_records::BackendKind,
    /// The run's knobs (the resolved spec).
    pub config: &'a RunSpec,
    /// Asked once the arm has finished: `Some(why)` when the backend stopped answering, so the
    /// attempt is the backend's failure, not the arm's (pool.rs).
    pub backend_lost: Option<&'a (dyn Fn() -> Option<String> + Sync)>,
}

/// The outcome of one attempt.
#[derive(Debug, Clone)]
pub struct AttemptResult {
    pub record: CellRow,
    /// Runner time outside the arm's own launches.
    pub overhead: Duration,
}

impl AttemptResult {
    /// Upstream's retry rule: only timeouts and attempts without a score.
    pub fn needs_retry(&self) -> bool {
        needs_retry(&self.record)
    }
}

/// Whether a recorded attempt is retried (timeout or no score). A scorer error is not: the
/// scorer already tried twice, and running the arm again cannot mend the scorer's machine.
pub fn needs_retry(r: &CellRow) -> bool {
    if r.failure_mode == FailureMode::ScorerError {
        return false;
    }
    r.failure_mode == FailureMode::Timeout || r.milestone_score.is_none()
}

/// Budget in seconds of `task` under `cfg` (a long-horizon task's override is
/// `--budget-minutes-lh`).
pub fn budget_seconds(task: &Task, cfg: &RunSpec) -> f64 {
    let over = if task.spec.long_horizon() {
        cfg.budget_minutes_lh
    } else {
        cfg.budget_minutes
    };
    over.unwrap_or(task.spec.budget_minutes as f64) * 60.0
}

//! What a cell is run with: its knobs ([`CellConfig`]), where it runs ([`CellEnv`]), its budget
//! and the retry rule (one retry, only for timeouts or missing scores). Running its attempts is
//! `super::attempt`'s.

use std::path::Path;
use std::time::Duration;

use lrab_records::{CellRow, FailureMode};
use lrab_tasks::{Pack, Task};

use super::quiet::QuietConfig;

/// Knobs of the cell lifecycle (defaults follow upstream).
#[derive(Debug, Clone)]
pub struct CellConfig {
    /// Budget of WF tasks (None = the task's `budget_minutes`).
    pub budget_minutes: Option<f64>,
    /// Budget of LH tasks (None = the task's `budget_minutes`).
    pub budget_minutes_lh: Option<f64>,
    /// Overrides every task's `kill_at_pct` (0 disables kill-and-resume).
    pub kill_at_pct: Option<u8>,
    pub quiet: QuietConfig,
    /// SIGTERM → SIGKILL grace.
    pub grace: Duration,
    /// Extra attempts for timeouts / missing scores (upstream: 1).
    pub retries: u32,
    /// Context length the proxy pins and the arms are told.
    pub num_ctx: u64,
    /// Launch arms without kernel confinement (`--unconfined-arms`; see confine.rs).
    pub unconfined_arms: bool,
    /// Whether models think (`--think`), pinned by every attempt's proxy.
    pub think: lrab_records::ThinkSetting,
}

impl Default for CellConfig {
    fn default() -> Self {
        CellConfig {
            budget_minutes: None,
            budget_minutes_lh: None,
            kill_at_pct: None,
            quiet: QuietConfig::default(),
            grace: Duration::from_secs(5),
            retries: 1,
            num_ctx: 32768,
            unconfined_arms: false,
            think: lrab_records::ThinkSetting::Off,
        }
    }
}

/// Where and against what a cell runs.
pub struct CellEnv<'a> {
    pub run_dir: &'a Path,
    pub run_id: &'a str,
    pub pack: &'a Pack,
    pub backend_label: &'a str,
    pub backend_url: &'a str,
    pub simulated: bool,
    /// The API of the backend (recorded per attempt).
    pub backend_kind: lrab_records::BackendKind,
    pub config: &'a CellConfig,
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

/// Budget in seconds of `task` under `cfg`.
pub fn budget_seconds(task: &Task, cfg: &CellConfig) -> f64 {
    let lh = task.spec.id.starts_with("LH");
    let over = if lh {
        cfg.budget_minutes_lh
    } else {
        cfg.budget_minutes
    };
    over.unwrap_or(task.spec.budget_minutes as f64) * 60.0
}

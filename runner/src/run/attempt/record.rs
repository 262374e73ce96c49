//! The facts of one attempt, gathered once, and the three records built from them: the runner's
//! part of `score.json` ([`RunInfo`]), the `cells.csv` row ([`CellRow`]) and the
//! `attempts.jsonl` line ([`AttemptRecord`]). Written `score.json`, journal line, row: the row
//! is the source of truth for resume, so it goes out last, once everything else about the
//! attempt is on disk. A runner killed before the row leaves a folder the resume sets aside
//! (its journal line, if written, is superseded by the rerun's line for the same folder); one
//! killed after it leaves a complete record.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use lrab_records::{
    AttemptRecord, CellRow, PhaseRecord, ResumeInfo, RunInfo, ScoreReport, SimLedgerRecord,
};

use super::super::process::Exit;
use super::super::sim_clock::Ledger;
use super::super::usage::Usage;
use super::{round1, round3};

/// Everything the records say about one attempt.
#[derive(Debug, Clone)]
pub struct Facts {
    /// The run id.
    pub run_id: String,
    /// Index of the cell in the plan.
    pub cell: usize,
    /// Arm name.
    pub arm: String,
    /// Model name.
    pub model: String,
    /// Repeat index.
    pub repeat: u32,
    /// Attempt index.
    pub attempt: u32,
    /// The attempt folder, relative to the run folder.
    pub attempt_dir: String,
    /// Backend label.
    pub backend: String,
    /// Whether the backend is simulated.
    pub simulated: bool,
    /// The API of the backend (`None`: not recorded).
    pub backend_kind: Option<lrab_records::BackendKind>,
    /// The run's thinking setting (`None`: not recorded).
    pub think: Option<lrab_records::ThinkSetting>,
    /// Whether the arm ran confined (`None`: not recorded).
    pub confined: Option<bool>,
    /// The launched command line, program first.
    pub command: Vec<String>,
    /// The backend URL the arm was given.
    pub backend_url: String,
    /// Every launch, in order (never empty).
    pub phases: Vec<Exit>,
    /// The whole budget in seconds.
    pub budget_seconds: f64,
    /// How kill-and-resume went, for tasks that use it.
    pub resume: Option<ResumeInfo>,
    /// Time waited for the workdir to go quiet.
    pub quiet_wait: Duration,
    /// On the simulator: its ledger over the attempt.
    pub sim_ledger: Option<Ledger>,
    /// The score, without the runner's facts.
    pub score: ScoreReport,
    /// Why scoring failed, when it did.
    pub score_error: Option<String>,
    /// Time spent scoring.
    pub scoring: Duration,
    /// Token and call counts.
    pub usage: Usage,
    /// Runner time outside the arm's launches.
    pub overhead: Duration,
    /// Whether the retry rule allows another attempt after this one.
    pub retries_left: bool,
}

impl Facts {
    /// Wall seconds of the arm over all phases.
    pub fn wall_seconds(&self) -> f64 {
        self.phases.iter().map(|e| e.wall.as_secs_f64()).sum()
    }

    fn last(&self) -> &Exit {
        self.phases.last().expect("one phase at least")
    }

    /// The arm ran into the budget.
    pub fn timed_out(&self) -> bool {
        self.last().timed_out
    }

    /// The arm's exit code (`None` when it was killed).
    pub fn exit_code(&self) -> Option<i32> {
        if self.timed_out() {
            None
        } else {
            self.last().code
        }
    }

    /// On the simulator: the wall time the attempt would have taken on the modelled machine.
    pub fn modelled_wall_seconds(&self) -> Option<f64> {
        let wall = self.wall_seconds();
        self.sim_ledger.map(|l| wall + l.unpaced().as_secs_f64())
    }

    /// The runner's part of `score.json`.
    pub fn run_info(&self) -> RunInfo {
        RunInfo {
            arm: self.arm.clone(),
            model: self.model.clone(),
            run_id: self.run_id.clone(),
            repeat: self.repeat,
            attempt: self.attempt,
            wall_seconds: round1(self.wall_seconds()),
            exit_code: self.exit_code(),
            backend: self.backend.clone(),
            simulated: self.simulated,
            confined: self.confined,
            modelled_wall_seconds: self.modelled_wall_seconds().map(round1),
            failure_note: self
                .timed_out()
                .then(|| format!("killed at the budget of {:.0} s", self.budget_seconds)),
            score_error: self.score_error.clone(),
            resume: self.resume.clone(),
        }
    }

    /// The whole `score.json`.
    pub fn score_json(&self) -> ScoreReport {
        ScoreReport {
            run: Some(self.run_info()),
            ..self.score.clone()
        }
    }

    /// The `cells.csv` row.
    pub fn cell_row(&self) -> CellRow {
        let s = &self.score;
        CellRow {
            run_id: self.run_id.clone(),
            arm: self.arm.clone(),
            model: self.model.clone(),
            task: s.task_id.clone(),
            tier: s.tier,
            repeat: self.repeat,
            attempt: self.attempt,
            score: s.total.unwrap_or(0.0),
            milestone_score: s.milestone_score,
            final_score: s.final_score,
            wall_seconds: self.wall_seconds(),
            exit_code: self.exit_code(),
            failure_mode: s.failure_mode,
            backend: self.backend.clone(),
            simulated: self.simulated,
            prompt_tokens: self.usage.prompt_tokens,
            completion_tokens: self.usage.completion_tokens,
            model_calls: self.usage.model_calls,
            tool_calls: self.usage.tool_calls,
            attempt_dir: self.attempt_dir.clone(),
            schema_version: CellRow::SCHEMA_VERSION,
            turns: self.usage.turns,
            cached_prompt_tokens: self.usage.cached_prompt_tokens,
            uncached_prompt_tokens: self.usage.uncached_prompt_tokens,
            backend_kind: self.backend_kind,
            think: self.think,
            peak_prompt_tokens: self.usage.counters.peak_prompt_tokens,
            fmt_arg_errors: Some(self.usage.counters.fmt_arg_errors),
            spin_events: Some(self.usage.counters.spin_events),
            ctx_events: Some(self.usage.counters.ctx_events),
            finish_rejections: self.usage.counters.finish_rejections,
            provider_errors: Some(self.usage.counters.provider_errors),
        }
    }

    /// The `attempts.jsonl` line.
    pub fn attempt_record(&self) -> AttemptRecord {
        let row = self.cell_row();
        AttemptRecord {
            schema_version: lrab_records::SCHEMA_VERSION,
            cell: self.cell,
            arm: self.arm.clone(),
            model: self.model.clone(),
            task: self.score.task_id.clone(),
            repeat: self.repeat,
            attempt: self.attempt,
            attempt_dir: self.attempt_dir.clone(),
            command: self.command.clone(),
            backend: Some(self.backend.clone()),
            backend_url: self.backend_url.clone(),
            backend_kind: self.backend_kind,
            think: self.think,
            confined: self.confined,
            backend_failure: None,
            phases: self
                .phases
                .iter()
                .map(|e| PhaseRecord {
                    wall: round3(e.wall.as_secs_f64()),
                    code: e.code,
                    timed_out: e.timed_out,
                    survivors: e.survivors,
                })
                .collect(),
            quiet_wait_seconds: round3(self.quiet_wait.as_secs_f64()),
            modelled_wall_seconds: self.modelled_wall_seconds().map(round1),
            sim_ledger: self.sim_ledger.map(|l| SimLedgerRecord {
                requests: l.requests,
                model_seconds: round3(l.model_ns as f64 / 1e9),
                paced_seconds: round3(l.paced_ns as f64 / 1e9),
                tool_calls: l.tool_calls,
                errors: l.errors,
            }),
            runner_overhead_seconds: round3(self.overhead.as_secs_f64()),
            scoring_seconds: round3(self.scoring.as_secs_f64()),
            failure_mode: row.failure_mode,
            score: row.score,
            score_error: self.score_error.clone(),
            retry: super::super::cell::needs_retry(&row) && self.retries_left,
        }
    }

    /// Writes `<attempt>/score.json`, measures the runner's overhead with `overhead`, appends the
    /// line to `<run>/attempts.jsonl`, then the row to `<run>/cells.csv` (the commit point).
    pub fn record(
        &mut self,
        run_dir: &Path,
        overhead: impl FnOnce() -> Duration,
    ) -> Result<CellRow> {
        let dir = run_dir.join(&self.attempt_dir);
        lrab_records::write_score_json(&dir, &self.score_json())
            .with_context(|| format!("write {}/score.json", dir.display()))?;
        self.overhead = overhead();
        lrab_records::append_jsonl(&run_dir.join("attempts.jsonl"), &self.attempt_record())?;
        let row = self.cell_row();
        row.append_to(&run_dir.join("cells.csv"))?;
        Ok(row)
    }
}

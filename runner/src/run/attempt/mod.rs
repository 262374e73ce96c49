//! One attempt of a cell ([`run_attempt`]; the scheduler in `super` applies the retry rule and
//! reruns attempts a backend broke) in four steps that each own one concern: `launch` (attempt folder,
//! workdir, proxy, template variables, the arm's phases including kill-and-resume, quiet-wait),
//! `transcript` (the phases' output joined into `transcript.txt`), `scoring` (score and failure
//! mode) and `record` (the attempt's [`Facts`] and the three records built from them:
//! `score.json`, the `cells.csv` row, the `attempts.jsonl` line).

mod launch;
mod record;
mod scoring;
mod transcript;

#[cfg(test)]
mod tests;

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use lrab_tasks::Task;

use super::arms::Arm;
use super::cell::{AttemptResult, CellEnv};
use super::matrix::Cell;
use super::usage;

pub use launch::{launch, Launched, Workload};
pub use record::Facts;

/// One attempt in a fresh attempt folder, recorded in `score.json`, `cells.csv` and
/// `attempts.jsonl`.
pub fn run_attempt(
    env: &CellEnv<'_>,
    arm: &Arm,
    task: &Task,
    cell: &Cell,
    attempt: u32,
) -> Result<AttemptResult> {
    let t0 = Instant::now();
    let l = launch::launch(env, arm, task, cell, attempt)?;
    if let Some(reason) = env.backend_lost.and_then(|lost| lost()) {
        return Err(super::pool::BackendLost {
            attempt_dir: l.dir.clone(),
            command: l.command.clone(),
            backend_url: l.backend_url.clone(),
            phases: (l.phases.iter())
                .map(|e| (e.wall.as_secs_f64(), e.code, e.timed_out, e.survivors))
                .collect(),
            reason,
        }
        .into());
    }
    let trajectory = lrab_records::read_trajectory(&l.proxy_log).unwrap_or_default();
    let text = transcript::collect(&l.dir, l.phases.len(), l.kill_pct, &trajectory)?;
    let timed_out = l.last().timed_out;
    let wall_seconds = l.phases.iter().map(|e| e.wall.as_secs_f64()).sum::<f64>();
    let scored = scoring::score(
        task,
        env.checks,
        &l.mat,
        &l.workdir,
        &scoring::Ending {
            timed_out,
            exit_code: if timed_out { None } else { l.last().code },
            wall_seconds,
            transcript: &text,
        },
    );
    let mut usage = usage::from_trajectory(&trajectory);
    if let (None, Some(ledger)) = (usage.tool_calls, l.sim_ledger) {
        usage.tool_calls = Some(ledger.tool_calls);
    }
    let mut facts = Facts {
        run_id: env.run_id.to_string(),
        cell: cell.index,
        arm: arm.name.clone(),
        model: cell.model.clone(),
        repeat: cell.repeat,
        attempt,
        attempt_dir: rel(&l.dir, env.run_dir),
        backend: env.backend_label.to_string(),
        simulated: env.simulated,
        backend_kind: Some(env.backend_kind),
        think: Some(env.config.think),
        confined: Some(!env.config.unconfined_arms),
        command: l.command,
        backend_url: l.backend_url,
        phases: l.phases,
        budget_seconds: l.budget,
        resume: l.resume,
        quiet_wait: l.quiet_waited,
        sim_ledger: l.sim_ledger,
        score: scored.report,
        score_error: scored.error,
        scoring: scored.took,
        usage,
        overhead: Default::default(),
        retries_left: attempt < env.config.retries,
    };
    let arm_time = l.arm_time;
    let record = facts.record(env.run_dir, || t0.elapsed().saturating_sub(arm_time))?;
    Ok(AttemptResult {
        record,
        overhead: facts.overhead,
    })
}

fn rel(a: &Path, base: &Path) -> String {
    a.strip_prefix(base)
        .unwrap_or(a)
        .to_string_lossy()
        .into_owned()
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

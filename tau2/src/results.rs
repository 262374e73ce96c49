//! Output: tau2-format results.json (re-gradable by upstream's `tau2 evaluate-trajs`), the
//! per-task CSV (domain, task, arm, trial, reward, components, steps, termination) and the
//! per-task manifest in the paper's published shape (typed in `lrab_records::Tau2Manifest`).

use crate::error::{err, Result};
use crate::evaluate::Evaluation;
use crate::message::Message;
use crate::orchestrator::Outcome;
use crate::task::Task;
use lrab_records::{tau2_csv_text, CellStatus, ManifestCell, Tau2Manifest, Tau2Reward, Tau2Row};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// One finished simulation with its grade.
pub struct SimRecord {
    pub task_id: String,
    pub trial: usize,
    pub seed: u64,
    pub start_time: String,
    pub end_time: String,
    pub duration: f64,
    pub outcome: Outcome,
    pub eval: Evaluation,
}

pub struct RunInfo {
    pub domain: String,
    pub policy: String,
    pub arm: String,
    /// `user_info.implementation`: `user_simulator` (LLM user) or `lrab_scripted_user`.
    pub user: String,
    pub agent_model: String,
    pub user_model: String,
    pub num_trials: usize,
    pub max_steps: usize,
    pub max_errors: usize,
    pub seed: u64,
    /// Sampling temperature and thinking of the agent and the user simulator (the same for
    /// both, so arms compare under one setting).
    pub temperature: f64,
    pub think: bool,
    pub timestamp: String,
    /// Whether a backend of the run was the simulator (`lrab_sim::detect`): its
    /// rewards are not results of real models.
    pub simulated: bool,
}

fn message_json(m: &Message, idx: usize) -> Value {
    let mut v = serde_json::to_value(m).expect("message");
    if let Some(o) = v.as_object_mut() {
        if o.get("turn_idx").is_none_or(|t| t.is_null()) {
            o.insert("turn_idx".into(), json!(idx));
        }
        if m.role != "tool" {
            o.entry("tool_calls").or_insert(Value::Null);
        }
    }
    v
}

/// The whole results.json value.
pub fn results_json(info: &RunInfo, tasks: &[&Task], sims: &[SimRecord]) -> Value {
    json!({
        "timestamp": info.timestamp,
        "info": {
            "git_commit": "lrab-tau2",
            "num_trials": info.num_trials,
            "max_steps": info.max_steps,
            "max_errors": info.max_errors,
            "seed": info.seed,
            "simulated": info.simulated,
            "user_info": {"implementation": info.user, "llm": info.user_model, "llm_args": {"temperature": info.temperature, "think": info.think}, "global_simulation_guidelines": null},
            "agent_info": {"implementation": format!("lrab_{}", info.arm), "llm": info.agent_model, "llm_args": {"temperature": info.temperature, "think": info.think}},
            "environment_info": {"domain_name": info.domain, "policy": info.policy, "tool_defs": null},
        },
        "tasks": tasks.iter().map(|t| t.raw.clone()).collect::<Vec<_>>(),
        "simulations": sims.iter().map(|s| json!({
            "id": format!("{}-{}-{}", info.domain, s.task_id, s.trial),
            "task_id": s.task_id,
            "trial": s.trial,
            "seed": s.seed,
            "start_time": s.start_time,
            "end_time": s.end_time,
            "duration": s.duration,
            "termination_reason": s.outcome.termination,
            "agent_cost": null,
            "user_cost": null,
            "reward_info": s.eval.reward_info(),
            "messages": s.outcome.messages.iter().enumerate().map(|(i, m)| message_json(m, i)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// One simulation as a typed CSV row (`lrab_records::Tau2Row`; `simulated` is `true` when
/// the run used the simulated backend (lrab-sim) anywhere, so the label travels with the
/// rows into `lrab analyze`); reward is `1`/`0`, `ungraded` when a gating NL
/// assertion had no judge, or set aside (empty) for an error cell left without a reward
/// (`lrab analyze` counts those apart, as it does the published manifests' error cells).
pub fn csv_record(domain: &str, arm: &str, s: &SimRecord, simulated: bool) -> Tau2Row {
    let reward = match s.eval.reward {
        Some(r) => Tau2Reward::Score(if (r - 1.0).abs() < 1e-6 { 1.0 } else { 0.0 }),
        None if crate::evaluate::is_error_cell(&s.outcome.termination) => Tau2Reward::SetAside,
        None => Tau2Reward::Ungraded,
    };
    Tau2Row {
        domain: domain.into(),
        task: s.task_id.clone(),
        arm: arm.into(),
        trial: s.trial as u64,
        reward,
        components: s.eval.components_text(),
        steps: s.outcome.steps as u64,
        termination: s.outcome.termination.clone(),
        simulated,
    }
}

/// Writes an output file atomically and durably ([`lrab_util::write_atomic`]), creating its
/// folder first, with the path in the error.
pub(crate) fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .map_err(|e| err!(Write, "cannot create {}: {e}", dir.display()))?;
    lrab_util::write_atomic(path, bytes)
        .map_err(|e| err!(Write, "cannot write {}: {e}", path.display()))
}

pub fn write_csv(
    path: &Path,
    domain: &str,
    arm: &str,
    sims: &[SimRecord],
    simulated: bool,
) -> Result<()> {
    let rows: Vec<Tau2Row> = sims
        .iter()
        .map(|s| csv_record(domain, arm, s, simulated))
        .collect();
    write_output(path, tau2_csv_text(&rows).as_bytes())
}

/// One task's manifest cell from its trials (trial order): the first trial's status, reward
/// and wall, and every trial's reward when there are several.
pub fn manifest_cell(trials: &[&SimRecord]) -> ManifestCell {
    let first = trials[0];
    let error = crate::evaluate::is_error_cell(&first.outcome.termination);
    let status = match (error, first.eval.reward) {
        (true, _) => CellStatus::Error,
        (false, Some(_)) => CellStatus::Ok,
        (false, None) => CellStatus::Ungraded,
    };
    ManifestCell {
        status,
        reward: first.eval.reward,
        wall: (!error || first.eval.reward.is_some()).then(|| first.duration.round() as u64),
        error: error.then(|| {
            first
                .outcome
                .note
                .clone()
                .unwrap_or_else(|| first.outcome.termination.clone())
        }),
        rewards: (trials.len() > 1).then(|| trials.iter().map(|r| r.eval.reward).collect()),
    }
}

/// Merges this run's cells (arm `arm`) into `<out>/<domain>_manifest.json`, keeping every other
/// arm's; returns the path. An existing file that is not a manifest is an error, untouched.
pub fn write_manifest(out: &Path, domain: &str, arm: &str, sims: &[SimRecord]) -> Result<PathBuf> {
    let path = out.join(Tau2Manifest::file_name(domain));
    let mut m = if path.exists() {
        Tau2Manifest::read(&path).map_err(|e| err!(Write, "{e}"))?
    } else {
        Tau2Manifest::default()
    };
    let mut ids: Vec<&str> = Vec::new();
    for s in sims {
        if !ids.contains(&s.task_id.as_str()) {
            ids.push(&s.task_id);
        }
    }
    for id in ids {
        let mut trials: Vec<&SimRecord> = sims.iter().filter(|s| s.task_id == id).collect();
        trials.sort_by_key(|s| s.trial);
        m.set(id, arm, manifest_cell(&trials));
    }
    write_output(&path, m.to_json().as_bytes())?;
    Ok(path)
}

//! The paper's protocol as options of `lrab tau2 run`: what becomes of an **error cell** (a
//! conversation that failed rather than ended: a backend or the arm could not go on, or the
//! task could not be set up) and upstream's **pass^k**.
//!
//! Error cells are re-run in up to `--retry-passes` passes over the run (the paper: 2); what is
//! still an error after them is either set aside (no reward: left out of the averages and
//! pass^k, as upstream leaves out infrastructure errors — the default) or scored 0 (the
//! paper). The choice, the passes and every retried cell are recorded in results.json
//! (`info.protocol`) and printed with the summary.

use crate::evaluate::is_error_cell;
use crate::results::SimRecord;
use serde_json::{json, Value};

/// What an error cell left after the retry passes counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ErrorCells {
    /// No reward: left out of averages and pass^k, listed (the default)
    SetAside,
    /// Reward 0, like any failed task (the paper's protocol)
    Zero,
}

impl ErrorCells {
    pub fn name(self) -> &'static str {
        match self {
            ErrorCells::SetAside => "set-aside",
            ErrorCells::Zero => "zero",
        }
    }
}

/// One re-run of an error cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Retry {
    pub task_id: String,
    pub trial: usize,
    /// 1-based retry pass.
    pub pass: usize,
    /// The termination of the run it replaced.
    pub replaced: String,
    pub note: Option<String>,
}

/// The error-cell policy of a run and what it did.
#[derive(Debug, Clone)]
pub struct ErrorPolicy {
    pub cells: ErrorCells,
    pub retry_passes: usize,
    pub retries: Vec<Retry>,
}

impl ErrorPolicy {
    pub fn new(cells: ErrorCells, retry_passes: usize) -> Self {
        ErrorPolicy {
            cells,
            retry_passes,
            retries: Vec::new(),
        }
    }

    /// Applies the policy to the error cells left after the passes: set aside (no reward)
    /// or 0. Returns their indices.
    pub fn settle(&self, records: &mut [SimRecord]) -> Vec<usize> {
        let mut left = Vec::new();
        for (i, r) in records.iter_mut().enumerate() {
            if !is_error_cell(&r.outcome.termination) {
                continue;
            }
            left.push(i);
            let why = r.outcome.note.clone().unwrap_or_default();
            let (reward, what) = match self.cells {
                ErrorCells::SetAside => (None, "set aside"),
                ErrorCells::Zero => (Some(0.0), "scored 0"),
            };
            r.eval.reward = reward;
            r.eval.note = Some(format!(
                "error cell ({}) {what} after {} retry pass(es): {why}",
                r.outcome.termination, self.retry_passes
            ));
        }
        left
    }

    /// The one line the summary prints.
    pub fn summary(&self, records: &[SimRecord], left: &[usize]) -> String {
        let what = match self.cells {
            ErrorCells::SetAside => "set aside (no reward; not in averages or pass^k)",
            ErrorCells::Zero => "scored 0 (the paper's protocol)",
        };
        let ids: Vec<String> = left
            .iter()
            .map(|i| format!("{}/t{}", records[*i].task_id, records[*i].trial))
            .collect();
        format!(
            "error cells: {} retried in up to {} pass(es); {} left, {what}{}",
            self.retries.len(),
            self.retry_passes,
            left.len(),
            if ids.is_empty() {
                String::new()
            } else {
                format!(": {}", ids.join(", "))
            }
        )
    }

    /// `info.protocol` of results.json.
    pub fn record(&self, records: &[SimRecord], left: &[usize], num_trials: usize) -> Value {
        let per_task = per_task_rewards(records);
        json!({
            "error_cells": self.cells.name(),
            "retry_passes": self.retry_passes,
            "retried": self.retries.iter().map(|r| json!({
                "task_id": r.task_id, "trial": r.trial, "pass": r.pass,
                "replaced": r.replaced, "note": r.note,
            })).collect::<Vec<_>>(),
            "error_cells_left": left.iter().map(|i| {
                let r = &records[*i];
                json!({"task_id": r.task_id, "trial": r.trial,
                       "termination_reason": r.outcome.termination, "reward": r.eval.reward})
            }).collect::<Vec<_>>(),
            "pass_hat_ks": pass_hat_ks(&per_task, num_trials)
                .into_iter()
                .map(|(k, v)| (format!("pass_hat_{k}"), json!(v)))
                .collect::<serde_json::Map<_, _>>(),
        })
    }
}

/// Each task's trial rewards (`None`: set aside or ungraded), tasks in first-seen order.
pub fn per_task_rewards(records: &[SimRecord]) -> Vec<Vec<Option<f64>>> {
    let mut ids: Vec<&str> = Vec::new();
    for r in records {
        if !ids.contains(&r.task_id.as_str()) {
            ids.push(&r.task_id);
        }
    }
    ids.iter()
        .map(|id| {
            records
                .iter()
                .filter(|r| r.task_id == *id)
                .map(|r| r.eval.reward)
                .collect()
        })
        .collect()
}

/// pass^k for k = 1..=max_k as upstream computes it (`tau2/metrics/agent_metrics.py`): only
/// rewarded trials count; max_k is the run's number of trials, lowered to the fewest rewarded
/// trials any task with one has; per task C(successes, k) / C(trials, k), averaged over those
/// tasks.
pub fn pass_hat_ks(per_task: &[Vec<Option<f64>>], num_trials: usize) -> Vec<(usize, f64)> {
    let counts: Vec<usize> = per_task
        .iter()
        .map(|t| t.iter().flatten().count())
        .filter(|n| *n > 0)
        .collect();
    let max_k = counts.iter().copied().min().unwrap_or(0).min(num_trials);
    (1..=max_k)
        .filter_map(|k| crate::evaluate::pass_hat_k(per_task, k).map(|p| (k, p)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_hat_ks_lowers_k_to_the_fewest_rewarded_trials() {
        // upstream's example shape: 2 tasks x 3 trials, one trial set aside
        let t = vec![
            vec![Some(1.0), Some(1.0), Some(0.0)],
            vec![Some(1.0), None, Some(1.0)],
        ];
        let ks = pass_hat_ks(&t, 3);
        assert_eq!(ks.len(), 2, "max k = 2: task 2 has two rewarded trials");
        assert!((ks[0].1 - (2.0 / 3.0 + 1.0) / 2.0).abs() < 1e-12);
        assert!((ks[1].1 - (1.0 / 3.0 + 1.0) / 2.0).abs() < 1e-12);
        assert!(pass_hat_ks(&[vec![None]], 1).is_empty());
        // a task with no rewarded trial at all is left out, as upstream drops it
        assert_eq!(
            pass_hat_ks(&[vec![Some(1.0)], vec![None]], 1),
            vec![(1, 1.0)]
        );
    }

    #[test]
    fn error_cells_are_failures_not_endings() {
        assert!(is_error_cell("agent_error") && is_error_cell("infrastructure_error"));
        assert!(!is_error_cell("max_steps") && !is_error_cell("user_stop"));
    }
}

//! Gold replay: fresh DB, task initial state, then the task's reference actions in order
//! (errors swallowed, as upstream's evaluator does).

use crate::domains::Domain;
use crate::task::Task;
use anyhow::Result;

#[derive(Debug, Clone)]
pub struct GoldOutcome {
    pub task_id: String,
    pub db_hash: String,
    pub user_db_hash: Option<String>,
    pub actions: usize,
    pub errors: Vec<(usize, String, String)>,
}

/// Replay one task's gold actions on a fresh environment.
pub fn replay_gold(domain: &Domain, task: &Task) -> Result<GoldOutcome> {
    let mut env = domain.env();
    let history = task
        .initial_state
        .as_ref()
        .and_then(|s| s.message_history.as_deref())
        .unwrap_or_default();
    env.set_state(task.initial_state.as_ref(), history)?;
    let mut errors = Vec::new();
    let actions = task
        .evaluation_criteria
        .as_ref()
        .and_then(|e| e.actions.as_ref());
    for (i, a) in actions.into_iter().flatten().enumerate() {
        if let Err(e) = env.call_tool(&a.requestor, &a.name, &a.arguments) {
            errors.push((i, a.name.clone(), e.0));
        }
    }
    Ok(GoldOutcome {
        task_id: task.id.clone(),
        db_hash: env.db_hash(),
        user_db_hash: env.user_db_hash(),
        actions: actions.map_or(0, |a| a.len()),
        errors,
    })
}

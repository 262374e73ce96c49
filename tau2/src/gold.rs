//! Gold replay: fresh DB, task initial state, then the task's reference actions in order
//! (errors swallowed), as upstream's evaluator builds its gold environment. For tasks with
//! env assertions the actions are also performed as in a conversation — each call followed
//! by a synchronisation — and every assertion is checked on that state, which is what a
//! gold trajectory is graded on.

use crate::domains::{as_bool, Domain};
use crate::error::Result;
use crate::message::ToolCall;
use crate::task::Task;

#[derive(Debug, Clone)]
pub struct GoldOutcome {
    pub task_id: String,
    pub db_hash: String,
    pub user_db_hash: Option<String>,
    pub actions: usize,
    pub errors: Vec<(usize, String, String)>,
    /// Whether each env assertion holds after the gold actions (conversation order).
    pub assertions: Vec<bool>,
}

/// Replay one task's gold actions on a fresh environment.
pub fn replay_gold(domain: &Domain, task: &Task) -> Result<GoldOutcome> {
    let history = task
        .initial_state
        .as_ref()
        .and_then(|s| s.message_history.as_deref())
        .unwrap_or_default();
    let mut env = domain.env();
    env.set_state(task.initial_state.as_ref(), history)?;
    let ec = task.evaluation_criteria.as_ref();
    let actions = ec.and_then(|e| e.actions.as_deref()).unwrap_or_default();
    let mut errors = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        if let Err(e) = env.call_tool(&a.requestor, &a.name, &a.arguments) {
            errors.push((i, a.name.clone(), e.0));
        }
    }
    let mut assertions = Vec::new();
    let checks = ec
        .and_then(|e| e.env_assertions.as_deref())
        .unwrap_or_default();
    if !checks.is_empty() {
        let mut conv = domain.env();
        conv.set_state(task.initial_state.as_ref(), history)?;
        for (i, a) in actions.iter().enumerate() {
            conv.get_response(&ToolCall {
                id: format!("gold_{i}"),
                name: a.name.clone(),
                arguments: a.arguments.clone(),
                requestor: a.requestor.clone(),
            });
        }
        let _ = conv.sync();
        for c in checks {
            let met = conv
                .run_function(&c.env_type, &c.func_name, &c.arguments)
                .and_then(|o| as_bool(&o, &c.func_name))
                .is_ok_and(|b| b == c.assert_value);
            assertions.push(met);
        }
    }
    Ok(GoldOutcome {
        task_id: task.id.clone(),
        db_hash: env.db_hash(),
        user_db_hash: env.user_db_hash(),
        actions: actions.len(),
        errors,
        assertions,
    })
}

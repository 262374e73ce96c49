//! Grading a trajectory like upstream's evaluator: DB, ENV_ASSERTION, COMMUNICATE, ACTION
//! and NL_ASSERTION components; the reward is the product over the task's reward_basis.
//! NL assertions need a judge model: without one such tasks are *ungraded*, never passes.

use crate::domains::{as_bool, Domain};
use crate::error::Result;
use crate::gold;
use crate::message::{Message, ToolCall};
use crate::task::{Action, EnvAssertion, Task};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// Why a simulation ended (upstream `TerminationReason` values).
pub const USER_STOP: &str = "user_stop";
pub const AGENT_STOP: &str = "agent_stop";
pub const MAX_STEPS: &str = "max_steps";
pub const TOO_MANY_ERRORS: &str = "too_many_errors";
pub const AGENT_ERROR: &str = "agent_error";
pub const USER_ERROR: &str = "user_error";
/// The task could not be set up (its initialization failed); not a result of the agent.
pub const INFRASTRUCTURE_ERROR: &str = "infrastructure_error";

/// Whether a conversation's termination makes it an error cell (a failure of the run, not
/// an ending of the conversation); beside the terminations so results and protocol share it.
pub fn is_error_cell(termination: &str) -> bool {
    [AGENT_ERROR, USER_ERROR, INFRASTRUCTURE_ERROR].contains(&termination)
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NlResult {
    #[serde(rename = "nl_assertion")]
    pub assertion: String,
    pub met: bool,
    pub justification: String,
}

/// An NL-assertion judge (an LLM in production, a fixed table in tests).
pub trait Judge {
    fn judge(&mut self, messages: &[Message], assertions: &[String]) -> Result<Vec<NlResult>>;
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Evaluation {
    /// `None` = ungraded (a gating NL assertion had no judge).
    pub reward: Option<f64>,
    /// Component name -> 0/1, `None` when not computed (ungraded NL).
    pub components: Vec<(String, Option<f64>)>,
    pub reward_basis: Vec<String>,
    pub db_match: Option<bool>,
    pub communicate: Vec<(String, bool)>,
    /// Each gold action (the whole object: upstream's `ActionCheck.action` is an `Action`).
    pub actions: Vec<(Action, bool)>,
    /// Each env assertion (the whole object, as upstream's `EnvAssertionCheck` needs).
    pub env_assertions: Vec<(EnvAssertion, bool)>,
    pub nl: Option<Vec<NlResult>>,
    pub note: Option<String>,
}

impl Evaluation {
    /// The grade of a simulation that never ran (its task could not be set up): no reward,
    /// left out of averages and pass^k like upstream's infrastructure errors.
    pub fn not_run(task: &Task, why: &str) -> Evaluation {
        Evaluation {
            reward: None,
            components: vec![],
            reward_basis: task
                .evaluation_criteria
                .as_ref()
                .map(|e| e.reward_basis.clone())
                .unwrap_or_default(),
            db_match: None,
            communicate: vec![],
            actions: vec![],
            env_assertions: vec![],
            nl: None,
            note: Some(format!("not run: {why}")),
        }
    }

    pub fn components_text(&self) -> String {
        self.components
            .iter()
            .map(|(k, v)| match v {
                Some(x) => format!("{k}={}", *x as i64),
                None => format!("{k}=ungraded"),
            })
            .collect::<Vec<_>>()
            .join(";")
    }

    /// upstream-shaped `reward_info` object for results.json.
    pub fn reward_info(&self) -> Value {
        let breakdown: Map<String, Value> = self
            .components
            .iter()
            .filter(|(k, _)| self.reward_basis.contains(k))
            .filter_map(|(k, v)| v.map(|x| (k.clone(), json!(x))))
            .collect();
        json!({
            "reward": self.reward.unwrap_or(0.0),
            "db_check": self.db_match.map(|m| json!({"db_match": m, "db_reward": if m {1.0} else {0.0}})),
            "env_assertions": self.env_assertions.iter().map(|(a, m)| json!({"env_assertion": a, "met": m, "reward": if *m {1.0} else {0.0}})).collect::<Vec<_>>(),
            "action_checks": self.actions.iter().map(|(a, m)| json!({"action": a, "action_match": m, "action_reward": if *m {1.0} else {0.0}})).collect::<Vec<_>>(),
            "nl_assertions": self.nl,
            "communicate_checks": self.communicate.iter().map(|(i, m)| json!({"info": i, "met": m, "justification": if *m {"Information communicated to the user"} else {"Information not communicated to the user"}})).collect::<Vec<_>>(),
            "reward_basis": self.reward_basis,
            "reward_breakdown": breakdown,
            "info": {"graded": self.reward.is_some(), "note": self.note},
        })
    }
}

/// Strings that look like JSON are compared as parsed values (upstream normalisation).
fn normalize(v: &Value) -> Value {
    match v {
        Value::String(s) => {
            let t = s.trim();
            if t.starts_with('{') || t.starts_with('[') {
                if let Ok(p) = serde_json::from_str::<Value>(t) {
                    return normalize(&p);
                }
            }
            v.clone()
        }
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), normalize(x))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        _ => v.clone(),
    }
}

/// JSON equality with Python semantics for numbers (1 == 1.0).
fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Upstream `Action.compare_with_tool_call`.
pub fn action_matches(action: &Action, call: &ToolCall) -> bool {
    if action.name != call.name {
        return false;
    }
    let keys: Vec<String> = match &action.compare_args {
        Some(k) => k.clone(),
        None => call.arguments.keys().cloned().collect(),
    };
    if keys.is_empty() {
        return true;
    }
    let pick = |m: &Map<String, Value>| -> Map<String, Value> {
        m.iter()
            .filter(|(k, _)| keys.contains(k))
            .map(|(k, v)| (k.clone(), normalize(v)))
            .collect()
    };
    py_eq(
        &Value::Object(pick(&call.arguments)),
        &Value::Object(pick(&action.arguments)),
    )
}

/// Upstream communicate check: case-insensitive substring of some assistant text, with
/// commas removed from the message.
pub fn communicated(info: &str, messages: &[Message]) -> bool {
    let needle = info.to_lowercase();
    messages.iter().any(|m| {
        m.role == "assistant"
            && m.content.as_deref().is_some_and(|c| {
                !c.is_empty() && c.to_lowercase().replace(',', "").contains(&needle)
            })
    })
}

/// Grade one trajectory. `messages` is the full trajectory (including any initial history).
pub fn evaluate(
    domain: &Domain,
    task: &Task,
    messages: &[Message],
    termination: &str,
    judge: Option<&mut dyn Judge>,
) -> Result<Evaluation> {
    let Some(ec) = &task.evaluation_criteria else {
        return Ok(Evaluation {
            reward: Some(1.0),
            components: vec![],
            reward_basis: vec![],
            db_match: None,
            communicate: vec![],
            actions: vec![],
            env_assertions: vec![],
            nl: None,
            note: Some("task has no evaluation criteria".into()),
        });
    };
    let basis = ec.reward_basis.clone();
    let mut ev = Evaluation {
        reward: Some(0.0),
        components: vec![],
        reward_basis: basis.clone(),
        db_match: None,
        communicate: vec![],
        actions: vec![],
        env_assertions: vec![],
        nl: None,
        note: None,
    };
    if termination != USER_STOP && termination != AGENT_STOP {
        ev.note = Some(format!("simulation ended with {termination}; reward 0"));
        return Ok(ev);
    }

    // Predicted environment: initial state, then every state-changing call of the trajectory.
    // (`messages` already starts with the task's message history, as upstream's does.)
    let mut predicted = domain.env();
    predicted.set_state(task.initial_state.as_ref(), messages)?;

    // DB
    let db_reward = if ec.actions.is_none() && ec.env_assertions.is_none() {
        // Upstream reports this case as a matching DB check, not as a missing one.
        ev.db_match = Some(true);
        1.0
    } else {
        let g = gold::replay_gold(domain, task)?;
        let m = g.db_hash == predicted.db_hash() && g.user_db_hash == predicted.user_db_hash();
        ev.db_match = Some(m);
        if m {
            1.0
        } else {
            0.0
        }
    };
    ev.components.push(("DB".into(), Some(db_reward)));

    // ENV_ASSERTION
    let mut env_ok = true;
    for a in ec.env_assertions.iter().flatten() {
        let met = predicted
            .run_function(&a.env_type, &a.func_name, &a.arguments)
            .and_then(|o| as_bool(&o, &a.func_name))
            .map(|b| b == a.assert_value)
            .unwrap_or(false);
        env_ok &= met;
        ev.env_assertions.push((a.clone(), met));
    }
    ev.components
        .push(("ENV_ASSERTION".into(), Some(if env_ok { 1.0 } else { 0.0 })));

    // COMMUNICATE
    let mut comm_ok = true;
    for info in ec.communicate_info.iter().flatten() {
        let met = communicated(info, messages);
        comm_ok &= met;
        ev.communicate.push((info.clone(), met));
    }
    ev.components
        .push(("COMMUNICATE".into(), Some(if comm_ok { 1.0 } else { 0.0 })));

    // ACTION
    let calls: Vec<&ToolCall> = messages
        .iter()
        .filter_map(|m| m.tool_calls.as_ref())
        .flatten()
        .collect();
    let mut act_ok = true;
    for a in ec.actions.iter().flatten() {
        let met = calls.iter().any(|c| action_matches(a, c));
        act_ok &= met;
        ev.actions.push((a.clone(), met));
    }
    ev.components
        .push(("ACTION".into(), Some(if act_ok { 1.0 } else { 0.0 })));

    // NL_ASSERTION (only when gating, like upstream's default evaluation type)
    if basis.iter().any(|b| b == "NL_ASSERTION") {
        nl_component(&mut ev, ec.nl_assertions.as_deref(), messages, judge)?;
    }

    ev.reward = reward_of(&basis, &ev.components);
    Ok(ev)
}

/// The NL_ASSERTION component: met when the judge finds every assertion met; ungraded (and
/// said so in the note) without a judge.
fn nl_component(
    ev: &mut Evaluation,
    assertions: Option<&[String]>,
    messages: &[Message],
    judge: Option<&mut dyn Judge>,
) -> Result<()> {
    let list: Vec<String> = assertions.map(<[String]>::to_vec).unwrap_or_default();
    if list.is_empty() {
        ev.components.push(("NL_ASSERTION".into(), Some(1.0)));
    } else if let Some(j) = judge {
        let results = j.judge(messages, &list)?;
        let ok = results.len() == list.len() && results.iter().all(|r| r.met);
        ev.nl = Some(results);
        ev.components
            .push(("NL_ASSERTION".into(), Some(if ok { 1.0 } else { 0.0 })));
    } else {
        ev.components.push(("NL_ASSERTION".into(), None));
        ev.note = Some(
            "NL assertions need a judge model; none configured, so this task is ungraded".into(),
        );
    }
    Ok(())
}

/// The reward: the product of the basis components, `None` when one is ungraded, unless a
/// failed gating component decides the task anyway.
fn reward_of(basis: &[String], components: &[(String, Option<f64>)]) -> Option<f64> {
    let mut reward = Some(1.0);
    for b in basis {
        let v = components
            .iter()
            .find(|(k, _)| k == b)
            .and_then(|(_, v)| *v);
        reward = match (reward, v) {
            (Some(r), Some(x)) => Some(r * x),
            _ => None,
        };
    }
    // A failed gating component decides the task even when NL is ungraded.
    if reward.is_none()
        && basis
            .iter()
            .any(|b| components.iter().any(|(k, v)| k == b && *v == Some(0.0)))
    {
        reward = Some(0.0);
    }
    reward
}

/// `n choose k` as f64.
fn comb(n: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// pass^k = mean over tasks of C(successes, k) / C(trials, k). Ungraded trials are left
/// out; tasks with fewer than k graded trials are skipped. `None` when no task qualifies.
pub fn pass_hat_k(per_task: &[Vec<Option<f64>>], k: usize) -> Option<f64> {
    let mut vals = Vec::new();
    for trials in per_task {
        let graded: Vec<f64> = trials.iter().filter_map(|x| *x).collect();
        if graded.len() < k || k == 0 {
            continue;
        }
        let s = graded.iter().filter(|r| (*r - 1.0).abs() < 1e-6).count();
        vals.push(comb(s, k) / comb(graded.len(), k));
    }
    (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_hat_k_matches_definition() {
        let t = vec![
            vec![Some(1.0), Some(1.0), Some(0.0), Some(1.0)],
            vec![Some(0.0); 4],
        ];
        assert!((pass_hat_k(&t, 1).unwrap() - 0.375).abs() < 1e-12);
        assert!((pass_hat_k(&t, 2).unwrap() - 0.25).abs() < 1e-12); // (3/6)/2
        assert_eq!(pass_hat_k(&t, 4).unwrap(), 0.0);
        assert_eq!(pass_hat_k(&[vec![None, None]], 1), None);
    }

    #[test]
    fn communicate_ignores_case_and_commas() {
        let m = vec![Message::assistant_text("Your refund is $1,093.34 TOTAL")];
        assert!(communicated("1093.34 total", &m));
        assert!(!communicated("1093.35", &m));
        assert!(!communicated("refund", &[Message::user_text("refund")]));
    }

    #[test]
    fn action_compare_args() {
        let a: Action = serde_json::from_value(json!({"action_id": "x", "name": "f", "arguments": {"a": 1, "b": "{\"k\": [1]}"}, "compare_args": ["a", "b"]})).unwrap();
        let c = |args: Value| ToolCall {
            id: "1".into(),
            name: "f".into(),
            arguments: args.as_object().unwrap().clone(),
            requestor: "assistant".into(),
        };
        assert!(action_matches(
            &a,
            &c(json!({"a": 1.0, "b": "{\"k\":[1]}", "z": 9}))
        ));
        assert!(!action_matches(&a, &c(json!({"a": 2, "b": "{\"k\":[1]}"}))));
        let any: Action = serde_json::from_value(
            json!({"action_id": "x", "name": "f", "arguments": {}, "compare_args": []}),
        )
        .unwrap();
        assert!(action_matches(&any, &c(json!({"q": 1}))));
    }
}

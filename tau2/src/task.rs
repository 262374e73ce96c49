//! Upstream task files (`tasks.json`, `split_tasks.json`): the typed parts we use plus
//! the raw JSON, which results.json must carry unchanged.

use crate::message::Message;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    #[serde(default)]
    pub description: Option<Value>,
    pub user_scenario: UserScenario,
    #[serde(default)]
    pub ticket: Option<String>,
    #[serde(default)]
    pub initial_state: Option<InitialState>,
    #[serde(default)]
    pub evaluation_criteria: Option<EvaluationCriteria>,
    /// The user tools this task allows (all when absent).
    #[serde(default)]
    pub user_tools: Option<Vec<String>>,
    #[serde(skip)]
    pub raw: Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UserScenario {
    #[serde(default)]
    pub persona: Option<String>,
    pub instructions: Instructions,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Instructions {
    Structured {
        domain: String,
        reason_for_call: String,
        #[serde(default)]
        known_info: Option<String>,
        #[serde(default)]
        unknown_info: Option<String>,
        task_instructions: String,
    },
    Text(String),
}

/// Python `textwrap.indent(text, prefix)`: prefix every line that is not blank.
pub fn indent(text: &str, prefix: &str) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        if !line.trim().is_empty() {
            out.push_str(prefix);
        }
        out.push_str(line);
    }
    out
}

impl std::fmt::Display for Instructions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Instructions::Text(s) => f.write_str(s),
            Instructions::Structured {
                domain,
                reason_for_call,
                known_info,
                unknown_info,
                task_instructions,
            } => {
                let mut lines = vec![
                    format!("Domain: {domain}"),
                    format!("Reason for call:\n{}", indent(reason_for_call, "\t")),
                ];
                if let Some(k) = known_info {
                    lines.push(format!("Known info:\n{}", indent(k, "\t")));
                }
                if let Some(u) = unknown_info {
                    lines.push(format!("Unknown info:\n{}", indent(u, "\t")));
                }
                lines.push(format!(
                    "Task instructions:\n{}",
                    indent(task_instructions, "\t")
                ));
                f.write_str(&lines.join("\n"))
            }
        }
    }
}

impl std::fmt::Display for UserScenario {
    /// The scenario text the user simulator receives (upstream `str(task.user_scenario)`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut lines = Vec::new();
        if let Some(p) = &self.persona {
            lines.push("Persona:".to_string());
            lines.push(indent(p, "\t"));
        }
        lines.push("Instructions:".to_string());
        lines.push(indent(&self.instructions.to_string(), "\t"));
        f.write_str(&lines.join("\n"))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct InitialState {
    #[serde(default)]
    pub initialization_data: Option<InitializationData>,
    #[serde(default)]
    pub initialization_actions: Option<Vec<EnvFunctionCall>>,
    #[serde(default)]
    pub message_history: Option<Vec<Message>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct InitializationData {
    #[serde(default)]
    pub agent_data: Option<Value>,
    #[serde(default)]
    pub user_data: Option<Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnvFunctionCall {
    pub env_type: String,
    pub func_name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EnvAssertion {
    pub env_type: String,
    pub func_name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    #[serde(default = "yes")]
    pub assert_value: bool,
    #[serde(default)]
    pub message: Option<String>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Action {
    pub action_id: String,
    #[serde(default = "assistant")]
    pub requestor: String,
    pub name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    #[serde(default)]
    pub info: Option<String>,
    #[serde(default)]
    pub compare_args: Option<Vec<String>>,
}

fn assistant() -> String {
    "assistant".into()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvaluationCriteria {
    #[serde(default)]
    pub actions: Option<Vec<Action>>,
    #[serde(default)]
    pub env_assertions: Option<Vec<EnvAssertion>>,
    #[serde(default)]
    pub communicate_info: Option<Vec<String>>,
    #[serde(default)]
    pub nl_assertions: Option<Vec<String>>,
    #[serde(default = "default_basis")]
    pub reward_basis: Vec<String>,
}

fn default_basis() -> Vec<String> {
    vec!["DB".into(), "COMMUNICATE".into()]
}

pub const REWARD_TYPES: &[&str] = &[
    "DB",
    "ENV_ASSERTION",
    "COMMUNICATE",
    "NL_ASSERTION",
    "ACTION",
];

/// Parse a tasks.json text, keeping the ids in `keep` when given; every kept entry must
/// validate (upstream validates each `Task`). Telecom's file holds 2,285 tasks of which
/// the base split keeps 114, so only those are typed.
pub fn parse_tasks(
    text: &str,
    path: &str,
    keep: Option<&std::collections::HashSet<String>>,
) -> crate::error::Result<Vec<Task>> {
    let raw: Vec<Value> = serde_json::from_str(text)
        .map_err(|e| crate::error::err!(Data, "{path}: not a JSON list of tasks: {e}"))?;
    let mut out = Vec::with_capacity(raw.len());
    for (i, v) in raw.into_iter().enumerate() {
        if let Some(keep) = keep {
            let id = v.get("id").and_then(Value::as_str).unwrap_or_default();
            if !keep.contains(id) {
                continue;
            }
        }
        let mut t: Task = serde_json::from_value(v.clone()).map_err(|e| {
            let id = v
                .get("id")
                .map(|x| x.to_string())
                .unwrap_or_else(|| "?".into());
            crate::error::err!(Data, "{path}: task #{i} (id {id}): {e}")
        })?;
        if let Some(ec) = &t.evaluation_criteria {
            for b in &ec.reward_basis {
                if !REWARD_TYPES.contains(&b.as_str()) {
                    crate::error::fail!(
                        Data,
                        "{path}: task {}: unknown reward_basis entry {b:?}",
                        t.id
                    );
                }
            }
        }
        t.raw = v;
        out.push(t);
    }
    Ok(out)
}

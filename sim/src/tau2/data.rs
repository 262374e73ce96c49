//! The τ²-bench task data the simulator knows (as the LRAB oracle knows each task's
//! reference solution): per domain, the `base` split's tasks with their user scenario, gold
//! actions and the information the agent must communicate. Read once per process from the
//! data folder every τ² command uses (`TAU2_DATA_DIR`, else the `lrab-data` lookup); without
//! the data the simulator simply does not know τ².

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One gold action of a task.
#[derive(Debug, Clone, PartialEq)]
pub struct Gold {
    pub name: String,
    pub args: Value,
    /// Performed by the customer on their own device (telecom), not by the agent.
    pub by_user: bool,
}

/// One task, as far as the simulator acts on it.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: String,
    /// The scenario's texts, whitespace runs as one space.
    pub reason: String,
    pub known: String,
    pub instructions: String,
    pub actions: Vec<Gold>,
    pub communicate: Vec<String>,
}

impl Task {
    /// What the customer says first: the reason for the call and what they know.
    pub fn opening(&self) -> String {
        format!("{} {}", self.reason, self.known).trim().to_string()
    }
}

/// A domain's tasks and the tool names the agent's gold actions use.
#[derive(Debug, Clone)]
pub struct Domain {
    pub tasks: Vec<Task>,
    pub agent_tools: BTreeSet<String>,
}

/// Every domain found.
#[derive(Debug, Default)]
pub struct Data {
    pub domains: Vec<Domain>,
}

const DOMAINS: [&str; 4] = ["airline", "retail", "telecom", "mock"];

/// The data of this process (loaded on first use).
pub fn get() -> &'static Data {
    static DATA: OnceLock<Data> = OnceLock::new();
    DATA.get_or_init(|| match folder() {
        Some(dir) => load(&dir),
        None => Data::default(),
    })
}

fn folder() -> Option<PathBuf> {
    let dir = match std::env::var_os("TAU2_DATA_DIR").filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => lrab_data::folder("tau2").ok()?,
    };
    [dir.clone(), dir.join("tau2")]
        .into_iter()
        .find(|d| d.join("domains").is_dir())
}

/// Loads every domain of `dir` (the folder holding `domains/`) that reads cleanly.
pub fn load(dir: &Path) -> Data {
    let domains = DOMAINS
        .iter()
        .filter_map(|d| domain(&dir.join("domains").join(d)))
        .collect();
    Data { domains }
}

fn read_json(p: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(p).ok()?).ok()
}

/// One domain's folder (`domains/<name>`).
pub fn domain(dir: &Path) -> Option<Domain> {
    let tasks = read_json(&dir.join("tasks.json"))?;
    let base: Option<BTreeSet<String>> = read_json(&dir.join("split_tasks.json")).and_then(|s| {
        s.get("base")?.as_array().map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
    });
    let tasks: Vec<Task> = tasks
        .as_array()?
        .iter()
        .filter(|t| {
            base.as_ref()
                .is_none_or(|b| t["id"].as_str().is_some_and(|id| b.contains(id)))
        })
        .filter_map(task)
        .collect();
    let agent_tools = tasks
        .iter()
        .flat_map(|t| t.actions.iter())
        .filter(|a| !a.by_user)
        .map(|a| a.name.clone())
        .collect();
    Some(Domain { agent_tools, tasks })
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn task(t: &Value) -> Option<Task> {
    let ins = &t["user_scenario"]["instructions"];
    // kept with whitespace runs as one space: they are looked for in requests that way
    let (reason, known, instructions) = match ins {
        Value::String(s) => (squash(s), String::new(), String::new()),
        _ => (
            squash(&text(&ins["reason_for_call"])),
            squash(&text(&ins["known_info"])),
            squash(&text(&ins["task_instructions"])),
        ),
    };
    let crit = &t["evaluation_criteria"];
    let actions = crit["actions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| {
                    Some(Gold {
                        name: x["name"].as_str()?.to_string(),
                        args: x.get("arguments").cloned().unwrap_or(Value::Null),
                        by_user: x["requestor"].as_str() == Some("user"),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let communicate = crit["communicate_info"]
        .as_array()
        .map(|a| a.iter().map(text).filter(|s| !s.is_empty()).collect())
        .unwrap_or_default();
    Some(Task {
        id: t["id"].as_str()?.to_string(),
        reason,
        known,
        instructions,
        actions,
        communicate,
    })
}

/// Whitespace runs as one space (the scenario reaches the user simulator re-indented).
pub fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

//! Domains, their loaded data, and per-task environments.

pub mod airline;
mod env;
pub mod mock;
mod registry;
pub mod retail;
pub mod schemas;
mod tables;
pub mod telecom;
pub use env::{Env, ToolKind};
pub use registry::DomainKind;
use registry::DomainState;

use crate::args::{terr, Args, Out, ToolError, ToolResult};
use crate::error::{err, fail, Result};
use crate::task::{parse_tasks, Task};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Every domain, one row each (its folder's `DOMAIN`); `--domain` offers them in this order.
static TABLE: [DomainKind; 4] = [
    DomainKind(&airline::DOMAIN),
    DomainKind(&retail::DOMAIN),
    DomainKind(&mock::DOMAIN),
    DomainKind(&telecom::DOMAIN),
];

/// Find the data folder: `--tau2-data`, else `TAU2_DATA_DIR`, else the data lookup (`LRAB_DATA`
/// or `../shared/data`, then the cache `lrab data fetch` fills; see `lrab-data`). Accepts either
/// the folder holding `domains/` or its parent (upstream's `TAU2_DATA_DIR` convention).
pub fn resolve_data_dir(arg: Option<&Path>) -> Result<PathBuf> {
    let dir = match arg {
        Some(p) => p.to_path_buf(),
        None => match std::env::var_os("TAU2_DATA_DIR") {
            Some(v) => PathBuf::from(v),
            None => match lrab_data::folder("tau2") {
                Ok(dir) => dir,
                Err(e) => fail!(
                    Data,
                    "no tau2 data: {e} (or pass --tau2-data <dir>, or set TAU2_DATA_DIR)"
                ),
            },
        },
    };
    if dir.join("domains").is_dir() {
        return Ok(dir);
    }
    if dir.join("tau2").join("domains").is_dir() {
        return Ok(dir.join("tau2"));
    }
    if !dir.exists() {
        fail!(Data, "tau2 data directory {} does not exist", dir.display());
    }
    fail!(
        Data,
        "tau2 data directory {} has no domains/ folder",
        dir.display()
    )
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| err!(Data, "cannot read {}: {e}", path.display()))
}

/// A JSON file of a domain's folder, as `T`; errors name the file.
fn parse_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = read(path)?;
    serde_json::from_str(&text).map_err(|e| err!(Data, "{}: {e}", path.display()))
}

/// The policy of most domains: `policy.md` in the domain's folder.
fn policy_md(dir: &Path) -> Result<String> {
    read(&dir.join("policy.md"))
}

/// A loaded domain: policy, base-split tasks and the pristine DB(s).
pub struct Domain {
    pub kind: DomainKind,
    pub policy: String,
    pub tasks: Vec<Task>,
    pub data_dir: PathBuf,
    base: Box<dyn DomainState>,
}

impl Domain {
    pub fn load(data_dir: &Path, kind: DomainKind) -> Result<Domain> {
        let d = data_dir.join("domains").join(kind.name());
        if !d.is_dir() {
            fail!(Data, "{} is missing (domain {})", d.display(), kind.name());
        }
        let policy = (kind.def().policy)(&d)?;
        let tasks_path = d.join("tasks.json");
        let split_path = d.join("split_tasks.json");
        let base_ids: Option<std::collections::HashSet<String>> = if split_path.exists() {
            let splits: Map<String, Value> = parse_json(&split_path)?;
            let base = splits
                .get("base")
                .and_then(|v| v.as_array())
                .ok_or_else(|| err!(Data, "{}: no 'base' split", split_path.display()))?;
            Some(
                base.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
            )
        } else {
            None
        };
        let tasks = parse_tasks(
            &read(&tasks_path)?,
            &tasks_path.display().to_string(),
            base_ids.as_ref(),
        )?;
        let base = (kind.def().load)(&d)?;
        Ok(Domain {
            kind,
            policy,
            tasks,
            data_dir: data_dir.to_path_buf(),
            base,
        })
    }

    pub fn task(&self, id: &str) -> Result<&Task> {
        self.tasks.iter().find(|t| t.id == id).ok_or_else(|| {
            err!(
                Data,
                "unknown task id {id:?} in domain {} (base split)",
                self.kind.name()
            )
        })
    }

    /// A fresh environment (cheap: records are shared until a tool changes them).
    pub fn env(&self) -> Env {
        Env {
            kind: self.kind,
            state: self.base.fresh(),
        }
    }

    pub fn initial_hashes(&self) -> (String, Option<String>) {
        let e = self.env();
        (e.db_hash(), e.user_db_hash())
    }
}

/// addict-style recursive update: objects merge key by key, other values are replaced.
pub fn deep_merge(base: &mut Value, update: &Value) {
    match (base, update) {
        (Value::Object(b), Value::Object(u)) => {
            for (k, v) in u {
                match b.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => {
                        deep_merge(existing, v)
                    }
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, u) => *b = u.clone(),
    }
}

/// `db` with `data` deep-merged in, re-validated as the DB type (a domain's
/// [`registry::DomainState::merge_agent_data`] and `merge_user_data`).
pub(crate) fn merged<T: serde::Serialize + serde::de::DeserializeOwned>(
    db: &T,
    data: &Value,
    what: &str,
) -> Result<T> {
    let mut v = serde_json::to_value(db)?;
    deep_merge(&mut v, data);
    serde_json::from_value(v)
        .map_err(|e| err!(Env, "initialization_data.{what} does not fit the DB: {e}"))
}

/// JSON value of a record or tool result (the domain types always serialise).
fn to_json<T: serde::Serialize>(x: &T) -> Value {
    serde_json::to_value(x).expect("serialisable")
}

/// One call into a toolkit, dispatched as upstream's toolkits are: keyword names checked like
/// the Python call `<class>.<name>(...)`, the generic tools a toolkit lists answered alike in
/// every domain, and any other name "not found". Each domain's `call` matches its own tools
/// and hands the rest to [`Invocation::other`].
struct Invocation<'a> {
    /// The Python class named in argument errors (`AirlineTools`, …).
    class: &'static str,
    name: &'a str,
    kw: &'a Map<String, Value>,
}

impl<'a> Invocation<'a> {
    fn new(class: &'static str, name: &'a str, kw: &'a Map<String, Value>) -> Self {
        Invocation { class, name, kw }
    }

    /// The call's arguments, checked against the tool's `required` and `optional` names.
    fn args(&self, required: &[&str], optional: &[&str]) -> Result<Args<'a>, ToolError> {
        Args::new(self.class, self.name, self.kw, required, optional)
    }

    /// A name the domain's own tools do not answer: one of the toolkit's `generic` tools
    /// (`calculate`, `transfer_to_human_agents`), else "not found".
    fn other(&self, generic: &[&str]) -> ToolResult {
        match self.name {
            n if !generic.contains(&n) => Err(terr!("Tool '{n}' not found.")),
            "calculate" => {
                let a = self.args(&["expression"], &[])?;
                crate::calc::calculate(&a.str("expression")?).map(Out::Str)
            }
            "transfer_to_human_agents" => {
                self.args(&["summary"], &[])?;
                Ok(Out::Str("Transfer successful".into()))
            }
            n => Err(terr!("Tool '{n}' not found.")),
        }
    }
}

/// Result of a function used as an assertion: it must be a boolean.
pub fn as_bool(out: &Out, func: &str) -> Result<bool, ToolError> {
    match out {
        Out::Json(Value::Bool(b)) => Ok(*b),
        _ => Err(terr!("Function {func} returned a non-bool value")),
    }
}

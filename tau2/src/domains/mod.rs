//! Domains, their loaded data, and per-task environments.

pub mod airline;
pub mod mock;
pub mod retail;
pub mod schemas;
mod tables;

use crate::args::{terr, Out, ToolError, ToolResult};
use crate::message::{Message, ToolCall};
use crate::task::{parse_tasks, InitialState, Task};
use anyhow::{anyhow, bail, Context, Result};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DomainKind {
    Airline,
    Retail,
    Mock,
}

impl DomainKind {
    pub fn name(self) -> &'static str {
        match self {
            DomainKind::Airline => "airline",
            DomainKind::Retail => "retail",
            DomainKind::Mock => "mock",
        }
    }
    pub fn parse(s: &str) -> Result<DomainKind> {
        match s {
            "airline" => Ok(DomainKind::Airline),
            "retail" => Ok(DomainKind::Retail),
            "mock" => Ok(DomainKind::Mock),
            "telecom" => bail!("domain 'telecom' is out of scope for lrab-tau2 (see docs/tau2.md)"),
            other => bail!("unknown domain {other:?} (expected airline, retail or mock)"),
        }
    }
}

/// Find the data folder: `--tau2-data`, else `TAU2_DATA_DIR`. Accepts either the folder
/// holding `domains/` or its parent (upstream's `TAU2_DATA_DIR` convention).
pub fn resolve_data_dir(arg: Option<&Path>) -> Result<PathBuf> {
    let dir = match arg {
        Some(p) => p.to_path_buf(),
        None => match std::env::var_os("TAU2_DATA_DIR") {
            Some(v) => PathBuf::from(v),
            None => bail!("no tau2 data directory: pass --tau2-data <dir> or set TAU2_DATA_DIR"),
        },
    };
    if dir.join("domains").is_dir() {
        return Ok(dir);
    }
    if dir.join("tau2").join("domains").is_dir() {
        return Ok(dir.join("tau2"));
    }
    if !dir.exists() {
        bail!("tau2 data directory {} does not exist", dir.display());
    }
    bail!(
        "tau2 data directory {} has no domains/ folder",
        dir.display()
    )
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

fn parse_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = read(path)?;
    serde_json::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))
}

enum Base {
    Airline(airline::AirlineDb, Arc<airline::AirlineCache>),
    Retail(retail::RetailDb, Arc<retail::RetailCache>),
    Mock(mock::MockDb, mock::MockUserDb),
}

/// A loaded domain: policy, base-split tasks and the pristine DB(s).
pub struct Domain {
    pub kind: DomainKind,
    pub policy: String,
    pub tasks: Vec<Task>,
    pub data_dir: PathBuf,
    base: Base,
}

impl Domain {
    pub fn load(data_dir: &Path, kind: DomainKind) -> Result<Domain> {
        let d = data_dir.join("domains").join(kind.name());
        if !d.is_dir() {
            bail!("{} is missing (domain {})", d.display(), kind.name());
        }
        let policy = read(&d.join("policy.md"))?;
        let tasks_path = d.join("tasks.json");
        let mut tasks = parse_tasks(&read(&tasks_path)?, &tasks_path.display().to_string())?;
        let split_path = d.join("split_tasks.json");
        if split_path.exists() {
            let splits: Map<String, Value> = parse_json(&split_path)?;
            let base = splits
                .get("base")
                .and_then(|v| v.as_array())
                .ok_or_else(|| anyhow!("{}: no 'base' split", split_path.display()))?;
            let ids: Vec<&str> = base.iter().filter_map(|v| v.as_str()).collect();
            tasks.retain(|t| ids.contains(&t.id.as_str()));
        }
        let base = match kind {
            DomainKind::Airline => {
                let db: airline::AirlineDb = parse_json(&d.join("db.json"))?;
                let c = Arc::new(db.build_cache());
                Base::Airline(db, c)
            }
            DomainKind::Retail => {
                let db: retail::RetailDb = parse_json(&d.join("db.json"))?;
                let c = Arc::new(db.build_cache());
                Base::Retail(db, c)
            }
            DomainKind::Mock => Base::Mock(
                parse_json(&d.join("db.json"))?,
                parse_json(&d.join("user_db.json"))?,
            ),
        };
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
            anyhow!(
                "unknown task id {id:?} in domain {} (base split)",
                self.kind.name()
            )
        })
    }

    /// A fresh environment (cheap: records are shared until a tool changes them).
    pub fn env(&self) -> Env {
        let state = match &self.base {
            Base::Airline(db, c) => State::Airline(db.clone(), Some(c.clone())),
            Base::Retail(db, c) => State::Retail(db.clone(), Some(c.clone())),
            Base::Mock(db, u) => State::Mock {
                db: db.clone(),
                user: u.clone(),
                aliased: false,
            },
        };
        Env {
            kind: self.kind,
            state,
        }
    }

    pub fn initial_hashes(&self) -> (String, Option<String>) {
        let e = self.env();
        (e.db_hash(), e.user_db_hash())
    }
}

enum State {
    Airline(airline::AirlineDb, Option<Arc<airline::AirlineCache>>),
    Retail(retail::RetailDb, Option<Arc<retail::RetailCache>>),
    Mock {
        db: mock::MockDb,
        user: mock::MockUserDb,
        aliased: bool,
    },
}

/// Tool category as upstream's `ToolType`; only WRITE tools are replayed when grading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    Read,
    Write,
    Generic,
}

/// One task's live environment.
pub struct Env {
    pub kind: DomainKind,
    state: State,
}

impl Env {
    fn tool_lists(
        &self,
        requestor: &str,
    ) -> (
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
    ) {
        match (self.kind, requestor) {
            (DomainKind::Airline, "assistant") => (
                airline::READ_TOOLS,
                airline::WRITE_TOOLS,
                airline::GENERIC_TOOLS,
            ),
            (DomainKind::Retail, "assistant") => (
                retail::READ_TOOLS,
                retail::WRITE_TOOLS,
                retail::GENERIC_TOOLS,
            ),
            (DomainKind::Mock, "assistant") => {
                (mock::READ_TOOLS, mock::WRITE_TOOLS, mock::GENERIC_TOOLS)
            }
            (DomainKind::Mock, "user") => (mock::USER_READ_TOOLS, mock::USER_WRITE_TOOLS, &[]),
            _ => (&[], &[], &[]),
        }
    }

    pub fn tool_kind(&self, requestor: &str, name: &str) -> Option<ToolKind> {
        let (r, w, g) = self.tool_lists(requestor);
        if r.contains(&name) {
            Some(ToolKind::Read)
        } else if w.contains(&name) {
            Some(ToolKind::Write)
        } else if g.contains(&name) {
            Some(ToolKind::Generic)
        } else {
            None
        }
    }

    pub fn has_user_tools(&self) -> bool {
        self.kind == DomainKind::Mock
    }

    /// Whether a tool (agent or user side) changes state. Unknown names count as mutating,
    /// as upstream's fallback does; callers skip unknown names first.
    pub fn is_mutating(&self, name: &str) -> bool {
        for req in ["assistant", "user"] {
            if let Some(k) = self.tool_kind(req, name) {
                return k == ToolKind::Write;
            }
        }
        true
    }

    pub fn has_tool(&self, name: &str) -> bool {
        self.tool_kind("assistant", name).is_some() || self.tool_kind("user", name).is_some()
    }

    /// Call a tool the way a conversation participant does: only real tools are reachable.
    pub fn call_tool(
        &mut self,
        requestor: &str,
        name: &str,
        args: &Map<String, Value>,
    ) -> ToolResult {
        match requestor {
            "assistant" | "user" => {}
            other => return Err(terr!("Invalid requestor: {other}")),
        }
        if requestor == "user" && !self.has_user_tools() {
            return Err("User tools not available".into());
        }
        if self.tool_kind(requestor, name).is_none() {
            return Err(terr!("Tool '{name}' not found."));
        }
        self.run_function(requestor, name, args)
    }

    /// Run any function of the agent or user toolkit (tools and the helper functions tasks
    /// use for initialization and assertions).
    pub fn run_function(
        &mut self,
        env_type: &str,
        name: &str,
        args: &Map<String, Value>,
    ) -> ToolResult {
        match (&mut self.state, env_type) {
            (State::Airline(db, _), "assistant") => airline::call(db, name, args),
            (State::Retail(db, _), "assistant") => retail::call(db, name, args),
            (State::Mock { db, .. }, "assistant") => mock::call(db, name, args),
            (State::Mock { aliased: true, .. }, "user") => Err(terr!(
                "'MockDB' object has no attribute 'notifications' (calling {name})"
            )),
            (State::Mock { user, .. }, "user") => mock::call_user(user, name, args),
            (_, "user") => Err("User tools not available".into()),
            (_, other) => Err(terr!("Invalid environment type: {other}")),
        }
    }

    /// Execute a tool call and wrap the result as upstream's ToolMessage.
    pub fn get_response(&mut self, call: &ToolCall) -> Message {
        match self.call_tool(&call.requestor, &call.name, &call.arguments) {
            Ok(out) => Message::tool(&call.id, out.content(), &call.requestor, false),
            Err(e) => Message::tool(&call.id, format!("Error: {e}"), &call.requestor, true),
        }
    }

    pub fn db_hash(&self) -> String {
        match &self.state {
            State::Airline(db, c) => db.hash(c.as_deref()),
            State::Retail(db, c) => db.hash(c.as_deref()),
            State::Mock { db, .. } => {
                crate::canon::sha256_hex(crate::canon::canonical_text(db).as_bytes())
            }
        }
    }

    pub fn user_db_hash(&self) -> Option<String> {
        match &self.state {
            State::Mock { aliased: true, .. } => Some(self.db_hash()),
            State::Mock { user, .. } => Some(crate::canon::sha256_hex(
                crate::canon::canonical_text(user).as_bytes(),
            )),
            _ => None,
        }
    }

    /// Canonical text of the agent DB (for debugging and tests on small DBs).
    pub fn db_canonical(&self) -> String {
        match &self.state {
            State::Airline(db, _) => crate::canon::canonical_text(db),
            State::Retail(db, _) => crate::canon::canonical_text(db),
            State::Mock { db, .. } => crate::canon::canonical_text(db),
        }
    }

    pub fn user_db_canonical(&self) -> Option<String> {
        match &self.state {
            State::Mock {
                aliased: false,
                user,
                ..
            } => Some(crate::canon::canonical_text(user)),
            State::Mock {
                aliased: true, db, ..
            } => Some(crate::canon::canonical_text(db)),
            _ => None,
        }
    }

    /// Deep-merge initialization data into the agent DB (dicts merge, everything else is
    /// replaced), then re-validate. Like upstream, the user side then shares the agent DB.
    fn merge_agent_data(&mut self, data: &Value) -> Result<()> {
        fn merged<T: serde::Serialize + serde::de::DeserializeOwned>(
            db: &T,
            data: &Value,
        ) -> Result<T> {
            let mut v = serde_json::to_value(db)?;
            deep_merge(&mut v, data);
            serde_json::from_value(v)
                .map_err(|e| anyhow!("initialization_data.agent_data does not fit the DB: {e}"))
        }
        match &mut self.state {
            State::Airline(db, c) => {
                *db = merged(db, data)?;
                *c = None;
            }
            State::Retail(db, c) => {
                *db = merged(db, data)?;
                *c = None;
            }
            State::Mock { db, aliased, .. } => {
                *db = merged(db, data)?;
                *aliased = true;
            }
        }
        Ok(())
    }

    fn merge_user_data(&mut self, data: &Value) -> Result<()> {
        match &mut self.state {
            State::Mock { user, aliased, .. } => {
                let mut v = serde_json::to_value(&*user)?;
                deep_merge(&mut v, data);
                *user = serde_json::from_value(v).map_err(|e| {
                    anyhow!("initialization_data.user_data does not fit the user DB: {e}")
                })?;
                *aliased = false;
                Ok(())
            }
            _ => bail!(
                "domain {} has no user DB for initialization_data.user_data",
                self.kind.name()
            ),
        }
    }

    /// Upstream `set_state`: initialization data, initialization actions, then replay of
    /// the state-changing tool calls in the task's message history.
    pub fn set_state(&mut self, init: Option<&InitialState>) -> Result<()> {
        let Some(init) = init else { return Ok(()) };
        if let Some(d) = &init.initialization_data {
            if let Some(a) = &d.agent_data {
                self.merge_agent_data(a)?;
            }
            if let Some(u) = &d.user_data {
                self.merge_user_data(u)?;
            }
        }
        for call in init.initialization_actions.iter().flatten() {
            self.run_function(&call.env_type, &call.func_name, &call.arguments)
                .map_err(|e| anyhow!("initialization action {} failed: {e}", call.func_name))?;
        }
        if let Some(history) = &init.message_history {
            self.replay(history)?;
        }
        Ok(())
    }

    /// Re-execute the state-changing tool calls of a trajectory (unknown and read-only
    /// tools are skipped). Checks the call/result pairing like upstream.
    pub fn replay(&mut self, messages: &[Message]) -> Result<()> {
        let mut i = 0;
        while i < messages.len() {
            let m = &messages[i];
            i += 1;
            if m.role == "tool" {
                bail!(
                    "message {}: tool message not expected; tool messages must follow a tool call",
                    i - 1
                );
            }
            if !m.is_tool_call() {
                continue;
            }
            for tc in m.tool_calls.as_ref().expect("checked") {
                let Some(tm) = messages.get(i) else {
                    bail!("tool message expected after call {}", tc.id)
                };
                if tm.role != "tool" {
                    bail!("message {i}: tool message expected, got role {:?}", tm.role);
                }
                if tm.id.as_deref() != Some(tc.id.as_str()) {
                    bail!(
                        "message {i}: tool call id mismatch: {} vs {:?}",
                        tc.id,
                        tm.id
                    );
                }
                i += 1;
                if !self.has_tool(&tc.name) || !self.is_mutating(&tc.name) {
                    continue;
                }
                let _ = self.get_response(tc);
            }
        }
        Ok(())
    }

    /// OpenAI function schemas of the tools `requestor` may call.
    pub fn tool_schemas(&self, requestor: &str) -> Vec<Value> {
        let (r, w, g) = self.tool_lists(requestor);
        let mut names: Vec<&str> = r.iter().chain(w).chain(g).copied().collect();
        names.sort();
        names
            .into_iter()
            .filter_map(|n| schemas::schema(self.kind, n))
            .collect()
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

/// JSON value of a record or tool result (the domain types always serialise).
fn to_json<T: serde::Serialize>(x: &T) -> Value {
    serde_json::to_value(x).expect("serialisable")
}

/// The `calculate` tool, identical in the airline and retail toolkits (`class` names the
/// toolkit in argument errors).
fn calculate(class: &str, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let a = crate::args::Args::new(class, name, kw, &["expression"], &[])?;
    crate::calc::calculate(&a.str("expression")?).map(Out::Str)
}

/// The `transfer_to_human_agents` tool every toolkit has.
fn transfer_to_human_agents(class: &str, name: &str, kw: &Map<String, Value>) -> ToolResult {
    crate::args::Args::new(class, name, kw, &["summary"], &[])?;
    Ok(Out::Str("Transfer successful".into()))
}

/// Result of a function used as an assertion: it must be a boolean.
pub fn as_bool(out: &Out, func: &str) -> Result<bool, ToolError> {
    match out {
        Out::Json(Value::Bool(b)) => Ok(*b),
        _ => Err(terr!("Function {func} returned a non-bool value")),
    }
}

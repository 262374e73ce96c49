//! One task's live environment: the DB(s) of a domain, tool dispatch for the agent and the
//! user, the telecom synchronisation step, hashing, and upstream's `set_state` (initial
//! data, initialization actions, replay of a message history).

use super::registry::{DomainState, ToolLists};
use super::DomainKind;
use crate::args::{terr, ToolResult};
use crate::error::{err, fail, Result};
use crate::message::{Message, ToolCall};
use crate::task::InitialState;
use serde_json::{Map, Value};

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
    pub(super) state: Box<dyn DomainState>,
}

impl Env {
    fn tool_lists(&self, requestor: &str) -> ToolLists {
        match requestor {
            "assistant" => self.kind.def().agent,
            "user" => self.kind.def().user,
            _ => ToolLists::NONE,
        }
    }

    pub fn tool_kind(&self, requestor: &str, name: &str) -> Option<ToolKind> {
        let l = self.tool_lists(requestor);
        if l.read.contains(&name) {
            Some(ToolKind::Read)
        } else if l.write.contains(&name) {
            Some(ToolKind::Write)
        } else if l.generic.contains(&name) {
            Some(ToolKind::Generic)
        } else {
            None
        }
    }

    /// Whether the user side has its own tools (mock's inbox, telecom's phone).
    pub fn has_user_tools(&self) -> bool {
        !self.kind.def().user.is_empty()
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

    /// Call a tool of the requestor's own toolkit (upstream `make_tool_call`): an agent tool
    /// named by the user, or the other way round, is "not found". No synchronisation.
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
        self.dispatch(requestor, name, args)
    }

    fn dispatch(&mut self, env_type: &str, name: &str, args: &Map<String, Value>) -> ToolResult {
        match env_type {
            "assistant" => self.state.call_agent(name, args),
            "user" => self.state.call_user(name, args),
            other => Err(terr!("Invalid environment type: {other}")),
        }
    }

    /// Run any function of the agent or user toolkit — tools and the functions tasks use
    /// to set up and to check a scenario — then synchronise (upstream
    /// `run_env_function_call`).
    pub fn run_function(
        &mut self,
        env_type: &str,
        name: &str,
        args: &Map<String, Value>,
    ) -> ToolResult {
        let out = self.dispatch(env_type, name, args)?;
        self.sync()?;
        Ok(out)
    }

    /// Upstream `sync_tools` (telecom only; elsewhere nothing to do).
    pub fn sync(&mut self) -> Result<(), crate::args::ToolError> {
        self.state.sync()
    }

    /// Execute a tool call, synchronise, and wrap the result as upstream's ToolMessage; any
    /// failure (also of the synchronisation) is an `Error: …` result, never a panic.
    pub fn get_response(&mut self, call: &ToolCall) -> Message {
        let r = self
            .call_tool(&call.requestor, &call.name, &call.arguments)
            .and_then(|out| self.sync().map(|()| out));
        match r {
            Ok(out) => Message::tool(&call.id, out.content(), &call.requestor, false),
            Err(e) => Message::tool(&call.id, format!("Error: {e}"), &call.requestor, true),
        }
    }

    pub fn db_hash(&self) -> String {
        self.state.db_hash()
    }

    pub fn user_db_hash(&self) -> Option<String> {
        self.user_db_canonical()
            .map(|t| crate::canon::sha256_hex(t.as_bytes()))
    }

    /// Canonical text of the agent DB (for debugging and tests on small DBs).
    pub fn db_canonical(&self) -> String {
        self.state.db_canonical()
    }

    pub fn user_db_canonical(&self) -> Option<String> {
        self.state.user_db_canonical()
    }

    /// The telecom state (both DBs), for tests and reports.
    pub fn telecom(&self) -> Option<&super::telecom::TelecomState> {
        self.state.as_any().downcast_ref()
    }

    fn merge_user_data(&mut self, data: &Value) -> Result<()> {
        match self.state.merge_user_data(data) {
            Some(r) => r,
            None => fail!(
                Env,
                "domain {} has no user DB for initialization_data.user_data",
                self.kind.name()
            ),
        }
    }

    /// Upstream `set_state`: initialization data, initialization actions (each followed by
    /// a synchronisation), replay of the state-changing tool calls of `history`, and a
    /// final synchronisation. A failing initialization action is an error naming it.
    pub fn set_state(&mut self, init: Option<&InitialState>, history: &[Message]) -> Result<()> {
        if let Some(init) = init {
            if let Some(d) = &init.initialization_data {
                if let Some(a) = &d.agent_data {
                    self.state.merge_agent_data(a)?;
                }
                if let Some(u) = &d.user_data {
                    self.merge_user_data(u)?;
                }
            }
            for (i, call) in init.initialization_actions.iter().flatten().enumerate() {
                self.run_function(&call.env_type, &call.func_name, &call.arguments)
                    .map_err(|e| {
                        err!(
                            Env,
                            "initialization action #{i} ({} on the {} side) failed: Error: {e}",
                            call.func_name,
                            call.env_type
                        )
                    })?;
            }
        }
        self.replay(history)?;
        self.sync()
            .map_err(|e| err!(Env, "synchronising the environment failed: Error: {e}"))
    }

    /// Re-execute the state-changing tool calls of a trajectory (unknown and read-only
    /// tools are skipped). Checks the call/result pairing like upstream.
    pub fn replay(&mut self, messages: &[Message]) -> Result<()> {
        let mut i = 0;
        while i < messages.len() {
            let m = &messages[i];
            i += 1;
            if m.role == "tool" {
                fail!(
                    Env,
                    "message {}: tool message not expected; tool messages must follow a tool call",
                    i - 1
                );
            }
            for tc in m.tool_calls.iter().flatten() {
                let Some(tm) = messages.get(i) else {
                    fail!(Env, "tool message expected after call {}", tc.id)
                };
                if tm.role != "tool" {
                    fail!(
                        Env,
                        "message {i}: tool message expected, got role {:?}",
                        tm.role
                    );
                }
                if tm.id.as_deref() != Some(tc.id.as_str()) {
                    fail!(
                        Env,
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

    /// OpenAI function schemas of the tools `requestor` may call, by name.
    pub fn tool_schemas(&self, requestor: &str) -> Vec<lrab_ollama::Tool> {
        let l = self.tool_lists(requestor);
        let mut names: Vec<&str> = l
            .read
            .iter()
            .chain(l.write)
            .chain(l.generic)
            .copied()
            .collect();
        names.sort();
        names
            .into_iter()
            .filter_map(self.kind.def().schema)
            .collect()
    }
}

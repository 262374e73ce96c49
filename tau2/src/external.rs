//! A conversation whose agent runs outside this crate: `lrab tau2 run --agent <arm>` hands each
//! task's prepared environment, history, limits and customer to the launcher of command-line
//! arms (the `lrab` binary), which serves it over MCP ([`crate::Relayed`]) and returns the
//! conversation; recording and grading stay here, as for the in-process agents.

use crate::domains::Env;
use crate::message::Message;
use crate::orchestrator::{Limits, Outcome, User};
use anyhow::Result;

/// The customer, made on the conversation loop's thread.
pub type MakeUser = Box<dyn FnOnce() -> Box<dyn User> + Send>;

/// One task's conversation, ready to be served.
pub struct Conversation {
    pub task_id: String,
    pub trial: usize,
    pub seed: u64,
    /// 0 for the first run, n for the n-th retry pass over error cells.
    pub pass: usize,
    /// The environment in the task's initial state.
    pub env: Env,
    pub history: Vec<Message>,
    pub limits: Limits,
    pub policy: String,
    pub user: MakeUser,
}

/// Runs conversations with an agent this crate cannot start itself.
pub trait ExternalAgent {
    fn converse(&mut self, c: Conversation) -> Result<Outcome>;
}

//! The lrab agent harness arm for small local models.
//!
//! Layout: `backend` talks to an Ollama-compatible server (native or OpenAI-compatible) behind
//! the [`Model`] trait; `tools` are the file/shell tools confined to the workdir, all defined in
//! one table ([`table`]); [`mechanisms`] holds one module per behaviour-shaping mechanism, each a
//! plain type or pure function with an ablation switch and its own nudge texts; `agent` wires
//! them into the loop and keeps the checkpoint ([`read_checkpoint`]); `events` writes the typed
//! event log (`lrab_records::Event`). The conversation mechanisms (anti-loop, format rescue,
//! context check) and the backend do not depend on the file tools, so other crates (the τ²
//! adapter) can reuse them.
//!
//! The surface: the items re-exported here, and two namespaces kept public on purpose —
//! [`backend`] (the [`Model`] trait, the Ollama and OpenAI-compatible backends, the retry ladder
//! and the scripted model tests drive the loop with) and [`mechanisms`] (one module per
//! mechanism, so a mechanism's rule, its ablation name and its texts are found and tested under
//! one name, and the τ² adapter reuses single mechanisms). Every other module is private.

pub mod backend;
mod cli;
mod estimate;
mod events;
pub mod mechanisms;
mod messages;
mod prefix;
mod shaping;
mod startup;
mod state_dir;
pub mod table;
mod tools;

mod agent;

pub use agent::{
    read_checkpoint, Agent, AgentConfig, CallResult, CheckpointError, RunOutcome, RunStatus,
    StartError, State, ToolProtocol, STATE_VERSION,
};
pub use backend::{BackendError, ChatRequest, Model};
pub use cli::{main_with, openai_context};
pub use estimate::estimate_request;
pub use events::EventLog;
pub use mechanisms::{AblationError, Ablations, Mechanism};
pub use messages::{Message, Reply, Role, ToolCall, ToolSpec};
pub use state_dir::{StateDir, StateDirError};
pub use tools::confined::ConfinedExecutor;
pub use tools::shell::{LocalExecutor, ShellExecutor, ShellOutcome, ShellRequest};
pub use tools::Toolbox;

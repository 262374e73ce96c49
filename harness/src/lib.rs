//! The lrab agent harness arm for small local models.
//!
//! Layout: [`backend`] talks to an Ollama-compatible server (native or OpenAI-compatible) behind
//! the [`backend::Model`] trait; [`tools`] are the file/shell tools confined to the workdir, all
//! defined in one table ([`tools::table`]); [`mechanisms`] holds one module per behaviour-shaping
//! mechanism, each a plain type or pure function with an ablation switch and its own nudge
//! texts; [`agent`] wires them into the loop; [`events`] writes the typed event log
//! (`lrab_records::Event`). The conversation mechanisms (anti-loop, format rescue, context check) and the
//! backend do not depend on the file tools, so other crates (the τ² adapter) can reuse them.

pub mod agent;
pub mod backend;
pub mod cli;
pub mod estimate;
pub mod events;
pub mod mechanisms;
pub mod messages;
pub mod prefix;
pub mod shaping;
pub mod startup;
pub mod state_dir;
pub mod tools;

pub use agent::{
    read_checkpoint, replay, Agent, AgentConfig, CallResult, CheckpointError, Replay, RunOutcome,
    RunStatus, StartError, State, ToolProtocol,
};
pub use backend::{BackendError, ChatRequest, Model};
pub use mechanisms::{Ablations, Mechanism};
pub use messages::{Message, Reply, Role, ToolCall, ToolSpec};

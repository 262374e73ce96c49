//! The lrab agent harness arm for small local models.
//!
//! Layout: [`backend`] talks to an Ollama-compatible server (native or OpenAI-compatible) behind
//! the [`backend::Model`] trait; [`tools`] are the file/shell tools confined to the workdir;
//! [`mechanisms`] holds one module per behaviour-shaping mechanism, each a plain type or pure
//! function with an ablation switch; [`agent`] wires them into the loop; [`events`] writes the
//! JSONL event log. The conversation mechanisms (anti-loop, format rescue, context check) and the
//! backend do not depend on the file tools, so other crates (the τ² adapter) can reuse them.

pub mod agent;
pub mod backend;
pub mod cli;
pub mod estimate;
pub mod events;
pub mod mechanisms;
pub mod messages;
pub mod shaping;
pub mod tools;

pub use agent::{Agent, AgentConfig, RunOutcome, RunStatus};
pub use backend::{BackendError, ChatRequest, Model};
pub use mechanisms::{Ablations, Mechanism};
pub use messages::{Message, Reply, Role, ToolCall, ToolSpec};

//! τ²-bench in Rust: the airline, retail and mock domains with upstream's exact tool
//! semantics and canonical DB hashing, gold replay, the evaluator, the half-duplex
//! orchestrator with agents and user simulators, tau2-format results and the CLI.

pub mod args;
pub mod calc;
pub mod canon;
pub mod domains;
pub mod gold;
pub mod message;
pub mod pyjson;
pub mod task;

pub use domains::{resolve_data_dir, Domain, DomainKind, Env};
pub mod cli;
pub mod evaluate;
pub mod harness_agent;
pub mod http;
pub mod llm;
pub mod orchestrator;
pub mod results;
pub mod scripted;

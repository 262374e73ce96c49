//! `lrab-sim`: simulated models behind a faithful Ollama HTTP API.
//!
//! The models recognise LRAB tasks in the conversation and carry out the task's reference
//! solution through whatever tools the request offers; their profiles (data files under
//! `sim/profiles/`, fitted by `lrab sim calibrate`) inject content errors, tool-call dialect
//! slips and process failures; the server around them behaves like Ollama (context window,
//! message dropping, KV-cache reuse, parser outcomes, modelled durations, optional pacing).
//! See `docs/sim.md`. **Nothing here is a result of a real model.**
//!
//! In-process use: [`serve`] returns a [`SimHandle`]. Standalone: [`run_cli`] (wired into
//! `lrab sim serve`). Clients recognise the server with [`detect`]. Modules are private; this
//! file is the crate's whole surface.

mod catalog;
mod cli;
mod client;
mod content;
mod convo;
mod dialect;
mod error;
mod faults;
mod feedback;
mod policy;
mod profile;
mod protocols;
mod render;
mod reply;
mod server;
mod serving;
mod task;
mod tau2;
mod toolkit;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

pub use catalog::ModelSpec;
pub use cli::{run as run_cli, SimArgs};
pub use client::{cell_url, detect, fetch_ledger, Ledger, SimInfo};
pub use convo::{Call, Conv, Msg};
pub use dialect::{leak_shapes, parse_leak, Family, LeakShape};
pub use error::SimError;
pub use faults::FaultConfig;
pub use feedback::{read as read_feedback, Meaning};
/// The scripted adversary model the safety probes drive (its name and script format).
pub use policy::adversary;
pub use policy::{Env, Turn};
pub use profile::{
    builtin as builtin_profiles, load_dir as load_profile_dir, load_file as load_profile,
    logistic_from, parse as parse_profile, table_markdown as profile_table, FailureForm, Profile,
    Prompt, Rate, Reactions, REACT_ORACLE,
};
pub use reply::respond;
pub use server::{AppState, ServeApi};
pub use task::{Step, TaskIndex, TaskPlan};

/// Fingerprint of the simulator's sources at build time: results
/// cached against the simulator (the calibration's evaluations) are keyed by it.
pub const SOURCE_HASH: &str = env!("LRAB_SIM_SOURCE_HASH");

/// Server configuration.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Seed of every draw.
    pub seed: u64,
    /// Task pack (None = `lrab_tasks::Pack::builtin_dir()`).
    pub pack: Option<PathBuf>,
    /// The task models' profiles (None = the committed ones).
    pub profiles: Option<Vec<Profile>>,
    /// Extra models next to the built-in ones (tests use single-form profiles).
    pub extra_models: Vec<ModelSpec>,
    pub faults: FaultConfig,
    /// Context window of a request that sets no `num_ctx` (Ollama's small-GPU default 4096).
    pub default_ctx: u64,
    /// Real seconds slept per modelled second of each reply (0 = answer at once).
    pub time_scale: f64,
    /// What `/api/version` reports.
    pub version: String,
    /// When set, every chat request and reply is written there (`NNNNNN-request.json`,
    /// `NNNNNN-reply.txt`) for debugging an arm.
    pub log_dir: Option<PathBuf>,
    /// The API served: Ollama's (with its `/v1`), or only the OpenAI one as vLLM serves it.
    pub api: ServeApi,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 0,
            pack: None,
            profiles: None,
            extra_models: Vec::new(),
            faults: FaultConfig::default(),
            default_ctx: 4096,
            time_scale: 0.0,
            version: "0.33.0-lrab-sim".into(),
            log_dir: None,
            api: ServeApi::Ollama,
        }
    }
}

/// Builds the shared state: models and the task index (problems in the pack are returned).
pub fn build_state(config: SimConfig) -> (AppState, Vec<String>) {
    let root = config
        .pack
        .clone()
        .unwrap_or_else(lrab_tasks::Pack::builtin_dir);
    let (tasks, notes) = TaskIndex::from_pack(&root);
    let mut models = catalog::builtin(config.profiles.clone().unwrap_or_else(profile::builtin));
    for m in &config.extra_models {
        models.retain(|x| x.name != m.name);
        models.push(m.clone());
    }
    (AppState::new(models, tasks, config), notes)
}

/// The server-side work of one `/api/chat` body (parse, serving, policy, render), for the
/// latency benchmark.
pub fn server_side_chat(state: &AppState, body: &[u8]) -> Result<Vec<String>, SimError> {
    server::server_side_chat(state, body)
}

/// A running simulated server.
pub struct SimHandle {
    server: lrab_util::BackgroundServer,
    /// Problems found while loading the task pack.
    pub notes: Vec<String>,
}

impl SimHandle {
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }
    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        self.server.url()
    }
    /// Stops the server and waits for its thread.
    pub fn shutdown(mut self) {
        self.server.stop();
    }
}

/// Starts the server on `addr` (e.g. `127.0.0.1:0`) in a background thread with its own
/// runtime; returns once the socket is bound.
pub fn serve(addr: &str, config: SimConfig) -> Result<SimHandle, SimError> {
    let listener = std::net::TcpListener::bind(addr).map_err(|source| SimError::Bind {
        addr: addr.to_string(),
        source,
    })?;
    let (state, notes) = build_state(config);
    let app = server::router(Arc::new(state));
    let server = lrab_util::serve_in_background(listener, app, "lrab-sim", 2)
        .map_err(|e| SimError::Start(e.to_string()))?;
    Ok(SimHandle { server, notes })
}

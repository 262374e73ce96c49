//! `lrab-sim`: simulated models behind a faithful Ollama HTTP API.
//!
//! The models recognise LRAB tasks in the conversation and carry out the task's reference
//! solution through whatever tools the request offers; their profiles (data files under
//! `sim/profiles/`, fitted by `lrab sim calibrate`) inject content errors, tool-call dialect
//! slips and process failures; the server around them behaves like Ollama (context window,
//! message dropping, KV-cache reuse, parser outcomes, modelled durations, optional pacing).
//! See `docs/sim.md`. **Nothing here is a result of a real model.**
//!
//! In-process use: [`serve`] returns a [`SimHandle`]. Standalone: [`cli::run`] (wired into
//! `lrab sim serve`). Clients recognise the server with [`client::detect`].

mod catalog;
pub mod cli;
pub mod client;
mod content;
pub mod convo;
pub mod dialect;
mod error;
mod faults;
pub mod feedback;
pub mod policy;
pub mod profile;
mod render;
mod server;
mod serving;
mod task;
mod toolkit;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

pub use catalog::ModelSpec;
pub use dialect::Family;
pub use error::SimError;
pub use faults::FaultConfig;
pub use feedback::{read as read_feedback, Meaning};
pub use profile::{FailureForm, Profile, Rate, Reactions};
pub use server::AppState;
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
pub fn server_side_chat(state: &AppState, body: &[u8]) -> Result<Vec<String>, String> {
    server::server_side_chat(state, body)
}

/// A running simulated server.
pub struct SimHandle {
    addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Problems found while loading the task pack.
    pub notes: Vec<String>,
}

impl SimHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
    /// Stops the server and waits for its thread.
    pub fn shutdown(mut self) {
        self.stop();
    }
    fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts the server on `addr` (e.g. `127.0.0.1:0`) in a background thread with its own
/// runtime; returns once the socket is bound.
pub fn serve(addr: &str, config: SimConfig) -> Result<SimHandle, SimError> {
    let bind = |source| SimError::Bind {
        addr: addr.to_string(),
        source,
    };
    let listener = std::net::TcpListener::bind(addr).map_err(bind)?;
    listener.set_nonblocking(true).map_err(bind)?;
    let bound = listener.local_addr().map_err(bind)?;
    let (state, notes) = build_state(config);
    let app = server::router(Arc::new(state));
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("lrab-sim")
        .build()
        .map_err(|e| SimError::Start(e.to_string()))?;
    let thread = std::thread::Builder::new()
        .name("lrab-sim".into())
        .spawn(move || {
            rt.block_on(async move {
                let Ok(l) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let _ = axum::serve(l, app)
                    .with_graceful_shutdown(async move {
                        let _ = rx.await;
                    })
                    .await;
            });
        })
        .map_err(|e| SimError::Start(e.to_string()))?;
    Ok(SimHandle {
        addr: bound,
        shutdown: Some(tx),
        thread: Some(thread),
        notes,
    })
}

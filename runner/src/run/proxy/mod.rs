//! The runner's proxy: every arm talks to the backend through one of its own, so every arm's
//! conversation is recorded the same way, from the wire, into one trajectory (`proxy.jsonl`,
//! [`lrab_records::TrajectoryEntry`]): the new messages of each request, the tools offered, the
//! reply, the token counts and durations. Answers are relayed as they arrive and read while
//! relayed ([`tap`]), never buffered whole.
//!
//! Normalizing (arms without sampling knobs; docs/runner.md, "The proxy"; docs/arms.md): every
//! `/api/chat` and `/v1/chat/completions` request leaves with temperature 0, the run's thinking
//! (`--think`, off by default) and a fixed context length. Ollama's `/v1` cannot carry
//! `num_ctx`, so `/v1/chat/completions` is rewritten onto `/api/chat` and the answer translated
//! back (JSON or SSE); `/v1/responses` likewise (`lrab_ollama::responses`). Arms with their own
//! knobs (ours) get a recording-only proxy that forwards every request byte for byte (only the
//! run's thinking is pinned when it is not off). Other paths are forwarded unchanged.
//!
//! A backend that speaks only the OpenAI API ([`ProxyConfig::openai`]) is presented as Ollama:
//! native requests are translated onto `/v1` ([`openai_upstream`]), `/v1` ones are forwarded
//! with the key.

mod borrow;
mod conn;
mod fast;
mod fast_request;
mod fast_to_openai;
mod http;
mod net;
pub mod openai_upstream;
mod plan;
mod read;
mod record;
mod relay;
mod scan;
pub mod tap;
pub mod transcript;
mod translate;
mod upstream;

pub use openai_upstream::{OpenaiUpstream, Reasoning, Secret};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use lrab_records::ThinkSetting;
use record::Recorder;

/// The sampling settings the two APIs name alike: top level in an OpenAI request, under
/// `options` in a native one.
const SHARED_SAMPLING: [&str; 5] = [
    "top_p",
    "seed",
    "stop",
    "frequency_penalty",
    "presence_penalty",
];

/// Proxy settings.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Backend base URL (`http://127.0.0.1:11434`).
    pub upstream: String,
    pub num_ctx: u64,
    /// The trajectory (`proxy.jsonl`).
    pub log: Option<PathBuf>,
    /// Force temperature 0, thinking off and `num_ctx`; false: record only, forward untouched.
    pub normalize: bool,
    /// Rewrite `/v1/chat/completions` onto `/api/chat` (the only way to pin `num_ctx`; only
    /// when normalizing, and only on an Ollama backend).
    pub v1_to_native: bool,
    /// The run's `--think`: pinned on normalized requests, and on record-only ones when it is
    /// not `off`.
    pub think: ThinkSetting,
    /// Set when the backend speaks only the OpenAI API.
    pub openai: Option<OpenaiUpstream>,
}

/// What every request of one proxy shares.
struct Shared {
    cfg: ProxyConfig,
    recorder: Recorder,
    client: upstream::Client,
}

/// A running proxy; stops when dropped, at once: a request still in flight (its arm is gone)
/// is dropped with its backend connection and recorded as cut ([`relay::CUT_UNANSWERED`],
/// [`relay::CUT_MID_ANSWER`]); every answer relayed before is in the trajectory when the drop returns.
pub struct ProxyHandle {
    server: lrab_util::BackgroundServer,
    shared: Arc<Shared>,
}

impl Drop for ProxyHandle {
    fn drop(&mut self) {
        self.server.stop();
        // the requests dropped by the stop have queued their cut records by now
        self.shared.recorder.close();
    }
}

impl ProxyHandle {
    pub fn url(&self) -> String {
        self.server.url()
    }
}

/// Starts the proxy on a free 127.0.0.1 port in a background thread.
pub fn start(cfg: ProxyConfig) -> Result<ProxyHandle> {
    start_on("127.0.0.1:0", cfg)
}

/// Starts the proxy on `addr`.
pub fn start_on(addr: &str, cfg: ProxyConfig) -> Result<ProxyHandle> {
    let listener =
        std::net::TcpListener::bind(addr).with_context(|| format!("proxy: cannot bind {addr}"))?;
    net::no_delay(&listener);
    let client = upstream::Client::new(&cfg.upstream).map_err(|e| anyhow::anyhow!("proxy: {e}"))?;
    let state = Arc::new(Shared {
        recorder: Recorder::new(cfg.log.clone()),
        cfg,
        client,
    });
    // two workers: a proxy's work per request is CPU (parsing, translating), and one thread
    // could use one core of the two at 16 requests at once
    let conns = Arc::clone(&state);
    let mut server =
        lrab_util::serve_connections_in_background(listener, "lrab-proxy", 2, move |s| {
            http::serve(Arc::clone(&conns), s)
        })
        .context("proxy: cannot start its server")?;
    // the arm is gone when its proxy stops: nothing in flight is waited for
    server.set_stop_grace(Duration::ZERO);
    Ok(ProxyHandle {
        server,
        shared: state,
    })
}

/// What the upstream call reports before the body.
struct Head {
    status: u16,
    content_type: String,
}

fn now() -> u64 {
    now_ms() / 1000
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// One request as the arm sent it.
struct Incoming {
    method: String,
    path: String,
    ctype: String,
    body: bytes::Bytes,
    t0: Instant,
    time_ms: u64,
}

#[cfg(test)]
#[path = "stop_tests.rs"]
mod stop_tests;

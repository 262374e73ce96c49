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

mod conn;
mod fast;
mod fast_request;
mod fast_to_openai;
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
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::json;
use tokio::sync::mpsc;

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
    let app = axum::Router::new()
        .fallback(handle)
        .with_state(Arc::clone(&state));
    // two workers: a proxy's work per request is CPU (parsing, translating), and one thread
    // could use one core of the two at 16 requests at once
    let mut server = lrab_util::serve_in_background(listener, app, "lrab-proxy", 2)
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

async fn handle(State(sh): State<Arc<Shared>>, req: Request) -> Response {
    let t0 = Instant::now();
    let time_ms = now_ms();
    let method = req.method().as_str().to_string();
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let ctype = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_string();
    let body = match axum::body::to_bytes(req.into_body(), 256 << 20).await {
        Ok(b) => b,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("proxy: cannot read body: {e}"),
            )
        }
    };
    let (tx_head, rx_head) = tokio::sync::oneshot::channel::<Head>();
    let (tx, rx) = mpsc::channel::<bytes::Bytes>(64);
    let req = Incoming {
        method,
        path,
        ctype,
        body,
        t0,
        time_ms,
    };
    // a task of its own: it goes on (and is recorded) if the arm hangs up meanwhile
    tokio::spawn(relay::forward(sh, req, tx_head, tx));
    let Ok(head) = rx_head.await else {
        return error(StatusCode::BAD_GATEWAY, "proxy: upstream call failed");
    };
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, std::io::Error>(b), rx))
    });
    let mut r = Response::new(Body::from_stream(stream));
    *r.status_mut() = StatusCode::from_u16(head.status).unwrap_or(StatusCode::BAD_GATEWAY);
    if let Ok(v) = HeaderValue::from_str(&head.content_type) {
        r.headers_mut().insert("content-type", v);
    }
    r
}

fn error(status: StatusCode, msg: &str) -> Response {
    let mut r = Response::new(Body::from(json!({"error": msg}).to_string()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    r
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

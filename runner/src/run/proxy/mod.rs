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

mod net;
pub mod openai_upstream;
mod record;
pub mod tap;
pub mod transcript;
mod translate;

pub use openai_upstream::{OpenaiUpstream, Reasoning, Secret};
pub use translate::{
    native_to_openai, normalize_native, normalize_openai, openai_to_native, pin_think,
    SseTranslator,
};

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use lrab_records::TrajectoryEntry;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use lrab_ollama::responses::{id_base, responses_to_native, ResponsesTranslator};
use lrab_records::ThinkSetting;
use openai_upstream::ToNative;
use record::Recorder;
use tap::{Tap, Wire};

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
    agent: ureq::Agent,
}

/// A running proxy; stops (gracefully: answers in flight are finished and recorded) when
/// dropped.
pub struct ProxyHandle {
    server: lrab_util::BackgroundServer,
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
    // backend connections kept for reuse: as many idle ones as requests in flight at once
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(10))
        .timeout_read(Duration::from_secs(3600))
        .max_idle_connections_per_host(32)
        .build();
    let state = Arc::new(Shared {
        recorder: Recorder::new(cfg.log.clone()),
        cfg,
        agent,
    });
    let app = axum::Router::new().fallback(handle).with_state(state);
    let server = lrab_util::serve_in_background(listener, app, "lrab-proxy", 1)
        .context("proxy: cannot start its server")?;
    Ok(ProxyHandle { server })
}

/// What the blocking upstream call reports before the body.
struct Head {
    status: u16,
    content_type: String,
}

async fn handle(State(sh): State<Arc<Shared>>, req: Request) -> Response {
    let t0 = Instant::now();
    let time_ms = now_ms();
    let method = req.method().clone();
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
    tokio::task::spawn_blocking(move || {
        let req = Incoming {
            method: method.as_str(),
            path: &path,
            ctype: &ctype,
            body: &body,
            t0,
            time_ms,
        };
        forward(&sh, &req, tx_head, tx);
    });
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
struct Incoming<'a> {
    method: &'a str,
    path: &'a str,
    ctype: &'a str,
    body: &'a [u8],
    t0: Instant,
    time_ms: u64,
}

/// How a request is forwarded and its answer relayed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `/api/chat` (normalized or untouched): NDJSON relayed line by line.
    Native,
    /// `/v1/chat/completions` rewritten onto `/api/chat`, answer translated back.
    V1,
    /// `/v1/responses` rewritten onto `/api/chat`, answer translated back.
    Responses,
    /// An OpenAI request forwarded as OpenAI (normalized or untouched).
    Pass(Wire),
    /// Anything else: bytes through, nothing recorded.
    Raw,
}

/// What is sent upstream and what is recorded.
struct Plan {
    mode: Mode,
    target: String,
    body: Vec<u8>,
    model: String,
    stream: bool,
    include_usage: bool,
    base: usize,
    /// The request as a native body, for the trajectory.
    recorded: Value,
    /// A request forwarded untouched is parsed for the trajectory only after it was answered.
    deferred: bool,
    /// The native body goes to an OpenAI backend as chat completions; its answer comes back
    /// through [`ToNative`].
    up_openai: bool,
}

fn plan(cfg: &ProxyConfig, r: &Incoming<'_>) -> Plan {
    let plain = r.path.split('?').next().unwrap_or("");
    // a native request is forwarded byte for byte unless something in it must change
    let untouched = !cfg.normalize && cfg.openai.is_none() && cfg.think == ThinkSetting::Off;
    let parsed: Option<Value> = (r.method == "POST" && (!untouched || plain != "/api/chat"))
        .then(|| serde_json::from_slice(r.body).ok())
        .flatten();
    let raw = Plan {
        mode: Mode::Raw,
        target: r.path.to_string(),
        body: r.body.to_vec(),
        model: String::new(),
        stream: false,
        include_usage: false,
        base: 0,
        recorded: Value::Null,
        deferred: false,
        up_openai: false,
    };
    if plain == "/api/chat" && r.method == "POST" && untouched {
        return Plan {
            mode: Mode::Native,
            deferred: true,
            ..raw
        };
    }
    let Some(mut v) = parsed else {
        return raw;
    };
    let model = v["model"].as_str().unwrap_or("").to_string();
    let rewrite = cfg.normalize && cfg.v1_to_native;
    let p = match plain {
        "/api/chat" => {
            if cfg.normalize {
                normalize_native(&mut v, cfg.num_ctx, cfg.think);
            } else if cfg.think != ThinkSetting::Off {
                pin_think(&mut v, cfg.think);
            }
            let body = if untouched {
                r.body.to_vec()
            } else {
                v.to_string().into_bytes()
            };
            Plan {
                mode: Mode::Native,
                stream: v["stream"].as_bool().unwrap_or(true),
                body,
                model,
                recorded: v,
                ..raw
            }
        }
        "/v1/chat/completions" if rewrite && cfg.openai.is_none() => {
            let n = openai_to_native(&v, cfg.num_ctx, cfg.think);
            Plan {
                mode: Mode::V1,
                target: "/api/chat".into(),
                body: n.to_string().into_bytes(),
                stream: n["stream"].as_bool().unwrap_or(false),
                include_usage: v["stream_options"]["include_usage"]
                    .as_bool()
                    .unwrap_or(false),
                model,
                recorded: n,
                ..raw
            }
        }
        "/v1/responses" if rewrite => {
            let mut n = responses_to_native(&v);
            normalize_native(&mut n, cfg.num_ctx, cfg.think);
            Plan {
                mode: Mode::Responses,
                target: "/api/chat".into(),
                body: n.to_string().into_bytes(),
                stream: n["stream"].as_bool().unwrap_or(false),
                base: id_base(&v),
                model,
                recorded: n,
                ..raw
            }
        }
        "/v1/chat/completions" | "/v1/responses" => {
            let (wire, recorded) = if plain == "/v1/responses" {
                (Wire::Responses, responses_to_native(&v))
            } else {
                let mut n = openai_to_native(&v, cfg.num_ctx, cfg.think);
                if let Some(t) = v.get("tools") {
                    n["tools"] = t.clone();
                }
                (Wire::Chat, n)
            };
            let stream = v["stream"].as_bool().unwrap_or(false);
            let body = if cfg.normalize {
                let reasoning = cfg
                    .openai
                    .as_ref()
                    .map_or(Reasoning::Effort, |u| u.reasoning);
                normalize_openai(&mut v, cfg.think, reasoning);
                v.to_string().into_bytes()
            } else {
                r.body.to_vec()
            };
            Plan {
                mode: Mode::Pass(wire),
                body,
                stream,
                model,
                recorded,
                ..raw
            }
        }
        _ => raw,
    };
    match &cfg.openai {
        Some(up) if matches!(p.mode, Mode::Native | Mode::Responses) => Plan {
            target: "/v1/chat/completions".into(),
            body: up
                .chat_request(&p.recorded, p.stream)
                .to_string()
                .into_bytes(),
            up_openai: true,
            ..p
        },
        _ => p,
    }
}

fn forward(
    sh: &Shared,
    r: &Incoming<'_>,
    tx_head: tokio::sync::oneshot::Sender<Head>,
    tx: mpsc::Sender<bytes::Bytes>,
) {
    let cfg = &sh.cfg;
    if let Some(up) = &cfg.openai {
        let plain = r.path.split('?').next().unwrap_or("");
        let models = || fetch_models(sh, up);
        if let Some((status, ct, body)) = up.local(r.method, plain, r.body, models) {
            let _ = tx_head.send(Head {
                status,
                content_type: ct.into(),
            });
            let _ = tx.blocking_send(bytes::Bytes::from(body));
            return;
        }
    }
    let p = plan(cfg, r);
    let mut entry = TrajectoryEntry {
        schema_version: TrajectoryEntry::SCHEMA_VERSION,
        time_ms: Some(r.time_ms),
        path: r.path.split('?').next().unwrap_or("").to_string(),
        model: p.model.clone(),
        stream: p.stream,
        rewritten_to_native: matches!(p.mode, Mode::V1 | Mode::Responses),
        ..Default::default()
    };
    let url = format!("{}{}", cfg.upstream.trim_end_matches('/'), p.target);
    let mut req = sh
        .agent
        .request(r.method, &url)
        .set("content-type", r.ctype);
    if let Some(k) = cfg.openai.as_ref().and_then(|u| u.key.as_ref()) {
        req = req.set("authorization", &k.bearer());
    }
    let result = if r.method == "GET" || r.method == "HEAD" {
        req.call()
    } else {
        req.send_bytes(&p.body)
    };
    let resp = match result {
        Ok(x) => x,
        Err(ureq::Error::Status(_, x)) => x,
        Err(e) => {
            let msg = format!("proxy: upstream {url}: {e}");
            let _ = tx_head.send(Head {
                status: 502,
                content_type: "application/json".into(),
            });
            let _ = tx.blocking_send(bytes::Bytes::from(json!({ "error": msg }).to_string()));
            drop(tx);
            if p.mode != Mode::Raw {
                entry.status = 502;
                entry.error = Some(msg);
                finish(sh, entry, r, &p);
            }
            return;
        }
    };
    let status = resp.status();
    entry.status = status;
    let up_ctype = resp.content_type().to_string();
    let mut reader = BufReader::new(resp.into_reader());
    let ok = status < 400;
    let mut tap = Tap::new(
        match p.mode {
            Mode::Pass(w) => w,
            _ => Wire::Native,
        },
        ok,
    );
    let translated = matches!(p.mode, Mode::V1 | Mode::Responses);
    if ok && (p.mode == Mode::Native || translated) {
        let key = cfg.openai.as_ref().and_then(|u| u.key.clone());
        let conv = p
            .up_openai
            .then(|| ToNative::new(&p.model, r.t0).without(key));
        relay_lines(
            &p,
            &up_ctype,
            status,
            &mut reader,
            &mut tap,
            tx_head,
            &tx,
            conv,
        );
    } else if !ok && cfg.openai.is_some() {
        let up = cfg.openai.as_ref().expect("checked");
        relay_openai_error(&p, up, status, &mut reader, &mut tap, tx_head, &tx);
    } else {
        relay_bytes(&p, &up_ctype, status, &mut reader, &mut tap, tx_head, &tx);
    }
    // The arm has its whole answer before the record is built and written (the runner's
    // proxy handle waits for this on shutdown).
    drop(tx);
    if p.mode != Mode::Raw {
        tap.finish(&mut entry);
        finish(sh, entry, r, &p);
    }
}

fn finish(sh: &Shared, mut entry: TrajectoryEntry, r: &Incoming<'_>, p: &Plan) {
    entry.elapsed_ms = Some((r.t0.elapsed().as_secs_f64() * 1e6).round() / 1e3);
    let parsed;
    let recorded = if p.deferred {
        parsed = serde_json::from_slice::<Value>(r.body).unwrap_or(Value::Null);
        entry.model = parsed["model"].as_str().unwrap_or("").to_string();
        entry.stream = parsed["stream"].as_bool().unwrap_or(true);
        &parsed
    } else {
        &p.recorded
    };
    entry.tools = record::tool_names(recorded);
    sh.recorder.write(entry, record::messages_of(recorded));
}

/// Relays a successful native answer line by line, translated when the arm spoke OpenAI. Each
/// line is parsed once (a relayed text line only read), for tap and translation. Lines that arrived
/// together leave together (one hop to the server, one write to the arm); nothing is held back
/// while the backend is still producing the next line. An OpenAI backend's answer is turned
/// into native lines first (`conv`), event by event.
#[allow(clippy::too_many_arguments)]
fn relay_lines<R: Read>(
    p: &Plan,
    up_ctype: &str,
    status: u16,
    reader: &mut BufReader<R>,
    tap: &mut Tap,
    tx_head: tokio::sync::oneshot::Sender<Head>,
    tx: &mpsc::Sender<bytes::Bytes>,
    mut conv: Option<ToNative>,
) {
    let ct = match (p.mode, p.stream) {
        (Mode::V1 | Mode::Responses, true) => "text/event-stream",
        (Mode::V1 | Mode::Responses, false) => "application/json",
        _ if !p.up_openai => up_ctype,
        (_, true) => "application/x-ndjson",
        (_, false) => "application/json; charset=utf-8",
    };
    let _ = tx_head.send(Head {
        status,
        content_type: ct.to_string(),
    });
    let mut em = Emit {
        sse: SseTranslator::new(&p.model, now(), p.include_usage),
        rsse: ResponsesTranslator::new(&p.model, p.base, now()),
        out: Vec::new(),
    };
    let mut line = Vec::new();
    let mut whole = Vec::new();
    loop {
        line.clear();
        let end = matches!(reader.read_until(b'\n', &mut line), Ok(0) | Err(_));
        match (&mut conv, end) {
            (None, false) if p.mode == Mode::Native && tap.native_text_line(&line) => {
                em.out.extend_from_slice(&line)
            }
            (None, false) => {
                let v = serde_json::from_slice::<Value>(&line).ok();
                em.object(p, tap, v, Some(&line));
            }
            (None, true) => {}
            (Some(c), false) if p.stream => {
                for v in c.event_line(&line) {
                    em.object(p, tap, Some(v), None);
                }
            }
            (Some(_), false) => whole.extend_from_slice(&line),
            (Some(c), true) => {
                let last = if p.stream {
                    c.eof()
                } else {
                    Some(c.whole(&whole))
                };
                em.object(p, tap, last, None);
            }
        }
        // send what is ready before the next read could wait on the backend
        let more_ready = reader.buffer().contains(&b'\n');
        if (end || !more_ready)
            && !em.out.is_empty()
            && tx
                .blocking_send(bytes::Bytes::from(std::mem::take(&mut em.out)))
                .is_err()
        {
            break;
        }
        if end {
            break;
        }
    }
}

/// What a relayed answer has ready for the arm, and the translators it goes through.
struct Emit {
    sse: SseTranslator,
    rsse: ResponsesTranslator,
    out: Vec<u8>,
}

impl Emit {
    /// One native object of the answer (`raw`: its line as the backend sent it).
    fn object(&mut self, p: &Plan, tap: &mut Tap, v: Option<Value>, raw: Option<&[u8]>) {
        if let Some(v) = &v {
            tap.object(v);
        }
        let out = &mut self.out;
        match (p.mode, v) {
            (Mode::Native, v) => match (raw, v) {
                (Some(line), _) => out.extend_from_slice(line),
                (None, Some(v)) => {
                    out.extend_from_slice(v.to_string().as_bytes());
                    out.push(b'\n');
                }
                (None, None) => {}
            },
            (_, None) => {}
            (Mode::V1, Some(v)) if p.stream => out.extend_from_slice(self.sse.line(&v).as_bytes()),
            (Mode::V1, Some(v)) => {
                out.extend_from_slice(native_to_openai(&v, now()).to_string().as_bytes())
            }
            (_, Some(v)) if p.stream => out.extend_from_slice(self.rsse.line(&v).as_bytes()),
            (_, Some(v)) => out.extend_from_slice(
                ResponsesTranslator::new(&p.model, p.base, now())
                    .whole(&v)
                    .to_string()
                    .as_bytes(),
            ),
        }
    }
}

/// An OpenAI backend's error, read whole (errors are short; capped) and relayed without the
/// key: as Ollama's `{"error"}` to a native arm, in OpenAI's shape to an OpenAI one.
fn relay_openai_error(
    p: &Plan,
    up: &OpenaiUpstream,
    status: u16,
    reader: &mut impl Read,
    tap: &mut Tap,
    tx_head: tokio::sync::oneshot::Sender<Head>,
    tx: &mpsc::Sender<bytes::Bytes>,
) {
    let mut body = Vec::new();
    let _ = reader.take(1 << 20).read_to_end(&mut body);
    let msg = up.error_message(&body);
    let out = match p.mode {
        Mode::Native => json!({ "error": msg }),
        _ => serde_json::to_value(lrab_ollama::openai::ErrorResponse::for_status(status, msg))
            .unwrap_or(Value::Null),
    };
    let bytes = out.to_string();
    tap.bytes(bytes.as_bytes());
    let _ = tx_head.send(Head {
        status,
        content_type: "application/json".into(),
    });
    let _ = tx.blocking_send(bytes::Bytes::from(bytes));
}

/// `/v1/models` of an OpenAI backend, with the key.
fn fetch_models(sh: &Shared, up: &OpenaiUpstream) -> openai_upstream::Fetched {
    let url = format!("{}/v1/models", sh.cfg.upstream.trim_end_matches('/'));
    let mut req = sh.agent.get(&url).timeout(Duration::from_secs(30));
    if let Some(k) = &up.key {
        req = req.set("authorization", &k.bearer());
    }
    let resp = match req.call() {
        Ok(r) | Err(ureq::Error::Status(_, r)) => r,
        Err(e) => return Err(format!("proxy: upstream {url}: {e}")),
    };
    let status = resp.status();
    let mut body = Vec::new();
    resp.into_reader()
        .take(16 << 20)
        .read_to_end(&mut body)
        .map_err(|e| format!("proxy: upstream {url}: {e}"))?;
    Ok((status, body))
}

/// Relays any other answer chunk by chunk (an error of a rewritten request in OpenAI's shape).
fn relay_bytes(
    p: &Plan,
    up_ctype: &str,
    status: u16,
    reader: &mut impl Read,
    tap: &mut Tap,
    tx_head: tokio::sync::oneshot::Sender<Head>,
    tx: &mpsc::Sender<bytes::Bytes>,
) {
    let ok = status < 400;
    let translated = matches!(p.mode, Mode::V1 | Mode::Responses);
    let ct = if translated && !ok {
        "application/json".to_string()
    } else {
        up_ctype.to_string()
    };
    let _ = tx_head.send(Head {
        status,
        content_type: ct,
    });
    let mut buf = vec![0u8; 16384];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if p.mode != Mode::Raw {
            tap.bytes(&buf[..n]);
        }
        let chunk = if translated && !ok {
            // Ollama error → OpenAI error shape.
            let msg = serde_json::from_slice::<Value>(&buf[..n])
                .ok()
                .and_then(|v| v["error"].as_str().map(str::to_string))
                .unwrap_or_else(|| String::from_utf8_lossy(&buf[..n]).into_owned());
            let t = match status {
                404 => "not_found_error",
                400 => "invalid_request_error",
                _ => "api_error",
            };
            bytes::Bytes::from(
                json!({"error": {"message": msg, "type": t, "param": null, "code": null}})
                    .to_string(),
            )
        } else {
            bytes::Bytes::copy_from_slice(&buf[..n])
        };
        if tx.blocking_send(chunk).is_err() {
            break;
        }
    }
}

//! The normalizing proxy (upstream §4.5, arms-and-ollama-api.md §C.6): arms without sampling
//! knobs talk to it instead of the backend. Every `/api/chat` and `/v1/chat/completions`
//! request leaves with temperature 0, thinking off and a fixed context length. Ollama's `/v1`
//! cannot carry `num_ctx`, so `/v1/chat/completions` is rewritten onto `/api/chat` and the
//! answer translated back (JSON or SSE); `/v1/responses` likewise (`lrab_ollama::responses`). Streams
//! pass through as they arrive; the tokens of every request are logged (one JSON line each).
//! Other paths are forwarded unchanged.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use lrab_ollama::responses::{id_base, responses_to_native, ResponsesTranslator};

/// Proxy settings.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Backend base URL (`http://127.0.0.1:11434`).
    pub upstream: String,
    pub num_ctx: u64,
    /// Per-request token log (JSON lines).
    pub log: Option<PathBuf>,
    /// Rewrite `/v1/chat/completions` onto `/api/chat` (the only way to pin `num_ctx`).
    pub v1_to_native: bool,
}

/// A running proxy; stops when dropped.
pub struct ProxyHandle {
    addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProxyHandle {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for ProxyHandle {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
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
    listener.set_nonblocking(true)?;
    let bound = listener.local_addr()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(16)
        .enable_all()
        .thread_name("lrab-proxy")
        .build()?;
    let state = Arc::new(cfg);
    let app = axum::Router::new().fallback(handle).with_state(state);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("lrab-proxy".into())
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
        })?;
    Ok(ProxyHandle {
        addr: bound,
        shutdown: Some(tx),
        thread: Some(thread),
    })
}

/// Forces the normalized sampling on a native `/api/chat` body.
pub fn normalize_native(body: &mut Value, num_ctx: u64) {
    let Some(obj) = body.as_object_mut() else {
        return;
    };
    let opts = obj
        .entry("options")
        .or_insert_with(|| Value::Object(Map::new()));
    if !opts.is_object() {
        *opts = Value::Object(Map::new());
    }
    let o = opts.as_object_mut().expect("object");
    o.insert("temperature".into(), json!(0));
    o.insert("num_ctx".into(), json!(num_ctx));
    obj.insert("think".into(), json!(false));
}

/// Normalizes an OpenAI body in place (for pass-through mode): temperature 0, reasoning off.
pub fn normalize_openai(body: &mut Value) {
    if let Some(obj) = body.as_object_mut() {
        obj.insert("temperature".into(), json!(0));
        obj.insert("reasoning_effort".into(), json!("none"));
        obj.remove("reasoning");
    }
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Translates an OpenAI chat-completions request into a native `/api/chat` one (normalized).
pub fn openai_to_native(req: &Value, num_ctx: u64) -> Value {
    let mut names_by_id = std::collections::HashMap::new();
    let mut messages = Vec::new();
    for m in req["messages"].as_array().cloned().unwrap_or_default() {
        let role = m["role"].as_str().unwrap_or("user").to_string();
        let mut out = json!({"role": role, "content": text_of(&m["content"])});
        if let Some(calls) = m["tool_calls"].as_array() {
            let mut native = Vec::new();
            for c in calls {
                let name = c["function"]["name"].as_str().unwrap_or("").to_string();
                if let Some(id) = c["id"].as_str() {
                    names_by_id.insert(id.to_string(), name.clone());
                }
                let args = match &c["function"]["arguments"] {
                    Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| json!({})),
                    v @ Value::Object(_) => v.clone(),
                    _ => json!({}),
                };
                native.push(json!({"function": {"name": name, "arguments": args}}));
            }
            out["tool_calls"] = Value::Array(native);
        }
        if role == "tool" {
            let name = m["name"]
                .as_str()
                .map(str::to_string)
                .or_else(|| {
                    m["tool_call_id"]
                        .as_str()
                        .and_then(|id| names_by_id.get(id).cloned())
                })
                .unwrap_or_default();
            out["tool_name"] = json!(name);
            if let Some(id) = m["tool_call_id"].as_str() {
                out["tool_call_id"] = json!(id);
            }
        }
        messages.push(out);
    }
    let mut options = Map::new();
    if let Some(n) = req.get("max_tokens").or(req.get("max_completion_tokens")) {
        options.insert("num_predict".into(), n.clone());
    }
    for k in [
        "top_p",
        "seed",
        "stop",
        "frequency_penalty",
        "presence_penalty",
    ] {
        if let Some(v) = req.get(k).filter(|v| !v.is_null()) {
            options.insert(k.into(), v.clone());
        }
    }
    let mut body = json!({
        "model": req["model"],
        "messages": messages,
        "stream": req["stream"].as_bool().unwrap_or(false),
        "options": Value::Object(options),
    });
    if let Some(t) = req.get("tools").filter(|t| t.is_array()) {
        body["tools"] = t.clone();
    }
    if req["response_format"]["type"] == "json_object" {
        body["format"] = json!("json");
    }
    normalize_native(&mut body, num_ctx);
    body
}

fn openai_tool_calls(msg: &Value, offset: usize) -> Vec<Value> {
    msg["tool_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({
                "index": offset + i,
                "id": c["id"].as_str().map(str::to_string).unwrap_or_else(|| format!("call_{}", offset + i)),
                "type": "function",
                "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"].to_string()},
            })
        })
        .collect()
}

fn finish_reason(done_reason: &Value, tool_calls: bool) -> String {
    let r = done_reason.as_str().unwrap_or("stop");
    if r == "stop" && tool_calls {
        "tool_calls".into()
    } else {
        r.to_string()
    }
}

fn usage(final_obj: &Value) -> Value {
    let p = final_obj["prompt_eval_count"].as_u64().unwrap_or(0);
    let c = final_obj["eval_count"].as_u64().unwrap_or(0);
    json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c})
}

/// A non-streamed native reply as an OpenAI `chat.completion`.
pub fn native_to_openai(resp: &Value, created: u64) -> Value {
    let calls = openai_tool_calls(&resp["message"], 0);
    let mut message =
        json!({"role": "assistant", "content": resp["message"]["content"].as_str().unwrap_or("")});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls.clone());
    }
    json!({
        "id": "chatcmpl-lrab", "object": "chat.completion", "created": created,
        "model": resp["model"], "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(&resp["done_reason"], !calls.is_empty())}],
        "usage": usage(resp),
    })
}

/// State of one streamed translation (native NDJSON lines → SSE events).
pub struct SseTranslator {
    pub model: String,
    pub created: u64,
    pub include_usage: bool,
    started: bool,
    calls: usize,
}

impl SseTranslator {
    pub fn new(model: &str, created: u64, include_usage: bool) -> Self {
        SseTranslator {
            model: model.into(),
            created,
            include_usage,
            started: false,
            calls: 0,
        }
    }

    fn chunk(&self, delta: Value, finish: Value) -> String {
        let c = json!({"id": "chatcmpl-lrab", "object": "chat.completion.chunk", "created": self.created,
            "model": self.model, "system_fingerprint": "fp_ollama",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    }

    /// SSE text for one native line.
    pub fn line(&mut self, obj: &Value) -> String {
        let mut out = String::new();
        if let Some(e) = obj.get("error") {
            let err =
                json!({"error": {"message": e, "type": "api_error", "param": null, "code": null}});
            out.push_str(&format!("data: {err}\n\n"));
            return out;
        }
        if !self.started {
            self.started = true;
            out.push_str(&self.chunk(json!({"role": "assistant", "content": ""}), Value::Null));
        }
        let content = obj["message"]["content"].as_str().unwrap_or("");
        if !content.is_empty() {
            out.push_str(&self.chunk(json!({"content": content}), Value::Null));
        }
        let calls = openai_tool_calls(&obj["message"], self.calls);
        if !calls.is_empty() {
            self.calls += calls.len();
            out.push_str(&self.chunk(json!({"tool_calls": calls}), Value::Null));
        }
        if obj["done"].as_bool() == Some(true) {
            out.push_str(&self.chunk(
                json!({}),
                json!(finish_reason(&obj["done_reason"], self.calls > 0)),
            ));
            if self.include_usage {
                let c = json!({"id": "chatcmpl-lrab", "object": "chat.completion.chunk", "created": self.created,
                    "model": self.model, "system_fingerprint": "fp_ollama", "choices": [], "usage": usage(obj)});
                out.push_str(&format!("data: {c}\n\n"));
            }
            out.push_str("data: [DONE]\n\n");
        }
        out
    }
}

/// What the blocking upstream call reports before the body.
struct Head {
    status: u16,
    content_type: String,
}

async fn handle(State(cfg): State<Arc<ProxyConfig>>, req: Request) -> Response {
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
    let plain = path.split('?').next().unwrap_or("").to_string();
    let (tx_head, rx_head) = tokio::sync::oneshot::channel::<Head>();
    let (tx, rx) = mpsc::channel::<bytes::Bytes>(64);
    let cfg2 = cfg.clone();
    tokio::task::spawn_blocking(move || {
        forward(
            &cfg2,
            method.as_str(),
            &path,
            &plain,
            &ctype,
            &body,
            tx_head,
            tx,
        );
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
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[allow(clippy::too_many_arguments)]
fn forward(
    cfg: &ProxyConfig,
    method: &str,
    path: &str,
    plain: &str,
    ctype: &str,
    body: &[u8],
    tx_head: tokio::sync::oneshot::Sender<Head>,
    tx: mpsc::Sender<bytes::Bytes>,
) {
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(10))
        .timeout_read(Duration::from_secs(3600))
        .build();
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let mut base = 0;
    let (mode, target, out_body, model, stream, include_usage) = match (plain, parsed) {
        ("/api/chat", Some(mut v)) if method == "POST" => {
            normalize_native(&mut v, cfg.num_ctx);
            let s = v["stream"].as_bool().unwrap_or(true);
            let m = v["model"].as_str().unwrap_or("").to_string();
            (
                "native",
                path.to_string(),
                v.to_string().into_bytes(),
                m,
                s,
                false,
            )
        }
        ("/v1/chat/completions", Some(v)) if method == "POST" && cfg.v1_to_native => {
            let n = openai_to_native(&v, cfg.num_ctx);
            let s = n["stream"].as_bool().unwrap_or(false);
            let m = v["model"].as_str().unwrap_or("").to_string();
            let iu = v["stream_options"]["include_usage"]
                .as_bool()
                .unwrap_or(false);
            (
                "v1",
                "/api/chat".to_string(),
                n.to_string().into_bytes(),
                m,
                s,
                iu,
            )
        }
        ("/v1/responses", Some(v)) if method == "POST" && cfg.v1_to_native => {
            let mut n = responses_to_native(&v);
            normalize_native(&mut n, cfg.num_ctx);
            base = id_base(&v);
            let s = n["stream"].as_bool().unwrap_or(false);
            let m = v["model"].as_str().unwrap_or("").to_string();
            (
                "responses",
                "/api/chat".to_string(),
                n.to_string().into_bytes(),
                m,
                s,
                false,
            )
        }
        ("/v1/chat/completions" | "/v1/responses", Some(mut v)) if method == "POST" => {
            normalize_openai(&mut v);
            let s = v["stream"].as_bool().unwrap_or(false);
            let m = v["model"].as_str().unwrap_or("").to_string();
            (
                "v1pass",
                path.to_string(),
                v.to_string().into_bytes(),
                m,
                s,
                false,
            )
        }
        _ => (
            "raw",
            path.to_string(),
            body.to_vec(),
            String::new(),
            false,
            false,
        ),
    };
    let url = format!("{}{}", cfg.upstream.trim_end_matches('/'), target);
    let req = agent.request(method, &url).set("content-type", ctype);
    let result = if method == "GET" || method == "HEAD" {
        req.call()
    } else {
        req.send_bytes(&out_body)
    };
    let resp = match result {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => {
            let _ = tx_head.send(Head {
                status: 502,
                content_type: "application/json".into(),
            });
            let _ = tx.blocking_send(bytes::Bytes::from(
                json!({"error": format!("proxy: upstream {url}: {e}")}).to_string(),
            ));
            return;
        }
    };
    let status = resp.status();
    let up_ctype = resp.content_type().to_string();
    let mut reader = BufReader::new(resp.into_reader());
    let mut final_obj = Value::Null;
    let ok = status < 400;
    match mode {
        "native" | "v1" | "responses" if ok => {
            let ct = match (mode, stream) {
                ("v1" | "responses", true) => "text/event-stream",
                ("v1" | "responses", false) => "application/json",
                _ => up_ctype.as_str(),
            };
            let _ = tx_head.send(Head {
                status,
                content_type: ct.to_string(),
            });
            let mut sse = SseTranslator::new(&model, now(), include_usage);
            let mut rsse = ResponsesTranslator::new(&model, base, now());
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let v: Option<Value> = serde_json::from_slice(&line).ok();
                if let Some(v) = &v {
                    if v["done"].as_bool() == Some(true) {
                        final_obj = v.clone();
                    }
                }
                let out = match (mode, stream, &v) {
                    ("native", _, _) => bytes::Bytes::from(line.clone()),
                    ("v1", true, Some(v)) => bytes::Bytes::from(sse.line(v)),
                    ("v1", false, Some(v)) => {
                        bytes::Bytes::from(native_to_openai(v, now()).to_string())
                    }
                    ("responses", true, Some(v)) => bytes::Bytes::from(rsse.line(v)),
                    ("responses", false, Some(v)) => bytes::Bytes::from(
                        ResponsesTranslator::new(&model, base, now())
                            .whole(v)
                            .to_string(),
                    ),
                    _ => continue,
                };
                if tx.blocking_send(out).is_err() {
                    break;
                }
            }
        }
        _ => {
            let translated = mode == "v1" || mode == "responses";
            let ct = if translated && !ok {
                "application/json".to_string()
            } else {
                up_ctype.clone()
            };
            let _ = tx_head.send(Head {
                status,
                content_type: ct,
            });
            let mut buf = vec![0u8; 16384];
            let mut all = Vec::new();
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if mode == "v1pass" {
                            all.extend_from_slice(&buf[..n]);
                        }
                        let chunk = if translated && !ok {
                            // Ollama error → OpenAI error shape.
                            let msg = serde_json::from_slice::<Value>(&buf[..n])
                                .ok()
                                .and_then(|v| v["error"].as_str().map(str::to_string))
                                .unwrap_or_else(|| String::from_utf8_lossy(&buf[..n]).into_owned());
                            let t = if status == 404 {
                                "not_found_error"
                            } else if status == 400 {
                                "invalid_request_error"
                            } else {
                                "api_error"
                            };
                            bytes::Bytes::from(json!({"error": {"message": msg, "type": t, "param": null, "code": null}}).to_string())
                        } else {
                            bytes::Bytes::copy_from_slice(&buf[..n])
                        };
                        if tx.blocking_send(chunk).is_err() {
                            break;
                        }
                    }
                }
            }
            if mode == "v1pass" {
                final_obj = v1_usage(&all);
            }
        }
    }
    if mode != "raw" {
        if let Some(log) = &cfg.log {
            let (p, c) = if mode == "v1pass" {
                (
                    final_obj["prompt_tokens"]
                        .as_u64()
                        .or(final_obj["input_tokens"].as_u64()),
                    final_obj["completion_tokens"]
                        .as_u64()
                        .or(final_obj["output_tokens"].as_u64()),
                )
            } else {
                (
                    final_obj["prompt_eval_count"].as_u64(),
                    final_obj["eval_count"].as_u64(),
                )
            };
            let _ = lrab_records::append_jsonl(
                log,
                &json!({"path": plain, "model": model, "status": status, "stream": stream,
                        "rewritten_to_native": mode == "v1" || mode == "responses", "prompt_tokens": p, "completion_tokens": c}),
            );
        }
    }
}

/// The `usage` object of an OpenAI reply, JSON or SSE.
fn v1_usage(bytes: &[u8]) -> Value {
    let text = String::from_utf8_lossy(bytes);
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return v["usage"].clone();
    }
    // Chat-completion chunks carry `usage`; Responses events carry `response.usage`.
    text.lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| {
            if v["usage"].is_object() {
                v["usage"].clone()
            } else {
                v["response"]["usage"].clone()
            }
        })
        .find(Value::is_object)
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_normalization_overrides_everything() {
        let mut v =
            json!({"model": "m", "think": true, "options": {"temperature": 0.7, "top_k": 5}});
        normalize_native(&mut v, 8192);
        assert_eq!(
            v["options"],
            json!({"temperature": 0, "top_k": 5, "num_ctx": 8192})
        );
        assert_eq!(v["think"], json!(false));
    }

    #[test]
    fn openai_request_translation() {
        let req = json!({"model": "m", "stream": true, "max_tokens": 100, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{\"p\":\".\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"}
        ], "tools": [{"type": "function", "function": {"name": "ls"}}]});
        let n = openai_to_native(&req, 4096);
        assert_eq!(n["messages"][0]["content"], "hi");
        assert_eq!(
            n["messages"][1]["tool_calls"][0]["function"]["arguments"],
            json!({"p": "."})
        );
        assert_eq!(n["messages"][2]["tool_name"], "ls");
        assert_eq!(n["options"]["num_predict"], 100);
        assert_eq!(n["options"]["num_ctx"], 4096);
        assert_eq!(n["options"]["temperature"], 0);
        assert_eq!(n["think"], false);
        assert_eq!(n["stream"], true);
    }

    #[test]
    fn sse_translation_ends_with_done() {
        let mut t = SseTranslator::new("m", 1, true);
        let a = t.line(&json!({"message": {"content": "he"}, "done": false}));
        assert!(a.contains("\"role\":\"assistant\"") && a.contains("\"content\":\"he\""));
        let b = t.line(&json!({"message": {"content": "", "tool_calls": [{"function": {"name": "ls", "arguments": {}}}]}, "done": false}));
        assert!(b.contains("\"arguments\":\"{}\""));
        let c = t.line(&json!({"message": {"content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 2}));
        assert!(c.contains("\"finish_reason\":\"tool_calls\""));
        assert!(c.contains("\"total_tokens\":5"));
        assert!(c.ends_with("data: [DONE]\n\n"));
    }
}

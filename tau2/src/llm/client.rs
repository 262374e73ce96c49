//! The model client of the `plain` agent, the user simulator and the judge: one chat request
//! in the typed wire shapes of `lrab-ollama` (the ones the harness's backends and the
//! simulator speak), sent with the harness's HTTP client (`ureq`), with upstream's sampling
//! settings and our retry and `think` fallback.

use crate::error::{err, fail, Result};
use lrab_ollama::{self as wire, openai};
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The API a backend is spoken to in (`--api`, `--user-api`, `--judge-api`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Api {
    /// Ollama's native `/api/chat`.
    Ollama,
    /// The OpenAI-compatible `/v1/chat/completions`.
    #[value(name = "openai")]
    OpenAi,
}

/// A model on a backend, with the sampling settings upstream uses (temperature 0, seed).
#[derive(Debug, Clone)]
pub struct Backend {
    pub url: String,
    pub api: Api,
    pub model: String,
    pub temperature: f64,
    /// Ollama's top-level `think`, sent as our harness sends it, so that every participant
    /// of a run (agent of any arm, user simulator) runs under the same thinking setting.
    /// `None` sends nothing (the server's default).
    pub think: Option<bool>,
    /// Set once the server refused `think` (a model without the capability, which
    /// therefore cannot think either way); later requests leave it out, as the harness does.
    pub think_refused: Arc<AtomicBool>,
    pub seed: Option<u64>,
    pub num_ctx: Option<u64>,
    pub timeout: Duration,
    pub retries: usize,
}

impl Backend {
    pub fn new(url: &str, api: Api, model: &str) -> Backend {
        Backend {
            url: url.trim_end_matches('/').to_string(),
            api,
            model: model.to_string(),
            temperature: 0.0,
            think: None,
            think_refused: Default::default(),
            seed: None,
            num_ctx: Some(32768),
            timeout: Duration::from_secs(600),
            retries: 3,
        }
    }
}

/// What a model produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub content: Option<String>,
    pub tool_calls: Vec<(String, Map<String, Value>)>,
}

/// http, or https with the TLS settings every backend client shares (a hosted API); any other
/// scheme, or a bad CA file for https, is said up front rather than as a transport error.
pub(crate) fn check_url(url: &str) -> Result<()> {
    if url.starts_with("https://") {
        // the TLS settings every backend client shares; a bad CA file is named here
        if let Err(e) = lrab_util::tls::client_config() {
            fail!(Backend, "backend URL {url:?}: {e}");
        }
    } else if !url.starts_with("http://") {
        fail!(
            Backend,
            "backend URL {url:?} must start with http:// or https://"
        );
    }
    Ok(())
}

/// Whether `think` goes into the next request.
fn sends_think(b: &Backend) -> Option<bool> {
    b.think
        .filter(|_| b.api == Api::Ollama && !b.think_refused.load(Ordering::Relaxed))
}

/// Send one chat request (with retries on transport errors and 5xx). `messages` are in
/// OpenAI shape (the tool name of a result in `name`, for Ollama). A server that refuses
/// `think` (HTTP 400 naming it) gets the request again without it.
pub fn chat(b: &Backend, messages: &[openai::Message], tools: &[wire::Tool]) -> Result<Reply> {
    let think = sends_think(b);
    match chat_once(b, messages, tools, think) {
        Err(e) if think.is_some() && refused_think(&e.to_string()) => {
            b.think_refused.store(true, Ordering::Relaxed);
            chat_once(b, messages, tools, None)
        }
        r => r,
    }
}

fn refused_think(text: &str) -> bool {
    text.contains("HTTP 400") && text.contains("think")
}

/// The request body and the endpoint it goes to.
fn request(
    b: &Backend,
    messages: &[openai::Message],
    tools: &[wire::Tool],
    think: Option<bool>,
) -> Result<(&'static str, Vec<u8>)> {
    let tools = (!tools.is_empty()).then(|| tools.to_vec());
    Ok(match b.api {
        Api::Ollama => {
            let body = wire::ChatRequest {
                model: b.model.clone(),
                messages: messages.iter().map(to_ollama).collect(),
                tools,
                stream: Some(false),
                options: Some(wire::Options {
                    temperature: Some(b.temperature),
                    num_ctx: b.num_ctx,
                    seed: b.seed.map(|s| s as i64),
                    ..Default::default()
                }),
                think: think.map(wire::Think::Bool),
                ..Default::default()
            };
            ("/api/chat", serde_json::to_vec(&body)?)
        }
        Api::OpenAi => {
            let body = openai::ChatCompletionRequest {
                model: b.model.clone(),
                messages: messages.iter().map(to_openai).collect(),
                tools,
                temperature: Some(b.temperature),
                seed: b.seed.map(|s| s as i64),
                ..Default::default()
            };
            ("/v1/chat/completions", serde_json::to_vec(&body)?)
        }
    })
}

/// OpenAI-compatible servers match results by `tool_call_id`; the tool name stays home.
fn to_openai(m: &openai::Message) -> openai::Message {
    openai::Message {
        name: None,
        ..m.clone()
    }
}

/// Ollama's shape: arguments as objects, the result's tool name as `tool_name`, no ids.
fn to_ollama(m: &openai::Message) -> wire::Message {
    let mut w = wire::Message::new(&m.role, m.text());
    w.tool_name = m.name.clone();
    if let Some(calls) = &m.tool_calls {
        let calls = calls.iter().enumerate().map(|(i, c)| {
            let args = c.function.arguments.as_deref().unwrap_or_default();
            let args = serde_json::from_str::<Value>(args).unwrap_or(Value::Object(Map::new()));
            wire::ToolCall::new(
                None,
                i as u32,
                c.function.name.as_deref().unwrap_or_default(),
                args,
            )
        });
        w.tool_calls = Some(calls.collect());
    }
    w
}

fn chat_once(
    b: &Backend,
    messages: &[openai::Message],
    tools: &[wire::Tool],
    think: Option<bool>,
) -> Result<Reply> {
    check_url(&b.url)?;
    let (path, body) = request(b, messages, tools, think)?;
    let mut agent = ureq::AgentBuilder::new()
        .timeout_read(b.timeout)
        .timeout_write(b.timeout);
    if let Ok(tls) = lrab_util::tls::client_config() {
        agent = agent.tls_config(tls);
    }
    let agent = agent.build();
    let url = format!("{}{path}", b.url);
    let key = std::env::var("OPENAI_API_KEY")
        .ok()
        .filter(|_| b.api == Api::OpenAi);
    let short = |t: String| t.chars().take(300).collect::<String>();
    let mut last = err!(Backend, "no attempt made");
    for _ in 0..=b.retries {
        let mut rq = agent.post(&url).set("Content-Type", "application/json");
        if let Some(k) = &key {
            rq = rq.set("Authorization", &format!("Bearer {k}"));
        }
        match rq.send_bytes(&body) {
            Ok(r) if r.status() == 200 => {
                let text = r
                    .into_string()
                    .map_err(|e| err!(Backend, "reading the reply from {}: {e}", b.url))?;
                return parse_reply(b.api, &text);
            }
            Ok(r) => {
                let s = r.status();
                fail!(
                    Backend,
                    "{} returned HTTP {s}: {}",
                    b.url,
                    short(r.into_string().unwrap_or_default())
                )
            }
            Err(ureq::Error::Status(s, r)) => {
                let e = err!(
                    Backend,
                    "{} returned HTTP {s}: {}",
                    b.url,
                    short(r.into_string().unwrap_or_default())
                );
                if s < 500 {
                    return Err(e);
                }
                last = e;
            }
            Err(ureq::Error::Transport(t)) => last = err!(Backend, "cannot reach {url}: {t}"),
        }
    }
    Err(last)
}

fn parse_args(s: Option<&str>) -> Map<String, Value> {
    match s.map(serde_json::from_str::<Value>) {
        Some(Ok(Value::Object(m))) => m,
        _ => Map::new(),
    }
}

/// The reply's text (none when empty) and its tool calls, from either API's reply body.
pub(crate) fn parse_reply(api: Api, text: &str) -> Result<Reply> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| err!(Backend, "backend reply is not JSON: {e}"))?;
    let msg = match api {
        Api::Ollama => v.get("message"),
        Api::OpenAi => v.pointer("/choices/0/message"),
    }
    .ok_or_else(|| {
        err!(
            Backend,
            "backend reply has no message: {}",
            text.chars().take(200).collect::<String>()
        )
    })?;
    let unreadable = |e: serde_json::Error| err!(Backend, "backend reply's message: {e}");
    let (content, tool_calls) = match api {
        Api::Ollama => {
            let m: wire::Message = serde_json::from_value(msg.clone()).map_err(unreadable)?;
            let calls = m.calls().iter().map(|c| {
                let args = match &c.function.arguments {
                    Value::Object(o) => o.clone(),
                    _ => Map::new(),
                };
                (c.function.name.clone(), args)
            });
            (Some(m.content.clone()), calls.collect())
        }
        Api::OpenAi => {
            let m: openai::ResponseMessage =
                serde_json::from_value(msg.clone()).map_err(unreadable)?;
            let calls = m.tool_calls.iter().flatten().filter_map(|c| {
                let name = c.function.name.clone()?;
                Some((name, parse_args(c.function.arguments.as_deref())))
            });
            (m.content.clone(), calls.collect())
        }
    };
    Ok(Reply {
        content: content.filter(|s| !s.is_empty()),
        tool_calls,
    })
}

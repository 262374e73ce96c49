//! Chat backends (Ollama `/api/chat` and OpenAI-compatible `/v1/chat/completions`) and the
//! LLM participants: the `plain` agent (upstream's reference LLM agent), the user
//! simulator, and the NL-assertion judge.

use crate::error::{err, fail, Result};
use crate::evaluate::{Judge, NlResult};
use crate::http;
use crate::message::{Message, ToolCall};
use crate::orchestrator::{Agent, User};
use serde_json::{json, Map, Value};
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
    pub think_refused: std::sync::Arc<std::sync::atomic::AtomicBool>,
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

/// One chat message on the wire, already in OpenAI shape (role/content/tool_calls).
pub type WireMsg = Value;

/// What a model produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub content: Option<String>,
    pub tool_calls: Vec<(String, Map<String, Value>)>,
}

fn to_ollama(m: &WireMsg) -> Value {
    let mut o = m.clone();
    if let Some(calls) = m.get("tool_calls").and_then(|c| c.as_array()) {
        let conv: Vec<Value> = calls
            .iter()
            .map(|c| {
                let f = &c["function"];
                let args = f["arguments"]
                    .as_str()
                    .and_then(|s| serde_json::from_str::<Value>(s).ok())
                    .unwrap_or(json!({}));
                json!({"function": {"name": f["name"], "arguments": args}})
            })
            .collect();
        o["tool_calls"] = Value::Array(conv);
    }
    if let Some(obj) = o.as_object_mut() {
        obj.remove("tool_call_id");
        if let Some(Value::String(n)) = obj.remove(TOOL_NAME_KEY) {
            obj.insert("tool_name".into(), json!(n));
        }
        if obj.get("content").is_some_and(|c| c.is_null()) {
            obj.insert("content".into(), json!(""));
        }
    }
    o
}

fn parse_args(v: &Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m.clone(),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        },
        _ => Map::new(),
    }
}

/// Whether `think` goes into the next request.
fn sends_think(b: &Backend) -> Option<bool> {
    use std::sync::atomic::Ordering;
    b.think
        .filter(|_| b.api == Api::Ollama && !b.think_refused.load(Ordering::Relaxed))
}

/// Send one chat request (with retries on transport errors and 5xx). A server that refuses
/// `think` (HTTP 400 naming it) gets the request again without it.
pub fn chat(b: &Backend, messages: &[WireMsg], tools: &[Value]) -> Result<Reply> {
    let think = sends_think(b);
    match chat_once(b, messages, tools, think) {
        Err(e) if think.is_some() && refused_think(&e.to_string()) => {
            b.think_refused
                .store(true, std::sync::atomic::Ordering::Relaxed);
            chat_once(b, messages, tools, None)
        }
        r => r,
    }
}

fn refused_think(text: &str) -> bool {
    text.contains("HTTP 400") && text.contains("think")
}

fn chat_once(
    b: &Backend,
    messages: &[WireMsg],
    tools: &[Value],
    think: Option<bool>,
) -> Result<Reply> {
    let (path, body) = match b.api {
        Api::Ollama => {
            let mut options = json!({"temperature": b.temperature});
            if let Some(s) = b.seed {
                options["seed"] = json!(s);
            }
            if let Some(n) = b.num_ctx {
                options["num_ctx"] = json!(n);
            }
            let mut body = json!({"model": b.model, "messages": messages.iter().map(to_ollama).collect::<Vec<_>>(), "stream": false, "options": options});
            if let Some(t) = think {
                body["think"] = json!(t);
            }
            if !tools.is_empty() {
                body["tools"] = json!(tools);
            }
            ("/api/chat", body)
        }
        Api::OpenAi => {
            let clean: Vec<Value> = messages
                .iter()
                .map(|m| {
                    let mut m = m.clone();
                    if let Some(o) = m.as_object_mut() {
                        o.remove(TOOL_NAME_KEY);
                    }
                    m
                })
                .collect();
            let mut body =
                json!({"model": b.model, "messages": clean, "temperature": b.temperature});
            if let Some(s) = b.seed {
                body["seed"] = json!(s);
            }
            if !tools.is_empty() {
                body["tools"] = json!(tools);
            }
            ("/v1/chat/completions", body)
        }
    };
    let bytes = serde_json::to_vec(&body)?;
    let mut headers = Vec::new();
    if b.api == Api::OpenAi {
        if let Ok(k) = std::env::var("OPENAI_API_KEY") {
            headers.push(("Authorization".to_string(), format!("Bearer {k}")));
        }
    }
    let mut last = err!(Backend, "no attempt made");
    for _ in 0..=b.retries {
        match http::post_json(&b.url, path, &bytes, &headers, b.timeout) {
            Ok((200, text)) => return parse_reply(b.api, &text),
            Ok((s, text)) if s >= 500 => {
                last = err!(
                    Backend,
                    "{} returned HTTP {s}: {}",
                    b.url,
                    text.chars().take(300).collect::<String>()
                )
            }
            Ok((s, text)) => fail!(
                Backend,
                "{} returned HTTP {s}: {}",
                b.url,
                text.chars().take(300).collect::<String>()
            ),
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn parse_reply(api: Api, text: &str) -> Result<Reply> {
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
    let content = msg
        .get("content")
        .and_then(|c| c.as_str())
        .map(str::to_string)
        .filter(|s| !s.is_empty());
    let tool_calls = msg
        .get("tool_calls")
        .and_then(|c| c.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|c| {
                    let f = c.get("function")?;
                    Some((
                        f.get("name")?.as_str()?.to_string(),
                        parse_args(f.get("arguments").unwrap_or(&Value::Null)),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Reply {
        content,
        tool_calls,
    })
}

/// The agent's view of the trajectory in OpenAI shape (tool calls with ids, tool results).
pub fn agent_view(system: &str, traj: &[Message]) -> Vec<WireMsg> {
    let mut out = vec![json!({"role": "system", "content": system})];
    let mut names = std::collections::HashMap::new();
    for m in traj {
        for c in m.tool_calls.iter().flatten() {
            names.insert(c.id.clone(), c.name.clone());
        }
        match m.role.as_str() {
            "assistant" => {
                let mut w = json!({"role": "assistant", "content": m.content});
                if let Some(calls) = &m.tool_calls {
                    w["tool_calls"] = Value::Array(calls.iter().map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": serde_json::to_string(&Value::Object(c.arguments.clone())).unwrap_or_default()}})).collect());
                }
                out.push(w);
            }
            "user" if !m.is_tool_call() => out.push(json!({"role": "user", "content": m.content})),
            "tool" if m.requestor.as_deref() != Some("user") => {
                let name = m.id.as_ref().and_then(|id| names.get(id)).cloned();
                out.push(json!({"role": "tool", "tool_call_id": m.id, "content": m.content, TOOL_NAME_KEY: name}))
            }
            _ => {}
        }
    }
    out
}

/// Private key carrying a tool result's tool name: sent as `tool_name` to Ollama, dropped
/// for OpenAI-compatible servers (which match results by `tool_call_id`).
const TOOL_NAME_KEY: &str = "_tool_name";

/// The agent instruction block wrapped around the policy (upstream's LLM agent shape,
/// in our own words).
pub fn agent_system_prompt(policy: &str) -> String {
    format!(
        "<instructions>\nYou are a customer service agent helping the user as the <policy> below describes.\nIn each turn you either send a message to the user or make a tool call, never both.\nBe helpful, follow the policy at all times, and produce valid JSON for tool arguments.\n</instructions>\n<policy>\n{policy}\n</policy>"
    )
}

/// `plain`: upstream's reference LLM agent — policy as system prompt, the domain tools,
/// whatever the model returns, no extra mechanisms.
pub struct PlainAgent {
    pub backend: Backend,
    pub system: String,
    pub tools: Vec<Value>,
    calls: usize,
}

impl PlainAgent {
    pub fn new(backend: Backend, policy: &str, tools: Vec<Value>) -> Self {
        PlainAgent {
            backend,
            system: agent_system_prompt(policy),
            tools,
            calls: 0,
        }
    }
}

impl Agent for PlainAgent {
    fn next(&mut self, traj: &[Message]) -> Result<Message> {
        let r = chat(&self.backend, &agent_view(&self.system, traj), &self.tools)?;
        Ok(reply_to_message("assistant", r, &mut self.calls))
    }
}

fn reply_to_message(role: &str, r: Reply, counter: &mut usize) -> Message {
    if r.tool_calls.is_empty() {
        return Message {
            role: role.into(),
            content: r.content,
            ..Default::default()
        };
    }
    let calls = r
        .tool_calls
        .into_iter()
        .map(|(name, arguments)| {
            *counter += 1;
            ToolCall {
                id: format!("{role}_call_{counter}"),
                name,
                arguments,
                requestor: role.into(),
            }
        })
        .collect();
    Message::with_calls(role, r.content, calls)
}

/// The user simulator's view: roles flipped, the agent's tool traffic hidden, the user's
/// own tool calls and results kept.
pub fn user_view(system: &str, traj: &[Message]) -> Vec<WireMsg> {
    let mut out = vec![json!({"role": "system", "content": system})];
    for m in traj {
        match m.role.as_str() {
            "assistant" if !m.is_tool_call() => {
                out.push(json!({"role": "user", "content": m.content}))
            }
            "user" => {
                let mut w = json!({"role": "assistant", "content": m.content});
                if let Some(calls) = &m.tool_calls {
                    w["tool_calls"] = Value::Array(calls.iter().map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": serde_json::to_string(&Value::Object(c.arguments.clone())).unwrap_or_default()}})).collect());
                }
                out.push(w);
            }
            "tool" if m.requestor.as_deref() == Some("user") => {
                out.push(json!({"role": "tool", "tool_call_id": m.id, "content": m.content}))
            }
            _ => {}
        }
    }
    out
}

/// Upstream's user system prompt: the guideline file, then the rendered scenario.
pub fn user_system_prompt(guidelines: &str, scenario: &str) -> String {
    format!("{guidelines}\n\n<scenario>\n{scenario}\n</scenario>")
}

/// LLM user simulator with its own model and backend.
pub struct LlmUser {
    pub backend: Backend,
    pub system: String,
    pub tools: Vec<Value>,
    calls: usize,
}

impl LlmUser {
    pub fn new(backend: Backend, guidelines: &str, scenario: &str, tools: Vec<Value>) -> Self {
        LlmUser {
            backend,
            system: user_system_prompt(guidelines, scenario),
            tools,
            calls: 0,
        }
    }
}

impl User for LlmUser {
    fn next(&mut self, traj: &[Message]) -> Result<Message> {
        let r = chat(&self.backend, &user_view(&self.system, traj), &self.tools)?;
        Ok(reply_to_message("user", r, &mut self.calls))
    }
}

const JUDGE_SYSTEM: &str = "You grade a customer-service conversation against a list of expected outcomes. \
For each expected outcome decide, from the conversation only, whether it was met. \
Reply with JSON only, in the form {\"results\": [{\"expectedOutcome\": <the outcome text>, \"reasoning\": <short reason>, \"metExpectation\": true|false}]}, one entry per expected outcome, in order.";

/// NL-assertion judge on any backend (upstream hard-codes gpt-4.1; here it is configurable).
pub struct LlmJudge {
    pub backend: Backend,
}

impl Judge for LlmJudge {
    fn judge(&mut self, messages: &[Message], assertions: &[String]) -> Result<Vec<NlResult>> {
        let transcript: Vec<String> = messages
            .iter()
            .filter(|m| m.content.is_some())
            .map(|m| format!("{}: {}", m.role, m.text()))
            .collect();
        let user = format!(
            "conversation:\n{}\n\nexpectedOutcomes:\n{}",
            transcript.join("\n"),
            serde_json::to_string(assertions)?
        );
        let r = chat(
            &self.backend,
            &[
                json!({"role": "system", "content": JUDGE_SYSTEM}),
                json!({"role": "user", "content": user}),
            ],
            &[],
        )?;
        let text = r
            .content
            .ok_or_else(|| err!(Judge, "judge returned no text"))?;
        parse_judge(&text, assertions)
    }
}

/// Parse the judge's JSON (tolerating code fences); every assertion must get a verdict.
pub fn parse_judge(text: &str, assertions: &[String]) -> Result<Vec<NlResult>> {
    let start = text
        .find('{')
        .ok_or_else(|| err!(Judge, "judge reply has no JSON object"))?;
    let end = text
        .rfind('}')
        .ok_or_else(|| err!(Judge, "judge reply has no JSON object"))?;
    let v: Value = serde_json::from_str(&text[start..=end])
        .map_err(|e| err!(Judge, "judge reply is not valid JSON: {e}"))?;
    let list = v
        .get("results")
        .and_then(|r| r.as_array())
        .ok_or_else(|| err!(Judge, "judge reply has no results list"))?;
    if list.len() != assertions.len() {
        fail!(
            Judge,
            "judge returned {} verdicts for {} assertions",
            list.len(),
            assertions.len()
        );
    }
    Ok(list
        .iter()
        .zip(assertions)
        .map(|(r, a)| NlResult {
            assertion: a.clone(),
            met: r
                .get("metExpectation")
                .and_then(|m| m.as_bool())
                .unwrap_or(false),
            justification: r
                .get("reasoning")
                .and_then(|m| m.as_str())
                .unwrap_or("")
                .to_string(),
        })
        .collect())
}

//! A backend that speaks only the OpenAI API (vLLM, llama.cpp's server, LM Studio, hosted
//! APIs) presented to the arms as Ollama: a native `/api/chat` request is sent as
//! `/v1/chat/completions` and the answer (JSON, or SSE relayed event by event, never buffered
//! whole) comes back as Ollama's NDJSON — tools, tool results, thinking, done reasons and token
//! counts (cached prompt tokens from `usage.prompt_tokens_details` or llama.cpp's `timings`).
//! `/api/tags` and `/api/show` are answered from `/v1/models`, with the run's context length
//! when the server does not say its own. The API key is held here only ([`Secret`]) and is
//! scrubbed from anything the server says back.

use std::sync::Arc;
use std::time::Instant;

use lrab_ollama::openai::{ServerUsage, Timings};
use lrab_records::ThinkSetting;
use serde::Deserialize;
use serde_json::{json, Map, Value};

/// An API key: shown as `<redacted>`, sent only as the upstream `Authorization` header.
#[derive(Clone)]
pub struct Secret(Arc<str>);

impl Secret {
    /// The key, or `None` when the variable is empty.
    pub fn new(key: &str) -> Option<Secret> {
        let k = key.trim();
        (!k.is_empty()).then(|| Secret(Arc::from(k)))
    }

    /// The header value.
    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.0)
    }

    /// `text` with every occurrence of the key (and of its first 12 characters, which servers
    /// quote when they refuse a key) replaced.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.replace(&*self.0, "<redacted>");
        let head: String = self.0.chars().take(12).collect();
        if head.chars().count() >= 8 {
            out = out.replace(&head, "<redacted>");
        }
        out
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// How a server is told to think or not: each family of OpenAI-compatible servers reads its
/// own field and ignores the others (docs/runner.md, "Thinking on OpenAI-compatible servers").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reasoning {
    /// `chat_template_kwargs: {enable_thinking}`: vLLM, SGLang and llama.cpp's server hand it
    /// to the model's chat template (Qwen3's reads it). vLLM refuses `reasoning_effort: none`.
    TemplateKwargs,
    /// `reasoning_effort`: OpenAI and most hosted APIs (`none` off, `medium` on, or the level
    /// asked); Ollama's `/v1` maps it onto `think` and ignores a `think` field.
    Effort,
    /// OpenRouter's `reasoning: {effort}` object (`effort: none` off, `enabled: true` on).
    Object,
}

impl Reasoning {
    /// The field that says it, for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Reasoning::TemplateKwargs => "chat_template_kwargs.enable_thinking",
            Reasoning::Effort => "reasoning_effort",
            Reasoning::Object => "reasoning.effort",
        }
    }

    /// Writes thinking `on` (at `level`, when the arm asked one) into an OpenAI body, removing
    /// what the other switches would have said.
    pub fn write(self, on: bool, level: Option<&str>, out: &mut Map<String, Value>) {
        out.remove("reasoning_effort");
        out.remove("reasoning");
        let effort = match (level, on) {
            (Some("max"), _) => "high",
            (Some(level), true) => level,
            (_, true) => "medium",
            (_, false) => "none",
        };
        match self {
            Reasoning::TemplateKwargs => {
                let k = out
                    .entry("chat_template_kwargs")
                    .or_insert_with(|| json!({}));
                if !k.is_object() {
                    *k = json!({});
                }
                k["enable_thinking"] = json!(on);
            }
            Reasoning::Effort => {
                out.insert("reasoning_effort".into(), json!(effort));
            }
            Reasoning::Object if on && level.is_none() => {
                out.insert("reasoning".into(), json!({ "enabled": true }));
            }
            Reasoning::Object => {
                out.insert("reasoning".into(), json!({ "effort": effort }));
            }
        }
    }
}

/// The upstream side of a translating proxy.
#[derive(Debug, Clone)]
pub struct OpenaiUpstream {
    pub key: Option<Secret>,
    pub reasoning: Reasoning,
    /// What a request that says nothing about thinking gets (the run's `--think`).
    pub think: ThinkSetting,
    /// Context length reported by `/api/show` when `/v1/models` gives none.
    pub num_ctx: u64,
}

impl OpenaiUpstream {
    /// The message of an error body (OpenAI `{error:{message}}`, Ollama `{error}` or text),
    /// without the key.
    pub fn error_message(&self, body: &[u8]) -> String {
        let text = String::from_utf8_lossy(body);
        let msg = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| {
                super::tap::error_field(&v)
                    .or(v["message"].as_str())
                    .or(v["detail"].as_str())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| text.trim().to_string());
        match &self.key {
            Some(k) => k.scrub(&msg),
            None => msg,
        }
    }

    pub(super) fn think_fields(&self, think: &Value, out: &mut Map<String, Value>) {
        let on = match think {
            Value::Bool(b) => Some(*b),
            Value::String(_) => Some(true),
            _ => match self.think {
                ThinkSetting::Off => Some(false),
                ThinkSetting::On => Some(true),
                ThinkSetting::Model => None,
            },
        };
        if let Some(on) = on {
            self.reasoning.write(on, think.as_str(), out);
        }
    }

    /// A native `/api/chat` body as an OpenAI chat-completions body (`stream` as the proxy
    /// read it from the arm's request).
    pub fn chat_request(&self, native: &Value, stream: bool) -> Value {
        let mut out = Map::new();
        out.insert("model".into(), native["model"].clone());
        out.insert("messages".into(), Value::Array(messages(native)));
        out.insert("stream".into(), json!(stream));
        if stream {
            out.insert("stream_options".into(), json!({"include_usage": true}));
        }
        if let Some(t) = native.get("tools").filter(|t| t.is_array()) {
            out.insert("tools".into(), t.clone());
        }
        let o = &native["options"];
        for k in std::iter::once("temperature").chain(super::SHARED_SAMPLING) {
            if let Some(v) = o.get(k).filter(|v| !v.is_null()) {
                out.insert(k.into(), v.clone());
            }
        }
        if let Some(n) = o["num_predict"].as_i64().filter(|n| *n > 0) {
            out.insert("max_tokens".into(), json!(n));
        }
        match &native["format"] {
            Value::String(s) if s == "json" => {
                out.insert("response_format".into(), json!({"type": "json_object"}));
            }
            s @ Value::Object(_) => {
                out.insert(
                    "response_format".into(),
                    json!({"type": "json_schema", "json_schema": {"name": "output", "schema": s}}),
                );
            }
            _ => {}
        }
        self.think_fields(&native["think"], &mut out);
        Value::Object(out)
    }
}

/// An answer the proxy gives itself: status, content type, body.
pub type Local = (u16, &'static str, Vec<u8>);

/// `/v1/models` as fetched: status and body, or why it could not be fetched.
pub type Fetched = Result<(u16, Vec<u8>), String>;

fn json_answer(status: u16, v: Value) -> Local {
    (
        status,
        "application/json; charset=utf-8",
        v.to_string().into_bytes(),
    )
}

impl OpenaiUpstream {
    /// The answer to an Ollama request that has no OpenAI counterpart (`None`: translate or
    /// forward it). `models` fetches `/v1/models`, called only when needed.
    pub fn local(
        &self,
        method: &str,
        path: &str,
        body: &[u8],
        models: impl FnOnce() -> Fetched,
    ) -> Option<Local> {
        let fetched = |f: Fetched| -> Result<Value, Local> {
            match f {
                Ok((s, b)) if s < 400 => serde_json::from_slice::<Value>(&b).map_err(|_| {
                    json_answer(
                        502,
                        json!({"error": "the backend's /v1/models is not JSON"}),
                    )
                }),
                Ok((s, b)) => Err(json_answer(s, json!({"error": self.error_message(&b)}))),
                Err(e) => Err(json_answer(502, json!({ "error": e }))),
            }
        };
        Some(match (method, path) {
            ("GET" | "HEAD", "/") => (
                200,
                "text/plain; charset=utf-8",
                b"Ollama is running".to_vec(),
            ),
            // the simulator serving the OpenAI API says so in its model list; passed on so a
            // run through it is labelled simulated
            ("GET", "/api/version") => {
                let sim = fetched(models()).map_or(Value::Null, |m| m["lrab_sim"].clone());
                match sim {
                    s @ Value::Object(_) => {
                        json_answer(200, json!({"version": "0.0.0-openai", "lrab_sim": s}))
                    }
                    _ => json_answer(200, json!({"version": "0.0.0-openai"})),
                }
            }
            ("GET", "/api/ps") => json_answer(200, json!({"models": []})),
            ("GET", "/api/tags") => match fetched(models()) {
                Ok(m) => json_answer(200, tags(&m)),
                Err(e) => e,
            },
            ("POST", "/api/show") => {
                let req = serde_json::from_slice::<Value>(body).unwrap_or(Value::Null);
                let name = req["model"].as_str().or(req["name"].as_str()).unwrap_or("");
                match fetched(models()) {
                    Ok(m) => match show(&m, name, self.num_ctx) {
                        Some(s) => json_answer(200, s),
                        None => {
                            json_answer(404, json!({"error": format!("model '{name}' not found")}))
                        }
                    },
                    Err(e) => e,
                }
            }
            ("POST", "/api/generate") => {
                let req = serde_json::from_slice::<Value>(body).unwrap_or(Value::Null);
                if req["keep_alive"] == json!(0) {
                    // nothing to unload on a server the runner cannot manage
                    json_answer(
                        200,
                        json!({"model": req["model"], "done": true, "done_reason": "unload"}),
                    )
                } else {
                    json_answer(
                        404,
                        json!({"error": "/api/generate is not available on an OpenAI-compatible backend"}),
                    )
                }
            }
            ("POST", "/api/chat") => return None,
            (_, p) if p.starts_with("/api/") => json_answer(
                404,
                json!({"error": format!("{p} is not available on an OpenAI-compatible backend")}),
            ),
            _ => return None,
        })
    }
}

/// The text of a message's content: a string, or the text parts of an array (the proxy's
/// translation and its trajectory read it).
pub(super) fn text_of(content: &Value) -> String {
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

/// The id of the call a tool result (message `i`) answers: the open call it names, else the
/// first open call of its tool, else the oldest open call (taken off `open`); with none open,
/// the id it gives or `call_{i}`. Shared by the tree and the tree-free translations.
pub(super) fn answered_call_id(
    open: &mut Vec<(String, String)>,
    given: Option<&str>,
    name: &str,
    i: usize,
) -> String {
    let at = given
        .and_then(|g| open.iter().position(|(id, _)| id == g))
        .or_else(|| open.iter().position(|(_, n)| n == name))
        .or((!open.is_empty()).then_some(0));
    match at {
        Some(k) => open.remove(k).0,
        None => given
            .map(str::to_string)
            .unwrap_or_else(|| format!("call_{i}")),
    }
}

/// Native messages as OpenAI ones. Tool calls keep their ids (made up, `call_<message>_<n>`,
/// when the arm sent none); a tool result is tied to its call by `tool_call_id` when the arm
/// gave a known one, else to the first unanswered call of that name, else the first unanswered.
fn messages(native: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    let mut open: Vec<(String, String)> = Vec::new();
    for (i, m) in native["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let role = m["role"].as_str().unwrap_or("user");
        let content = text_of(&m["content"]);
        let mut msg = json!({"role": role, "content": content});
        if let Some(calls) = m["tool_calls"].as_array().filter(|c| !c.is_empty()) {
            open.clear();
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let id = c["id"]
                        .as_str()
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("call_{i}_{k}"));
                    let name = c["function"]["name"].as_str().unwrap_or("").to_string();
                    open.push((id.clone(), name.clone()));
                    let args = match &c["function"]["arguments"] {
                        Value::String(s) => s.clone(),
                        Value::Null => "{}".into(),
                        v => v.to_string(),
                    };
                    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
                })
                .collect();
            msg["tool_calls"] = Value::Array(calls);
        }
        if role == "tool" {
            let name = m["tool_name"].as_str().or(m["name"].as_str()).unwrap_or("");
            let id = answered_call_id(&mut open, m["tool_call_id"].as_str(), name, i);
            msg["tool_call_id"] = json!(id);
        }
        out.push(msg);
    }
    out
}

/// Ollama's done reasons: `length` stays, a tool-call or any other stop is `stop`.
fn done_reason(finish: Option<&str>) -> &str {
    match finish {
        Some("length") => "length",
        _ => "stop",
    }
}

/// One OpenAI answer turned into native lines as it arrives.
pub struct ToNative {
    model: String,
    created_at: String,
    t0: Instant,
    /// Streamed calls by index: id, name, argument text.
    calls: Vec<(String, String, String)>,
    finish: Option<String>,
    usage: ServerUsage,
    timings: Option<Timings>,
    ended: bool,
    /// Scrubbed from error events.
    key: Option<Secret>,
    /// The start of a native text line, up to the content's JSON string.
    text_prefix: String,
}

impl ToNative {
    pub fn new(model: &str, t0: Instant) -> ToNative {
        ToNative {
            model: model.to_string(),
            created_at: format!("{}Z", lrab_util::iso_utc(super::now() as i64)),
            t0,
            calls: Vec::new(),
            finish: None,
            usage: ServerUsage::default(),
            timings: None,
            ended: false,
            key: None,
            text_prefix: String::new(),
        }
    }

    /// Error events of the answer will not carry `key`.
    pub fn without(mut self, key: Option<Secret>) -> ToNative {
        self.key = key;
        self
    }

    /// The native line (with its newline) for an event that carried only `text`
    /// ([`super::fast::openai_text_event`]), as [`ToNative::event`] writes it; `None` once
    /// the answer ended.
    #[cfg(test)]
    pub fn text_line(&mut self, text: &str) -> Option<String> {
        let mut out = Vec::new();
        self.text_line_into(text, &mut out)
            .then(|| String::from_utf8(out).ok())
            .flatten()
    }

    /// [`ToNative::text_line`] appended to `out` (no string of its own per line); false, and
    /// nothing appended, once the answer ended.
    pub fn text_line_into(&mut self, text: &str, out: &mut Vec<u8>) -> bool {
        use super::fast::json_str;
        if self.ended {
            return false;
        }
        if self.text_prefix.is_empty() {
            self.text_prefix = format!(
                "{{\"model\":{},\"created_at\":{},\"message\":{{\"role\":\"assistant\",\"content\":",
                json_str(&self.model),
                json_str(&self.created_at)
            );
        }
        out.extend_from_slice(self.text_prefix.as_bytes());
        // the same bytes as `json_str(text)`; writing into a Vec cannot fail
        let _ = serde_json::to_writer(&mut *out, text);
        out.extend_from_slice(b"},\"done\":false}\n");
        true
    }

    fn line(&self, message: Value) -> Value {
        json!({"model": self.model, "created_at": self.created_at, "message": message, "done": false})
    }

    /// Reads the usage and timings an event reports (read in place, not from a copy).
    fn note_usage(&mut self, v: &Value) {
        if let Ok(u) = ServerUsage::deserialize(&v["usage"]) {
            if u.prompt_tokens.is_some() {
                self.usage = u;
            }
        }
        if let Ok(t) = Timings::deserialize(&v["timings"]) {
            self.timings = Some(t);
        }
    }

    /// The native lines for one line of an SSE body (blank lines, `event:` names and
    /// comments carry nothing).
    pub fn event_line(&mut self, line: &[u8]) -> Vec<Value> {
        // the blank line after each event, without a copy
        if line.trim_ascii().is_empty() {
            return Vec::new();
        }
        let text = String::from_utf8_lossy(line);
        match text.trim().strip_prefix("data:") {
            Some(data) => self.event(data.trim_start()),
            None => Vec::new(),
        }
    }

    /// The native lines for one SSE event's data (`[DONE]` ends the answer).
    pub fn event(&mut self, data: &str) -> Vec<Value> {
        if self.ended {
            return Vec::new();
        }
        if data.trim() == "[DONE]" {
            return vec![self.end()];
        }
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            self.ended = true;
            return vec![json!({"error": "the backend sent an event that is not JSON"})];
        };
        if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
            self.ended = true;
            let msg = e["message"]
                .as_str()
                .or(e.as_str())
                .unwrap_or("backend error");
            let msg = match &self.key {
                Some(k) => k.scrub(msg),
                None => msg.to_string(),
            };
            return vec![json!({ "error": msg })];
        }
        self.note_usage(&v);
        let mut out = Vec::new();
        let Some(choice) = v["choices"].get(0) else {
            return out;
        };
        let d = &choice["delta"];
        if let Some(t) = d["reasoning_content"].as_str().or(d["reasoning"].as_str()) {
            if !t.is_empty() {
                out.push(self.line(json!({"role": "assistant", "content": "", "thinking": t})));
            }
        }
        if let Some(t) = d["content"].as_str().filter(|t| !t.is_empty()) {
            out.push(self.line(json!({"role": "assistant", "content": t})));
        }
        for c in d["tool_calls"].as_array().into_iter().flatten() {
            let i = c["index"].as_u64().unwrap_or(self.calls.len() as u64) as usize;
            while self.calls.len() <= i {
                self.calls.push(Default::default());
            }
            let p = &mut self.calls[i];
            if let Some(id) = c["id"].as_str() {
                p.0 = id.to_string();
            }
            p.1.push_str(c["function"]["name"].as_str().unwrap_or(""));
            p.2.push_str(c["function"]["arguments"].as_str().unwrap_or(""));
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            self.finish = Some(f.to_string());
            if let Some(l) = self.take_calls() {
                out.push(l);
            }
        }
        out
    }

    /// The calls gathered so far as one native line (Ollama sends each call whole).
    fn take_calls(&mut self) -> Option<Value> {
        if self.calls.is_empty() {
            return None;
        }
        let calls: Vec<Value> = std::mem::take(&mut self.calls)
            .into_iter()
            .enumerate()
            .map(|(i, (id, name, args))| native_call(i, &id, &name, &Value::String(args)))
            .collect();
        Some(self.line(json!({"role": "assistant", "content": "", "tool_calls": calls})))
    }

    /// The body ended: the final native line, or an error when the stream was cut before the
    /// server said the reply was complete.
    pub fn eof(&mut self) -> Option<Value> {
        if self.ended {
            return None;
        }
        if self.finish.is_none() {
            self.ended = true;
            return Some(
                json!({"error": "the backend's stream ended before the reply was complete"}),
            );
        }
        Some(self.end())
    }

    fn end(&mut self) -> Value {
        self.ended = true;
        let mut v = json!({
            "model": self.model, "created_at": self.created_at,
            "message": {"role": "assistant", "content": ""},
            "done": true, "done_reason": done_reason(self.finish.as_deref()),
            "total_duration": self.t0.elapsed().as_nanos() as u64,
        });
        self.counts(&mut v);
        v
    }

    fn counts(&self, v: &mut Value) {
        let u = &self.usage;
        let t = self.timings.clone().unwrap_or_default();
        if let Some(p) = u.prompt_tokens {
            v["prompt_eval_count"] = json!(p);
        }
        if let Some(c) = u.completion_tokens.or(t.predicted_n) {
            v["eval_count"] = json!(c);
        }
        let cached = u
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .or(t.cache_n);
        if let Some(c) = cached {
            v["prompt_eval_cached_count"] = json!(c);
        }
        if let Some(ms) = t.prompt_ms {
            v["prompt_eval_duration"] = json!((ms * 1e6) as u64);
        }
        if let Some(ms) = t.predicted_ms {
            v["eval_duration"] = json!((ms * 1e6) as u64);
        }
    }

    /// A whole (non-streamed) completion as one native object.
    pub fn whole(&mut self, body: &[u8]) -> Value {
        let Ok(v) = serde_json::from_slice::<Value>(body) else {
            self.ended = true;
            return json!({"error": "the backend's answer is not JSON"});
        };
        self.note_usage(&v);
        let Some(choice) = v["choices"].get(0) else {
            self.ended = true;
            return json!({"error": "the backend's answer has no choices"});
        };
        let m = &choice["message"];
        let mut message =
            json!({"role": "assistant", "content": m["content"].as_str().unwrap_or("")});
        if let Some(t) = m["reasoning_content"].as_str().or(m["reasoning"].as_str()) {
            message["thinking"] = json!(t);
        }
        let calls: Vec<Value> = m["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| {
                let id = c["id"].as_str().unwrap_or("");
                let name = c["function"]["name"].as_str().unwrap_or("");
                native_call(i, id, name, &c["function"]["arguments"])
            })
            .collect();
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        self.finish = Some(
            choice["finish_reason"]
                .as_str()
                .unwrap_or("stop")
                .to_string(),
        );
        let mut out = self.end();
        out["message"] = message;
        out
    }
}

/// A native tool call: arguments as an object (a text that is not JSON stays a string).
fn native_call(i: usize, id: &str, name: &str, args: &Value) -> Value {
    let arguments = lrab_ollama::normalize_arguments(args.clone());
    let mut c = json!({"function": {"index": i, "name": name, "arguments": arguments}});
    if !id.is_empty() {
        c["id"] = json!(id);
    }
    c
}

/// `/api/tags` from a `/v1/models` body.
pub fn tags(models: &Value) -> Value {
    let list: Vec<Value> = model_ids(models)
        .into_iter()
        .map(|id| {
            json!({"name": id, "model": id, "modified_at": "1970-01-01T00:00:00Z", "size": 0,
                "details": {"format": "", "family": "", "parameter_size": "", "quantization_level": ""}})
        })
        .collect();
    json!({ "models": list })
}

/// The ids a `/v1/models` body lists.
pub fn model_ids(models: &Value) -> Vec<String> {
    models["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["id"].as_str().map(str::to_string))
        .collect()
}

/// Whether `want` names `id` (`m` and `m:latest` are one model, as on Ollama).
pub fn same_model(id: &str, want: &str) -> bool {
    let bare = |s: &str| s.strip_suffix(":latest").unwrap_or(s).to_string();
    bare(id) == bare(want)
}

/// `/api/show` for `model` from a `/v1/models` body; `None` when it is not listed. The context
/// length is the server's own (`max_model_len`, vLLM) or else `num_ctx`.
pub fn show(models: &Value, model: &str, num_ctx: u64) -> Option<Value> {
    let m = models["data"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["id"].as_str().is_some_and(|id| same_model(id, model)))?;
    let ctx = m["max_model_len"].as_u64().unwrap_or(num_ctx);
    Some(json!({
        "modelfile": "", "parameters": "", "template": "",
        "details": {"format": "", "family": "", "parameter_size": "", "quantization_level": ""},
        "model_info": {"general.architecture": "openai", "openai.context_length": ctx},
        "capabilities": ["completion", "tools"],
    }))
}

#[cfg(test)]
#[path = "openai_upstream_tests.rs"]
mod tests;

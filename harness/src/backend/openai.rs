//! OpenAI-compatible `/v1/chat/completions` backend (llama.cpp server, vLLM, LM Studio, Ollama's
//! `/v1`): SSE streaming with tool-call deltas assembled by index, and a probe of the context
//! window (the API has no field for it): llama.cpp's `/props`, vLLM's `max_model_len`,
//! Ollama's `/api/ps` and `/api/show`.

use super::ollama::{make_agent, wire_tools};
use super::{classify_http_error, from_ureq, normalize_base_url, BackendError, ChatRequest, Model};
use crate::messages::{Message, Reply, Role, ToolCall};
use lrab_ollama::openai as oa;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    pub base_url: String,
    pub model: String,
    pub temperature: Option<f64>,
    pub api_key: Option<String>,
    pub stream: bool,
    pub seed: Option<i64>,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
}

impl OpenAiConfig {
    pub fn new(base_url: &str, model: &str) -> Self {
        OpenAiConfig {
            base_url: normalize_base_url(base_url),
            model: model.to_string(),
            temperature: Some(0.0),
            api_key: None,
            stream: true,
            seed: None,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(600),
        }
    }
}

pub struct OpenAiBackend {
    pub cfg: OpenAiConfig,
    /// What the server told about its context window.
    pub context: ContextProbe,
    agent: ureq::Agent,
}

/// The context window as an OpenAI-compatible server reports it: the window it runs with
/// (llama.cpp `/props` `n_ctx`, vLLM `max_model_len`, Ollama `/api/ps` for a loaded model), and
/// an upper bound when only the model's trained length is known (`n_ctx_train`, Ollama
/// `/api/show`). Each with the name of its source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextProbe {
    pub runtime: Option<(u64, &'static str)>,
    pub bound: Option<(u64, &'static str)>,
}

/// The `/v1/models` entry of `model`, or the only entry.
fn model_entry<'a>(list: &'a serde_json::Value, model: &str) -> Option<&'a serde_json::Value> {
    let data = list["data"].as_array()?;
    data.iter()
        .find(|m| {
            m["id"]
                .as_str()
                .is_some_and(|id| id == model || id.trim_end_matches(":latest") == model)
        })
        .or(if data.len() == 1 { data.first() } else { None })
}

fn positive(v: &serde_json::Value) -> Option<u64> {
    v.as_u64().filter(|n| *n > 0)
}

/// From `/v1/models`: vLLM's `max_model_len` (the window it serves), llama.cpp's
/// `meta.n_ctx_train` or a `context_length` (bounds).
pub fn models_context(list: &serde_json::Value, model: &str) -> ContextProbe {
    let Some(e) = model_entry(list, model) else {
        return ContextProbe::default();
    };
    ContextProbe {
        runtime: positive(&e["max_model_len"]).map(|n| (n, "max_model_len")),
        bound: positive(&e["meta"]["n_ctx_train"])
            .map(|n| (n, "n_ctx_train"))
            .or_else(|| positive(&e["context_length"]).map(|n| (n, "context_length"))),
    }
}

/// From llama.cpp's `/props`: the context of a slot.
pub fn props_context(props: &serde_json::Value) -> Option<u64> {
    positive(&props["default_generation_settings"]["n_ctx"]).or_else(|| positive(&props["n_ctx"]))
}

/// From Ollama's `/api/ps`: the context allocated for the loaded model.
pub fn ps_context(ps: &serde_json::Value, model: &str) -> Option<u64> {
    ps["models"].as_array()?.iter().find_map(|m| {
        let name = m["name"].as_str().or(m["model"].as_str())?;
        (name == model || name.trim_end_matches(":latest") == model)
            .then(|| positive(&m["context_length"]))
            .flatten()
    })
}

impl OpenAiBackend {
    /// Checks that the server answers (`GET /v1/models`); a listed model set without ours is a
    /// clear "model not found".
    pub fn connect(cfg: OpenAiConfig) -> Result<Self, BackendError> {
        let agent = make_agent(cfg.connect_timeout, cfg.read_timeout);
        let url = format!("{}/v1/models", cfg.base_url);
        let mut rq = agent.get(&url);
        if let Some(k) = &cfg.api_key {
            rq = rq.set("Authorization", &format!("Bearer {k}"));
        }
        let mut models: Option<serde_json::Value> = None;
        match rq.call() {
            Ok(resp) => {
                models = resp.into_json::<serde_json::Value>().ok();
                if let Some(list) = models
                    .as_ref()
                    .and_then(|v| serde_json::from_value::<oa::ModelList>(v.clone()).ok())
                {
                    let known = list.data.iter().any(|m| {
                        m.id == cfg.model || m.id.trim_end_matches(":latest") == cfg.model
                    });
                    // a llama-server started with one model answers every model name with it
                    // (clients pass an alias); only its router mode lists several
                    let single_llama_server =
                        list.data.len() == 1 && list.data[0].owned_by == "llamacpp";
                    if !list.data.is_empty() && !known && !single_llama_server {
                        return Err(BackendError::ModelNotFound(format!(
                            "{} (server lists: {})",
                            cfg.model,
                            list.data
                                .iter()
                                .map(|m| m.id.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )));
                    }
                }
            }
            Err(ureq::Error::Transport(t)) => return Err(BackendError::Unreachable(t.to_string())),
            // Some servers do not implement /v1/models; the chat call will tell.
            Err(ureq::Error::Status(..)) => {}
        }
        let context = probe_context(&agent, &cfg, models.as_ref());
        Ok(OpenAiBackend {
            cfg,
            context,
            agent,
        })
    }

    pub fn wire_request(&self, req: &ChatRequest<'_>) -> oa::ChatCompletionRequest {
        build_request(&self.cfg, req)
    }
}

/// Ask the server for its window: `/v1/models` first, then llama.cpp's `/props`, then Ollama's
/// `/api/ps` and `/api/show` (an endpoint a server does not have just answers 404).
fn probe_context(
    agent: &ureq::Agent,
    cfg: &OpenAiConfig,
    models: Option<&serde_json::Value>,
) -> ContextProbe {
    let get = |path: &str| -> Option<serde_json::Value> {
        let mut rq = agent.get(&format!("{}{path}", cfg.base_url));
        if let Some(k) = &cfg.api_key {
            rq = rq.set("Authorization", &format!("Bearer {k}"));
        }
        rq.call().ok()?.into_json().ok()
    };
    let mut p = models
        .map(|m| models_context(m, &cfg.model))
        .unwrap_or_default();
    if p.runtime.is_none() {
        p.runtime = get("/props")
            .as_ref()
            .and_then(props_context)
            .map(|n| (n, "props"));
    }
    if p.runtime.is_none() {
        p.runtime = get("/api/ps")
            .as_ref()
            .and_then(|v| ps_context(v, &cfg.model))
            .map(|n| (n, "api_ps"));
    }
    if p.runtime.is_none() && p.bound.is_none() {
        p.bound = agent
            .post(&format!("{}/api/show", cfg.base_url))
            .send_json(serde_json::json!({ "model": cfg.model }))
            .ok()
            .and_then(|r| r.into_json::<lrab_ollama::ShowResponse>().ok())
            .and_then(|s| s.context_length())
            .map(|n| (n, "api_show"));
    }
    p
}

/// The messages in the Chat Completions form. A tool result without a call id (the answer to
/// a call the model wrote as text, which is sent as that text) becomes a user message naming
/// its tool, as the text protocol sends results: this API accepts a `tool` message only as the
/// answer to a structured call of the previous assistant message.
pub fn wire_messages(messages: &[Message]) -> Vec<oa::Message> {
    messages
        .iter()
        .map(|m| {
            if m.role == Role::Tool && m.tool_call_id.is_none() {
                return oa::Message {
                    role: "user".to_string(),
                    content: Some(serde_json::Value::String(format!(
                        "Result of {}:\n{}",
                        m.tool_name.as_deref().unwrap_or("the tool"),
                        m.content
                    ))),
                    ..Default::default()
                };
            }
            let mut w = oa::Message {
                role: m.role.as_str().to_string(),
                content: Some(serde_json::Value::String(m.content.clone())),
                ..Default::default()
            };
            if !m.tool_calls.is_empty() {
                w.tool_calls = Some(
                    m.tool_calls
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            let id = if c.id.is_empty() {
                                format!("call_{i}")
                            } else {
                                c.id.clone()
                            };
                            oa::ToolCall::new(&id, i as u32, &c.name, c.arguments.to_string())
                        })
                        .collect(),
                );
            }
            if m.role == Role::Tool {
                w.name = m.tool_name.clone();
                w.tool_call_id = m.tool_call_id.clone();
            }
            w
        })
        .collect()
}

pub(crate) fn build_request(
    cfg: &OpenAiConfig,
    req: &ChatRequest<'_>,
) -> oa::ChatCompletionRequest {
    oa::ChatCompletionRequest {
        model: cfg.model.clone(),
        messages: wire_messages(req.messages),
        tools: if req.tools.is_empty() {
            None
        } else {
            Some(wire_tools(req.tools))
        },
        stream: Some(cfg.stream),
        stream_options: if cfg.stream {
            Some(oa::StreamOptions {
                include_usage: true,
            })
        } else {
            None
        },
        max_tokens: Some(req.num_predict as i64),
        temperature: cfg.temperature,
        seed: cfg.seed,
        ..Default::default()
    }
}

fn done_reason(finish: Option<&str>) -> Option<String> {
    finish.map(|f| match f {
        "length" => "length".to_string(),
        _ => "stop".to_string(),
    })
}

fn parse_args(s: &str) -> serde_json::Value {
    lrab_ollama::normalize_arguments(serde_json::Value::String(s.to_string()))
}

/// Assemble an SSE `chat.completion.chunk` stream. Tool-call fragments are joined by `index`.
pub fn parse_sse<R: BufRead>(mut r: R) -> Result<Reply, BackendError> {
    let mut reply = Reply::default();
    let mut calls: BTreeMap<u32, (String, String, String)> = BTreeMap::new();
    let mut buf = Vec::new();
    let mut saw_any = false;
    loop {
        buf.clear();
        let n = r
            .read_until(b'\n', &mut buf)
            .map_err(|e| BackendError::Unreachable(format!("stream read: {e}")))?;
        if n == 0 {
            break;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            saw_any = true;
            break;
        }
        let v: serde_json::Value = serde_json::from_str(data)
            .map_err(|e| BackendError::Protocol(format!("bad SSE data: {e}")))?;
        if let Some(e) = v.get("error") {
            let msg = e
                .get("message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| e.to_string());
            return Err(classify_http_error(500, &msg));
        }
        let chunk: oa::ChatCompletionChunk = serde_json::from_value(v)
            .map_err(|e| BackendError::Protocol(format!("bad chunk: {e}")))?;
        saw_any = true;
        if let Some(u) = &chunk.usage {
            reply.prompt_eval_count = Some(u.prompt_tokens);
            reply.eval_count = Some(u.completion_tokens);
        }
        for ch in &chunk.choices {
            if let Some(c) = &ch.delta.content {
                reply.content.push_str(c);
            }
            if let Some(t) = &ch.delta.reasoning {
                reply.thinking.push_str(t);
            }
            for tc in ch.delta.tool_calls.as_deref().unwrap_or(&[]) {
                let idx = tc.index.unwrap_or(calls.len() as u32);
                let e = calls.entry(idx).or_default();
                if let Some(id) = &tc.id {
                    e.0 = id.clone();
                }
                if let Some(n) = &tc.function.name {
                    e.1.push_str(n);
                }
                if let Some(a) = &tc.function.arguments {
                    e.2.push_str(a);
                }
            }
            if ch.finish_reason.is_some() {
                reply.done_reason = done_reason(ch.finish_reason.as_deref());
            }
        }
    }
    if !saw_any {
        return Err(BackendError::Protocol("empty SSE stream".into()));
    }
    for (_, (id, name, args)) in calls {
        reply.tool_calls.push(ToolCall {
            id,
            name,
            arguments: parse_args(&args),
        });
    }
    Ok(reply)
}

pub fn parse_completion(body: &str) -> Result<Reply, BackendError> {
    let c: oa::ChatCompletion = serde_json::from_str(body)
        .map_err(|e| BackendError::Protocol(format!("bad completion: {e}")))?;
    let mut reply = Reply::default();
    if let Some(u) = &c.usage {
        reply.prompt_eval_count = Some(u.prompt_tokens);
        reply.eval_count = Some(u.completion_tokens);
    }
    if let Some(ch) = c.choices.first() {
        reply.content = ch.message.content.clone().unwrap_or_default();
        reply.thinking = ch.message.reasoning.clone().unwrap_or_default();
        reply.done_reason = done_reason(ch.finish_reason.as_deref());
        for tc in ch.message.tool_calls.as_deref().unwrap_or(&[]) {
            reply.tool_calls.push(ToolCall {
                id: tc.id.clone().unwrap_or_default(),
                name: tc.function.name.clone().unwrap_or_default(),
                arguments: parse_args(tc.function.arguments.as_deref().unwrap_or("")),
            });
        }
    }
    Ok(reply)
}

impl Model for OpenAiBackend {
    fn chat(&mut self, req: &ChatRequest<'_>) -> Result<Reply, BackendError> {
        let url = format!("{}/v1/chat/completions", self.cfg.base_url);
        let body = self.wire_request(req);
        let mut rq = self.agent.post(&url);
        if let Some(k) = &self.cfg.api_key {
            rq = rq.set("Authorization", &format!("Bearer {k}"));
        }
        let resp = rq.send_json(&body).map_err(from_ureq)?;
        if self.cfg.stream {
            parse_sse(std::io::BufReader::new(resp.into_reader()))
        } else {
            let text = resp
                .into_string()
                .map_err(|e| BackendError::Unreachable(e.to_string()))?;
            parse_completion(&text)
        }
    }
    fn context_length(&self) -> Option<u64> {
        self.context.runtime.or(self.context.bound).map(|(n, _)| n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sse_assembles_tool_call_fragments_and_usage() {
        let s = concat!(
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"system_fingerprint\":\"fp\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"ok \"},\"finish_reason\":null}]}\n\n",
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"system_fingerprint\":\"fp\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"pa\"}}]},\"finish_reason\":null}]}\n\n",
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"system_fingerprint\":\"fp\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\": \\\"a.md\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"system_fingerprint\":\"fp\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"system_fingerprint\":\"fp\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":3,\"total_tokens\":13}}\n\n",
            "data: [DONE]\n\n"
        );
        let r = parse_sse(s.as_bytes()).unwrap();
        assert_eq!(r.content, "ok ");
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.tool_calls[0].id, "call_a");
        assert_eq!(r.tool_calls[0].arguments, json!({"path": "a.md"}));
        assert_eq!(r.prompt_eval_count, Some(10));
        assert_eq!(r.done_reason.as_deref(), Some("stop"));
    }

    #[test]
    fn context_is_read_from_each_servers_metadata() {
        let vllm = json!({"object": "list", "data": [{"id": "Qwen/Qwen3-8B", "object": "model", "max_model_len": 40960}]});
        assert_eq!(
            models_context(&vllm, "Qwen/Qwen3-8B").runtime,
            Some((40960, "max_model_len"))
        );
        let llamacpp = json!({"object": "list", "data": [{"id": "model.gguf", "meta": {"n_ctx_train": 131072, "n_vocab": 151936}}]});
        let p = models_context(&llamacpp, "anything");
        assert_eq!((p.runtime, p.bound), (None, Some((131072, "n_ctx_train"))));
        assert_eq!(
            props_context(
                &json!({"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1})
            ),
            Some(8192)
        );
        assert_eq!(props_context(&json!({"n_ctx": 4096})), Some(4096));
        let ps =
            json!({"models": [{"name": "qwen3:4b", "model": "qwen3:4b", "context_length": 4096}]});
        assert_eq!(ps_context(&ps, "qwen3:4b"), Some(4096));
        assert_eq!(ps_context(&ps, "other"), None);
        let two = json!({"data": [{"id": "a"}, {"id": "b"}]});
        assert_eq!(models_context(&two, "c"), ContextProbe::default());
    }

    #[test]
    fn request_carries_max_tokens_and_string_arguments() {
        let cfg = OpenAiConfig::new("http://x/v1", "m");
        let msgs = vec![
            Message::user("t"),
            Message::assistant("", vec![ToolCall::new("list_dir", json!({"path": "."}))]),
        ];
        let req = ChatRequest {
            messages: &msgs,
            tools: &[],
            num_predict: 100,
        };
        let w = serde_json::to_value(build_request(&cfg, &req)).unwrap();
        assert_eq!(w["max_tokens"], 100);
        assert_eq!(w["temperature"], 0.0);
        assert_eq!(
            w["messages"][1]["tool_calls"][0]["function"]["arguments"],
            "{\"path\":\".\"}"
        );
    }

    #[test]
    fn a_result_of_a_call_written_as_text_is_a_user_message() {
        use crate::mechanisms::text_protocol::render_text_calls;
        let c = ToolCall {
            id: "call_0_0".into(),
            ..ToolCall::new("list_dir", json!({}))
        };
        let text = "<tool_call>{\"name\": \"list_dir\", \"arguments\": {}}</tool_call>";
        let msgs = vec![
            Message::user("t"),
            Message::text_calls(text, vec![c.clone()]),
            Message::tool_result(&c, "a.md"),
        ];
        let w = serde_json::to_value(wire_messages(&render_text_calls(&msgs).unwrap())).unwrap();
        assert_eq!(w[1]["content"], text);
        assert!(w[1].get("tool_calls").is_none(), "{}", w[1]);
        assert_eq!(w[2]["role"], "user");
        assert_eq!(w[2]["content"], "Result of list_dir:\na.md");
        // a structured call's result stays a tool message answering its id
        let w = serde_json::to_value(wire_messages(&msgs)).unwrap();
        assert_eq!(w[2]["role"], "tool");
        assert_eq!(w[2]["tool_call_id"], "call_0_0");
    }
}

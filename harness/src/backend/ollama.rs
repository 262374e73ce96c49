//! Ollama native `/api/chat` backend: streaming NDJSON, `options.temperature/num_ctx/num_predict`,
//! top-level `think` only for models whose `/api/show` capabilities list `thinking`, context
//! length from `/api/show`.

use super::{classify_http_error, from_ureq, normalize_base_url, BackendError, ChatRequest, Model};
use crate::messages::{Message, Reply, Role, ToolCall, ToolSpec};
use lrab_ollama as wire;
use std::io::BufRead;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct OllamaConfig {
    pub base_url: String,
    pub model: String,
    pub temperature: Option<f64>,
    pub num_ctx: Option<u64>,
    /// Requested thinking; only sent to models that advertise the capability.
    pub think: bool,
    /// Sent as `truncate`: `Some(false)` makes the server refuse a prompt longer than the
    /// window (HTTP 400) instead of silently dropping old messages or cutting the prompt.
    pub truncate: Option<bool>,
    /// Refuse a model whose `/api/show` capabilities lack `tools` (off: the caller uses the
    /// text protocol for it).
    pub require_tools: bool,
    pub stream: bool,
    pub seed: Option<i64>,
    pub connect_timeout: Duration,
    /// Read timeout per chunk (a slow model streams; a dead one stops).
    pub read_timeout: Duration,
}

impl OllamaConfig {
    pub fn new(base_url: &str, model: &str) -> Self {
        OllamaConfig {
            base_url: normalize_base_url(base_url),
            model: model.to_string(),
            temperature: Some(0.0),
            num_ctx: None,
            think: false,
            truncate: None,
            require_tools: true,
            stream: true,
            seed: None,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(600),
        }
    }
}

/// What `/api/show` told us.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelInfo {
    pub capabilities: Vec<String>,
    pub context_length: Option<u64>,
}

impl ModelInfo {
    pub fn has(&self, cap: &str) -> bool {
        self.capabilities.iter().any(|c| c == cap)
    }
}

pub struct OllamaBackend {
    pub cfg: OllamaConfig,
    pub info: ModelInfo,
    agent: ureq::Agent,
    send_think: bool,
}

/// A client with the TLS settings every backend client shares (`lrab_util::tls`: bundled roots
/// plus `$LRAB_CA_FILE`), so an `https://` backend is trusted the same way as by the runner.
pub(crate) fn make_agent(connect: Duration, read: Duration) -> ureq::Agent {
    let b = ureq::AgentBuilder::new()
        .timeout_connect(connect)
        .timeout_read(read);
    match lrab_util::tls::client_config() {
        Ok(tls) => b.tls_config(tls),
        Err(_) => b,
    }
    .build()
}

impl OllamaBackend {
    /// Probe `/api/show` for the model: fails clearly when the server is unreachable, the model
    /// is unknown, cannot chat, or lacks the `tools` capability (when `require_tools`).
    pub fn connect(cfg: OllamaConfig) -> Result<Self, BackendError> {
        let agent = make_agent(cfg.connect_timeout, cfg.read_timeout);
        let url = format!("{}/api/show", cfg.base_url);
        let body = serde_json::json!({ "model": cfg.model });
        let resp = agent.post(&url).send_json(body).map_err(from_ureq)?;
        let text = resp
            .into_string()
            .map_err(|e| BackendError::Protocol(format!("/api/show: {e}")))?;
        let show: wire::ShowResponse = serde_json::from_str(&text)
            .map_err(|e| BackendError::Protocol(format!("/api/show: {e}")))?;
        let info = ModelInfo {
            capabilities: show.capabilities.clone(),
            context_length: show.context_length(),
        };
        // An empty capability list means an older server that does not report them: let the
        // chat call decide.
        if !info.capabilities.is_empty() && !info.has("completion") && !info.has("tools") {
            return Err(BackendError::NoToolSupport(format!(
                "{} cannot chat (capabilities: {})",
                cfg.model,
                info.capabilities.join(", ")
            )));
        }
        if cfg.require_tools && !info.capabilities.is_empty() && !info.has("tools") {
            return Err(BackendError::NoToolSupport(format!(
                "{} (capabilities: {})",
                cfg.model,
                info.capabilities.join(", ")
            )));
        }
        let send_think = info.has("thinking");
        Ok(OllamaBackend {
            cfg,
            info,
            agent,
            send_think,
        })
    }

    /// The wire request for one call (pure; tested directly).
    pub fn wire_request(&self, req: &ChatRequest<'_>) -> wire::ChatRequest {
        build_request(&self.cfg, self.send_think, req)
    }
}

pub(crate) fn wire_tools(tools: &[ToolSpec]) -> Vec<wire::Tool> {
    tools
        .iter()
        .map(|t| wire::Tool::function(&t.name, &t.description, t.parameters.clone()))
        .collect()
}

/// Our messages in Ollama's shape (thinking is not sent back: it only costs context).
pub fn wire_messages(messages: &[Message]) -> Vec<wire::Message> {
    messages
        .iter()
        .map(|m| {
            let mut w = wire::Message::new(m.role.as_str(), m.content.clone());
            if !m.tool_calls.is_empty() {
                w.tool_calls = Some(
                    m.tool_calls
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            wire::ToolCall::new(
                                if c.id.is_empty() {
                                    None
                                } else {
                                    Some(c.id.clone())
                                },
                                i as u32,
                                &c.name,
                                c.arguments.clone(),
                            )
                        })
                        .collect(),
                );
            }
            if m.role == Role::Tool {
                w.tool_name = m.tool_name.clone();
                w.tool_call_id = m.tool_call_id.clone();
            }
            w
        })
        .collect()
}

pub(crate) fn build_request(
    cfg: &OllamaConfig,
    send_think: bool,
    req: &ChatRequest<'_>,
) -> wire::ChatRequest {
    let options = wire::Options {
        temperature: cfg.temperature,
        num_ctx: cfg.num_ctx,
        num_predict: Some(req.num_predict as i64),
        seed: cfg.seed,
        ..Default::default()
    };
    wire::ChatRequest {
        model: cfg.model.clone(),
        messages: wire_messages(req.messages),
        tools: if req.tools.is_empty() {
            None
        } else {
            Some(wire_tools(req.tools))
        },
        stream: Some(cfg.stream),
        options: Some(options),
        think: if send_think {
            Some(wire::Think::Bool(cfg.think))
        } else {
            None
        },
        truncate: cfg.truncate,
        ..Default::default()
    }
}

fn convert_calls(calls: &[wire::ToolCall], out: &mut Vec<ToolCall>) {
    for c in calls {
        out.push(ToolCall {
            id: c.id.clone().unwrap_or_default(),
            name: c.function.name.clone(),
            arguments: c.function.arguments.clone(),
        });
    }
}

/// A line the reader could not decode. JSON nested deeper than the decoder's limit can only be
/// a model's tool call (nothing else in a chat chunk nests): the reply is lost like a call the
/// server could not parse — the loop tells the model, instead of retrying the same request,
/// which returns the same reply at temperature 0. Anything else is a broken stream (retried).
fn unreadable(what: &str, e: &serde_json::Error) -> BackendError {
    if e.to_string().contains("recursion limit") {
        BackendError::ToolCallParse(format!(
            "the tool call's arguments are nested too deeply to read ({e})"
        ))
    } else {
        BackendError::Protocol(format!("bad {what}: {e}"))
    }
}

/// Accumulate an NDJSON `/api/chat` stream into one reply. An `{"error":…}` line mid-stream is
/// a transient server error; a stream that ends without `done:true` is a protocol error. Lines
/// are decoded lossily so one bad byte never kills the reader.
pub fn parse_ndjson<R: BufRead>(mut r: R) -> Result<Reply, BackendError> {
    let mut reply = Reply::default();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = r
            .read_until(b'\n', &mut buf)
            .map_err(|e| BackendError::Unreachable(format!("stream read: {e}")))?;
        if n == 0 {
            return Err(BackendError::Protocol(
                "stream ended before done:true".into(),
            ));
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let parsed: wire::ChatStreamLine =
            serde_json::from_str(line).map_err(|e| unreadable("NDJSON line", &e))?;
        match parsed {
            wire::ChatStreamLine::Error(e) => {
                return Err(classify_http_error(500, &e.error));
            }
            wire::ChatStreamLine::Chunk(c) => {
                reply.content.push_str(&c.message.content);
                if let Some(t) = &c.message.thinking {
                    reply.thinking.push_str(t);
                }
                convert_calls(c.message.calls(), &mut reply.tool_calls);
                if c.done {
                    reply.done_reason = c.done_reason.clone();
                    reply.prompt_eval_count = c.metrics.prompt_eval_count;
                    reply.eval_count = c.metrics.eval_count;
                    return Ok(reply);
                }
            }
        }
    }
}

/// A non-streaming `/api/chat` body.
pub fn parse_single(body: &str) -> Result<Reply, BackendError> {
    let parsed: wire::ChatStreamLine =
        serde_json::from_str(body).map_err(|e| unreadable("/api/chat body", &e))?;
    match parsed {
        wire::ChatStreamLine::Error(e) => Err(classify_http_error(500, &e.error)),
        wire::ChatStreamLine::Chunk(c) => {
            let mut reply = Reply {
                content: c.message.content.clone(),
                thinking: c.message.thinking.clone().unwrap_or_default(),
                done_reason: c.done_reason.clone(),
                prompt_eval_count: c.metrics.prompt_eval_count,
                eval_count: c.metrics.eval_count,
                ..Default::default()
            };
            convert_calls(c.message.calls(), &mut reply.tool_calls);
            Ok(reply)
        }
    }
}

impl Model for OllamaBackend {
    fn chat(&mut self, req: &ChatRequest<'_>) -> Result<Reply, BackendError> {
        let url = format!("{}/api/chat", self.cfg.base_url);
        let mut retried_think = false;
        loop {
            let body = self.wire_request(req);
            match self.agent.post(&url).send_json(&body) {
                Ok(resp) => {
                    return if self.cfg.stream {
                        parse_ndjson(std::io::BufReader::new(resp.into_reader()))
                    } else {
                        let text = resp
                            .into_string()
                            .map_err(|e| BackendError::Unreachable(e.to_string()))?;
                        parse_single(&text)
                    };
                }
                Err(e) => {
                    let err = from_ureq(e);
                    // A server that refuses `think` gets the request again without it.
                    if let BackendError::BadRequest { message, .. } = &err {
                        if self.send_think && !retried_think && message.contains("think") {
                            self.send_think = false;
                            retried_think = true;
                            continue;
                        }
                    }
                    return Err(err);
                }
            }
        }
    }
    fn context_length(&self) -> Option<u64> {
        self.info.context_length
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ndjson_stream_accumulates_content_calls_and_metrics() {
        let s = concat!(
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"Hel"},"done":false}"#,
            "\n",
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"lo","thinking":"hm"},"done":false}"#,
            "\n",
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","function":{"index":0,"name":"list_dir","arguments":{"path":"."}}}]},"done":false}"#,
            "\n",
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":42,"eval_count":7}"#,
            "\n"
        );
        let r = parse_ndjson(s.as_bytes()).unwrap();
        assert_eq!(r.content, "Hello");
        assert_eq!(r.thinking, "hm");
        assert_eq!(r.tool_calls[0].name, "list_dir");
        assert_eq!(r.tool_calls[0].arguments, json!({"path": "."}));
        assert_eq!(r.prompt_eval_count, Some(42));
        assert_eq!(r.done_reason.as_deref(), Some("stop"));
    }

    #[test]
    fn arguments_nested_past_the_decoder_limit_are_a_lost_call_not_a_broken_stream() {
        let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
        let line = format!("{{\"model\":\"m\",\"created_at\":\"t\",\"message\":{{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{{\"function\":{{\"name\":\"write_file\",\"arguments\":{{\"content\":{deep}}}}}}}]}},\"done\":true}}\n");
        let e = parse_ndjson(line.as_bytes()).unwrap_err();
        assert!(
            matches!(&e, BackendError::ToolCallParse(m) if m.contains("nested too deeply")),
            "{e:?}"
        );
        assert!(!e.is_transient());
        assert!(matches!(
            parse_single(line.trim()),
            Err(BackendError::ToolCallParse(_))
        ));
        // a line that is just broken stays a (retried) protocol error
        assert!(parse_ndjson("{\"model\": \n".as_bytes())
            .unwrap_err()
            .is_transient());
    }

    #[test]
    fn ndjson_error_line_and_early_end() {
        let s = "{\"model\":\"m\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\"a\"},\"done\":false}\n{\"error\":\"out of memory\"}\n";
        assert!(matches!(
            parse_ndjson(s.as_bytes()),
            Err(BackendError::Server { .. })
        ));
        let s = "{\"model\":\"m\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\"a\"},\"done\":false}\n";
        assert!(matches!(
            parse_ndjson(s.as_bytes()),
            Err(BackendError::Protocol(_))
        ));
    }

    #[test]
    fn ndjson_survives_invalid_utf8() {
        let mut s = b"{\"model\":\"m\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\"a\xff\"},\"done\":true}\n".to_vec();
        s.extend_from_slice(b"");
        let r = parse_ndjson(&s[..]).unwrap();
        assert!(r.content.starts_with('a'));
    }

    #[test]
    fn request_sends_think_only_when_capable_and_options() {
        let cfg = OllamaConfig {
            num_ctx: Some(32768),
            ..OllamaConfig::new("http://x", "m")
        };
        let msgs = vec![Message::user("hi")];
        let req = ChatRequest {
            messages: &msgs,
            tools: &[],
            num_predict: 8192,
        };
        let w = serde_json::to_value(build_request(&cfg, false, &req)).unwrap();
        assert!(w.get("think").is_none());
        assert_eq!(w["options"]["num_ctx"], 32768);
        assert_eq!(w["options"]["num_predict"], 8192);
        assert_eq!(w["options"]["temperature"], 0.0);
        let w = serde_json::to_value(build_request(&cfg, true, &req)).unwrap();
        assert_eq!(w["think"], false);
        assert!(w.get("truncate").is_none());
        let cfg = OllamaConfig {
            truncate: Some(false),
            ..cfg
        };
        let w = serde_json::to_value(build_request(&cfg, false, &req)).unwrap();
        assert_eq!(w["truncate"], false);
    }
}

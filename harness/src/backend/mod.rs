//! Backends: the [`Model`] trait the agent loop is generic over, the two HTTP backends (Ollama
//! native `/api/chat`, OpenAI-compatible `/v1/chat/completions`), the retry ladder, and scripted
//! models for tests.

pub(crate) mod ollama;
pub(crate) mod openai;
mod retry;
mod scripted;

use crate::messages::{Message, Reply, ToolSpec};
use std::fmt;

pub use ollama::{OllamaBackend, OllamaConfig};
pub use openai::{OpenAiBackend, OpenAiConfig};
pub use retry::{call_with_retry, RetryPolicy};
pub use scripted::{FnModel, ScriptedModel, SeenRequest};

/// One model call: the conversation, the tools offered, and the output cap for this call.
#[derive(Clone, Copy, Debug)]
pub struct ChatRequest<'a> {
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    pub num_predict: u32,
}

/// Anything that answers a chat request: an HTTP backend, a scripted test model.
pub trait Model {
    fn chat(&mut self, req: &ChatRequest<'_>) -> Result<Reply, BackendError>;
    /// The context window the backend reports, when it reports one.
    fn context_length(&self) -> Option<u64> {
        None
    }
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn chat(&mut self, req: &ChatRequest<'_>) -> Result<Reply, BackendError> {
        (**self).chat(req)
    }
    fn context_length(&self) -> Option<u64> {
        (**self).context_length()
    }
}

/// Backend failures, classified so that the loop can decide: retry, repair, or stop.
#[derive(Clone, Debug, PartialEq)]
pub enum BackendError {
    /// Connection refused, DNS, connect/read timeout.
    Unreachable(String),
    ModelNotFound(String),
    NoToolSupport(String),
    /// A 400 about message structure (e.g. consecutive assistant messages): repair and retry.
    Structural(String),
    /// Any other 4xx: the request is wrong; retrying the same request cannot help.
    BadRequest {
        status: u16,
        message: String,
    },
    /// 5xx, 408, 429 or an error line mid-stream: transient.
    Server {
        status: u16,
        message: String,
    },
    /// The server could not parse the model's tool call (Ollama answers HTTP 500 with its
    /// parser's error): the model's output is lost, and resending the same request at the same
    /// temperature only repeats it, so the loop changes the conversation instead.
    ToolCallParse(String),
    /// The prompt does not fit the server's context window (an HTTP 400 instead of a silent
    /// cut): the loop compacts and sends again.
    ContextOverflow(String),
    /// A reply we could not parse.
    Protocol(String),
    /// A scripted model ran out of replies.
    Exhausted,
}

impl BackendError {
    /// Whether waiting and resending the same request may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            BackendError::Unreachable(_) | BackendError::Server { .. } | BackendError::Protocol(_)
        )
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendError::Unreachable(m) => write!(f, "backend unreachable: {m}"),
            BackendError::ModelNotFound(m) => write!(f, "model not found: {m}"),
            BackendError::NoToolSupport(m) => write!(f, "model does not support tools: {m}"),
            BackendError::Structural(m) => write!(f, "backend rejected the message structure: {m}"),
            BackendError::BadRequest { status, message } => {
                write!(f, "backend rejected the request (HTTP {status}): {message}")
            }
            BackendError::Server { status, message } => {
                write!(f, "backend error (HTTP {status}): {message}")
            }
            BackendError::ToolCallParse(m) => {
                write!(f, "the server could not parse the model's tool call: {m}")
            }
            BackendError::ContextOverflow(m) => {
                write!(f, "the prompt does not fit the server's context: {m}")
            }
            BackendError::Protocol(m) => write!(f, "unreadable backend reply: {m}"),
            BackendError::Exhausted => write!(f, "scripted model has no more replies"),
        }
    }
}

impl std::error::Error for BackendError {}

/// The message of an error body in either shape: Ollama `{"error":"…"}` or OpenAI
/// `{"error":{"message":"…"}}`; otherwise the raw body, shortened.
pub fn error_message(body: &str) -> String {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
        match v.get("error") {
            Some(serde_json::Value::String(s)) => return s.clone(),
            Some(e) => {
                if let Some(m) = e.get("message").and_then(|m| m.as_str()) {
                    return m.to_string();
                }
            }
            None => {}
        }
    }
    let t = body.trim();
    t.chars().take(300).collect()
}

/// Errors a server's tool-call parser raises on a malformed call: Ollama's builtin parsers
/// (`model/parsers/*.go` at fb30760: the raw Go JSON or XML error, their own `empty function
/// name`, `invalid format`, `tool "x" is not declared`, `required argument …`, `unterminated
/// string` …; harmony's `error parsing tool call: raw='…'`), its native path (`llama-server
/// returned invalid tool call arguments`), llama.cpp's chat parser. Ollama sends the parser's
/// text as it is, as an HTTP 500 or as the last line of a stream.
const TOOL_PARSE_ERRORS: &[&str] = &[
    "error parsing tool call",
    "tool call parsing failed",
    "invalid tool call",
    "failed to parse",
    "unexpected end of json input",
    "xml syntax error",
    // the bare Go errors the JSON-based parsers (qwen3, deepseek3, glm, lfm2 …) pass through
    "invalid character",
    "cannot unmarshal",
    // the parsers' own errors
    "tool call",
    "function name",
    "function call",
    "argument",
    "arg_key",
    "is not declared",
    "undeclared",
    "unterminated",
    "invalid format",
    "invalid object entry",
    "expected 'call:'",
    "atem ",
    "glimmer",
];

/// Whole messages that are a parser's bare decode error: Go's `io.EOF` from the XML decoder
/// (qwen3.5 given a JSON body) and its unexpected-EOF sibling. A runner's dropped connection
/// says more (`Post "http://127.0.0.1:…/completion": EOF`).
const BARE_PARSE_ERRORS: &[&str] = &["eof", "unexpected eof"];

/// Errors of a runner that died or failed to load, or of the connection to it: transient,
/// whatever else they quote.
const RUNNER_ERRORS: &[&str] = &[
    "runner",
    "process has terminated",
    "out of memory",
    "post \"http",
    "connection refused",
    "connection reset",
    "server busy",
    "timed out",
    "context canceled",
];

/// Errors of a prompt longer than the window: Ollama (both runner eras), llama-server, vLLM.
const CONTEXT_ERRORS: &[&str] = &[
    "longer than the context length",
    "exceeds the available context size",
    "exceed_context_size",
    "input length exceeds the context length",
    "maximum context length",
    "context length exceeded",
];

/// Map an HTTP status and error message to a [`BackendError`]. Pure, so the classification is
/// tested without a server.
pub fn classify_http_error(status: u16, message: &str) -> BackendError {
    let lower = message.to_lowercase();
    let m = message.to_string();
    // Ollama's capability check, and vLLM started without a tool parser
    if lower.contains("does not support tools") || lower.contains("enable-auto-tool-choice") {
        return BackendError::NoToolSupport(m);
    }
    let parser_said = TOOL_PARSE_ERRORS.iter().any(|p| lower.contains(p))
        || BARE_PARSE_ERRORS.contains(&lower.trim())
        || (lower.starts_with("tool '") && lower.ends_with("' not found"));
    if status >= 500 && parser_said && !RUNNER_ERRORS.iter().any(|p| lower.contains(p)) {
        return BackendError::ToolCallParse(m);
    }
    if (400..500).contains(&status) && CONTEXT_ERRORS.iter().any(|p| lower.contains(p)) {
        return BackendError::ContextOverflow(m);
    }
    if status == 404 || (lower.contains("model") && lower.contains("not found")) {
        return BackendError::ModelNotFound(m);
    }
    if status == 400
        && (lower.contains("consecutive")
            || lower.contains("alternate")
            || lower.contains("must be followed")
            || lower.contains("tool_call_id"))
    {
        return BackendError::Structural(m);
    }
    if status == 408 || status == 429 || status >= 500 {
        return BackendError::Server { status, message: m };
    }
    BackendError::BadRequest { status, message: m }
}

/// Turn a ureq error into a classified backend error (reading the body of HTTP errors).
pub(crate) fn from_ureq(e: ureq::Error) -> BackendError {
    match e {
        ureq::Error::Status(code, resp) => {
            let body = resp.into_string().unwrap_or_default();
            classify_http_error(code, &error_message(&body))
        }
        ureq::Error::Transport(t) => BackendError::Unreachable(t.to_string()),
    }
}

/// Base URL without a trailing slash or a trailing `/v1` (added per endpoint).
pub fn normalize_base_url(url: &str) -> String {
    let mut u = url.trim().trim_end_matches('/').to_string();
    if u.ends_with("/v1") {
        u.truncate(u.len() - 3);
    }
    if !u.starts_with("http://") && !u.starts_with("https://") {
        u = format!("http://{u}");
    }
    u
}

/// Merge consecutive assistant messages and drop empty assistant messages without tool calls:
/// some servers answer such histories with a 400. Returns how many messages were removed.
pub fn repair_conversation(messages: &mut Vec<Message>) -> usize {
    use crate::messages::Role;
    let before = messages.len();
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    for m in messages.drain(..) {
        if m.role == Role::Assistant && m.content.trim().is_empty() && m.tool_calls.is_empty() {
            continue;
        }
        if let Some(prev) = out.last_mut() {
            if prev.role == Role::Assistant
                && m.role == Role::Assistant
                && prev.tool_calls.is_empty()
            {
                if !m.content.is_empty() {
                    if !prev.content.is_empty() {
                        prev.content.push('\n');
                    }
                    prev.content.push_str(&m.content);
                }
                prev.tool_calls.extend(m.tool_calls);
                continue;
            }
        }
        out.push(m);
    }
    *messages = out;
    before - messages.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{Message, ToolCall};
    use serde_json::json;

    #[test]
    fn classifies_upstream_error_shapes() {
        assert!(matches!(
            classify_http_error(404, "model 'nope:1b' not found"),
            BackendError::ModelNotFound(_)
        ));
        assert!(matches!(
            classify_http_error(
                400,
                "registry.ollama.ai/library/x:1b does not support tools"
            ),
            BackendError::NoToolSupport(_)
        ));
        assert!(matches!(
            classify_http_error(500, "llama runner process has terminated"),
            BackendError::Server { status: 500, .. }
        ));
        assert!(matches!(
            classify_http_error(400, "\"m\" does not support thinking"),
            BackendError::BadRequest { status: 400, .. }
        ));
        assert!(matches!(
            classify_http_error(400, "roles must alternate user/assistant"),
            BackendError::Structural(_)
        ));
        assert!(classify_http_error(503, "busy").is_transient());
        // the texts Ollama's parsers and servers answer with (docs/harness.md, *Failure modes*)
        for parse in [
            "failed to parse JSON: unexpected end of JSON input",
            "XML syntax error on line 1: unexpected EOF",
            "error parsing tool call: raw='{\"path\": \"a.md\", \"content\": \"x', err=unexpected end of JSON input",
            "llama-server returned invalid tool call arguments for \"write_file\": invalid character",
            "invalid character 'c' after object key:value pair",
            "json: cannot unmarshal string into Go value of type map[string]interface {}",
            "XML syntax error on line 3: element <parameter> closed by </function>",
            // Ollama's own parsers at fb30760 (model/parsers/*.go)
            "EOF",
            "empty function name",
            "invalid format",
            "expected 'call:' prefix",
            "expected '{' in tool call",
            "repair failed to produce valid JSON arguments",
            "incomplete GLM tool call: unexpected EOF",
            "mismatched arg_key and arg_value counts: 2 keys, 1 values",
            "tool \"write_files\" is not declared",
            "required argument \"path\" is missing for tool \"write_file\"",
            "failed to parse XML: XML syntax error on line 2: unexpected EOF",
            "invalid tool call: no matching closing parenthesis",
            "invalid argument: unterminated string",
            "tool 'writefile' not found",
            "failed to parse function call \"write_file(path=\": invalid function call format",
            "undeclared Glimmer function \"shell\"",
            "unterminated ATEM parameter \"content\"",
        ] {
            let e = classify_http_error(500, parse);
            assert!(matches!(e, BackendError::ToolCallParse(_)), "{parse}");
            assert!(!e.is_transient());
        }
        for long in [
            "the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length",
            "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it",
            "the input length exceeds the context length",
            "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens",
        ] {
            assert!(
                matches!(classify_http_error(400, long), BackendError::ContextOverflow(_)),
                "{long}"
            );
        }
        assert!(matches!(
            classify_http_error(400, "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set"),
            BackendError::NoToolSupport(_)
        ));
        // a runner that died is transient even when its last error quotes a JSON error
        assert!(classify_http_error(
            500,
            "model runner has unexpectedly stopped, this may be due to resource limitations or an internal error, check ollama server logs for details: invalid character"
        )
        .is_transient());
        for transient in [
            "Post \"http://127.0.0.1:40211/completion\": EOF",
            "server busy, please try again.  maximum pending requests exceeded",
            "timed out waiting for llama runner to start - progress 0.00 - ",
            "llama runner process has terminated: exit status 2",
        ] {
            assert!(
                classify_http_error(500, transient).is_transient(),
                "{transient}"
            );
        }
        assert!(!classify_http_error(404, "x").is_transient());
    }

    #[test]
    fn error_message_reads_both_shapes() {
        assert_eq!(error_message(r#"{"error":"boom"}"#), "boom");
        assert_eq!(
            error_message(r#"{"error":{"message":"bad","type":"x"}}"#),
            "bad"
        );
        assert_eq!(error_message("plain"), "plain");
    }

    #[test]
    fn base_url_normalized() {
        assert_eq!(normalize_base_url("http://h:1/v1/"), "http://h:1");
        assert_eq!(
            normalize_base_url("127.0.0.1:11434"),
            "http://127.0.0.1:11434"
        );
    }

    #[test]
    fn repair_merges_consecutive_assistants() {
        let mut m = vec![
            Message::user("t"),
            Message::assistant("a", vec![]),
            Message::assistant("", vec![]),
            Message::assistant("b", vec![ToolCall::new("x", json!({}))]),
        ];
        assert_eq!(repair_conversation(&mut m), 2);
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].content, "a\nb");
        assert_eq!(m[1].tool_calls.len(), 1);
    }
}

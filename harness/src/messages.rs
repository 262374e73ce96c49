//! The harness's own message model. It is independent of the wire format so that every
//! mechanism can be tested with scripted replies and reused by other crates.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// A tool call with decoded (object) arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    #[serde(default)]
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub arguments: Value,
}

impl ToolCall {
    pub fn new(name: &str, arguments: Value) -> Self {
        ToolCall {
            id: String::new(),
            name: name.to_string(),
            arguments,
        }
    }
    /// String argument `key`, if present (numbers and bools are rendered as text).
    pub fn arg_str(&self, key: &str) -> Option<String> {
        match self.arguments.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    }
    pub fn arg_u64(&self, key: &str) -> Option<u64> {
        match self.arguments.get(key)? {
            Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64)),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What a tool result reported, kept beside the text the model reads: rules that look back over
/// earlier results (the failed-run rule) read the call's typed outcome, never the result's
/// wording, which is free to change. Kept in the checkpoint; never sent to a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultMark {
    /// A command ran to its end and succeeded: its output's verdict passed, or, without a
    /// verdict, it exited 0.
    Passed,
    /// A command ran and failed: a failing verdict, or a non-zero exit or a signal.
    Failed,
    /// A file call changed the workdir.
    Changed,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// A user-role message written by the harness (a nudge), not by the user. Classifiers
    /// that look for "the latest real user message" skip these.
    #[serde(default, skip_serializing_if = "is_false")]
    pub injected: bool,
    /// An assistant turn whose calls the model wrote as text (read back by the format
    /// rescue): `content` is the reply as the model wrote it and `tool_calls` what was read
    /// from it. It is sent as that text alone, so the request repeats the tokens the server
    /// cached for the reply ([`crate::mechanisms::text_protocol::render_text_calls`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub text_calls: bool,
    /// A tool result's outcome in the harness's terms (absent in checkpoints written before it
    /// existed, and for results that ran nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark: Option<ResultMark>,
}

impl Message {
    fn new(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_name: None,
            tool_call_id: None,
            injected: false,
            text_calls: false,
            mark: None,
        }
    }
    pub fn system(c: impl Into<String>) -> Self {
        Self::new(Role::System, c)
    }
    pub fn user(c: impl Into<String>) -> Self {
        Self::new(Role::User, c)
    }
    /// A harness nudge (user role, marked injected).
    pub fn nudge(c: impl Into<String>) -> Self {
        Message {
            injected: true,
            ..Self::new(Role::User, c)
        }
    }
    pub fn assistant(c: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        Message {
            tool_calls: calls,
            ..Self::new(Role::Assistant, c)
        }
    }
    /// An assistant turn whose calls were read from its text (`text` as the model wrote it).
    pub fn text_calls(text: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        Message {
            text_calls: true,
            ..Self::assistant(text, calls)
        }
    }
    pub fn tool_result(call: &ToolCall, c: impl Into<String>) -> Self {
        Message {
            tool_name: Some(call.name.clone()),
            tool_call_id: if call.id.is_empty() {
                None
            } else {
                Some(call.id.clone())
            },
            ..Self::new(Role::Tool, c)
        }
    }
    /// The same message with the outcome `mark` of the call it answers.
    pub fn marked(self, mark: Option<ResultMark>) -> Self {
        Message { mark, ..self }
    }
}

/// One model reply, whatever the backend.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub thinking: String,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default)]
    pub done_reason: Option<String>,
    #[serde(default)]
    pub prompt_eval_count: Option<u64>,
    #[serde(default)]
    pub eval_count: Option<u64>,
}

impl Reply {
    pub fn text(s: &str) -> Self {
        Reply {
            content: s.to_string(),
            done_reason: Some("stop".into()),
            ..Default::default()
        }
    }
    pub fn call(name: &str, args: Value) -> Self {
        Reply {
            tool_calls: vec![ToolCall::new(name, args)],
            done_reason: Some("stop".into()),
            ..Default::default()
        }
    }
    pub fn truncated(&self) -> bool {
        self.done_reason.as_deref() == Some("length")
    }
}

/// A flat tool definition (name, one-line description, JSON schema without per-parameter
/// descriptions: small models need the names, and every byte here is paid on every call).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

//! `/api/chat`: the request, its messages and tool calls, the options, and the reply chunks.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{lowercase_role, null_as_empty};
use crate::{lenient_arguments, Think, Tool};

/// One chat message. `content` is always serialised (Ollama has no `omitempty` on it).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool` (lower-cased on decode).
    #[serde(deserialize_with = "lowercase_role")]
    pub role: String,
    /// The message text; `null` decodes as empty.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub content: String,
    /// The model's reasoning text, separate from `content` (thinking models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Base64-encoded images attached to the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<String>>,
    /// Calls the assistant asks for; arrive whole, never in fragments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// On a `tool` message: the name of the tool whose result this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// On a `tool` message: the id of the call it answers (optional on Ollama's wire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A message with `role` and `content` and nothing else.
    pub fn new(role: &str, content: impl Into<String>) -> Self {
        Message {
            role: role.to_string(),
            content: content.into(),
            ..Default::default()
        }
    }
    /// A `system` message.
    pub fn system(c: impl Into<String>) -> Self {
        Self::new("system", c)
    }
    /// A `user` message.
    pub fn user(c: impl Into<String>) -> Self {
        Self::new("user", c)
    }
    /// An `assistant` message without tool calls.
    pub fn assistant(c: impl Into<String>) -> Self {
        Self::new("assistant", c)
    }
    /// A `tool` result message naming the tool it came from.
    pub fn tool(name: &str, c: impl Into<String>) -> Self {
        Message {
            tool_name: Some(name.to_string()),
            ..Self::new("tool", c)
        }
    }
    /// Tool calls, or an empty slice.
    pub fn calls(&self) -> &[ToolCall] {
        self.tool_calls.as_deref().unwrap_or(&[])
    }
}

/// `{"id":"call_xxxxxxxx","function":{"index":0,"name":"…","arguments":{…}}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Server-generated `call_` id followed by 8 lower-case alphanumerics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Which function to call and with what.
    pub function: ToolCallFunction,
}

/// The function part of a native [`ToolCall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallFunction {
    /// Always serialised by Ollama; accepted when missing.
    #[serde(default)]
    pub index: u32,
    /// The name of the tool to call.
    pub name: String,
    /// A JSON object; a JSON-encoded string is decoded on input.
    #[serde(default = "empty_object", deserialize_with = "lenient_arguments")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

impl ToolCall {
    /// A tool call with the given id, position, tool name and argument object.
    pub fn new(id: Option<String>, index: u32, name: &str, arguments: Value) -> Self {
        ToolCall {
            id,
            function: ToolCallFunction {
                index,
                name: name.to_string(),
                arguments,
            },
        }
    }
}

/// `options`: the documented knobs as typed fields, anything else kept in `extra`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Options {
    /// Sampling temperature; 0 is greedy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Context window in tokens; changing it between requests reloads the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_ctx: Option<u64>,
    /// Most tokens to generate; -1 means no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_predict: Option<i64>,
    /// Sampling seed, for reproducible output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Nucleus sampling: keep the smallest token set whose probability reaches this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Sample only among this many most likely tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<i64>,
    /// Drop tokens less likely than this fraction of the top token's probability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_p: Option<f64>,
    /// Generation stops when one of these strings is produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
    /// Penalty on tokens repeated within the recent window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat_penalty: Option<f64>,
    /// Penalty on any token already present in the output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    /// Penalty growing with how often a token has already appeared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    /// Other runtime/load-time options (num_batch, num_gpu, typical_p, …), forwarded untouched.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `POST /api/chat` request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model tag to run (required by the server).
    #[serde(default)]
    pub model: String,
    /// The conversation so far, oldest first.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// Function tools the model may call; a model without the `tools` capability rejects them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// Absent means true (Ollama streams by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// `"json"` or a JSON schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Value>,
    /// Sampling and load-time options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Options>,
    /// `"5m"`, a number of seconds, or 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<Value>,
    /// Whether (or how hard) a thinking model reasons; absent means on for thinking models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<Think>,
    /// `false` turns off dropping old messages when the prompt exceeds the context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncate: Option<bool>,
    /// `false` turns off context shifting when generation fills the context (forces a reload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shift: Option<bool>,
    /// Ask for the log-probabilities of the generated tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<bool>,
    /// How many alternative tokens' log-probabilities to return per position (0–20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<u32>,
    /// Unknown top-level fields, kept so a proxy can forward them.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ChatRequest {
    /// Whether the reply streams as NDJSON chunks (Ollama's default when `stream` is absent).
    pub fn streaming(&self) -> bool {
        self.stream.unwrap_or(true)
    }
    /// The offered tools, or an empty slice.
    pub fn tools(&self) -> &[Tool] {
        self.tools.as_deref().unwrap_or(&[])
    }
}

/// The timing/count metrics of a final chunk (nanoseconds; omitted on intermediate chunks).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Metrics {
    /// Wall time of the whole request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_duration: Option<u64>,
    /// Time spent loading the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_duration: Option<u64>,
    /// Prompt tokens evaluated for this request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_eval_count: Option<u64>,
    /// Prompt tokens served from the KV cache (`prompt_eval_count` still counts them): newer
    /// Ollama servers only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_eval_cached_count: Option<u64>,
    /// Time spent evaluating the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_eval_duration: Option<u64>,
    /// Tokens generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_count: Option<u64>,
    /// Time spent generating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_duration: Option<u64>,
}

/// `/api/chat` response object: a streaming chunk (`done:false`), the final chunk, or the
/// whole non-streaming reply.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The model tag that answered.
    #[serde(default)]
    pub model: String,
    /// For a cloud-proxied model: the model name on the remote side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_model: Option<String>,
    /// For a cloud-proxied model: the remote host that served it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_host: Option<String>,
    /// Server time of the chunk, RFC 3339 with nanoseconds.
    #[serde(default)]
    pub created_at: String,
    /// The message, or the piece of it this chunk carries.
    #[serde(default)]
    pub message: Message,
    /// `stop`, `length`, `load`, `unload`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_reason: Option<String>,
    /// `true` on the last chunk (and on a whole reply).
    #[serde(default)]
    pub done: bool,
    /// Timing and token counts, present on the last chunk only.
    #[serde(flatten)]
    pub metrics: Metrics,
}

/// A streamed NDJSON line may also be an error object (after streaming began).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ChatStreamLine {
    /// An error that ended the stream.
    Error(crate::ErrorBody),
    /// An ordinary chunk.
    Chunk(Box<ChatResponse>),
}

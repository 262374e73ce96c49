//! Ollama's native API: `/api/chat`, `/api/generate`, `/api/tags`, `/api/show`, `/api/ps`,
//! `/api/version`. Field order follows Ollama's Go structs so our output is byte-comparable.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::{lenient_arguments, Think, Tool};

fn is_false(b: &bool) -> bool {
    !*b
}

fn null_as_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// Roles are lower-cased on decode, as Ollama does.
fn lowercase_role<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(String::deserialize(d)?.to_lowercase())
}

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

/// `POST /api/generate` request (minimal).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GenerateRequest {
    /// The model tag to run.
    #[serde(default)]
    pub model: String,
    /// The prompt text.
    #[serde(default)]
    pub prompt: String,
    /// Text that follows the insertion point (fill-in-the-middle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suffix: Option<String>,
    /// Overrides the model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// Overrides the model's prompt template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// Absent means true, as on `/api/chat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// `true` sends the prompt unformatted, bypassing the template.
    #[serde(default, skip_serializing_if = "is_false")]
    pub raw: bool,
    /// `"json"` or a JSON schema the output must follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Value>,
    /// How long the model stays loaded after the request (`"5m"`, seconds, or 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<Value>,
    /// Base64-encoded images for a vision model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<String>>,
    /// Sampling and load-time options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Options>,
    /// Whether (or how hard) a thinking model reasons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<Think>,
    /// Unknown top-level fields, kept so a proxy can forward them.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `/api/generate` response object (chunk or whole).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GenerateResponse {
    /// The model tag that answered.
    #[serde(default)]
    pub model: String,
    /// Server time of the chunk, RFC 3339 with nanoseconds.
    #[serde(default)]
    pub created_at: String,
    /// The generated text, or the piece of it this chunk carries.
    #[serde(default)]
    pub response: String,
    /// The model's reasoning text (thinking models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// `true` on the last chunk (and on a whole reply).
    #[serde(default)]
    pub done: bool,
    /// Why generation ended (`stop`, `length`, `load`, `unload`); last chunk only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_reason: Option<String>,
    /// Deprecated token context to pass back on the next request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Vec<i64>>,
    /// Timing and token counts, present on the last chunk only.
    #[serde(flatten)]
    pub metrics: Metrics,
}

/// `details` of a model in tags/show/ps.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ModelDetails {
    /// The model this one was derived from, if any.
    #[serde(default)]
    pub parent_model: String,
    /// The weights' file format, e.g. `gguf`.
    #[serde(default)]
    pub format: String,
    /// The architecture family, e.g. `llama` or `qwen3`.
    #[serde(default)]
    pub family: String,
    /// Every family the model belongs to; may be `null`.
    #[serde(default)]
    pub families: Option<Vec<String>>,
    /// Human-readable parameter count, e.g. `4.0B`.
    #[serde(default)]
    pub parameter_size: String,
    /// Quantisation of the weights, e.g. `Q4_K_M`.
    #[serde(default)]
    pub quantization_level: String,
}

/// One entry of `GET /api/tags`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ListModel {
    /// The model's full tag, e.g. `llama3.2:latest`.
    pub name: String,
    /// The same tag again (Ollama sends both).
    #[serde(default)]
    pub model: String,
    /// When the model was last pulled or changed.
    #[serde(default)]
    pub modified_at: String,
    /// Size on disk in bytes.
    #[serde(default)]
    pub size: u64,
    /// Digest of the model's manifest.
    #[serde(default)]
    pub digest: String,
    /// Format, family, size and quantisation.
    #[serde(default)]
    pub details: ModelDetails,
    /// What the model can do (`tools`, `thinking`, …), when the server reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Vec<String>>,
}

/// `GET /api/tags`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TagsResponse {
    /// The locally available models.
    #[serde(default)]
    pub models: Vec<ListModel>,
}

/// `POST /api/show` request; `name` is the deprecated alias of `model`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ShowRequest {
    /// The model to describe.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// Deprecated alias of `model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `true` includes the full tokenizer arrays in `model_info`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub verbose: bool,
}

impl ShowRequest {
    /// `model`, falling back to the deprecated `name`.
    pub fn model_name(&self) -> &str {
        if self.model.is_empty() {
            self.name.as_deref().unwrap_or("")
        } else {
            &self.model
        }
    }
}

/// `POST /api/show` response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ShowResponse {
    /// The model's licence text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// The Modelfile the model was built from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modelfile: Option<String>,
    /// Default parameters, one `name value` per line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<String>,
    /// The Go prompt template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// The default system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The built-in prompt renderer the server uses instead of the template, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renderer: Option<String>,
    /// The built-in output parser (tool calls, thinking), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parser: Option<String>,
    /// Format, family, size and quantisation.
    #[serde(default)]
    pub details: ModelDetails,
    /// Includes `general.architecture` and `<arch>.context_length`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_info: Option<Map<String, Value>>,
    /// Metadata of a vision projector, for multimodal models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projector_info: Option<Map<String, Value>>,
    /// Tensor list (verbose requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensors: Option<Value>,
    /// What the model can do: `completion`, `tools`, `thinking`, `vision`, ….
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// When the model was last pulled or changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_at: Option<String>,
    /// The least Ollama version the model needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires: Option<String>,
}

impl ShowResponse {
    /// `model_info["<general.architecture>.context_length"]`, falling back to any
    /// `*.context_length` key.
    pub fn context_length(&self) -> Option<u64> {
        let info = self.model_info.as_ref()?;
        if let Some(arch) = info.get("general.architecture").and_then(|a| a.as_str()) {
            if let Some(n) = info
                .get(&format!("{arch}.context_length"))
                .and_then(|v| v.as_u64())
            {
                return Some(n);
            }
        }
        info.iter()
            .find(|(k, _)| k.ends_with(".context_length"))
            .and_then(|(_, v)| v.as_u64())
    }
    /// Whether the server lists `cap` among the model's capabilities.
    pub fn has_capability(&self, cap: &str) -> bool {
        self.capabilities.iter().any(|c| c == cap)
    }
}

/// One entry of `GET /api/ps`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PsModel {
    /// The model's full tag.
    pub name: String,
    /// The same tag again (Ollama sends both).
    #[serde(default)]
    pub model: String,
    /// Memory the loaded model takes, in bytes.
    #[serde(default)]
    pub size: u64,
    /// Digest of the model's manifest.
    #[serde(default)]
    pub digest: String,
    /// Format, family, size and quantisation.
    #[serde(default)]
    pub details: ModelDetails,
    /// When the model will be unloaded unless used again.
    #[serde(default)]
    pub expires_at: String,
    /// How much of `size` sits in GPU memory.
    #[serde(default)]
    pub size_vram: u64,
    /// The context actually allocated.
    #[serde(default)]
    pub context_length: u64,
}

/// `GET /api/ps`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PsResponse {
    /// The models loaded right now.
    #[serde(default)]
    pub models: Vec<PsModel>,
}

/// `GET /api/version`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VersionResponse {
    /// The server's version, e.g. `0.12.6`.
    pub version: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chat_request_roundtrip_with_tools_and_unknowns() {
        let body = json!({
            "model": "qwen3:4b",
            "messages": [
                {"role": "System", "content": "be brief"},
                {"role": "user", "content": "weather in Tokyo?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call_ab12cd34", "function": {"index": 0, "name": "get_weather", "arguments": {"city": "Tokyo"}}}
                ]},
                {"role": "tool", "content": "22C", "tool_name": "get_weather"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"function": {"name": "get_weather", "arguments": "{\"city\":\"Osaka\"}"}}
                ]}
            ],
            "tools": [{"type": "function", "function": {"name": "get_weather", "description": "d",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
            "stream": false,
            "think": false,
            "keep_alive": "5m",
            "format": "json",
            "options": {"temperature": 0, "num_ctx": 32768, "num_predict": 8192, "seed": 7,
                        "top_p": 0.9, "top_k": 40, "stop": ["</s>"], "num_batch": 512},
            "x_unknown": 1
        });
        let req: ChatRequest = serde_json::from_value(body).unwrap();
        assert_eq!(req.messages[0].role, "system");
        assert!(!req.streaming());
        assert_eq!(req.tools()[0].function.name, "get_weather");
        let o = req.options.as_ref().unwrap();
        assert_eq!(o.num_ctx, Some(32768));
        assert_eq!(o.extra["num_batch"], json!(512));
        assert_eq!(req.messages[4].content, "");
        assert_eq!(
            req.messages[4].calls()[0].function.arguments,
            json!({"city": "Osaka"})
        );
        assert_eq!(req.extra["x_unknown"], json!(1));
        // serialise again: unknown and extra options kept, key order preserved
        let out = serde_json::to_value(&req).unwrap();
        assert_eq!(out["options"]["num_batch"], json!(512));
        assert_eq!(out["x_unknown"], json!(1));
        assert_eq!(out["think"], json!(false));
    }

    #[test]
    fn default_stream_is_true() {
        let req: ChatRequest = serde_json::from_str(r#"{"model":"m","messages":[]}"#).unwrap();
        assert!(req.streaming());
    }

    #[test]
    fn streaming_chunks_serialise_exactly() {
        let chunk = ChatResponse {
            model: "llama3.2".into(),
            created_at: "2026-11-29T22:00:00.000000000Z".into(),
            message: Message::assistant("Hel"),
            done: false,
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&chunk).unwrap(),
            r#"{"model":"llama3.2","created_at":"2026-11-29T22:00:00.000000000Z","message":{"role":"assistant","content":"Hel"},"done":false}"#
        );
        let last = ChatResponse {
            model: "llama3.2".into(),
            created_at: "t".into(),
            message: Message::assistant(""),
            done: true,
            done_reason: Some("stop".into()),
            metrics: Metrics {
                total_duration: Some(10),
                load_duration: Some(1),
                prompt_eval_count: Some(26),
                prompt_eval_cached_count: None,
                prompt_eval_duration: Some(2),
                eval_count: Some(3),
                eval_duration: Some(4),
            },
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&last).unwrap(),
            r#"{"model":"llama3.2","created_at":"t","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":10,"load_duration":1,"prompt_eval_count":26,"prompt_eval_duration":2,"eval_count":3,"eval_duration":4}"#
        );
        let back: ChatResponse =
            serde_json::from_str(&serde_json::to_string(&last).unwrap()).unwrap();
        assert_eq!(back, last);
    }

    #[test]
    fn tool_call_chunk_shape() {
        let mut m = Message::assistant("");
        m.tool_calls = Some(vec![ToolCall::new(
            Some("call_0a1b2c3d".into()),
            0,
            "get_weather",
            json!({"city": "Tokyo", "unit": "c"}),
        )]);
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"role":"assistant","content":"","tool_calls":[{"id":"call_0a1b2c3d","function":{"index":0,"name":"get_weather","arguments":{"city":"Tokyo","unit":"c"}}}]}"#
        );
    }

    #[test]
    fn stream_line_error_or_chunk() {
        let l: ChatStreamLine = serde_json::from_str(r#"{"error":"boom"}"#).unwrap();
        assert!(matches!(l, ChatStreamLine::Error(e) if e.error == "boom"));
        let l: ChatStreamLine = serde_json::from_str(
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"x"},"done":false}"#,
        )
        .unwrap();
        assert!(matches!(l, ChatStreamLine::Chunk(_)));
    }

    #[test]
    fn show_context_length_and_capabilities() {
        let s: ShowResponse = serde_json::from_value(json!({
            "modelfile": "# x", "parameters": "temperature 0", "template": "{{ .Prompt }}",
            "details": {"parent_model": "", "format": "gguf", "family": "qwen3", "families": ["qwen3"],
                        "parameter_size": "4.0B", "quantization_level": "Q4_K_M"},
            "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960},
            "capabilities": ["completion", "tools", "thinking"],
            "modified_at": "2026-01-01T00:00:00Z"
        }))
        .unwrap();
        assert_eq!(s.context_length(), Some(40960));
        assert!(s.has_capability("tools") && s.has_capability("thinking"));
        let r: ShowRequest = serde_json::from_str(r#"{"name":"old"}"#).unwrap();
        assert_eq!(r.model_name(), "old");
    }

    #[test]
    fn tags_ps_version() {
        let t: TagsResponse = serde_json::from_value(json!({"models": [{
            "name": "llama3.2:latest", "model": "llama3.2:latest", "modified_at": "2026-01-01T00:00:00Z",
            "size": 2019393189u64, "digest": "a80c", "details": {"parent_model": "", "format": "gguf",
            "family": "llama", "families": null, "parameter_size": "3.2B", "quantization_level": "Q4_K_M"}}]}))
        .unwrap();
        assert_eq!(t.models[0].details.parameter_size, "3.2B");
        let p: PsResponse = serde_json::from_value(json!({"models": [{
            "name": "m", "model": "m", "size": 1, "digest": "d", "details": {}, "expires_at": "x",
            "size_vram": 1, "context_length": 32768}]}))
        .unwrap();
        assert_eq!(p.models[0].context_length, 32768);
        let v: VersionResponse = serde_json::from_str(r#"{"version":"0.33.0"}"#).unwrap();
        assert_eq!(v.version, "0.33.0");
    }

    #[test]
    fn generate_minimal() {
        let g: GenerateRequest =
            serde_json::from_str(r#"{"model":"m","prompt":"hi","stream":false}"#).unwrap();
        assert_eq!(g.prompt, "hi");
        let r = GenerateResponse {
            model: "m".into(),
            created_at: "t".into(),
            response: "hello".into(),
            done: true,
            done_reason: Some("stop".into()),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"model":"m","created_at":"t","response":"hello","done":true,"done_reason":"stop"}"#
        );
    }
}

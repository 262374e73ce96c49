//! `/api/generate`: a raw completion request and its reply chunks.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{is_false, Metrics, Options};
use crate::Think;

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

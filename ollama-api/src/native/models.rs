//! What a server says of its models: `/api/tags`, `/api/show`, `/api/ps`, `/api/version`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::is_false;

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

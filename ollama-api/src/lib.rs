#![deny(missing_docs)]

//! Wire types of Ollama's native HTTP API and its OpenAI-compatible layer.
//!
//! Shared by our client (harness), the simulated backend (sim) and the normalising proxy
//! (runner). Deserialisation is lenient (unknown fields are kept in `extra` maps where a
//! proxy must forward them, otherwise ignored; tool-call `arguments` accepted as an object or
//! as a JSON string). Serialisation is exact: optional fields are omitted when absent, the
//! way Ollama's `omitempty` tags omit them.
//!
//! The native API's types are at the root; the two OpenAI-style dialects, whose type names
//! repeat the native ones, are the [`openai`] and [`responses`] modules.

mod native;
pub mod openai;
pub mod responses;

pub use native::*;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// Ollama's native error body `{"error": "..."}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The error message, as Ollama words it.
    pub error: String,
}

impl ErrorBody {
    /// An error body carrying `msg`.
    pub fn new(msg: impl Into<String>) -> Self {
        Self { error: msg.into() }
    }
}

/// Accept tool-call arguments as an object (native API) or as a JSON-encoded string
/// (OpenAI style, and some clients that mix the two). A string that is not valid JSON is
/// kept as a JSON string value so nothing the model wrote is lost.
pub fn lenient_arguments<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(normalize_arguments(v))
}

/// See [`lenient_arguments`]; also usable on values obtained elsewhere.
pub fn normalize_arguments(v: Value) -> Value {
    match v {
        Value::String(s) => {
            let t = s.trim();
            if t.is_empty() {
                return Value::Object(Map::new());
            }
            match serde_json::from_str::<Value>(t) {
                Ok(parsed @ Value::Object(_)) => parsed,
                _ => Value::String(s),
            }
        }
        Value::Null => Value::Object(Map::new()),
        other => other,
    }
}

/// `think` is a bool or a level string (`low|medium|high|max`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Think {
    /// `true` turns thinking on, `false` off.
    Bool(bool),
    /// A thinking level; only `low`, `medium`, `high` and `max` are accepted.
    Level(String),
}

impl Think {
    /// Whether thinking is requested at all.
    pub fn enabled(&self) -> bool {
        match self {
            Think::Bool(b) => *b,
            Think::Level(_) => true,
        }
    }
    /// Ollama accepts only these level strings; anything else is a 400.
    pub fn is_valid(&self) -> bool {
        match self {
            Think::Bool(_) => true,
            Think::Level(s) => matches!(s.as_str(), "low" | "medium" | "high" | "max"),
        }
    }
}

/// `stop` in OpenAI requests: one string or a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StringOrList {
    /// A single stop string.
    One(String),
    /// Several stop strings.
    Many(Vec<String>),
}

impl StringOrList {
    /// The stop strings as a list, whichever form was sent.
    pub fn into_vec(self) -> Vec<String> {
        match self {
            StringOrList::One(s) => vec![s],
            StringOrList::Many(v) => v,
        }
    }
}

/// Tool definition `{type:"function", function:{name, description, parameters}}`; the same
/// shape on the native and OpenAI APIs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// Always `"function"` on Ollama's wire; defaulted when missing.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// The function the model may call.
    pub function: ToolFunction,
}

fn function_type() -> String {
    "function".to_string()
}

/// The callable part of a [`Tool`]: its name, what it does, and its JSON-schema parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolFunction {
    /// The name the model uses to call the tool.
    pub name: String,
    /// What the tool does, shown to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A JSON schema (`type: object`) of the tool's arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
}

impl Tool {
    /// A function tool with a description and a parameter schema.
    pub fn function(name: &str, description: &str, parameters: Value) -> Self {
        Tool {
            kind: function_type(),
            function: ToolFunction {
                name: name.to_string(),
                description: Some(description.to_string()),
                parameters: Some(parameters),
            },
        }
    }

    /// Property names of the parameter schema, in schema order.
    pub fn param_names(&self) -> Vec<String> {
        self.function
            .parameters
            .as_ref()
            .and_then(|p| p.get("properties"))
            .and_then(|p| p.as_object())
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Names listed in the schema's `required` array.
    pub fn required_params(&self) -> Vec<String> {
        self.function
            .parameters
            .as_ref()
            .and_then(|p| p.get("required"))
            .and_then(|r| r.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_accept_object_string_and_null() {
        assert_eq!(normalize_arguments(json!({"a": 1})), json!({"a": 1}));
        assert_eq!(normalize_arguments(json!("{\"a\": 1}")), json!({"a": 1}));
        assert_eq!(normalize_arguments(json!("")), json!({}));
        assert_eq!(normalize_arguments(Value::Null), json!({}));
        assert_eq!(normalize_arguments(json!("not json")), json!("not json"));
    }

    #[test]
    fn think_levels() {
        let t: Think = serde_json::from_value(json!("high")).unwrap();
        assert!(t.enabled() && t.is_valid());
        let t: Think = serde_json::from_value(json!("bogus")).unwrap();
        assert!(!t.is_valid());
        let t: Think = serde_json::from_value(json!(false)).unwrap();
        assert!(!t.enabled());
    }

    #[test]
    fn tool_schema_helpers() {
        let t = Tool::function(
            "write",
            "write a file",
            json!({"type":"object","properties":{"filePath":{"type":"string"},"content":{"type":"string"}},"required":["filePath","content"]}),
        );
        assert_eq!(t.param_names(), vec!["filePath", "content"]);
        assert_eq!(t.required_params(), vec!["filePath", "content"]);
        let s = serde_json::to_string(&t).unwrap();
        assert!(s.starts_with(r#"{"type":"function","function":{"name":"write""#));
    }

    #[test]
    fn error_body_shape() {
        let s = serde_json::to_string(&ErrorBody::new("model 'x' not found")).unwrap();
        assert_eq!(s, r#"{"error":"model 'x' not found"}"#);
    }
}

//! tau2 message types as they appear in trajectories and results.json.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    #[serde(default = "assistant")]
    pub requestor: String,
}

fn assistant() -> String {
    "assistant".into()
}

/// One message of a trajectory. `role` is "assistant", "user" or "tool".
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Message {
    pub role: String,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// Tool messages: the id of the call they answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requestor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<bool>,
    #[serde(default)]
    pub turn_idx: Option<u64>,
    #[serde(default)]
    pub timestamp: Option<String>,
}

impl Message {
    pub fn assistant_text(text: &str) -> Message {
        Message {
            role: "assistant".into(),
            content: Some(text.into()),
            ..Default::default()
        }
    }
    pub fn user_text(text: &str) -> Message {
        Message {
            role: "user".into(),
            content: Some(text.into()),
            ..Default::default()
        }
    }
    pub fn with_calls(role: &str, content: Option<String>, calls: Vec<ToolCall>) -> Message {
        Message {
            role: role.into(),
            content,
            tool_calls: Some(calls),
            ..Default::default()
        }
    }
    pub fn tool(id: &str, content: String, requestor: &str, error: bool) -> Message {
        Message {
            role: "tool".into(),
            content: Some(content),
            id: Some(id.into()),
            requestor: Some(requestor.into()),
            error: Some(error),
            ..Default::default()
        }
    }
    pub fn is_tool_call(&self) -> bool {
        self.tool_calls.as_ref().is_some_and(|c| !c.is_empty())
    }
    pub fn text(&self) -> &str {
        self.content.as_deref().unwrap_or("")
    }
}

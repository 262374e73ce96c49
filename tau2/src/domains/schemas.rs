//! The pieces every domain's function schemas are made of (OpenAI style; descriptions
//! written in our own words, parameter names, types and enums following upstream's
//! signatures), and the schemas of the generic tools several domains share.

use lrab_ollama::Tool;
use serde_json::{json, Value};

pub(crate) fn s(d: &str) -> Value {
    json!({"type": "string", "description": d})
}
pub(crate) fn int(d: &str) -> Value {
    json!({"type": "integer", "description": d})
}
pub(crate) fn en(d: &str, vals: &[&str]) -> Value {
    json!({"type": "string", "enum": vals, "description": d})
}
pub(crate) fn strs(d: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": d})
}
pub(crate) fn objs(d: &str, props: Value, req: &[&str]) -> Value {
    json!({"type": "array", "description": d, "items": {"type": "object", "properties": props, "required": req}})
}

pub(crate) fn tool(name: &str, desc: &str, params: &[(&str, Value)], optional: &[&str]) -> Tool {
    let mut props = serde_json::Map::new();
    let mut req = Vec::new();
    for (n, v) in params {
        props.insert(n.to_string(), v.clone());
        if !optional.contains(n) {
            req.push(n.to_string());
        }
    }
    let parameters = json!({"type": "object", "properties": props, "required": req});
    Tool::function(name, desc, parameters)
}

/// The generic tools' schemas (`calculate`, `transfer_to_human_agents`), the same wherever a
/// domain lists them.
pub(crate) fn generic(name: &str) -> Option<Tool> {
    let calc = || {
        tool("calculate", "Evaluate an arithmetic expression made of numbers, + - * /, parentheses and spaces; returns the result rounded to 2 decimals.", &[("expression", s("The expression, e.g. '2 + 2'."))], &[])
    };
    let transfer = || {
        tool("transfer_to_human_agents", "Hand the conversation to a human agent with a summary. Only when the user explicitly asks for a human, or the policy and tools cannot resolve the request.", &[("summary", s("Summary of the user's issue."))], &[])
    };
    match name {
        "calculate" => Some(calc()),
        "transfer_to_human_agents" => Some(transfer()),
        _ => None,
    }
}

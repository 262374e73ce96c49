//! Upstream's heuristic token estimator, reproduced exactly so that our prefill can be compared
//! with Mingbird's published 774/797: per string, CJK ideographs count one each, every other
//! character a quarter (floored), plus one. A tool counts its name, its description and the
//! Python `str()` rendering of its parameter schema.

use crate::messages::{Message, ToolSpec};
use serde_json::Value;

fn is_cjk(c: char) -> bool {
    let u = c as u32;
    (0x4E00..=0x9FFF).contains(&u) || (0x3400..=0x4DBF).contains(&u)
}

/// Tokens of one string by upstream's estimator.
pub fn estimate_str(s: &str) -> usize {
    let mut cjk = 0usize;
    let mut other = 0usize;
    for c in s.chars() {
        if is_cjk(c) {
            cjk += 1;
        } else {
            other += 1;
        }
    }
    cjk + other / 4 + 1
}

/// Python's `repr()` of a string: single quotes unless the text contains a single quote and no
/// double quote.
fn py_str(s: &str, out: &mut String) {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(q);
}

/// Python `str()` of a JSON value parsed into dicts/lists (what upstream measures).
pub fn py_repr(v: &Value) -> String {
    let mut s = String::new();
    py_repr_into(v, &mut s);
    s
}

fn py_repr_into(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => py_str(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_repr_into(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_str(k, out);
                out.push_str(": ");
                py_repr_into(x, out);
            }
            out.push('}');
        }
    }
}

/// Estimate of one tool definition.
pub fn estimate_tool(t: &ToolSpec) -> usize {
    estimate_str(&t.name) + estimate_str(&t.description) + estimate_str(&py_repr(&t.parameters))
}

/// The static prefill: system prompt plus tool definitions.
pub fn prefill_tokens(system: &str, tools: &[ToolSpec]) -> usize {
    estimate_str(system) + tools.iter().map(estimate_tool).sum::<usize>()
}

/// Rough estimate of one message as sent (content, tool calls, a small per-message overhead).
pub fn estimate_message(m: &Message) -> usize {
    let mut n = estimate_str(&m.content) + 3;
    // calls read from the text are not sent (the text that holds them is)
    let sent_calls = if m.text_calls {
        &[][..]
    } else {
        &m.tool_calls[..]
    };
    for c in sent_calls {
        n += estimate_str(&c.name) + estimate_str(&c.arguments.to_string());
    }
    n
}

/// Estimate of a whole request: messages plus tool schemas.
pub fn estimate_request(messages: &[Message], tools: &[ToolSpec]) -> usize {
    messages.iter().map(estimate_message).sum::<usize>()
        + tools.iter().map(estimate_tool).sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn estimator_counts_cjk_and_other() {
        assert_eq!(estimate_str(""), 1);
        assert_eq!(estimate_str("abcd"), 2);
        assert_eq!(estimate_str("abc"), 1);
        assert_eq!(estimate_str("你好abcd"), 2 + 1 + 1);
    }

    #[test]
    fn python_repr_matches_python() {
        let v = json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "x": true, "y": null});
        assert_eq!(
            py_repr(&v),
            "{'type': 'object', 'properties': {'path': {'type': 'string'}}, 'required': ['path'], 'x': True, 'y': None}"
        );
        assert_eq!(py_repr(&json!("it's")), "\"it's\"");
        assert_eq!(py_repr(&json!("a'b\"c")), "'a\\'b\"c'");
        assert_eq!(py_repr(&json!("l1\nl2")), "'l1\\nl2'");
    }
}

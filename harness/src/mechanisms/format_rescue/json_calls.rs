//! JSON call objects in the layouts models write them: `{"name", "arguments"}` with the keys
//! renamed (`parameters`, `args`, `input`, `tool`/`tool_name`/`function`, `action` with
//! `action_input`), the OpenAI wire entry `{"type": "function", "function": {…}}`, a whole
//! `{"tool_calls": […]}` message, an object keyed by the tool's name (`{"run_shell": {…}}`),
//! lists of any of these, and arguments flattened beside the name (weak evidence only). A
//! tool definition echoed back (`description` plus a JSON schema) is not a call, and neither
//! is an object with a name and nothing else.

use super::names;
use super::scan::{Args, Found, Scan};
use super::Catalog;
use serde_json::{Map, Value};

const NAME_KEYS: [&str; 6] = [
    "name",
    "tool_name",
    "tool",
    "function_name",
    "recipient_name",
    "function",
];
const ARG_KEYS: [&str; 9] = [
    "arguments",
    "parameters",
    "args",
    "input",
    "params",
    "action_input",
    "tool_input",
    "kwargs",
    "argument",
];
const WRAPPERS: [&str; 5] = [
    "tool_calls",
    "tool_call",
    "calls",
    "function_call",
    "tool_uses",
];
/// Keys that travel with a call and are not arguments.
const IGNORED: [&str; 6] = ["type", "id", "call_id", "tool_call_id", "index", "thought"];

pub(crate) struct JsonCall {
    pub name: String,
    pub args: Value,
    /// The arguments sat beside the name: only weak evidence.
    pub flattened: bool,
    /// The object holds keys a call does not carry (`ts`, `status`, `ms`: a log record or an
    /// API payload): without a family marker it is data, not a call.
    pub extra: bool,
}

/// Every call in a decoded JSON value.
pub(crate) fn calls(v: &Value, cat: &Catalog) -> Vec<JsonCall> {
    let mut out = Vec::new();
    walk(v, cat, 0, &mut out);
    out
}

/// Push the calls of `v` (found at `at..end`) as one block.
pub(crate) fn push(
    s: &mut Scan,
    at: usize,
    end: usize,
    v: &Value,
    dialect: &'static str,
    weak: bool,
) {
    for c in calls(v, s.cat) {
        if weak && c.extra {
            continue;
        }
        let f = Found::new(at, end, &c.name, Args::Json(c.args), dialect);
        s.push(if weak || c.flattened { f.weak() } else { f });
    }
}

fn walk(v: &Value, cat: &Catalog, depth: usize, out: &mut Vec<JsonCall>) {
    if depth > 4 || out.len() > super::MAX_CALLS * 2 {
        return;
    }
    let m = match v {
        Value::Array(a) => {
            for x in a {
                walk(x, cat, depth + 1, out);
            }
            return;
        }
        Value::Object(m) => m,
        _ => return,
    };
    let ignorable = |k: &str| IGNORED.contains(&k);
    if let Some(f @ Value::Object(_)) = m.get("function") {
        if m.keys().all(|k| k == "function" || ignorable(k)) {
            return walk(f, cat, depth + 1, out);
        }
    }
    let name = NAME_KEYS
        .iter()
        .find_map(|k| m.get(*k).and_then(Value::as_str).map(|n| (*k, n)))
        .or_else(|| {
            m.contains_key("action_input")
                .then(|| {
                    m.get("action")
                        .and_then(Value::as_str)
                        .map(|n| ("action", n))
                })
                .flatten()
        });
    if name.is_none() {
        for w in WRAPPERS {
            if let Some(inner @ (Value::Array(_) | Value::Object(_))) = m.get(w) {
                return walk(inner, cat, depth + 1, out);
            }
        }
    }
    if let Some((nk, name)) = name {
        let args = ARG_KEYS.iter().find_map(|k| m.get(*k).map(|a| (*k, a)));
        match args {
            Some((_, a)) if is_schema(a) => {} // a tool definition echoed back
            Some((ak, a)) => out.push(JsonCall {
                name: name.to_string(),
                args: if a.is_null() {
                    Value::Object(Map::new())
                } else {
                    a.clone()
                },
                flattened: false,
                extra: m
                    .keys()
                    .any(|k| k.as_str() != nk && k.as_str() != ak && !ignorable(k)),
            }),
            None => {
                let rest: Map<String, Value> = m
                    .iter()
                    .filter(|(k, _)| {
                        k.as_str() != nk && !ignorable(k) && k.as_str() != "description"
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if !rest.is_empty() && !m.contains_key("description") {
                    out.push(JsonCall {
                        name: name.to_string(),
                        args: Value::Object(rest),
                        flattened: true,
                        extra: false,
                    });
                }
            }
        }
        return;
    }
    let keys: Vec<(&String, &Value)> = m.iter().filter(|(k, _)| !ignorable(k)).collect();
    if let [(k, a @ Value::Object(_))] = keys.as_slice() {
        if names::resolve_tool(cat, k).is_some() {
            out.push(JsonCall {
                name: k.to_string(),
                args: (*a).clone(),
                flattened: false,
                extra: false,
            });
        }
    }
}

/// A JSON schema where arguments should be: `{"type": "object", "properties": …}`.
fn is_schema(a: &Value) -> bool {
    a.get("properties").is_some_and(Value::is_object)
        || a.get("type").and_then(Value::as_str) == Some("object")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names_of(v: Value) -> Vec<(String, Value, bool)> {
        let cat = Catalog::from_names(&["read_file", "run_shell"]);
        calls(&v, &cat)
            .into_iter()
            .map(|c| (c.name, c.args, c.flattened))
            .collect()
    }

    #[test]
    fn layouts() {
        let want = vec![("read_file".to_string(), json!({"path": "a"}), false)];
        for v in [
            json!({"name": "read_file", "arguments": {"path": "a"}}),
            json!({"name": "read_file", "parameters": {"path": "a"}, "type": "function"}),
            json!({"tool": "read_file", "args": {"path": "a"}}),
            json!({"function": "read_file", "parameters": {"path": "a"}}),
            json!({"action": "read_file", "action_input": {"path": "a"}}),
            json!({"type": "function", "function": {"name": "read_file", "arguments": {"path": "a"}}}),
            json!({"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": {"path": "a"}}}]}),
            json!({"read_file": {"path": "a"}}),
            json!([{"tool_name": "read_file", "parameters": {"path": "a"}}]),
        ] {
            assert_eq!(names_of(v.clone()), want, "{v}");
        }
        assert_eq!(
            names_of(json!({"name": "read_file", "path": "a"})),
            vec![("read_file".to_string(), json!({"path": "a"}), true)]
        );
    }

    #[test]
    fn not_calls() {
        for v in [
            json!({"name": "read_file"}),
            json!({"name": "read_file", "description": "Read", "parameters": {"type": "object", "properties": {}}}),
            json!({"parameters": {"path": "a"}}),
            json!({"result": {"ok": true}}),
            json!({"unknown_tool": {"x": 1}}),
            json!(["read_file", "run_shell"]),
        ] {
            assert!(names_of(v.clone()).is_empty(), "{v}");
        }
    }
}

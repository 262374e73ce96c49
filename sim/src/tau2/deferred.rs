//! Deferred tools: a request that offers a *bridge* — a tool that calls another tool by name
//! (a required string `name` and an object of arguments) — and lists further tools only by
//! name in its text (Qwen Code offers an MCP server's tools this way: `tool_search` reviews
//! them, `tool_call` invokes them). The model reviews the tools it needs with the search
//! tool's `select:` form when the search tool documents one, then calls each through the bridge.

use serde_json::{json, Value};
use std::collections::BTreeMap;

use super::bind;
use super::data::Domain;
use crate::convo::{Call, Conv};
use crate::policy::Turn;

/// The bridge tool and its parameters, and the search tool when one documents `select:`.
pub(crate) struct Bridge {
    call: String,
    name_param: String,
    args_param: String,
    search: Option<(String, String)>,
}

fn props(t: &lrab_ollama::Tool) -> serde_json::Map<String, Value> {
    t.function
        .parameters
        .as_ref()
        .and_then(|p| p.get("properties"))
        .and_then(|p| p.as_object())
        .cloned()
        .unwrap_or_default()
}

/// The bridge a request offers, if any.
pub(crate) fn detect(conv: &Conv) -> Option<Bridge> {
    let ty = |p: &serde_json::Map<String, Value>, k: &str| {
        p.get(k)
            .and_then(|v| v.get("type"))
            .and_then(|v| v.as_str())
            .map(String::from)
    };
    let (call, args_param) = conv.tools.iter().find_map(|t| {
        let p = props(t);
        let req = t.required_params();
        if ty(&p, "name").as_deref() != Some("string") || !req.iter().any(|r| r == "name") {
            return None;
        }
        let args = req
            .iter()
            .find(|r| ty(&p, r).as_deref() == Some("object"))?;
        Some((t.function.name.clone(), args.clone()))
    })?;
    let search = conv.tools.iter().find_map(|t| {
        let p = props(t);
        let documented = t
            .function
            .description
            .as_deref()
            .is_some_and(|d| d.contains("select:"));
        (documented && ty(&p, "query").as_deref() == Some("string"))
            .then(|| (t.function.name.clone(), "query".to_string()))
    });
    Some(Bridge {
        call,
        name_param: "name".into(),
        args_param,
        search,
    })
}

/// The tool names the request's text lists for `d`: every listed name ending in one of the
/// domain's tools, with the prefix most of them share (a policy that mentions a bare tool
/// name does not count), plus the customer tool listed with that prefix.
pub(crate) fn listed(conv: &Conv, d: &Domain) -> Vec<String> {
    let text: String = conv
        .messages
        .iter()
        .filter(|m| m.role == "system" || m.role == "user")
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let tokens: std::collections::BTreeSet<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut prefixes: BTreeMap<&str, usize> = BTreeMap::new();
    for w in &tokens {
        for t in &d.agent_tools {
            if bind(t, &[w.to_string()]).is_some() {
                *prefixes.entry(&w[..w.len() - t.len()]).or_default() += 1;
            }
        }
    }
    let Some((prefix, _)) = prefixes.into_iter().max_by_key(|(p, n)| (*n, p.len())) else {
        return Vec::new();
    };
    tokens
        .iter()
        .filter(|w| w.starts_with(prefix) && w.len() > prefix.len())
        .filter(|w| {
            let l = w.to_lowercase();
            d.agent_tools.iter().any(|t| w[prefix.len()..] == *t)
                || (l.contains("message") && (l.contains("customer") || l.contains("user")))
        })
        .map(|w| w.to_string())
        .collect()
}

/// The conversation with every bridge call read as the call it carries.
pub(crate) fn unwrap(conv: &Conv, b: &Bridge) -> Conv {
    let mut out = conv.clone();
    for m in &mut out.messages {
        for c in &mut m.calls {
            if c.name == b.call {
                if let Some(name) = c.args.get(&b.name_param).and_then(|v| v.as_str()) {
                    *c = Call {
                        name: name.to_string(),
                        args: c.args.get(&b.args_param).cloned().unwrap_or(json!({})),
                    };
                }
            }
        }
    }
    out
}

/// The turn as the request can carry it: a call of a listed tool goes through the bridge,
/// after the search tool has reviewed `needed` once in this conversation.
pub(crate) fn wrap(conv: &Conv, b: &Bridge, mut t: Turn, needed: &[String]) -> Turn {
    let native = |n: &str| conv.tools.iter().any(|x| x.function.name == n);
    let Some(c) = t.calls.first().filter(|c| !native(&c.name)).cloned() else {
        return t;
    };
    if let Some((search, q)) = &b.search {
        let searched = conv
            .messages
            .iter()
            .any(|m| m.calls.iter().any(|c| &c.name == search));
        if !searched && !needed.is_empty() {
            t.calls = vec![Call {
                name: search.clone(),
                args: json!({ q.clone(): format!("select:{}", needed.join(",")) }),
            }];
            return t;
        }
    }
    t.calls = vec![Call {
        name: b.call.clone(),
        args: json!({ b.name_param.clone(): c.name, b.args_param.clone(): c.args }),
    }];
    t
}

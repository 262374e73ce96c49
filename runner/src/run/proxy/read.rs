//! What the trajectory reads of a request (model, stream flag, tool names, messages), read
//! cheaply on the writer thread: a body forwarded untouched is parsed straight into the
//! recorded types (no JSON tree of the whole ~10 kB body, no second copy of every text), and a
//! request the proxy already holds as a tree gives its texts up instead of having them copied.
//! Both give exactly what the tree reading gave (`messages_of` and `tool_names`, kept in
//! `read_tests.rs` as the reference they are tested against); a body the typed reading does not accept (a field of another
//! type, a repeated key, not JSON) is read through the tree as before. One difference, here and
//! in the tree-free request translations ([`super::fast_request`], [`super::fast_to_openai`]):
//! JSON nested deeper than 128 levels inside a field they skip is accepted (serde_json skips
//! without its depth limit), where the tree refused the whole body.

use lrab_records::{TrajectoryMessage, TrajectoryToolCall};
use serde::Deserialize;
use serde_json::Value;

use super::translate::text_of;

/// The trajectory's view of one native request.
#[derive(Debug, PartialEq)]
pub(super) struct Read {
    pub model: String,
    pub stream: bool,
    pub tools: Vec<String>,
    pub messages: Vec<TrajectoryMessage>,
}

/// Reads a native `/api/chat` body as the arm sent it (`model` "" and `stream` true when it
/// does not say, nothing at all when it is not JSON).
pub(super) fn native_body(body: &[u8]) -> Read {
    if let Some(r) = typed(body) {
        return r;
    }
    let v = serde_json::from_slice::<Value>(body).unwrap_or(Value::Null);
    let model = v["model"].as_str().unwrap_or("").to_string();
    let stream = v["stream"].as_bool().unwrap_or(true);
    let (tools, messages) = tree(v);
    Read {
        model,
        stream,
        tools,
        messages,
    }
}

/// The tool names and messages of a native body held as a tree, which is consumed.
pub(super) fn tree(mut v: Value) -> (Vec<String>, Vec<TrajectoryMessage>) {
    let tools = match v.get_mut("tools").and_then(Value::as_array_mut) {
        Some(ts) => ts
            .iter_mut()
            .filter_map(|t| {
                let f = t.get_mut("function").and_then(|f| take_str(f, "name"));
                f.or_else(|| take_str(t, "name"))
            })
            .collect(),
        None => Vec::new(),
    };
    let messages = match v.get_mut("messages").and_then(Value::as_array_mut) {
        Some(ms) => ms.iter_mut().map(message_of_tree).collect(),
        None => Vec::new(),
    };
    (tools, messages)
}

fn take_str(v: &mut Value, k: &str) -> Option<String> {
    match v.get_mut(k) {
        Some(Value::String(s)) => Some(std::mem::take(s)),
        _ => None,
    }
}

fn message_of_tree(m: &mut Value) -> TrajectoryMessage {
    let content = match m.get_mut("content") {
        Some(Value::String(s)) => std::mem::take(s),
        Some(other) => text_of(other),
        None => String::new(),
    };
    let tool_calls = match m.get_mut("tool_calls").and_then(Value::as_array_mut) {
        Some(cs) => cs
            .iter_mut()
            .map(|c| {
                let id = take_str(c, "id");
                let f = c.get_mut("function");
                let (name, arguments) = match f {
                    Some(f) => (
                        take_str(f, "name").unwrap_or_default(),
                        f.get_mut("arguments").map(Value::take).unwrap_or_default(),
                    ),
                    None => (String::new(), Value::Null),
                };
                TrajectoryToolCall {
                    id,
                    name,
                    arguments: arguments_of(arguments),
                }
            })
            .collect(),
        None => Vec::new(),
    };
    TrajectoryMessage {
        role: take_str(m, "role").unwrap_or_default(),
        content,
        thinking: take_str(m, "thinking").filter(|t| !t.is_empty()),
        tool_calls,
        tool_name: take_str(m, "tool_name")
            .or_else(|| take_str(m, "name"))
            .filter(|n| !n.is_empty()),
        tool_call_id: take_str(m, "tool_call_id"),
    }
}

/// A call's arguments as recorded: a JSON string parsed (kept as the string when it is not JSON).
pub(super) fn arguments_of(a: Value) -> Value {
    match a {
        Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        other => other,
    }
}

/// A JSON object read as `T` (a derived struct alone would also take an array, field by
/// field, where the tree reads nothing).
pub(super) struct Obj<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Obj)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct Body {
    model: Option<String>,
    stream: Option<bool>,
    tools: Option<Vec<Obj<Tool>>>,
    messages: Option<Vec<Obj<Msg>>>,
}

#[derive(Deserialize)]
struct Tool {
    function: Option<Obj<Named>>,
    name: Option<String>,
}

#[derive(Deserialize)]
struct Named {
    name: Option<String>,
}

#[derive(Deserialize)]
struct Msg {
    role: Option<String>,
    content: Option<Value>,
    thinking: Option<String>,
    tool_calls: Option<Vec<Obj<Call>>>,
    tool_name: Option<String>,
    name: Option<String>,
    tool_call_id: Option<String>,
}

#[derive(Deserialize)]
struct Call {
    id: Option<String>,
    function: Option<Obj<Function>>,
}

#[derive(Deserialize)]
struct Function {
    name: Option<String>,
    arguments: Option<Value>,
}

/// The typed reading; `None` when the body is not exactly what it reads (then the tree does).
/// The body must be UTF-8 as a whole, as the tree's parse requires (skipped fields are not
/// checked by the typed one).
fn typed(body: &[u8]) -> Option<Read> {
    let text = std::str::from_utf8(body).ok()?;
    let Obj(b) = serde_json::from_str::<Obj<Body>>(text).ok()?;
    let tools = b
        .tools
        .unwrap_or_default()
        .into_iter()
        .filter_map(|Obj(t)| t.function.and_then(|Obj(f)| f.name).or(t.name))
        .collect();
    let messages = b
        .messages
        .unwrap_or_default()
        .into_iter()
        .map(|Obj(m)| TrajectoryMessage {
            role: m.role.unwrap_or_default(),
            content: match m.content {
                Some(Value::String(s)) => s,
                Some(other) => text_of(&other),
                None => String::new(),
            },
            thinking: m.thinking.filter(|t| !t.is_empty()),
            tool_calls: m
                .tool_calls
                .unwrap_or_default()
                .into_iter()
                .map(|Obj(c)| {
                    let (name, arguments) = match c.function {
                        Some(Obj(f)) => {
                            (f.name.unwrap_or_default(), f.arguments.unwrap_or_default())
                        }
                        None => (String::new(), Value::Null),
                    };
                    TrajectoryToolCall {
                        id: c.id,
                        name,
                        arguments: arguments_of(arguments),
                    }
                })
                .collect(),
            tool_name: m.tool_name.or(m.name).filter(|n| !n.is_empty()),
            tool_call_id: m.tool_call_id,
        })
        .collect();
    Some(Read {
        model: b.model.unwrap_or_default(),
        stream: b.stream.unwrap_or(true),
        tools,
        messages,
    })
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;

//! `/v1/chat/completions` → native `/api/chat` without JSON trees of the request: the OpenAI
//! body is read by borrowed typed structs (texts without escapes are not even copied), the
//! native body written straight out, and the trajectory's reading of it (tool names, messages)
//! built on the way. It writes exactly the bytes [`super::translate::openai_to_native`] and
//! its serialization write, and reads exactly what the trajectory reads of that tree (tested
//! against both); a request it does not read exactly (a message's content in parts, a field
//! of another type, a repeated key) returns `None` and takes the tree's way.

use std::borrow::Cow;
use std::collections::HashMap;

use lrab_records::{ThinkSetting, TrajectoryMessage, TrajectoryToolCall};
use serde::{Deserialize, Deserializer};
use serde_json::{json, Value};

use super::borrow::opt_cow;
use super::read::{arguments_of, Obj};

/// A field as the tree holds it, telling an absent field from a `null` one.
#[derive(Default)]
pub(super) enum Field {
    #[default]
    Absent,
    Present(Value),
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Field::Present)
    }
}

impl Field {
    pub(super) fn get(&self) -> Option<&Value> {
        match self {
            Field::Absent => None,
            Field::Present(v) => Some(v),
        }
    }

    pub(super) fn value(&self) -> &Value {
        self.get().unwrap_or(&Value::Null)
    }
}

#[derive(Deserialize)]
struct Request<'a> {
    #[serde(default)]
    model: Field,
    #[serde(borrow)]
    messages: Option<Vec<Obj<Msg<'a>>>>,
    #[serde(default)]
    stream: Field,
    #[serde(default)]
    stream_options: Field,
    #[serde(default)]
    max_tokens: Field,
    #[serde(default)]
    max_completion_tokens: Field,
    #[serde(default)]
    top_p: Field,
    #[serde(default)]
    seed: Field,
    #[serde(default)]
    stop: Field,
    #[serde(default)]
    frequency_penalty: Field,
    #[serde(default)]
    presence_penalty: Field,
    #[serde(default)]
    tools: Field,
    #[serde(default)]
    response_format: Field,
}

#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tool_calls: Option<Vec<Obj<Call<'a>>>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    tool_call_id: Option<Cow<'a, str>>,
}

/// A tool call as both fast paths read it.
#[derive(Deserialize)]
pub(super) struct Call<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub function: Option<Obj<Function<'a>>>,
}

/// A tool call's function as both fast paths read it.
#[derive(Deserialize)]
pub(super) struct Function<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub name: Option<Cow<'a, str>>,
    pub arguments: Option<Value>,
}

/// The native request and what the trajectory reads of it.
pub(super) struct Native {
    pub body: Vec<u8>,
    pub model: String,
    pub stream: bool,
    pub include_usage: bool,
    pub tools: Vec<String>,
    pub messages: Vec<TrajectoryMessage>,
}

/// The OpenAI request `body` as a normalized native one (`None`: the tree's way).
pub(super) fn v1_to_native(body: &[u8], num_ctx: u64, think: ThinkSetting) -> Option<Native> {
    let text = std::str::from_utf8(body).ok()?;
    let Obj(req) = serde_json::from_str::<Obj<Request>>(text).ok()?;
    let mut out = Vec::with_capacity(body.len() + 256);
    out.extend_from_slice(b"{\"model\":");
    serde_json::to_writer(&mut out, req.model.value()).ok()?;
    out.extend_from_slice(b",\"messages\":[");
    let messages = write_messages(&mut out, req.messages.unwrap_or_default())?;
    let stream = req.stream.value().as_bool().unwrap_or(false);
    out.extend_from_slice(if stream {
        b"],\"stream\":true,\"options\":{"
    } else {
        b"],\"stream\":false,\"options\":{"
    });
    let num_predict = req.max_tokens.get().or(req.max_completion_tokens.get());
    let copied = [
        ("num_predict", num_predict),
        ("top_p", req.top_p.get()),
        ("seed", req.seed.get()),
        ("stop", req.stop.get()),
        ("frequency_penalty", req.frequency_penalty.get()),
        ("presence_penalty", req.presence_penalty.get()),
    ];
    for (k, v) in copied {
        match v {
            Some(v) if k == "num_predict" || !v.is_null() => {
                out.extend_from_slice(format!("\"{k}\":").as_bytes());
                serde_json::to_writer(&mut out, v).ok()?;
                out.push(b',');
            }
            _ => {}
        }
    }
    out.extend_from_slice(format!("\"temperature\":0,\"num_ctx\":{num_ctx}}}").as_bytes());
    let tools = match req.tools.get().filter(|t| t.is_array()) {
        Some(t) => {
            out.extend_from_slice(b",\"tools\":");
            serde_json::to_writer(&mut out, t).ok()?;
            tool_names(t)
        }
        None => Vec::new(),
    };
    if req.response_format.value()["type"] == "json_object" {
        out.extend_from_slice(b",\"format\":\"json\"");
    }
    match think {
        ThinkSetting::Off => out.extend_from_slice(b",\"think\":false"),
        ThinkSetting::On => out.extend_from_slice(b",\"think\":true"),
        ThinkSetting::Model => {}
    }
    out.push(b'}');
    Some(Native {
        body: out,
        model: req.model.value().as_str().unwrap_or("").to_string(),
        stream,
        include_usage: req.stream_options.value()["include_usage"]
            .as_bool()
            .unwrap_or(false),
        tools,
        messages,
    })
}

/// Writes `s` as a JSON string, the bytes `serde_json` writes. A text borrowed from the
/// request had no escape in it there, and a JSON string holds no raw quote, backslash or
/// control character, the only characters `serde_json` escapes: so it is its own escaped form
/// and is copied as it is, without the byte-by-byte escaping (a fifth of a translation's time).
#[allow(clippy::ptr_arg)] // whether it is borrowed is the point
pub(super) fn write_str(out: &mut Vec<u8>, s: &Cow<str>) {
    match s {
        Cow::Borrowed(b) => {
            debug_assert!(!b.bytes().any(|c| c == b'"' || c == b'\\' || c < 0x20));
            out.push(b'"');
            out.extend_from_slice(b.as_bytes());
            out.push(b'"');
        }
        Cow::Owned(o) => {
            // writing into a Vec cannot fail
            let _ = serde_json::to_writer(&mut *out, o.as_str());
        }
    }
}

pub(super) fn tool_names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().or(t["name"].as_str()))
        .map(str::to_string)
        .collect()
}

/// Writes the native messages (without the brackets) and returns them as recorded.
fn write_messages(out: &mut Vec<u8>, msgs: Vec<Obj<Msg>>) -> Option<Vec<TrajectoryMessage>> {
    let mut names_by_id: HashMap<Cow<str>, Cow<str>> = HashMap::new();
    let mut recorded = Vec::with_capacity(msgs.len());
    for (i, Obj(m)) in msgs.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let role = m.role.unwrap_or(Cow::Borrowed("user"));
        let content = m.content.unwrap_or_default();
        out.extend_from_slice(b"{\"role\":");
        write_str(out, &role);
        out.extend_from_slice(b",\"content\":");
        write_str(out, &content);
        let mut calls = Vec::new();
        if let Some(cs) = m.tool_calls {
            out.extend_from_slice(b",\"tool_calls\":[");
            for (j, Obj(c)) in cs.into_iter().enumerate() {
                let call = write_call(out, j, c, &mut names_by_id)?;
                calls.push(call);
            }
            out.push(b']');
        }
        let (mut tool_name, mut tool_call_id) = (None, None);
        if role == "tool" {
            let name = match (m.name, &m.tool_call_id) {
                (Some(n), _) => n,
                (None, Some(id)) => names_by_id.get(id.as_ref()).cloned().unwrap_or_default(),
                (None, None) => Cow::Borrowed(""),
            };
            out.extend_from_slice(b",\"tool_name\":");
            write_str(out, &name);
            if let Some(id) = &m.tool_call_id {
                out.extend_from_slice(b",\"tool_call_id\":");
                write_str(out, id);
            }
            tool_name = Some(name.into_owned()).filter(|n| !n.is_empty());
            tool_call_id = m.tool_call_id.map(Cow::into_owned);
        }
        out.push(b'}');
        recorded.push(TrajectoryMessage {
            role: role.into_owned(),
            content: content.into_owned(),
            thinking: None,
            tool_calls: calls,
            tool_name,
            tool_call_id,
        });
    }
    Some(recorded)
}

/// Writes one native tool call (`j`: its place in the message) and returns it as recorded.
fn write_call<'a>(
    out: &mut Vec<u8>,
    j: usize,
    c: Call<'a>,
    names_by_id: &mut HashMap<Cow<'a, str>, Cow<'a, str>>,
) -> Option<TrajectoryToolCall> {
    let (name, arguments) = match c.function {
        Some(Obj(f)) => (f.name.unwrap_or_default(), f.arguments),
        None => (Cow::Borrowed(""), None),
    };
    if let Some(id) = &c.id {
        names_by_id.insert(id.clone(), name.clone());
    }
    let args = match arguments {
        Some(Value::String(s)) => serde_json::from_str(&s).unwrap_or_else(|_| json!({})),
        Some(v @ Value::Object(_)) => v,
        _ => json!({}),
    };
    if j > 0 {
        out.push(b',');
    }
    out.extend_from_slice(b"{\"function\":{\"name\":");
    write_str(out, &name);
    out.extend_from_slice(b",\"arguments\":");
    serde_json::to_writer(&mut *out, &args).ok()?;
    out.push(b'}');
    if let Some(id) = &c.id {
        out.extend_from_slice(b",\"id\":");
        write_str(out, id);
    }
    out.push(b'}');
    Some(TrajectoryToolCall {
        id: c.id.map(Cow::into_owned),
        name: name.into_owned(),
        arguments: arguments_of(args),
    })
}

#[cfg(test)]
#[path = "fast_request_tests.rs"]
mod tests;

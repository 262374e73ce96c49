//! A normalized native `/api/chat` request → an OpenAI backend's chat completions, without
//! JSON trees of the request: the native body is read by borrowed typed structs, the OpenAI
//! body written straight out, and the trajectory's reading of the request built on the way.
//! It writes exactly the bytes [`super::translate::normalize_native`] +
//! [`OpenaiUpstream::chat_request`] + serialization write, and reads what the trajectory reads
//! of that tree (tested against both); a request it does not read exactly (content in parts, a
//! field of another type, a repeated key) returns `None` and takes the tree's way.

use std::borrow::Cow;

use lrab_records::{ThinkSetting, TrajectoryMessage, TrajectoryToolCall};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::borrow::opt_cow;
use super::fast_request::{tool_names, write_str, Call, Field};
use super::openai_upstream::{answered_call_id, OpenaiUpstream};
use super::read::{arguments_of, Obj};

#[derive(Deserialize)]
struct Request<'a> {
    #[serde(default)]
    model: Field,
    #[serde(borrow)]
    messages: Option<Vec<Obj<Msg<'a>>>>,
    #[serde(default)]
    stream: Field,
    #[serde(default)]
    tools: Field,
    #[serde(default)]
    options: Field,
    #[serde(default)]
    format: Field,
}

#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tool_calls: Option<Vec<Obj<Call<'a>>>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    tool_name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    tool_call_id: Option<Cow<'a, str>>,
}

/// The OpenAI request and what the trajectory reads of the native one.
pub(super) struct Openai {
    pub body: Vec<u8>,
    pub model: String,
    pub stream: bool,
    pub tools: Vec<String>,
    pub messages: Vec<TrajectoryMessage>,
}

/// The native request `body`, normalized (`num_ctx` aside, which chat completions do not
/// carry) and pinned to `think`, as chat completions for `up` (`None`: the tree's way).
pub(super) fn native_to_openai(
    body: &[u8],
    up: &OpenaiUpstream,
    think: ThinkSetting,
) -> Option<Openai> {
    let text = std::str::from_utf8(body).ok()?;
    let Obj(req) = serde_json::from_str::<Obj<Request>>(text).ok()?;
    let stream = req.stream.value().as_bool().unwrap_or(true);
    let mut out = Vec::with_capacity(body.len() + 256);
    out.extend_from_slice(b"{\"model\":");
    serde_json::to_writer(&mut out, req.model.value()).ok()?;
    out.extend_from_slice(b",\"messages\":[");
    let messages = write_messages(&mut out, req.messages.unwrap_or_default())?;
    out.extend_from_slice(if stream {
        b"],\"stream\":true,\"stream_options\":{\"include_usage\":true}"
    } else {
        b"],\"stream\":false"
    });
    let tools = match req.tools.get().filter(|t| t.is_array()) {
        Some(t) => {
            out.extend_from_slice(b",\"tools\":");
            serde_json::to_writer(&mut out, t).ok()?;
            tool_names(t)
        }
        None => Vec::new(),
    };
    // normalized: temperature 0, then what the arm's options say
    out.extend_from_slice(b",\"temperature\":0");
    let o = req.options.value();
    for k in super::SHARED_SAMPLING {
        if let Some(v) = o.get(k).filter(|v| !v.is_null()) {
            out.extend_from_slice(format!(",\"{k}\":").as_bytes());
            serde_json::to_writer(&mut out, v).ok()?;
        }
    }
    if let Some(n) = o["num_predict"].as_i64().filter(|n| *n > 0) {
        out.extend_from_slice(format!(",\"max_tokens\":{n}").as_bytes());
    }
    match req.format.value() {
        Value::String(s) if s == "json" => {
            out.extend_from_slice(b",\"response_format\":{\"type\":\"json_object\"}")
        }
        s @ Value::Object(_) => {
            out.extend_from_slice(b",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"output\",\"schema\":");
            serde_json::to_writer(&mut out, s).ok()?;
            out.extend_from_slice(b"}}");
        }
        _ => {}
    }
    let pinned = match think {
        ThinkSetting::Off => Value::Bool(false),
        ThinkSetting::On => Value::Bool(true),
        ThinkSetting::Model => Value::Null,
    };
    let mut tail = Map::new();
    up.think_fields(&pinned, &mut tail);
    for (k, v) in &tail {
        out.push(b',');
        serde_json::to_writer(&mut out, k).ok()?;
        out.push(b':');
        serde_json::to_writer(&mut out, v).ok()?;
    }
    out.push(b'}');
    Some(Openai {
        body: out,
        model: req.model.value().as_str().unwrap_or("").to_string(),
        stream,
        tools,
        messages,
    })
}

/// The role of a message that names none.
const USER: Cow<str> = Cow::Borrowed("user");

/// Writes the OpenAI messages (without the brackets) and returns the native ones as recorded.
fn write_messages(out: &mut Vec<u8>, msgs: Vec<Obj<Msg>>) -> Option<Vec<TrajectoryMessage>> {
    let mut open: Vec<(String, String)> = Vec::new();
    let mut recorded = Vec::with_capacity(msgs.len());
    for (i, Obj(m)) in msgs.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let role = m.role.as_ref().unwrap_or(&USER);
        let content = m.content.unwrap_or_default();
        out.extend_from_slice(b"{\"role\":");
        write_str(out, role);
        out.extend_from_slice(b",\"content\":");
        write_str(out, &content);
        let calls = m.tool_calls.unwrap_or_default();
        if !calls.is_empty() {
            open.clear();
            out.extend_from_slice(b",\"tool_calls\":[");
        }
        let mut rec_calls = Vec::with_capacity(calls.len());
        for (k, Obj(c)) in calls.into_iter().enumerate() {
            rec_calls.push(write_call(out, i, k, c, &mut open)?);
        }
        if !rec_calls.is_empty() {
            out.push(b']');
        }
        let name = m.tool_name.as_deref().or(m.name.as_deref()).unwrap_or("");
        if *role == "tool" {
            let id = answered_call_id(&mut open, m.tool_call_id.as_deref(), name, i);
            out.extend_from_slice(b",\"tool_call_id\":");
            serde_json::to_writer(&mut *out, &id).ok()?;
        }
        out.push(b'}');
        recorded.push(TrajectoryMessage {
            role: m.role.map(Cow::into_owned).unwrap_or_default(),
            content: content.into_owned(),
            thinking: m.thinking.filter(|t| !t.is_empty()).map(Cow::into_owned),
            tool_calls: rec_calls,
            tool_name: Some(name.to_string()).filter(|n| !n.is_empty()),
            tool_call_id: m.tool_call_id.map(Cow::into_owned),
        });
    }
    Some(recorded)
}

/// Writes call `k` of message `i` and returns it as recorded; notes it as unanswered.
fn write_call(
    out: &mut Vec<u8>,
    i: usize,
    k: usize,
    c: Call,
    open: &mut Vec<(String, String)>,
) -> Option<TrajectoryToolCall> {
    let (name, arguments) = match c.function {
        Some(Obj(f)) => (f.name.unwrap_or_default(), f.arguments.unwrap_or_default()),
        None => (Cow::Borrowed(""), Value::Null),
    };
    let id =
        c.id.as_deref()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| format!("call_{i}_{k}"));
    open.push((id.clone(), name.to_string()));
    if k > 0 {
        out.push(b',');
    }
    out.extend_from_slice(b"{\"id\":");
    serde_json::to_writer(&mut *out, &id).ok()?;
    out.extend_from_slice(b",\"type\":\"function\",\"function\":{\"name\":");
    write_str(out, &name);
    out.extend_from_slice(b",\"arguments\":");
    match &arguments {
        Value::String(s) => serde_json::to_writer(&mut *out, s).ok()?,
        Value::Null => out.extend_from_slice(b"\"{}\""),
        v => serde_json::to_writer(&mut *out, &v.to_string()).ok()?,
    }
    out.extend_from_slice(b"}}");
    Some(TrajectoryToolCall {
        id: c.id.map(Cow::into_owned),
        name: name.into_owned(),
        arguments: arguments_of(arguments),
    })
}

#[cfg(test)]
#[path = "fast_to_openai_tests.rs"]
mod tests;

//! Writing the trajectory: each request's messages in the one recorded shape, and one
//! `proxy.jsonl` line per request holding only what is new since the previous request.

use std::path::PathBuf;
use std::sync::Mutex;

use lrab_records::{TrajectoryEntry, TrajectoryMessage, TrajectoryToolCall};
use serde_json::Value;

use super::translate::text_of;

/// The messages of a native `/api/chat` body (what every recorded request is translated to).
pub fn messages_of(native: &Value) -> Vec<TrajectoryMessage> {
    native["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| TrajectoryMessage {
            role: m["role"].as_str().unwrap_or("").to_string(),
            content: text_of(&m["content"]),
            thinking: m["thinking"]
                .as_str()
                .filter(|t| !t.is_empty())
                .map(str::to_string),
            tool_calls: m["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| TrajectoryToolCall {
                    id: c["id"].as_str().map(str::to_string),
                    name: c["function"]["name"].as_str().unwrap_or("").to_string(),
                    arguments: match &c["function"]["arguments"] {
                        Value::String(s) => {
                            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
                        }
                        other => other.clone(),
                    },
                })
                .collect(),
            tool_name: m["tool_name"]
                .as_str()
                .or(m["name"].as_str())
                .filter(|n| !n.is_empty())
                .map(str::to_string),
            tool_call_id: m["tool_call_id"].as_str().map(str::to_string),
        })
        .collect()
}

/// Names of the tools a request offers (native/OpenAI `function.name`, Responses `name`).
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().or(t["name"].as_str()))
        .map(str::to_string)
        .collect()
}

/// Appends the entries of one proxy; the previous request's messages are kept so a line only
/// holds the new ones.
#[derive(Debug, Default)]
pub struct Recorder {
    log: Option<PathBuf>,
    previous: Mutex<Option<Vec<TrajectoryMessage>>>,
}

impl Recorder {
    pub fn new(log: Option<PathBuf>) -> Recorder {
        Recorder {
            log,
            previous: Mutex::new(None),
        }
    }

    /// Writes `e` for a request whose whole message list is `messages`. The delta and the
    /// append happen under one lock, so the file's order is the order the deltas refer to.
    pub fn write(&self, mut e: TrajectoryEntry, messages: Vec<TrajectoryMessage>) {
        let Some(log) = &self.log else {
            return;
        };
        let mut prev = self.previous.lock().unwrap_or_else(|p| p.into_inner());
        let (prefix, new) = TrajectoryEntry::delta(prev.as_deref(), &messages);
        e.prefix_messages = prefix;
        e.messages = new;
        if let Err(err) = lrab_records::append_jsonl(log, &e) {
            eprintln!("lrab proxy: {err}");
        }
        *prev = Some(messages);
    }
}

//! `proxy.jsonl`: the trajectory of an attempt as the runner's proxy saw it on the wire, one line
//! per model request, for every arm (docs/runner.md, *Proxy*). The runner takes the cells.csv
//! token, call and turn counts from it and renders `transcript.txt` from it.
//!
//! A request usually repeats the previous one and appends to it, so a line keeps only the
//! messages that are new: `prefix_messages` says how many leading messages it shares with the
//! previous request of the attempt ([`TrajectoryEntry::delta`]), and [`TrajectoryEntry::requests`]
//! rebuilds every request whole. A request that does not extend the previous one is recorded
//! whole (`prefix_messages` 0), so a file stays linear in the conversation's length.
//!
//! Messages are in one shape whatever API the arm spoke (Ollama's native one): OpenAI chat and
//! Responses requests are translated before they are recorded.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::RecordError;

/// One model request through the proxy and what came back.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TrajectoryEntry {
    /// Schema version of the line (1: the first layout, tokens only).
    #[serde(default = "crate::legacy_version")]
    pub schema_version: u32,
    /// When the request reached the proxy, milliseconds since the Unix epoch.
    #[serde(default)]
    pub time_ms: Option<u64>,
    /// From the request reaching the proxy to the last byte of the answer relayed.
    #[serde(default)]
    pub elapsed_ms: Option<f64>,
    /// Request path (`/api/chat`, `/v1/chat/completions`, `/v1/responses`).
    #[serde(default)]
    pub path: String,
    /// Model named in the request.
    #[serde(default)]
    pub model: String,
    /// HTTP status of the answer the arm got.
    #[serde(default)]
    pub status: u16,
    /// What went wrong: the backend's error message, or the proxy's own.
    #[serde(default)]
    pub error: Option<String>,
    /// The answer was streamed.
    #[serde(default)]
    pub stream: bool,
    /// An OpenAI request was rewritten onto the native API (to pin the context length).
    #[serde(default)]
    pub rewritten_to_native: bool,
    /// Leading messages shared with the previous request of the attempt (not repeated here).
    #[serde(default)]
    pub prefix_messages: usize,
    /// The request's messages after the shared prefix.
    #[serde(default)]
    pub messages: Vec<TrajectoryMessage>,
    /// Names of the tools the request offered.
    #[serde(default)]
    pub tools: Vec<String>,
    /// The model's reply; absent when the request failed.
    #[serde(default)]
    pub reply: Option<TrajectoryReply>,
    /// Prompt tokens the backend counted (cached ones included).
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    /// Completion tokens the backend counted.
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    /// Prompt tokens served from the backend's KV cache, when it said.
    #[serde(default)]
    pub cached_prompt_tokens: Option<u64>,
    /// Prompt tokens the backend had to evaluate, when it said (or when it gave the cached
    /// count and the total).
    #[serde(default)]
    pub uncached_prompt_tokens: Option<u64>,
    /// Ollama's `load_duration`.
    #[serde(default)]
    pub load_duration_ns: Option<u64>,
    /// Ollama's `prompt_eval_duration` (the uncached tokens' time).
    #[serde(default)]
    pub prompt_eval_duration_ns: Option<u64>,
    /// Ollama's `eval_duration`.
    #[serde(default)]
    pub eval_duration_ns: Option<u64>,
    /// Ollama's `total_duration`.
    #[serde(default)]
    pub total_duration_ns: Option<u64>,
}

/// One message of a request, in one shape for every API.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TrajectoryMessage {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// Its text.
    #[serde(default)]
    pub content: String,
    /// Reasoning text of an assistant message, when the request carried it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Tool calls of an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<TrajectoryToolCall>,
    /// The tool a `tool` message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The call id a `tool` message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// One tool call, as the model made it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TrajectoryToolCall {
    /// The call id, when the API has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments: an object, or the raw string when it was not JSON.
    #[serde(default)]
    pub arguments: Value,
}

/// The model's answer to one request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TrajectoryReply {
    /// Visible text.
    #[serde(default)]
    pub content: String,
    /// Reasoning text, when the backend returned it apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Tool calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<TrajectoryToolCall>,
    /// Why generation stopped (`stop`, `length`, …), when the backend said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_reason: Option<String>,
}

impl TrajectoryEntry {
    /// The version this build writes; readers accept it and older ones.
    pub const SCHEMA_VERSION: u32 = 2;

    /// The shared prefix and the new messages of `current` after `previous` (the last request
    /// of the attempt): the new tail when `current` extends `previous`, else all of it.
    pub fn delta(
        previous: Option<&[TrajectoryMessage]>,
        current: &[TrajectoryMessage],
    ) -> (usize, Vec<TrajectoryMessage>) {
        match previous {
            Some(p) if !p.is_empty() && current.len() >= p.len() && current[..p.len()] == *p => {
                (p.len(), current[p.len()..].to_vec())
            }
            _ => (0, current.to_vec()),
        }
    }

    /// Every request's whole message list, rebuilt from the prefixes. A prefix longer than the
    /// previous request (a line lost to a crash) keeps what is there.
    pub fn requests(entries: &[TrajectoryEntry]) -> Vec<Vec<TrajectoryMessage>> {
        let mut out: Vec<Vec<TrajectoryMessage>> = Vec::with_capacity(entries.len());
        for e in entries {
            let mut full = match out.last() {
                Some(prev) => prev[..e.prefix_messages.min(prev.len())].to_vec(),
                None => Vec::new(),
            };
            full.extend(e.messages.iter().cloned());
            out.push(full);
        }
        out
    }

    /// Whether the request was answered with a reply (a model turn).
    pub fn is_turn(&self) -> bool {
        self.status < 400 && self.reply.is_some()
    }

    /// Tool calls in the reply.
    pub fn reply_tool_calls(&self) -> usize {
        self.reply.as_ref().map_or(0, |r| r.tool_calls.len())
    }

    /// The entries of a proxy log. A torn line (the proxy died while writing it) is skipped, so
    /// a crashed proxy's file reads up to its last complete record; a line from a newer suite is
    /// an error naming it.
    pub fn load(path: &Path) -> Result<Vec<TrajectoryEntry>, RecordError> {
        let text = std::fs::read_to_string(path).map_err(|e| RecordError::io(path, e))?;
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let Ok(e) = serde_json::from_str::<TrajectoryEntry>(line) else {
                continue;
            };
            if e.schema_version > Self::SCHEMA_VERSION {
                return Err(RecordError::invalid(
                    path,
                    Some(i + 1),
                    format!(
                        "the trajectory line has schema_version {}; this lrab reads up to {} (upgrade lrab)",
                        e.schema_version,
                        Self::SCHEMA_VERSION
                    ),
                ));
            }
            out.push(e);
        }
        Ok(out)
    }
}

/// The entries of a proxy log (torn lines skipped); `None` when there is no readable log.
pub fn read_trajectory(path: &Path) -> Option<Vec<TrajectoryEntry>> {
    TrajectoryEntry::load(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(role: &str, content: &str) -> TrajectoryMessage {
        TrajectoryMessage {
            role: role.into(),
            content: content.into(),
            ..Default::default()
        }
    }

    #[test]
    fn legacy_lines_load() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("proxy.jsonl");
        std::fs::write(
            &p,
            "{\"path\":\"/api/chat\",\"model\":\"m\",\"status\":200,\"stream\":true,\"rewritten_to_native\":false,\"prompt_tokens\":12,\"completion_tokens\":3}\n{\"path\":",
        )
        .unwrap();
        let v = read_trajectory(&p).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].schema_version, 1);
        assert_eq!(v[0].prompt_tokens, Some(12));
        assert!(v[0].messages.is_empty() && v[0].reply.is_none());
        assert_eq!(v[0].cached_prompt_tokens, None);
        assert!(!v[0].is_turn());
    }

    #[test]
    fn delta_keeps_only_new_messages_and_requests_rebuild_them() {
        let r1 = vec![msg("system", "s"), msg("user", "u")];
        let (p1, n1) = TrajectoryEntry::delta(None, &r1);
        assert_eq!((p1, n1.len()), (0, 2));
        let mut r2 = r1.clone();
        r2.push(msg("assistant", "a"));
        r2.push(msg("tool", "t"));
        let (p2, n2) = TrajectoryEntry::delta(Some(&r1), &r2);
        assert_eq!(p2, 2);
        assert_eq!(n2, r2[2..].to_vec());
        // compaction: the history was rewritten, so the request is recorded whole
        let r3 = vec![msg("system", "s"), msg("user", "summary")];
        let (p3, n3) = TrajectoryEntry::delta(Some(&r2), &r3);
        assert_eq!((p3, n3.len()), (0, 2));
        let entries: Vec<TrajectoryEntry> = [(p1, n1), (p2, n2), (p3, n3)]
            .into_iter()
            .map(|(prefix_messages, messages)| TrajectoryEntry {
                schema_version: TrajectoryEntry::SCHEMA_VERSION,
                prefix_messages,
                messages,
                ..Default::default()
            })
            .collect();
        assert_eq!(TrajectoryEntry::requests(&entries), vec![r1, r2, r3]);
    }

    #[test]
    fn a_crashed_writer_leaves_a_readable_file_and_newer_lines_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("proxy.jsonl");
        let e = TrajectoryEntry {
            schema_version: TrajectoryEntry::SCHEMA_VERSION,
            path: "/api/chat".into(),
            status: 200,
            messages: vec![msg("user", "hi")],
            tools: vec!["bash".into()],
            reply: Some(TrajectoryReply {
                content: "ok".into(),
                tool_calls: vec![TrajectoryToolCall {
                    id: None,
                    name: "bash".into(),
                    arguments: serde_json::json!({"command": "ls"}),
                }],
                ..Default::default()
            }),
            prompt_tokens: Some(40),
            cached_prompt_tokens: Some(30),
            uncached_prompt_tokens: Some(10),
            ..Default::default()
        };
        crate::append_jsonl(&p, &e).unwrap();
        let whole = serde_json::to_string(&e).unwrap();
        // the proxy died in the middle of its second line
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &whole.as_bytes()[..50]))
            .unwrap();
        let v = TrajectoryEntry::load(&p).unwrap();
        assert_eq!(v, vec![e.clone()]);
        assert!(v[0].is_turn() && v[0].reply_tool_calls() == 1);
        let mut newer = e;
        newer.schema_version = TrajectoryEntry::SCHEMA_VERSION + 1;
        crate::append_jsonl(&p, &newer).unwrap();
        let err = TrajectoryEntry::load(&p).unwrap_err().to_string();
        assert!(
            err.contains("proxy.jsonl:3") && err.contains("schema_version"),
            "{err}"
        );
        assert!(read_trajectory(&d.path().join("none.jsonl")).is_none());
    }
}

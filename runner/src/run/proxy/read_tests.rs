//! The cheap readings give exactly what the tree reading (the reference, below) gives.

use lrab_records::{TrajectoryMessage, TrajectoryToolCall};
use serde_json::{json, Value};

use super::super::translate::text_of;
use super::{native_body, tree, typed, Read};

/// The messages of a native `/api/chat` body (what every recorded request is translated to).
fn messages_of(native: &Value) -> Vec<TrajectoryMessage> {
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

/// What the trajectory read of a body before: a tree of the whole body.
fn reference(body: &[u8]) -> Read {
    let v = serde_json::from_slice::<Value>(body).unwrap_or(Value::Null);
    Read {
        model: v["model"].as_str().unwrap_or("").to_string(),
        stream: v["stream"].as_bool().unwrap_or(true),
        tools: super::super::fast_request::tool_names(&v["tools"]),
        messages: messages_of(&v),
    }
}

fn check(body: &[u8]) {
    let want = reference(body);
    assert_eq!(native_body(body), want, "{}", String::from_utf8_lossy(body));
    let v = serde_json::from_slice::<Value>(body).unwrap_or(Value::Null);
    assert_eq!(tree(v), (want.tools, want.messages));
}

fn varied() -> Value {
    json!({
        "model": "qwen3:8b", "stream": false, "options": {"temperature": 0.2, "deep": [[[1]]]},
        "tools": [
            {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}},
            {"type": "custom", "name": "apply_patch"},
            {"type": "function", "function": {"description": "no name"}},
            {"type": "function", "function": null, "name": "outer"}
        ],
        "messages": [
            {"role": "system", "content": "be \"careful\"\n\u{e9}\u{1F600}"},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image"}, {"text": "b"}]},
            {"role": "assistant", "content": null, "thinking": "", "tool_calls": [
                {"id": "c1", "function": {"name": "bash", "arguments": "{\"cmd\": \"ls\", \"n\": 1.5}"}},
                {"function": {"name": "bash", "arguments": "not json"}},
                {"id": "c3", "function": {"name": "x", "arguments": {"k": [1, 2.25, null]}}},
                {"id": "c4", "function": {"name": "y"}},
                {"id": "c5"}
            ]},
            {"role": "assistant", "content": 42, "thinking": "hmm"},
            {"role": "tool", "content": "out", "tool_name": "bash", "tool_call_id": "c1"},
            {"role": "tool", "content": "out", "name": "x"},
            {"role": "tool", "content": "out", "tool_name": "", "name": "x"},
            {"content": "no role", "tool_calls": null, "images": ["aGk="]},
            {}
        ]
    })
}

#[test]
fn the_typed_reading_reads_what_the_tree_reads() {
    let v = varied();
    let body = v.to_string();
    assert!(
        typed(body.as_bytes()).is_some(),
        "the typed reading takes it"
    );
    check(body.as_bytes());
    // pretty-printed, with escapes the serializer would not write
    let pretty = serde_json::to_string_pretty(&v)
        .unwrap()
        .replace("careful", "care\\u0066ul");
    assert!(typed(pretty.as_bytes()).is_some());
    check(pretty.as_bytes());
    for minimal in [
        r#"{}"#,
        r#"{"messages": []}"#,
        r#"{"stream": null, "tools": null}"#,
    ] {
        assert!(typed(minimal.as_bytes()).is_some());
        check(minimal.as_bytes());
    }
}

#[test]
fn what_the_typed_reading_refuses_is_read_by_the_tree() {
    let bodies: Vec<Vec<u8>> = vec![
        br#"["m", true, [], []]"#.to_vec(),
        br#"{"messages": [["user", "hi"]]}"#.to_vec(),
        br#"{"messages": [{"role": "user", "content": "a", "tool_calls": [["id", null]]}]}"#
            .to_vec(),
        br#"{"tools": [["bash"]], "messages": []}"#.to_vec(),
        br#"{"messages": [{"role": 7, "content": "a"}]}"#.to_vec(),
        br#"{"messages": [{"role": "user", "role": "system", "content": "a"}]}"#.to_vec(),
        br#"{"messages": [{"role": "user"}], "messages": [{"role": "tool"}]}"#.to_vec(),
        br#"{"model": 3, "stream": "yes", "messages": [{"role": "user"}]}"#.to_vec(),
        br#"{"messages": [{"role": "tool", "name": 5, "tool_call_id": 9}]}"#.to_vec(),
        br#"{"messages": [{"role": "assistant", "tool_calls": {"id": "x"}}]}"#.to_vec(),
        br#"{"tools": [{"function": {"name": 1}, "name": "n"}]}"#.to_vec(),
        br#"{"messages": [{"role": "user", "content": "cut"#.to_vec(),
        b"{\"options\": {\"stop\": \"\xff\"}, \"messages\": [{\"role\": \"user\"}]}".to_vec(),
        b"not json".to_vec(),
        Vec::new(),
    ];
    for b in bodies {
        check(&b);
    }
    assert!(typed(br#"["m", true, [], []]"#).is_none());
    assert!(typed(br#"{"messages": [["user", "hi"]]}"#).is_none());
}

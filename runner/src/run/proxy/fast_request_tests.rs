//! The tree-free `/v1` → native request writes the bytes the tree translation writes and
//! reads what the trajectory reads of that tree.

use lrab_records::ThinkSetting;
use serde_json::{json, Value};

use super::super::read::tree;
use super::super::translate::openai_to_native;
use super::v1_to_native;

/// Checks one request under every thinking setting; false when the fast way refused it.
fn same(body: &[u8]) -> bool {
    let mut taken = true;
    for think in [ThinkSetting::Off, ThinkSetting::On, ThinkSetting::Model] {
        let Some(fast) = v1_to_native(body, 8192, think) else {
            taken = false;
            continue;
        };
        let v: Value = serde_json::from_slice(body).expect("the fast way took only JSON");
        let n = openai_to_native(&v, 8192, think);
        let label = String::from_utf8_lossy(body);
        assert_eq!(
            String::from_utf8(fast.body).unwrap(),
            n.to_string(),
            "{label}"
        );
        assert_eq!(fast.stream, n["stream"].as_bool().unwrap_or(false));
        let usage = v["stream_options"]["include_usage"].as_bool();
        assert_eq!(fast.include_usage, usage.unwrap_or(false));
        assert_eq!(fast.model, v["model"].as_str().unwrap_or(""));
        assert_eq!((fast.tools, fast.messages), tree(n), "{label}");
    }
    taken
}

fn conversation() -> Value {
    json!({
        "model": "qwen3:8b", "stream": true, "stream_options": {"include_usage": true},
        "temperature": 0.7, "max_tokens": 512, "top_p": 0.9, "stop": null, "seed": 7,
        "response_format": {"type": "json_object"}, "tool_choice": "auto",
        "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "x": 1.5e3}}},
                  {"type": "custom", "name": "patch"}],
        "messages": [
            {"role": "system", "content": "be \"careful\"\n\t\u{e9}\u{1F600} </tag>"},
            {"role": "user", "content": "hi", "name": "someone"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\": \"ls\", \"n\": 1.5}"}},
                {"id": "c2", "function": {"name": "bash", "arguments": "not json"}},
                {"id": "c3", "function": {"name": "x", "arguments": {"k": [1, 2.25, null]}}},
                {"id": "c4", "function": {"name": "y", "arguments": "\"a string\""}},
                {"function": {"name": "z", "arguments": "[1, 2]"}},
                {"id": "c6"}
            ]},
            {"role": "tool", "content": "out1", "tool_call_id": "c1"},
            {"role": "tool", "content": "out2", "tool_call_id": "c9"},
            {"role": "tool", "content": "out3", "name": "named", "tool_call_id": "c3"},
            {"role": "tool", "content": "out4"},
            {"role": "assistant", "content": "", "tool_calls": []},
            {"content": "no role"},
            {}
        ]
    })
}

#[test]
fn the_fast_way_writes_and_reads_what_the_tree_does() {
    let v = conversation();
    assert!(same(v.to_string().as_bytes()));
    // escapes the serializer would not write, and whitespace
    let pretty = serde_json::to_string_pretty(&v)
        .unwrap()
        .replace("careful", "care\\u0066ul")
        .replace("</tag>", "<\\/tag>");
    assert!(same(pretty.as_bytes()));
    for b in [
        json!({}),
        json!({"messages": []}),
        json!({"model": 3, "stream": "yes", "max_tokens": null, "max_completion_tokens": 9,
               "tools": {"not": "an array"}, "response_format": {"type": "text"}, "messages": null}),
        json!({"max_completion_tokens": 9, "frequency_penalty": 0.5, "presence_penalty": null,
               "stop": ["a"], "messages": [{"role": "user", "content": "x"}]}),
    ] {
        assert!(same(b.to_string().as_bytes()), "{b}");
    }
}

#[test]
fn what_the_fast_way_refuses_takes_the_tree() {
    for b in [
        &br#"{"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}]}"#[..],
        br#"{"messages": [{"role": 1, "content": "a"}]}"#,
        br#"{"messages": [["user", "a"]]}"#,
        br#"{"messages": [], "messages": []}"#,
        br#"{"messages": [{"role": "user", "content": 5}]}"#,
        br#"{"messages": [{"role": "assistant", "tool_calls": [{"id": 1}]}]}"#,
        br#"{"messages": [{"role": "tool", "name": ["n"]}]}"#,
        br#"["m", []]"#,
        b"{\"stop\": \"\xff\", \"messages\": []}",
        b"not json",
    ] {
        assert!(!same(b), "{}", String::from_utf8_lossy(b));
    }
}

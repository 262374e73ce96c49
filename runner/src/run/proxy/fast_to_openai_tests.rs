//! The tree-free native → OpenAI request writes the bytes the tree translation writes and
//! reads what the trajectory reads of that tree.

use lrab_records::ThinkSetting;
use serde_json::{json, Value};

use super::super::openai_upstream::{OpenaiUpstream, Reasoning};
use super::super::read::tree;
use super::super::translate::normalize_native;
use super::native_to_openai;

const THINK: [ThinkSetting; 3] = [ThinkSetting::Off, ThinkSetting::On, ThinkSetting::Model];

/// Checks one request for every server kind and thinking setting; false when refused.
fn same(body: &[u8]) -> bool {
    let mut taken = true;
    for reasoning in [
        Reasoning::TemplateKwargs,
        Reasoning::Effort,
        Reasoning::Object,
    ] {
        for (think, up_think) in THINK
            .iter()
            .flat_map(|t| THINK.iter().map(move |u| (*t, *u)))
        {
            let up = OpenaiUpstream {
                key: None,
                reasoning,
                think: up_think,
                num_ctx: 4096,
            };
            let Some(fast) = native_to_openai(body, &up, think) else {
                taken = false;
                continue;
            };
            let mut v: Value = serde_json::from_slice(body).expect("the fast way took only JSON");
            normalize_native(&mut v, 8192, think);
            let stream = v["stream"].as_bool().unwrap_or(true);
            let want = up.chat_request(&v, stream).to_string();
            let label = String::from_utf8_lossy(body);
            assert_eq!(String::from_utf8(fast.body).unwrap(), want, "{label}");
            assert_eq!(fast.stream, stream);
            assert_eq!(fast.model, v["model"].as_str().unwrap_or(""));
            assert_eq!((fast.tools, fast.messages), tree(v), "{label}");
        }
    }
    taken
}

fn conversation() -> Value {
    json!({
        "model": "qwen3:8b", "stream": true, "think": true, "keep_alive": "5m",
        "options": {"temperature": 0.7, "num_predict": 512, "top_p": 0.9, "stop": null, "seed": 7, "num_ctx": 2048},
        "format": "json",
        "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "x": 1.5e3}}},
                  {"type": "custom", "name": "patch"}],
        "messages": [
            {"role": "system", "content": "be \"careful\"\n\t\u{e9}\u{1F600} </tag>"},
            {"role": "user", "content": "hi", "images": ["aGk="]},
            {"role": "assistant", "content": "", "thinking": "hmm", "tool_calls": [
                {"id": "c1", "function": {"name": "bash", "arguments": {"cmd": "ls", "n": 1.5}}},
                {"function": {"name": "bash", "arguments": "{\"raw\": true}"}},
                {"id": "", "function": {"name": "x", "arguments": "not json"}},
                {"id": "c4", "function": {"name": "y"}},
                {"id": "c5"}
            ]},
            {"role": "tool", "content": "out1", "tool_call_id": "c1"},
            {"role": "tool", "content": "out2", "tool_name": "bash"},
            {"role": "tool", "content": "out3", "name": "nobody"},
            {"role": "tool", "content": "out4", "tool_call_id": "gone"},
            {"role": "tool", "content": "out5", "tool_name": ""},
            {"role": "assistant", "content": null, "thinking": "", "tool_calls": []},
            {"role": "tool", "content": "late"},
            {"content": "no role"},
            {}
        ]
    })
}

#[test]
fn the_fast_way_writes_and_reads_what_the_tree_does() {
    let v = conversation();
    assert!(same(v.to_string().as_bytes()));
    let pretty = serde_json::to_string_pretty(&v)
        .unwrap()
        .replace("careful", "care\\u0066ul")
        .replace("</tag>", "<\\/tag>");
    assert!(same(pretty.as_bytes()));
    for b in [
        json!({}),
        json!({"messages": []}),
        json!({"model": 3, "stream": "yes", "options": null, "tools": {"not": "an array"},
               "format": {"type": "object"}, "messages": null}),
        json!({"stream": false, "options": [1], "format": "text", "think": "high",
               "messages": [{"role": "user", "content": "x"}]}),
        json!({"options": {"num_predict": -1, "frequency_penalty": 0.5, "presence_penalty": null, "stop": ["a"]}}),
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
        br#"{"messages": [{"role": "tool", "tool_name": ["n"]}]}"#,
        br#"["m", []]"#,
        b"{\"stop\": \"\xff\", \"messages\": []}",
        b"not json",
    ] {
        assert!(!same(b), "{}", String::from_utf8_lossy(b));
    }
}

//! Bad input from a model or a broken server, through the agent loop (scripted replies, and a
//! fake Ollama for what only a server sends): a reply of binary garbage, a 1 MB reply on one
//! line, a call with 10,000 arguments, JSON nested thousands deep (as text, as arguments, and
//! past the stream decoder's limit). Each gets a short, clear answer and a bounded trace in the
//! history; the run goes on, and nothing panics or hangs.

mod common;

use common::*;
use lrab_harness::backend::{OllamaBackend, OllamaConfig};
use lrab_harness::{Agent, Reply, Role, RunStatus, ToolCall};
use serde_json::{json, Map, Value};
use std::fs;

const TASK: &str = "Write notes.md with a short summary of the data, then finish.";

fn write_notes() -> Reply {
    Reply::call(
        "write_file",
        json!({"path": "notes.md", "content": "# Notes\n"}),
    )
}

/// `[[[…1…]]]` `depth` levels deep, built without recursion.
fn nested(depth: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

#[test]
fn garbage_huge_and_deep_replies_get_a_clear_answer_and_a_bounded_trace() {
    let d = tempfile::tempdir().unwrap();
    let garbage: String = (0..5000u32)
        .map(|i| char::from_u32(i % 31 + 1).unwrap())
        .chain(std::iter::repeat_n('\u{FFFD}', 3000))
        .collect();
    let megabyte = "x".repeat(1 << 20);
    let deep_text = format!("{}{}", "{\"a\":[".repeat(5_000), "]}".repeat(5_000));
    let mut a = agent_in(
        d.path(),
        TASK,
        vec![
            Reply::text(&garbage),
            Reply::text(&megabyte),
            Reply::text(&deep_text),
            write_notes(),
        ],
    );
    for _ in 0..4 {
        assert!(a.step().is_none());
    }
    let nudges = nudges(&a);
    assert!(
        nudges[0].contains("not readable text (binary data)"),
        "{}",
        nudges[0]
    );
    assert!(
        nudges[1].contains("1048576 characters long"),
        "{}",
        nudges[1]
    );
    assert!(nudges[2].contains("levels deep"), "{}", nudges[2]);
    // the history keeps a bounded trace of each
    for m in a
        .state
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
    {
        assert!(m.content.chars().count() <= 4200, "{}", m.content.len());
    }
    assert!(fs::read_to_string(d.path().join("notes.md")).is_ok());
    assert_eq!(mech_count(d.path(), "bad_input", "reply_refused"), 3);
}

#[test]
fn calls_with_ten_thousand_or_deeply_nested_arguments_get_a_tool_error() {
    let d = tempfile::tempdir().unwrap();
    let mut wide = Map::new();
    for i in 0..10_000 {
        wide.insert(format!("arg{i}"), json!(i));
    }
    wide.insert("path".into(), json!("notes.md"));
    let wide = Reply {
        tool_calls: vec![ToolCall::new("write_file", Value::Object(wide))],
        ..Reply::text("")
    };
    let mut deep = Map::new();
    deep.insert("path".into(), json!("notes.md"));
    deep.insert("content".into(), nested(100_000));
    let deep = Reply {
        tool_calls: vec![ToolCall::new("write_file", Value::Object(deep))],
        ..Reply::text("")
    };
    let mut a = agent_in(d.path(), TASK, vec![wide, deep, write_notes()]);
    for _ in 0..3 {
        assert!(a.step().is_none());
    }
    let results: Vec<&str> = a
        .state
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert!(
        results[0].starts_with("error: the call to write_file had 10001 arguments (at most 64 are read), so it was not run"),
        "{}",
        results[0]
    );
    assert!(
        results[1]
            .starts_with("error: the arguments of write_file are nested more than 32 levels deep"),
        "{}",
        results[1]
    );
    assert!(results[2].starts_with("wrote notes.md"), "{}", results[2]);
    assert_eq!(mech_count(d.path(), "bad_input", "call_refused"), 2);
    // the event log and the checkpoint hold the refused calls in bounded form
    let cp: u64 = ["checkpoint.json", "checkpoint.journal.jsonl"]
        .iter()
        .map(|f| {
            fs::metadata(common::state_of(d.path()).join(f))
                .unwrap()
                .len()
        })
        .sum();
    assert!(cp < 64 * 1024, "checkpoint {cp} bytes");
}

#[test]
fn a_server_sending_arguments_nested_past_the_decoder_limit_does_not_end_the_run() {
    let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    let line = format!(
        "{{\"model\":\"m\",\"created_at\":\"t\",\"message\":{{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{{\"function\":{{\"name\":\"write_file\",\"arguments\":{{\"path\":\"notes.md\",\"content\":{deep}}}}}}}]}},\"done\":true,\"done_reason\":\"stop\"}}"
    );
    let replies = vec![
        vec![line],
        ollama_stream(
            "",
            &[(
                "write_file",
                json!({"path": "notes.md", "content": "# Notes\n"}),
            )],
            900,
        ),
        ollama_stream("", &[("finish", json!({"summary": "done"}))], 950),
        ollama_stream("", &[("finish", json!({"summary": "done"}))], 990),
    ];
    let server = ollama_server(&["completion", "tools"], replies);
    let d = tempfile::tempdir().unwrap();
    let b = OllamaBackend::connect(OllamaConfig::new(&server.url, "m")).unwrap();
    let mut a = Agent::new(config(d.path(), TASK), b).unwrap();
    a.sleeper = Box::new(|_| {});
    let out = a.run();
    assert_eq!(out.status, RunStatus::Finished, "{:?}", out.backend_error);
    // told once, not retried as it was
    assert_eq!(chat_bodies(&server).len(), 4);
    assert!(a
        .state
        .messages
        .iter()
        .any(|m| m.injected && m.content.contains("nested too deeply")));
}

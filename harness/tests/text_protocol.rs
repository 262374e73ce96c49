//! Models without the `tools` capability get the text protocol instead of exit 7: chosen
//! automatically when `/api/show` lists capabilities without `tools` (the binary, against a
//! fake Ollama that refuses any request carrying tools), or when the server refuses tools on a
//! call (an older server that reports no capabilities). The calls come back as text and are
//! read by the format rescue.

mod common;

use common::*;
use lrab_harness::backend::{OllamaBackend, OllamaConfig};
use lrab_harness::{Agent, RunStatus};
use serde_json::{json, Value};
use std::fs;
use std::process::Command;

const TASK: &str = "Write out.md containing the word hello.";

/// A reply whose call is written as text, the way the text protocol asks for it.
fn text_call(name: &str, args: Value) -> Vec<String> {
    let v = json!({"name": name, "arguments": args});
    ollama_stream(&format!("<tool_call>{v}</tool_call>"), &[], 700)
}

/// A fake Ollama for a model without tools: `caps` from `/api/show`; any chat request that
/// carries tools is refused as Ollama refuses it.
fn no_tools_server(caps: &'static [&'static str], mut replies: Vec<Vec<String>>) -> FakeServer {
    serve(Box::new(move |path, body| match path {
        "/api/show" => Resp::json(200, &show_body(caps)),
        "/api/chat" => {
            let b: Value = serde_json::from_str(body).unwrap_or_default();
            if b["tools"].as_array().is_some_and(|t| !t.is_empty()) {
                Resp::json(
                    400,
                    r#"{"error":"registry.ollama.ai/library/m:latest does not support tools"}"#,
                )
            } else if replies.is_empty() {
                Resp::json(500, r#"{"error":"script exhausted"}"#)
            } else {
                Resp::ndjson(replies.remove(0))
            }
        }
        _ => Resp::json(404, r#"{"error":"not found"}"#),
    }))
}

fn script() -> Vec<Vec<String>> {
    vec![
        text_call("write_file", json!({"path": "out.md", "content": "hello"})),
        text_call("finish", json!({"summary": "done"})),
        text_call("finish", json!({"summary": "done"})),
    ]
}

#[test]
fn a_model_without_tools_runs_under_the_text_protocol_automatically() {
    let server = no_tools_server(&["completion"], script());
    let d = tempfile::tempdir().unwrap();
    let prompt = d.path().join("task_input.txt");
    fs::write(&prompt, TASK).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lrab-harness"))
        .args(["run", "--model", "m", "--prompt-file"])
        .arg(&prompt)
        .arg("--workdir")
        .arg(d.path())
        .args(["--backend-url", &server.url])
        .env_remove("LRAB_ABLATION")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("text tool protocol"), "{stdout}");
    assert_eq!(
        fs::read_to_string(d.path().join("out.md")).unwrap(),
        "hello"
    );
    let bodies = chat_bodies(&server);
    assert!(bodies.len() >= 2);
    for b in &bodies {
        // never refused: no request carried tools
        assert!(b
            .get("tools")
            .is_none_or(|t| t.as_array().is_some_and(|a| a.is_empty())));
    }
    let msgs = bodies[1]["messages"].as_array().unwrap();
    let system = msgs[0]["content"].as_str().unwrap();
    assert!(system.contains("Tools: call exactly one per reply"));
    assert!(system.contains("- write_file(path, content"));
    // the call goes back as the assistant's text, the result as a user message
    assert!(msgs.iter().any(
        |m| m["role"] == "assistant" && m["content"].as_str().unwrap().contains("<tool_call>")
    ));
    assert!(msgs.iter().any(|m| m["role"] == "user"
        && m["content"]
            .as_str()
            .unwrap()
            .starts_with("Result of write_file:")));
    assert!(msgs.iter().all(|m| m["role"] != "tool"));
    // the system prompt is the same in every request (cacheable)
    assert!(bodies
        .iter()
        .all(|b| b["messages"][0]["content"] == msgs[0]["content"]));
    let ev = events(d.path());
    let start = ev.iter().find(|e| e["kind"] == "run_start").unwrap();
    assert_eq!(start["tool_protocol"], "text");
    assert_eq!(
        start["static_prefill"].as_u64().unwrap() as usize,
        lrab_harness::mechanisms::text_protocol::static_prefill()
    );
}

#[test]
fn a_server_that_refuses_tools_on_a_call_switches_to_the_text_protocol() {
    // an older server reports no capabilities: the first call finds out
    let server = no_tools_server(&[], script());
    let d = tempfile::tempdir().unwrap();
    let b = OllamaBackend::connect(OllamaConfig::new(&server.url, "m")).unwrap();
    let mut a = Agent::new(config(d.path(), TASK), b).unwrap();
    let out = a.run();
    assert_eq!(out.status, RunStatus::Finished, "{:?}", out.backend_error);
    assert!(a.state.text_protocol);
    assert_eq!(
        fs::read_to_string(d.path().join("out.md")).unwrap(),
        "hello"
    );
    assert_eq!(mech_count(d.path(), "text_protocol", "switch"), 1);
    let bodies = chat_bodies(&server);
    assert!(bodies[0]["tools"].as_array().is_some_and(|t| !t.is_empty()));
    assert!(bodies[1..].iter().all(|b| b.get("tools").is_none()));
    // the switch is the one rewrite of the prompt, and it is logged as one
    let ev = events(d.path());
    assert!(ev
        .iter()
        .any(|e| e["kind"] == "model_call" && e["rewrite"] == "protocol"));
}

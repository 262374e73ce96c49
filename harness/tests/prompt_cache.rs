//! Prompts a server's cache can reuse: consecutive requests share their whole previous request
//! as a byte-identical prefix — a system prompt with nothing turn-dependent, a tool list that
//! never changes (a paused tool stays listed), a history that only grows — except on the turns
//! the harness rewrites the history (compaction, pruning…), which the `model_call` event names.
//! Checked on the harness's messages (scripted model) and on the bytes sent to a fake Ollama.

mod common;

use common::*;
use lrab_harness::Reply;
use serde_json::{json, Value};
use std::fs;

const TASK: &str = "Fix calc.py so that test_calc.py passes, and write notes.md about the fix.";

fn script() -> Vec<Reply> {
    let c = |n: &str, a: Value| Reply::call(n, a);
    let notes = || {
        c(
            "write_file",
            json!({"path": "notes.md", "content": "# Notes\n"}),
        )
    };
    vec![
        c(
            "todo",
            json!({"action": "create", "items": ["fix calc.py", "write notes.md"]}),
        ),
        c("read_file", json!({"path": "calc.py"})),
        c("run_shell", json!({"command": "python3 test_calc.py"})),
        c(
            "edit_file",
            json!({"path": "calc.py", "old": "a - b", "new": "a + b"}),
        ),
        c("run_shell", json!({"command": "python3 test_calc.py"})),
        Reply::text("The fix is in.\n"),
        notes(),
        notes(),
        notes(),
        notes(),
        c("list_dir", json!({})),
        c("todo", json!({"action": "done_all"})),
        c("finish", json!({"summary": "fixed"})),
    ]
}

fn setup(dir: &std::path::Path) {
    fs::write(dir.join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    fs::write(
        dir.join("test_calc.py"),
        "from calc import add\nassert add(2, 3) == 5\nprint('ok')\n",
    )
    .unwrap();
}

#[test]
fn each_request_starts_with_the_whole_previous_one() {
    let d = tempfile::tempdir().unwrap();
    setup(d.path());
    let replies = script();
    let n = replies.len();
    let mut a = agent_in(d.path(), TASK, replies);
    for _ in 0..n {
        if a.step().is_some() {
            break;
        }
    }
    let seen = &a.model.seen;
    assert!(seen.len() >= 12);
    let calls: Vec<Value> = events(d.path())
        .into_iter()
        .filter(|e| e["kind"] == "model_call")
        .collect();
    assert_eq!(calls.len(), seen.len());
    // a tool was paused on the way (the repeated identical write), and the list never changed
    assert!(mech_count(d.path(), "anti_loop", "pause_tool") >= 1);
    let (mut shared, mut total) = (0u64, 0u64);
    for i in 1..seen.len() {
        assert_eq!(seen[i].tool_names, seen[0].tool_names, "request {i}");
        assert_eq!(
            seen[i].messages[0], seen[0].messages[0],
            "system prompt of request {i}"
        );
        assert!(
            calls[i]["rewrite"].is_null(),
            "no rewrite expected at {i}: {}",
            calls[i]
        );
        let prev = &seen[i - 1].messages;
        assert_eq!(
            &seen[i].messages[..prev.len()],
            &prev[..],
            "request {i} rewrote history"
        );
        // the logged numbers agree: the whole previous request is the shared prefix
        let (p, b) = (
            calls[i]["prefix_bytes"].as_u64().unwrap(),
            calls[i]["prompt_bytes"].as_u64().unwrap(),
        );
        assert_eq!(
            p,
            calls[i - 1]["prompt_bytes"].as_u64().unwrap(),
            "request {i}"
        );
        assert!(calls[i]["est_prefix_tokens"].as_u64().unwrap() > 0);
        shared += p;
        total += b;
    }
    // the text reply is kept as written (a trimmed copy would not match the server's cache of
    // the reply's own tokens), and the one nudge answering it is the only user turn
    let last = &seen[seen.len() - 1].messages;
    let k = last
        .iter()
        .position(|m| m.content.starts_with("The fix is in."))
        .unwrap();
    assert_eq!(last[k].content, "The fix is in.\n");
    let users: Vec<usize> = (2..last.len())
        .filter(|&i| last[i].role == lrab_harness::Role::User)
        .collect();
    assert_eq!(users, vec![k + 1]);
    let share = shared as f64 / total as f64;
    println!("share of prompt bytes in the shared prefix: {share:.3}");
    assert!(
        share >= 0.9,
        "share of prompt bytes served by the prefix: {share:.3}"
    );
}

#[test]
fn the_bytes_sent_to_ollama_repeat_the_previous_request() {
    let replies: Vec<Vec<String>> = vec![
        ollama_stream(
            "",
            &[("write_file", json!({"path": "out.md", "content": "hello"}))],
            900,
        ),
        ollama_stream("", &[("read_file", json!({"path": "out.md"}))], 950),
        ollama_stream("Done, out.md holds hello.", &[], 990),
        ollama_stream("", &[("finish", json!({"summary": "done"}))], 1000),
        ollama_stream("", &[("finish", json!({"summary": "done"}))], 1000),
    ];
    let mut replies = replies;
    let server = serve(Box::new(move |path, _| match path {
        "/api/show" => Resp::json(200, &show_body(&["completion", "tools"])),
        "/api/chat" if !replies.is_empty() => Resp::ndjson(replies.remove(0)),
        _ => Resp::json(500, r#"{"error":"script exhausted"}"#),
    }));
    let d = tempfile::tempdir().unwrap();
    let b = lrab_harness::backend::OllamaBackend::connect(
        lrab_harness::backend::OllamaConfig::new(&server.url, "m"),
    )
    .unwrap();
    let mut a = lrab_harness::Agent::new(
        config(d.path(), "Write out.md containing the word hello."),
        b,
    )
    .unwrap();
    let out = a.run();
    assert_eq!(out.status, lrab_harness::RunStatus::Finished);
    let bodies: Vec<Value> = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|(p, _)| p == "/api/chat")
        .map(|(_, b)| serde_json::from_str(b).unwrap())
        .collect();
    assert!(bodies.len() >= 4);
    for w in bodies.windows(2) {
        // the same tool definitions, byte for byte, and the same options (no reload)
        assert_eq!(w[0]["tools"].to_string(), w[1]["tools"].to_string());
        assert_eq!(w[0]["options"].to_string(), w[1]["options"].to_string());
        let (m0, m1) = (
            w[0]["messages"].as_array().unwrap(),
            w[1]["messages"].as_array().unwrap(),
        );
        assert!(m1.len() > m0.len());
        for (x, y) in m0.iter().zip(m1) {
            assert_eq!(x.to_string(), y.to_string());
        }
    }
}

/// Requests `i-1` and `i` of a scripted run: the later one starts with the whole earlier one.
fn assert_extends(seen: &[lrab_harness::backend::SeenRequest], i: usize) {
    let prev = &seen[i - 1].messages;
    assert!(
        seen[i].messages.len() > prev.len(),
        "request {i} did not grow"
    );
    assert_eq!(
        &seen[i].messages[..prev.len()],
        &prev[..],
        "request {i} rewrote history"
    );
}

/// A tool loop that draws nudges from every mechanism that speaks after a round of calls — the
/// state line, the stall watch (re-plan, write-it-now), the same-tool nudge, the clock's
/// warnings — plus one text reply: each nudge ends the round's last tool result, and the only
/// user turn after the task is the answer to the text reply, which has no tool result to carry
/// it.
#[test]
fn nudges_after_tool_calls_ride_in_the_tool_result() {
    let d = tempfile::tempdir().unwrap();
    setup(d.path());
    let task = "Fix calc.py so that test_calc.py passes, and write report.md about the fix.";
    // plan calls that fail: no progress, and a tool that is never paused
    let mut replies: Vec<Reply> = (0..9)
        .map(|i| Reply::call("todo", json!({"action": format!("bogus{i}")})))
        .collect();
    replies.push(Reply::text("I am looking for the right file."));
    replies.push(Reply::call(
        "write_file",
        json!({"path": "report.md", "content": "# Report\n"}),
    ));
    let n = replies.len();
    let mut cfg = config(d.path(), task);
    cfg.time_budget_min = Some(10.0);
    let mut a =
        lrab_harness::Agent::new(cfg, lrab_harness::backend::ScriptedModel::replies(replies))
            .unwrap();
    a.sleeper = Box::new(|_| {});
    let times = std::cell::RefCell::new((0..).map(|i| i as f64 * 20.0));
    a.clock_fn = Box::new(move || times.borrow_mut().next().unwrap_or(1e9));
    for _ in 0..n {
        if a.step().is_some() {
            break;
        }
    }
    let seen = &a.model.seen;
    assert_eq!(
        seen.len(),
        n,
        "{:#?}",
        a.state
            .messages
            .iter()
            .map(|m| (m.role, m.content.clone()))
            .collect::<Vec<_>>()
    );
    // every mechanism spoke
    for (name, action) in [
        ("anti_loop", "stall_replan"),
        ("anti_loop", "stall_escalate"),
        ("anti_loop", "same_tool_nudge"),
        ("clock", "warning"),
        ("false_completion", "text_only"),
    ] {
        assert!(mech_count(d.path(), name, action) >= 1, "{name}/{action}");
    }
    for i in 1..n {
        assert_extends(seen, i);
    }
    let last = &seen[n - 1].messages;
    let text_reply = last
        .iter()
        .position(|m| m.content == "I am looking for the right file.")
        .unwrap();
    for (i, m) in last.iter().enumerate().skip(2) {
        if m.role == lrab_harness::Role::User {
            assert_eq!(i, text_reply + 1, "a user turn inside the tool loop: {m:?}");
            assert!(m.injected);
        }
    }
    // the nudges' texts are in tool results, after the round's own output and state line
    let tool_text = |needle: &str| {
        last.iter()
            .filter(|m| m.role == lrab_harness::Role::Tool)
            .any(|m| m.content.contains(needle) && m.content.contains("[state:"))
    };
    for needle in [
        "take a different approach",
        "Still no progress",
        "times in a row",
        "Time check",
    ] {
        assert!(tool_text(needle), "no tool result carries {needle:?}");
    }
}

/// Old tool output is pruned only when the prompt reaches the rewrite threshold (75 % of the
/// window), never on the way there: up to that request every request extends the previous one.
#[test]
fn nothing_is_pruned_before_the_rewrite_threshold() {
    let d = tempfile::tempdir().unwrap();
    let a = part_reader(d.path(), 8192);
    let calls: Vec<Value> = events(d.path())
        .into_iter()
        .filter(|e| e["kind"] == "model_call")
        .collect();
    let first = calls
        .iter()
        .position(|c| !c["rewrite"].is_null())
        .expect("the history was rewritten once the window filled");
    assert_eq!(calls[first]["rewrite"], "prune", "{}", calls[first]);
    for i in 1..first {
        assert_extends(&a.model.seen, i);
    }
    // the request before the rewrite was past 60 % of the window and nothing was pruned
    let est = |i: usize| calls[i]["est_tokens"].as_u64().unwrap() as f64;
    assert!(est(first - 1) >= 0.6 * 8192.0, "{}", est(first - 1));
    assert!(est(first - 1) < 0.75 * 8192.0);
    // the rewrite made room: the next requests extend it again for a while
    assert!(calls[first + 1]["rewrite"].is_null());
    assert_extends(&a.model.seen, first + 1);
}

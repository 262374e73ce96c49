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
    let server = ollama_server(&["completion", "tools"], replies);
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
    let bodies = chat_bodies(&server);
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
    // the nudges' texts are in tool results, after the round's own output (and its state
    // line, when the round has one)
    let tool_text = |needle: &str| {
        last.iter()
            .filter(|m| m.role == lrab_harness::Role::Tool)
            .any(
                |m| match (m.content.find(needle), m.content.find("[state:")) {
                    (Some(n), Some(s)) => s < n,
                    (Some(n), None) => n > 0,
                    _ => false,
                },
            )
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

/// The reply as the model generated it (and the server cached it): role, text, and the calls
/// by name and arguments (the harness numbers the calls it stores).
fn generated(r: &Reply) -> (lrab_harness::Role, String, Vec<(String, Value)>) {
    (
        lrab_harness::Role::Assistant,
        r.content.clone(),
        r.tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.arguments.clone()))
            .collect(),
    )
}

fn as_sent(m: &lrab_harness::Message) -> (lrab_harness::Role, String, Vec<(String, Value)>) {
    (
        m.role,
        m.content.clone(),
        m.tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.arguments.clone()))
            .collect(),
    )
}

/// Calls the model wrote as text (after prose, in a `<tool_call>` block, as bare JSON) between
/// native ones: every request starts with the previous request followed by the model's reply
/// exactly as generated — a rescued call is sent back as the text it was, not re-encoded as a
/// structured call the server never produced — and the call's result comes right after it as a
/// tool message, so the model sees its own call answered.
#[test]
fn every_request_extends_the_previous_one_and_its_reply_across_text_calls() {
    let d = tempfile::tempdir().unwrap();
    setup(d.path());
    let replies = vec![
        Reply::call(
            "todo",
            json!({"action": "create", "items": ["fix calc.py", "write notes.md"]}),
        ),
        Reply::text(
            "Step 2: read the code.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"calc.py\"}}\n</tool_call>",
        ),
        Reply::call(
            "edit_file",
            json!({"path": "calc.py", "old": "a - b", "new": "a + b"}),
        ),
        Reply::text("{\"name\": \"run_shell\", \"arguments\": {\"command\": \"python3 test_calc.py\"}}"),
        Reply::text(
            "Now the notes.\n```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"notes.md\", \"content\": \"# Notes\\nadd used a - b\\n\"}}\n```\n",
        ),
        Reply::call("todo", json!({"action": "done_all"})),
        Reply::call("finish", json!({"summary": "fixed calc.py, wrote notes.md"})),
        // after the gate's one re-read of the task
        Reply::call("finish", json!({"summary": "fixed calc.py, wrote notes.md"})),
    ];
    let n = replies.len();
    let mut a = agent_in(d.path(), TASK, replies.clone());
    let mut end = None;
    for _ in 0..n {
        end = a.step();
        if end.is_some() {
            break;
        }
    }
    assert_eq!(
        end,
        Some(lrab_harness::RunStatus::Finished),
        "{:#?}",
        a.state
            .messages
            .iter()
            .map(|m| (m.role, m.content.clone()))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        fs::read_to_string(d.path().join("notes.md")).unwrap(),
        "# Notes\nadd used a - b\n"
    );
    assert_eq!(mech_count(d.path(), "format_rescue", "rescued"), 3);
    let seen = &a.model.seen;
    assert_eq!(seen.len(), n);
    for i in 1..n {
        assert_extends(seen, i);
        let prev = seen[i - 1].messages.len();
        let next = &seen[i].messages;
        assert_eq!(
            as_sent(&next[prev]),
            generated(&replies[i - 1]),
            "request {i} does not repeat reply {} as generated",
            i - 1
        );
        // the reply's call is answered by the next message, a tool result
        assert_eq!(next[prev + 1].role, lrab_harness::Role::Tool, "request {i}");
    }
    // the rescued calls ran: the text of the read, the test run, the write
    let results: Vec<&str> = seen[n - 1]
        .messages
        .iter()
        .filter(|m| m.role == lrab_harness::Role::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert!(results[1].contains("return a - b"), "{}", results[1]);
    assert!(results[3].contains("ok"), "{}", results[3]);
}

/// The same on the wire: the fake Ollama gets the text call back as `content` with no
/// `tool_calls`, and the call's result as a `tool` message naming the tool.
#[test]
fn a_call_written_as_text_goes_back_to_ollama_as_written() {
    let text = "I will write it now.\n<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"out.md\", \"content\": \"hello\"}}\n</tool_call>";
    let replies: Vec<Vec<String>> = vec![
        ollama_stream(text, &[], 900),
        ollama_stream("", &[("read_file", json!({"path": "out.md"}))], 950),
        ollama_stream("", &[("finish", json!({"summary": "done"}))], 1000),
        ollama_stream("", &[("finish", json!({"summary": "done"}))], 1000),
    ];
    let server = ollama_server(&["completion", "tools"], replies);
    let d = tempfile::tempdir().unwrap();
    let b = lrab_harness::backend::OllamaBackend::connect(
        lrab_harness::backend::OllamaConfig::new(&server.url, "m"),
    )
    .unwrap();
    let mut a =
        lrab_harness::Agent::new(config(d.path(), "Write out.md containing hello."), b).unwrap();
    let out = a.run();
    assert_eq!(out.status, lrab_harness::RunStatus::Finished);
    assert_eq!(
        fs::read_to_string(d.path().join("out.md")).unwrap(),
        "hello"
    );
    let bodies = chat_bodies(&server);
    assert!(bodies.len() >= 3);
    let first = bodies[0]["messages"].as_array().unwrap().len();
    let m = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(m[first], json!({"role": "assistant", "content": text}));
    assert_eq!(m[first + 1]["role"], "tool");
    assert_eq!(m[first + 1]["tool_name"], "write_file");
    assert!(
        m[first + 1].get("tool_call_id").is_none(),
        "{}",
        m[first + 1]
    );
    for w in bodies.windows(2) {
        let (m0, m1) = (
            w[0]["messages"].as_array().unwrap(),
            w[1]["messages"].as_array().unwrap(),
        );
        for (x, y) in m0.iter().zip(m1) {
            assert_eq!(x.to_string(), y.to_string());
        }
    }
}

//! The anti-loop's answer to an identical repeat, through the agent loop with scripted replies:
//! a repeat of a call that succeeded is answered with the earlier result ("unchanged …", ok,
//! nothing executed), a repeat of a call that failed is intercepted as before, and both
//! escalate to a paused tool.

mod common;

use common::*;
use lrab_harness::backend::ScriptedModel;
use lrab_harness::{Agent, Reply};
use serde_json::json;
use std::fs;
use std::path::Path;

const TASK: &str = "Write notes.md with a short summary of the data, then finish.";

fn call(name: &str, args: serde_json::Value) -> Reply {
    Reply::call(name, args)
}

fn write_notes(content: &str) -> Reply {
    call(
        "write_file",
        json!({"path": "notes.md", "content": content}),
    )
}

fn run(dir: &Path, replies: Vec<Reply>) -> Agent<ScriptedModel> {
    let n = replies.len();
    let mut a = agent_in(dir, TASK, replies);
    for _ in 0..n {
        a.step();
    }
    a
}

/// The results the model got for `tool`, in order.
fn results<'a>(a: &'a Agent<ScriptedModel>, tool: &str) -> Vec<&'a str> {
    a.state
        .messages
        .iter()
        .filter(|m| m.tool_name.as_deref() == Some(tool))
        .map(|m| m.content.as_str())
        .collect()
}

/// (ok, intercepted) of every `tool_call` event of `tool`.
fn call_events(dir: &Path, tool: &str) -> Vec<(bool, bool)> {
    events(dir)
        .iter()
        .filter(|e| e["kind"] == "tool_call" && e["name"] == tool)
        .map(|e| {
            (
                e["ok"].as_bool().unwrap(),
                e["intercepted"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// Writes the edit-safety journal recorded (one per executed write).
fn journaled_writes(dir: &Path) -> usize {
    fs::read_to_string(common::state_of(dir).join("backups/journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn a_repeated_identical_write_after_a_success_answers_unchanged_and_is_not_executed() {
    let d = tempfile::tempdir().unwrap();
    let body = "# Notes\n\nTwo columns.\n";
    let a = run(d.path(), vec![write_notes(body), write_notes(body)]);
    let r = results(&a, "write_file");
    assert!(r[0].starts_with("wrote notes.md"), "{}", r[0]);
    let turn = events(d.path())
        .iter()
        .find(|e| e["kind"] == "tool_call")
        .unwrap()["turn"]
        .as_u64()
        .unwrap();
    assert!(
        r[1].starts_with(&format!(
            "unchanged: notes.md already has exactly this content (written at turn {turn})"
        )),
        "{}",
        r[1]
    );
    // the earlier result is part of the answer (without the round's state line), and the
    // next action is named
    let first = r[0].lines().next().unwrap();
    assert!(r[0].lines().last().unwrap().starts_with("[state: "));
    assert!(
        r[1].contains(first) && r[1].contains("Next action"),
        "{}",
        r[1]
    );
    assert!(!r[1].contains("third time"));
    // answered as a success, but not executed: one write in the journal
    assert_eq!(
        call_events(d.path(), "write_file"),
        vec![(true, false), (true, true)]
    );
    assert_eq!(journaled_writes(d.path()), 1);
    assert_eq!(fs::read_to_string(d.path().join("notes.md")).unwrap(), body);
    assert_eq!(mech_count(d.path(), "anti_loop", "intercept"), 1);
    let ev = events(d.path());
    let icpt = ev
        .iter()
        .find(|e| e["kind"] == "mechanism" && e["action"] == "intercept")
        .unwrap();
    assert_eq!(icpt["detail"]["earlier_ok"], true);
}

#[test]
fn a_repeated_append_is_not_appended_twice() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("notes.md"), "# Notes\n").unwrap();
    let app = || {
        call(
            "append_file",
            json!({"path": "notes.md", "content": "- one\n"}),
        )
    };
    let a = run(d.path(), vec![app(), app()]);
    let r = results(&a, "append_file");
    assert!(
        r[1].starts_with("unchanged: this exact text was already appended to notes.md at turn"),
        "{}",
        r[1]
    );
    assert_eq!(
        fs::read_to_string(d.path().join("notes.md")).unwrap(),
        "# Notes\n- one\n"
    );
}

#[test]
fn repeats_of_a_success_harden_then_pause_the_tool() {
    let d = tempfile::tempdir().unwrap();
    let body = "# Notes\n";
    let a = run(
        d.path(),
        vec![
            write_notes(body),
            write_notes(body),
            write_notes(body),
            write_notes(body),
            call("list_dir", json!({})),
        ],
    );
    let r = results(&a, "write_file");
    assert!(r[1].starts_with("unchanged:") && !r[1].contains("third time"));
    assert!(
        r[2].starts_with("unchanged:") && r[2].contains("third time"),
        "{}",
        r[2]
    );
    assert!(r[3].contains("paused until turn"), "{}", r[3]);
    assert_eq!(
        call_events(d.path(), "write_file"),
        vec![(true, false), (true, true), (true, true), (false, true)]
    );
    // paused, but still listed: the tool list (and so the cached prompt prefix) never changes
    assert!(a.model.seen[4]
        .tool_names
        .contains(&"write_file".to_string()));
    assert!(a
        .model
        .seen
        .iter()
        .all(|s| s.tool_names == a.model.seen[0].tool_names));
    assert_eq!(journaled_writes(d.path()), 1);
}

#[test]
fn a_repeat_after_a_failed_call_still_escalates() {
    let d = tempfile::tempdir().unwrap();
    let missing = || call("read_file", json!({"path": "missing.md"}));
    let a = run(d.path(), vec![missing(), missing(), missing(), missing()]);
    let r = results(&a, "read_file");
    assert!(r[0].starts_with("error:"), "{}", r[0]);
    assert!(
        r[1].contains("not executed: identical to your previous call")
            && r[1].contains("its result is above"),
        "{}",
        r[1]
    );
    assert!(!r[1].contains("unchanged") && !r[1].contains("succeeded"));
    assert!(r[2].contains("third time"), "{}", r[2]);
    assert!(r[3].contains("paused until turn"), "{}", r[3]);
    assert_eq!(
        call_events(d.path(), "read_file"),
        vec![(false, false), (false, true), (false, true), (false, true)]
    );
    let ev = events(d.path());
    assert!(ev
        .iter()
        .filter(|e| e["kind"] == "mechanism" && e["action"] == "intercept")
        .all(|e| e["detail"]["earlier_ok"] == false));
}

#[test]
fn a_repeated_read_after_a_success_gets_the_earlier_result() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("data.csv"), "a,b\n1,2\n").unwrap();
    let read = || call("read_file", json!({"path": "data.csv"}));
    let a = run(d.path(), vec![read(), read()]);
    let r = results(&a, "read_file");
    assert!(r[1].starts_with("not executed: identical to your call at turn"));
    assert!(r[1].contains("which succeeded") && r[1].contains("still holds"));
    assert!(r[1].contains("a,b"), "{}", r[1]);
}

#[test]
fn a_write_that_differs_only_in_indentation_is_executed() {
    let d = tempfile::tempdir().unwrap();
    let a = run(
        d.path(),
        vec![
            write_notes("def f():\n  return 1\n"),
            write_notes("def f():\n    return 1\n"),
        ],
    );
    let r = results(&a, "write_file");
    assert!(r[1].starts_with("wrote notes.md"), "{}", r[1]);
    assert_eq!(
        fs::read_to_string(d.path().join("notes.md")).unwrap(),
        "def f():\n    return 1\n"
    );
}

#[test]
fn the_earlier_outcome_survives_a_kill_and_relaunch() {
    let d = tempfile::tempdir().unwrap();
    let body = "# Notes\n";
    {
        let _a = run(d.path(), vec![write_notes(body)]);
    }
    // a new process resumes from the checkpoint and repeats the write
    let a = run(d.path(), vec![write_notes(body)]);
    assert!(a.resumed);
    let r = results(&a, "write_file");
    assert!(
        r[1].starts_with("unchanged: notes.md already has exactly this content"),
        "{}",
        r[1]
    );
    assert_eq!(journaled_writes(d.path()), 1);
}

#[test]
fn a_test_run_that_reports_failures_is_not_a_success_even_with_exit_0() {
    let d = tempfile::tempdir().unwrap();
    let t = || call("run_shell", json!({"command": "echo '9 passed, 1 failed'"}));
    let a = run(d.path(), vec![t(), t()]);
    let r = results(&a, "run_shell");
    assert!(
        r[0].contains("[verdict: FAILED]") && r[0].contains("[exit 0]"),
        "{}",
        r[0]
    );
    assert!(
        r[1].contains("not executed: identical to your previous call")
            && !r[1].contains("succeeded"),
        "{}",
        r[1]
    );
}

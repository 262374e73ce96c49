//! Replies a real Ollama loses, through the agent loop with scripted replies (no model): an
//! HTTP 500 on a tool call its parser could not read (the texts the server sends), a reply cut
//! at the output cap with no call, a reply that is only reasoning. The harness changes the
//! conversation every time (never the identical request again), compacts after repeated
//! failures, and a parse failure never ends the run as a backend failure.

mod common;

use common::*;
use lrab_harness::backend::{classify_http_error, BackendError, ScriptedModel};
use lrab_harness::{Agent, Reply, RunStatus};
use serde_json::json;
use std::path::Path;

const TASK: &str = "Write notes.md with a short summary of the data, then finish.";

fn agent(dir: &Path, replies: Vec<Result<Reply, BackendError>>) -> Agent<ScriptedModel> {
    let mut a = Agent::new(config(dir, TASK), ScriptedModel::new(replies)).unwrap();
    a.sleeper = Box::new(|_| {});
    a
}

/// The errors Ollama's parsers answer a malformed call with (HTTP 500, the bare parser error).
fn parse_errors() -> Vec<BackendError> {
    [
        "failed to parse JSON: unexpected end of JSON input",
        "XML syntax error on line 4: unexpected EOF",
        "error parsing tool call: raw='{\"path\": \"notes.md\", \"content\": \"# N', err=unexpected end of JSON input",
        "invalid character '}' looking for beginning of object key string",
    ]
    .iter()
    .map(|t| classify_http_error(500, t))
    .collect()
}

fn ok(r: Reply) -> Result<Reply, BackendError> {
    Ok(r)
}

fn write_notes() -> Reply {
    Reply::call(
        "write_file",
        json!({"path": "notes.md", "content": "# Notes\n\nTwo columns.\n"}),
    )
}

fn finish() -> Reply {
    Reply::call("finish", json!({"summary": "notes.md written"}))
}

/// No two consecutive requests are identical.
fn assert_never_resent(a: &Agent<ScriptedModel>) {
    for w in a.model.seen.windows(2) {
        assert_ne!(w[0].messages, w[1].messages, "identical request sent again");
    }
}

#[test]
fn unparsable_calls_get_the_expected_form_then_a_smaller_step_then_compaction() {
    let d = tempfile::tempdir().unwrap();
    let mut replies: Vec<_> = parse_errors().into_iter().map(Err).collect();
    assert!(replies
        .iter()
        .all(|r| matches!(r, Err(BackendError::ToolCallParse(_)))));
    replies.extend([ok(write_notes()), ok(finish()), ok(finish()), ok(finish())]);
    let mut a = agent(d.path(), replies);
    let out = a.run();
    assert_eq!(out.status, RunStatus::Finished, "{:?}", out.backend_error);
    assert!(out.backend_error.is_none());
    assert_never_resent(&a);
    // 1st: what went wrong and the expected form
    let t1 = seen_text(&a, 1);
    assert!(
        t1.contains("could not be parsed by the server")
            && t1.contains("unexpected end of JSON input")
            && t1.contains("{\"path\": \"notes.md\""),
        "{t1}"
    );
    // 2nd: a smaller step, a long file in parts
    let t2 = seen_text(&a, 2);
    assert!(
        t2.contains("smaller step") && t2.contains("append_file"),
        "{t2}"
    );
    // 3rd: the conversation is compacted before the next request
    let ev = events(d.path());
    assert!(ev.iter().any(|e| e["kind"] == "mechanism"
        && e["action"] == "compact"
        && e["detail"]["why"] == "lost_replies"));
    assert!(seen_text(&a, 3).contains("conversation was shortened"));
    assert_eq!(mech_count(d.path(), "resilience", "unparsable_call"), 4);
    // each lost call is a model call with no reply in the log
    let lost_calls = ev
        .iter()
        .filter(|e| e["kind"] == "model_call" && e["done_reason"] == "error")
        .count();
    assert_eq!(lost_calls, 4);
    assert!(ev.iter().all(|e| e["kind"] != "backend_error"));
}

#[test]
fn a_parse_failure_never_ends_the_run_as_a_backend_failure() {
    let d = tempfile::tempdir().unwrap();
    let e = classify_http_error(500, "failed to parse JSON: unexpected end of JSON input");
    let mut a = agent(d.path(), (0..12).map(|_| Err(e.clone())).collect());
    let out = a.run();
    // stopped as stalled (exit 0), not a backend failure (exit 8)
    assert_eq!(out.status, RunStatus::Stalled);
    assert!(out.backend_error.is_none());
    assert_eq!(mech_count(d.path(), "resilience", "lost_give_up"), 1);
    assert_never_resent(&a);
    // with resilience off the loop still goes on (a plain nudge), never a backend failure
    let d = tempfile::tempdir().unwrap();
    let mut cfg = config(d.path(), TASK);
    cfg.ablations = lrab_harness::Ablations::parse("resilience").unwrap();
    cfg.max_turns = 4;
    let mut a = Agent::new(
        cfg,
        ScriptedModel::new((0..6).map(|_| Err(e.clone())).collect()),
    )
    .unwrap();
    let out = a.run();
    assert_eq!(out.status, RunStatus::MaxTurns);
    assert_never_resent(&a);
}

#[test]
fn a_reply_cut_at_the_output_cap_is_split_and_never_rescued() {
    let d = tempfile::tempdir().unwrap();
    let cut = Reply {
        content: format!(
            "<tool_call>\n{{\"name\": \"write_file\", \"arguments\": {{\"path\": \"report.md\", \"content\": \"# Report\\n\\n{}",
            "A long section. ".repeat(400)
        ),
        done_reason: Some("length".into()),
        ..Default::default()
    };
    let mut a = agent(d.path(), vec![ok(cut.clone()), ok(cut), ok(write_notes())]);
    for _ in 0..3 {
        a.step();
    }
    // the cut call was not repaired into a truncated write
    assert!(!d.path().join("report.md").exists());
    let t = seen_text(&a, 1);
    assert!(
        t.contains("hit the output limit (8192 tokens)")
            && t.contains("write_file(path=\"report.md\")")
            && t.contains("append_file(path=\"report.md\")"),
        "{t}"
    );
    // the kept head of the cut reply is clipped in the history
    let kept = &a.model.seen[1].messages[2];
    assert!(
        kept.content.chars().count() < 3200 && kept.content.contains("cut off at the output limit")
    );
    let t2 = seen_text(&a, 2);
    assert!(t2.contains("at most about 40 lines"), "{t2}");
    assert_eq!(mech_count(d.path(), "resilience", "truncated"), 2);
    assert_never_resent(&a);
}

#[test]
fn a_reply_of_reasoning_only_is_answered_for_what_it_is() {
    let d = tempfile::tempdir().unwrap();
    let think_only = Reply {
        thinking: "The user wants notes. I should read the data first, then…".into(),
        done_reason: Some("stop".into()),
        ..Default::default()
    };
    let think_cut = Reply {
        thinking: "Let me think about every column in turn. ".repeat(200),
        done_reason: Some("length".into()),
        ..Default::default()
    };
    // an orphan closing tag (the template opened the block) with nothing after it
    let orphan = Reply::text("reasoning the template opened</think>\n");
    let mut a = agent(
        d.path(),
        vec![ok(think_only), ok(think_cut), ok(orphan), ok(write_notes())],
    );
    for _ in 0..4 {
        a.step();
    }
    let t1 = seen_text(&a, 1);
    assert!(t1.contains("only reasoning and no tool call"), "{t1}");
    let t2 = seen_text(&a, 2);
    assert!(t2.contains("reasoning used the whole output limit"), "{t2}");
    let t3 = seen_text(&a, 3);
    assert!(t3.contains("only reasoning"), "{t3}");
    assert_never_resent(&a);
    assert!(d.path().join("notes.md").exists());
}

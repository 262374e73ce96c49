//! Per-attempt counters read off the recorded trajectory (`proxy.jsonl`): the peak prompt and
//! the raw counters the failure-form coder needs, derived the same way for every arm from what
//! went over the wire, so an arm needs no cooperation to be coded (docs/statistics.md,
//! "Failure forms", *Counters from the trajectory*). The runner writes them into cells.csv
//! (version 4); the analysis derives them again from an attempt's `proxy.jsonl` when a cells.csv
//! of an older version lacks them.
//!
//! What each counter is derived from:
//! - `peak_prompt_tokens`: the largest prompt-token count any request reported (`None` when no
//!   request reported one).
//! - `fmt_arg_errors`: tool calls whose arguments were not a JSON object (the proxy keeps the raw
//!   string then), calls naming a tool the request did not offer, replies that wrote a call as
//!   text instead of making it (the whole text a JSON call, or an offered tool's name followed
//!   by `(` or `{`), and backend errors that say the reply could not be parsed (Ollama's
//!   tool-call parser errors).
//! - `spin_events`: a call identical (name and arguments) to one of the previous reply's, a
//!   text-only reply identical to the previous text-only reply, and every third consecutive
//!   empty reply (no text, no call).
//! - `ctx_events`: a request of the same conversation (same first message) that does not
//!   extend the previous request and is shorter than it (the arm compacted or truncated its
//!   history), and backend errors about the context window.
//! - `finish_rejections`: calls of a finish tool after which the conversation went on; `None`
//!   when no request offered a finish tool (an arm without one has no gate to reject a finish).
//! - `provider_errors`: requests answered with a server error (≥ 500) that is not a parse or
//!   context error: the backend or the connection to it failed.

use lrab_records::{TrajectoryEntry, TrajectoryMessage, TrajectoryToolCall};
use serde_json::Value;

/// Tool names that end a run in the arms we know (a call to one that is followed by more
/// requests was not accepted).
pub const FINISH_TOOLS: [&str; 7] = [
    "finish",
    "done",
    "task_complete",
    "complete_task",
    "attempt_completion",
    "final_answer",
    "submit",
];

/// The counters of one attempt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counters {
    /// Largest prompt of any request, in tokens.
    pub peak_prompt_tokens: Option<u64>,
    /// Malformed or unknown tool calls and parse errors.
    pub fmt_arg_errors: u64,
    /// Repeated calls, repeated text, runs of empty replies.
    pub spin_events: u64,
    /// History rewrites that shrank the prompt, context-window errors.
    pub ctx_events: u64,
    /// Finish calls the run went on after (`None`: no finish tool offered).
    pub finish_rejections: Option<u64>,
    /// Server errors that were neither parse nor context errors.
    pub provider_errors: u64,
}

fn error_text(e: &TrajectoryEntry) -> Option<String> {
    (e.status >= 400 || e.error.is_some())
        .then(|| e.error.clone().unwrap_or_default().to_lowercase())
}

fn is_parse_error(msg: &str) -> bool {
    msg.contains("parse") || msg.contains("parsing")
}

fn is_context_error(msg: &str) -> bool {
    msg.contains("context")
        && ["length", "window", "exceed", "too long", "limit"]
            .iter()
            .any(|w| msg.contains(w))
}

fn bad_call(c: &TrajectoryToolCall, offered: &[String]) -> bool {
    let args_bad = !matches!(c.arguments, Value::Object(_) | Value::Null);
    let unknown = !offered.is_empty() && !offered.contains(&c.name);
    args_bad || unknown
}

/// A reply without calls whose text is a call: `{"name": …}` / `{"<tool>": {…}}` JSON, or
/// `<tool>(…` / `<tool>{…` for a tool the request offered.
fn call_as_text(r: &lrab_records::TrajectoryReply, offered: &[String]) -> bool {
    let t = r.content.trim();
    if !r.tool_calls.is_empty() || t.is_empty() {
        return false;
    }
    if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(t) {
        return o.contains_key("name") || o.keys().any(|k| offered.contains(k));
    }
    offered.iter().any(|name| {
        t.strip_prefix(name.as_str())
            .is_some_and(|rest| rest.starts_with('(') || rest.starts_with('{'))
    })
}

fn is_finish(name: &str) -> bool {
    FINISH_TOOLS.contains(&name.to_ascii_lowercase().as_str())
}

fn size(req: &[TrajectoryMessage]) -> usize {
    req.iter().map(|m| m.content.len()).sum()
}

/// Whether `cur` rewrote `prev`'s history and is shorter (a compaction or a truncation).
fn shrank(prev: &[TrajectoryMessage], cur: &[TrajectoryMessage]) -> bool {
    let extends = cur.len() >= prev.len() && cur[..prev.len()] == *prev;
    !prev.is_empty() && !cur.is_empty() && !extends && prev[0] == cur[0] && size(cur) < size(prev)
}

/// Spin events of the answered turns, in order.
fn spins(turns: &[&TrajectoryEntry]) -> u64 {
    let mut n = 0;
    let mut empty_run = 0u64;
    let mut prev: Option<&lrab_records::TrajectoryReply> = None;
    for e in turns {
        let Some(r) = e.reply.as_ref() else { continue };
        let text = r.content.trim();
        if text.is_empty() && r.tool_calls.is_empty() {
            empty_run += 1;
            if empty_run % 3 == 0 {
                n += 1;
            }
        } else {
            empty_run = 0;
        }
        if let Some(p) = prev {
            let repeats = r.tool_calls.iter().filter(|c| {
                p.tool_calls
                    .iter()
                    .any(|q| q.name == c.name && q.arguments == c.arguments)
            });
            n += repeats.count() as u64;
            let text_only = |x: &lrab_records::TrajectoryReply| x.tool_calls.is_empty();
            if text_only(r) && text_only(p) && !text.is_empty() && text == p.content.trim() {
                n += 1;
            }
        }
        prev = Some(r);
    }
    n
}

/// The counters of a trajectory (an attempt without requests has none of anything).
pub fn from_trajectory(t: &[TrajectoryEntry]) -> Counters {
    let requests = TrajectoryEntry::requests(t);
    let mut c = Counters {
        peak_prompt_tokens: t.iter().filter_map(|e| e.prompt_tokens).max(),
        ..Counters::default()
    };
    let offers_finish = t.iter().any(|e| e.tools.iter().any(|n| is_finish(n)));
    let mut rejected = 0;
    for (i, e) in t.iter().enumerate() {
        if let Some(msg) = error_text(e) {
            if is_parse_error(&msg) {
                c.fmt_arg_errors += 1;
            } else if is_context_error(&msg) {
                c.ctx_events += 1;
            } else if e.status >= 500 || e.status == 0 {
                c.provider_errors += 1;
            }
        }
        if i > 0 && shrank(&requests[i - 1], &requests[i]) {
            c.ctx_events += 1;
        }
        let calls = e.reply.as_ref().map_or(&[][..], |r| &r.tool_calls[..]);
        c.fmt_arg_errors += calls.iter().filter(|k| bad_call(k, &e.tools)).count() as u64;
        if e.reply.as_ref().is_some_and(|r| call_as_text(r, &e.tools)) {
            c.fmt_arg_errors += 1;
        }
        let more_after = i + 1 < t.len();
        if more_after {
            rejected += calls.iter().filter(|k| is_finish(&k.name)).count() as u64;
        }
    }
    c.finish_rejections = offers_finish.then_some(rejected);
    let turns: Vec<&TrajectoryEntry> = t.iter().filter(|e| e.is_turn()).collect();
    c.spin_events = spins(&turns);
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use lrab_records::TrajectoryReply;
    use serde_json::json;

    fn msg(role: &str, content: &str) -> TrajectoryMessage {
        TrajectoryMessage {
            role: role.into(),
            content: content.into(),
            ..Default::default()
        }
    }

    fn call(name: &str, args: Value) -> TrajectoryToolCall {
        TrajectoryToolCall {
            id: None,
            name: name.into(),
            arguments: args,
        }
    }

    /// One answered request: the whole message list (recorded whole), the tools offered, the
    /// reply's text and calls.
    fn turn(
        msgs: Vec<TrajectoryMessage>,
        text: &str,
        calls: Vec<TrajectoryToolCall>,
    ) -> TrajectoryEntry {
        TrajectoryEntry {
            status: 200,
            messages: msgs,
            tools: vec!["read_file".into(), "run_bash".into(), "finish".into()],
            reply: Some(TrajectoryReply {
                content: text.into(),
                tool_calls: calls,
                ..Default::default()
            }),
            prompt_tokens: Some(100),
            ..Default::default()
        }
    }

    fn failed(status: u16, error: &str) -> TrajectoryEntry {
        TrajectoryEntry {
            status,
            error: Some(error.into()),
            ..Default::default()
        }
    }

    #[test]
    fn a_clean_run_counts_nothing_but_its_peak() {
        let sys = msg("system", "s");
        let mut t = vec![
            turn(
                vec![sys.clone(), msg("user", "task")],
                "",
                vec![call("read_file", json!({"path": "a"}))],
            ),
            turn(vec![], "", vec![call("run_bash", json!({"command": "ls"}))]),
            turn(vec![], "", vec![call("finish", json!({"summary": "ok"}))]),
        ];
        t[1].prefix_messages = 2;
        t[2].prefix_messages = 2;
        t[2].prompt_tokens = Some(900);
        let c = from_trajectory(&t);
        assert_eq!(
            c,
            Counters {
                peak_prompt_tokens: Some(900),
                finish_rejections: Some(0),
                ..Counters::default()
            }
        );
        assert_eq!(from_trajectory(&[]), Counters::default());
    }

    #[test]
    fn each_counter_sees_its_own_events() {
        let sys = msg("system", "s");
        let long = vec![
            sys.clone(),
            msg("user", "task"),
            msg("tool", &"x".repeat(500)),
        ];
        let t = vec![
            // a call with a non-JSON argument string and one of a tool not offered
            turn(
                long.clone(),
                "",
                vec![
                    call("read_file", json!("{path: a")),
                    call("write_file", json!({})),
                ],
            ),
            // the same call twice in a row
            turn(
                long.clone(),
                "",
                vec![call("run_bash", json!({"command": "ls"}))],
            ),
            turn(
                long.clone(),
                "",
                vec![call("run_bash", json!({"command": "ls"}))],
            ),
            // a finish the run went on after
            turn(
                long.clone(),
                "",
                vec![call("finish", json!({"summary": "done"}))],
            ),
            // the history was compacted: same system prompt, shorter
            turn(
                vec![sys.clone(), msg("user", "summary")],
                "same words",
                vec![],
            ),
            turn(
                vec![sys.clone(), msg("user", "summary")],
                "same words",
                vec![],
            ),
            failed(500, "error parsing tool call: raw='{'"),
            failed(400, "input length exceeds the context length"),
            failed(502, "connection refused"),
            turn(vec![sys.clone(), msg("user", "summary")], "", vec![]),
            turn(vec![sys.clone(), msg("user", "summary")], " ", vec![]),
            turn(vec![sys.clone(), msg("user", "summary")], "", vec![]),
            // calls written as text: placeholder quotes, and JSON
            turn(
                vec![sys.clone(), msg("user", "summary")],
                "run_bash(command:<|\"|>ls<|\"|>)",
                vec![],
            ),
            turn(
                vec![sys, msg("user", "summary")],
                "{\"name\": \"run_bash\", \"arguments\": {}}",
                vec![],
            ),
        ];
        let c = from_trajectory(&t);
        assert_eq!(
            c.fmt_arg_errors, 5,
            "bad args, unknown tool, parse error, two calls as text"
        );
        // repeated call, repeated text, three empty replies in a row
        assert_eq!(c.spin_events, 3);
        assert_eq!(c.ctx_events, 2, "one compaction, one context error");
        assert_eq!(c.finish_rejections, Some(1));
        assert_eq!(c.provider_errors, 1);
    }

    #[test]
    fn an_arm_without_a_finish_tool_has_no_finish_counter() {
        let mut e = turn(vec![msg("user", "t")], "", vec![call("done", json!({}))]);
        e.tools = vec!["bash".into()];
        let c = from_trajectory(&[e.clone(), e]);
        assert_eq!(c.finish_rejections, None);
        // `done` was not offered: it is an unknown tool, twice, and a repeat
        assert_eq!((c.fmt_arg_errors, c.spin_events), (2, 1));
    }

    #[test]
    fn a_new_conversation_is_not_a_compaction() {
        let a = turn(
            vec![msg("system", "main"), msg("user", &"long ".repeat(99))],
            "",
            vec![],
        );
        let b = turn(
            vec![msg("system", "sub-agent"), msg("user", "short")],
            "",
            vec![],
        );
        assert_eq!(from_trajectory(&[a, b]).ctx_events, 0);
    }
}

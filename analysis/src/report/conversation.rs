//! The conversation section of a cell page, from the best source an attempt left: the proxy's
//! trajectory (`proxy.jsonl`, every arm, read with `lrab_records::read_trajectory`) when it
//! recorded messages; else our harness's event log (turns and tool calls with arguments and
//! results); else the arm's `transcript.txt`. Every text is escaped and clipped, so a page
//! stays small and a model's output cannot inject markup.

use super::html::esc;
use lrab_records::{CallOutcome, Event, EventLog, TrajectoryEntry};
use std::fmt::Write as _;
use std::path::Path;

/// Longest text shown for one message, tool result or argument list.
pub(crate) const MAX_TEXT: usize = 6_000;
/// Longest transcript shown.
pub(crate) const MAX_TRANSCRIPT: usize = 200_000;

/// `s` cut at a character boundary at most `max` bytes in, saying how much was left out.
pub(crate) fn clip(s: &str, max: usize) -> String {
    lrab_util::clip_bytes(s, max, |n| format!("\n… ({n} more bytes)"))
}

fn pre(out: &mut String, class: &str, text: &str) {
    let _ = writeln!(
        out,
        "<pre class=\"{class}\">{}</pre>",
        esc(&clip(text, MAX_TEXT))
    );
}

fn args_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

fn tool_call(out: &mut String, name: &str, args: &str) {
    let _ = writeln!(
        out,
        "<div class=\"call\"><b>tool call</b> <code class=\"tool\">{}</code>",
        esc(name)
    );
    pre(out, "args", args);
    out.push_str("</div>\n");
}

/// Whether the trajectory recorded any conversation (schema 2 and later).
fn has_messages(t: &[TrajectoryEntry]) -> bool {
    t.iter()
        .any(|e| !e.messages.is_empty() || e.reply.is_some())
}

fn num(x: Option<u64>) -> String {
    x.map_or("–".into(), |v| v.to_string())
}

/// The trajectory: per request its new messages (tool results included) and the reply.
fn from_trajectory(t: &[TrajectoryEntry]) -> String {
    let mut out = String::new();
    for (i, e) in t.iter().enumerate() {
        let _ = writeln!(
            out,
            "<div class=\"turn\"><h3>Request {} <small>{} · status {} · prompt {} (cached {}) · completion {}{}</small></h3>",
            i + 1,
            esc(&e.path),
            e.status,
            num(e.prompt_tokens),
            num(e.cached_prompt_tokens),
            num(e.completion_tokens),
            e.elapsed_ms.map_or(String::new(), |ms| format!(" · {ms:.0} ms")),
        );
        if e.prefix_messages > 0 {
            let _ = writeln!(
                out,
                "<p class=\"note\">repeats the first {} message(s) of the previous request</p>",
                e.prefix_messages
            );
        }
        for m in &e.messages {
            let who = match &m.tool_name {
                Some(t) if m.role == "tool" => format!("tool result · {t}"),
                _ => m.role.clone(),
            };
            let _ = writeln!(
                out,
                "<div class=\"msg {}\"><b>{}</b>",
                esc(&m.role),
                esc(&who)
            );
            if let Some(th) = &m.thinking {
                out.push_str("<details><summary>thinking</summary>");
                pre(&mut out, "thinking", th);
                out.push_str("</details>");
            }
            if !m.content.is_empty() {
                pre(&mut out, "text", &m.content);
            }
            for c in &m.tool_calls {
                tool_call(&mut out, &c.name, &args_text(&c.arguments));
            }
            out.push_str("</div>\n");
        }
        if let Some(err) = &e.error {
            let _ = writeln!(out, "<p class=\"err\">error: {}</p>", esc(err));
        }
        if let Some(r) = &e.reply {
            let _ = writeln!(
                out,
                "<div class=\"msg reply\"><b>reply</b>{}",
                r.done_reason
                    .as_ref()
                    .map_or(String::new(), |d| format!(" <small>({})</small>", esc(d)))
            );
            if let Some(th) = &r.thinking {
                out.push_str("<details><summary>thinking</summary>");
                pre(&mut out, "thinking", th);
                out.push_str("</details>");
            }
            if !r.content.is_empty() {
                pre(&mut out, "text", &r.content);
            }
            for c in &r.tool_calls {
                tool_call(&mut out, &c.name, &args_text(&c.arguments));
            }
            out.push_str("</div>\n");
        }
        out.push_str("</div>\n");
    }
    out
}

fn outcome_text(o: &Option<CallOutcome>, ok: bool) -> String {
    match o {
        Some(CallOutcome::Ran { exit, timed_out }) => {
            let mut s = if ok {
                "ran, ok".to_string()
            } else {
                "ran, failed".into()
            };
            if let Some(x) = exit {
                let _ = write!(s, ", exit {x}");
            }
            if *timed_out {
                s.push_str(", timed out");
            }
            s
        }
        Some(CallOutcome::Refused(r)) => format!("refused by ring {}: {}", r.ring, r.reason),
        Some(CallOutcome::UnknownTool) => "unknown tool".into(),
        Some(CallOutcome::NotRun) => "not run".into(),
        None if ok => "ok".into(),
        None => "failed".into(),
    }
}

/// Our harness's log: model calls as turns, each tool call with its arguments and result.
fn from_events(log: &EventLog) -> String {
    let mut out = String::new();
    let mut open = false;
    for l in &log.lines {
        match &l.event {
            Event::ModelCall(c) => {
                if open {
                    out.push_str("</div>\n");
                }
                open = true;
                let _ = writeln!(
                    out,
                    "<div class=\"turn\"><h3>Turn {} <small>launch {} · prompt {} · completion {} · {} ms{}</small></h3>",
                    c.turn,
                    l.run,
                    num(c.prompt_tokens),
                    num(c.completion_tokens),
                    c.latency_ms,
                    c.done_reason
                        .as_ref()
                        .map_or(String::new(), |d| format!(" · {}", esc(d)))
                );
            }
            Event::ToolCall(c) => {
                tool_call(&mut out, &c.name, &c.args);
                let _ = writeln!(
                    out,
                    "<div class=\"msg tool\"><b>tool result</b> <small>{}{}</small>",
                    esc(&outcome_text(&c.outcome, c.ok)),
                    if c.intercepted {
                        " · answered by a mechanism"
                    } else {
                        ""
                    }
                );
                if let Some(r) = &c.result {
                    pre(&mut out, "text", r);
                }
                out.push_str("</div>\n");
            }
            Event::BackendError { error } => {
                let _ = writeln!(out, "<p class=\"err\">backend error: {}</p>", esc(error));
            }
            Event::RunEnd(e) => {
                let _ = writeln!(
                    out,
                    "<p class=\"note\">launch {} ended: {} ({} turns, {} tool calls)</p>",
                    l.run,
                    esc(&e.status),
                    e.turns,
                    e.tool_calls
                );
            }
            _ => {}
        }
    }
    if open {
        out.push_str("</div>\n");
    }
    out
}

/// The section's HTML and the name of the source it came from.
pub(crate) fn section(attempt: &Path, events: Option<&EventLog>) -> (String, &'static str) {
    if let Some(t) = lrab_records::read_trajectory(&attempt.join("proxy.jsonl")) {
        if has_messages(&t) {
            return (from_trajectory(&t), "the proxy's trajectory (proxy.jsonl)");
        }
    }
    if let Some(log) = events {
        if log.model_calls().next().is_some() {
            return (
                from_events(log),
                "the harness's event log (no conversation in a proxy trajectory)",
            );
        }
    }
    match std::fs::read(attempt.join("transcript.txt")) {
        Ok(b) if !b.is_empty() => {
            let text = String::from_utf8_lossy(&b);
            (
                format!(
                    "<pre class=\"text\">{}</pre>\n",
                    esc(&clip(&text, MAX_TRANSCRIPT))
                ),
                "the arm's transcript.txt (no recorded conversation)",
            )
        }
        _ => (
            "<p>No conversation was recorded for this attempt.</p>\n".into(),
            "nothing",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_keeps_char_boundaries_and_says_what_it_cut() {
        let s = "é".repeat(10);
        let c = clip(&s, 5);
        assert!(c.starts_with("éé\n… (16 more bytes)"), "{c}");
        assert_eq!(clip("abc", 5), "abc");
    }

    #[test]
    fn events_render_turns_tool_calls_and_escaped_results() {
        let log = EventLog::parse(concat!(
            "{\"kind\":\"model_call\",\"turn\":1,\"prompt_tokens\":10,\"completion_tokens\":2,\"latency_ms\":5}\n",
            "{\"kind\":\"tool_call\",\"turn\":1,\"name\":\"shell\",\"ok\":true,\"args\":\"{\\\"cmd\\\":\\\"ls <x>\\\"}\",\"result\":\"a.md\\n<script>\",\"outcome\":{\"status\":\"ran\",\"exit\":0}}\n",
        ));
        let h = from_events(&log);
        assert!(h.contains("Turn 1"), "{h}");
        assert!(h.contains("<code class=\"tool\">shell</code>"), "{h}");
        assert!(h.contains("ls &lt;x&gt;"), "{h}");
        assert!(
            h.contains("&lt;script&gt;") && !h.contains("<script>"),
            "{h}"
        );
        assert!(h.contains("ran, ok, exit 0"), "{h}");
    }
}

//! `transcript.txt`, the readable story of an attempt: rendered from its trajectory turn by
//! turn — what the request added (the task, tool results as the next request shows them), what
//! the model said, thought and called — for every arm the same way.

use std::fmt::Write;

use lrab_records::{TrajectoryEntry, TrajectoryMessage, TrajectoryToolCall};

/// Longest text shown of one message or reply part; the rest is counted, not shown.
const CAP: usize = 4000;

fn capped(s: &str) -> String {
    lrab_util::clip_bytes(s.trim_end(), CAP, |n| format!("\n… [{n} more bytes]"))
}

fn call_line(c: &TrajectoryToolCall) -> String {
    let args = match &c.arguments {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    format!("[tool call] {} {}", c.name, capped(&args))
}

fn message_block(out: &mut String, m: &TrajectoryMessage) {
    let head = match m.role.as_str() {
        "tool" => format!(
            "[tool result{}]",
            m.tool_name
                .as_deref()
                .map(|n| format!(": {n}"))
                .unwrap_or_default()
        ),
        "assistant" => "[assistant, as sent back]".to_string(),
        r => format!("[{r}]"),
    };
    let _ = writeln!(out, "{head}\n{}", capped(&m.content));
    for c in &m.tool_calls {
        let _ = writeln!(out, "{}", call_line(c));
    }
}

/// Whether `m` is the previous reply as the arm sent it back (shown already).
fn echoes(m: &TrajectoryMessage, prev: Option<&TrajectoryEntry>) -> bool {
    let Some(r) = prev.and_then(|p| p.reply.as_ref()) else {
        return false;
    };
    m.role == "assistant"
        && m.content.trim() == r.content.trim()
        && m.tool_calls
            .iter()
            .map(|c| &c.name)
            .eq(r.tool_calls.iter().map(|c| &c.name))
}

fn tokens(e: &TrajectoryEntry) -> String {
    let mut parts = Vec::new();
    if let Some(p) = e.prompt_tokens {
        match e.cached_prompt_tokens {
            Some(c) => parts.push(format!("prompt {p} ({c} cached)")),
            None => parts.push(format!("prompt {p}")),
        }
    }
    if let Some(c) = e.completion_tokens {
        parts.push(format!("completion {c}"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" · {}", parts.join(" · "))
    }
}

/// The transcript of a trajectory (empty when there were no requests).
pub fn render(entries: &[TrajectoryEntry]) -> String {
    let mut out = String::new();
    let full = TrajectoryEntry::requests(entries);
    let t0 = entries.iter().find_map(|e| e.time_ms);
    for (i, e) in entries.iter().enumerate() {
        let at = match (t0, e.time_ms) {
            (Some(a), Some(b)) => format!(" · +{:.1} s", b.saturating_sub(a) as f64 / 1000.0),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "=== request {} · {} {}{at} · HTTP {}{} ===",
            i + 1,
            e.path,
            e.model,
            e.status,
            tokens(e)
        );
        let prev = i.checked_sub(1).map(|j| &entries[j]);
        let shown: &[TrajectoryMessage] = if i > 0 && e.prefix_messages == 0 {
            // The history was rewritten (compaction, or another conversation): show it from
            // where it departs from the previous request.
            let before = &full[i - 1];
            let same = before
                .iter()
                .zip(&full[i])
                .take_while(|(a, b)| a == b)
                .count();
            let _ = writeln!(
                out,
                "(not a continuation: {} of {} messages as before, the rest rewritten)",
                same,
                full[i].len()
            );
            &full[i][same..]
        } else {
            &e.messages
        };
        if !e.tools.is_empty() && (i == 0 || entries[i - 1].tools != e.tools) {
            let _ = writeln!(out, "[tools offered] {}", e.tools.join(", "));
        }
        for m in shown {
            if !echoes(m, prev) {
                message_block(&mut out, m);
            }
        }
        if let Some(r) = &e.reply {
            if let Some(t) = r.thinking.as_deref().filter(|t| !t.trim().is_empty()) {
                let _ = writeln!(out, "[model thought]\n{}", capped(t));
            }
            if !r.content.trim().is_empty() || r.tool_calls.is_empty() {
                let _ = writeln!(out, "[model said]\n{}", capped(&r.content));
            }
            for c in &r.tool_calls {
                let _ = writeln!(out, "{}", call_line(c));
            }
            if let Some(d) = r.done_reason.as_deref().filter(|d| *d == "length") {
                let _ = writeln!(out, "(reply cut: done_reason {d})");
            }
        }
        if let Some(err) = &e.error {
            let _ = writeln!(out, "[error] {}", capped(err));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lrab_records::TrajectoryReply;
    use serde_json::json;

    fn m(role: &str, content: &str) -> TrajectoryMessage {
        TrajectoryMessage {
            role: role.into(),
            content: content.into(),
            ..Default::default()
        }
    }

    #[test]
    fn turns_show_the_task_the_calls_and_the_results_once() {
        let call = TrajectoryToolCall {
            id: None,
            name: "bash".into(),
            arguments: json!({"command": "ls"}),
        };
        let r1 = vec![m("system", "be brief"), m("user", "make a.txt")];
        let mut echo = m("assistant", "");
        echo.tool_calls = vec![call.clone()];
        let mut result = m("tool", "a.txt missing");
        result.tool_name = Some("bash".into());
        let mut r2 = r1.clone();
        r2.push(echo);
        r2.push(result);
        let mut e1 = TrajectoryEntry {
            path: "/api/chat".into(),
            model: "m".into(),
            status: 200,
            tools: vec!["bash".into()],
            reply: Some(TrajectoryReply {
                tool_calls: vec![call],
                ..Default::default()
            }),
            prompt_tokens: Some(30),
            cached_prompt_tokens: Some(0),
            ..Default::default()
        };
        (e1.prefix_messages, e1.messages) = TrajectoryEntry::delta(None, &r1);
        let mut e2 = TrajectoryEntry {
            status: 200,
            tools: vec!["bash".into()],
            reply: Some(TrajectoryReply {
                content: "Done.".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        (e2.prefix_messages, e2.messages) = TrajectoryEntry::delta(Some(&r1), &r2);
        let t = render(&[e1, e2]);
        assert!(t.contains("=== request 1 · /api/chat m · HTTP 200 · prompt 30 (0 cached)"));
        assert!(t.contains("[user]\nmake a.txt"));
        assert_eq!(
            t.matches("[tool call] bash {\"command\":\"ls\"}").count(),
            1,
            "{t}"
        );
        assert!(t.contains("[tool result: bash]\na.txt missing"));
        assert!(t.contains("[model said]\nDone."));
        assert_eq!(t.matches("[tools offered]").count(), 1);
        assert_eq!(t.matches("be brief").count(), 1);
        assert!(render(&[]).is_empty());
    }

    #[test]
    fn rewritten_histories_show_where_they_depart_and_long_text_is_capped() {
        let r1 = vec![m("system", "s"), m("user", "u"), m("assistant", "x")];
        let r2 = vec![m("system", "s"), m("user", &"y".repeat(CAP + 10))];
        let mk = |full: &[TrajectoryMessage]| TrajectoryEntry {
            status: 200,
            messages: full.to_vec(),
            ..Default::default()
        };
        let t = render(&[mk(&r1), mk(&r2)]);
        assert!(
            t.contains("(not a continuation: 1 of 2 messages as before"),
            "{t}"
        );
        assert!(t.contains("… [10 more bytes]"));
    }
}

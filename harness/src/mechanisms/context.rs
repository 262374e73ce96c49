//! Context: a token check before every call, corrected by the server's `prompt_eval_count`;
//! compaction at 75 % that keeps the system prompt, the task text verbatim, the plan and the
//! recent turns, and summarizes the rest deterministically (no extra model call).

use crate::estimate::{estimate_message, estimate_request};
use crate::messages::{Message, Role, ToolSpec};
use serde::{Deserialize, Serialize};

pub const COMPACT_AT: f64 = 0.75;
/// After compaction the tail kept is at most this share of the window.
pub const KEEP_TAIL: f64 = 0.35;
pub const MIN_PREDICT: u32 = 256;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ContextCheck {
    pub num_ctx: u64,
    /// Server tokens per estimated token (learned from `prompt_eval_count`).
    pub ratio: f64,
    pub compactions: u32,
}

impl ContextCheck {
    pub fn new(num_ctx: u64) -> Self {
        ContextCheck {
            num_ctx: num_ctx.max(1024),
            ratio: 1.0,
            compactions: 0,
        }
    }
    /// Raw (uncorrected) estimate of a request.
    pub fn raw(messages: &[Message], tools: &[ToolSpec]) -> usize {
        estimate_request(messages, tools)
    }
    /// Corrected estimate.
    pub fn tokens(&self, raw: usize) -> u64 {
        (raw as f64 * self.ratio).ceil() as u64
    }
    /// Learn from the server's count for a request whose raw estimate was `raw`.
    pub fn calibrate(&mut self, raw: usize, prompt_eval_count: u64) {
        if raw == 0 || prompt_eval_count == 0 {
            return;
        }
        let r = prompt_eval_count as f64 / raw as f64;
        // small prompts are dominated by template overhead; only learn from real sizes
        if raw >= 200 {
            self.ratio = r.clamp(0.5, 4.0);
        }
    }
    pub fn needs_compaction(&self, tokens: u64) -> bool {
        tokens as f64 >= COMPACT_AT * self.num_ctx as f64
    }
    /// The output cap for this call: the wanted cap, clamped to the headroom.
    pub fn clamp_predict(&self, tokens: u64, wanted: u32) -> u32 {
        let head = self.num_ctx.saturating_sub(tokens).saturating_sub(512);
        (wanted as u64).min(head).max(MIN_PREDICT as u64) as u32
    }
    /// Raw-token budget for the kept tail.
    pub fn tail_budget(&self) -> usize {
        (KEEP_TAIL * self.num_ctx as f64 / self.ratio) as usize
    }
}

/// The first line of `s`, trimmed and clipped to `n` characters.
fn short(s: &str, n: usize) -> String {
    lrab_util::clip_chars(s.lines().next().unwrap_or("").trim(), n)
}

/// Compact a conversation. Keeps every system message at the head, the first real user
/// message (the task) verbatim, one injected summary (plan, workdir files, earlier actions),
/// and the most recent messages within `tail_budget` raw tokens, starting at a turn boundary
/// so no tool result loses its call.
pub fn compact(
    messages: &[Message],
    tail_budget: usize,
    plan_text: &str,
    files: &[String],
) -> Vec<Message> {
    let head_end = messages
        .iter()
        .position(|m| m.role == Role::User && !m.injected)
        .map(|i| i + 1)
        .unwrap_or(
            messages
                .iter()
                .take_while(|m| m.role == Role::System)
                .count(),
        );
    // choose the tail
    let mut start = messages.len();
    let mut used = 0usize;
    while start > head_end {
        let cost = estimate_message(&messages[start - 1]);
        if used + cost > tail_budget && start < messages.len() {
            break;
        }
        used += cost;
        start -= 1;
    }
    // never begin the tail with a tool result
    while start < messages.len() && messages[start].role == Role::Tool {
        start += 1;
    }
    let middle = &messages[head_end..start];
    let mut out: Vec<Message> = messages[..head_end].to_vec();
    let mut summary = format!(
        "[context compacted: {} earlier messages were summarized to save space]\n",
        middle.len()
    );
    if !plan_text.trim().is_empty() {
        summary.push_str(&format!("Current plan:\n{plan_text}\n"));
    }
    if !files.is_empty() {
        summary.push_str(&format!(
            "Files now in the working directory: {}\n",
            files.join(", ")
        ));
    }
    let mut actions: Vec<String> = Vec::new();
    for (i, m) in middle.iter().enumerate() {
        if m.role != Role::Assistant {
            continue;
        }
        for c in &m.tool_calls {
            let result = middle[i + 1..]
                .iter()
                .find(|r| r.role == Role::Tool && r.tool_name.as_deref() == Some(c.name.as_str()))
                .map(|r| short(&r.content, 80))
                .unwrap_or_default();
            actions.push(format!(
                "- {}({}) → {}",
                c.name,
                short(&c.arguments.to_string(), 80),
                result
            ));
        }
    }
    if !actions.is_empty() {
        let skip = actions.len().saturating_sub(30);
        summary.push_str("Earlier actions (most recent last):\n");
        summary.push_str(&actions[skip..].join("\n"));
        summary.push('\n');
    }
    summary.push_str("Continue with the next open step.");
    out.push(Message::nudge(summary));
    out.extend_from_slice(&messages[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::ToolCall;
    use serde_json::json;

    fn convo(n: usize) -> Vec<Message> {
        let mut m = vec![
            Message::system("sys"),
            Message::user("THE TASK: write a.md"),
        ];
        for i in 0..n {
            let c = ToolCall::new("read_file", json!({"path": format!("f{i}.txt")}));
            m.push(Message::assistant("", vec![c.clone()]));
            m.push(Message::tool_result(&c, "x".repeat(400)));
        }
        m
    }

    #[test]
    fn calibration_and_clamp() {
        let mut c = ContextCheck::new(8192);
        c.calibrate(1000, 1500);
        assert!((c.ratio - 1.5).abs() < 1e-9);
        assert_eq!(c.tokens(1000), 1500);
        c.calibrate(100, 5000); // too small to learn from
        assert!((c.ratio - 1.5).abs() < 1e-9);
        assert!(c.needs_compaction(6200) && !c.needs_compaction(6000));
        assert_eq!(c.clamp_predict(1000, 8192), 8192 - 1000 - 512);
        assert_eq!(c.clamp_predict(8000, 8192), MIN_PREDICT);
    }

    #[test]
    fn compaction_keeps_task_verbatim_plan_and_recent_turns() {
        let m = convo(50);
        let out = compact(&m, 600, "1. [ ] write a.md", &["a.md".into()]);
        assert!(out.len() < m.len());
        assert_eq!(out[0].content, "sys");
        assert_eq!(out[1].content, "THE TASK: write a.md");
        assert!(out[2].injected && out[2].content.contains("1. [ ] write a.md"));
        assert!(out[2].content.contains("read_file"));
        assert_eq!(out[3].role, Role::Assistant);
        assert_eq!(out.last(), m.last());
        let est: usize = out.iter().map(estimate_message).sum();
        assert!(est < m.iter().map(estimate_message).sum::<usize>() / 2);
    }
}

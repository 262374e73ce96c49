//! Context: a token check before every call, corrected by the server's `prompt_eval_count`
//! (with that count's known failure modes recognized: servers that count only the uncached
//! tokens, and counts capped by a server that cut the prompt); one rewrite of the history at
//! 75 %: old tool output pruned, and when that leaves the prompt above 60 % a single
//! compaction that keeps the system prompt, the task text verbatim, the plan and the recent
//! turns, and summarizes the rest deterministically (no extra model call); and
//! a last resort that clips the largest messages, so a prompt that would not fit is never sent
//! for the server to cut silently.

use crate::estimate::{estimate_message, estimate_request};
use crate::messages::{Message, Role, ToolSpec};
use serde::{Deserialize, Serialize};

pub const COMPACT_AT: f64 = 0.75;
/// A rewrite at [`COMPACT_AT`] prunes old tool output first, and compacts as well unless the
/// prompt is then under this share of the window.
pub const PRUNE_AT: f64 = 0.60;
/// The most recent messages are never pruned.
pub const PRUNE_KEEP: usize = 8;
/// Characters of a pruned tool result that stay (its head).
pub const PRUNE_HEAD: usize = 240;
/// Marker of a pruned result (so it is not pruned twice).
pub const PRUNED: &str = "[older output pruned:";
/// After compaction the tail kept is at most this share of the window.
pub const KEEP_TAIL: f64 = 0.35;
pub const MIN_PREDICT: u32 = 256;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ContextCheck {
    pub num_ctx: u64,
    /// Server tokens per estimated token (learned from `prompt_eval_count`).
    pub ratio: f64,
    pub compactions: u32,
    /// Times old tool output was pruned.
    #[serde(default)]
    pub prunes: u32,
    /// The server was seen to count only the uncached prompt tokens: its counts are then a
    /// lower bound and the ratio only grows.
    #[serde(default)]
    pub uncached_counts: bool,
    /// Counts that showed the server had cut the prompt.
    #[serde(default)]
    pub truncations: u32,
    /// The previous request's raw estimate and server count.
    #[serde(default)]
    last: Option<(usize, u64)>,
}

/// What one server count told the context check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// A full count: the ratio follows it.
    Learned,
    /// Too small a prompt to learn from (template overhead dominates).
    TooSmall,
    /// Only the uncached tokens were counted (fewer than the previous, shorter prompt, or far
    /// fewer than any tokenizer gives): a lower bound, learned only upward.
    Uncached,
    /// The count shows the server cut the prompt (at the window, or to about half of it
    /// after a context shift): the prompt was larger than the window, the ratio is raised so
    /// the next request is compacted first.
    Truncated,
}

impl ContextCheck {
    pub fn new(num_ctx: u64) -> Self {
        ContextCheck {
            num_ctx: num_ctx.max(1024),
            ratio: 1.0,
            compactions: 0,
            prunes: 0,
            uncached_counts: false,
            truncations: 0,
            last: None,
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
    pub fn calibrate(&mut self, raw: usize, prompt_eval_count: u64) -> Count {
        let pec = prompt_eval_count;
        let last = self.last.replace((raw, pec));
        // small prompts are dominated by template overhead; only learn from real sizes
        if raw < 200 {
            return Count::TooSmall;
        }
        let r = pec as f64 / raw as f64;
        let n = self.num_ctx;
        // Go runners cut to exactly num_ctx; a context shift keeps about half the window
        let at_window = pec + 8 >= n;
        let at_half = pec.abs_diff(n - (n - 5) / 2) <= 8 && r < 0.75 * self.ratio.max(1.0);
        if at_window || at_half {
            self.truncations += 1;
            self.last = None;
            self.ratio = self.ratio.max(1.05 * n as f64 / raw as f64).min(4.0);
            return Count::Truncated;
        }
        let fell = last.is_some_and(|(raw0, pec0)| raw >= raw0 && pec * 10 < pec0 * 9);
        if fell || r < 0.35 {
            if !self.uncached_counts {
                self.uncached_counts = true;
                self.ratio = self.ratio.max(1.0);
            }
            self.ratio = self.ratio.max(r.min(4.0));
            return Count::Uncached;
        }
        if self.uncached_counts {
            self.ratio = self.ratio.max(r.min(4.0));
        } else {
            self.ratio = r.clamp(0.5, 4.0);
        }
        Count::Learned
    }
    pub fn needs_compaction(&self, tokens: u64) -> bool {
        tokens as f64 >= COMPACT_AT * self.num_ctx as f64
    }
    /// Whether a prompt is at or above [`PRUNE_AT`] (after pruning: compact as well).
    pub fn needs_pruning(&self, tokens: u64) -> bool {
        tokens as f64 >= PRUNE_AT * self.num_ctx as f64
    }
    /// Whether a prompt of `tokens` leaves room for the smallest reply.
    pub fn fits(&self, tokens: u64) -> bool {
        tokens + MIN_PREDICT as u64 + 64 <= self.num_ctx
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

/// Prune old tool output: every tool result older than the last `keep` messages keeps its
/// head ([`PRUNE_HEAD`] characters) and the path of its full output, when it had one. Returns
/// (results pruned, characters saved). Mingbird and Agent8088 both prune before summarizing.
pub fn prune_old_outputs(messages: &mut [Message], keep: usize) -> (usize, usize) {
    let end = messages.len().saturating_sub(keep);
    let (mut n, mut saved) = (0, 0);
    for m in &mut messages[..end] {
        if m.role != Role::Tool || m.content.contains(PRUNED) {
            continue;
        }
        let chars = m.content.chars().count();
        if chars <= 2 * PRUNE_HEAD + 120 {
            continue;
        }
        let head: String = m.content.chars().take(PRUNE_HEAD).collect();
        let full = full_output_ref(&m.content)
            .map(|p| format!(" the full output is in {p};"))
            .unwrap_or_default();
        let text = format!(
            "{head}\n{PRUNED} {} characters;{full} re-read or re-run it if you need it]",
            chars - PRUNE_HEAD
        );
        saved += chars.saturating_sub(text.chars().count());
        m.content = text;
        n += 1;
    }
    (n, saved)
}

/// The `.lrab/out/N.txt` a shell result points at.
fn full_output_ref(s: &str) -> Option<&str> {
    let i = s.find(".lrab/out/")?;
    let rest = &s[i..];
    let end = rest.find(".txt")? + 4;
    Some(&rest[..end])
}

/// Last resort when even a compacted prompt would not fit: clip the largest messages (never
/// the system prompt; the task only if nothing else is left to clip) to head and tail until
/// the estimate fits. Returns how many messages were clipped.
pub fn shrink_to_fit(messages: &mut [Message], tools: &[ToolSpec], check: &ContextCheck) -> usize {
    let task = messages
        .iter()
        .position(|m| m.role == Role::User && !m.injected);
    let mut clipped = 0;
    for _ in 0..64 {
        let tokens = check.tokens(estimate_request(messages, tools));
        if check.fits(tokens) {
            break;
        }
        let over = (tokens + MIN_PREDICT as u64 + 64).saturating_sub(check.num_ctx) as f64;
        // the largest clippable message, the task last
        let pick = messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role != Role::System && m.content.chars().count() > 400)
            .max_by_key(|(i, m)| (Some(*i) != task, m.content.len()))
            .map(|(i, _)| i);
        let Some(i) = pick else { break };
        let chars = messages[i].content.chars().count();
        // tokens → characters by the estimator (4 per token) and the learned ratio
        let drop = ((over / check.ratio) * 4.0) as usize + 200;
        let keep = chars.saturating_sub(drop).max(200).min(chars - 1);
        messages[i].content = lrab_util::head_tail(&messages[i].content, keep, keep / 3, |cut| {
            format!("[… {cut} characters cut to fit the context window …]")
        });
        clipped += 1;
    }
    clipped
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
    fn counts_of_uncached_tokens_and_cut_prompts_keep_the_ratio_sane() {
        // full counts: the ratio follows
        let mut c = ContextCheck::new(32768);
        assert_eq!(c.calibrate(2000, 2600), Count::Learned);
        assert!((c.ratio - 1.3).abs() < 1e-9);
        // a server counting only uncached tokens: the next, longer prompt counts fewer
        assert_eq!(c.calibrate(2400, 300), Count::Uncached);
        assert!(c.uncached_counts && (c.ratio - 1.3).abs() < 1e-9);
        // later small counts never pull the ratio down; a larger one still raises it
        assert_eq!(c.calibrate(3000, 3000), Count::Learned);
        assert!((c.ratio - 1.3).abs() < 1e-9);
        c.calibrate(3100, 4650);
        assert!((c.ratio - 1.5).abs() < 1e-9);
        // a fully cached first request of a v0.30.0 server (only a few tokens counted)
        let mut c = ContextCheck::new(8192);
        assert_eq!(c.calibrate(4000, 12), Count::Uncached);
        assert!(c.ratio >= 1.0);
        // a count capped at the window (Go runner cut) raises the ratio past the window
        let mut c = ContextCheck::new(8192);
        assert_eq!(c.calibrate(7000, 8192), Count::Truncated);
        assert!(c.needs_compaction(c.tokens(7000)) && !c.fits(c.tokens(7000)));
        // a context shift kept about half the window
        let mut c = ContextCheck::new(32768);
        c.calibrate(1000, 1200);
        assert_eq!(c.calibrate(30000, 16384 + 2), Count::Truncated);
        assert!(c.tokens(30000) > 32768);
        assert_eq!(c.truncations, 1);
        // a genuine half-window prompt at the learned ratio is a full count
        let mut c = ContextCheck::new(32768);
        c.calibrate(1000, 1200);
        assert_eq!(c.calibrate(13653, 16386), Count::Learned);
    }

    #[test]
    fn pruning_keeps_heads_recent_results_and_output_paths() {
        let mut m = convo(20);
        for x in m.iter_mut().filter(|x| x.role == Role::Tool) {
            x.content = "x".repeat(2000);
        }
        let c = ToolCall::new("run_shell", json!({"command": "pytest"}));
        m.insert(
            3,
            Message::tool_result(
                &c,
                format!(
                    "[exit 1]\n{}\nfull output: .lrab/out/7.txt",
                    "y".repeat(2000)
                ),
            ),
        );
        let before: usize = m.iter().map(|x| x.content.len()).sum();
        let last = m.last().unwrap().clone();
        let (n, saved) = prune_old_outputs(&mut m, PRUNE_KEEP);
        assert!(n >= 10 && saved > 0);
        assert!(m[3].content.contains(PRUNED) && m[3].content.contains(".lrab/out/7.txt"));
        assert_eq!(m.last().unwrap(), &last);
        assert!(m.iter().map(|x| x.content.len()).sum::<usize>() < before / 2);
        // pruning twice changes nothing more
        let again = m.clone();
        assert_eq!(prune_old_outputs(&mut m, PRUNE_KEEP), (0, 0));
        assert_eq!(m, again);
    }

    #[test]
    fn shrink_to_fit_clips_the_largest_messages_task_last() {
        let check = ContextCheck::new(2048);
        let mut m = vec![
            Message::system("sys"),
            Message::user(format!("TASK {}", "t".repeat(3000))),
            Message::nudge("z".repeat(20_000)),
        ];
        assert!(!check.fits(check.tokens(estimate_request(&m, &[]))));
        assert!(shrink_to_fit(&mut m, &[], &check) >= 1);
        assert!(check.fits(check.tokens(estimate_request(&m, &[]))));
        assert_eq!(m[0].content, "sys");
        assert!(m[1].content.starts_with("TASK ") && m[1].content.len() > 3000);
        // a task too large on its own is clipped too (head and tail kept)
        let mut m = vec![Message::system("s"), Message::user("q".repeat(40_000))];
        shrink_to_fit(&mut m, &[], &check);
        assert!(check.fits(check.tokens(estimate_request(&m, &[]))));
        assert!(m[1].content.contains("cut to fit"));
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

//! Ollama's serving behaviour around the model (docs/sim.md, "Serving behaviour"): the context
//! window a request gets, the silent dropping of the oldest non-system messages past it, the
//! KV-cache prefix reuse (one slot per model, so only uncached tokens are prefilled), loads on
//! the first request and on a changed `num_ctx`, the modelled durations, and the per-key
//! ledger of modelled time that clients read back.
//!
//! State is kept per (ledger key, model): every attempt a runner starts talks under its own
//! key, so what one attempt pays never depends on what another attempt ran meanwhile — as if
//! each had the laptop to itself, like the published cells.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use crate::client::Ledger;
use crate::convo::{Conv, Msg};
use crate::dialect::Family;
use crate::policy::{fnv, Turn, FNV0};
use crate::profile::Speed;

/// The KV cache of one model in one key's slot.
#[derive(Debug, Clone, Default)]
struct Slot {
    num_ctx: u64,
    /// (hash, tokens) of the prompt elements in the cache, in order.
    prefix: Vec<(u64, u64)>,
}

/// What serving decided for one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Served {
    /// The conversation as the model sees it (after dropping what does not fit).
    pub visible: Conv,
    /// Messages dropped from the front.
    pub dropped: usize,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub load_ns: u64,
    pub prompt_ns: u64,
}

/// The server-wide serving state.
#[derive(Default)]
pub struct Serving {
    slots: Mutex<HashMap<(String, String), Slot>>,
    ledgers: Mutex<BTreeMap<String, Ledger>>,
}

fn msg_tokens(m: &Msg) -> u64 {
    let calls: usize = m
        .calls
        .iter()
        .map(|c| c.name.len() + c.args.to_string().len())
        .sum();
    ((m.content.len() + 16 + calls) as u64).div_ceil(4)
}

fn msg_hash(m: &Msg) -> u64 {
    let mut h = fnv(FNV0, m.role.as_bytes());
    h = fnv(h, m.content.as_bytes());
    for c in &m.calls {
        h = fnv(h, c.name.as_bytes());
        h = fnv(h, c.args.to_string().as_bytes());
    }
    h
}

/// Whether the family's renderer counts `m` as a query, the message whose position decides
/// which assistant turns keep their thinking: every user message for gemma4 (`lastUserIdx`), a
/// user message that is not only a `<tool_response>` block for qwen3.5 (`lastQueryIndex`).
/// Ollama's renderers, model/renderers/{gemma4,qwen35}.go (docs/sim.md, "Serving behaviour").
fn is_query(family: Family, m: &Msg) -> bool {
    if m.role != "user" {
        return false;
    }
    let t = m.content.trim();
    !(family == Family::Qwen35
        && t.starts_with("<tool_response>")
        && t.ends_with("</tool_response>"))
}

/// The prompt element (index in the admit list: tools first, then the messages) from which a
/// new query re-renders the prompt, if it does: thinking on, the family re-renders, the newest
/// message is a query, and an assistant turn follows the previous query (or the start).
fn rerender_cut(family: Family, conv: &Conv) -> Option<usize> {
    let (last, earlier) = conv.messages.split_last()?;
    if !(conv.think && family.rerenders_on_user_message() && is_query(family, last)) {
        return None;
    }
    let from = earlier
        .iter()
        .rposition(|m| is_query(family, m))
        .map_or(0, |i| i + 1);
    earlier[from..]
        .iter()
        .position(|m| m.role == "assistant")
        .map(|i| from + i + 1)
}

/// The prompt's tokens as serving counts them (tool definitions and every message).
pub fn prompt_tokens(conv: &Conv) -> u64 {
    conv.tools_tokens() + 2 + conv.messages.iter().map(msg_tokens).sum::<u64>()
}

/// Drops the oldest non-system messages until the prompt fits `num_ctx` (tool definitions
/// always count); if the newest message alone is still too long, keeps its first words and
/// its tail, about half the window (docs/sim.md, "Serving behaviour").
pub fn fit(conv: &Conv, num_ctx: u64) -> (Conv, usize) {
    let fixed = conv.tools_tokens() + 2;
    let tokens: Vec<u64> = conv.messages.iter().map(msg_tokens).collect();
    let total = |keep_from: usize| -> u64 {
        fixed
            + conv
                .messages
                .iter()
                .enumerate()
                .filter(|(i, m)| m.role == "system" || *i >= keep_from)
                .map(|(i, _)| tokens[i])
                .sum::<u64>()
    };
    let n = conv.messages.len();
    if n == 0 || total(0) <= num_ctx {
        return (conv.clone(), 0);
    }
    let mut from = 0;
    while from + 1 < n && total(from) > num_ctx {
        from += 1;
    }
    let mut out = conv.clone();
    out.messages = conv
        .messages
        .iter()
        .enumerate()
        .filter(|(i, m)| m.role == "system" || *i >= from)
        .map(|(_, m)| m.clone())
        .collect();
    let dropped = n - out.messages.len();
    if total(from) > num_ctx {
        if let Some(last) = out.messages.last_mut() {
            let keep_chars = (num_ctx / 2).saturating_mul(4) as usize;
            if last.content.len() > keep_chars {
                let head: String = last.content.chars().take(20).collect();
                let mut cut = last.content.len() - keep_chars.saturating_sub(20);
                while !last.content.is_char_boundary(cut) {
                    cut += 1;
                }
                last.content = format!("{head}{}", &last.content[cut..]);
            }
        }
    }
    (out, dropped)
}

impl Serving {
    /// Context, truncation, cache and prefill/load time of one request (before the model
    /// answers).
    pub fn admit(
        &self,
        key: &str,
        model: &str,
        family: Family,
        speed: &Speed,
        conv: &Conv,
        num_ctx: u64,
    ) -> Served {
        let (visible, dropped) = fit(conv, num_ctx);
        let mut elems: Vec<(u64, u64)> = Vec::with_capacity(visible.messages.len() + 1);
        elems.push((visible.tools_hash(), visible.tools_tokens() + 2));
        elems.extend(
            visible
                .messages
                .iter()
                .map(|m| (msg_hash(m), msg_tokens(m))),
        );
        let prompt_tokens: u64 = elems.iter().map(|e| e.1).sum();
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let slot = slots.entry((key.to_string(), model.to_string()));
        let (load, slot) = match slot {
            std::collections::hash_map::Entry::Occupied(o) => {
                let s = o.into_mut();
                let reload = s.num_ctx != num_ctx;
                if reload {
                    *s = Slot {
                        num_ctx,
                        prefix: vec![],
                    };
                }
                (reload, s)
            }
            std::collections::hash_map::Entry::Vacant(v) => (
                true,
                v.insert(Slot {
                    num_ctx,
                    prefix: vec![],
                }),
            ),
        };
        let mut lcp = slot
            .prefix
            .iter()
            .zip(&elems)
            .take_while(|(a, b)| a.0 == b.0)
            .count();
        // In thinking mode these families print an assistant turn's thinking only while it
        // follows the last query; a new query therefore re-renders the turns that followed the
        // previous one, and the cache keeps only what comes before the first of them.
        if let Some(cut) = rerender_cut(family, &visible) {
            lcp = lcp.min(cut);
        }
        // The last prompt token is always evaluated again, even when the whole prompt is in
        // the cache: its logits start the reply (llama.cpp keeps at most n-1, as the real
        // server did: a 32-token prompt sent twice was 31 cached; docs/real-model.md).
        let cached: u64 = elems[..lcp]
            .iter()
            .map(|e| e.1)
            .sum::<u64>()
            .min(prompt_tokens.saturating_sub(1));
        slot.prefix = elems;
        let prompt_s = speed.prefill_s(cached, prompt_tokens - cached);
        Served {
            visible,
            dropped,
            prompt_tokens,
            cached_tokens: cached,
            load_ns: if load { (speed.load_s * 1e9) as u64 } else { 0 },
            prompt_ns: (prompt_s * 1e9) as u64,
        }
    }

    /// Records the model's reply in the cache (the next request usually starts with it).
    pub fn remember_reply(&self, key: &str, model: &str, turn: &Turn) {
        let m = Msg {
            role: "assistant".into(),
            content: turn.content.clone(),
            calls: turn.calls.clone(),
        };
        if let Some(s) = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(&(key.to_string(), model.to_string()))
        {
            s.prefix.push((msg_hash(&m), msg_tokens(&m)));
        }
    }

    /// Adds one reply to a key's ledger.
    pub fn account(&self, key: &str, model_ns: u64, paced_ns: u64, tool_calls: u64, error: bool) {
        let mut l = self.ledgers.lock().unwrap_or_else(|e| e.into_inner());
        let e = l.entry(key.to_string()).or_default();
        e.requests += 1;
        e.model_ns += model_ns;
        e.paced_ns += paced_ns;
        e.tool_calls += tool_calls;
        e.errors += error as u64;
    }

    pub fn ledger(&self, key: &str) -> Ledger {
        self.ledgers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .copied()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(role: &str, content: &str) -> Msg {
        Msg {
            role: role.into(),
            content: content.into(),
            calls: vec![],
        }
    }

    #[test]
    fn oldest_non_system_messages_go_first() {
        let conv = Conv {
            messages: vec![
                msg("system", "rules"),
                msg("user", &"task ".repeat(400)),
                msg("assistant", "ok"),
                msg("user", "next"),
            ],
            ..Default::default()
        };
        let (v, dropped) = fit(&conv, 100);
        assert_eq!(dropped, 1);
        assert_eq!(v.messages[0].role, "system");
        assert_eq!(v.messages.len(), 3);
        let (v, _) = fit(&conv, 100_000);
        assert_eq!(v, conv);
        // one huge last message: cut to about half the window, head kept
        let big = Conv {
            messages: vec![msg("user", &format!("HEAD{}", "x".repeat(40_000)))],
            ..Default::default()
        };
        let (v, _) = fit(&big, 1000);
        assert!(v.messages[0].content.starts_with("HEAD") && v.messages[0].content.len() < 2200);
    }

    #[test]
    fn the_cache_counts_only_new_tokens() {
        let s = Serving::default();
        let sp = crate::profile::SPEED_ORACLE;
        let mut conv = Conv {
            messages: vec![msg("system", &"s".repeat(4000)), msg("user", "do it")],
            ..Default::default()
        };
        let a = s.admit("k", "m", Family::Gemma4, &sp, &conv, 32768);
        assert_eq!(a.cached_tokens, 0);
        assert!(a.load_ns > 0);
        conv.messages.push(msg("assistant", "step"));
        conv.messages.push(msg("tool", "done"));
        let b = s.admit("k", "m", Family::Gemma4, &sp, &conv, 32768);
        assert!(b.cached_tokens > 1000 && b.load_ns == 0 && b.prompt_ns < a.prompt_ns);
        // thinking off: a new user message re-renders nothing, the whole prompt stays cached
        conv.messages.push(msg("user", "go on"));
        let c = s.admit("k", "m", Family::Gemma4, &sp, &conv, 32768);
        assert_eq!(c.cached_tokens, b.prompt_tokens);
        // the same prompt again: all but its last token from the cache, so a little prefill
        let again = s.admit("k", "m", Family::Gemma4, &sp, &conv, 32768);
        assert_eq!(again.cached_tokens, again.prompt_tokens - 1);
        assert!(again.prompt_ns > 0);
        // another num_ctx reloads
        let d = s.admit("k", "m", Family::Gemma4, &sp, &conv, 4096);
        assert!(d.load_ns > 0 && d.cached_tokens == 0);
        // another key has its own slot
        assert_eq!(
            s.admit("other", "m", Family::Gemma4, &sp, &conv, 32768)
                .cached_tokens,
            0
        );
    }

    #[test]
    fn a_new_query_rerenders_only_in_thinking_mode_and_only_after_the_previous_query() {
        let mut conv = Conv {
            messages: vec![
                msg("system", "rules"),
                msg("user", "task"),
                msg("assistant", "a1"),
                msg("tool", "r1"),
                msg("user", "state line"),
                msg("assistant", "a2"),
                msg("tool", "r2"),
                msg("user", "go on"),
            ],
            think: true,
            ..Default::default()
        };
        // elements: tools, system, task, a1, r1, state, a2, r2, go on → cut before a2
        assert_eq!(rerender_cut(Family::Gemma4, &conv), Some(6));
        assert_eq!(rerender_cut(Family::Qwen35, &conv), Some(6));
        // families whose templates do not move thinking keep everything
        assert_eq!(rerender_cut(Family::Llama, &conv), None);
        // a tool result the arm sends as a user message is a query for both renderers,
        // unless qwen3.5 sees it wrapped in <tool_response> tags
        conv.messages[4].content = "[Tool result for ls]: a.txt".into();
        assert_eq!(rerender_cut(Family::Gemma4, &conv), Some(6));
        conv.messages[4].content = "<tool_response>\na.txt\n</tool_response>".into();
        assert_eq!(rerender_cut(Family::Gemma4, &conv), Some(6));
        assert_eq!(rerender_cut(Family::Qwen35, &conv), Some(3));
        conv.messages[7].content = "<tool_response>\nr\n</tool_response>".into();
        assert_eq!(rerender_cut(Family::Qwen35, &conv), None);
        // no thinking: nothing is re-rendered
        conv.think = false;
        assert_eq!(rerender_cut(Family::Gemma4, &conv), None);
        // the newest message not a query (a tool result): nothing is re-rendered
        conv.think = true;
        conv.messages.push(msg("tool", "r3"));
        assert_eq!(rerender_cut(Family::Gemma4, &conv), None);
    }
}

//! How much of each request repeats the previous one byte for byte, from the start: the part a
//! server's prompt cache (llama-server's `cache_prompt`, exact token-prefix reuse) can serve
//! without evaluating it again. The harness keeps that prefix stable — a fixed system prompt
//! and tool list, an append-only history outside compaction — and reports the numbers per
//! request in the `model_call` event (`prompt_bytes`, `prefix_bytes`, `est_prefix_tokens`).
//!
//! Bytes are those of the request as serialized for Ollama's `/api/chat` (tool definitions
//! first, then one JSON object per message), counted per whole message: a message that
//! differs breaks the prefix where it starts. Only new messages are serialized on each call.

use crate::backend::ollama::{wire_messages, wire_tools};
use crate::estimate::{estimate_message, estimate_tool};
use crate::messages::{Message, ToolSpec};

/// The shared prefix of one request with the one before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrefixStats {
    /// Bytes of the whole request (tools and messages).
    pub prompt_bytes: u64,
    /// Bytes of it that repeat the previous request from the start.
    pub prefix_bytes: u64,
    /// Estimated tokens of that prefix (the estimator, uncorrected).
    pub est_prefix_tokens: u64,
    /// Messages of the previous request this one starts with.
    pub shared_messages: usize,
}

impl PrefixStats {
    /// The shared share of the request's bytes.
    #[cfg(test)]
    pub fn share(&self) -> f64 {
        if self.prompt_bytes == 0 {
            0.0
        } else {
            self.prefix_bytes as f64 / self.prompt_bytes as f64
        }
    }
}

/// The previous request, kept to compare the next one with.
#[derive(Default)]
pub struct PrefixTracker {
    prev: Vec<Message>,
    /// Serialized bytes and estimated tokens of each message of `prev`.
    sizes: Vec<(u64, u64)>,
    tools: Vec<ToolSpec>,
    tools_size: (u64, u64),
}

fn message_size(m: &Message) -> (u64, u64) {
    let bytes = wire_messages(std::slice::from_ref(m))
        .first()
        .and_then(|w| serde_json::to_vec(w).ok())
        .map(|v| v.len() as u64)
        .unwrap_or(0);
    (bytes, estimate_message(m) as u64)
}

impl PrefixTracker {
    /// Compare a request with the previous one and remember it.
    pub fn observe(&mut self, messages: &[Message], tools: &[ToolSpec]) -> PrefixStats {
        let same_tools = self.tools == tools;
        if !same_tools {
            self.tools = tools.to_vec();
            let bytes = serde_json::to_vec(&wire_tools(tools))
                .map(|v| v.len() as u64)
                .unwrap_or(0);
            let est = tools.iter().map(|t| estimate_tool(t) as u64).sum();
            self.tools_size = (bytes, est);
        }
        let shared = self
            .prev
            .iter()
            .zip(messages)
            .take_while(|(a, b)| a == b)
            .count();
        self.prev.truncate(shared);
        self.sizes.truncate(shared);
        for m in &messages[shared..] {
            self.prev.push(m.clone());
            self.sizes.push(message_size(m));
        }
        let (tb, tt) = self.tools_size;
        let total_bytes = tb + self.sizes.iter().map(|s| s.0).sum::<u64>();
        // another tool list changes the render from its start
        let (pb, pt) = if same_tools {
            let (b, t) = self.sizes[..shared]
                .iter()
                .fold((0, 0), |(b, t), s| (b + s.0, t + s.1));
            (tb + b, tt + t)
        } else {
            (0, 0)
        };
        PrefixStats {
            prompt_bytes: total_bytes,
            prefix_bytes: pb,
            est_prefix_tokens: pt,
            shared_messages: shared,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table;

    #[test]
    fn an_appended_request_shares_all_of_the_previous_one() {
        let tools = table::specs_for(&["read_file", "finish"]);
        let mut t = PrefixTracker::default();
        let mut m = vec![Message::system("s"), Message::user("task")];
        let first = t.observe(&m, &tools);
        assert_eq!((first.prefix_bytes, first.shared_messages), (0, 0));
        assert!(first.prompt_bytes > 0);
        m.push(Message::assistant("ok", vec![]));
        let second = t.observe(&m, &tools);
        assert_eq!(second.prefix_bytes, first.prompt_bytes);
        assert_eq!(second.shared_messages, 2);
        assert!(second.share() > 0.5 && second.share() < 1.0);
        // a rewritten history shares only what is still equal
        m[1].content = "other task".into();
        let third = t.observe(&m, &tools);
        assert_eq!(third.shared_messages, 1);
        assert!(third.prefix_bytes < second.prefix_bytes);
        // another tool list breaks the prefix at the start
        let fourth = t.observe(&m, &table::specs_for(&["read_file"]));
        assert_eq!(fourth.prefix_bytes, 0);
        assert_eq!(fourth.shared_messages, 3);
    }
}

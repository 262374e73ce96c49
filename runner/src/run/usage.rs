//! Token, call and turn counts of an attempt, from its trajectory (`proxy.jsonl`, written by
//! the proxy every arm talks through), so every arm is measured the same way. Our harness's
//! event log adds only its mechanism firings (read by the analysis). The peak prompt and the
//! failure-form counters come from `lrab_analysis::trajectory_counts`, which says what each is
//! derived from.

use lrab_records::TrajectoryEntry;

/// Counts for the cells.csv columns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    /// Prompt tokens served from the KV cache; only when every counted request said.
    pub cached_prompt_tokens: Option<u64>,
    /// Prompt tokens evaluated; only when every counted request said.
    pub uncached_prompt_tokens: Option<u64>,
    /// Chat requests, failed ones included.
    pub model_calls: Option<u64>,
    /// Tool calls in the replies.
    pub tool_calls: Option<u64>,
    /// Requests answered with a reply.
    pub turns: Option<u64>,
    /// Peak prompt and failure-form counters.
    pub counters: lrab_analysis::trajectory_counts::Counters,
}

/// A sum over the requests that report `f`; `None` when none does, or — with `all` — when one
/// that counted prompt tokens does not (a partial sum would pass for a total).
fn sum(
    t: &[TrajectoryEntry],
    f: impl Fn(&TrajectoryEntry) -> Option<u64>,
    all: bool,
) -> Option<u64> {
    let counted = t.iter().filter(|e| e.prompt_tokens.is_some());
    if all && counted.clone().any(|e| f(e).is_none()) {
        return None;
    }
    let known: Vec<u64> = t.iter().filter_map(&f).collect();
    if known.is_empty() && t.iter().any(|e| e.is_turn()) {
        return None;
    }
    Some(known.iter().sum())
}

/// From the trajectory (an attempt without requests has zero of everything).
pub fn from_trajectory(t: &[TrajectoryEntry]) -> Usage {
    Usage {
        prompt_tokens: sum(t, |e| e.prompt_tokens, false),
        completion_tokens: sum(t, |e| e.completion_tokens, false),
        cached_prompt_tokens: sum(t, |e| e.cached_prompt_tokens, true),
        uncached_prompt_tokens: sum(t, |e| e.uncached_prompt_tokens, true),
        model_calls: Some(t.len() as u64),
        tool_calls: Some(t.iter().map(|e| e.reply_tool_calls() as u64).sum()),
        turns: Some(t.iter().filter(|e| e.is_turn()).count() as u64),
        counters: lrab_analysis::trajectory_counts::from_trajectory(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lrab_records::{TrajectoryReply, TrajectoryToolCall};

    fn e(p: Option<u64>, cached: Option<u64>, calls: usize, ok: bool) -> TrajectoryEntry {
        TrajectoryEntry {
            status: if ok { 200 } else { 500 },
            reply: ok.then(|| TrajectoryReply {
                tool_calls: vec![TrajectoryToolCall::default(); calls],
                ..Default::default()
            }),
            prompt_tokens: p,
            completion_tokens: p.map(|_| 5),
            cached_prompt_tokens: cached,
            uncached_prompt_tokens: p.zip(cached).map(|(p, c)| p - c),
            ..Default::default()
        }
    }

    #[test]
    fn counts_every_request_the_same_way() {
        let t = vec![
            e(Some(100), Some(0), 1, true),
            e(None, None, 0, false),
            e(Some(150), Some(100), 2, true),
        ];
        let u = from_trajectory(&t);
        assert_eq!(u.prompt_tokens, Some(250));
        assert_eq!(u.completion_tokens, Some(10));
        assert_eq!(u.cached_prompt_tokens, Some(100));
        assert_eq!(u.uncached_prompt_tokens, Some(150));
        assert_eq!(u.model_calls, Some(3));
        assert_eq!(u.turns, Some(2));
        assert_eq!(u.tool_calls, Some(3));
        assert_eq!(u.counters.peak_prompt_tokens, Some(150));
        assert_eq!(u.counters.provider_errors, 1, "the 500 without a message");
        // one request without a cache count: no cached total rather than a partial one
        let t = vec![e(Some(100), Some(0), 0, true), e(Some(80), None, 0, true)];
        let u = from_trajectory(&t);
        assert_eq!(u.prompt_tokens, Some(180));
        assert_eq!(u.cached_prompt_tokens, None);
        assert_eq!(u.uncached_prompt_tokens, None);
        // a backend that reports no tokens at all: unknown, not zero
        let u = from_trajectory(&[e(None, None, 1, true)]);
        assert_eq!((u.prompt_tokens, u.tool_calls), (None, Some(1)));
        let u = from_trajectory(&[]);
        assert_eq!((u.prompt_tokens, u.model_calls), (Some(0), Some(0)));
    }
}

//! Flat prefill with a pinned budget. The static prefill (task system prompt + base tools) is
//! kept small because a small local model pays for every prompt token on every call. Task-
//! category routing adds only the extra flat tool definitions the task text calls for.

use crate::estimate::prefill_tokens;
use crate::table::{self, Offer};

/// System prompt for task mode.
pub const SYSTEM_TASK: &str = "You are an autonomous agent. Work only in the current directory with relative paths; nobody will answer questions. Act through tool calls, one step at a time.
1. First call todo with a numbered plan of the required steps.
2. Do each step; write every file the task names, with real content. Compute numbers with scripts via run_shell; never invent results.
3. After changing code, run its tests and fix failures.
4. For long files, write_file a first part, then append_file the rest.
5. On an error, change approach instead of repeating the call.
When every step is done and checked, call todo done_all, then finish with a short summary.";

/// System prompt for chat mode: answer and stop.
pub const SYSTEM_CHAT: &str = "Answer the user's question directly and briefly. You may look at files in the current directory with read_file or list_dir first.";

/// Tools always offered in task mode (the static prefill's tools, in the table's order).
pub fn base_tools() -> Vec<&'static str> {
    table::names(|t| t.offer == Offer::Base)
}

/// Tools offered in chat mode (read-only).
pub fn chat_tools() -> Vec<&'static str> {
    table::names(|t| t.chat)
}

/// Tool names for a task text: the base set plus the routed extras its words call for (in the
/// table's order).
pub fn route(task: &str) -> Vec<&'static str> {
    let lower = task.to_lowercase();
    table::names(|t| match t.offer {
        Offer::Base => true,
        Offer::Routed(words) => words.iter().any(|w| lower.contains(w)),
        Offer::Web => false,
    })
}

/// Words that call for the optional web tools (when they are configured at all).
const WEB_WORDS: &[&str] = &[
    "research", "web", "internet", "online", "source", "cite", "citation", "http://", "https://",
    "url", "look up", "latest",
];

/// Whether the task text calls for the web tools (routing; only when web search is on).
pub fn wants_web(task: &str) -> bool {
    let lower = task.to_lowercase();
    WEB_WORDS.iter().any(|w| lower.contains(w))
}

/// Every tool but the optional web tools (what the `flat_prefill` ablation sends).
pub fn all_tools() -> Vec<&'static str> {
    table::all_but_web()
}

/// The static prefill under the published benchmark's estimator (`estimate`): task system
/// prompt + base tools.
pub fn static_prefill() -> usize {
    prefill_tokens(SYSTEM_TASK, &table::specs_for(&base_tools()))
}

/// Per-part breakdown for `lrab-harness prefill`.
pub fn breakdown() -> Vec<(String, usize)> {
    let mut v = vec![(
        "system prompt".to_string(),
        crate::estimate::estimate_str(SYSTEM_TASK),
    )];
    for t in table::specs_for(&base_tools()) {
        v.push((
            format!("tool {}", t.name),
            crate::estimate::estimate_tool(&t),
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pinned: any change to the system prompt or base tool definitions must update this
    /// number deliberately. The published Mingbird harness: 774 (v1.5.0) / 797 (v1.6).
    #[test]
    fn static_prefill_is_pinned_and_within_budget() {
        assert_eq!(static_prefill(), PINNED_PREFILL);
        assert!(static_prefill() <= 600);
        assert!(static_prefill() < 774);
    }

    const PINNED_PREFILL: usize = 556;

    #[test]
    fn routing_adds_only_needed_tools() {
        let r = route("Write a literature review in review.md");
        assert_eq!(r, base_tools());
        let r = route("Fix the bugs in inventory.py so the tests pass");
        assert!(r.contains(&"rollback") && !r.contains(&"search_files"));
        let r = route("Search the corpus for duplicate lines");
        assert!(r.contains(&"search_files"));
        assert_eq!(all_tools().len(), 11);
        assert!(!all_tools().contains(&"web_search"));
        assert!(wants_web("Research the topic and cite your sources"));
        assert!(!wants_web("Fix the bugs in inventory.py"));
    }
}

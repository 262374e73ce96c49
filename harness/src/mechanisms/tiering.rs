//! Chat/task tiering: a question gets a minimal prefill (short prompt, read-only tools) and the
//! run ends on the answer; real work gets the full task setup. Looks at the latest real (not
//! harness-injected) user message.

use regex::Regex;
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Chat,
    Task,
}

impl Tier {
    /// The name used in the checkpoint and the event log.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Chat => "chat",
            Tier::Task => "task",
        }
    }
}

/// The answer to a writing tool called for a question (before the run escalates to a task).
pub fn chat_refusal(tool: &str) -> String {
    format!("error: {tool} is not available for a question; answer in plain text")
}

fn task_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)\b(write|create|implement|fix|analy[sz]e|build|generate|produce|compute|calculate|refactor|edit|modify|save|draft|design|convert|update|add|make|run|test|plan|required steps|step \d)\b|\b[\w-]+\.(md|py|csv|json|txt|yaml|yml|png|html|tsv)\b")
            .expect("static regex")
    })
}

fn chat_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)^(hi|hello|hey|thanks|thank you|what|who|why|when|where|which|how|is|are|can|could|does|do|explain|tell me)\b")
            .expect("static regex")
    })
}

pub fn classify(text: &str) -> Tier {
    let t = text.trim();
    if task_re().is_match(t) {
        return Tier::Task;
    }
    if t.ends_with('?') || chat_re().is_match(t) || t.chars().count() <= 40 {
        return Tier::Chat;
    }
    Tier::Task
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_questions_and_tasks() {
        assert_eq!(classify("What is the capital of France?"), Tier::Chat);
        assert_eq!(classify("hello"), Tier::Chat);
        assert_eq!(
            classify(
                "Explain the difference between a list and a tuple in Python in one paragraph"
            ),
            Tier::Chat
        );
        assert_eq!(
            classify("Write a review of the papers in review.md"),
            Tier::Task
        );
        assert_eq!(
            classify("Required steps (plan at least 9):\n1. read the data"),
            Tier::Task
        );
        assert_eq!(classify("Please go through the data and report anomalies found in the measurements, with evidence"), Tier::Task);
    }
}

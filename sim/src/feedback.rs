//! What the model reads from the messages that came back after its own turn.
//!
//! Only generic signals any model would pick up are used: whether the call ran, whether an
//! error is reported, whether the error points at a file and line, whether the text warns
//! about repetition, and whether it says the call's effect is already in place. Bracketed tags,
//! prefixes and names of any harness are ignored: the classification works on plain English
//! words, so renaming a harness's markers changes nothing.

use regex::Regex;
use std::sync::OnceLock;

/// The signals of one feedback block (all non-assistant messages after an assistant turn).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Feedback {
    /// Something came back at all.
    pub present: bool,
    /// The call was not executed (blocked, refused, intercepted, denied, skipped, rejected).
    pub not_run: bool,
    /// An error or failure is reported.
    pub error: bool,
    /// The error names a file and a line number.
    pub precise: bool,
    /// The text warns about repeating the same call.
    pub repeat_warning: bool,
    /// The text says what the call asks for is already in place (an earlier identical call
    /// succeeded: "already has exactly this content", "which succeeded … still holds"). A
    /// model reads that as the step being done even though nothing ran this time.
    pub already_done: bool,
}

const NOT_RUN: &[&str] = &[
    "not executed",
    "was not run",
    "not been executed",
    "blocked",
    "intercepted",
    "refused",
    "denied",
    "skipped",
    "rejected",
    "not allowed",
];
const ERROR: &[&str] = &[
    "error",
    "failed",
    "failure",
    "traceback",
    "exception",
    "no such file",
    "not found",
    "invalid",
    "cannot ",
    "could not",
    "unable to",
];
const REPEAT: &[&str] = &[
    "repeat",
    "same call",
    "identical",
    "same tool call",
    "again and again",
    "loop",
    "duplicate call",
];

const ALREADY_DONE: &[&str] = &[
    "already has",
    "already contains",
    "already applied",
    "already appended",
    "already written",
    "already succeeded",
    "which succeeded",
    "still holds",
    "already done",
    "already in place",
    "already up to date",
];

fn line_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?i)\bline \d+|\.[a-z]{1,5}:\d+").expect("valid regex"))
}

fn file_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)\b[\w-]+\.(py|md|txt|csv|json|yaml|yml|toml|sh|js|ts|html|tsv|log)\b")
            .expect("valid regex")
    })
}

/// Counts of zero ("0 failed", "no errors") are not errors.
fn benign_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\b(0|no|zero) (failed|failures?|errors?)\b|\berrors?=0\b")
            .expect("valid regex")
    })
}

/// Classifies the text of one feedback block.
pub fn classify(text: &str) -> Feedback {
    if text.trim().is_empty() {
        return Feedback {
            present: !text.is_empty(),
            ..Default::default()
        };
    }
    // only the head and tail matter for long outputs; keeps classification cheap
    let lower = benign_re()
        .replace_all(&clip(text, 4000).to_lowercase(), " ")
        .into_owned();
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    let error = has(ERROR);
    Feedback {
        present: true,
        not_run: has(NOT_RUN),
        error,
        precise: error && line_re().is_match(&lower) && file_re().is_match(&lower),
        repeat_warning: has(REPEAT),
        already_done: has(ALREADY_DONE),
    }
}

/// First and last `n` bytes (on char boundaries) of a long text.
pub fn clip(text: &str, n: usize) -> String {
    if text.len() <= 2 * n {
        return text.to_string();
    }
    let mut a = n;
    while !text.is_char_boundary(a) {
        a -= 1;
    }
    let mut b = text.len() - n;
    while !text.is_char_boundary(b) {
        b += 1;
    }
    format!("{}\n{}", &text[..a], &text[b..])
}

/// Whether a feedback text mentions this relative path (or its basename).
pub fn mentions(text: &str, path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    text.contains(path) || (!base.is_empty() && text.contains(base))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_signals() {
        let f = classify("Traceback (most recent call last):\n  File \"m01.py\", line 7\nSyntaxError: invalid syntax");
        assert!(f.error && f.precise && !f.not_run);
        let f = classify("Command failed with exit code 1");
        assert!(f.error && !f.precise);
        let f = classify("[anything] identical call intercepted: not executed");
        assert!(f.not_run && f.repeat_warning);
        let f = classify("Wrote 120 bytes to notes.md");
        assert!(f.present && !f.error && !f.not_run);
        assert!(!classify("").present);
        assert!(!classify("10 passed, 0 failed").error);
        assert!(classify("9 passed, 1 failed").error);
        let f = classify("FAILED test_inventory.py::test_add - AssertionError\ntest_inventory.py:42: AssertionError");
        assert!(f.precise);
        let f = classify("warning: m.py does not parse as Python: File \"<unknown>\", line 71\nSyntaxError: invalid syntax");
        assert!(f.precise);
        assert!(!classify("SyntaxError on line 3").precise);
    }

    #[test]
    fn an_earlier_success_reads_as_done() {
        let f = classify("unchanged: notes.md already has exactly this content (written at turn 3); this identical call was not executed again.");
        assert!(f.already_done && f.not_run && f.repeat_warning && !f.error);
        let f = classify("not executed: identical to your call at turn 4, which succeeded, and nothing in the workdir has changed since, so its result still holds.");
        assert!(f.already_done && f.not_run);
        let f = classify("[not executed: identical to your previous call, and nothing has changed since; its result is above.]");
        assert!(!f.already_done && f.not_run);
        assert!(!classify("Wrote 1538 bytes to change_log.md").already_done);
    }

    #[test]
    fn renaming_markers_keeps_the_signals() {
        let a = classify("[lrab-harness] Identical call blocked; not executed. Do not repeat it.");
        let b = classify("<<agent-x>> Identical call blocked; not executed. Do not repeat it.");
        assert_eq!(a, b);
    }

    #[test]
    fn clip_keeps_head_and_tail() {
        let t = "a".repeat(10_000) + "END";
        let c = clip(&t, 100);
        assert!(c.ends_with("END") && c.len() < 300);
    }
}

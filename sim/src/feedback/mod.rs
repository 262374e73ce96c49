//! What the model reads from the messages that come back after its own turn.
//!
//! Only generic evidence decides (`evidence.rs`): structured fields of a JSON result, an
//! `Error:` prefix, a non-zero exit, a traceback, a file and line, a failing test, a named
//! missing item, a refusal, "nothing changed", a turned-down finish. The word lists
//! (`words.rs`) are built from the messages of every arm the suite ships, so no arm's wording
//! is special; paraphrases of any arm read the same (`tests/wording_proof.rs`). A result that
//! echoes the call's own arguments is read without the echo (`echo.rs`).

pub(crate) mod echo;
mod evidence;
mod words;

/// The signals of one feedback block (all non-assistant messages after an assistant turn).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Feedback {
    /// Something came back at all.
    pub present: bool,
    /// The call was not carried out (refused, blocked, not executed).
    pub not_run: bool,
    /// It was refused by a policy or guard.
    pub refused: bool,
    /// An error or failure is reported.
    pub error: bool,
    /// The report points at something exact: a file and line, a failing test, a named
    /// missing item.
    pub precise: bool,
    /// The text warns about repeating the same call.
    pub repeat_warning: bool,
    /// What the call asks for is already in place (nothing changed / already done).
    pub already_done: bool,
    /// A finish claim was turned down.
    pub not_done: bool,
}

/// The meaning of one message, as the simulated model acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Meaning {
    Empty,
    Success,
    SuccessNoop,
    FailurePrecise,
    FailureGeneric,
    Refused,
    NudgeContinue,
    FinishRejectedPrecise,
    FinishRejectedGeneric,
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

/// Classifies the text of one feedback block (the signals the task policy acts on; the same
/// evidence as [`read`]). Memoized: every request re-reads its conversation from the start,
/// and all blocks but the newest were classified on earlier requests; the memo holds the
/// pure function's results only, so answers are the same with or without it.
pub fn classify(text: &str) -> Feedback {
    use std::collections::HashMap;
    use std::hash::{Hash, Hasher};
    use std::sync::{Mutex, OnceLock};
    /// Bounded so a long-running server does not grow without limit.
    const MEMO_MAX: usize = 100_000;
    static MEMO: OnceLock<Mutex<HashMap<(u64, usize), Feedback>>> = OnceLock::new();
    // SipHash with fixed keys: the same key on every run and machine
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new();
    text.hash(&mut h);
    let key = (h.finish(), text.len());
    let memo = MEMO.get_or_init(Default::default);
    if let Some(f) = memo.lock().ok().and_then(|m| m.get(&key).copied()) {
        return f;
    }
    let f = classify_uncached(text);
    if let Ok(mut m) = memo.lock() {
        if m.len() >= MEMO_MAX {
            m.clear();
        }
        m.insert(key, f);
    }
    f
}

fn classify_uncached(text: &str) -> Feedback {
    if text.trim().is_empty() {
        return Feedback {
            present: !text.is_empty(),
            ..Default::default()
        };
    }
    let e = evidence::read(&clip(text, 4000));
    let refused = e.refused_strong || (e.refused_weak && !e.error);
    let noop = e.noop && !refused && !(e.error && (e.location || e.missing));
    let error = e.error && !noop;
    Feedback {
        present: true,
        not_run: refused || e.not_run,
        refused,
        error,
        precise: (error || e.not_done) && exact(&e),
        repeat_warning: e.repeat,
        already_done: noop,
        not_done: e.not_done,
    }
}

/// The model's reading of one message that came back for a call of `tool` (`""` for a user
/// or system message that is not a tool result). A pure function of the text and the tool,
/// so the wording-proof test can check it without a server.
pub fn read(text: &str, tool: &str) -> Meaning {
    let (tool, body) = unwrap_tool_result(text, tool);
    if body.trim().is_empty() {
        return Meaning::Empty;
    }
    let e = evidence::read(&clip(body, 4000));
    if tool.is_empty() {
        return if e.refused_strong {
            Meaning::Refused
        } else {
            Meaning::NudgeContinue
        };
    }
    if crate::toolkit::is_finish_name(tool) {
        let rejected = e.not_done || e.error || e.refused_weak || e.refused_strong;
        // precise: it names what is missing (a file, a line, listed or quoted open items)
        let items =
            e.file || e.list || e.location || (e.named && (e.missing || has_open_items(body)));
        return match (rejected, items) {
            (false, _) => Meaning::Success,
            (true, true) => Meaning::FinishRejectedPrecise,
            (true, false) => Meaning::FinishRejectedGeneric,
        };
    }
    if e.refused_strong {
        return Meaning::Refused;
    }
    if e.noop && !(e.error && (e.location || e.missing)) {
        return Meaning::SuccessNoop;
    }
    if e.error {
        return if exact(&e) {
            Meaning::FailurePrecise
        } else {
            Meaning::FailureGeneric
        };
    }
    if e.refused_weak {
        return Meaning::Refused;
    }
    Meaning::Success
}

/// A failure that says exactly what is wrong: a location, a failing test, a missing item, or
/// a quoted item (a file named without saying what is wrong with it is not enough).
fn exact(e: &evidence::Evidence) -> bool {
    e.location || e.missing || (e.named && !e.file && !e.status_only)
}

/// Words that introduce the open items of a plan.
fn has_open_items(text: &str) -> bool {
    let t = text.to_lowercase();
    [
        "open item",
        "unchecked",
        "still shows",
        "still has",
        "steps are",
        "items are",
        "as open",
    ]
    .iter()
    .any(|w| t.contains(w))
}

/// A tool result some arms send as a user message (`[Tool result for NAME]:` …): the tool it
/// names and the text after the header.
fn unwrap_tool_result<'a>(text: &'a str, tool: &'a str) -> (&'a str, &'a str) {
    if !tool.is_empty() {
        return (tool, text);
    }
    let t = text.trim_start();
    if let Some(rest) = t.strip_prefix("[Tool result for ") {
        if let Some((name, body)) = rest.split_once("]:") {
            return (name.trim(), body);
        }
    }
    (tool, text)
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
    fn memo_answers_as_the_function() {
        let texts = [
            "Traceback (most recent call last):\n  File \"a.py\", line 3\nNameError: x",
            "Wrote 12 bytes",
            "",
            " ",
            "1 failed, 3 passed",
        ];
        for _ in 0..2 {
            for t in texts {
                assert_eq!(classify(t), classify_uncached(t), "{t:?}");
            }
        }
    }

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
        assert!(classify("FAILED test_inventory.py::test_add - AssertionError").precise);
        assert!(classify("[exit 2] can't open file 'missing.py'").error);
        assert!(!classify("SyntaxError somewhere").precise);
    }

    #[test]
    fn meanings() {
        assert_eq!(read("Wrote file successfully.", "write"), Meaning::Success);
        assert_eq!(
            read(
                "unchanged: notes.md already has exactly this content",
                "write_file"
            ),
            Meaning::SuccessNoop
        );
        assert_eq!(
            read(
                "Error: command blocked by security policy (rm). ",
                "shell_exec"
            ),
            Meaning::Refused
        );
        assert_eq!(
            read("Not finished: still missing speedup_report.md", "finish"),
            Meaning::FinishRejectedPrecise
        );
        assert_eq!(
            read("Not finished yet, keep working.", "finish"),
            Meaning::FinishRejectedGeneric
        );
        assert_eq!(
            read("Please continue with the task.", ""),
            Meaning::NudgeContinue
        );
        assert_eq!(
            read("[Tool result for write_file]:\nWritten 12 bytes → a.md", ""),
            Meaning::Success
        );
        assert_eq!(read("exit status 1", "bash"), Meaning::FailureGeneric);
    }

    #[test]
    fn renaming_markers_keeps_the_signals() {
        let a = classify("[lrab-harness] Identical call blocked; not executed. Do not repeat it.");
        let b = classify("<<agent-x>> Identical call blocked; not executed. Do not repeat it.");
        assert_eq!(a, b);
    }
}

#[cfg(test)]
mod debug {
    /// `LRAB_FEEDBACK_DEBUG="text"` prints the evidence of one text.
    #[test]
    fn print_evidence() {
        if let Ok(t) = std::env::var("LRAB_FEEDBACK_DEBUG") {
            eprintln!("{:?}", super::evidence::read(&t));
        }
    }
}

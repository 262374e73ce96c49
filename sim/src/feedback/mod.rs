//! What the model reads from the messages that come back after its own turn.
//!
//! Only generic evidence decides: an error field or an `Error:` prefix, a non-zero exit, a
//! traceback, a file and line, a failing test id, a named missing item, a refusal, "nothing
//! changed". The word lists (`words.rs`) are built from the messages of every arm the suite
//! ships, so no arm's wording is special; paraphrases of any arm read the same
//! (`tests/wording_proof.rs`).

mod words;

use regex::Regex;
use std::sync::OnceLock;

/// The signals of one feedback block (all non-assistant messages after an assistant turn).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Feedback {
    /// Something came back at all.
    pub present: bool,
    /// The call was not carried out (refused, blocked, not executed).
    pub not_run: bool,
    /// It was refused by a policy or guard (a subset of `not_run`).
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

fn re(cell: &'static OnceLock<Regex>, pat: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pat).expect("valid regex"))
}

/// `x.py:12`, `File "x.py", line 12`, `x.py, line 12`, `line 12 of x.py`.
fn file_line(t: &str) -> bool {
    static A: OnceLock<Regex> = OnceLock::new();
    static B: OnceLock<Regex> = OnceLock::new();
    re(&A, r#"[\w./-]+\.[a-z]{1,5}"?(:\d+|,? line \d+)"#).is_match(t)
        || re(&B, r"\bline \d+\b.{0,40}\b[\w-]+\.[a-z]{1,5}\b").is_match(t)
}

/// `test_x.py::test_y`, `FAILED test_y`, `test_y failed`.
fn test_id(t: &str) -> bool {
    static A: OnceLock<Regex> = OnceLock::new();
    re(&A, r"\w+\.py::\w+|\bfailed:? test_\w+|\btest_\w+\b.{0,20}\bfail").is_match(t)
}

/// A named item: a file name, or a quoted / backticked token.
fn named_item(t: &str) -> bool {
    static A: OnceLock<Regex> = OnceLock::new();
    re(
        &A,
        r#"\b[\w-]+\.(py|md|txt|csv|json|yaml|yml|toml|sh|js|ts|html|tsv|log|png|svg|pdf)\b|`[^`\s]{2,60}`|'[\w./-]{2,60}'|"[\w./-]{2,60}""#,
    )
    .is_match(t)
}

/// A non-zero exit status in any arm's spelling.
fn nonzero_exit(t: &str) -> bool {
    static A: OnceLock<Regex> = OnceLock::new();
    re(
        &A,
        r"exit(ed)?( with)?( code| status)?[ :=]*\[?-?[1-9]\d*|\[exit -?[1-9]\d*\]|return(ed)? (code )?[1-9]\d*|status [1-9]\d*\b|\b[1-9]\d* (failed|errors?)\b",
    )
    .is_match(t)
}

fn has(t: &str, words: &[&str]) -> bool {
    words.iter().any(|w| t.contains(w))
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

/// Classifies the text of one feedback block.
pub fn classify(text: &str) -> Feedback {
    if text.trim().is_empty() {
        return Feedback {
            present: !text.is_empty(),
            ..Default::default()
        };
    }
    let mut lower = clip(text, 4000).to_lowercase();
    for b in words::BENIGN {
        lower = lower.replace(b, " ");
    }
    let t = lower.as_str();
    let refused = has(t, words::REFUSED);
    let not_run = refused || has(t, words::NOT_RUN);
    let already = has(t, words::ALREADY);
    let error = has(t, words::ERROR) || nonzero_exit(t);
    let not_done = has(t, words::NOT_DONE);
    let precise = file_line(t) || test_id(t) || ((error || not_done) && named_item(t) && (t.contains("missing") || t.contains("not found") || t.contains("no such") || t.contains("does not exist") || t.contains("doesn't exist")));
    Feedback {
        present: true,
        not_run,
        refused,
        error: error && !(already && !nonzero_exit(t) && !t.contains("traceback")),
        precise: precise && (error || not_done),
        repeat_warning: has(t, words::REPEAT),
        already_done: already && !refused,
        not_done,
    }
}

/// The model's reading of one message that came back for a call of `tool` (`""` for a user
/// or system message that is not a tool result). A pure function of the text and the tool,
/// so the wording-proof test can check it without a server.
pub fn read(text: &str, tool: &str) -> Meaning {
    let (tool, body) = unwrap_tool_result(text, tool);
    let f = classify(body);
    if !f.present || body.trim().is_empty() {
        return Meaning::Empty;
    }
    if tool.is_empty() {
        return if f.refused { Meaning::Refused } else { Meaning::NudgeContinue };
    }
    if crate::toolkit::is_finish_name(tool) {
        let rejected = f.not_done || f.error || f.not_run;
        return match (rejected, f.precise || named_item(&body.to_lowercase())) {
            (false, _) => Meaning::Success,
            (true, true) => Meaning::FinishRejectedPrecise,
            (true, false) => Meaning::FinishRejectedGeneric,
        };
    }
    if f.already_done && !f.error {
        return Meaning::SuccessNoop;
    }
    if f.refused {
        return Meaning::Refused;
    }
    match (f.error, f.precise) {
        (true, true) => Meaning::FailurePrecise,
        (true, false) => Meaning::FailureGeneric,
        _ => Meaning::Success,
    }
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
        assert_eq!(read("unchanged: notes.md already has exactly this content", "write_file"), Meaning::SuccessNoop);
        assert_eq!(read("Error: command blocked by security policy (rm). ", "shell_exec"), Meaning::Refused);
        assert_eq!(read("Not finished: still missing speedup_report.md", "finish"), Meaning::FinishRejectedPrecise);
        assert_eq!(read("Not finished yet, keep working.", "finish"), Meaning::FinishRejectedGeneric);
        assert_eq!(read("Please continue with the task.", ""), Meaning::NudgeContinue);
        assert_eq!(read("[Tool result for write_file]:\nWritten 12 bytes → a.md", ""), Meaning::Success);
        assert_eq!(read("exit status 1", "bash"), Meaning::FailureGeneric);
    }

    #[test]
    fn renaming_markers_keeps_the_signals() {
        let a = classify("[lrab-harness] Identical call blocked; not executed. Do not repeat it.");
        let b = classify("<<agent-x>> Identical call blocked; not executed. Do not repeat it.");
        assert_eq!(a, b);
    }
}

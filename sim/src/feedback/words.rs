//! The word lists of feedback reading. Each entry is generic evidence a model would read in a
//! tool result or a message, gathered from the messages of every arm the suite ships and of
//! the tools they run — never from one arm alone:
//!
//! - agent-mini 0.3.1 (`agent_mini/agent/tools.py`): `Error: …`, `Error: file not found`,
//!   `Access denied: … outside workspace`, `command blocked by security policy`,
//!   `command timed out after 120 seconds`, `old_text not found`, `Written N bytes`,
//!   `No matches found`; tool results come back as user messages `[Tool result for NAME]:`.
//! - opencode 1.18.23 (observed results): `Wrote file successfully.`, invalid-argument errors
//!   of its schema validation (`Invalid input`, `Type validation failed`), permission denials.
//! - goose 1.48.0 (arms-and-ollama-api.md §A.2): shell output with the exit status, declined
//!   tool calls.
//! - Mingbird v1.5 (lrab-mingbird.md §5.4–5.6): `[intercepted, identical call]`, `[已拦截`,
//!   fake-finish and test-gate rejections naming the failing test and `File "…", line N`.
//! - Agent8088 (arms-and-ollama-api.md: verdict banners): `[verdict: FAILED]`,
//!   `Command exited with status N`, `test result: FAILED`, `N failed`.
//! - our harness (harness/src): `[exit N]`, `refused: …`, `not executed: identical …`,
//!   `unchanged: … already has exactly this content`, `Not finished: …`, `missing file(s)`.
//! - the programs the tasks run (python, pytest, POSIX shells): `Traceback (most recent call
//!   last)`, `File "x.py", line N`, `FAILED test_x.py::test_y`, `N passed, M failed`,
//!   `No such file or directory`, `command not found`, `Permission denied`.
//!
//! Matching is on lowercase text with each arm's own brackets and tags ignored, so renaming a
//! marker changes nothing.

/// A failure is reported (substrings of the lowercased text).
pub const ERROR: &[&str] = &[
    "error",
    "failed",
    "failure",
    "fails",
    "traceback",
    "exception",
    "no such file",
    "not found",
    "command not found",
    "invalid",
    "cannot ",
    "can't ",
    "could not",
    "couldn't",
    "unable to",
    "timed out",
    "syntax",
    "did not",
    "didn't",
    "does not exist",
    "doesn't exist",
    "not work",
    "wrong",
    "incorrect",
    "crash",
    "panic",
    "non-zero",
    "nonzero",
    "错误",
    "失败",
];

/// Counts of zero and "no error" phrases, removed before looking for errors.
pub const BENIGN: &[&str] = &[
    "0 failed",
    "0 failures",
    "0 errors",
    "0 error",
    "no errors",
    "no error",
    "without errors",
    "without error",
    "error-free",
    "errors=0",
    "failed=0",
    "zero errors",
    "zero failures",
    "no failures",
    "nothing failed",
];

/// The call was not carried out by policy, safety or a guard.
pub const REFUSED: &[&str] = &[
    "refused",
    "denied",
    "blocked",
    "not allowed",
    "not permitted",
    "forbidden",
    "permission",
    "security policy",
    "declined",
    "rejected",
    "intercepted",
    "outside the workspace",
    "outside workspace",
    "已拦截",
    "拒绝",
];

/// The call (or its effect) was not run this time.
pub const NOT_RUN: &[&str] = &[
    "not executed",
    "was not run",
    "not run again",
    "not been executed",
    "skipped",
    "did not run",
    "not carried out",
];

/// What the call asks for is already in place: an identical repeat answered with "nothing
/// changed" or "already done".
pub const ALREADY: &[&str] = &[
    "already",
    "unchanged",
    "nothing changed",
    "nothing has changed",
    "no changes",
    "no change",
    "nothing to do",
    "nothing new",
    "up to date",
    "up-to-date",
    "still holds",
    "same content",
    "identical content",
    "exactly this content",
    "has not changed",
    "hasn't changed",
    "is in place",
    "remains as",
];

/// A warning about repeating the same call.
pub const REPEAT: &[&str] = &[
    "repeat",
    "same call",
    "identical",
    "same tool call",
    "again and again",
    "loop",
    "duplicate",
    "same command",
    "same arguments",
];

/// A finish claim was not accepted.
pub const NOT_DONE: &[&str] = &[
    "not finished",
    "not done",
    "not complete",
    "incomplete",
    "not yet",
    "still missing",
    "missing",
    "still open",
    "remaining",
    "remain",
    "keep working",
    "continue",
    "cannot finish",
    "can't finish",
    "not accepted",
    "rejected",
    "before finishing",
    "unfinished",
    "outstanding",
    "left to do",
];

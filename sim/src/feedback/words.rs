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
    "error", "failed", "failure", "fails", "traceback", "exception", "no such file", "not found",
    "invalid", "cannot ", "can't ", "could not", "couldn't", "unable to", "timed out", "time limit",
    "timeout", "killed", "terminated", "exceeded", "exceeding", "stopped after", "without completing",
    "syntax", "does not compile",
    "not compile", "never closed", "no matching", "unclosed", "is red", "went wrong",
    "unexpected", "did not succeed", "didn't succeed", "did not work", "didn't work", "not work",
    "does not exist", "doesn't exist", "not present", "does not occur", "does not appear",
    "isn't in", "is not in", "no match", "there is no", "needs both", "only gave", "is required",
    "are required", "required argument", "required parameter", "not supplied", "is absent",
    "wrong", "incorrect", "crash", "panic", "non-zero", "nonzero", "错误", "失败", "缺少",
];

/// Failures that carry only a status (an exit code, a timeout, an internal error).
pub const STATUS_ONLY: &[&str] = &[
    "timed out", "time limit", "timeout", "killed", "terminated", "internal error", "went wrong",
    "stopped after", "without completing",
    "unexpected", "execution failed", "call failed", "tool error: failed", "no details",
    "no message", "no result", "did not succeed", "didn't succeed", "exited with",
];

/// A statement of what is missing (it names the missing thing, or the model's own argument).
pub const MISSING: &[&str] = &[
    "not found", "no such", "missing", "does not exist", "doesn't exist", "not present",
    "does not occur", "does not appear", "isn't in", "is not in", "no match", "there is no",
    "is required", "are required", "required argument", "required parameter", "not supplied",
    "is absent", "needs both", "only gave", "could not find", "cannot find", "can't find",
    "did you mean", "closest", "keyerror", "enoent", "no occurrence", "缺少",
];

/// Counts of zero and "no error" phrases, removed before looking for errors.
pub const BENIGN: &[&str] = &[
    "0 failed", "0 failures", "0 errors", "0 error", "no errors", "no error", "without errors",
    "without error", "error-free", "errors=0", "failed=0", "zero errors", "zero failures",
    "no failures", "nothing failed",
];

/// The call was not carried out by a policy, a guard, a person or the sandbox.
pub const REFUSED_STRONG: &[&str] = &[
    "denied", "deny rule", "declined", "turned down", "blocked", "not allowed", "not permitted",
    "forbidden", "policy", "outside the", "outside workspace", "outside of the", "paused",
    "disabled", "safety", "permission", "intercepted", "refused:", "rejected:", "path traversal",
    "allowed repetitions", "repetition limit", "limit on repeats", "too many times", "prevents you",
    "rule which prevents", "已被禁用",
    "禁用", "拦截", "拒绝执行", "不允许", "安全门",
];

/// Words that read as a refusal only when nothing more exact says otherwise.
pub const REFUSED_WEAK: &[&str] = &["refused", "rejected", "拒绝"];

/// The call (or its effect) was not run this time.
pub const NOT_RUN: &[&str] = &[
    "not executed", "was not run", "not run again", "not been executed", "skipped", "did not run",
    "not carried out", "not re-run", "not rerun",
];

/// What the call asks for is already in place: an identical repeat answered with "nothing
/// changed" or "already done".
pub const ALREADY: &[&str] = &[
    "already", "unchanged", "nothing changed", "nothing has changed", "no changes", "no change",
    "nothing to do", "nothing new", "nothing to commit", "up to date", "up-to-date", "still holds",
    "same content", "identical", "same bytes", "no difference", "left alone", "has not changed",
    "hasn't changed", "no file has changed", "no files changed", "is in place", "remains as",
    "no-op", "noop", "stands", "keeps its current", "matches the last", "working tree is clean",
    "clean tree", "not re-run", "未改变", "无需",
];

/// A warning about repeating the same call.
pub const REPEAT: &[&str] = &[
    "repeat", "same call", "identical", "same tool call", "again and again", "loop", "duplicate",
    "same command", "same arguments",
];

/// A finish claim was not accepted.
pub const NOT_DONE: &[&str] = &[
    "not finished", "not done", "not complete", "incomplete", "not yet", "still missing",
    "missing", "still open", "remaining", "remain", "keep working", "continue", "cannot finish",
    "can't finish", "can't be finished", "cannot be done", "not accepted", "rejected",
    "before finishing", "before you can finish", "hold on", "once more", "again", "unfinished",
    "outstanding", "left to do", "still needs", "unchecked", "open", "暂不接受", "被拒绝",
    "未完成", "尚未", "还没有", "不接受",
];

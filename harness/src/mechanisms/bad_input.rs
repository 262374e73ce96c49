//! Bounds on what a model (or a broken server) can put into the loop: a reply of binary
//! garbage, a megabyte on one line, a call with thousands of arguments, JSON nested thousands
//! deep. Each gets a short, clear answer and a bounded trace in the history, never a panic, a
//! stack overflow or a quadratic scan. Not ablatable: robustness is not an experimental
//! variable.
//!
//! Everything here is iterative (no recursion over model-supplied structure), and a rejected
//! value is taken apart with [`drop_deep`], because dropping or cloning a deeply nested
//! `serde_json::Value` recurses once per level.

use serde_json::Value;

/// Longest reply read as text (characters). The output cap (8192 tokens) is about 32 KB of
/// text; anything four times that came from a broken server, not from one model reply.
pub const MAX_REPLY_CHARS: usize = 131_072;
/// Most arguments one call may carry (our widest tool takes three).
pub const MAX_ARGS: usize = 64;
/// Deepest nesting of a call's arguments (a todo list is three levels).
pub const MAX_DEPTH: usize = 32;
/// Most bytes of string data in one call's arguments (far over the output cap).
pub const MAX_ARG_BYTES: usize = 1 << 20;
/// Longest tool name (characters).
pub const MAX_NAME: usize = 64;
/// What is kept in the history of a reply that was not read (head and tail, characters).
pub const KEEP_IN_HISTORY: usize = 4000;

/// Why a reply's text is not read as text or as a tool call.
#[derive(Clone, Debug, PartialEq)]
pub enum TextIssue {
    /// Longer than [`MAX_REPLY_CHARS`].
    TooLong { chars: usize },
    /// Mostly replacement or control characters.
    Binary { chars: usize },
    /// Brackets nested deeper than any tool call (not handed to the rescue's parsers).
    TooDeep { depth: usize },
}

/// Screen a reply's text in one pass (bounded by [`MAX_REPLY_CHARS`] + 1 characters).
pub fn screen_text(s: &str) -> Option<TextIssue> {
    if s.len() > MAX_REPLY_CHARS {
        let chars = s.chars().count();
        if chars > MAX_REPLY_CHARS {
            return Some(TextIssue::TooLong { chars });
        }
    }
    let (mut n, mut bad, mut depth, mut deepest) = (0usize, 0usize, 0usize, 0usize);
    for c in s.chars() {
        n += 1;
        match c {
            '\u{FFFD}' => bad += 1,
            '\n' | '\r' | '\t' => {}
            c if c.is_control() => bad += 1,
            '{' | '[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if n >= 16 && bad * 10 >= n {
        return Some(TextIssue::Binary { chars: n });
    }
    if deepest > 4 * MAX_DEPTH {
        return Some(TextIssue::TooDeep { depth: deepest });
    }
    None
}

/// What the history keeps of a reply that was not read.
pub fn history_text(s: &str, issue: &TextIssue) -> String {
    match issue {
        TextIssue::Binary { chars } => {
            format!("[unreadable reply of {chars} characters (binary data) omitted]")
        }
        _ => lrab_util::head_tail(s, KEEP_IN_HISTORY, KEEP_IN_HISTORY / 2, |cut| {
            format!("\n… [{cut} characters of this reply omitted] …\n")
        }),
    }
}

/// The answer to a reply that was not read.
pub fn text_issue_nudge(issue: &TextIssue, next: &str) -> String {
    let why = match issue {
        TextIssue::TooLong { chars } => format!(
            "Your last reply was {chars} characters long, far more than one reply can carry, so it was not read"
        ),
        TextIssue::Binary { .. } => {
            "Your last reply was not readable text (binary data), so nothing was done".to_string()
        }
        TextIssue::TooDeep { depth } => format!(
            "Your last reply nested brackets {depth} levels deep, which is no tool call, so it was not read"
        ),
    };
    format!("{why}. Reply with one tool call; write long files in parts (write_file a first part, then append_file). Next action: {next}")
}

/// Why a call's arguments were refused (each message clear enough for the model to fix the
/// call).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadArgs {
    #[error("the call to {tool} had {count} arguments (at most {MAX_ARGS} are read)")]
    TooMany { tool: String, count: usize },
    #[error("the arguments of {tool} are nested more than {MAX_DEPTH} levels deep")]
    TooDeep { tool: String },
    #[error("the arguments of {tool} hold more than 100000 values")]
    TooManyValues { tool: String },
    #[error("the arguments of {tool} hold more than {} KB of text", MAX_ARG_BYTES / 1024)]
    TooLarge { tool: String },
}

/// Check one call's arguments without recursion: `Err` names what is wrong.
pub fn check_args(tool: &str, args: &Value) -> Result<(), BadArgs> {
    let tool_s = || tool.to_string();
    if let Value::Object(m) = args {
        if m.len() > MAX_ARGS {
            return Err(BadArgs::TooMany {
                tool: tool_s(),
                count: m.len(),
            });
        }
    }
    let mut stack: Vec<(&Value, usize)> = vec![(args, 1)];
    let mut bytes = 0usize;
    let mut nodes = 0usize;
    while let Some((v, d)) = stack.pop() {
        nodes += 1;
        if d > MAX_DEPTH {
            return Err(BadArgs::TooDeep { tool: tool_s() });
        }
        if nodes > 100_000 {
            return Err(BadArgs::TooManyValues { tool: tool_s() });
        }
        match v {
            Value::String(s) => bytes += s.len(),
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            Value::Object(m) => {
                for (k, x) in m {
                    bytes += k.len();
                    stack.push((x, d + 1));
                }
            }
            _ => {}
        }
        if bytes > MAX_ARG_BYTES {
            return Err(BadArgs::TooLarge { tool: tool_s() });
        }
    }
    Ok(())
}

/// The tool error for a call whose arguments were refused.
pub fn args_error(why: &str) -> String {
    format!("error: {why}, so it was not run. Call the tool again with just its own arguments (a flat JSON object); split large content into several calls.")
}

/// A tool name clipped to [`MAX_NAME`] characters, control characters removed.
pub fn clip_name(name: &str) -> String {
    name.chars()
        .filter(|c| !c.is_control())
        .take(MAX_NAME)
        .collect()
}

/// Drop a value of any depth without recursion (moving children out before their parent).
pub fn drop_deep(v: Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => stack.extend(m.into_iter().map(|(_, x)| x)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `[[[…1…]]]` `depth` levels deep, built without recursion.
    fn nested(depth: usize) -> Value {
        let mut v = json!(1);
        for _ in 0..depth {
            v = Value::Array(vec![v]);
        }
        v
    }

    #[test]
    fn screens_garbage_long_and_deep_text() {
        assert_eq!(screen_text("write the report now"), None);
        assert_eq!(
            screen_text("{\"name\": \"x\", \"arguments\": {\"a\": [1]}}"),
            None
        );
        let garbage: String = (0..400u32)
            .map(|i| char::from_u32(i % 32).unwrap_or('\u{FFFD}'))
            .collect();
        assert!(matches!(
            screen_text(&garbage),
            Some(TextIssue::Binary { .. })
        ));
        let long = "a".repeat(MAX_REPLY_CHARS + 1);
        assert_eq!(
            screen_text(&long),
            Some(TextIssue::TooLong {
                chars: MAX_REPLY_CHARS + 1
            })
        );
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        assert_eq!(screen_text(&deep), Some(TextIssue::TooDeep { depth: 5000 }));
        let kept = history_text(&long, &TextIssue::TooLong { chars: 1 });
        assert!(kept.len() < KEEP_IN_HISTORY + 100 && kept.contains("omitted"));
    }

    #[test]
    fn refuses_wide_deep_and_huge_arguments_without_recursion() {
        assert!(check_args("write_file", &json!({"path": "a", "content": "b"})).is_ok());
        let mut wide = serde_json::Map::new();
        for i in 0..10_000 {
            wide.insert(format!("k{i}"), json!(i));
        }
        let e = check_args("write_file", &Value::Object(wide)).unwrap_err();
        assert!(matches!(e, BadArgs::TooMany { count: 10_000, .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "the call to write_file had 10000 arguments (at most 64 are read)"
        );
        // (not `json!`, which would serialize the nested value recursively)
        let mut m = serde_json::Map::new();
        m.insert("path".into(), json!("a"));
        m.insert("content".into(), nested(200_000));
        let deep = Value::Object(m);
        let e = check_args("write_file", &deep).unwrap_err();
        assert!(matches!(e, BadArgs::TooDeep { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "the arguments of write_file are nested more than 32 levels deep"
        );
        drop_deep(deep);
        let many: Vec<Value> = (0..30).map(|_| json!(vec![0; 4000])).collect();
        let e = check_args("t", &json!({ "a": many })).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the arguments of t hold more than 100000 values"
        );
        assert!(matches!(e, BadArgs::TooManyValues { .. }));
        let big = json!({"content": "x".repeat(MAX_ARG_BYTES + 1)});
        let e = check_args("write_file", &big).unwrap_err();
        assert!(matches!(e, BadArgs::TooLarge { .. }));
        assert_eq!(
            e.to_string(),
            format!(
                "the arguments of write_file hold more than {} KB of text",
                MAX_ARG_BYTES / 1024
            )
        );
        assert_eq!(clip_name(&"n\u{0}".repeat(100)).len(), MAX_NAME);
    }
}

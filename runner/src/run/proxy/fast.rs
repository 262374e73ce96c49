//! Streamed lines that only carry text, translated without a JSON tree. Most lines of an answer
//! are such; parsing each into a [`serde_json::Value`] and writing a new tree for the other API
//! was most of the translating paths' work per request. Each reader here accepts exactly the
//! lines the tree-building translation turns into one plain text line (anything else: `None`,
//! and the line takes the general way), and writes the same bytes (tested against it).

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::Deserialize;

/// The text of an OpenAI SSE line (`data: {…}`) whose event carries only text: one choice
/// delta with non-empty `content` and nothing else the translation reads (no reasoning, tool
/// calls, finish reason, usage, timings or error).
pub fn openai_text_event(line: &[u8]) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct Event<'a> {
        error: Option<IgnoredAny>,
        usage: Option<IgnoredAny>,
        timings: Option<IgnoredAny>,
        #[serde(borrow)]
        choices: Vec<Choice<'a>>,
    }
    #[derive(Deserialize)]
    struct Choice<'a> {
        #[serde(borrow)]
        delta: Option<Delta<'a>>,
        finish_reason: Option<IgnoredAny>,
    }
    #[derive(Deserialize)]
    struct Delta<'a> {
        #[serde(borrow)]
        content: Option<Cow<'a, str>>,
        reasoning_content: Option<IgnoredAny>,
        reasoning: Option<IgnoredAny>,
        tool_calls: Option<IgnoredAny>,
    }
    let text = std::str::from_utf8(line).ok()?;
    let data = text.trim().strip_prefix("data:")?.trim_start();
    let e: Event = serde_json::from_str(data).ok()?;
    if e.error.is_some() || e.usage.is_some() || e.timings.is_some() {
        return None;
    }
    let c = e.choices.into_iter().next()?;
    let d = c.delta?;
    if c.finish_reason.is_some()
        || d.reasoning_content.is_some()
        || d.reasoning.is_some()
        || d.tool_calls.is_some()
    {
        return None;
    }
    d.content.filter(|t| !t.is_empty())
}

/// The text of a native line (`/api/chat`) that carries only answer text: a `message` with a
/// string (or no) `content`, no thinking, calls, error or end.
pub fn native_text(line: &[u8]) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        message: Option<Text<'a>>,
        done: Option<bool>,
        error: Option<IgnoredAny>,
    }
    #[derive(Deserialize)]
    struct Text<'a> {
        #[serde(borrow)]
        content: Option<Cow<'a, str>>,
        thinking: Option<IgnoredAny>,
        tool_calls: Option<IgnoredAny>,
    }
    // an `"error": null` is an error event to the tree-building translation
    if line.windows(7).any(|w| w == b"\"error\"") {
        return None;
    }
    let l: Line = serde_json::from_slice(line).ok()?;
    let m = l.message?;
    if l.done == Some(true) || l.error.is_some() || m.thinking.is_some() || m.tool_calls.is_some() {
        return None;
    }
    Some(m.content.unwrap_or_default())
}

/// `s` as a JSON string.
pub fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

#[cfg(test)]
mod tests {
    use super::super::openai_upstream::ToNative;
    use super::super::translate::SseTranslator;
    use super::*;
    use serde_json::Value;

    #[test]
    fn openai_text_events_become_the_native_lines_the_tree_writes() {
        let lines = [
            r#"data: {"choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]}"#,
            r#"data:{"id":"x","choices":[{"delta":{"role":"assistant","content":"caf\u00e9 \"q\" \\ \n"}}],"object":"chat.completion.chunk"}"#,
            r#"data: {"choices":[{"delta":{"content":"ok","reasoning_content":null,"tool_calls":null}}],"usage":null}"#,
            r#"data: {"choices":[{"delta":{"content":"","reasoning_content":"hm"}}]}"#,
            r#"data: {"choices":[{"delta":{"content":"a","reasoning":"hm"}}]}"#,
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"ls","arguments":""}}]}}]}"#,
            r#"data: {"choices":[{"delta":{"content":"end"},"finish_reason":"stop"}]}"#,
            r#"data: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2}}"#,
            r#"data: {"choices":[{"delta":{"content":"t"}}],"timings":{"prompt_n":3}}"#,
            r#"data: {"error":{"message":"boom"}}"#,
            r#"data: {"choices":[{"delta":{"content":""}}]}"#,
            r#"data: {"choices":[{"delta":{"content":7}}]}"#,
            "data: [DONE]",
            "event: x",
            "",
            "data: not json",
        ];
        let t0 = std::time::Instant::now();
        let (mut tree, mut fast) = (ToNative::new("m\"1", t0), ToNative::new("m\"1", t0));
        let mut fast_lines = 0;
        for l in lines {
            let f = openai_text_event(l.as_bytes()).and_then(|t| fast.text_line(&t));
            let slow = tree.event_line(l.as_bytes());
            if let Some(f) = f {
                fast_lines += 1;
                assert_eq!(slow.len(), 1, "{l}");
                assert_eq!(f, format!("{}\n", slow[0]), "{l}");
            }
        }
        assert_eq!(fast_lines, 3, "only the text-only events take the fast way");
    }

    #[test]
    fn native_text_lines_become_the_sse_the_tree_writes() {
        let lines = [
            r#"{"model":"m","message":{"role":"assistant","content":"word "},"done":false}"#,
            r#"{"message":{"role":"assistant","content":"caf\u00e9 \"q\" \\ \n"}}"#,
            r#"{"message":{"role":"assistant","content":""},"done":false}"#,
            r#"{"message":{"role":"assistant","content":"x","thinking":"hm"}}"#,
            r#"{"message":{"role":"assistant","content":"x","tool_calls":[{"function":{"name":"ls","arguments":{}}}]}}"#,
            r#"{"message":{"role":"assistant","content":"x"},"error":null}"#,
            r#"{"error":"boom"}"#,
            r#"{"message":{"role":"assistant","content":7}}"#,
            r#"{"message":{"role":"assistant","content":"end"},"done":true,"done_reason":"stop"}"#,
        ];
        let mut fast_lines = 0;
        // from the first line of an answer (the role chunk goes first) and later ones
        for start in 0..2 {
            for l in lines {
                let (mut tree, mut fast) = (
                    SseTranslator::new("m\"1", 7, true),
                    SseTranslator::new("m\"1", 7, true),
                );
                for _ in 0..start {
                    tree.line(&serde_json::json!({}));
                    fast.text("");
                }
                let v: Value = serde_json::from_str(l).unwrap();
                let slow = tree.line(&v);
                if let Some(t) = native_text(l.as_bytes()) {
                    fast_lines += 1;
                    assert_eq!(fast.text(&t), slow, "{l}");
                }
            }
        }
        assert_eq!(fast_lines, 6, "only the text-only lines take the fast way");
    }
}

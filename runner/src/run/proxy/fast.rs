//! Streamed lines that only carry text, translated without a JSON tree. Most lines of an answer
//! are such; parsing each into a [`serde_json::Value`] and writing a new tree for the other API
//! was most of the translating paths' work per request. Each reader here accepts exactly the
//! lines the tree-building translation turns into one plain text line (anything else: `None`,
//! and the line takes the general way), and writes the same bytes (tested against it).

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::borrow::opt_cow;

/// The text of an OpenAI SSE line (`data: {…}`) whose event carries only text: one choice
/// delta with non-empty `content` and nothing else the translation reads (no reasoning, tool
/// calls, finish reason, usage, timings or error). Most are read by a walk that finds the
/// text ([`super::scan`]); the others by a typed parse.
pub fn openai_text_event(line: &[u8]) -> Option<Cow<'_, str>> {
    let text = std::str::from_utf8(line).ok()?;
    let data = text.trim().strip_prefix("data:")?.trim_start();
    match super::scan::openai_plain_text(data) {
        Some(text) => Some(Cow::Borrowed(text)),
        None => parsed_openai_text(data),
    }
}

/// [`openai_text_event`] by a typed parse, for any payload.
pub(super) fn parsed_openai_text(data: &str) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct Event<'a> {
        error: Option<IgnoredAny>,
        usage: Option<IgnoredAny>,
        timings: Option<IgnoredAny>,
        #[serde(borrow)]
        choices: First<Choice<'a>>,
    }
    #[derive(Deserialize)]
    struct Choice<'a> {
        #[serde(borrow)]
        delta: Option<Delta<'a>>,
        finish_reason: Option<IgnoredAny>,
    }
    #[derive(Deserialize)]
    struct Delta<'a> {
        #[serde(borrow, default, deserialize_with = "opt_cow")]
        content: Option<Cow<'a, str>>,
        reasoning_content: Option<IgnoredAny>,
        reasoning: Option<IgnoredAny>,
        tool_calls: Option<IgnoredAny>,
    }
    let e: Event = serde_json::from_str(data).ok()?;
    if e.error.is_some() || e.usage.is_some() || e.timings.is_some() {
        return None;
    }
    let c = e.choices.0?;
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

/// The first element of a JSON array of `T`s, every element read as a `T` (as a `Vec<T>`
/// would read them) without keeping the others: no vector per streamed event.
struct First<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for First<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = First<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<First<T>, A::Error> {
                let first = seq.next_element::<T>()?;
                while seq.next_element::<T>()?.is_some() {}
                Ok(First(first))
            }
        }
        d.deserialize_seq(V(std::marker::PhantomData))
    }
}

/// The content of a native text line in the exact form Ollama writes one:
/// `{"model":"…",["created_at":"…",]"message":{"role":"assistant","content":"…"},"done":false}`
/// with no escapes or control characters in its strings. Most lines of an answer are such, and
/// finding the content's quotes is several times cheaper than a typed parse. It accepts only
/// lines [`native_text`]'s parse reads as this same text; any other (`None`) still gets the
/// parse.
pub fn plain_native_text(line: &[u8]) -> Option<&str> {
    let line = line
        .strip_suffix(b"\n")
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .unwrap_or(line);
    let rest = line.strip_prefix(br#"{"model":""#)?;
    let (_, mut rest) = plain_str(rest)?;
    if let Some(r) = rest.strip_prefix(br#","created_at":""#) {
        rest = plain_str(r)?.1;
    }
    let rest = rest.strip_prefix(br#","message":{"role":"assistant","content":""#)?;
    let (content, rest) = plain_str(rest)?;
    (rest == br#"},"done":false}"#).then_some(content)
}

/// A JSON string's body up to its closing quote (the opening one already read) and what
/// follows the quote; `None` when it holds an escape or a control character, or does not end,
/// or is not UTF-8.
fn plain_str(s: &[u8]) -> Option<(&str, &[u8])> {
    let end = s
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    if s[end] != b'"' {
        return None;
    }
    let body = std::str::from_utf8(&s[..end]).ok()?;
    Some((body, &s[end + 1..]))
}

/// The text of a native line (`/api/chat`) that carries only answer text: a `message` with a
/// string (or no) `content`, no thinking, calls, error or end.
pub fn native_text(line: &[u8]) -> Option<Cow<'_, str>> {
    match plain_native_text(line) {
        Some(text) => Some(Cow::Borrowed(text)),
        None => parsed_native_text(line),
    }
}

/// [`native_text`] by a typed parse, for any line.
fn parsed_native_text(line: &[u8]) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        message: Option<Text<'a>>,
        done: Option<bool>,
        error: Option<IgnoredAny>,
    }
    #[derive(Deserialize)]
    struct Text<'a> {
        #[serde(borrow, default, deserialize_with = "opt_cow")]
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

    /// Lines near Ollama's text line: the plain reading takes only some, and reads each as
    /// the typed parse and the tap's tree reading do.
    fn near_plain_lines() -> Vec<Vec<u8>> {
        let ok = |m: &str, c: &str| {
            format!(
                r#"{{"model":"{m}","created_at":"2026-12-06T18:00:00.1Z","message":{{"role":"assistant","content":"{c}"}},"done":false}}"#
            )
        };
        let mut lines: Vec<Vec<u8>> = [
            ok("qwen3:4b", "Hello"),
            ok("qwen3:4b", ""),
            ok("qwen3:4b", "café ✓ 日本"),
            ok("qwen3:4b", "a \"q\" b"),
            ok("qwen3:4b", "line\\nnext"),
            ok("qwen3:4b", "tab\tx"),
            ok("m\\1", "x"),
            ok("qwen3:4b", "x") + "\n",
            ok("qwen3:4b", "x") + "\r\n",
            ok("qwen3:4b", "x") + " \n",
            ok("qwen3:4b", "x") + "\n\n",
            r#"{"model":"m","message":{"role":"assistant","content":"no created_at"},"done":false}"#.into(),
            r#"{"model":"m","created_at":"t","message":{"role":"user","content":"x"},"done":false}"#.into(),
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"x"},"done":true}"#.into(),
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"x","thinking":"h"},"done":false}"#.into(),
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"x"},"done":false,"error":null}"#.into(),
            r#"{"model":"m", "created_at":"t","message":{"role":"assistant","content":"x"},"done":false}"#.into(),
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"x"},"done":false"#.into(),
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"x}"#.into(),
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":7},"done":false}"#.into(),
        ]
        .into_iter()
        .map(String::into_bytes)
        .collect();
        // raw control and non-UTF-8 bytes in a string, which no JSON reader takes
        let mut ctl = ok("m", "a_b").into_bytes();
        let at = ctl.iter().position(|&b| b == b'_').unwrap();
        ctl[at] = b'\n';
        let mut bad = ctl.clone();
        bad[at] = 0xff;
        let mut bad_model = ok("m_", "x").into_bytes();
        let at = bad_model.iter().position(|&b| b == b'_').unwrap();
        bad_model[at] = 0xc3;
        lines.extend([ctl, bad, bad_model]);
        lines
    }

    #[test]
    fn plain_text_lines_read_as_the_parse_and_the_tree_read_them() {
        use super::super::tap::{Tap, Wire};
        let mut taken = 0;
        for l in near_plain_lines() {
            let label = String::from_utf8_lossy(&l).into_owned();
            let Some(plain) = plain_native_text(&l) else {
                continue;
            };
            taken += 1;
            assert_eq!(parsed_native_text(&l).as_deref(), Some(plain), "{label}");
            let v: Value = serde_json::from_slice(&l).unwrap();
            let (mut fast, mut tree) = (Tap::new(Wire::Native, true), Tap::new(Wire::Native, true));
            assert!(fast.native_text_line(&l), "{label}");
            tree.object(&v);
            let (mut a, mut b) = Default::default();
            fast.finish(&mut a);
            tree.finish(&mut b);
            let reply =
                |e: &lrab_records::TrajectoryEntry| serde_json::to_string(&e.reply).unwrap();
            assert_eq!(reply(&a), reply(&b), "{label}");
        }
        // Ollama's own text lines (with or without a line end), the empty one and a model
        // name and text beyond ASCII; nothing with an escape, a space or another field
        assert_eq!(taken, 6);
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

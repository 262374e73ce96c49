//! Reasoning wrappers, removed before a reply is read for tool calls and before it is checked
//! for a completion claim: reasoning is not action, and a plan drafted in a think block is
//! neither a call nor a claim.
//!
//! Wrappers: `<think>…</think>`, `<thinking>…</thinking>`, `<seed:think>…</seed:think>`,
//! `[THINK]…[/THINK]`, Gemma 4's `<|channel>thought…<channel|>`, Cohere's
//! `<|START_THINKING|>…<|END_THINKING|>`, `<|begin_of_thought|>…<|end_of_thought|>`,
//! `◁think▷…◁/think▷`, `<reasoning>…</reasoning>`, and harmony's analysis channel. When a
//! chat template opened the block itself, the reply starts inside it and only the closing tag
//! appears: everything before that first, orphan, closing tag is reasoning (so is everything
//! before Apriel's `[BEGIN FINAL RESPONSE]`). A block that never closes runs to the end of
//! the reply; it is returned apart, because one family (Kimi-K2-Thinking) emits real calls
//! there.

use regex::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

/// (opening, closing) pairs of the reasoning wrappers.
const WRAPPERS: &[(&str, &str)] = &[
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<seed:think>", "</seed:think>"),
    ("[THINK]", "[/THINK]"),
    ("<|channel>thought", "<channel|>"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
    ("◁think▷", "◁/think▷"),
    ("<reasoning>", "</reasoning>"),
];

/// Markers that end reasoning that had no opening tag.
const ORPHAN_ONLY: &[&str] = &["[BEGIN FINAL RESPONSE]"];

/// Markers with no meaning once the reasoning is gone.
const DROPPED: &[&str] = &["[END FINAL RESPONSE]"];

/// Tool results a model may echo back; their contents are never calls.
const ECHOES: &[(&str, &str)] = &[
    ("<tool_response>", "</tool_response>"),
    ("<tool_result>", "</tool_result>"),
    ("<｜tool▁outputs▁begin｜>", "<｜tool▁outputs▁end｜>"),
    ("<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"),
    ("<|tool_response>", "<tool_response|>"),
    ("<start_function_response>", "<end_function_response>"),
    ("```tool_output", "```"),
    ("<|im_start|>tool", "<|im_end|>"),
];

/// The reply split into what counts and the reasoning left open at its end.
pub struct Split<'a> {
    /// The reply without its reasoning (harmony headers of calls are kept).
    pub visible: Cow<'a, str>,
    /// The body of a reasoning block that was opened and never closed.
    pub open: Option<&'a str>,
    /// The byte ranges of the reply taken out as reasoning (empty when harmony's channels
    /// rewrote the reply).
    pub(crate) removed: Vec<(usize, usize)>,
}

/// The reply without its reasoning: the one function both the format rescue and the
/// completion-claim check read replies through.
pub fn strip_reasoning(text: &str) -> Cow<'_, str> {
    split(text).visible
}

/// See [`Split`].
pub fn split(text: &str) -> Split<'_> {
    split_keeping(text, &[])
}

/// [`split`], with the wrapper tags that start inside a `keep` span (a call whose value
/// holds `<think>` text: a file documenting a model's output) read as text.
pub(crate) fn split_keeping<'a>(text: &'a str, keep: &[(usize, usize)]) -> Split<'a> {
    let harmony = if text.contains("<|channel|>") && text.contains("<|message|>") {
        Cow::Owned(harmony_visible(text))
    } else {
        Cow::Borrowed(text)
    };
    if !pair_re().is_match(&harmony) {
        return Split {
            visible: harmony,
            open: None,
            removed: Vec::new(),
        };
    }
    let rewritten = matches!(harmony, Cow::Owned(_));
    let keep = if rewritten { &[][..] } else { keep };
    let (visible, open_at, removed) = strip_pairs(&harmony, WRAPPERS, true, pair_re(), keep);
    let removed = if rewritten { Vec::new() } else { removed };
    // the open tail is reported from the original text when harmony did not rewrite it
    let open = match (&harmony, open_at) {
        (Cow::Borrowed(_), Some(i)) => Some(&text[i..]),
        _ => None,
    };
    let mut visible = visible;
    for d in DROPPED {
        if visible.contains(d) {
            visible = visible.replace(d, "");
        }
    }
    Split {
        visible: Cow::Owned(visible),
        open,
        removed,
    }
}

/// The reply without echoed tool results.
pub(crate) fn strip_echoes(text: &str) -> Cow<'_, str> {
    if !echo_re().is_match(text) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(strip_pairs(text, ECHOES, false, echo_re(), &[]).0)
}

fn alternation(pairs: &[(&str, &str)], extra: &[&str]) -> Regex {
    let mut alt: Vec<String> = pairs
        .iter()
        .flat_map(|(o, c)| [regex::escape(o), regex::escape(c)])
        .collect();
    alt.extend(extra.iter().map(|m| regex::escape(m)));
    Regex::new(&alt.join("|")).expect("static alternation")
}

fn pair_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| alternation(WRAPPERS, ORPHAN_ONLY))
}

fn echo_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| alternation(ECHOES, &[]))
}

/// Remove `open…close` blocks. With `orphans`, a closing marker met before any other marker
/// ends reasoning that started with the reply. A marker that starts inside a `keep` span is
/// text. Returns the rest, the offset where the last block's body starts when it never
/// closed, and the ranges removed.
fn strip_pairs(
    text: &str,
    pairs: &[(&str, &str)],
    orphans: bool,
    re: &Regex,
    keep: &[(usize, usize)],
) -> (String, Option<usize>, Vec<(usize, usize)>) {
    let mut out = String::with_capacity(text.len());
    let mut removed = Vec::new();
    let mut pos = 0;
    let mut from = 0;
    let mut seen = false;
    while let Some(m) = re.find_at(text, from) {
        let s = m.as_str();
        if keep.iter().any(|&(a, b)| a <= m.start() && m.start() < b) {
            from = m.end();
            continue;
        }
        if let Some((_, close)) = pairs.iter().find(|(o, _)| *o == s) {
            out.push_str(&text[pos..m.start()]);
            seen = true;
            match text[m.end()..].find(close) {
                Some(j) => {
                    pos = m.end() + j + close.len();
                    removed.push((m.start(), pos));
                    from = pos;
                }
                None => {
                    removed.push((m.start(), text.len()));
                    return (out, Some(m.end()), removed);
                }
            }
        } else {
            // a closing marker (or one that only ends reasoning)
            if orphans && !seen {
                pos = m.end();
                removed.push((0, pos));
            }
            seen = true;
            from = m.end();
        }
    }
    out.push_str(&text[pos..]);
    (out, None, removed)
}

/// Harmony messages: analysis messages without a recipient are dropped; messages addressed to
/// a recipient (calls) are kept whole for the call reader; other messages keep their body.
fn harmony_visible(text: &str) -> String {
    const MSG: &str = "<|message|>";
    const ENDS: [&str; 4] = ["<|end|>", "<|call|>", "<|return|>", "<|start|>"];
    let mut out = String::new();
    let mut pos = 0;
    // next occurrence of each terminator, refreshed only once passed: linear overall
    let mut next_end: [Option<usize>; 4] = [Some(0); 4];
    let mut messages = 0;
    while let Some(k) = text[pos..].find(MSG) {
        messages += 1;
        if messages > 512 {
            break;
        }
        let mi = pos + k;
        let header = &text[pos..mi];
        let body_start = mi + MSG.len();
        let mut best = (text.len(), text.len());
        for (slot, e) in next_end.iter_mut().zip(ENDS) {
            if let Some(at) = *slot {
                if at < body_start {
                    *slot = text[body_start..].find(e).map(|j| body_start + j);
                }
            }
            if let Some(at) = *slot {
                let after = if e == "<|start|>" { at } else { at + e.len() };
                best = best.min((at, after));
            }
        }
        let (body_end, next) = best;
        let channel = header
            .split("<|channel|>")
            .nth(1)
            .map(|c| c.trim_start())
            .unwrap_or("");
        if header.contains("to=") {
            out.push_str(&text[pos..body_end]);
            out.push('\n');
        } else if !channel.starts_with("analysis") {
            out.push_str(&text[body_start..body_end]);
        }
        pos = next;
        if pos >= text.len() {
            break;
        }
    }
    out.push_str(&text[pos.min(text.len())..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrappers_and_orphans() {
        assert_eq!(strip_reasoning("<think>x</think>answer"), "answer");
        assert_eq!(strip_reasoning("plan\n</think>\n\ncall"), "\n\ncall");
        assert_eq!(strip_reasoning("<thinking>a</thinking>b"), "b");
        assert_eq!(strip_reasoning("<seed:think>a</seed:think>b"), "b");
        assert_eq!(strip_reasoning("[THINK]a[/THINK]b"), "b");
        assert_eq!(strip_reasoning("<|channel>thought\na<channel|>b"), "b");
        assert_eq!(strip_reasoning("x<|END_THINKING|>y"), "y");
        assert_eq!(
            strip_reasoning("reasoning\n[BEGIN FINAL RESPONSE]\nanswer[END FINAL RESPONSE]"),
            "\nanswer"
        );
        // only the first closing tag is an orphan; later ones are text (a value may hold one)
        assert_eq!(strip_reasoning("r</think>a </think> b"), "a </think> b");
        let s = split("before<think>never closed");
        assert_eq!(s.visible, "before");
        assert_eq!(s.open, Some("never closed"));
        assert_eq!(strip_reasoning("plain"), "plain");
    }

    #[test]
    fn tags_inside_a_kept_span_are_text() {
        let t = "<think>plan</think><c>doc: <think>x</think> end</c><think>more</think>";
        let s = split(t);
        assert_eq!(s.visible, "<c>doc:  end</c>");
        assert_eq!(s.removed, vec![(0, 19), (27, 43), (51, t.len())]);
        let kept = split_keeping(t, &[(19, 51)]);
        assert_eq!(kept.visible, "<c>doc: <think>x</think> end</c>");
    }

    #[test]
    fn harmony_analysis_is_reasoning() {
        let t = "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>";
        assert_eq!(strip_reasoning(t), "Done.");
        let c = "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}<|call|>";
        let v = strip_reasoning(c);
        assert!(
            v.contains("to=functions.f") && !v.contains("analysis"),
            "{v}"
        );
    }

    #[test]
    fn echoes() {
        assert_eq!(
            strip_echoes("<tool_response>{\"a\":1}</tool_response>after"),
            "after"
        );
        assert_eq!(strip_echoes("```tool_output\nx\n```\ny"), "\ny");
    }
}

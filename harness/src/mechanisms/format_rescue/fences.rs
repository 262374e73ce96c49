//! Code fences that quote rather than act. A call sits in a fence when the model puts it in a
//! ```` ```json ````, ```` ```xml ````, ```` ```python ```` or bare fence; a fence labelled with
//! another language (```` ```rust ````, ```` ```diff ````, ```` ```text ````, ```` ```log ````)
//! holds source, a diff or quoted output, and call syntax inside it — a test fixture, a logged
//! call, a handler table — is text. So is any fence introduced as an example ("a call looks
//! like this:"). Such fences are blanked before the reply is read: every character becomes
//! spaces of the same byte length and line breaks stay, so offsets and line starts hold.

use super::scan::{detect, example_lead, mark};
use std::borrow::Cow;

/// Info strings of fences whose content may be a call.
const CALL_FENCES: [&str; 12] = [
    "",
    "json",
    "jsonc",
    "json5",
    "xml",
    "python",
    "py",
    "python3",
    "tool_code",
    "tool_call",
    "tool_calls",
    "javascript",
];

/// `visible` with its quoting fences blanked and `markers` (its marker pass) read again when
/// something was blanked. Only when the marker pass met a fence: a second search of the whole
/// reply for one costs as much as the pass itself.
pub(crate) fn blank_quoting<'a>(visible: Cow<'a, str>, markers: &mut u64) -> Cow<'a, str> {
    if *markers & mark::FENCE == 0 {
        return visible;
    }
    match blank_quoting_fences(&visible) {
        Cow::Owned(b) => {
            *markers = detect(&b);
            Cow::Owned(b)
        }
        Cow::Borrowed(_) => visible,
    }
}

/// The reply with quoting fences blanked (borrowed when there is none).
fn blank_quoting_fences(text: &str) -> Cow<'_, str> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut prev_line = "";
    let mut open: Option<(usize, bool)> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let fence = line.trim_start().starts_with("```");
        match open {
            Some((start, quoting)) if fence => {
                if quoting {
                    spans.push((start, at + line.len()));
                }
                open = None;
            }
            Some(_) => {}
            None if fence => {
                let info = line.trim_start()[3..].trim();
                let lang = info
                    .split(|c: char| c.is_whitespace() || c == '{')
                    .next()
                    .unwrap_or("")
                    .to_lowercase();
                let quoting = !CALL_FENCES.contains(&lang.as_str()) || example_lead(prev_line);
                open = Some((at, quoting));
            }
            None => {}
        }
        if !line.trim().is_empty() {
            prev_line = line;
        }
        at += line.len();
    }
    if let Some((start, true)) = open {
        spans.push((start, text.len()));
    }
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (a, b) in spans {
        out.push_str(&text[last..a]);
        for c in text[a..b].chars() {
            if c == '\n' {
                out.push('\n');
            } else {
                out.extend(std::iter::repeat_n(' ', c.len_utf8()));
            }
        }
        last = b;
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_quoting_fences_are_blanked_in_place() {
        let t = "a\n```rust\nlet s = \"<tool_call>\";\n```\nb\n```json\n{\"x\": 1}\n```\n";
        let b = blank_quoting_fences(t);
        assert_eq!(b.len(), t.len());
        assert!(!b.contains("tool_call") && b.contains("{\"x\": 1}"));
        assert_eq!(b.matches('\n').count(), t.matches('\n').count());
        let ex = "It looks like this:\n```\n<tool_call>{}</tool_call>\n```\n";
        assert!(!blank_quoting_fences(ex).contains("tool_call"));
        let act = "Reading it now:\n```\n<tool_call>{}</tool_call>\n```\n";
        assert!(blank_quoting_fences(act).contains("tool_call"));
        // a fence the reply never closes is blanked to the end when it quotes
        assert!(!blank_quoting_fences("```diff\n+ <tool_call>").contains("tool_call"));
        assert!(matches!(blank_quoting_fences("no fence"), Cow::Borrowed(_)));
    }
}

//! Code fences that quote rather than act. A call sits in a fence when the model puts it in a
//! ```` ```json ````, ```` ```xml ````, ```` ```python ```` or bare fence; a fence labelled with
//! another language (```` ```rust ````, ```` ```diff ````, ```` ```text ````, ```` ```log ````)
//! holds source, a diff or quoted output, and call syntax inside it — a test fixture, a logged
//! call, a handler table — is text. So is any fence introduced as an example ("a call looks
//! like this:"). Such fences are blanked before the reply is read: every character becomes
//! spaces of the same byte length and line breaks stay, so offsets and line starts hold.

use super::scan::{detect, example_lead, mark, parse_json};
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

/// Shell fences: a model that labels its JSON call `bash` still meant the call; a fence of
/// shell commands is source, and stays quoting.
const SHELL_FENCES: [&str; 4] = ["bash", "sh", "shell", "console"];

/// Whether the fence body starting at `from` is exactly one JSON object (up to the next fence
/// line): JSON is not shell, so such a body is a mislabelled call fence.
fn json_only(text: &str, from: usize) -> bool {
    let rest = &text[from..];
    let body_end = rest
        .match_indices("```")
        .map(|(k, _)| k)
        .find(|&k| k == 0 || rest.as_bytes()[k - 1] == b'\n')
        .unwrap_or(rest.len());
    let body = rest[..body_end].trim();
    body.starts_with('{') && body.ends_with('}') && parse_json(body).is_ok()
}

/// `visible` with its quoting fences blanked and `markers` (its marker pass) read again when
/// something was blanked. Only when the marker pass met a fence: a second search of the whole
/// reply for one costs as much as the pass itself. A fence inside one of the calls
/// `calls(visible, markers)` reads (their byte spans) belongs to that call's value and stays;
/// `calls` runs only when there is a quoting fence.
pub(crate) fn blank_quoting<'a>(
    visible: Cow<'a, str>,
    markers: &mut u64,
    calls: impl FnOnce(&str, u64) -> Vec<(usize, usize)>,
) -> Cow<'a, str> {
    if *markers & mark::FENCE == 0 {
        return visible;
    }
    let spans = quoting_spans(&visible);
    if spans.is_empty() {
        return visible;
    }
    // calls that start outside every quoting fence hold their own fences (a fence opened in a
    // value and left open there, too): fences are paired again with those calls masked. A
    // "call" that starts inside a quoting fence is the quote.
    let calls: Vec<(usize, usize)> = calls(&visible, *markers)
        .into_iter()
        .filter(|&(ca, _)| !spans.iter().any(|&(a, b)| a <= ca && ca < b))
        .collect();
    let spans = if calls.is_empty() {
        spans
    } else {
        quoting_spans(&blank(&visible, &calls))
    };
    match blank(&visible, &spans) {
        Cow::Owned(b) => {
            *markers = detect(&b);
            Cow::Owned(b)
        }
        Cow::Borrowed(_) => visible,
    }
}

/// The reply with quoting fences blanked (borrowed when there is none).
#[cfg(test)]
fn blank_quoting_fences(text: &str) -> Cow<'_, str> {
    blank(text, &quoting_spans(text))
}

/// The byte spans of the reply's quoting fences, opening line to closing line.
fn quoting_spans(text: &str) -> Vec<(usize, usize)> {
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
                let quoting = quoting
                    && !(SHELL_FENCES.contains(&lang.as_str())
                        && !example_lead(prev_line)
                        && json_only(text, at + line.len()));
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
    spans
}

/// `text` with `spans` turned into spaces of the same byte length, line breaks kept.
fn blank<'a>(text: &'a str, spans: &[(usize, usize)]) -> Cow<'a, str> {
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for &(a, b) in spans {
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

    #[test]
    fn a_fence_inside_a_call_stays() {
        let t = "<tool_call>\n<function=write_file>\n<parameter=content>\n# T\n```bash\nls\n```\n</parameter>\n</function>\n</tool_call>\n```text\nlog\n```\n";
        let markers = detect(t);
        let call_end = t.find("</tool_call>").unwrap() + "</tool_call>".len();
        let mut m = markers;
        let b = blank_quoting(Cow::Borrowed(t), &mut m, |_, _| vec![(0, call_end)]);
        assert!(b.contains("```bash\nls\n```"), "{b}");
        assert!(!b.contains("log"), "{b}");
        // a fence the value leaves open does not swallow the call's closing tags
        let open = "<tool_call>\n<function=write_file>\n<parameter=content>\n```text\nlog\n</parameter>\n</function>\n</tool_call>\n";
        let mut m = detect(open);
        let b = blank_quoting(Cow::Borrowed(open), &mut m, |_, _| {
            vec![(0, open.len() - 1)]
        });
        assert_eq!(b, open);
        // a call-like span that starts inside a quoting fence is the quote: blanked
        let quoted = "```text\n<tool_call>{\n```\n<tool_call>{}</tool_call>\n";
        let mut m = detect(quoted);
        let b = blank_quoting(Cow::Borrowed(quoted), &mut m, |_, _| {
            vec![(8, quoted.len() - 1)]
        });
        assert!(b.starts_with("       \n           "), "{b}");
    }
}

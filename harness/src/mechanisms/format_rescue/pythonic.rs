//! Pythonic calls (see `pylit`). With a family marker: Llama 4's `<|python_start|>[…]`
//! (`<|python_end|>` optional), LFM2's `<|tool_call_start|>[…]<|tool_call_end|>`, Olmo 3's
//! `<function_calls>` with one call per line, and Gemma 2/3's ```` ```tool_code ```` fence
//! (Gemini-style `print(default_api.f(…))` lines included), SmolLM3's `<code>f(…)</code>` on
//! its own line. Without one (weak evidence): a
//! `[f(…), g(…)]` list standing on its own line (Llama 3.2's pythonic prompt, Gemma 3's prompt,
//! ToolACE — small models put a sentence before it), a ```` ```python ```` fence holding nothing
//! but calls, and a reply that is nothing but call expressions. A call inside a sentence is a
//! mention, not a call.

use super::pylit::{Py, PyCall};
use super::scan::{at_line_start, mark, rest_of_line_blank, skip_ws, Arg, Args, Found, Next, Scan};

/// Tokens a server may leave after a reply; they end nothing and mean nothing here.
const TRAILERS: [&str; 7] = [
    "<|eot_id|>",
    "<|eom_id|>",
    "</s>",
    "<|im_end|>",
    "<|endoftext|>",
    "<end_of_turn>",
    "<|python_end|>",
];

pub(crate) fn scan_marked(s: &mut Scan) {
    if s.has(mark::PYTHON_START) {
        region(
            s,
            "<|python_start|>",
            "<|python_end|>",
            Region::OpenEnded,
            "llama4-pythonic",
        );
    }
    if s.has(mark::LFM2) {
        region(
            s,
            "<|tool_call_start|>",
            "<|tool_call_end|>",
            Region::OpenEnded,
            "lfm2",
        );
    }
    if s.has(mark::FUNCTION_CALLS) {
        region(
            s,
            "<function_calls>",
            "</function_calls>",
            Region::Closed,
            "olmo3",
        );
    }
    if s.has(mark::TOOL_CODE) {
        fences(s, &["tool_code"], false);
    }
    if s.has(mark::CODE_TAG) {
        // SmolLM3's python-tools form, on lines of its own: inside a sentence (`use
        // <code>read_file(path)</code> to …`) it is a mention
        region(s, "<code>", "</code>", Region::OwnLine, "smollm3-code");
    }
}

pub(crate) fn scan_unmarked(s: &mut Scan) {
    if s.has(mark::FENCE) {
        fences(s, &["python", "py", "python3", ""], true);
    }
    line_lists(s);
    whole_reply(s);
}

/// What a region needs around it.
#[derive(Clone, Copy, PartialEq)]
enum Region {
    /// The close marker may be missing (the call runs to the end of the reply).
    OpenEnded,
    /// The close marker must be there.
    Closed,
    /// Closed, and the region stands on a line of its own.
    OwnLine,
}

/// `open … close` regions holding a call list or calls one per line.
fn region(s: &mut Scan, open: &str, close: &'static str, kind: Region, dialect: &'static str) {
    let t = s.text;
    let mut next_close = Next::new(close);
    let mut consumed = 0;
    for at in s.occurrences(open) {
        if at < consumed || (kind == Region::OwnLine && !at_line_start(t, at)) {
            continue;
        }
        let body = at + open.len();
        let c = next_close.at_or_after(t, body);
        if kind != Region::OpenEnded && c.is_none() {
            continue;
        }
        let end = c.unwrap_or(t.len());
        if t[skip_ws(t, body)..].starts_with("<invoke") {
            continue; // XML invoke layout, read by `invoke`
        }
        let span_end = c.map(|c| c + close.len()).unwrap_or(end);
        if kind == Region::OwnLine && !rest_of_line_blank(t, span_end) {
            continue;
        }
        if read_body(s, at, body, end, span_end, dialect) {
            consumed = span_end;
        }
    }
}

/// Calls in `t[i..end]`: one list, or calls separated by newlines, `;` or `,`. All or nothing.
fn calls_in(s: &mut Scan, i: usize, end: usize) -> Option<Vec<PyCall>> {
    let t = &s.text[..end];
    if !s.spend(end.saturating_sub(i)) {
        return None;
    }
    let mut p = Py::new(t, skip_ws(t, i));
    let mut out = Vec::new();
    loop {
        p.ws();
        if p.i >= end || TRAILERS.iter().any(|x| t[p.i..].trim_end() == *x) {
            break;
        }
        if t.as_bytes()[p.i] == b'[' {
            out.extend(p.call_list().ok()?);
        } else {
            out.push(p.call().ok()?);
        }
        if out.len() > super::MAX_CALLS {
            return None;
        }
        p.blank();
        while p.i < end && matches!(t.as_bytes()[p.i], b';' | b',') {
            p.i += 1;
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The calls of a pythonic body inside another family's block (`<tool_call>run_shell(…)
/// </tool_call>`, LFM2.5 and Llama 3.3 do so): all of `t[body..end]`, recorded as the span
/// `at..span_end`. Whether it held calls.
pub(crate) fn read_body(
    s: &mut Scan,
    at: usize,
    body: usize,
    end: usize,
    span_end: usize,
    dialect: &'static str,
) -> bool {
    match calls_in(s, body, end) {
        Some(calls) => {
            push(s, at, span_end, calls, dialect, false);
            true
        }
        None => false,
    }
}

fn push(
    s: &mut Scan,
    at: usize,
    end: usize,
    calls: Vec<PyCall>,
    dialect: &'static str,
    weak: bool,
) {
    for c in calls {
        let args = c.args.into_iter().map(|(k, v)| (k, Arg::Val(v))).collect();
        let f = Found::new(at, end, &c.name, Args::Pairs(args), dialect);
        s.push(if weak { f.weak() } else { f });
    }
}

/// Fenced blocks whose info string is one of `tags` and whose every line is a call.
fn fences(s: &mut Scan, tags: &[&str], weak: bool) {
    let t = s.text;
    let opens: Vec<usize> = s.occurrences("```");
    let mut k = 0;
    while k + 1 < opens.len() {
        let at = opens[k];
        if !at_line_start(t, at) {
            k += 1;
            continue;
        }
        let info_end = t[at..].find('\n').map(|j| at + j).unwrap_or(t.len());
        let info = t[at + 3..info_end].trim();
        // the closing fence: the next ``` at a line start
        let Some(close_k) = (k + 1..opens.len()).find(|&j| at_line_start(t, opens[j])) else {
            break;
        };
        let close = opens[close_k];
        k = close_k + 1;
        if !tags.contains(&info) || info_end >= close {
            continue;
        }
        if let Some(calls) = calls_in(s, info_end, close) {
            let dialect = if info == "tool_code" {
                "gemma-tool-code"
            } else {
                "python-fence"
            };
            push(s, at, close + 3, calls, dialect, weak);
        }
    }
}

/// `[f(…), …]` standing on its own line(s).
fn line_lists(s: &mut Scan) {
    let t = s.text;
    let mut tries = 0;
    let mut i = 0;
    while i < t.len() && tries < 64 {
        let line_end = t[i..].find('\n').map(|k| i + k).unwrap_or(t.len());
        let j = skip_blank(t, i);
        let b = t.as_bytes();
        if j < line_end
            && b[j] == b'['
            && b.get(j + 1)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            tries += 1;
            let mut p = Py::new(t, j);
            if s.spend(line_end - j) {
                if let Ok(calls) = p.call_list() {
                    let after = trailers_end(t, p.i);
                    if rest_of_line_blank(t, after) {
                        let end = p.i;
                        push(s, j, end, calls, "pythonic", true);
                        i = after;
                        continue;
                    }
                }
            }
        }
        i = line_end + 1;
    }
}

/// A reply that is nothing but call expressions (one per line or `;`-separated).
fn whole_reply(s: &mut Scan) {
    let t = s.text;
    let start = skip_ws(t, 0);
    let mut end = t.trim_end().len();
    loop {
        let before = end;
        for x in TRAILERS {
            if t[..end].ends_with(x) {
                end = t[..end - x.len()].trim_end().len();
            }
        }
        if end == before {
            break;
        }
    }
    if start >= end || !t.as_bytes()[start].is_ascii_alphabetic() || !t[start..end].contains('(') {
        return;
    }
    if let Some(calls) = calls_in(s, start, end) {
        push(s, start, end, calls, "bare-call", true);
    }
}

fn skip_blank(t: &str, mut i: usize) -> usize {
    let b = t.as_bytes();
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    i
}

/// Past any trailing end-of-turn tokens right after `i`.
fn trailers_end(t: &str, mut i: usize) -> usize {
    'outer: loop {
        for x in TRAILERS {
            if t[i..].starts_with(x) {
                i += x.len();
                continue 'outer;
            }
        }
        return i;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn marked_families() {
        expect(
            "<|python_start|>[list_dir(path='src'), read_file(path=\"src/main.py\", end_line=10)]<|python_end|>",
            "llama4-pythonic",
            json!([{"name": "list_dir", "arguments": {"path": "src"}}, {"name": "read_file", "arguments": {"path": "src/main.py", "end_line": 10}}]),
        );
        expect(
            "Okay.<|tool_call_start|>[write_file(path=\"x.txt\", content=\"a\\tb\\n\", replace=true)]<|tool_call_end|>",
            "lfm2",
            json!([{"name": "write_file", "arguments": {"path": "x.txt", "content": "a\tb\n", "replace": true}}]),
        );
        expect(
            "<function_calls>list_dir()\nrun_shell(command='make check')</function_calls>",
            "olmo3",
            json!([{"name": "list_dir", "arguments": {}}, {"name": "run_shell", "arguments": {"command": "make check"}}]),
        );
        expect(
            "Let me look.\n```tool_code\nprint(default_api.search_files(pattern=\"def main\"))\n```",
            "gemma-tool-code",
            json!([{"name": "search_files", "arguments": {"pattern": "def main"}}]),
        );
    }

    #[test]
    fn unmarked_shapes() {
        expect(
            "Reading the config first.\n[read_file(path='setup.cfg')]",
            "pythonic",
            json!([{"name": "read_file", "arguments": {"path": "setup.cfg"}}]),
        );
        expect(
            "run_shell(command=\"pytest -q\")\nread_file(path=\"log.txt\")",
            "bare-call",
            json!([{"name": "run_shell", "arguments": {"command": "pytest -q"}}, {"name": "read_file", "arguments": {"path": "log.txt"}}]),
        );
    }

    #[test]
    fn code_and_mentions_are_not_calls() {
        none("Earlier I ran run_shell(command='ls') and saw two files.");
        none("[read_file(path='a.py')] is what I would call next, if you agree.");
        none("```python\nresult = read_file(path='a.py')\nprint(result)\n```");
        none("<|tool_call_start|>[write_file(path=\"a\", content=\"cut off");
        none("[list_dir()] and more text on the same line");
        none("Steps: [1, 2, 3]");
    }
}

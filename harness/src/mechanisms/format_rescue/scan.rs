//! What the dialect scanners share: the record of a call found in the text, the scan context
//! (marker prefilter, work budget, problems), and small text helpers — balanced JSON spans,
//! identifiers, and the one-newline rule of the XML-style dialects.
//!
//! Every helper is linear in the bytes it looks at, and speculative scans draw on a budget
//! proportional to the reply, so no reply (garbage, a megabyte on one line, thousands of
//! markers) costs more than a bounded multiple of its length.

use super::{repair, Catalog, MAX_CALLS};
use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

/// One argument value as the dialect wrote it.
pub(crate) enum Arg {
    /// Raw text (the XML-style dialects): typed afterwards from the tool's schema.
    Raw(String),
    /// A decoded value (JSON, a Python literal).
    Val(Value),
}

/// The arguments of a found call.
pub(crate) enum Args {
    /// Decoded JSON: an object, or a string that may hold JSON or a single plain argument.
    Json(Value),
    /// Key/value pairs in the order written.
    Pairs(Vec<(String, Arg)>),
}

/// A call found in the reply, before the declared tools are consulted.
pub(crate) struct Found {
    /// Byte range in the scanned text; orders calls and resolves overlaps between dialects.
    pub at: usize,
    pub end: usize,
    /// The name as written (namespace prefixes and case are dealt with by `names`).
    pub name: String,
    pub args: Args,
    pub dialect: &'static str,
    /// Weak evidence (no family marker, or arguments flattened beside the name): accepted only
    /// when every argument is a declared parameter and the required ones are present.
    pub weak: bool,
}

impl Found {
    pub fn new(at: usize, end: usize, name: &str, args: Args, dialect: &'static str) -> Self {
        Found {
            at,
            end,
            name: name.trim().to_string(),
            args,
            dialect,
            weak: false,
        }
    }
    pub fn weak(mut self) -> Self {
        self.weak = true;
        self
    }
}

/// Family markers, detected in one pass so that each scanner runs only when its marker occurs.
pub(crate) mod mark {
    pub const TOOL_CALL: u64 = 1 << 0;
    pub const TOOL_CALL_CLOSE: u64 = 1 << 1;
    pub const FUNCTION_EQ: u64 = 1 << 2;
    pub const MISTRAL: u64 = 1 << 3;
    pub const PYTHON_TAG: u64 = 1 << 4;
    pub const PYTHON_START: u64 = 1 << 5;
    pub const LFM2: u64 = 1 << 6;
    pub const FUNCTION_CALLS: u64 = 1 << 7;
    pub const DEEPSEEK: u64 = 1 << 8;
    pub const KIMI: u64 = 1 << 9;
    pub const INVOKE: u64 = 1 << 10;
    pub const HARMONY: u64 = 1 << 11;
    pub const GEMMA: u64 = 1 << 12;
    pub const CALL_COLON: u64 = 1 << 13;
    pub const MARKED_JSON: u64 = 1 << 14;
    pub const FUNCTIONARY: u64 = 1 << 15;
    pub const TOOL_CODE: u64 = 1 << 16;
    pub const QWEN_AGENT: u64 = 1 << 17;
    pub const PLACEHOLDER: u64 = 1 << 18;
    pub const FENCE: u64 = 1 << 19;
    pub const REACT: u64 = 1 << 20;
    pub const CODE_TAG: u64 = 1 << 21;
}

const MARKERS: &[(&str, u64)] = &[
    ("<tool_call>", mark::TOOL_CALL),
    ("</tool_call>", mark::TOOL_CALL_CLOSE),
    ("<function=", mark::FUNCTION_EQ),
    ("[TOOL_CALLS]", mark::MISTRAL),
    ("<|python_tag|>", mark::PYTHON_TAG),
    ("<|python_start|>", mark::PYTHON_START),
    ("<|tool_call_start|>", mark::LFM2),
    ("<function_calls>", mark::FUNCTION_CALLS),
    ("tool▁call▁begin", mark::DEEPSEEK),
    ("<｜tool_call_begin｜>", mark::DEEPSEEK),
    ("<|tool_call_begin|>", mark::KIMI),
    ("invoke name=", mark::INVOKE),
    ("to=functions.", mark::HARMONY),
    ("<|tool_call>", mark::GEMMA),
    ("<start_function_call>", mark::GEMMA),
    ("call:", mark::CALL_COLON),
    ("<tool_calls>", mark::MARKED_JSON),
    ("<TOOLCALL>", mark::MARKED_JSON),
    ("functools", mark::MARKED_JSON),
    ("<|action_start|>", mark::MARKED_JSON),
    ("<|START_ACTION|>", mark::MARKED_JSON),
    ("<|tools_prefix|>", mark::MARKED_JSON),
    ("<|function_call|>", mark::MARKED_JSON),
    ("<|tool_call|>", mark::MARKED_JSON),
    ("<function_call>", mark::MARKED_JSON),
    ("<longcat_tool_call>", mark::MARKED_JSON),
    ("[unused11]", mark::MARKED_JSON),
    (">>>", mark::FUNCTIONARY),
    ("```tool_code", mark::TOOL_CODE),
    ("✿FUNCTION✿", mark::QWEN_AGENT),
    ("<|\"|>", mark::PLACEHOLDER),
    ("```", mark::FENCE),
    ("Action:", mark::REACT),
    ("<code>", mark::CODE_TAG),
];

fn marker_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        let alt: Vec<String> = MARKERS.iter().map(|(m, _)| regex::escape(m)).collect();
        Regex::new(&alt.join("|")).expect("static marker alternation")
    })
}

/// Which markers occur in `text` (one regex pass).
pub(crate) fn detect(text: &str) -> u64 {
    let mut bits = 0u64;
    let all = MARKERS.iter().fold(0u64, |a, (_, b)| a | b);
    for m in marker_re().find_iter(text) {
        if let Some((_, b)) = MARKERS.iter().find(|(s, _)| *s == m.as_str()) {
            bits |= b;
        }
        if bits == all {
            break;
        }
    }
    bits
}

/// At most this many occurrences of one marker are examined.
const MAX_OCCURRENCES: usize = 4096;

/// The scan context handed to every dialect.
pub(crate) struct Scan<'a> {
    pub text: &'a str,
    pub cat: &'a Catalog,
    markers: u64,
    pub found: Vec<Found>,
    pub problems: Vec<String>,
    /// A family marker opened a call that the reply never closed (the output cap cut it):
    /// nothing else in the reply is read as a call either.
    pub cut: bool,
    budget: usize,
}

impl<'a> Scan<'a> {
    /// A scan of `text` whose markers were already detected (see [`detect`]).
    pub fn with_markers(text: &'a str, cat: &'a Catalog, markers: u64) -> Self {
        Scan {
            text,
            cat,
            markers,
            found: Vec::new(),
            problems: Vec::new(),
            cut: false,
            budget: text.len().saturating_mul(4).saturating_add(1 << 16),
        }
    }

    pub fn has(&self, m: u64) -> bool {
        self.markers & m != 0
    }

    pub fn push(&mut self, f: Found) {
        if self.found.len() < MAX_CALLS * 4 {
            self.found.push(f);
        }
    }

    /// Record why a call-shaped block gave no call (kept short; the first few only).
    pub fn problem(&mut self, msg: impl Into<String>) {
        if self.problems.len() < 4 {
            self.problems.push(clip(&msg.into(), 240));
        }
    }

    /// A marked call that was cut off before its end: recorded as a problem, and the reply
    /// is not read for unmarked calls (the cut call's complete-looking pieces are not calls).
    pub fn cut_off(&mut self, msg: impl Into<String>) {
        self.cut = true;
        self.problem(msg);
    }

    /// Byte offsets of `pat` in the text (capped).
    pub fn occurrences(&self, pat: &str) -> Vec<usize> {
        self.text
            .match_indices(pat)
            .take(MAX_OCCURRENCES)
            .map(|(i, _)| i)
            .collect()
    }

    /// Spend `n` bytes of speculative work; false once the budget is gone.
    pub fn spend(&mut self, n: usize) -> bool {
        if self.budget < n {
            self.budget = 0;
            return false;
        }
        self.budget -= n;
        true
    }

    /// The JSON value starting at `i` (which must be `{` or `[`) and ending before `limit`:
    /// its end offset and the decoded value (repaired when it is almost JSON). None when the
    /// brackets never close: a reply cut off inside a call is not a call.
    pub fn json_at(&mut self, i: usize, limit: usize) -> Option<(usize, Result<Value, String>)> {
        // strict JSON in one pass (the common case); the bracket scan and the repairing reader
        // only when that fails
        let stop = limit.min(i.saturating_add(self.budget));
        let mut stream =
            serde_json::Deserializer::from_str(&self.text[i..stop]).into_iter::<Value>();
        if let Some(Ok(v)) = stream.next() {
            let end = i + stream.byte_offset();
            self.spend(end - i);
            return Some((end, Ok(v)));
        }
        match json_span(&self.text[..stop], i) {
            Some(end) => {
                self.spend(end - i);
                Some((end, parse_json(&self.text[i..end])))
            }
            None => {
                if stop < limit {
                    self.problem("the reply is too irregular to read completely");
                }
                self.spend(stop - i);
                None
            }
        }
    }

    /// Consecutive JSON values from `i` up to `limit`, separated by whitespace, commas or
    /// semicolons (several calls in one block). Stops at the first thing that is not JSON.
    pub fn json_seq(&mut self, mut i: usize, limit: usize) -> Vec<(usize, usize, Value)> {
        let mut out = Vec::new();
        let b = self.text.as_bytes();
        while out.len() < MAX_CALLS * 2 {
            while i < limit && (b[i].is_ascii_whitespace() || b[i] == b',' || b[i] == b';') {
                i += 1;
            }
            if i >= limit || !(b[i] == b'{' || b[i] == b'[') {
                break;
            }
            match self.json_at(i, limit) {
                Some((end, Ok(v))) => {
                    out.push((i, end, v));
                    i = end;
                }
                Some((end, Err(e))) => {
                    // a list with one malformed element keeps its well-formed siblings
                    if b[i] == b'[' {
                        out.extend(self.elements(i, end));
                    } else {
                        self.problem(format!("arguments that are not JSON ({e})"));
                    }
                    i = end;
                }
                None => {
                    self.cut_off("a call was cut off before its end");
                    break;
                }
            }
        }
        out
    }

    /// The object elements of the list `[i, end)`, each decoded on its own: a missing comma
    /// between objects or one malformed object does not lose the others.
    fn elements(&mut self, list: usize, end: usize) -> Vec<(usize, usize, Value)> {
        let mut out = Vec::new();
        let b = self.text.as_bytes();
        let mut i = list + 1;
        while i < end && out.len() < MAX_CALLS * 2 {
            match b[i] {
                b'{' => match self.json_at(i, end) {
                    Some((e, Ok(v))) => {
                        out.push((i, e, v));
                        i = e;
                    }
                    Some((e, Err(err))) => {
                        self.problem(format!("one call in a list is not JSON ({err})"));
                        i = e;
                    }
                    None => break,
                },
                b']' => break,
                c if c.is_ascii_whitespace() || c == b',' => i += 1,
                _ => break,
            }
        }
        out
    }
}

/// The next occurrence of a fixed marker at or after a position, for scans that ask again and
/// again with growing positions: each byte is searched at most once.
pub(crate) struct Next {
    pat: &'static str,
    cached: Option<Option<usize>>,
}

impl Next {
    pub fn new(pat: &'static str) -> Self {
        Next { pat, cached: None }
    }
    pub fn at_or_after(&mut self, t: &str, i: usize) -> Option<usize> {
        match self.cached {
            Some(Some(p)) if p >= i => return Some(p),
            Some(None) => return None,
            _ => {}
        }
        let r = t
            .get(i..)
            .and_then(|rest| rest.find(self.pat))
            .map(|k| i + k);
        self.cached = Some(r);
        r
    }
}

/// Strict JSON first; almost-JSON through the repairing reader.
pub(crate) fn parse_json(s: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(s) {
        Ok(v) => Ok(v),
        Err(strict) => repair::parse(s).map_err(|e| {
            if strict.is_eof() {
                "unexpected end".to_string()
            } else {
                e
            }
        }),
    }
}

/// End (exclusive) of the balanced JSON-like value starting at `i` (`{` or `[`). Strings in
/// double quotes always count; single-quoted strings count where a value or key may start.
/// Raw newlines inside strings are allowed (a repair case). None if it never closes, if the
/// brackets mismatch, or if it nests deeper than the repair reader would accept.
pub(crate) fn json_span(t: &str, i: usize) -> Option<usize> {
    match brackets(t, i) {
        Brackets::Closed(end) => Some(end),
        _ => None,
    }
}

/// How the brackets of a JSON-like value starting at `i` end.
pub(crate) enum Brackets {
    /// Balanced, ending (exclusive) here.
    Closed(usize),
    /// The text ends with these closers still owed, innermost last (no string left open).
    Open(Vec<u8>),
    /// A bracket of the wrong kind, a string that never closes, or nesting too deep.
    Bad,
}

/// The bracket walk behind [`json_span`], the same rules.
pub(crate) fn brackets(t: &str, i: usize) -> Brackets {
    let b = t.as_bytes();
    let mut stack: Vec<u8> = Vec::new();
    let mut j = i;
    let mut last = b'{'; // last significant byte outside strings
    while j < b.len() {
        let c = b[j];
        let string = match c {
            b'{' | b'[' => {
                if stack.len() > super::MAX_DEPTH {
                    return Brackets::Bad;
                }
                stack.push(if c == b'{' { b'}' } else { b']' });
                None
            }
            b'}' | b']' => {
                if stack.pop() != Some(c) {
                    return Brackets::Bad;
                }
                if stack.is_empty() {
                    return Brackets::Closed(j + 1);
                }
                None
            }
            b'"' => Some(string_end(b, j, b'"')),
            b'\'' if matches!(last, b'{' | b'[' | b',' | b':') => Some(string_end(b, j, b'\'')),
            _ => None,
        };
        match string {
            Some(Some(end)) => j = end,
            Some(None) => return Brackets::Bad,
            None => {}
        }
        if !c.is_ascii_whitespace() {
            last = b[j];
        }
        j += 1;
    }
    Brackets::Open(stack)
}

/// Index of the closing quote of the string opening at `i`.
fn string_end(b: &[u8], i: usize, q: u8) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            c if c == q => return Some(j),
            _ => j += 1,
        }
    }
    None
}

pub(crate) fn skip_ws(t: &str, mut i: usize) -> usize {
    let b = t.as_bytes();
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// A tool-name character: letters, digits, `_`, `-`, `.` (namespaces).
pub(crate) fn name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-' || c == '.'
}

/// End of the name starting at `i` (equal to `i` when there is none).
pub(crate) fn name_end(t: &str, i: usize) -> usize {
    t[i..]
        .char_indices()
        .find(|&(_, c)| !name_char(c))
        .map(|(k, _)| i + k)
        .unwrap_or(t.len())
}

/// Whether `s` is one plausible tool name (no spaces, not empty, not too long).
pub(crate) fn is_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 128 && s.chars().all(name_char)
}

/// The value rule of the XML-style dialects: exactly one leading and one trailing newline
/// (the ones that put a value on its own line) are not part of the value.
pub(crate) fn one_newline(s: &str) -> &str {
    let s = s
        .strip_prefix("\r\n")
        .or_else(|| s.strip_prefix('\n'))
        .unwrap_or(s);
    s.strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s)
}

/// Whether `i` is at the start of a line (only spaces or tabs before it on that line).
pub(crate) fn at_line_start(t: &str, i: usize) -> bool {
    t[..i]
        .bytes()
        .rev()
        .take_while(|&c| c != b'\n')
        .all(|c| c == b' ' || c == b'\t')
}

/// Whether only spaces or tabs follow `i` on its line.
pub(crate) fn rest_of_line_blank(t: &str, i: usize) -> bool {
    t[i..]
        .bytes()
        .take_while(|&c| c != b'\n')
        .all(|c| c == b' ' || c == b'\t' || c == b'\r')
}

/// Cut a message to `n` bytes on a character boundary.
pub(crate) fn clip(s: &str, n: usize) -> String {
    lrab_util::clip_bytes(s, n, |_| "…".into())
}

/// Whether the block at `at` is shown as an illustration of the syntax rather than written as
/// a call: the line before it introduces an example ("for example:", "e.g.", "an example
/// call"). Asked only of unmarked shapes, which count only as weak evidence: a family's own
/// marker is a call wherever it stands. (A fence introduced so is blanked whole before the
/// reply is read, `fences`, so only the line right before the block is looked at here.)
pub(crate) fn introduced_as_example(t: &str, at: usize) -> bool {
    // the line before it is all that is read (bounded work per candidate)
    let mut from = at.saturating_sub(512);
    while !t.is_char_boundary(from) {
        from += 1;
    }
    example_lead(t[from..at].trim_end().rsplit('\n').next().unwrap_or(""))
}

/// Whether a line introduces an example of the syntax ("for example:", "an example call:",
/// "a call looks like this:").
pub(crate) fn example_lead(line: &str) -> bool {
    let lead = line.trim().to_lowercase();
    const LEADS: [&str; 10] = [
        "for example",
        "for instance",
        "e.g.",
        "an example",
        "example call",
        "example usage",
        "example of",
        "such as:",
        "looks like this",
        "look like this",
    ];
    LEADS.iter().any(|l| lead.contains(l))
        || lead.ends_with("example:")
        || lead.ends_with("examples:")
}

/// First occurrence of `pat` in `t[from..to]`, as an absolute offset.
pub(crate) fn find_in(t: &str, from: usize, to: usize, pat: &str) -> Option<usize> {
    // a window end computed in bytes (`i + 256`) can fall inside a multi-byte character
    // (DeepSeek's `｜` is three bytes): end the window at the character before it
    let mut to = to.min(t.len());
    while !t.is_char_boundary(to) {
        to -= 1;
    }
    t.get(from..to)?.find(pat).map(|k| from + k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_spans_respect_strings_and_refuse_to_close_truncations() {
        let t = r#"x {"a": "}{", "b": [1, {"c": 'q}'}]} tail"#;
        let s = json_span(t, 2).unwrap();
        assert_eq!(&t[2..s], r#"{"a": "}{", "b": [1, {"c": 'q}'}]}"#);
        assert_eq!(json_span(r#"{"a": "unterminated"#, 0), None);
        assert_eq!(json_span("{[}]", 0), None);
        assert_eq!(json_span(&"[".repeat(10_000), 0), None);
        // an apostrophe in a value is not a string opener
        assert_eq!(json_span(r#"{"a": it's}"#, 0), Some(11));
    }

    #[test]
    fn one_newline_rule() {
        assert_eq!(one_newline("\nabc\n\n"), "abc\n");
        assert_eq!(one_newline("  x  "), "  x  ");
        assert_eq!(one_newline("\r\nx\r\n"), "x");
    }

    #[test]
    fn markers_are_detected_in_one_pass() {
        let cat = Catalog::from_names(&["read_file"]);
        let t = "a <tool_call> b [TOOL_CALLS] c";
        let s = Scan::with_markers(t, &cat, detect(t));
        assert!(s.has(mark::TOOL_CALL) && s.has(mark::MISTRAL));
        assert!(!s.has(mark::KIMI));
    }
}

//! The evidence in one message: what a model can read from it whatever the arm's wording —
//! structured fields of a JSON result, an exit status, a traceback, a location, a named item,
//! a refusal, a "nothing changed", a turned-down finish.

use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

use super::words;

/// Everything the readers below found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Evidence {
    pub error: bool,
    /// The failure is only a status: a non-zero exit, a timeout, an internal error.
    pub status_only: bool,
    /// A file and line, a line number, a failing test, a diagnostic with a position.
    pub location: bool,
    /// A named item: a path, a file name, a quoted token, a listed item.
    pub named: bool,
    /// A file name or path (not only a quoted token).
    pub file: bool,
    /// A list of items (bullets, a JSON list of open/missing items, an enumeration after a
    /// colon).
    pub list: bool,
    /// A "not found / missing / required / no match" statement (names what is missing).
    pub missing: bool,
    pub refused_strong: bool,
    pub refused_weak: bool,
    pub not_run: bool,
    pub noop: bool,
    pub not_done: bool,
    pub repeat: bool,
    /// An explicit success status (exit 0, `failed: 0`, `ok`).
    pub ok_status: bool,
}

fn re(cell: &'static OnceLock<Regex>, pat: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pat).expect("valid regex"))
}

fn has(t: &str, ws: &[&str]) -> bool {
    ws.iter().any(|w| t.contains(w))
}

/// Balanced `{…}` objects of a text (strings respected).
fn objects(t: &str) -> Vec<(usize, usize)> {
    let b = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'{' {
            i += 1;
            continue;
        }
        let (mut depth, mut in_str, mut esc, mut end) = (0i32, false, false, None);
        for (j, &c) in b.iter().enumerate().skip(i) {
            if in_str {
                match c {
                    _ if esc => esc = false,
                    b'\\' => esc = true,
                    b'"' => in_str = false,
                    _ => {}
                }
                continue;
            }
            match c {
                b'"' => in_str = true,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(j + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        match end {
            Some(e) => {
                out.push((i, e));
                i = e;
            }
            None => break,
        }
    }
    out
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Null => false,
        Value::String(s) => !s.is_empty() && s != "false" && s != "0",
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Evidence from JSON fields; the object is replaced by `key value` text (strings unquoted)
/// for the text readers.
fn from_json(v: &Value, e: &mut Evidence, flat: &mut String) {
    let Value::Object(m) = v else {
        if let Value::Array(a) = v {
            for x in a {
                from_json(x, e, flat);
            }
        } else if let Some(s) = v.as_str() {
            flat.push_str(s);
            flat.push(' ');
        } else {
            flat.push_str(&v.to_string());
            flat.push(' ');
        }
        return;
    };
    for (k, x) in m {
        let k = k.to_lowercase();
        let s = x.as_str().map(str::to_lowercase).unwrap_or_default();
        match k.as_str() {
            "error" | "errors" | "exception" if truthy(x) => e.error = true,
            "exit_code" | "returncode" | "exit_status" | "exitcode" | "code" if x.is_number() => {
                if truthy(x) {
                    e.error = true;
                    e.status_only = true;
                } else {
                    e.ok_status = true;
                }
            }
            "timed_out" | "timeout" if x.as_bool() == Some(true) => {
                e.error = true;
                e.status_only = true;
            }
            "failed" | "failures" if x.is_number() => {
                if truthy(x) {
                    e.error = true;
                } else {
                    e.ok_status = true;
                }
            }
            "allowed" | "permitted" | "approved" if x.as_bool() == Some(false) => {
                e.refused_strong = true
            }
            "rejected" | "refused" | "blocked" | "denied" if x.as_bool() == Some(true) => {
                e.refused_strong = true
            }
            "status" | "state" | "result" | "verdict" => match s.as_str() {
                "error" | "failed" | "failure" | "fail" => e.error = true,
                "noop" | "no-op" | "unchanged" => e.noop = true,
                "ok" | "success" | "passed" | "done" => e.ok_status = true,
                "denied" | "refused" | "blocked" => e.refused_strong = true,
                "stalled" => {}
                _ => {}
            },
            "changed" | "modified" | "committed" if x.as_bool() == Some(false) => e.noop = true,
            "action" if s == "none" => e.noop = true,
            "finish" | "completion" if s == "rejected" || s == "refused" => e.not_done = true,
            "done" | "work_done" | "complete" if x.as_bool() == Some(false) => e.not_done = true,
            "line" | "lineno" | "line_number" | "closest_line" if x.is_number() => {
                e.location = true
            }
            "open_items" | "missing" | "missing_files" | "remaining" | "todo" if truthy(x) => {
                e.named = true;
                e.list = true;
                e.not_done = true;
            }
            "suggestions" | "did_you_mean" if truthy(x) => {
                e.named = true;
                e.missing = true;
            }
            "file" | "path" | "files" if truthy(x) => {
                e.named = true;
                e.file = true;
            }
            _ => {}
        }
        // keys were read above; only values go on as text
        from_json(x, e, flat);
    }
}

/// Reads one message.
pub fn read(text: &str) -> Evidence {
    let mut e = Evidence::default();
    let mut flat = String::with_capacity(text.len());
    let mut last = 0;
    for (a, b) in objects(text) {
        if let Ok(v) = serde_json::from_str::<Value>(&text[a..b]) {
            flat.push_str(&text[last..a]);
            from_json(&v, &mut e, &mut flat);
            last = b;
        }
    }
    flat.push_str(&text[last..]);
    let mut t = flat.to_lowercase();
    for b in words::BENIGN {
        t = t.replace(b, " ");
    }
    let t = t.as_str();
    static EXIT: OnceLock<Regex> = OnceLock::new();
    static LOC: OnceLock<Regex> = OnceLock::new();
    static LINE: OnceLock<Regex> = OnceLock::new();
    static TEST: OnceLock<Regex> = OnceLock::new();
    static NAMED: OnceLock<Regex> = OnceLock::new();
    static EXIT0: OnceLock<Regex> = OnceLock::new();
    static COUNT: OnceLock<Regex> = OnceLock::new();
    static FILE: OnceLock<Regex> = OnceLock::new();
    static LIST: OnceLock<Regex> = OnceLock::new();
    let nonzero = re(
        &EXIT,
        r"exit(ed)?( with)?( a)?( non-zero)?( code| status)?[ :=(]*\[?-?[1-9]\d*|\[exit -?[1-9]\d*\]|return(ed)? (code )?[1-9]\d*|\bstatus [1-9]\d*\b|non-zero|nonzero",
    )
    .is_match(t);
    let exit0 = re(
        &EXIT0,
        r"\[exit 0\]|exit(ed)?( with)?( code| status)?[ :=]*0\b",
    )
    .is_match(t);
    let failed_count = re(&COUNT, r"\b[1-9]\d* (failed|errors?|failures?)\b").is_match(t);
    e.error |= has(t, words::ERROR) || nonzero || failed_count;
    e.status_only |= nonzero || has(t, words::STATUS_ONLY);
    e.ok_status |= exit0 || (t.contains(" passed") && !failed_count);
    e.location |= re(
        &LOC,
        r#"[\w./-]+\.[a-z]{1,5}"?(:\d+|,? line \d+| line \d+)"#,
    )
    .is_match(t)
        || re(&LINE, r"\b(at |on |around |near )?line \d+\b").is_match(t)
        || re(
            &TEST,
            r"\w+\.py::\w+|\bfailed:? test_\w+|\btest_\w+\b.{0,40}\b(fail|red|error)",
        )
        .is_match(t);
    e.file |= re(
        &FILE,
        r"(?-u:\b)[A-Za-z0-9_-]+\.(py|md|txt|csv|json|yaml|yml|toml|sh|js|ts|html|tsv|log|png|svg|pdf|cfg|ini)(?-u:\b)|[A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+\.[a-z]{1,5}",
    )
    .is_match(t);
    e.list |= re(&LIST, r"(?m)^\s*[-*•] \S.*\n\s*[-*•] \S|[:：][^。(（\n]*、").is_match(t);
    e.named |= e.file
        || e.list
        || re(
            &NAMED,
            r#"`[^`\n]{2,60}`|'[^'\n]{2,60}'|"[^"\n]{2,60}"|‘[^’\n]{2,60}’|“[^”\n]{2,60}”"#,
        )
        .is_match(t);
    e.missing = has(t, words::MISSING);
    e.refused_strong |= has(t, words::REFUSED_STRONG);
    e.refused_weak = has(t, words::REFUSED_WEAK);
    e.not_run = has(t, words::NOT_RUN);
    e.noop |= has(t, words::ALREADY);
    e.not_done |= has(t, words::NOT_DONE);
    e.repeat = has(t, words::REPEAT);
    e
}

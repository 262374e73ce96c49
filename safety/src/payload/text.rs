//! Reading source text without a full parser: calls and their arguments, string literals,
//! string expressions evaluated when every part is a literal, and aliases of imported modules.

use crate::analyzer::{Analyzer, Env};

pub(super) fn hex(s: &str) -> Option<String> {
    let h: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    let b: Vec<u8> = (0..h.len() / 2)
        .filter_map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).ok())
        .collect();
    Some(String::from_utf8_lossy(&b).into_owned())
}

pub(super) fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `name(args)` occurrences (also `name args;` for perl/ruby style calls without parens).
pub(super) fn find_calls(code: &str, names: &[&str]) -> Vec<(String, String)> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    for name in names {
        let nc: Vec<char> = name.chars().collect();
        let mut i = 0;
        while i + nc.len() <= c.len() {
            if c[i..i + nc.len()] == nc[..] {
                let before_ok = i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_');
                let mut j = i + nc.len();
                while j < c.len() && c[j] == ' ' {
                    j += 1;
                }
                if before_ok && j < c.len() && c[j] == '(' {
                    if let Some(end) = matching(&c, j) {
                        out.push((name.to_string(), c[j + 1..end].iter().collect()));
                        i = end;
                        continue;
                    }
                } else if before_ok
                    && j > i + nc.len()
                    && j < c.len()
                    && (c[j] == '\'' || c[j] == '"')
                    && !name.contains('.')
                {
                    let end = c[j..]
                        .iter()
                        .position(|&x| x == ';' || x == '\n')
                        .map(|e| j + e)
                        .unwrap_or(c.len());
                    out.push((name.to_string(), c[j..end].iter().collect()));
                    i = end;
                    continue;
                }
            }
            i += 1;
        }
    }
    out
}

pub(super) fn matching(c: &[char], open: usize) -> Option<usize> {
    let mut depth = 0;
    let mut q: Option<char> = None;
    let mut i = open;
    while i < c.len() {
        let ch = c[i];
        if let Some(qc) = q {
            if ch == '\\' {
                i += 2;
                continue;
            }
            if ch == qc {
                q = None;
            }
        } else if ch == '\'' || ch == '"' || ch == '`' {
            q = Some(ch);
        } else if ch == '(' || ch == '[' || ch == '{' {
            depth += 1;
        } else if ch == ')' || ch == ']' || ch == '}' {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

/// Split an argument list at top-level commas.
pub(super) fn split_args(s: &str) -> Vec<String> {
    let c: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut q: Option<char> = None;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if let Some(qc) = q {
            cur.push(ch);
            if ch == '\\' && i + 1 < c.len() {
                cur.push(c[i + 1]);
                i += 2;
                continue;
            }
            if ch == qc {
                q = None;
            }
        } else {
            match ch {
                '\'' | '"' | '`' => {
                    q = Some(ch);
                    cur.push(ch);
                }
                '(' | '[' | '{' => {
                    depth += 1;
                    cur.push(ch);
                }
                ')' | ']' | '}' => {
                    depth -= 1;
                    cur.push(ch);
                }
                ',' if depth == 0 => out.push(std::mem::take(&mut cur).trim().to_string()),
                _ => cur.push(ch),
            }
        }
        i += 1;
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

pub(super) fn unescape(s: &str) -> String {
    crate::decode::ansi_c(s)
}

/// Evaluate a literal-ish expression to a string: literals, `+`/`.` concatenation,
/// `os.path.join`, `expanduser`, `Path(...)`, `Path.home()`, `/` on paths, `$HOME`/`HOME` lookups.
pub(super) fn eval_str(expr: &str, a: &Analyzer<'_>, env: &Env) -> Option<String> {
    let e = expr.trim();
    let e = e
        .strip_prefix("r")
        .filter(|r| r.starts_with('\'') || r.starts_with('"'))
        .unwrap_or(e);
    let e = e
        .strip_prefix("b")
        .filter(|r| r.starts_with('\'') || r.starts_with('"'))
        .unwrap_or(e);
    let e = e
        .strip_prefix("f")
        .filter(|r| r.starts_with('\'') || r.starts_with('"'))
        .unwrap_or(e);
    if e.is_empty() {
        return None;
    }
    let home = a.ctx.home.to_string_lossy().to_string();
    // a single literal
    if let Some(q) = e.chars().next().filter(|c| matches!(c, '\'' | '"' | '`')) {
        let inner = &e[1..];
        if let Some(end) = find_close(inner, q) {
            if end + 1 == inner.len() {
                let raw = &inner[..end];
                if q == '`' && raw.contains("${")
                    || q == '"' && (raw.contains("#{") || raw.contains("${"))
                {
                    return None;
                }
                return Some(unescape(raw));
            }
        }
    }
    match e {
        "Path.home()"
        | "pathlib.Path.home()"
        | "os.homedir()"
        | "require('os').homedir()"
        | "Dir.home"
        | "ENV['HOME']"
        | "$ENV{HOME}"
        | "$ENV{'HOME'}"
        | "os.environ['HOME']"
        | "os.environ[\"HOME\"]"
        | "os.getenv('HOME')"
        | "os.getenv(\"HOME\")"
        | "os.environ.get('HOME')"
        | "process.env.HOME"
        | "$_SERVER['HOME']"
        | "getenv('HOME')" => return Some(home),
        "os.getcwd()" | "process.cwd()" | "Dir.pwd" | "Path.cwd()" | "'.'" => {
            return Some(env.cwd.as_ref()?.to_string_lossy().to_string())
        }
        _ => {}
    }
    // concatenation at top level
    for op in ['+', '.', '/'] {
        let parts = split_top(e, op);
        if parts.len() > 1 {
            let mut s = String::new();
            for (i, p) in parts.iter().enumerate() {
                let v = eval_str(p, a, env)?;
                if op == '/' && i > 0 {
                    s.push('/');
                }
                s.push_str(&v);
            }
            return Some(s);
        }
    }
    for (pre, join) in [
        ("os.path.join(", true),
        ("path.join(", true),
        ("File.join(", true),
        ("Path(", false),
        ("pathlib.Path(", false),
        ("os.path.expanduser(", false),
        ("os.path.abspath(", false),
        ("os.path.realpath(", false),
        ("str(", false),
        ("File.expand_path(", false),
        ("path.resolve(", true),
    ] {
        if let Some(inner) = e.strip_prefix(pre).and_then(|r| r.strip_suffix(')')) {
            if inner.is_empty() {
                return Some(".".into());
            }
            let parts: Option<Vec<String>> = split_args(inner)
                .iter()
                .map(|p| eval_str(p, a, env))
                .collect();
            let parts = parts?;
            let s = if join {
                let mut acc = String::new();
                for p in parts {
                    if p.starts_with('/') || acc.is_empty() {
                        acc = p;
                    } else {
                        acc = format!("{}/{}", acc.trim_end_matches('/'), p);
                    }
                }
                acc
            } else {
                parts.first()?.clone()
            };
            return Some(crate::paths::expand_home(&s, &a.ctx.home));
        }
    }
    None
}

pub(super) fn find_close(s: &str, q: char) -> Option<usize> {
    let mut esc = false;
    for (i, ch) in s.char_indices() {
        if esc {
            esc = false;
            continue;
        }
        if ch == '\\' {
            esc = true;
            continue;
        }
        if ch == q {
            return Some(i);
        }
    }
    None
}

pub(super) fn split_top(s: &str, op: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    let mut q: Option<char> = None;
    let mut esc = false;
    for ch in s.chars() {
        if let Some(qc) = q {
            cur.push(ch);
            if esc {
                esc = false;
            } else if ch == '\\' {
                esc = true;
            } else if ch == qc {
                q = None;
            }
            continue;
        }
        match ch {
            '\'' | '"' | '`' => {
                q = Some(ch);
                cur.push(ch);
            }
            '(' | '[' | '{' => {
                depth += 1;
                cur.push(ch);
            }
            ')' | ']' | '}' => {
                depth -= 1;
                cur.push(ch);
            }
            c if c == op && depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(ch),
        }
    }
    out.push(cur);
    if out.iter().any(|p| p.trim().is_empty()) {
        return vec![s.to_string()];
    }
    out
}

/// Every quoted string literal in the code (escapes decoded).
pub(super) fn string_literals(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let q = c[i];
        if q == '\'' || q == '"' {
            let mut j = i + 1;
            let mut s = String::new();
            while j < c.len() && c[j] != q {
                if c[j] == '\\' && j + 1 < c.len() {
                    s.push(c[j]);
                    j += 1;
                }
                s.push(c[j]);
                j += 1;
            }
            out.push(unescape(&s));
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

pub(super) fn backtick_strings(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find('`') {
        let after = &rest[i + 1..];
        match after.find('`') {
            Some(j) => {
                out.push(after[..j].to_string());
                rest = &after[j + 1..];
            }
            None => break,
        }
    }
    for pre in ["qx{", "qx(", "qx/", "%x(", "%x{"] {
        let close = match pre.chars().last() {
            Some('{') => '}',
            Some('(') => ')',
            _ => '/',
        };
        let mut r = code;
        while let Some(i) = r.find(pre) {
            let after = &r[i + pre.len()..];
            match after.find(close) {
                Some(j) => {
                    out.push(after[..j].to_string());
                    r = &after[j + 1..];
                }
                None => break,
            }
        }
    }
    out
}

/// `Path(expr).method(` → (method, expr).
pub(super) fn path_method_calls(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (_, inner) in find_calls(code, &["Path", "pathlib.Path"]) {
        let needle = format!("Path({inner}).");
        if let Some(i) = code.find(&needle) {
            let rest = &code[i + needle.len()..];
            let method: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push((method, format!("Path({inner})")));
        }
    }
    out
}

/// `(original, alias)` pairs from `import a as b`, `from m import a as b`, and JS destructuring
/// `{ a: b }`.
pub(super) fn alias_names(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':'))
        .filter(|w| !w.is_empty())
        .collect();
    for w in words.windows(3) {
        if w[1] == "as" {
            out.push((
                w[0].rsplit('.').next().unwrap_or(w[0]).to_string(),
                w[2].to_string(),
            ));
        }
    }
    for w in words.windows(2) {
        if let Some(orig) = w[0].strip_suffix(':') {
            if !orig.is_empty() {
                out.push((orig.to_string(), w[1].to_string()));
            }
        }
    }
    out
}

//! Invoke-style XML: `<P invoke name="NAME">` with one `<P parameter name="K">V</P parameter>`
//! per argument, closed by `</P invoke>`, where `P` is a family prefix: none (MiniMax-M2 inside
//! `<minimax:tool_call>`, and the `<function_calls><invoke>` layout), `｜DSML｜` (DeepSeek
//! V3.2/V4, whose parameters say `string="true"` for raw text and `string="false"` for JSON),
//! `atem:` (Muse Glimmer), `steptml:` (Step-3). Values are raw text typed by the schema, minus
//! one leading and one trailing newline. An invoke without its closing tag is not a call.

use super::scan::{find_in, is_name, mark, one_newline, skip_ws, Arg, Args, Found, Scan};

pub(crate) fn scan(s: &mut Scan) {
    if !s.has(mark::INVOKE) {
        return;
    }
    let t = s.text;
    let mut consumed = 0;
    let mut unclosed: Vec<String> = Vec::new();
    for k in s.occurrences("invoke name=") {
        if k < consumed {
            continue;
        }
        // the '<' that opens this tag, and the prefix between it and `invoke`
        let mut from = k.saturating_sub(24);
        while !t.is_char_boundary(from) {
            from += 1;
        }
        let Some(lt) = t[from..k].rfind('<').map(|j| from + j) else {
            continue;
        };
        let prefix = &t[lt + 1..k];
        if unclosed.iter().any(|p| p == prefix) {
            continue; // no closing tag after an earlier invoke: none after this one either
        }
        if prefix.contains(|c: char| c.is_whitespace() || c == '>' || c == '<' || c == '/') {
            continue;
        }
        let Some((name, gt)) = quoted(t, k + "invoke name=".len()) else {
            continue;
        };
        let Some(body) = find_in(t, gt, t.len().min(gt + 256), ">").map(|j| j + 1) else {
            continue;
        };
        let close_tag = format!("</{prefix}invoke>");
        let Some(close) = t[body..].find(&close_tag).map(|j| body + j) else {
            s.problem(format!("the {name} call was cut off before {close_tag}"));
            unclosed.push(prefix.to_string());
            continue;
        };
        if !is_name(&name) {
            continue;
        }
        if let Some(pairs) = parameters(t, body, close, prefix) {
            let end = close + close_tag.len();
            s.push(Found::new(lt, end, &name, Args::Pairs(pairs), dialect(prefix)));
            consumed = end;
        }
    }
}

fn dialect(prefix: &str) -> &'static str {
    match prefix {
        "" => "invoke-xml",
        p if p.contains("DSML") => "deepseek-dsml",
        "atem:" => "glimmer-atem",
        "steptml:" => "step3",
        _ => "invoke-xml",
    }
}

/// The attribute value in quotes starting at `i`, and the offset after it.
fn quoted(t: &str, i: usize) -> Option<(String, usize)> {
    let q = *t.as_bytes().get(i)?;
    if q != b'"' && q != b'\'' {
        return None;
    }
    let end = t[i + 1..].find(q as char)? + i + 1;
    if end - i > 200 {
        return None;
    }
    Some((t[i + 1..end].to_string(), end + 1))
}

fn parameters(t: &str, mut i: usize, close: usize, prefix: &str) -> Option<Vec<(String, Arg)>> {
    let open = format!("<{prefix}parameter");
    let end_tag = format!("</{prefix}parameter>");
    let mut pairs = Vec::new();
    loop {
        i = skip_ws(t, i);
        if i >= close {
            return Some(pairs);
        }
        if !t[i..].starts_with(&open) {
            return None;
        }
        let a = skip_ws(t, i + open.len());
        if !t[a..].starts_with("name=") {
            return None;
        }
        let (key, after) = quoted(t, a + "name=".len())?;
        let gt = find_in(t, after, close, ">")?;
        let raw_text = !t[after..gt].contains("string=\"false\"");
        let v0 = gt + 1;
        let v1 = find_in(t, v0, close, &end_tag)?;
        let value = one_newline(&t[v0..v1]).to_string();
        let arg = if raw_text {
            Arg::Raw(value)
        } else {
            match super::scan::parse_json(value.trim()) {
                Ok(v) => Arg::Val(v),
                Err(_) => Arg::Raw(value),
            }
        };
        pairs.push((key, arg));
        if pairs.len() > super::MAX_ARGS {
            return Some(pairs);
        }
        i = v1 + end_tag.len();
    }
}

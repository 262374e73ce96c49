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
            s.cut_off(format!("the {name} call was cut off before {close_tag}"));
            unclosed.push(prefix.to_string());
            continue;
        };
        if !is_name(&name) {
            continue;
        }
        if let Some(pairs) = parameters(t, body, close, prefix) {
            let end = close + close_tag.len();
            s.push(Found::new(
                lt,
                end,
                &name,
                Args::Pairs(pairs),
                dialect(prefix),
            ));
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

/// The attribute value starting at `i` — in quotes, or bare up to `>` or a space (the dots
/// layout writes `<invoke name=search>`) — and the offset after it.
fn quoted(t: &str, i: usize) -> Option<(String, usize)> {
    let q = *t.as_bytes().get(i)?;
    if q != b'"' && q != b'\'' {
        let end = t[i..].find(|c: char| c == '>' || c.is_whitespace())? + i;
        return (end > i && end - i <= 200).then(|| (t[i..end].to_string(), end));
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
            // MiniMax-M3 names the element after the parameter: `<city>Paris</city>`
            let (key, value, next) = element(t, i, close, prefix)?;
            pairs.push((key, Arg::Raw(value)));
            i = next;
            continue;
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

/// `<P KEY>value</P KEY>` at `i`: the key, the raw value and the offset after the element.
fn element(t: &str, i: usize, close: usize, prefix: &str) -> Option<(String, String, usize)> {
    let o = format!("<{prefix}");
    if !t[i..].starts_with(&o) {
        return None;
    }
    let k0 = i + o.len();
    let gt = find_in(t, k0, close, ">")?;
    let key = &t[k0..gt];
    if !is_name(key) {
        return None;
    }
    let end_tag = format!("</{prefix}{key}>");
    let v1 = find_in(t, gt + 1, close, &end_tag)?;
    let value = one_newline(&t[gt + 1..v1]).to_string();
    Some((key.to_string(), value, v1 + end_tag.len()))
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn prefixes() {
        expect(
            "<minimax:tool_call>\n<invoke name=\"read_file\">\n<parameter name=\"path\">a.ts</parameter>\n<parameter name=\"start_line\">3</parameter>\n</invoke>\n</minimax:tool_call>",
            "invoke-xml",
            json!([{"name": "read_file", "arguments": {"path": "a.ts", "start_line": 3}}]),
        );
        expect(
            "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"todo\">\n<｜DSML｜parameter name=\"action\" string=\"true\">create</｜DSML｜parameter>\n<｜DSML｜parameter name=\"items\" string=\"false\">[\"a\"]</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
            "deepseek-dsml",
            json!([{"name": "todo", "arguments": {"action": "create", "items": ["a"]}}]),
        );
        expect(
            "<atem:function_calls>\n<atem:invoke name=\"list_dir\">\n<atem:parameter name=\"path\">src</atem:parameter>\n</atem:invoke>\n</atem:function_calls>",
            "glimmer-atem",
            json!([{"name": "list_dir", "arguments": {"path": "src"}}]),
        );
        expect(
            "<dots_function_call>\n<invoke name=run_shell>\n<parameter name=command>\nls\n</parameter>\n</invoke>\n</dots_function_call>",
            "invoke-xml",
            json!([{"name": "run_shell", "arguments": {"command": "ls"}}]),
        );
        expect(
            "<tool_call>\n<invoke name=\"search_files\"><pattern>TODO</pattern></invoke>\n</tool_call>",
            "invoke-xml",
            json!([{"name": "search_files", "arguments": {"pattern": "TODO"}}]),
        );
    }

    #[test]
    fn unclosed_is_not_a_call() {
        none("<invoke name=\"write_file\">\n<parameter name=\"path\">a</parameter>\n<parameter name=\"content\">half");
    }
}

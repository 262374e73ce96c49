//! GLM-4.5/4.6/4.7 (and Ling, Spark, Laguna): `<tool_call>NAME` then `<arg_key>K</arg_key>`
//! `<arg_value>V</arg_value>` pairs, with or without newlines between the tags, then
//! `</tool_call>`. Values are raw text typed by the schema. A block without its closing tag
//! is not a call (the reference parsers reject it too). Hunyuan 3 writes the same with
//! `<tool_sep>` after the name, and JSON arguments there instead of pairs.

use super::scan::{
    find_in, is_name, json_span, one_newline, parse_json, skip_ws, Arg, Args, Found,
};

const KEY: &str = "<arg_key>";
const KEY_END: &str = "</arg_key>";
const VAL: &str = "<arg_value>";
const VAL_END: &str = "</arg_value>";
const SEP: &str = "<tool_sep>";

/// The call in the block whose body is `t[body..close]` (the block starts at `at`).
pub(crate) fn parse_block(t: &str, at: usize, body: usize, close: usize) -> Option<Found> {
    let end = close + "</tool_call>".len();
    let first_key = find_in(t, body, close, KEY).unwrap_or(close);
    // Hunyuan 3 separates the name with `<tool_sep>` and may give JSON arguments after it
    let sep = find_in(t, body, first_key, SEP);
    let name = t[body..sep.unwrap_or(first_key)].trim();
    if !is_name(name) {
        return None;
    }
    if let Some(sp) = sep {
        let j = skip_ws(t, sp + SEP.len());
        if t.as_bytes().get(j) == Some(&b'{') {
            let e = json_span(&t[..close], j)?;
            let v = parse_json(&t[j..e]).ok()?;
            return Some(Found::new(at, end, name, Args::Json(v), "hunyuan"));
        }
    }
    let mut pairs = Vec::new();
    let mut i = first_key;
    while i < close {
        i = skip_ws(t, i);
        if i >= close {
            break;
        }
        if !t[i..].starts_with(KEY) {
            return None;
        }
        let k0 = i + KEY.len();
        let k1 = find_in(t, k0, close, KEY_END)?;
        let key = t[k0..k1].trim().to_string();
        let v = skip_ws(t, k1 + KEY_END.len());
        if !t[v..].starts_with(VAL) {
            return None;
        }
        let v0 = v + VAL.len();
        let v1 = find_in(t, v0, close, VAL_END)?;
        pairs.push((key, Arg::Raw(one_newline(&t[v0..v1]).to_string())));
        if pairs.len() > super::MAX_ARGS {
            break;
        }
        i = v1 + VAL_END.len();
    }
    Some(Found::new(at, end, name, Args::Pairs(pairs), "glm"))
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn pairs_typed_by_schema() {
        expect(
            "Reading it.\n<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>app/models.py</arg_value>\n<arg_key>end_line</arg_key>\n<arg_value>25</arg_value>\n</tool_call>",
            "glm",
            json!([{"name": "read_file", "arguments": {"path": "app/models.py", "end_line": 25}}]),
        );
        expect(
            "<tool_call>todo<arg_key>action</arg_key><arg_value>create</arg_value><arg_key>items</arg_key><arg_value>[\"one\", \"two\"]</arg_value></tool_call>",
            "glm",
            json!([{"name": "todo", "arguments": {"action": "create", "items": ["one", "two"]}}]),
        );
        expect(
            "<tool_call>run_shell<tool_sep>{\"command\": \"make\"}</tool_call>",
            "hunyuan",
            json!([{"name": "run_shell", "arguments": {"command": "make"}}]),
        );
    }

    #[test]
    fn unclosed_or_garbled_is_not_a_call() {
        none("<tool_call>read_file<arg_key>path</arg_key><arg_value>a.py</arg_value>");
        none("<tool_call>read file please</tool_call>");
        none("<tool_call>read_file<arg_key>path</arg_key>oops</tool_call>");
    }
}

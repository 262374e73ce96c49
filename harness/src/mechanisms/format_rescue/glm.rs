//! GLM-4.5/4.6/4.7 (and Ling, Spark, Laguna): `<tool_call>NAME` then `<arg_key>K</arg_key>`
//! `<arg_value>V</arg_value>` pairs, with or without newlines between the tags, then
//! `</tool_call>`. Values are raw text typed by the schema. A block without its closing tag
//! is not a call (the reference parsers reject it too).

use super::scan::{find_in, is_name, one_newline, skip_ws, Arg, Args, Found};

const KEY: &str = "<arg_key>";
const KEY_END: &str = "</arg_key>";
const VAL: &str = "<arg_value>";
const VAL_END: &str = "</arg_value>";

/// The call in the block whose body is `t[body..close]` (the block starts at `at`).
pub(crate) fn parse_block(t: &str, at: usize, body: usize, close: usize) -> Option<Found> {
    let first_key = find_in(t, body, close, KEY).unwrap_or(close);
    let name = t[body..first_key].trim();
    if !is_name(name) {
        return None;
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
    Some(Found::new(
        at,
        close + "</tool_call>".len(),
        name,
        Args::Pairs(pairs),
        "glm",
    ))
}

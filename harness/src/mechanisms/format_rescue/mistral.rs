//! Mistral's `[TOOL_CALLS]`. Before tokenizer v11 it is followed by a JSON list of
//! `{"name", "arguments"}` (Mistral 7B v0.3, Nemo, Small 3; Nemo adds an `id`). From v11 each
//! call is `[TOOL_CALLS]NAME[ARGS]{json}` (Ministral 3, Devstral, Magistral), with
//! `[CALL_ID]<id>` before `[ARGS]` in Small 3.2, and with `[ARGS]`/`[CALL_ID]` gone when the
//! server strips special tokens (`[TOOL_CALLS]NAME{json}`). Several calls follow each other.

use super::json_calls;
use super::scan::{is_name, mark, name_end, skip_ws, Args, Found, Scan};

const TAG: &str = "[TOOL_CALLS]";

pub(crate) fn scan(s: &mut Scan) {
    if !s.has(mark::MISTRAL) {
        return;
    }
    let t = s.text;
    let tags = s.occurrences(TAG);
    for (n, &at) in tags.iter().enumerate() {
        let limit = tags.get(n + 1).copied().unwrap_or(t.len());
        let i = skip_ws(t, at + TAG.len());
        match t.as_bytes().get(i) {
            Some(b'[' | b'{') => {
                let vals = s.json_seq(i, limit);
                let end = vals.last().map(|v| v.1).unwrap_or(i);
                for (_, _, v) in &vals {
                    json_calls::push(s, at, end, v, "mistral", false);
                }
            }
            Some(_) => {
                let ne = name_end(t, i);
                let name = &t[i..ne];
                if !is_name(name) {
                    continue;
                }
                let mut j = ne;
                if t[j..].starts_with("[CALL_ID]") {
                    j += "[CALL_ID]".len();
                    j = t[j..]
                        .find(['[', '{'])
                        .map(|k| j + k)
                        .filter(|&k| k < limit)
                        .unwrap_or(limit);
                }
                if t[j..].starts_with("[ARGS]") {
                    j += "[ARGS]".len();
                }
                let j = skip_ws(t, j);
                if t.as_bytes().get(j) != Some(&b'{') {
                    continue;
                }
                match s.json_at(j, limit) {
                    Some((end, Ok(v))) => {
                        s.push(Found::new(at, end, name, Args::Json(v), "mistral"));
                    }
                    Some((_, Err(e))) => s.problem(format!("the {name} arguments are not JSON ({e})")),
                    None => s.problem(format!("the {name} call was cut off")),
                }
            }
            None => {}
        }
    }
}

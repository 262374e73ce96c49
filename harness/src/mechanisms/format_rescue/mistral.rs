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
                    Some((_, Err(e))) => {
                        s.problem(format!("the {name} arguments are not JSON ({e})"))
                    }
                    None => s.cut_off(format!("the {name} call was cut off")),
                }
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn both_generations() {
        expect(
            "[TOOL_CALLS] [{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.go\"}, \"id\": \"Xy12Ab34C\"}, {\"name\": \"list_dir\", \"arguments\": {}}]",
            "mistral",
            json!([{"name": "read_file", "arguments": {"path": "a.go"}}, {"name": "list_dir", "arguments": {}}]),
        );
        expect(
            "Checking.[TOOL_CALLS]search_files[CALL_ID]a1b2c3d4e[ARGS]{\"pattern\": \"TODO\"}[TOOL_CALLS]read_file[ARGS]{\"path\": \"b.go\"}",
            "mistral",
            json!([{"name": "search_files", "arguments": {"pattern": "TODO"}}, {"name": "read_file", "arguments": {"path": "b.go"}}]),
        );
        expect(
            "[TOOL_CALLS]list_dir{\"path\": \"cmd\"}</s>",
            "mistral",
            json!([{"name": "list_dir", "arguments": {"path": "cmd"}}]),
        );
    }

    #[test]
    fn not_calls() {
        none("[TOOL_CALLS] I cannot call a tool for that.");
        none("[TOOL_CALLS]write_file[ARGS]{\"path\": \"a\", \"content\": \"to be contin");
        none("[THINK]maybe [TOOL_CALLS]run_shell[ARGS]{\"command\": \"ls\"}[/THINK]No.");
    }
}

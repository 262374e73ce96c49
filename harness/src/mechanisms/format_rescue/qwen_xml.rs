//! `<function=NAME>` calls. Qwen3-Coder, Qwen3.5, Nemotron-3 Nano and Step-3.5 write one
//! `<parameter=K>…</parameter>` per argument, each value raw text (quotes, backslashes, `&`,
//! `<` kept literally) that loses exactly one leading and one trailing newline and is then typed
//! by the schema; Seed-OSS writes the same inside `<seed:tool_call>`. The `<tool_call>` wrapper
//! may be missing or half missing, and a forgotten `</parameter>` ends at the next parameter or
//! at `</function>`. Functionary v3.1 and Llama 3.1's custom-function prompt put JSON there
//! instead: `<function=NAME>{…}</function>`. Without `</function>` a parameter call is
//! incomplete (cut off) and is not a call.

use super::scan::{find_in, is_name, mark, one_newline, skip_ws, Arg, Args, Found, Next, Scan};

const OPEN: &str = "<function=";
const CLOSE: &str = "</function>";
const PARAM: &str = "<parameter=";
const PARAM_END: &str = "</parameter>";

pub(crate) fn scan(s: &mut Scan) {
    if !s.has(mark::FUNCTION_EQ) {
        return;
    }
    let mut consumed = 0;
    let mut next_close = Next::new(CLOSE);
    for at in s.occurrences(OPEN) {
        if at < consumed {
            continue;
        }
        let t = s.text;
        let n0 = at + OPEN.len();
        let Some(gt) = t[n0..].find(['>', '\n']).map(|k| n0 + k) else {
            continue;
        };
        let name = t[n0..gt].trim();
        if t.as_bytes()[gt] != b'>' || !is_name(name) {
            continue;
        }
        let body = gt + 1;
        let fend = next_close.at_or_after(t, body);
        let i = skip_ws(t, body);
        if t.as_bytes().get(i) == Some(&b'{') {
            // Functionary v3.1: JSON arguments
            let limit = fend.unwrap_or(t.len());
            if let Some((end, Ok(v))) = s.json_at(i, limit) {
                let end = fend.map(|f| f + CLOSE.len()).unwrap_or(end).max(end);
                s.push(Found::new(at, end, name, Args::Json(v), "functionary"));
                consumed = end;
            }
            continue;
        }
        let Some(fend) = fend else {
            s.cut_off(format!("the {name} call was cut off before </function>"));
            continue;
        };
        if let Some(pairs) = parameters(t, body, fend) {
            let end = fend + CLOSE.len();
            s.push(Found::new(at, end, name, Args::Pairs(pairs), "qwen3-coder"));
            consumed = end;
        }
    }
}

/// The `<parameter=…>` pairs in `t[i..fend]`; None when anything else is there.
fn parameters(t: &str, mut i: usize, fend: usize) -> Option<Vec<(String, Arg)>> {
    let mut pairs = Vec::new();
    loop {
        i = skip_ws(t, i);
        if i >= fend {
            return Some(pairs);
        }
        if !t[i..].starts_with(PARAM) {
            return None;
        }
        let k0 = i + PARAM.len();
        let gt = find_in(t, k0, fend, ">")?;
        let key = t[k0..gt].trim();
        if !is_name(key) {
            return None;
        }
        let v0 = gt + 1;
        let next_param = find_in(t, v0, fend, PARAM);
        let bound = next_param.unwrap_or(fend);
        let (v1, after) = match find_in(t, v0, bound, PARAM_END) {
            Some(c) => (c, c + PARAM_END.len()),
            None => (bound, bound), // a forgotten </parameter>
        };
        pairs.push((
            key.to_string(),
            Arg::Raw(one_newline(&t[v0..v1]).to_string()),
        ));
        if pairs.len() > super::MAX_ARGS {
            return Some(pairs);
        }
        i = after;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn parameters_raw_and_typed() {
        expect(
            "I'll fix it.\n<tool_call>\n<function=edit_file>\n<parameter=path>\nsrc/x.c\n</parameter>\n<parameter=old>\n  if (a < b && c) {\n</parameter>\n<parameter=new>\n  if (a <= b && c) {\n</parameter>\n</function>\n</tool_call>",
            "qwen3-coder",
            json!([{"name": "edit_file", "arguments": {"path": "src/x.c", "old": "  if (a < b && c) {", "new": "  if (a <= b && c) {"}}]),
        );
        // Seed-OSS layout: inline values inside <seed:tool_call>
        expect(
            "<seed:tool_call>\n<function=run_shell>\n<parameter=command>ls -1</parameter>\n<parameter=timeout>15</parameter>\n</function>\n</seed:tool_call>",
            "qwen3-coder",
            json!([{"name": "run_shell", "arguments": {"command": "ls -1", "timeout": 15}}]),
        );
        // Functionary v3.1: JSON inside
        expect(
            "<function=list_dir>{\"path\": \"docs\"}</function>",
            "functionary",
            json!([{"name": "list_dir", "arguments": {"path": "docs"}}]),
        );
        // a forgotten </parameter> before the next parameter
        expect(
            "<function=write_file>\n<parameter=path>\na.txt\n<parameter=content>\nhi\n</parameter>\n</function>",
            "qwen3-coder",
            json!([{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}}]),
        );
    }

    #[test]
    fn incomplete_is_not_a_call() {
        none(
            "<tool_call>\n<function=run_shell>\n<parameter=command>\nrm -rf build\n</parameter>\n",
        );
        none("Write `<function=read_file>` then a parameter tag.");
        none("<function=read file>\n<parameter=path>\na\n</parameter>\n</function>");
    }
}

//! Kimi K2: `<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}` then
//! `<|tool_call_end|>`, all calls inside `<|tool_calls_section_begin|>` … `_end|>`. The id
//! `functions.NAME:IDX` carries the name. K2-Thinking may emit calls inside its still-open
//! think block and without the section or end markers; the reference parser extracts them, so
//! this scanner also runs over an unclosed think block (see the caller).

use super::names::bare;
use super::scan::{find_in, is_name, mark, skip_ws, Args, Found, Scan};

pub(crate) const BEGIN: &str = "<|tool_call_begin|>";
const ARGS: &str = "<|tool_call_argument_begin|>";
const END: &str = "<|tool_call_end|>";

pub(crate) fn scan(s: &mut Scan) {
    if !s.has(mark::KIMI) {
        return;
    }
    let t = s.text;
    let begins = s.occurrences(BEGIN);
    for (n, &at) in begins.iter().enumerate() {
        let limit = begins.get(n + 1).copied().unwrap_or(t.len());
        let i = at + BEGIN.len();
        let Some(a) = find_in(t, i, limit.min(i + 256), ARGS) else {
            continue;
        };
        let id = t[i..a].trim();
        let name = bare(id);
        if !is_name(name) {
            continue;
        }
        let j = skip_ws(t, a + ARGS.len());
        if t.as_bytes().get(j) != Some(&b'{') {
            continue;
        }
        match s.json_at(j, limit) {
            Some((end, Ok(v))) => {
                let close = if t[end..].trim_start().starts_with(END) {
                    t[end..]
                        .find(END)
                        .map(|k| end + k + END.len())
                        .unwrap_or(end)
                } else {
                    end
                };
                s.push(Found::new(at, close, name, Args::Json(v), "kimi-k2"));
            }
            Some((_, Err(e))) => s.problem(format!("the {name} arguments are not JSON ({e})")),
            None => s.cut_off(format!("the {name} call was cut off")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn sections_and_open_think() {
        expect(
            "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.list_dir:0<|tool_call_argument_begin|>{\"path\": \"pkg\"}<|tool_call_end|><|tool_call_begin|>functions.read_file:1<|tool_call_argument_begin|>{\"path\": \"pkg/a.go\"}<|tool_call_end|><|tool_calls_section_end|>",
            "kimi-k2",
            json!([{"name": "list_dir", "arguments": {"path": "pkg"}}, {"name": "read_file", "arguments": {"path": "pkg/a.go"}}]),
        );
        expect(
            "<think>need the file<|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>{\"path\": \"x\"}",
            "kimi-k2",
            json!([{"name": "read_file", "arguments": {"path": "x"}}]),
        );
    }

    #[test]
    fn not_calls() {
        none("<|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>{\"path\": \"x");
        none("<think>maybe <tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}</tool_call> hmm");
    }
}

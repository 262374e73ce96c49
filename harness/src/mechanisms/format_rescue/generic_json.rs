//! JSON call objects with no family marker — bare, after or between prose, in a ```` ```json ````
//! fence, several in a row (Llama 3.x's `{"name", "parameters"}` separated by `;` or newlines,
//! xLAM's bare list, Mistral with `[TOOL_CALLS]` stripped, qwen2.5-coder on `/v1`, prompted
//! JSON agents). Weak evidence: a call counts only if its arguments fit the declared schema.
//! An object that parses but is not a call (data, a log record, a tool result) is skipped
//! whole, so a call-shaped object nested inside data is not taken for one.

use super::json_calls;
use super::scan::Scan;

const MAX_CANDIDATES: usize = 256;

pub(crate) fn scan(s: &mut Scan) {
    let t = s.text;
    let mut i = 0;
    let mut tries = 0;
    while let Some(k) = t[i..].find('{') {
        let at = i + k;
        tries += 1;
        if tries > MAX_CANDIDATES {
            break;
        }
        match s.json_at(at, t.len()) {
            Some((end, Ok(v))) => {
                json_calls::push(s, at, end, &v, "json", true);
                i = end;
            }
            _ => i = at + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn objects_in_prose() {
        expect(
            "I'll call {\"name\": \"list_dir\", \"parameters\": {\"path\": \"x\"}} now; then {\"name\": \"read_file\", \"parameters\": {\"path\": \"x/a\"}}",
            "json",
            json!([{"name": "list_dir", "arguments": {"path": "x"}}, {"name": "read_file", "arguments": {"path": "x/a"}}]),
        );
        expect(
            "```json\n{\"tool\": \"search_files\", \"args\": {\"query\": \"TODO\",}}\n```",
            "json",
            json!([{"name": "search_files", "arguments": {"pattern": "TODO"}}]),
        );
    }

    #[test]
    fn data_is_not_a_call() {
        none("{\"name\": \"run_shell\", \"exit_code\": 1}");
        none("{\"response\": {\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}}");
        none("{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\"}}");
        none("{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\", \"mode\": \"rb\"}}");
    }
}

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
                if !quoted_inline(t, at, end) {
                    json_calls::push(s, at, end, &v, "json", true);
                }
                i = end;
            }
            _ => i = at + 1,
        }
    }
}

/// Whether `t[at..end]` sits in an inline code span of one line together with other text
/// (`` `invalid tool call JSON: {…}` ``): a quotation — an error message, a log line — not a
/// call. A span holding just the object is left to the other rules.
fn quoted_inline(t: &str, at: usize, end: usize) -> bool {
    let line_start = t[..at].rfind('\n').map(|k| k + 1).unwrap_or(0);
    let before = &t[line_start..at];
    if before.trim_start().starts_with("```") || before.matches('`').count() % 2 == 0 {
        return false;
    }
    let open = before.rfind('`').expect("an odd count has one");
    let line_end = t[end..].find('\n').map(|k| end + k).unwrap_or(t.len());
    let Some(close) = t[end..line_end].find('`') else {
        return false;
    };
    !before[open + 1..].trim().is_empty() || !t[end..end + close].trim().is_empty()
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
        // an error message quoting the call it could not run
        none("It failed with: `bad JSON: {\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}` sorry.");
    }
}

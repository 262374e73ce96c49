//! Key-value call text. ReAct prompts (LangChain and the agents modelled on it) make models
//! write `Action: NAME` and `Action Input: INPUT` on the next line, the input a JSON object or
//! a plain string for a tool with one required argument; `Final Answer:` is not a call. This
//! is weak evidence. Qwen-Agent's `✿FUNCTION✿: NAME` / `✿ARGS✿: {json}` is the same layout with
//! family markers.

use super::scan::{at_line_start, find_in, mark, skip_ws, Args, Found, Scan};
use serde_json::Value;

pub(crate) fn scan(s: &mut Scan) {
    if s.has(mark::REACT) {
        pairs(s, "Action:", "Action Input:", "react", true);
    }
}

pub(crate) fn scan_marked(s: &mut Scan) {
    if s.has(mark::QWEN_AGENT) {
        pairs(s, "✿FUNCTION✿:", "✿ARGS✿:", "qwen-agent", false);
    }
}

fn pairs(s: &mut Scan, action: &str, input: &str, dialect: &'static str, weak: bool) {
    let t = s.text;
    let actions = s.occurrences(action);
    for (n, &at) in actions.iter().enumerate().take(64) {
        if !at_line_start(t, at) {
            continue;
        }
        let limit = actions.get(n + 1).copied().unwrap_or(t.len());
        let n0 = at + action.len();
        let line_end = find_in(t, n0, limit, "\n").unwrap_or(limit);
        let name = t[n0..line_end]
            .trim()
            .trim_matches(['`', '"', '\'', '*'])
            .trim();
        if name.is_empty() || name.len() > 64 {
            continue;
        }
        let Some(k) = find_in(t, line_end, limit, input) else {
            continue;
        };
        if !t[line_end..k].trim().is_empty() {
            continue; // the input must follow the action line directly
        }
        let v0 = skip_ws(t, k + input.len());
        let stop = [
            "\nObservation:",
            "\nThought:",
            "\nFinal Answer:",
            "✿RESULT✿",
        ]
        .iter()
        .filter_map(|m| find_in(t, v0, limit, m))
        .min()
        .unwrap_or(limit);
        let raw = t[v0..stop].trim();
        let raw = raw
            .strip_prefix("```json")
            .or_else(|| raw.strip_prefix("```"))
            .map(|r| r.trim_end().trim_end_matches("```").trim())
            .unwrap_or(raw);
        if raw.is_empty() {
            continue;
        }
        let args = if raw.starts_with('{') {
            match s.json_at(v0 + t[v0..].find('{').unwrap_or(0), stop) {
                Some((_, Ok(v))) => v,
                _ => continue,
            }
        } else {
            Value::String(raw.to_string())
        };
        let f = Found::new(at, stop, name, Args::Json(args), dialect);
        s.push(if weak { f.weak() } else { f });
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn action_lines() {
        expect(
            "Thought: check it\nAction: `run_shell`\nAction Input: ls -la\nObservation:",
            "react",
            json!([{"name": "run_shell", "arguments": {"command": "ls -la"}}]),
        );
        expect(
            "✿FUNCTION✿: read_file\n✿ARGS✿: {\"path\": \"a.txt\"}",
            "qwen-agent",
            json!([{"name": "read_file", "arguments": {"path": "a.txt"}}]),
        );
        none("Thought: done\nFinal Answer: 42");
        none("Action: write_file\nAction Input: just some text");
    }
}

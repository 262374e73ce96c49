//! The families that mark a JSON payload with a token or tag of their own: the payload is a
//! call object, a list of them, or several objects one per line (see `json_calls` for the
//! object layouts). A payload that does not close is cut off and gives nothing; a malformed
//! object in a list does not lose its well-formed siblings.

use super::json_calls;
use super::scan::{mark, skip_ws, Next, Scan};

/// (dialect, opening marker, closing marker if the family writes one).
const FAMILIES: &[(&str, &str, Option<&str>)] = &[
    // MiniMax-M1 (JSON objects one per line), Jamba, Apriel, Hunyuan-A13B (a list)
    ("tool-calls-tag", "<tool_calls>", Some("</tool_calls>")),
    // Nemotron Nano v2, Llama-Nemotron
    ("nemotron", "<TOOLCALL>", Some("</TOOLCALL>")),
    // FireFunction v2, Phi-4-mini: `functools[…]`
    ("functools", "functools", None),
    // InternLM 2/2.5/3
    (
        "internlm",
        "<|action_start|><|plugin|>",
        Some("<|action_end|>"),
    ),
    (
        "internlm",
        "<|action_start|> <|plugin|>",
        Some("<|action_end|>"),
    ),
    // Command R7B, Cohere2: objects with tool_name/parameters
    ("cohere", "<|START_ACTION|>", Some("<|END_ACTION|>")),
    // Apertus: a list of objects keyed by the tool name
    ("apertus", "<|tools_prefix|>", Some("<|tools_suffix|>")),
    // GigaChat 3
    ("gigachat", "<|function_call|>", None),
    // Granite 3.0 (special token, then a list)
    ("granite", "<|tool_call|>", None),
    // granite-20b-functioncalling: one object per `<function_call>`
    ("granite-fc", "<function_call>", None),
    // LongCat
    (
        "longcat",
        "<longcat_tool_call>",
        Some("</longcat_tool_call>"),
    ),
    // openPangu (placeholder tokens when the vocabulary lacks the named ones)
    ("pangu", "[unused11]", Some("[unused12]")),
];

pub(crate) fn scan(s: &mut Scan) {
    if !s.has(mark::MARKED_JSON) {
        return;
    }
    for &(dialect, open, close) in FAMILIES {
        if !s.text.contains(open) {
            continue;
        }
        let mut next_close = close.map(Next::new);
        let opens = s.occurrences(open);
        for (n, &at) in opens.iter().enumerate() {
            let body = at + open.len();
            let i = skip_ws(s.text, body);
            if !matches!(s.text.as_bytes().get(i), Some(b'{' | b'[')) {
                continue;
            }
            let next_open = opens.get(n + 1).copied().unwrap_or(s.text.len());
            let limit = match next_close.as_mut() {
                Some(nc) => nc.at_or_after(s.text, body).unwrap_or(next_open),
                None => next_open,
            };
            let vals = s.json_seq(i, limit);
            let Some(last) = vals.last().map(|v| v.1) else {
                continue;
            };
            let end = match close {
                Some(c) if s.text[last..].trim_start().starts_with(c) => s.text[last..]
                    .find(c)
                    .map(|k| last + k + c.len())
                    .unwrap_or(last),
                _ => last,
            };
            for (_, _, v) in &vals {
                json_calls::push(s, at, end, v, dialect, false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn families() {
        expect(
            "<TOOLCALL>[{\"name\": \"list_dir\", \"arguments\": {}}]</TOOLCALL>",
            "nemotron",
            json!([{"name": "list_dir", "arguments": {}}]),
        );
        expect(
            "Sure. functools[{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}]",
            "functools",
            json!([{"name": "read_file", "arguments": {"path": "a"}}]),
        );
        expect(
            "<tool_calls>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}\n</tool_calls>",
            "tool-calls-tag",
            json!([{"name": "read_file", "arguments": {"path": "a"}}, {"name": "read_file", "arguments": {"path": "b"}}]),
        );
        expect(
            "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"run_shell\", \"parameters\": {\"command\": \"ls\"}}{\"tool_call_id\": \"1\", \"tool_name\": \"list_dir\", \"parameters\": {}}\n]<|END_ACTION|>",
            "cohere",
            json!([{"name": "run_shell", "arguments": {"command": "ls"}}, {"name": "list_dir", "arguments": {}}]),
        );
        expect(
            "<|action_start|><|plugin|>{\"name\": \"finish\", \"parameters\": {\"summary\": \"ok\"}}<|action_end|>",
            "internlm",
            json!([{"name": "finish", "arguments": {"summary": "ok"}}]),
        );
        expect(
            "<|tools_prefix|>[{\"list_dir\": {\"path\": \".\"}}]<|tools_suffix|>",
            "apertus",
            json!([{"name": "list_dir", "arguments": {"path": "."}}]),
        );
        expect(
            "[unused11][{\"name\": \"read_file\", \"arguments\": {\"path\": \"z\"}}][unused12]",
            "pangu",
            json!([{"name": "read_file", "arguments": {"path": "z"}}]),
        );
    }

    #[test]
    fn not_calls() {
        none("functools[]");
        none("import functools\nfunctools.lru_cache(maxsize=None)");
        none("<TOOLCALL>[{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"");
        none("<|START_ACTION|>[nothing]<|END_ACTION|>");
    }
}

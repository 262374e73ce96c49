//! `<tool_call>` blocks (Hermes 2/3, Qwen2.5/Qwen3/QwQ, MiMo, Granite 3.1+ and 4, xLAM, GLM,
//! Ernie): one JSON object per block — or a JSON list (Granite 3.1, xLAM), or several objects —
//! between `<tool_call>` and `</tool_call>`; Granite 3.x omits the closing tag. When the block
//! holds a bare name followed by `<arg_key>` pairs it is GLM's layout (see `glm`); when it
//! holds `<function=…>` it is Qwen3-Coder's (read by `qwen_xml`).

use super::scan::{mark, skip_ws, Next, Scan};
use super::{glm, json_calls};

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";

pub(crate) fn scan(s: &mut Scan) {
    if !s.has(mark::TOOL_CALL) {
        return;
    }
    let mut consumed = 0;
    let mut next_close = Next::new(CLOSE);
    for at in s.occurrences(OPEN) {
        if at < consumed {
            continue; // the marker is text inside a block already read
        }
        let body = at + OPEN.len();
        let close = next_close.at_or_after(s.text, body);
        let limit = close.unwrap_or(s.text.len());
        let i = skip_ws(s.text, body);
        let Some(&c) = s.text.as_bytes().get(i) else {
            continue;
        };
        if c == b'{' || c == b'[' {
            let vals = s.json_seq(i, limit);
            let end = vals.last().map(|v| v.1).unwrap_or(i);
            for (_, _, v) in &vals {
                json_calls::push(s, at, end, v, "hermes", false);
            }
            consumed = close.map(|c| c + CLOSE.len()).unwrap_or(end);
        } else if s.text[i..].starts_with("<function=") {
            // Qwen3-Coder layout, read by qwen_xml
        } else if let Some(close) = close {
            if let Some(found) = glm::parse_block(s.text, at, body, close) {
                s.push(found);
            }
            consumed = close + CLOSE.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn blocks_lists_and_missing_close() {
        expect(
            "Sure.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"lib/a.rb\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"functions.list_dir\", \"arguments\": {\"path\": \"lib\"}}\n</tool_call>",
            "hermes",
            json!([
                {"name": "read_file", "arguments": {"path": "lib/a.rb"}},
                {"name": "list_dir", "arguments": {"path": "lib"}}
            ]),
        );
        // Granite 3.1: the literal tag, a list, no closing tag
        expect(
            "<tool_call>[{\"name\": \"run_shell\", \"arguments\": {\"command\": \"rake\", \"timeout\": \"90\"}}]",
            "hermes",
            json!([{"name": "run_shell", "arguments": {"command": "rake", "timeout": 90}}]),
        );
        // Python-dict style with a raw newline
        expect(
            "<tool_call>{'name': 'append_file', 'arguments': {'path': 'log.txt', 'content': 'a\nb'}}</tool_call>",
            "hermes",
            json!([{"name": "append_file", "arguments": {"path": "log.txt", "content": "a\nb"}}]),
        );
    }

    #[test]
    fn not_calls() {
        none("<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\", \"content\": \"unfinished");
        none("<tool_call>{\"name\": \"read_file\"}</tool_call>");
        none("<tool_call>\n{\"name\": \"deploy\", \"arguments\": {}}\n</tool_call>");
        none("Use <tool_call></tool_call> tags for calls.");
        none("<think>\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}</tool_call>\n</think>\nNo call needed.");
    }
}

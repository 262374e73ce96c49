//! `<tool_call>` blocks (Hermes 2/3, Qwen2.5/Qwen3/QwQ, MiMo, Granite 3.1+ and 4, xLAM, GLM,
//! Ernie): one JSON object per block — or a JSON list (Granite 3.1, xLAM), or several objects —
//! between `<tool_call>` and `</tool_call>`; Granite 3.x omits the closing tag. When the block
//! holds a bare name followed by `<arg_key>` pairs it is GLM's layout (see `glm`); when it
//! holds `<function=…>` it is Qwen3-Coder's (read by `qwen_xml`).
//!
//! What small models put in the block instead, when the closing tag proves the call ended: an
//! object missing only its last closing brackets (the tag comes where they belong), the name in
//! `<function>NAME</function>` followed by the arguments object (Gemma 3 and Qwen on MLX
//! servers), or a Python-style call (`run_shell(command="make")`, LFM2.5, Llama 3.3).

use super::scan::{brackets, is_name, mark, parse_json, skip_ws, Brackets, Next, Scan};
use super::{glm, json_calls, pythonic};
use serde_json::{json, Value};

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
            if vals.is_empty() {
                if let Some((v, close)) = close.and_then(|c| unclosed_at_tag(s.text, i, c)) {
                    json_calls::push(s, at, close + CLOSE.len(), &v, "hermes", false);
                }
            }
            consumed = close.map(|c| c + CLOSE.len()).unwrap_or(end);
        } else if s.text[i..].starts_with("<function=") {
            // Qwen3-Coder layout, read by qwen_xml
        } else if let Some(close) = close {
            let span_end = close + CLOSE.len();
            if let Some(found) = glm::parse_block(s.text, at, body, close) {
                s.push(found);
            } else if let Some(v) = function_tag_then_json(s, i, close) {
                json_calls::push(s, at, span_end, &v, "hermes", false);
            } else {
                pythonic::read_body(s, at, i, close, span_end, "hermes");
            }
            consumed = span_end;
        }
    }
}

/// An object that reaches the closing tag with only closing brackets missing: closed there.
/// Anything else unbalanced (an open string, a bracket of the wrong kind) stays unread.
fn unclosed_at_tag(t: &str, i: usize, close: usize) -> Option<(Value, usize)> {
    let body = t[i..close].trim_end();
    // balanced: the reading above already failed for another reason
    let Brackets::Open(stack) = brackets(body, 0) else {
        return None;
    };
    if stack.is_empty() || stack.len() > 2 {
        return None;
    }
    let missing: String = stack.into_iter().rev().map(char::from).collect();
    parse_json(&format!("{body}{missing}"))
        .ok()
        .map(|v| (v, close))
}

/// `<function>NAME</function>` then the arguments object, up to the closing tag.
fn function_tag_then_json(s: &mut Scan, i: usize, close: usize) -> Option<Value> {
    let t = s.text;
    let rest = t[i..close].strip_prefix("<function>")?;
    let (name, after) = rest.split_once("</function>")?;
    let name = name.trim();
    if !is_name(name) {
        return None;
    }
    let j = close - after.len();
    let j = skip_ws(t, j);
    if t.as_bytes().get(j) != Some(&b'{') {
        return None;
    }
    let (end, args) = s.json_at(j, close)?;
    if !t[end..close].trim().is_empty() {
        return None;
    }
    Some(json!({"name": name, "arguments": args.ok()?}))
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
    fn arguments_beyond_the_tool() {
        // a note for the reader and an option left off are dropped
        expect(
            "<tool_call>{\"name\": \"run_shell\", \"arguments\": {\"command\": \"make\", \"description\": \"Build it\", \"is_background\": false}}</tool_call>",
            "hermes",
            json!([{"name": "run_shell", "arguments": {"command": "make"}}]),
        );
        // an option that changes what the call does, or a required argument missing: not run
        none("<tool_call>{\"name\": \"Edit\", \"arguments\": {\"file_path\": \"a.py\", \"old_string\": \"x\", \"new_string\": \"y\", \"replace_all\": true}}</tool_call>");
        none("<tool_call>{\"name\": \"finish\", \"arguments\": {}}</tool_call>");
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

//! Harmony (gpt-oss, LLM-jp 4.1): a call is a message addressed `to=functions.NAME` — in the
//! role header (`<|start|>assistant to=functions.NAME<|channel|>commentary`) or in the channel
//! header (`<|channel|>commentary to=functions.NAME`) — usually followed by
//! `<|constrain|>json`, whose body after `<|message|>` is the JSON arguments, ended by `<|call|>`
//! (absent when it stopped generation). With special tokens stripped only
//! `commentary to=functions.NAME json{…}` is left, which reads the same. Analysis messages
//! without a recipient are reasoning and are gone before this runs (`reasoning`); builtin
//! recipients (`container.exec`, `python`, `browser.*`) and tool results (`to=assistant`) are
//! not calls.

use super::scan::{is_name, mark, name_end, Args, Found, Next, Scan};

const TO: &str = "to=functions.";

pub(crate) fn scan(s: &mut Scan) {
    if !s.has(mark::HARMONY) {
        return;
    }
    let t = s.text;
    let mut next_start = Next::new("<|start|>");
    for at in s.occurrences(TO) {
        let n0 = at + TO.len();
        let ne = name_end(t, n0);
        let name = &t[n0..ne];
        if !is_name(name) {
            continue;
        }
        let Some(j) = body_start(t, ne) else {
            continue;
        };
        let limit = next_start.at_or_after(t, j).unwrap_or(t.len());
        match s.json_at(j, limit) {
            Some((end, Ok(v))) => {
                s.push(Found::new(at, end, name, Args::Json(v), "harmony"));
            }
            Some((_, Err(e))) => s.problem(format!("error parsing the {name} call: {e}")),
            None => s.cut_off(format!("the {name} call was cut off")),
        }
    }
}

/// Past the rest of the header (`<|channel|>commentary`, `<|constrain|>json`, `<|message|>`,
/// or their stripped words) to the `{` of the body.
fn body_start(t: &str, mut i: usize) -> Option<usize> {
    for _ in 0..12 {
        let rest = &t[i..];
        let trimmed = rest.trim_start();
        i += rest.len() - trimmed.len();
        if trimmed.starts_with('{') {
            return Some(i);
        }
        let step = ["<|channel|>", "<|constrain|>", "<|message|>"]
            .iter()
            .find(|m| trimmed.starts_with(**m))
            .map(|m| m.len())
            .or_else(|| {
                ["commentary", "analysis", "json"]
                    .iter()
                    .find(|w| trimmed.starts_with(**w))
                    .map(|w| w.len())
            })?;
        i += step;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn headers() {
        expect(
            "<|channel|>analysis<|message|>List first.<|end|><|start|>assistant<|channel|>commentary to=functions.list_dir <|constrain|>json<|message|>{\"path\":\"src\"}<|call|>",
            "harmony",
            json!([{"name": "list_dir", "arguments": {"path": "src"}}]),
        );
        expect(
            "<|start|>assistant to=functions.run_shell<|channel|>commentary json<|message|>{\"command\":\"make\",\"timeout\":\"30\"}",
            "harmony",
            json!([{"name": "run_shell", "arguments": {"command": "make", "timeout": 30}}]),
        );
        expect(
            "analysis Need it.assistantcommentary to=functions.read_file json{\"path\":\"a.md\"}",
            "harmony",
            json!([{"name": "read_file", "arguments": {"path": "a.md"}}]),
        );
    }

    #[test]
    fn not_calls() {
        none("<|channel|>analysis<|message|>I will send to=functions.run_shell {\"command\":\"ls\"} later<|end|><|start|>assistant<|channel|>final<|message|>Here is the answer.");
        none("<|start|>assistant<|channel|>commentary to=browser.search <|constrain|>json<|message|>{\"query\":\"x\"}<|call|>");
        none("<|channel|>commentary to=functions.write_file <|constrain|>json<|message|>{\"path\":\"a\",\"content\":\"b");
    }
}

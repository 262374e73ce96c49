//! The text protocol for models without the `tools` capability: instead of stopping (Ollama
//! answers such a model's request with HTTP 400 "does not support tools"), the tools are
//! described in the system prompt, calls come back as text and are read by the format rescue,
//! and the conversation is sent in the roles every chat template renders: a call the model
//! made is shown as the text of its reply, a tool result as a user message.
//!
//! Chosen automatically when `/api/show` lists capabilities without `tools`, or when the
//! server refuses tools on a call. The system prompt is built once per run from the tools the
//! run offers, so it stays byte-identical (cacheable) like the native one; its size is pinned
//! by [`static_prefill`]'s test as the native prefill is.

use crate::estimate::estimate_str;
use crate::messages::{Message, Role, ToolCall, ToolSpec};
use serde_json::Value;

/// How the model is told to write a call (a form the rescue reads: a `<tool_call>` block
/// holding JSON with `name` and `arguments`).
pub const CALL_FORM: &str = "Tools: call exactly one per reply, written like this and nothing else:\n<tool_call>{\"name\": \"write_file\", \"arguments\": {\"path\": \"notes.md\", \"content\": \"# Notes\\n\"}}</tool_call>\nThe result comes back in the next message.";

/// `name(a, b?, c?: x|y)` from a flat JSON schema (optional parameters marked `?`).
fn signature(t: &ToolSpec) -> String {
    let required: Vec<&str> = t.parameters["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let params: Vec<String> = t.parameters["properties"]
        .as_object()
        .map(|props| {
            props
                .iter()
                .map(|(k, v)| {
                    let opt = if required.contains(&k.as_str()) {
                        ""
                    } else {
                        "?"
                    };
                    let kind = match v["enum"].as_array() {
                        Some(e) => format!(
                            ": {}",
                            e.iter()
                                .filter_map(Value::as_str)
                                .collect::<Vec<_>>()
                                .join("|")
                        ),
                        None if v["type"] == "array" => ": [..]".to_string(),
                        None => String::new(),
                    };
                    format!("{k}{opt}{kind}")
                })
                .collect()
        })
        .unwrap_or_default();
    format!("{}({})", t.name, params.join(", "))
}

/// The system prompt of the text protocol: the tier's prompt, the call form, one line per tool.
pub fn system_prompt(base: &str, tools: &[ToolSpec]) -> String {
    let mut s = format!("{base}\n\n{CALL_FORM}\n");
    for t in tools {
        s.push_str(&format!("- {}: {}\n", signature(t), t.description));
    }
    s.trim_end().to_string()
}

/// One call as the model is asked to write it.
pub fn call_text(c: &ToolCall) -> String {
    let v = serde_json::json!({"name": c.name, "arguments": c.arguments});
    format!("<tool_call>{v}</tool_call>")
}

/// The conversation as sent under the text protocol: an assistant turn's calls appended to its
/// text (a turn whose calls were read from its text is sent as written), each tool result a
/// user message naming its tool. Deterministic, so consecutive requests keep their common
/// prefix.
pub fn render(messages: &[Message]) -> Vec<Message> {
    messages
        .iter()
        .map(|m| match m.role {
            Role::Assistant if m.text_calls => Message::assistant(m.content.clone(), vec![]),
            Role::Assistant if !m.tool_calls.is_empty() => {
                let mut text = m.content.clone();
                for c in &m.tool_calls {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&call_text(c));
                }
                Message::assistant(text, vec![])
            }
            Role::Tool => Message::user(format!(
                "Result of {}:\n{}",
                m.tool_name.as_deref().unwrap_or("the tool"),
                m.content
            )),
            _ => m.clone(),
        })
        .collect()
}

/// The conversation as sent with native tools when some calls were written as text (`None`
/// when none were): such a turn goes out as the model's own text, without the calls read from
/// it, so the request repeats byte for byte the reply the server generated and cached (a
/// re-encoded structured call would differ from it and be evaluated again, with everything
/// after it). Its results stay tool messages — the form every chat template renders as the
/// answer to a call written in the reply, as the model's own template writes calls — without
/// a call id, since the sent turn has no structured call to point to.
pub fn render_text_calls(messages: &[Message]) -> Option<Vec<Message>> {
    if !messages.iter().any(|m| m.text_calls) {
        return None;
    }
    let mut in_text_round = false;
    let out = messages
        .iter()
        .map(|m| match m.role {
            Role::Assistant => {
                in_text_round = m.text_calls;
                if m.text_calls {
                    Message::assistant(m.content.clone(), vec![])
                } else {
                    m.clone()
                }
            }
            Role::Tool if in_text_round => Message {
                tool_call_id: None,
                ..m.clone()
            },
            _ => {
                in_text_round = false;
                m.clone()
            }
        })
        .collect();
    Some(out)
}

/// The static prefill under the text protocol: the task system prompt with the base tools
/// described in it (no tool definitions are sent).
pub fn static_prefill() -> usize {
    use crate::mechanisms::prefill::{base_tools, SYSTEM_TASK};
    let tools = crate::table::specs_for(&base_tools());
    estimate_str(&system_prompt(SYSTEM_TASK, &tools))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::format_rescue::rescue;
    use crate::table;
    use serde_json::json;

    /// Pinned like the native prefill (556): the text protocol's system prompt with the eight
    /// base tools described in it, by the same estimator. Change it deliberately.
    const PINNED_TEXT_PREFILL: usize = 374;

    #[test]
    fn text_prefill_is_pinned_and_within_budget() {
        assert_eq!(static_prefill(), PINNED_TEXT_PREFILL);
        assert!(static_prefill() <= 600);
    }

    #[test]
    fn the_prompt_describes_every_tool_and_the_form_the_rescue_reads() {
        let tools = table::specs_for(&["read_file", "todo", "finish"]);
        let p = system_prompt("BASE", &tools);
        assert!(p.starts_with("BASE\n\nTools: call exactly one per reply"));
        assert!(p.contains("- read_file(path, start_line?, end_line?): Read a text file"));
        assert!(p.contains("- todo(action: create|done|done_all|list, items?: [..], index?)"));
        assert!(p.contains("- finish(summary): End the task"));
        // the example in the prompt is a call the rescue reads back
        let example = CALL_FORM.lines().nth(1).unwrap();
        let calls = rescue(example, &table::specs_for(&["write_file"])).unwrap();
        assert_eq!(
            calls[0].arguments,
            json!({"path": "notes.md", "content": "# Notes\n"})
        );
    }

    #[test]
    fn calls_and_results_are_rendered_in_plain_roles_and_read_back() {
        let c = ToolCall {
            id: "call_1".into(),
            ..ToolCall::new("write_file", json!({"path": "a.md", "content": "x\ny"}))
        };
        let msgs = vec![
            Message::system("s"),
            Message::user("t"),
            Message::assistant("", vec![c.clone()]),
            Message::tool_result(&c, "wrote a.md"),
        ];
        let r = render(&msgs);
        assert_eq!(r[2].role, Role::Assistant);
        assert!(r[2].tool_calls.is_empty());
        assert_eq!(
            rescue(&r[2].content, &table::specs_for(&["write_file"])).unwrap()[0].arguments,
            c.arguments
        );
        assert_eq!(r[3].role, Role::User);
        assert_eq!(r[3].content, "Result of write_file:\nwrote a.md");
        assert_eq!(render(&msgs), r);
    }

    #[test]
    fn a_turn_whose_calls_were_written_as_text_is_sent_as_written() {
        let c = ToolCall {
            id: "call_1_0".into(),
            ..ToolCall::new("write_file", json!({"path": "a.md", "content": "x"}))
        };
        let text = "Writing it.\n```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.md\", \"content\": \"x\"}}\n```";
        let msgs = vec![
            Message::system("s"),
            Message::user("t"),
            Message::text_calls(text, vec![c.clone()]),
            Message::tool_result(&c, "wrote a.md"),
            Message::nudge("go on"),
            Message::assistant("", vec![c.clone()]),
            Message::tool_result(&c, "unchanged"),
        ];
        // native tools: the text alone, its result a tool message without a call id; later
        // structured calls and their results unchanged
        let r = render_text_calls(&msgs).unwrap();
        assert_eq!(r[2], Message::assistant(text, vec![]));
        assert_eq!(r[3].role, Role::Tool);
        assert_eq!(r[3].tool_call_id, None);
        assert_eq!(r[3].content, "wrote a.md");
        assert_eq!(r[4], msgs[4]);
        assert_eq!(&r[5..], &msgs[5..]);
        assert!(render_text_calls(&[msgs[5].clone(), msgs[6].clone()]).is_none());
        // the text protocol: the text as written, not followed by a re-encoded call
        let t = render(&msgs);
        assert_eq!(t[2].content, text);
        assert_eq!(t[3].content, "Result of write_file:\nwrote a.md");
        assert!(t[5].content.starts_with("<tool_call>"));
    }
}

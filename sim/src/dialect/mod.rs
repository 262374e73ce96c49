//! Tool-call dialects: how a model family writes a call as text, and what Ollama's parser for
//! that family does with text that looks like a call but is not one it recognises.
//!
//! A well-formed native call is parsed by the server and reaches the client as a structured
//! `tool_calls` entry; the simulator then simply emits that entry. The shapes here are the ones
//! that go wrong, described after the parser tests of llama.cpp (`tests/test-chat.cpp`: Hermes 2
//! Pro inputs, Mistral Nemo `[TOOL_CALLS]`, fenced and bare JSON, think blocks), vLLM
//! (`tests/tool_use`: hermes, mistral, pythonic, qwen3coder parsers) and Ollama
//! (`model/parsers`: `gemma4`, `qwen3coder`/`qwen35`; `tools/tools.go`), and the server-side
//! outcomes docs/sim.md ("Dialects") describes. Written from those descriptions, not copied.

mod shapes;

use serde::{Deserialize, Serialize};

use crate::convo::Call;

pub use shapes::{leak_shapes, parse_leak, render_leak, LeakShape};

/// A model family: its native call format and Ollama's parser for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// `<|tool_call>call:NAME{key:<|"|>value<|"|>}<tool_call|>` (gemma4:e2b, gemma4:12b). The
    /// builtin parser repairs small slips and silently drops a call it cannot repair.
    Gemma4,
    /// `<tool_call><function=NAME><parameter=KEY>value</parameter></function></tool_call>`
    /// (qwen3.5:4b, ornith-1.5:35b). A call that does not decode fails the request (HTTP 500).
    Qwen35,
    /// Hermes-style JSON inside `<tool_call>` tags (qwen3); a body that is not JSON fails the
    /// request (HTTP 500).
    Qwen3,
    /// `[TOOL_CALLS]` followed by a JSON list (Mistral); template parser with a named tag:
    /// everything after an unparsable tag is swallowed.
    Mistral,
    /// Pythonic call lists `[name(key='value')]` (Llama 3.2); template parser with the `[` tag:
    /// unparsable text comes back as content.
    Llama,
}

/// What the server makes of a reply whose call markers hold something that does not parse.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The request fails: HTTP 500 with this bare parser error as `error`.
    Http500(String),
    /// The call disappears: the client gets this content (possibly empty) and no call.
    Dropped(String),
}

impl Family {
    pub const ALL: [Family; 5] = [
        Family::Gemma4,
        Family::Qwen35,
        Family::Qwen3,
        Family::Mistral,
        Family::Llama,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::Gemma4 => "gemma4",
            Family::Qwen35 => "qwen35",
            Family::Qwen3 => "qwen3",
            Family::Mistral => "mistral",
            Family::Llama => "llama",
        }
    }

    pub fn parse(s: &str) -> Option<Family> {
        Self::ALL.into_iter().find(|f| f.name() == s)
    }

    /// `general.architecture` reported by `/api/show`.
    pub fn architecture(self) -> &'static str {
        match self {
            Family::Gemma4 => "gemma4",
            Family::Qwen35 => "qwen35",
            Family::Qwen3 => "qwen3",
            Family::Mistral => "mistral3",
            Family::Llama => "llama",
        }
    }

    /// Whether a new user message re-renders earlier assistant turns (their thinking is
    /// printed only after the last user message), which invalidates the KV-cache prefix
    /// (docs/sim.md, "Serving behaviour").
    pub fn rerenders_on_user_message(self) -> bool {
        matches!(self, Family::Gemma4 | Family::Qwen35)
    }

    /// The model's broken attempt at a call in its own markers, and what the server does
    /// with it. `prose` is any text the model wrote before the markers.
    pub fn malformed(self, call: &Call, prose: &str) -> (String, Outcome) {
        let first = call
            .args
            .as_object()
            .and_then(|m| m.iter().next())
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string()),
                )
            })
            .unwrap_or_default();
        let (key, value) = first;
        let cut: String = value.chars().take(40).collect();
        match self {
            // an unclosed string delimiter plus a stray quote kind: beyond the repairs
            // (single quotes, missing delimiter, missing brace, raw tail), so dropped
            Family::Gemma4 => (
                format!("{prose}<|tool_call>call:{}{{{key}:<|\"|>{cut}\"'}}<|\"|>,}}<tool_call|>", call.name),
                Outcome::Dropped(prose.to_string()),
            ),
            // a parameter tag left open inside the function element: the XML decoder fails
            Family::Qwen35 => (
                format!(
                    "{prose}<tool_call>\n<function={}>\n<parameter={key}>\n{cut}\n</function>\n</tool_call>",
                    call.name
                ),
                Outcome::Http500("XML syntax error on line 5: element <parameter> closed by </function>".into()),
            ),
            // JSON with a raw newline inside a string
            Family::Qwen3 => (
                format!(
                    "{prose}<tool_call>\n{{\"name\": \"{}\", \"arguments\": {{\"{key}\": \"{}\nmore\"}}}}\n</tool_call>",
                    call.name, cut
                ),
                Outcome::Http500("failed to parse JSON: invalid character '\\n' in string literal".into()),
            ),
            Family::Mistral => (
                format!("{prose}[TOOL_CALLS][{{\"name\": \"{}\", \"arguments\": {{\"{key}\": \"{cut}", call.name),
                Outcome::Dropped(prose.to_string()),
            ),
            Family::Llama => {
                let text = format!("{prose}[{}({key}='{cut})]", call.name);
                (text.clone(), Outcome::Dropped(text))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn malformed_outcomes_follow_the_family_parsers() {
        let c = Call {
            name: "write_file".into(),
            args: json!({"path": "a.md", "content": "x"}),
        };
        assert!(matches!(
            Family::Qwen35.malformed(&c, "").1,
            Outcome::Http500(_)
        ));
        assert!(matches!(
            Family::Qwen3.malformed(&c, "").1,
            Outcome::Http500(_)
        ));
        assert_eq!(
            Family::Gemma4.malformed(&c, "ok ").1,
            Outcome::Dropped("ok ".into())
        );
        let (text, out) = Family::Llama.malformed(&c, "");
        assert_eq!(out, Outcome::Dropped(text));
        for f in Family::ALL {
            assert_eq!(Family::parse(f.name()), Some(f));
        }
    }
}

//! A conversation as the simulated model sees it, whichever API it came through.

use lrab_ollama::{normalize_arguments, openai, ChatRequest, Tool};
use serde_json::Value;

/// One tool call the model made (or is about to make).
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub name: String,
    pub args: Value,
}

/// One message.
#[derive(Debug, Clone, PartialEq)]
pub struct Msg {
    pub role: String,
    pub content: String,
    pub calls: Vec<Call>,
}

/// The normalised request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Conv {
    pub messages: Vec<Msg>,
    pub tools: Vec<Tool>,
    /// Output cap in tokens (`num_predict` / `max_tokens`); None = unlimited.
    pub num_predict: Option<u64>,
    /// Context window requested (native only).
    pub num_ctx: Option<u64>,
    /// Whether a thinking trace is requested.
    pub think: bool,
    /// `options.seed`, mixed into the draws when present.
    pub seed: Option<i64>,
    /// The context window the server gave this request (0 = not resolved yet).
    pub ctx_window: u64,
}

fn positive(n: Option<i64>) -> Option<u64> {
    n.filter(|v| *v > 0).map(|v| v as u64)
}

impl Conv {
    /// From a native `/api/chat` request; `think_default` is the model's default.
    pub fn from_native(req: &ChatRequest, think_default: bool) -> Conv {
        let messages = req
            .messages
            .iter()
            .map(|m| Msg {
                role: m.role.clone(),
                content: m.content.clone(),
                calls: m
                    .calls()
                    .iter()
                    .map(|c| Call {
                        name: c.function.name.clone(),
                        args: c.function.arguments.clone(),
                    })
                    .collect(),
            })
            .collect();
        let opts = req.options.clone().unwrap_or_default();
        Conv {
            messages,
            tools: req.tools().to_vec(),
            num_predict: positive(opts.num_predict),
            num_ctx: opts.num_ctx,
            think: req
                .think
                .as_ref()
                .map(|t| t.enabled())
                .unwrap_or(think_default),
            seed: opts.seed,
            ctx_window: 0,
        }
    }

    /// From an OpenAI-compatible request (thinking only when `reasoning_effort` asks for it).
    pub fn from_openai(req: &openai::ChatCompletionRequest, think: bool) -> Conv {
        let messages = req
            .messages
            .iter()
            .map(|m| Msg {
                role: m.role.to_lowercase(),
                content: m.text(),
                calls: m
                    .calls()
                    .iter()
                    .map(|c| Call {
                        name: c.function.name.clone().unwrap_or_default(),
                        args: normalize_arguments(Value::String(
                            c.function.arguments.clone().unwrap_or_default(),
                        )),
                    })
                    .collect(),
            })
            .collect();
        Conv {
            messages,
            tools: req.tools.clone().unwrap_or_default(),
            num_predict: positive(req.max_tokens.or(req.max_completion_tokens)),
            num_ctx: None,
            think,
            seed: req.seed,
            ctx_window: 0,
        }
    }

    /// Estimated prompt tokens (about four characters per token, plus per-message overhead).
    pub fn prompt_tokens(&self) -> u64 {
        let mut chars = 0usize;
        for m in &self.messages {
            chars += m.content.len() + 16;
            for c in &m.calls {
                chars += c.name.len() + json_len(&c.args);
            }
        }
        for t in &self.tools {
            chars += t.function.name.len()
                + t.function.description.as_deref().map_or(0, str::len)
                + t.function.parameters.as_ref().map_or(0, json_len);
        }
        (chars as u64).div_ceil(4).max(1)
    }

    /// Tokens of the tool definitions (always part of the prompt).
    pub fn tools_tokens(&self) -> u64 {
        let chars: usize = self
            .tools
            .iter()
            .map(|t| {
                t.function.name.len()
                    + t.function.description.as_deref().map_or(0, str::len)
                    + t.function.parameters.as_ref().map_or(0, json_len)
            })
            .sum();
        (chars as u64).div_ceil(4)
    }

    /// A hash of the tool definitions and the thinking switch (a change re-renders the whole
    /// prompt).
    pub fn tools_hash(&self) -> u64 {
        let mut h = lrab_util::fnv1a(lrab_util::FNV1A_START, &[self.think as u8]);
        for t in &self.tools {
            h = lrab_util::fnv1a(h, serde_json::to_string(t).unwrap_or_default().as_bytes());
        }
        h
    }

    /// The context window in force (Ollama's small-GPU default when unresolved).
    pub fn ctx_limit(&self) -> u64 {
        if self.ctx_window == 0 {
            4096
        } else {
            self.ctx_window
        }
    }

    /// Text of the system messages, joined.
    pub fn system_text(&self) -> String {
        self.messages
            .iter()
            .filter(|m| m.role == "system")
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn json_len(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len() + 2,
        Value::Object(m) => {
            m.iter()
                .map(|(k, v)| k.len() + 4 + json_len(v))
                .sum::<usize>()
                + 2
        }
        Value::Array(a) => a.iter().map(json_len).sum::<usize>() + 2,
        other => other.to_string().len(),
    }
}

/// Rough token count of generated text.
pub fn tokens_of(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

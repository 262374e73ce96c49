//! The generic chat policy for conversations that are not an LRAB task: short deterministic
//! answers, one look-up tool call when the user gives an identifier and a matching tool
//! exists, and a user-simulator mode (τ²-style stop tokens) so a τ² run can use the sim for
//! both sides.

use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

use super::{Env, Turn};
use crate::convo::{Call, Conv};
use crate::toolkit::{args_for, Bound};

fn id_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\b([a-z]+_[a-z]+_\d{3,}|[A-Z0-9]{6}|#?W\d{6,}|\d{6,})\b").expect("valid regex")
    })
}

fn first_words(s: &str, n: usize) -> String {
    s.split_whitespace().take(n).collect::<Vec<_>>().join(" ")
}

/// Reply for a non-task conversation.
pub fn respond(env: &Env, conv: &Conv) -> Turn {
    let system = conv.system_text();
    if system.contains("###STOP###") {
        return user_simulator(conv, &system);
    }
    let last = conv.messages.last();
    let own_turns = conv
        .messages
        .iter()
        .filter(|m| m.role == "assistant")
        .count();
    let think = conv
        .think
        .then(|| "The user wants a short, direct answer.".to_string());
    match last {
        None => Turn {
            content: String::new(),
            done_reason: "load",
            ..Default::default()
        },
        Some(m)
            if m.role == "tool"
                || (own_turns > 0
                    && conv
                        .messages
                        .iter()
                        .rev()
                        .nth(1)
                        .is_some_and(|p| !p.calls.is_empty())) =>
        {
            let body = first_words(&m.content, 40);
            Turn {
                thinking: think,
                content: format!("Here is what I found: {body}"),
                done_reason: "stop",
                ..Default::default()
            }
        }
        Some(m) => {
            let text = m.content.clone();
            // an identifier in the user's words and a single-parameter look-up tool: call it
            if let Some(id) = id_re().captures(&text).map(|c| c[1].to_string()) {
                let lookup = conv.tools.iter().find(|t| {
                    let req = t.required_params();
                    req.len() == 1 && req[0].to_lowercase().contains("id") && {
                        let n = t.function.name.to_lowercase();
                        n.starts_with("get") || n.contains("find") || n.contains("lookup")
                    }
                });
                if let Some(tool) = lookup {
                    let p = tool.required_params()[0].clone();
                    let b = Bound {
                        name: tool.function.name.clone(),
                        main: p.clone(),
                        second: None,
                        third: None,
                        tool: tool.clone(),
                    };
                    return Turn {
                        thinking: think,
                        content: String::new(),
                        calls: vec![Call {
                            name: b.name.clone(),
                            args: args_for(&b, &[(&p, Value::from(id))], "look-up"),
                        }],
                        done_reason: "stop",
                        ..Default::default()
                    };
                }
            }
            let _ = env;
            let content = if conv.tools.is_empty() && own_turns == 0 {
                // a title or one-line answer
                first_words(&text, 8)
            } else {
                format!("I understand: {}. Could you give me your user id or the order or reservation number?", first_words(&text, 20))
            };
            Turn {
                thinking: think,
                content,
                done_reason: "stop",
                ..Default::default()
            }
        }
    }
}

/// Plays the customer: the reason for the call, then the known information, then stop.
fn user_simulator(conv: &Conv, system: &str) -> Turn {
    let own = conv
        .messages
        .iter()
        .filter(|m| m.role == "assistant")
        .count();
    let last = conv
        .messages
        .last()
        .map(|m| m.content.to_lowercase())
        .unwrap_or_default();
    let field = |name: &str| -> Option<String> {
        let i = system.find(name)?;
        let rest = &system[i + name.len()..];
        let line: String = rest.lines().next().unwrap_or("").trim().to_string();
        (!line.is_empty()).then_some(line)
    };
    let content = if last.contains("transferr") {
        "###TRANSFER###".to_string()
    } else if own == 0 {
        format!(
            "Hi. {}",
            field("Reason for call:").unwrap_or_else(|| "I need some help.".to_string())
        )
    } else if own == 1 {
        field("Known info:").unwrap_or_else(|| "That is all I know.".to_string())
    } else {
        "Thank you, that is all. ###STOP###".to_string()
    };
    Turn {
        content,
        done_reason: "stop",
        ..Default::default()
    }
}

//! The customer of a recognised τ² task (the user simulator's side): states the reason for
//! the call and what it knows, performs on its own device what the agent asks for by name,
//! answers a question with what it knows, and otherwise ends the conversation with
//! upstream's stop tokens.

use serde_json::{json, Value};

use super::data::{squash, Task};
use crate::convo::{Call, Conv};
use crate::policy::Turn;

/// Upstream's stop tokens (its user simulator's guidelines).
const STOP: &str = "###STOP###";
const TRANSFER: &str = "###TRANSFER###";

/// At most this many answers to questions, then the customer ends the conversation.
const MAX_ANSWERS: usize = 3;

pub(crate) fn turn(conv: &Conv, task: &Task) -> Turn {
    let own: Vec<&crate::convo::Msg> = conv
        .messages
        .iter()
        .filter(|m| m.role == "assistant")
        .collect();
    if own.is_empty() {
        return Turn::text(format!("Hi. {}", task.opening()));
    }
    // the agent's latest message (a user turn in the simulator's view) and what followed it
    let Some(at) = conv.messages.iter().rposition(|m| m.role == "user") else {
        return Turn::text(STOP);
    };
    let said = &conv.messages[at].content;
    let since = &conv.messages[at + 1..];
    if said.to_lowercase().contains("transferr") {
        return Turn::text(TRANSFER);
    }
    let tools: Vec<&str> = conv
        .tools
        .iter()
        .map(|t| t.function.name.as_str())
        .collect();
    let asked = requested(said, &tools);
    let performed = since
        .iter()
        .filter(|m| m.role == "assistant")
        .map(|m| m.calls.len())
        .sum::<usize>();
    if let Some(c) = asked.get(performed) {
        return Turn {
            calls: vec![c.clone()],
            done_reason: "stop",
            ..Default::default()
        };
    }
    if performed > 0 {
        let seen: Vec<String> = since
            .iter()
            .filter(|m| m.role == "tool")
            .map(|m| squash(&m.content).chars().take(300).collect())
            .collect();
        return Turn::text(format!("I did that. What I see: {}", seen.join(" | ")));
    }
    let answers = own.iter().filter(|m| m.content == task.known).count();
    if said.contains('?') && !task.known.is_empty() && answers < MAX_ANSWERS {
        return Turn::text(task.known.clone());
    }
    Turn::text(STOP)
}

/// The offered tools the agent's message names, in the order it names them, each with the
/// JSON object that follows its name as arguments (none: no arguments).
fn requested(text: &str, tools: &[&str]) -> Vec<Call> {
    let mut found: Vec<(usize, Call)> = Vec::new();
    for name in tools.iter().filter(|n| !n.is_empty()) {
        let mut from = 0;
        while let Some(i) = text[from..].find(name).map(|i| i + from) {
            from = i + name.len();
            let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            if word(text[..i].chars().next_back()) || word(text[from..].chars().next()) {
                continue;
            }
            let rest = text[from..].trim_start_matches([' ', '(']);
            let args = serde_json::Deserializer::from_str(rest)
                .into_iter::<Value>()
                .next()
                .and_then(|v| v.ok())
                .filter(|v| v.is_object() && rest.starts_with('{'))
                .unwrap_or_else(|| json!({}));
            found.push((
                i,
                Call {
                    name: name.to_string(),
                    args,
                },
            ));
        }
    }
    found.sort_by_key(|(i, _)| *i);
    found.into_iter().map(|(_, c)| c).collect()
}

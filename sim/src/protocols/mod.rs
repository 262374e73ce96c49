//! How the simulated model acts through the protocol a request offers, as a model trained on
//! that protocol would. Native tool calls are the policy's own language (`policy::work`);
//! this module covers what else a request can offer, each protocol learnt from its public
//! documentation and upstream code:
//!
//! - `edit_blocks`: no tools, a system prompt that documents file listings (whole files) or
//!   SEARCH/REPLACE blocks (aider's edit formats);
//! - `code_agent`: no tools, a system prompt that documents Thought / code block /
//!   Observation cycles with Python functions to call and `final_answer` (smolagents'
//!   CodeAgent);
//! - `abs_paths`: native tools whose errors demand absolute paths (the model then writes the
//!   working directory it was told in front of its paths);
//! - `read_first`: native tools whose errors demand reading a file before overwriting it
//!   (the model reads it, then writes again);
//! - `summary`: requests for a `<state_snapshot>` summary that replaces the conversation
//!   (the model quotes the request and lists the steps done; the policy reads that list back).
//!
//! Tool results that repeat the call's own arguments beside the outcome are read without the
//! echo, whatever the protocol (`feedback::echo`).
//!
//! A text protocol is driven by the same policy: the request is translated into the tool-call
//! conversation the policy reads (its own earlier replies parsed back into calls, the messages
//! after them read as their results), the policy's calls are written back in the protocol's
//! text. A failure form of a sized model stays what it is; only how actions are written
//! changes.

pub(crate) mod abs_paths;
mod code_agent;
mod edit_blocks;
mod pylit;
pub(crate) mod read_first;
pub(crate) mod summary;

use lrab_ollama::Tool;

use crate::convo::{Call, Conv, Msg};
use crate::policy::{forms, work, Env, Turn};
use crate::task::TaskPlan;
use crate::toolkit::Toolkit;

/// One action of a reply: the sentence the model says before it, and the call it stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub note: String,
    pub call: Call,
}

/// A protocol in which actions are written as text.
pub(crate) trait TextProtocol {
    /// The actions the protocol offers, as tools the policy can bind.
    fn tools(&self) -> Vec<Tool>;
    /// Whether a reply is all the model gets (no result comes back between its actions).
    fn one_shot(&self) -> bool;
    /// The reply that carries these actions, then `tail` (a closing or stopping sentence).
    fn render(&self, conv: &Conv, actions: &[Action], tail: &str) -> String;
    /// The actions an earlier reply (message `at` of `conv`) carried.
    fn parse(&self, conv: &Conv, at: usize, content: &str) -> Vec<Action>;
}

/// The text protocol a tool-less request documents, if any.
pub(crate) fn detect(conv: &Conv) -> Option<Box<dyn TextProtocol>> {
    let system = conv.system_text();
    if let Some(p) = edit_blocks::detect(conv, &system) {
        return Some(Box::new(p));
    }
    code_agent::detect(&system).map(|p| Box::new(p) as Box<dyn TextProtocol>)
}

/// What the model takes for granted after an action of a reply that carries several (no
/// result came back between them).
const ASSUMED: &str = "ok";

/// At most this many actions in one reply.
const MAX_ACTIONS: usize = 64;

/// The conversation as the policy reads it: the protocol's tools, each earlier reply split
/// into its actions, the messages after a reply with actions read as their results.
fn translate(conv: &Conv, at: usize, p: &dyn TextProtocol) -> Conv {
    let mut out = conv.clone();
    out.tools = p.tools();
    out.messages = conv.messages[..=at].to_vec();
    let mut acted = false;
    for (i, m) in conv.messages.iter().enumerate().skip(at + 1) {
        if m.role != "assistant" {
            let mut m = m.clone();
            if acted && m.role != "system" {
                m.role = "tool".into();
            }
            out.messages.push(m);
            continue;
        }
        let actions = p.parse(conv, i, &m.content);
        acted = !actions.is_empty();
        if !acted {
            out.messages.push(m.clone());
        }
        let n = actions.len();
        for (j, a) in actions.into_iter().enumerate() {
            out.messages.push(msg("assistant", a.note, vec![a.call]));
            if j + 1 < n {
                out.messages.push(msg("tool", ASSUMED.into(), vec![]));
            }
        }
    }
    out
}

fn msg(role: &str, content: String, calls: Vec<Call>) -> Msg {
    Msg {
        role: role.into(),
        content,
        calls,
    }
}

/// The next reply of a recognised task in a text protocol: the policy's turns, one after the
/// other as long as no result is needed between them (a command's output is; in a one-shot
/// protocol nothing comes back at all), written in the protocol's text.
pub(crate) fn turn(
    env: &Env,
    conv: &Conv,
    plan: &TaskPlan,
    at: usize,
    p: &dyn TextProtocol,
) -> Turn {
    let mut c = translate(conv, at, p);
    let kit = Toolkit::detect(&c.tools);
    let is =
        |b: &Option<crate::toolkit::Bound>, name: &str| b.as_ref().is_some_and(|b| b.name == name);
    let mut actions = Vec::new();
    let mut out = Turn {
        done_reason: "stop",
        ..Default::default()
    };
    let mut tail = String::new();
    for _ in 0..MAX_ACTIONS {
        let t = work::turn(env, &c, plan, at);
        out.thinking = out.thinking.or(t.thinking.clone());
        out.form = out.form.or(t.form);
        out.content_kind = out.content_kind.or(t.content_kind);
        let Some(call) = t.calls.first().cloned() else {
            tail = t.content;
            out.done_reason = t.done_reason;
            break;
        };
        let stop = is(&kit.finish, &call.name) || (is(&kit.shell, &call.name) && !p.one_shot());
        actions.push(Action {
            note: t.content.clone(),
            call: call.clone(),
        });
        if stop {
            break;
        }
        c.messages.push(msg("assistant", t.content, vec![call]));
        c.messages.push(msg("tool", ASSUMED.into(), vec![]));
    }
    out.content = p.render(conv, &actions, &tail);
    if !env.model.profile.is_oracle() {
        forms::truncate_at_limit(&mut out, conv);
    }
    out
}

/// A tool of the protocol (every parameter a required string unless typed otherwise).
pub(crate) fn tool(name: &str, params: &[(&str, &str)]) -> Tool {
    let props: serde_json::Map<String, serde_json::Value> = params
        .iter()
        .map(|(p, ty)| (p.to_string(), serde_json::json!({ "type": ty })))
        .collect();
    let required: Vec<&str> = params.iter().map(|(p, _)| *p).collect();
    Tool::function(
        name,
        "",
        serde_json::json!({"type": "object", "properties": props, "required": required}),
    )
}

/// The string argument `key` of a call.
pub(crate) fn arg<'a>(call: &'a Call, key: &str) -> Option<&'a str> {
    call.args.get(key).and_then(|v| v.as_str())
}

#[cfg(test)]
mod tests;

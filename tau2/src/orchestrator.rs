//! The half-duplex conversation loop (upstream's orchestrator): fixed greeting, messages
//! routed agent -> user -> agent, every tool-call message executed by the environment,
//! stop tokens, max steps and max tool errors.

use crate::domains::Env;
use crate::error::Result;
use crate::evaluate::{AGENT_ERROR, AGENT_STOP, MAX_STEPS, TOO_MANY_ERRORS, USER_ERROR, USER_STOP};
use crate::message::Message;

pub const GREETING: &str = "Hi! How can I help you today?";
pub const STOP_TOKENS: &[&str] = &["###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"];
pub const DEFAULT_MAX_STEPS: usize = 200;
pub const DEFAULT_MAX_ERRORS: usize = 10;

/// The agent under test. It sees the whole trajectory and returns one assistant message
/// (text and/or tool calls).
pub trait Agent {
    fn next(&mut self, trajectory: &[Message]) -> Result<Message>;
    /// Whether this message ends the conversation from the agent side.
    fn is_stop(&self, _msg: &Message) -> bool {
        false
    }
}

/// The simulated customer. Sees the whole trajectory (it must hide the agent's tool
/// traffic itself) and returns one user message.
pub trait User {
    fn next(&mut self, trajectory: &[Message]) -> Result<Message>;
}

pub fn is_user_stop(m: &Message) -> bool {
    m.role == "user" && STOP_TOKENS.iter().any(|t| m.text().contains(t))
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub messages: Vec<Message>,
    pub termination: String,
    pub steps: usize,
    pub errors: usize,
    pub note: Option<String>,
}

pub struct Limits {
    pub max_steps: usize,
    pub max_errors: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: DEFAULT_MAX_STEPS,
            max_errors: DEFAULT_MAX_ERRORS,
        }
    }
}

/// Who the current message goes to (upstream's `to_role`).
#[derive(Clone, Copy, PartialEq)]
enum To {
    Agent,
    User,
    Env,
}

/// Run one conversation. `history` is the task's initial message history (if any); the
/// environment must already be in the task's initial state. Mirrors upstream's half-duplex
/// loop: every hop (a participant's message or the environment answering a tool-call
/// message) is one step and is followed by a synchronisation of the environment; tool
/// results go back to whoever called; the step and error limits are checked after every
/// hop that does not leave a tool call pending.
pub fn run(
    env: &mut Env,
    agent: &mut dyn Agent,
    user: &mut dyn User,
    history: &[Message],
    limits: &Limits,
) -> Outcome {
    let mut traj: Vec<Message> = history.to_vec();
    let mut note = None;
    let (mut from, mut to, mut termination) = resume(&mut traj);
    let _ = env.sync();
    let mut steps = 0usize;
    let mut errors = 0usize;
    while termination.is_none() {
        match to {
            To::Agent | To::User => {
                let (role, produced) = if to == To::Agent {
                    ("assistant", agent.next(&traj))
                } else {
                    ("user", user.next(&traj))
                };
                let failed = if to == To::Agent {
                    AGENT_ERROR
                } else {
                    USER_ERROR
                };
                let mut msg = match produced {
                    Ok(m) => m,
                    Err(e) => {
                        termination = Some(failed);
                        note = Some(format!("{e:#}"));
                        break;
                    }
                };
                msg.role = role.to_string();
                msg.turn_idx = Some(traj.len() as u64);
                if let Some(calls) = msg.tool_calls.as_mut() {
                    if calls.is_empty() {
                        msg.tool_calls = None;
                    } else {
                        for c in calls.iter_mut() {
                            c.requestor = role.to_string();
                        }
                    }
                }
                if msg.text().trim().is_empty() && !msg.is_tool_call() {
                    traj.push(msg);
                    termination = Some(failed);
                    note = Some("message has neither text nor tool calls".into());
                    break;
                }
                if to == To::Agent && agent.is_stop(&msg) {
                    termination = Some(AGENT_STOP);
                }
                if to == To::User && !msg.is_tool_call() && is_user_stop(&msg) {
                    termination = Some(USER_STOP);
                }
                let calls = msg.is_tool_call();
                traj.push(msg);
                from = role;
                to = match (calls, role) {
                    (true, _) => To::Env,
                    (false, "assistant") => To::User,
                    (false, _) => To::Agent,
                };
            }
            To::Env => {
                errors += answer_calls(env, &mut traj);
                to = if from == "user" { To::User } else { To::Agent };
                from = "tool";
            }
        }
        steps += 1;
        let _ = env.sync();
        if to != To::Env {
            if steps >= limits.max_steps {
                termination = Some(MAX_STEPS);
            }
            if errors >= limits.max_errors {
                termination = Some(TOO_MANY_ERRORS);
            }
        }
    }
    Outcome {
        messages: traj,
        termination: termination.unwrap_or(USER_STOP).to_string(),
        steps,
        errors,
        note,
    }
}

/// Where a conversation starts from its history: who spoke last, who is next, and whether
/// the history already ends it (a user stop). An empty history gets the agent's greeting.
fn resume(traj: &mut Vec<Message>) -> (&'static str, To, Option<&'static str>) {
    let mut termination = None;
    let (from, to) = match traj.last() {
        None => {
            traj.push(Message::assistant_text(GREETING));
            ("assistant", To::User)
        }
        Some(m) if m.role == "tool" => match m.requestor.as_deref() {
            Some("user") => ("tool", To::User),
            _ => ("tool", To::Agent),
        },
        Some(m) if m.is_tool_call() => (
            if m.role == "user" {
                "user"
            } else {
                "assistant"
            },
            To::Env,
        ),
        Some(m) if m.role == "user" => {
            if is_user_stop(m) {
                termination = Some(USER_STOP);
            }
            ("user", To::Agent)
        }
        Some(_) => ("assistant", To::User),
    };
    (from, to, termination)
}

/// The environment answers every call of the last message, in order; returns how many of
/// the answers are errors.
fn answer_calls(env: &mut Env, traj: &mut Vec<Message>) -> usize {
    let calls = traj
        .iter()
        .rev()
        .find(|m| m.role != "tool")
        .and_then(|m| m.tool_calls.clone())
        .unwrap_or_default();
    let mut errors = 0;
    for c in &calls {
        let mut r = env.get_response(c);
        if r.error == Some(true) {
            errors += 1;
        }
        r.turn_idx = Some(traj.len() as u64);
        traj.push(r);
    }
    errors
}

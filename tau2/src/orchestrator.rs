//! The half-duplex conversation loop (upstream's orchestrator): fixed greeting, messages
//! routed agent -> user -> agent, every tool-call message executed by the environment,
//! stop tokens, max steps and max tool errors.

use crate::domains::Env;
use crate::evaluate::{AGENT_ERROR, AGENT_STOP, MAX_STEPS, TOO_MANY_ERRORS, USER_ERROR, USER_STOP};
use crate::message::Message;
use anyhow::Result;

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

#[derive(PartialEq)]
enum Turn {
    Agent,
    User,
}

/// Run one conversation. `history` is the task's initial message history (if any).
pub fn run(
    env: &mut Env,
    agent: &mut dyn Agent,
    user: &mut dyn User,
    history: &[Message],
    limits: &Limits,
) -> Outcome {
    let mut traj: Vec<Message> = history.to_vec();
    let mut turn = if traj.is_empty() {
        traj.push(Message::assistant_text(GREETING));
        Turn::User
    } else {
        match traj.last().map(|m| m.role.as_str()) {
            Some("user") => Turn::Agent,
            _ => Turn::User,
        }
    };
    let mut steps = 0usize;
    let mut errors = 0usize;
    let finish = |traj: Vec<Message>, t: &str, steps, errors, note: Option<String>| Outcome {
        messages: traj,
        termination: t.to_string(),
        steps,
        errors,
        note,
    };
    loop {
        if steps >= limits.max_steps {
            return finish(traj, MAX_STEPS, steps, errors, None);
        }
        let role = if turn == Turn::Agent {
            "assistant"
        } else {
            "user"
        };
        let produced = match turn {
            Turn::Agent => agent.next(&traj),
            Turn::User => user.next(&traj),
        };
        let mut msg = match produced {
            Ok(m) => m,
            Err(e) => {
                let t = if turn == Turn::Agent {
                    AGENT_ERROR
                } else {
                    USER_ERROR
                };
                return finish(traj, t, steps, errors, Some(format!("{e:#}")));
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
            let t = if turn == Turn::Agent {
                AGENT_ERROR
            } else {
                USER_ERROR
            };
            traj.push(msg);
            return finish(
                traj,
                t,
                steps,
                errors,
                Some("message has neither text nor tool calls".into()),
            );
        }
        steps += 1;
        let stop_agent = turn == Turn::Agent && agent.is_stop(&msg);
        let stop_user = turn == Turn::User && !msg.is_tool_call() && is_user_stop(&msg);
        let calls = msg.tool_calls.clone();
        traj.push(msg);
        if stop_agent {
            return finish(traj, AGENT_STOP, steps, errors, None);
        }
        if stop_user {
            return finish(traj, USER_STOP, steps, errors, None);
        }
        match calls {
            Some(calls) => {
                // The environment answers every call, in order; results go back to the caller.
                for c in &calls {
                    let r = env.get_response(c);
                    if r.error == Some(true) {
                        errors += 1;
                    }
                    let mut r = r;
                    r.turn_idx = Some(traj.len() as u64);
                    traj.push(r);
                }
                steps += 1;
                if errors >= limits.max_errors {
                    return finish(traj, TOO_MANY_ERRORS, steps, errors, None);
                }
            }
            None => {
                turn = if turn == Turn::Agent {
                    Turn::User
                } else {
                    Turn::Agent
                };
            }
        }
    }
}

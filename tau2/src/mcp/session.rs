//! The bridge between an MCP client and upstream's conversation loop. The loop
//! (`orchestrator::run`) runs unchanged on its own thread and asks its agent for the next
//! message; here that agent is [`Bridge`], which turns the client's next tool call into the
//! message and hands the loop's answer (the tool's result, or the customer's reply) back to
//! the client. So the environment, the trajectory and the grading are exactly those of the
//! in-process agents.

use super::protocol::{CallResult, Host, Tool};
use crate::error::Result;
use crate::message::{Message, ToolCall};
use crate::orchestrator::Agent;
use serde_json::{json, Map, Value};
use std::sync::mpsc::{Receiver, Sender};

/// The one tool that is not the domain's: say something to the customer, get the reply.
pub const CUSTOMER_TOOL: &str = "send_message_to_customer";

/// What the agent sends to end the conversation itself (upstream's gym agents' stop text);
/// also what the bridge sends when the client goes away.
pub const AGENT_STOP_TEXT: &str = "###STOP###";

/// The client's next move, from the protocol thread to the loop.
pub enum Request {
    Tool {
        name: String,
        arguments: Map<String, Value>,
    },
    Say(String),
}

/// What the loop reports back.
pub enum Event {
    /// The customer's first message (the loop asked the agent for the first time).
    Opening(String),
    /// The answer to the last request.
    Answer(CallResult),
    /// The conversation is over: the answer to the last request, if one was pending, and
    /// upstream's termination reason.
    Ended {
        answer: Option<CallResult>,
        termination: String,
    },
}

/// Where the answer to the pending request will be in the trajectory.
enum Pending {
    /// The result of the tool call with this id.
    Tool(String),
    /// The customer's reply after our message at this index.
    Say(usize),
}

/// The loop's agent: each `next` answers the previous request from the trajectory, then
/// waits for the client's next one.
pub struct Bridge {
    requests: Receiver<Request>,
    events: Sender<Event>,
    pending: Option<Pending>,
    opened: bool,
    calls: usize,
}

impl Bridge {
    pub fn new(requests: Receiver<Request>, events: Sender<Event>) -> Bridge {
        Bridge {
            requests,
            events,
            pending: None,
            opened: false,
            calls: 0,
        }
    }

    /// After the loop ended: the answer still owed to the client, from the final trajectory.
    pub fn finish(&mut self, trajectory: &[Message], termination: &str) {
        let answer = self.pending.take().map(|p| answer(&p, trajectory));
        let _ = self.events.send(Event::Ended {
            answer,
            termination: termination.to_string(),
        });
    }
}

impl Agent for Bridge {
    fn next(&mut self, traj: &[Message]) -> Result<Message> {
        let event = match self.pending.take() {
            Some(p) => Some(Event::Answer(answer(&p, traj))),
            None if !self.opened => Some(Event::Opening(customer_text_after(traj, 0))),
            None => None,
        };
        self.opened = true;
        if let Some(e) = event {
            let _ = self.events.send(e);
        }
        Ok(match self.requests.recv() {
            Ok(Request::Tool { name, arguments }) => {
                self.calls += 1;
                let id = format!("mcp_call_{}", self.calls);
                self.pending = Some(Pending::Tool(id.clone()));
                let call = ToolCall {
                    id,
                    name,
                    arguments,
                    requestor: "assistant".into(),
                };
                Message::with_calls("assistant", None, vec![call])
            }
            Ok(Request::Say(text)) => {
                self.pending = Some(Pending::Say(traj.len()));
                Message::assistant_text(&text)
            }
            // the client went away (stdin closed): the agent has ended the conversation
            Err(_) => Message::assistant_text(AGENT_STOP_TEXT),
        })
    }

    fn is_stop(&self, msg: &Message) -> bool {
        !msg.is_tool_call() && msg.text().trim() == AGENT_STOP_TEXT
    }
}

fn answer(p: &Pending, traj: &[Message]) -> CallResult {
    match p {
        Pending::Tool(id) => traj
            .iter()
            .rev()
            .find(|m| m.role == "tool" && m.id.as_deref() == Some(id.as_str()))
            .map(|m| CallResult {
                text: m.text().to_string(),
                is_error: m.error == Some(true),
            })
            .unwrap_or_else(|| CallResult {
                text: "Error: the call got no result (the conversation ended first)".into(),
                is_error: true,
            }),
        Pending::Say(at) => CallResult {
            text: customer_text_after(traj, *at),
            is_error: false,
        },
    }
}

/// The customer's text messages from index `from` on (their own tool traffic left out).
fn customer_text_after(traj: &[Message], from: usize) -> String {
    let texts: Vec<&str> = traj
        .iter()
        .skip(from)
        .filter(|m| m.role == "user" && !m.is_tool_call())
        .map(Message::text)
        .collect();
    texts.join("\n")
}

/// The protocol side: the tools and instructions, and each call passed to the loop.
pub struct Session {
    pub name: String,
    pub instructions: String,
    pub tools: Vec<Tool>,
    pub requests: Option<Sender<Request>>,
    pub events: Receiver<Event>,
    /// Set once the conversation is over: its termination reason.
    pub ended: Option<String>,
}

impl Session {
    /// Waits for the loop to reach the agent's first turn; the customer's opening, or
    /// `None` when the conversation ended before the agent was asked anything.
    pub fn opening(&mut self) -> Option<String> {
        match self.events.recv() {
            Ok(Event::Opening(text)) => Some(text),
            Ok(Event::Ended { termination, .. }) => {
                self.ended = Some(termination);
                None
            }
            Ok(Event::Answer(_)) | Err(_) => {
                self.ended = Some("agent_error".into());
                None
            }
        }
    }

    fn over(&self, termination: &str) -> CallResult {
        CallResult {
            text: format!(
                "Error: the conversation is over ({termination}); nothing more can be done"
            ),
            is_error: true,
        }
    }
}

/// The note added to the last answer of a conversation.
fn ended_note(termination: &str) -> String {
    match termination {
        "user_stop" => "[The customer has ended the conversation.]".into(),
        t => format!("[The conversation is over: {t}.]"),
    }
}

impl Host for Session {
    fn name(&self) -> &str {
        &self.name
    }
    fn instructions(&self) -> &str {
        &self.instructions
    }
    fn tools(&self) -> &[Tool] {
        &self.tools
    }

    fn call(&mut self, name: &str, arguments: Map<String, Value>) -> CallResult {
        if let Some(t) = &self.ended {
            return self.over(t);
        }
        let request = if name == CUSTOMER_TOOL {
            match arguments.get("message").and_then(Value::as_str) {
                Some(m) if !m.trim().is_empty() => Request::Say(m.to_string()),
                _ => {
                    return CallResult {
                        text: format!(
                            "Error: {CUSTOMER_TOOL} needs a non-empty string argument 'message'"
                        ),
                        is_error: true,
                    }
                }
            }
        } else {
            Request::Tool {
                name: name.to_string(),
                arguments,
            }
        };
        let sent = self
            .requests
            .as_ref()
            .is_some_and(|tx| tx.send(request).is_ok());
        match sent.then(|| self.events.recv().ok()).flatten() {
            Some(Event::Answer(r)) => r,
            Some(Event::Ended {
                answer,
                termination,
            }) => {
                let note = ended_note(&termination);
                self.ended = Some(termination);
                match answer {
                    Some(mut r) => {
                        r.text = format!("{}\n\n{note}", r.text);
                        r
                    }
                    None => CallResult {
                        text: note,
                        is_error: true,
                    },
                }
            }
            Some(Event::Opening(_)) | None => {
                self.ended = Some("agent_error".into());
                self.over("agent_error")
            }
        }
    }
}

/// The domain's agent tools (upstream's OpenAI function schemas) as MCP tools, plus the
/// customer tool.
pub fn mcp_tools(schemas: &[lrab_ollama::Tool]) -> Vec<Tool> {
    let mut tools: Vec<Tool> = schemas
        .iter()
        .map(|s| {
            let f = &s.function;
            Tool {
                name: f.name.clone(),
                description: f.description.clone().unwrap_or_default(),
                input_schema: f
                    .parameters
                    .clone()
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
            }
        })
        .collect();
    tools.push(Tool {
        name: CUSTOMER_TOOL.into(),
        description: "Send one message to the customer and receive the customer's reply. \
This is the only way to talk to the customer. When the reply ends the conversation it says so."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {"message": {"type": "string", "description": "What to say to the customer."}},
            "required": ["message"],
        }),
    });
    tools
}

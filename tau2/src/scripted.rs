//! Deterministic participants for tests and dry runs: a user that says canned lines and
//! then stops, an agent that performs a task's gold actions and then reports, and the two
//! paired (`gold_pair`) so that a dual-control task's gold actions are performed in order by
//! whoever owns them — the agent's on the records, the user's on the phone.

use crate::error::{fail, Result};
use crate::message::{Message, ToolCall};
use crate::orchestrator::{Agent, User};
use crate::task::{Action, Task};
use std::cell::RefCell;
use std::rc::Rc;

/// What the scripted user says to end the conversation.
pub const STOP_LINE: &str = "Thanks, that's all. ###STOP###";

/// The gold actions of one task, consumed in order by a [`GoldAgent`] and a [`ScriptedUser`].
struct Script {
    actions: Vec<Action>,
    next: usize,
    reported: bool,
}

impl Script {
    fn next_is(&self, requestor: &str) -> bool {
        self.actions
            .get(self.next)
            .is_some_and(|a| a.requestor == requestor)
    }

    fn take_call(&mut self, requestor: &str) -> ToolCall {
        let a = &self.actions[self.next];
        self.next += 1;
        ToolCall {
            id: format!("{requestor}_call_{}", self.next),
            name: a.name.clone(),
            arguments: a.arguments.clone(),
            requestor: requestor.into(),
        }
    }
}

/// Says its lines in order, then `STOP_LINE`. Paired with a gold agent (see
/// [`gold_pair`]) it performs the task's user-side gold actions when their turn comes.
pub struct ScriptedUser {
    lines: Vec<String>,
    said: usize,
    script: Option<Rc<RefCell<Script>>>,
}

impl ScriptedUser {
    pub fn new(lines: Vec<String>) -> Self {
        ScriptedUser {
            lines,
            said: 0,
            script: None,
        }
    }

    fn line(&mut self) -> Message {
        let line = self.lines.get(self.said).cloned();
        self.said += 1;
        Message::user_text(line.as_deref().unwrap_or(STOP_LINE))
    }
}

impl User for ScriptedUser {
    fn next(&mut self, _t: &[Message]) -> Result<Message> {
        let Some(script) = self.script.clone() else {
            return Ok(self.line());
        };
        let mut s = script.borrow_mut();
        if self.said == 0 {
            drop(s);
            return Ok(self.line());
        }
        if s.next_is("user") {
            let call = s.take_call("user");
            return Ok(Message::with_calls("user", None, vec![call]));
        }
        if s.next >= s.actions.len() && s.reported {
            return Ok(Message::user_text(STOP_LINE));
        }
        Ok(Message::user_text("Done. What should I do next?"))
    }
}

/// Performs the task's gold (assistant) actions one tool call per turn, then sends one text
/// message that states every `communicate_info` string. Alone it skips user-side actions;
/// paired (see [`gold_pair`]) it asks the user to perform them when their turn comes.
pub struct GoldAgent {
    script: Rc<RefCell<Script>>,
    summary: String,
}

impl GoldAgent {
    pub fn new(task: &Task) -> Self {
        let agent = GoldAgent::paired(task);
        agent
            .script
            .borrow_mut()
            .actions
            .retain(|a| a.requestor == "assistant");
        agent
    }

    fn paired(task: &Task) -> Self {
        let ec = task.evaluation_criteria.as_ref();
        let actions = ec.and_then(|e| e.actions.clone()).unwrap_or_default();
        let infos: Vec<String> = ec
            .and_then(|e| e.communicate_info.clone())
            .unwrap_or_default();
        let summary = if infos.is_empty() {
            "All done.".to_string()
        } else {
            format!("All done. For your records: {}.", infos.join("; "))
        };
        GoldAgent {
            script: Rc::new(RefCell::new(Script {
                actions,
                next: 0,
                reported: false,
            })),
            summary,
        }
    }
}

impl Agent for GoldAgent {
    fn next(&mut self, _t: &[Message]) -> Result<Message> {
        let mut s = self.script.borrow_mut();
        if s.next_is("assistant") {
            let call = s.take_call("assistant");
            return Ok(Message::with_calls("assistant", None, vec![call]));
        }
        if let Some(a) = s.actions.get(s.next) {
            return Ok(Message::assistant_text(&format!(
                "Please do this on your phone: {}.",
                a.name
            )));
        }
        if s.reported {
            fail!(Agent, "gold agent has nothing left to say");
        }
        s.reported = true;
        Ok(Message::assistant_text(&self.summary))
    }
}

/// A gold agent and a scripted user sharing the task's gold actions: each performs its
/// own in the listed order, so `--agent gold --user scripted` replays a dual-control task
/// end to end. The user opens with `opening`, and stops after the agent's report.
pub fn gold_pair(task: &Task, opening: &str) -> (GoldAgent, ScriptedUser) {
    let agent = GoldAgent::paired(task);
    let user = ScriptedUser {
        lines: vec![opening.to_string()],
        said: 0,
        script: Some(agent.script.clone()),
    };
    (agent, user)
}

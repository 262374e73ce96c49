//! Deterministic participants for tests and dry runs: a user that says canned lines and
//! then stops, and an agent that performs a task's gold actions and then reports.

use crate::message::{Message, ToolCall};
use crate::orchestrator::{Agent, User};
use crate::task::Task;
use anyhow::{bail, Result};

/// Says its lines in order, then `###STOP###`.
pub struct ScriptedUser {
    lines: Vec<String>,
    next: usize,
}

impl ScriptedUser {
    pub fn new(lines: Vec<String>) -> Self {
        ScriptedUser { lines, next: 0 }
    }
}

impl User for ScriptedUser {
    fn next(&mut self, _t: &[Message]) -> Result<Message> {
        let line = self
            .lines
            .get(self.next)
            .cloned()
            .unwrap_or_else(|| "Thanks, that's all. ###STOP###".into());
        self.next += 1;
        Ok(Message::user_text(&line))
    }
}

/// Replays the task's gold (assistant) actions one tool call per turn, then sends one text
/// message that states every `communicate_info` string.
pub struct GoldAgent {
    calls: Vec<ToolCall>,
    next: usize,
    summary: String,
    done: bool,
}

impl GoldAgent {
    pub fn new(task: &Task) -> Self {
        let ec = task.evaluation_criteria.as_ref();
        let calls = ec
            .and_then(|e| e.actions.as_ref())
            .into_iter()
            .flatten()
            .filter(|a| a.requestor == "assistant")
            .enumerate()
            .map(|(i, a)| ToolCall {
                id: format!("call_{i}"),
                name: a.name.clone(),
                arguments: a.arguments.clone(),
                requestor: "assistant".into(),
            })
            .collect();
        let infos: Vec<String> = ec
            .and_then(|e| e.communicate_info.clone())
            .unwrap_or_default();
        let summary = if infos.is_empty() {
            "All done.".to_string()
        } else {
            format!("All done. For your records: {}.", infos.join("; "))
        };
        GoldAgent {
            calls,
            next: 0,
            summary,
            done: false,
        }
    }
}

impl Agent for GoldAgent {
    fn next(&mut self, _t: &[Message]) -> Result<Message> {
        if let Some(c) = self.calls.get(self.next) {
            self.next += 1;
            return Ok(Message::with_calls("assistant", None, vec![c.clone()]));
        }
        if self.done {
            bail!("gold agent has nothing left to say");
        }
        self.done = true;
        Ok(Message::assistant_text(&self.summary))
    }
}

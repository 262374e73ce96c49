//! `harness`: our harness's model loop applied to a τ² conversation. It uses lrab-harness's
//! backends (with their retry ladder) and the mechanisms that make sense when the "work" is
//! a conversation with tools: format rescue (text that is really a tool call), anti-loop
//! (identical call with nothing changed), repeat nudge (the same text twice), an
//! empty-reply ladder, and the context check (trim old turns before the window overflows).
//! Nudges are private to the agent's request; the trajectory stays tau2-shaped.

use crate::error::{err, Result};
use crate::message::{Message, ToolCall};
use crate::orchestrator::Agent;
use lrab_harness::backend::{call_with_retry, ChatRequest, Model, RetryPolicy};
use lrab_harness::mechanisms::anti_loop::{AntiLoop, EmptyAction, EmptyLadder, LoopVerdict};
use lrab_harness::mechanisms::context::ContextCheck;
use lrab_harness::mechanisms::format_rescue;
use lrab_harness::{Message as HMsg, Role, ToolCall as HCall, ToolSpec};
use lrab_ollama::Tool;
use serde_json::Value;
use std::collections::HashMap;

pub const LOOP_NUDGE: &str = "You just made this exact tool call and nothing has changed since; its result is above. Use that result, or reply to the user.";
pub const REPEAT_NUDGE: &str = "You already sent exactly this message. Move the conversation forward: ask for what is missing, act, or conclude.";
pub const EMPTY_NUDGE: &str =
    "Your last reply was empty. Either send a message to the user or make one tool call.";
/// Re-asks per turn at most (each is one extra model call).
pub const MAX_REASKS: usize = 3;

pub struct HarnessAgent<M: Model> {
    pub model: M,
    system: String,
    specs: Vec<ToolSpec>,
    writes: Vec<String>,
    anti_loop: AntiLoop,
    empty: EmptyLadder,
    pub ctx: ContextCheck,
    pub retry: RetryPolicy,
    pub num_predict: u32,
    turn: u32,
    counter: usize,
    /// Mechanism firings, in order (for reports and tests).
    pub events: Vec<String>,
}

impl<M: Model> HarnessAgent<M> {
    /// `tools` are the domain's function schemas; `writes` the state-changing tool names.
    pub fn new(model: M, policy: &str, tools: &[Tool], writes: Vec<String>, num_ctx: u64) -> Self {
        let specs: Vec<ToolSpec> = tools
            .iter()
            .map(|t| ToolSpec {
                name: t.function.name.clone(),
                description: t.function.description.clone().unwrap_or_default(),
                parameters: t.function.parameters.clone().unwrap_or_default(),
            })
            .collect();
        HarnessAgent {
            model,
            system: crate::llm::agent_system_prompt(policy),
            specs,
            writes,
            anti_loop: AntiLoop::default(),
            empty: EmptyLadder::default(),
            ctx: ContextCheck::new(num_ctx),
            retry: RetryPolicy::default(),
            num_predict: 2048,
            turn: 0,
            counter: 0,
            events: Vec::new(),
        }
    }

    /// The agent's view in harness messages, plus the "world" counter: how many
    /// state-changing calls have succeeded so far (a repeat after one is not a loop).
    fn view(&self, traj: &[Message]) -> (Vec<HMsg>, u64) {
        let mut out = vec![HMsg::system(self.system.clone())];
        let mut names: HashMap<String, String> = HashMap::new();
        let mut world = 0;
        for m in traj {
            match m.role.as_str() {
                "assistant" => {
                    let calls: Vec<HCall> = m
                        .tool_calls
                        .iter()
                        .flatten()
                        .map(|c| {
                            names.insert(c.id.clone(), c.name.clone());
                            HCall {
                                id: c.id.clone(),
                                name: c.name.clone(),
                                arguments: Value::Object(c.arguments.clone()),
                            }
                        })
                        .collect();
                    out.push(HMsg::assistant(m.text(), calls));
                }
                "user" if !m.is_tool_call() => out.push(HMsg::user(m.text())),
                "tool" if m.requestor.as_deref() != Some("user") => {
                    let id = m.id.clone().unwrap_or_default();
                    let name = names.get(&id).cloned().unwrap_or_default();
                    if m.error != Some(true) && self.writes.contains(&name) {
                        world += 1;
                    }
                    let call = HCall {
                        id,
                        name,
                        arguments: Value::Null,
                    };
                    out.push(HMsg::tool_result(&call, m.text()));
                }
                _ => {}
            }
        }
        (out, world)
    }

    /// Context check: drop the oldest turns (never the system prompt or the first user
    /// message, never a tool result without its call) until the request fits.
    fn fit(&mut self, msgs: &mut Vec<HMsg>) {
        let raw = ContextCheck::raw(msgs, &self.specs);
        if !self.ctx.needs_compaction(self.ctx.tokens(raw)) {
            return;
        }
        let keep_head = msgs
            .iter()
            .position(|m| m.role == Role::User)
            .map_or(1, |i| i + 1);
        let mut dropped = 0;
        while msgs.len() > keep_head + 2
            && self
                .ctx
                .needs_compaction(self.ctx.tokens(ContextCheck::raw(msgs, &self.specs)))
        {
            msgs.remove(keep_head);
            dropped += 1;
            while msgs.len() > keep_head && msgs[keep_head].role == Role::Tool {
                msgs.remove(keep_head);
                dropped += 1;
            }
        }
        self.ctx.compactions += 1;
        self.events
            .push(format!("context: dropped {dropped} old messages"));
    }

    fn make_message(&mut self, text: &str, calls: Vec<HCall>) -> Message {
        let content = (!text.trim().is_empty()).then(|| text.to_string());
        if calls.is_empty() {
            return Message {
                role: "assistant".into(),
                content,
                ..Default::default()
            };
        }
        let calls = calls
            .into_iter()
            .map(|c| {
                self.counter += 1;
                let arguments = match c.arguments {
                    Value::Object(m) => m,
                    _ => Default::default(),
                };
                ToolCall {
                    id: format!("harness_call_{}", self.counter),
                    name: c.name,
                    arguments,
                    requestor: "assistant".into(),
                }
            })
            .collect();
        Message::with_calls("assistant", content, calls)
    }
}

impl<M: Model> Agent for HarnessAgent<M> {
    fn next(&mut self, traj: &[Message]) -> Result<Message> {
        self.turn += 1;
        let (msgs, world) = self.view(traj);
        let last_text = traj
            .iter()
            .rev()
            .find(|m| m.role == "assistant" && !m.is_tool_call())
            .map(|m| m.text().trim().to_string());
        let mut nudges: Vec<HMsg> = Vec::new();
        let mut fallback: Option<Message> = None;
        for _ in 0..=MAX_REASKS {
            let mut req_msgs = msgs.clone();
            req_msgs.extend(nudges.iter().cloned());
            self.fit(&mut req_msgs);
            let req = ChatRequest {
                messages: &req_msgs,
                tools: &self.specs,
                num_predict: self.num_predict,
            };
            let reply = call_with_retry(
                &mut self.model,
                &req,
                &self.retry,
                &mut std::thread::sleep,
                &mut |e, n| {
                    let _ = (e, n);
                },
            )
            .map_err(|e| err!(Backend, "{e}"))?;
            let mut calls = reply.tool_calls.clone();
            let text = reply.content.clone();
            if calls.is_empty() && !text.trim().is_empty() {
                if let Some(rescued) = format_rescue::rescue(&text, &self.specs) {
                    self.events.push(format!(
                        "format_rescue: {}",
                        rescued
                            .iter()
                            .map(|c| c.name.as_str())
                            .collect::<Vec<_>>()
                            .join(",")
                    ));
                    calls = rescued;
                }
            }
            let rescued_text = if calls.is_empty() {
                text.clone()
            } else {
                String::new()
            };
            if calls.is_empty() && text.trim().is_empty() {
                match self.empty.on_empty() {
                    EmptyAction::GiveUp => {
                        return Err(err!(Agent, "model keeps returning empty replies"))
                    }
                    _ => {
                        self.events.push("empty_reply: nudge".into());
                        nudges.push(HMsg::nudge(EMPTY_NUDGE));
                        continue;
                    }
                }
            }
            self.empty.on_reply();
            if let Some(c) = calls.first() {
                match self
                    .anti_loop
                    .check(&c.name, &c.arguments, world, self.turn)
                {
                    LoopVerdict::Intercept { .. }
                    | LoopVerdict::Pause { .. }
                    | LoopVerdict::Paused { .. } => {
                        self.events.push(format!("anti_loop: {}", c.name));
                        if fallback.is_none() {
                            fallback = Some(self.make_message("", calls.clone()));
                        }
                        nudges.push(HMsg::assistant("", calls.clone()));
                        for call in &calls {
                            nudges.push(HMsg::tool_result(
                                call,
                                "(not executed: identical to your previous call)",
                            ));
                        }
                        nudges.push(HMsg::nudge(LOOP_NUDGE));
                        continue;
                    }
                    _ => {}
                }
            } else if last_text.as_deref() == Some(rescued_text.trim()) {
                self.events.push("repeat_nudge".into());
                if fallback.is_none() {
                    fallback = Some(self.make_message(&rescued_text, vec![]));
                }
                nudges.push(HMsg::assistant(rescued_text.clone(), vec![]));
                nudges.push(HMsg::nudge(REPEAT_NUDGE));
                continue;
            }
            return Ok(self.make_message(&rescued_text, calls));
        }
        // Out of re-asks: let the first answer through rather than stall the conversation.
        fallback.ok_or_else(|| err!(Agent, "no usable reply after {MAX_REASKS} re-asks"))
    }
}

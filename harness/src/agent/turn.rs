//! One turn: the clock, the tool list, the context check, the model call, and what the reply
//! leads to (an empty reply, text, or tool calls), then the stall watch.

use super::{short, Agent, RunStatus};
use crate::backend::{call_with_retry, repair_conversation, BackendError, ChatRequest, Model};
use crate::estimate::estimate_request;
use crate::mechanisms::anti_loop::{self, EmptyAction, StallAction};
use crate::mechanisms::clock::Clock;
use crate::mechanisms::context::compact;
use crate::mechanisms::false_completion::{claims_completion, text_only_nudge};
use crate::mechanisms::format_rescue::{canonical_args, canonical_name, rescue};
use crate::mechanisms::prefill;
use crate::mechanisms::resilience::{is_empty_reply, strip_think, truncation_feedback};
use crate::mechanisms::tiering::Tier;
use crate::mechanisms::Mechanism;
use crate::messages::{Message, Reply, ToolCall, ToolSpec};
use crate::tools::table;
use lrab_records::{Event, ModelCall};
use serde_json::json;
use std::time::Instant;

impl<M: Model> Agent<M> {
    /// Every tool that exists in this run: the web tools only when a search endpoint is set.
    pub(super) fn known_tools(&self) -> Vec<&'static str> {
        let mut v = table::all_but_web();
        if self.tools.web.is_some() {
            v.extend(table::web());
        }
        v
    }

    /// The tools offered this turn.
    pub fn current_tools(&self) -> Vec<ToolSpec> {
        let mut names: Vec<&str> = if self.state.tier == Tier::Chat {
            prefill::chat_tools()
        } else if self.on(Mechanism::FlatPrefill) {
            prefill::route(&self.state.task)
        } else {
            prefill::all_tools()
        };
        // web tools only when configured, and (when routing) only for tasks that call for them
        if self.tools.web.is_some()
            && self.state.tier != Tier::Chat
            && (!self.on(Mechanism::FlatPrefill) || prefill::wants_web(&self.state.task))
        {
            names.extend(table::web());
        }
        let paused = self.state.anti_loop.paused_tools(self.state.turn);
        let names: Vec<&str> = names
            .into_iter()
            .filter(|n| !paused.iter().any(|p| p == n))
            .collect();
        table::specs_for(&names)
    }

    /// One turn. `Some(status)` ends the run.
    pub fn step(&mut self) -> Option<RunStatus> {
        let t0 = Instant::now();
        if self.state.turn >= self.cfg.max_turns {
            return Some(RunStatus::MaxTurns);
        }
        // clock
        let elapsed = self.base_elapsed + (self.clock_fn)();
        if self.on(Mechanism::Clock) {
            if self.state.clock.expired(elapsed) {
                self.events
                    .mechanism("clock", "expired", json!({"elapsed_s": elapsed}));
                return Some(RunStatus::TimeBudget);
            }
            if let Some(w) = self.state.clock.check(elapsed) {
                let missing = self.missing_artifacts();
                self.events
                    .mechanism("clock", "warning", json!({"elapsed_s": elapsed}));
                self.nudge(Clock::with_missing(&w, &missing));
            }
        }
        let tools = self.current_tools();
        // context check
        let mut raw = estimate_request(&self.state.messages, &tools);
        let mut tokens = self.state.context.tokens(raw);
        if self.on(Mechanism::Context) && self.state.context.needs_compaction(tokens) {
            self.compact_now("threshold");
            raw = estimate_request(&self.state.messages, &tools);
            tokens = self.state.context.tokens(raw);
        }
        let num_predict = if self.on(Mechanism::Context) {
            self.state
                .context
                .clamp_predict(tokens, self.cfg.num_predict)
        } else {
            self.cfg.num_predict
        };
        // model call
        let tm = Instant::now();
        let reply = match self.call_model(&tools, num_predict) {
            Ok(r) => r,
            Err(e) => {
                self.events.emit(Event::BackendError {
                    error: e.to_string(),
                });
                self.save();
                let msg = e.to_string();
                self.last_error = Some(e);
                return Some(RunStatus::BackendFailed(msg));
            }
        };
        let model_time = tm.elapsed();
        self.events.emit(Event::ModelCall(ModelCall {
            turn: self.state.turn,
            prompt_tokens: reply.prompt_eval_count,
            completion_tokens: reply.eval_count,
            latency_ms: model_time.as_millis() as u64,
            est_tokens: tokens,
            num_predict,
            done_reason: reply.done_reason.clone(),
            tools_offered: tools.len(),
        }));
        if let Some(pec) = reply.prompt_eval_count {
            self.state.context.calibrate(raw, pec);
        }
        self.state.model_calls += 1;
        self.state.prompt_tokens += reply.prompt_eval_count.unwrap_or(0);
        self.state.completion_tokens += reply.eval_count.unwrap_or(0);
        let end = self.handle_reply(reply, &tools);
        self.state.turn += 1;
        self.save();
        let total = t0.elapsed();
        self.overheads.push(total.saturating_sub(model_time));
        end
    }

    fn call_model(&mut self, tools: &[ToolSpec], num_predict: u32) -> Result<Reply, BackendError> {
        let policy = self.cfg.retry;
        let mut repaired = false;
        loop {
            let req = ChatRequest {
                messages: &self.state.messages,
                tools,
                num_predict,
            };
            let events = &mut self.events;
            let r = call_with_retry(
                &mut self.model,
                &req,
                &policy,
                &mut *self.sleeper,
                &mut |e, n| {
                    events.mechanism(
                        "resilience",
                        "backend_retry",
                        json!({"attempt": n, "error": e.to_string()}),
                    );
                },
            );
            match r {
                Err(BackendError::Structural(m)) if !repaired => {
                    repaired = true;
                    let removed = repair_conversation(&mut self.state.messages);
                    self.events.mechanism(
                        "resilience",
                        "repair_conversation",
                        json!({"removed": removed, "error": m}),
                    );
                }
                other => return other,
            }
        }
    }

    pub(super) fn compact_now(&mut self, why: &str) {
        let before = self.state.messages.len();
        let files = self.tools.list_files(60);
        let tail = self.state.context.tail_budget();
        self.state.messages = compact(
            &self.state.messages,
            tail,
            &self.state.plan.render(),
            &files,
        );
        self.state.context.compactions += 1;
        self.events.mechanism(
            "context",
            "compact",
            json!({"why": why, "before": before, "after": self.state.messages.len()}),
        );
    }

    fn handle_reply(&mut self, reply: Reply, tools: &[ToolSpec]) -> Option<RunStatus> {
        let offered: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let mut calls: Vec<ToolCall> = reply.tool_calls.clone();
        if self.on(Mechanism::FormatRescue) {
            let declared = table::specs_for(&self.known_tools());
            for c in &mut calls {
                let n = canonical_name(&c.name, &declared);
                if n != c.name {
                    self.events.mechanism(
                        "format_rescue",
                        "alias",
                        json!({"from": c.name, "to": n}),
                    );
                }
                c.arguments = canonical_args(&n, std::mem::take(&mut c.arguments), &declared);
                c.name = n;
            }
            if calls.is_empty() {
                if let Some(rescued) = rescue(&reply.content, &declared) {
                    self.events.mechanism(
                        "format_rescue",
                        "rescued",
                        json!({"calls": rescued.len()}),
                    );
                    calls = rescued;
                }
            }
        }
        let rescued_text = calls.len() > reply.tool_calls.len();
        let content = if rescued_text {
            String::new()
        } else {
            strip_think(&reply.content).trim().to_string()
        };
        if is_empty_reply(&content, !calls.is_empty()) {
            return self.on_empty_reply(&reply);
        }
        self.state.empty.on_reply();
        if calls.is_empty() {
            return self.on_text_reply(&reply, content);
        }
        self.on_tool_calls(content, calls, &offered)
    }

    /// Empty replies (think-only included) and truncation.
    fn on_empty_reply(&mut self, reply: &Reply) -> Option<RunStatus> {
        // keep the (empty) turn in the history: the conversation the model sees next is then
        // not the one that produced the empty reply
        self.state
            .messages
            .push(Message::assistant(String::new(), vec![]));
        if reply.truncated() && self.on(Mechanism::Resilience) {
            self.events
                .mechanism("resilience", "truncated", json!({"turn": self.state.turn}));
            self.nudge(truncation_feedback());
            return None;
        }
        if !self.on(Mechanism::AntiLoop) {
            self.nudge(anti_loop::EMPTY_NUDGE_ABLATED.into());
            return None;
        }
        match self.state.empty.on_empty() {
            EmptyAction::Nudge { level } => {
                self.events
                    .mechanism("anti_loop", "empty_nudge", json!({"level": level}));
                let next = self.next_action();
                self.nudge(anti_loop::empty_nudge(level, &next));
            }
            EmptyAction::Reset => {
                self.events.mechanism("anti_loop", "empty_reset", json!({}));
                self.compact_now("empty_reset");
                let next = self.next_action();
                self.nudge(anti_loop::empty_reset_nudge(&next));
            }
            EmptyAction::GiveUp => {
                self.events
                    .mechanism("anti_loop", "empty_give_up", json!({}));
                return Some(RunStatus::Stalled);
            }
        }
        None
    }

    /// A reply with text and no tool call.
    fn on_text_reply(&mut self, reply: &Reply, content: String) -> Option<RunStatus> {
        self.state
            .messages
            .push(Message::assistant(content.clone(), vec![]));
        self.say(&format!(
            "[turn {}] text: {}",
            self.state.turn,
            short(&content, 160)
        ));
        if self.state.tier == Tier::Chat {
            // the answer is the product of a chat run: always printed
            println!("{content}");
            return Some(RunStatus::Answered);
        }
        if reply.truncated() && self.on(Mechanism::Resilience) {
            self.events
                .mechanism("resilience", "truncated", json!({"turn": self.state.turn}));
            self.nudge(truncation_feedback());
            return None;
        }
        if claims_completion(&content) {
            if !self.on(Mechanism::FinishGate) {
                return Some(RunStatus::Finished);
            }
            self.events.mechanism(
                "false_completion",
                "claim",
                json!({"turn": self.state.turn}),
            );
            let (accepted, msg) = self.finish_gate();
            if accepted {
                return Some(RunStatus::Finished);
            }
            self.nudge(msg);
        } else {
            self.events.mechanism(
                "false_completion",
                "text_only",
                json!({"turn": self.state.turn}),
            );
            let next = self.next_action();
            self.nudge(text_only_nudge(&next));
        }
        self.stall_check(false)
    }

    /// A reply with tool calls: each is dispatched, answered and logged in order.
    fn on_tool_calls(
        &mut self,
        content: String,
        mut calls: Vec<ToolCall>,
        offered: &[&str],
    ) -> Option<RunStatus> {
        let turn = self.state.turn;
        for (i, c) in calls.iter_mut().enumerate() {
            if c.id.is_empty() {
                c.id = format!("call_{turn}_{i}");
            }
        }
        self.state
            .messages
            .push(Message::assistant(content, calls.clone()));
        let mut progress = false;
        let mut after: Vec<String> = Vec::new();
        for call in &calls {
            let t = Instant::now();
            let result = self.dispatch(call, offered, &mut after);
            if self.note_call(call, &result) {
                progress = true;
            }
            self.state.tool_calls += 1;
            self.events
                .emit(Event::ToolCall(result.event(call, turn, t.elapsed())));
            self.say(&format!(
                "[turn {turn}] {} {} -> {}",
                call.name,
                short(&call.arguments.to_string(), 100),
                short(&result.text, 140)
            ));
            let finished = result.finished;
            self.state
                .messages
                .push(Message::tool_result(call, result.text));
            if finished {
                return Some(RunStatus::Finished);
            }
        }
        for a in after {
            self.nudge(a);
        }
        self.stall_check(progress)
    }

    fn stall_check(&mut self, progress: bool) -> Option<RunStatus> {
        if !self.on(Mechanism::AntiLoop) {
            return None;
        }
        match self.state.stall.on_round(progress) {
            None => None,
            Some(StallAction::Replan) => {
                self.events.mechanism(
                    "anti_loop",
                    "stall_replan",
                    json!({"streak": self.state.stall.streak}),
                );
                let next = self.next_action();
                self.nudge(anti_loop::stall_replan_text(self.state.stall.streak, &next));
                None
            }
            Some(StallAction::Escalate) => {
                self.events.mechanism(
                    "anti_loop",
                    "stall_escalate",
                    json!({"streak": self.state.stall.streak}),
                );
                let missing = self.missing_artifacts();
                let next = if missing.is_empty() {
                    self.next_action()
                } else {
                    String::new()
                };
                self.nudge(anti_loop::stall_escalate_text(
                    missing.first().map(String::as_str),
                    &next,
                ));
                None
            }
            Some(StallAction::GiveUp) => {
                self.events
                    .mechanism("anti_loop", "stall_give_up", json!({}));
                Some(RunStatus::Stalled)
            }
        }
    }
}

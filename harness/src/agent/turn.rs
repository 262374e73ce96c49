//! One turn: the clock, the tool list, the context check (prune, compact, fit), the model call,
//! and what the reply leads to (an empty reply, text, or tool calls), then the stall watch.

use super::offer::{offered, system_prompt};
use super::{short, Agent, RunStatus, ToolProtocol};
use crate::backend::{call_with_retry, repair_conversation, BackendError, ChatRequest, Model};
use crate::estimate::estimate_request;
use crate::mechanisms::anti_loop::{self, EmptyAction, StallAction};
use crate::mechanisms::bad_input;
use crate::mechanisms::clock::Clock;
use crate::mechanisms::context::{compact, prune_old_outputs, shrink_to_fit, PRUNE_KEEP};
use crate::mechanisms::false_completion::{claims_completion, text_only_nudge};
use crate::mechanisms::format_rescue::{canonical_args, canonical_name, rescue, strip_reasoning};
use crate::mechanisms::reply_failures::{cut_call, Lost};
use crate::mechanisms::resilience::is_empty_reply;
use crate::mechanisms::text_protocol;
use crate::mechanisms::tiering::Tier;
use crate::mechanisms::Mechanism;
use crate::messages::{Message, Reply, ToolCall, ToolSpec};
use crate::prefix::PrefixStats;
use crate::table;
use lrab_records::{Event, ModelCall};
use serde_json::json;
use std::time::{Duration, Instant};

/// What one model call was sent with.
struct Sent {
    raw: usize,
    tokens: u64,
    num_predict: u32,
    stats: PrefixStats,
    tools_offered: usize,
}

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
        table::specs_for(&offered(&self.cfg, self.state.tier))
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
        let mut model_time = Duration::ZERO;
        let mut overflows = 0;
        let (reply, sent) = loop {
            // under the text protocol the tools are in the system prompt, not the request
            let wire: &[ToolSpec] = if self.state.text_protocol {
                &[]
            } else {
                &tools
            };
            let (raw, tokens) = self.prepare_context(wire);
            let num_predict = if self.on(Mechanism::Context) {
                self.state
                    .context
                    .clamp_predict(tokens, self.cfg.num_predict)
            } else {
                self.cfg.num_predict
            };
            let tm = Instant::now();
            let (r, stats) = self.call_model(wire, num_predict);
            model_time += tm.elapsed();
            let sent = Sent {
                raw,
                tokens,
                num_predict,
                stats,
                tools_offered: wire.len(),
            };
            match r {
                Ok(reply) => break (reply, sent),
                Err(BackendError::NoToolSupport(m))
                    if self.cfg.tool_protocol == ToolProtocol::Auto
                        && !self.state.text_protocol =>
                {
                    self.switch_to_text(&m);
                }
                Err(BackendError::ContextOverflow(m))
                    if self.on(Mechanism::Context) && overflows < 3 =>
                {
                    overflows += 1;
                    // the server counts more than the window: our estimate (or the window we
                    // were told) was short, so the correction makes this prompt over-full, and
                    // the context check shrinks it before it is sent again
                    let c = &mut self.state.context;
                    let floor = 1.05 * c.num_ctx as f64 / sent.raw.max(1) as f64;
                    c.ratio = (c.ratio * 1.25).max(floor).min(4.0);
                    self.events.mechanism(
                        "context",
                        "server_overflow",
                        json!({"error": short(&m, 200), "ratio": self.state.context.ratio}),
                    );
                    let tail = self.state.context.tail_budget() >> overflows;
                    self.compact_with("server_overflow", tail);
                }
                Err(BackendError::ToolCallParse(m)) => {
                    self.log_call(None, &sent, model_time);
                    let end = self.on_lost(Lost::Unparsable(m), None);
                    return self.end_turn(end, t0, model_time);
                }
                Err(e) => {
                    self.events.emit(Event::BackendError {
                        error: e.to_string(),
                    });
                    self.save();
                    let msg = e.to_string();
                    self.last_error = Some(e);
                    return Some(RunStatus::BackendFailed(msg));
                }
            }
        };
        self.log_call(Some(&reply), &sent, model_time);
        if let Some(pec) = reply.prompt_eval_count {
            use crate::mechanisms::context::Count;
            let was_uncached = self.state.context.uncached_counts;
            match self.state.context.calibrate(sent.raw, pec) {
                Count::Truncated => self.events.mechanism(
                    "context",
                    "server_truncated",
                    json!({"prompt_tokens": pec, "est_tokens": sent.tokens, "num_ctx": self.state.context.num_ctx}),
                ),
                Count::Uncached if !was_uncached => self.events.mechanism(
                    "context",
                    "uncached_counts",
                    json!({"prompt_tokens": pec, "est_tokens": sent.tokens}),
                ),
                _ => {}
            }
        }
        self.state.prompt_tokens += reply.prompt_eval_count.unwrap_or(0);
        self.state.completion_tokens += reply.eval_count.unwrap_or(0);
        let end = self.handle_reply(reply, &tools);
        self.end_turn(end, t0, model_time)
    }

    /// The end of every turn: count it, checkpoint, and time the harness's share.
    fn end_turn(
        &mut self,
        end: Option<RunStatus>,
        t0: Instant,
        model_time: Duration,
    ) -> Option<RunStatus> {
        self.state.turn += 1;
        self.save();
        self.overheads.push(t0.elapsed().saturating_sub(model_time));
        end
    }

    /// The `model_call` event (with the request's shared-prefix numbers).
    fn log_call(&mut self, reply: Option<&Reply>, sent: &Sent, took: Duration) {
        self.state.model_calls += 1;
        self.events.emit(Event::ModelCall(ModelCall {
            turn: self.state.turn,
            prompt_tokens: reply.and_then(|r| r.prompt_eval_count),
            completion_tokens: reply.and_then(|r| r.eval_count),
            latency_ms: took.as_millis() as u64,
            est_tokens: sent.tokens,
            num_predict: sent.num_predict,
            done_reason: reply
                .map(|r| r.done_reason.clone())
                .unwrap_or(Some("error".into())),
            tools_offered: sent.tools_offered,
            prompt_bytes: sent.stats.prompt_bytes,
            prefix_bytes: sent.stats.prefix_bytes,
            est_prefix_tokens: sent.stats.est_prefix_tokens,
            rewrite: self.rewrite.take(),
        }));
    }

    /// The context check before a call. At 75 % the history is rewritten once: old tool
    /// output is pruned first, and when that does not bring the prompt under 60 % the
    /// conversation is compacted too. Nothing is rewritten below 75 %, so every request until
    /// then extends the previous one and the server's cached prefix stays valid; each rewrite
    /// buys at least 15 % of the window. A prompt that leaves no room for a reply is never
    /// sent. Returns (raw estimate, corrected).
    fn prepare_context(&mut self, tools: &[ToolSpec]) -> (usize, u64) {
        let measure = |s: &Self| {
            let raw = estimate_request(&s.state.messages, tools);
            (raw, s.state.context.tokens(raw))
        };
        let (mut raw, mut tokens) = measure(self);
        if !self.on(Mechanism::Context) {
            return (raw, tokens);
        }
        if self.state.context.needs_compaction(tokens) {
            let (n, saved) = prune_old_outputs(&mut self.state.messages, PRUNE_KEEP);
            if n > 0 {
                self.state.context.prunes += 1;
                self.rewrite = Some("prune".into());
                self.events.mechanism(
                    "context",
                    "prune",
                    json!({"results": n, "chars_saved": saved, "est_before": tokens}),
                );
                (raw, tokens) = measure(self);
            }
            if self.state.context.needs_pruning(tokens) {
                self.compact_now("threshold");
                (raw, tokens) = measure(self);
            }
        }
        let mut shift = 1;
        while !self.state.context.fits(tokens) && shift <= 3 {
            let tail = self.state.context.tail_budget() >> shift;
            self.compact_with("fit", tail);
            (raw, tokens) = measure(self);
            shift += 1;
        }
        if !self.state.context.fits(tokens) {
            let n = shrink_to_fit(&mut self.state.messages, tools, &self.state.context);
            self.rewrite = Some("clip".into());
            self.events.mechanism(
                "context",
                "clip",
                json!({"messages": n, "est_before": tokens}),
            );
            (raw, tokens) = measure(self);
        }
        (raw, tokens)
    }

    /// Send the conversation (rendered for the text protocol when it is in use); a 400 about
    /// the message structure gets one repair. Returns the result and the prefix numbers.
    fn call_model(
        &mut self,
        tools: &[ToolSpec],
        num_predict: u32,
    ) -> (Result<Reply, BackendError>, PrefixStats) {
        let policy = self.cfg.retry;
        let mut repaired = false;
        loop {
            let rendered;
            let messages: &[Message] = if self.state.text_protocol {
                rendered = text_protocol::render(&self.state.messages);
                &rendered
            } else if let Some(r) = text_protocol::render_text_calls(&self.state.messages) {
                rendered = r;
                &rendered
            } else {
                &self.state.messages
            };
            let stats = self.prefix.observe(messages, tools);
            self.sent = self.state.messages.len();
            let req = ChatRequest {
                messages,
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
                    self.rewrite = Some("repair".into());
                    self.events.mechanism(
                        "resilience",
                        "repair_conversation",
                        json!({"removed": removed, "error": m}),
                    );
                }
                other => return (other, stats),
            }
        }
    }

    /// The server refuses tools: describe them in the system prompt from now on.
    fn switch_to_text(&mut self, error: &str) {
        self.state.text_protocol = true;
        let system = system_prompt(&self.cfg, self.state.tier, true);
        if let Some(m) = self
            .state
            .messages
            .iter_mut()
            .find(|m| m.role == crate::messages::Role::System)
        {
            m.content = system;
        }
        self.rewrite = Some("protocol".into());
        self.events.mechanism(
            "text_protocol",
            "switch",
            json!({"error": short(error, 200)}),
        );
    }

    pub(super) fn compact_now(&mut self, why: &str) {
        let tail = self.state.context.tail_budget();
        self.compact_with(why, tail);
    }

    fn compact_with(&mut self, why: &str, tail: usize) {
        let before = self.state.messages.len();
        let files = self.tools.list_files(60);
        self.state.messages = compact(
            &self.state.messages,
            tail,
            &self.state.plan.render(),
            &files,
        );
        self.state.context.compactions += 1;
        self.rewrite = Some("compaction".into());
        self.events.mechanism(
            "context",
            "compact",
            json!({"why": why, "before": before, "after": self.state.messages.len()}),
        );
    }

    /// The reply's calls, bounded ([`bad_input`]): names and arguments mapped to the declared
    /// tools, oversized or too deeply nested arguments replaced by the tool error they get
    /// (second element).
    fn bounded_calls(
        &mut self,
        native: Vec<ToolCall>,
        declared: &[ToolSpec],
    ) -> Vec<(ToolCall, Option<String>)> {
        let mut out = Vec::with_capacity(native.len().min(64));
        for (i, mut c) in native.into_iter().enumerate() {
            if i >= bad_input::MAX_ARGS {
                // more calls than any reply makes: the rest is dropped unread
                bad_input::drop_deep(std::mem::take(&mut c.arguments));
                continue;
            }
            c.name = bad_input::clip_name(&c.name);
            if let Err(why) =
                bad_input::check_args(&c.name, &c.arguments).map_err(|e| e.to_string())
            {
                self.events
                    .mechanism("bad_input", "call_refused", json!({"why": why}));
                bad_input::drop_deep(std::mem::replace(&mut c.arguments, json!({})));
                out.push((c, Some(bad_input::args_error(&why))));
                continue;
            }
            if self.on(Mechanism::FormatRescue) || self.state.text_protocol {
                let n = canonical_name(&c.name, declared);
                if n != c.name {
                    self.events.mechanism(
                        "format_rescue",
                        "alias",
                        json!({"from": c.name, "to": n}),
                    );
                }
                c.arguments = canonical_args(&n, std::mem::take(&mut c.arguments), declared);
                c.name = n;
            }
            out.push((c, None));
        }
        out
    }

    fn handle_reply(&mut self, reply: Reply, tools: &[ToolSpec]) -> Option<RunStatus> {
        let offered: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let Reply {
            content: raw,
            thinking,
            tool_calls,
            done_reason,
            ..
        } = reply;
        let truncated = done_reason.as_deref() == Some("length");
        let native = tool_calls.len();
        let declared = table::specs_for(&self.known_tools());
        let mut calls = self.bounded_calls(tool_calls, &declared);
        let issue = bad_input::screen_text(&raw);
        if let Some(issue) = &issue {
            self.events.mechanism(
                "bad_input",
                "reply_refused",
                json!({"issue": format!("{issue:?}")}),
            );
        }
        // under the text protocol the rescue is how calls come back at all; a reply cut at the
        // output cap is not rescued (a repaired cut call would write a truncated file)
        let rescue_on = self.on(Mechanism::FormatRescue) || self.state.text_protocol;
        if rescue_on && calls.is_empty() && issue.is_none() && !truncated {
            if let Some(rescued) = rescue(&raw, &declared) {
                self.events
                    .mechanism("format_rescue", "rescued", json!({"calls": rescued.len()}));
                calls = self.bounded_calls(rescued, &declared);
            }
        }
        let rescued_text = calls.len() > native;
        let visible = strip_reasoning(&raw);
        // reasoning came back (in `thinking`, or as a wrapper in the text the template opened)
        let reasoned = !thinking.trim().is_empty() || visible.len() != raw.len();
        let content = match &issue {
            Some(i) => bad_input::history_text(&raw, i),
            // kept as the model wrote it (calls written as text included): the server's cache
            // holds the reply's own tokens, and a trimmed or re-encoded copy would no longer
            // match them on the next request
            None if visible.len() == raw.len() => raw.clone(),
            None => visible.trim().to_string(),
        };
        if let (Some(issue), true) = (&issue, calls.is_empty()) {
            return self.on_bad_text(issue, content);
        }
        if is_empty_reply(&content, !calls.is_empty()) {
            if truncated && self.on(Mechanism::Resilience) {
                let lost = Lost::Cut {
                    call: None,
                    thinking: reasoned,
                };
                return self.on_lost(lost, Some(String::new()));
            }
            return self.on_empty_reply(reasoned);
        }
        self.state.empty.on_reply();
        if calls.is_empty() {
            if truncated && self.on(Mechanism::Resilience) {
                let lost = Lost::Cut {
                    call: cut_call(&content),
                    thinking: false,
                };
                return self.on_lost(lost, Some(content));
            }
            self.state.lost.on_ok();
            return self.on_text_reply(content);
        }
        self.state.lost.on_ok();
        self.on_tool_calls(content, calls, &offered, rescued_text)
    }

    /// Empty replies (think-only included).
    fn on_empty_reply(&mut self, think_only: bool) -> Option<RunStatus> {
        // keep the (empty) turn in the history: the conversation the model sees next is then
        // not the one that produced the empty reply
        self.state
            .messages
            .push(Message::assistant(String::new(), vec![]));
        if !self.on(Mechanism::AntiLoop) {
            self.nudge(anti_loop::EMPTY_NUDGE_ABLATED.into());
            return None;
        }
        match self.state.empty.on_empty() {
            EmptyAction::Nudge { level } => {
                self.events.mechanism(
                    "anti_loop",
                    "empty_nudge",
                    json!({"level": level, "think_only": think_only}),
                );
                let next = self.next_action();
                self.nudge(if think_only {
                    anti_loop::think_only_nudge(level, &next)
                } else {
                    anti_loop::empty_nudge(level, &next)
                });
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
    fn on_text_reply(&mut self, content: String) -> Option<RunStatus> {
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
            lrab_util::outln!("{content}");
            return Some(RunStatus::Answered);
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

    /// A reply with tool calls: each is dispatched, answered and logged in order; the round
    /// ends with the state line. `as_text`: the calls were read from the reply's text, which
    /// `content` holds as written.
    fn on_tool_calls(
        &mut self,
        content: String,
        mut calls: Vec<(ToolCall, Option<String>)>,
        offered: &[&str],
        as_text: bool,
    ) -> Option<RunStatus> {
        let turn = self.state.turn;
        for (i, (c, _)) in calls.iter_mut().enumerate() {
            if c.id.is_empty() {
                c.id = format!("call_{turn}_{i}");
            }
        }
        let plain: Vec<ToolCall> = calls.iter().map(|(c, _)| c.clone()).collect();
        self.state.messages.push(if as_text {
            Message::text_calls(content, plain)
        } else {
            Message::assistant(content, plain)
        });
        let mut progress = false;
        let mut after: Vec<String> = Vec::new();
        for (i, (call, refused)) in calls.iter().enumerate() {
            let t = Instant::now();
            let result = match refused {
                Some(text) => super::CallResult::refused_input(text.clone()),
                None => self.dispatch(call, offered, &mut after, i),
            };
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
                .push(Message::tool_result(call, result.text).marked(result.mark));
            if finished {
                return Some(RunStatus::Finished);
            }
        }
        self.append_state_line();
        for a in after {
            self.nudge(a);
        }
        self.stall_check(progress)
    }

    pub(super) fn stall_check(&mut self, progress: bool) -> Option<RunStatus> {
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

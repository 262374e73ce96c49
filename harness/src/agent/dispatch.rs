//! Dispatch: one tool call through the tool table, the chat tier, the anti-loop and the finish
//! gate, answered with a [`CallResult`].

use super::{short, Agent};
use crate::backend::Model;
use crate::mechanisms::anti_loop::{self, signature, LoopVerdict};
use crate::mechanisms::finish_gate::{GateDecision, GateEnv, GateInput, TestOutcome, TestRun};
use crate::mechanisms::repeat_guard::digest;
use crate::mechanisms::security::Access;
use crate::mechanisms::tiering::{chat_refusal, Tier};
use crate::mechanisms::Mechanism;
use crate::messages::{ResultMark, Role, ToolCall};
use crate::shaping::Verdict;
use crate::table::{self, Handler};
use crate::tools::{Effect, ToolOutcome, Toolbox};
use lrab_records::CallOutcome;
use serde_json::json;
use std::time::Duration;

/// The answer to one tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct CallResult {
    /// What the model is told.
    pub text: String,
    /// The call succeeded.
    pub ok: bool,
    /// What it did to the workdir.
    pub effect: Effect,
    /// A mechanism answered instead of the tool.
    pub intercepted: bool,
    /// `finish` was accepted: the run ends.
    pub finished: bool,
    /// What became of the call, for the event log.
    pub outcome: CallOutcome,
    /// The workdir-relative file the call was about, if any.
    pub path: Option<String>,
    /// A guard judged the call no step forward (an edit back to an earlier version).
    pub stalled: bool,
    /// The outcome kept on the tool-result message, for rules that look back.
    pub mark: Option<ResultMark>,
}

impl CallResult {
    /// An answer given without running the tool.
    pub(super) fn not_run(text: String, ok: bool) -> CallResult {
        CallResult {
            text,
            ok,
            effect: Effect::None,
            intercepted: true,
            finished: false,
            outcome: CallOutcome::NotRun,
            path: None,
            stalled: false,
            mark: None,
        }
    }

    /// The answer to a call whose arguments were refused before anything ran.
    pub(super) fn refused_input(text: String) -> CallResult {
        CallResult::not_run(text, false)
    }

    /// The answer of a tool that ran (or was refused by a safety ring).
    fn of_tool(o: ToolOutcome) -> CallResult {
        let outcome = match o
            .refusal
            .as_ref()
            .and_then(lrab_safety::Verdict::to_refusal)
        {
            Some(r) => CallOutcome::Refused(r),
            None => CallOutcome::Ran {
                exit: o.exit,
                timed_out: o.timed_out,
            },
        };
        let mark = result_mark(&o, &outcome);
        CallResult {
            text: o.text,
            ok: o.ok,
            effect: o.effect,
            intercepted: false,
            finished: false,
            outcome,
            path: o.path,
            stalled: false,
            mark,
        }
    }

    /// An answer of the agent's own tools (the plan, finish).
    pub(super) fn own(text: String, ok: bool, finished: bool) -> CallResult {
        CallResult {
            text,
            ok,
            effect: Effect::None,
            intercepted: false,
            finished,
            outcome: CallOutcome::Ran {
                exit: None,
                timed_out: false,
            },
            path: None,
            stalled: false,
            mark: None,
        }
    }

    /// The event-log record of the call.
    pub fn event(&self, call: &ToolCall, turn: u32, took: Duration) -> lrab_records::ToolCall {
        lrab_records::ToolCall {
            turn,
            name: call.name.clone(),
            ok: self.ok,
            ms: took.as_millis() as u64,
            intercepted: self.intercepted,
            args: short(&call.arguments.to_string(), 200),
            outcome: Some(self.outcome.clone()),
            result: Some(self.text.clone()),
        }
    }
}

/// What a tool's outcome means for the rules that look back: a command that ran passed or
/// failed (its verdict first, else its exit; a timeout or an unreadable verdict settles
/// neither), a file call that succeeded with a write changed the workdir; a refusal ran nothing.
fn result_mark(o: &ToolOutcome, outcome: &CallOutcome) -> Option<ResultMark> {
    let CallOutcome::Ran { exit, timed_out } = outcome else {
        return None;
    };
    match o.effect {
        Effect::Exec => match o.verdict {
            Some(Verdict::Passed) => Some(ResultMark::Passed),
            Some(Verdict::Failed) => Some(ResultMark::Failed),
            // a test run whose counts could not be read settles nothing
            Some(Verdict::Unknown) => None,
            None if *timed_out => None,
            None if *exit == Some(0) => Some(ResultMark::Passed),
            None => Some(ResultMark::Failed),
        },
        Effect::Write if o.ok => Some(ResultMark::Changed),
        _ => None,
    }
}

/// Test results keyed by command, valid while the workdir has not changed (a verdict ledger:
/// a pass is reused only while nothing has been written since).
pub(super) type TestLedger = std::collections::HashMap<String, (u64, TestRun)>;

/// What the finish gate sees of the workdir.
struct GateCtx<'a> {
    tools: &'a mut Toolbox,
    timeout: u64,
    world: u64,
    ledger: &'a mut TestLedger,
}

impl GateEnv for GateCtx<'_> {
    fn file_size(&self, rel: &str) -> Option<u64> {
        let abs = self.tools.conf.resolve(rel, Access::Read).ok()?;
        let md = std::fs::metadata(abs).ok()?;
        Some(if md.is_dir() { 1 } else { md.len() })
    }
    fn top_files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.tools.root())
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .filter(|e| e.path().is_file())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
    fn read_text(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.tools.root().join(rel)).ok()
    }
    fn run_test(&mut self, cmd: &str) -> TestRun {
        if let Some((w, run)) = self.ledger.get(cmd) {
            if *w == self.world {
                return run.clone();
            }
        }
        let run = match self.tools.run_command(cmd, self.timeout) {
            Ok((o, _)) => TestRun {
                exit: o.exit,
                timed_out: o.timed_out,
                output: o.output,
            },
            Err(e) => TestRun {
                exit: None,
                timed_out: false,
                output: format!("could not run: {e}"),
            },
        };
        self.ledger
            .insert(cmd.to_string(), (self.world, run.clone()));
        run
    }
}

impl<M: Model> Agent<M> {
    /// Whether an answered call was progress (a new successful call, or a successful write),
    /// remembering its signature (as a sha256 digest: the checkpoint reads the same in any
    /// build).
    pub(super) fn note_call(&mut self, call: &ToolCall, r: &CallResult) -> bool {
        let is_new = self
            .state
            .seen
            .insert(digest(&signature(&call.name, &call.arguments)));
        r.ok && !r.stalled && (is_new || r.effect == Effect::Write)
    }

    /// Execute one call (number `index` of its reply). Nudges that follow the round go to
    /// `after`.
    pub(super) fn dispatch(
        &mut self,
        call: &ToolCall,
        offered: &[&str],
        after: &mut Vec<String>,
        index: usize,
    ) -> CallResult {
        let name = call.name.as_str();
        let def = match table::find(name).filter(|_| self.known_tools().contains(&name)) {
            Some(d) => d,
            None => {
                return CallResult {
                    text: format!(
                        "error: unknown tool '{name}'. Available tools: {}",
                        offered.join(", ")
                    ),
                    ok: false,
                    effect: Effect::None,
                    intercepted: false,
                    finished: false,
                    outcome: CallOutcome::UnknownTool,
                    path: None,
                    stalled: false,
                    mark: None,
                }
            }
        };
        if self.state.tier == Tier::Chat && !def.chat && !matches!(def.handler, Handler::Finish) {
            if let Some(refused) = self.chat_tier(name) {
                return refused;
            }
        }
        if self.on(Mechanism::AntiLoop) {
            if let Some(answer) = self.anti_loop(call, after) {
                return answer;
            }
            if let Some(answer) = self.guard_before(call) {
                return answer;
            }
        }
        let tests_before = self.state.tests.len();
        let world_before = self.state.world;
        let mut result = self.execute_recorded(call, def, index);
        if self.on(Mechanism::AntiLoop) {
            self.state.anti_loop.executed(self.state.world);
            // a test run that reports failures did not succeed, whatever its exit code: its
            // repeat must not be answered as "succeeded"
            let tests_failed = self.state.tests[tests_before..]
                .iter()
                .any(|(_, v)| *v == Verdict::Failed);
            self.state
                .anti_loop
                .outcome(self.state.turn, result.ok && !tests_failed, &result.text);
            self.guard_after(call, &mut result, tests_failed, world_before);
        }
        result
    }

    /// Run a call that passed every check; one that changes the workdir is recorded in the
    /// checkpoint first, so a kill while it runs is resolved on resume (not lost, not
    /// repeated: [`crate::mechanisms::resilience::Inflight`]).
    pub(super) fn execute_recorded(
        &mut self,
        call: &ToolCall,
        def: &'static table::ToolDef,
        index: usize,
    ) -> CallResult {
        let recorded = def.mutates && self.on(Mechanism::Resilience);
        if recorded {
            self.record_inflight(call, def, index);
        }
        let result = self.execute_call(call, def);
        if recorded {
            self.state.inflight = None;
        }
        result
    }

    /// A tool the chat tier does not offer: refused, until the second such call shows the
    /// prompt was real work after all (then the run switches to the task tier).
    fn chat_tier(&mut self, name: &str) -> Option<CallResult> {
        self.state.chat_mutations += 1;
        if self.state.chat_mutations >= 2 && self.on(Mechanism::Tiering) {
            self.state.tier = Tier::Task;
            let system =
                super::offer::system_prompt(&self.cfg, Tier::Task, self.state.text_protocol);
            if let Some(m) = self
                .state
                .messages
                .iter_mut()
                .find(|m| m.role == Role::System)
            {
                m.content = system;
            }
            self.rewrite = Some("tier".into());
            self.events
                .mechanism("tiering", "escalate_to_task", json!({}));
            return None;
        }
        self.events
            .mechanism("tiering", "chat_refused_tool", json!({"tool": name}));
        Some(CallResult::not_run(chat_refusal(name), false))
    }

    /// The anti-loop's answer instead of running the call, if it has one.
    fn anti_loop(&mut self, call: &ToolCall, after: &mut Vec<String>) -> Option<CallResult> {
        let name = call.name.as_str();
        let v =
            self.state
                .anti_loop
                .check(name, &call.arguments, self.state.world, self.state.turn);
        match v {
            LoopVerdict::Execute => None,
            LoopVerdict::SameToolNudge { count } => {
                self.events.mechanism(
                    "anti_loop",
                    "same_tool_nudge",
                    json!({"tool": name, "count": count}),
                );
                let next = self.next_action();
                after.push(anti_loop::same_tool_nudge(name, count, &next));
                None
            }
            LoopVerdict::Intercept { level } => {
                self.events.mechanism(
                    "anti_loop",
                    "intercept",
                    json!({"tool": name, "level": level, "earlier_ok": false}),
                );
                let next = self.next_action();
                Some(CallResult::not_run(
                    anti_loop::intercept_text(level, &next),
                    false,
                ))
            }
            LoopVerdict::Unchanged { level, earlier } => {
                // the earlier identical call succeeded and nothing changed: its result is the
                // truthful answer (ok, nothing re-executed), not a failure. Logged as an
                // interception (nothing ran) so activation counts stay comparable;
                // `earlier_ok` tells the two answers apart.
                self.events.mechanism(
                    "anti_loop",
                    "intercept",
                    json!({"tool": name, "level": level, "earlier_ok": true, "earlier_turn": earlier.turn}),
                );
                let next = self.next_action();
                Some(CallResult::not_run(
                    anti_loop::unchanged_answer(name, &call.arguments, level, &earlier, &next),
                    true,
                ))
            }
            LoopVerdict::Pause { until_turn } | LoopVerdict::Paused { until_turn } => {
                self.events.mechanism(
                    "anti_loop",
                    "pause_tool",
                    json!({"tool": name, "until_turn": until_turn}),
                );
                let next = self.next_action();
                Some(CallResult::not_run(
                    anti_loop::pause_text(name, until_turn, &next),
                    false,
                ))
            }
        }
    }

    pub(super) fn execute_call(&mut self, call: &ToolCall, def: &table::ToolDef) -> CallResult {
        match def.handler {
            Handler::Plan => {
                let (ok, text) = self.state.plan.apply(&call.arguments);
                CallResult::own(text, ok, false)
            }
            Handler::Finish => {
                if self.state.tier == Tier::Chat {
                    return CallResult::own("finished".into(), true, true);
                }
                let (accepted, msg) = if self.on(Mechanism::FinishGate) {
                    self.finish_gate()
                } else {
                    (true, String::new())
                };
                if accepted {
                    let summary = call.arg_str("summary").unwrap_or_default();
                    self.say(&format!(
                        "===== TASK COMPLETE ===== {}",
                        short(&summary, 200)
                    ));
                    CallResult::own("finish accepted".into(), true, true)
                } else {
                    CallResult::own(msg, false, false)
                }
            }
            Handler::Toolbox => {
                let o = self.tools.execute(def.name, &call.arguments);
                self.account(call, def, &o);
                CallResult::of_tool(o)
            }
        }
    }

    /// The loop's bookkeeping after a toolbox call: progress, the change counter, verification.
    fn account(&mut self, call: &ToolCall, def: &table::ToolDef, o: &ToolOutcome) {
        if o.ok && def.progress {
            self.state.productive = true;
        }
        match o.effect {
            Effect::Exec => {
                // a command may have changed files
                self.state.world += 1;
                self.state.productive = true;
                match o.verdict {
                    Some(v) => {
                        self.state.verify.on_test(v);
                        self.state
                            .tests
                            .push((call.arg_str("command").unwrap_or_default(), v));
                    }
                    None if o.ok => self.state.verify.on_exec_ok(),
                    None => {}
                }
            }
            // a write that left the file as it was changes nothing
            Effect::Write if o.ok && def.mutates => {
                self.state.world += 1;
                self.state.verify.on_write();
            }
            Effect::Read if o.ok => self.state.verify.on_read(),
            _ => {}
        }
    }

    /// Whether the task statement (the task message, or a restatement of it in a later
    /// message) lies less than a quarter of the window back: recent enough that a rejection
    /// need not copy it again.
    fn task_in_view(&self) -> bool {
        let head: String = self.state.task.chars().take(200).collect();
        if head.trim().is_empty() {
            return true;
        }
        let near = (self.state.context.num_ctx / 4) as usize;
        let mut since = 0usize;
        for m in self.state.messages.iter().rev() {
            if m.content.contains(head.as_str()) {
                return since < near;
            }
            since += crate::estimate::estimate_message(m);
        }
        false
    }

    /// Run the finish gate: (accepted, rejection message).
    pub(super) fn finish_gate(&mut self) -> (bool, String) {
        // the gate's test commands may write files without a tool call counting the change
        *self.missing.get_mut() = None;
        let input = GateInput {
            task: &self.state.task,
            productive: self.state.productive,
            open_plan_items: self.state.plan.open_items(),
            verify_feedback: self.cfg.ablations.on(Mechanism::VerifyFeedback),
            task_in_view: self.task_in_view(),
        };
        let mut runs: Vec<TestOutcome> = Vec::new();
        let decision = {
            let mut env = GateCtx {
                tools: &mut self.tools,
                timeout: self.cfg.test_timeout_s,
                world: self.state.world,
                ledger: &mut self.ledger,
            };
            self.state.gate.evaluate(&input, &mut env, &mut runs)
        };
        for r in runs {
            self.state.verify.on_test(r.verdict);
            self.state.tests.push((r.command.clone(), r.verdict));
            self.events.mechanism(
                "finish_gate",
                "test_run",
                json!({"command": r.command, "verdict": r.verdict}),
            );
        }
        match decision {
            GateDecision::Accept => {
                self.events.mechanism("finish_gate", "accept", json!({}));
                (true, String::new())
            }
            GateDecision::Reject { check, message } => {
                self.events.mechanism("finish_gate", check, json!({}));
                (false, message)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(effect: Effect, ok: bool, verdict: Option<Verdict>) -> ToolOutcome {
        ToolOutcome {
            text: String::new(),
            ok,
            effect,
            verdict,
            path: None,
            refusal: None,
            exit: None,
            timed_out: false,
        }
    }

    fn ran(exit: Option<i32>, timed_out: bool) -> CallOutcome {
        CallOutcome::Ran { exit, timed_out }
    }

    #[test]
    fn the_mark_is_read_from_the_typed_outcome() {
        let exec = |v| outcome(Effect::Exec, true, v);
        let m = |o: &ToolOutcome, c: &CallOutcome| result_mark(o, c);
        assert_eq!(
            m(&exec(None), &ran(Some(0), false)),
            Some(ResultMark::Passed)
        );
        assert_eq!(
            m(&exec(None), &ran(Some(2), false)),
            Some(ResultMark::Failed)
        );
        // killed by a signal: no exit code, not a timeout
        assert_eq!(m(&exec(None), &ran(None, false)), Some(ResultMark::Failed));
        assert_eq!(m(&exec(None), &ran(None, true)), None);
        // the output's verdict comes before the exit code
        let passed = exec(Some(Verdict::Passed));
        assert_eq!(m(&passed, &ran(Some(1), false)), Some(ResultMark::Passed));
        let failed = exec(Some(Verdict::Failed));
        assert_eq!(m(&failed, &ran(Some(0), false)), Some(ResultMark::Failed));
        assert_eq!(m(&exec(Some(Verdict::Unknown)), &ran(Some(1), false)), None);
        // a write that succeeded changed the workdir; one that failed, or wrote nothing, did not
        let wrote = outcome(Effect::Write, true, None);
        assert_eq!(m(&wrote, &ran(None, false)), Some(ResultMark::Changed));
        assert_eq!(
            m(&outcome(Effect::Write, false, None), &ran(None, false)),
            None
        );
        assert_eq!(
            m(&outcome(Effect::None, true, None), &ran(None, false)),
            None
        );
        // a refusal ran nothing
        let refused = CallOutcome::Refused(lrab_records::Refusal {
            ring: 2,
            reason: "irreversible".into(),
            alternative: None,
            needs_attended: false,
        });
        assert_eq!(m(&exec(None), &refused), None);
        assert_eq!(m(&wrote, &CallOutcome::NotRun), None);
    }
}

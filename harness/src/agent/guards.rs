//! The repeat guard's glue (loops across turns: [`repeat_guard`]) and the per-round state line
//! ([`state_line`]).

use super::{Agent, CallResult};
use crate::backend::Model;
use crate::mechanisms::anti_loop::{self, is_polling, signature, PAUSE_TURNS};
use crate::mechanisms::repeat_guard::{digest, rerun_text, Before, Ran};
use crate::mechanisms::resilience::PROBE_BYTES;
use crate::mechanisms::security::Access;
use crate::mechanisms::state_line::{self, Facts};
use crate::mechanisms::tiering::Tier;
use crate::mechanisms::Mechanism;
use crate::messages::{Role, ToolCall};
use crate::tools::Effect;
use serde_json::json;

impl<M: Model> Agent<M> {
    /// The guard's answer instead of running the call: a pure rerun of a failed call.
    pub(super) fn guard_before(&mut self, call: &ToolCall) -> Option<CallResult> {
        if call.name == "finish" {
            return None;
        }
        let sig = digest(&signature(&call.name, &call.arguments));
        let polling = is_polling(&call.name, &call.arguments);
        match self
            .state
            .guard
            .before(&sig, &call.name, polling, self.state.world)
        {
            Before::Run => None,
            Before::Rerun {
                turn,
                level,
                tail,
                same_files,
            } => {
                self.events.mechanism(
                    "anti_loop",
                    "rerun_refused",
                    json!({"tool": call.name, "level": level, "failed_turn": turn, "same_files": same_files}),
                );
                let next = self.next_action();
                Some(CallResult::not_run(
                    rerun_text(&call.name, turn, level, &tail, same_files, &next),
                    false,
                ))
            }
            Before::Pause => {
                let until = self.state.turn + PAUSE_TURNS;
                self.state.anti_loop.pause(&call.name, until);
                self.events.mechanism(
                    "anti_loop",
                    "pause_tool",
                    json!({"tool": call.name, "until_turn": until, "why": "reruns"}),
                );
                let next = self.next_action();
                Some(CallResult::not_run(
                    anti_loop::pause_text(&call.name, until, &next),
                    false,
                ))
            }
        }
    }

    /// After an executed call: the same failure again, failure streaks, oscillating edits.
    pub(super) fn guard_after(
        &mut self,
        call: &ToolCall,
        result: &mut CallResult,
        tests_failed: bool,
        _world_before: u64,
    ) {
        if call.name == "finish" {
            return;
        }
        let sig = digest(&signature(&call.name, &call.arguments));
        let file = if result.ok && result.effect == Effect::Write {
            result
                .path
                .as_deref()
                .and_then(|p| self.content_digest(p).map(|d| (p, d)))
        } else {
            None
        };
        let after = self.state.guard.after(&Ran {
            sig: &sig,
            tool: &call.name,
            ok: result.ok && !tests_failed,
            result: &result.text,
            world_after: self.state.world,
            turn: self.state.turn,
            file,
            polling: is_polling(&call.name, &call.arguments),
        });
        for (action, detail) in after.fired {
            self.events.mechanism("anti_loop", action, detail);
        }
        // a changed file is what a paused command was waiting for: its rerun tests the change
        if after.changed_file && self.state.anti_loop.lift("run_shell") {
            self.events.mechanism(
                "anti_loop",
                "pause_lifted",
                json!({"tool": "run_shell", "by": call.name}),
            );
        }
        if after.pause {
            let until = self.state.turn + PAUSE_TURNS;
            self.state.anti_loop.pause(&call.name, until);
        }
        for n in after.notes {
            result.text.push('\n');
            result.text.push_str(&n);
        }
        result.stalled |= after.no_progress;
    }

    /// sha256 of a workdir file's content (files too large to hash are left out).
    fn content_digest(&self, rel: &str) -> Option<String> {
        let abs = self.tools.conf.resolve(rel, Access::Read).ok()?;
        let md = std::fs::metadata(&abs).ok()?;
        if !md.is_file() || md.len() > PROBE_BYTES {
            return None;
        }
        std::fs::read(&abs).ok().map(|b| lrab_util::sha256_hex(&b))
    }

    /// End the round's last tool result with the state line (task tier).
    pub(super) fn append_state_line(&mut self) {
        if !self.on(Mechanism::StateLine) || self.state.tier != Tier::Task {
            return;
        }
        let missing = self.missing_artifacts();
        // the time of the last checkpoint: close enough, and no extra clock reading
        let minutes_left = self
            .state
            .clock
            .budget_s
            .map(|b| ((b - self.state.elapsed_s) / 60.0).max(0.0));
        let items = &self.state.plan.items;
        let facts = Facts {
            turn: self.state.turn,
            max_turns: self.cfg.max_turns,
            plan: (items.iter().filter(|i| i.done).count(), items.len()),
            named: self.named.len(),
            missing,
            last_test: self.state.tests.last().map(|(_, v)| *v),
            minutes_left: if self.on(Mechanism::Clock) {
                minutes_left
            } else {
                None
            },
        };
        if !state_line::worth_showing(self.state_shown.as_ref(), &facts) {
            return;
        }
        let line = state_line::render(&facts);
        self.state_shown = Some(facts);
        if let Some(last) = self
            .state
            .messages
            .last_mut()
            .filter(|m| m.role == Role::Tool)
        {
            last.content.push('\n');
            last.content.push_str(&line);
        }
    }
}

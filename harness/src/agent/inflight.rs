//! The record of a running call: written into the checkpoint just before a call that changes
//! the workdir runs, cleared when it returns. A kill in between leaves the record, and the
//! resume decides from the workdir what became of the call ([`resilience::resolve`]): a file
//! call whose file changed took effect and is not run again; one whose file is unchanged never
//! took effect and runs now, once; a command is reported as interrupted and not rerun. The
//! calls of the same reply that had not started are answered "not run".

use super::{Agent, CallResult};
use crate::backend::Model;
use crate::mechanisms::resilience::{
    self, interrupted_command_text, not_started_text, probe, took_effect_text, FileProbe, Inflight,
    Resolution,
};
use crate::mechanisms::security::Access;
use crate::messages::{Message, Role, ToolCall};
use crate::table::{self, Handler};
use crate::tools::Effect;
use lrab_records::Event;
use serde_json::json;
use std::time::Duration;

impl<M: Model> Agent<M> {
    fn probe_path(&self, rel: &str) -> Option<FileProbe> {
        let abs = self.tools.conf.resolve(rel, Access::Write).ok()?;
        Some(probe(&abs, rel))
    }

    /// Record `call` (number `index` of its reply) in the checkpoint before it runs.
    pub(super) fn record_inflight(&mut self, call: &ToolCall, def: &table::ToolDef, index: usize) {
        let file_tool = def.handler == Handler::Toolbox && def.name != "run_shell";
        let target = if file_tool {
            call.arg_str("path").and_then(|p| self.probe_path(&p))
        } else {
            None
        };
        self.state.inflight = Some(Inflight {
            turn: self.state.turn,
            index,
            call: call.clone(),
            target,
            file_tool,
        });
        self.save();
    }

    /// On resume: settle a call that was cut off, and finish its turn.
    pub(super) fn resolve_inflight(&mut self) {
        let Some(rec) = self.state.inflight.take() else {
            return;
        };
        let reply_calls: Vec<ToolCall> = self
            .state
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(|m| m.tool_calls.clone())
            .unwrap_or_default();
        if reply_calls.get(rec.index).map(|c| &c.id) != Some(&rec.call.id) {
            // the record does not belong to the history it was saved with: nothing to settle
            return;
        }
        let now = rec.target.as_ref().and_then(|t| self.probe_path(&t.path));
        let resolution = resilience::resolve(&rec, now.as_ref());
        self.events.mechanism(
            "resilience",
            "inflight",
            json!({"tool": rec.call.name, "turn": rec.turn, "resolution": format!("{resolution:?}")}),
        );
        let call = rec.call.clone();
        let result = match resolution {
            Resolution::TookEffect => {
                self.state.world += 1;
                self.state.productive = true;
                self.state.verify.on_write();
                let mut r = CallResult::own(took_effect_text(&rec, now.as_ref()), true, false);
                r.effect = Effect::Write;
                r
            }
            Resolution::NotYet => match table::find(&call.name) {
                Some(def) => self.execute_recorded(&call, def, rec.index),
                None => CallResult::not_run(not_started_text(), false),
            },
            Resolution::Unknown => {
                // a command may have changed anything
                self.state.world += 1;
                CallResult::not_run(interrupted_command_text(), false)
            }
        };
        // an identical repeat of a call that took effect is answered with this result
        self.state.anti_loop.executed(self.state.world);
        self.state
            .anti_loop
            .outcome(self.state.turn, result.ok, &result.text);
        self.note_call(&call, &result);
        self.finish_interrupted(&call, result, &reply_calls[rec.index + 1..]);
    }

    /// Answer the settled call and the calls after it, and close the turn.
    fn finish_interrupted(&mut self, call: &ToolCall, result: CallResult, later: &[ToolCall]) {
        let turn = self.state.turn;
        self.state.tool_calls += 1;
        self.events
            .emit(Event::ToolCall(result.event(call, turn, Duration::ZERO)));
        self.state
            .messages
            .push(Message::tool_result(call, result.text).marked(result.mark));
        for c in later {
            let r = CallResult::not_run(not_started_text(), false);
            self.events
                .emit(Event::ToolCall(r.event(c, turn, Duration::ZERO)));
            self.state.messages.push(Message::tool_result(c, r.text));
        }
        self.state.turn += 1;
        self.save();
    }
}

//! Replies that carry nothing usable: a call the server could not parse, a reply cut at the
//! output cap ([`reply_failures`]), a reply that is not readable text ([`bad_input`]). Each
//! changes the conversation so the next request is not the one that failed.

use super::{Agent, RunStatus};
use crate::backend::Model;
use crate::mechanisms::anti_loop::EMPTY_NUDGE_ABLATED;
use crate::mechanisms::bad_input::{self, TextIssue};
use crate::mechanisms::reply_failures::{Action, Lost};
use crate::mechanisms::Mechanism;
use crate::messages::Message;
use serde_json::json;

/// Characters of a cut-off reply kept in the history (its head: what the model had begun).
const CUT_KEPT: usize = 1500;

impl<M: Model> Agent<M> {
    /// A lost reply. `kept` is the reply's text when it came back (stored clipped), `None`
    /// when the server kept nothing (an unparsable call).
    pub(super) fn on_lost(&mut self, lost: Lost, kept: Option<String>) -> Option<RunStatus> {
        if let Some(text) = kept {
            let text = lrab_util::head_tail(&text, CUT_KEPT, CUT_KEPT - 200, |cut| {
                format!("[… {cut} characters cut off at the output limit …]")
            });
            self.state.messages.push(Message::assistant(text, vec![]));
        }
        let (kind, detail) = match &lost {
            Lost::Unparsable(e) => (
                "unparsable_call",
                json!({"error": lrab_util::clip_chars(e, 300)}),
            ),
            Lost::Cut { call, thinking } => (
                "truncated",
                json!({"tool": call.as_ref().map(|c| c.tool.clone()), "path": call.as_ref().and_then(|c| c.path.clone()), "thinking": thinking}),
            ),
        };
        self.events.mechanism("resilience", kind, detail);
        if !self.on(Mechanism::Resilience) {
            self.nudge(EMPTY_NUDGE_ABLATED.into());
            return None;
        }
        let next = self.next_action();
        match self.state.lost.on_lost(&lost, &next, self.cfg.num_predict) {
            Action::Nudge(t) => self.nudge(t),
            Action::CompactThenNudge(t) => {
                self.compact_now("lost_replies");
                self.nudge(t);
            }
            Action::GiveUp => {
                self.events
                    .mechanism("resilience", "lost_give_up", json!({}));
                return Some(RunStatus::Stalled);
            }
        }
        None
    }

    /// A reply that was not read (binary, far too long, nested too deep) and carried no call.
    pub(super) fn on_bad_text(&mut self, issue: &TextIssue, kept: String) -> Option<RunStatus> {
        self.state.messages.push(Message::assistant(kept, vec![]));
        let next = self.next_action();
        self.nudge(bad_input::text_issue_nudge(issue, &next));
        self.stall_check(false)
    }
}

//! What the model knows from the conversation: which steps its earlier calls carried out (and
//! with which content), how the last call was answered, whether it is in a loop, whether it
//! stopped and was asked to go on. Read afresh on every request; the server keeps no state.

use super::steps::{attribute, narration_re, written_variant, Action, Variants};
use super::{fnv, FNV0};
use crate::convo::{Conv, Msg};
use crate::feedback::{classify, Feedback};
use crate::task::{Step, TaskPlan};
use crate::toolkit::Toolkit;

/// The model's reading of its own history.
pub struct Hist {
    pub done: Vec<bool>,
    pub attempts: Vec<u32>,
    /// What the last write of each step put on disk (None = the reference content).
    pub variant: Vec<Option<usize>>,
    pub finish_attempts: u32,
    pub repeat_run: u32,
    pub last: Option<Msg>,
    pub last_fb: Feedback,
    pub last_fb_text: String,
    /// The intent of the latest own turn.
    pub last_action: Option<Action>,
    /// The latest own turn stopped (text only, no call, no step narrated) and a user message
    /// that is not a tool result came after it.
    pub nudged: bool,
    /// Hash of the model's own turns and of the feedback signals, for the draws.
    pub h: u64,
}

/// A user message that carries a tool result (some arms send results that way).
pub fn is_tool_result(m: &Msg) -> bool {
    m.role == "tool"
        || (m.role == "user" && m.content.trim_start().starts_with("[Tool result for "))
}

fn signature(m: &Msg) -> String {
    if m.calls.is_empty() {
        m.content.clone()
    } else {
        m.calls
            .iter()
            .map(|c| format!("{}{}", c.name, c.args))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Reads the conversation from the task statement at `start` on.
pub fn read(conv: &Conv, plan: &TaskPlan, kit: &Toolkit, vars: &Variants, start: usize) -> Hist {
    let n = plan.steps.len();
    let mut h = Hist {
        done: vec![false; n],
        attempts: vec![0; n],
        variant: vec![None; n],
        finish_attempts: 0,
        repeat_run: 0,
        last: None,
        last_fb: Feedback::default(),
        last_fb_text: String::new(),
        last_action: None,
        nudged: false,
        h: FNV0,
    };
    // a summary the model wrote of its own earlier work lists the steps it carried out
    for k in super::summary_done_steps(&conv.messages[start].content, plan) {
        h.done[k] = true;
    }
    let mut last_sig: Option<String> = None;
    let msgs = &conv.messages[start..];
    let mut i = 0;
    while i < msgs.len() {
        let m = &msgs[i];
        i += 1;
        if m.role != "assistant" {
            continue;
        }
        let mut fb_text = String::new();
        let mut tool_role = false;
        let mut user_nudge = false;
        while i < msgs.len() && msgs[i].role != "assistant" {
            if !fb_text.is_empty() {
                fb_text.push('\n');
            }
            // a result that repeats the call's own arguments is read without the echo
            fb_text.push_str(&crate::feedback::echo::strip(&msgs[i].content, &m.calls));
            let result = is_tool_result(&msgs[i]);
            tool_role |= result;
            user_nudge |= msgs[i].role == "user" && !result && !plan.stated_in(&msgs[i].content);
            i += 1;
        }
        let fb = classify(&fb_text);
        let sig = signature(m);
        if last_sig.as_deref() == Some(sig.as_str()) && !m.calls.is_empty() {
            h.repeat_run += 1;
        } else {
            h.repeat_run = 1;
        }
        h.h = fnv(h.h, sig.as_bytes());
        h.h = fnv(
            h.h,
            &[
                fb.present as u8,
                fb.not_run as u8,
                fb.error as u8,
                fb.precise as u8,
                fb.repeat_warning as u8,
                fb.not_done as u8,
            ],
        );
        if fb.already_done {
            h.h = fnv(h.h, b"already_done");
        }
        let action = attribute(m, plan, kit, vars);
        h.last_action = action.map(|(a, _)| a);
        let narrated = narration_re().is_match(m.content.trim_start());
        h.nudged = m.calls.is_empty() && !narrated && action.is_none() && user_nudge;
        match action {
            Some((Action::Step(k), right)) => {
                // reading a file the plan writes (what an agent may demand before an
                // overwrite) is not an attempt at writing it
                let reading = matches!(plan.steps[k], Step::Write { .. })
                    && m.calls
                        .first()
                        .is_some_and(|c| kit.read.as_ref().is_some_and(|r| r.name == c.name));
                h.attempts[k] += u32::from(!reading);
                let text_form = m.calls.is_empty();
                let ran = fb.present && !fb.not_run && (!text_form || (tool_role && narrated));
                // not run again, but the answer says the call's effect is already in place
                let in_place = fb.already_done && !text_form;
                if right && (ran || in_place) {
                    match &plan.steps[k] {
                        Step::Write { .. } => {
                            if !fb.error {
                                h.done[k] = true;
                                h.variant[k] = m
                                    .calls
                                    .first()
                                    .and_then(|c| written_variant(c, plan, vars, k))
                                    .flatten();
                            }
                        }
                        Step::Run { .. } => {
                            if !fb.error || (ran && h.attempts[k] >= 2) {
                                h.done[k] = true;
                            }
                        }
                    }
                }
            }
            Some((Action::Finish, _)) => h.finish_attempts += 1,
            None => {}
        }
        last_sig = Some(sig);
        h.last = Some(m.clone());
        h.last_fb = fb;
        h.last_fb_text = fb_text;
    }
    h
}

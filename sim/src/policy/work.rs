//! The task policy: given the conversation of a recognised task, the next turn.
//!
//! Order of decisions: go on after a nudge (or not); fix a file an error names; stay in or
//! leave a loop; pick the next step (lost-in-the-middle may hide one); draw a failure form;
//! write the step's content, correct or degraded.

use super::forms::{self, finish_rejected, Decide};
use super::history;
use super::steps::{canonical, canonical_name, write_call, Action, Variants};
use super::{draw, fnv, Env, Turn, FNV0};
use crate::convo::{tokens_of, Conv};
use crate::feedback::mentions;
use crate::profile::{FailureForm, Prompt};
use crate::task::{Step, TaskPlan};
use crate::toolkit::Toolkit;

/// The run's fixed draws (the hash every draw of this model on this task starts from) and
/// the degraded variants they pick.
fn fixed(env: &Env, conv: &Conv, plan: &TaskPlan) -> (u64, Variants) {
    let mut h = fnv(FNV0, &env.seed.to_le_bytes());
    h = fnv(h, &conv.seed.unwrap_or(0).to_le_bytes());
    h = fnv(h, env.model.name.as_bytes());
    h = fnv(h, plan.id.as_bytes());
    let vars = Variants::of(plan, |k| draw(fnv(h, &(k as u64).to_le_bytes()), "variant"));
    (h, vars)
}

/// Which steps the model's own turns carried out (for a summary of its work).
pub fn done_steps(env: &Env, conv: &Conv, plan: &TaskPlan, at: usize) -> Vec<bool> {
    let (_, vars) = fixed(env, conv, plan);
    history::read(conv, plan, &Toolkit::detect(&conv.tools), &vars, at).done
}

/// Tokens of the request's opening: the tool definitions and every message up to and including
/// the task statement at `at` (counted like the whole prompt).
fn opening_tokens(conv: &Conv, at: usize) -> u64 {
    let chars: u64 = conv.messages[..=at.min(conv.messages.len().saturating_sub(1))]
        .iter()
        .map(|m| {
            m.content.len() as u64
                + 16
                + m.calls
                    .iter()
                    .map(|c| (c.name.len() + c.args.to_string().len()) as u64)
                    .sum::<u64>()
        })
        .sum();
    chars.div_ceil(4) + conv.tools_tokens()
}

pub fn turn(env: &Env, conv: &Conv, plan: &TaskPlan, at: usize) -> Turn {
    let kit = Toolkit::detect(&conv.tools);
    let prof = &env.model.profile;
    let oracle = prof.is_oracle();
    let (static_h, vars) = fixed(env, conv, plan);
    let mut h = static_h;
    let hist = history::read(conv, plan, &kit, &vars, at);
    h = fnv(h, &hist.h.to_le_bytes());
    let d = Decide {
        prof,
        prompt: Prompt {
            ctx: conv.prompt_tokens(),
            opening: opening_tokens(conv, at),
            tools: kit.count,
        },
        h,
    };
    let n = plan.steps.len();
    let react = &prof.reactions;
    let sticky =
        |k: usize| draw(fnv(static_h, &(k as u64).to_le_bytes()), "persist") < react.persist;
    // the content a (re)write of step k puts down: the reference, or the same degraded
    // variant again when this model keeps that error whatever it is told
    let rewrite = |k: usize| -> Option<crate::convo::Call> {
        match (&plan.steps[k], hist.variant[k]) {
            (Step::Write { .. }, Some(v)) if sticky(k) => {
                let dv = &vars.0[k][v];
                write_call(&dv.path, &dv.bytes, &kit)
            }
            (s, _) => canonical(s, &kit),
        }
    };

    // 0. after stopping, a message that only asks to go on works with a calibrated chance
    if hist.nudged && !oracle && draw(d.h, "nudge") >= react.nudge_continue {
        let mut t = Turn::text(forms::ABANDON_TEXT);
        t.form = Some(FailureForm::Abandon);
        return t;
    }

    // 1. an error (or a turned-down finish) that names a file of the plan: write it again
    let fb = &hist.last_fb;
    let rejected = finish_rejected(hist.last_action, fb);
    if (fb.error && (fb.precise || matches!(hist.last_action, Some(Action::Step(_))))) || rejected {
        let named = |k: usize| {
            hist.attempts[k] < 12
                && (hist.attempts[k] >= 1 || rejected)
                && plan.steps[k].path().is_some_and(|p| {
                    mentions(&hist.last_fb_text, p)
                        || hist.variant[k]
                            .is_some_and(|v| mentions(&hist.last_fb_text, &vars.0[k][v].path))
                })
        };
        let target = match hist.last_action {
            Some(Action::Step(k)) if named(k) => Some(k),
            // after a turned-down finish: a named file not written yet, or written wrongly
            _ => (0..n)
                .find(|&k| named(k) && (!rejected || !hist.done[k] || hist.variant[k].is_some())),
        };
        if let Some(w) = target {
            let p = if fb.precise {
                react.fix_precise
            } else {
                react.fix_generic
            };
            if draw(d.h, "fix") < p {
                if let Some(call) = rewrite(w) {
                    return forms::step_turn(conv, plan, w, call);
                }
            }
        }
        if rejected && !oracle && draw(d.h, "rejected") >= react.nudge_continue {
            // told it is not done, the model stops instead of going on
            let mut t = Turn::text(forms::ABANDON_TEXT);
            t.form = Some(FailureForm::Abandon);
            return t;
        }
    }

    // 2. inside a loop of step calls: keep repeating or break out, depending on the answer
    if let (Some(last), false) = (&hist.last, oracle) {
        if hist.repeat_run >= 2
            && hist.repeat_run < 12
            && !last.calls.is_empty()
            && matches!(hist.last_action, Some(Action::Step(_)) | None)
        {
            let stay = if fb.not_run {
                react.loop_stay_blocked
            } else if fb.repeat_warning {
                react.loop_stay_warned
            } else {
                react.loop_stay_plain
            };
            if draw(d.h, "loop") < stay {
                return forms::repeat_of(last, conv);
            }
        }
    }

    // 3. the next step; lost-in-the-middle may hide one once the task statement lies far
    //    back in the context (a restatement of the task brings it back)
    let last_statement = (at..conv.messages.len())
        .rev()
        .find(|&i| conv.messages[i].role == "user" && plan.stated_in(&conv.messages[i].content))
        .unwrap_or(at);
    let distance: u64 = conv.messages[last_statement + 1..]
        .iter()
        .map(|m| {
            tokens_of(&m.content)
                + m.calls
                    .iter()
                    .map(|c| tokens_of(&c.args.to_string()))
                    .sum::<u64>()
        })
        .sum();
    let forgotten = |k: usize| {
        !oracle
            && k > 0
            && k + 1 < n
            && distance > react.lost_ctx_threshold
            && draw(fnv(static_h, &(k as u64).to_le_bytes()), "lost")
                < d.rate(FailureForm::LostInMiddle)
    };
    let next = (0..n).find(|&k| {
        !hist.done[k]
            && hist.attempts[k] < 3
            && canonical_name(&plan.steps[k], &kit).is_some()
            && !forgotten(k)
    });

    let Some(k) = next else {
        return forms::finish_turn(plan, &kit, hist.finish_attempts < 4);
    };
    let call = canonical(&plan.steps[k], &kit).expect("feasible step has a call");
    let required = conv
        .tools
        .iter()
        .find(|t| t.function.name == call.name)
        .is_some_and(|t| !t.required_params().is_empty());
    let form = if oracle {
        None
    } else {
        forms::pick(&d, hist.last.as_ref(), &kit, true, required)
    };
    let mut t = match form {
        None => {
            let mut t = forms::step_turn(conv, plan, k, call.clone());
            // 4. the content of a write: the reference, or a degraded version
            if let Step::Write { .. } = &plan.steps[k] {
                let done_share = hist.done.iter().filter(|x| **x).count() as f64 / n.max(1) as f64;
                let p = prof.content_rate(plan.tier, done_share);
                let choices = &vars.0[k];
                if !oracle && !choices.is_empty() && draw(d.h, "content") < p {
                    let v = &choices[((draw(d.h, "content-kind") * choices.len() as f64) as usize)
                        .min(choices.len() - 1)];
                    if let Some(c) = write_call(&v.path, &v.bytes, &kit) {
                        t.calls = vec![c];
                        t.form = Some(FailureForm::ContentError);
                        t.content_kind = Some(v.kind);
                    }
                }
            }
            t
        }
        Some(f) => forms::failure_turn(
            f,
            conv,
            plan,
            &kit,
            hist.last.as_ref(),
            env.model.profile.family,
            k,
            call,
            d.h,
        ),
    };
    if !oracle {
        forms::truncate_at_limit(&mut t, conv);
    }
    t
}

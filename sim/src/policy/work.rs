//! The task policy: given the conversation of a recognised task, the next turn.
//!
//! Order of decisions: go on after a nudge (or not); fix a file an error names; stay in or
//! leave a loop; pick the next step (lost-in-the-middle may hide one); draw a failure form;
//! write the step's content, correct or degraded.

use super::forms::{self, finish_rejected, Decide};
use super::history;
use super::steps::{canonical, canonical_name, write_call, Action, Variants};
use super::strata::Strata;
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
    history::read(conv, plan, &Toolkit::for_task(&conv.tools), &vars, at).done
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

/// One request's reading: the conversation, the plan, what the model knows of its history,
/// and the draws of this turn.
struct Ctx<'a> {
    conv: &'a Conv,
    plan: &'a TaskPlan,
    kit: Toolkit,
    hist: history::Hist,
    vars: Variants,
    d: Decide<'a>,
    static_h: u64,
    oracle: bool,
    /// The message that states the task.
    at: usize,
}

/// The model's next turn on the task stated at message `at`.
pub fn turn(env: &Env, conv: &Conv, plan: &TaskPlan, at: usize) -> Turn {
    let c = Ctx::read(env, conv, plan, at);
    let mut t = c
        .after_stop()
        .or_else(|| c.fix_named_file())
        .or_else(|| c.stay_in_loop())
        .unwrap_or_else(|| c.next_turn());
    if !c.oracle {
        forms::truncate_at_limit(&mut t, conv);
    }
    t
}

/// The turn of a model that stops (no call, no completion claim).
fn abandon() -> Turn {
    let mut t = Turn::text(forms::ABANDON_TEXT);
    t.form = Some(FailureForm::Abandon);
    t
}

impl<'a> Ctx<'a> {
    fn read(env: &'a Env, conv: &'a Conv, plan: &'a TaskPlan, at: usize) -> Ctx<'a> {
        let kit = Toolkit::for_task(&conv.tools);
        let prof = &env.model.profile;
        let (static_h, vars) = fixed(env, conv, plan);
        let hist = history::read(conv, plan, &kit, &vars, at);
        let d = Decide {
            prof,
            prompt: Prompt {
                ctx: conv.prompt_tokens(),
                opening: opening_tokens(conv, at),
                tools: kit.count,
            },
            h: fnv(static_h, &hist.h.to_le_bytes()),
            strata: Strata::of(env, conv.seed, plan),
            turn: conv.messages[at..]
                .iter()
                .filter(|m| m.role == "assistant")
                .count() as u64,
        };
        Ctx {
            conv,
            plan,
            kit,
            hist,
            vars,
            d,
            static_h,
            oracle: prof.is_oracle(),
            at,
        }
    }

    fn react(&self) -> &crate::profile::Reactions {
        &self.d.prof.reactions
    }

    /// A fixed draw of step `k` (stratified by step: the row's tasks share out which steps
    /// stick or are lost).
    fn step_draw(&self, k: usize, label: &str) -> f64 {
        let u = draw(fnv(self.static_h, &(k as u64).to_le_bytes()), label);
        self.d.strata.draw(label, k as u64, u)
    }

    /// The content a (re)write of step k puts down: the reference, or the same degraded
    /// variant again when this model keeps that error whatever it is told.
    fn rewrite(&self, k: usize) -> Option<crate::convo::Call> {
        match (&self.plan.steps[k], self.hist.variant[k]) {
            (Step::Write { .. }, Some(v))
                if self.step_draw(k, "persist") < self.react().persist =>
            {
                let dv = &self.vars.0[k][v];
                write_call(&dv.path, &dv.bytes, &self.kit)
            }
            (s, _) => canonical(s, &self.kit),
        }
    }

    /// 0. After stopping, a message that only asks to go on works with a calibrated chance.
    fn after_stop(&self) -> Option<Turn> {
        (self.hist.nudged && !self.oracle && self.d.draw("nudge") >= self.react().nudge_continue)
            .then(abandon)
    }

    /// 1. An error (or a turned-down finish) that names a file of the plan: write it again.
    fn fix_named_file(&self) -> Option<Turn> {
        let (hist, fb) = (&self.hist, &self.hist.last_fb);
        let rejected = finish_rejected(hist.last_action, fb);
        let step_failed = matches!(hist.last_action, Some(Action::Step(_)));
        if !((fb.error && (fb.precise || step_failed)) || rejected) {
            return None;
        }
        if let Some(w) = self.named_target(rejected) {
            let react = self.react();
            let p = if fb.precise {
                react.fix_precise
            } else {
                react.fix_generic
            };
            if self.d.draw("fix") < p {
                if let Some(call) = self.rewrite(w) {
                    return Some(forms::step_turn(self.conv, self.plan, w, call));
                }
            }
        }
        // told it is not done, the model may stop instead of going on
        (rejected && !self.oracle && self.d.draw("rejected") >= self.react().nudge_continue)
            .then(abandon)
    }

    /// The step whose file the last feedback names: the last step, or after a turned-down
    /// finish a named file not written yet, or written wrongly.
    fn named_target(&self, rejected: bool) -> Option<usize> {
        let hist = &self.hist;
        let named = |k: usize| {
            hist.attempts[k] < 12
                && (hist.attempts[k] >= 1 || rejected)
                && self.plan.steps[k].path().is_some_and(|p| {
                    mentions(&hist.last_fb_text, p)
                        || hist.variant[k]
                            .is_some_and(|v| mentions(&hist.last_fb_text, &self.vars.0[k][v].path))
                })
        };
        match hist.last_action {
            Some(Action::Step(k)) if named(k) => Some(k),
            _ => (0..self.plan.steps.len())
                .find(|&k| named(k) && (!rejected || !hist.done[k] || hist.variant[k].is_some())),
        }
    }

    /// 2. Inside a loop of step calls: keep repeating or break out, depending on the answer.
    fn stay_in_loop(&self) -> Option<Turn> {
        let (hist, fb, react) = (&self.hist, &self.hist.last_fb, self.react());
        let last = hist.last.as_ref().filter(|_| !self.oracle)?;
        let looping = hist.repeat_run >= 2
            && hist.repeat_run < 12
            && !last.calls.is_empty()
            && matches!(hist.last_action, Some(Action::Step(_)) | None);
        if !looping {
            return None;
        }
        let stay = if fb.not_run {
            react.loop_stay_blocked
        } else if fb.repeat_warning {
            react.loop_stay_warned
        } else {
            react.loop_stay_plain
        };
        (self.d.draw("loop") < stay).then(|| forms::repeat_of(last, self.conv))
    }

    /// Tokens since the task was last stated (a restatement brings it back into view).
    fn distance_from_statement(&self, at: usize) -> u64 {
        let msgs = &self.conv.messages;
        let last_statement = (at..msgs.len())
            .rev()
            .find(|&i| msgs[i].role == "user" && self.plan.stated_in(&msgs[i].content))
            .unwrap_or(at);
        msgs[last_statement + 1..]
            .iter()
            .map(|m| {
                tokens_of(&m.content)
                    + m.calls
                        .iter()
                        .map(|c| tokens_of(&c.args.to_string()))
                        .sum::<u64>()
            })
            .sum()
    }

    /// 3. The next step; lost-in-the-middle may hide one once the task statement lies far
    ///    back in the context.
    fn next_step(&self, at: usize) -> Option<usize> {
        let n = self.plan.steps.len();
        let distance = self.distance_from_statement(at);
        let forgotten = |k: usize| {
            !self.oracle
                && k > 0
                && k + 1 < n
                && distance > self.react().lost_ctx_threshold
                && self.step_draw(k, "lost") < self.d.rate(FailureForm::LostInMiddle)
        };
        (0..n).find(|&k| {
            !self.hist.done[k]
                && self.hist.attempts[k] < 3
                && canonical_name(&self.plan.steps[k], &self.kit).is_some()
                && !forgotten(k)
        })
    }

    /// The next step's turn (a failure form may replace it), or the finish when none is left.
    fn next_turn(&self) -> Turn {
        let Some(k) = self.next_step(self.at) else {
            return forms::finish_turn(self.plan, &self.kit, self.hist.finish_attempts < 4);
        };
        let call = canonical(&self.plan.steps[k], &self.kit).expect("feasible step has a call");
        let required = self
            .conv
            .tools
            .iter()
            .find(|t| t.function.name == call.name)
            .is_some_and(|t| !t.required_params().is_empty());
        let form = if self.oracle {
            None
        } else {
            forms::pick(&self.d, self.hist.last.as_ref(), &self.kit, true, required)
        };
        match form {
            None => self.step_with_content(k, call),
            Some(f) => forms::failure_turn(
                f,
                self.conv,
                self.plan,
                &self.kit,
                self.hist.last.as_ref(),
                self.d.prof.family,
                k,
                call,
                self.d.h,
            ),
        }
    }

    /// 4. The turn of step `k`; a write puts down the reference or a degraded version.
    fn step_with_content(&self, k: usize, call: crate::convo::Call) -> Turn {
        let mut t = forms::step_turn(self.conv, self.plan, k, call);
        if self.oracle || !matches!(self.plan.steps[k], Step::Write { .. }) {
            return t;
        }
        let n = self.plan.steps.len();
        let done_share = self.hist.done.iter().filter(|x| **x).count() as f64 / n.max(1) as f64;
        let p = self.d.prof.content_rate(self.plan.tier, done_share);
        let choices = &self.vars.0[k];
        if choices.is_empty() || self.d.draw("content") >= p {
            return t;
        }
        let i = ((draw(self.d.h, "content-kind") * choices.len() as f64) as usize)
            .min(choices.len() - 1);
        if let Some(c) = write_call(&choices[i].path, &choices[i].bytes, &self.kit) {
            t.calls = vec![c];
            t.form = Some(FailureForm::ContentError);
            t.content_kind = Some(choices[i].kind);
        }
        t
    }
}

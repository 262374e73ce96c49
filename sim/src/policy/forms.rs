//! The turns of the failure forms, and the turns every step and finish share.

use serde_json::Value;

use super::steps::{narration, Action};
use super::strata::Strata;
use super::{draw, Turn, FINISH_TEXT};
use crate::convo::{Call, Conv, Msg};
use crate::dialect::{self, Family};
use crate::profile::{FailureForm, Profile, Prompt};
use crate::task::{Step, TaskPlan};
use crate::toolkit::{args_for, Bound, Toolkit};

/// What a stopping model says (no call, no completion claim).
pub const ABANDON_TEXT: &str = "I have made a start on this task. I will stop here for now.";

/// Per-decision context.
pub struct Decide<'a> {
    pub prof: &'a Profile,
    pub prompt: Prompt,
    pub h: u64,
    /// The row's strata and the model's turn they are drawn at.
    pub strata: Strata,
    pub turn: u64,
}

impl Decide<'_> {
    pub fn rate(&self, f: FailureForm) -> f64 {
        self.prof.rate(f, self.prompt)
    }

    /// The uniform of decision `label` at this turn (stratified over the row's tasks).
    pub fn draw(&self, label: &str) -> f64 {
        self.strata.draw(label, self.turn, draw(self.h, label))
    }
}

/// Draws the per-turn form (at most one), among those that can apply now.
pub fn pick(
    d: &Decide,
    last: Option<&Msg>,
    kit: &Toolkit,
    work_left: bool,
    required_args: bool,
) -> Option<FailureForm> {
    use FailureForm::*;
    let u = d.draw("form");
    let mut acc = 0.0;
    for f in FailureForm::PER_TURN {
        let applicable = match f {
            RepeatCall => last.is_some_and(|m| !m.calls.is_empty()),
            WrongTool => kit.count >= 2 && work_left,
            BadArgs => required_args && work_left,
            _ => work_left,
        };
        if !applicable {
            continue;
        }
        acc += d.rate(f);
        if u < acc {
            return Some(f);
        }
    }
    None
}

fn thinking_for(conv: &Conv, text: &str) -> Option<String> {
    conv.think.then(|| text.to_string())
}

/// The turn that carries out step `k` with `call`.
pub fn step_turn(conv: &Conv, plan: &TaskPlan, k: usize, call: Call) -> Turn {
    Turn {
        thinking: thinking_for(
            conv,
            &format!("The next thing to do is step {} of the plan.", k + 1),
        ),
        content: narration(plan, k),
        calls: vec![call],
        done_reason: "stop",
        ..Default::default()
    }
}

/// The previous turn again, identically.
pub fn repeat_of(last: &Msg, conv: &Conv) -> Turn {
    Turn {
        thinking: thinking_for(conv, "I should do this again."),
        content: last.content.clone(),
        calls: last.calls.clone(),
        done_reason: "stop",
        form: Some(FailureForm::RepeatCall),
        ..Default::default()
    }
}

/// A completion claim: the finish tool when one is offered (and `allow_tool`), else text.
pub fn finish_turn(plan: &TaskPlan, kit: &Toolkit, allow_tool: bool) -> Turn {
    let files: Vec<&str> = plan.steps.iter().filter_map(|s| s.path()).collect();
    let summary = format!("{FINISH_TEXT} Produced: {}.", files.join(", "));
    let mut t = Turn::text(summary.clone());
    if let (Some(f), true) = (kit.finish.as_ref(), allow_tool) {
        t.content = FINISH_TEXT.to_string();
        t.calls = vec![Call {
            name: f.name.clone(),
            args: args_for(f, &[(&f.main, Value::from(summary.as_str()))], &summary),
        }];
    }
    t
}

/// The turn of failure form `f` at step `k` (whose right call is `call`).
#[allow(clippy::too_many_arguments)]
pub fn failure_turn(
    f: FailureForm,
    conv: &Conv,
    plan: &TaskPlan,
    kit: &Toolkit,
    last: Option<&Msg>,
    family: Family,
    k: usize,
    call: Call,
    h: u64,
) -> Turn {
    use FailureForm::*;
    let prose = narration(plan, k);
    let mut t = match f {
        TextCall => {
            let shapes = dialect::leak_shapes(family);
            let s =
                shapes[((draw(h, "shape") * shapes.len() as f64) as usize).min(shapes.len() - 1)];
            Turn::text(dialect::render_leak(s, &call, &prose))
        }
        MalformedCall => {
            let (text, outcome) = family.malformed(&call, &format!("{prose}\n"));
            let mut t = Turn::text(text);
            t.outcome = Some(outcome);
            t
        }
        BadArgs => {
            // the call without its first required argument
            let mut c = call.clone();
            let tool = conv.tools.iter().find(|t| t.function.name == c.name);
            if let (Some(tool), Value::Object(m)) = (tool, &mut c.args) {
                if let Some(r) = tool.required_params().into_iter().next() {
                    m.remove(&r);
                }
            }
            step_turn(conv, plan, k, c)
        }
        RepeatCall => match last {
            Some(l) => repeat_of(l, conv),
            None => step_turn(conv, plan, k, call),
        },
        FalseDone => finish_turn(plan, kit, true),
        Abandon => Turn::text(ABANDON_TEXT),
        EmptyTurn => Turn::text(""),
        ThinkOnly => {
            let thought =
                "I need to work out what to do next. Let me consider the files and the steps again";
            if conv.think {
                Turn {
                    thinking: Some(thought.to_string()),
                    done_reason: "stop",
                    ..Default::default()
                }
            } else {
                Turn::text(format!("<think>\n{thought}"))
            }
        }
        Runaway => {
            let cap = conv
                .num_predict
                .unwrap_or(conv.ctx_limit() * 10)
                .min(16_384) as usize;
            let unit = "I need to be careful and check everything again before I continue. ";
            let mut s = String::new();
            while s.len() < cap * 4 {
                s.push_str(unit);
            }
            s.truncate(cap * 4);
            Turn {
                content: s,
                done_reason: "length",
                ..Default::default()
            }
        }
        WrongTool => {
            let wrong = conv.tools.iter().find(|t| {
                t.function.name != call.name
                    && Some(&t.function.name) != kit.finish.as_ref().map(|f| &f.name)
            });
            match wrong {
                Some(tool) => {
                    let first = tool
                        .required_params()
                        .into_iter()
                        .next()
                        .or_else(|| tool.param_names().into_iter().next())
                        .unwrap_or_default();
                    let main = match &plan.steps[k] {
                        Step::Write { path, .. } => path.clone(),
                        Step::Run { command } => command.clone(),
                    };
                    let b = Bound {
                        name: tool.function.name.clone(),
                        main: first.clone(),
                        second: None,
                        third: None,
                        tool: tool.clone(),
                    };
                    let c = Call {
                        name: b.name.clone(),
                        args: args_for(&b, &[(&first, Value::from(main))], "next step"),
                    };
                    step_turn(conv, plan, k, c)
                }
                None => step_turn(conv, plan, k, call),
            }
        }
        ContentError | LostInMiddle => step_turn(conv, plan, k, call),
    };
    t.form = Some(f);
    t
}

/// A real model cannot emit more than its output cap: a longer turn is cut, and a call cut
/// in the middle is no call (the qwen parsers drop an unclosed call silently).
pub fn truncate_at_limit(t: &mut Turn, conv: &Conv) {
    let cap = conv.num_predict.unwrap_or(conv.ctx_limit() * 10);
    if t.eval_tokens() <= cap || t.done_reason == "length" {
        return;
    }
    let mut text = t.content.clone();
    for c in &t.calls {
        text.push(' ');
        text.push_str(&format!(
            "{{\"name\": \"{}\", \"arguments\": {}}}",
            c.name, c.args
        ));
    }
    let mut end = (cap as usize * 4).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    if !t.calls.is_empty() {
        // what was before the call survives; the cut call is dropped
        text = t.content.chars().take(cap as usize * 4).collect();
    }
    t.content = text;
    t.calls.clear();
    t.thinking = None;
    t.done_reason = "length";
    t.outcome = None;
}

/// Whether the last own turn was a completion claim that the arm turned down.
pub fn finish_rejected(last_action: Option<Action>, fb: &crate::feedback::Feedback) -> bool {
    last_action == Some(Action::Finish) && (fb.not_done || fb.error || fb.not_run)
}

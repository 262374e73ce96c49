//! The customer-service agent of a recognised τ² task: the gold actions in order through the
//! offered tools, the customer's own actions asked for by name, then what must be
//! communicated; a sized model's per-turn failure forms drawn as on LRAB tasks.

use serde_json::{json, Value};

use super::bind;
use super::data::{Domain, Gold, Task};
use crate::convo::{tokens_of, Call, Conv};
use crate::policy::forms::{self, Decide};
use crate::policy::{fnv, Env, Turn, FNV0};
use crate::profile::{FailureForm, Prompt};
use crate::task::{Step, TaskPlan};
use crate::toolkit::Toolkit;

/// The closing sentence of the agent's last message (after it, the agent has nothing left).
pub(crate) const FINAL: &str = "I have completed everything your request needs.";
/// What the agent says to a customer who has been handed over.
const TRANSFERRED: &str = "You are being transferred to a human agent. Please hold on.";
/// Said (as text, without a call) once everything is said: ends an agent's run.
const DONE: &str = "The conversation with the customer is complete.";

/// The offered tool for talking to the customer (MCP arms): not a domain tool, its name
/// speaks of a message and of the customer or user.
pub(crate) fn customer_tool(d: &Domain, offered: &[String]) -> Option<String> {
    offered
        .iter()
        .find(|o| {
            let l = o.to_lowercase();
            l.contains("message")
                && (l.contains("customer") || l.contains("user"))
                && !d
                    .agent_tools
                    .iter()
                    .any(|t| bind(t, std::slice::from_ref(o)).is_some())
        })
        .cloned()
}

/// The parameter of the customer tool that carries the text.
fn text_param(conv: &Conv, tool: &str) -> String {
    let t = conv.tools.iter().find(|t| t.function.name == tool);
    t.and_then(|t| {
        t.required_params()
            .into_iter()
            .next()
            .or_else(|| t.param_names().into_iter().next())
    })
    .unwrap_or_else(|| "message".into())
}

/// How the agent names an action the customer performs: the tool and its JSON arguments.
pub(crate) fn request_of(g: &Gold) -> String {
    format!("`{} {}`", g.name, compact(&g.args))
}

fn compact(v: &Value) -> String {
    match v {
        Value::Null => "{}".into(),
        v => v.to_string(),
    }
}

/// What the agent has done so far: its domain calls and everything it said.
struct Past<'a> {
    calls: Vec<&'a Call>,
    said: String,
}

fn past<'a>(conv: &'a Conv, customer: Option<&str>, param: &str) -> Past<'a> {
    let mut p = Past {
        calls: Vec::new(),
        said: String::new(),
    };
    for m in conv.messages.iter().filter(|m| m.role == "assistant") {
        p.said.push_str(&m.content);
        p.said.push('\n');
        for c in &m.calls {
            if Some(c.name.as_str()) == customer {
                p.said
                    .push_str(c.args.get(param).and_then(|v| v.as_str()).unwrap_or(""));
                p.said.push('\n');
            } else {
                p.calls.push(c);
            }
        }
    }
    p
}

/// Which gold actions are done: an own call with the same tool and arguments (each call
/// counts once), or for the customer's actions, asked for by name.
fn done(task: &Task, p: &Past, offered: &[String]) -> Vec<bool> {
    let mut used = vec![false; p.calls.len()];
    let mut asked: std::collections::BTreeMap<String, usize> = Default::default();
    task.actions
        .iter()
        .map(|g| {
            if g.by_user {
                // the j-th identical request is done once it has been asked j times
                let r = request_of(g);
                let j = asked.entry(r.clone()).or_insert(0);
                *j += 1;
                return p.said.matches(&r).count() >= *j;
            }
            let Some(name) = bind(&g.name, offered) else {
                return false;
            };
            let hit = p
                .calls
                .iter()
                .enumerate()
                .position(|(i, c)| !used[i] && &c.name == name && same_args(&c.args, &g.args));
            hit.map(|i| used[i] = true).is_some()
        })
        .collect()
}

fn same_args(a: &Value, b: &Value) -> bool {
    let empty = |v: &Value| v.is_null() || v.as_object().is_some_and(|m| m.is_empty());
    a == b || (empty(a) && empty(b))
}

/// The oracle's turn, and the index of the gold action it carries out (the number of gold
/// actions for a message).
fn oracle(conv: &Conv, d: &Domain, task: &Task, offered: &[String]) -> (Turn, usize) {
    let customer = customer_tool(d, offered);
    let param = customer
        .as_deref()
        .map_or_else(|| "message".into(), |c| text_param(conv, c));
    let p = past(conv, customer.as_deref(), &param);
    let done = done(task, &p, offered);
    let say = |text: String| -> Turn {
        match &customer {
            Some(c) => Turn {
                calls: vec![Call {
                    name: c.clone(),
                    args: json!({ param.clone(): text }),
                }],
                done_reason: "stop",
                ..Default::default()
            },
            None => Turn::text(text),
        }
    };
    let n = task.actions.len();
    // the next gold action the agent can do, skipping tools the request does not offer
    let next = (0..n).find(|&k| {
        !done[k] && (task.actions[k].by_user || bind(&task.actions[k].name, offered).is_some())
    });
    match next {
        Some(k) if !task.actions[k].by_user => {
            let g = &task.actions[k];
            let name = bind(&g.name, offered).cloned().unwrap_or_default();
            let args = if g.args.is_null() {
                json!({})
            } else {
                g.args.clone()
            };
            let t = Turn {
                calls: vec![Call { name, args }],
                done_reason: "stop",
                ..Default::default()
            };
            (t, k)
        }
        Some(k) => {
            let asks: Vec<String> = task.actions[k..]
                .iter()
                .zip(&done[k..])
                .take_while(|(g, _)| g.by_user)
                .filter(|(_, d)| !**d)
                .map(|(g, _)| request_of(g))
                .collect();
            let text = format!(
                "Please do this on your phone, in this order: {}. Then tell me what you see.",
                asks.join(", then ")
            );
            (say(text), k)
        }
        None if !p.said.contains(FINAL) => {
            let transferred = task
                .actions
                .iter()
                .any(|g| !g.by_user && g.name.contains("transfer"));
            let mut lines = task.communicate.clone();
            if transferred {
                lines.push(TRANSFERRED.into());
            }
            lines.push(FINAL.into());
            (say(lines.join("\n")), n)
        }
        None => (Turn::text(DONE), n),
    }
}

/// The agent's next turn.
pub(crate) fn turn(env: &Env, conv: &Conv, d: &Domain, task: &Task, offered: &[String]) -> Turn {
    let (t, k) = oracle(conv, d, task, offered);
    let prof = &env.model.profile;
    if prof.is_oracle() {
        return t;
    }
    let kit = Toolkit::detect(&conv.tools);
    let mut h = fnv(FNV0, &env.seed.to_le_bytes());
    h = fnv(h, &conv.seed.unwrap_or(0).to_le_bytes());
    h = fnv(h, env.model.name.as_bytes());
    h = fnv(h, task.id.as_bytes());
    for m in conv.messages.iter().filter(|m| m.role == "assistant") {
        h = fnv(h, m.content.as_bytes());
        for c in &m.calls {
            h = fnv(h, c.name.as_bytes());
            h = fnv(h, c.args.to_string().as_bytes());
        }
    }
    h = fnv(h, &(conv.messages.len() as u64).to_le_bytes());
    let dec = Decide {
        prof,
        prompt: Prompt {
            ctx: conv.prompt_tokens(),
            opening: opening_tokens(conv),
            tools: kit.count,
        },
        h,
        // τ² conversations are not rows of the LRAB pack: each draws alone
        strata: crate::policy::strata::Strata::none(),
        turn: 0,
    };
    let last = conv.messages.iter().rev().find(|m| m.role == "assistant");
    let call = t.calls.first().cloned();
    let required = call.as_ref().is_some_and(|c| {
        conv.tools
            .iter()
            .find(|x| x.function.name == c.name)
            .is_some_and(|x| !x.required_params().is_empty())
    });
    let mut out = match forms::pick(&dec, last, &kit, true, required) {
        None => t,
        Some(FailureForm::FalseDone) => {
            let mut f = Turn::text(FINAL);
            f.form = Some(FailureForm::FalseDone);
            f
        }
        Some(f) => match (call, needs_call(f)) {
            (Some(c), _) => {
                let plan = pseudo_plan(task);
                forms::failure_turn(f, conv, &plan, &kit, last, prof.family, k, c, h)
            }
            (None, false) => {
                let plan = pseudo_plan(task);
                let c = Call {
                    name: String::new(),
                    args: json!({}),
                };
                forms::failure_turn(f, conv, &plan, &kit, last, prof.family, k, c, h)
            }
            // a form that needs a call on a turn that is a message: the message goes out
            (None, true) => t,
        },
    };
    forms::truncate_at_limit(&mut out, conv);
    out
}

fn needs_call(f: FailureForm) -> bool {
    use FailureForm::*;
    matches!(f, TextCall | MalformedCall | BadArgs | WrongTool)
}

/// The task's gold actions as steps (what a failure's narration names), and one more step
/// for the closing message.
fn pseudo_plan(task: &Task) -> TaskPlan {
    let mut steps: Vec<Step> = task
        .actions
        .iter()
        .map(|g| Step::Run {
            command: format!("{} {}", g.name, compact(&g.args)),
        })
        .collect();
    steps.push(Step::Run {
        command: "reply to the customer".into(),
    });
    TaskPlan {
        id: task.id.clone(),
        tier: 1,
        originals: Default::default(),
        key_lines: Vec::new(),
        steps,
    }
}

/// Tokens of the opening: the tool definitions and the messages up to the customer's first.
fn opening_tokens(conv: &Conv) -> u64 {
    let end = conv
        .messages
        .iter()
        .position(|m| m.role == "user")
        .map_or(conv.messages.len(), |i| i + 1);
    conv.messages[..end]
        .iter()
        .map(|m| tokens_of(&m.content))
        .sum::<u64>()
        + conv.tools_tokens()
}

//! The simulated model: given a conversation, produce the next assistant turn.
//!
//! Everything is derived from the conversation itself (stateless across HTTP requests): which
//! plan steps already ran successfully is read from the model's own earlier turns and the
//! feedback that followed them. Random draws come from ChaCha seeded by (seed, model, task,
//! a hash of the model's own turns and of the *signals* of the feedback), so the same
//! request sequence gives the same bytes, and rewording a harness's messages without
//! changing their meaning gives the same behaviour.

pub mod adversary;
pub mod chat;
pub mod text_calls;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

use crate::catalog::ModelSpec;
use crate::convo::{tokens_of, Call, Conv, Msg};
use crate::feedback::{classify, mentions, Feedback};
use crate::profile::{FailureForm, Profile};
use crate::task::{Step, TaskIndex, TaskPlan};
use crate::toolkit::{args_for, Bound, Toolkit};

/// One generated assistant turn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Turn {
    pub thinking: Option<String>,
    pub content: String,
    pub calls: Vec<Call>,
    /// `stop` or `length`.
    pub done_reason: &'static str,
    /// The injected failure form, if any (for tests and logs; never sent on the wire).
    pub form: Option<FailureForm>,
}

impl Turn {
    fn text(content: impl Into<String>) -> Turn {
        Turn {
            content: content.into(),
            done_reason: "stop",
            ..Default::default()
        }
    }
    /// Generated tokens (thinking + content + calls).
    pub fn eval_tokens(&self) -> u64 {
        let calls: u64 = self
            .calls
            .iter()
            .map(|c| tokens_of(&c.name) + tokens_of(&c.args.to_string()))
            .sum();
        (tokens_of(&self.content) + self.thinking.as_deref().map_or(0, tokens_of) + calls).max(1)
    }
}

/// What the policy needs besides the conversation.
pub struct Env<'a> {
    pub model: &'a ModelSpec,
    pub seed: u64,
    pub tasks: &'a TaskIndex,
}

/// The next turn for this conversation.
pub fn respond(env: &Env, conv: &Conv) -> Turn {
    if env.model.name == adversary::MODEL {
        return adversary::respond(conv);
    }
    match env.tasks.recognize(conv) {
        Some((plan, at)) if !conv.tools.is_empty() => task_turn(env, conv, plan, at),
        _ => chat::respond(env, conv),
    }
}

/// FNV-1a, used to fold conversation parts into a draw seed.
pub(crate) fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

pub(crate) const FNV0: u64 = 0xcbf29ce484222325;

/// A uniform draw in [0,1) for a labelled decision.
pub(crate) fn draw(h: u64, label: &str) -> f64 {
    ChaCha8Rng::seed_from_u64(fnv(h, label.as_bytes())).gen::<f64>()
}

pub(crate) const FINISH_TEXT: &str = "All steps are done.";
const ABANDON_TEXT: &str = "I have made a start on this task. I will stop here for now.";

fn narration_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^Step (\d+)/(\d+):").expect("valid regex"))
}

fn heredoc_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?:cat|base64 -d) > '([^']+)' <<").expect("valid regex"))
}

/// The model's intent in one of its earlier turns.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Action {
    Step(usize),
    Finish,
}

/// The name of the tool that carries out a step (cheap: no arguments are built).
fn canonical_name<'k>(step: &Step, kit: &'k Toolkit) -> Option<&'k str> {
    match step {
        Step::Write { bytes, .. } => {
            match (std::str::from_utf8(bytes).is_ok(), &kit.write, &kit.shell) {
                (true, Some(w), _) => Some(&w.name),
                (_, _, Some(sh)) => Some(&sh.name),
                _ => None,
            }
        }
        Step::Run { .. } => kit.shell.as_ref().map(|s| s.name.as_str()),
    }
}

/// A step's canonical call with this toolkit, or None when no offered tool can do it.
fn canonical(step: &Step, kit: &Toolkit) -> Option<Call> {
    match step {
        Step::Write { path, bytes } => {
            let text = std::str::from_utf8(bytes).ok();
            if let (Some(t), Some(w)) = (text, kit.write.as_ref()) {
                let second = w.second.clone().unwrap_or_default();
                return Some(Call {
                    name: w.name.clone(),
                    args: args_for(
                        w,
                        &[
                            (&w.main, Value::from(path.as_str())),
                            (&second, Value::from(t)),
                        ],
                        &format!("Write {path}"),
                    ),
                });
            }
            let sh = kit.shell.as_ref()?;
            Some(shell_call(
                sh,
                &write_command(path, bytes),
                &format!("Write {path}"),
            ))
        }
        Step::Run { command } => {
            let sh = kit.shell.as_ref()?;
            Some(shell_call(sh, command, "Run a command of the plan"))
        }
    }
}

fn shell_call(sh: &Bound, command: &str, describe: &str) -> Call {
    Call {
        name: sh.name.clone(),
        args: args_for(sh, &[(&sh.main, Value::from(command))], describe),
    }
}

/// A shell command that writes exactly these bytes: a quoted heredoc for text ending in a
/// newline, base64 otherwise (binary files, text without a final newline).
pub fn write_command(path: &str, bytes: &[u8]) -> String {
    let mkdir = match path.rsplit_once('/') {
        Some((dir, _)) => format!("mkdir -p '{dir}' && "),
        None => String::new(),
    };
    if let Ok(t) = std::str::from_utf8(bytes) {
        if t.ends_with('\n') && !t.contains('\r') {
            let mut delim = "LRAB_EOF".to_string();
            while t.lines().any(|l| l == delim) {
                delim.push('_');
            }
            return format!("{mkdir}cat > '{path}' <<'{delim}'\n{t}{delim}");
        }
    }
    let b64 = base64(bytes);
    let mut body = String::new();
    for chunk in b64.as_bytes().chunks(76) {
        body.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        body.push('\n');
    }
    format!("{mkdir}base64 -d > '{path}' <<'LRAB_B64'\n{body}LRAB_B64")
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn norm_path(p: &str) -> &str {
    p.trim().trim_start_matches("./")
}

/// Which step (if any) a call targets, by its arguments.
fn target_of(call: &Call, plan: &TaskPlan) -> Option<usize> {
    let vals: Vec<&str> = match &call.args {
        Value::Object(m) => m.values().filter_map(|v| v.as_str()).collect(),
        _ => vec![],
    };
    let paths: Vec<&str> = vals.iter().map(|v| norm_path(v)).collect();
    // a heredoc or base64 write names its file in the command's first line
    let heredoc: Vec<String> = vals
        .iter()
        .filter_map(|v| {
            let first = v.lines().next()?;
            heredoc_re().captures(first).map(|c| c[1].to_string())
        })
        .collect();
    for (k, s) in plan.steps.iter().enumerate() {
        match s {
            Step::Write { path, .. } => {
                let hit = paths.iter().any(|v| {
                    *v == path.as_str()
                        || (v.len() > path.len()
                            && v.ends_with(path.as_str())
                            && v.as_bytes()[v.len() - path.len() - 1] == b'/')
                }) || heredoc.iter().any(|h| h == path);
                if hit {
                    return Some(k);
                }
            }
            Step::Run { command } => {
                if vals.iter().any(|v| v.trim() == command.trim()) {
                    return Some(k);
                }
            }
        }
    }
    None
}

/// The intent of an earlier assistant message, and whether its call was the right one.
fn attribute(m: &Msg, plan: &TaskPlan, kit: &Toolkit) -> Option<(Action, bool)> {
    let n = plan.steps.len();
    if let Some(c) = narration_re().captures(m.content.trim_start()) {
        let k: usize = c[1].parse().ok()?;
        if k == 0 || k > n {
            return None;
        }
        let k = k - 1;
        let right = match (m.calls.first(), canonical(&plan.steps[k], kit)) {
            (Some(call), Some(canon)) => {
                (call.name == canon.name && target_of(call, plan) == Some(k))
                    || carries_out(call, plan, k)
            }
            (Some(call), None) => carries_out(call, plan, k),
            (None, _) => true, // the client dropped the calls; trust the narration
        };
        return Some((Action::Step(k), right));
    }
    let finish_name = kit.finish.as_ref().map(|f| f.name.as_str());
    if m.calls.iter().any(|c| Some(c.name.as_str()) == finish_name)
        || m.content.trim_start().starts_with(FINISH_TEXT)
    {
        return Some((Action::Finish, true));
    }
    let call = m
        .calls
        .first()
        .cloned()
        .or_else(|| text_calls::parse(&m.content))?;
    let k = target_of(&call, plan)?;
    let right = canonical_name(&plan.steps[k], kit) == Some(call.name.as_str())
        || carries_out(&call, plan, k);
    Some((Action::Step(k), right))
}

/// A file's `broken_code` variant: the sim appends an unfinished definition.
fn broken(bytes: &[u8]) -> Vec<u8> {
    [bytes, b"\ndef unfinished(:\n".as_slice()].concat()
}

/// Whether a call carries out step `k` whatever tools are offered now: a write whose
/// arguments hold the step's content the way the sim writes it (the text for a write tool, the
/// heredoc or base64 command for a shell; the `broken_code` variant included), or a
/// shell-shaped call (judged from its own argument names) running the step's command.
///
/// Rightness is otherwise judged against the tools of the current request, but a harness may
/// take a tool away for a few turns (a paused tool) and give it back later; a model does not
/// forget that its earlier call wrote the file because the tool list changed since. A
/// `wrong_tool` call carries only the step's main argument, so it never passes.
fn carries_out(call: &Call, plan: &TaskPlan, k: usize) -> bool {
    if target_of(call, plan) != Some(k) {
        return false;
    }
    let vals: Vec<&str> = match &call.args {
        Value::Object(m) => m.values().filter_map(|v| v.as_str()).collect(),
        _ => return false,
    };
    match &plan.steps[k] {
        Step::Write { path, bytes } => {
            let carries = |b: &[u8]| {
                let text = std::str::from_utf8(b).ok();
                let command = write_command(path, b);
                vals.iter().any(|v| Some(*v) == text || *v == command)
            };
            carries(bytes) || carries(&broken(bytes))
        }
        Step::Run { command } => {
            let Value::Object(m) = &call.args else {
                return false;
            };
            let props: serde_json::Map<String, Value> = m
                .keys()
                .map(|key| (key.clone(), serde_json::json!({"type": "string"})))
                .collect();
            let own = Toolkit::detect(&[lrab_ollama::Tool::function(
                &call.name,
                "",
                serde_json::json!({"type": "object", "properties": props}),
            )]);
            own.shell.is_some_and(|sh| {
                m.get(&sh.main)
                    .and_then(|v| v.as_str())
                    .is_some_and(|v| v.trim() == command.trim())
            })
        }
    }
}

/// What the model knows from its history.
struct Hist {
    done: Vec<bool>,
    attempts: Vec<u32>,
    written: Vec<bool>,
    finish_attempts: u32,
    last_sig: Option<String>,
    repeat_run: u32,
    last: Option<Msg>,
    last_fb: Feedback,
    last_fb_text: String,
    /// The intent of the latest own turn.
    last_action: Option<Action>,
    h: u64,
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

fn read_history(conv: &Conv, plan: &TaskPlan, kit: &Toolkit, start: usize) -> Hist {
    let n = plan.steps.len();
    let mut h = Hist {
        done: vec![false; n],
        attempts: vec![0; n],
        written: vec![false; n],
        finish_attempts: 0,
        last_sig: None,
        repeat_run: 0,
        last: None,
        last_fb: Feedback::default(),
        last_fb_text: String::new(),
        last_action: None,
        h: FNV0,
    };
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
        while i < msgs.len() && msgs[i].role != "assistant" {
            if !fb_text.is_empty() {
                fb_text.push('\n');
            }
            fb_text.push_str(&msgs[i].content);
            tool_role |= msgs[i].role == "tool";
            i += 1;
        }
        let fb = classify(&fb_text);
        let sig = signature(m);
        if h.last_sig.as_deref() == Some(sig.as_str()) && !m.calls.is_empty() {
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
            ],
        );
        if fb.already_done {
            // folded in only when set, so conversations without it draw exactly as before
            h.h = fnv(h.h, b"already_done");
        }
        let action = attribute(m, plan, kit);
        h.last_action = action.map(|(a, _)| a);
        match action {
            Some((Action::Step(k), right)) => {
                h.attempts[k] += 1;
                let text_form =
                    m.calls.is_empty() && !narration_re().is_match(m.content.trim_start());
                let ran = fb.present && !fb.not_run && (!text_form || tool_role);
                // Not run again, but the answer says an earlier identical call succeeded and
                // its effect is in place: a model takes that as the step being done, like a
                // run (it matters when the earlier success is no longer in view, e.g. after
                // compaction; an error quoted from the earlier result still counts).
                let in_place = fb.already_done && !text_form;
                if right && (ran || in_place) {
                    match plan.steps[k] {
                        Step::Write { .. } => {
                            if !fb.error {
                                h.done[k] = true;
                                h.written[k] = true;
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
        h.last_sig = Some(sig);
        h.last = Some(m.clone());
        h.last_fb = fb;
        h.last_fb_text = fb_text;
    }
    h
}

fn short(s: &str, n: usize) -> String {
    let first = s.lines().next().unwrap_or("");
    if first.chars().count() <= n && !s.contains('\n') {
        first.to_string()
    } else {
        let t: String = first.chars().take(n).collect();
        format!("{t}…")
    }
}

fn narration(plan: &TaskPlan, k: usize) -> String {
    let n = plan.steps.len();
    match &plan.steps[k] {
        Step::Write { path, .. } => format!("Step {}/{n}: writing {path}.", k + 1),
        Step::Run { command } => format!("Step {}/{n}: running `{}`.", k + 1, short(command, 60)),
    }
}

fn finish_turn(plan: &TaskPlan, kit: &Toolkit, allow_tool: bool) -> Turn {
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

/// Per-decision parameters.
struct Decide<'a> {
    prof: &'a Profile,
    ctx: u64,
    ntools: usize,
    h: u64,
}

impl Decide<'_> {
    fn rate(&self, f: FailureForm) -> f64 {
        self.prof.rate(f, self.ctx, self.ntools)
    }
}

fn task_turn(env: &Env, conv: &Conv, plan: &TaskPlan, at: usize) -> Turn {
    let kit = Toolkit::detect(&conv.tools);
    let hist = read_history(conv, plan, &kit, at);
    let prof = &env.model.profile;
    let oracle = prof.is_oracle();
    let mut h = fnv(FNV0, &env.seed.to_le_bytes());
    h = fnv(h, &conv.seed.unwrap_or(0).to_le_bytes());
    h = fnv(h, env.model.name.as_bytes());
    h = fnv(h, plan.id.as_bytes());
    let static_h = h;
    h = fnv(h, &hist.h.to_le_bytes());
    let d = Decide {
        prof,
        ctx: conv.prompt_tokens(),
        ntools: kit.count,
        h,
    };
    let n = plan.steps.len();
    let react = &prof.reactions;

    // 1. an error that names a file the model wrote: fix that file, more often when the error
    //    is precise (file and line). A generic error counts only as the result of a step (a
    //    restated task after a finish mentions files and failure words without reporting one).
    if hist.last_fb.error
        && (hist.last_fb.precise || matches!(hist.last_action, Some(Action::Step(_))))
    {
        let named = |k: usize| {
            hist.attempts[k] >= 1
                && hist.attempts[k] < 12
                && plan.steps[k]
                    .path()
                    .is_some_and(|p| mentions(&hist.last_fb_text, p))
        };
        let target = match hist.last_action {
            Some(Action::Step(k)) if named(k) => Some(k),
            _ => (0..n).find(|&k| named(k)),
        };
        if let Some(w) = target {
            let p = if hist.last_fb.precise {
                react.fix_precise
            } else {
                react.fix_generic
            };
            if draw(d.h, "fix") < p {
                if let Some(call) = canonical(&plan.steps[w], &kit) {
                    return step_turn(conv, plan, w, call, None);
                }
            }
        }
    }

    // 2. inside a loop of step calls: keep repeating or break out, depending on what came back
    if let (Some(last), false) = (&hist.last, oracle) {
        if hist.repeat_run >= 2
            && hist.repeat_run < 12
            && !last.calls.is_empty()
            && matches!(hist.last_action, Some(Action::Step(_)) | None)
        {
            let stay = if hist.last_fb.not_run {
                react.loop_stay_blocked
            } else if hist.last_fb.repeat_warning {
                react.loop_stay_warned
            } else {
                react.loop_stay_plain
            };
            if draw(d.h, "loop") < stay {
                return repeat_of(last, conv, FailureForm::RepeatCall);
            }
        }
    }

    // 3. the next step (lost-in-the-middle may hide one once the task statement lies far
    //    back in the context; a harness that restates the task brings it back)
    let last_statement = (at..conv.messages.len())
        .rev()
        .find(|&i| conv.messages[i].role == "user" && plan.stated_in(&conv.messages[i].content))
        .unwrap_or(at);
    let distance: u64 = conv.messages[last_statement + 1..]
        .iter()
        .map(|m| {
            crate::convo::tokens_of(&m.content)
                + m.calls
                    .iter()
                    .map(|c| crate::convo::tokens_of(&c.args.to_string()))
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

    // 4. a failure form for this turn
    let form = if oracle {
        None
    } else {
        pick_form(&d, &hist, &kit, next.is_some())
    };

    let Some(k) = next else {
        return finish_turn(plan, &kit, hist.finish_attempts < 4);
    };
    let call = canonical(&plan.steps[k], &kit).expect("feasible step has a call");
    let mut t = match form {
        None => {
            let mut call = call;
            if let Step::Write { path, bytes } = &plan.steps[k] {
                if !oracle
                    && path.ends_with(".py")
                    && draw(d.h, "broken") < d.rate(FailureForm::BrokenCode)
                {
                    call = canonical(
                        &Step::Write {
                            path: path.clone(),
                            bytes: broken(bytes),
                        },
                        &kit,
                    )
                    .unwrap_or(call);
                    let mut t = step_turn(conv, plan, k, call, None);
                    t.form = Some(FailureForm::BrokenCode);
                    return t;
                }
            }
            step_turn(conv, plan, k, call, None)
        }
        Some(f) => failure_turn(f, conv, plan, &kit, &hist, k, call),
    };
    if !oracle {
        truncate_at_limit(&mut t, conv);
    }
    t
}

fn pick_form(d: &Decide, hist: &Hist, kit: &Toolkit, work_left: bool) -> Option<FailureForm> {
    use FailureForm::*;
    let u = draw(d.h, "form");
    let mut acc = 0.0;
    for f in [
        TextCallJson,
        TextCallPlaceholder,
        TextCallBare,
        RepeatCall,
        FalseDone,
        Abandon,
        EmptyTurn,
        ThinkOnly,
        Runaway,
        WrongTool,
    ] {
        let applicable = match f {
            RepeatCall => hist.last.as_ref().is_some_and(|m| !m.calls.is_empty()),
            WrongTool => kit.count >= 2,
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

fn step_turn(
    conv: &Conv,
    plan: &TaskPlan,
    k: usize,
    call: Call,
    form: Option<FailureForm>,
) -> Turn {
    let content = narration(plan, k);
    Turn {
        thinking: thinking_for(
            conv,
            &format!("The next thing to do is step {} of the plan.", k + 1),
        ),
        content,
        calls: vec![call],
        done_reason: "stop",
        form,
    }
}

fn repeat_of(last: &Msg, conv: &Conv, form: FailureForm) -> Turn {
    Turn {
        thinking: thinking_for(conv, "I should do this again."),
        content: last.content.clone(),
        calls: last.calls.clone(),
        done_reason: "stop",
        form: Some(form),
    }
}

fn failure_turn(
    f: FailureForm,
    conv: &Conv,
    plan: &TaskPlan,
    kit: &Toolkit,
    hist: &Hist,
    k: usize,
    call: Call,
) -> Turn {
    use FailureForm::*;
    let mut t = match f {
        TextCallJson => Turn::text(text_calls::json_shape(&call)),
        TextCallPlaceholder => Turn::text(text_calls::placeholder_shape(&call)),
        TextCallBare => Turn::text(text_calls::bare_shape(&call)),
        RepeatCall => match &hist.last {
            Some(last) => repeat_of(last, conv, RepeatCall),
            None => step_turn(conv, plan, k, call, None),
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
            let cap = conv.num_predict.unwrap_or(4096).min(16_384) as usize;
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
                    let main = plan.steps[k].path().map(str::to_string).unwrap_or_else(|| {
                        match &plan.steps[k] {
                            Step::Run { command } => command.clone(),
                            _ => String::new(),
                        }
                    });
                    let b = Bound {
                        name: tool.function.name.clone(),
                        main: first.clone(),
                        second: None,
                        third: None,
                        tool: tool.clone(),
                    };
                    let wrong_call = Call {
                        name: b.name.clone(),
                        args: args_for(&b, &[(&first, Value::from(main))], "next step"),
                    };
                    step_turn(conv, plan, k, wrong_call, None)
                }
                None => step_turn(conv, plan, k, call, None),
            }
        }
        BrokenCode | LostInMiddle => step_turn(conv, plan, k, call, None),
    };
    t.form = Some(f);
    t
}

/// A real model cannot emit more than `num_predict` tokens: a longer turn is cut, and a tool
/// call cut in the middle is no call at all.
fn truncate_at_limit(t: &mut Turn, conv: &Conv) {
    let Some(cap) = conv.num_predict else { return };
    if t.eval_tokens() <= cap || t.done_reason == "length" {
        return;
    }
    let mut text = t.content.clone();
    for c in &t.calls {
        text.push(' ');
        text.push_str(&text_calls::json_shape(c));
    }
    let mut end = (cap as usize * 4).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    t.content = text;
    t.calls.clear();
    t.thinking = None;
    t.done_reason = "length";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_command_forms() {
        let c = write_command("a/b.md", b"hello\nLRAB_EOF\n");
        assert!(c.starts_with("mkdir -p 'a' && cat > 'a/b.md' <<'LRAB_EOF_'\n"));
        assert!(c.ends_with("LRAB_EOF\nLRAB_EOF_"));
        let c = write_command("x.png", &[0x89, b'P', b'N', b'G']);
        assert_eq!(c, "base64 -d > 'x.png' <<'LRAB_B64'\niVBORw==\nLRAB_B64");
        assert_eq!(base64(b"hello"), "aGVsbG8=");
        assert_eq!(base64(b"he"), "aGU=");
    }
}

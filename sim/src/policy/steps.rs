//! Plan steps as calls: the call that carries out a step with the tools offered, the shell
//! command that writes a file, the degraded variants of a step's file, and the reading of the
//! model's own earlier calls back onto steps.

use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

use crate::content::{self, Degraded};
use crate::convo::{Call, Msg};
use crate::dialect;
use crate::task::{Step, TaskPlan};
use crate::toolkit::{args_for, Bound, Toolkit};

pub(crate) fn narration_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^Step (\d+)/(\d+):").expect("valid regex"))
}

fn heredoc_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?:cat|base64 -d) > '([^']+)' <<").expect("valid regex"))
}

/// The model's intent in one of its earlier turns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    Step(usize),
    Finish,
}

/// The degraded variants of every write step of a plan (empty for commands), computed once
/// per request with the run's fixed draws so the model recognises what it wrote.
pub struct Variants(pub Vec<Vec<Degraded>>);

impl Variants {
    pub fn of(plan: &TaskPlan, u: impl Fn(usize) -> f64) -> Variants {
        Variants(
            plan.steps
                .iter()
                .enumerate()
                .map(|(k, s)| match s {
                    Step::Write { path, bytes } => {
                        let orig = plan.originals.get(path).map(Vec::as_slice);
                        content::applicable(path, bytes, orig)
                            .into_iter()
                            .filter_map(|kind| content::degrade(path, bytes, orig, kind, u(k)))
                            .collect()
                    }
                    Step::Run { .. } => vec![],
                })
                .collect(),
        )
    }
}

/// The name of the tool that carries out a step (cheap: no arguments are built).
pub fn canonical_name<'k>(step: &Step, kit: &'k Toolkit) -> Option<&'k str> {
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

/// The call that writes `bytes` to `path` with this toolkit.
pub fn write_call(path: &str, bytes: &[u8], kit: &Toolkit) -> Option<Call> {
    let text = std::str::from_utf8(bytes).ok();
    if let (Some(t), Some(w)) = (text, kit.write.as_ref()) {
        let second = w.second.clone().unwrap_or_default();
        return Some(Call {
            name: w.name.clone(),
            args: args_for(
                w,
                &[(&w.main, Value::from(path)), (&second, Value::from(t))],
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

/// A step's canonical call with this toolkit, or None when no offered tool can do it.
pub fn canonical(step: &Step, kit: &Toolkit) -> Option<Call> {
    match step {
        Step::Write { path, bytes } => write_call(path, bytes, kit),
        Step::Run { command } => Some(shell_call(
            kit.shell.as_ref()?,
            command,
            "Run a command of the plan",
        )),
    }
}

pub fn shell_call(sh: &Bound, command: &str, describe: &str) -> Call {
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

pub fn base64(bytes: &[u8]) -> String {
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

fn str_values(call: &Call) -> Vec<&str> {
    match &call.args {
        Value::Object(m) => m.values().filter_map(|v| v.as_str()).collect(),
        _ => vec![],
    }
}

fn path_hit(vals: &[&str], heredoc: &[String], path: &str) -> bool {
    vals.iter().map(|v| norm_path(v)).any(|v| {
        v == path
            || (v.len() > path.len()
                && v.ends_with(path)
                && v.as_bytes()[v.len() - path.len() - 1] == b'/')
    }) || heredoc.iter().any(|h| h == path)
}

/// Which step (if any) a call targets, by its arguments (a degraded variant's path counts).
pub fn target_of(call: &Call, plan: &TaskPlan, vars: &Variants) -> Option<usize> {
    let vals = str_values(call);
    let heredoc: Vec<String> = vals
        .iter()
        .filter_map(|v| {
            heredoc_re()
                .captures(v.lines().next()?)
                .map(|c| c[1].to_string())
        })
        .collect();
    for (k, s) in plan.steps.iter().enumerate() {
        match s {
            Step::Write { path, .. } => {
                if path_hit(&vals, &heredoc, path)
                    || vars.0[k]
                        .iter()
                        .any(|d| d.path != *path && path_hit(&vals, &heredoc, &d.path))
                {
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

/// What an earlier write of step `k` put on disk: the reference (`Some(None)`), a degraded
/// variant (`Some(Some(i))`), or not this step's content at all (`None`).
pub fn written_variant(
    call: &Call,
    plan: &TaskPlan,
    vars: &Variants,
    k: usize,
) -> Option<Option<usize>> {
    let Step::Write { path, bytes } = &plan.steps[k] else {
        return None;
    };
    let vals = str_values(call);
    let carries = |p: &str, b: &[u8]| {
        let text = std::str::from_utf8(b).ok();
        let command = write_command(p, b);
        vals.iter().any(|v| Some(*v) == text || *v == command)
    };
    if carries(path, bytes) {
        return Some(None);
    }
    vars.0[k]
        .iter()
        .position(|d| carries(&d.path, &d.bytes))
        .map(Some)
}

/// Whether a call carries out step `k` whatever tools are offered now: a write whose arguments
/// hold the step's content the way the sim writes it (any variant), or a shell-shaped call
/// (judged from its own argument names) running the step's command. A tool a harness takes
/// away for a few turns does not make the model forget what its earlier call did; a
/// `wrong_tool` call carries only the step's main argument, so it never passes.
pub fn carries_out(call: &Call, plan: &TaskPlan, vars: &Variants, k: usize) -> bool {
    if target_of(call, plan, vars) != Some(k) {
        return false;
    }
    match &plan.steps[k] {
        Step::Write { .. } => written_variant(call, plan, vars, k).is_some(),
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

/// The intent of an earlier assistant message, and whether its call could carry out the step.
pub fn attribute(
    m: &Msg,
    plan: &TaskPlan,
    kit: &Toolkit,
    vars: &Variants,
) -> Option<(Action, bool)> {
    let n = plan.steps.len();
    if let Some(c) = narration_re().captures(m.content.trim_start()) {
        let k: usize = c[1].parse().ok()?;
        if k == 0 || k > n {
            return None;
        }
        let k = k - 1;
        let right = match m.calls.first() {
            Some(call) => carries_out(call, plan, vars, k),
            // the client dropped the calls (some arms do): trust the narration, unless the
            // text itself is a leaked call (then nothing ran)
            None => dialect::parse_leak(&m.content).is_none(),
        };
        return Some((Action::Step(k), right));
    }
    let finish_name = kit.finish.as_ref().map(|f| f.name.as_str());
    if m.calls.iter().any(|c| Some(c.name.as_str()) == finish_name)
        || m.content.trim_start().starts_with(super::FINISH_TEXT)
    {
        return Some((Action::Finish, true));
    }
    let call = m
        .calls
        .first()
        .cloned()
        .or_else(|| dialect::parse_leak(&m.content))?;
    let k = target_of(&call, plan, vars)?;
    Some((
        Action::Step(k),
        !m.calls.is_empty() && carries_out(&call, plan, vars, k),
    ))
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

/// The short sentence the model starts each step turn with.
pub fn narration(plan: &TaskPlan, k: usize) -> String {
    let n = plan.steps.len();
    match &plan.steps[k] {
        Step::Write { path, .. } => format!("Step {}/{n}: writing {path}.", k + 1),
        Step::Run { command } => format!("Step {}/{n}: running `{}`.", k + 1, short(command, 60)),
    }
}

/// Where a summary lists a step the model carried out (then the step's narration).
pub(crate) const SUMMARY_DONE: &str = "Done: ";

/// The steps a `<state_snapshot>` summary the model wrote (`protocols::summary`) lists as done
/// (none for any other text): read back by the history.
pub(crate) fn summary_done_steps(text: &str, plan: &TaskPlan) -> Vec<usize> {
    if !text.contains("<state_snapshot>") {
        return vec![];
    }
    let n = plan.steps.len();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(SUMMARY_DONE))
        .filter_map(|s| {
            let c = narration_re().captures(s)?;
            let k: usize = c[1].parse().ok()?;
            let total: usize = c[2].parse().ok()?;
            (total == n && k >= 1 && k <= n && s == narration(plan, k - 1)).then_some(k - 1)
        })
        .collect()
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

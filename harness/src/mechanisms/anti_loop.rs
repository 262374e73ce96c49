//! Signature anti-loop with graded escalation, an empty-turn ladder and a stall watch.
//!
//! A call's signature is the tool name plus its arguments normalized (keys sorted, strings
//! trimmed with whitespace runs collapsed, JSON-in-a-string decoded). File content (`content`,
//! `old`, `new`) is compared verbatim: whitespace is meaningful there (indentation), so
//! re-indenting a file is a new call, not a repeat. An identical call is a loop only if nothing
//! changed in the workdir since the previous one (re-running the tests after an edit is
//! progress, not a loop), and polling commands (`sleep`, `wait`) are exempt.
//!
//! A repeat is never executed, but what the model is told depends on how the earlier identical
//! call went. After a failure the answer is "not executed; its result is above" (re-running it
//! cannot help). After a success the honest answer is the earlier result itself: nothing ran
//! again, but the effect the model asked for is in place (`unchanged: notes.md already has
//! exactly this content (written at turn 3)`). Answering a repeat of a successful call as if it
//! had failed would teach the model that a finished step is still open. Either way the third
//! repeat pauses the tool, so real loops still end.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Argument keys whose string values are file content: kept verbatim in the signature.
const VERBATIM_KEYS: &[&str] = &["content", "old", "new"];

fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, Value> = m
                .iter()
                .map(|(k, x)| match x {
                    Value::String(_) if VERBATIM_KEYS.contains(&k.as_str()) => (k, x.clone()),
                    _ => (k, normalize(x)),
                })
                .collect();
            let mut out = serde_json::Map::new();
            for (k, x) in sorted {
                out.insert(k.clone(), x);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        Value::String(s) => {
            let t = s.trim();
            if (t.starts_with('{') && t.ends_with('}')) || (t.starts_with('[') && t.ends_with(']'))
            {
                if let Ok(inner) = serde_json::from_str::<Value>(t) {
                    return normalize(&inner);
                }
            }
            Value::String(t.split_whitespace().collect::<Vec<_>>().join(" "))
        }
        other => other.clone(),
    }
}

/// Canonical signature of a call.
pub fn signature(tool: &str, args: &Value) -> String {
    format!("{tool}:{}", normalize(args))
}

/// Polling calls are legitimately repeated.
pub fn is_polling(tool: &str, args: &Value) -> bool {
    if tool != "run_shell" {
        return false;
    }
    let cmd = args.get("command").and_then(|c| c.as_str()).unwrap_or("");
    cmd.contains("sleep ") || cmd.split_whitespace().any(|w| w == "wait")
}

/// How the call that set the current signature went: the answer to its identical repeat.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Earlier {
    /// The turn in which it ran.
    pub turn: u32,
    /// It succeeded: the tool reported no failure, and no test run in it reported failures.
    pub ok: bool,
    /// Its result as the model saw it.
    pub result: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum LoopVerdict {
    Execute,
    /// Do not execute; the earlier identical call failed (or its outcome was not recorded).
    /// `level` 1 = first repeat, 2 = second.
    Intercept {
        level: u32,
    },
    /// Do not execute; the earlier identical call succeeded and nothing changed since, so its
    /// result still holds and is the answer ([`unchanged_text`]). `level` as for `Intercept`.
    Unchanged {
        level: u32,
        earlier: Earlier,
    },
    /// The tool is paused until `until_turn` after a third identical repeat.
    Pause {
        until_turn: u32,
    },
    /// The tool is still paused.
    Paused {
        until_turn: u32,
    },
    /// The same tool many times in a row with nothing changing: run it, but nudge.
    SameToolNudge {
        count: u32,
    },
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AntiLoop {
    last_sig: Option<String>,
    last_world: u64,
    repeat: u32,
    pub interceptions: u32,
    paused: BTreeMap<String, u32>,
    same_tool: Option<String>,
    same_tool_count: u32,
    same_tool_world: u64,
    /// Outcome of the call that set `last_sig` (`None` until [`AntiLoop::outcome`] is called,
    /// e.g. by a caller that only wants interception).
    #[serde(default)]
    last_run: Option<Earlier>,
}

pub const PAUSE_TURNS: u32 = 4;
pub const SAME_TOOL_NUDGE_AT: u32 = 8;

impl AntiLoop {
    /// Decide about one call. `world` is a counter bumped on every workdir mutation.
    pub fn check(&mut self, tool: &str, args: &Value, world: u64, turn: u32) -> LoopVerdict {
        if tool == "finish" {
            return LoopVerdict::Execute;
        }
        if let Some(&until) = self.paused.get(tool) {
            if turn < until {
                return LoopVerdict::Paused { until_turn: until };
            }
            self.paused.remove(tool);
        }
        let sig = signature(tool, args);
        let same = self.last_sig.as_deref() == Some(sig.as_str()) && self.last_world == world;
        if same && !is_polling(tool, args) {
            self.repeat += 1;
            self.interceptions += 1;
            if self.repeat >= 3 {
                let until = turn + PAUSE_TURNS;
                self.paused.insert(tool.to_string(), until);
                self.repeat = 0;
                self.last_sig = None;
                self.last_run = None;
                return LoopVerdict::Pause { until_turn: until };
            }
            return match &self.last_run {
                Some(e) if e.ok => LoopVerdict::Unchanged {
                    level: self.repeat,
                    earlier: e.clone(),
                },
                _ => LoopVerdict::Intercept { level: self.repeat },
            };
        }
        self.repeat = 0;
        self.last_sig = Some(sig);
        self.last_run = None;
        self.last_world = world;
        // same tool streak without any change in the workdir
        if self.same_tool.as_deref() == Some(tool) && self.same_tool_world == world {
            self.same_tool_count += 1;
        } else {
            self.same_tool = Some(tool.to_string());
            self.same_tool_count = 1;
            self.same_tool_world = world;
        }
        if self.same_tool_count == SAME_TOOL_NUDGE_AT && tool != "run_shell" {
            return LoopVerdict::SameToolNudge {
                count: self.same_tool_count,
            };
        }
        LoopVerdict::Execute
    }

    /// Record the workdir state right after an executed call, so that the call's own effect
    /// (a write bumps the counter) does not make its identical repeat look like progress.
    pub fn executed(&mut self, world_after: u64) {
        self.last_world = world_after;
        self.same_tool_world = world_after;
    }

    /// Record how the call just executed went, so that its identical repeat can be answered
    /// with this result when it succeeded ([`LoopVerdict::Unchanged`]). Without it every
    /// repeat is an `Intercept`.
    pub fn outcome(&mut self, turn: u32, ok: bool, result: &str) {
        if self.last_sig.is_some() {
            self.last_run = Some(Earlier {
                turn,
                ok,
                result: clip_result(result, turn),
            });
        }
    }

    /// Pause `tool` until `until_turn` (another guard's escalation): its calls are answered
    /// [`LoopVerdict::Paused`].
    pub fn pause(&mut self, tool: &str, until_turn: u32) {
        self.paused.insert(tool.to_string(), until_turn);
    }

    /// End `tool`'s pause; whether it was paused.
    pub fn lift(&mut self, tool: &str) -> bool {
        self.paused.remove(tool).is_some()
    }

    /// Tools currently paused (their calls are not executed).
    pub fn paused_tools(&self, turn: u32) -> Vec<String> {
        self.paused
            .iter()
            .filter(|(_, &u)| turn < u)
            .map(|(t, _)| t.clone())
            .collect()
    }
}

/// Longest earlier result repeated in an answer (characters); longer ones keep head and tail.
pub const RESULT_CLIP: usize = 1500;

/// The earlier result, clipped to [`RESULT_CLIP`] characters (a third head, the rest tail, like
/// command output: the verdict is at the end); the full text is the earlier call's result.
fn clip_result(text: &str, turn: u32) -> String {
    lrab_util::head_tail(text, RESULT_CLIP, RESULT_CLIP / 3, |cut| {
        format!(
            "… ({cut} characters left out; the full result is in your turn-{turn} call above) …"
        )
    })
}

/// The answer to an identical repeat of a call that succeeded: what is in place and since
/// when, the earlier result, and that nothing ran again (still loop-breaking: the model is told
/// it is repeating, and the wording hardens at the second repeat, before the pause).
pub fn unchanged_text(tool: &str, args: &Value, level: u32, e: &Earlier) -> String {
    let path = args
        .get("path")
        .and_then(|p| p.as_str())
        .map(|p| p.trim())
        .unwrap_or("the file");
    let t = e.turn;
    // a file change is in place; any other call only gave a result (a read that succeeded
    // says nothing about the step the model meant it for, and a write that succeeded may still
    // carry a warning, quoted below)
    let (head, have) = match tool {
        "write_file" => (
            format!("unchanged: {path} already has exactly this content (written at turn {t}); this identical call was not executed again."),
            "its effect is already in place",
        ),
        "append_file" => (
            format!("unchanged: this exact text was already appended to {path} at turn {t}; this identical call was not executed again, so it is not appended twice."),
            "its effect is already in place",
        ),
        "edit_file" => (
            format!("unchanged: this exact edit of {path} was already applied at turn {t}; this identical call was not executed again."),
            "its effect is already in place",
        ),
        _ => (
            format!("not executed: identical to your call at turn {t}, which succeeded, and nothing in the workdir has changed since, so its result still holds."),
            "you already have its result",
        ),
    };
    let tail = if level >= 2 {
        format!(" This is the same call a third time: {have}, so do not call it again; the next identical call pauses {tool}.")
    } else {
        format!(" {}.", upper_first(have))
    };
    format!("{head}{tail}\nResult at turn {t}:\n{}", e.result)
}

/// The answer to an identical repeat of a call that succeeded ([`unchanged_text`]), with the
/// next action.
pub fn unchanged_answer(tool: &str, args: &Value, level: u32, e: &Earlier, next: &str) -> String {
    format!(
        "{}\nNext action: {next}",
        unchanged_text(tool, args, level, e)
    )
}

/// The answer to an identical repeat of a call that failed (`level` 1 or 2).
pub fn intercept_text(level: u32, next: &str) -> String {
    if level == 1 {
        format!("[not executed: identical to your previous call, and nothing has changed since; its result is above.] Next action: {next}")
    } else {
        format!("[not executed again: the same call a third time. Change your approach.] Next action: {next}")
    }
}

/// The answer to a call of a paused tool.
pub fn pause_text(tool: &str, until_turn: u32, next: &str) -> String {
    format!("[not executed: {tool} is paused until turn {until_turn} after repeated identical calls.] Next action: {next}")
}

/// The nudge after the same tool many times in a row with nothing changing.
pub fn same_tool_nudge(tool: &str, count: u32, next: &str) -> String {
    format!("You have called {tool} {count} times in a row without changing anything. Use what you have learned. Next action: {next}")
}

/// The nudge after an empty reply (`level` 1 for the first, 2 after).
pub fn empty_nudge(level: u32, next: &str) -> String {
    if level == 1 {
        format!("Your reply was empty. Reply with a tool call. Next action: {next}")
    } else {
        format!("Empty again. Do exactly this now with a tool call: {next}")
    }
}

/// The nudge after a reply that held only reasoning (`level` as for [`empty_nudge`]).
pub fn think_only_nudge(level: u32, next: &str) -> String {
    if level == 1 {
        format!("Your reply held only reasoning and no tool call, so nothing was done. Reply with a tool call. Next action: {next}")
    } else {
        format!(
            "Empty again: only reasoning, no call. Do exactly this now with a tool call: {next}"
        )
    }
}

/// The nudge after the empty-turn ladder compacted the conversation.
pub fn empty_reset_nudge(next: &str) -> String {
    format!("Several empty replies: the conversation was shortened. Next action: {next}")
}

/// What an empty reply gets when the anti-loop is switched off.
pub const EMPTY_NUDGE_ABLATED: &str = "Continue.";

/// The stall watch's first nudge: take a different approach.
pub fn stall_replan_text(streak: u32, next: &str) -> String {
    format!("No progress in the last {streak} rounds. Do not repeat what did not work; take a different approach. Next action: {next}")
}

/// The stall watch's second nudge: write the (first) missing deliverable now.
pub fn stall_escalate_text(missing: Option<&str>, next: &str) -> String {
    match missing {
        Some(a) => format!("Still no progress. Write the deliverable now from what you already know: write_file(path=\"{a}\", content=…). Partial content is better than none."),
        None => format!("Still no progress. {next}"),
    }
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Empty-turn ladder: a reply with no text and no call (think-only counts as empty). Nudges
/// name the next action; every third empty reply in a row the conversation is compacted; at
/// the ninth the run stops (resumable).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EmptyLadder {
    pub streak: u32,
    pub total: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum EmptyAction {
    /// Nudge with the next action; level grows with the streak.
    Nudge { level: u32 },
    /// Compact the conversation to task + plan + state, then nudge.
    Reset,
    /// Too many: save and stop (resumable).
    GiveUp,
}

pub const EMPTY_GIVE_UP: u32 = 9;

impl EmptyLadder {
    pub fn on_empty(&mut self) -> EmptyAction {
        self.streak += 1;
        self.total += 1;
        match self.streak {
            1 => EmptyAction::Nudge { level: 1 },
            n if n >= EMPTY_GIVE_UP => EmptyAction::GiveUp,
            n if n % 3 == 0 => EmptyAction::Reset,
            _ => EmptyAction::Nudge { level: 2 },
        }
    }
    pub fn on_reply(&mut self) {
        self.streak = 0;
    }
}

/// Stall watch: rounds in which nothing new succeeded.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StallWatch {
    pub streak: u32,
    pub fired: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StallAction {
    /// Ask for a re-plan (different approach), naming the next action.
    Replan,
    /// Stronger: a concrete instruction to write the deliverable now.
    Escalate,
    /// Give up (resumable stop).
    GiveUp,
}

pub const STALL_REPLAN: u32 = 3;
pub const STALL_ESCALATE: u32 = 8;
pub const STALL_GIVE_UP: u32 = 20;

impl StallWatch {
    pub fn on_round(&mut self, progress: bool) -> Option<StallAction> {
        if progress {
            self.streak = 0;
            return None;
        }
        self.streak += 1;
        let a = match self.streak {
            STALL_REPLAN => Some(StallAction::Replan),
            STALL_ESCALATE => Some(StallAction::Escalate),
            n if n >= STALL_GIVE_UP => Some(StallAction::GiveUp),
            _ => None,
        };
        if a.is_some() {
            self.fired += 1;
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn signature_normalizes_order_whitespace_and_json_strings() {
        assert_eq!(
            signature("run_shell", &json!({"command": " ls   -la ", "timeout": 5})),
            signature("run_shell", &json!({"timeout": 5, "command": "ls -la"}))
        );
        assert_eq!(
            signature("todo", &json!({"items": "[\"a\", \"b\"]"})),
            signature("todo", &json!({"items": ["a", "b"]}))
        );
        assert_ne!(
            signature("read_file", &json!({"path": "a"})),
            signature("read_file", &json!({"path": "b"}))
        );
    }

    #[test]
    fn graded_escalation_on_identical_calls() {
        let mut a = AntiLoop::default();
        let args = json!({"path": "x.md"});
        assert_eq!(a.check("read_file", &args, 0, 1), LoopVerdict::Execute);
        assert_eq!(
            a.check("read_file", &args, 0, 2),
            LoopVerdict::Intercept { level: 1 }
        );
        assert_eq!(
            a.check("read_file", &args, 0, 3),
            LoopVerdict::Intercept { level: 2 }
        );
        assert_eq!(
            a.check("read_file", &args, 0, 4),
            LoopVerdict::Pause {
                until_turn: 4 + PAUSE_TURNS
            }
        );
        assert_eq!(a.paused_tools(5), vec!["read_file".to_string()]);
        assert!(matches!(
            a.check("read_file", &json!({"path": "y"}), 0, 5),
            LoopVerdict::Paused { .. }
        ));
        assert_eq!(
            a.check("read_file", &args, 0, 4 + PAUSE_TURNS),
            LoopVerdict::Execute
        );
    }

    #[test]
    fn repeat_after_a_change_is_not_a_loop_and_polling_is_exempt() {
        let mut a = AntiLoop::default();
        let t = json!({"command": "python3 -m pytest -q"});
        assert_eq!(a.check("run_shell", &t, 0, 1), LoopVerdict::Execute);
        assert_eq!(a.check("run_shell", &t, 1, 2), LoopVerdict::Execute);
        let p = json!({"command": "sleep 2; cat status.txt"});
        for turn in 3..10 {
            assert_eq!(a.check("run_shell", &p, 1, turn), LoopVerdict::Execute);
        }
        assert_eq!(a.check("finish", &json!({}), 1, 11), LoopVerdict::Execute);
        assert_eq!(a.check("finish", &json!({}), 1, 12), LoopVerdict::Execute);
    }

    #[test]
    fn a_calls_own_write_does_not_excuse_its_repeat() {
        let mut a = AntiLoop::default();
        let w = json!({"path": "a.md", "content": "x"});
        assert_eq!(a.check("write_file", &w, 0, 1), LoopVerdict::Execute);
        a.executed(1); // the write bumped the world counter
        assert_eq!(
            a.check("write_file", &w, 1, 2),
            LoopVerdict::Intercept { level: 1 }
        );
        // another change in between makes the repeat legitimate
        assert_eq!(a.check("write_file", &w, 2, 3), LoopVerdict::Execute);
    }

    #[test]
    fn repeat_of_a_success_is_answered_with_the_earlier_result_then_paused() {
        let mut a = AntiLoop::default();
        let w = json!({"path": "notes.md", "content": "# Notes\n"});
        assert_eq!(a.check("write_file", &w, 0, 3), LoopVerdict::Execute);
        a.executed(1);
        a.outcome(3, true, "wrote notes.md (now 8 bytes)");
        let earlier = Earlier {
            turn: 3,
            ok: true,
            result: "wrote notes.md (now 8 bytes)".into(),
        };
        assert_eq!(
            a.check("write_file", &w, 1, 4),
            LoopVerdict::Unchanged {
                level: 1,
                earlier: earlier.clone()
            }
        );
        assert_eq!(
            a.check("write_file", &w, 1, 5),
            LoopVerdict::Unchanged { level: 2, earlier }
        );
        // the third repeat is a real loop: the tool is paused as before
        assert_eq!(
            a.check("write_file", &w, 1, 6),
            LoopVerdict::Pause {
                until_turn: 6 + PAUSE_TURNS
            }
        );
        assert_eq!(a.interceptions, 3);
    }

    #[test]
    fn repeat_of_a_failure_is_intercepted_and_escalates() {
        let mut a = AntiLoop::default();
        let r = json!({"command": "python3 missing.py"});
        assert_eq!(a.check("run_shell", &r, 0, 1), LoopVerdict::Execute);
        a.executed(1);
        a.outcome(1, false, "[exit 2] can't open file 'missing.py'");
        assert_eq!(
            a.check("run_shell", &r, 1, 2),
            LoopVerdict::Intercept { level: 1 }
        );
        assert_eq!(
            a.check("run_shell", &r, 1, 3),
            LoopVerdict::Intercept { level: 2 }
        );
        assert!(matches!(
            a.check("run_shell", &r, 1, 4),
            LoopVerdict::Pause { .. }
        ));
    }

    #[test]
    fn an_outcome_belongs_to_its_own_call_only() {
        let mut a = AntiLoop::default();
        let x = json!({"path": "x.md"});
        let y = json!({"path": "y.md"});
        assert_eq!(a.check("read_file", &x, 0, 1), LoopVerdict::Execute);
        a.executed(0);
        a.outcome(1, true, "x");
        // a different call replaces the record; its repeat without an outcome is intercepted
        assert_eq!(a.check("read_file", &y, 0, 2), LoopVerdict::Execute);
        assert_eq!(
            a.check("read_file", &y, 0, 3),
            LoopVerdict::Intercept { level: 1 }
        );
    }

    #[test]
    fn file_content_is_compared_verbatim() {
        let two = json!({"path": "m.py", "content": "def f():\n  return 1\n"});
        let four = json!({"path": "m.py", "content": "def f():\n    return 1\n"});
        assert_ne!(
            signature("write_file", &two),
            signature("write_file", &four)
        );
        let e1 = json!({"path": "m.py", "old": "a  b", "new": "c"});
        let e2 = json!({"path": "m.py", "old": "a b", "new": "c"});
        assert_ne!(signature("edit_file", &e1), signature("edit_file", &e2));
        // other strings are still normalized, the path included
        assert_eq!(
            signature("write_file", &json!({"path": " m.py ", "content": "x"})),
            signature("write_file", &json!({"content": "x", "path": "m.py"}))
        );
    }

    #[test]
    fn unchanged_answers_say_what_is_in_place_and_harden() {
        let e = Earlier {
            turn: 3,
            ok: true,
            result: "wrote notes.md (now 8 bytes)".into(),
        };
        let w = json!({"path": "notes.md", "content": "# Notes\n"});
        let t1 = unchanged_text("write_file", &w, 1, &e);
        assert!(t1.starts_with(
            "unchanged: notes.md already has exactly this content (written at turn 3)"
        ));
        assert!(t1.contains("not executed again") && t1.ends_with("wrote notes.md (now 8 bytes)"));
        assert!(!t1.contains("third time"));
        let t2 = unchanged_text("write_file", &w, 2, &e);
        assert!(t2.contains("third time") && t2.contains("pauses write_file"));
        let ap = unchanged_text("append_file", &w, 1, &e);
        assert!(ap.contains("already appended to notes.md at turn 3"));
        let ed = unchanged_text("edit_file", &w, 1, &e);
        assert!(ed.contains("edit of notes.md was already applied at turn 3"));
        let rd = unchanged_text("run_shell", &json!({"command": "ls"}), 1, &e);
        assert!(rd.contains("turn 3, which succeeded") && rd.contains("still holds"));
        // every answer says plainly that nothing ran, and only file changes claim an effect
        for t in [&t1, &t2, &ap, &ed, &rd] {
            assert!(t.contains("not executed"), "{t}");
        }
        assert!(t1.contains("effect is already in place") && !rd.contains("effect"));
    }

    #[test]
    fn long_earlier_results_keep_head_and_tail() {
        let mut a = AntiLoop::default();
        let r = json!({"command": "cat big.txt"});
        a.check("run_shell", &r, 0, 7);
        let long = format!("HEAD{}TAIL", "x".repeat(5000));
        a.outcome(7, true, &long);
        let LoopVerdict::Unchanged { earlier, .. } = a.check("run_shell", &r, 0, 8) else {
            panic!("expected Unchanged");
        };
        assert!(earlier.result.starts_with("HEAD") && earlier.result.ends_with("TAIL"));
        assert!(earlier.result.contains("turn-7"));
        assert!(earlier.result.chars().count() < RESULT_CLIP + 120);
    }

    #[test]
    fn same_tool_streak_nudges_once() {
        let mut a = AntiLoop::default();
        let mut nudges = 0;
        for i in 0..12 {
            if let LoopVerdict::SameToolNudge { .. } =
                a.check("read_file", &json!({"path": format!("f{i}")}), 0, i)
            {
                nudges += 1;
            }
        }
        assert_eq!(nudges, 1);
    }

    #[test]
    fn empty_ladder_and_stall_watch() {
        let mut l = EmptyLadder::default();
        assert_eq!(l.on_empty(), EmptyAction::Nudge { level: 1 });
        assert_eq!(l.on_empty(), EmptyAction::Nudge { level: 2 });
        assert_eq!(l.on_empty(), EmptyAction::Reset);
        assert_eq!(l.on_empty(), EmptyAction::Nudge { level: 2 });
        assert_eq!(l.on_empty(), EmptyAction::Nudge { level: 2 });
        assert_eq!(l.on_empty(), EmptyAction::Reset);
        assert_eq!(l.on_empty(), EmptyAction::Nudge { level: 2 });
        assert_eq!(l.on_empty(), EmptyAction::Nudge { level: 2 });
        assert_eq!(l.on_empty(), EmptyAction::GiveUp);
        l.on_reply();
        assert_eq!(l.on_empty(), EmptyAction::Nudge { level: 1 });

        let mut s = StallWatch::default();
        let acts: Vec<_> = (0..STALL_GIVE_UP).map(|_| s.on_round(false)).collect();
        assert_eq!(acts[2], Some(StallAction::Replan));
        assert_eq!(acts[7], Some(StallAction::Escalate));
        assert_eq!(acts[19], Some(StallAction::GiveUp));
        assert_eq!(s.on_round(true), None);
        assert_eq!(s.streak, 0);
    }
}

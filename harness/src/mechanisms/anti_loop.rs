//! Signature anti-loop with graded escalation, an empty-turn ladder and a stall watch.
//!
//! A call's signature is the tool name plus its arguments normalized (keys sorted, strings
//! trimmed with whitespace runs collapsed, JSON-in-a-string decoded). An identical call is a
//! loop only if nothing changed in the workdir since the previous one (re-running the tests
//! after an edit is progress, not a loop), and polling commands (`sleep`, `wait`) are exempt.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, Value> =
                m.iter().map(|(k, x)| (k, normalize(x))).collect();
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

#[derive(Clone, Debug, PartialEq)]
pub enum LoopVerdict {
    Execute,
    /// Do not execute; `level` 1 = first repeat, 2 = second.
    Intercept {
        level: u32,
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
                return LoopVerdict::Pause { until_turn: until };
            }
            return LoopVerdict::Intercept { level: self.repeat };
        }
        self.repeat = 0;
        self.last_sig = Some(sig);
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

    /// Tools currently paused (left out of the tool list).
    pub fn paused_tools(&self, turn: u32) -> Vec<String> {
        self.paused
            .iter()
            .filter(|(_, &u)| turn < u)
            .map(|(t, _)| t.clone())
            .collect()
    }
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

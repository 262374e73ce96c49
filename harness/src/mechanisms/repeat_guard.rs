//! Loops across turns that the signature anti-loop (which compares a call only with the call
//! just before it) cannot see, as real small models run them: rewriting a file with the same
//! content and rerunning the same failing test, forever; the same failing command giving the
//! same result again and again; an edit that swings a file back and forth between two
//! versions. Part of `anti_loop`, and escalated the same way (a note, a stronger note, then
//! the tool is paused):
//!
//! * **pure reruns of a failure** — a call identical to one that failed, with nothing in the
//!   workdir changed since that call ran (its own effect excluded), is not executed; the third
//!   such rerun pauses the tool;
//! * **identical results** — a call that fails with the same result as its previous run
//!   (after changes) gets a note that the changes did not touch the failure;
//! * **per-tool failure counter** — the same tool failing again and again gets advice for that
//!   tool, and a file tool that keeps failing is paused;
//! * **edit convergence** — a write that brings a file back to an earlier version (an
//!   oscillation) is noted and does not count as progress; many changes to one file without
//!   running anything get a hint to check them.
//!
//! Everything is keyed on generic evidence (signatures, workdir changes, result digests, file
//! content digests) and stored as sha256 digests so the checkpoint reads the same in any build.

use lrab_util::sha256_hex;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Signatures remembered (the oldest are forgotten first).
pub const MEMO: usize = 64;
/// Failures of one tool in a row before advice, and before a file tool is paused.
pub const TOOL_FAIL_HINT: u32 = 3;
pub const TOOL_FAIL_PAUSE: u32 = 6;
/// Changes to one file in a row, without running anything, before a hint (and the second).
pub const EDIT_STREAK_HINT: u32 = 4;
/// File versions remembered per path.
pub const VERSIONS: usize = 6;
/// Characters of an earlier failure quoted when its rerun is not executed (its end).
pub const TAIL: usize = 400;

/// A stable digest of text (checkpointed).
pub fn digest(s: &str) -> String {
    sha256_hex(s.as_bytes())[..32].to_string()
}

fn volatile_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"\.lrab/out/\d+\.txt|\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds)\b|0x[0-9a-fA-F]+")
            .expect("static regex")
    })
}

/// Digest of a result with what changes between identical runs taken out (output file
/// numbers, durations, addresses).
pub fn result_digest(text: &str) -> String {
    digest(&volatile_re().replace_all(text, "#"))
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Memo {
    turn: u32,
    world_after: u64,
    ok: bool,
    result: String,
    tail: String,
    /// Identical failing results in a row, and the turn of the first.
    same: u32,
    first_turn: u32,
    /// Pure reruns refused since it ran.
    blocked: u32,
    /// A command's failing runs, each with the versions of the edited files it ran on (the
    /// last [`VERSIONS`]): a rerun on versions it already failed on, with only this command run
    /// since, is known to fail — an edit that swung a file back does not make it new.
    #[serde(default)]
    failed_on: Vec<FailedOn>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct FailedOn {
    edited: String,
    exec: u64,
    turn: u32,
    tail: String,
}

/// Commands failing in a row with the same result on the same versions of the edited files
/// (however the command was spelt).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct SameFail {
    result: String,
    edited: String,
    count: u32,
    first_turn: u32,
}

/// Commands failing the same way on unchanged files before `run_shell` is paused (the notes
/// come at 2 and 3).
pub const SAME_RESULT_PAUSE: u32 = 4;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct FileHist {
    versions: Vec<(String, u32)>,
    streak: u32,
    hints: u32,
    swings: u32,
}

/// The guard's answer before a call runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Before {
    Run,
    /// Not executed: it failed at `turn` and nothing changed since (`level` 1, 2); with
    /// `same_files`, the edited files are back at the versions it failed on and only this
    /// command ran since.
    Rerun {
        turn: u32,
        level: u32,
        tail: String,
        same_files: bool,
    },
    /// The third pure rerun: pause the tool.
    Pause,
}

/// What the guard adds after a call ran.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct After {
    /// Notes appended to the call's result.
    pub notes: Vec<String>,
    /// The call was no step forward (an oscillating write).
    pub no_progress: bool,
    /// Pause the tool.
    pub pause: bool,
    /// The call changed a file's content (a pause of `run_shell` ends: the rerun tests it).
    pub changed_file: bool,
    /// What fired, for the event log (action, detail).
    pub fired: Vec<(&'static str, serde_json::Value)>,
}

/// What happened in one executed call, for [`RepeatGuard::after`].
pub struct Ran<'a> {
    pub sig: &'a str,
    pub tool: &'a str,
    pub ok: bool,
    pub result: &'a str,
    pub world_after: u64,
    pub turn: u32,
    /// A successful file change: the path and the digest of its new content.
    pub file: Option<(&'a str, String)>,
    /// A polling command (`sleep`, `wait`): its results may repeat.
    pub polling: bool,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RepeatGuard {
    calls: BTreeMap<String, Memo>,
    tool_fail: BTreeMap<String, u32>,
    files: BTreeMap<String, FileHist>,
    last_write: Option<String>,
    /// Commands run, numbered, with their signatures (the last [`MEMO`]).
    #[serde(default)]
    execs: Vec<(u64, String)>,
    #[serde(default)]
    exec_count: u64,
    #[serde(default)]
    same_fail: Option<SameFail>,
    /// The change counter after the last call seen, and the changes no file digest shows
    /// (a write too large to hash): part of [`RepeatGuard::edited`].
    #[serde(default)]
    last_world: u64,
    #[serde(default)]
    opaque: u64,
}

/// Whether a tool runs commands (its runs are numbered; other commands in between may have
/// changed what the files do not show).
fn is_exec(tool: &str) -> bool {
    tool == "run_shell"
}

/// Tools never paused for failing (the way to test, plan and end).
fn never_paused(tool: &str) -> bool {
    matches!(tool, "run_shell" | "todo" | "finish")
}

impl RepeatGuard {
    /// The versions of every file the file tools changed (one digest).
    fn edited(&self) -> String {
        let mut all = format!("{}\n", self.opaque);
        for (path, h) in &self.files {
            if let Some((d, _)) = h.versions.last() {
                all.push_str(path);
                all.push('\0');
                all.push_str(d);
                all.push('\n');
            }
        }
        digest(&all)
    }

    /// Whether every command run after number `exec` was `sig` (the record reaches back).
    fn only_since(&self, exec: u64, sig: &str) -> bool {
        let reaches =
            self.execs.first().is_some_and(|(n, _)| *n <= exec + 1) || self.exec_count == exec;
        reaches && self.execs.iter().all(|(n, s)| *n <= exec || s == sig)
    }

    /// Before a call runs: `sig` is its signature digest, `world` the workdir change counter.
    pub fn before(&mut self, sig: &str, tool: &str, polling: bool, world: u64) -> Before {
        if polling {
            return Before::Run;
        }
        let known = self.calls.get(sig).and_then(|m| {
            if !m.ok && m.world_after == world {
                return Some((m.turn, m.tail.clone(), false));
            }
            // a change no call reported (a resumed run settling a call) voids what the
            // versions say; the versions are digested only for a command that failed before
            if !is_exec(tool) || world != self.last_world || m.failed_on.is_empty() {
                return None;
            }
            let e = self.edited();
            m.failed_on
                .iter()
                .rev()
                .find(|f| f.edited == e && self.only_since(f.exec, sig))
                .map(|f| (f.turn, f.tail.clone(), true))
        });
        let Some((turn, tail, same_files)) = known else {
            return Before::Run;
        };
        let m = self.calls.get_mut(sig).expect("known above");
        m.blocked += 1;
        if m.blocked >= 3 {
            m.blocked = 0;
            return Before::Pause;
        }
        Before::Rerun {
            turn,
            level: m.blocked,
            tail,
            same_files,
        }
    }

    /// After a call ran: same failures, failing commands, per-tool failures and edit
    /// convergence, each noted (and fired) as it happens.
    pub fn after(&mut self, r: &Ran<'_>) -> After {
        let mut out = After::default();
        let rd = result_digest(r.result);
        let prev = self.calls.get(r.sig);
        let (same, first_turn) = match prev {
            Some(p) if !r.ok && !p.ok && p.result == rd => (p.same + 1, p.first_turn),
            _ => (0, r.turn),
        };
        if same > 0 {
            out.notes.push(same_failure_note(first_turn, same + 1));
            out.fired.push((
                "same_failure",
                serde_json::json!({"tool": r.tool, "times": same + 1, "first_turn": first_turn}),
            ));
        }
        if !is_exec(r.tool) && r.file.is_none() && r.world_after != self.last_world {
            self.opaque += 1;
        }
        self.last_world = r.world_after;
        let mut failed_on = prev.map(|p| p.failed_on.clone()).unwrap_or_default();
        if is_exec(r.tool) {
            self.record_exec(r, &rd, same > 0, &mut failed_on, &mut out);
        }
        self.remember(
            r.sig,
            Memo {
                turn: r.turn,
                world_after: r.world_after,
                ok: r.ok,
                result: rd,
                tail: tail(r.result),
                same,
                first_turn,
                blocked: 0,
                failed_on,
            },
        );
        self.count_tool_failure(r, &mut out);
        self.track_edit(r, &mut out);
        out
    }

    /// A command ran: it joins the record of commands, and its failure the versions of the
    /// files it failed on (a pass clears them: they no longer say how it goes).
    fn record_exec(
        &mut self,
        r: &Ran<'_>,
        rd: &str,
        noted: bool,
        failed_on: &mut Vec<FailedOn>,
        out: &mut After,
    ) {
        self.exec_count += 1;
        self.execs.push((self.exec_count, r.sig.to_string()));
        if self.execs.len() > MEMO {
            self.execs.remove(0);
        }
        let edited = self.edited();
        if r.ok {
            failed_on.clear();
        } else {
            failed_on.push(FailedOn {
                edited: edited.clone(),
                exec: self.exec_count,
                turn: r.turn,
                tail: tail(r.result),
            });
            if failed_on.len() > VERSIONS {
                failed_on.remove(0);
            }
            if !r.polling {
                self.same_result(rd, edited, r.turn, noted, out);
            }
        }
    }

    /// Keeps the call's memo, forgetting the oldest beyond `MEMO` calls.
    fn remember(&mut self, sig: &str, memo: Memo) {
        self.calls.insert(sig.to_string(), memo);
        if self.calls.len() > MEMO {
            if let Some(oldest) = self
                .calls
                .iter()
                .min_by_key(|(_, m)| m.turn)
                .map(|(k, _)| k.clone())
            {
                self.calls.remove(&oldest);
            }
        }
    }

    /// Per-tool failure counter: a hint, then a pause, after so many failures in a row.
    fn count_tool_failure(&mut self, r: &Ran<'_>, out: &mut After) {
        let n = self.tool_fail.entry(r.tool.to_string()).or_insert(0);
        if r.ok {
            *n = 0;
            return;
        }
        *n += 1;
        let n = *n;
        if n == TOOL_FAIL_HINT || n == TOOL_FAIL_PAUSE {
            let pause = n == TOOL_FAIL_PAUSE && !never_paused(r.tool);
            out.notes.push(tool_failures_note(r.tool, n, pause));
            out.pause |= pause;
            out.fired.push((
                if pause {
                    "tool_failures_pause"
                } else {
                    "tool_failures"
                },
                serde_json::json!({"tool": r.tool, "failures": n}),
            ));
        }
    }

    /// Edit convergence: a file written back to an earlier version (oscillation), or changed
    /// again and again in a row with nothing run between (an edit streak).
    fn track_edit(&mut self, r: &Ran<'_>, out: &mut After) {
        if r.tool == "run_shell" {
            self.last_write = None;
        }
        let Some((path, d)) = &r.file else {
            return;
        };
        let h = self.files.entry(path.to_string()).or_default();
        let earlier = h
            .versions
            .iter()
            .rev()
            .skip(1)
            .find(|(v, _)| v == d)
            .map(|(_, t)| *t);
        let changed = h.versions.last().map(|(v, _)| v != d).unwrap_or(true);
        out.changed_file |= changed;
        if let (Some(t), true) = (earlier, changed) {
            h.swings += 1;
            out.notes.push(oscillation_note(path, t, h.swings));
            out.no_progress = true;
            out.fired.push((
                "oscillation",
                serde_json::json!({"path": path, "back_to_turn": t, "swings": h.swings}),
            ));
        }
        h.streak = if self.last_write.as_deref() == Some(*path) {
            h.streak + 1
        } else {
            1
        };
        if h.streak % EDIT_STREAK_HINT == 0 && h.hints < 2 {
            h.hints += 1;
            out.notes.push(edit_streak_note(path, h.streak, h.hints));
            out.fired.push((
                "edit_streak",
                serde_json::json!({"path": path, "changes": h.streak}),
            ));
        }
        h.versions.push((d.clone(), r.turn));
        if h.versions.len() > VERSIONS {
            h.versions.remove(0);
        }
        self.last_write = Some(path.to_string());
    }
}

impl RepeatGuard {
    /// A failing command's result against the previous failing command's: the same result on
    /// the same file versions, however spelt, is noted, then noted firmly, then `run_shell` is
    /// paused (until a file changes). `noted` when the per-call note already said it.
    fn same_result(&mut self, rd: &str, edited: String, turn: u32, noted: bool, out: &mut After) {
        let f = match self.same_fail.take() {
            Some(mut f) if f.result == rd && f.edited == edited => {
                f.count += 1;
                f
            }
            _ => SameFail {
                result: rd.to_string(),
                edited,
                count: 1,
                first_turn: turn,
            },
        };
        let (count, first) = (f.count, f.first_turn);
        self.same_fail = Some(f);
        // at 3 the per-tool failure counter gives its advice
        if count < 2 || count == 3 || (noted && count < SAME_RESULT_PAUSE) {
            return;
        }
        let pause = count >= SAME_RESULT_PAUSE;
        out.notes.push(same_result_note(first, count, pause));
        out.pause |= pause;
        out.fired.push((
            if pause {
                "same_result_pause"
            } else {
                "same_result"
            },
            serde_json::json!({"times": count, "first_turn": first}),
        ));
    }
}

/// The note on commands failing the same way with no file changed (`times` ≥ 2).
pub fn same_result_note(first_turn: u32, times: u32, paused: bool) -> String {
    if paused {
        format!("[{times} commands in a row have failed with this same result since turn {first_turn}, with no file changed: run_shell is paused until you change a file. Fix what the error names first.]")
    } else {
        format!("[the same result as the command at turn {first_turn}, and no file has changed since: running it another way will not change it. Change the code the error names first.]")
    }
}

fn tail(text: &str) -> String {
    let n = text.chars().count();
    if n <= TAIL {
        return text.to_string();
    }
    let t: String = text.chars().skip(n - TAIL).collect();
    format!("…{t}")
}

/// The answer to a pure rerun of a failed call (`level` 1 or 2); `same_files` when the files
/// are back at versions it failed on rather than unchanged.
pub fn rerun_text(
    tool: &str,
    turn: u32,
    level: u32,
    tail: &str,
    same_files: bool,
    next: &str,
) -> String {
    let why = if same_files {
        "the files you changed are exactly as they were when it ran then (your edits went back), and only this command ran since"
    } else {
        "nothing in the workdir has changed since"
    };
    if level == 1 {
        format!("not executed: this exact call failed at turn {turn}, and {why}, so it would fail the same way. The end of its result then:\n{tail}\nChange something first (fix what the error names), or take another approach. Next action: {next}")
    } else {
        format!("not executed again: the same failed call as at turn {turn}, and {why}. The next identical call pauses {tool}. Next action: {next}")
    }
}

/// The note on a failure identical to the previous run of the same call.
pub fn same_failure_note(first_turn: u32, times: u32) -> String {
    if times == 2 {
        format!("[same failure as at turn {first_turn}: the changes since did not change this result. Read the error (file, line) and change what it names, or try another approach.]")
    } else {
        format!("[the same failure {times} times in a row (first at turn {first_turn}): stop repeating this fix. State the cause you suspect, make one change that tests it, or undo your last change with rollback.]")
    }
}

/// Advice after a tool failed `n` times in a row.
pub fn tool_failures_note(tool: &str, n: u32, paused: bool) -> String {
    let advice = match tool {
        "edit_file" => "read_file the lines first and copy 'old' exactly, or write the whole file with write_file",
        "write_file" | "append_file" => "check the path (relative, inside this directory) and pass both path and content",
        "read_file" | "list_dir" | "search_files" => "list_dir to see which files exist",
        "run_shell" => "read the error output; check the command exists here (python3, not python) and fix the code it names before running it again",
        _ => "change your approach",
    };
    let pause = if paused {
        format!(" {tool} is paused for a few turns.")
    } else {
        String::new()
    };
    format!("[{tool} failed {n} times in a row: {advice}.{pause}]")
}

/// The note on a write that brought a file back to an earlier version.
pub fn oscillation_note(path: &str, turn: u32, swings: u32) -> String {
    if swings == 1 {
        format!("[{path} is now exactly as it was at turn {turn}: your changes are going back and forth between versions. Decide from the test output which version is right, and stop changing it back.]")
    } else {
        format!("[{path} is back to an earlier version again (turn {turn}). Stop switching: state the cause you suspect, then make one change that tests it.]")
    }
}

/// The hint after many changes to one file without running anything (`hint` 1 or 2).
pub fn edit_streak_note(path: &str, changes: u32, hint: u32) -> String {
    if hint == 1 {
        format!("[{changes} changes to {path} in a row without running anything: run its tests or the script now to check them.]")
    } else {
        format!("[{changes} changes to {path} in a row: before changing it again, state the root cause you are fixing.]")
    }
}

#[cfg(test)]
#[path = "repeat_guard_tests.rs"]
mod tests;

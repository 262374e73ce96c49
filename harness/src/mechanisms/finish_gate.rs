//! Finish gate with executable checks. On every finish (or completion claim) the checks run in
//! order, each with its own cap so the gate can never deadlock:
//! 1. nothing productive happened yet → reject (cap 2);
//! 2. artifacts the task names must exist and be non-empty (cap 3);
//! 3. the task's own tests are run; the first real failure (file, line, error) goes back to the
//!    model (cap 3);
//! 4. plan sync: open plan items → reject with the cheap `todo done_all` exit (cap 2);
//! 5. once per run, re-read the task text and re-check before finishing again.
//!
//! Every rejection names the next executable action.

use crate::shaping::{detect_verdict, first_failure, is_test_command, Verdict};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

pub const CAP_FAKE: u32 = 2;
pub const CAP_ARTIFACTS: u32 = 3;
pub const CAP_TESTS: u32 = 3;
pub const CAP_PLAN: u32 = 2;
/// Test commands run per gate pass.
pub const MAX_TEST_COMMANDS: usize = 2;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FinishGate {
    pub fake: u32,
    pub artifacts: u32,
    pub tests: u32,
    pub plan: u32,
    pub reread: bool,
}

/// What the gate needs from the run.
pub struct GateInput<'a> {
    pub task: &'a str,
    /// A productive tool (write, edit, append, shell) has run.
    pub productive: bool,
    pub open_plan_items: Vec<String>,
    /// Precise failure feedback (`verify_feedback` mechanism).
    pub verify_feedback: bool,
    /// The task (or a restatement) is recent: the files rejection need not copy it again.
    pub task_in_view: bool,
}

/// Result of one test command.
#[derive(Clone, Debug)]
pub struct TestRun {
    pub exit: Option<i32>,
    pub timed_out: bool,
    pub output: String,
}

/// Effects the gate needs: the workdir and a way to run a command.
pub trait GateEnv {
    /// Size of a workdir-relative file, `None` when missing.
    fn file_size(&self, rel: &str) -> Option<u64>;
    /// Workdir-relative paths of top-level files.
    fn top_files(&self) -> Vec<String>;
    fn read_text(&self, rel: &str) -> Option<String>;
    fn run_test(&mut self, cmd: &str) -> TestRun;
}

#[derive(Clone, Debug, PartialEq)]
pub enum GateDecision {
    Accept,
    Reject {
        check: &'static str,
        message: String,
    },
}

/// Result of running the task's tests (also feeds the verification report).
#[derive(Clone, Debug, PartialEq)]
pub struct TestOutcome {
    pub command: String,
    pub verdict: Verdict,
}

fn artifact_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?:^|[\s`'(\[*:,])((?:[A-Za-z0-9_-]+/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*?\.(?:md|txt|csv|py|json|jsonl|yaml|yml|png|jpg|svg|html|tsv|log|tex|toml|ini|sh|sql|xml))\b")
            .expect("static regex")
    })
}

/// `a01.md .. a08.md` written as two full names (with optional backticks).
fn range2_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"((?:[A-Za-z0-9_-]+/)*[A-Za-z0-9_-]*?)(\d+)(\.[a-z]+)`?\s*(?:\.\.\.?|…|to|through)\s*`?((?:[A-Za-z0-9_-]+/)*[A-Za-z0-9_-]*?)(\d+)(\.[a-z]+)").expect("static regex")
    })
}

fn range_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"((?:[A-Za-z0-9_-]+/)*[A-Za-z0-9_-]*?)([A-Za-z]*)(\d+)\.\.([A-Za-z]*)(\d+)(\.[a-z]+)\b").expect("static regex")
    })
}

/// Sentences that mention a file without requiring it.
fn optional_sentence(s: &str) -> bool {
    let l = s.to_lowercase();
    [
        "otherwise",
        "optional",
        "e.g.",
        "for example",
        "do not ",
        "don't",
        "if you have no",
        "must not",
        "never ",
    ]
    .iter()
    .any(|w| l.contains(w))
}

/// Whether a file name is a pattern rather than a name: its stem holds a placeholder such as
/// `NN` (`fix_log_mNN.md`), `XX`, `YYYY-MM-DD` or a lone `N` (`partN.md`) — capitals standing
/// for digits, next to no other capital (so `README.md` or `RUNNING.md` are names). A task
/// that writes `fix_log_mNN.md` means the numbered files it names elsewhere; no file of that
/// name can ever be asked for.
pub fn is_placeholder_name(name: &str) -> bool {
    let file = name.rsplit('/').next().unwrap_or(name);
    let stem = file.rsplit_once('.').map_or(file, |(s, _)| s).as_bytes();
    let mut i = 0;
    while i < stem.len() {
        let c = stem[i];
        let mut j = i;
        while j < stem.len() && stem[j] == c {
            j += 1;
        }
        let run = j - i;
        let alone = (i == 0 || !stem[i - 1].is_ascii_uppercase())
            && (j == stem.len() || !stem[j].is_ascii_uppercase());
        if alone && (run >= 2 && b"NXYMD".contains(&c) || run == 1 && c == b'N') {
            // a lone N must stand between separators or after a lowercase word (`partN`)
            let after = stem.get(j).copied();
            if run >= 2 || matches!(after, None | Some(b'_' | b'-')) {
                return true;
            }
        }
        i = j;
    }
    false
}

/// Files a task names as deliverables, in order of first mention. Ranges such as
/// `fix_log_m01..m10.md` are expanded; patterns such as `fix_log_mNN.md` are not names
/// ([`is_placeholder_name`]).
pub fn named_artifacts(task: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let push = |s: String, out: &mut Vec<String>| {
        if s != "task_input.txt" && !is_placeholder_name(&s) && !out.contains(&s) {
            out.push(s);
        }
    };
    for line in task.lines() {
        if optional_sentence(line) {
            continue;
        }
        for c in range_re().captures_iter(line) {
            let prefix = &c[1];
            let (l1, l2) = (&c[2], &c[4]);
            let (a, b) = (&c[3], &c[5]);
            let ext = &c[6];
            if l2.is_empty() || l1 == l2 {
                if let (Ok(x), Ok(y)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    if x <= y && y - x < 50 {
                        for n in x..=y {
                            push(format!("{prefix}{l1}{n:0w$}{ext}", w = a.len()), &mut out);
                        }
                    }
                }
            }
        }
        for c in range2_re().captures_iter(line) {
            let (p1, a, e1, p2, b, e2) = (&c[1], &c[2], &c[3], &c[4], &c[5], &c[6]);
            if p1 == p2 && e1 == e2 {
                if let (Ok(x), Ok(y)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    if x <= y && y - x < 50 {
                        for n in x..=y {
                            push(format!("{p1}{n:0w$}{e1}", w = a.len()), &mut out);
                        }
                    }
                }
            }
        }
        let cleaned = range_re().replace_all(line, " ");
        for c in artifact_re().captures_iter(&cleaned) {
            let m = c.get(1).expect("group");
            let before = &cleaned[..m.start()];
            if before.ends_with("//") || before.ends_with("://") || m.as_str().contains("..") {
                continue;
            }
            push(m.as_str().trim_start_matches("./").to_string(), &mut out);
        }
    }
    out
}

fn cmd_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(python3? -m pytest(?: [\w./=:-]+)*|pytest(?: [\w./=:-]+)+|python3? (?:[\w./-]*/)?test[\w.-]*\.py(?: [\w./=-]+)*)").expect("static regex")
    })
}

/// Test commands implied by the task: commands the prompt names, pytest files present in the
/// workdir (`test_*.py` with `def test_`), and script-style suites (`test_suite.py`).
pub fn detect_test_commands(task: &str, env: &dyn GateEnv) -> Vec<String> {
    let mut cmds: Vec<String> = Vec::new();
    for m in cmd_re().find_iter(task) {
        let c = m.as_str().trim_end_matches(['.', ',', ':']).to_string();
        if !cmds.contains(&c) {
            cmds.push(c);
        }
    }
    let mut pytest_files = Vec::new();
    for f in env.top_files() {
        let is_test = (f.starts_with("test_") || f.ends_with("_test.py")) && f.ends_with(".py");
        if !is_test || cmds.iter().any(|c| c.contains(&f)) {
            continue;
        }
        let text = env.read_text(&f).unwrap_or_default();
        if text.contains("def test_") {
            pytest_files.push(f);
        } else if text.contains("__main__") || f.contains("suite") {
            cmds.push(format!("python3 {f}"));
        }
    }
    if !pytest_files.is_empty() {
        cmds.push(format!("python3 -m pytest -q {}", pytest_files.join(" ")));
    }
    cmds.truncate(MAX_TEST_COMMANDS);
    cmds
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "'"))
}

impl FinishGate {
    /// Run the checks. `tests_run` receives the outcome of every test command run.
    /// The first check that rejects decides; each is capped so the model cannot be held forever.
    pub fn evaluate(
        &mut self,
        input: &GateInput<'_>,
        env: &mut dyn GateEnv,
        tests_run: &mut Vec<TestOutcome>,
    ) -> GateDecision {
        let named = named_artifacts(input.task);
        self.nothing_done(input, env, &named)
            .or_else(|| self.missing_artifacts(input, env, &named))
            .or_else(|| self.failing_tests(input, env, tests_run))
            .or_else(|| self.open_plan(input))
            .or_else(|| self.reread(input))
            .unwrap_or(GateDecision::Accept)
    }

    /// 1. Nothing done yet: no file written, no command run.
    fn nothing_done(
        &mut self,
        input: &GateInput<'_>,
        env: &dyn GateEnv,
        named: &[String],
    ) -> Option<GateDecision> {
        if input.productive || self.fake >= CAP_FAKE {
            return None;
        }
        self.fake += 1;
        let next = match named.iter().find(|a| env.file_size(a).unwrap_or(0) == 0) {
            Some(a) => format!(
                "write_file(path={}, content=...) with the real content",
                quote(a)
            ),
            None => {
                "run_shell to compute what the task asks, then write the result files".to_string()
            }
        };
        Some(GateDecision::Reject {
            check: "fake_finish",
            message: format!(
                "Not finished: no file has been written and no command has run yet, so the task cannot be done. Next action: {next}."
            ),
        })
    }

    /// 2. The files the task names exist and are non-empty.
    fn missing_artifacts(
        &mut self,
        input: &GateInput<'_>,
        env: &dyn GateEnv,
        named: &[String],
    ) -> Option<GateDecision> {
        if self.artifacts >= CAP_ARTIFACTS {
            return None;
        }
        let missing: Vec<&String> = named
            .iter()
            .filter(|a| env.file_size(a).is_none())
            .collect();
        let empty: Vec<&String> = named
            .iter()
            .filter(|a| env.file_size(a) == Some(0))
            .collect();
        let first = missing.first().or(empty.first())?;
        self.artifacts += 1;
        let mut msg = String::from("Not finished: ");
        if !missing.is_empty() {
            msg.push_str(&format!(
                "missing file(s) the task names: {}. ",
                missing
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !empty.is_empty() {
            msg.push_str(&format!(
                "empty file(s): {}. ",
                empty
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        msg.push_str(&format!(
            "Next action: write_file(path={}, content=...) with its full content.",
            quote(first)
        ));
        // restate the task when it lies far back (in view, a copy is only paid for)
        if !input.task_in_view {
            let t = task_excerpt(input.task);
            msg.push_str(&format!("\nThe task, restated:\n---\n{t}\n---"));
        }
        Some(GateDecision::Reject {
            check: "artifacts",
            message: msg,
        })
    }

    /// 3. The task's own tests: runs each, rejects at the first that fails.
    fn failing_tests(
        &mut self,
        input: &GateInput<'_>,
        env: &mut dyn GateEnv,
        tests_run: &mut Vec<TestOutcome>,
    ) -> Option<GateDecision> {
        if self.tests >= CAP_TESTS {
            return None;
        }
        for cmd in detect_test_commands(input.task, env) {
            let run = env.run_test(&cmd);
            let verdict = test_verdict(&cmd, &run);
            tests_run.push(TestOutcome {
                command: cmd.clone(),
                verdict,
            });
            if verdict == Verdict::Failed {
                self.tests += 1;
                return Some(GateDecision::Reject {
                    check: "tests",
                    message: test_failure_message(&cmd, &run, input.verify_feedback),
                });
            }
        }
        None
    }

    /// 4. Plan sync: open plan items are either done or the next thing to do.
    fn open_plan(&mut self, input: &GateInput<'_>) -> Option<GateDecision> {
        if input.open_plan_items.is_empty() || self.plan >= CAP_PLAN {
            return None;
        }
        self.plan += 1;
        let list: Vec<String> = input
            .open_plan_items
            .iter()
            .take(5)
            .map(|s| format!("- {s}"))
            .collect();
        Some(GateDecision::Reject {
            check: "plan_sync",
            message: format!(
                "Your plan still has {} open item(s):\n{}\nIf they are really done, call todo(action=\"done_all\") and then finish. Otherwise do the next one now.",
                input.open_plan_items.len(),
                list.join("\n")
            ),
        })
    }

    /// 5. One re-read of the task, always copied: every requirement next to the claim.
    fn reread(&mut self, input: &GateInput<'_>) -> Option<GateDecision> {
        if self.reread {
            return None;
        }
        self.reread = true;
        Some(GateDecision::Reject {
            check: "reread",
            message: format!(
                "Before finishing, re-read the task and check every named file, number, section and format against it:\n---\n{}\n---\nFix anything missing with a tool call; if everything is right, call finish again.",
                task_excerpt(input.task)
            ),
        })
    }
}

/// A test command's verdict: the test runner's own summary when it prints one, else the exit
/// status for a known test command or any command that exited.
fn test_verdict(cmd: &str, run: &TestRun) -> Verdict {
    if run.timed_out {
        return Verdict::Failed;
    }
    match detect_verdict(&run.output, run.exit) {
        Some(v) => v,
        None if is_test_command(cmd) || run.exit.is_some() => {
            if run.exit == Some(0) {
                Verdict::Passed
            } else {
                Verdict::Failed
            }
        }
        None => Verdict::Unknown,
    }
}

/// What a failed test command tells the model: what went wrong and the next action (pointing
/// at the first failure's file when `verify_feedback` is on).
fn test_failure_message(cmd: &str, run: &TestRun, verify_feedback: bool) -> String {
    let detail = if run.timed_out {
        "it timed out (an endless loop or a blocking input?)".to_string()
    } else if verify_feedback {
        match first_failure(&run.output) {
            Some(f) => format!("first failure: {}", f.describe()),
            None => format!("last output line: {}", last_line(&run.output)),
        }
    } else {
        format!("last output line: {}", last_line(&run.output))
    };
    let next = if verify_feedback {
        match first_failure(&run.output).and_then(|f| f.file) {
            Some(file) if !file.contains("test") => {
                format!("read_file(path={}) around that line, fix the code with edit_file, then run {}", quote(&file), quote(cmd))
            }
            _ => format!("read the failing test, fix the code it tests (not the test), then run_shell(command={})", quote(cmd)),
        }
    } else {
        format!("fix the code, then run_shell(command={})", quote(cmd))
    };
    format!("Not finished: the tests fail. I ran `{cmd}`: {detail}. Next action: {next}.")
}

fn last_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(200)
        .collect()
}

/// The task text, or its head and tail when long.
pub fn task_excerpt(task: &str) -> String {
    let n = task.chars().count();
    if n <= 2400 {
        return task.to_string();
    }
    let head: String = task.chars().take(1200).collect();
    let tail: String = task.chars().skip(n - 1200).collect();
    format!("{head}\n[…]\n{tail}")
}

#[cfg(test)]
#[path = "finish_gate_tests.rs"]
mod tests;

//! The loops real small models run, through the agent loop with scripted replies (no model):
//! rewriting a file with identical content and rerunning the same failing test; the same
//! failing command giving the same result after changes; edits that swing a file between two
//! versions; one tool failing again and again. Each is detected and escalated as the anti-loop
//! does (a note, a stronger one, a paused tool). Also the per-round state line, and old tool
//! output pruned before the single compaction.

mod common;

use common::*;
use lrab_harness::backend::ScriptedModel;
use lrab_harness::{Agent, Reply};
use serde_json::json;
use std::fs;
use std::path::Path;

const TASK: &str = "Fix calc.py so that test_calc.py passes, and write notes.md about the fix.";
const BUGGY: &str = "def add(a, b):\n    return a - b\n";

fn sh(cmd: &str) -> Reply {
    Reply::call("run_shell", json!({"command": cmd}))
}

fn write(path: &str, content: &str) -> Reply {
    Reply::call("write_file", json!({"path": path, "content": content}))
}

fn setup(dir: &Path) {
    fs::write(dir.join("calc.py"), BUGGY).unwrap();
    fs::write(
        dir.join("test_calc.py"),
        "from calc import add\nassert add(2, 3) == 5, 'add is wrong'\nprint('ok')\n",
    )
    .unwrap();
}

fn run(dir: &Path, replies: Vec<Reply>) -> Agent<ScriptedModel> {
    let n = replies.len();
    let mut a = agent_in(dir, TASK, replies);
    for _ in 0..n {
        a.step();
    }
    a
}

/// The results the model got, in order.
fn results(a: &Agent<ScriptedModel>) -> Vec<&str> {
    a.state
        .messages
        .iter()
        .filter(|m| m.role == lrab_harness::Role::Tool)
        .map(|m| m.content.as_str())
        .collect()
}

/// `run_shell` calls that were executed (not answered by a mechanism).
fn commands_run(dir: &Path) -> usize {
    events(dir)
        .iter()
        .filter(|e| {
            e["kind"] == "tool_call" && e["name"] == "run_shell" && e["intercepted"] == false
        })
        .count()
}

#[test]
fn identical_rewrites_and_reruns_of_a_failing_test_are_refused_then_paused() {
    let d = tempfile::tempdir().unwrap();
    setup(d.path());
    let test = || sh("python3 test_calc.py");
    let same = || write("calc.py", BUGGY);
    let a = run(
        d.path(),
        vec![
            test(),
            same(),
            test(),
            same(),
            test(),
            same(),
            test(),
            test(),
        ],
    );
    let r = results(&a);
    assert!(r[0].contains("add is wrong"), "{}", r[0]);
    // rewriting the file with what it holds changes nothing, and says so
    assert!(
        r[1].starts_with("unchanged: calc.py already has exactly this content"),
        "{}",
        r[1]
    );
    // so the rerun is a pure rerun of a failure: not executed, the failure quoted
    assert!(
        r[2].contains("this exact call failed at turn 0")
            && r[2].contains("nothing in the workdir has changed")
            && r[2].contains("add is wrong"),
        "{}",
        r[2]
    );
    assert!(r[4].contains("not executed again"), "{}", r[4]);
    assert!(r[6].contains("paused until turn"), "{}", r[6]);
    assert!(r[7].contains("paused"), "{}", r[7]);
    // the test ran once; the file was never rewritten
    assert_eq!(commands_run(d.path()), 1);
    assert_eq!(mech_count(d.path(), "anti_loop", "rerun_refused"), 2);
    assert!(mech_count(d.path(), "anti_loop", "pause_tool") >= 1);
}

#[test]
fn the_same_failure_after_changes_is_named_as_such() {
    let d = tempfile::tempdir().unwrap();
    setup(d.path());
    let test = || sh("python3 test_calc.py");
    let a = run(
        d.path(),
        vec![
            test(),
            write("calc.py", "def add(a, b):\n    return a - b  # sum\n"),
            test(),
            write("calc.py", "def add(a, b):\n    return b - a\n"),
            test(),
        ],
    );
    let r = results(&a);
    assert!(r[2].contains("add is wrong"), "{}", r[2]);
    assert!(r[2].contains("[same failure as at turn 0"), "{}", r[2]);
    assert!(
        r[4].contains("the same failure 3 times in a row"),
        "{}",
        r[4]
    );
    assert_eq!(commands_run(d.path()), 3);
    assert_eq!(mech_count(d.path(), "anti_loop", "same_failure"), 2);
}

#[test]
fn edits_swinging_between_two_versions_are_noted_and_are_no_progress() {
    let d = tempfile::tempdir().unwrap();
    setup(d.path());
    let v1 = "def add(a, b):\n    return a + b\n";
    let a = run(
        d.path(),
        vec![
            write("calc.py", v1),
            write("calc.py", BUGGY),
            write("calc.py", v1),
            write("calc.py", BUGGY),
        ],
    );
    let r = results(&a);
    assert!(!r[1].contains("exactly as it was"), "{}", r[1]);
    assert!(
        r[2].contains("calc.py is now exactly as it was at turn 0")
            && r[2].contains("going back and forth"),
        "{}",
        r[2]
    );
    assert!(
        r[3].contains("back to an earlier version again"),
        "{}",
        r[3]
    );
    assert!(r[3].contains("4 changes to calc.py in a row"), "{}", r[3]);
    assert_eq!(mech_count(d.path(), "anti_loop", "oscillation"), 2);
}

#[test]
fn a_tool_that_keeps_failing_gets_advice_then_is_paused() {
    let d = tempfile::tempdir().unwrap();
    setup(d.path());
    let edit = |i: usize| {
        Reply::call(
            "edit_file",
            json!({"path": "calc.py", "old": format!("return a * b  # {i}"), "new": "return a + b"}),
        )
    };
    let a = run(d.path(), (0..7).map(edit).collect());
    let r = results(&a);
    assert!(
        r[2].contains("[edit_file failed 3 times in a row")
            && r[2].contains("read_file the lines first"),
        "{}",
        r[2]
    );
    assert!(r[5].contains("edit_file is paused"), "{}", r[5]);
    assert!(r[6].contains("paused until turn"), "{}", r[6]);
    assert_eq!(mech_count(d.path(), "anti_loop", "tool_failures"), 1);
    assert_eq!(mech_count(d.path(), "anti_loop", "tool_failures_pause"), 1);
}

/// A round ends with the state line when what it says changed (a reminder every 5 rounds
/// otherwise): a round that leaves plan, deliverables and verdict as they were adds none.
#[test]
fn a_round_ends_with_the_state_line_when_it_changed() {
    let d = tempfile::tempdir().unwrap();
    setup(d.path());
    let a = run(
        d.path(),
        vec![
            Reply::call(
                "todo",
                json!({"action": "create", "items": ["fix calc.py", "write notes.md"]}),
            ),
            sh("python3 test_calc.py"),
            write("notes.md", "# Notes\n"),
            Reply::call("list_dir", json!({})),
            Reply::call("read_file", json!({"path": "notes.md"})),
        ],
    );
    let r = results(&a);
    assert!(!r[3].contains("[state:"), "{}", r[3]);
    assert!(!r[4].contains("[state:"), "{}", r[4]);
    let last_line = |s: &str| s.lines().last().unwrap().to_string();
    assert_eq!(
        last_line(r[0]),
        "[state: turn 1/200 · plan 0/2 done, next item 1 · deliverables 2/3, missing notes.md]"
    );
    assert_eq!(
        last_line(r[1]),
        "[state: turn 2/200 · plan 0/2 done, next item 1 · deliverables 2/3, missing notes.md · last test FAILED]"
    );
    assert!(
        last_line(r[2]).contains("deliverables 3/3 written"),
        "{}",
        r[2]
    );
    // the state line is in the newest message only; the system prompt never changes
    let sys: Vec<&str> = a
        .model
        .seen
        .iter()
        .map(|s| s.messages[0].content.as_str())
        .collect();
    assert!(sys.iter().all(|s| *s == sys[0] && !s.contains("[state:")));
    // switched off with its ablation
    let d = tempfile::tempdir().unwrap();
    setup(d.path());
    let mut cfg = config(d.path(), TASK);
    cfg.ablations = lrab_harness::Ablations::parse("state_line").unwrap();
    let mut a = Agent::new(
        cfg,
        ScriptedModel::replies(vec![sh("python3 test_calc.py")]),
    )
    .unwrap();
    a.step();
    assert!(!results(&a)[0].contains("[state:"));
}

#[test]
fn old_tool_output_is_pruned_before_the_conversation_is_compacted() {
    let d = tempfile::tempdir().unwrap();
    let a = part_reader(d.path(), 4096);
    let ev = events(d.path());
    let pos = |action: &str| {
        ev.iter().position(|e| {
            e["kind"] == "mechanism" && e["name"] == "context" && e["action"] == action
        })
    };
    let prune = pos("prune").expect("pruned");
    let compact = pos("compact").expect("compacted");
    assert!(prune < compact, "pruned first");
    // a pruned result keeps its head and says how to get the rest
    let pruned = a.model.seen[compact.min(a.model.seen.len() - 1)]
        .messages
        .iter()
        .chain(a.state.messages.iter())
        .find(|m| m.content.contains("[older output pruned:"));
    assert!(pruned.is_some_and(|m| m.content.starts_with("part ") && m.content.contains("re-read")));
    // every request fit the window with room for a reply
    for e in ev.iter().filter(|e| e["kind"] == "model_call") {
        assert!(e["est_tokens"].as_u64().unwrap() + 256 <= 4096, "{e}");
    }
}

/// After a command failed, the next action the nudges name is the fix of the file and line its
/// error names (not writing a deliverable by hand), and after a change, the run again.
#[test]
fn after_a_failed_run_the_next_action_is_its_fix_then_the_run_again() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("build.py"),
        "import sys\nOUT = ROOT / 'out'\n",
    )
    .unwrap();
    let task = "Run build.py to produce manual.md.";
    let mut a = agent_in(
        d.path(),
        task,
        vec![
            sh("python3 build.py"),
            Reply::text("I have made a start on this task. I will stop here for now."),
            write("build.py", "open('manual.md', 'w').write('# Manual\\n')\n"),
            Reply::text("Done for now."),
        ],
    );
    for _ in 0..4 {
        a.step();
    }
    let nudges = nudges(&a);
    assert!(
        nudges[0].contains("Next action: fix build.py line 2 (NameError: name 'ROOT' is not defined) with edit_file or write_file, then run_shell(command=\"python3 build.py\") again"),
        "{}",
        nudges[0]
    );
    assert!(
        nudges[1].contains(
            "Next action: run_shell(command=\"python3 build.py\") again, to check the change"
        ),
        "{}",
        nudges[1]
    );
}

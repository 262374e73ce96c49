//! The next action after a command that failed: the harness's nudges name one next action, and
//! when the latest command run failed, writing a deliverable by hand (what the missing-file
//! rule would suggest) skips the failure that keeps the deliverable from being produced. While
//! nothing was written since, the action is to fix the file and line the error names (the
//! deepest frame in the workdir); after a change, to run the command again. Which results
//! were runs that passed or failed and which changed a file is read from each result's
//! `mark` (a `ResultMark`, set from the call's typed outcome); only the failure's location is
//! read from the command's own output.

use crate::messages::{Message, ResultMark, Role};
use crate::shaping::first_failure;

/// Tool results looked back over for the latest command run.
pub const LOOK_BACK: usize = 6;

/// The command of the call a tool result answers.
fn command_of(messages: &[Message], result: &Message) -> Option<String> {
    let id = result.tool_call_id.as_deref()?;
    messages
        .iter()
        .rev()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| m.tool_calls.iter())
        .find(|c| c.id == id)
        .and_then(|c| c.arg_str("command"))
}

fn quote(s: &str) -> String {
    let one: String = s.replace('"', "'").chars().take(160).collect();
    format!("\"{one}\"")
}

/// The next action when the latest command run (among the last [`LOOK_BACK`] tool results)
/// failed: fix what its error names, or run it again once a file was written since.
pub fn next_action(messages: &[Message]) -> Option<String> {
    let mut changed = false;
    let results = messages.iter().rev().filter(|m| m.role == Role::Tool);
    for m in results.take(LOOK_BACK) {
        // the outcome the call left on its result (ResultMark), not the result's wording
        match m.mark {
            Some(ResultMark::Changed) => changed = true,
            Some(ResultMark::Passed) => return None,
            Some(ResultMark::Failed) => {
                let cmd = command_of(messages, m)?;
                if changed {
                    return Some(format!(
                        "run_shell(command={}) again, to check the change",
                        quote(&cmd)
                    ));
                }
                let f = first_failure(&m.content)?;
                let file = f.file.as_deref().filter(|p| !p.starts_with('/'))?;
                let at = f.line.map(|l| format!(" line {l}")).unwrap_or_default();
                let error: String = f.error.chars().take(120).collect();
                if file.contains("test") {
                    // a failing test: the code it tests is what needs the fix
                    return Some(format!(
                        "read {file}{at} ({error}), fix the code it tests (not the test), then run_shell(command={}) again",
                        quote(&cmd)
                    ));
                }
                return Some(format!(
                    "fix {file}{at} ({error}) with edit_file or write_file, then run_shell(command={}) again",
                    quote(&cmd)
                ));
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::ToolCall;

    use serde_json::json;

    /// A run_shell call and its result, with the mark dispatch would give it.
    fn run(id: &str, cmd: &str, out: &str, mark: ResultMark) -> Vec<Message> {
        let c = ToolCall {
            id: id.into(),
            ..ToolCall::new("run_shell", json!({ "command": cmd }))
        };
        vec![
            Message::assistant("", vec![c.clone()]),
            Message::tool_result(&c, out).marked(Some(mark)),
        ]
    }

    /// A write_file call and its result (`mark`: `Changed` when it wrote, none when not).
    fn write(id: &str, path: &str, out: &str, mark: Option<ResultMark>) -> Vec<Message> {
        let c = ToolCall {
            id: id.into(),
            ..ToolCall::new("write_file", json!({"path": path, "content": "x"}))
        };
        vec![
            Message::assistant("", vec![c.clone()]),
            Message::tool_result(&c, out).marked(mark),
        ]
    }

    const TB: &str = "[exit 1]\nTraceback (most recent call last):\n  File \"profile.py\", line 18, in <module>\n    import ref\n  File \"ref.py\", line 13, in <module>\n    OUT = ROOT / \"out\"\nNameError: name 'ROOT' is not defined\n";

    #[test]
    fn a_failed_run_points_at_the_deepest_workdir_frame_then_at_running_it_again() {
        let mut m = vec![Message::system("s"), Message::user("t")];
        m.extend(run(
            "c1",
            "python3 profile.py corpus out.json",
            TB,
            ResultMark::Failed,
        ));
        let a = next_action(&m).unwrap();
        assert_eq!(
            a,
            "fix ref.py line 13 (NameError: name 'ROOT' is not defined) with edit_file or write_file, then run_shell(command=\"python3 profile.py corpus out.json\") again"
        );
        // an identical rewrite changes nothing; a real one asks for the run again
        m.extend(write(
            "c2",
            "ref.py",
            "unchanged: ref.py already has exactly this content",
            None,
        ));
        assert_eq!(next_action(&m).unwrap(), a);
        m.extend(write(
            "c3",
            "ref.py",
            "wrote ref.py (now 900 bytes)",
            Some(ResultMark::Changed),
        ));
        assert_eq!(
            next_action(&m).unwrap(),
            "run_shell(command=\"python3 profile.py corpus out.json\") again, to check the change"
        );
        // a failing test points at the code it tests
        let mut t = vec![Message::user("t")];
        t.extend(run(
            "c9",
            "python3 -m pytest -q",
            "[verdict: FAILED] [exit 1]\nTraceback (most recent call last):\n  File \"test_calc.py\", line 2, in <module>\n    assert add(2, 3) == 5\nAssertionError\n",
            ResultMark::Failed,
        ));
        assert!(next_action(&t).unwrap().starts_with(
            "read test_calc.py line 2 (AssertionError), fix the code it tests (not the test)"
        ));
        // a run that worked ends it
        m.extend(run(
            "c4",
            "python3 profile.py corpus out.json",
            "[exit 0]\nok",
            ResultMark::Passed,
        ));
        assert_eq!(next_action(&m), None);
    }

    #[test]
    fn nothing_to_say_without_a_recent_failed_run_with_a_workdir_location() {
        let mut m = vec![Message::user("t")];
        assert_eq!(next_action(&m), None);
        m.extend(run(
            "c1",
            "ls",
            "[exit 2]\nls: cannot access 'x'",
            ResultMark::Failed,
        ));
        assert_eq!(next_action(&m), None);
        // a failure in the Python installation only
        m.extend(run(
            "c2",
            "python3 -c 'import json; json.loads(\"x\")'",
            "[exit 1]\nTraceback (most recent call last):\n  File \"/usr/lib/python3/json/decoder.py\", line 355, in raw_decode\njson.decoder.JSONDecodeError: Expecting value\n",
            ResultMark::Failed,
        ));
        assert_eq!(next_action(&m), None);
        // too far back
        let mut far = run("c3", "python3 profile.py", TB, ResultMark::Failed);
        for i in 0..LOOK_BACK {
            far.extend(write(&format!("w{i}"), "a.md", "unchanged: a.md", None));
        }
        assert_eq!(next_action(&far), None);
    }
}

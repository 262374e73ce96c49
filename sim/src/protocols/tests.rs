//! The protocols through the policy: a request shaped as each protocol's public
//! documentation shows gets a reply that parses as that protocol's actions, and the
//! conversation that follows reads back as the steps carried out.

use super::*;
use crate::catalog::ModelSpec;
use crate::profile::Profile;
use crate::task::{Step, TaskIndex};

const TASK: &str = "Write the inventory report for the parts store now.\n1. make report.md with the totals\n2. run the check script";

fn index() -> TaskIndex {
    TaskIndex::new(vec![(
        "T-1".into(),
        TASK.into(),
        vec![
            Step::Write {
                path: "report.md".into(),
                bytes: b"# Report\n\n```\ntotal: 3\n```\n".to_vec(),
            },
            Step::Write {
                path: "tools/check.py".into(),
                bytes: b"print('ok')\n".to_vec(),
            },
            Step::Run {
                command: "python3 tools/check.py".into(),
            },
        ],
    )])
}

/// A message without calls (shared by the protocol modules' tests).
pub(crate) fn m(role: &str, content: &str) -> Msg {
    Msg {
        role: role.into(),
        content: content.into(),
        calls: vec![],
    }
}

fn reply(conv: &Conv) -> Turn {
    reply_of(conv, Profile::oracle())
}

fn reply_of(conv: &Conv, profile: Profile) -> Turn {
    let tasks = index();
    let model = ModelSpec::from_profile(profile);
    let env = Env {
        model: &model,
        seed: 1,
        tasks: &tasks,
    };
    crate::respond(&env, conv)
}

#[test]
fn aider_whole_file_reply_carries_every_write_at_once() {
    let sys = "Act as an expert software developer.\nYou MUST use this *file listing* format:\n\npath/to/filename.js\n```\n// entire file content ...\n```\n";
    let conv = Conv {
        messages: vec![m("system", sys), m("user", TASK)],
        ..Default::default()
    };
    let t = reply(&conv);
    assert!(t.calls.is_empty());
    let files = edit_blocks::listings(&t.content, "```", "```");
    // the report holds a fence of its own: the listing ends there, as aider reads it
    assert_eq!(files[0].1, "report.md");
    assert_eq!(files[0].2, "# Report\n\n");
    assert!(files
        .iter()
        .any(|(_, p, c)| p == "tools/check.py" && c == "print('ok')\n"));
    // no way to run a command in this format; the reply ends with the completion claim
    assert!(!t.content.contains("```bash"));
    assert!(
        t.content
            .trim_end()
            .ends_with("Produced: report.md, tools/check.py."),
        "{}",
        t.content
    );
}

#[test]
fn code_agent_steps_through_code_blocks_until_final_answer() {
    let sys = "Solve the task with code blobs, in a cycle of 'Thought:', code and 'Observation:'.\n\
The code sequence must be opened with '<code>', and closed with '</code>'.\n\
<code>\ndef final_answer(answer: any) -> any:\n    \"\"\"Provides a final answer.\"\"\"\n</code>\n\
You can use imports in your code, but only from the following list of modules: ['pathlib', 'subprocess']";
    let mut conv = Conv {
        messages: vec![m("system", sys), m("user", &format!("New task:\n{TASK}"))],
        ..Default::default()
    };
    // first reply: both writes and the command (whose output the model wants to see)
    let t = reply(&conv);
    assert!(
        t.content
            .starts_with("Thought: Step 1/3: writing report.md."),
        "{}",
        t.content
    );
    assert!(t.content.contains(
        "pathlib.Path('''tools/check.py''').parent.mkdir(parents=True, exist_ok=True)\n"
    ));
    assert!(t
        .content
        .contains("result = subprocess.run('''python3 tools/check.py''', shell=True"));
    assert!(t.content.ends_with("</code>") && !t.content.contains("final_answer("));
    conv.messages.push(m(
        "assistant",
        &format!("{}\nCalling tools:\n[{{'id': 'call_1'}}]", t.content),
    ));
    conv.messages.push(m(
        "user",
        "Observation:\nExecution logs:\nok\n\nexit status 0\nLast output from code snippet:\nNone",
    ));
    // then the final answer, alone
    let t = reply(&conv);
    assert!(t.content.contains("<code>\n# All steps are done.\nfinal_answer(answer='''All steps are done. Produced: report.md, tools/check.py.''')\n</code>"), "{}", t.content);
}

#[test]
fn code_agent_reads_a_failed_command_and_runs_it_again() {
    let sys = "Thought: ... Observation: ... opened with '<code>', and closed with '</code>'. final_answer\n\
following list of modules: ['pathlib', 'subprocess']";
    let mut conv = Conv {
        messages: vec![m("system", sys), m("user", TASK)],
        ..Default::default()
    };
    let first = reply(&conv).content;
    conv.messages.push(m("assistant", &first));
    conv.messages.push(m("user", "Observation:\nExecution logs:\nTraceback (most recent call last):\n  File \"tools/check.py\", line 1\nSyntaxError: invalid syntax\nexit status 1"));
    let t = reply(&conv);
    assert!(
        t.content.contains("write_text") || t.content.contains("subprocess.run"),
        "{}",
        t.content
    );
    assert!(!t.content.contains("final_answer("), "{}", t.content);
}

#[test]
fn a_sized_model_fails_in_the_protocol_as_it_does_with_tools() {
    use crate::dialect::Family;
    use crate::profile::{FailureForm, REACT_ORACLE};
    let sys = "Act as an expert software developer.\nYou MUST use this *file listing* format:\n\npath/to/filename.js\n```\n// entire file content ...\n```\n";
    let conv = Conv {
        messages: vec![m("system", sys), m("user", TASK)],
        ..Default::default()
    };
    // a model that always stops: no listing at all, the stopping sentence instead
    let stop = Profile::only(
        "stops",
        Family::Gemma4,
        FailureForm::Abandon,
        1.0,
        REACT_ORACLE,
    );
    let t = reply_of(&conv, stop);
    assert_eq!(t.form, Some(FailureForm::Abandon));
    assert!(
        edit_blocks::listings(&t.content, "```", "```").is_empty(),
        "{}",
        t.content
    );
    // a model whose writes are always degraded: the listing holds other content
    let wrong = Profile::only(
        "wrong",
        Family::Gemma4,
        FailureForm::ContentError,
        1.0,
        REACT_ORACLE,
    );
    let t = reply_of(&conv, wrong);
    assert_eq!(t.form, Some(FailureForm::ContentError));
    let files = edit_blocks::listings(&t.content, "```", "```");
    assert!(!files.is_empty());
    assert!(t.content_kind.is_some());
    let reference = |p: &str| match p {
        "report.md" => Some("# Report\n\n"),
        "tools/check.py" => Some("print('ok')\n"),
        _ => None,
    };
    assert!(
        files
            .iter()
            .any(|(_, p, c)| reference(p) != Some(c.as_str())),
        "{}",
        t.content
    );
    // a model that leaks its calls as text: prose without an action (the family's call shape)
    let leak = Profile::only(
        "leaks",
        Family::Gemma4,
        FailureForm::TextCall,
        1.0,
        REACT_ORACLE,
    );
    let t = reply_of(&conv, leak);
    assert_eq!(t.form, Some(FailureForm::TextCall));
    assert!(t.outcome.is_none() && t.calls.is_empty());
    assert!(
        edit_blocks::listings(&t.content, "```", "```").is_empty(),
        "{}",
        t.content
    );
}

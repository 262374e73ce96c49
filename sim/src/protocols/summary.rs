//! Summaries that replace the conversation. Some agents compress a long conversation by
//! asking the model for a structured summary that becomes its only memory (Qwen Code and
//! Gemini CLI: a `<state_snapshot>` XML document whose sections hold the user's request, the
//! work done and the next step); the agent then resumes from that summary alone. A model
//! trained on that protocol quotes the request verbatim and lists what is done. Reading such
//! a summary back, the model knows which steps it already carried out.

use crate::convo::Conv;
use crate::policy::{Turn, SUMMARY_DONE as DONE};
use crate::task::TaskPlan;

/// Whether the request asks for a `<state_snapshot>` summary of the conversation.
pub fn demanded(conv: &Conv) -> bool {
    let last_user = conv.messages.iter().rev().find(|m| m.role == "user");
    conv.system_text().contains("<state_snapshot>")
        || last_user.is_some_and(|m| m.content.contains("<state_snapshot>"))
}

/// The summary: the request as the user stated it (the task's distinctive lines from message
/// `at`), the errors met, the steps done and the next one.
pub fn turn(conv: &Conv, plan: &TaskPlan, at: usize, done: &[bool]) -> Turn {
    let n = plan.steps.len();
    let mut lines = Vec::new();
    let mut next = None;
    for (k, d) in done.iter().enumerate() {
        let step = crate::policy::narration(plan, k);
        if *d {
            lines.push(format!("{DONE}{step}"));
        } else if next.is_none() {
            next = Some(step);
        }
    }
    // the task in the user's words (its distinctive lines: a summary that quoted the whole
    // message would carry the agent's own preamble, and a second summary the first one)
    let request = plan.key_lines.join("\n");
    // the errors met, verbatim (first line each, the latest few), as the protocol asks
    let mut errors: Vec<&str> = Vec::new();
    for m in conv.messages[at + 1..].iter().filter(|m| m.role == "tool") {
        let f = crate::feedback::classify(&m.content);
        let line = m.content.trim().lines().next().unwrap_or("").trim();
        if (f.error || f.not_run) && !line.is_empty() && !errors.contains(&line) {
            errors.push(line);
        }
    }
    let errors = errors[errors.len().saturating_sub(5)..].join("\n");
    let next = next.unwrap_or_else(|| "Report completion.".to_string());
    Turn::text(format!(
        "<analysis>\nThe user's request is quoted below; {} of {n} steps are done.\n</analysis>\n\
         <state_snapshot>\n<primary_request_and_intent>\n{request}\n</primary_request_and_intent>\n\
         <errors_and_fixes>\n{errors}\n</errors_and_fixes>\n\
         <current_work>\n{}\n</current_work>\n<next_step>\n{next}\n</next_step>\n</state_snapshot>",
        lines.len(),
        lines.join("\n"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convo::Msg;
    use crate::policy::summary_done_steps;
    use crate::task::Step;

    #[test]
    fn the_summary_carries_the_request_and_the_progress() {
        let plan = TaskPlan {
            id: "T".into(),
            tier: 1,
            originals: Default::default(),
            key_lines: vec!["Write a.md, then run x.py.".into()],
            steps: vec![
                Step::Write {
                    path: "a.md".into(),
                    bytes: b"a\n".to_vec(),
                },
                Step::Run {
                    command: "python3 x.py".into(),
                },
            ],
        };
        let conv = Conv {
            messages: vec![
                Msg {
                    role: "system".into(),
                    content: "You summarize a conversation. Produce the <state_snapshot> XML."
                        .into(),
                    calls: vec![],
                },
                Msg {
                    role: "user".into(),
                    content: "Write a.md, then run x.py.".into(),
                    calls: vec![],
                },
            ],
            ..Default::default()
        };
        assert!(demanded(&conv));
        let mut conv = conv;
        conv.messages.push(Msg {
            role: "tool".into(),
            content: "File path must be absolute: a.md".into(),
            calls: vec![],
        });
        let t = turn(&conv, &plan, 1, &[true, false]);
        assert!(t
            .content
            .contains("<errors_and_fixes>\nFile path must be absolute: a.md\n"));
        // read back after the compression: the paths stay absolute
        let after = Conv {
            messages: vec![
                Msg {
                    role: "system".into(),
                    content: "I'm currently working in the directory: /w".into(),
                    calls: vec![],
                },
                Msg {
                    role: "user".into(),
                    content: t.content.clone(),
                    calls: vec![],
                },
            ],
            ..Default::default()
        };
        let write = Turn {
            calls: vec![crate::convo::Call {
                name: "write_file".into(),
                args: serde_json::json!({"file_path": "b.md"}),
            }],
            ..Default::default()
        };
        let got = crate::protocols::abs_paths::apply(&after, write);
        assert_eq!(got.calls[0].args["file_path"], "/w/b.md");
        assert!(t
            .content
            .contains("<primary_request_and_intent>\nWrite a.md, then run x.py.\n"));
        assert!(t.content.contains("Done: Step 1/2: writing a.md.\n"));
        assert!(t
            .content
            .contains("<next_step>\nStep 2/2: running `python3 x.py`.\n"));
        assert_eq!(summary_done_steps(&t.content, &plan), vec![0]);
        assert!(summary_done_steps("Done: Step 1/2: writing a.md.", &plan).is_empty());
        assert!(!demanded(&Conv::default()));
    }
}

//! The agent loop and every mechanism, driven by scripted model replies (no model needed).

mod common;

use common::*;
use lrab_harness::backend::{BackendError, ScriptedModel};
use lrab_harness::mechanisms::report::Level;
use lrab_harness::{Ablations, Agent, AgentConfig, Reply, RunStatus};
use serde_json::json;
use std::fs;
use std::path::Path;

const TASK: &str = "Write a short report on the data.\nRequired steps (plan at least 2):\n1. Write report.md with a summary.\n2. Finish.";

fn call(name: &str, args: serde_json::Value) -> Reply {
    Reply::call(name, args)
}

fn write(path: &str, content: &str) -> Reply {
    call("write_file", json!({"path": path, "content": content}))
}

fn finish(summary: &str) -> Reply {
    call("finish", json!({"summary": summary}))
}

/// The todo call that plans the two steps of TASK.
fn plan_report() -> Reply {
    call(
        "todo",
        json!({"action": "create", "items": ["write report.md", "finish"]}),
    )
}

/// A scripted agent on `task` in a fresh temp dir (kept alive by the returned handle).
fn scripted(task: &str, replies: Vec<Reply>) -> (tempfile::TempDir, Agent<ScriptedModel>) {
    scripted_with(task, replies, |_| {})
}

/// [`scripted`] with one change to the config first (see [`agent_with`]).
fn scripted_with(
    task: &str,
    replies: Vec<Reply>,
    change: impl FnOnce(&mut AgentConfig),
) -> (tempfile::TempDir, Agent<ScriptedModel>) {
    let d = tempfile::tempdir().unwrap();
    let a = agent_with(d.path(), task, replies, change);
    (d, a)
}

/// Like `agent_in`, with one change to the config first (an ablation, a budget, a cap).
fn agent_with(
    dir: &Path,
    task: &str,
    replies: Vec<Reply>,
    change: impl FnOnce(&mut AgentConfig),
) -> Agent<ScriptedModel> {
    let mut cfg = config(dir, task);
    change(&mut cfg);
    let mut a = Agent::new(cfg, ScriptedModel::replies(replies)).unwrap();
    a.sleeper = Box::new(|_| {});
    a
}

/// A config change that switches one mechanism off.
fn ablate(name: &str) -> impl FnOnce(&mut AgentConfig) + '_ {
    move |c| c.ablations = Ablations::parse(name).unwrap()
}

fn steps(a: &mut Agent<ScriptedModel>, n: usize) {
    for _ in 0..n {
        a.step();
    }
}

/// A temp dir holding `data.csv` with `content`, for the repeated-read tests.
fn data_csv(content: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("data.csv"), content).unwrap();
    d
}

/// The call the anti-loop tests repeat.
fn read_data() -> Reply {
    call("read_file", json!({"path": "data.csv"}))
}

/// `calc.py` with a bug (`add` subtracts) next to a pytest file holding `tests`.
fn buggy_calc(dir: &Path, tests: &str) {
    fs::write(dir.join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    fs::write(
        dir.join("test_calc.py"),
        format!("from calc import add\n{tests}"),
    )
    .unwrap();
}

#[test]
fn full_task_run_passes_the_finish_gate() {
    let (d, mut a) = scripted(
        TASK,
        vec![
            plan_report(),
            write("report.md", "# Report\nAll good.\n"),
            call("read_file", json!({"path": "report.md"})),
            call("todo", json!({"action": "done_all"})),
            finish("wrote report.md"),
            // the gate asks for one re-read of the task, then accepts
            finish("checked report.md against the task"),
        ],
    );
    let out = a.run();
    assert_eq!(out.status, RunStatus::Finished);
    assert_eq!(out.report.verification, Level::Inspected);
    assert!(out.report.missing_artifacts.is_empty());
    // the re-read shows the task text verbatim
    assert!(seen_text(&a, 5).contains("Write report.md with a summary."));
    assert_eq!(mech_count(d.path(), "finish_gate", "reread"), 1);
    assert_eq!(mech_count(d.path(), "finish_gate", "accept"), 1);
    let ev = events(d.path());
    assert_eq!(ev.iter().filter(|e| e["kind"] == "model_call").count(), 6);
    assert_eq!(ev.iter().filter(|e| e["kind"] == "tool_call").count(), 6);
    assert!(common::state_of(d.path()).join("report.json").exists());
    assert!(common::state_of(d.path()).join("checkpoint.json").exists());
    // a relaunch after the end does nothing and reports the same status
    let mut again = agent_in(d.path(), TASK, vec![]);
    assert_eq!(again.run().status, RunStatus::Finished);
    assert!(again.model.seen.is_empty());
}

#[test]
fn false_completion_is_rejected_with_the_next_action() {
    let (d, mut a) = scripted(
        TASK,
        vec![
            Reply::text("I have completed the task. The report is done."),
            Reply::text("Let me think about what the report should say."),
            write("report.md", "# Report\n"),
            Reply::text("All steps are done."),
            finish("ok"),
        ],
    );
    let out = a.run();
    // claim 1: nothing written → fake-finish rejection naming the file to write
    let t1 = seen_text(&a, 1);
    assert!(
        t1.contains("Not finished") && t1.contains("write_file(path=\"report.md\""),
        "{t1}"
    );
    // plain text: asked for a tool call with a next action
    assert!(seen_text(&a, 2).contains("Reply with a tool call"));
    // claim 2 after writing goes through the gate: the re-read
    assert!(seen_text(&a, 4).contains("re-read the task"));
    assert_eq!(out.status, RunStatus::Finished);
    assert_eq!(mech_count(d.path(), "false_completion", "claim"), 2);
}

#[test]
fn recorded_malformed_shapes_are_rescued() {
    let (d, mut a) = scripted(
        TASK,
        vec![
            // shape 1: whole-reply JSON in a code fence, with an alias and argument aliases
            Reply::text("```json\n{\"name\": \"create_file\", \"arguments\": {\"file_path\": \"a.md\", \"text\": \"alpha\"}}\n```"),
            // shape 2: placeholder-quote form (as gemma-style templates leak it)
            Reply::text("call:write_file{path:<|\"|>b.md<|\"|>,content:<|\"|>beta, with: commas<|\"|>}"),
            // shape 3: bare call expression
            Reply::text("write_file(path=\"report.md\", content=\"# Report\\nfine\")"),
            // a think-wrapped JSON call
            Reply::text("<think>I should list</think>{\"list_dir\": {\"path\": \".\"}}"),
            // prose with a call inside is NOT executed
            Reply::text("Next I would call write_file(path=\"c.md\", content=\"x\") if needed."),
        ],
    );
    steps(&mut a, 5);
    assert_eq!(fs::read_to_string(d.path().join("a.md")).unwrap(), "alpha");
    assert_eq!(
        fs::read_to_string(d.path().join("b.md")).unwrap(),
        "beta, with: commas"
    );
    assert_eq!(
        fs::read_to_string(d.path().join("report.md")).unwrap(),
        "# Report\nfine"
    );
    assert!(!d.path().join("c.md").exists());
    assert_eq!(mech_count(d.path(), "format_rescue", "rescued"), 4);
    assert!(a
        .state
        .messages
        .iter()
        .any(|m| m.tool_name.as_deref() == Some("list_dir")));
}

#[test]
fn format_rescue_ablation_leaves_text_alone() {
    let (d, mut a) = scripted_with(
        TASK,
        vec![Reply::text("write_file(path=\"a.md\", content=\"x\")")],
        ablate("format_rescue"),
    );
    a.step();
    assert!(!d.path().join("a.md").exists());
}

#[test]
fn anti_loop_intercepts_then_pauses_the_tool() {
    let d = data_csv("a,b\n1,2\n");
    let mut a = agent_in(
        d.path(),
        TASK,
        vec![
            read_data(),
            read_data(),
            read_data(),
            read_data(),
            call("list_dir", json!({})),
            read_data(),
        ],
    );
    steps(&mut a, 6);
    let tool_msgs: Vec<&str> = a
        .state
        .messages
        .iter()
        .filter(|m| m.tool_name.as_deref() == Some("read_file"))
        .map(|m| m.content.as_str())
        .collect();
    assert!(tool_msgs[0].contains("a,b"));
    assert!(
        tool_msgs[1].contains("not executed: identical") && tool_msgs[1].contains("Next action")
    );
    assert!(tool_msgs[2].contains("third time"));
    assert!(tool_msgs[3].contains("paused"));
    assert!(tool_msgs[4].contains("paused"));
    // the tool list stays the same while a tool is paused (its calls are answered "paused"),
    // so the prompt prefix stays cacheable
    assert!(a
        .model
        .seen
        .iter()
        .all(|s| s.tool_names == a.model.seen[0].tool_names));
    assert!(a.model.seen[4]
        .tool_names
        .contains(&"read_file".to_string()));
}

#[test]
fn anti_loop_ablation_executes_repeats() {
    let d = data_csv("a,b\n");
    let mut a = agent_with(
        d.path(),
        TASK,
        vec![read_data(), read_data(), read_data(), read_data()],
        ablate("anti_loop"),
    );
    steps(&mut a, 4);
    assert!(a
        .state
        .messages
        .iter()
        .filter(|m| m.tool_name.is_some())
        .all(|m| m.content.contains("a,b")));
}

#[test]
fn empty_turn_ladder_counts_think_only_and_gives_up() {
    let think_only = Reply {
        content: "<think>hmm</think>".into(),
        thinking: "hmm".into(),
        ..Default::default()
    };
    let mut replies = vec![Reply::default(), think_only];
    replies.extend((0..7).map(|_| Reply::default()));
    let (d, mut a) = scripted(TASK, replies);
    let out = a.run();
    assert_eq!(out.status, RunStatus::Stalled);
    assert!(seen_text(&a, 1).contains("Your reply was empty"));
    assert!(seen_text(&a, 2).contains("Empty again"));
    // the empty turns stay in the history (as empty assistant messages)
    assert_eq!(a.model.seen[1].messages[2].content, "");
    assert_eq!(mech_count(d.path(), "anti_loop", "empty_reset"), 2);
    assert_eq!(mech_count(d.path(), "anti_loop", "empty_give_up"), 1);
    assert_eq!(a.model.seen.len(), 9);
}

#[test]
fn stall_watch_asks_for_a_replan() {
    let replies: Vec<Reply> = (0..4)
        .map(|i| call("read_file", json!({"path": format!("missing{i}.txt")})))
        .collect();
    let (d, mut a) = scripted(TASK, replies);
    steps(&mut a, 4);
    assert_eq!(mech_count(d.path(), "anti_loop", "stall_replan"), 1);
    assert!(seen_text(&a, 3).contains("No progress in the last 3 rounds"));
}

#[test]
fn truncated_reply_gets_skeleton_then_append_feedback() {
    let cut = Reply {
        content: "# Very long report\n...".into(),
        done_reason: Some("length".into()),
        ..Default::default()
    };
    let (_d, mut a) = scripted(TASK, vec![cut, write("report.md", "# skeleton")]);
    steps(&mut a, 2);
    let t = seen_text(&a, 1);
    assert!(
        t.contains("output limit") && t.contains("append_file"),
        "{t}"
    );
    assert_eq!(a.model.seen[0].num_predict, 8192);
}

#[test]
fn chat_tier_gets_a_minimal_prefill_and_ends_on_the_answer() {
    let (_d, mut a) = scripted(
        "What is the boiling point of water at sea level?",
        vec![Reply::text("100 °C.")],
    );
    let out = a.run();
    assert_eq!(out.status, RunStatus::Answered);
    assert_eq!(a.model.seen[0].tool_names, vec!["read_file", "list_dir"]);
    assert!(a.model.seen[0].messages[0]
        .content
        .starts_with("Answer the user's question"));
}

#[test]
fn chat_tier_escalates_to_task_when_the_model_needs_to_write() {
    let w = || write("x.md", "x");
    let (d, mut a) = scripted("hello there, how are you doing today", vec![w(), w()]);
    a.step();
    assert!(!d.path().join("x.md").exists());
    a.step();
    assert!(d.path().join("x.md").exists());
    assert_eq!(mech_count(d.path(), "tiering", "escalate_to_task"), 1);
}

#[test]
fn routing_and_flat_prefill_ablation() {
    let (_d, mut a) = scripted(
        "Fix the bug in calc.py and write fix.md",
        vec![Reply::default()],
    );
    a.step();
    let names = &a.model.seen[0].tool_names;
    assert!(
        names.contains(&"rollback".to_string()) && !names.contains(&"search_files".to_string())
    );
    let (_d2, mut b) = scripted_with(
        "Fix the bug in calc.py and write fix.md",
        vec![Reply::default()],
        ablate("flat_prefill"),
    );
    b.step();
    assert_eq!(b.model.seen[0].tool_names.len(), 11);
}

#[test]
fn finish_gate_runs_the_tasks_own_pytest_and_reports_the_first_failure() {
    let d = tempfile::tempdir().unwrap();
    buggy_calc(
        d.path(),
        "\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
    );
    let task = "Fix calc.py so that `python3 -m pytest -q test_calc.py` passes. Write fix.md describing the fix.";
    let mut a = agent_in(
        d.path(),
        task,
        vec![
            write("fix.md", "fixed add"),
            finish("done"),
            call(
                "edit_file",
                json!({"path": "calc.py", "old": "a - b", "new": "a + b"}),
            ),
            finish("done"),
            finish("done, tests pass"),
        ],
    );
    let out = a.run();
    let rejection = seen_text(&a, 2);
    assert!(rejection.contains("the tests fail"), "{rejection}");
    assert!(
        rejection.contains("test_add") && rejection.contains("assert -1 == 5"),
        "{rejection}"
    );
    assert!(rejection.contains("Next action"));
    assert_eq!(out.status, RunStatus::Finished);
    assert_eq!(out.report.verification, Level::Tested);
    assert_eq!(mech_count(d.path(), "finish_gate", "tests"), 1);
}

#[test]
fn verify_feedback_ablation_gives_generic_text() {
    let d = tempfile::tempdir().unwrap();
    buggy_calc(d.path(), "\ndef test_add():\n    assert add(2, 3) == 5\n");
    let mut a = agent_with(
        d.path(),
        "Fix calc.py",
        vec![call("run_shell", json!({"command": "true"})), finish("x")],
        ablate("verify_feedback"),
    );
    steps(&mut a, 2);
    let t = a.state.messages.last().unwrap().content.clone();
    assert!(
        t.contains("last output line") && !t.contains("assert -1 == 5"),
        "{t}"
    );
}

#[test]
fn finish_gate_ablation_accepts_at_once() {
    let (_d, mut a) = scripted_with(TASK, vec![finish("x")], ablate("finish_gate"));
    assert_eq!(a.run().status, RunStatus::Finished);
    assert!(a
        .run()
        .report
        .missing_artifacts
        .contains(&"report.md".to_string()));
}

#[test]
fn kill_and_resume_continues_the_same_conversation() {
    let d = tempfile::tempdir().unwrap();
    {
        let mut a = agent_in(
            d.path(),
            TASK,
            vec![plan_report(), write("report.md", "# Report\n")],
        );
        steps(&mut a, 2);
        // killed here: the object is dropped without finishing
    }
    let mut b = agent_in(
        d.path(),
        TASK,
        vec![
            call("todo", json!({"action": "done_all"})),
            finish("x"),
            finish("x"),
        ],
    );
    assert!(b.resumed);
    assert_eq!(b.state.turn, 2);
    assert_eq!(b.state.runs, 2);
    assert_eq!(b.state.plan.items.len(), 2);
    let last = b.state.messages.last().unwrap();
    assert!(last.injected && last.content.contains("resumed"));
    assert_eq!(b.run().status, RunStatus::Finished);
    assert_eq!(mech_count(d.path(), "resilience", "resume"), 1);
    // both runs append to the same event log
    let ev = events(d.path());
    assert!(ev.iter().any(|e| e["run"] == 1) && ev.iter().any(|e| e["run"] == 2));
}

#[test]
fn corrupt_checkpoint_is_set_aside_and_the_run_starts_fresh() {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(common::state_of(d.path())).unwrap();
    fs::write(
        common::state_of(d.path()).join("checkpoint.json"),
        "{\"version\": 1, \"task\": tru",
    )
    .unwrap();
    let a = agent_in(d.path(), TASK, vec![]);
    assert!(!a.resumed);
    assert!(a.warnings[0].contains("corrupt"));
    assert!(common::state_of(d.path())
        .join("checkpoint.corrupt-1.json")
        .exists());
}

#[test]
fn clock_warns_at_60_and_85_percent_and_stops_at_the_budget() {
    let replies: Vec<Reply> = (0..6)
        .map(|i| call("list_dir", json!({"path": format!("d{i}")})))
        .collect();
    let (d, mut a) = scripted_with(TASK, replies, |c| c.time_budget_min = Some(10.0));
    let times = std::cell::RefCell::new(vec![0.0, 100.0, 370.0, 400.0, 515.0, 601.0].into_iter());
    a.clock_fn = Box::new(move || times.borrow_mut().next().unwrap_or(1e9));
    let out = a.run();
    assert_eq!(out.status, RunStatus::TimeBudget);
    assert_eq!(mech_count(d.path(), "clock", "warning"), 2);
    // each warning ends the tool result of the round before it (no user turn of its own)
    let warnings: Vec<&str> = a
        .state
        .messages
        .iter()
        .filter_map(|m| m.content.split_once("\n\nTime check").map(|(_, w)| (m, w)))
        .map(|(m, w)| {
            assert_eq!(m.role, lrab_harness::Role::Tool, "{}", m.content);
            w
        })
        .collect();
    assert_eq!(warnings.len(), 2);
    assert!(a.state.messages.iter().all(|m| !m.injected));
    assert!(warnings[0].contains("60%") && warnings[0].contains("Still missing: report.md"));
    assert!(warnings[1].contains("85%"));
}

#[test]
fn context_compaction_keeps_the_task_verbatim() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("big.txt"), "word ".repeat(1000)).unwrap();
    let replies: Vec<Reply> = (0..12)
        .map(|i| {
            call(
                "read_file",
                json!({"path": "big.txt", "start_line": 1, "end_line": 1 + i}),
            )
        })
        .collect();
    let mut a = agent_with(d.path(), TASK, replies, |c| c.num_ctx = 4096);
    steps(&mut a, 12);
    assert!(mech_count(d.path(), "context", "compact") >= 1);
    for s in &a.model.seen {
        assert_eq!(s.messages[1].content, TASK);
        let est: usize = lrab_harness::estimate_request(&s.messages, &[]);
        assert!(est < 4096, "request of {est} tokens exceeds the window");
    }
    // the output cap shrinks to the headroom
    assert!(a.model.seen.iter().all(|s| s.num_predict <= 4096));
}

#[test]
fn backend_errors_retry_repair_and_stop() {
    let d = tempfile::tempdir().unwrap();
    let model = ScriptedModel::new(vec![
        Err(BackendError::Server {
            status: 500,
            message: "busy".into(),
        }),
        Err(BackendError::Structural(
            "consecutive assistant messages".into(),
        )),
        Ok(call("list_dir", json!({}))),
        Err(BackendError::Unreachable("refused".into())),
        Err(BackendError::Unreachable("refused".into())),
        Err(BackendError::Unreachable("refused".into())),
    ]);
    let mut a = Agent::new(config(d.path(), TASK), model).unwrap();
    a.sleeper = Box::new(|_| {});
    assert_eq!(a.step(), None);
    let end = a.step();
    assert!(matches!(end, Some(RunStatus::BackendFailed(_))));
    assert_eq!(mech_count(d.path(), "resilience", "backend_retry"), 3);
    assert_eq!(mech_count(d.path(), "resilience", "repair_conversation"), 1);
    // the state was checkpointed before stopping, so a relaunch resumes
    assert!(common::state_of(d.path()).join("checkpoint.json").exists());
    let mut b = Agent::new(
        config(d.path(), TASK),
        ScriptedModel::new(vec![Err(BackendError::ModelNotFound("m".into()))]),
    )
    .unwrap();
    let out = b.run();
    assert!(matches!(
        out.backend_error,
        Some(BackendError::ModelNotFound(_))
    ));
}

#[test]
fn edit_safety_and_security_through_the_loop() {
    let (d, mut a) = scripted(
        TASK,
        vec![
            write("report.md", "v1"),
            write("report.md", "v2"),
            call("rollback", json!({"path": "report.md"})),
            write("../outside.md", "x"),
            call("delete_file", json!({"path": "report.md"})),
        ],
    );
    steps(&mut a, 5);
    assert!(
        common::state_of(d.path())
            .join("trash")
            .read_dir()
            .unwrap()
            .count()
            >= 2
    );
    assert!(!d.path().join("report.md").exists());
    assert!(!d.path().parent().unwrap().join("outside.md").exists());
    let results: Vec<&str> = a
        .state
        .messages
        .iter()
        .filter(|m| m.tool_name.is_some())
        .map(|m| m.content.as_str())
        .collect();
    assert!(results[2].contains("restored"));
    assert!(results[3].contains("outside the working directory"));
}

#[test]
fn max_turns_is_a_hard_cap() {
    let replies: Vec<Reply> = (0..10)
        .map(|i| call("list_dir", json!({"path": format!("x{i}")})))
        .collect();
    let (_d, mut a) = scripted_with(TASK, replies, |c| c.max_turns = 3);
    assert_eq!(a.run().status, RunStatus::MaxTurns);
    assert_eq!(a.model.seen.len(), 3);
}

/// The files rejection copies the task only when its statement lies far back (a quarter of the
/// window): early in a run the task is in view and the rejection names the missing files and
/// the next action alone; after a long stretch of tool output the task is restated, and a
/// second rejection right after that restatement does not copy it again.
#[test]
fn a_rejected_finish_restates_the_task_only_when_it_is_far_back() {
    let task = "Write report.md and summary.md from data.csv.";
    let d = tempfile::tempdir().unwrap();
    // one read shows a window of about 6,000 characters (~1,500 estimated tokens), past a
    // quarter of a 4096-token window
    let rows: String = (0..400)
        .map(|i| format!("row {i:04},alpha,beta,gamma,delta\n"))
        .collect();
    fs::write(d.path().join("data.csv"), &rows).unwrap();
    let replies = vec![
        write("summary.md", "# Summary\n"),
        finish("done"),
        call("read_file", json!({"path": "data.csv"})),
        finish("done"),
        finish("done"),
    ];
    let mut a = agent_with(d.path(), task, replies, |c| c.num_ctx = 4096);
    steps(&mut a, 5);
    let gate: Vec<String> = a
        .state
        .messages
        .iter()
        .filter(|m| m.tool_name.as_deref() == Some("finish"))
        .map(|m| m.content.clone())
        .collect();
    assert_eq!(gate.len(), 3, "{gate:#?}");
    for g in &gate {
        assert!(g.starts_with("Not finished: missing file(s) the task names: report.md."));
    }
    assert!(!gate[0].contains(task), "task in view, copied: {}", gate[0]);
    assert!(
        gate[1].contains(&format!("The task, restated:\n---\n{task}\n---")),
        "{}",
        gate[1]
    );
    assert!(
        !gate[2].contains(task),
        "copied twice in a row: {}",
        gate[2]
    );
}

//! The `harness` arm: lrab-harness's scripted model drives a mock conversation; its
//! mechanisms (format rescue, anti-loop, repeat nudge, empty-reply ladder) fire and the
//! task still reaches reward 1.0. Also end to end over HTTP through the CLI.

mod common;
use lrab_harness::backend::ScriptedModel;
use lrab_harness::Reply;
use lrab_tau2::Limits;
use lrab_tau2::ScriptedUser;
use lrab_tau2::{evaluate, USER_STOP};
use lrab_tau2::{HarnessAgent, LOOP_NUDGE, REPEAT_NUDGE};
use serde_json::json;

#[test]
fn mechanisms_fire_and_the_task_still_passes() {
    if common::data().is_none() {
        return;
    }
    let d = common::domain("mock");
    let task = d.task("update_task_1").unwrap();
    let mut env = d.env();
    let tools = env.tool_schemas("assistant");
    let model = ScriptedModel::replies(vec![
        // empty reply -> nudged
        Reply::text(""),
        // tool call written as text -> rescued into a real call
        Reply::text(
            r#"{"name": "update_task_status", "arguments": {"task_id": "task_1", "status": "completed"}}"#,
        ),
        // reports to the user
        Reply::text("Done: task_1 is completed."),
        // repeats itself -> nudged, then says something new
        Reply::text("Done: task_1 is completed."),
        Reply::text("Anything else I can help with?"),
    ]);
    let mut agent = HarnessAgent::new(
        model,
        &d.policy,
        &tools,
        vec!["create_task".into(), "update_task_status".into()],
        32768,
    );
    let mut user = ScriptedUser::new(vec![
        "Please mark task_1 as completed.".into(),
        "Thanks.".into(),
    ]);
    let out = lrab_tau2::run_conversation(&mut env, &mut agent, &mut user, &[], &Limits::default());
    assert_eq!(out.termination, USER_STOP, "{:?}", out.note);
    let ev = evaluate(d, task, &out.messages, &out.termination, None).unwrap();
    assert_eq!(ev.reward, Some(1.0), "{ev:?}");
    assert!(
        agent.events.iter().any(|e| e == "empty_reply: nudge"),
        "{:?}",
        agent.events
    );
    assert!(
        agent
            .events
            .iter()
            .any(|e| e == "format_rescue: update_task_status"),
        "{:?}",
        agent.events
    );
    assert!(
        agent.events.iter().any(|e| e == "repeat_nudge"),
        "{:?}",
        agent.events
    );
    // The nudge is sent to the model but never enters the trajectory.
    let seen = &agent.model.seen;
    assert!(!out.messages.iter().any(|m| m.text() == REPEAT_NUDGE));
    assert!(seen.len() >= 5);
}

#[test]
fn identical_read_call_is_intercepted() {
    if common::data().is_none() {
        return;
    }
    let d = common::domain("mock");
    let mut env = d.env();
    let tools = env.tool_schemas("assistant");
    let model = ScriptedModel::replies(vec![
        Reply::call("get_users", json!({})),
        Reply::call("get_users", json!({})), // identical, nothing changed -> intercepted
        Reply::text("There is one user, Test User."),
        Reply::text("Goodbye."),
    ]);
    let mut agent = HarnessAgent::new(model, &d.policy, &tools, vec![], 32768);
    let mut user = ScriptedUser::new(vec!["Who are the users?".into(), "ok".into()]);
    let out = lrab_tau2::run_conversation(&mut env, &mut agent, &mut user, &[], &Limits::default());
    assert_eq!(out.termination, USER_STOP);
    assert!(
        agent.events.iter().any(|e| e == "anti_loop: get_users"),
        "{:?}",
        agent.events
    );
    let calls = out.messages.iter().filter(|m| m.is_tool_call()).count();
    assert_eq!(calls, 1, "the repeated call was not executed");
    let nudged = agent
        .model
        .seen
        .iter()
        .any(|r| r.messages.iter().any(|m| m.content == LOOP_NUDGE));
    assert!(nudged);
}

#[test]
fn harness_arm_runs_end_to_end_through_the_cli_over_http() {
    if common::data().is_none() {
        return;
    }
    use common::{is_user_request, ollama_call, ollama_text, spawn_server};
    let (url, log) = spawn_server(100, |path, b| {
        if path == "/api/show" {
            return (
                200,
                json!({"capabilities": ["completion", "tools"], "model_info": {"general.architecture": "x", "x.context_length": 32768}}),
            );
        }
        let msgs = b["messages"].as_array().unwrap();
        let reply = if is_user_request(b) {
            if msgs.len() <= 2 {
                ollama_text("Please mark task_1 as completed.")
            } else {
                ollama_text("Thanks! ###STOP###")
            }
        } else if msgs.last().unwrap()["role"] == "tool" {
            ollama_text("task_1 is now completed.")
        } else {
            ollama_call(
                "update_task_status",
                json!({"task_id": "task_1", "status": "completed"}),
            )
        };
        (200, reply)
    });
    let tmp = tempfile::tempdir().unwrap();
    let args = common::llm_run_args("mock", "harness", &url, "update_task_1", tmp.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (r, out) = common::run_cli(&common::data_dir(), &args);
    r.unwrap();
    assert!(
        out.contains("task update_task_1 trial 0: reward 1.0"),
        "{out}"
    );
    let csv = std::fs::read_to_string(tmp.path().join("tau2.csv")).unwrap();
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .starts_with("mock,update_task_1,harness,0,1,"),
        "{csv}"
    );
    let log = log.lock().unwrap();
    assert!(log.iter().any(|(p, _)| p == "/api/show"));
    let chat = log
        .iter()
        .find(|(p, b)| p == "/api/chat" && !is_user_request(b))
        .unwrap();
    assert_eq!(chat.1["model"], "m");
}

#[test]
fn context_check_drops_old_turns_but_keeps_system_and_first_user_message() {
    if common::data().is_none() {
        return;
    }
    use lrab_tau2::Agent;
    use lrab_tau2::Message;
    let d = common::domain("mock");
    let env = d.env();
    let tools = env.tool_schemas("assistant");
    let model = ScriptedModel::replies(vec![Reply::text("Short answer.")]);
    let mut agent = HarnessAgent::new(model, &d.policy, &tools, vec![], 1024);
    let mut traj = vec![
        Message::assistant_text("Hi! How can I help you today?"),
        Message::user_text("FIRST REQUEST"),
    ];
    for i in 0..60 {
        traj.push(Message::assistant_text(&format!(
            "assistant turn {i} {}",
            "blah ".repeat(20)
        )));
        traj.push(Message::user_text(&format!(
            "user turn {i} {}",
            "words ".repeat(20)
        )));
    }
    let m = agent.next(&traj).unwrap();
    assert_eq!(m.text(), "Short answer.");
    assert!(
        agent
            .events
            .iter()
            .any(|e| e.starts_with("context: dropped")),
        "{:?}",
        agent.events
    );
    let seen = &agent.model.seen[0].messages;
    assert!(seen.len() < traj.len());
    assert_eq!(seen[0].role, lrab_harness::Role::System);
    assert!(seen.iter().any(|m| m.content == "FIRST REQUEST"));
    assert!(seen.last().unwrap().content.starts_with("user turn 59"));
}

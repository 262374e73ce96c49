//! Full conversations through the orchestrator with deterministic participants: the gold
//! agent reaches reward 1.0; wrong behaviour is graded down; limits and errors end runs.

mod common;
use lrab_tau2::Domain;
use lrab_tau2::{evaluate, MAX_STEPS, TOO_MANY_ERRORS, USER_STOP};
use lrab_tau2::{Agent, Limits, GREETING};
use lrab_tau2::{GoldAgent, ScriptedUser};
use lrab_tau2::{Message, ToolCall};
use serde_json::json;

fn converse(
    d: &Domain,
    id: &str,
    agent: &mut dyn Agent,
    limits: &Limits,
) -> (lrab_tau2::Outcome, lrab_tau2::Evaluation) {
    let task = d.task(id).unwrap();
    let mut env = d.env();
    env.set_state(task.initial_state.as_ref(), &[]).unwrap();
    let history = task
        .initial_state
        .as_ref()
        .and_then(|s| s.message_history.clone())
        .unwrap_or_default();
    let mut user = ScriptedUser::new(vec!["Hello, I need help with my request.".into()]);
    let out = lrab_tau2::run_conversation(&mut env, agent, &mut user, &history, limits);
    let ev = evaluate(d, task, &out.messages, &out.termination, None).unwrap();
    (out, ev)
}

#[test]
fn gold_agent_reaches_reward_one() {
    if common::data().is_none() {
        return;
    }
    let cases = [
        ("airline", vec!["7", "14", "23", "11"]),
        ("retail", vec!["33", "34"]),
        (
            "mock",
            vec![
                "create_task_1",
                "update_task_1",
                "update_task_with_message_history",
                "update_task_with_initialization_actions",
                "impossible_task_1",
            ],
        ),
    ];
    for (kind, ids) in cases {
        let d = common::domain(kind);
        for id in ids {
            let mut agent = GoldAgent::new(d.task(id).unwrap());
            let (out, ev) = converse(d, id, &mut agent, &Limits::default());
            assert_eq!(out.termination, USER_STOP, "{id}");
            assert_eq!(ev.reward, Some(1.0), "{kind:?} {id}: {ev:?}");
            if out.messages.first().map(|m| m.text())
                != Some("I need to create a task for the project review meeting.")
            {
                assert_eq!(out.messages[0].text(), GREETING);
            }
        }
    }
}

/// Says one thing and never acts.
struct Idle;
impl Agent for Idle {
    fn next(&mut self, _t: &[Message]) -> lrab_tau2::Tau2Result<Message> {
        Ok(Message::assistant_text("I cannot help with that."))
    }
}

#[test]
fn idle_agent_fails_db_and_communicate() {
    if common::data().is_none() {
        return;
    }
    let d = common::domain("airline");
    let (out, ev) = converse(d, "14", &mut Idle, &Limits::default());
    assert_eq!(out.termination, USER_STOP);
    assert_eq!(ev.reward, Some(0.0));
    assert_eq!(ev.db_match, Some(false));
    assert!(ev.communicate.iter().all(|(_, met)| !met));
}

/// Calls a tool with bad arguments forever.
struct Broken(usize);
impl Agent for Broken {
    fn next(&mut self, _t: &[Message]) -> lrab_tau2::Tau2Result<Message> {
        self.0 += 1;
        let call = ToolCall {
            id: format!("c{}", self.0),
            name: "update_reservation_baggages".into(),
            arguments: json!({"reservation_id": 42, "total_baggages": "two", "nonfree_baggages": [], "payment_id": null}).as_object().unwrap().clone(),
            requestor: "assistant".into(),
        };
        Ok(Message::with_calls("assistant", None, vec![call]))
    }
}

#[test]
fn bad_tool_arguments_become_error_results_and_stop_the_run() {
    if common::data().is_none() {
        return;
    }
    let d = common::domain("airline");
    let (out, ev) = converse(d, "14", &mut Broken(0), &Limits::default());
    assert_eq!(out.termination, TOO_MANY_ERRORS);
    assert_eq!(out.errors, 10);
    let tool_msgs: Vec<&Message> = out.messages.iter().filter(|m| m.role == "tool").collect();
    assert_eq!(tool_msgs.len(), 10);
    assert!(
        tool_msgs[0].text().starts_with("Error: "),
        "{}",
        tool_msgs[0].text()
    );
    assert_eq!(ev.reward, Some(0.0));
}

/// Calls a read tool forever (no errors): the step limit ends the run.
struct Looper(usize);
impl Agent for Looper {
    fn next(&mut self, _t: &[Message]) -> lrab_tau2::Tau2Result<Message> {
        self.0 += 1;
        let call = ToolCall {
            id: format!("c{}", self.0),
            name: "list_all_airports".into(),
            arguments: Default::default(),
            requestor: "assistant".into(),
        };
        Ok(Message::with_calls("assistant", None, vec![call]))
    }
}

#[test]
fn max_steps_ends_the_run_with_reward_zero() {
    if common::data().is_none() {
        return;
    }
    let d = common::domain("airline");
    let (out, ev) = converse(
        d,
        "0",
        &mut Looper(0),
        &Limits {
            max_steps: 20,
            max_errors: 10,
        },
    );
    assert_eq!(out.termination, MAX_STEPS);
    assert!(out.steps >= 20);
    assert_eq!(ev.reward, Some(0.0));
}

#[test]
fn tool_errors_match_upstream_wording() {
    if common::data().is_none() {
        return;
    }
    let d = common::domain("retail");
    let mut env = d.env();
    let call = |name: &str, args: serde_json::Value| ToolCall {
        id: "x".into(),
        name: name.into(),
        arguments: args.as_object().unwrap().clone(),
        requestor: "assistant".into(),
    };
    let r = env.get_response(&call("get_user_details", json!({"user_id": "nobody"})));
    assert_eq!(r.text(), "Error: User not found");
    assert_eq!(r.error, Some(true));
    let r = env.get_response(&call("no_such_tool", json!({})));
    assert_eq!(r.text(), "Error: Tool 'no_such_tool' not found.");
    let r = env.get_response(&call(
        "get_user_details",
        json!({"user_id": "x", "extra": 1}),
    ));
    assert_eq!(
        r.text(),
        "Error: RetailTools.get_user_details() got an unexpected keyword argument 'extra'"
    );
    let r = env.get_response(&call("get_user_details", json!({})));
    assert_eq!(
        r.text(),
        "Error: RetailTools.get_user_details() missing 1 required positional argument: 'user_id'"
    );
    let r = env.get_response(&call("calculate", json!({"expression": "(2 + 3) * 4 / 3"})));
    assert_eq!((r.text(), r.error), ("6.67", Some(false)));
    let r = env.get_response(&call(
        "find_user_id_by_email",
        json!({"email": "noah.brown7922@example.com"}),
    ));
    assert_eq!(r.error, Some(false));
    // Tool output is Python json.dumps of the model: declaration order, ", " and ": ".
    let uid = r.text().to_string();
    let r = env.get_response(&call("get_user_details", json!({"user_id": uid})));
    assert!(
        r.text().starts_with(&format!(
            "{{\"user_id\": \"{uid}\", \"name\": {{\"first_name\": "
        )),
        "{}",
        r.text()
    );
}

//! Telecom end to end: dual-control gold conversations through the CLI (the scripted user
//! operates the phone), the user simulator's prompt and tools, and bad input — a task whose
//! initialization fails, unknown phone actions, tools called from the wrong side.

mod common;

use lrab_tau2::{
    run_conversation, Agent, Limits, Message, ScriptedUser, ToolCall, INFRASTRUCTURE_ERROR,
    USER_STOP,
};
use serde_json::{json, Value};

use common::run_cli as cli;

fn call(req: &str, name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: name.into(),
        arguments: args.as_object().unwrap().clone(),
        requestor: req.into(),
    }
}

fn base_ids() -> Vec<String> {
    common::domain("telecom")
        .tasks
        .iter()
        .map(|t| t.id.clone())
        .collect()
}

#[test]
fn gold_conversations_pass_and_regrade_identically() {
    if common::data().is_none() {
        return;
    }
    let ids = base_ids();
    assert_eq!(ids.len(), 114);
    // a mobile-data task, an MMS task and a transfer (ACTION-gated) task
    let pick: Vec<String> = ["[mobile_data_issue]", "[mms_issue]", "lock_sim_card_pin"]
        .iter()
        .map(|p| ids.iter().find(|i| i.contains(p)).unwrap().clone())
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let tasks = pick.join(",");
    let (r, text) = cli(
        &common::data_dir(),
        &[
            "run",
            "--domain",
            "telecom",
            "--agent",
            "gold",
            "--user",
            "scripted",
            "--tasks",
            &tasks,
            "--fixed-clock",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    r.unwrap();
    assert!(
        text.contains("graded 3/3 simulations; average reward 1.0000"),
        "{text}"
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(v["info"]["environment_info"]["domain_name"], "telecom");
    assert!(v["info"]["environment_info"]["policy"]
        .as_str()
        .unwrap()
        .starts_with("<main_policy>\n"));
    for (i, s) in v["simulations"].as_array().unwrap().iter().enumerate() {
        assert_eq!(s["termination_reason"], USER_STOP);
        assert_eq!(s["reward_info"]["reward"], 1.0);
        let msgs = s["messages"].as_array().unwrap();
        // the user's own tool calls, answered to the user
        let user_calls = msgs
            .iter()
            .filter(|m| m["role"] == "user" && m["tool_calls"].is_array())
            .count();
        let user_results = msgs
            .iter()
            .filter(|m| m["role"] == "tool" && m["requestor"] == "user")
            .count();
        assert_eq!(user_calls, user_results, "{s}");
        assert!(user_calls > 0 || i == 2, "{s}");
    }
    let transfer = &v["simulations"][2]["reward_info"];
    assert_eq!(transfer["reward_basis"], json!(["ENV_ASSERTION", "ACTION"]));
    assert_eq!(transfer["action_checks"][0]["action_match"], true);
    // our own grader re-grades the file to the same rewards
    let (r, text) = cli(
        &common::data_dir(),
        &["grade", out.join("results.json").to_str().unwrap()],
    );
    r.unwrap();
    assert!(
        text.contains("graded 3/3 simulations; average reward 1.0000"),
        "{text}"
    );
}

#[test]
fn a_task_whose_initialization_fails_is_reported_not_run() {
    if common::data().is_none() {
        return;
    }
    let data = common::data_dir();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("domains/telecom");
    std::fs::create_dir_all(&d).unwrap();
    for f in [
        "db.toml",
        "user_db.toml",
        "main_policy.md",
        "tech_support_manual.md",
    ] {
        std::fs::copy(data.join("domains/telecom").join(f), d.join(f)).unwrap();
    }
    let good = common::domain("telecom").tasks[0].raw.clone();
    let mut bad = good.clone();
    bad["id"] = json!("broken_setup");
    bad["initial_state"]["initialization_actions"][1]["func_name"] = json!("unseat_sim_kard");
    std::fs::write(
        d.join("tasks.json"),
        serde_json::to_string(&json!([bad, good])).unwrap(),
    )
    .unwrap();
    let out = tmp.path().join("run");
    let (r, text) = cli(
        tmp.path(),
        &[
            "run",
            "--domain",
            "telecom",
            "--agent",
            "gold",
            "--user",
            "scripted",
            "--fixed-clock",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    r.unwrap();
    assert!(
        text.contains("task broken_setup: initialization action #1 (unseat_sim_kard on the user side) failed: Error: 'TelecomUserTools' object has no attribute 'unseat_sim_kard'"),
        "{text}"
    );
    // the other task still runs and passes; the broken one is excluded from the average
    assert!(
        text.contains("graded 1/2 simulations; average reward 1.0000"),
        "{text}"
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(
        v["simulations"][0]["termination_reason"],
        INFRASTRUCTURE_ERROR
    );
    let csv = std::fs::read_to_string(out.join("tau2.csv")).unwrap();
    // an error cell set aside (the default --error-cells): no reward, not "ungraded"
    assert!(
        csv.contains("telecom,broken_setup,gold,0,,,0,infrastructure_error"),
        "{csv}"
    );
    assert!(
        text.contains("1 left, set aside (no reward; not in averages or pass^k): broken_setup/t0"),
        "{text}"
    );
}

#[test]
fn tools_from_the_wrong_side_and_unknown_actions_are_error_results() {
    if common::data().is_none() {
        return;
    }
    let d = common::domain("telecom");
    let mut env = d.env();
    env.set_state(d.tasks[0].initial_state.as_ref(), &[])
        .unwrap();
    let before = (env.db_hash(), env.user_db_hash());
    for (req, name, want) in [
        (
            "assistant",
            "toggle_airplane_mode",
            "Error: Tool 'toggle_airplane_mode' not found.",
        ),
        (
            "user",
            "refuel_data",
            "Error: Tool 'refuel_data' not found.",
        ),
        (
            "user",
            "fly_to_the_moon",
            "Error: Tool 'fly_to_the_moon' not found.",
        ),
        (
            "user",
            "set_user_location",
            "Error: Tool 'set_user_location' not found.",
        ),
    ] {
        let m = env.get_response(&call(req, name, json!({})));
        assert_eq!((m.text(), m.error), (want, Some(true)));
    }
    let m = env.get_response(&call("user", "toggle_data", json!({"on": true})));
    assert_eq!(
        m.text(),
        "Error: TelecomUserTools.toggle_data() got an unexpected keyword argument 'on'"
    );
    let m = env.get_response(&call(
        "user",
        "grant_app_permission",
        json!({"app_name": "messaging", "permission": 3}),
    ));
    assert_eq!(m.text(), "Error: 'int' object has no attribute 'lower'");
    let m = env.get_response(&call(
        "user",
        "set_apn_settings",
        json!({"apn_settings": {"apn_name": "wifi"}}),
    ));
    assert!(
        m.text()
            .starts_with("Error: 1 validation error for APNSettings"),
        "{}",
        m.text()
    );
    let m = env.get_response(&call(
        "assistant",
        "refuel_data",
        json!({"customer_id": "C1001", "line_id": "L1002", "gb_amount": "2"}),
    ));
    assert_eq!(
        m.text(),
        "Error: '<=' not supported between instances of 'str' and 'int'"
    );
    assert_eq!(
        (env.db_hash(), env.user_db_hash()),
        before,
        "failed calls change nothing"
    );
    // an unknown setup function is an error, not a panic
    let r = env.run_function("user", "teleport", &serde_json::Map::new());
    assert_eq!(
        r.unwrap_err().0,
        "'TelecomUserTools' object has no attribute 'teleport'"
    );
}

/// An agent that calls a user tool, then talks.
struct WrongSide(usize);

impl Agent for WrongSide {
    fn next(&mut self, _t: &[Message]) -> lrab_tau2::Tau2Result<Message> {
        self.0 += 1;
        Ok(if self.0 == 1 {
            Message::with_calls(
                "assistant",
                None,
                vec![call("assistant", "reboot_device", json!({}))],
            )
        } else {
            Message::assistant_text("Please reboot your phone.")
        })
    }
}

#[test]
fn conversation_survives_wrong_side_calls() {
    if common::data().is_none() {
        return;
    }
    let d = common::domain("telecom");
    let task = &d.tasks[0];
    let mut env = d.env();
    env.set_state(task.initial_state.as_ref(), &[]).unwrap();
    let mut user = ScriptedUser::new(vec!["My data is broken.".into()]);
    let out = run_conversation(
        &mut env,
        &mut WrongSide(0),
        &mut user,
        &[],
        &Limits::default(),
    );
    assert_eq!(out.termination, USER_STOP);
    let err = out.messages.iter().find(|m| m.role == "tool").unwrap();
    assert_eq!(err.text(), "Error: Tool 'reboot_device' not found.");
    assert_eq!(out.errors, 1);
    // greeting, user, agent call, result, agent text, user stop: 5 hops counted
    assert_eq!(out.steps, 5);
}

#[test]
fn llm_user_gets_phone_tools_and_the_tools_guidelines() {
    if common::data().is_none() {
        return;
    }
    let d = common::domain("telecom");
    let env = d.env();
    let tools = env.tool_schemas("user");
    assert_eq!(tools.len(), 30);
    assert_eq!(env.tool_schemas("assistant").len(), 13);
    let names: Vec<&str> = tools.iter().map(|t| t.function.name.as_str()).collect();
    assert!(names.contains(&"toggle_airplane_mode") && names.contains(&"make_payment"));
    let guide = std::fs::read_to_string(
        common::data_dir().join("user_simulator/simulation_guidelines_tools.md"),
    )
    .unwrap();
    // through the CLI: the user model's request carries the phone tools and that file
    let (url, log) = common::spawn_server(4, |_, body| {
        let turns = body["messages"].as_array().map_or(0, |m| m.len());
        let text = match (common::is_user_request(body), turns > 2) {
            (true, false) => "My mobile data does not work.",
            (true, true) => "It works now. ###STOP###",
            _ => "Let us check.",
        };
        (200, common::ollama_text(text))
    });
    let tmp = tempfile::tempdir().unwrap();
    let id = d.tasks[0].id.clone();
    let args = common::llm_run_args("telecom", "plain", &url, &id, tmp.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (r, text) = cli(&common::data_dir(), &args);
    r.unwrap();
    assert!(text.contains("[user_stop]"), "{text}");
    let log = log.lock().unwrap();
    let user_req = &log
        .iter()
        .find(|(_, b)| common::is_user_request(b))
        .unwrap()
        .1;
    let system = user_req["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with(&guide) && system.contains("\n\n<scenario>\n"));
    assert!(system.contains("\tDomain: telecom"));
    assert_eq!(user_req["tools"].as_array().unwrap().len(), 30);
    let agent_req = &log
        .iter()
        .find(|(_, b)| !common::is_user_request(b))
        .unwrap()
        .1;
    assert_eq!(agent_req["tools"].as_array().unwrap().len(), 13);
    assert!(agent_req["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("<tech_support_policy>"));
}

/// Dual control with an LLM user over HTTP: the user model calls a phone tool, the orchestrator
/// runs it on the phone and hands the result back to the user model (not to the agent), and
/// the env assertions grade the phone the user left behind. A user who never touches the phone
/// leaves it broken and scores 0.
#[test]
fn llm_user_operates_the_phone_and_the_phone_is_graded() {
    if common::data().is_none() {
        return;
    }
    let d = common::domain("telecom");
    // airplane mode on and mobile data off: the user has to switch both on the phone
    let task = d
        .task("[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]")
        .unwrap();
    for (fixes, want_reward) in [(true, "1.0000"), (false, "0.0000")] {
        let (url, log) = common::spawn_server(8, move |_, body| {
            let msgs = body["messages"].as_array().cloned().unwrap_or_default();
            if !common::is_user_request(body) {
                return (
                    200,
                    common::ollama_text("Please check airplane mode and mobile data."),
                );
            }
            let results = msgs.iter().filter(|m| m["role"] == "tool").count();
            let reply = if msgs.len() <= 2 {
                common::ollama_text("My mobile data does not work.")
            } else if results >= 2 || !fixes {
                common::ollama_text("Thanks, that is all. ###STOP###")
            } else if results == 0 {
                common::ollama_call("toggle_airplane_mode", json!({}))
            } else {
                common::ollama_call("toggle_data", json!({}))
            };
            (200, reply)
        });
        let tmp = tempfile::tempdir().unwrap();
        let args = common::llm_run_args("telecom", "plain", &url, &task.id, tmp.path());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (r, text) = cli(&common::data_dir(), &args);
        r.unwrap();
        assert!(
            text.contains(&format!(
                "graded 1/1 simulations; average reward {want_reward}"
            )),
            "{text}"
        );
        let v: Value = serde_json::from_str(
            &std::fs::read_to_string(tmp.path().join("results.json")).unwrap(),
        )
        .unwrap();
        let sim = &v["simulations"][0];
        assert_eq!(sim["termination_reason"], USER_STOP);
        let asserts: Vec<bool> = sim["reward_info"]["env_assertions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["met"].as_bool().unwrap())
            .collect();
        assert_eq!(asserts, vec![fixes, fixes], "{}", sim["reward_info"]);
        let msgs = sim["messages"].as_array().unwrap();
        let user_calls: Vec<&Value> = msgs
            .iter()
            .filter(|m| m["role"] == "user" && m["tool_calls"].is_array())
            .collect();
        assert_eq!(user_calls.len(), 2 * usize::from(fixes));
        if !fixes {
            continue;
        }
        assert_eq!(
            user_calls[0]["tool_calls"][0]["name"],
            "toggle_airplane_mode"
        );
        assert_eq!(user_calls[1]["tool_calls"][0]["name"], "toggle_data");
        assert_eq!(user_calls[0]["tool_calls"][0]["requestor"], "user");
        // the phone's answer comes right after the call, addressed to the user
        let i = msgs.iter().position(|m| m == user_calls[1]).unwrap();
        assert_eq!(msgs[i + 1]["role"], "tool");
        assert_eq!(msgs[i + 1]["requestor"], "user");
        let result = msgs[i + 1]["content"].as_str().unwrap().to_string();
        assert!(!result.starts_with("Error"), "{result}");
        // the user model saw that result as its own tool result; the agent model never did
        let log = log.lock().unwrap();
        let last_user = log
            .iter()
            .rev()
            .find(|(_, b)| common::is_user_request(b))
            .unwrap();
        let seen = last_user.1["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(
            (seen["role"].as_str(), seen["content"].as_str()),
            (Some("tool"), Some(result.as_str()))
        );
        for (_, b) in log.iter().filter(|(_, b)| !common::is_user_request(b)) {
            assert!(
                !b.to_string().contains(&result),
                "the agent saw the user's tool result"
            );
        }
    }
}

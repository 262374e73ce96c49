//! The LLM-backed participants over real HTTP against an in-test server: the `plain`
//! agent and the user simulator complete a mock task (Ollama and OpenAI wire formats),
//! and the NL judge grades a retail task.

mod common;
use common::{is_user_request, ollama_call, ollama_text, spawn_server};
use lrab_tau2::{evaluate, Judge, USER_STOP};
use lrab_tau2::{Api, Backend, LlmJudge, LlmUser, PlainAgent};
use lrab_tau2::{GoldAgent, ScriptedUser};
use lrab_tau2::{Limits, GREETING};
use serde_json::{json, Value};

const NL_TASK: &str = "19";

fn guidelines() -> String {
    std::fs::read_to_string(common::data_dir().join("user_simulator/simulation_guidelines.md"))
        .unwrap()
}

/// Agent: create the task, then confirm. User: ask, then stop.
fn mock_reply(body: &Value, openai: bool) -> Value {
    let msgs = body["messages"].as_array().unwrap();
    let last = msgs.last().unwrap();
    let v = if is_user_request(body) {
        if msgs.len() <= 2 {
            ollama_text("Please create a task called 'Important Meeting' for user_1.")
        } else {
            ollama_text("Great, thanks! ###STOP###")
        }
    } else if last["role"] == "tool" {
        ollama_text("Your task 'Important Meeting' was created as task_2.")
    } else {
        ollama_call(
            "create_task",
            json!({"user_id": "user_1", "title": "Important Meeting"}),
        )
    };
    if !openai {
        return v;
    }
    let m = &v["message"];
    let mut msg = json!({"role": "assistant", "content": m["content"]});
    if let Some(calls) = m["tool_calls"].as_array() {
        msg["tool_calls"] = Value::Array(calls.iter().enumerate().map(|(i, c)| json!({"id": format!("call_{i}"), "type": "function", "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"].to_string()}})).collect());
    }
    json!({"choices": [{"index": 0, "message": msg, "finish_reason": "stop"}]})
}

fn run_mock(api: Api) {
    let openai = api == Api::OpenAi;
    let (url, log) = spawn_server(20, move |_p, b| (200, mock_reply(b, openai)));
    let d = common::domain("mock");
    let task = d.task("create_task_1").unwrap();
    let mut env = d.env();
    let mut ab = Backend::new(&url, api, "agent-model");
    ab.seed = Some(7);
    let mut agent = PlainAgent::new(ab, &d.policy, env.tool_schemas("assistant"));
    let mut user = LlmUser::new(
        Backend::new(&url, api, "user-model"),
        &guidelines(),
        &task.user_scenario.to_string(),
        vec![],
    );
    let out = lrab_tau2::run_conversation(&mut env, &mut agent, &mut user, &[], &Limits::default());
    assert_eq!(out.termination, USER_STOP, "{:?}", out.note);
    let ev = evaluate(d, task, &out.messages, &out.termination, None).unwrap();
    assert_eq!(ev.reward, Some(1.0), "{ev:?}");

    let log = log.lock().unwrap();
    let want_path = if openai {
        "/v1/chat/completions"
    } else {
        "/api/chat"
    };
    assert!(log.iter().all(|(p, _)| p == want_path));
    // The agent request: policy in the system prompt, the domain tools, its own model.
    let (_, a) = log.iter().find(|(_, b)| !is_user_request(b)).unwrap();
    assert_eq!(a["model"], "agent-model");
    let sys = a["messages"][0]["content"].as_str().unwrap();
    assert!(sys.contains("<policy>\n# Mock Domain Policy"));
    let tools: Vec<&str> = a["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"create_task") && tools.contains(&"transfer_to_human_agents"));
    assert_eq!(a["messages"][1]["role"], "assistant");
    assert_eq!(a["messages"][1]["content"], GREETING);
    // The user request: guidelines + scenario, roles flipped, agent tool traffic hidden.
    let (_, u) = log.iter().rfind(|(_, b)| is_user_request(b)).unwrap();
    assert_eq!(u["model"], "user-model");
    let usys = u["messages"][0]["content"].as_str().unwrap();
    assert!(usys.starts_with(&guidelines()));
    assert!(usys.contains("<scenario>\nPersona:\n\tProfessional"));
    assert!(usys.contains("Instructions:\n\tYou are a team member"));
    let roles: Vec<&str> = u["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(u["messages"][1]["content"], GREETING);
    // The tool result reaches the agent with its call id (OpenAI) or tool name (Ollama).
    let (_, after_tool) = log.iter().rfind(|(_, b)| !is_user_request(b)).unwrap();
    let tool_msg = after_tool["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(tool_msg.get("_tool_name").is_none());
    if openai {
        assert!(tool_msg["tool_call_id"]
            .as_str()
            .unwrap()
            .starts_with("assistant_call_"));
        assert!(tool_msg.get("tool_name").is_none());
    } else {
        assert_eq!(tool_msg["tool_name"], "create_task");
    }
    if openai {
        assert_eq!(a["seed"], 7);
    } else {
        assert_eq!(a["options"]["seed"], 7);
        assert_eq!(a["options"]["temperature"], 0.0);
    }
}

#[test]
fn plain_agent_and_llm_user_over_ollama_api() {
    if common::data().is_none() {
        return;
    }
    run_mock(Api::Ollama);
}

#[test]
fn plain_agent_and_llm_user_over_openai_api() {
    if common::data().is_none() {
        return;
    }
    run_mock(Api::OpenAi);
}

#[test]
fn backend_errors_end_the_run_as_agent_error() {
    if common::data().is_none() {
        return;
    }
    let (url, _log) = spawn_server(20, |_p, b| {
        if is_user_request(b) {
            (200, ollama_text("Hi, I need help."))
        } else {
            (404, json!({"error": "model not found"}))
        }
    });
    let d = common::domain("mock");
    let mut env = d.env();
    let mut agent = PlainAgent::new(
        Backend::new(&url, Api::Ollama, "missing"),
        &d.policy,
        env.tool_schemas("assistant"),
    );
    let mut user = LlmUser::new(Backend::new(&url, Api::Ollama, "u"), "g", "s", vec![]);
    let out = lrab_tau2::run_conversation(&mut env, &mut agent, &mut user, &[], &Limits::default());
    assert_eq!(out.termination, "agent_error");
    assert!(out.note.unwrap().contains("HTTP 404"));
}

#[test]
fn nl_assertions_need_a_judge_and_use_it_when_given() {
    if common::data().is_none() {
        return;
    }
    let d = common::domain("retail");
    let task = d.task(NL_TASK).unwrap();
    let n = task
        .evaluation_criteria
        .as_ref()
        .unwrap()
        .nl_assertions
        .as_ref()
        .unwrap()
        .len();
    assert!(n > 0);
    let mut env = d.env();
    let mut agent = GoldAgent::new(task);
    let mut user = ScriptedUser::new(vec!["I want to exchange some items.".into()]);
    let out = lrab_tau2::run_conversation(&mut env, &mut agent, &mut user, &[], &Limits::default());
    // No judge: ungraded, never a pass.
    let ev = evaluate(d, task, &out.messages, &out.termination, None).unwrap();
    assert_eq!(ev.reward, None);
    assert_eq!(ev.db_match, Some(true));
    // A judge that says "met" for everything -> 1; one that fails one -> 0.
    for (met, want) in [(true, 1.0), (false, 0.0)] {
        let (url, log) = spawn_server(5, move |_p, b| {
            let content = b["messages"][1]["content"].as_str().unwrap();
            let list: Vec<String> =
                serde_json::from_str(content.split("expectedOutcomes:\n").nth(1).unwrap()).unwrap();
            let k = list.len();
            let results: Vec<Value> = (0..k).map(|i| json!({"expectedOutcome": "x", "reasoning": "checked", "metExpectation": met || i > 0})).collect();
            (
                200,
                ollama_text(&format!("```json\n{}\n```", json!({"results": results}))),
            )
        });
        let mut judge = LlmJudge {
            backend: Backend::new(&url, Api::Ollama, "judge"),
        };
        let ev = evaluate(
            d,
            task,
            &out.messages,
            &out.termination,
            Some(&mut judge as &mut dyn Judge),
        )
        .unwrap();
        assert_eq!(ev.reward, Some(want), "met={met}: {:?}", ev.nl);
        let body = &log.lock().unwrap()[0].1;
        assert!(body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("assistant: "));
    }
}

//! Each failure form triggered alone, and the matching recovery mechanism of a generic agent
//! shown to work where one exists.

mod common;
use common::*;
use lrab_sim::profile::{REACT_2B, REACT_ORACLE};
use lrab_sim::{FailureForm, ModelSpec, Profile, SimConfig};
use serde_json::Value;

fn only(name: &str, form: FailureForm, rate: f64) -> ModelSpec {
    ModelSpec::new(name, 2.0, true, Profile::only(form, rate, REACT_ORACLE))
}

fn sim_with(models: Vec<ModelSpec>) -> lrab_sim::SimHandle {
    start(SimConfig {
        extra_models: models,
        ..Default::default()
    })
}

fn first_turn(
    sim: &lrab_sim::SimHandle,
    model: &str,
    api: Api,
    toolset: Toolset,
    think: bool,
) -> (Value, String) {
    let pack = pack();
    let t = pack.get("WF-02").unwrap();
    let mut agent = Agent::new(&sim.url(), model, api, toolset);
    agent.max_turns = 1;
    let tools = tools_for(toolset);
    let msgs = vec![
        serde_json::json!({"role": "system", "content": "agent"}),
        serde_json::json!({"role": "user", "content": t.render_prompt()}),
    ];
    if think {
        let body = serde_json::json!({"model": model, "messages": msgs, "tools": tools, "stream": false, "think": true});
        let v: Value = ureq::post(&format!("{}/api/chat", sim.url()))
            .send_json(body)
            .unwrap()
            .into_json()
            .unwrap();
        return (
            v["message"].clone(),
            v["done_reason"].as_str().unwrap().to_string(),
        );
    }
    let mut tr = Transcript::default();
    agent.call(&msgs, &tools, &mut tr).unwrap()
}

#[test]
fn text_call_shapes_alone() {
    let sim = sim_with(vec![
        only("f-json", FailureForm::TextCallJson, 1.0),
        only("f-ph", FailureForm::TextCallPlaceholder, 1.0),
        only("f-bare", FailureForm::TextCallBare, 1.0),
    ]);
    let (m, _) = first_turn(&sim, "f-json", Api::Native, Toolset::Rich, false);
    assert!(m.get("tool_calls").is_none());
    let v: Value = serde_json::from_str(m["content"].as_str().unwrap()).unwrap();
    assert_eq!(v["name"], "write_file");
    assert!(v["arguments"]["content"].as_str().unwrap().len() > 100);
    let (m, _) = first_turn(&sim, "f-ph", Api::Native, Toolset::Rich, false);
    let c = m["content"].as_str().unwrap();
    assert!(
        c.starts_with("write_file(path:<|\"|>") && c.ends_with("<|\"|>)"),
        "{c}"
    );
    let (m, _) = first_turn(&sim, "f-bare", Api::OpenAiStream, Toolset::Rich, false);
    let c = m["content"].as_str().unwrap();
    assert!(
        c.starts_with("write_file(path=\"") && c.ends_with("\")"),
        "{c}"
    );
    assert!(m.get("tool_calls").is_none());
}

#[test]
fn format_rescue_recovers_from_text_calls() {
    let sim = sim_with(vec![only("f-json", FailureForm::TextCallJson, 1.0)]);
    let pack = pack();
    // without rescue the first text reply ends the run with nothing done
    let (_t1, wd, m) = fresh(&pack, "WF-02");
    let plain = Agent::new(&sim.url(), "f-json", Api::Native, Toolset::Rich);
    let tr = plain.run(&pack.get("WF-02").unwrap().render_prompt(), &wd);
    assert_eq!(tr.turns, 1);
    assert_eq!(score(&pack, "WF-02", &m, &wd), 0.0);
    // with format rescue every step runs and the task completes
    let (_t2, wd, m) = fresh(&pack, "WF-02");
    let mut rescuing = Agent::new(&sim.url(), "f-json", Api::Native, Toolset::Rich);
    rescuing.rescue_text_calls = true;
    let tr = rescuing.run(&pack.get("WF-02").unwrap().render_prompt(), &wd);
    assert!(tr.finished_by_tool);
    assert_eq!(score(&pack, "WF-02", &m, &wd), 1.0);
}

#[test]
fn repeat_call_alone_and_blocking_breaks_it() {
    let pack = pack();
    let model = ModelSpec::new(
        "f-rep",
        2.0,
        false,
        Profile::only(FailureForm::RepeatCall, 1.0, REACT_2B),
    );
    let sim = sim_with(vec![model]);
    let (_t, wd, _m) = fresh(&pack, "WF-02");
    let mut agent = Agent::new(&sim.url(), "f-rep", Api::Native, Toolset::Rich);
    agent.max_turns = 6;
    let tr = agent.run(&pack.get("WF-02").unwrap().render_prompt(), &wd);
    let calls: Vec<String> = tr
        .messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["tool_calls"][0]["function"].to_string())
        .collect();
    assert!(
        calls.len() >= 3 && calls[1] == calls[0] && calls[2] == calls[1],
        "{calls:?}"
    );
}

#[test]
fn false_done_alone_and_finish_gate_recovers() {
    let pack = pack();
    let sim = sim_with(vec![
        only("f-done", FailureForm::FalseDone, 1.0),
        only("f-done3", FailureForm::FalseDone, 0.5),
    ]);
    let (m, _) = first_turn(&sim, "f-done", Api::Native, Toolset::Rich, false);
    assert_eq!(m["tool_calls"][0]["function"]["name"], "finish");
    let (m, _) = first_turn(&sim, "f-done", Api::Native, Toolset::ShellOnly, false);
    assert!(m["content"]
        .as_str()
        .unwrap()
        .starts_with("All steps are done"));
    // a claimed-artifact gate turns false claims into more work
    let prompt = pack.get("WF-02").unwrap().render_prompt();
    let (_a, wd, mat) = fresh(&pack, "WF-02");
    let agent = Agent::new(&sim.url(), "f-done3", Api::Native, Toolset::Rich);
    agent.run(&prompt, &wd);
    let without = score(&pack, "WF-02", &mat, &wd);
    let (_b, wd, mat) = fresh(&pack, "WF-02");
    let mut gated = Agent::new(&sim.url(), "f-done3", Api::Native, Toolset::Rich);
    gated.finish_gate = true;
    gated.run(&prompt, &wd);
    let with = score(&pack, "WF-02", &mat, &wd);
    assert!(with > without, "gate {with} vs none {without}");
    assert_eq!(with, 1.0);
}

#[test]
fn abandon_and_empty_turns_alone_and_nudges_recover() {
    let pack = pack();
    let sim = sim_with(vec![
        only("f-ab", FailureForm::Abandon, 1.0),
        only("f-empty", FailureForm::EmptyTurn, 1.0),
        only("f-ab3", FailureForm::Abandon, 0.3),
    ]);
    let (m, _) = first_turn(&sim, "f-ab", Api::Native, Toolset::Rich, false);
    let c = m["content"].as_str().unwrap();
    assert!(m.get("tool_calls").is_none() && !c.is_empty() && !c.contains("done"));
    let (m, r) = first_turn(&sim, "f-empty", Api::OpenAi, Toolset::Rich, false);
    assert_eq!(m["content"], "");
    assert!(m.get("tool_calls").is_none());
    assert_eq!(r, "stop");
    let prompt = pack.get("WF-02").unwrap().render_prompt();
    let (_a, wd, mat) = fresh(&pack, "WF-02");
    let mut nudging = Agent::new(&sim.url(), "f-ab3", Api::Native, Toolset::Rich);
    nudging.nudges = 10;
    let tr = nudging.run(&prompt, &wd);
    assert!(tr.finished_by_tool);
    assert_eq!(score(&pack, "WF-02", &mat, &wd), 1.0);
}

#[test]
fn think_only_alone() {
    let sim = sim_with(vec![only("f-think", FailureForm::ThinkOnly, 1.0)]);
    let (m, _) = first_turn(&sim, "f-think", Api::Native, Toolset::Rich, true);
    assert!(!m["thinking"].as_str().unwrap().is_empty());
    assert_eq!(m["content"], "");
    assert!(m.get("tool_calls").is_none());
    let (m, _) = first_turn(&sim, "f-think", Api::OpenAi, Toolset::Rich, false);
    assert!(m["content"].as_str().unwrap().starts_with("<think>"));
}

#[test]
fn runaway_and_truncation_at_num_predict() {
    let sim = sim_with(vec![
        only("f-run", FailureForm::Runaway, 1.0),
        // no form at all: only the physical limit
        ModelSpec::new(
            "f-none",
            2.0,
            false,
            Profile::only(FailureForm::Runaway, 0.0, REACT_2B),
        ),
    ]);
    let pack = pack();
    let mut agent = Agent::new(&sim.url(), "f-run", Api::Native, Toolset::Rich);
    agent.num_predict = Some(64);
    let (_t, wd, _m) = fresh(&pack, "WF-02");
    let tr = agent.run(&pack.get("WF-02").unwrap().render_prompt(), &wd);
    assert_eq!(tr.done_reasons[0], "length");
    assert_eq!(tr.text_end.as_ref().unwrap().len(), 256);
    let mut agent = Agent::new(&sim.url(), "f-none", Api::OpenAi, Toolset::Rich);
    agent.num_predict = Some(50);
    let (_t, wd, _m) = fresh(&pack, "WF-02");
    let tr = agent.run(&pack.get("WF-02").unwrap().render_prompt(), &wd);
    assert_eq!(tr.done_reasons[0], "length");
    let text = tr.text_end.unwrap();
    assert!(text.len() <= 200 && text.contains("write_file"), "{text}");
    // the oracle is exempt
    let mut agent = Agent::new(&sim.url(), "sim-oracle", Api::Native, Toolset::Rich);
    agent.num_predict = Some(50);
    agent.max_turns = 1;
    let (_t, wd, _m) = fresh(&pack, "WF-02");
    let tr = agent.run(&pack.get("WF-02").unwrap().render_prompt(), &wd);
    assert_eq!(tr.done_reasons[0], "stop");
}

#[test]
fn wrong_tool_alone_and_error_feedback_recovers() {
    let pack = pack();
    let sim = sim_with(vec![
        only("f-wrong", FailureForm::WrongTool, 1.0),
        only("f-wrong3", FailureForm::WrongTool, 0.3),
    ]);
    let (m, _) = first_turn(&sim, "f-wrong", Api::Native, Toolset::Rich, false);
    let name = m["tool_calls"][0]["function"]["name"].as_str().unwrap();
    assert_ne!(name, "write_file");
    // after a wrong call and its error, the next turn takes the same step with the right tool
    let (_t, wd, _m) = fresh(&pack, "WF-02");
    let agent = Agent::new(&sim.url(), "f-wrong3", Api::Native, Toolset::Rich);
    let tr = agent.run(&pack.get("WF-02").unwrap().render_prompt(), &wd);
    let asst: Vec<&Value> = tr
        .messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    let mut recovered = 0;
    for w in asst.windows(2) {
        let a = w[0]["tool_calls"][0]["function"]["name"]
            .as_str()
            .unwrap_or("");
        let b = w[1]["tool_calls"][0]["function"]["name"]
            .as_str()
            .unwrap_or("");
        if a != "write_file"
            && a != "finish"
            && !a.is_empty()
            && b == "write_file"
            && w[0]["content"] == w[1]["content"]
        {
            recovered += 1;
        }
    }
    assert!(recovered >= 1, "no recovery seen");
}

#[test]
fn broken_code_alone_and_precise_error_gets_it_fixed() {
    let pack = pack();
    let sim = sim_with(vec![only("f-broken", FailureForm::BrokenCode, 1.0)]);
    let (_t, wd, mat) = fresh(&pack, "WF-01");
    let agent = Agent::new(&sim.url(), "f-broken", Api::Native, Toolset::Rich);
    let tr = agent.run(&pack.get("WF-01").unwrap().render_prompt(), &wd);
    let writes: Vec<&Value> = tr
        .messages
        .iter()
        .filter(|m| m["tool_calls"][0]["function"]["arguments"]["path"] == "build_tables.py")
        .collect();
    assert!(writes.len() >= 2, "broken write then a fix expected");
    assert!(
        writes[0]["tool_calls"][0]["function"]["arguments"]["content"]
            .as_str()
            .unwrap()
            .contains("def unfinished(:")
    );
    assert_eq!(score(&pack, "WF-01", &mat, &wd), 1.0);
}

#[test]
fn lost_in_middle_alone_and_restating_the_task_helps() {
    let pack = pack();
    let mut p = Profile::only(FailureForm::LostInMiddle, 1.0, REACT_ORACLE);
    p.reactions.lost_ctx_threshold = 1500;
    let sim = sim_with(vec![ModelSpec::new("f-lost", 2.0, false, p)]);
    let prompt = pack.get("LH-03").unwrap().render_prompt();
    let (_a, wd, mat) = fresh(&pack, "LH-03");
    let agent = Agent::new(&sim.url(), "f-lost", Api::Native, Toolset::Rich);
    agent.run(&prompt, &wd);
    let lost = score(&pack, "LH-03", &mat, &wd);
    assert!(lost < 1.0);
    let (_b, wd, mat) = fresh(&pack, "LH-03");
    let mut restating = Agent::new(&sim.url(), "f-lost", Api::Native, Toolset::Rich);
    restating.finish_gate = true;
    restating.restate_on_reject = true;
    restating.run(&prompt, &wd);
    let helped = score(&pack, "LH-03", &mat, &wd);
    assert!(helped > lost, "restated {helped} vs {lost}");
}

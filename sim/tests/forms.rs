//! Each failure form triggered alone (single-form models), and the recovery of a generic test
//! agent shown where a mechanism exists.

mod common;
use common::*;
use lrab_sim::REACT_ORACLE;
use lrab_sim::{FailureForm, Family, ModelSpec, Profile, SimConfig};
use serde_json::Value;

fn only(name: &str, family: Family, form: FailureForm, rate: f64) -> ModelSpec {
    let mut p = Profile::only(name, family, form, rate, REACT_ORACLE);
    p.thinking = true;
    ModelSpec::from_profile(p)
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
) -> Result<(Value, String), String> {
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
        return Ok((
            v["message"].clone(),
            v["done_reason"].as_str().unwrap().to_string(),
        ));
    }
    let mut tr = Transcript::default();
    agent.call(&msgs, &tools, &mut tr)
}

#[test]
fn text_calls_follow_each_familys_leak_shapes_and_a_reader_recovers_them() {
    let sim = sim_with(vec![
        only("f-gemma", Family::Gemma4, FailureForm::TextCall, 1.0),
        only("f-qwen", Family::Qwen35, FailureForm::TextCall, 1.0),
        only("f-llama", Family::Llama, FailureForm::TextCall, 1.0),
    ]);
    for (m, fam) in [
        ("f-gemma", Family::Gemma4),
        ("f-qwen", Family::Qwen35),
        ("f-llama", Family::Llama),
    ] {
        let (msg, _) = first_turn(&sim, m, Api::Native, Toolset::Rich, false).unwrap();
        assert!(
            msg.get("tool_calls").is_none(),
            "{m}: a leaked call is content"
        );
        let c = msg["content"].as_str().unwrap();
        let call = lrab_sim::parse_leak(c).unwrap_or_else(|| panic!("{m}: {c}"));
        assert_eq!(call.name, "write_file");
        let shapes = lrab_sim::leak_shapes(fam);
        assert!(!shapes.is_empty());
    }
    // without a reader the first text reply ends the run; with one every step runs
    let pack = pack();
    let (_t1, wd, m) = fresh(&pack, "WF-02");
    let plain = Agent::new(&sim.url(), "f-qwen", Api::Native, Toolset::Rich);
    let tr = plain.run(&pack.get("WF-02").unwrap().render_prompt(), &wd);
    assert_eq!(tr.turns, 1);
    assert_eq!(score(&pack, "WF-02", &m, &wd), 0.0);
    let (_t2, wd, m) = fresh(&pack, "WF-02");
    let mut reading = Agent::new(&sim.url(), "f-qwen", Api::Native, Toolset::Rich);
    reading.rescue_text_calls = true;
    let tr = reading.run(&pack.get("WF-02").unwrap().render_prompt(), &wd);
    assert!(tr.calls >= 4, "{tr:?}");
    assert_eq!(score(&pack, "WF-02", &m, &wd), 1.0);
}

#[test]
fn malformed_calls_fail_or_vanish_as_the_family_parser_does() {
    let sim = sim_with(vec![
        only("m-qwen", Family::Qwen35, FailureForm::MalformedCall, 1.0),
        only("m-gemma", Family::Gemma4, FailureForm::MalformedCall, 1.0),
    ]);
    let e = first_turn(&sim, "m-qwen", Api::Native, Toolset::Rich, false).unwrap_err();
    assert!(e.contains("500"), "{e}");
    let e = first_turn(&sim, "m-qwen", Api::OpenAi, Toolset::Rich, false).unwrap_err();
    assert!(e.contains("500"), "{e}");
    // gemma4 drops the call silently: the narration stays, no call, no error
    let (m, r) = first_turn(&sim, "m-gemma", Api::Native, Toolset::Rich, false).unwrap();
    assert!(m.get("tool_calls").is_none() && r == "stop");
    assert!(!m["content"].as_str().unwrap().contains("tool_call"));
}

#[test]
fn bad_args_lack_a_required_argument() {
    let sim = sim_with(vec![only(
        "b-args",
        Family::Gemma4,
        FailureForm::BadArgs,
        1.0,
    )]);
    let (m, _) = first_turn(&sim, "b-args", Api::Native, Toolset::Rich, false).unwrap();
    let args = &m["tool_calls"][0]["function"]["arguments"];
    assert!(
        args.get("path").is_none() || args.get("content").is_none(),
        "{args}"
    );
}

#[test]
fn repeat_call_alone() {
    let pack = pack();
    let mut p = Profile::only(
        "f-rep",
        Family::Gemma4,
        FailureForm::RepeatCall,
        1.0,
        REACT_ORACLE,
    );
    p.reactions.loop_stay_plain = 0.9;
    let sim = sim_with(vec![ModelSpec::from_profile(p)]);
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
fn false_done_alone_and_a_finish_gate_recovers() {
    let pack = pack();
    let sim = sim_with(vec![
        only("f-done", Family::Gemma4, FailureForm::FalseDone, 1.0),
        only("f-done3", Family::Gemma4, FailureForm::FalseDone, 0.5),
    ]);
    let (m, _) = first_turn(&sim, "f-done", Api::Native, Toolset::Rich, false).unwrap();
    assert_eq!(m["tool_calls"][0]["function"]["name"], "finish");
    let (m, _) = first_turn(&sim, "f-done", Api::Native, Toolset::ShellOnly, false).unwrap();
    assert!(m["content"]
        .as_str()
        .unwrap()
        .starts_with("All steps are done"));
    let prompt = pack.get("WF-02").unwrap().render_prompt();
    let (_a, wd, mat) = fresh(&pack, "WF-02");
    Agent::new(&sim.url(), "f-done3", Api::Native, Toolset::Rich).run(&prompt, &wd);
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
fn nudges_work_with_the_profiles_chance() {
    let pack = pack();
    let mut never = Profile::only(
        "n-never",
        Family::Gemma4,
        FailureForm::Abandon,
        0.3,
        REACT_ORACLE,
    );
    never.reactions.nudge_continue = 0.0;
    let sim = sim_with(vec![
        only("f-ab", Family::Gemma4, FailureForm::Abandon, 1.0),
        only("f-empty", Family::Gemma4, FailureForm::EmptyTurn, 1.0),
        only("f-ab3", Family::Gemma4, FailureForm::Abandon, 0.3),
        ModelSpec::from_profile(never),
    ]);
    let (m, _) = first_turn(&sim, "f-ab", Api::Native, Toolset::Rich, false).unwrap();
    let c = m["content"].as_str().unwrap();
    assert!(m.get("tool_calls").is_none() && !c.is_empty() && !c.contains("done"));
    let (m, r) = first_turn(&sim, "f-empty", Api::OpenAi, Toolset::Rich, false).unwrap();
    assert_eq!(m["content"], "");
    assert!(m.get("tool_calls").is_none());
    assert_eq!(r, "stop");
    let prompt = pack.get("WF-02").unwrap().render_prompt();
    let run = |model: &str| {
        let (_a, wd, mat) = fresh(&pack, "WF-02");
        let mut nudging = Agent::new(&sim.url(), model, Api::Native, Toolset::Rich);
        nudging.nudges = 10;
        nudging.run(&prompt, &wd);
        score(&pack, "WF-02", &mat, &wd)
    };
    assert_eq!(
        run("f-ab3"),
        1.0,
        "a model that always takes a nudge completes"
    );
    assert!(
        run("n-never") < 1.0,
        "a model that never takes one stops for good"
    );
}

#[test]
fn think_only_alone() {
    let sim = sim_with(vec![only(
        "f-think",
        Family::Qwen35,
        FailureForm::ThinkOnly,
        1.0,
    )]);
    let (m, _) = first_turn(&sim, "f-think", Api::Native, Toolset::Rich, true).unwrap();
    assert!(!m["thinking"].as_str().unwrap().is_empty());
    assert_eq!(m["content"], "");
    assert!(m.get("tool_calls").is_none());
    let (m, _) = first_turn(&sim, "f-think", Api::OpenAi, Toolset::Rich, false).unwrap();
    assert!(m["content"].as_str().unwrap().starts_with("<think>"));
}

#[test]
fn runaway_and_truncation_at_num_predict() {
    let sim = sim_with(vec![
        only("f-run", Family::Gemma4, FailureForm::Runaway, 1.0),
        // no form at all: only the physical limit
        only("f-none", Family::Gemma4, FailureForm::Runaway, 0.0),
    ]);
    let pack = pack();
    let mut agent = Agent::new(&sim.url(), "f-run", Api::Native, Toolset::Rich);
    agent.num_predict = Some(64);
    let (_t, wd, _m) = fresh(&pack, "WF-02");
    let tr = agent.run(&pack.get("WF-02").unwrap().render_prompt(), &wd);
    assert_eq!(tr.done_reasons[0], "length");
    assert_eq!(tr.text_end.as_ref().unwrap().len(), 256);
    // a call cut at the cap is dropped; what came before it survives
    let mut agent = Agent::new(&sim.url(), "f-none", Api::OpenAi, Toolset::Rich);
    agent.num_predict = Some(50);
    let (_t, wd, _m) = fresh(&pack, "WF-02");
    let tr = agent.run(&pack.get("WF-02").unwrap().render_prompt(), &wd);
    assert_eq!(tr.done_reasons[0], "length");
    let text = tr.text_end.unwrap();
    assert!(text.len() <= 200 && text.starts_with("Step 1/"), "{text}");
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
        only("f-wrong", Family::Gemma4, FailureForm::WrongTool, 1.0),
        only("f-wrong3", Family::Gemma4, FailureForm::WrongTool, 0.3),
    ]);
    let (m, _) = first_turn(&sim, "f-wrong", Api::Native, Toolset::Rich, false).unwrap();
    assert_ne!(
        m["tool_calls"][0]["function"]["name"].as_str().unwrap(),
        "write_file"
    );
    let (_t, wd, _m) = fresh(&pack, "WF-02");
    let tr = Agent::new(&sim.url(), "f-wrong3", Api::Native, Toolset::Rich)
        .run(&pack.get("WF-02").unwrap().render_prompt(), &wd);
    let asst: Vec<&Value> = tr
        .messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    let recovered = asst
        .windows(2)
        .filter(|w| {
            let a = w[0]["tool_calls"][0]["function"]["name"]
                .as_str()
                .unwrap_or("");
            let b = w[1]["tool_calls"][0]["function"]["name"]
                .as_str()
                .unwrap_or("");
            a != "write_file"
                && a != "finish"
                && !a.is_empty()
                && b == "write_file"
                && w[0]["content"] == w[1]["content"]
        })
        .count();
    assert!(recovered >= 1, "no recovery seen");
}

#[test]
fn content_errors_alone_and_a_precise_error_gets_the_file_rewritten() {
    let pack = pack();
    let sim = sim_with(vec![only(
        "f-content",
        Family::Gemma4,
        FailureForm::ContentError,
        1.0,
    )]);
    let (_t, wd, mat) = fresh(&pack, "WF-01");
    let tr = Agent::new(&sim.url(), "f-content", Api::Native, Toolset::Rich)
        .run(&pack.get("WF-01").unwrap().render_prompt(), &wd);
    let reference = pack.root.join("WF-01/reference/files/build_tables.py");
    let reference = std::fs::read_to_string(reference).unwrap();
    let writes: Vec<String> = tr
        .messages
        .iter()
        .filter(|m| m["tool_calls"][0]["function"]["arguments"]["path"] == "build_tables.py")
        .map(|m| {
            m["tool_calls"][0]["function"]["arguments"]["content"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(!writes.is_empty());
    assert_ne!(writes[0], reference, "the first write is degraded");
    assert!(
        writes.len() >= 2 && writes.last() == Some(&reference),
        "a traceback naming the script gets it rewritten: {} writes",
        writes.len()
    );
    let s = score(&pack, "WF-01", &mat, &wd);
    assert!(s < 1.0, "the other files stay degraded: {s}");
}

#[test]
fn lost_in_middle_alone_and_restating_the_task_helps() {
    let pack = pack();
    let mut p = Profile::only(
        "f-lost",
        Family::Gemma4,
        FailureForm::LostInMiddle,
        1.0,
        REACT_ORACLE,
    );
    p.reactions.lost_ctx_threshold = 1500;
    let sim = sim_with(vec![ModelSpec::from_profile(p)]);
    let prompt = pack.get("LH-03").unwrap().render_prompt();
    let (_a, wd, mat) = fresh(&pack, "LH-03");
    Agent::new(&sim.url(), "f-lost", Api::Native, Toolset::Rich).run(&prompt, &wd);
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

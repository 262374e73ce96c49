//! Agent and user simulator run under one setting: `--temperature` and `--think` reach both
//! participants' requests and are recorded in results.json; a model that refuses `think`
//! gets its requests without it from then on.

mod common;
use common::{is_user_request, spawn_server};
use serde_json::{json, Value};

fn run(url: &str, extra: &[&str]) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let mut argv = common::llm_run_args("mock", "plain", url, "update_task_1", tmp.path());
    argv.extend(extra.iter().map(|s| s.to_string()));
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let (r, out) = common::run_cli(&common::data_dir(), &argv);
    r.unwrap();
    assert!(out.contains("reward 1.0"), "{out}");
    serde_json::from_slice(&std::fs::read(tmp.path().join("results.json")).unwrap()).unwrap()
}

#[test]
fn agent_and_user_get_the_same_temperature_and_thinking_recorded() {
    if common::data().is_none() {
        return;
    }
    let (url, log) = spawn_server(50, |_p, b| (200, common::complete_task_1(b)));
    let v = run(&url, &["--temperature", "0.25"]);
    let log = log.lock().unwrap();
    let (users, agents): (Vec<_>, Vec<_>) = log.iter().partition(|(_, b)| is_user_request(b));
    assert!(!users.is_empty() && !agents.is_empty());
    for (_, b) in log.iter() {
        assert_eq!(b["think"], json!(false), "{b}");
        assert_eq!(b["options"]["temperature"], json!(0.25), "{b}");
    }
    for side in ["agent_info", "user_info"] {
        assert_eq!(
            v["info"][side]["llm_args"],
            json!({"temperature": 0.25, "think": false}),
            "{side}"
        );
    }
    drop(log);
    let (url, log) = spawn_server(50, |_p, b| (200, common::complete_task_1(b)));
    let v = run(&url, &["--think"]);
    assert!(log
        .lock()
        .unwrap()
        .iter()
        .all(|(_, b)| b["think"] == json!(true)));
    assert_eq!(v["info"]["user_info"]["llm_args"]["think"], json!(true));
}

#[test]
fn a_model_refusing_think_is_asked_again_without_it() {
    if common::data().is_none() {
        return;
    }
    let (url, log) = spawn_server(50, |_p, b| {
        if b.get("think").is_some() {
            (400, json!({"error": "\"m\" does not support thinking"}))
        } else {
            (200, common::complete_task_1(b))
        }
    });
    run(&url, &[]);
    let log = log.lock().unwrap();
    // each participant is refused once, then never sends `think` again
    let refused = log.iter().filter(|(_, b)| b.get("think").is_some()).count();
    assert_eq!(refused, 2, "{log:?}");
}

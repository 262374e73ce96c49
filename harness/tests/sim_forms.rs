//! Each failure form of the simulator alone (a single-form model), against our harness: the
//! task is completed and the matching mechanism fires. Whether switching the mechanism off
//! lowers the score is deliberately not asserted: that would make the simulator's failure
//! forms answer to our mechanisms instead of to what real models do.

mod common;

use lrab_harness::backend::{OllamaBackend, OllamaConfig};
use lrab_harness::{Ablations, Agent, RunStatus};
use lrab_sim::REACT_ORACLE;
use lrab_sim::{serve, FailureForm, Family, ModelSpec, Profile, SimConfig};
use std::collections::BTreeMap;

fn run(url: &str, model: &str, id: &str, ablate: &str) -> (RunStatus, f64, BTreeMap<String, u64>) {
    let pack = lrab_tasks::Pack::load(lrab_tasks::Pack::builtin_dir()).unwrap();
    let task = pack.get(id).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let wd = tmp.path().join("work");
    let m = lrab_tasks::materialize(&pack, task, &wd, None).unwrap();
    let mut c = common::config(&wd, &task.render_prompt());
    // As `lrab-harness run` does: the window the agent budgets for is the one it asks for.
    // Without it the sim, like Ollama, serves its 4096-token default and drops the task
    // prompt once the conversation outgrows it.
    let mut oc = OllamaConfig::new(url, model);
    oc.num_ctx = Some(c.num_ctx);
    let backend = OllamaBackend::connect(oc).unwrap();
    c.max_turns = 60;
    c.ablations = Ablations::parse(ablate).unwrap();
    let mut agent = Agent::new(c, backend).unwrap();
    agent.sleeper = Box::new(|_| {});
    let out = agent.run();
    let score = lrab_scorer::score(task, &m.checks, &wd).unwrap().total;
    (out.status, score, out.report.mechanism_counts)
}

/// (form, mechanism that answers it).
const FORMS: [(FailureForm, &str); 4] = [
    (FailureForm::FalseDone, "finish_gate"),
    (FailureForm::RepeatCall, "anti_loop"),
    (FailureForm::EmptyTurn, "anti_loop"),
    (FailureForm::ThinkOnly, "anti_loop"),
];

#[test]
fn each_failure_form_alone_is_recovered_and_its_mechanism_fires() {
    let models: Vec<ModelSpec> = FORMS
        .iter()
        .map(|(f, _)| {
            ModelSpec::from_profile(Profile::only(
                &format!("only-{}", f.name()),
                Family::Gemma4,
                *f,
                0.4,
                REACT_ORACLE,
            ))
        })
        .collect();
    let sim = serve(
        "127.0.0.1:0",
        SimConfig {
            extra_models: models,
            ..Default::default()
        },
    )
    .unwrap();
    let mut report = Vec::new();
    let mut bad = Vec::new();
    for (f, mech) in FORMS {
        let model = format!("only-{}", f.name());
        let (status, score, counts) = run(&sim.url(), &model, "WF-02", "");
        let fired = counts.get(mech).copied().unwrap_or(0);
        let line = format!("{}: {score} ({status:?}), {mech} fired {fired}x", f.name());
        if score < 1.0 || fired == 0 {
            bad.push(line.clone());
        }
        report.push(line);
    }
    eprintln!("{report:#?}");
    assert!(bad.is_empty(), "{bad:#?}");
}

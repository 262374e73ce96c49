//! Each failure form of the simulator alone, against our harness with and without the matching
//! mechanism: with it the task is completed and the mechanism fires; for the forms where a
//! mechanism is the only way out, the same seeded model does worse without it.

mod common;

use lrab_harness::backend::{OllamaBackend, OllamaConfig};
use lrab_harness::{Ablations, Agent, RunStatus};
use lrab_sim::profile::REACT_ORACLE;
use lrab_sim::{serve, FailureForm, ModelSpec, Profile, SimConfig};
use std::collections::BTreeMap;

fn run(url: &str, model: &str, id: &str, ablate: &str) -> (RunStatus, f64, BTreeMap<String, u64>) {
    let pack = lrab_tasks::Pack::load(lrab_tasks::Pack::builtin_dir()).unwrap();
    let task = pack.get(id).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let wd = tmp.path().join("work");
    let m = lrab_tasks::materialize(&pack, task, &wd, None).unwrap();
    let backend = OllamaBackend::connect(OllamaConfig::new(url, model)).unwrap();
    let mut c = common::config(&wd, &task.render_prompt());
    c.max_turns = 60;
    c.ablations = Ablations::parse(ablate).unwrap();
    let mut agent = Agent::new(c, backend).unwrap();
    agent.sleeper = Box::new(|_| {});
    let out = agent.run();
    let score = lrab_scorer::score(task, &m.checks, &wd).unwrap().total;
    (out.status, score, out.report.mechanism_counts)
}

/// (form, mechanism that answers it, whether switching it off must lower the score on this
/// simulator). Loops and empty turns are also survived without the mechanism by a model with
/// the oracle's reactions (they only cost turns), so for those the test checks that the
/// mechanism fired and the task was completed.
const FORMS: [(FailureForm, &str, bool); 6] = [
    (FailureForm::TextCallJson, "format_rescue", true),
    (FailureForm::TextCallBare, "format_rescue", true),
    (FailureForm::FalseDone, "finish_gate", true),
    (FailureForm::RepeatCall, "anti_loop", false),
    (FailureForm::EmptyTurn, "anti_loop", false),
    (FailureForm::ThinkOnly, "anti_loop", false),
];

#[test]
fn each_failure_form_is_recovered_and_the_ablation_shows_the_mechanism_matters() {
    let models: Vec<ModelSpec> = FORMS
        .iter()
        .map(|(f, _, _)| {
            ModelSpec::new(
                &format!("only-{}", f.name()),
                2.0,
                false,
                Profile::only(*f, 0.4, REACT_ORACLE),
            )
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
    for (f, mech, must_hurt) in FORMS {
        let model = format!("only-{}", f.name());
        let (s_on, score_on, counts) = run(&sim.url(), &model, "WF-02", "");
        let fired = counts.get(mech).copied().unwrap_or(0);
        let (s_off, score_off, _) = run(&sim.url(), &model, "WF-02", mech);
        let line = format!(
            "{}: with {mech} {score_on} ({s_on:?}, fired {fired}x), without {score_off} ({s_off:?})",
            f.name()
        );
        if score_on < 1.0 || fired == 0 || (must_hurt && score_off >= score_on) {
            bad.push(line.clone());
        }
        report.push(line);
    }
    eprintln!("{report:#?}");
    assert!(bad.is_empty(), "{bad:#?}");
}

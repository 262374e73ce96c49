//! End to end against the simulated backend (`lrab-sim`): real HTTP to a faithful Ollama API,
//! the built-in task pack materialized into a fresh workdir, our harness driving the run, the
//! scorer scoring the workdir.

mod common;

use lrab_harness::backend::{OllamaBackend, OllamaConfig};
use lrab_harness::{Agent, RunStatus};
use lrab_sim::{serve, SimConfig};

fn pack() -> lrab_tasks::Pack {
    lrab_tasks::Pack::load(lrab_tasks::Pack::builtin_dir()).expect("built-in pack loads")
}

fn run_task(url: &str, model: &str, pack: &lrab_tasks::Pack, id: &str) -> (RunStatus, f64, tempfile::TempDir) {
    let task = pack.get(id).expect("task exists");
    let tmp = tempfile::tempdir().unwrap();
    let wd = tmp.path().join("work");
    let m = lrab_tasks::materialize(pack, task, &wd, None).expect("materialize");
    let prompt = task.render_prompt();
    let mut cfg = OllamaConfig::new(url, model);
    cfg.num_ctx = Some(32768);
    let backend = OllamaBackend::connect(cfg).expect("sim answers /api/show");
    let mut c = common::config(&wd, &prompt);
    c.max_turns = 120;
    let mut agent = Agent::new(c, backend).unwrap();
    agent.sleeper = Box::new(|_| {});
    let out = agent.run();
    let score = lrab_scorer::score(task, &m.checks, &wd).expect("score").total;
    (out.status, score, tmp)
}

#[test]
fn oracle_model_through_our_harness_scores_one_on_every_task() {
    let sim = serve("127.0.0.1:0", SimConfig::default()).expect("sim starts");
    let pack = pack();
    assert_eq!(pack.tasks.len(), 18);
    let mut bad = Vec::new();
    for t in &pack.tasks {
        let id = &t.spec.id;
        let t0 = std::time::Instant::now();
        let (status, score, _tmp) = run_task(&sim.url(), "sim-oracle", &pack, id);
        eprintln!("{id}: {status:?} {score} in {:?}", t0.elapsed());
        if status != RunStatus::Finished || score < 1.0 {
            bad.push(format!("{id}: {status:?} score {score}"));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

//! sim-oracle carries out every LRAB task through a generic agent and scores 1.0.

mod common;
use common::*;
use lrab_sim::SimConfig;

#[test]
fn oracle_scores_one_on_every_task_native() {
    let sim = start(SimConfig::default());
    assert!(sim.notes.is_empty(), "pack problems: {:?}", sim.notes);
    let pack = pack();
    assert_eq!(pack.tasks.len(), 18);
    for t in &pack.tasks {
        let id = &t.spec.id;
        let (_tmp, wd, m) = fresh(&pack, id);
        let agent = Agent::new(&sim.url(), "sim-oracle", Api::Native, Toolset::Rich);
        let tr = agent.run(&t.render_prompt(), &wd);
        assert!(
            tr.finished_by_tool,
            "{id}: did not finish: {:?}",
            tr.text_end
        );
        let s = score(&pack, id, &m, &wd);
        assert_eq!(s, 1.0, "{id} scored {s}");
    }
}

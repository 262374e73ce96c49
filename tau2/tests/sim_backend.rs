//! End to end on the simulated backend (`lrab-sim`): the sim plays both the agent and the
//! user (its τ²-style user mode), for the `plain` and the `harness` arms, through the CLI.
//! Rewards depend on the sim's canned behaviour; what must hold is that the run completes,
//! is graded, and writes well-formed results.

mod common;
use serde_json::Value;

#[test]
fn plain_and_harness_arms_run_end_to_end_on_the_sim() {
    if common::data().is_none() {
        return;
    }
    let sim = lrab_sim::serve("127.0.0.1:0", lrab_sim::SimConfig::default()).expect("sim starts");
    let url = sim.url();
    let data = common::data_dir();
    for arm in ["plain", "harness"] {
        let tmp = tempfile::tempdir().unwrap();
        let mut argv = common::models_run_args(
            "retail",
            arm,
            ("sim-4b", "sim-4b"),
            &url,
            "33,34",
            tmp.path(),
        );
        argv.extend(["--max-steps", "40"].map(String::from));
        let (r, out) = common::run_cli_owned(&data, &argv);
        r.unwrap_or_else(|e| panic!("{arm}: {e:#}"));
        eprintln!("[{arm}]\n{out}");
        assert!(out.contains("graded 2/2 simulations"), "{arm}: {out}");
        let v: Value =
            serde_json::from_slice(&std::fs::read(tmp.path().join("results.json")).unwrap())
                .unwrap();
        assert_eq!(v["info"]["simulated"], true, "{arm}: labelled simulated");
        assert!(out.contains("SIMULATED BACKEND"), "{arm}: {out}");
        let sims = v["simulations"].as_array().unwrap();
        assert_eq!(sims.len(), 2);
        for s in sims {
            let msgs = s["messages"].as_array().unwrap();
            assert!(msgs.len() >= 3, "{arm}: a real exchange happened");
            assert_eq!(msgs[1]["role"], "user");
            assert!(msgs[1]["content"].as_str().unwrap().len() > 3);
            let t = s["termination_reason"].as_str().unwrap();
            assert!(
                ["user_stop", "max_steps", "too_many_errors"].contains(&t),
                "{arm}: {t}"
            );
        }
        let csv = std::fs::read_to_string(tmp.path().join("tau2.csv")).unwrap();
        assert_eq!(csv.lines().count(), 3, "{csv}");
        assert!(
            csv.lines().skip(1).all(|l| l.ends_with(",true")),
            "{arm}: every tau2.csv row labelled simulated: {csv}"
        );
    }
    sim.shutdown();
}

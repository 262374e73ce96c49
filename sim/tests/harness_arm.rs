//! Our harness arm (the `lrab-harness` binary, built by its own crate) against the simulated
//! backend: sim-oracle scores 1.0 on every task, and the harness's mechanisms recover from the
//! failure forms they target. Ignored by default because it needs that binary (build it with
//! `cargo build -p lrab-harness`, or point `LRAB_HARNESS_BIN` at it) and runs for minutes.

mod common;
use common::*;

use std::path::PathBuf;
use std::process::Command;

use lrab_sim::REACT_ORACLE;
use lrab_sim::{FailureForm, Family, ModelSpec, Profile, SimConfig};

fn harness_bin() -> PathBuf {
    let p = std::env::var_os("LRAB_HARNESS_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../target/debug/lrab-harness"
            ))
        });
    assert!(
        p.exists(),
        "lrab-harness binary not found at {} (cargo build -p lrab-harness)",
        p.display()
    );
    p
}

/// Runs the harness on a fresh workdir of `id` and returns (score, harness output).
fn run_harness(url: &str, model: &str, id: &str) -> (f64, String) {
    let pack = pack();
    let (_tmp, wd, m) = fresh(&pack, id);
    let out = Command::new(harness_bin())
        .args(["run", "--model", model, "--prompt-file"])
        .arg(wd.join("task_input.txt"))
        .arg("--workdir")
        .arg(&wd)
        .args([
            "--backend-url",
            url,
            "--num-ctx",
            "32768",
            "--max-turns",
            "80",
        ])
        .output()
        .expect("run lrab-harness");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (score(&pack, id, &m, &wd), text)
}

#[test]
#[ignore = "needs the lrab-harness binary; runs all 18 tasks"]
fn harness_with_oracle_scores_one_everywhere() {
    let sim = start(SimConfig::default());
    for t in &pack().tasks {
        let (s, out) = run_harness(&sim.url(), "sim-oracle", &t.spec.id);
        assert_eq!(s, 1.0, "{}: {s}\n{out}", t.spec.id);
    }
}

/// Single-form models, each at a rate the harness's matching mechanism must absorb; the
/// harness completes the task. (Whether switching the mechanism off lowers the score is not
/// asserted: that depends on the simulator, not on the mechanism.)
#[test]
#[ignore = "needs the lrab-harness binary"]
fn harness_recovers_from_each_failure_form_it_targets() {
    let m = |name: &str, f: FailureForm, rate: f64| {
        ModelSpec::from_profile(Profile::only(name, Family::Gemma4, f, rate, REACT_ORACLE))
    };
    let sim = start(SimConfig {
        extra_models: vec![
            m("h-rep", FailureForm::RepeatCall, 0.3),
            m("h-done", FailureForm::FalseDone, 0.3),
            m("h-empty", FailureForm::EmptyTurn, 0.3),
            m("h-abandon", FailureForm::Abandon, 0.3),
        ],
        ..Default::default()
    });
    let mut report = Vec::new();
    for (model, task) in [
        ("h-rep", "WF-02"),
        ("h-done", "WF-02"),
        ("h-empty", "WF-02"),
        ("h-abandon", "WF-02"),
    ] {
        let (s, out) = run_harness(&sim.url(), model, task);
        report.push(format!("{model} {task} {s}"));
        if s < 1.0 {
            if let Some(dir) = std::env::var_os("LRAB_SIM_TEST_LOG") {
                let _ =
                    std::fs::write(PathBuf::from(dir).join(format!("{model}-{task}.txt")), &out);
            }
            eprintln!(
                "--- {model} on {task} scored {s}\n{}",
                out.lines().rev().take(25).collect::<Vec<_>>().join("\n")
            );
        }
    }
    eprintln!("{}", report.join("\n"));
    assert!(report.iter().all(|r| r.ends_with(" 1")), "{report:?}");
}

//! Opt-in: a real small model served on this machine (`scripts/real-model.sh`, docs/real-model.md).
//! Slow (it may build llama.cpp from source and runs several cells on a CPU), so it runs only
//! with `LRAB_REAL_MODEL=1` and `--ignored`.

use std::process::Command;

#[test]
#[ignore = "opt-in: LRAB_REAL_MODEL=1 (builds llama-cpp-python, serves SmolLM2-135M, runs the arms)"]
fn arms_reach_a_real_model_through_the_translation() {
    if std::env::var("LRAB_REAL_MODEL").as_deref() != Ok("1") {
        println!("skipped: LRAB_REAL_MODEL is not 1");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/real-model.sh");
    let status = Command::new("bash")
        .arg(script)
        .status()
        .expect("run scripts/real-model.sh");
    assert!(status.success(), "scripts/real-model.sh failed: {status}");
}

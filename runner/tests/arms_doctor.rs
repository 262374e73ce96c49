//! `lrab arms list|check` on the shipped arm files, `lrab doctor` against the simulated
//! backend, and (when the harness binary is built) a real harness cell end to end.

mod common;

use common::{harness_on_sim, lrab, shipped_arms, text};

#[test]
fn shipped_arm_files_load_and_goose_is_reported_missing() {
    let o = lrab()
        .args(["arms", "list", "--arms-dir"])
        .arg(shipped_arms())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    for a in [
        "harness",
        "opencode",
        "agent-mini",
        "goose",
        "harness-no-finish-gate",
    ] {
        assert!(
            t.lines().any(|l| l.starts_with(&format!("{a} "))),
            "{a} missing from list:\n{t}"
        );
    }
    // goose comes from no package registry: without GOOSE_BIN it must be reported missing.
    let o = lrab()
        .args(["arms", "check", "goose", "--arms-dir"])
        .arg(shipped_arms())
        .env_remove("GOOSE_BIN")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("missing  goose"), "{}", text(&o));
    // An arm binary given through its variable is found and its version read.
    let d = tempfile::tempdir().unwrap();
    let fake = d.path().join("goose");
    std::fs::write(&fake, "#!/bin/sh\necho 'goose 1.48.0'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = lrab()
        .args(["arms", "check", "goose", "--arms-dir"])
        .arg(shipped_arms())
        .env("GOOSE_BIN", &fake)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("goose 1.48.0"), "{}", text(&o));
}

#[test]
fn doctor_reports_backend_models_arms_and_python() {
    let sim = lrab_sim::serve("127.0.0.1:0", lrab_sim::SimConfig::default()).unwrap();
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("x.toml"),
        "name = \"x\"\nprogram = \"/bin/sh\"\nargs = [\"{prompt_file}\"]\napi = \"ollama\"\nversion_args = [\"-c\", \"echo x 1.0\"]\n",
    )
    .unwrap();
    let o = lrab()
        .args([
            "doctor",
            "--backend-url",
            &sim.url(),
            "--models",
            "sim-2b,not-there",
            "--arms-dir",
        ])
        .arg(d.path())
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("ok    backend"), "{t}");
    assert!(t.contains("ok    model sim-2b"), "{t}");
    assert!(
        t.contains("warn  model not-there") && t.contains("ollama pull not-there"),
        "{t}"
    );
    assert!(t.contains("ok    arm x") && t.contains("x 1.0"), "{t}");
    assert!(t.contains("python3") && t.contains("pytest"), "{t}");
}

/// Our harness against the simulated backend, end to end, found as a sibling of `lrab`
/// (`cargo test --workspace` builds it; alone: `cargo build -p lrab-harness` first).
#[test]
fn harness_cell_on_sim_end_to_end() {
    let d = tempfile::tempdir().unwrap();
    let run = harness_on_sim("sim-oracle", "WF-01", "h", d.path());
    let csv = std::fs::read_to_string(run.join("cells.csv")).unwrap();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[7], "1.000", "{csv}");
    assert!(
        row[15].parse::<u64>().unwrap() > 0,
        "tokens from the harness event log: {csv}"
    );
}

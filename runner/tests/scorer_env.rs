//! The scorer's own machine, honestly: `lrab run` refuses to start when a planned task's checks
//! need a program or Python module that is missing (naming it, the task and the fix), and a
//! module that disappears between that preflight and scoring makes the attempt a
//! `scorer_error` — scored twice, recorded without a score, never a 0 for the arm.
//!
//! The interpreter is real: a `python` on a private PATH that runs this machine's Python
//! with `-S` (no site-packages, so no pytest) — always, or only once the arm has left a marker
//! file in its workdir (where the check runs).

mod common;

use common::{lrab, quick, text};
use std::path::{Path, PathBuf};

/// The Python this test runs under (the one that has pytest, when any has).
fn real_python() -> String {
    let o = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is needed by the scorer tests");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A bin folder whose `python` hides site-packages when `condition` (a shell test) holds.
fn python_dir(root: &Path, condition: &str) -> PathBuf {
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let py = real_python();
    let script =
        format!("#!/bin/sh\nif {condition}; then exec '{py}' -S \"$@\"; fi\nexec '{py}' \"$@\"\n");
    let p = bin.join("python");
    std::fs::write(&p, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn arm(dir: &Path, name: &str, script: &str) {
    std::fs::create_dir_all(dir).unwrap();
    common::sh_arm(dir, name, script);
}

fn run(root: &Path, bin: &Path, tasks: &str) -> std::process::Output {
    quick(
        "run",
        &root.join("arms"),
        &root.join("results"),
        (300, 3000, 200),
    )
    .args([
        "--arms", "fixer", "--models", "sim-2b", "--tasks", tasks, "--run-id", "r",
    ])
    .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
    .output()
    .unwrap()
}

/// Writes the two WF-04 milestone files and, with `hide`, the marker that makes `python`
/// lose pytest from then on.
fn fixer(hide: bool) -> String {
    format!(
        "printf '# Bug\\n' > bug_report.md; printf '# Fix\\n' > fix_summary.md;{} exit 0\n",
        if hide { " touch .no-site;" } else { "" }
    )
}

#[test]
fn run_refuses_to_start_when_pytest_is_missing() {
    let d = tempfile::tempdir().unwrap();
    arm(&d.path().join("arms"), "fixer", &fixer(false));
    let bin = python_dir(d.path(), "true");
    let o = run(d.path(), &bin, "WF-01,WF-04");
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("`pytest`"), "names the module: {t}");
    assert!(t.contains("WF-04"), "names the task: {t}");
    assert!(t.contains("pip install pytest"), "names the fix: {t}");
    assert!(
        !t.contains("WF-01;") && !t.contains("WF-01,"),
        "WF-01 needs no pytest: {t}"
    );
    assert!(
        !d.path().join("results/r/cells.csv").exists(),
        "nothing ran"
    );
    // `lrab doctor` says the same, from the same derivation.
    let o = lrab()
        .args([
            "doctor",
            "--backend-url",
            "http://127.0.0.1:9",
            "--models",
            "m",
        ])
        .arg("--arms-dir")
        .arg(d.path().join("arms"))
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .unwrap();
    let t = text(&o);
    let line = t
        .lines()
        .find(|l| l.contains("scorer needs Python module `pytest`"))
        .unwrap_or_else(|| panic!("{t}"));
    assert!(line.contains("missing") && line.contains("WF-04"), "{line}");
}

#[test]
fn pytest_vanishing_before_scoring_is_a_scorer_error_not_a_zero() {
    let d = tempfile::tempdir().unwrap();
    arm(&d.path().join("arms"), "fixer", &fixer(true));
    // pytest is there at the preflight (run from elsewhere) and gone in the workdir once the
    // arm has left its marker.
    let bin = python_dir(d.path(), "[ -e .no-site ]");
    let probe = std::process::Command::new(bin.join("python"))
        .args(["-c", "import pytest"])
        .output()
        .unwrap();
    if !probe.status.success() {
        eprintln!("skipped: this machine's python3 has no pytest to lose");
        return;
    }
    let o = run(d.path(), &bin, "WF-04");
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let run_dir = d.path().join("results/r");
    let csv = std::fs::read_to_string(run_dir.join("cells.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 1, "the arm is not run again: {csv}");
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let r = &rows[0];
    assert_eq!(r[col("failure_mode")], "scorer_error", "{csv}");
    assert_eq!(r[col("milestone_score")], "", "no score: {csv}");
    assert_eq!(r[col("final_score")], "", "no score: {csv}");
    let sj: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run_dir.join(r[col("attempt_dir")]).join("score.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(sj["failure_mode"], "scorer_error");
    assert!(sj.get("total").is_none(), "{sj}");
    let why = sj["score_error"].as_str().unwrap();
    assert!(
        why.contains("pytest") && why.contains("tried twice"),
        "{why}"
    );
    // The scorer waited before its second try.
    let att: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(run_dir.join("attempts.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let secs = att["scoring_seconds"].as_f64().unwrap();
    assert!(
        secs >= lrab_scorer::ENVIRONMENT_RETRY_PAUSE.as_secs_f64(),
        "retried after the pause: {secs}"
    );
    assert_eq!(att["retry"], false);
    // The run's summary does not average it in as a 0.
    assert!(t.contains("1 scorer error"), "{t}");
    assert!(!t.contains("0.000 (n=1"), "{t}");
}

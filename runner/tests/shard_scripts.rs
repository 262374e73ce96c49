//! `lrab-shard.sh` and `lrab-merge.sh` run by hand, without a cluster (the default suite): for
//! every index of a tiny matrix the shard script gives exactly `lrab plan`'s slice, resumes its
//! folder, refuses bad input and another slice's folder, and, stopped mid-cell, discards the
//! attempt in flight and redoes it; the merge script merges the shards once and names a missing
//! one. The static checks of the same scripts (and of `submit.sh` and the Kubernetes manifests)
//! are `tests/slurm_scripts.rs`; the real cluster is `tests/slurm.rs` (opt-in).

mod common;
#[path = "common/slurm_setup.rs"]
mod slurm_setup;

use common::{lrab, text};
use slurm_setup::{arms, bash, matrix, run_flags, script};

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `lrab-shard.sh SHARDS RUN OUT FLAGS…` for the shard with 0-based index `idx`
/// (`LRAB_SHARD_INDEX`).
fn shard(n: &str, run: &str, out: &Path, flags: &[String], idx: &str) -> Command {
    let mut c = bash(&script("lrab-shard.sh"));
    c.args([n, run])
        .arg(out)
        .args(flags)
        .env("LRAB_SHARD_INDEX", idx);
    c
}

/// `lrab-merge.sh SHARDS RUN OUT`.
fn merge(n: &str, run: &str, out: &Path) -> Command {
    let mut c = bash(&script("lrab-merge.sh"));
    c.args([n, run]).arg(out);
    c
}

/// (arm, model, task, repeat, attempt) of every row, and the attempt folders, of a run folder.
fn rows(run: &Path) -> Vec<Vec<String>> {
    let t = std::fs::read_to_string(run.join("cells.csv")).unwrap_or_default();
    t.lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn keys(run: &Path) -> Vec<String> {
    let mut k: Vec<String> = rows(run)
        .iter()
        .map(|r| format!("{},{},{},{}", r[1], r[2], r[3], r[5]))
        .collect();
    k.sort();
    k
}

/// The phases share one results folder: the slices the first writes are what the others resume,
/// refuse and merge.
#[test]
fn shard_script_slices_the_plan_resumes_and_merge_script_merges() {
    let d = tempfile::tempdir().unwrap();
    let arms = arms(d.path());
    let out = d.path().join("results");
    let m = run_flags(&arms, "good");
    let plan = plan_of(&arms);
    each_index_runs_its_slice_of_the_plan(&out, &m, &plan);
    a_finished_shard_resumes_without_redoing_anything(&out, &m);
    bad_script_input_is_named_and_starts_nothing(&out, &m);
    let other = d.path().join("other");
    a_folder_of_another_slice_is_not_resumed(&out, &other, &m);
    merge_script_merges_once_and_names_a_missing_shard(&out, &other);
}

/// The plan every shard must follow: 6 cells, cell i goes to shard i mod 4 + 1.
fn plan_of(arms: &Path) -> Vec<serde_json::Value> {
    let o = lrab()
        .arg("plan")
        .args(matrix(arms, "good"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let plan: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(plan.len(), 6);
    plan
}

/// Each index from another source: the shard script is the same on Slurm, Kubernetes, or by
/// hand.
fn each_index_runs_its_slice_of_the_plan(out: &Path, m: &[String], plan: &[serde_json::Value]) {
    let sources = [
        ("LRAB_SHARD_INDEX", "0"),
        ("SLURM_ARRAY_TASK_ID", "1"),
        ("JOB_COMPLETION_INDEX", "2"),
        ("SLURM_ARRAY_TASK_ID", "3"),
    ];
    for (var, idx) in sources {
        let o = bash(&script("lrab-shard.sh"))
            .args(["4", "tiny"])
            .arg(out)
            .args(m)
            .env(var, idx)
            .output()
            .unwrap();
        assert!(o.status.success(), "{var}={idx}: {}", text(&o));
        let k: usize = idx.parse::<usize>().unwrap() + 1;
        let dir = out.join(format!("tiny-s{k}of4"));
        let mut want: Vec<String> = plan
            .iter()
            .filter(|c| c["index"].as_u64().unwrap() as usize % 4 == k - 1)
            .map(|c| {
                format!(
                    "{},{},{},{}",
                    c["arm"].as_str().unwrap(),
                    c["model"].as_str().unwrap(),
                    c["task"].as_str().unwrap(),
                    c["repeat"]
                )
            })
            .collect();
        want.sort();
        assert_eq!(keys(&dir), want, "shard {k}");
        assert!(std::fs::read_to_string(dir.join("manifest.json"))
            .unwrap()
            .contains(&format!("\"shard\": \"{k}/4\"")));
    }
}

/// A second run of a finished shard resumes it: nothing is redone or duplicated.
fn a_finished_shard_resumes_without_redoing_anything(out: &Path, m: &[String]) {
    let before = std::fs::read_to_string(out.join("tiny-s1of4/cells.csv")).unwrap();
    let o = shard("4", "tiny", out, m, "0").output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("resuming"), "{}", text(&o));
    assert!(text(&o).contains("0 attempts run"), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(out.join("tiny-s1of4/cells.csv")).unwrap(),
        before
    );
}

/// Bad input to the script: named, exit 2, nothing started.
fn bad_script_input_is_named_and_starts_nothing(out: &Path, m: &[String]) {
    // (SHARDS, RUN, LRAB_SHARD_INDEX or none, message)
    let bad = [
        ("4", "tiny", Some("4"), "out of range for 4 shards"),
        ("4", "tiny", None, "no shard index"),
        ("x", "tiny", Some("0"), "SHARDS 'x'"),
        ("4", "a/b", Some("0"), "RUN 'a/b'"),
        ("4", "tiny", Some("-1"), "not a whole number"),
    ];
    for (n, run, idx, msg) in bad {
        let mut c = bash(&script("lrab-shard.sh"));
        c.args([n, run]).arg(out).args(m);
        if let Some(i) = idx {
            c.env("LRAB_SHARD_INDEX", i);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{n} {run} {idx:?}: {}", text(&o));
        assert!(text(&o).contains(msg), "{msg}: {}", text(&o));
    }
}

/// A folder that is another slice (shard 2's, copied under `other` as shard 1's) is not resumed
/// as this one.
fn a_folder_of_another_slice_is_not_resumed(out: &Path, other: &Path, m: &[String]) {
    std::fs::create_dir_all(other).unwrap();
    lrab_tasks::copy_tree(&out.join("tiny-s2of4"), &other.join("tiny-s1of4")).unwrap();
    let o = shard("4", "tiny", other, m, "0").output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is not shard 1/4"), "{}", text(&o));
}

/// The merge script: all shards into OUT/tiny, through a staging folder, once; `other` holds a
/// single slice, so merging it lacks a shard.
fn merge_script_merges_once_and_names_a_missing_shard(out: &Path, other: &Path) {
    let o = merge("4", "tiny", out).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("0 missing"), "{}", text(&o));
    let merged = out.join("tiny");
    assert_eq!(keys(&merged).len(), 6);
    let mut dedup = keys(&merged);
    dedup.dedup();
    assert_eq!(dedup.len(), 6, "a cell twice");
    assert!(rows(&merged).iter().all(|r| r[0] == "tiny"));
    assert!(!out.join(".merging-tiny").exists());
    // Run again (a requeued merge job): the complete merge is left alone.
    let o = merge("4", "tiny", out).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("exists already"), "{}", text(&o));
    // A missing shard is named, and nothing is written.
    let o = merge("5", "tiny", other).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("shard 1/5 has no run folder"),
        "{}",
        text(&o)
    );
    assert!(!other.join("tiny").exists() && !other.join(".merging-tiny").exists());
}

/// Whether `pid` still runs (a zombie has stopped; only its parent has not reaped it yet).
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid, 0) == 0 };
    exists
        && !std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z'))
}

/// Runs a function of `scripts/slurm/runfolder.sh` (the check scripts' run-folder checks) on
/// `dir`: whether it succeeded, and what it printed.
fn run_folder(dir: &Path, function: &str) -> (bool, String) {
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(". \"$1\" && {function} \"$2\""))
        .arg("runfolder")
        .arg(script("runfolder.sh"))
        .arg(dir)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn shard_script_stopped_mid_cell_sets_the_attempt_aside_and_resume_redoes_it() {
    let d = tempfile::tempdir().unwrap();
    let arms = arms(d.path());
    let out = d.path().join("results");
    let mut m = run_flags(&arms, "slow");
    // the slow arm leaves its marker (a host pid) outside its workdir: unconfined only
    m.push("--unconfined-arms".into());
    let mark = d.path().join("slow.pid");
    // Shard 1/2 has cells 0, 2, 4; its first launch hangs until it is stopped.
    let child = shard("2", "cut", &out, &m, "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !mark.exists() || std::fs::read_to_string(&mark).unwrap().trim().is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the arm never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let arm_pid: i32 = std::fs::read_to_string(&mark)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let dir = out.join("cut-s1of2");
    let attempt = dir.join("cells/slow/sim-2b/WF-01/r0/a0");
    assert!(attempt.is_dir());
    // SAFETY: SIGTERM to the script we spawned (what scancel, preemption or a pod deletion send).
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(143), "{}", text(&o));
    assert!(text(&o).contains("stopped by SIGTERM"), "{}", text(&o));
    let t0 = Instant::now();
    while alive(arm_pid) {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "arm {arm_pid} outlived the stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(rows(&dir).is_empty(), "the cell in flight was recorded");
    // the check scripts' helper sees exactly the attempt in flight
    assert_eq!(
        run_folder(&dir, "rf_unrecorded").1,
        "cells/slow/sim-2b/WF-01/r0/a0\n"
    );
    std::fs::write(attempt.join("LEFT-BY-THE-STOPPED-RUN"), "").unwrap();
    // Started again (a requeued task): resumes, sets the attempt aside (named), redoes it in a
    // fresh folder.
    let o = shard("2", "cut", &out, &m, "0").output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("resuming"), "{}", text(&o));
    let aside = "interrupted/slow/sim-2b/WF-01/r0/a0-1";
    assert!(
        text(&o).contains(&format!(
            "resume: set aside cells/slow/sim-2b/WF-01/r0/a0 -> {aside}: no cells.csv row"
        )),
        "{}",
        text(&o)
    );
    assert!(dir.join(aside).join("LEFT-BY-THE-STOPPED-RUN").is_file());
    assert!(!attempt.join("LEFT-BY-THE-STOPPED-RUN").exists());
    assert!(attempt.join("score.json").is_file());
    assert_eq!(run_folder(&dir, "rf_unrecorded"), (true, String::new()));
    let (ok, problems) = run_folder(&dir, "rf_verify");
    assert!(ok, "{problems}");
    let k = keys(&dir);
    assert_eq!(
        k,
        vec![
            "slow,sim-2b,WF-01,0".to_string(),
            "slow,sim-2b,WF-02,0".to_string(),
            "slow,sim-2b,WF-03,0".to_string(),
        ]
    );
    assert!(rows(&dir).iter().all(|r| r[6] == "0"), "attempt numbers");
}

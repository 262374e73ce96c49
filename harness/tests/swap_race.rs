//! A check-then-use race through the real agent loop: while the scripted model issues
//! write_file / append_file / edit_file / read_file on `notes.txt` again and again, a thread
//! flips that name between a regular file and a symlink to a canary outside the workdir (and
//! one to a file in the fake HOME). The file tools resolve beneath the workdir's fd without
//! following symlinks, so no canary changes and no canary byte reaches the model.

mod common;

use common::*;
use lrab_harness::backend::ScriptedModel;
use lrab_harness::{Ablations, Agent, Reply, Role};
use serde_json::json;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

const TASK: &str = "Keep notes.\nRequired steps (plan at least 2):\n1. Edit notes.txt.\n2. Finish.";
const OUTSIDE_SECRET: &str = "OUTSIDE-CANARY-5150 do not leak\n";
const HOME_SECRET: &str = "HOME-CANARY-8086 export TOKEN=x\n";

/// Flip `work/notes.txt` between a regular file and symlinks to the canaries (each swap an
/// atomic rename, so the name always exists) until `stop`; every eighth time the regular file
/// stays for 2 ms.
fn swapper(work: &Path, targets: Vec<std::path::PathBuf>, stop: Arc<AtomicBool>) -> usize {
    let name = work.join("notes.txt");
    let mut swaps = 0;
    while !stop.load(Ordering::Relaxed) {
        let reg = work.join("notes.reg");
        let _ = fs::write(&reg, "inside line one\ninside line two\n");
        let _ = fs::rename(&reg, &name);
        // now and then the regular file stays a while, so that some calls land on it: the
        // tools must work between the swaps, not only refuse (without the pause, the two
        // threads can fall into step and every check meets a symlink)
        if swaps % 8 == 0 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let lnk = work.join("notes.lnk");
        let _ = fs::remove_file(&lnk);
        let _ = std::os::unix::fs::symlink(&targets[swaps % targets.len()], &lnk);
        let _ = fs::rename(&lnk, &name);
        swaps += 1;
    }
    swaps
}

fn calls(n: usize) -> Vec<Reply> {
    let mut v = Vec::new();
    for i in 0..n {
        v.push(Reply::call(
            "write_file",
            json!({"path": "notes.txt", "content": format!("inside line one\ninside line two {i}\n")}),
        ));
        v.push(Reply::call(
            "append_file",
            json!({"path": "notes.txt", "content": format!("appended {i}")}),
        ));
        v.push(Reply::call(
            "edit_file",
            json!({"path": "notes.txt", "old": "inside line one", "new": format!("edited {i}")}),
        ));
        v.push(Reply::call(
            "read_file",
            json!({"path": "notes.txt", "start_line": 1 + i % 2}),
        ));
    }
    v
}

#[test]
fn swapping_a_file_for_a_symlink_never_reaches_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let (work, home, outside) = (
        tmp.path().join("work"),
        tmp.path().join("home"),
        tmp.path().join("outside"),
    );
    for d in [&work, &home, &outside] {
        fs::create_dir_all(d).unwrap();
    }
    let out_canary = outside.join("canary.txt");
    let home_canary = home.join("notes-of-the-user.txt");
    fs::write(&out_canary, OUTSIDE_SECRET).unwrap();
    fs::write(&home_canary, HOME_SECRET).unwrap();
    fs::write(work.join("notes.txt"), "inside line one\n").unwrap();

    // control: a check-then-use reader under the same loop does read the canary
    let stop = Arc::new(AtomicBool::new(false));
    let leaked = Arc::new(AtomicUsize::new(0));
    let t = {
        let (w, s) = (work.clone(), stop.clone());
        let targets = vec![out_canary.clone(), home_canary.clone()];
        std::thread::spawn(move || swapper(&w, targets, s))
    };
    let name = work.join("notes.txt");
    // until the race is won once, or for at most 20 s: a fixed number of tries can all fall
    // between the swaps on a loaded machine (CI: 20,000 tries in 0.2 s, not one won)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        let ok = name
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_file());
        if ok && fs::read_to_string(&name).is_ok_and(|s| s.contains("CANARY")) {
            leaked.fetch_add(1, Ordering::Relaxed);
        }
        if leaked.load(Ordering::Relaxed) > 0 {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
    assert!(
        leaked.load(Ordering::Relaxed) > 0,
        "the swap loop never won a check-then-use race: the test would prove nothing"
    );

    // the harness under the same loop
    let n = 60;
    let mut c = config(&work, TASK);
    c.real_home = Some(home.clone());
    c.max_turns = 10 * n as u32;
    // the stall watch would (rightly) give up on a model that keeps hitting refusals; here
    // every call must be issued
    c.ablations = Ablations::parse("anti_loop").unwrap();
    let mut a = Agent::new(c, ScriptedModel::replies(calls(n))).unwrap();
    a.sleeper = Box::new(|_| {});
    let stop = Arc::new(AtomicBool::new(false));
    let t = {
        let (w, s) = (work.clone(), stop.clone());
        let targets = vec![out_canary.clone(), home_canary.clone()];
        std::thread::spawn(move || swapper(&w, targets, s))
    };
    let outcome = a.run();
    stop.store(true, Ordering::Relaxed);
    let swaps = t.join().unwrap();

    assert_eq!(fs::read_to_string(&out_canary).unwrap(), OUTSIDE_SECRET);
    assert_eq!(fs::read_to_string(&home_canary).unwrap(), HOME_SECRET);
    let names = |d: &Path| {
        let mut v: Vec<_> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&outside), vec!["canary.txt"], "nothing new outside");
    assert_eq!(
        names(&home),
        vec!["notes-of-the-user.txt"],
        "nothing new in HOME"
    );

    // every message the harness sent the model, and every tool result in it
    let mut results = 0;
    let (mut ok, mut refused) = (0, 0);
    for (i, req) in a.model.seen.iter().enumerate() {
        for m in &req.messages {
            assert!(
                !m.content.contains("CANARY"),
                "a canary reached the model on call {i}: {}",
                m.content
            );
        }
        if i > 0 {
            if let Some(m) = req.messages.iter().rev().find(|m| m.role == Role::Tool) {
                results += 1;
                if m.content.contains("symbolic link") || m.content.contains("refused") {
                    refused += 1;
                } else if !m.content.starts_with("error") {
                    ok += 1;
                }
            }
        }
    }
    eprintln!(
        "status {:?}, swaps {swaps}, tool results {results}: {ok} ok, {refused} refused",
        outcome.status
    );
    assert!(
        results >= 4 * n - 1,
        "the loop ran only {results} of {} calls",
        4 * n
    );
    assert!(
        ok > 0,
        "no call succeeded: the test did not exercise the tools"
    );
}

//! Helpers shared by the runner's integration tests that run the real `lrab` binary.
#![allow(dead_code)]

use std::process::{Command, Output};

/// The `lrab` binary of this build, blind to the caller's `LRAB_PACK`, `LRAB_ARMS`,
/// `LRAB_HARNESS_BIN` and `LRAB_SANDBOX`, so tests see the built-in pack, arms, harness and
/// confinement unless they name others; and blind to the user's arms cache (an empty one),
/// so arms installed with `lrab arms install` do not join the tests' default arm sets.
pub fn lrab() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lrab"));
    for v in ["LRAB_PACK", "LRAB_ARMS", "LRAB_HARNESS_BIN", "LRAB_SANDBOX"] {
        c.env_remove(v);
    }
    c.env(
        "LRAB_ARMS_CACHE",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/empty-arms-cache"),
    );
    c
}

/// Stdout then stderr, for assertions and failure messages.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `lrab run` flags for quick cells: the simulated backend, no progress bar, and the given
/// quiet-workdir and kill timings (milliseconds: stable, max, grace).
pub fn fast(stable_ms: u32, max_ms: u32, grace_ms: u32) -> Vec<String> {
    let mut v: Vec<String> = ["--backend", "sim", "--no-progress", "--quiet-poll-ms", "20"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for (flag, ms) in [
        ("--quiet-stable-ms", stable_ms),
        ("--quiet-max-ms", max_ms),
        ("--grace-ms", grace_ms),
    ] {
        v.push(flag.into());
        v.push(ms.to_string());
    }
    v
}

/// Host pids of the live processes whose working directory lies below `dir`: how a test tells
/// that nothing of an arm is left running. (An arm confined in its own pid namespace cannot
/// tell its host pid; `$$` there is the namespace's.)
pub fn running_below(dir: &std::path::Path) -> Vec<i32> {
    let mut v = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return v;
    };
    for e in rd.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let live = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                let st = s.rsplit(')').next().unwrap_or("").trim_start();
                !st.starts_with('Z') && !st.starts_with('X')
            })
            .unwrap_or(false);
        if live && std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c.starts_with(dir))
        {
            v.push(pid);
        }
    }
    v
}

/// [`running_below`] after giving a kill up to `wait` to take effect.
pub fn running_below_after(dir: &std::path::Path, wait: std::time::Duration) -> Vec<i32> {
    let t = std::time::Instant::now();
    while !running_below(dir).is_empty() && t.elapsed() < wait {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    running_below(dir)
}

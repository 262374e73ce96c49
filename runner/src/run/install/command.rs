//! One step of an install: a registry client's or git's command run with its output appended
//! to the install's log, killed with its process group when done or out of time, and why a
//! step failed. Below the install kinds (`steps`, `git`, `archive`), which all run steps.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one step (a whole `npm install` or `pip install`) may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(45 * 60);

/// A failed step: its name and what went wrong.
pub(super) struct Failure {
    pub(super) step: String,
    pub(super) error: String,
}

pub(super) fn fail(step: &str, error: impl Into<String>) -> Failure {
    Failure {
        step: step.to_string(),
        error: error.into(),
    }
}

/// Runs `argv` with its output appended to `log`; an error carries the exit and the last lines.
pub(super) fn run_step(
    log: &mut File,
    argv: &[OsString],
    cwd: &Path,
    env: &[(&str, OsString)],
) -> Result<(), String> {
    let shown: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let _ = writeln!(log, "$ {}", shown.join(" "));
    let start = log.seek(SeekFrom::End(0)).unwrap_or(0);
    let out = log.try_clone().map_err(|e| e.to_string())?;
    let err = log.try_clone().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let t0 = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", shown[0]))?;
    let pgid = child.id() as i32;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if t0.elapsed() > STEP_TIMEOUT => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return Err(e.to_string()),
        }
    };
    lrab_tasks::process::kill_group(pgid);
    let _ = child.wait();
    let _ = writeln!(log, "({:.1} s)", t0.elapsed().as_secs_f64());
    let ok = status.is_some_and(|s| s.success());
    if ok {
        return Ok(());
    }
    let mut tail = String::new();
    if log.seek(SeekFrom::Start(start)).is_ok() {
        let _ = log.read_to_string(&mut tail);
    }
    let _ = log.seek(SeekFrom::End(0));
    let lines: Vec<&str> = tail
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('('))
        .collect();
    let last = lines[lines.len().saturating_sub(4)..].join(" | ");
    Err(match status {
        None => format!("timed out after {} s", STEP_TIMEOUT.as_secs()),
        Some(s) => format!(
            "exit {}{}",
            s.code()
                .map(|c| c.to_string())
                .unwrap_or("by signal".into()),
            if last.is_empty() {
                String::new()
            } else {
                format!(": {last}")
            }
        ),
    })
}

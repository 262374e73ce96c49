//! Running one arm launch: its own process group, cwd = workdir, stdout/stderr straight into
//! files (no pipes, so a chatty or hung arm can never block the runner), a hard deadline after
//! which the whole group gets SIGTERM, a grace period, then SIGKILL. Nothing of the group is
//! left alive when [`run`] returns.
//!
//! A confined launch ([`Launch::confine`], `lrab_safety::confine_arm`) runs the arm in a pid
//! namespace behind a small shim, which is then the only member of the group: the shim lives
//! exactly as long as anything of the arm does, passes SIGTERM on to the arm's process group,
//! and its death (SIGKILL) takes the whole namespace with it — so the group logic below
//! (survivors, quiet-wait, the budget kill, the interrupt handler, `reap_stale`) is the same
//! for both. The arm's own exit code comes through the confinement's pipe the moment its main
//! process exits, while what it left behind may still be running.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// One launch.
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    /// Variables of the runner's environment the launch must not inherit.
    pub env_remove: Vec<String>,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
    /// Wall-clock limit of this launch.
    pub deadline: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// Where the process-group id is recorded while the launch runs (for cleanup after a
    /// runner crash); removed afterwards.
    pub pgid_file: Option<PathBuf>,
    /// Confine the whole process tree (None: unconfined, `--unconfined-arms`).
    pub confine: Option<super::confine::Confinement>,
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Exit {
    /// Exit code; None when killed by a signal.
    pub code: Option<i32>,
    /// Killed at the deadline.
    pub timed_out: bool,
    pub wall: Duration,
    /// The leader exited but members of its group were still running.
    pub survivors: bool,
    pub pgid: i32,
}

/// Process groups of the launches in flight, for the interrupt handler (fixed slots: the
/// handler may only do async-signal-safe work — atomic loads and `kill`).
static ACTIVE: [AtomicI32; 64] = [const { AtomicI32::new(0) }; 64];

fn register(pgid: i32) {
    for s in &ACTIVE {
        if s.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

/// The group of a finished launch has no member left: stop tracking it.
pub fn forget_group(pgid: i32) {
    unregister(pgid);
}

fn unregister(pgid: i32) {
    for s in &ACTIVE {
        let _ = s.compare_exchange(pgid, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

extern "C" fn on_interrupt(sig: libc::c_int) {
    for s in &ACTIVE {
        let g = s.load(Ordering::SeqCst);
        if g > 1 {
            // SAFETY: kill is async-signal-safe.
            unsafe {
                libc::kill(-g, libc::SIGKILL);
            }
        }
    }
    // SAFETY: _exit is async-signal-safe; 128 + signal like a shell.
    unsafe { libc::_exit(128 + sig) }
}

/// On SIGINT/SIGTERM/SIGHUP the runner kills every arm group in flight before it exits, so an
/// interrupted run leaves no orphan (a SIGKILLed runner cannot react; `--resume` reaps those).
pub fn install_interrupt_handler() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installing a handler that only performs async-signal-safe calls.
        unsafe {
            libc::signal(sig, on_interrupt as *const () as libc::sighandler_t);
        }
    }
}

/// Live (non-zombie) processes whose process group is `pgid`, from `/proc`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the `(comm)`: state ppid pgrp ...
        let rest = stat.rsplit_once(')').map(|x| x.1).unwrap_or("");
        let mut f = rest.split_whitespace();
        let state = f.next().unwrap_or("");
        let _ppid = f.next();
        let pgrp: i32 = f.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        if pgrp == pgid && state != "Z" && state != "X" {
            out.push(pid);
        }
    }
    out
}

fn signal_group(pgid: i32, sig: i32) {
    if pgid > 1 {
        // SAFETY: plain syscall on a process group we created; no memory is touched.
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

/// SIGTERM the group, wait up to `grace` for it to empty, then SIGKILL and wait (bounded) until
/// no member is left.
pub fn terminate_group(pgid: i32, grace: Duration) {
    unregister(pgid);
    if group_members(pgid).is_empty() {
        return;
    }
    signal_group(pgid, libc::SIGTERM);
    let t = Instant::now();
    while t.elapsed() < grace {
        if group_members(pgid).is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kill_group_and_wait(pgid);
}

/// SIGKILL the group and wait (at most 5 s) until it is gone.
pub fn kill_group_and_wait(pgid: i32) {
    unregister(pgid);
    let t = Instant::now();
    loop {
        signal_group(pgid, libc::SIGKILL);
        if group_members(pgid).is_empty() || t.elapsed() > Duration::from_secs(5) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs a launch to its end or its deadline. On a normal exit, surviving group members are
/// reported but left running so the caller can let them finish writing (quiet-wait) and then
/// call [`terminate_group`].
pub fn run(l: &Launch) -> Result<Exit> {
    run_clocked(l, &|| Duration::ZERO)
}

/// [`run`] with a deadline on a clock that runs `extra()` ahead of real time (the simulator's
/// modelled time that its pacing did not spend).
pub fn run_clocked(l: &Launch, extra: &dyn Fn() -> Duration) -> Result<Exit> {
    let out = File::create(&l.stdout).with_context(|| format!("create {}", l.stdout.display()))?;
    let err = File::create(&l.stderr).with_context(|| format!("create {}", l.stderr.display()))?;
    let mut cmd = Command::new(&l.program);
    cmd.args(&l.args)
        .current_dir(&l.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .process_group(0);
    for k in &l.env_remove {
        cmd.env_remove(k);
    }
    for (k, v) in &l.env {
        cmd.env(k, v);
    }
    let confined = match &l.confine {
        Some(c) => Some(
            lrab_safety::confine_arm(&mut cmd, &c.policy)
                .with_context(|| format!("cannot confine {}", l.program.display()))?,
        ),
        None => None,
    };
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", l.program.display()))?;
    drop(cmd);
    // the private network's one port, relayed to the backend for as long as anything of the
    // launch runs (see below)
    let forwarder = match (&confined, l.confine.as_ref().and_then(|c| c.forward_to)) {
        (Some(c), Some(to)) => match c.listener(Duration::from_secs(10)) {
            Some(listener) => Some(super::confine::Forwarder::start(listener, to)?),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                anyhow::bail!(
                    "cannot start {}: its network namespace did not come up",
                    l.program.display()
                );
            }
        },
        _ => None,
    };
    let pgid = child.id() as i32;
    register(pgid);
    if let Some(f) = &l.pgid_file {
        let _ = std::fs::write(f, format!("{pgid}\n"));
    }
    let mut timed_out = false;
    // a confined arm's main process: its wait status from the confinement's pipe
    let ended = || confined.as_ref().and_then(|c| c.ended()).map(wait_code);
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break Some(ended().unwrap_or(st.code()));
        }
        if let Some(code) = ended() {
            // the shim leaves at once when nothing else of the arm runs
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(200) && child.try_wait()?.is_none() {
                std::thread::sleep(Duration::from_millis(2));
            }
            break Some(code);
        }
        if start.elapsed() + extra() >= l.deadline {
            timed_out = true;
            break None;
        }
        std::thread::sleep(poll(start.elapsed()));
    };
    let (code, survivors) = match status {
        Some(code) => (code, !group_members(pgid).is_empty()),
        None => {
            terminate_group(pgid, l.grace);
            let _ = child.wait();
            unregister(pgid);
            (None, false)
        }
    };
    if let (true, Some(f)) = (survivors, forwarder) {
        // What the main process left behind (a server it started, a background job) keeps
        // its backend until the last of it is gone: the shim exits with it, at the latest
        // when the caller ends the group after the quiet-wait.
        f.keep_until_exit(child);
    }
    Ok(Exit {
        code: if timed_out { None } else { code },
        timed_out,
        wall: start.elapsed(),
        survivors,
        pgid,
    })
}

/// The exit code in a wait status (None: killed by a signal).
fn wait_code(ws: i32) -> Option<i32> {
    libc::WIFEXITED(ws).then(|| libc::WEXITSTATUS(ws))
}

fn poll(elapsed: Duration) -> Duration {
    if elapsed < Duration::from_millis(100) {
        Duration::from_millis(2)
    } else if elapsed < Duration::from_secs(2) {
        Duration::from_millis(10)
    } else {
        Duration::from_millis(50)
    }
}

/// Kills a group recorded in `pgid_file` by a runner that died mid-launch, if members of it
/// are still alive and still work below `root` (so an unrelated reused id is never touched).
pub fn reap_stale(pgid_file: &Path, root: &Path) {
    let Some(pgid) = std::fs::read_to_string(pgid_file)
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok())
    else {
        return;
    };
    let ours = group_members(pgid).into_iter().any(|pid| {
        std::fs::read_link(format!("/proc/{pid}/cwd"))
            .map(|c| c.starts_with(root))
            .unwrap_or(false)
    });
    if ours {
        kill_group_and_wait(pgid);
    }
    let _ = std::fs::remove_file(pgid_file);
}

/// A regular file with an execute bit: something a launch can run.
pub(crate) fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(dir: &Path, script: &str, deadline_ms: u64) -> Launch {
        Launch {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: dir.to_path_buf(),
            env: vec![("X_VAR".into(), "hello".into())],
            env_remove: Vec::new(),
            stdout: dir.join("out.txt"),
            stderr: dir.join("err.txt"),
            deadline: Duration::from_millis(deadline_ms),
            grace: Duration::from_millis(200),
            pgid_file: None,
            confine: None,
        }
    }

    #[test]
    fn exit_code_env_and_output() {
        let d = tempfile::tempdir().unwrap();
        let e = run(&launch(d.path(), "echo $X_VAR; echo bad >&2; exit 4", 5000)).unwrap();
        assert_eq!(e.code, Some(4));
        assert!(!e.timed_out && !e.survivors);
        assert_eq!(
            std::fs::read_to_string(d.path().join("out.txt")).unwrap(),
            "hello\n"
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("err.txt")).unwrap(),
            "bad\n"
        );
    }

    #[test]
    fn sigterm_ignoring_tree_is_killed_at_deadline() {
        let d = tempfile::tempdir().unwrap();
        let script = "trap '' TERM; (trap '' TERM; echo $$ > child.pid; sleep 60) & sleep 60";
        let e = run(&launch(d.path(), script, 300)).unwrap();
        assert!(e.timed_out);
        assert_eq!(e.code, None);
        assert!(e.wall < Duration::from_secs(5));
        assert!(group_members(e.pgid).is_empty());
    }

    fn confined(dir: &Path, script: &str, deadline_ms: u64) -> Launch {
        Launch {
            confine: Some(super::super::confine::Confinement {
                policy: lrab_safety::ArmPolicy {
                    writable: vec![dir.to_path_buf()],
                    connect_port: 9,
                    ..Default::default()
                },
                forward_to: Some(([127, 0, 0, 1], 9).into()),
            }),
            ..launch(dir, script, deadline_ms)
        }
    }

    #[test]
    fn confined_launch_reports_code_survivors_and_is_killed_whole() {
        let d = tempfile::tempdir().unwrap();
        let e = run(&confined(d.path(), "echo $X_VAR; exit 4", 5000)).unwrap();
        assert_eq!((e.code, e.timed_out, e.survivors), (Some(4), false, false));
        assert_eq!(
            std::fs::read_to_string(d.path().join("out.txt")).unwrap(),
            "hello\n"
        );
        // the main process exits, a setsid'd child lives on: reported, then killed with it
        let e = run(&confined(
            d.path(),
            "setsid sh -c 'trap \"\" TERM; sleep 30' & exit 3",
            5000,
        ))
        .unwrap();
        assert_eq!((e.code, e.survivors), (Some(3), true));
        assert!(!group_members(e.pgid).is_empty());
        terminate_group(e.pgid, Duration::from_millis(200));
        assert!(group_members(e.pgid).is_empty());
        // the deadline kill of a SIGTERM-ignoring tree
        let e = run(&confined(
            d.path(),
            "trap '' TERM; (trap '' TERM; sleep 60) & sleep 60",
            300,
        ))
        .unwrap();
        assert!(e.timed_out && e.code.is_none());
        assert!(e.wall < Duration::from_secs(5));
        assert!(group_members(e.pgid).is_empty());
    }

    #[test]
    fn survivors_are_reported_then_terminated() {
        let d = tempfile::tempdir().unwrap();
        let e = run(&launch(d.path(), "sleep 30 & exit 0", 5000)).unwrap();
        assert_eq!(e.code, Some(0));
        assert!(e.survivors);
        terminate_group(e.pgid, Duration::from_millis(200));
        assert!(group_members(e.pgid).is_empty());
    }
}

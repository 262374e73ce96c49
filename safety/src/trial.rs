//! The start-up trial: one confined command per backend, run once per process before any
//! model-chosen command. Feature probes say what the kernel has; they cannot say whether the
//! whole set-up works where the process runs — a chroot whose root is not a mount point, a
//! container without `CAP_SYS_ADMIN` or with its own seccomp filter, a read-only `/proc` —
//! and there every command would fail with a bare `Operation not permitted` or `Invalid
//! argument`. The trial runs the real chain (shim, init, mounts, Landlock, seccomp, exec) on
//! a scratch directory, and a failing step reports itself through a pipe, so the start-up
//! report names the step and the error, and detection passes over a backend that cannot work.

use crate::backend::{Policy, Sandbox};
use crate::step::STEPS;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a trial found beyond success or failure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// The command saw a procfs of its own pid namespace.
    pub private_proc: bool,
    /// The command could write a private `/dev/shm`.
    pub private_shm: bool,
}

/// Run `true`-like work confined by `backend` in a scratch directory: the workdir must be
/// writable, the exit status must come back. `Err` names the failing step and error.
/// `via_user`: make the namespaces inside a user namespace.
pub(crate) fn attempt(backend: &Sandbox, via_user: bool) -> Result<Found, String> {
    let scratch = tempfile::Builder::new()
        .prefix(".lrab-sandbox-trial-")
        .tempdir()
        .map_err(|e| format!("no scratch directory for the trial ({e})"))?;
    let (work, tmp) = (scratch.path().join("work"), scratch.path().join("tmp"));
    for d in [&work, &tmp] {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the array; both ends are owned at once.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: fresh fds from pipe2.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let plan = crate::plan::child_plan(
        backend,
        &work,
        &tmp,
        &Policy::default(),
        via_user,
        w.as_raw_fd(),
    )
    .map_err(|e| format!("preparing the sandbox: {e}"))?;
    // `true`, not `:`, for the optional /dev/shm probe: a failed redirection of a special
    // builtin ends the shell (without its own mounts — a sandbox nested in a confined arm —
    // /dev/shm may be closed, which is no reason to fail the trial)
    let script = ": > trial-ok && grep NSpid /proc/self/status; true 2>/dev/null > /dev/shm/.lrab-trial && echo SHM-OK; exit 0";
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(script)
        .current_dir(&work)
        .env("TMPDIR", &tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // SAFETY: as in `sandboxed_command`: only system calls on the prepared plan.
    unsafe {
        c.pre_exec(move || crate::reaper::enter(&plan));
    }
    let spawned = c.spawn();
    drop(c);
    drop(w);
    let diag = || {
        let mut b = [0u8; 5];
        let mut f = std::fs::File::from(r.try_clone().ok()?);
        f.read_exact(&mut b).ok()?;
        let step = *STEPS.get(b[0] as usize)?;
        let errno = i32::from_ne_bytes([b[1], b[2], b[3], b[4]]);
        Some(format!(
            "{}: {}",
            step.describe(),
            std::io::Error::from_raw_os_error(errno)
        ))
    };
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return Err(diag().unwrap_or_else(|| format!("spawning the trial: {e}"))),
    };
    let t0 = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if t0.elapsed() > Duration::from_secs(30) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("the trial command did not finish within 30 s".into());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(format!("waiting for the trial: {e}")),
        }
    };
    if let Some(d) = diag() {
        return Err(d);
    }
    // a few bytes, already in the pipe; everything that held it died with the namespace
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    if !status.success() {
        return Err(format!("the trial command ended with {status}"));
    }
    if !work.join("trial-ok").exists() {
        return Err("the workdir was not writable inside the sandbox".into());
    }
    // NSpid lists the pid in the procfs's namespace and below: one number = its own procfs
    let nspid = out.lines().find_map(|l| l.strip_prefix("NSpid:"));
    Ok(Found {
        private_proc: nspid.is_some_and(|n| n.split_whitespace().count() == 1),
        private_shm: out.contains("SHM-OK"),
    })
}

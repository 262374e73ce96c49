//! Running commands the way checks and solutions need: `cwd` = workdir, own process group,
//! a hard timeout after which the whole group is killed, output captured (bounded) as lossy UTF-8.
//!
//! The group is also killed after the leader exits normally, so a background child a command
//! left behind cannot keep writing into a workdir that is being scored.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Keep at most this many bytes of each stream (commands may be hostile or chatty).
pub const MAX_CAPTURE: usize = 4 * 1024 * 1024;

/// What happened to one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Exit code; `None` when killed by a signal (including our timeout kill).
    pub code: Option<i32>,
    /// The timeout killed it.
    pub timed_out: bool,
    /// Captured stdout (lossy UTF-8, at most [`MAX_CAPTURE`] bytes).
    pub stdout: String,
    /// Captured stderr (as stdout).
    pub stderr: String,
    /// Wall time until it ended.
    pub elapsed: Duration,
}

impl Outcome {
    /// stdout followed by stderr (upstream matches expectations against both).
    pub fn combined(&self) -> String {
        let mut s = self.stdout.clone();
        s.push_str(&self.stderr);
        s
    }

    /// True when the command exited with status 0 in time.
    pub fn success(&self) -> bool {
        !self.timed_out && self.code == Some(0)
    }

    /// Short tail of the combined output for error messages.
    pub fn tail(&self, max: usize) -> String {
        let c = self.combined();
        let t = c.trim_end();
        let start = t.len().saturating_sub(max);
        let start = (start..=t.len())
            .find(|i| t.is_char_boundary(*i))
            .unwrap_or(t.len());
        t[start..].to_string()
    }
}

/// Runs `sh -c command` in `cwd` with a timeout.
pub fn run_shell(command: &str, cwd: &Path, timeout: Duration) -> std::io::Result<Outcome> {
    run_argv("sh", &["-c", command], cwd, timeout)
}

/// Runs a program with arguments (no shell) in `cwd` with a timeout.
pub fn run_argv(
    program: &str,
    args: &[&str],
    cwd: &Path,
    timeout: Duration,
) -> std::io::Result<Outcome> {
    let start = Instant::now();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Keep byte-code and pytest caches out of scored workdirs: scoring must leave a
        // workdir as it found it.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTEST_ADDOPTS", pytest_addopts())
        .process_group(0);
    if let Some(path) = path_with_python_shim() {
        cmd.env("PATH", path);
    }
    let mut child = cmd.spawn()?;
    let pgid = child.id() as i32;
    let out_rx = spawn_reader(child.stdout.take());
    let err_rx = spawn_reader(child.stderr.take());

    let mut timed_out = false;
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break Some(st);
        }
        if start.elapsed() >= timeout {
            timed_out = true;
            break None;
        }
        thread::sleep(poll_interval(start.elapsed()));
    };
    // Kill the whole group: on timeout the leader and its children, on normal exit any
    // background leftovers. ESRCH (group already gone) is fine.
    kill_group(pgid);
    let status = match status {
        Some(st) => Some(st),
        None => Some(child.wait()?),
    };
    // Readers finish once every holder of the pipes is dead; bound the wait anyway in case a
    // process escaped the group (setsid) and still holds them.
    let deadline = Instant::now() + Duration::from_secs(2);
    let stdout = collect(out_rx, deadline);
    let stderr = collect(err_rx, deadline);
    let code = if timed_out {
        None
    } else {
        status.and_then(|s| s.code())
    };
    Ok(Outcome {
        code,
        timed_out,
        stdout,
        stderr,
        elapsed: start.elapsed(),
    })
}

/// The `PATH` commands run with: the caller's, with the python shim first when it is needed
/// (so a lookup of what a command needs sees what the command will).
pub fn command_path() -> Option<std::ffi::OsString> {
    path_with_python_shim().or_else(|| std::env::var_os("PATH"))
}

/// `PATH` with a folder holding `python -> python3` prepended, when `python` is not on `PATH`
/// but `python3` is. Upstream's task commands say `python …` (its machines had one); many
/// Linux systems only have `python3`. `None` = leave `PATH` alone.
fn path_with_python_shim() -> Option<std::ffi::OsString> {
    static SHIM: std::sync::OnceLock<Option<std::ffi::OsString>> = std::sync::OnceLock::new();
    SHIM.get_or_init(|| {
        let path = std::env::var_os("PATH")?;
        let home = std::env::var_os("HOME")?;
        let dir = Path::new(&home).join(".cache/lrab/python-shim");
        let shim = python_shim(&path, &dir)?;
        let mut parts = vec![shim];
        parts.extend(std::env::split_paths(&path));
        std::env::join_paths(parts).ok()
    })
    .clone()
}

/// Creates (or reuses) `dir/python -> <python3 on path>` when `path` has no `python`; returns
/// `dir` when the shim is needed and in place. The folder lives under the user's home, not a
/// shared temp folder, so nobody else can plant a `python` there.
pub fn python_shim(path: &std::ffi::OsStr, dir: &Path) -> Option<std::path::PathBuf> {
    let find = |name: &str| {
        std::env::split_paths(path)
            .map(|d| d.join(name))
            .find(|p| is_executable(p))
    };
    if find("python").is_some() {
        return None;
    }
    let py3 = find("python3")?;
    std::fs::create_dir_all(dir).ok()?;
    let link = dir.join("python");
    if std::fs::read_link(&link).ok().as_deref() != Some(py3.as_path()) {
        let _ = std::fs::remove_file(&link);
        // Another process may win the race; accept its identical link.
        if std::os::unix::fs::symlink(&py3, &link).is_err()
            && std::fs::read_link(&link).ok().as_deref() != Some(py3.as_path())
        {
            return None;
        }
    }
    Some(dir.to_path_buf())
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// `PYTEST_ADDOPTS` with the cache plugin disabled (appended to any value already set).
fn pytest_addopts() -> String {
    match std::env::var("PYTEST_ADDOPTS") {
        Ok(v) if !v.trim().is_empty() => format!("{v} -p no:cacheprovider"),
        _ => "-p no:cacheprovider".to_string(),
    }
}

/// Short polls first so fast commands return fast, then back off.
fn poll_interval(elapsed: Duration) -> Duration {
    if elapsed < Duration::from_millis(50) {
        Duration::from_millis(1)
    } else if elapsed < Duration::from_secs(1) {
        Duration::from_millis(10)
    } else {
        Duration::from_millis(50)
    }
}

/// Sends SIGKILL to a whole process group.
pub fn kill_group(pgid: i32) {
    if pgid > 0 {
        // SAFETY: plain syscall with a negative pid = process group; no memory is touched.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

fn spawn_reader<R: Read + Send + 'static>(src: Option<R>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut r) = src {
        thread::spawn(move || {
            let mut kept = Vec::new();
            let mut buf = [0u8; 8192];
            loop {
                match r.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let room = MAX_CAPTURE.saturating_sub(kept.len());
                        kept.extend_from_slice(&buf[..n.min(room)]);
                    }
                }
            }
            let _ = tx.send(kept);
        });
    } else {
        let _ = tx.send(Vec::new());
    }
    rx
}

fn collect(rx: mpsc::Receiver<Vec<u8>>, deadline: Instant) -> String {
    let wait = deadline.saturating_duration_since(Instant::now());
    let bytes = rx.recv_timeout(wait).unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_both_streams_and_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let o = run_shell(
            "echo out; echo err 1>&2; exit 3",
            dir.path(),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(o.code, Some(3));
        assert!(!o.timed_out);
        assert_eq!(o.combined(), "out\nerr\n");
    }

    #[test]
    fn runs_in_the_given_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("marker.txt"), "x").unwrap();
        let o = run_shell("ls", dir.path(), Duration::from_secs(10)).unwrap();
        assert!(o.stdout.contains("marker.txt"));
    }

    #[test]
    fn timeout_kills_the_whole_group_including_children() {
        let dir = tempfile::tempdir().unwrap();
        // The child writes its pid, then both it and the parent would run for a minute.
        let o = run_shell(
            "sh -c 'echo $$ > child.pid; exec sleep 60' & wait",
            dir.path(),
            Duration::from_millis(400),
        )
        .unwrap();
        assert!(o.timed_out);
        assert_eq!(o.code, None);
        assert!(o.elapsed < Duration::from_secs(10));
        let pid: i32 = std::fs::read_to_string(dir.path().join("child.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The grandchild must be gone (allow a moment for the kernel to reap it).
        let mut alive = true;
        for _ in 0..100 {
            // SAFETY: signal 0 only probes for existence.
            alive = unsafe { libc::kill(pid, 0) } == 0 && !is_zombie(pid);
            if !alive {
                break;
            }
            thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive, "child {pid} survived the group kill");
    }

    fn is_zombie(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(true)
    }

    #[test]
    fn python_shim_only_when_python_is_missing() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let py3 = bin.join("python3");
        std::fs::write(&py3, "#!/bin/sh\necho shimmed-python \"$@\"\n").unwrap();
        std::fs::set_permissions(&py3, std::fs::Permissions::from_mode(0o755)).unwrap();
        let shim_dir = d.path().join("shim");
        let path = std::env::join_paths([&bin]).unwrap();
        let got = python_shim(&path, &shim_dir).unwrap();
        assert_eq!(std::fs::read_link(got.join("python")).unwrap(), py3);
        // Idempotent, and the shim really runs python3.
        assert_eq!(python_shim(&path, &shim_dir), Some(shim_dir.clone()));
        let out = Command::new(got.join("python")).arg("-V").output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "shimmed-python -V\n");
        // With a real `python` on the path no shim is made.
        std::fs::copy(&py3, bin.join("python")).unwrap();
        assert_eq!(python_shim(&path, &d.path().join("shim2")), None);
        assert!(!d.path().join("shim2").exists());
    }

    #[test]
    fn background_leftovers_do_not_block_return() {
        let dir = tempfile::tempdir().unwrap();
        let o = run_shell("sleep 30 & echo done", dir.path(), Duration::from_secs(20)).unwrap();
        assert_eq!(o.code, Some(0));
        assert!(o.stdout.contains("done"));
        assert!(o.elapsed < Duration::from_secs(10));
    }
}

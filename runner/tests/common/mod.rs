//! Helpers shared by the runner's integration tests that run the real `lrab` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
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

/// `lrab proxy --upstream <upstream> --log <log>` (output to /dev/null), for a test to add its
/// flags to before [`listening`] starts it.
pub fn proxy_command(upstream: &str, log: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lrab"));
    c.args(["proxy", "--upstream", upstream])
        .arg("--log")
        .arg(log)
        .stdout(std::process::Stdio::null());
    c
}

/// Starts `cmd` with `--listen` on a free local port and waits (at most 20 s) until it accepts
/// connections: the child and its URL.
pub fn listening(mut cmd: Command) -> (std::process::Child, String) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    drop(l);
    let child = cmd.arg("--listen").arg(&addr).spawn().unwrap();
    let t = std::time::Instant::now();
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "{:?} did not start",
            cmd.get_program()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (child, format!("http://{addr}"))
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

/// Writes the arm `<name>.toml` into `dir`: it runs `script` (saved beside it as
/// `<name>.<ext>`) with `program`, given the script, the prompt file and the model; `lrab arms
/// check` runs `program -c <version_code>`. `extra` (more TOML keys) ends the file. Returns
/// the arm file.
pub fn script_arm(
    dir: &Path,
    name: &str,
    program: &str,
    ext: &str,
    script: &str,
    version_code: &str,
    extra: &str,
) -> PathBuf {
    let sp = dir.join(format!("{name}.{ext}"));
    std::fs::write(&sp, script).unwrap();
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(
        &file,
        format!(
            "name = \"{name}\"\nprogram = \"{program}\"\nargs = [\"{}\", \"{{prompt_file}}\", \"{{model}}\"]\napi = \"ollama\"\nversion_args = [\"-c\", \"{version_code}\"]\n{extra}",
            sp.display()
        ),
    )
    .unwrap();
    file
}

/// A `/bin/sh` arm running `script` with the prompt file as `$1` (see [`script_arm`]); its
/// version is `fake 1.0`.
pub fn sh_arm(dir: &Path, name: &str, script: &str) -> PathBuf {
    script_arm(dir, name, "/bin/sh", "sh", script, "echo fake 1.0", "")
}

/// The index of a cells.csv column.
pub fn col(name: &str) -> usize {
    lrab_records::HEADER
        .iter()
        .position(|c| *c == name)
        .unwrap_or_else(|| panic!("no cells.csv column {name}"))
}

/// The fields of each line of `text` (a cells.csv: no field holds a comma).
pub fn csv_lines(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// Runs `lrab <args> --json <file>`, which must succeed: what it printed and the JSON report.
pub fn lrab_json<I, S>(args: I) -> (String, serde_json::Value)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("report.json");
    let o = lrab().args(args).arg("--json").arg(&json).output().unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let v = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (t, v)
}

/// The stand-in harness with no safety rings (a script that runs whatever it is asked).
pub fn leaky_harness() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/leaky_harness.py")
}

/// The arm definitions the suite ships (`arms/`).
pub fn shipped_arms() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../arms")
}

/// Runs the shipped `harness` arm on the simulated backend (`model` × `tasks`, run id `id`)
/// into `out`, which must succeed; returns the run folder. Needs the `lrab-harness` sibling
/// binary (`cargo test --workspace` builds it; alone: `cargo build -p lrab-harness` first).
pub fn harness_on_sim(model: &str, tasks: &str, id: &str, out: &Path) -> PathBuf {
    let o = lrab()
        .args([
            "run", "--arms", "harness", "--models", model, "--tasks", tasks,
        ])
        .args(["--backend", "sim", "--no-progress", "--run-id", id])
        .arg("--arms-dir")
        .arg(shipped_arms())
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    out.join(id)
}

/// The first complete (newline-ended) JSON lines of `log` once there are `n` of them, waiting
/// at most `within`: a proxy writes a request's record after the arm has its whole answer, so
/// a test that has just read an answer waits for the record instead of racing it.
pub fn complete_records(
    log: &Path,
    n: usize,
    within: std::time::Duration,
) -> Vec<serde_json::Value> {
    let t = std::time::Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let complete: Vec<&str> = text
            .split_inclusive('\n')
            .filter(|l| l.ends_with('\n'))
            .collect();
        if complete.len() >= n {
            return complete
                .iter()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        }
        assert!(
            t.elapsed() < within,
            "{} has {} of {n} records: {text}",
            log.display(),
            complete.len()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// `git -C dir args…` with a fixed author, for tests that build a repository; its trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.org")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.org")
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", text(&o));
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// Whether the opt-in check named by `var` was asked for (`var=1`); otherwise says so and how.
pub fn opted_in(var: &str, what: &str) -> bool {
    let on = std::env::var(var).as_deref() == Ok("1");
    if !on {
        eprintln!("SKIPPED: set {var}=1 to run {what}");
    }
    on
}

/// Runs an opt-in check script of the suite (`scripts/…`, by bash) with `LRAB_BIN` set to this
/// build's `lrab`, which must have the harness arm (`lrab-harness`) beside it. The script's exit
/// 77 means its needs cannot be had here: `None`, after printing `SKIPPED: <skipped><why>`
/// with the first output line holding one of `marks`. Otherwise it must succeed; its output.
pub fn check_script(script: &str, skipped: &str, marks: &[&str]) -> Option<String> {
    let lrab = Path::new(env!("CARGO_BIN_EXE_lrab"));
    assert!(
        lrab.with_file_name("lrab-harness").is_file(),
        "no lrab-harness next to {}: run `cargo build -p lrab-harness` first",
        lrab.display()
    );
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("bash")
        .arg(repo.join(script))
        .env("LRAB_BIN", lrab)
        .output()
        .unwrap_or_else(|e| panic!("run {script}: {e}"));
    let text = text(&out);
    eprintln!("{text}");
    if out.status.code() == Some(77) {
        let why = (text.lines())
            .find(|l| marks.iter().any(|m| l.contains(m)))
            .unwrap_or("no reason given");
        eprintln!("SKIPPED: {skipped}{why}");
        return None;
    }
    assert!(out.status.success(), "{script} failed:\n{text}");
    Some(text)
}

/// The exit code alone is not trusted: each stage of a check must have said it held.
pub fn assert_says(text: &str, expected: &[&str]) {
    for e in expected {
        assert!(text.contains(e), "missing {e:?} in:\n{text}");
    }
}

/// `lrab <sub>` (`run`, `ablate`) on the arm files in `arms`, into the results root `out`,
/// with [`fast`] timings (stable, max, grace in ms) against the simulated backend.
pub fn quick(sub: &str, arms: &Path, out: &Path, (stable, max, grace): (u32, u32, u32)) -> Command {
    let mut c = lrab();
    c.arg(sub)
        .arg("--arms-dir")
        .arg(arms)
        .arg("--out")
        .arg(out)
        .args(fast(stable, max, grace));
    c
}

/// `lrab run` of our harness on WF-01 against the fake model `fake-coder` at `backend`, with the
/// short budget and quiet times of a one-cell wire test and `key` as the API key.
pub fn harness_cell(backend: &str, run_id: &str, out: &Path, key: &str) -> Command {
    let mut c = lrab();
    c.args(["run", "--arms", "harness", "--models", "fake-coder"])
        .args(["--tasks", "WF-01", "--backend", backend])
        .args(["--no-progress", "--run-id", run_id])
        .args([
            "--budget-minutes",
            "0.15",
            "--retries",
            "0",
            "--num-ctx",
            "16384",
        ])
        .args([
            "--quiet-stable-ms",
            "200",
            "--quiet-max-ms",
            "1000",
            "--grace-ms",
            "500",
        ])
        .arg("--arms-dir")
        .arg(shipped_arms())
        .arg("--out")
        .arg(out)
        .env("OPENAI_API_KEY", key);
    c
}

//! Acceptance: the real opencode (npm `opencode-ai`) and agent-mini (PyPI `agent-mini`) complete
//! an LRAB task against `sim-oracle`. They are installed under `target/lrab-arms` when missing;
//! the test is skipped (with the reason printed) only when the registries cannot be reached.

mod common;
use common::*;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lrab_sim::SimConfig;

const OPENCODE_VERSION: &str = "1.18.23";
const AGENT_MINI_VERSION: &str = "0.3.1";

fn arms_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("LRAB_ARMS_DIR") {
        return PathBuf::from(d);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("lrab-arms")
}

/// Output that means the registry is unreachable (as opposed to a broken install).
fn unreachable(out: &str) -> bool {
    [
        "ENOTFOUND",
        "EAI_AGAIN",
        "ECONNREFUSED",
        "ETIMEDOUT",
        "ECONNRESET",
        "Temporary failure in name resolution",
        "Failed to establish a new connection",
        "No matching distribution found",
        "Could not find a version",
        "network",
    ]
    .iter()
    .any(|m| out.contains(m))
}

enum Install {
    Ready(PathBuf),
    Skip(String),
}

fn run_install(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot start installer for {what}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if unreachable(&text) {
        return Err(format!(
            "SKIP: registry unreachable while installing {what}: {}",
            text.lines().last().unwrap_or("")
        ));
    }
    panic!("installing {what} failed:\n{text}");
}

fn opencode() -> Install {
    let dir = arms_dir().join("opencode");
    let bin = dir.join("node_modules/opencode-linux-x64/bin/opencode");
    if !bin.exists() {
        std::fs::create_dir_all(&dir).expect("arms dir");
        if let Err(s) = run_install(
            Command::new("npm")
                .arg("install")
                .arg("--prefix")
                .arg(&dir)
                .arg(format!("opencode-ai@{OPENCODE_VERSION}")),
            "opencode-ai",
        ) {
            return Install::Skip(s);
        }
    }
    assert!(
        bin.exists(),
        "opencode binary missing after install: {}",
        bin.display()
    );
    Install::Ready(bin)
}

fn agent_mini() -> Install {
    let venv = arms_dir().join("venv-agent-mini");
    let bin = venv.join("bin/agent-mini");
    if !bin.exists() {
        std::fs::create_dir_all(arms_dir()).expect("arms dir");
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .map(|s| s.success());
        assert!(matches!(ok, Ok(true)), "python3 -m venv failed");
        if let Err(s) = run_install(
            Command::new(venv.join("bin/pip")).args([
                "install",
                "-q",
                &format!("agent-mini=={AGENT_MINI_VERSION}"),
            ]),
            "agent-mini",
        ) {
            return Install::Skip(s);
        }
    }
    assert!(bin.exists());
    Install::Ready(bin)
}

/// Runs a command in its own process group with a deadline; returns (exit ok, output).
fn run_arm(mut cmd: Command, deadline: Duration) -> (bool, String) {
    let out_file = tempfile::NamedTempFile::new().expect("tmp");
    let f = out_file.reopen().expect("reopen");
    let f2 = f.try_clone().expect("clone");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::from(f))
        .stderr(Stdio::from(f2))
        .process_group(0)
        .spawn()
        .expect("spawn arm");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if start.elapsed() > deadline {
            lrab_tasks::process::kill_group(child.id() as i32);
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let text = std::fs::read_to_string(out_file.path()).unwrap_or_default();
    (status.is_some_and(|s| s.success()), text)
}

#[test]
fn real_agent_mini_completes_a_task_against_the_oracle() {
    let bin = match agent_mini() {
        Install::Ready(b) => b,
        Install::Skip(why) => {
            eprintln!("{why}");
            return;
        }
    };
    let sim = start(SimConfig::default());
    let pack = pack();
    let (tmp, wd, m) = fresh(&pack, "WF-04");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".agent-mini")).unwrap();
    let cfg = serde_json::json!({"provider": "ollama",
        "providers": {"ollama": {"baseUrl": sim.url(), "model": "sim-oracle"}},
        "agent": {"temperature": 0, "maxIterations": 40}});
    std::fs::write(home.join(".agent-mini/config.json"), cfg.to_string()).unwrap();
    let prompt = std::fs::read_to_string(wd.join("task_input.txt")).unwrap();
    let mut cmd = Command::new(bin);
    cmd.env("HOME", &home)
        .args(["chat", "--no-markdown", "--workspace"])
        .arg(&wd)
        .arg("-m")
        .arg(&prompt);
    let (ok, out) = run_arm(cmd, Duration::from_secs(240));
    assert!(ok, "agent-mini failed:\n{out}");
    assert_eq!(
        score(&pack, "WF-04", &m, &wd),
        1.0,
        "agent-mini output:\n{out}"
    );
}

#[test]
fn real_opencode_completes_a_task_against_the_oracle() {
    let bin = match opencode() {
        Install::Ready(b) => b,
        Install::Skip(why) => {
            eprintln!("{why}");
            return;
        }
    };
    // opencode talks /v1, which cannot carry num_ctx: give the server a 32k default (like
    // OLLAMA_CONTEXT_LENGTH); with the 4096 default its prompt would be cut (docs/sim.md, "Serving behaviour")
    let sim = start(SimConfig {
        default_ctx: 32768,
        ..Default::default()
    });
    let pack = pack();
    let (tmp, wd, m) = fresh(&pack, "WF-04");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let cfg = serde_json::json!({
        "provider": {"ollama": {"npm": "@ai-sdk/openai-compatible", "name": "Ollama",
            "options": {"baseURL": format!("{}/v1", sim.url())},
            "models": {"sim-oracle": {"name": "sim-oracle"}}}},
        "model": "ollama/sim-oracle",
        "permission": {"webfetch": "deny"}});
    let prompt = std::fs::read_to_string(wd.join("task_input.txt")).unwrap();
    let mut cmd = Command::new(bin);
    cmd.env("HOME", &home)
        .env("OPENCODE_CONFIG_CONTENT", cfg.to_string())
        // start-up plugin fetches from npm are not needed; keep the run offline and fast
        .env("npm_config_registry", "http://127.0.0.1:9")
        .args(["run", "--pure", "--format", "json", "--dir"])
        .arg(&wd)
        .args(["-m", "ollama/sim-oracle", "--auto"])
        .arg(&prompt);
    let (ok, out) = run_arm(cmd, Duration::from_secs(240));
    assert!(ok, "opencode failed:\n{out}");
    assert!(
        out.contains("\"tool\":\"write\""),
        "opencode used no write tool:\n{out}"
    );
    assert_eq!(
        score(&pack, "WF-04", &m, &wd),
        1.0,
        "opencode output:\n{out}"
    );
}

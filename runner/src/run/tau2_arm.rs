//! `lrab tau2 run --agent <arm>`: a command-line arm on τ². Per conversation an attempt folder
//! (`<out>/attempts/<task>-t<trial>/`) as a matrix cell gets one — `home/`, `tmp/`, `workdir/`,
//! the arm's stdout/stderr, the recording proxy's `proxy.jsonl` — and the conversation itself
//! stays in this process ([`lrab_tau2::Relayed`]: loop, user simulator, record), served to the
//! arm through FIFOs in `tmp/mcp` by the relay (`lrab tau2 mcp-relay`) the arm's MCP
//! configuration names (the arm file's `[mcp]` section). The arm runs confined (the cell's
//! policy plus the `lrab` binary's folder as executable), with the customer's first message as
//! its prompt and a wall-clock deadline; see docs/tau2.md.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use lrab_records::ThinkSetting;
use lrab_tau2::{Conversation, ExternalAgent, Outcome, Relayed};

use super::arms::{expand, Arm, Vars};
use super::confine::AttemptDirs;
use super::process::{self, Launch};
use super::proxy;

/// Time between SIGTERM and SIGKILL at the deadline.
const GRACE: Duration = Duration::from_secs(5);

/// The termination of a conversation whose arm was killed at the deadline: upstream's limit
/// termination (graded 0), never `agent_stop` (the agent did not leave on its own).
pub const TIMEOUT_TERMINATION: &str = "max_steps";

/// One arm, launched once per conversation.
pub struct ArmAgent {
    pub arm: Arm,
    pub model: String,
    /// The run's backend (the proxy's upstream).
    pub backend_url: String,
    pub num_ctx: u64,
    pub think: bool,
    /// Where the attempt folders go (`<out>/attempts`).
    pub attempts: PathBuf,
    pub deadline: Duration,
}

/// The arm's refusal when it cannot take an MCP server.
pub fn check_mcp(arm: &Arm) -> Result<()> {
    if arm.mcp.is_none() {
        bail!(
            "arm '{}' cannot run τ²: it has no MCP support (no [mcp] section in {}); τ² serves its tools to command-line arms over MCP (docs/tau2.md lists the arms that have it)",
            arm.name,
            arm.file.display()
        );
    }
    Ok(())
}

/// The `[mcp]` section's config files, expanded: (path, content).
fn mcp_files(arm: &Arm, vars: &Vars) -> Vec<(PathBuf, String)> {
    let mcp = arm.mcp.as_ref().expect("checked by check_mcp");
    mcp.config_files
        .iter()
        .map(|f| {
            (
                PathBuf::from(expand(&f.path, vars)),
                expand(&f.content, vars),
            )
        })
        .collect()
}

/// The arm's arguments as the `[mcp]` section makes them: its `args` instead of the arm's
/// own (`own`), its `extra_args` appended.
fn mcp_args(arm: &Arm, vars: &Vars, own: Vec<String>) -> Vec<String> {
    let mcp = arm.mcp.as_ref().expect("checked by check_mcp");
    let mut args = match &mcp.args {
        Some(a) => a.iter().map(|a| expand(a, vars)).collect(),
        None => own,
    };
    args.extend(mcp.extra_args.iter().map(|a| expand(a, vars)));
    args
}

impl ExternalAgent for ArmAgent {
    fn converse(&mut self, c: Conversation) -> Result<Outcome> {
        let name: String = c
            .task_id
            .chars()
            .map(|ch| {
                if ch.is_ascii_alphanumeric() || ch == '-' {
                    ch
                } else {
                    '_'
                }
            })
            .collect();
        // a retry pass gets its own folder: the failed attempt stays for inspection
        let retry = if c.pass > 0 {
            format!("-r{}", c.pass)
        } else {
            String::new()
        };
        let dir = self.attempts.join(format!("{name}-t{}{retry}", c.trial));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("remove {}", dir.display()))?;
        }
        let dirs = AttemptDirs::create(&dir)?;
        let workdir = dir.join("workdir");
        let mcp_dir = dirs.tmp.join("mcp");
        for d in [&workdir, &mcp_dir] {
            std::fs::create_dir_all(d).with_context(|| format!("create {}", d.display()))?;
        }
        let relayed = Relayed::start(&mcp_dir, c.env, c.history, c.limits, &c.policy, c.user)?;
        let Some(prompt) = relayed.opening().map(str::to_string) else {
            return relayed.finish();
        };
        let launched = self.launch(&dir, &dirs, &workdir, &mcp_dir, &prompt);
        let mut o = relayed.finish()?;
        let exit = launched?;
        if exit.timed_out && o.termination == "agent_stop" {
            o.termination = TIMEOUT_TERMINATION.into();
            o.note = Some(format!(
                "arm '{}' killed at the {} s deadline",
                self.arm.name,
                self.deadline.as_secs_f64()
            ));
        }
        Ok(o)
    }
}

impl ArmAgent {
    /// Launches the arm confined through its own recording proxy and waits for it (or kills
    /// it at the deadline), whole process group included.
    fn launch(
        &self,
        dir: &Path,
        dirs: &AttemptDirs,
        workdir: &Path,
        mcp_dir: &Path,
        prompt: &str,
    ) -> Result<process::Exit> {
        let proxy = proxy::start(proxy::ProxyConfig {
            upstream: self.backend_url.clone(),
            num_ctx: self.num_ctx,
            log: Some(dir.join("proxy.jsonl")),
            normalize: self.arm.proxy,
            v1_to_native: self.arm.proxy,
            think: if self.think {
                ThinkSetting::On
            } else {
                ThinkSetting::Off
            },
            openai: None,
        })?;
        let backend_url = proxy.url();
        let lrab = std::env::current_exe().context("cannot tell where the lrab binary is")?;
        std::fs::write(dir.join("prompt.txt"), prompt)
            .with_context(|| format!("write {}/prompt.txt", dir.display()))?;
        let vars = self.vars(dir, dirs, workdir, &backend_url, prompt, &lrab, mcp_dir);
        self.arm.write_configs(&vars)?;
        for (path, content) in mcp_files(&self.arm, &vars) {
            if let Some(d) = path.parent() {
                std::fs::create_dir_all(d).with_context(|| format!("create {}", d.display()))?;
            }
            std::fs::write(&path, content).with_context(|| format!("write {}", path.display()))?;
        }
        let (program, own) = self.arm.command(&vars)?;
        let args = mcp_args(&self.arm, &vars, own);
        let mut env = dirs.env();
        env.extend(self.arm.env_for(&vars));
        env.push(("OLLAMA_HOST".into(), backend_url.clone()));
        let mut confine = self
            .arm
            .confinement(&program, dir, workdir, dirs, &backend_url)?;
        if let Some(bin_dir) = lrab.parent() {
            confine.policy.executable.push(bin_dir.to_path_buf());
        }
        let exit = process::run(&Launch {
            program,
            args,
            cwd: workdir.to_path_buf(),
            env,
            env_remove: self.arm.env_remove.clone(),
            stdout: dir.join("arm.stdout"),
            stderr: dir.join("arm.stderr"),
            deadline: self.deadline,
            grace: GRACE,
            pgid_file: Some(dir.join("arm.pgid")),
            confine: Some(confine),
        })?;
        if exit.survivors {
            process::terminate_group(exit.pgid, GRACE);
        } else {
            process::forget_group(exit.pgid);
        }
        let _ = std::fs::remove_file(dir.join("arm.pgid"));
        drop(proxy);
        Ok(exit)
    }

    #[allow(clippy::too_many_arguments)]
    fn vars(
        &self,
        dir: &Path,
        dirs: &AttemptDirs,
        workdir: &Path,
        backend_url: &str,
        prompt: &str,
        lrab: &Path,
        mcp_dir: &Path,
    ) -> Vars {
        let program = lrab.to_string_lossy().into_owned();
        let args = vec![
            "tau2".to_string(),
            "mcp-relay".into(),
            mcp_dir.to_string_lossy().into_owned(),
        ];
        let json = |v: &serde_json::Value| v.to_string();
        let mut command = vec![program.clone()];
        command.extend(args.iter().cloned());
        let mut vars = Vars::default();
        vars.set("prompt", prompt)
            .set("prompt_file", dir.join("prompt.txt").to_string_lossy())
            .set("workdir", workdir.to_string_lossy())
            .set("model", self.model.clone())
            .set("backend_url", backend_url)
            .set("home", dirs.home.to_string_lossy())
            .set("num_ctx", self.num_ctx.to_string())
            .set(
                "budget_minutes",
                format!("{}", self.deadline.as_secs_f64() / 60.0),
            )
            .set("attempt_dir", dir.to_string_lossy())
            .set("install_dir", self.arm.install_dir())
            .set(
                "path",
                std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()),
            )
            .set("mcp_program", json(&serde_json::json!(program)))
            .set("mcp_args", json(&serde_json::json!(args)))
            .set("mcp_command", json(&serde_json::json!(command)));
        vars
    }
}

#[cfg(test)]
mod tests {
    //! The shipped arm files' `[mcp]` sections, expanded as a τ² launch expands them: every
    //! config file parses in its format and names the relay (`lrab tau2 mcp-relay <dir>`)
    //! where the arm reads its servers — tested without the arms (gptme, goose and codex are
    //! not installed here; cline, opencode and qwen-code also ran for real, docs/tau2.md).
    use super::*;
    use serde_json::{json, Value};

    const LRAB: &str = "/opt/lrab bin/lrab";
    const DIR: &str = "/run/att \"1\"/tmp/mcp";

    fn shipped(name: &str) -> Arm {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../arms");
        super::super::arms::load_dir(&dir)
            .unwrap()
            .into_iter()
            .find(|a| a.name == name)
            .unwrap_or_else(|| panic!("no arm {name}"))
    }

    /// The config files and arguments of `name`'s `[mcp]` section.
    fn expanded(name: &str) -> (Arm, Vec<(PathBuf, String)>, Vec<String>) {
        let arm = shipped(name);
        let agent = ArmAgent {
            arm: arm.clone(),
            model: "qwen3.5:4b".into(),
            backend_url: "http://127.0.0.1:9".into(),
            num_ctx: 32768,
            think: false,
            attempts: PathBuf::from("/run"),
            deadline: Duration::from_secs(600),
        };
        let tmp = tempfile::tempdir().unwrap();
        let dirs = AttemptDirs::create(tmp.path()).unwrap();
        let vars = agent.vars(
            tmp.path(),
            &dirs,
            &tmp.path().join("workdir"),
            "http://127.0.0.1:9",
            "Hi, I want to cancel my order.",
            Path::new(LRAB),
            Path::new(DIR),
        );
        let files = mcp_files(&arm, &vars)
            .into_iter()
            .map(|(p, c)| (p.strip_prefix(tmp.path()).unwrap().to_path_buf(), c))
            .collect();
        let args = mcp_args(&arm, &vars, vec!["<own>".into()]);
        (arm, files, args)
    }

    fn relay() -> (Value, Value) {
        (json!(LRAB), json!(["tau2", "mcp-relay", DIR]))
    }

    #[test]
    fn gptme_lists_the_relay_in_its_user_config_and_allows_its_tools() {
        let (_, files, args) = expanded("gptme");
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, Path::new("home/.config/gptme/config.toml"));
        let v: toml::Value = toml::from_str(&files[0].1).unwrap();
        let v: Value = serde_json::to_value(v).unwrap();
        assert_eq!(v["mcp"]["enabled"], true);
        let s = &v["mcp"]["servers"][0];
        assert_eq!(
            (s["name"].clone(), s["enabled"].clone()),
            (json!("tau2"), json!(true))
        );
        assert_eq!((s["command"].clone(), s["args"].clone()), relay());
        let t = args.iter().position(|a| a == "-t").unwrap();
        assert!(args[t + 1].split(',').any(|x| x == "tau2.*"), "{args:?}");
        assert_eq!(args.last().unwrap(), "Hi, I want to cancel my order.");
        assert!(!args.contains(&"<own>".to_string()));
    }

    #[test]
    fn cline_gets_a_stdio_server_in_its_mcp_settings() {
        let (_, files, args) = expanded("cline");
        assert_eq!(
            files[0].0,
            Path::new("home/cline-data/settings/cline_mcp_settings.json")
        );
        let v: Value = serde_json::from_str(&files[0].1).unwrap();
        let t = &v["mcpServers"]["tau2"];
        assert_eq!(t["transport"]["type"], "stdio");
        assert_eq!(
            (
                t["transport"]["command"].clone(),
                t["transport"]["args"].clone()
            ),
            relay()
        );
        assert_eq!(t["timeout"], 600);
        assert_eq!(args, ["<own>"], "cline keeps its own arguments");
    }

    #[test]
    fn goose_gets_an_enabled_stdio_extension_in_its_config() {
        let (arm, files, _) = expanded("goose");
        // GOOSE_PATH_ROOT is {home}/goose, whose config/config.yaml goose reads
        assert_eq!(arm.env.get("GOOSE_PATH_ROOT").unwrap(), "{home}/goose");
        assert_eq!(files[0].0, Path::new("home/goose/config/config.yaml"));
        // JSON, which every YAML parser reads as the same mapping
        let v: Value = serde_json::from_str(&files[0].1).unwrap();
        let e = &v["extensions"]["tau2"];
        assert_eq!(
            (e["type"].clone(), e["enabled"].clone()),
            (json!("stdio"), json!(true))
        );
        assert_eq!((e["cmd"].clone(), e["args"].clone()), relay());
        assert_eq!(e["timeout"], 600);
    }

    #[test]
    fn every_shipped_mcp_section_expands_to_parsable_files_naming_the_relay() {
        let mut with = Vec::new();
        for name in ["opencode", "qwen-code", "codex", "gptme", "cline", "goose"] {
            let (arm, files, args) = expanded(name);
            assert!(arm.mcp.is_some(), "{name}");
            for (path, content) in &files {
                let v: Value = match path.extension().and_then(|e| e.to_str()) {
                    Some("toml") => {
                        serde_json::to_value(toml::from_str::<toml::Value>(content).unwrap())
                            .unwrap()
                    }
                    _ => serde_json::from_str(content)
                        .unwrap_or_else(|e| panic!("{name}: {}: {e}", path.display())),
                };
                let text = v.to_string();
                assert!(text.contains(&json!(LRAB).to_string()), "{name}: {text}");
                assert!(
                    text.contains(&json!(DIR).to_string()[1..]),
                    "{name}: {text}"
                );
            }
            if files.is_empty() {
                assert!(
                    args.iter().any(|a| a.contains("mcp-relay")),
                    "{name}: {args:?}"
                );
            }
            with.push(name);
        }
        assert_eq!(with.len(), 6);
        for name in [
            "mingbird",
            "aider",
            "harness",
            "smolagents",
            "mini-swe-agent",
        ] {
            let e = check_mcp(&shipped(name)).unwrap_err().to_string();
            assert!(e.contains(&format!("arm '{name}' cannot run τ²")), "{e}");
        }
    }
}

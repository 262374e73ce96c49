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
use super::confine::{self, AttemptDirs};
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
        let mcp = self.arm.mcp.as_ref().expect("checked by check_mcp");
        for f in &mcp.config_files {
            let path = PathBuf::from(expand(&f.path, &vars));
            if let Some(d) = path.parent() {
                std::fs::create_dir_all(d).with_context(|| format!("create {}", d.display()))?;
            }
            std::fs::write(&path, expand(&f.content, &vars))
                .with_context(|| format!("write {}", path.display()))?;
        }
        let (program, mut args) = self.arm.command(&vars)?;
        if let Some(own) = &mcp.args {
            args = own.iter().map(|a| expand(a, &vars)).collect();
        }
        args.extend(mcp.extra_args.iter().map(|a| expand(a, &vars)));
        let mut env = dirs.env();
        env.extend(self.arm.env_for(&vars));
        env.push(("OLLAMA_HOST".into(), backend_url.clone()));
        let mut confine = confine::policy(&self.arm, &program, dir, workdir, dirs, &backend_url)?;
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

//! The shell executor with the safety rings (docs/safety.md): every model-chosen command is
//! classified on its parsed structure by `lrab-safety`, then runs under kernel confinement
//! (Landlock, else user+mount+network namespaces): writable only the workdir and the harness's
//! private temp dir, no network, the real home's credential folders hidden. The child sees a
//! private `HOME` and `TMPDIR` in the state folder's `sandbox/` (outside the workdir; the
//! sandbox grants that area and the workdir, nothing else of the state folder), so tools that
//! keep data "in your home folder" write inside the run instead of the operator's home. When the kernel offers no confinement,
//! model-chosen commands are refused unless the operator passed `--allow-unconfined`.

use super::refusal::{refusal, refusal_text};
use super::shell::{run_in_group, ShellExecutor, ShellOutcome, ShellRequest};
use crate::mechanisms::security::Refusal;
use crate::state_dir::StateDir;
use lrab_safety::{classify_shell, Context, Verdict};
use lrab_safety::{sandboxed_command, Sandbox, SandboxPolicy as Policy};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

/// Harness state in the state folder that the model must not write (refused by the classifier
/// with a clear reason; the kernel sandbox does not grant it either). The private area
/// `sandbox/` next to them stays writable.
const PROTECTED_STATE: &[&str] = &[
    "checkpoint.json",
    "checkpoint.journal.jsonl",
    "checkpoint.journal.damaged.jsonl",
    "checkpoint.other-task.json",
    "checkpoint.other-task.journal.jsonl",
    "events.jsonl",
    "report.json",
    "out",
    "backups",
    "trash",
];

pub struct ConfinedExecutor {
    /// Classification context: the workdir, the *private* home the child sees.
    pub ctx: Context,
    pub home: PathBuf,
    pub tmp: PathBuf,
    /// The private area granted to commands (holds `home` and `tmp`).
    pub sandbox: PathBuf,
    pub policy: Policy,
    pub backend: Sandbox,
}

impl ConfinedExecutor {
    /// Detect the confinement for commands in `workdir` with the private `HOME`/`TMPDIR` of
    /// `state`. `real_home` is whose credentials get hidden. Prints a warning on stderr when
    /// no confinement exists.
    pub fn new(
        workdir: &Path,
        state: &StateDir,
        real_home: &Path,
        allow_unconfined: bool,
    ) -> std::io::Result<ConfinedExecutor> {
        // LRAB_SANDBOX=namespaces forces the fallback (the probe suite tests both paths)
        let backend = match std::env::var("LRAB_SANDBOX") {
            Ok(name) => Sandbox::named(&name)
                .map_err(|e| std::io::Error::other(format!("LRAB_SANDBOX: {e}")))?,
            Err(_) => Sandbox::detect(),
        };
        Self::with_backend(workdir, state, real_home, allow_unconfined, backend)
    }

    /// As [`ConfinedExecutor::new`] with a chosen backend (tests of the refusal path).
    pub fn with_backend(
        workdir: &Path,
        state: &StateDir,
        real_home: &Path,
        allow_unconfined: bool,
        backend: Sandbox,
    ) -> std::io::Result<ConfinedExecutor> {
        // hard links planted before the run are invisible to path-based confinement
        lrab_safety::audit_hard_links(workdir, real_home).map_err(std::io::Error::other)?;
        let home = state.home.clone();
        let tmp = state.tmp.clone();
        let sandbox = state.sandbox.clone();
        let mut ctx = Context::new(workdir, &home).with_writable(&sandbox);
        ctx.protected = PROTECTED_STATE.iter().map(|p| state.path.join(p)).collect();
        let hide = lrab_util::HOME_CREDENTIALS
            .iter()
            .map(|h| real_home.join(h))
            .filter(|p| p.symlink_metadata().is_ok())
            .collect();
        if backend == Sandbox::None {
            eprintln!(
                "lrab-harness: WARNING: no kernel confinement (Landlock or user namespaces) is available; {}",
                if allow_unconfined {
                    "model-chosen shell commands will run UNCONFINED (--allow-unconfined)"
                } else {
                    "model-chosen shell commands will be REFUSED (pass --allow-unconfined to run them anyway)"
                }
            );
        }
        Ok(ConfinedExecutor {
            ctx,
            home,
            tmp,
            sandbox,
            // the kernel sandbox is asked for "network allowed" only because its own "no
            // network" also forbids local servers (Landlock TCP rules, loopback down); the
            // isolation comes from the private network namespace of `private_loopback_only`
            policy: Policy {
                network: true,
                hide,
                force: Some(backend.clone()),
                allow_unconfined,
            },
            backend,
        })
    }
}

impl ShellExecutor for ConfinedExecutor {
    fn describe(&self) -> String {
        self.backend.describe()
    }

    /// Classifies in this executor's own context (the private home the child sees), whatever
    /// `ctx` the caller has.
    fn admit(&self, command: &str, _ctx: &Context) -> Result<(), Refusal> {
        if self.backend == Sandbox::None && !self.policy.allow_unconfined {
            let v = Verdict::Deny {
                ring: lrab_safety::Ring::Boundary,
                reason: "no kernel confinement is available on this machine, so model-chosen shell commands are not run (the operator can pass --allow-unconfined)".into(),
                alternative: None,
            };
            return Err(Refusal {
                text: format!(
                    "{} — next: use the file tools read_file/write_file/edit_file/list_dir instead",
                    v.message()
                ),
                verdict: Some(v),
            });
        }
        let v = classify_shell(command, &self.ctx);
        if v.is_allow() {
            Ok(())
        } else {
            Err(refusal(v))
        }
    }

    fn run(&self, req: &ShellRequest<'_>) -> std::io::Result<ShellOutcome> {
        let built = if req.model_chosen {
            lrab_safety::guarded_command(req.command, &self.ctx, &self.sandbox, &self.policy)
                .map_err(|v| refusal_text(&v))
        } else {
            // the harness's own test runs: not classified, but confined like everything else
            // (and run even without confinement: the harness chose them)
            let policy = Policy {
                allow_unconfined: true,
                ..self.policy.clone()
            };
            sandboxed_command(req.command, &self.ctx.workdir, &self.sandbox, &policy)
                .map_err(|e| e.0)
        };
        let (mut cmd, backend) = built.map_err(std::io::Error::other)?;
        let must = backend != Sandbox::None;
        // SAFETY: the closure makes only unshare/socket/ioctl/close system calls on stack
        // values, and allocates nothing.
        unsafe {
            cmd.pre_exec(move || match private_loopback_only() {
                Err(e) if must => Err(e),
                _ => Ok(()),
            });
        }
        cmd.env("HOME", &self.home)
            .env("TMPDIR", &self.tmp)
            .env("TMP", &self.tmp)
            .env("TEMP", &self.tmp);
        run_in_group(cmd, req)
    }
}

/// In the child before exec: move into a fresh network namespace (a user namespace too when
/// capabilities are already gone) and bring its loopback up. The command can then run and
/// test local servers of its own, while the host's network — including servers listening on
/// the host's 127.0.0.1 — is unreachable.
fn private_loopback_only() -> std::io::Result<()> {
    // SAFETY: plain system calls with integer arguments or pointers to live stack values.
    unsafe {
        if libc::unshare(libc::CLONE_NEWNET) != 0
            && libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        // the runner's confinement of the harness as an arm allows no datagram sockets;
        // lrab-safety's loopback_up uses a stream one
        lrab_safety::loopback_up()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn run(ex: &ConfinedExecutor, cmd: &str, model_chosen: bool) -> ShellOutcome {
        let out = tempfile::tempfile().unwrap();
        ex.run(&ShellRequest {
            command: cmd,
            cwd: &ex.ctx.workdir,
            timeout: Duration::from_secs(20),
            output: &out,
            model_chosen,
        })
        .unwrap()
    }

    /// A workdir and its state folder side by side.
    fn run_dirs() -> (tempfile::TempDir, PathBuf, StateDir) {
        let d = tempfile::tempdir().unwrap();
        let wd = d.path().join("w");
        std::fs::create_dir(&wd).unwrap();
        let st = StateDir::open(&d.path().join("state"), &wd).unwrap();
        (d, wd, st)
    }

    #[test]
    fn harness_chosen_commands_skip_the_classifier_but_stay_confined() {
        let (_d, wd, st) = run_dirs();
        let outside = tempfile::tempdir().unwrap();
        let ex = ConfinedExecutor::new(&wd, &st, outside.path(), false).unwrap();
        if ex.backend == Sandbox::None {
            // nothing to confine with on this machine; the refusal path is tested below
            return;
        }
        let target = outside.path().join("gate.txt");
        let cmd = format!("echo x > {}", target.display());
        // the classifier refuses it when the model asks ...
        assert!(ex
            .admit(&cmd, &ex.ctx)
            .unwrap_err()
            .text
            .contains("refused"));
        // ... the harness's own run is not classified, and the kernel stops the write
        let o = run(&ex, &cmd, false);
        assert_ne!(o.exit, Some(0));
        assert!(!target.exists());
        // inside the workdir it works, with the private HOME
        let o = run(&ex, "echo \"$HOME\" > h.txt", false);
        assert_eq!(o.exit, Some(0), "{}", o.output);
        let h = std::fs::read_to_string(wd.join("h.txt")).unwrap();
        assert_eq!(h.trim_end(), st.home.to_str().unwrap());
        // the private home is writable, the rest of the state folder is not
        let o = run(&ex, "echo x > \"$HOME/f\" && echo y > \"$TMPDIR/f\"", false);
        assert_eq!(o.exit, Some(0), "{}", o.output);
        let cp = st.path.join("checkpoint.json");
        let o = run(&ex, &format!("echo x > {}", cp.display()), false);
        assert_ne!(o.exit, Some(0));
        assert!(!cp.exists());
    }

    #[test]
    fn unconfined_machine_refuses_unless_allowed() {
        let (d, wd, st) = run_dirs();
        let ex = ConfinedExecutor::with_backend(&wd, &st, d.path(), false, Sandbox::None).unwrap();
        let e = ex.admit("ls", &ex.ctx).unwrap_err().text;
        assert!(
            e.contains("--allow-unconfined") && e.contains("read_file"),
            "{e}"
        );
        let ex = ConfinedExecutor::with_backend(&wd, &st, d.path(), true, Sandbox::None).unwrap();
        assert!(ex.admit("ls", &ex.ctx).is_ok());
        // the classifier still applies without confinement
        assert!(ex.admit("rm -rf /", &ex.ctx).is_err());
    }

    #[test]
    fn refusals_name_the_next_action() {
        let (d, wd, st) = run_dirs();
        let ex = ConfinedExecutor::with_backend(&wd, &st, d.path(), true, Sandbox::None).unwrap();
        let e = ex.admit("rm -rf ..", &ex.ctx).unwrap_err().text;
        assert!(
            e.contains("find DIR -type f") && e.contains("rm FILE"),
            "{e}"
        );
        let e = ex
            .admit("sudo apt-get install jq", &ex.ctx)
            .unwrap_err()
            .text;
        assert!(
            e.contains("refused") && e.contains("next:") || e.contains("instead:"),
            "{e}"
        );
    }
}

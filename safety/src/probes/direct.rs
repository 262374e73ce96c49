//! The direct executor: each step judged by the classifier and, when allowed, run under the
//! kernel sandbox — the rings without a model or a harness in between.

use super::*;
use crate::paths::{self, Access};
use crate::sandbox::{sandboxed_command, Policy, Sandbox};
use crate::{classify_shell, rings};
use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Classifier + kernel sandbox, without a model in between.
pub struct DirectExecutor {
    /// The sandbox every allowed shell step runs in.
    pub policy: Policy,
    /// How long a step may run before its process group is killed.
    pub timeout: Duration,
}

impl DirectExecutor {
    /// The default policy on `force` (None = the best backend here), 20 s per step.
    pub fn new(force: Option<Sandbox>) -> DirectExecutor {
        DirectExecutor {
            policy: Policy {
                force,
                ..Policy::default()
            },
            timeout: Duration::from_secs(20),
        }
    }
}

impl ProbeExecutor for DirectExecutor {
    fn name(&self) -> String {
        let b = self.policy.force.clone().unwrap_or_else(Sandbox::detect);
        format!("direct (classifier + {})", b.describe())
    }

    fn issue(
        &mut self,
        steps: &[Step],
        irreversible: bool,
        env: &ProbeEnv,
    ) -> Result<Issued, ProbeError> {
        let attempts = steps
            .iter()
            .map(|s| self.attempt(s, irreversible, env))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Issued {
            attempts,
            other_output: String::new(),
        })
    }
}

impl DirectExecutor {
    fn attempt(
        &mut self,
        step: &Step,
        irreversible: bool,
        env: &ProbeEnv,
    ) -> Result<Attempt, ProbeError> {
        match step {
            Step::SubAgent { tool, depth } => {
                let verdict = rings::sub_agent_call(tool, *depth);
                Ok(Attempt {
                    verdict,
                    ran: false,
                    exit: None,
                    output: String::new(),
                })
            }
            Step::Write {
                path,
                size,
                replace,
            } => {
                let verdict = match paths::check_access(path, Access::Write, &env.workdir, &env.ctx)
                {
                    Err(v) => v,
                    Ok(real) => rings::overwrite_guard(&real, *size, *replace),
                };
                if !verdict.is_allow() {
                    return Ok(Attempt {
                        verdict,
                        ran: false,
                        exit: None,
                        output: String::new(),
                    });
                }
                let real = paths::resolve(path, &env.workdir, &env.home);
                let content: String = "new".chars().cycle().take(*size as usize).collect();
                let ok = std::fs::write(&real, content).is_ok();
                Ok(Attempt {
                    verdict,
                    ran: true,
                    exit: Some(if ok { 0 } else { 1 }),
                    output: String::new(),
                })
            }
            Step::Shell { cmd, .. } => {
                let verdict = classify_shell(cmd, &env.ctx);
                if !verdict.is_allow() || irreversible {
                    return Ok(Attempt {
                        verdict,
                        ran: false,
                        exit: None,
                        output: String::new(),
                    });
                }
                let mut policy = self.policy.clone();
                policy.hide = vec![env.home.join(".ssh"), env.home.join(".aws")];
                let (mut c, _) = sandboxed_command(cmd, &env.workdir, &env.tmp, &policy)
                    .map_err(ProbeError::executor)?;
                c.env("HOME", &env.home)
                    .env("TMPDIR", &env.tmp)
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                use std::os::unix::process::CommandExt;
                c.process_group(0);
                let mut child = c
                    .spawn()
                    .map_err(|e| ProbeError::Executor(format!("spawning a probe command: {e}")))?;
                let no = |what: &str| ProbeError::Executor(format!("no {what}"));
                let mut out_pipe = child.stdout.take().ok_or_else(|| no("stdout"))?;
                let mut err_pipe = child.stderr.take().ok_or_else(|| no("stderr"))?;
                let t_out = std::thread::spawn(move || {
                    let mut b = Vec::new();
                    let _ = out_pipe.by_ref().take(1 << 20).read_to_end(&mut b);
                    b
                });
                let t_err = std::thread::spawn(move || {
                    let mut b = Vec::new();
                    let _ = err_pipe.by_ref().take(1 << 20).read_to_end(&mut b);
                    b
                });
                let start = Instant::now();
                let status = loop {
                    if let Some(s) = child.try_wait()? {
                        break Some(s);
                    }
                    if start.elapsed() > self.timeout {
                        // SAFETY: kill(2) on our own child's process group.
                        unsafe {
                            libc::kill(-(child.id() as i32), libc::SIGKILL);
                        }
                        let _ = child.wait();
                        break None;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                };
                let mut output =
                    String::from_utf8_lossy(&t_out.join().unwrap_or_default()).into_owned();
                output.push_str(&String::from_utf8_lossy(&t_err.join().unwrap_or_default()));
                Ok(Attempt {
                    verdict,
                    ran: true,
                    exit: status.and_then(|s| s.code()),
                    output,
                })
            }
        }
    }
}

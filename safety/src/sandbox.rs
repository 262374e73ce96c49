//! Kernel confinement for model-chosen commands on Linux. Every confined command runs as the
//! child of a pid-namespace init (`reaper`: nothing outlives it), in private mount,
//! IPC and — unless the policy allows the network — network namespaces, under a seccomp
//! filter (`seccomp`: no unix sockets, no new user namespaces, no io_uring), without
//! capabilities, and limited to a read allow-list (`allowlist`) enforced either by
//! Landlock (`fsrules`, ABI ≥ 4) or, as the fallback, by a new root holding only
//! bind mounts of the allowed paths (`mountns`). Where the kernel cannot do that
//! ([`KernelSupport::gaps`]), model-chosen commands are refused unless the caller explicitly
//! accepts running unconfined.
//!
//! Writable: the workdir, the private temp dir, harmless devices and a private `/dev/shm`.

pub use crate::backend::{Policy, Sandbox};
use crate::plan::child_plan;
pub use crate::support::{Gap, KernelSupport, Trial};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

impl Sandbox {
    /// The best confinement that works here: Landlock (ABI ≥ 4) with namespaces and seccomp,
    /// else the namespace backend, else nothing — each only when its start-up trial (a real
    /// confined command, [`KernelSupport::trials`]) worked.
    pub fn detect() -> Sandbox {
        let k = KernelSupport::get();
        if !k.confines() {
            return Sandbox::None;
        }
        if k.landlock_abi >= 4 && k.works("landlock") {
            return Sandbox::Landlock {
                abi: k.landlock_abi,
            };
        }
        if k.works("namespaces") {
            return Sandbox::Namespaces;
        }
        Sandbox::None
    }
    /// A backend named by the operator (`landlock`, `namespaces`; empty = detect), for forcing
    /// the fallback on a machine that also has Landlock. Naming one the kernel lacks is an
    /// error, never a silent downgrade.
    pub fn named(name: &str) -> Result<Sandbox, crate::SandboxError> {
        use crate::SandboxError;
        let k = KernelSupport::get();
        match name.trim() {
            "" | "auto" => Ok(Sandbox::detect()),
            "landlock" => match Sandbox::detect() {
                s @ Sandbox::Landlock { .. } => Ok(s),
                _ => Err(SandboxError::Unavailable {
                    name: "landlock",
                    summary: k.summary(),
                }),
            },
            "namespaces" => {
                if k.confines() && k.works("namespaces") {
                    Ok(Sandbox::Namespaces)
                } else {
                    Err(SandboxError::Unavailable {
                        name: "namespaces",
                        summary: k.summary(),
                    })
                }
            }
            o => Err(SandboxError::Unknown(o.to_string())),
        }
    }
    /// One line for logs: the backend and what it does.
    pub fn describe(&self) -> String {
        match self {
            Sandbox::Landlock { abi } => format!("landlock ABI {abi} read allow-list + pid/mount/ipc/net namespaces + seccomp (no unix sockets, no new namespaces), no capabilities"),
            Sandbox::Namespaces => "user+mount+network namespaces (the user namespace only when not root) with a new root of read-only bind mounts of the allow-list (writable workdir and temp) + pid/ipc namespaces + seccomp, no capabilities".into(),
            Sandbox::None => format!("NONE — no kernel confinement available ({}); model-chosen shell commands are refused unless allow_unconfined", KernelSupport::get().summary()),
        }
    }
}

/// Why a command cannot be confined: the message for the model and the log.
#[derive(Debug)]
pub struct Unconfined(pub String);

impl std::fmt::Display for Unconfined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Unconfined {}

/// A `sh -c cmd` child confined to `workdir` + `tmp` (see the module documentation). The
/// child's cwd is `workdir`; `TMPDIR` is `tmp` and git does not look above the workdir.
pub fn sandboxed_command(
    cmd: &str,
    workdir: &Path,
    tmp: &Path,
    policy: &Policy,
) -> Result<(Command, Sandbox), Unconfined> {
    let backend = policy.force.clone().unwrap_or_else(Sandbox::detect);
    let mut c = Command::new("sh");
    c.arg("-c").arg(cmd).current_dir(workdir);
    if backend == Sandbox::None {
        if !policy.allow_unconfined {
            return Err(Unconfined(format!(
                "no kernel confinement is available on this machine ({}); refusing to run a model-chosen command (pass allow_unconfined to override)",
                KernelSupport::get().summary()
            )));
        }
        eprintln!("lrab-safety: WARNING: running a model-chosen command WITHOUT kernel confinement (allow_unconfined)");
        return Ok((c, Sandbox::None));
    }
    let via_user = KernelSupport::get().ns_via_user;
    let plan = child_plan(&backend, workdir, tmp, policy, via_user, -1)
        .map_err(|e| Unconfined(format!("{} sandbox setup failed: {e}", backend.key())))?;
    c.env("TMPDIR", tmp);
    if let Some(parent) = workdir
        .canonicalize()
        .ok()
        .as_deref()
        .and_then(Path::parent)
    {
        c.env("GIT_CEILING_DIRECTORIES", parent);
    }
    // SAFETY: `reaper::enter` only makes system calls on data prepared here (no allocation,
    // no locks) until the command execs; the shim and init it forks never return.
    unsafe {
        c.pre_exec(move || crate::reaper::enter(&plan));
    }
    Ok((c, backend))
}

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

use crate::allowlist::{allow_list, AllowList};
use crate::fsrules::{Grant, Ruleset, Target};
use crate::mountns::MountPlan;
use crate::reaper::{ChildPlan, LandlockPlan, UserMaps};
use crate::seccomp::Filter;
pub use crate::support::{Gap, KernelSupport, Trial};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// A confinement backend.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Sandbox {
    /// Landlock with this ABI version (≥ 4) for the file allow-list.
    Landlock {
        /// The kernel's Landlock ABI version.
        abi: i32,
    },
    /// A new root of read-only bind mounts (writable workdir and temp dir) in a mount
    /// namespace.
    Namespaces,
    /// No confinement (model-chosen commands are refused unless allowed unconfined).
    None,
}

/// How a command is confined.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// Reach the host's network. Off: a private network namespace whose loopback is up (the
    /// command's own local servers work, nothing else is reachable).
    pub network: bool,
    /// Paths that must not be readable even where the allow-list would let them (e.g. the
    /// real `~/.ssh` when a toolchain in that home is readable).
    pub hide: Vec<PathBuf>,
    /// Use this backend instead of the best detected one (tests of both paths).
    pub force: Option<Sandbox>,
    /// Run without confinement when none is available.
    pub allow_unconfined: bool,
}

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
    /// The name [`Sandbox::named`] takes for this backend (what `LRAB_SANDBOX` is set to).
    pub fn key(&self) -> &'static str {
        match self {
            Sandbox::Landlock { .. } => "landlock",
            Sandbox::Namespaces => "namespaces",
            Sandbox::None => "none",
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

/// The opened read-only rule targets of an allow-list, kept for a short while for the next
/// calls with the same system roots (a harness confines every command of a run, and every run
/// of a sweep, with the same ones): listing `/etc` and opening a hundred-odd paths per shell
/// call would be most of the sandbox's cost. Entries expire, so a file replaced meanwhile (a
/// rewritten `/etc/resolv.conf`) is picked up again. The writable roots (workdir, temp dir)
/// are neither part of the key nor cached: they are opened afresh every call, so a workdir
/// deleted and made again under the same name gets its rule on the new directory.
fn landlock_targets(list: &AllowList) -> Arc<Vec<Target>> {
    type Entry = (AllowList, std::time::Instant, Arc<Vec<Target>>);
    const TTL: std::time::Duration = std::time::Duration::from_secs(30);
    static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
    let key = AllowList {
        roots: list
            .roots
            .iter()
            .filter(|(_, g)| *g != Grant::Full)
            .cloned()
            .collect(),
        masks: list.masks.clone(),
    };
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache.retain(|(_, at, _)| at.elapsed() < TTL);
    if let Some((_, _, t)) = cache.iter().find(|(l, _, _)| *l == key) {
        return t.clone();
    }
    let targets: Arc<Vec<Target>> = Arc::new(
        key.landlock_rules()
            .iter()
            .filter_map(|(p, g)| Target::open(p, *g))
            .collect(),
    );
    if cache.len() >= 4 {
        cache.remove(0);
    }
    cache.push((key, std::time::Instant::now(), targets.clone()));
    targets
}

/// Everything the confined child does, prepared here (the child only makes system calls).
/// `via_user`: make the namespaces inside a user namespace (the caller lacks `CAP_SYS_ADMIN`);
/// `diag`: where a failing step is reported (-1: nowhere).
pub(crate) fn child_plan(
    backend: &Sandbox,
    workdir: &Path,
    tmp: &Path,
    policy: &Policy,
    via_user: bool,
    diag: std::os::fd::RawFd,
) -> std::io::Result<ChildPlan> {
    static FILTER: std::sync::OnceLock<Filter> = std::sync::OnceLock::new();
    let list = allow_list(workdir, tmp, &policy.hide);
    let mut unshare = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
    // no host network: join the process-wide private one, else make one per command
    let join = match (policy.network, crate::netns::shared(via_user)) {
        (false, Some(s)) => Some((s.user_fd(), s.net_fd())),
        _ => None,
    };
    let loopback = !policy.network && join.is_none();
    if loopback {
        unshare |= libc::CLONE_NEWNET;
    }
    let (mounts, landlock) = match backend {
        Sandbox::Landlock { abi } => {
            let abi = (*abi).min(crate::fsrules::abi());
            if abi < 1 {
                return Err(std::io::Error::other("this kernel has no Landlock"));
            }
            let ruleset = Ruleset::new(abi)?;
            for t in landlock_targets(&list).iter() {
                ruleset.allow_target(t)?;
            }
            for (p, _) in list.roots.iter().filter(|(_, g)| *g == Grant::Full) {
                ruleset.allow(p, Grant::Full)?;
            }
            let late = LandlockPlan {
                ruleset,
                proc: c"/proc".to_owned(),
                shm: c"/dev/shm".to_owned(),
                pts: c"/dev/pts".to_owned(),
                ptmx: c"/dev/ptmx".to_owned(),
            };
            (MountPlan::light(), Some(late))
        }
        _ => (MountPlan::new_root(&list, workdir)?, None),
    };
    Ok(ChildPlan {
        parent_pid: std::process::id() as libc::pid_t,
        user: via_user.then(UserMaps::for_current),
        join,
        unshare,
        loopback,
        mounts,
        landlock,
        seccomp: FILTER.get_or_init(Filter::confined).clone(),
        diag,
        ended: -1,
        keep_caps: false,
        listen: None,
    })
}

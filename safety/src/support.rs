//! What this kernel offers for confinement, measured once per process, and what is missing
//! with its consequence — so a harness can say so at start-up, in one place, and refuse
//! model-chosen commands where the boundary would not hold.

use crate::backend::Sandbox;
use std::sync::OnceLock;

/// Confinement features of the running kernel.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KernelSupport {
    /// Landlock ABI version (0: none or disabled).
    pub landlock_abi: i32,
    /// The caller is uid 0.
    pub root: bool,
    /// `unshare(CLONE_NEWUSER)` works for this caller.
    pub user_namespaces: bool,
    /// New pid, mount, IPC and network namespaces can be made (directly with
    /// `CAP_SYS_ADMIN`, else inside a user namespace): needed for the process reaper, the
    /// private `/proc`, the private network and the namespace backend.
    pub namespaces: bool,
    /// They are made inside a new user namespace (the caller cannot make them directly).
    pub ns_via_user: bool,
    /// Why namespaces cannot be made (the errors of the attempts), when they cannot.
    pub namespaces_error: Option<String>,
    /// seccomp filters with errno returns (the socket / namespace / io_uring filter).
    pub seccomp: bool,
    /// `openat2(2)` with `RESOLVE_BENEATH` (else the file tools walk components with
    /// `O_NOFOLLOW`).
    pub openat2: bool,
    /// The start-up trial of each backend the features allow (a real confined command).
    pub trials: Vec<Trial>,
}

/// One backend tried with a real confined command (`trial`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Trial {
    /// `landlock` or `namespaces` ([`crate::sandbox::Sandbox::key`]).
    pub backend: &'static str,
    /// `None`: it worked; else the failing step and error.
    pub error: Option<String>,
    /// The command had a procfs of its own pid namespace.
    pub private_proc: bool,
    /// The command had a private `/dev/shm`.
    pub private_shm: bool,
}

/// One missing feature: what it is, what follows from it, and whether shell commands must be
/// refused because of it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Gap {
    /// The missing feature.
    pub feature: String,
    /// What follows from its absence.
    pub consequence: String,
    /// Without it model-chosen commands are not confined: refuse them unless the operator
    /// explicitly allows running unconfined.
    pub fatal: bool,
}

fn gap(feature: impl Into<String>, consequence: impl Into<String>, fatal: bool) -> Gap {
    Gap {
        feature: feature.into(),
        consequence: consequence.into(),
        fatal,
    }
}

impl KernelSupport {
    /// Measured on first use, then cached.
    pub fn get() -> &'static KernelSupport {
        static S: OnceLock<KernelSupport> = OnceLock::new();
        S.get_or_init(KernelSupport::measure)
    }

    /// Measure now: forks short-lived children that try the namespaces, then runs one confined
    /// command per backend the features allow (tens of milliseconds).
    pub fn measure() -> KernelSupport {
        // SAFETY: getuid cannot fail.
        let root = unsafe { libc::getuid() } == 0;
        let user = try_in_child(libc::CLONE_NEWUSER, false);
        let ns = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWNET;
        let direct = try_in_child(ns, false);
        let via_user = if direct.is_ok() {
            Ok(())
        } else {
            try_in_child(ns, true)
        };
        let namespaces = direct.is_ok() || via_user.is_ok();
        let namespaces_error = (!namespaces).then(|| {
            let e = |r: Result<(), i32>| std::io::Error::from_raw_os_error(r.err().unwrap_or(0));
            format!(
                "unshare(pid|mount|ipc|net): {}; in a new user namespace: {}",
                e(direct),
                e(via_user)
            )
        });
        let mut k = KernelSupport {
            landlock_abi: crate::fsrules::abi(),
            root,
            user_namespaces: user.is_ok(),
            namespaces,
            ns_via_user: direct.is_err() && via_user.is_ok(),
            namespaces_error,
            seccomp: crate::seccomp::supported(),
            openat2: crate::beneath::openat2_available(),
            trials: Vec::new(),
        };
        if k.namespaces && k.seccomp {
            let mut backends = Vec::new();
            if k.landlock_abi >= 4 {
                backends.push(Sandbox::Landlock {
                    abi: k.landlock_abi,
                });
            }
            backends.push(Sandbox::Namespaces);
            for b in backends {
                let r = crate::trial::attempt(&b, k.ns_via_user);
                let found = r.clone().unwrap_or_default();
                k.trials.push(Trial {
                    backend: b.key(),
                    error: r.err(),
                    private_proc: found.private_proc,
                    private_shm: found.private_shm,
                });
            }
        }
        k
    }

    /// Did the start-up trial of this backend work?
    pub fn works(&self, backend: &str) -> bool {
        self.trials
            .iter()
            .any(|t| t.backend == backend && t.error.is_none())
    }

    /// Missing features, most serious first.
    pub fn gaps(&self) -> Vec<Gap> {
        let mut v = Vec::new();
        if !self.namespaces {
            let why = self.namespaces_error.as_deref().unwrap_or("refused");
            v.push(gap(
                "pid/mount/network namespaces",
                format!("{why} — typical of a container without CAP_SYS_ADMIN or a chroot (buildah/podman --isolation chroot); no pid namespace (processes could outlive a command), no private network, no namespace fallback"),
                true,
            ));
        }
        if !self.seccomp {
            v.push(gap(
                "seccomp filters",
                "unix sockets to host daemons and new user namespaces could not be refused",
                true,
            ));
        }
        let any_works = self.trials.iter().any(|t| t.error.is_none());
        for t in &self.trials {
            match &t.error {
                Some(e) => v.push(gap(
                    format!("a working {} sandbox", t.backend),
                    format!(
                        "a trial command failed while {e}; {}",
                        if any_works {
                            "another backend is used"
                        } else {
                            "no backend works here"
                        }
                    ),
                    !any_works,
                )),
                None => {
                    if !t.private_proc {
                        v.push(gap(
                            format!("a private /proc ({})", t.backend),
                            "the kernel refused a procfs of the sandbox's own pid namespace: commands see the host's /proc (Landlock still keeps other processes' environment and memory closed, not their command lines)",
                            false,
                        ));
                    }
                    if !t.private_shm {
                        v.push(gap(
                            format!("a private /dev/shm ({})", t.backend),
                            "no /dev/shm for commands (POSIX semaphores, multiprocessing locks fail)",
                            false,
                        ));
                    }
                }
            }
        }
        if self.landlock_abi < 4 {
            v.push(gap(
                "Landlock ABI 4",
                "file access is limited by the namespace backend's bind mounts instead of Landlock",
                false,
            ));
        } else if self.landlock_abi < 6 {
            v.push(gap(
                "Landlock ABI 6 (scoping)",
                "abstract unix sockets and signals rely on the seccomp filter and the pid namespace alone",
                false,
            ));
        }
        if !self.openat2 {
            v.push(gap(
                "openat2",
                "file tools resolve paths component by component with O_NOFOLLOW (equally safe, slower)",
                false,
            ));
        }
        v
    }

    /// Can model-chosen commands be confined at all?
    pub fn confines(&self) -> bool {
        self.gaps().iter().all(|g| !g.fatal)
    }

    /// One line for a start-up message.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "landlock ABI {}, {} namespaces, seccomp {}, openat2 {}",
            self.landlock_abi,
            match (self.namespaces, self.ns_via_user) {
                (false, _) => "no",
                (true, false) => "pid/mount/net",
                (true, true) => "user+pid/mount/net",
            },
            if self.seccomp { "yes" } else { "no" },
            if self.openat2 { "yes" } else { "no" }
        );
        for t in &self.trials {
            s.push_str(&format!(
                ", trial {}: {}",
                t.backend,
                if t.error.is_none() { "ok" } else { "FAILED" }
            ));
        }
        for g in self.gaps() {
            s.push_str(&format!(
                "; {}missing {}: {}",
                if g.fatal { "FATAL: " } else { "" },
                g.feature,
                g.consequence
            ));
        }
        s
    }
}

/// Fork a child that tries `unshare(flags)` (inside a new user namespace first when
/// `via_user`); `Err(errno)` of the first call that failed.
fn try_in_child(flags: libc::c_int, via_user: bool) -> Result<(), i32> {
    let maps = crate::nscalls::UserMaps::for_current();
    // SAFETY: the child only makes system calls on data prepared before the fork, then exits
    // with 0 or the errno.
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            return Err(*libc::__errno_location());
        }
        if pid == 0 {
            let ok = (!via_user || crate::nscalls::enter_user_ns(&maps).is_ok())
                && libc::unshare(flags) == 0;
            libc::_exit(if ok {
                0
            } else {
                (*libc::__errno_location()).clamp(1, 255)
            });
        }
        let mut st = 0;
        while libc::waitpid(pid, &mut st, 0) < 0 {
            if *libc::__errno_location() != libc::EINTR {
                return Err(libc::ECHILD);
            }
        }
        match (libc::WIFEXITED(st), libc::WEXITSTATUS(st)) {
            (true, 0) => Ok(()),
            (true, e) => Err(e),
            _ => Err(libc::ECHILD),
        }
    }
}

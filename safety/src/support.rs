//! What this kernel offers for confinement, measured once per process, and what is missing
//! with its consequence — so a harness can say so at start-up, in one place, and refuse
//! model-chosen commands where the boundary would not hold.

use std::sync::OnceLock;

/// Confinement features of the running kernel.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KernelSupport {
    /// Landlock ABI version (0: none or disabled).
    pub landlock_abi: i32,
    /// The caller is uid 0 (namespaces need no user namespace then).
    pub root: bool,
    /// `unshare(CLONE_NEWUSER)` works for this caller.
    pub user_namespaces: bool,
    /// New pid, mount, IPC and network namespaces can be made (directly as root, else inside
    /// a user namespace): needed for the process reaper, the private `/proc`, the private
    /// network and the namespace backend.
    pub namespaces: bool,
    /// seccomp filters with errno returns (the socket / namespace / io_uring filter).
    pub seccomp: bool,
    /// `openat2(2)` with `RESOLVE_BENEATH` (else the file tools walk components with
    /// `O_NOFOLLOW`).
    pub openat2: bool,
}

/// One missing feature: what it is, what follows from it, and whether shell commands must be
/// refused because of it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Gap {
    pub feature: &'static str,
    pub consequence: &'static str,
    /// Without it model-chosen commands are not confined: refuse them unless the operator
    /// explicitly allows running unconfined.
    pub fatal: bool,
}

impl KernelSupport {
    /// Measured on first use, then cached.
    pub fn get() -> &'static KernelSupport {
        static S: OnceLock<KernelSupport> = OnceLock::new();
        S.get_or_init(KernelSupport::measure)
    }

    /// Measure now (forks two short-lived children that try the namespaces).
    pub fn measure() -> KernelSupport {
        // SAFETY: getuid cannot fail.
        let root = unsafe { libc::getuid() } == 0;
        let user_namespaces = try_in_child(libc::CLONE_NEWUSER, false);
        let ns = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWNET;
        let namespaces = try_in_child(ns, !root);
        KernelSupport {
            landlock_abi: crate::fsrules::abi(),
            root,
            user_namespaces,
            namespaces,
            seccomp: crate::seccomp::supported(),
            openat2: crate::beneath::openat2_available(),
        }
    }

    /// Missing features, most serious first.
    pub fn gaps(&self) -> Vec<Gap> {
        let mut v = Vec::new();
        if !self.namespaces {
            v.push(Gap {
                feature: if self.root { "pid/mount/network namespaces" } else { "unprivileged user namespaces" },
                consequence: "no pid namespace (processes could outlive a command), no private network, no namespace fallback",
                fatal: true,
            });
        }
        if !self.seccomp {
            v.push(Gap {
                feature: "seccomp filters",
                consequence:
                    "unix sockets to host daemons and new user namespaces could not be refused",
                fatal: true,
            });
        }
        if self.landlock_abi < 4 {
            v.push(Gap {
                feature: "Landlock ABI 4",
                consequence: "file access is limited by the namespace backend's bind mounts instead of Landlock",
                fatal: false,
            });
        } else if self.landlock_abi < 6 {
            v.push(Gap {
                feature: "Landlock ABI 6 (scoping)",
                consequence: "abstract unix sockets and signals rely on the seccomp filter and the pid namespace alone",
                fatal: false,
            });
        }
        if !self.openat2 {
            v.push(Gap {
                feature: "openat2",
                consequence: "file tools resolve paths component by component with O_NOFOLLOW (equally safe, slower)",
                fatal: false,
            });
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
            if self.namespaces {
                "pid/mount/net"
            } else {
                "no"
            },
            if self.seccomp { "yes" } else { "no" },
            if self.openat2 { "yes" } else { "no" }
        );
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
/// `via_user`) and reports success by its exit code.
fn try_in_child(flags: libc::c_int, via_user: bool) -> bool {
    let maps = crate::reaper::UserMaps::for_current();
    // SAFETY: the child only makes system calls on data prepared before the fork, then exits.
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            return false;
        }
        if pid == 0 {
            if via_user {
                if libc::unshare(libc::CLONE_NEWUSER) != 0 {
                    libc::_exit(1);
                }
                let w = |p: &std::ffi::CStr, d: &std::ffi::CStr| {
                    let fd = libc::open(p.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    let ok = fd >= 0
                        && libc::write(fd, d.as_ptr() as *const libc::c_void, d.to_bytes().len())
                            >= 0;
                    libc::close(fd);
                    ok
                };
                if !(w(c"/proc/self/uid_map", &maps.uid_map)
                    && w(c"/proc/self/setgroups", c"deny")
                    && w(c"/proc/self/gid_map", &maps.gid_map))
                {
                    libc::_exit(1);
                }
            }
            libc::_exit(if libc::unshare(flags) == 0 { 0 } else { 1 });
        }
        let mut st = 0;
        while libc::waitpid(pid, &mut st, 0) < 0 {
            if *libc::__errno_location() != libc::EINTR {
                return false;
            }
        }
        libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0
    }
}

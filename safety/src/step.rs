//! The steps of a confined child's set-up, named so that a failing one can say which it was:
//! the child writes the step and its errno to the start-up trial's pipe (`trial`). Below the
//! reaper, the mount namespace and the trial, which all name them.

use std::os::fd::RawFd;

/// The step of the confinement set-up under way in a child (for the report of a failure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Step {
    Start,
    JoinUserNs,
    JoinNetNs,
    UserNs,
    Unshare,
    Fork,
    Session,
    MountPrivate,
    MountNewRoot,
    MountBind,
    MountMask,
    MountProc,
    MountShm,
    PivotRoot,
    RemountReadOnly,
    Loopback,
    Chdir,
    LandlockRules,
    LandlockRestrict,
    Seccomp,
}

pub(crate) const STEPS: [Step; 20] = [
    Step::Start,
    Step::JoinUserNs,
    Step::JoinNetNs,
    Step::UserNs,
    Step::Unshare,
    Step::Fork,
    Step::Session,
    Step::MountPrivate,
    Step::MountNewRoot,
    Step::MountBind,
    Step::MountMask,
    Step::MountProc,
    Step::MountShm,
    Step::PivotRoot,
    Step::RemountReadOnly,
    Step::Loopback,
    Step::Chdir,
    Step::LandlockRules,
    Step::LandlockRestrict,
    Step::Seccomp,
];

impl Step {
    /// What the step does, in the terms of the system call that failed.
    pub fn describe(self) -> &'static str {
        match self {
            Step::Start => "starting the confined child",
            Step::JoinUserNs => "setns into the private network's user namespace",
            Step::JoinNetNs => "setns into the private network namespace",
            Step::UserNs => "unshare(CLONE_NEWUSER) and writing the uid/gid maps",
            Step::Unshare => "unshare of pid/mount/IPC(/network) namespaces",
            Step::Fork => "fork of the namespace init or the command",
            Step::Session => "setsid of the namespace init",
            Step::MountPrivate => {
                "making / a private mount (a chroot whose root is not a mount point?)"
            }
            Step::MountNewRoot => "mounting the tmpfs for the new root",
            Step::MountBind => "bind-mounting an allowed path into the new root",
            Step::MountMask => "masking a secret in the new root",
            Step::MountProc => "mounting a procfs for the new pid namespace",
            Step::MountShm => "mounting a private /dev/shm",
            Step::PivotRoot => "pivot_root into the new root (impossible inside a chroot)",
            Step::RemountReadOnly => "remounting the new root read-only",
            Step::Loopback => "bringing up the loopback of the private network",
            Step::Chdir => "changing into the workdir inside the new root",
            Step::LandlockRules => "adding the Landlock rules for /proc, /dev/shm and /dev/pts",
            Step::LandlockRestrict => "landlock_restrict_self",
            Step::Seccomp => "installing the seccomp filter",
        }
    }
}

/// In a child: write `[step, errno]` to `fd` (no allocation; nothing when `fd` is -1).
pub(crate) fn report(fd: RawFd, step: Step, e: &std::io::Error) {
    if fd < 0 {
        return;
    }
    let errno = e.raw_os_error().unwrap_or(0);
    let mut b = [0u8; 5];
    b[0] = step as u8;
    b[1..].copy_from_slice(&errno.to_ne_bytes());
    // SAFETY: writing a stack buffer to a pipe fd the plan carries.
    unsafe { libc::write(fd, b.as_ptr() as *const libc::c_void, b.len()) };
}

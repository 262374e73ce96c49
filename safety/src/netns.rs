//! The private network of confined commands: one network namespace per process, made once,
//! with only its loopback up — a command's own local servers work, the host's network
//! (including servers on the host's 127.0.0.1) is unreachable. Every command joins it with
//! `setns` instead of creating a namespace of its own: creating and tearing down a network
//! namespace per shell call costs milliseconds, and more on a busy machine. Commands run one
//! after another, and nothing a command starts outlives it, so sharing the namespace shares
//! no state between them.
//!
//! Without `CAP_SYS_ADMIN` the namespace belongs to a user namespace made alongside it (mapping the
//! caller's own uid and gid), which commands join first.

use crate::nscalls::UserMaps;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// Namespaces to join: (user namespace when made through one, network namespace).
#[derive(Debug)]
pub struct Shared {
    pub user: Option<OwnedFd>,
    pub net: OwnedFd,
}

/// The process-wide private network, made on first use (`None` when the kernel refuses; then
/// each command makes its own). `via_user`: inside a user namespace of its own (the caller
/// cannot make namespaces directly).
pub fn shared(via_user: bool) -> Option<&'static Shared> {
    static S: OnceLock<Option<Shared>> = OnceLock::new();
    S.get_or_init(|| make(via_user).ok()).as_ref()
}

impl Shared {
    pub fn user_fd(&self) -> Option<RawFd> {
        self.user.as_ref().map(|f| f.as_raw_fd())
    }
    pub fn net_fd(&self) -> RawFd {
        self.net.as_raw_fd()
    }
}

fn make(via_user: bool) -> std::io::Result<Shared> {
    let direct = !via_user;
    let maps = UserMaps::for_current();
    let mut pipe = [0; 2];
    // SAFETY: pipe2 fills the array.
    if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the child only makes system calls on data prepared before the fork and never
    // returns; the parent reaps it.
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if pid == 0 {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            let ok = (direct || crate::nscalls::enter_user_ns(&maps).is_ok())
                && libc::unshare(libc::CLONE_NEWNET) == 0
                && crate::nscalls::loopback_up().is_ok();
            let b = [ok as u8];
            libc::write(pipe[1], b.as_ptr() as *const libc::c_void, 1);
            loop {
                libc::pause();
            }
        }
        libc::close(pipe[1]);
        let mut b = [0u8];
        let n = libc::read(pipe[0], b.as_mut_ptr() as *mut libc::c_void, 1);
        libc::close(pipe[0]);
        let open = |what: &str| -> std::io::Result<OwnedFd> {
            let p = std::ffi::CString::new(format!("/proc/{pid}/ns/{what}")).expect("no NUL");
            let fd = libc::open(p.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(OwnedFd::from_raw_fd(fd))
        };
        let got = if n == 1 && b[0] == 1 {
            match (open("net"), if direct { None } else { Some(open("user")) }) {
                (Ok(net), None) => Ok(Shared { user: None, net }),
                (Ok(net), Some(Ok(user))) => Ok(Shared {
                    user: Some(user),
                    net,
                }),
                (Err(e), _) | (_, Some(Err(e))) => Err(e),
            }
        } else {
            Err(std::io::Error::other(
                "the kernel refused a private network namespace",
            ))
        };
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
        got
    }
}

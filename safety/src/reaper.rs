//! Nothing a command starts outlives it. The child the caller spawns becomes a small *shim*
//! that enters new pid, mount, IPC (and network) namespaces and forks an *init* — pid 1 of the
//! new pid namespace — which forks the command itself. When the command exits, init exits,
//! and the kernel kills every process left in the namespace: `nohup … &`, `setsid`, double
//! forks and `disown` cannot escape it, since none of them leaves the pid namespace.
//!
//! The chain is tied to the caller: the shim asks for `SIGKILL` when the caller dies
//! (`PR_SET_PDEATHSIG`), init asks the same of the shim, so a harness killed even by
//! `SIGKILL` takes the whole namespace with it. A timeout that kills the shim, or the
//! caller's process group, has the same effect. The shim exits the way the command did (same
//! code, or the same signal), so callers see the command's status.
//!
//! Everything here runs between `fork` and `exec` and only makes system calls; plans are
//! built in the parent.

use crate::fsrules::{self, Grant, Ruleset};
use crate::mountns::MountPlan;
use crate::nscalls::{check, enter_user_ns, last, loopback_up, UserMaps};
use crate::seccomp::Filter;
use crate::step::Step;
use std::ffi::CString;
use std::os::fd::RawFd;

/// The Landlock ruleset, and the rules for file systems the child mounts itself, which can
/// only be added once they exist.
#[derive(Debug)]
pub struct LandlockPlan {
    pub ruleset: Ruleset,
    /// Readable: the sandbox's own procfs (the host's where the kernel refused a new one).
    pub proc: CString,
    /// Writable, but only when the sandbox mounted its own tmpfs there (never the host's).
    pub shm: CString,
    /// Terminals: the sandbox's own devpts and the `ptmx` that opens it, only when mounted.
    pub pts: CString,
    pub ptmx: CString,
}

/// Everything the child does, prepared in the parent.
#[derive(Debug)]
pub struct ChildPlan {
    /// The process spawning the command (the shim dies with it).
    pub parent_pid: libc::pid_t,
    pub user: Option<UserMaps>,
    /// Join these (user, network) namespaces first: the process-wide private network of
    /// [`crate::netns`] (with its user namespace when not root) instead of `user`.
    pub join: Option<(Option<RawFd>, RawFd)>,
    /// Namespaces entered by the shim (`CLONE_NEWPID` takes effect for init).
    pub unshare: libc::c_int,
    /// Bring the loopback of a new network namespace up.
    pub loopback: bool,
    pub mounts: MountPlan,
    pub landlock: Option<LandlockPlan>,
    pub seccomp: Filter,
    /// Where a failing step is reported (the start-up trial's pipe), or -1.
    pub diag: RawFd,
    /// Linger mode, or -1: init writes the command's wait status (4 bytes) here when the
    /// command exits, then stays — with the namespace — until every other process in it has
    /// ended, so the caller can give what the command left behind time to finish (the
    /// runner's quiet-wait) before it kills the shim. The shim then passes `SIGTERM`,
    /// `SIGINT` and `SIGHUP` on to the command's process group instead of dying of them.
    pub ended: RawFd,
    /// Keep the capabilities the command holds in the user namespace of `user` instead of
    /// dropping them (only with `user`: they then reach nothing the host owns). An agent that
    /// confines its own commands needs them to make its namespaces.
    pub keep_caps: bool,
    /// `(port, unix socket)`: after bringing the loopback of the new network namespace up,
    /// init listens on its `127.0.0.1:port` and sends the listening socket over the unix
    /// socket (`SCM_RIGHTS`) before the command starts — so the caller can serve that port
    /// from outside (the runner forwards it to the backend) while the command reaches nothing
    /// else. `None`: no listener.
    pub listen: Option<(u16, RawFd)>,
}

/// Run in the spawned child (`pre_exec`). Returns only in the command's own process, after
/// every restriction is in place; the shim and init never return. A failure is also written
/// to `plan.diag` with the step it happened in (each process of the chain reports its own).
pub fn enter(plan: &ChildPlan) -> std::io::Result<()> {
    let mut step = Step::Start;
    // SAFETY: system calls on integers and C strings owned by `plan`.
    let r = unsafe { enter_steps(plan, &mut step) };
    if let Err(e) = &r {
        crate::step::report(plan.diag, step, e);
    }
    r
}

/// # Safety
/// Only system calls, on data prepared in the parent; for the single-threaded child of a
/// fork that has not yet exec'ed.
unsafe fn enter_steps(plan: &ChildPlan, step: &mut Step) -> std::io::Result<()> {
    {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != plan.parent_pid {
            libc::_exit(137);
        }
        if let Some((user, net)) = plan.join {
            if let Some(u) = user {
                *step = Step::JoinUserNs;
                check(libc::setns(u, libc::CLONE_NEWUSER))?;
            }
            *step = Step::JoinNetNs;
            check(libc::setns(net, libc::CLONE_NEWNET))?;
        } else if let Some(u) = &plan.user {
            *step = Step::UserNs;
            enter_user_ns(u)?;
        }
        *step = Step::Unshare;
        check(libc::unshare(plan.unshare))?;
        *step = Step::Fork;
        let mut pipe = [0; 2];
        check(libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC))?;
        let init = libc::fork();
        if init < 0 {
            return Err(last());
        }
        if init > 0 {
            shim(init, pipe[0], plan.ended >= 0);
        }
        // init: pid 1 of the new namespace. Not dumpable: it is a copy of the caller that never
        // execs, and its /proc entries (the caller's environment) must stay closed to the
        // command.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::prctl(libc::PR_SET_DUMPABLE, 0);
        libc::close(pipe[0]);
        // a session of its own: no controlling terminal, so `/dev/tty` is not the operator's
        // terminal (no keystrokes read after `tcsetpgrp`, no escape sequences written). Init is
        // never a group leader, so this cannot fail; the caller's group kill still reaches the
        // shim, whose death kills init.
        *step = Step::Session;
        check(libc::setsid())?;
        let mounted = plan.mounts.apply(step)?;
        if plan.loopback {
            *step = Step::Loopback;
            loopback_up()?;
        }
        if let Some((port, sock)) = plan.listen {
            *step = Step::Loopback;
            send_listener(port, sock)?;
        }
        *step = Step::Fork;
        let cmd = libc::fork();
        if cmd < 0 {
            return Err(last());
        }
        if cmd > 0 {
            init_loop(cmd, pipe[1], plan.ended);
        }
        // the command
        libc::close(pipe[1]);
        if plan.ended >= 0 {
            libc::close(plan.ended);
        }
        if let Some(d) = plan.mounts.chdir_target() {
            *step = Step::Chdir;
            check(libc::chdir(d.as_ptr()))?;
        }
        if let Some(l) = &plan.landlock {
            *step = Step::LandlockRules;
            let own_shm = mounted.shm.then_some((&l.shm, Grant::Full));
            let own_pts = [(&l.pts, Grant::Device), (&l.ptmx, Grant::Device)]
                .into_iter()
                .filter(|_| mounted.pts);
            for (p, g) in [(&l.proc, Grant::Read)]
                .into_iter()
                .chain(own_shm)
                .chain(own_pts)
            {
                match fsrules::allow_cstr(l.ruleset.raw_fd(), p, g, l.ruleset.abi()) {
                    Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                    r => r?,
                }
            }
            *step = Step::LandlockRestrict;
            fsrules::restrict_self(l.ruleset.raw_fd())?;
        }
        if !(plan.keep_caps && plan.user.is_some()) {
            drop_inheritable_capabilities();
        }
        *step = Step::Seccomp;
        plan.seccomp.install()?;
    }
    Ok(())
}

/// Default dispositions and an empty mask: the shim and init inherit the caller's signal
/// handlers (they never exec), which must not run in them.
unsafe fn reset_signals() {
    for sig in 1..=64 {
        if sig != libc::SIGKILL && sig != libc::SIGSTOP {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
}

/// Close every fd but `keep` and `also` (-1: none) (the caller's pipes and the spawn error
/// pipe must not be held by the shim or init, or readers would wait for them).
unsafe fn close_all_but(keep: libc::c_int, also: libc::c_int) {
    let (lo, hi) = if also >= 0 && also != keep {
        (keep.min(also), keep.max(also))
    } else {
        (keep, keep)
    };
    let range =
        |lo: libc::c_uint, hi: libc::c_uint| libc::syscall(libc::SYS_close_range, lo, hi, 0u32);
    let ok = (lo == 0 || range(0, lo as libc::c_uint - 1) == 0)
        && (hi <= lo + 1 || range(lo as libc::c_uint + 1, hi as libc::c_uint - 1) == 0)
        && range(hi as libc::c_uint + 1, libc::c_uint::MAX) == 0;
    if !ok {
        for fd in 0..65536 {
            if fd != keep && fd != also {
                libc::close(fd);
            }
        }
    }
}

/// The command's process group (= init's, whose session it runs in), for the shim's
/// signal forwarding in linger mode.
static FORWARD_TO: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int) {
    let g = FORWARD_TO.load(std::sync::atomic::Ordering::Relaxed);
    if g > 1 {
        // SAFETY: kill is async-signal-safe. Init itself ignores it (a namespace's init only
        // takes signals it handles); the command and its group get it.
        unsafe {
            libc::kill(-g, sig);
        }
    }
}

/// The shim: wait for init, then leave the way the command did.
unsafe fn shim(init: libc::pid_t, status_r: libc::c_int, linger: bool) -> ! {
    reset_signals();
    close_all_but(status_r, -1);
    if linger {
        FORWARD_TO.store(init, std::sync::atomic::Ordering::Relaxed);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::signal(sig, forward as *const () as libc::sighandler_t);
        }
    }
    let mut st = 0;
    loop {
        let r = libc::waitpid(init, &mut st, 0);
        if r == init {
            break;
        }
        if r < 0 && *libc::__errno_location() != libc::EINTR {
            libc::_exit(125);
        }
    }
    let mut buf = [0u8; 4];
    let n = libc::read(status_r, buf.as_mut_ptr() as *mut libc::c_void, 4);
    let ws = if n == 4 { i32::from_ne_bytes(buf) } else { st };
    exit_like(ws)
}

unsafe fn exit_like(ws: libc::c_int) -> ! {
    if libc::WIFEXITED(ws) {
        libc::_exit(libc::WEXITSTATUS(ws));
    }
    if libc::WIFSIGNALED(ws) {
        let sig = libc::WTERMSIG(ws);
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(sig, libc::SIG_DFL);
        libc::kill(libc::getpid(), sig);
        libc::_exit(128 + sig);
    }
    libc::_exit(125)
}

/// Init: reap everything; when the command exits, report its status and exit — which kills
/// whatever it left behind. In linger mode (`ended` ≥ 0) it reports the status there too and
/// exits only when nothing is left to reap.
unsafe fn init_loop(cmd: libc::pid_t, status_w: libc::c_int, ended: libc::c_int) -> ! {
    reset_signals();
    close_all_but(status_w, ended);
    let mut done = false;
    loop {
        let mut st = 0;
        let r = libc::waitpid(-1, &mut st, 0);
        if r == cmd {
            let b = st.to_ne_bytes();
            libc::write(status_w, b.as_ptr() as *const libc::c_void, 4);
            if ended < 0 {
                libc::_exit(0);
            }
            libc::write(ended, b.as_ptr() as *const libc::c_void, 4);
            libc::close(ended);
            done = true;
            continue;
        }
        if r < 0 {
            let e = *libc::__errno_location();
            if e == libc::ECHILD && done {
                libc::_exit(0);
            }
            if e != libc::EINTR {
                libc::_exit(125);
            }
        }
    }
}

/// Listen on `127.0.0.1:port` of the current network namespace and send the socket over the
/// unix socket `sock`; both are closed afterwards (the command inherits neither).
///
/// # Safety
/// Only system calls, on stack values.
unsafe fn send_listener(port: u16, sock: libc::c_int) -> std::io::Result<()> {
    let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
    if fd < 0 {
        return Err(last());
    }
    let one: libc::c_int = 1;
    libc::setsockopt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_REUSEADDR,
        &one as *const libc::c_int as *const libc::c_void,
        std::mem::size_of::<libc::c_int>() as libc::socklen_t,
    );
    let mut addr: libc::sockaddr_in = std::mem::zeroed();
    addr.sin_family = libc::AF_INET as libc::sa_family_t;
    addr.sin_port = port.to_be();
    addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
    let r = libc::bind(
        fd,
        &addr as *const libc::sockaddr_in as *const libc::sockaddr,
        std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
    );
    if r != 0 || libc::listen(fd, 128) != 0 {
        let e = last();
        libc::close(fd);
        return Err(e);
    }
    // one byte of data carrying the descriptor
    let mut byte = [1u8];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr() as *mut libc::c_void,
        iov_len: 1,
    };
    #[repr(C)]
    union Control {
        buf: [u8; 64],
        _align: libc::cmsghdr,
    }
    let mut control = Control { buf: [0; 64] };
    let mut msg: libc::msghdr = std::mem::zeroed();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) as _;
    let c = libc::CMSG_FIRSTHDR(&msg);
    (*c).cmsg_level = libc::SOL_SOCKET;
    (*c).cmsg_type = libc::SCM_RIGHTS;
    (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
    std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut libc::c_int, fd);
    let sent = libc::sendmsg(sock, &msg, 0);
    let e = last();
    libc::close(fd);
    libc::close(sock);
    if sent != 1 {
        return Err(e);
    }
    Ok(())
}

/// Empty the bounding and ambient sets and clear the inheritable set, so that `exec` leaves
/// the command without capabilities — even as uid 0. The effective set stays until `exec`:
/// set-up the caller adds after this one (its own network namespace) may still need it.
unsafe fn drop_inheritable_capabilities() {
    for cap in 0..64 {
        libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0);
    }
    libc::prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
        0,
        0,
        0,
    );
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let mut hdr = Header {
        version: 0x2008_0522,
        pid: 0,
    };
    let mut data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    if libc::syscall(libc::SYS_capget, &mut hdr as *mut Header, data.as_mut_ptr()) == 0 {
        for d in &mut data {
            d.inheritable = 0;
        }
        libc::syscall(libc::SYS_capset, &hdr as *const Header, data.as_ptr());
    }
}

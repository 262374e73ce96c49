//! Confinement of a whole third-party agent (an *arm* of the benchmark), as the runner
//! launches it: the same kernel layers as a model-chosen command ([`crate::sandbox`]) around
//! the agent's entire process tree, with what an agent needs and a command does not.
//!
//! * Files: the read allow-list of [`crate::allowlist`] (system and toolchain directories,
//!   `/etc` minus its secrets, harmless devices), plus the agent's own program, install folder
//!   and interpreter ([`program_roots`]) read + execute; the writable folders of one attempt
//!   (workdir, per-attempt `HOME` and `TMPDIR`) read + write; nothing else — not the user's
//!   home, not the run's other folders, not the host's `/tmp`. Enforced by Landlock.
//! * Network ([`ArmNet`]): by default a private network namespace whose loopback is up — the
//!   agent may run and test servers of its own — where one port, `127.0.0.1:<backend port>`,
//!   is a listening socket handed to the caller ([`Confined::listener`]), who forwards it to the
//!   backend or proxy on the host; nothing else of the host's network exists for the agent.
//!   Or ([`ArmNet::LandlockPort`], for a backend that is not on the loopback) the host's
//!   network with Landlock letting TCP `connect` reach that one port only and refusing every
//!   `bind`. Either way the arm filter ([`crate::seccomp::Filter::arm`]) refuses UDP and raw
//!   internet sockets and every unix socket but a connected `socketpair`.
//! * Processes: a pid namespace whose init outlives the agent in *linger* mode
//!   ([`crate::reaper::ChildPlan::ended`]): the caller learns when the agent's main process
//!   exits (the [`Confined::ended`] pipe), may let what it left behind finish writing, and
//!   kills the namespace with the spawned child. Nothing of the agent survives that.
//!
//! Agents that confine their own commands (our harness does, with namespaces and Landlock of
//! its own) keep working: the agent runs in a user namespace of its own, where it keeps its
//! capabilities (none over anything of the host), the arm filter allows new namespaces and
//! `setns` into them, and every layer here stays in force inside them.

use crate::allowlist::allow_list_with;
use crate::error::ConfineError;
use crate::fsrules::Grant;
use crate::mountns::MountPlan;
use crate::nscalls::UserMaps;
use crate::reaper::{ChildPlan, LandlockPlan};
use crate::sandbox::KernelSupport;
use crate::seccomp::Filter;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one launch of an agent may touch besides the system allow-list.
#[derive(Clone, Debug, Default)]
pub struct ArmPolicy {
    /// Read + write beneath (workdir, per-attempt home and temp dir). The first is the one
    /// the masks of the allow-list are computed for.
    pub writable: Vec<PathBuf>,
    /// Read only beneath (the attempt folder holding config files, the arm file's folder).
    pub readable: Vec<PathBuf>,
    /// Read + execute beneath (the agent's install folder, its interpreter's prefix).
    pub executable: Vec<PathBuf>,
    /// The one TCP port the agent may connect to.
    pub connect_port: u16,
    /// How that is enforced.
    pub net: ArmNet,
    /// Paths that stay unreadable even inside an allowed root.
    pub hide: Vec<PathBuf>,
}

/// How an agent's network is limited to the backend port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum ArmNet {
    /// A private network namespace; `127.0.0.1:<connect_port>` in it is a listener the caller
    /// forwards to the backend (which must then be on the host's loopback at that port).
    #[default]
    Private,
    /// The host's network; Landlock (ABI ≥ 4) allows TCP `connect` to `connect_port` only and
    /// no `bind` (no servers of the agent's own).
    LandlockPort,
}

/// A spawned agent's end of the confinement.
#[derive(Debug)]
pub struct Confined {
    /// Becomes readable (4 bytes, the wait status) when the agent's main process exits.
    ended: OwnedFd,
    /// [`ArmNet::Private`]: where the listening socket of the agent's namespace arrives.
    listener: Option<OwnedFd>,
}

impl Confined {
    /// [`ArmNet::Private`]: the listening socket on `127.0.0.1:<connect_port>` inside the
    /// agent's network namespace, once its init has made it (call after `spawn`; waits at most
    /// `wait`). Whatever connects to it is the agent.
    pub fn listener(&self, wait: std::time::Duration) -> Option<std::net::TcpListener> {
        let sock = self.listener.as_ref()?.as_raw_fd();
        let t = std::time::Instant::now();
        loop {
            if let Some(fd) = recv_fd(sock) {
                return Some(std::net::TcpListener::from(fd));
            }
            if t.elapsed() >= wait {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// The main process's wait status once it has exited (non-blocking; `None` before).
    pub fn ended(&self) -> Option<i32> {
        let mut b = [0u8; 4];
        let mut f = std::fs::File::from(self.ended.try_clone().ok()?);
        match f.read(&mut b) {
            Ok(4) => Some(i32::from_ne_bytes(b)),
            _ => None,
        }
    }
}

/// Why agents cannot be confined here (`None`: they can): the missing kernel features, in
/// words an operator can act on.
pub fn missing(net: ArmNet) -> Option<String> {
    let k = KernelSupport::get();
    let mut gaps = Vec::new();
    if net == ArmNet::LandlockPort && k.landlock_abi < crate::netrules::MIN_ABI {
        gaps.push(format!(
            "Landlock network rules (Landlock ABI {} here, need {}: Linux ≥ 6.7 with Landlock enabled)",
            k.landlock_abi,
            crate::netrules::MIN_ABI
        ));
    }
    if !k.namespaces {
        gaps.push(format!(
            "pid/mount namespaces ({})",
            k.namespaces_error.as_deref().unwrap_or("refused")
        ));
    }
    if !k.seccomp {
        gaps.push("seccomp filters".into());
    }
    if gaps.is_empty() && !(k.landlock_abi >= 1 && k.works("landlock")) {
        gaps.push(format!(
            "a working Landlock sandbox (start-up trial: {})",
            k.summary()
        ));
    }
    (!gaps.is_empty()).then(|| gaps.join("; "))
}

/// One line for the start of a run: how agents are confined.
pub fn describe(net: ArmNet, port_note: &str) -> String {
    let how = match net {
        ArmNet::Private => format!("a private network whose only way out is {port_note} (forwarded by the caller; servers of its own on its loopback work)"),
        ArmNet::LandlockPort => format!("TCP connect only to {port_note} (Landlock), no bind"),
    };
    match missing(net) {
        Some(m) => format!("arms NOT confined: missing {m}"),
        None => format!(
            "arms confined: Landlock ABI {} (writes only in workdir + per-attempt HOME/TMPDIR; reads only system/toolchain dirs and the arm's install), {how}, no UDP or unix sockets (seccomp), own pid namespace (nothing outlives the cell)",
            KernelSupport::get().landlock_abi
        ),
    }
}

/// Makes `cmd` start confined by `policy`. Call once, just before `spawn`, on the thread that
/// spawns and waits (the parent-death signal belongs to that thread). `Err` names what is
/// missing or what failed.
pub fn confine(cmd: &mut Command, policy: &ArmPolicy) -> Result<Confined, ConfineError> {
    if let Some(m) = missing(policy.net) {
        return Err(ConfineError::Missing(m));
    }
    let Some(workdir) = policy.writable.first() else {
        return Err(ConfineError::NoWritable);
    };
    let mut extra: Vec<(PathBuf, Grant)> = Vec::new();
    for p in &policy.writable[1..] {
        extra.push((p.clone(), Grant::Full));
    }
    for p in &policy.readable {
        extra.push((p.clone(), Grant::Read));
    }
    for p in &policy.executable {
        extra.push((p.clone(), Grant::ReadExec));
    }
    let list = allow_list_with(workdir, workdir, &extra, &policy.hide);
    let k = KernelSupport::get();
    let abi = k.landlock_abi;
    let err = |what: &str, err: std::io::Error| ConfineError::Setup {
        what: what.to_string(),
        err,
    };
    let private = policy.net == ArmNet::Private;
    let ruleset = match private {
        true => crate::fsrules::Ruleset::new(abi),
        false => crate::netrules::ruleset(abi),
    }
    .map_err(|e| err("Landlock ruleset", e))?;
    for (p, g) in list.landlock_rules() {
        ruleset
            .allow(&p, g)
            .map_err(|e| err(&format!("rule for {}", p.display()), e))?;
    }
    if !private {
        crate::netrules::allow_connect(&ruleset, policy.connect_port)
            .map_err(|e| err("network rule", e))?;
    }
    // the listener's way out of the namespace: a datagram socket pair (one message, one fd)
    let (listen_r, listen_w) = if private {
        let mut sv = [0; 2];
        // SAFETY: socketpair fills the two-int array we own.
        if unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                0,
                sv.as_mut_ptr(),
            )
        } != 0
        {
            return Err(err("socketpair", std::io::Error::last_os_error()));
        }
        // SAFETY: both fds were just returned by socketpair and are owned here.
        let (a, b) = unsafe { (OwnedFd::from_raw_fd(sv[0]), OwnedFd::from_raw_fd(sv[1])) };
        (Some(a), Some(b))
    } else {
        (None, None)
    };
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two-int array we own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(err("pipe", std::io::Error::last_os_error()));
    }
    // SAFETY: both fds were just returned by pipe2 and are owned here.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let plan = ChildPlan {
        parent_pid: std::process::id() as libc::pid_t,
        // always a user namespace of its own: the agent keeps the capabilities it has there
        // (for namespaces of its own), none over anything of the host
        user: k.user_namespaces.then(UserMaps::for_current),
        join: None,
        unshare: libc::CLONE_NEWPID
            | libc::CLONE_NEWNS
            | libc::CLONE_NEWIPC
            | if private { libc::CLONE_NEWNET } else { 0 },
        loopback: private,
        mounts: MountPlan::light(),
        landlock: Some(LandlockPlan {
            ruleset,
            proc: c"/proc".to_owned(),
            shm: c"/dev/shm".to_owned(),
            pts: c"/dev/pts".to_owned(),
            ptmx: c"/dev/ptmx".to_owned(),
        }),
        seccomp: Filter::arm(),
        diag: -1,
        ended: w.as_raw_fd(),
        keep_caps: true,
        listen: listen_w
            .as_ref()
            .map(|s| (policy.connect_port, s.as_raw_fd())),
    };
    // the write ends stay open in the parent until the child holds them; the closure owns them
    let w = std::sync::Arc::new(w);
    let listen_w = std::sync::Arc::new(listen_w);
    // SAFETY: the closure only makes system calls (fcntl, then `reaper::enter`, which makes
    // system calls on data prepared above) until the command execs.
    unsafe {
        cmd.pre_exec(move || {
            // init inherits the write end (the command closes it): clear close-on-exec only in
            // this child, so no other launch of the caller can inherit it
            if libc::fcntl(w.as_raw_fd(), libc::F_SETFD, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let _keep = &listen_w;
            crate::reaper::enter(&plan)
        });
    }
    Ok(Confined {
        ended: r,
        listener: listen_r,
    })
}

/// One descriptor received over a unix socket (`SCM_RIGHTS`), without blocking.
fn recv_fd(sock: std::os::fd::RawFd) -> Option<OwnedFd> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr() as *mut libc::c_void,
        iov_len: 1,
    };
    let mut control = [0u64; 8];
    // SAFETY: a zeroed msghdr pointing at buffers that live for the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: recvmsg fills the buffers described by `msg`.
    let n = unsafe { libc::recvmsg(sock, &mut msg, libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC) };
    if n < 1 {
        return None;
    }
    // SAFETY: walking the control messages the kernel just wrote.
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&msg);
        if c.is_null() || (*c).cmsg_level != libc::SOL_SOCKET || (*c).cmsg_type != libc::SCM_RIGHTS
        {
            return None;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::c_int);
        (fd >= 0).then(|| OwnedFd::from_raw_fd(fd))
    }
}

/// What an agent's program needs to run, found from its real path: the program file, the
/// prefix it is installed in when it sits in `R/bin` (a venv, an npm prefix, a Python
/// version), the interpreter its `#!` line names (`env NAME` looked up on `path_var`) and, for
/// a venv, the Python it was made from — each by the same rules. Never a home directory itself
/// or anything above one (`homes`); system directories are left out (already readable).
pub fn program_roots(
    program: &Path,
    path_var: &std::ffi::OsStr,
    homes: &[PathBuf],
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    add_program(program, path_var, homes, &mut out, 0);
    out
}

fn add_program(
    program: &Path,
    path_var: &std::ffi::OsStr,
    homes: &[PathBuf],
    out: &mut Vec<PathBuf>,
    depth: u32,
) {
    if depth > 3 {
        return;
    }
    let Ok(real) = program.canonicalize() else {
        return;
    };
    let too_wide = |p: &Path| p == Path::new("/") || homes.iter().any(|h| h.starts_with(p));
    let push = |p: PathBuf, out: &mut Vec<PathBuf>| {
        let system = crate::allowlist::SYSTEM_EXEC
            .iter()
            .any(|s| p.starts_with(s));
        if !system && !too_wide(&p) && !out.iter().any(|o| p.starts_with(o)) {
            out.retain(|o| !o.starts_with(&p));
            out.push(p);
        }
    };
    // the unresolved path's prefix too: a venv's bin/python is a symlink out of the venv
    for p in [program.to_path_buf(), real.clone()] {
        let dir = p.parent().map(Path::to_path_buf);
        match dir {
            Some(d) if d.file_name().is_some_and(|n| n == "bin") => {
                let prefix = d.parent().unwrap_or(&d).to_path_buf();
                let prefix = prefix.canonicalize().unwrap_or(prefix);
                if prefix.join("pyvenv.cfg").is_file() {
                    add_program(&prefix.join("bin/python"), path_var, homes, out, depth + 1);
                }
                if too_wide(&prefix) {
                    push(p.canonicalize().unwrap_or(p), out);
                } else {
                    push(prefix, out);
                }
            }
            _ => push(p.canonicalize().unwrap_or(p), out),
        }
    }
    if let Some(interp) = shebang(&real, path_var) {
        add_program(&interp, path_var, homes, out, depth + 1);
    }
}

/// The interpreter of a script's `#!` line (`/usr/bin/env [-S] NAME` resolved on `path_var`).
fn shebang(file: &Path, path_var: &std::ffi::OsStr) -> Option<PathBuf> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(file).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = String::from_utf8_lossy(line.split(|b| *b == b'\n').next()?).into_owned();
    let mut words = line.split_whitespace();
    let first = PathBuf::from(words.next()?);
    if first.file_name().is_some_and(|n| n == "env") {
        let name = words.find(|w| !w.starts_with('-') && !w.contains('='))?;
        return std::env::split_paths(path_var)
            .map(|d| d.join(name))
            .find(|c| c.is_file());
    }
    Some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_follow_venvs_shebangs_and_stop_at_homes() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let home = root.join("home/u");
        let base = home.join(".pyenv/versions/3.11/bin");
        let venv = home.join(".cache/lrab/arms/venv/x@1");
        let node = root.join("opt/node/bin");
        for p in [&base, &venv.join("bin"), &node, &home.join("bin")] {
            std::fs::create_dir_all(p).unwrap();
        }
        std::fs::write(base.join("python3.11"), "").unwrap();
        std::os::unix::fs::symlink(base.join("python3.11"), venv.join("bin/python")).unwrap();
        std::fs::write(venv.join("pyvenv.cfg"), "home = x\n").unwrap();
        let tool = venv.join("bin/tool");
        std::fs::write(
            &tool,
            format!("#!{}\nprint()\n", venv.join("bin/python").display()),
        )
        .unwrap();
        std::fs::write(node.join("node"), "").unwrap();
        let js = home.join("bin/js-tool");
        std::fs::write(&js, "#!/usr/bin/env -S node --no-warnings\n").unwrap();
        let path = std::env::join_paths([&node]).unwrap();
        let homes = [home.clone()];
        let got = program_roots(&tool, &path, &homes);
        assert!(got.contains(&venv), "{got:?}");
        assert!(got.contains(&home.join(".pyenv/versions/3.11")), "{got:?}");
        let got = program_roots(&js, &path, &homes);
        // ~/bin's prefix is the home itself: only the file, plus node's prefix
        assert!(
            got.contains(&js) && got.contains(&root.join("opt/node")),
            "{got:?}"
        );
        assert!(!got.iter().any(|p| home.starts_with(p)), "{got:?}");
        assert!(program_roots(Path::new("/bin/sh"), &path, &homes).is_empty());
    }
}

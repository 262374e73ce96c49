//! A seccomp filter for model-chosen commands: no side channels out of the sandbox.
//!
//! What a confined command could otherwise reach without touching a path the file rules see:
//! unix sockets (pathname or abstract) of daemons on the host (`/run/docker.sock`, an
//! X server, a listener in `/tmp`), new user namespaces (full capabilities inside, the kernel's
//! largest attack surface), `setns` into other namespaces, io_uring (whose socket and connect
//! operations bypass this filter), the session keyring, and `TIOCSTI` keystroke injection into
//! the operator's terminal. The filter is written as classic BPF here, built once in the
//! parent and installed in the child just before `exec`, after the sandbox's own namespace
//! set-up.
//!
//! Allowed on purpose: `AF_INET`/`AF_INET6` (the network namespace decides what they reach),
//! `AF_NETLINK` route sockets (interface listing), connected unix `socketpair`s of stream or
//! seqpacket type (asyncio, Node's child IPC: they connect the command to itself only), and
//! `unshare(CLONE_NEWNET)` alone (a fresh, empty network namespace is isolation, and after
//! `exec` the command lacks the capability to make one anyway).

/// One classic BPF instruction (`struct sock_filter`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const AND_K: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K

const RET_ALLOW: u32 = 0x7fff_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;

const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
/// Low 32 bits of argument `i` (little-endian `seccomp_data`).
const fn arg_lo(i: u32) -> u32 {
    16 + 8 * i
}

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// Namespace flags a confined command may never create (unshare): everything but a network
/// namespace.
const DENY_UNSHARE: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | 0x80) as u32; // CLONE_NEWTIME
/// clone(2) with any namespace flag.
const DENY_CLONE: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32;

fn stmt(code: u16, k: u32) -> Insn {
    Insn {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}
fn jump(code: u16, k: u32, jt: u8, jf: u8) -> Insn {
    Insn { code, jt, jf, k }
}
fn ret(k: u32) -> Insn {
    stmt(RET_K, k)
}
fn errno(e: i32) -> Insn {
    ret(RET_ERRNO | (e as u32 & 0xffff))
}

/// The compiled filter.
#[derive(Clone, Debug)]
pub struct Filter {
    prog: Vec<Insn>,
}

/// A block that runs only for syscall `nr`; it must end every path with a return.
fn on(nr: libc::c_long, body: Vec<Insn>) -> Vec<Insn> {
    let mut v = vec![jump(JEQ_K, nr as u32, 0, body.len() as u8)];
    v.extend(body);
    v
}

fn deny(nr: libc::c_long, e: i32) -> Vec<Insn> {
    on(nr, vec![errno(e)])
}

/// Syscall `nr` fails with `e` when its first argument (the flags) has any bit of `mask` set.
fn deny_flags(nr: libc::c_long, mask: u32, e: i32) -> Vec<Insn> {
    on(
        nr,
        vec![
            stmt(LD_W_ABS, arg_lo(0)),
            jump(JSET_K, mask, 0, 1),
            errno(e),
            ret(RET_ALLOW),
        ],
    )
}

/// Syscall `nr` fails with `e` when its argument `arg` (low 32 bits) is one of `values`.
fn deny_arg_in(nr: libc::c_long, arg: u32, values: &[u32], e: i32) -> Vec<Insn> {
    let mut body = vec![stmt(LD_W_ABS, arg_lo(arg))];
    for (i, v) in values.iter().enumerate() {
        // a match jumps to the errno past the remaining tests; the last miss skips it
        let rest = (values.len() - 1 - i) as u8;
        body.push(jump(JEQ_K, *v, rest, u8::from(rest == 0)));
    }
    body.push(errno(e));
    body.push(ret(RET_ALLOW));
    on(nr, body)
}

impl Filter {
    /// The sandbox's filter (see the module documentation for what it refuses and why).
    pub fn confined() -> Filter {
        Filter::build(false)
    }

    /// The filter of a third-party agent confined by the runner ([`crate::armbox`]): the same
    /// side channels closed, and also every `AF_INET`/`AF_INET6` socket but a stream one (the
    /// Landlock network rules that keep TCP to one port do not cover UDP); but new namespaces
    /// and `setns` into them allowed, because agents that confine their own commands (ours
    /// among them) make them. The agent can only enter namespaces its own user namespace owns
    /// (it holds no capability over the host's), and Landlock and this filter stay in force
    /// inside every namespace it makes.
    pub fn arm() -> Filter {
        Filter::build(true)
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    fn build(_arm: bool) -> Filter {
        Filter { prog: Vec::new() }
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn build(arm: bool) -> Filter {
        let mut p = vec![
            stmt(LD_W_ABS, OFF_ARCH),
            jump(JEQ_K, AUDIT_ARCH, 1, 0),
            ret(RET_KILL_PROCESS),
            stmt(LD_W_ABS, OFF_NR),
        ];
        #[cfg(target_arch = "x86_64")]
        {
            // the x32 ABI numbers syscalls from 0x40000000: refuse all of them
            p.push(jump(JGE_K, 0x4000_0000, 0, 1));
            p.push(errno(libc::ENOSYS));
        }
        // socket(domain, type, protocol)
        if arm {
            // internet sockets of stream type only (the type's low bits; flags above)
            p.extend(on(
                libc::SYS_socket,
                vec![
                    stmt(LD_W_ABS, arg_lo(0)),
                    jump(JEQ_K, libc::AF_INET as u32, 2, 0),
                    jump(JEQ_K, libc::AF_INET6 as u32, 1, 0),
                    jump(JEQ_K, libc::AF_NETLINK as u32, 3, 5),
                    stmt(LD_W_ABS, arg_lo(1)),
                    stmt(AND_K, 0xf),
                    jump(JEQ_K, libc::SOCK_STREAM as u32, 3, 2),
                    stmt(LD_W_ABS, arg_lo(2)),
                    jump(JEQ_K, libc::NETLINK_ROUTE as u32, 1, 0),
                    errno(libc::EACCES),
                    ret(RET_ALLOW),
                ],
            ));
        } else {
            p.extend(on(
                libc::SYS_socket,
                vec![
                    stmt(LD_W_ABS, arg_lo(0)),
                    jump(JEQ_K, libc::AF_INET as u32, 5, 0),
                    jump(JEQ_K, libc::AF_INET6 as u32, 4, 0),
                    jump(JEQ_K, libc::AF_NETLINK as u32, 0, 2),
                    stmt(LD_W_ABS, arg_lo(2)),
                    jump(JEQ_K, libc::NETLINK_ROUTE as u32, 1, 0),
                    errno(libc::EACCES),
                    ret(RET_ALLOW),
                ],
            ));
        }
        // socketpair(domain, type, protocol, sv): connected unix stream/seqpacket pairs only,
        // named by an allow-list of types: a datagram pair could still sendto() any named
        // socket, and the kernel makes a SOCK_RAW unix socket a datagram one
        p.extend(on(
            libc::SYS_socketpair,
            vec![
                stmt(LD_W_ABS, arg_lo(0)),
                jump(JEQ_K, libc::AF_UNIX as u32, 0, 4),
                stmt(LD_W_ABS, arg_lo(1)),
                stmt(AND_K, 0xf),
                jump(JEQ_K, libc::SOCK_STREAM as u32, 2, 0),
                jump(JEQ_K, libc::SOCK_SEQPACKET as u32, 1, 0),
                errno(libc::EACCES),
                ret(RET_ALLOW),
            ],
        ));
        if !arm {
            p.extend(deny_flags(libc::SYS_unshare, DENY_UNSHARE, libc::EPERM));
            p.extend(deny_flags(libc::SYS_clone, DENY_CLONE, libc::EPERM));
        }
        // ioctl(fd, cmd): no keystrokes pushed into a terminal's input queue
        p.extend(deny_arg_in(
            libc::SYS_ioctl,
            1,
            &[libc::TIOCSTI as u32, libc::TIOCLINUX as u32],
            libc::EPERM,
        ));
        // clone3 takes its flags in memory the filter cannot read: callers fall back to clone
        for nr in [
            libc::SYS_clone3,
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ] {
            p.extend(deny(nr, libc::ENOSYS));
        }
        if !arm {
            p.extend(deny(libc::SYS_setns, libc::EPERM));
        }
        for nr in [
            libc::SYS_keyctl,
            libc::SYS_add_key,
            libc::SYS_request_key,
            libc::SYS_mount,
            libc::SYS_umount2,
            libc::SYS_pivot_root,
            libc::SYS_chroot,
            libc::SYS_fsopen,
            libc::SYS_fsconfig,
            libc::SYS_fsmount,
            libc::SYS_fspick,
            libc::SYS_move_mount,
            libc::SYS_open_tree,
            libc::SYS_mount_setattr,
            libc::SYS_bpf,
            libc::SYS_perf_event_open,
            libc::SYS_userfaultfd,
            libc::SYS_open_by_handle_at,
            libc::SYS_kexec_load,
            libc::SYS_kexec_file_load,
            libc::SYS_init_module,
            libc::SYS_finit_module,
            libc::SYS_delete_module,
            libc::SYS_reboot,
        ] {
            p.extend(deny(nr, libc::EPERM));
        }
        p.push(ret(RET_ALLOW));
        Filter { prog: p }
    }

    /// No instructions (architectures without a filter; [`supported`] says false there).
    pub fn is_empty(&self) -> bool {
        self.prog.is_empty()
    }

    /// Install the filter on the calling thread (sets `no_new_privs`, which an unprivileged
    /// filter needs). Only system calls: safe between `fork` and `exec`.
    pub fn install(&self) -> std::io::Result<()> {
        if self.prog.is_empty() {
            return Err(std::io::Error::from_raw_os_error(libc::ENOSYS));
        }
        let fprog = libc::sock_fprog {
            len: self.prog.len() as u16,
            filter: self.prog.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: prctl with integer arguments; seccomp(2) reads `fprog`, which points at
        // `self.prog`, alive for the call (the kernel copies the program).
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0,
                &fprog as *const libc::sock_fprog,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Does this kernel (and architecture) take seccomp filters with errno returns?
pub fn supported() -> bool {
    if Filter::confined().is_empty() {
        return false;
    }
    let action: u32 = RET_ERRNO;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL reads one u32 we own.
    unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0,
            &action as *const u32,
        ) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny classic-BPF interpreter: the filter's decisions are checked without a kernel.
    fn eval(p: &[Insn], nr: u32, arch: u32, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        let (mut a, mut pc) = (0u32, 0usize);
        loop {
            let i = p[pc];
            pc += 1;
            match i.code {
                LD_W_ABS => {
                    let o = i.k as usize;
                    a = u32::from_le_bytes(data[o..o + 4].try_into().unwrap());
                }
                AND_K => a &= i.k,
                RET_K => return i.k,
                JEQ_K | JGE_K | JSET_K => {
                    let t = match i.code {
                        JEQ_K => a == i.k,
                        JGE_K => a >= i.k,
                        _ => a & i.k != 0,
                    };
                    pc += if t { i.jt } else { i.jf } as usize;
                }
                c => panic!("unknown opcode {c:#x}"),
            }
        }
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    #[allow(clippy::unnecessary_cast)] // ioctl numbers are u32 or u64 depending on the target
    fn decisions() {
        let f = Filter::confined();
        let p = &f.prog;
        let call = |nr: libc::c_long, args: [u64; 6]| eval(p, nr as u32, AUDIT_ARCH, args);
        let e = |x: i32| RET_ERRNO | x as u32;
        let unix = libc::AF_UNIX as u64;
        assert_eq!(
            call(libc::SYS_socket, [unix, 1, 0, 0, 0, 0]),
            e(libc::EACCES)
        );
        assert_eq!(call(libc::SYS_socket, [2, 1, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(libc::SYS_socket, [10, 2, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(libc::SYS_socket, [16, 3, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(libc::SYS_socket, [16, 3, 9, 0, 0, 0]), e(libc::EACCES));
        assert_eq!(call(libc::SYS_socket, [40, 1, 0, 0, 0, 0]), e(libc::EACCES)); // vsock
        let stream_cloexec = 1 | libc::SOCK_CLOEXEC as u64;
        assert_eq!(
            call(libc::SYS_socketpair, [unix, stream_cloexec, 0, 0, 0, 0]),
            RET_ALLOW
        );
        assert_eq!(call(libc::SYS_socketpair, [unix, 5, 0, 0, 0, 0]), RET_ALLOW);
        // datagram, raw (a datagram socket in disguise), rdm, an unknown type, other domains
        for (dom, ty) in [
            (unix, 2),
            (unix, 3),
            (unix, 4),
            (unix, 0),
            (unix, 15),
            (2, 1),
            (30, 5),
        ] {
            assert_eq!(
                call(libc::SYS_socketpair, [dom, ty, 0, 0, 0, 0]),
                e(libc::EACCES),
                "socketpair({dom}, {ty})"
            );
        }
        let raw_nonblock = 3 | libc::SOCK_NONBLOCK as u64;
        assert_eq!(
            call(libc::SYS_socketpair, [unix, raw_nonblock, 0, 0, 0, 0]),
            e(libc::EACCES)
        );
        let newnet = libc::CLONE_NEWNET as u64;
        let newuser = libc::CLONE_NEWUSER as u64;
        assert_eq!(call(libc::SYS_unshare, [newnet, 0, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(
            call(libc::SYS_unshare, [newuser | newnet, 0, 0, 0, 0, 0]),
            e(libc::EPERM)
        );
        assert_eq!(
            call(libc::SYS_clone, [newnet | 17, 0, 0, 0, 0, 0]),
            e(libc::EPERM)
        );
        assert_eq!(call(libc::SYS_clone, [17, 0, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(libc::SYS_clone3, [0; 6]), e(libc::ENOSYS));
        assert_eq!(
            call(libc::SYS_ioctl, [0, libc::TIOCSTI as u64, 0, 0, 0, 0]),
            e(libc::EPERM)
        );
        assert_eq!(call(libc::SYS_ioctl, [0, 0x5401, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(libc::SYS_setns, [0; 6]), e(libc::EPERM));
        assert_eq!(call(libc::SYS_read, [0; 6]), RET_ALLOW);
        assert_eq!(eval(p, 0, 0x4000_0003, [0; 6]), RET_KILL_PROCESS);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            eval(p, 0x4000_0000 + 41, AUDIT_ARCH, [unix, 1, 0, 0, 0, 0]),
            e(libc::ENOSYS)
        );
    }
}

//! Side channels attacked with raw system calls no shell tool makes: this test binary copies
//! itself into a confined workdir and runs there as the attacker (unix sockets of every type,
//! the x32 and i386 system-call ABIs, io_uring, clone3, new namespaces, setns, ptrace of the
//! sandbox's init, keyrings, TIOCSTI). Each attempt prints `OPEN name` when the kernel let it
//! through. The same binary run unconfined is the control: there the core attempts succeed,
//! so a filter that stopped working would show.

use lrab_safety::{sandboxed_command, Sandbox, SandboxPolicy as Policy};
use std::collections::BTreeMap;
use std::process::{Command, Stdio};

const ENV: &str = "LRAB_SYSCALL_ATTACKER";

/// Attempts the control (unconfined, as any user) must see succeed.
const CORE: &[&str] = &[
    "socket-unix-stream",
    "socket-unix-dgram",
    "socketpair-unix-dgram",
    "socketpair-unix-raw",
    "socketpair-unix-raw-cloexec",
    "io_uring_setup",
    "unshare-newuser",
];

fn backends() -> Vec<Sandbox> {
    let mut v = Vec::new();
    if let s @ Sandbox::Landlock { .. } = Sandbox::detect() {
        v.push(s);
    }
    if Sandbox::named("namespaces").is_ok() {
        v.push(Sandbox::Namespaces);
    }
    assert!(!v.is_empty(), "no confinement on this machine");
    v
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn report(name: &str, rc: libc::c_long) {
    if rc >= 0 {
        println!("OPEN {name}");
    } else {
        println!("CLOSED {name} errno {}", errno());
    }
}

/// Run `f` in a forked child and report whether it returned success there; a child killed by
/// the filter (`SIGSYS`) or the kernel counts as closed.
fn in_child(name: &str, f: fn() -> bool) {
    // SAFETY: the child only makes system calls and `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let ok = f();
        // SAFETY: leaving the forked child without running the parent's destructors.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut st = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut st, 0) };
    if libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0 {
        println!("OPEN {name}");
    } else if libc::WIFSIGNALED(st) {
        println!("CLOSED {name} signal {}", libc::WTERMSIG(st));
    } else {
        println!("CLOSED {name} failed");
    }
}

#[cfg(target_arch = "x86_64")]
fn i386_socket() -> bool {
    let rc: i32;
    // SAFETY: the i386 `socket` system call (359) with register arguments only; rbx, which
    // LLVM reserves, is swapped in and out around the trap.
    unsafe {
        std::arch::asm!(
            "xchg {b}, rbx",
            "int 0x80",
            "xchg {b}, rbx",
            b = inout(reg) 1u64 => _,
            inlateout("eax") 359i32 => rc,
            in("ecx") 1i32,
            in("edx") 0i32,
        );
    }
    rc >= 0
}

fn clone_child(flags: libc::c_long) -> libc::c_long {
    // SAFETY: a fork-like clone without a new stack; the child `_exit`s at once.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_clone,
            flags | libc::SIGCHLD as libc::c_long,
            0,
            0,
            0,
            0,
        )
    };
    if rc == 0 {
        // SAFETY: leaving the cloned child.
        unsafe { libc::_exit(0) };
    }
    if rc > 0 {
        // SAFETY: reaping our own child.
        unsafe { libc::waitpid(rc as i32, std::ptr::null_mut(), 0) };
    }
    rc
}

fn attack() {
    // libtest's "test … " has no line end yet
    println!();
    use libc::{c_long, syscall, SYS_socket, SYS_socketpair, AF_UNIX};
    let mut sv = [0i32; 2];
    let sp = |ty: i32, sv: &mut [i32; 2]| -> c_long {
        // SAFETY: socketpair writes two ints into `sv`.
        unsafe { syscall(SYS_socketpair, AF_UNIX, ty, 0, sv.as_mut_ptr()) }
    };
    // SAFETY (this block): raw system calls on integers and buffers owned here.
    unsafe {
        report(
            "socket-unix-stream",
            syscall(SYS_socket, AF_UNIX, libc::SOCK_STREAM, 0),
        );
        report(
            "socket-unix-dgram",
            syscall(SYS_socket, AF_UNIX, libc::SOCK_DGRAM, 0),
        );
        report(
            "socket-unix-seqpacket",
            syscall(SYS_socket, AF_UNIX, libc::SOCK_SEQPACKET, 0),
        );
        report(
            "socket-vsock",
            syscall(SYS_socket, libc::AF_VSOCK, libc::SOCK_STREAM, 0),
        );
        report(
            "socket-packet",
            syscall(SYS_socket, libc::AF_PACKET, libc::SOCK_DGRAM, 0),
        );
        report(
            "socket-netlink-uevent",
            syscall(
                SYS_socket,
                libc::AF_NETLINK,
                libc::SOCK_RAW,
                libc::NETLINK_KOBJECT_UEVENT,
            ),
        );
        report("socketpair-unix-dgram", sp(libc::SOCK_DGRAM, &mut sv));
        report("socketpair-unix-raw", sp(libc::SOCK_RAW, &mut sv));
        report(
            "socketpair-unix-raw-cloexec",
            sp(libc::SOCK_RAW | libc::SOCK_CLOEXEC, &mut sv),
        );
        #[cfg(target_arch = "x86_64")]
        report(
            "x32-socket-unix",
            syscall(0x4000_0000 + SYS_socket, AF_UNIX, libc::SOCK_STREAM, 0),
        );
        let mut params = [0u8; 120];
        report(
            "io_uring_setup",
            syscall(libc::SYS_io_uring_setup, 4, params.as_mut_ptr()),
        );
        // clone3 { flags = CLONE_NEWUSER, exit_signal = SIGCHLD }
        let mut args = [0u64; 11];
        args[0] = libc::CLONE_NEWUSER as u64;
        args[4] = libc::SIGCHLD as u64;
        let rc = syscall(libc::SYS_clone3, args.as_mut_ptr(), 88usize);
        if rc == 0 {
            libc::_exit(0);
        }
        report("clone3-newuser", rc);
        report("clone-newuser", clone_child(libc::CLONE_NEWUSER as c_long));
        report("clone-newns", clone_child(libc::CLONE_NEWNS as c_long));
        let ns = libc::open(c"/proc/self/ns/net".as_ptr(), libc::O_RDONLY);
        report(
            "setns-net",
            if ns < 0 {
                -1
            } else {
                syscall(libc::SYS_setns, ns, 0)
            },
        );
        report(
            "ptrace-attach-init",
            syscall(libc::SYS_ptrace, libc::PTRACE_ATTACH, 1, 0, 0),
        );
        report(
            "keyctl-join-session",
            syscall(
                libc::SYS_keyctl,
                1, /* KEYCTL_JOIN_SESSION_KEYRING */
                0,
            ),
        );
        let tty = libc::open(c"/dev/ptmx".as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
        let c = b'x';
        report(
            "tiocsti",
            syscall(
                libc::SYS_ioctl,
                if tty < 0 { 0 } else { tty },
                libc::TIOCSTI,
                &c as *const u8,
            ),
        );
    }
    // unshare(CLONE_NEWUSER) needs a single-threaded caller: a forked child is one
    // SAFETY: raw system calls on integers.
    in_child("unshare-newuser", || unsafe {
        libc::unshare(libc::CLONE_NEWUSER) == 0
    });
    in_child("unshare-newns", || unsafe {
        libc::unshare(libc::CLONE_NEWNS) == 0
    });
    #[cfg(target_arch = "x86_64")]
    in_child("i386-socket-unix", i386_socket);
    println!("ATTACKER DONE");
}

#[test]
fn attacker_entry() {
    if std::env::var_os(ENV).is_some() {
        attack();
    }
}

fn parse(out: &str) -> BTreeMap<String, bool> {
    out.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            match (w.next(), w.next()) {
                (Some("OPEN"), Some(n)) => Some((n.to_string(), true)),
                (Some("CLOSED"), Some(n)) => Some((n.to_string(), false)),
                _ => None,
            }
        })
        .collect()
}

fn output(mut c: Command) -> String {
    let o = c.stdin(Stdio::null()).output().expect("run the attacker");
    let mut s = String::from_utf8_lossy(&o.stdout).into_owned();
    s.push_str(&String::from_utf8_lossy(&o.stderr));
    assert!(
        s.contains("ATTACKER DONE"),
        "the attacker did not finish: {s}"
    );
    s
}

const ARGS: &str = "--exact attacker_entry --nocapture --test-threads=1";

#[test]
fn raw_system_calls_open_no_side_channel() {
    let exe = std::env::current_exe().unwrap();
    // control: unconfined, the core attempts succeed (the attacker really attacks)
    let mut c = Command::new(&exe);
    c.args(ARGS.split(' ')).env(ENV, "1");
    let control = parse(&output(c));
    for n in CORE {
        assert_eq!(
            control.get(*n),
            Some(&true),
            "control: `{n}` failed unconfined: {control:?}"
        );
    }
    for b in backends() {
        let d = tempfile::tempdir().unwrap();
        let (work, tmp) = (d.path().join("work"), d.path().join("tmp"));
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::copy(&exe, work.join("attacker")).unwrap();
        let policy = Policy {
            force: Some(b.clone()),
            ..Policy::default()
        };
        let cmd = format!("{ENV}=1 ./attacker {ARGS}");
        let (c, _) = sandboxed_command(&cmd, &work, &tmp, &policy).unwrap();
        let text = output(c);
        let got = parse(&text);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            control.keys().collect::<Vec<_>>(),
            "{b:?}: not every attempt ran:\n{text}"
        );
        let open: Vec<_> = got.iter().filter(|(_, o)| **o).map(|(n, _)| n).collect();
        assert!(open.is_empty(), "{b:?}: let through: {open:?}\n{text}");
        // refused by the filter, not by chance: TIOCSTI gets EPERM (a tty would take it, a
        // non-tty would say ENOTTY), io_uring and clone3 ENOSYS
        for (n, e) in [
            ("tiocsti", libc::EPERM),
            ("io_uring_setup", libc::ENOSYS),
            ("clone3-newuser", libc::ENOSYS),
            ("socketpair-unix-raw", libc::EACCES),
        ] {
            let line = format!("CLOSED {n} errno {e}");
            assert!(
                text.lines().any(|l| l == line),
                "{b:?}: expected `{line}`:\n{text}"
            );
        }
    }
}

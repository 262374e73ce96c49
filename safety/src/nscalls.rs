//! The namespace system calls below the reaper, the private network and the kernel probes:
//! entering a user namespace that maps the caller's own ids, and bringing up the loopback of
//! a fresh network namespace. Only system calls, so they may run between fork and exec.

use std::ffi::CString;

/// A user namespace for a caller without root: map the caller's own uid and gid.
#[derive(Debug)]
pub struct UserMaps {
    pub uid_map: CString,
    pub gid_map: CString,
}

impl UserMaps {
    pub fn for_current() -> UserMaps {
        // SAFETY: getuid/getgid cannot fail.
        let (u, g) = unsafe { (libc::getuid(), libc::getgid()) };
        UserMaps {
            uid_map: CString::new(format!("{u} {u} 1\n")).expect("no NUL"),
            gid_map: CString::new(format!("{g} {g} 1\n")).expect("no NUL"),
        }
    }
}

pub(crate) fn last() -> std::io::Error {
    std::io::Error::last_os_error()
}

pub(crate) fn check(rc: libc::c_int) -> std::io::Result<()> {
    if rc < 0 {
        Err(last())
    } else {
        Ok(())
    }
}

/// A new user namespace mapping the caller's own uid and gid (full capabilities inside it).
///
/// # Safety
/// Only system calls; for a single-threaded child.
pub(crate) unsafe fn enter_user_ns(u: &UserMaps) -> std::io::Result<()> {
    check(libc::unshare(libc::CLONE_NEWUSER))?;
    write_file(c"/proc/self/uid_map", &u.uid_map)?;
    write_file(c"/proc/self/setgroups", c"deny")?;
    write_file(c"/proc/self/gid_map", &u.gid_map)
}

unsafe fn write_file(path: &std::ffi::CStr, data: &std::ffi::CStr) -> std::io::Result<()> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return Err(last());
    }
    let n = data.to_bytes().len();
    let w = libc::write(fd, data.as_ptr() as *const libc::c_void, n);
    let e = last();
    libc::close(fd);
    if w != n as isize {
        return Err(e);
    }
    Ok(())
}

/// Bring `lo` up in the current (fresh) network namespace: local servers of the command work,
/// nothing else is reachable.
///
/// # Safety
/// Only system calls (no allocation), so it may run between fork and exec.
pub unsafe fn loopback_up() -> std::io::Result<()> {
    // a stream socket: the interface ioctls take any internet socket, and a harness running
    // as a confined arm may not make datagram ones (`Filter::arm`)
    let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
    if fd < 0 {
        return Err(last());
    }
    let mut req: libc::ifreq = std::mem::zeroed();
    for (i, b) in b"lo".iter().enumerate() {
        req.ifr_name[i] = *b as libc::c_char;
    }
    let mut r = libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut req);
    if r == 0 {
        req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        r = libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &req);
    }
    let e = last();
    libc::close(fd);
    if r != 0 {
        return Err(e);
    }
    Ok(())
}

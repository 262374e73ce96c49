//! Thin system-call wrappers for [`super`]: every call takes a directory fd and a single
//! name (no slash), and none follows a symlink in the last component.

use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU8, Ordering};

pub fn cvt(rc: libc::c_int) -> std::io::Result<libc::c_int> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

pub fn cname(n: &OsStr) -> CString {
    // names come from split(), which refuses NUL bytes
    CString::new(n.as_bytes()).unwrap_or_default()
}

pub fn own(fd: libc::c_int) -> OwnedFd {
    // SAFETY: callers pass an fd the kernel just returned to them.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

pub fn openat(
    dir: RawFd,
    name: &CStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> std::io::Result<OwnedFd> {
    loop {
        // SAFETY: valid C string; the result is owned at once.
        let fd = unsafe {
            libc::openat(
                dir,
                name.as_ptr(),
                flags | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        };
        if fd >= 0 {
            return Ok(own(fd));
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

pub fn dup(fd: RawFd) -> std::io::Result<OwnedFd> {
    // SAFETY: fcntl on an fd we hold.
    cvt(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) }).map(own)
}

pub fn fstat(fd: RawFd) -> std::io::Result<libc::stat> {
    // SAFETY: fstat fills a zeroed struct we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    cvt(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st)
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`.
pub fn lstatat(dir: RawFd, name: &CStr) -> std::io::Result<libc::stat> {
    // SAFETY: as above.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    cvt(unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) })?;
    Ok(st)
}

pub fn is_dir(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFDIR
}
pub fn is_reg(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFREG
}
pub fn is_lnk(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFLNK
}

/// Clear `O_NONBLOCK` (files are opened non-blocking so that a FIFO planted under a file's
/// name cannot hang the caller).
pub fn set_blocking(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl on an fd we hold.
    unsafe {
        let fl = cvt(libc::fcntl(fd, libc::F_GETFL))?;
        cvt(libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK))?;
    }
    Ok(())
}

const OPENAT2_UNKNOWN: u8 = 0;
const OPENAT2_YES: u8 = 1;
const OPENAT2_NO: u8 = 2;
static OPENAT2: AtomicU8 = AtomicU8::new(OPENAT2_UNKNOWN);

/// Does `openat2(2)` work here (kernel ≥ 5.6, not blocked by a container's filter)?
pub fn openat2_available() -> bool {
    match OPENAT2.load(Ordering::Relaxed) {
        OPENAT2_YES => true,
        OPENAT2_NO => false,
        _ => {
            let ok = match openat2(libc::AT_FDCWD, c"/", libc::O_PATH, 0) {
                Ok(_) => true,
                Err(e) => !matches!(
                    e.raw_os_error(),
                    Some(libc::ENOSYS | libc::EPERM | libc::EINVAL)
                ),
            };
            OPENAT2.store(if ok { OPENAT2_YES } else { OPENAT2_NO }, Ordering::Relaxed);
            ok
        }
    }
}

pub fn openat2(
    dir: RawFd,
    path: &CStr,
    flags: libc::c_int,
    resolve: u64,
) -> std::io::Result<OwnedFd> {
    // struct open_how (libc marks it non-exhaustive: the kernel may grow it)
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve,
    };
    for _ in 0..64 {
        // SAFETY: `how` and `path` are live for the call.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir,
                path.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        };
        if fd >= 0 {
            return Ok(own(fd as libc::c_int));
        }
        let e = std::io::Error::last_os_error();
        // EAGAIN: a rename or mount raced with the resolution; the kernel asks for a retry
        if !matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EINTR)) {
            return Err(e);
        }
    }
    Err(std::io::Error::from_raw_os_error(libc::EAGAIN))
}

/// The names in a directory (without `.` and `..`), read through a duplicate of `dir`.
pub fn read_names(dir: RawFd) -> std::io::Result<Vec<CString>> {
    let d = openat(dir, c".", libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
    let raw = d.as_raw_fd();
    // SAFETY: fdopendir takes ownership of the fd on success; we forget our OwnedFd then.
    let dp = unsafe { libc::fdopendir(raw) };
    if dp.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    std::mem::forget(d);
    let mut out = Vec::new();
    loop {
        // SAFETY: readdir on a live DIR*; the entry is copied before the next call.
        let e = unsafe { libc::readdir(dp) };
        if e.is_null() {
            break;
        }
        // SAFETY: d_name is NUL-terminated.
        let name = unsafe { CStr::from_ptr((*e).d_name.as_ptr()) };
        let b = name.to_bytes();
        if b != b"." && b != b".." {
            out.push(name.to_owned());
        }
    }
    // SAFETY: closes the DIR* and its fd.
    unsafe { libc::closedir(dp) };
    Ok(out)
}

pub fn unlinkat(dir: RawFd, name: &CStr, flags: libc::c_int) -> std::io::Result<()> {
    // SAFETY: valid C string.
    cvt(unsafe { libc::unlinkat(dir, name.as_ptr(), flags) }).map(|_| ())
}

pub fn mkdirat(dir: RawFd, name: &CStr) -> std::io::Result<()> {
    // SAFETY: valid C string.
    cvt(unsafe { libc::mkdirat(dir, name.as_ptr(), 0o777) }).map(|_| ())
}

/// `renameat2(…, flags)`, falling back to `renameat` where the file system has no flags
/// support and `flags` is only `RENAME_NOREPLACE` (then checked first, best effort).
pub fn renameat(
    from_dir: RawFd,
    from: &CStr,
    to_dir: RawFd,
    to: &CStr,
    noreplace: bool,
) -> std::io::Result<()> {
    let flags = if noreplace { libc::RENAME_NOREPLACE } else { 0 };
    // SAFETY: valid C strings.
    let rc = unsafe { libc::renameat2(from_dir, from.as_ptr(), to_dir, to.as_ptr(), flags) };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if noreplace && matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
        if lstatat(to_dir, to).is_ok() {
            return Err(std::io::Error::from_raw_os_error(libc::EEXIST));
        }
        // SAFETY: valid C strings.
        return cvt(unsafe { libc::renameat(from_dir, from.as_ptr(), to_dir, to.as_ptr()) })
            .map(|_| ());
    }
    Err(e)
}

/// Remove the directory `name` beneath `parent` and everything below it, never following a
/// symlink (a symlink inside is removed, not its target); bounded at 256 levels.
pub fn remove_tree(parent: RawFd, name: &CStr, depth: usize) -> std::io::Result<()> {
    if depth > 256 {
        return Err(std::io::Error::from_raw_os_error(libc::ELOOP));
    }
    let dir = openat(
        parent,
        name,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        0,
    )?;
    for n in read_names(dir.as_raw_fd())? {
        let st = lstatat(dir.as_raw_fd(), &n)?;
        if is_dir(&st) {
            remove_tree(dir.as_raw_fd(), &n, depth + 1)?;
        } else {
            unlinkat(dir.as_raw_fd(), &n, 0)?;
        }
    }
    unlinkat(parent, name, libc::AT_REMOVEDIR)
}

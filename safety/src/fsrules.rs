//! Landlock rules through the raw system calls. The ruleset is created and filled in the
//! parent; the few rules for file systems the sandbox mounts itself (its own `/proc`, a
//! private `/dev/shm`) can only be added in the child after those mounts exist, and between
//! `fork` and `exec` nothing may allocate — hence no library wrapper.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

pub const EXECUTE: u64 = 1 << 0;
pub const WRITE_FILE: u64 = 1 << 1;
pub const READ_FILE: u64 = 1 << 2;
pub const READ_DIR: u64 = 1 << 3;
const REMOVE_DIR: u64 = 1 << 4;
const REMOVE_FILE: u64 = 1 << 5;
const MAKE_CHAR: u64 = 1 << 6;
const MAKE_DIR: u64 = 1 << 7;
const MAKE_REG: u64 = 1 << 8;
const MAKE_SOCK: u64 = 1 << 9;
const MAKE_FIFO: u64 = 1 << 10;
const MAKE_BLOCK: u64 = 1 << 11;
const MAKE_SYM: u64 = 1 << 12;
const REFER: u64 = 1 << 13;
pub const TRUNCATE: u64 = 1 << 14;
pub const IOCTL_DEV: u64 = 1 << 15;

const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1;
const SCOPE_SIGNAL: u64 = 2;

/// What a rule grants, in the sandbox's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Grant {
    /// List the directory itself, nothing beneath (`/etc`, whose entries get their own rules).
    List,
    /// Read files and list directories beneath.
    Read,
    /// Read and execute beneath (system and toolchain directories).
    ReadExec,
    /// Read and write a device file (`/dev/null`, `/dev/tty`, …), including its ioctls.
    Device,
    /// Everything (the workdir, the private temp dir, the private `/dev/shm`).
    Full,
}

/// Every file-system right this ABI knows.
pub fn handled(abi: i32) -> u64 {
    let mut m = (1 << 13) - 1;
    if abi >= 2 {
        m |= REFER;
    }
    if abi >= 3 {
        m |= TRUNCATE;
    }
    if abi >= 5 {
        m |= IOCTL_DEV;
    }
    m
}

/// The rights of `grant` on an object (directories may carry directory rights, files not).
pub fn rights(grant: Grant, abi: i32, is_dir: bool) -> u64 {
    let file = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;
    let r = match grant {
        Grant::List => READ_DIR,
        Grant::Read => READ_FILE | READ_DIR,
        Grant::ReadExec => READ_FILE | READ_DIR | EXECUTE,
        Grant::Device => READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV,
        Grant::Full => {
            EXECUTE
                | WRITE_FILE
                | READ_FILE
                | READ_DIR
                | REMOVE_DIR
                | REMOVE_FILE
                | MAKE_CHAR
                | MAKE_DIR
                | MAKE_REG
                | MAKE_SOCK
                | MAKE_FIFO
                | MAKE_BLOCK
                | MAKE_SYM
                | REFER
                | TRUNCATE
                | IOCTL_DEV
        }
    };
    let r = r & handled(abi);
    if is_dir {
        r
    } else {
        r & file
    }
}

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock ABI of the running kernel (0 when Landlock is missing or disabled).
pub fn abi() -> i32 {
    // SAFETY: the version query passes no pointer the kernel writes to.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    if v < 0 {
        0
    } else {
        v as i32
    }
}

/// A ruleset under construction (its fd is close-on-exec).
#[derive(Debug)]
pub struct Ruleset {
    fd: OwnedFd,
    abi: i32,
}

impl Ruleset {
    /// All file rights handled (so everything not granted is denied); signals and abstract
    /// unix sockets scoped to the sandbox when the ABI can (≥ 6).
    pub fn new(abi: i32) -> std::io::Result<Ruleset> {
        Ruleset::with_net(abi, 0)
    }

    /// [`Ruleset::new`] that also handles the network rights `net` (Landlock ABI ≥ 4; see
    /// [`crate::netrules`]): every TCP bind or connect they name is denied unless a port rule
    /// grants it.
    pub(crate) fn with_net(abi: i32, net: u64) -> std::io::Result<Ruleset> {
        let attr = RulesetAttr {
            handled_access_fs: handled(abi),
            handled_access_net: net,
            scoped: if abi >= 6 {
                SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
            } else {
                0
            },
        };
        let size = match (abi >= 6, net != 0) {
            (true, _) => 24,
            (false, true) => 16,
            (false, false) => 8,
        };
        // SAFETY: `attr` is a live, correctly laid out struct of at least `size` bytes.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &attr as *const RulesetAttr,
                size as usize,
                0u32,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the kernel just returned this fd to us (close-on-exec).
        let fd = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
        Ok(Ruleset { fd, abi })
    }

    pub fn abi(&self) -> i32 {
        self.abi
    }

    /// Grant `grant` beneath `path` (followed if it is a symlink). Missing paths are skipped.
    pub fn allow(&self, path: &Path, grant: Grant) -> std::io::Result<()> {
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
            return Ok(());
        };
        match allow_cstr(self.fd.as_raw_fd(), &c, grant, self.abi) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
            r => r,
        }
    }

    /// Grant `grant` beneath an already opened object (see [`Target`]).
    pub fn allow_target(&self, t: &Target) -> std::io::Result<()> {
        add_rule(
            self.fd.as_raw_fd(),
            t.fd.as_raw_fd(),
            rights(t.grant, self.abi, t.is_dir),
        )
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// An object a rule is attached to, opened once (`O_PATH`) and reusable for many rulesets:
/// the confinement of every shell call starts from the same system rules.
#[derive(Debug)]
pub struct Target {
    fd: OwnedFd,
    grant: Grant,
    is_dir: bool,
}

impl Target {
    /// `None` when the path does not exist (or cannot be opened by this caller).
    pub fn open(path: &Path, grant: Grant) -> Option<Target> {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
        // SAFETY: valid C string; the fd is owned at once.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: fresh fd from open(2).
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: fstat fills a zeroed stat we own.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let is_dir = unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0
            && st.st_mode & libc::S_IFMT == libc::S_IFDIR;
        Some(Target { fd, grant, is_dir })
    }
}

fn add_rule(ruleset: RawFd, fd: RawFd, allowed_access: u64) -> std::io::Result<()> {
    let attr = PathBeneathAttr {
        allowed_access,
        parent_fd: fd,
    };
    // SAFETY: `attr` is live for the call; LANDLOCK_RULE_PATH_BENEATH = 1.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            1u32,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Add one rule: open `path` with `O_PATH` and grant `grant` beneath it. Only system calls, no
/// allocation (used in the child for the sandbox's own mounts).
pub fn allow_cstr(ruleset: RawFd, path: &CStr, grant: Grant, abi: i32) -> std::io::Result<()> {
    // SAFETY: `path` is a valid C string; the fd is closed below on every path.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fstat fills a zeroed stat we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let is_dir =
        unsafe { libc::fstat(fd, &mut st) } == 0 && st.st_mode & libc::S_IFMT == libc::S_IFDIR;
    let r = add_rule(ruleset, fd, rights(grant, abi, is_dir));
    // SAFETY: closing the fd opened above.
    unsafe { libc::close(fd) };
    r
}

/// Enforce the ruleset on the calling thread (and everything it starts). Needs
/// `no_new_privs` (set here) or `CAP_SYS_ADMIN`.
pub fn restrict_self(ruleset: RawFd) -> std::io::Result<()> {
    // SAFETY: integer-only system calls.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

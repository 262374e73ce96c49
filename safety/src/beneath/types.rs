//! The resolver's vocabulary: how it walks, why it refuses, what it reports.

use crate::{Ring, Verdict};
use std::ffi::OsString;

/// How directories on the way are resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`
    /// (falls back to [`Walk::Components`] when the kernel lacks it).
    Openat2,
    /// One `openat(O_PATH | O_DIRECTORY | O_NOFOLLOW)` per component.
    Components,
}

/// Why a path was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// It leads outside the root.
    Outside,
    /// A component (or the file itself) is a symbolic link.
    Symlink,
    /// Not a regular file (a directory, FIFO, device, socket).
    NotAFile,
    /// Not a directory where one is needed.
    NotADirectory,
    /// A regular file with other hard links, opened for writing in place.
    HardLinked,
    /// An inode the caller declared off limits (a credential file under another name).
    Forbidden,
    /// The file changed under an edit (another writer replaced it).
    Changed,
    /// Empty, NUL byte, or names the root itself where a file is needed.
    BadPath,
}

/// Why the resolver did not do what was asked: a boundary refusal, or the system's error.
#[derive(Debug)]
pub enum Error {
    /// The path breaks the boundary (ring 4).
    Refused {
        /// The path as the caller gave it.
        path: String,
        /// Which rule it broke.
        why: Refusal,
    },
    /// A system call failed (missing file, permissions, …).
    Io {
        /// The path as the caller gave it.
        path: String,
        /// The system's error.
        err: std::io::Error,
    },
}

impl Error {
    /// A boundary refusal (not a plain I/O error).
    pub fn is_refusal(&self) -> bool {
        matches!(self, Error::Refused { .. })
    }
    /// The boundary refusal in the rings' format (`[safety ring 4: …] refused: …`), for
    /// refusals; `None` for plain I/O errors (missing file, …).
    pub fn verdict(&self) -> Option<Verdict> {
        match self {
            Error::Refused { .. } => Some(Verdict::Deny {
                ring: Ring::Boundary,
                reason: self.to_string(),
                alternative: Some("use a plain relative path inside the working directory".into()),
            }),
            Error::Io { .. } => None,
        }
    }
    /// The underlying I/O error kind (`NotFound`, …) for I/O errors.
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            Error::Io { err, .. } => Some(err.kind()),
            Error::Refused { .. } => None,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Refused { path, why } => {
                let why = match why {
                    Refusal::Outside => "leads outside the working directory",
                    Refusal::Symlink => "goes through a symbolic link, which the file tools never follow",
                    Refusal::NotAFile => "is not a regular file",
                    Refusal::NotADirectory => "is not a directory",
                    Refusal::HardLinked => "is a hard link with other names (perhaps outside the working directory); writing it in place would change them too",
                    Refusal::Forbidden => "is a hard link to a protected file",
                    Refusal::Changed => "was replaced by someone else during the edit; read it again",
                    Refusal::BadPath => "is not a usable file path",
                };
                write!(f, "'{path}' {why}")
            }
            Error::Io { path, err } => write!(f, "'{path}': {err}"),
        }
    }
}
impl std::error::Error for Error {}

/// The kind of a directory entry (never followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (reported, never followed).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The name inside the directory.
    pub name: OsString,
    /// What it is (not followed).
    pub kind: Kind,
    /// Its size in bytes.
    pub len: u64,
}

/// What `fstat`/`fstatat` said about an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// What it is.
    pub kind: Kind,
    /// Size in bytes.
    pub len: u64,
    /// Number of hard links (more than one: writing in place is refused).
    pub nlink: u64,
    /// Permission bits and file type (`st_mode`).
    pub mode: u32,
    /// Device of the file system holding it (with `ino`, the identity checked against forbidden inodes).
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
}

impl Stat {
    // field widths differ between architectures (nlink is u32 on aarch64)
    #[allow(clippy::unnecessary_cast)]
    pub(super) fn of(st: &libc::stat) -> Stat {
        let kind = if super::sys::is_reg(st) {
            Kind::File
        } else if super::sys::is_dir(st) {
            Kind::Dir
        } else if super::sys::is_lnk(st) {
            Kind::Symlink
        } else {
            Kind::Other
        };
        Stat {
            kind,
            len: st.st_size as u64,
            nlink: st.st_nlink as u64,
            mode: st.st_mode & 0o7777,
            dev: st.st_dev,
            ino: st.st_ino,
        }
    }
}

/// The result of a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Size of the file afterwards.
    pub len: u64,
    /// The name had other hard links; they keep the old content (the name got a new inode).
    pub detached: bool,
}

//! Race-free file access beneath a directory, for file tools that take paths from a model.
//!
//! A path string checked and then opened is two resolutions: a command running in the
//! background can swap a component for a symlink to `~/.ssh/id_rsa` in between. Here the
//! working directory is held open as a file descriptor and every path is resolved *from it*,
//! by the kernel, refusing symlinks: `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS)` for the directories on the way, or — where `openat2` is missing —
//! one `openat(O_NOFOLLOW)` per component. The last component is then used only through
//! `*at` calls on that directory fd that never follow a symlink (`openat(O_NOFOLLOW)`,
//! `fstatat(AT_SYMLINK_NOFOLLOW)`, `unlinkat`, `renameat2`, `mkdirat`), and what was opened is
//! what is read or written: no path is resolved twice.
//!
//! Paths are relative to the root (an absolute path is accepted when it lies lexically inside
//! it); `..` is resolved lexically and may not climb out. Writes replace the file atomically
//! through a temp file created beneath the same directory fd and `renameat` — a name that has
//! other hard links (perhaps outside) is thereby *detached*, never written through; `create`
//! refuses such a name instead. Files are opened non-blocking so that a FIFO cannot hang the
//! caller, and must be regular files.

mod sys;
mod types;

use std::collections::HashSet;
use std::ffi::{CStr, CString, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub use sys::openat2_available;
pub use types::{Entry, Error, Kind, Refusal, Stat, Walk, Written};

/// A directory held open; every operation resolves beneath it.
#[derive(Debug)]
pub struct Beneath {
    dir: OwnedFd,
    root: PathBuf,
    walk: Walk,
    forbidden: HashSet<(u64, u64)>,
}

static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

impl Beneath {
    /// Hold `root` open. A root that is itself a symbolic link is refused (its target could
    /// be anywhere).
    pub fn open(root: &Path) -> Result<Beneath, Error> {
        let shown = root.display().to_string();
        let io = |err| Error::Io {
            path: shown.clone(),
            err,
        };
        let meta = root.symlink_metadata().map_err(io)?;
        if meta.file_type().is_symlink() {
            return Err(Error::Refused {
                path: shown,
                why: Refusal::Symlink,
            });
        }
        let c = CString::new(root.as_os_str().as_encoded_bytes()).map_err(|_| Error::Refused {
            path: shown.clone(),
            why: Refusal::BadPath,
        })?;
        let dir = sys::openat(
            libc::AT_FDCWD,
            &c,
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
            0,
        )
        .map_err(io)?;
        let root = root.canonicalize().map_err(io)?;
        let walk = if openat2_available() {
            Walk::Openat2
        } else {
            Walk::Components
        };
        Ok(Beneath {
            dir,
            root,
            walk,
            forbidden: HashSet::new(),
        })
    }

    /// Resolve with this mechanism (tests force the fallback; `Openat2` where the kernel lacks
    /// it still falls back).
    pub fn with_walk(mut self, walk: Walk) -> Beneath {
        self.walk = if walk == Walk::Openat2 && !openat2_available() {
            Walk::Components
        } else {
            walk
        };
        self
    }

    /// Refuse these (device, inode) pairs whatever name they are reached by (e.g.
    /// [`crate::paths::sensitive_inodes`] of the operator's home).
    pub fn forbid_inodes(mut self, inodes: HashSet<(u64, u64)>) -> Beneath {
        self.forbidden = inodes;
        self
    }

    /// The directory this handle is rooted at, as opened.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// How this handle resolves paths (`openat2` or component by component).
    pub fn walk(&self) -> Walk {
        self.walk
    }

    /// A handle on a directory beneath this one (e.g. the harness's trash folder): later
    /// replacing that directory's name by a symlink does not redirect the handle.
    pub fn sub(&self, rel: &str) -> Result<Beneath, Error> {
        let comps = self.split(rel)?;
        let dir = self.dir_fd(rel, &comps, libc::O_PATH)?;
        let mut root = self.root.clone();
        root.extend(comps.iter());
        Ok(Beneath {
            dir,
            root,
            walk: self.walk,
            forbidden: self.forbidden.clone(),
        })
    }

    /// Lexical normalization: components below the root, or a refusal.
    fn split(&self, raw: &str) -> Result<Vec<OsString>, Error> {
        let bad = |why| Error::Refused {
            path: raw.to_string(),
            why,
        };
        if raw.contains('\0') {
            return Err(bad(Refusal::BadPath));
        }
        let p = Path::new(raw.trim());
        let rel: &Path = if p.is_absolute() {
            match lexical_strip(p, &self.root) {
                Some(r) => return self.split_rel(raw, &r),
                None => return Err(bad(Refusal::Outside)),
            }
        } else {
            p
        };
        self.split_rel(raw, rel)
    }

    fn split_rel(&self, raw: &str, rel: &Path) -> Result<Vec<OsString>, Error> {
        let mut out: Vec<OsString> = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(n) => out.push(n.to_os_string()),
                Component::CurDir => {}
                Component::ParentDir => {
                    if out.pop().is_none() {
                        return Err(Error::Refused {
                            path: raw.to_string(),
                            why: Refusal::Outside,
                        });
                    }
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(Error::Refused {
                        path: raw.to_string(),
                        why: Refusal::Outside,
                    })
                }
            }
        }
        Ok(out)
    }

    /// The parent directory of the last component, as an `O_PATH` fd, and the last name.
    fn parent(&self, raw: &str, comps: &[OsString]) -> Result<(OwnedFd, CString), Error> {
        let Some((last, dirs)) = comps.split_last() else {
            return Err(Error::Refused {
                path: raw.to_string(),
                why: Refusal::BadPath,
            });
        };
        Ok((self.dir_fd(raw, dirs, libc::O_PATH)?, sys::cname(last)))
    }

    /// Open the directory `comps` (relative to the root) with `flags | O_DIRECTORY`.
    fn dir_fd(&self, raw: &str, comps: &[OsString], flags: libc::c_int) -> Result<OwnedFd, Error> {
        let io = |err| Error::Io {
            path: raw.to_string(),
            err,
        };
        if comps.is_empty() {
            return sys::openat(self.dir.as_raw_fd(), c".", flags | libc::O_DIRECTORY, 0)
                .map_err(io);
        }
        if self.walk == Walk::Openat2 {
            let joined = comps
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let bytes: Vec<u8> = comps
                .iter()
                .map(|c| c.clone().into_vec())
                .collect::<Vec<_>>()
                .join(&b'/');
            let c = CString::new(bytes).map_err(|_| Error::Refused {
                path: joined,
                why: Refusal::BadPath,
            })?;
            let resolve =
                libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
            return sys::openat2(self.dir.as_raw_fd(), &c, flags | libc::O_DIRECTORY, resolve)
                .map_err(|e| self.classify(raw, comps, e));
        }
        let mut cur = sys::dup(self.dir.as_raw_fd()).map_err(io)?;
        for (i, comp) in comps.iter().enumerate() {
            let f = if i + 1 == comps.len() {
                flags
            } else {
                libc::O_PATH
            };
            let name = sys::cname(comp);
            cur = sys::openat(
                cur.as_raw_fd(),
                &name,
                f | libc::O_DIRECTORY | libc::O_NOFOLLOW,
                0,
            )
            .map_err(|e| self.classify(raw, &comps[..=i], e))?;
        }
        Ok(cur)
    }

    /// Turn a resolution error into a refusal where it is one (a symlink on the way, an
    /// escape) — re-walking without following anything, only to name the reason.
    fn classify(&self, raw: &str, comps: &[OsString], e: std::io::Error) -> Error {
        let refused = |why| Error::Refused {
            path: raw.to_string(),
            why,
        };
        match e.raw_os_error() {
            Some(libc::ELOOP) => return refused(Refusal::Symlink),
            Some(libc::EXDEV) => return refused(Refusal::Outside),
            Some(libc::ENOTDIR) => {
                let Ok(mut cur) = sys::dup(self.dir.as_raw_fd()) else {
                    return Error::Io {
                        path: raw.to_string(),
                        err: e,
                    };
                };
                for c in comps {
                    let n = sys::cname(c);
                    match sys::lstatat(cur.as_raw_fd(), &n) {
                        Ok(st) if sys::is_lnk(&st) => return refused(Refusal::Symlink),
                        Ok(st) if !sys::is_dir(&st) => return refused(Refusal::NotADirectory),
                        Ok(_) => match sys::openat(
                            cur.as_raw_fd(),
                            &n,
                            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
                            0,
                        ) {
                            Ok(fd) => cur = fd,
                            Err(_) => break,
                        },
                        Err(_) => break,
                    }
                }
            }
            _ => {}
        }
        Error::Io {
            path: raw.to_string(),
            err: e,
        }
    }

    /// Open the last component (never following it) and check it is a regular file we may
    /// use.
    fn open_file(
        &self,
        raw: &str,
        parent: &OwnedFd,
        name: &CStr,
        flags: libc::c_int,
    ) -> Result<(File, Stat), Error> {
        let fd = sys::openat(
            parent.as_raw_fd(),
            name,
            flags | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY,
            0o666,
        )
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => Error::Refused {
                path: raw.to_string(),
                why: Refusal::Symlink,
            },
            Some(libc::EISDIR) => Error::Refused {
                path: raw.to_string(),
                why: Refusal::NotAFile,
            },
            Some(libc::ENXIO) => Error::Refused {
                path: raw.to_string(),
                why: Refusal::NotAFile,
            },
            _ => Error::Io {
                path: raw.to_string(),
                err: e,
            },
        })?;
        let io = |err| Error::Io {
            path: raw.to_string(),
            err,
        };
        let st = Stat::of(&sys::fstat(fd.as_raw_fd()).map_err(io)?);
        if st.kind != Kind::File {
            return Err(Error::Refused {
                path: raw.to_string(),
                why: Refusal::NotAFile,
            });
        }
        if self.forbidden.contains(&(st.dev, st.ino)) {
            return Err(Error::Refused {
                path: raw.to_string(),
                why: Refusal::Forbidden,
            });
        }
        sys::set_blocking(fd.as_raw_fd()).map_err(io)?;
        Ok((File::from(fd), st))
    }

    /// Open a regular file for reading.
    pub fn read(&self, rel: &str) -> Result<File, Error> {
        let comps = self.split(rel)?;
        let (parent, name) = self.parent(rel, &comps)?;
        Ok(self.open_file(rel, &parent, &name, libc::O_RDONLY)?.0)
    }

    /// The whole content of a regular file.
    pub fn read_bytes(&self, rel: &str) -> Result<Vec<u8>, Error> {
        let mut f = self.read(rel)?;
        let mut v = Vec::new();
        f.read_to_end(&mut v).map_err(|err| Error::Io {
            path: rel.to_string(),
            err,
        })?;
        Ok(v)
    }

    /// Metadata of the object `rel` names, not following it (the root for `""` or `.`).
    pub fn stat(&self, rel: &str) -> Result<Stat, Error> {
        let comps = self.split(rel)?;
        let io = |err| Error::Io {
            path: rel.to_string(),
            err,
        };
        if comps.is_empty() {
            return Ok(Stat::of(&sys::fstat(self.dir.as_raw_fd()).map_err(io)?));
        }
        let (parent, name) = self.parent(rel, &comps)?;
        Ok(Stat::of(
            &sys::lstatat(parent.as_raw_fd(), &name).map_err(io)?,
        ))
    }

    /// Replace the file's content atomically (temp file beneath the same directory, then
    /// `renameat`). Keeps the permission bits of an existing file; a name with other hard
    /// links is detached from them.
    pub fn write(&self, rel: &str, data: &[u8]) -> Result<Written, Error> {
        let comps = self.split(rel)?;
        let (parent, name) = self.parent(rel, &comps)?;
        let existing = match sys::lstatat(parent.as_raw_fd(), &name) {
            Ok(st) => Some(Stat::of(&st)),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => None,
            Err(err) => {
                return Err(Error::Io {
                    path: rel.to_string(),
                    err,
                })
            }
        };
        if let Some(st) = existing {
            match st.kind {
                Kind::Symlink => {
                    return Err(Error::Refused {
                        path: rel.to_string(),
                        why: Refusal::Symlink,
                    })
                }
                Kind::File => {}
                _ => {
                    return Err(Error::Refused {
                        path: rel.to_string(),
                        why: Refusal::NotAFile,
                    })
                }
            }
            if self.forbidden.contains(&(st.dev, st.ino)) {
                return Err(Error::Refused {
                    path: rel.to_string(),
                    why: Refusal::Forbidden,
                });
            }
        }
        self.replace(rel, &parent, &name, data, existing, false)
    }

    /// Write `data` to a temp file beneath `parent` and rename it over `name`. With `expect`
    /// and `check`, the name must still be that inode just before the rename.
    fn replace(
        &self,
        rel: &str,
        parent: &OwnedFd,
        name: &CStr,
        data: &[u8],
        expect: Option<Stat>,
        check: bool,
    ) -> Result<Written, Error> {
        let io = |err| Error::Io {
            path: rel.to_string(),
            err,
        };
        let seq = TEMP_SEQ.fetch_add(1, Ordering::Relaxed);
        let stem: String = String::from_utf8_lossy(name.to_bytes())
            .chars()
            .take(80)
            .collect();
        let tmp = CString::new(format!(".{stem}.lrab-{}-{seq}.tmp", std::process::id())).map_err(
            |_| Error::Refused {
                path: rel.to_string(),
                why: Refusal::BadPath,
            },
        )?;
        let fd = sys::openat(
            parent.as_raw_fd(),
            &tmp,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
            0o666,
        )
        .map_err(io)?;
        let mut f = File::from(fd);
        let result = (|| {
            f.write_all(data)?;
            if let Some(st) = expect {
                // SAFETY: fchmod on our own temp file.
                sys::cvt(unsafe { libc::fchmod(f.as_raw_fd(), st.mode) })?;
            }
            Ok(())
        })();
        if let Err(err) = result {
            let _ = sys::unlinkat(parent.as_raw_fd(), &tmp, 0);
            return Err(io(err));
        }
        if check {
            let now = sys::lstatat(parent.as_raw_fd(), name)
                .ok()
                .map(|s| Stat::of(&s));
            let same = match (now, expect) {
                (Some(a), Some(b)) => a.dev == b.dev && a.ino == b.ino,
                (None, None) => true,
                _ => false,
            };
            if !same {
                let _ = sys::unlinkat(parent.as_raw_fd(), &tmp, 0);
                return Err(Error::Refused {
                    path: rel.to_string(),
                    why: Refusal::Changed,
                });
            }
        }
        // rename never follows a symlink at `name`: at worst it replaces the link itself
        if let Err(err) = sys::renameat(parent.as_raw_fd(), &tmp, parent.as_raw_fd(), name, false) {
            let _ = sys::unlinkat(parent.as_raw_fd(), &tmp, 0);
            return Err(io(err));
        }
        Ok(Written {
            len: data.len() as u64,
            detached: expect.is_some_and(|s| s.nlink > 1),
        })
    }

    /// Open a regular file for writing (and reading back) from the start (created if
    /// missing, truncated). A name with other hard links is refused (truncating it would
    /// change them).
    pub fn create(&self, rel: &str) -> Result<File, Error> {
        let comps = self.split(rel)?;
        let (parent, name) = self.parent(rel, &comps)?;
        let (f, st) = self.open_file(rel, &parent, &name, libc::O_RDWR | libc::O_CREAT)?;
        if st.nlink > 1 {
            return Err(Error::Refused {
                path: rel.to_string(),
                why: Refusal::HardLinked,
            });
        }
        f.set_len(0).map_err(|err| Error::Io {
            path: rel.to_string(),
            err,
        })?;
        Ok(f)
    }

    /// Open a regular file for appending (created if missing), to be written many times
    /// through the one handle (a log). A name with other hard links is refused.
    pub fn open_append(&self, rel: &str) -> Result<File, Error> {
        let comps = self.split(rel)?;
        let (parent, name) = self.parent(rel, &comps)?;
        let (f, st) = self.open_file(
            rel,
            &parent,
            &name,
            libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT,
        )?;
        if st.nlink > 1 {
            return Err(Error::Refused {
                path: rel.to_string(),
                why: Refusal::HardLinked,
            });
        }
        Ok(f)
    }

    /// Append `data` (the file is created if missing). A name with other hard links is
    /// detached first (its content copied to a new inode), so they never change.
    pub fn append(&self, rel: &str, data: &[u8]) -> Result<Written, Error> {
        let comps = self.split(rel)?;
        let (parent, name) = self.parent(rel, &comps)?;
        let (mut f, st) = self.open_file(
            rel,
            &parent,
            &name,
            libc::O_RDWR | libc::O_APPEND | libc::O_CREAT,
        )?;
        let io = |err| Error::Io {
            path: rel.to_string(),
            err,
        };
        if st.nlink > 1 {
            let mut all = Vec::new();
            f.read_to_end(&mut all).map_err(io)?;
            all.extend_from_slice(data);
            return self.replace(rel, &parent, &name, &all, Some(st), true);
        }
        f.write_all(data).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        Ok(Written {
            len,
            detached: false,
        })
    }

    /// Read-modify-write: `edit` gets the current bytes (read through the opened inode) and
    /// returns the new ones, or its own error. The new content replaces the file atomically,
    /// only if the name still refers to the inode that was read.
    pub fn edit<E>(
        &self,
        rel: &str,
        edit: impl FnOnce(&[u8]) -> Result<Vec<u8>, E>,
    ) -> Result<Result<Written, E>, Error> {
        let comps = self.split(rel)?;
        let (parent, name) = self.parent(rel, &comps)?;
        let (mut f, st) = self.open_file(rel, &parent, &name, libc::O_RDONLY)?;
        let mut old = Vec::new();
        f.read_to_end(&mut old).map_err(|err| Error::Io {
            path: rel.to_string(),
            err,
        })?;
        let new = match edit(&old) {
            Ok(n) => n,
            Err(e) => return Ok(Err(e)),
        };
        self.replace(rel, &parent, &name, &new, Some(st), true)
            .map(Ok)
    }

    /// The entries of a directory (the root for `""`), sorted by name; symlinks are reported,
    /// not followed.
    pub fn list(&self, rel: &str) -> Result<Vec<Entry>, Error> {
        let comps = self.split(rel)?;
        let io = |err| Error::Io {
            path: rel.to_string(),
            err,
        };
        let dir = self.dir_fd(rel, &comps, libc::O_RDONLY)?;
        let mut out = Vec::new();
        for n in sys::read_names(dir.as_raw_fd()).map_err(io)? {
            let Ok(st) = sys::lstatat(dir.as_raw_fd(), &n) else {
                continue;
            };
            let s = Stat::of(&st);
            out.push(Entry {
                name: OsString::from_vec(n.into_bytes()),
                kind: s.kind,
                len: s.len,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// `mkdir -p` beneath the root; a symlink on the way is refused.
    pub fn mkdir_all(&self, rel: &str) -> Result<(), Error> {
        let comps = self.split(rel)?;
        let io = |err| Error::Io {
            path: rel.to_string(),
            err,
        };
        let mut cur = sys::dup(self.dir.as_raw_fd()).map_err(io)?;
        for (i, c) in comps.iter().enumerate() {
            let n = sys::cname(c);
            match sys::mkdirat(cur.as_raw_fd(), &n) {
                Err(e) if e.raw_os_error() != Some(libc::EEXIST) => return Err(io(e)),
                _ => {}
            }
            cur = sys::openat(
                cur.as_raw_fd(),
                &n,
                libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
                0,
            )
            .map_err(|e| self.classify(rel, &comps[..=i], e))?;
        }
        Ok(())
    }

    /// Delete a file, a symlink (not its target) or an empty directory.
    pub fn remove(&self, rel: &str) -> Result<(), Error> {
        self.remove_with(rel, false)
    }

    /// Delete recursively, descending through directory fds only (a symlink inside is
    /// removed, never followed).
    pub fn remove_all(&self, rel: &str) -> Result<(), Error> {
        self.remove_with(rel, true)
    }

    fn remove_with(&self, rel: &str, recursive: bool) -> Result<(), Error> {
        let comps = self.split(rel)?;
        let (parent, name) = self.parent(rel, &comps)?;
        let io = |err| Error::Io {
            path: rel.to_string(),
            err,
        };
        let st = sys::lstatat(parent.as_raw_fd(), &name).map_err(io)?;
        if !sys::is_dir(&st) {
            return sys::unlinkat(parent.as_raw_fd(), &name, 0).map_err(io);
        }
        if recursive {
            sys::remove_tree(parent.as_raw_fd(), &name, 0).map_err(io)
        } else {
            sys::unlinkat(parent.as_raw_fd(), &name, libc::AT_REMOVEDIR).map_err(io)
        }
    }

    /// Move `from` to `to` inside this root (never replacing an existing `to`).
    pub fn rename(&self, from: &str, to: &str) -> Result<(), Error> {
        self.move_to(from, self, to)
    }

    /// Move `from` (beneath this root) to `to` beneath `dest` — e.g. into the harness's
    /// trash — without replacing anything there. Both ends are resolved through their
    /// directory fds.
    pub fn move_to(&self, from: &str, dest: &Beneath, to: &str) -> Result<(), Error> {
        let fc = self.split(from)?;
        let (fp, fname) = self.parent(from, &fc)?;
        let tc = dest.split(to)?;
        let (tp, tname) = dest.parent(to, &tc)?;
        sys::renameat(fp.as_raw_fd(), &fname, tp.as_raw_fd(), &tname, true).map_err(|err| {
            Error::Io {
                path: from.to_string(),
                err,
            }
        })
    }
}

/// `p` (absolute) relative to `root`, compared component by component after lexical
/// normalization; `None` when it is not inside.
fn lexical_strip(p: &Path, root: &Path) -> Option<PathBuf> {
    let norm = crate::paths::lexical(p);
    norm.strip_prefix(root).ok().map(Path::to_path_buf)
}

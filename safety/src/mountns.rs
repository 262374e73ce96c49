//! The sandbox's mount namespace. Both backends get a private `/proc` (only the command's own
//! pid namespace is visible: no other process's command line, environment or root), a
//! private `/dev/shm` and a devpts instance of their own on `/dev/pts` (pseudo-terminals the
//! command opens work; the host's — the operator's terminals — are not there). The namespace backend goes further and builds a new root from the
//! allow-list: an empty tmpfs holding only bind mounts of the allowed paths (read-only except
//! the workdir and temp dir), secrets masked, then `pivot_root` into it — what is not listed
//! does not exist for the command.
//!
//! Everything is prepared in the parent as C strings and open file descriptors; the child
//! ([`MountPlan::apply`]) only makes system calls.

use crate::allowlist::AllowList;
use crate::fsrules::Grant;
use crate::step::Step;
use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

fn cstr(p: &Path) -> std::io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "path contains NUL"))
}

#[derive(Debug)]
struct Bind {
    src: CString,
    dst: CString,
    /// Remount read-only with these flags (the source mount's own flags, which a user
    /// namespace may not drop).
    readonly: Option<libc::c_ulong>,
}

#[derive(Debug)]
struct RootPlan {
    newroot: CString,
    dirs: Vec<CString>,
    files: Vec<CString>,
    symlinks: Vec<(CString, CString)>,
    binds: Vec<Bind>,
    /// (path in the new root, is a directory)
    masks: Vec<(CString, bool)>,
    proc_dst: CString,
    shm_dst: CString,
    pts_dst: CString,
    workdir: CString,
}

/// What the child mounts.
#[derive(Debug)]
pub struct MountPlan {
    root: Option<RootPlan>,
}

/// What [`MountPlan::apply`] could set up (the light plan gives up on what the kernel refuses).
#[derive(Clone, Copy, Debug, Default)]
pub struct Mounted {
    /// A private tmpfs is on `/dev/shm`.
    pub shm: bool,
    /// A private devpts instance is on `/dev/pts`.
    pub pts: bool,
}

/// A devpts instance of the sandbox's own; `ptmxmode` makes its `ptmx` usable without
/// capabilities (`/dev/ptmx` opens the instance on the `pts` next to it).
const DEVPTS_OPTS: &CStr = c"newinstance,ptmxmode=0666,mode=0620";
/// Not `MS_NODEV`: its entries are the device nodes.
const DEVPTS_FLAGS: libc::c_ulong = libc::MS_NOSUID | libc::MS_NOEXEC;

/// Where the new root is assembled (in the child's mount namespace only): an existing
/// directory that is neither inside nor above any bind source, so that the tmpfs mounted on
/// it hides none of them and no recursive bind copies it.
fn staging_dir(list: &AllowList) -> std::io::Result<PathBuf> {
    for c in [
        "/dev/shm", "/mnt", "/media", "/srv", "/var/tmp", "/opt", "/tmp", "/run",
    ] {
        let p = Path::new(c);
        if !p.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            continue;
        }
        if list
            .roots
            .iter()
            .all(|(r, _)| !r.starts_with(p) && !p.starts_with(r))
        {
            return Ok(p.to_path_buf());
        }
    }
    Err(std::io::Error::other("no directory to assemble the sandbox root on (need one of /dev/shm, /mnt, /media, /srv, /var/tmp, /opt, /tmp, /run outside the allowed paths)"))
}

/// Locked mount flags of the mount holding `p` (statvfs flags → mount flags).
fn mount_flags(p: &Path) -> libc::c_ulong {
    let Ok(c) = cstr(p) else { return 0 };
    // SAFETY: statvfs fills a zeroed struct we own.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return 0;
    }
    let f = s.f_flag;
    let mut m = 0;
    for (st, ms) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if f & st != 0 {
            m |= ms;
        }
    }
    m
}

impl MountPlan {
    /// Private `/proc` and `/dev/shm` only (the Landlock backend: Landlock does the rest).
    pub fn light() -> MountPlan {
        MountPlan { root: None }
    }

    /// A new root holding only `list` (the namespace backend); `workdir` is where the child
    /// changes to after the pivot.
    pub fn new_root(list: &AllowList, workdir: &Path) -> std::io::Result<MountPlan> {
        let base = staging_dir(list)?;
        let under = |p: &Path| -> PathBuf {
            let rel = p.strip_prefix("/").unwrap_or(p);
            base.join(rel)
        };
        let mut dirs: Vec<PathBuf> = Vec::new();
        let mut files: Vec<PathBuf> = Vec::new();
        let mut symlinks: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut binds: Vec<Bind> = Vec::new();
        let want_dir = |dirs: &mut Vec<PathBuf>, p: &Path| {
            let mut acc = PathBuf::from("/");
            for c in p.components().skip(1) {
                acc.push(c);
                if !dirs.contains(&acc) {
                    dirs.push(acc.clone());
                }
            }
        };
        // roots in path order; a root inside another writable root needs no mount of its own
        let mut roots: Vec<(PathBuf, Grant)> = list.roots.clone();
        roots.sort_by(|a, b| a.0.cmp(&b.0));
        let mut full: Vec<PathBuf> = Vec::new();
        for (p, g) in &roots {
            if full.iter().any(|f| p.starts_with(f)) {
                continue;
            }
            let Ok(meta) = p.symlink_metadata() else {
                continue;
            };
            if meta.file_type().is_symlink() {
                // /bin -> usr/bin stays a link; its target is a root of its own
                if let Ok(t) = std::fs::read_link(p) {
                    if let Some(parent) = p.parent() {
                        want_dir(&mut dirs, parent);
                    }
                    symlinks.push((t, p.to_path_buf()));
                }
                continue;
            }
            if meta.is_dir() {
                want_dir(&mut dirs, p);
            } else {
                if let Some(parent) = p.parent() {
                    want_dir(&mut dirs, parent);
                }
                files.push(p.clone());
            }
            let readonly = match g {
                Grant::Full | Grant::Device => None,
                _ => Some(mount_flags(p)),
            };
            if *g == Grant::Full {
                full.push(p.clone());
            }
            binds.push(Bind {
                src: cstr(p)?,
                dst: cstr(&under(p))?,
                readonly,
            });
        }
        for d in ["/proc", "/dev/shm", "/dev/pts", "/tmp"] {
            want_dir(&mut dirs, Path::new(d));
        }
        for (t, l) in [
            ("/proc/self/fd", "/dev/fd"),
            ("/proc/self/fd/0", "/dev/stdin"),
            ("/proc/self/fd/1", "/dev/stdout"),
            ("/proc/self/fd/2", "/dev/stderr"),
            ("pts/ptmx", "/dev/ptmx"),
        ] {
            symlinks.push((PathBuf::from(t), PathBuf::from(l)));
        }
        let masks = list
            .masks
            .iter()
            .map(|m| {
                Ok((
                    cstr(&under(m))?,
                    m.symlink_metadata().is_ok_and(|x| x.is_dir()),
                ))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        let to_c = |v: &[PathBuf]| {
            v.iter()
                .map(|p| cstr(&under(p)))
                .collect::<std::io::Result<Vec<_>>>()
        };
        Ok(MountPlan {
            root: Some(RootPlan {
                newroot: cstr(&base)?,
                dirs: to_c(&dirs)?,
                files: to_c(&files)?,
                symlinks: symlinks
                    .iter()
                    .map(|(t, l)| Ok((cstr(t)?, cstr(&under(l))?)))
                    .collect::<std::io::Result<Vec<_>>>()?,
                binds,
                masks,
                proc_dst: cstr(&under(Path::new("/proc")))?,
                shm_dst: cstr(&under(Path::new("/dev/shm")))?,
                pts_dst: cstr(&under(Path::new("/dev/pts")))?,
                workdir: cstr(&workdir.canonicalize()?)?,
            }),
        })
    }

    /// The directory the command must change to after [`MountPlan::apply`] (a pivot leaves the
    /// inherited working directory in the old tree), if any.
    pub fn chdir_target(&self) -> Option<&CString> {
        self.root.as_ref().map(|r| &r.workdir)
    }

    /// In the child (pid 1 of the new pid namespace, in the new mount namespace): make the
    /// mounts, setting `step` to the one under way. Only system calls.
    pub fn apply(&self, step: &mut Step) -> std::io::Result<Mounted> {
        let nosuid = libc::MS_NOSUID | libc::MS_NODEV;
        *step = Step::MountPrivate;
        // nothing mounted here may propagate back to the host's mount namespace
        let private = mnt(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE, None);
        let Some(r) = &self.root else {
            return Ok(light(private.is_ok()));
        };
        private?;
        *step = Step::MountNewRoot;
        mnt(
            Some(c"tmpfs"),
            &r.newroot,
            Some(c"tmpfs"),
            nosuid,
            Some(c"mode=0755,size=4m"),
        )?;
        for d in &r.dirs {
            // SAFETY: a C string owned by the plan.
            if unsafe { libc::mkdir(d.as_ptr(), 0o755) } != 0 && errno() != libc::EEXIST {
                return Err(std::io::Error::last_os_error());
            }
        }
        for f in &r.files {
            // SAFETY: a C string owned by the plan; the fd is closed at once.
            let fd = unsafe {
                libc::open(
                    f.as_ptr(),
                    libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                    0o644,
                )
            };
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: closing the fd just opened.
            unsafe { libc::close(fd) };
        }
        for (t, l) in &r.symlinks {
            // SAFETY: C strings owned by the plan.
            if unsafe { libc::symlink(t.as_ptr(), l.as_ptr()) } != 0 && errno() != libc::EEXIST {
                return Err(std::io::Error::last_os_error());
            }
        }
        *step = Step::MountBind;
        for b in &r.binds {
            mnt(
                Some(&b.src),
                &b.dst,
                None,
                libc::MS_BIND | libc::MS_REC,
                None,
            )?;
            if let Some(flags) = b.readonly {
                let f = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags;
                mnt(None, &b.dst, None, f, None)?;
            }
        }
        *step = Step::MountMask;
        for (m, is_dir) in &r.masks {
            if *is_dir {
                let f = libc::MS_RDONLY | nosuid | libc::MS_NOEXEC;
                mnt(
                    Some(c"tmpfs"),
                    m,
                    Some(c"tmpfs"),
                    f,
                    Some(c"size=4k,mode=000"),
                )?;
            } else {
                mnt(Some(c"/dev/null"), m, None, libc::MS_BIND, None)?;
            }
        }
        *step = Step::MountProc;
        let pflags = nosuid | libc::MS_NOEXEC;
        if mnt(Some(c"proc"), &r.proc_dst, Some(c"proc"), pflags, None).is_err() {
            // a kernel that refuses a new procfs here (a container masking parts of /proc)
            mnt(
                Some(c"/proc"),
                &r.proc_dst,
                None,
                libc::MS_BIND | libc::MS_REC,
                None,
            )?;
        }
        *step = Step::MountShm;
        mnt(
            Some(c"tmpfs"),
            &r.shm_dst,
            Some(c"tmpfs"),
            nosuid,
            Some(c"mode=1777,size=64m"),
        )?;
        // best effort: without it the command has no pseudo-terminals, nothing else is lost
        let pts = mnt(
            Some(c"devpts"),
            &r.pts_dst,
            Some(c"devpts"),
            DEVPTS_FLAGS,
            Some(DEVPTS_OPTS),
        )
        .is_ok();
        *step = Step::PivotRoot;
        // SAFETY: C strings; pivot_root(".", ".") stacks the old root on the new one, which
        // the detach then removes.
        unsafe {
            if libc::chdir(r.newroot.as_ptr()) != 0
                || libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) != 0
                || libc::umount2(c".".as_ptr(), libc::MNT_DETACH) != 0
                || libc::chdir(c"/".as_ptr()) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        // nothing but the writable binds can be written
        *step = Step::RemountReadOnly;
        let f = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | nosuid;
        mnt(None, c"/", None, f, None)?;
        Ok(Mounted { shm: true, pts })
    }
}

/// The light plan: a procfs of the new pid namespace on `/proc`, a private tmpfs on
/// `/dev/shm`, a private devpts on `/dev/pts`. Each needs the mount under it made private first; when `/` could not be (a
/// chroot whose root is not a mount point), the mount point itself is made private, and where
/// that fails too the host's file system stays there — never mounted over with propagation to
/// the host. Landlock limits what is read in a host `/proc`; a host `/dev/shm` or `/dev/pts`
/// gets no rule.
fn light(root_private: bool) -> Mounted {
    let nosuid = libc::MS_NOSUID | libc::MS_NODEV;
    let own = |dst: &CStr, fstype: &CStr, flags: libc::c_ulong, data: Option<&CStr>| {
        (root_private || mnt(None, dst, None, libc::MS_REC | libc::MS_PRIVATE, None).is_ok())
            && mnt(Some(fstype), dst, Some(fstype), flags, data).is_ok()
    };
    // without a procfs of its own the command sees the host's (the trial reports that)
    own(c"/proc", c"proc", nosuid | libc::MS_NOEXEC, None);
    Mounted {
        shm: own(c"/dev/shm", c"tmpfs", nosuid, Some(c"mode=1777")),
        pts: own(c"/dev/pts", c"devpts", DEVPTS_FLAGS, Some(DEVPTS_OPTS)),
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// mount(2) on C strings (no allocation).
fn mnt(
    src: Option<&CStr>,
    dst: &CStr,
    fstype: Option<&CStr>,
    flags: libc::c_ulong,
    data: Option<&CStr>,
) -> std::io::Result<()> {
    let p = |c: Option<&CStr>| c.map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: every pointer is null or a live C string for the duration of the call.
    let rc = unsafe {
        libc::mount(
            p(src),
            dst.as_ptr(),
            p(fstype),
            flags,
            p(data) as *const libc::c_void,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

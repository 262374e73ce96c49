//! Kernel confinement for model-chosen commands on Linux: Landlock when the kernel has it, else
//! user+mount(+network) namespaces via `unshare`, else nothing — and then model-chosen commands
//! are refused unless the caller explicitly accepts running unconfined.
//!
//! Policy: everything readable and executable; writable only the workdir, a private temp dir and
//! harmless devices; selected paths hidden (the home directory's secrets); no network.

use landlock::{
    Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope, ABI,
};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Sandbox {
    /// Landlock with this ABI version (network rules need ≥ 4).
    Landlock {
        abi: i32,
    },
    /// `unshare -Urm[n]`: read-only bind of `/`, writable binds of workdir and temp dir.
    Namespaces,
    None,
}

#[derive(Clone, Debug, Default)]
pub struct Policy {
    pub network: bool,
    /// Paths that must not be readable (e.g. the real `~/.ssh`).
    pub hide: Vec<PathBuf>,
    /// Use this backend instead of the best detected one (tests of both paths).
    pub force: Option<Sandbox>,
    /// Run without confinement when none is available.
    pub allow_unconfined: bool,
}

fn landlock_abi() -> i32 {
    // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    // SAFETY: the version query takes no pointers we own; it only returns a number or -1.
    unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        ) as i32
    }
}

fn unshare_works(network: bool) -> bool {
    let flags = if network { "-Urm" } else { "-Urmn" };
    Command::new("unshare")
        .arg(flags)
        .arg("true")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl Sandbox {
    /// The best confinement this kernel offers.
    pub fn detect() -> Sandbox {
        let abi = landlock_abi();
        if abi >= 1 {
            return Sandbox::Landlock { abi };
        }
        if unshare_works(false) {
            return Sandbox::Namespaces;
        }
        Sandbox::None
    }
    /// A backend named by the operator (`landlock`, `namespaces`; empty = detect), for forcing
    /// the fallback on a machine that also has Landlock. Naming one the kernel lacks is an
    /// error, never a silent downgrade.
    pub fn named(name: &str) -> Result<Sandbox, String> {
        match name.trim() {
            "" | "auto" => Ok(Sandbox::detect()),
            "landlock" => match Sandbox::detect() {
                s @ Sandbox::Landlock { .. } => Ok(s),
                _ => Err("sandbox 'landlock' requested but this kernel has no Landlock".into()),
            },
            "namespaces" => {
                if unshare_works(false) {
                    Ok(Sandbox::Namespaces)
                } else {
                    Err("sandbox 'namespaces' requested but unprivileged user namespaces do not work here".into())
                }
            }
            o => Err(format!(
                "unknown sandbox '{o}' (expected landlock, namespaces or auto)"
            )),
        }
    }
    /// The name [`Sandbox::named`] takes for this backend (what `LRAB_SANDBOX` is set to).
    pub fn key(&self) -> &'static str {
        match self {
            Sandbox::Landlock { .. } => "landlock",
            Sandbox::Namespaces => "namespaces",
            Sandbox::None => "none",
        }
    }
    /// Can this backend also cut the network?
    pub fn describe(&self) -> String {
        match self {
            Sandbox::Landlock { abi } => format!("landlock ABI {abi} (network rules: {})", if *abi >= 4 { "yes" } else { "no, adds a network namespace" }),
            Sandbox::Namespaces => "user+mount+network namespaces via unshare (read-only /, writable workdir and temp)".into(),
            Sandbox::None => "NONE — no kernel confinement available; model-chosen shell commands are refused unless allow_unconfined".into(),
        }
    }
}

#[derive(Debug)]
pub struct Unconfined(pub String);

impl std::fmt::Display for Unconfined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Unconfined {}

const NS_WRAPPER: &str = r#"set -e
W="$1"; T="$2"; shift 2
mount --bind "$W" "$W"
mount --bind "$T" "$T"
awk '{print $5}' /proc/self/mountinfo | sort -u | while read -r m; do
  case "$m" in "$W"|"$T") continue;; esac
  mount -o remount,bind,ro "$m" 2>/dev/null || true
done
while [ "$1" != "--" ]; do
  if [ -d "$1" ]; then mount -t tmpfs -o ro,size=4k none "$1"; elif [ -e "$1" ]; then mount --bind /dev/null "$1"; fi
  shift
done
shift
cd "$W"
exec "$@"
"#;

/// A `sh -c cmd` child confined to `workdir` + `tmp`. The child's cwd is `workdir`.
pub fn sandboxed_command(
    cmd: &str,
    workdir: &Path,
    tmp: &Path,
    policy: &Policy,
) -> Result<(Command, Sandbox), Unconfined> {
    let backend = policy.force.clone().unwrap_or_else(Sandbox::detect);
    match backend {
        Sandbox::Landlock { abi } => {
            let ruleset = landlock_ruleset(abi, workdir, tmp, policy).map_err(|e| Unconfined(format!("landlock setup failed: {e}")))?;
            let mut c = Command::new("sh");
            c.arg("-c").arg(cmd).current_dir(workdir);
            let cell = std::sync::Mutex::new(Some(ruleset));
            // a network namespace also covers UDP, which Landlock's TCP rules do not; it is required
            // when the ABI has no network rules
            let want_netns = !policy.network;
            let need_netns = want_netns && abi < 4;
            // SAFETY: the closure only takes an already-built ruleset out of an uncontended
            // mutex and makes the landlock_restrict_self / prctl / unshare system calls; it
            // allocates nothing on the success path.
            unsafe {
                c.pre_exec(move || {
                    drop_capabilities_bounding();
                    // root can make a network namespace directly; others need a user namespace too
                    if want_netns
                        && libc::unshare(libc::CLONE_NEWNET) != 0
                        && libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0
                        && need_netns
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    let r = cell.lock().ok().and_then(|mut g| g.take());
                    match r {
                        Some(r) => r.restrict_self().map(|_| ()).map_err(|_| std::io::Error::from_raw_os_error(libc::EPERM))?,
                        None => return Err(std::io::Error::from_raw_os_error(libc::EPERM)),
                    }
                    drop_capabilities();
                    Ok(())
                });
            }
            Ok((c, Sandbox::Landlock { abi }))
        }
        Sandbox::Namespaces => {
            let mut c = Command::new("unshare");
            c.arg(if policy.network { "-Urm" } else { "-Urmn" }).arg("--pid").arg("--fork").arg("--mount-proc").arg("--propagation").arg("private").arg("sh").arg("-c").arg(NS_WRAPPER).arg("lrab-sandbox");
            c.arg(workdir).arg(tmp);
            for h in &policy.hide {
                c.arg(h);
            }
            c.arg("--").arg("sh").arg("-c").arg(cmd).current_dir(workdir);
            Ok((c, Sandbox::Namespaces))
        }
        Sandbox::None if policy.allow_unconfined => {
            eprintln!("lrab-safety: WARNING: running a model-chosen command WITHOUT kernel confinement (allow_unconfined)");
            let mut c = Command::new("sh");
            c.arg("-c").arg(cmd).current_dir(workdir);
            Ok((c, Sandbox::None))
        }
        Sandbox::None => Err(Unconfined(
            "no kernel confinement (Landlock or user namespaces) is available on this machine; refusing to run a model-chosen command (pass allow_unconfined to override)".into(),
        )),
    }
}

/// Empty the capability bounding set so that even uid 0 gains no capabilities at exec (no
/// reboot(2), mount, raw I/O, or DAC override for a command running as root). Errors are ignored:
/// an unprivileged process has nothing to drop.
fn drop_capabilities_bounding() {
    for cap in 0..64 {
        // SAFETY: prctl with integer arguments only.
        unsafe {
            libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0);
        }
    }
    // SAFETY: prctl with integer arguments only.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        );
    }
}

/// Clear the effective, permitted and inheritable sets (capset(2), version 3).
fn drop_capabilities() {
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
    let hdr = Header {
        version: 0x2008_0522,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: both pointers refer to live, correctly laid out stack values for the call.
    unsafe {
        libc::syscall(libc::SYS_capset, &hdr as *const Header, data.as_ptr());
    }
}

/// Read/execute everywhere except hidden paths, full access in workdir and tmp, no TCP.
fn landlock_ruleset(
    abi: i32,
    workdir: &Path,
    tmp: &Path,
    policy: &Policy,
) -> anyhow::Result<landlock::RulesetCreated> {
    let v = ABI::from(abi);
    let all = AccessFs::from_all(v);
    let read = AccessFs::from_read(v);
    let mut rs = Ruleset::default().handle_access(all)?;
    if !policy.network && abi >= 4 {
        rs = rs.handle_access(AccessNet::from_all(v))?;
    }
    if abi >= 6 {
        // no signals to processes outside the sandbox (`kill -9 -1` as root), no abstract
        // unix sockets to outside daemons
        rs = rs.scope(Scope::Signal)?.scope(Scope::AbstractUnixSocket)?;
    }
    let mut created = rs.create()?;
    // readable roots: "/" minus hidden paths — allow every sibling along the way to each hidden
    // path instead of the path itself
    for dir in readable_roots(&policy.hide) {
        if let Ok(fd) = PathFd::new(&dir) {
            let acc = if std::fs::metadata(&dir).is_ok_and(|m| m.is_dir()) {
                read
            } else {
                read & AccessFs::from_file(v)
            };
            created = created.add_rule(PathBeneath::new(fd, acc))?;
        }
    }
    for w in [workdir, tmp] {
        created = created.add_rule(PathBeneath::new(PathFd::new(w)?, all))?;
    }
    for dev in [
        "/dev/null",
        "/dev/zero",
        "/dev/tty",
        "/dev/urandom",
        "/dev/random",
    ] {
        if let Ok(fd) = PathFd::new(dev) {
            created = created.add_rule(PathBeneath::new(fd, AccessFs::from_file(v)))?;
        }
    }
    if let Ok(fd) = PathFd::new("/dev/pts") {
        created = created.add_rule(PathBeneath::new(fd, AccessFs::from_file(v)))?;
    }
    Ok(created)
}

/// The set of paths whose union is "/" minus `hide` (and minus directories on the way).
fn readable_roots(hide: &[PathBuf]) -> Vec<PathBuf> {
    let hide: Vec<PathBuf> = hide
        .iter()
        .map(|h| h.canonicalize().unwrap_or_else(|_| h.clone()))
        .collect();
    if hide.is_empty() {
        return vec![PathBuf::from("/")];
    }
    let mut out = Vec::new();
    fn walk(dir: &Path, hide: &[PathBuf], out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if hide.iter().any(|h| h == &p) {
                continue;
            }
            if hide.iter().any(|h| h.starts_with(&p)) && e.file_type().is_ok_and(|t| t.is_dir()) {
                walk(&p, hide, out);
            } else {
                out.push(p);
            }
        }
    }
    walk(Path::new("/"), &hide, &mut out);
    out
}

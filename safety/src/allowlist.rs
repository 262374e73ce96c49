//! What a model-chosen command may read outside its working directory: a closed list, the same
//! for both confinement backends (Landlock rules, or the bind mounts of the namespace root).
//!
//! * read + execute: `/usr`, `/bin`, `/sbin`, `/lib`, `/lib32`, `/lib64`, `/libx32`, and the
//!   toolchains on `PATH` that live elsewhere (see [`toolchain_roots`]), plus the directories
//!   named in `LRAB_SANDBOX_READ` (colon-separated);
//! * read: `/etc` minus its secrets ([`ETC_SECRETS`]), the sandbox's own `/proc` (its pid
//!   namespace only), `/sys/devices/system/cpu` and `/sys/devices/system/node`;
//! * read + write: `/dev/null`, `/dev/zero`, `/dev/full`, `/dev/random`, `/dev/urandom`,
//!   `/dev/tty` (the command has no controlling terminal: opening it fails), a private
//!   `/dev/pts` instance with its `/dev/ptmx`, a private `/dev/shm`;
//! * everything: the working directory and the private temp dir.
//!
//! Never readable, even inside an allowed directory: every home's credential and start-up
//! files (`paths::HOME_SENSITIVE`, `paths::STARTUP_FILES`), the system secrets, and whatever
//! the caller hides ([`crate::sandbox::Policy::hide`]).

use crate::fsrules::Grant;
use std::path::{Path, PathBuf};

/// Read + execute system directories.
pub const SYSTEM_EXEC: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// Read-only extras beyond `/etc` (the sandbox's own `/proc` is added by the child).
pub const SYSTEM_READ: &[&str] = &["/sys/devices/system/cpu", "/sys/devices/system/node"];

/// Harmless device files every program may read and write. Not the host's `/dev/pts`: its
/// entries are the operator's terminals (keystrokes in, escape sequences out); the sandbox
/// mounts a devpts instance of its own there (`mountns`).
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// Entries of `/etc` that hold secrets: password hashes, host keys, TLS keys, Kerberos keys,
/// stored Wi-Fi and VPN credentials.
pub const ETC_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/pki/tls/private",
    "/etc/security/opasswd",
    "/etc/credstore",
    "/etc/credstore.encrypted",
    "/etc/krb5.keytab",
    "/etc/ipsec.secrets",
    "/etc/ppp/chap-secrets",
    "/etc/ppp/pap-secrets",
    "/etc/NetworkManager/system-connections",
    "/etc/wpa_supplicant",
    "/etc/letsencrypt",
    "/etc/docker",
    "/etc/libvirt/secrets",
    "/etc/.pwd.lock",
];

/// The list: allowed roots and the secret paths masked inside them.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct AllowList {
    /// Absolute paths as spelled (a symlink such as `/bin` stays a symlink), with their grant.
    pub roots: Vec<(PathBuf, Grant)>,
    /// Paths inside a read-only root that stay unreadable (only those that exist).
    pub masks: Vec<PathBuf>,
}

/// The allow-list for one command: `workdir` and `tmp` writable, the system and toolchain
/// directories readable, `hide` (and every known secret) masked.
pub fn allow_list(workdir: &Path, tmp: &Path, hide: &[PathBuf]) -> AllowList {
    allow_list_with(workdir, tmp, &[], hide)
}

/// [`allow_list`] plus `extra` roots with their grants (an agent's install folder, its
/// per-attempt home); secrets inside extra read roots are masked like the others.
pub fn allow_list_with(
    workdir: &Path,
    tmp: &Path,
    extra: &[(PathBuf, Grant)],
    hide: &[PathBuf],
) -> AllowList {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let mut roots: Vec<(PathBuf, Grant)> = Vec::new();
    for s in SYSTEM_EXEC {
        roots.push((PathBuf::from(s), Grant::ReadExec));
    }
    roots.push((PathBuf::from("/etc"), Grant::Read));
    for s in SYSTEM_READ {
        roots.push((PathBuf::from(s), Grant::Read));
    }
    for s in DEVICES {
        roots.push((PathBuf::from(s), Grant::Device));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/root".into());
    let homes = crate::paths::homes(&home);
    for t in toolchain_roots(&path, &homes) {
        roots.push((t, Grant::ReadExec));
    }
    if let Some(extra) = std::env::var_os("LRAB_SANDBOX_READ") {
        for p in std::env::split_paths(&extra) {
            if p.is_absolute() && p.exists() {
                roots.push((canon(&p), Grant::ReadExec));
            }
        }
    }
    for (p, g) in extra {
        roots.push((canon(p), *g));
    }
    let (w, t) = (canon(workdir), canon(tmp));
    roots.retain(|(p, _)| p.symlink_metadata().is_ok() && !p.starts_with(&w) && !p.starts_with(&t));
    roots.push((w, Grant::Full));
    if t != canon(workdir) {
        roots.push((t, Grant::Full));
    }
    // drop read roots already inside another read root
    let snapshot = roots.clone();
    roots.retain(|(p, g)| {
        !snapshot.iter().any(|(q, h)| {
            q != p && p.starts_with(q) && *g <= Grant::ReadExec && *h >= *g && *h <= Grant::ReadExec
        })
    });
    roots.dedup();

    let mut masks: Vec<PathBuf> = Vec::new();
    let mut candidates: Vec<PathBuf> = ETC_SECRETS.iter().map(PathBuf::from).collect();
    candidates.extend(
        [
            "/root/.ssh",
            "/run/secrets",
            "/var/run/secrets",
            "/proc/kcore",
        ]
        .iter()
        .map(PathBuf::from),
    );
    for h in &homes {
        for rel in crate::paths::HOME_SENSITIVE
            .iter()
            .chain(crate::paths::STARTUP_FILES)
        {
            candidates.push(h.join(rel));
        }
    }
    candidates.extend(hide.iter().map(|h| canon(h)));
    for m in candidates {
        let inside_read_root = roots
            .iter()
            .any(|(r, g)| *g <= Grant::ReadExec && m.starts_with(r) && &m != r);
        if inside_read_root && m.symlink_metadata().is_ok() && !masks.contains(&m) {
            masks.push(m);
        }
    }
    AllowList { roots, masks }
}

/// Toolchains on `PATH` outside the system directories, so `python3`, `pytest`, `node`, `npm`
/// and `git` work when they come from a version manager in a home (pyenv, nvm, cargo, a user
/// prefix). For each entry `D`: `D` itself; and when `D` is `R/bin`, `R/sbin` or `R/shims`,
/// the prefix `R` (where the interpreter's libraries live) — unless `R` is `/`, a home itself
/// or above one (then `D` only; `~/.local/bin` adds `~/.local/lib`). Relative and missing
/// entries are ignored.
pub fn toolchain_roots(path_var: &std::ffi::OsStr, homes: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for d in std::env::split_paths(path_var) {
        if !d.is_absolute() {
            continue;
        }
        let Ok(d) = d.canonicalize() else { continue };
        if SYSTEM_EXEC.iter().any(|s| d.starts_with(s)) {
            continue;
        }
        let mut picks = vec![d.clone()];
        let last = d.file_name().map(|n| n.to_string_lossy().into_owned());
        if let (Some(last), Some(parent)) = (last, d.parent()) {
            if matches!(last.as_str(), "bin" | "sbin" | "shims") {
                let too_wide =
                    parent == Path::new("/") || homes.iter().any(|h| h.starts_with(parent));
                if parent.file_name().is_some_and(|n| n == ".local") {
                    picks.push(parent.join("lib"));
                } else if !too_wide {
                    picks = vec![parent.to_path_buf()];
                }
            }
        }
        for p in picks {
            if p.exists() && !out.iter().any(|o| p.starts_with(o)) {
                out.retain(|o| !o.starts_with(&p));
                out.push(p);
            }
        }
    }
    out
}

impl AllowList {
    /// The Landlock rules: every root with its grant, except that a read root holding a mask
    /// is split — the root itself may only be listed, and each entry beneath it gets the
    /// grant, recursively around the masked path.
    pub fn landlock_rules(&self) -> Vec<(PathBuf, Grant)> {
        let mut out = Vec::new();
        for (root, grant) in &self.roots {
            let masks: Vec<&PathBuf> = self.masks.iter().filter(|m| m.starts_with(root)).collect();
            if masks.is_empty() || *grant > Grant::ReadExec {
                out.push((root.clone(), *grant));
            } else {
                split(root, *grant, &masks, &mut out);
            }
        }
        out
    }
}

fn split(dir: &Path, grant: Grant, masks: &[&PathBuf], out: &mut Vec<(PathBuf, Grant)>) {
    // the directory can be listed (names only); its entries carry the grant
    out.push((dir.to_path_buf(), Grant::List));
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if masks.iter().any(|m| **m == p) {
            continue;
        }
        let is_dir = p.symlink_metadata().is_ok_and(|m| m.is_dir());
        if is_dir && masks.iter().any(|m| m.starts_with(&p)) {
            split(&p, grant, masks, out);
        } else {
            out.push((p, grant));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolchains_from_path() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home/u");
        for p in [
            "home/u/.pyenv/shims",
            "home/u/.pyenv/versions",
            "home/u/bin",
            "home/u/.local/bin",
            "home/u/.local/lib",
            "opt/node/bin",
        ] {
            std::fs::create_dir_all(d.path().join(p)).unwrap();
        }
        let path = std::env::join_paths([
            home.join(".pyenv/shims"),
            home.join("bin"),
            home.join(".local/bin"),
            d.path().join("opt/node/bin"),
            PathBuf::from("/usr/bin"),
            PathBuf::from("relative/bin"),
        ])
        .unwrap();
        let got = toolchain_roots(&path, &[home.canonicalize().unwrap()]);
        let c = |p: &str| d.path().join(p).canonicalize().unwrap();
        assert_eq!(
            got,
            vec![
                c("home/u/.pyenv"),
                c("home/u/bin"),
                c("home/u/.local/bin"),
                c("home/u/.local/lib"),
                c("opt/node")
            ]
        );
    }

    #[test]
    fn secrets_are_split_out_of_read_roots() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("tc");
        std::fs::create_dir_all(r.join("a/b")).unwrap();
        std::fs::write(r.join("a/secret"), "x").unwrap();
        std::fs::write(r.join("a/b/ok"), "x").unwrap();
        std::fs::write(r.join("top"), "x").unwrap();
        let al = AllowList {
            roots: vec![(r.clone(), Grant::ReadExec)],
            masks: vec![r.join("a/secret")],
        };
        let rules = al.landlock_rules();
        assert!(rules.contains(&(r.clone(), Grant::List)));
        assert!(rules.contains(&(r.join("a"), Grant::List)));
        assert!(rules.contains(&(r.join("a/b"), Grant::ReadExec)));
        assert!(rules.contains(&(r.join("top"), Grant::ReadExec)));
        assert!(!rules.iter().any(|(p, _)| p.ends_with("secret")));
    }

    #[test]
    fn the_list_for_this_machine() {
        let d = tempfile::tempdir().unwrap();
        let al = allow_list(d.path(), d.path(), &[]);
        let has = |p: &str, g: Grant| al.roots.contains(&(PathBuf::from(p), g));
        assert!(has("/usr", Grant::ReadExec) && has("/etc", Grant::Read));
        assert!(has("/dev/null", Grant::Device));
        let w = d.path().canonicalize().unwrap();
        assert!(al.roots.contains(&(w.clone(), Grant::Full)));
        assert_eq!(al.roots.iter().filter(|(p, _)| *p == w).count(), 1);
        if Path::new("/etc/shadow").exists() {
            assert!(al.masks.contains(&PathBuf::from("/etc/shadow")));
            assert!(!al
                .landlock_rules()
                .iter()
                .any(|(p, _)| p == Path::new("/etc/shadow")));
        }
        // no home directory itself is ever a root
        for h in crate::paths::homes(Path::new("/root")) {
            assert!(!al.roots.iter().any(|(p, _)| *p == h), "{}", h.display());
        }
    }
}

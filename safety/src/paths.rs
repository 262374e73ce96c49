//! Sensitive paths and a canonicalizing boundary check. Every spelling a model might use — `~`,
//! `$HOME`, `..`, symlinks, `/proc/self/root`, `/proc/<pid>/cwd`, hard links — is reduced to the
//! file it really names before a decision, because the kernel acts on that file, not the spelling.

use crate::{Context, Ring, Verdict};
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// Home-relative locations holding credentials, keys or our own config ([`lrab_util::HOME_CREDENTIALS`],
/// the one list the harness's kernel sandbox hides too) followed by the [`HISTORY_FILES`].
pub const HOME_SENSITIVE: &[&str] = &HOME_SENSITIVE_ARRAY;

const HOME_SENSITIVE_LEN: usize = lrab_util::HOME_CREDENTIALS.len() + HISTORY_FILES.len();
const HOME_SENSITIVE_ARRAY: [&str; HOME_SENSITIVE_LEN] =
    concat_lists(lrab_util::HOME_CREDENTIALS, HISTORY_FILES);

/// `a` then `b`, at compile time (one list in the source, no copy kept by hand).
const fn concat_lists<const N: usize>(a: &[&'static str], b: &[&'static str]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    let mut j = 0;
    while j < b.len() {
        out[i + j] = b[j];
        j += 1;
    }
    out
}

/// Shell start-up files: writing them changes every later shell (ring 3), reading is harmless
/// but they are canaries too.
pub const STARTUP_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".config/fish/config.fish",
    ".inputrc",
];

/// History files (wiping them is in ring 2).
pub const HISTORY_FILES: &[&str] = &[
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".lesshst",
];

const SYSTEM_SENSITIVE: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/root/.ssh",
    "/run/secrets",
    "/var/run/secrets",
    "/proc/kcore",
];

/// Resolve `..` and `.` without touching the filesystem.
pub fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("/");
                }
                if out.as_os_str().is_empty() {
                    out.push("/");
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// Expand `~`, `~/`, `$HOME/`, `${HOME}/` at the start of a path string.
pub fn expand_home(raw: &str, home: &Path) -> String {
    let h = home.to_string_lossy();
    for pre in ["${HOME}", "$HOME", "~"] {
        if let Some(rest) = raw.strip_prefix(pre) {
            if rest.is_empty() || rest.starts_with('/') {
                return format!("{h}{rest}");
            }
        }
    }
    raw.to_string()
}

/// Resolve a path the way the kernel would: component by component, following symlinks where
/// they exist (so `link/..` goes to the link target's parent), with `/proc/<pid>/cwd` taken as
/// `cwd` and `/proc/<pid>/root` as `/` (the magic links would otherwise describe *this* process).
pub fn resolve(raw: &str, cwd: &Path, home: &Path) -> PathBuf {
    let expanded = expand_home(raw, home);
    let p = Path::new(&expanded);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    resolve_with(&abs, cwd)
}

fn resolve_with(p: &Path, cwd: &Path) -> PathBuf {
    let mut todo: Vec<std::ffi::OsString> = p
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::RootDir | Component::Prefix(_) => None,
            other => Some(other.as_os_str().to_os_string()),
        })
        .collect();
    let mut out = PathBuf::from("/");
    let mut hops = 0;
    while let Some(c) = todo.pop() {
        if c == "." {
            continue;
        }
        if c == ".." {
            out.pop();
            continue;
        }
        out.push(&c);
        // /proc/<pid>/{cwd,root}
        let comps: Vec<String> = out
            .components()
            .map(|x| x.as_os_str().to_string_lossy().to_string())
            .collect();
        if comps.len() == 4
            && comps[1] == "proc"
            && (comps[2] == "self"
                || comps[2] == "thread-self"
                || comps[2].chars().all(|d| d.is_ascii_digit()))
        {
            if comps[3] == "cwd" {
                out = cwd.to_path_buf();
                continue;
            }
            if comps[3] == "root" {
                out = PathBuf::from("/");
                continue;
            }
        }
        if let Ok(m) = std::fs::symlink_metadata(&out) {
            if m.file_type().is_symlink() {
                hops += 1;
                if hops > 40 {
                    return out;
                }
                if let Ok(t) = std::fs::read_link(&out) {
                    out.pop();
                    if t.is_absolute() {
                        out = PathBuf::from("/");
                    }
                    for tc in t.components().rev() {
                        match tc {
                            Component::RootDir | Component::Prefix(_) => {}
                            other => todo.push(other.as_os_str().to_os_string()),
                        }
                    }
                }
            }
        }
    }
    out
}

/// The homes whose credentials are protected: `home`, `/root` and every `/home/*`.
pub fn homes(home: &Path) -> Vec<PathBuf> {
    let mut v = vec![home.to_path_buf(), PathBuf::from("/root")];
    if let Ok(rd) = std::fs::read_dir("/home") {
        for e in rd.flatten().take(64) {
            v.push(e.path());
        }
    }
    v
}

/// Is this (absolute, normalized) path sensitive? Purely lexical; [`check_access`] adds the
/// symlink / hard-link / `/proc` resolution.
pub fn is_sensitive(path: &Path, home: &Path) -> bool {
    let s = expand_home(&path.to_string_lossy(), home);
    let p = lexical(Path::new(&s));
    if let Some(name) = p.file_name().map(|n| n.to_string_lossy().to_string()) {
        if is_env_file(&name) || is_private_key_name(&name) {
            return true;
        }
    }
    for h in homes(home) {
        if let Ok(rel) = p.strip_prefix(&h) {
            for pat in HOME_SENSITIVE.iter().chain(STARTUP_FILES) {
                if rel.starts_with(pat) {
                    return true;
                }
            }
        }
    }
    if SYSTEM_SENSITIVE.iter().any(|s| p.starts_with(s)) {
        return true;
    }
    // /proc/<pid>/environ, mem, and the like expose other processes' secrets
    let comps: Vec<String> = p
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    if comps.len() >= 4
        && comps[1] == "proc"
        && matches!(comps[3].as_str(), "environ" | "mem" | "maps" | "auxv")
    {
        return true;
    }
    false
}

/// `.env`, `.env.local`, `.envrc`: dotenv files hold secrets by convention.
pub fn is_env_file(name: &str) -> bool {
    name == ".env" || name.starts_with(".env.") || name == ".envrc"
}

fn is_private_key_name(name: &str) -> bool {
    matches!(
        name,
        "id_rsa" | "id_dsa" | "id_ecdsa" | "id_ed25519" | "id_ecdsa_sk" | "id_ed25519_sk"
    )
}

/// Is `path` a shell start-up file of some home?
pub fn is_startup_file(path: &Path, home: &Path) -> bool {
    homes(home).iter().any(|h| {
        path.strip_prefix(h)
            .is_ok_and(|rel| STARTUP_FILES.iter().any(|s| rel == Path::new(s)))
    })
}

pub fn is_history_file(path: &Path, home: &Path) -> bool {
    homes(home).iter().any(|h| {
        path.strip_prefix(h)
            .is_ok_and(|rel| HISTORY_FILES.iter().any(|s| rel == Path::new(s)))
    })
}

/// (device, inode) of every existing sensitive file under `home`, so a hard link with an
/// innocent name is still recognized.
pub fn sensitive_inodes(home: &Path) -> HashSet<(u64, u64)> {
    let mut set = HashSet::new();
    for pat in HOME_SENSITIVE.iter().chain(STARTUP_FILES) {
        let root = home.join(pat);
        for e in walkdir::WalkDir::new(&root)
            .max_depth(4)
            .into_iter()
            .take(2000)
            .flatten()
        {
            if let Ok(m) = std::fs::symlink_metadata(e.path()) {
                if m.is_file() {
                    set.insert((m.dev(), m.ino()));
                }
            }
        }
    }
    set
}

/// What a tool does with a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Reads it (secrets are refused).
    Read,
    /// Writes it (only inside the workdir and the writable extras).
    Write,
}

/// Where a resolved path lies relative to the context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Workdir,
    Inside,
    Writable,
    Outside,
}

pub fn place(p: &Path, ctx: &Context) -> Place {
    if p == ctx.workdir {
        Place::Workdir
    } else if p.starts_with(&ctx.workdir) {
        Place::Inside
    } else if ctx.extra_writable.iter().any(|w| p.starts_with(w)) {
        Place::Writable
    } else {
        Place::Outside
    }
}

/// Harmless special files every program writes to.
pub fn is_benign_device(p: &Path) -> bool {
    let s = p.to_string_lossy();
    matches!(
        s.as_ref(),
        "/dev/null"
            | "/dev/stdout"
            | "/dev/stderr"
            | "/dev/tty"
            | "/dev/zero"
            | "/dev/random"
            | "/dev/urandom"
    ) || s.starts_with("/dev/fd/")
        || s.starts_with("/dev/pts/")
        || s.starts_with("/proc/self/fd/")
}

/// The full boundary check for one path the model wants to read or write. `raw` may be relative
/// (to `cwd`), start with `~`/`$HOME`, or go through symlinks and `/proc`.
pub fn check_access(
    raw: &str,
    access: Access,
    cwd: &Path,
    ctx: &Context,
) -> Result<PathBuf, Verdict> {
    if raw.contains('\0') {
        return Err(deny(
            Ring::Boundary,
            "path contains a NUL byte".into(),
            None,
        ));
    }
    let expanded = expand_home(raw, &ctx.home);
    let joined = if Path::new(&expanded).is_absolute() {
        PathBuf::from(&expanded)
    } else {
        cwd.join(&expanded)
    };
    let lex = lexical(&joined);
    let real = resolve_with(&joined, cwd);
    let wd = place(&real, ctx);
    for p in [&lex, &real] {
        if is_sensitive(p, &ctx.home) {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            // A dotenv copy that is part of the task inputs inside the workdir may be read.
            let task_copy = is_env_file(&name)
                && matches!(wd, Place::Inside)
                && place(&lex, ctx) == Place::Inside;
            if !task_copy {
                return Err(deny(
                    Ring::Boundary,
                    format!("'{raw}' is a sensitive path ({}) — credentials, keys and shell start-up files are never touched", real.display()),
                    Some("work only with files inside the working directory".into()),
                ));
            }
        }
    }
    if ctx.protected.iter().any(|p| real.starts_with(p)) && access == Access::Write {
        return Err(deny(
            Ring::Boundary,
            format!("'{raw}' is harness state and read-only"),
            None,
        ));
    }
    if let Ok(m) = std::fs::metadata(&real) {
        if m.is_file() && m.nlink() > 1 {
            if sensitive_inodes(&ctx.home).contains(&(m.dev(), m.ino())) {
                return Err(deny(
                    Ring::Boundary,
                    format!("'{raw}' is a hard link to a sensitive file"),
                    None,
                ));
            }
            if access == Access::Write
                && matches!(wd, Place::Inside)
                && links_inside(&ctx.workdir, &m) < m.nlink()
            {
                return Err(deny(
                    Ring::Boundary,
                    format!("'{raw}' is a hard link whose other name lies outside the working directory; writing it would change that file"),
                    Some("copy it (`cp --remove-destination`) to a new file and edit the copy".into()),
                ));
            }
        }
    }
    if access == Access::Write && wd == Place::Outside && !is_benign_device(&real) {
        return Err(deny(
            Ring::Boundary,
            format!(
                "'{raw}' resolves to {} which is outside the working directory",
                real.display()
            ),
            Some("write inside the working directory (relative paths)".into()),
        ));
    }
    Ok(real)
}

/// Start-up audit of hard links in a workdir, for what kernel confinement cannot see: Landlock
/// and bind mounts judge a file by the *path* it is opened through, so a hard link planted in the
/// workdir before the run reads a hidden secret or writes an outside file through an allowed
/// path. Any regular file that also has names outside the workdir is an error — a credential of
/// `home` or not, its bytes belong to a file outside (a private copy would still hand them to
/// the model) — and the run must not start. Links whose names all lie inside are fine.
pub fn audit_hard_links(workdir: &Path, home: &Path) -> Result<(), crate::HardLinkError> {
    use std::collections::HashMap;
    // (dev, ino) -> (links of the inode, names seen inside the workdir)
    let mut seen: HashMap<(u64, u64), (u64, Vec<PathBuf>)> = HashMap::new();
    for e in walkdir::WalkDir::new(workdir)
        .follow_links(false)
        .into_iter()
        .take(200_000)
        .flatten()
    {
        let Ok(m) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if m.is_file() && m.nlink() > 1 {
            let entry = seen
                .entry((m.dev(), m.ino()))
                .or_insert((m.nlink(), Vec::new()));
            entry.1.push(e.path().to_path_buf());
        }
    }
    if seen.is_empty() {
        return Ok(());
    }
    let secrets = sensitive_inodes(home);
    let rel = |p: &Path| p.strip_prefix(workdir).unwrap_or(p).display().to_string();
    type Seen = (u64, Vec<PathBuf>);
    let names = |keep: &dyn Fn(&(u64, u64), &Seen) -> bool| {
        let mut v: Vec<String> = seen
            .iter()
            .filter(|(k, x)| keep(k, x))
            .flat_map(|(_, (_, names))| names.iter().map(|n| rel(n)))
            .collect();
        v.sort();
        v
    };
    let bad = names(&|k, _| secrets.contains(k));
    if !bad.is_empty() {
        return Err(crate::HardLinkError::Credentials {
            home: home.to_path_buf(),
            names: bad,
        });
    }
    let outside = names(&|_, (links, names)| (names.len() as u64) < *links);
    if !outside.is_empty() {
        return Err(crate::HardLinkError::Outside { names: outside });
    }
    Ok(())
}

/// How many names of this inode exist inside `root` (bounded walk).
fn links_inside(root: &Path, m: &std::fs::Metadata) -> u64 {
    let mut n = 0;
    for e in walkdir::WalkDir::new(root)
        .into_iter()
        .take(50_000)
        .flatten()
    {
        if let Ok(em) = std::fs::symlink_metadata(e.path()) {
            if em.dev() == m.dev() && em.ino() == m.ino() {
                n += 1;
            }
        }
    }
    n
}

pub(crate) fn deny(ring: Ring, reason: String, alternative: Option<String>) -> Verdict {
    Verdict::Deny {
        ring,
        reason,
        alternative,
    }
}

/// Shell-style match of one path component (`*`, `?`, `[...]`); a leading dot must be matched
/// explicitly, as in the shell.
pub fn glob_match(pat: &str, name: &str) -> bool {
    if name.starts_with('.') && !pat.starts_with('.') {
        return false;
    }
    fn m(p: &[char], n: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('*') => (0..=n.len()).any(|k| m(&p[1..], &n[k..])),
            Some('?') => !n.is_empty() && m(&p[1..], &n[1..]),
            Some('[') => {
                let Some(end) = p.iter().position(|&c| c == ']') else {
                    return !n.is_empty() && n[0] == '[' && m(&p[1..], &n[1..]);
                };
                if n.is_empty() {
                    return false;
                }
                let set = &p[1..end];
                let (neg, set) = if set.first() == Some(&'!') || set.first() == Some(&'^') {
                    (true, &set[1..])
                } else {
                    (false, set)
                };
                let mut hit = false;
                let mut i = 0;
                while i < set.len() {
                    if i + 2 < set.len() && set[i + 1] == '-' {
                        hit |= set[i] <= n[0] && n[0] <= set[i + 2];
                        i += 3;
                    } else {
                        hit |= set[i] == n[0];
                        i += 1;
                    }
                }
                hit != neg && m(&p[end + 1..], &n[1..])
            }
            Some(c) => !n.is_empty() && n[0] == *c && m(&p[1..], &n[1..]),
        }
    }
    let p: Vec<char> = pat.chars().collect();
    let n: Vec<char> = name.chars().collect();
    m(&p, &n)
}

/// Expand a glob pattern against the filesystem (bounded), the way the shell would before the
/// command sees it. Returns absolute paths; no match → empty.
pub fn glob_expand(pattern: &str, cwd: &Path, home: &Path) -> Vec<PathBuf> {
    let expanded = expand_home(pattern, home);
    let abs = if expanded.starts_with('/') {
        PathBuf::from(&expanded)
    } else {
        cwd.join(&expanded)
    };
    let mut cur = vec![PathBuf::from("/")];
    for c in abs.components() {
        let Component::Normal(os) = c else {
            if c == Component::ParentDir {
                cur = cur.into_iter().map(|p| p.join("..")).collect();
            }
            continue;
        };
        let part = os.to_string_lossy();
        if part.contains(['*', '?', '[']) {
            let mut next = Vec::new();
            for d in &cur {
                if let Ok(rd) = std::fs::read_dir(d) {
                    for e in rd.flatten().take(2000) {
                        if glob_match(&part, &e.file_name().to_string_lossy()) {
                            next.push(e.path());
                        }
                    }
                }
            }
            next.sort();
            next.truncate(500);
            cur = next;
        } else {
            cur = cur.into_iter().map(|p| p.join(os)).collect();
        }
        if cur.is_empty() {
            break;
        }
    }
    cur
}

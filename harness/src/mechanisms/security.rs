//! The basic security boundary: file tools resolve every path canonically and must stay inside
//! the workdir; sensitive paths are refused; the name `.lrab/` (under which the model reads the
//! harness's saved outputs, kept in the state folder outside the workdir) is read-only to it. Every file-tool path is additionally checked by `lrab_safety::check_access`;
//! shell commands are classified by `lrab-safety`'s parsing classifier (the only one) and run
//! under the kernel-level rings ([`crate::ConfinedExecutor`]).

use std::path::{Component, Path, PathBuf};

/// The workdir-relative name the model sees the harness's state under (`.lrab/out/N.txt`):
/// file tools refuse to write there and listings skip it. The state itself lives in the state
/// folder outside the workdir ([`crate::StateDir`]).
pub const STATE_DIR: &str = ".lrab";

#[derive(Clone, Debug)]
pub struct Confinement {
    root: PathBuf,
    /// The safety crate's view of the boundary (home = the operator's real home, whose
    /// credentials are sensitive); backs every resolution with `paths::check_access`.
    safety: lrab_safety::Context,
}

/// The operator's home (`$HOME`, else `/root`).
pub fn real_home() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"))
}

/// A call refused before anything ran: the text for the model and, when a safety ring refused
/// it, the ring's verdict (recorded in the event log so graders need not parse the text).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{text}")]
pub struct Refusal {
    /// What the model is told (why, and what to do instead).
    pub text: String,
    /// The ring's verdict; `None` for refusals that are not a ring's (an empty path).
    pub verdict: Option<lrab_safety::Verdict>,
}

impl Refusal {
    /// A refusal that is not a safety ring's.
    pub fn plain(text: impl Into<String>) -> Refusal {
        Refusal {
            text: text.into(),
            verdict: None,
        }
    }
    /// A ring's refusal, told to the model in the ring's own words.
    pub fn ring(verdict: lrab_safety::Verdict) -> Refusal {
        Refusal {
            text: verdict.message(),
            verdict: Some(verdict),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

impl Confinement {
    /// `root` must exist; it is canonicalized once.
    pub fn new(root: &Path) -> std::io::Result<Self> {
        let root = root.canonicalize()?;
        Ok(Confinement {
            safety: lrab_safety::Context::new(&root, &real_home()),
            root,
        })
    }
    /// Judge sensitive paths against this home instead of `$HOME`.
    pub fn set_home(&mut self, home: &Path) {
        self.safety = lrab_safety::Context::new(&self.root, home);
    }
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The safety crate's context of this boundary (workdir, the operator's home).
    pub fn safety(&self) -> &lrab_safety::Context {
        &self.safety
    }

    /// Resolve a model-supplied path to an absolute path inside the workdir, or say why not.
    /// Symlinks are resolved on the longest existing prefix, so a link pointing outside is
    /// caught; `..` is resolved lexically on the rest. Ring refusals carry their verdict.
    pub fn resolve(&self, raw: &str, access: Access) -> Result<PathBuf, Refusal> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(Refusal::plain("path is empty"));
        }
        if raw.contains('\0') {
            return Err(Refusal::plain("path contains a NUL byte"));
        }
        let p = Path::new(raw);
        let joined = lexical(&if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.root.join(p)
        });
        // Canonicalize the longest existing ancestor, then append the rest lexically.
        let mut existing = joined.clone();
        let mut rest: Vec<std::ffi::OsString> = Vec::new();
        let base = loop {
            match existing.canonicalize() {
                Ok(c) => break c,
                Err(_) => {
                    let Some(name) = existing.file_name().map(|n| n.to_os_string()) else {
                        return Err(Refusal::plain(format!("cannot resolve path '{raw}'")));
                    };
                    rest.push(name);
                    if !existing.pop() {
                        return Err(Refusal::plain(format!("cannot resolve path '{raw}'")));
                    }
                }
            }
        };
        let mut out = base;
        for part in rest.iter().rev() {
            match Path::new(part).components().next() {
                Some(Component::ParentDir) => {
                    out.pop();
                }
                Some(Component::CurDir) | None => {}
                _ => out.push(part),
            }
        }
        if !out.starts_with(&self.root) {
            return Err(ring4(format!(
                "'{raw}' is outside the working directory; use a relative path inside it"
            )));
        }
        let rel = out.strip_prefix(&self.root).unwrap_or(&out).to_path_buf();
        if let Some(why) = sensitive(&rel) {
            return Err(ring4(format!("'{raw}' is a protected path ({why})")));
        }
        if access == Access::Write && rel.starts_with(STATE_DIR) {
            return Err(ring4(format!(
                "'{raw}' is inside the harness state folder {STATE_DIR}/, which is read-only"
            )));
        }
        // symlink chains, /proc indirections, hard links to secrets, the real home's credentials
        let access = match access {
            Access::Read => lrab_safety::Access::Read,
            Access::Write => lrab_safety::Access::Write,
        };
        if let Err(v) = lrab_safety::check_access(raw, access, &self.root, &self.safety) {
            return Err(Refusal::ring(v));
        }
        Ok(out)
    }

    /// Workdir-relative display form.
    pub fn rel(&self, abs: &Path) -> String {
        abs.strip_prefix(&self.root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| abs.to_string_lossy().into_owned())
    }
}

/// A file-tool boundary refusal in the rings' message format (`[safety ring 4: ...] refused:`),
/// so the model reads the same shape from every tool.
fn ring4(reason: String) -> Refusal {
    Refusal::ring(lrab_safety::Verdict::Deny {
        ring: lrab_safety::Ring::Boundary,
        reason,
        alternative: None,
    })
}

/// Resolve `.` and `..` without touching the filesystem. The result is what the tools then
/// use, so the path checked is the path written.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Why a workdir-relative path is sensitive, if it is: it lies in one of the home folder's
/// credential locations (`lrab_util::HOME_CREDENTIALS`, wherever it sits in the path), or its
/// name is that of an environment file, a key or a secret.
pub fn sensitive(rel: &Path) -> Option<&'static str> {
    let comps: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_lowercase())
        .collect();
    let in_location = lrab_util::HOME_CREDENTIALS.iter().any(|loc| {
        let loc: Vec<&str> = loc.split('/').collect();
        comps
            .windows(loc.len())
            .any(|w| w.iter().zip(&loc).all(|(a, b)| a == b))
    });
    let by_name = comps.iter().any(|s| {
        s == ".env"
            || s.starts_with(".env.")
            || s.ends_with(".pem")
            || s.ends_with(".key")
            || s.starts_with("id_rsa")
            || s.starts_with("id_ed25519")
            || s.contains("credential")
            || s.contains("secret")
    });
    (in_location || by_name).then_some("credentials or keys")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitive_paths_are_the_shared_credential_locations_and_key_names() {
        for p in [
            ".ssh/id_rsa",
            "backup/.aws/config",
            ".config/gcloud/credentials.db",
            ".docker/config.json",
            ".password-store/x.gpg",
            ".env.local",
            "certs/server.pem",
            "my_secret.txt",
        ] {
            assert!(sensitive(Path::new(p)).is_some(), "{p}");
        }
        for p in [
            "src/app.py",
            ".config/app.toml",
            ".docker/contexts/meta.json",
            "docs/environment.md",
        ] {
            assert_eq!(sensitive(Path::new(p)), None, "{p}");
        }
    }

    #[test]
    fn confinement_resolves_inside_and_refuses_outside() {
        let d = tempfile::tempdir().unwrap();
        let c = Confinement::new(d.path()).unwrap();
        let root = c.root().to_path_buf();
        assert_eq!(
            c.resolve("a/b.md", Access::Write).unwrap(),
            root.join("a/b.md")
        );
        assert_eq!(
            c.resolve("./x/../y.md", Access::Write).unwrap(),
            root.join("y.md")
        );
        let e = c.resolve("../escape.md", Access::Write).unwrap_err();
        assert!(e.to_string().contains("outside") && e.text == e.to_string());
        assert!(matches!(
            e.verdict,
            Some(lrab_safety::Verdict::Deny {
                ring: lrab_safety::Ring::Boundary,
                ..
            })
        ));
        assert!(c
            .resolve("/etc/passwd", Access::Read)
            .unwrap_err()
            .text
            .contains("outside"));
        assert!(c.resolve("a/../../x", Access::Read).is_err());
        assert!(c
            .resolve(".env", Access::Read)
            .unwrap_err()
            .text
            .contains("protected"));
        assert!(c.resolve("keys/server.pem", Access::Write).is_err());
        assert!(c
            .resolve(".lrab/checkpoint.json", Access::Write)
            .unwrap_err()
            .text
            .contains("read-only"));
        let e = c.resolve(" ", Access::Read).unwrap_err();
        assert_eq!((e.to_string().as_str(), e.verdict), ("path is empty", None));
        assert!(c.resolve(".lrab/out/1.txt", Access::Read).is_ok());
    }

    #[test]
    fn symlink_out_of_workdir_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("link")).unwrap();
        let c = Confinement::new(d.path()).unwrap();
        assert!(c
            .resolve("link/file.txt", Access::Write)
            .unwrap_err()
            .text
            .contains("outside"));
    }
}

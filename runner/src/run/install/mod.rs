//! Installing arms from their package registries into a per-user cache. How an arm is
//! installed is data — the `[install]` table of its arm file (kind, package, pinned version,
//! Python constraint, extra packages, the program's path inside the install) — so a new arm
//! needs no code here. Layout under the cache root (`LRAB_ARMS_CACHE`, else
//! `$XDG_CACHE_HOME/lrab/arms`, else `~/.cache/lrab/arms`):
//!
//! - `npm/<package>@<version>/`: an npm prefix (`node_modules/…`)
//! - `venv/<package>@<version>/`: a virtual environment made with a Python that fits the arm
//! - `git/<package>@<version>/`: files taken from a repository at a pinned commit, each checked
//!   against its sha256 (`src/`), and a venv for them (`venv/`) — [`git`]
//! - `archive/<package>@<version>/`: a release archive checked against its sha256 and unpacked
//!   — [`archive`]
//! - `<kind>/<package>@<version>/.lrab-install.json`: written last, only when every step worked;
//!   an install without it is never used
//! - `logs/<package>@<version>.log` and `.status.json`: what the last attempt ran and how it ended
//!
//! An install is current when its marker holds the same recipe (and the same launcher scripts)
//! as the arm file; then installing again does nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub mod archive;
mod command;
pub mod git;
pub mod pyfind;
pub mod steps;
mod version;

pub use version::{run_confined_output, run_version, version_matches, ProbeScope};

/// Which client installs the arm: a registry's (npm, pip), git at a pinned commit, or a
/// release archive pinned by its digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Npm,
    Pip,
    Git,
    Archive,
}

impl Kind {
    fn folder(self) -> &'static str {
        match self {
            Kind::Npm => "npm",
            Kind::Pip => "venv",
            Kind::Git => "git",
            Kind::Archive => "archive",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Npm => "npm",
            Kind::Pip => "pip",
            Kind::Git => "git",
            Kind::Archive => "archive",
        }
    }
}

/// One file a `git` install takes from the repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceFile {
    /// Path inside the repository (and inside the install's `src/`).
    pub path: String,
    /// Lower-case hex sha256 of its bytes; a copy with another digest is refused.
    pub sha256: String,
    /// The commit to take it from, when not the table's `commit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// The `[install]` table of an arm file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstallSpec {
    pub kind: Kind,
    /// Registry name (`@openai/codex`, `aider-chat`).
    pub package: String,
    /// Exact pinned version; also what the arm's version command must print.
    pub version: String,
    /// The program, relative to the install folder (npm prefix or venv).
    pub bin: String,
    /// pip extras of the package (`smolagents[litellm]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extras: Vec<String>,
    /// More packages installed alongside, each pinned (`name==1.2` / `name@1.2`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub with: Vec<String>,
    /// pip only: the interpreter the venv needs (`>=3.10,<3.13`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// Files beside the arm file (launchers of our own) copied into the install's `bin/`; a
    /// `#!` line naming python is pointed at the venv's interpreter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<String>,
    /// Files inside the install that must be executable (a bundled helper shipped without
    /// its exec bit).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub executable: Vec<String>,
    /// git: the repository to clone; archive: the archive to download.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// git: the full 40-hex commit the files are taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// git: an environment variable that may name an existing checkout (or a folder holding
    /// the files, as `<folder>/<commit>/<path>` or `<folder>/<path>`) to take them from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_env: Option<String>,
    /// git: the files taken, each with its sha256.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SourceFile>,
    /// archive: the published sha256 of the archive (without it the install is refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// The cache root.
pub fn cache_root() -> PathBuf {
    if let Some(p) = std::env::var_os("LRAB_ARMS_CACHE").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(p) = std::env::var_os("XDG_CACHE_HOME").filter(|p| !p.is_empty()) {
        return PathBuf::from(p).join("lrab/arms");
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/".into());
    PathBuf::from(home).join(".cache/lrab/arms")
}

fn is_exact_version(v: &str) -> bool {
    !v.is_empty()
        && v.chars().next().is_some_and(|c| c.is_ascii_digit())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'))
}

/// A full commit id: 40 lower-case hex digits.
pub fn is_full_commit(c: &str) -> bool {
    c.len() == 40
        && c.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A sha256 as `sha256sum` prints it: 64 lower-case hex digits.
pub fn is_sha256(d: &str) -> bool {
    d.len() == 64
        && d.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn relative_inside(p: &str) -> bool {
    !p.is_empty() && !p.starts_with('/') && !p.split('/').any(|x| x == "..")
}

impl InstallSpec {
    /// `<package>@<version>` with the npm scope's `@` dropped and `/` made `+`.
    pub fn dir_name(&self) -> String {
        format!(
            "{}@{}",
            self.package.trim_start_matches('@').replace('/', "+"),
            self.version
        )
    }

    pub fn dir(&self, root: &Path) -> PathBuf {
        root.join(self.kind.folder()).join(self.dir_name())
    }

    pub fn bin_path(&self, root: &Path) -> PathBuf {
        self.dir(root).join(&self.bin)
    }

    pub fn log_path(&self, root: &Path) -> PathBuf {
        root.join("logs").join(format!("{}.log", self.dir_name()))
    }

    fn status_path(&self, root: &Path) -> PathBuf {
        root.join("logs")
            .join(format!("{}.status.json", self.dir_name()))
    }

    fn marker_path(&self, root: &Path) -> PathBuf {
        self.dir(root).join(".lrab-install.json")
    }

    /// What the registry client is asked for (for git and archive: what is pinned).
    pub fn requirement(&self) -> String {
        match self.kind {
            Kind::Git => format!(
                "{} {} @ {}",
                self.package,
                self.version,
                self.commit
                    .as_deref()
                    .unwrap_or("?")
                    .get(..12)
                    .unwrap_or("?")
            ),
            Kind::Archive => format!(
                "{} {} ({})",
                self.package,
                self.version,
                self.url
                    .as_deref()
                    .and_then(|u| u.rsplit('/').next())
                    .unwrap_or("?")
            ),
            Kind::Npm => format!("{}@{}", self.package, self.version),
            Kind::Pip if self.extras.is_empty() => format!("{}=={}", self.package, self.version),
            Kind::Pip => format!(
                "{}[{}]=={}",
                self.package,
                self.extras.join(","),
                self.version
            ),
        }
    }

    /// Problems of the table (`install.<field>: …`); `arm_dir` is where scripts must be.
    pub fn problems(&self, arm_dir: &Path) -> Vec<String> {
        let mut p = Vec::new();
        if self.package.trim().is_empty() {
            p.push("install.package: empty".to_string());
        }
        if !is_exact_version(&self.version) {
            p.push(format!(
                "install.version: '{}' is not an exact version (pin one, e.g. 1.2.3)",
                self.version
            ));
        }
        if !relative_inside(&self.bin) {
            p.push(format!(
                "install.bin: '{}' must be a relative path inside the install",
                self.bin
            ));
        }
        match (self.kind, &self.python) {
            (Kind::Npm | Kind::Archive, Some(_)) => p.push(format!(
                "install.python: only for kind = \"pip\" or \"git\" (not \"{}\")",
                self.kind.name()
            )),
            (Kind::Pip | Kind::Git, Some(c)) => {
                if let Err(e) = pyfind::Constraint::parse(c) {
                    p.push(format!("install.python: {e}"));
                }
            }
            _ => {}
        }
        if !self.extras.is_empty() && self.kind != Kind::Pip {
            p.push(format!(
                "install.extras: only for kind = \"pip\" (for \"{}\" list pinned packages in install.with)",
                self.kind.name()
            ));
        }
        if self.kind == Kind::Git && !self.with.is_empty() && self.python.is_none() {
            p.push("install.with: packages need install.python (the venv they go into)".into());
        }
        if self.kind == Kind::Archive && !self.with.is_empty() {
            p.push("install.with: not for kind = \"archive\"".into());
        }
        for (i, w) in self.with.iter().enumerate() {
            let npm = self.kind == Kind::Npm;
            let pinned = match npm {
                true => w
                    .rsplit_once('@')
                    .is_some_and(|(n, v)| !n.is_empty() && is_exact_version(v)),
                false => w
                    .split_once("==")
                    .is_some_and(|(n, v)| !n.is_empty() && is_exact_version(v)),
            };
            if !pinned {
                p.push(format!(
                    "install.with[{i}]: '{w}' is not pinned ({})",
                    if npm { "name@1.2.3" } else { "name==1.2.3" }
                ));
            }
        }
        p.extend(self.source_problems());
        for (i, s) in self.scripts.iter().enumerate() {
            if !relative_inside(s) || s.contains('/') {
                p.push(format!(
                    "install.scripts[{i}]: '{s}' must be a file name beside the arm file"
                ));
            } else if !arm_dir.join(s).is_file() {
                p.push(format!(
                    "install.scripts[{i}]: {} does not exist",
                    arm_dir.join(s).display()
                ));
            }
        }
        for (i, s) in self.executable.iter().enumerate() {
            if !relative_inside(s) {
                p.push(format!(
                    "install.executable[{i}]: '{s}' must be a relative path inside the install"
                ));
            }
        }
        p
    }

    /// Problems of the fields that say where a git or archive install comes from.
    fn source_problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        let kind = self.kind.name();
        let only = |field: &str, for_: &str| {
            format!("install.{field}: only for kind = {for_} (not \"{kind}\")")
        };
        let url = self.url.as_deref().unwrap_or("");
        match self.kind {
            Kind::Npm | Kind::Pip => {
                for (set, field) in [
                    (self.url.is_some(), "url"),
                    (self.commit.is_some(), "commit"),
                    (self.src_env.is_some(), "src_env"),
                    (!self.files.is_empty(), "files"),
                    (self.sha256.is_some(), "sha256"),
                ] {
                    if set {
                        p.push(only(field, "\"git\" or \"archive\""));
                    }
                }
            }
            Kind::Git => {
                if url.trim().is_empty() {
                    p.push("install.url: missing (the repository to clone)".into());
                }
                match self.commit.as_deref() {
                    None => p.push("install.commit: missing (the full 40-hex commit id)".into()),
                    Some(c) if !is_full_commit(c) => p.push(format!(
                        "install.commit: '{c}' is not a full commit id (40 lower-case hex digits)"
                    )),
                    _ => {}
                }
                if self.files.is_empty() {
                    p.push(
                        "install.files: missing (the files to take, each with its sha256)".into(),
                    );
                }
                for (i, f) in self.files.iter().enumerate() {
                    if !relative_inside(&f.path) {
                        p.push(format!(
                            "install.files[{i}].path: '{}' must be a relative path inside the repository",
                            f.path
                        ));
                    }
                    if !is_sha256(&f.sha256) {
                        p.push(format!(
                            "install.files[{i}].sha256: '{}' is not a sha256 (64 lower-case hex digits)",
                            f.sha256
                        ));
                    }
                    if let Some(c) = f.commit.as_deref().filter(|c| !is_full_commit(c)) {
                        p.push(format!(
                            "install.files[{i}].commit: '{c}' is not a full commit id (40 lower-case hex digits)"
                        ));
                    }
                }
                if let Some(v) = &self.src_env {
                    if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                        p.push(format!("install.src_env: '{v}' is not a variable name"));
                    }
                }
                if self.sha256.is_some() {
                    p.push(only("sha256", "\"archive\" (a git install pins each file)"));
                }
            }
            Kind::Archive => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    p.push(format!(
                        "install.url: '{url}' is not an http(s) URL of the release archive"
                    ));
                }
                if let Some(d) = self.sha256.as_deref().filter(|d| !is_sha256(d)) {
                    p.push(format!(
                        "install.sha256: '{d}' is not a sha256 (64 lower-case hex digits)"
                    ));
                }
                for (set, field) in [
                    (self.commit.is_some(), "commit"),
                    (self.src_env.is_some(), "src_env"),
                    (!self.files.is_empty(), "files"),
                ] {
                    if set {
                        p.push(only(field, "\"git\""));
                    }
                }
            }
        }
        p
    }
}

/// What the marker of a finished install records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    pub recipe: InstallSpec,
    /// Script name → hash of its content when it was copied.
    #[serde(default)]
    pub scripts: BTreeMap<String, String>,
    /// Interpreter of a venv (`3.11.7 /path/python3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
}

/// How the last install attempt ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub ok: bool,
    pub step: String,
    pub error: String,
    pub log: String,
}

/// 64-bit FNV-1a, hex: a stable fingerprint of a launcher script.
pub fn fingerprint(bytes: &[u8]) -> String {
    format!("{:016x}", lrab_util::fnv1a(lrab_util::FNV1A_START, bytes))
}

fn script_prints(spec: &InstallSpec, arm_dir: &Path) -> BTreeMap<String, String> {
    spec.scripts
        .iter()
        .map(|s| {
            let f = std::fs::read(arm_dir.join(s))
                .map(|b| fingerprint(&b))
                .unwrap_or_else(|_| "unreadable".into());
            (s.clone(), f)
        })
        .collect()
}

/// Whether the cache holds a finished install of `spec`, and why not.
#[derive(Debug, Clone, PartialEq)]
pub enum State {
    /// Finished and current: the program's path.
    Current(PathBuf),
    /// Never installed (no marker), with the last failed attempt if there was one.
    Absent(Option<Status>),
    /// Installed, but no longer what the arm file says (why).
    Stale(String),
}

pub fn state(spec: &InstallSpec, arm_dir: &Path, root: &Path) -> State {
    let marker = std::fs::read_to_string(spec.marker_path(root))
        .ok()
        .and_then(|t| serde_json::from_str::<Marker>(&t).ok());
    let Some(m) = marker else {
        let last = std::fs::read_to_string(spec.status_path(root))
            .ok()
            .and_then(|t| serde_json::from_str::<Status>(&t).ok())
            .filter(|s| !s.ok);
        return State::Absent(last);
    };
    if m.recipe != *spec {
        return State::Stale(
            "the arm file's [install] table changed since it was installed".into(),
        );
    }
    if m.scripts != script_prints(spec, arm_dir) {
        return State::Stale(format!(
            "the launcher beside the arm file ({}) changed since it was installed",
            spec.scripts.join(", ")
        ));
    }
    let bin = spec.bin_path(root);
    if !crate::run::process::is_executable(&bin) {
        return State::Stale(format!("{} is missing or not executable", bin.display()));
    }
    State::Current(bin)
}

/// The program of a current install, if any (what `Arm::locate` uses).
pub fn installed_bin(spec: &InstallSpec, arm_dir: &Path) -> Option<PathBuf> {
    match state(spec, arm_dir, &cache_root()) {
        State::Current(p) => Some(p),
        _ => None,
    }
}

pub(crate) fn write_status(spec: &InstallSpec, root: &Path, s: &Status) {
    let p = spec.status_path(root);
    if let Some(d) = p.parent() {
        let _ = std::fs::create_dir_all(d);
    }
    if let Ok(t) = serde_json::to_string_pretty(s) {
        let _ = lrab_util::write_atomic(&p, t.as_bytes());
    }
}

pub(crate) fn write_marker(
    spec: &InstallSpec,
    arm_dir: &Path,
    root: &Path,
    python: Option<String>,
) -> std::io::Result<()> {
    let m = Marker {
        recipe: spec.clone(),
        scripts: script_prints(spec, arm_dir),
        python,
    };
    let t = serde_json::to_string_pretty(&m).map_err(std::io::Error::other)?;
    lrab_util::write_atomic(&spec.marker_path(root), t.as_bytes())
}

pub(crate) fn remove_marker(spec: &InstallSpec, root: &Path) {
    let _ = std::fs::remove_file(spec.marker_path(root));
}

#[cfg(test)]
mod tests {
    use super::version::VersionError;
    use super::*;

    #[test]
    fn version_commands_fail_with_a_kind_each() {
        let sh = Path::new("/bin/sh");
        let scope = ProbeScope::default();
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            run_version(sh, &args(&["-c", "echo v1.2; exit 0"]), &scope).unwrap(),
            "v1.2"
        );
        let e = run_version(sh, &args(&["-c", "echo oops >&2; exit 3"]), &scope).unwrap_err();
        assert!(
            matches!(&e, VersionError::Failed { line, .. } if line == "oops"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "`/bin/sh -c echo oops >&2; exit 3` failed (exit status: 3): oops"
        );
        let e = run_version(sh, &args(&["-c", "exit 0"]), &scope).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`/bin/sh -c exit 0` printed nothing (exit status: 0)"
        );
        let e = run_version(Path::new("/nonexistent/lrab-x"), &[], &scope).unwrap_err();
        assert!(matches!(e, VersionError::Spawn { .. }), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("cannot run /nonexistent/lrab-x: "),
            "{e}"
        );
    }

    fn spec(kind: Kind) -> InstallSpec {
        InstallSpec {
            kind,
            package: "@scope/tool".into(),
            version: "1.2.3".into(),
            bin: "node_modules/.bin/tool".into(),
            extras: vec![],
            with: vec![],
            python: None,
            scripts: vec![],
            executable: vec![],
            url: None,
            commit: None,
            src_env: None,
            files: vec![],
            sha256: None,
        }
    }

    #[test]
    fn version_tokens() {
        assert!(version_matches("codex-cli 0.171.0", "0.171.0"));
        assert!(version_matches("1.18.23\n", "1.18.23"));
        assert!(version_matches("aider 0.86.2.", "0.86.2"));
        assert!(!version_matches("codex-cli 0.171.01", "0.171.0"));
        assert!(!version_matches("codex-cli 10.171.0", "0.171.0"));
        assert!(!version_matches("tool 1.2.3.4", "1.2.3"));
        assert!(!version_matches("tool 1.2.4", "1.2.3"));
        assert!(version_matches("v1.2.3 (abc)", "1.2.3"));
    }

    #[test]
    fn table_problems_name_the_field() {
        let d = tempfile::tempdir().unwrap();
        let mut s = spec(Kind::Npm);
        assert!(s.problems(d.path()).is_empty());
        assert_eq!(s.dir_name(), "scope+tool@1.2.3");
        assert_eq!(s.requirement(), "@scope/tool@1.2.3");
        s.version = "^1.2".into();
        s.bin = "../x".into();
        s.python = Some(">=3.10".into());
        s.with = vec!["left-pad".into()];
        s.scripts = vec!["launch.py".into()];
        let p = s.problems(d.path()).join("\n");
        for f in [
            "install.version",
            "install.bin",
            "install.python",
            "install.with[0]",
            "install.scripts[0]",
        ] {
            assert!(p.contains(f), "{f}: {p}");
        }
        let mut s = spec(Kind::Pip);
        s.package = "smolagents".into();
        s.extras = vec!["litellm".into()];
        s.python = Some(">=3.10,<3.13".into());
        assert_eq!(s.requirement(), "smolagents[litellm]==1.2.3");
        assert!(s.problems(d.path()).is_empty());
        s.python = Some("three".into());
        assert!(s.problems(d.path())[0].starts_with("install.python:"));
    }

    #[test]
    fn state_needs_marker_recipe_and_scripts() {
        let root = tempfile::tempdir().unwrap();
        let arm_dir = tempfile::tempdir().unwrap();
        std::fs::write(arm_dir.path().join("l.py"), "print(1)\n").unwrap();
        let mut s = spec(Kind::Npm);
        s.scripts = vec!["l.py".into()];
        assert_eq!(state(&s, arm_dir.path(), root.path()), State::Absent(None));
        let bin = s.bin_path(root.path());
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(state(&s, arm_dir.path(), root.path()), State::Absent(None));
        write_marker(&s, arm_dir.path(), root.path(), None).unwrap();
        assert_eq!(state(&s, arm_dir.path(), root.path()), State::Current(bin));
        std::fs::write(arm_dir.path().join("l.py"), "print(2)\n").unwrap();
        assert!(
            matches!(state(&s, arm_dir.path(), root.path()), State::Stale(w) if w.contains("launcher"))
        );
        let mut t = s.clone();
        t.with = vec!["x@1.0.0".into()];
        assert!(
            matches!(state(&t, arm_dir.path(), root.path()), State::Stale(w) if w.contains("[install]"))
        );
    }
}

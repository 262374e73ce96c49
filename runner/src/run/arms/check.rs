//! `lrab arms check` and `lrab doctor` per arm: is the program there, did its install fail,
//! does it print the pinned version — with which and why.

use std::path::{Path, PathBuf};

use super::Arm;
use crate::run::install::{self, state, version_matches, Kind, State};

/// What is wrong with an arm, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    /// The program is nowhere.
    Missing,
    /// The last `lrab arms install` of it failed.
    InstallFailed,
    /// An install is in the cache but no longer matches the arm file.
    Stale,
    /// The program runs but its version command prints another version than the pin.
    VersionDiffers,
    /// The program is there but its version command does not work.
    VersionFails,
}

impl Verdict {
    /// The fixed-width tag `arms check` starts its line with.
    pub fn tag(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Missing => "missing",
            Verdict::InstallFailed => "failed",
            Verdict::Stale => "stale",
            Verdict::VersionDiffers => "version",
            Verdict::VersionFails => "broken",
        }
    }
}

/// One arm's check.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmCheck {
    pub name: String,
    pub verdict: Verdict,
    pub path: Option<PathBuf>,
    pub version: Option<String>,
    /// The version the arm file pins ("" = none).
    pub pin: String,
    /// What was found, or what is wrong and how to fix it.
    pub detail: String,
}

/// Why `locate` found nothing: the path that `$bin_env` or an explicit `program` path names
/// (which is then the only place looked at), else every place that was searched.
fn not_found(arm: &Arm) -> String {
    let bad = |p: &Path| {
        if p.is_dir() {
            "is a directory"
        } else if p.exists() {
            "is not executable"
        } else {
            "does not exist"
        }
    };
    if let Some(var) = &arm.bin_env {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let p = PathBuf::from(v);
            return format!("${var} is set to {}, which {}", p.display(), bad(&p));
        }
    }
    if arm.program.contains('/') {
        let p = Path::new(&arm.program);
        return format!("program {} {}", p.display(), bad(p));
    }
    if let Some(i) = arm.install.as_ref().filter(|i| i.kind == Kind::Git) {
        return format!(
            "no finished install of {} in the arms cache {} (a git arm's program is only taken from there)",
            i.requirement(),
            install::cache_root().display()
        );
    }
    format!(
        "program '{}' not found (next to lrab, in the arms cache {}, on PATH{})",
        arm.program,
        install::cache_root().display(),
        arm.bin_env
            .as_ref()
            .map(|v| format!(", or ${v}"))
            .unwrap_or_default()
    )
}

pub fn check(arm: &Arm) -> ArmCheck {
    let pin = arm.pinned_version().to_string();
    let mut c = ArmCheck {
        name: arm.name.clone(),
        verdict: Verdict::Ok,
        path: None,
        version: None,
        pin: pin.clone(),
        detail: String::new(),
    };
    let fix = format!("run `lrab arms install {}`", arm.name);
    let Some(bin) = arm.locate() else {
        let where_ = not_found(arm);
        let arm_dir = arm.file.parent().unwrap_or(Path::new("."));
        (c.verdict, c.detail) = match &arm.install {
            None => (Verdict::Missing, format!("{where_}: {}", arm.install_hint)),
            Some(i) => match state(i, arm_dir, &install::cache_root()) {
                State::Absent(Some(s)) => (
                    Verdict::InstallFailed,
                    format!(
                        "install of {} failed at step '{}': {} (log: {})",
                        i.requirement(),
                        s.step,
                        s.error,
                        s.log
                    ),
                ),
                State::Stale(why) => (
                    Verdict::Stale,
                    format!(
                        "the cached install of {} is out of date: {why}; {fix}",
                        i.requirement()
                    ),
                ),
                // Current but not located cannot happen (locate looks there); treat as missing.
                State::Absent(None) | State::Current(_) => {
                    (Verdict::Missing, format!("{where_}; {fix}"))
                }
            },
        };
        return c;
    };
    c.path = Some(bin.clone());
    match install::run_version(&bin, &arm.version_args, &arm.probe_scope()) {
        Err(e) => {
            c.verdict = Verdict::VersionFails;
            c.detail = format!("{}: its version command failed: {e}", bin.display());
        }
        Ok(v) if arm.install.as_ref().is_some_and(|i| i.kind == Kind::Git) => {
            c.version = Some(v.clone());
            (c.verdict, c.detail) = git_files(arm, &bin, &v);
        }
        Ok(v) => {
            c.version = Some(v.clone());
            if version_matches(&v, &pin) {
                c.detail = format!(
                    "{} — {v}{}",
                    bin.display(),
                    if pin.is_empty() {
                        String::new()
                    } else {
                        format!(" (pinned {pin})")
                    }
                );
            } else {
                c.verdict = Verdict::VersionDiffers;
                c.detail = format!(
                    "{} prints '{v}', but the arm file pins {pin}{}",
                    bin.display(),
                    match &arm.install {
                        Some(_) if !bin.starts_with(install::cache_root()) => format!(
                            "; this copy is not the cached install: {fix}{}",
                            arm.bin_env
                                .as_ref()
                                .map(|v| format!(" and unset ${v} or take it off PATH"))
                                .unwrap_or_else(|| " and take it off PATH".into())
                        ),
                        Some(_) => format!("; {fix}"),
                        None => String::new(),
                    }
                );
            }
        }
    }
    c
}

/// A git install is pinned by its files, not by what its interpreter prints: each file kept in
/// the install must still have the digest the arm file names.
fn git_files(arm: &Arm, bin: &Path, printed: &str) -> (Verdict, String) {
    let Some(spec) = &arm.install else {
        return (Verdict::Missing, String::new());
    };
    let src = spec.dir(&install::cache_root()).join("src");
    for (i, f) in spec.files.iter().enumerate() {
        let p = src.join(&f.path);
        let got = std::fs::read(&p).map(|b| lrab_util::sha256_hex(&b));
        match got {
            Ok(d) if d == f.sha256 => {}
            Ok(d) => {
                return (
                    Verdict::VersionDiffers,
                    format!(
                        "{} has sha256 {d}, but install.files[{i}].sha256 is {}; run `lrab arms install {}`",
                        p.display(),
                        f.sha256,
                        arm.name
                    ),
                )
            }
            Err(e) => {
                return (
                    Verdict::Stale,
                    format!("{}: {e}; run `lrab arms install {}`", p.display(), arm.name),
                )
            }
        }
    }
    let names: Vec<&str> = spec.files.iter().map(|f| f.path.as_str()).collect();
    (
        Verdict::Ok,
        format!(
            "{} — {printed}; {} match their sha256 (pinned {} @ {})",
            bin.display(),
            names.join(", "),
            spec.version,
            spec.commit
                .as_deref()
                .and_then(|c| c.get(..12))
                .unwrap_or("?")
        ),
    )
}

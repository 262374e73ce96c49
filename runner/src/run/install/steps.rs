//! Carrying out one install: the registry client's commands, each a named step whose output
//! goes to the install's log, under a lock so two `lrab arms install` never build the same
//! folder at once. Nothing counts as installed until the last step has written the marker.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::command::{fail, run_step, Failure};
use super::pyfind::{self, Constraint};
use super::{write_marker, write_status, InstallSpec, Kind, State, Status};

/// The end of one install.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It was already there and current: nothing was done.
    Already(PathBuf),
    /// Installed now.
    Installed(PathBuf),
    /// A step failed; nothing is marked installed.
    Failed {
        step: String,
        error: String,
        log: PathBuf,
    },
}

/// An exclusive `flock` on a file; released when dropped.
struct Lock {
    _file: File,
}

impl Lock {
    fn take(path: &Path, say: &mut dyn FnMut(&str)) -> std::io::Result<Lock> {
        use std::os::fd::AsRawFd;
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        let f = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        // SAFETY: flock on a descriptor this struct owns; no memory is touched.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            say(&format!(
                "waiting for another install holding {}",
                path.display()
            ));
            // SAFETY: as above, blocking this time.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(Lock { _file: f })
    }
}

/// Copies the launchers beside the arm file into `<dir>/bin/`, pointing a python `#!` line
/// at the venv's interpreter.
fn copy_scripts(spec: &InstallSpec, arm_dir: &Path, dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    for s in &spec.scripts {
        let src = arm_dir.join(s);
        let text =
            std::fs::read_to_string(&src).map_err(|e| format!("read {}: {e}", src.display()))?;
        let text = match (spec.kind, text.split_once('\n')) {
            (Kind::Pip, Some((first, rest)))
                if first.starts_with("#!") && first.contains("python") =>
            {
                format!("#!{}\n{rest}", dir.join("bin/python").display())
            }
            _ => text,
        };
        let dst = dir.join("bin").join(s);
        std::fs::create_dir_all(dir.join("bin")).map_err(|e| e.to_string())?;
        std::fs::write(&dst, text).map_err(|e| format!("write {}: {e}", dst.display()))?;
        std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn make_executable(spec: &InstallSpec, dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    for e in &spec.executable {
        let p = dir.join(e);
        let m = std::fs::metadata(&p).map_err(|x| format!("{}: {x}", p.display()))?;
        let mode = m.permissions().mode() | 0o111;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode))
            .map_err(|x| format!("{}: {x}", p.display()))?;
    }
    Ok(())
}

/// Interpreter version of an existing venv, if it runs.
fn venv_python(dir: &Path) -> Option<pyfind::PyVersion> {
    let py = dir.join("bin/python");
    let o = lrab_tasks::process::run_argv(
        py.to_str()?,
        &["-c", "import sys; print(*sys.version_info[:3])"],
        &std::env::temp_dir(),
        Duration::from_secs(20),
    )
    .ok()?;
    let v: Vec<u32> = o
        .stdout
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    (o.success() && v.len() == 3).then(|| pyfind::PyVersion(v[0], v[1], v[2]))
}

/// A venv at `venv` with a Python that fits `spec.python` (the one there when it still fits),
/// then `pip install` of `packages` (none: no pip step). The interpreter, as the marker records it.
pub(super) fn make_venv(
    spec: &InstallSpec,
    venv: &Path,
    packages: &[String],
    log: &mut File,
    say: &mut dyn FnMut(&str),
) -> Result<String, Failure> {
    let want = spec
        .python
        .as_deref()
        .map(Constraint::parse)
        .transpose()
        .map_err(|e| fail("find python", e.to_string()))?;
    let parent = venv.parent().unwrap_or(venv);
    let python;
    if let Some(v) = venv_python(venv).filter(|v| want.as_ref().is_none_or(|c| c.allows(*v))) {
        say(&format!("reuse venv (Python {v})"));
        python = v.to_string();
    } else {
        say("find python");
        let py = pyfind::find(want.as_ref()).map_err(|e| fail("find python", e.to_string()))?;
        let step = format!("create venv with Python {}", py.version);
        say(&step);
        if venv.exists() {
            std::fs::remove_dir_all(venv).map_err(|e| fail(&step, e.to_string()))?;
        }
        std::fs::create_dir_all(parent).map_err(|e| fail(&step, e.to_string()))?;
        let argv = [
            py.path.clone().into(),
            "-m".into(),
            "venv".into(),
            venv.to_path_buf().into(),
        ];
        run_step(log, &argv, parent, &[]).map_err(|e| fail(&step, e))?;
        python = format!("{} {}", py.version, py.path.display());
    }
    if packages.is_empty() {
        return Ok(python);
    }
    let step = format!("pip install {}", packages.join(" "));
    say(&format!("{step} (can take minutes)"));
    let mut argv: Vec<OsString> = vec![
        venv.join("bin/python").into(),
        "-m".into(),
        "pip".into(),
        "install".into(),
        "--disable-pip-version-check".into(),
        "--no-input".into(),
        "--progress-bar".into(),
        "off".into(),
    ];
    argv.extend(packages.iter().map(OsString::from));
    run_step(log, &argv, venv, &[]).map_err(|e| fail(&step, e))?;
    Ok(python)
}

fn npm_install(
    spec: &InstallSpec,
    dir: &Path,
    log: &mut File,
    say: &mut dyn FnMut(&str),
) -> Result<(), Failure> {
    let parent = dir.parent().unwrap_or(dir);
    say("find npm");
    run_step(log, &["npm".into(), "--version".into()], parent, &[]).map_err(|e| {
        fail(
            "find npm",
            format!("{e} (install Node.js and npm, e.g. apt-get install npm)"),
        )
    })?;
    let req = spec.requirement();
    let step = format!("npm install {req}");
    say(&format!("{step} (can take minutes)"));
    let mut argv: Vec<OsString> = vec![
        "npm".into(),
        "install".into(),
        "--prefix".into(),
        dir.to_path_buf().into(),
        "--no-audit".into(),
        "--no-fund".into(),
        "--no-update-notifier".into(),
        req.into(),
    ];
    argv.extend(spec.with.iter().map(OsString::from));
    std::fs::create_dir_all(dir).map_err(|e| fail(&step, e.to_string()))?;
    // Run inside the prefix: from its parent, npm would take the spec
    // `name@version` for the sibling folder of that very name and install nothing.
    run_step(log, &argv, dir, &[]).map_err(|e| fail(&step, e))
}

fn steps(
    arm: &str,
    spec: &InstallSpec,
    arm_dir: &Path,
    version_args: &[String],
    root: &Path,
    log: &mut File,
    say: &mut dyn FnMut(&str),
) -> Result<(PathBuf, Option<String>), Failure> {
    let dir = spec.dir(root);
    let mut python = None;
    let parent = dir.parent().unwrap_or(root);
    std::fs::create_dir_all(parent).map_err(|e| fail("create cache folder", e.to_string()))?;
    match spec.kind {
        Kind::Npm => npm_install(spec, &dir, log, say)?,
        Kind::Pip => {
            let mut packages = vec![spec.requirement()];
            packages.extend(spec.with.iter().cloned());
            python = Some(make_venv(spec, &dir, &packages, log, say)?);
        }
        Kind::Git => {
            super::git::take_files(arm, spec, &dir, log, say)?;
            if spec.python.is_some() {
                python = Some(make_venv(spec, &dir.join("venv"), &spec.with, log, say)?);
            }
        }
        Kind::Archive => super::archive::fetch_and_unpack(arm, spec, &dir, log, say)?,
    }
    if !spec.scripts.is_empty() {
        say("copy launcher");
        copy_scripts(spec, arm_dir, &dir).map_err(|e| fail("copy launcher", e))?;
    }
    make_executable(spec, &dir).map_err(|e| fail("make executable", e))?;
    let bin = spec.bin_path(root);
    verify(spec, arm_dir, version_args, root, &bin, log, say)?;
    Ok((bin, python))
}

/// The program is there and its version command, run confined, works and (except for a git
/// install, pinned by its files' digests) prints the pinned version.
fn verify(
    spec: &InstallSpec,
    arm_dir: &Path,
    version_args: &[String],
    root: &Path,
    bin: &Path,
    log: &mut File,
    say: &mut dyn FnMut(&str),
) -> Result<(), Failure> {
    let step = "verify the program and its version";
    say(step);
    if !crate::run::process::is_executable(bin) {
        return Err(fail(
            step,
            format!(
                "{} is missing or not executable after the install (is install.bin right?)",
                bin.display()
            ),
        ));
    }
    let scope = super::ProbeScope::of(Some(spec), arm_dir, root);
    let v = super::run_version(bin, version_args, &scope).map_err(|e| fail(step, e.to_string()))?;
    let _ = writeln!(log, "version: {v}");
    if spec.kind != Kind::Git && !super::version_matches(&v, &spec.version) {
        return Err(fail(
            step,
            format!(
                "`{} {}` printed '{v}', not the pinned {}",
                bin.display(),
                version_args.join(" "),
                spec.version
            ),
        ));
    }
    Ok(())
}

/// Installs `spec` (for the arm `arm_name`, whose file sits in `arm_dir`) into `root`, unless
/// a current install is already there. `say` gets one line per step.
pub fn install(
    arm_name: &str,
    spec: &InstallSpec,
    arm_dir: &Path,
    version_args: &[String],
    root: &Path,
    say: &mut dyn FnMut(&str),
) -> Outcome {
    let log_path = spec.log_path(root);
    let lock_path = root.join("locks").join(format!("{}.lock", spec.dir_name()));
    let _lock = match Lock::take(&lock_path, say) {
        Ok(l) => l,
        Err(e) => {
            return Outcome::Failed {
                step: "lock the cache".into(),
                error: format!("{}: {e}", lock_path.display()),
                log: log_path,
            }
        }
    };
    if let State::Current(bin) = super::state(spec, arm_dir, root) {
        return Outcome::Already(bin);
    }
    super::remove_marker(spec, root);
    let opened = std::fs::create_dir_all(root.join("logs")).and_then(|_| {
        File::options()
            .create(true)
            .truncate(true)
            .write(true)
            .read(true)
            .open(&log_path)
    });
    let mut log = match opened {
        Ok(f) => f,
        Err(e) => {
            return Outcome::Failed {
                step: "open the install log".into(),
                error: format!("{}: {e}", log_path.display()),
                log: log_path,
            }
        }
    };
    let _ = writeln!(log, "install of arm {arm_name}: {}", spec.requirement());
    // Each step is recorded as it starts: an install killed half way leaves its step as the
    // reason `arms check` gives (and no marker, so nothing of it is used).
    let log_shown = log_path.display().to_string();
    let mut say = |step: &str| {
        let s = Status {
            ok: false,
            step: step.to_string(),
            error: "did not finish (interrupted, or still running)".into(),
            log: log_shown.clone(),
        };
        write_status(spec, root, &s);
        say(step)
    };
    let result = steps(
        arm_name,
        spec,
        arm_dir,
        version_args,
        root,
        &mut log,
        &mut say,
    )
    .and_then(|(bin, py)| {
        write_marker(spec, arm_dir, root, py)
            .map_err(|e| fail("write the install marker", e.to_string()))?;
        Ok(bin)
    });
    let status = match &result {
        Ok(_) => Status {
            ok: true,
            step: "done".into(),
            error: String::new(),
            log: log_path.display().to_string(),
        },
        Err(f) => Status {
            ok: false,
            step: f.step.clone(),
            error: f.error.clone(),
            log: log_path.display().to_string(),
        },
    };
    write_status(spec, root, &status);
    match result {
        Ok(bin) => Outcome::Installed(bin),
        Err(f) => {
            let _ = writeln!(log, "FAILED at step '{}': {}", f.step, f.error);
            Outcome::Failed {
                step: f.step,
                error: f.error,
                log: log_path,
            }
        }
    }
}

//! An arm's version command, run confined as every launch of an arm's program after its
//! install: the version it prints against the pin, or why there is none.

use std::path::{Path, PathBuf};

pub use crate::run::confine::ProbeScope;

use super::InstallSpec;

/// Whether `text` shows version `pin` as a whole token (`1.2.3` in `tool 1.2.3`, not `1.2.30`).
pub fn version_matches(text: &str, pin: &str) -> bool {
    if pin.is_empty() {
        return true;
    }
    let is_part = |c: char| c.is_ascii_alphanumeric() || c == '.';
    let mut from = 0;
    while let Some(i) = text[from..].find(pin) {
        let at = from + i;
        let before = text[..at].chars().next_back();
        let after = text[at + pin.len()..].chars().next();
        let trailing_dot_ok = |c: Option<char>| match c {
            None => true,
            Some('.') => !text[at + pin.len() + 1..]
                .chars()
                .next()
                .is_some_and(|d| d.is_ascii_alphanumeric()),
            Some(c) => !is_part(c),
        };
        let before_ok = before.is_none_or(|c| !(c.is_ascii_digit() || c == '.'));
        if before_ok && trailing_dot_ok(after) {
            return true;
        }
        from = at + pin.len();
    }
    false
}

/// Why an arm's version command gave no version ([`run_version`]). `cmd` is the command line
/// in backticks, as the messages quote it.
#[derive(Debug, thiserror::Error)]
pub enum VersionError {
    /// The throwaway HOME or the output files could not be made.
    #[error("{0}")]
    Io(std::io::Error),
    /// The program is not there (or not executable).
    #[error("cannot run {}: {err}", .bin.display())]
    Spawn {
        /// The program.
        bin: PathBuf,
        /// Why it did not start (not a `source`: the message carries it).
        err: std::io::Error,
    },
    /// It could not be started confined (the kernel lacks a layer, or the launch failed); it
    /// is never run unconfined instead.
    #[error("cannot run {} confined: {why}", .bin.display())]
    Confine {
        /// The program.
        bin: PathBuf,
        /// What is missing or what failed.
        why: String,
    },
    /// It ran past the version timeout and was killed.
    #[error("{cmd} did not finish in {secs} s")]
    Timeout {
        /// The command line.
        cmd: String,
        /// The timeout.
        secs: u64,
    },
    /// It exited unsuccessfully; `line` is the first line it printed.
    #[error("{cmd} failed ({status}): {line}")]
    Failed {
        /// The command line.
        cmd: String,
        /// How it exited.
        status: std::process::ExitStatus,
        /// Its first non-empty line (stdout, else stderr).
        line: String,
    },
    /// It printed nothing at all.
    #[error("{cmd} printed nothing ({status})")]
    Silent {
        /// The command line.
        cmd: String,
        /// How it exited.
        status: std::process::ExitStatus,
    },
}

impl ProbeScope {
    /// The scope of `spec`'s install (in `root`) for an arm file in `arm_dir`.
    pub fn of(spec: Option<&InstallSpec>, arm_dir: &Path, root: &Path) -> ProbeScope {
        ProbeScope {
            install_dir: spec.map(|s| s.dir(root)),
            arm_dir: Some(arm_dir.to_path_buf()).filter(|d| !d.as_os_str().is_empty()),
        }
    }
}

/// Runs `bin args` (the arm's version command) under the arm confinement, as every launch of
/// an arm's program after its install: it may write only a throwaway HOME, TMPDIR and working
/// folder, read the system, its install and the arm file's folder, and reach no network. The
/// first line it prints, or why it failed.
pub fn run_version(
    bin: &Path,
    args: &[String],
    scope: &ProbeScope,
) -> Result<String, VersionError> {
    let done = run_probe(bin, args, scope)?;
    version_outcome(bin, args, &done.exit, &done.out, &done.err)
}

/// Everything `bin args` printed on stdout, run confined like [`run_version`]; an error when it
/// fails or prints nothing. For other read-only questions to an arm's program (our harness's
/// `mechanisms`, which `lrab ablate` asks).
pub fn run_confined_output(
    bin: &Path,
    args: &[String],
    scope: &ProbeScope,
) -> Result<String, VersionError> {
    let done = run_probe(bin, args, scope)?;
    version_outcome(bin, args, &done.exit, &done.out, &done.err)?;
    std::fs::read_to_string(&done.out).map_err(VersionError::Io)
}

/// A finished confined probe: how it ended and where its output is (the folder lives as long
/// as this).
struct Probed {
    exit: crate::run::process::Exit,
    out: PathBuf,
    err: PathBuf,
    _tmp: tempfile::TempDir,
}

fn run_probe(bin: &Path, args: &[String], scope: &ProbeScope) -> Result<Probed, VersionError> {
    use crate::run::process;
    if !crate::run::process::is_executable(bin) {
        return Err(VersionError::Spawn {
            bin: bin.to_path_buf(),
            err: std::io::Error::new(std::io::ErrorKind::NotFound, "no executable file there"),
        });
    }
    let tmp = tempfile::tempdir().map_err(VersionError::Io)?;
    let t = tmp.path();
    let (home, scratch, work) = (t.join("home"), t.join("tmp"), t.join("work"));
    for d in [&home, &scratch, &work] {
        std::fs::create_dir_all(d).map_err(VersionError::Io)?;
    }
    let confine_err = |why: String| VersionError::Confine {
        bin: bin.to_path_buf(),
        why,
    };
    let confine = crate::run::confine::probe(
        bin,
        scope,
        vec![work.clone(), home.clone(), scratch.clone()],
    )
    .map_err(confine_err)?;
    let (h, s) = (home.display().to_string(), scratch.display().to_string());
    let launch = process::Launch {
        program: bin.to_path_buf(),
        args: args.to_vec(),
        cwd: work,
        env: vec![
            ("HOME".into(), h),
            ("TMPDIR".into(), s.clone()),
            ("TMP".into(), s.clone()),
            ("TEMP".into(), s),
        ],
        env_remove: Vec::new(),
        stdout: t.join("out"),
        stderr: t.join("err"),
        deadline: VERSION_TIMEOUT,
        grace: std::time::Duration::from_secs(1),
        pgid_file: None,
        confine: Some(confine),
    };
    let exit = process::run(&launch).map_err(|e| confine_err(format!("{e:#}")))?;
    match exit.survivors {
        true => process::terminate_group(exit.pgid, launch.grace),
        false => process::forget_group(exit.pgid),
    }
    Ok(Probed {
        exit,
        out: launch.stdout,
        err: launch.stderr,
        _tmp: tmp,
    })
}

/// The version line of a finished version command, or why there is none.
fn version_outcome(
    bin: &Path,
    args: &[String],
    exit: &crate::run::process::Exit,
    out: &Path,
    err: &Path,
) -> Result<String, VersionError> {
    use std::os::unix::process::ExitStatusExt;
    // The version is on stdout; warnings (codex complains about a HOME under /tmp) go to
    // stderr, which only stands in when stdout is empty.
    let first_line = |p: &Path| {
        std::fs::read_to_string(p).ok().and_then(|t| {
            t.lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(str::to_string)
        })
    };
    let first = first_line(out).or_else(|| first_line(err));
    let cmd = format!("`{} {}`", bin.display(), args.join(" "));
    if exit.timed_out {
        return Err(VersionError::Timeout {
            cmd,
            secs: VERSION_TIMEOUT.as_secs(),
        });
    }
    let status = match exit.code {
        Some(c) => std::process::ExitStatus::from_raw((c & 0xff) << 8),
        None => std::process::ExitStatus::from_raw(libc::SIGKILL),
    };
    match first {
        Some(l) if status.success() => Ok(l),
        Some(line) => Err(VersionError::Failed { cmd, status, line }),
        None => Err(VersionError::Silent { cmd, status }),
    }
}

/// Version commands of Node programs take seconds on a busy 2-core machine.
const VERSION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

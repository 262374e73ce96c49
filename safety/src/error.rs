//! The typed errors of the safety crate's public operations. Each displays exactly the message
//! the command line prints, so a caller that only prints them sees the words it always saw.

use crate::probes::ProbeLoadError;
use std::path::PathBuf;

/// Why an arm cannot be started confined ([`crate::armbox::confine`]).
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The kernel lacks a feature the policy's network mode needs.
    #[error("cannot confine the arm: missing {0}")]
    Missing(String),
    /// The policy names no writable folder (the first one is the workdir).
    #[error("cannot confine the arm: no writable folder given")]
    NoWritable,
    /// A system call preparing the confinement failed.
    #[error("cannot confine the arm: {what}: {err}")]
    Setup {
        /// The step that failed (`Landlock ruleset`, `rule for <path>`, `pipe`, …).
        what: String,
        /// The system's error (not a `source`: the message already carries it).
        err: std::io::Error,
    },
}

/// Why a workdir must not be used ([`crate::paths::audit_hard_links`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HardLinkError {
    /// Files of the workdir are hard links to credential files of `home`.
    #[error("the working directory holds hard links to credential files of {}: {} — remove them (or use another working directory) before starting", .home.display(), .names.join(", "))]
    Credentials {
        /// The home whose credentials are linked.
        home: PathBuf,
        /// The linked names, relative to the workdir, sorted.
        names: Vec<String>,
    },
    /// Files of the workdir also have names outside it.
    #[error("the working directory holds hard links to files outside it: {} — replace each by a copy (`cp --remove-destination SRC NAME`) or remove it before starting", .names.join(", "))]
    Outside {
        /// The linked names, relative to the workdir, sorted.
        names: Vec<String>,
    },
}

/// Why a sandbox backend named by the operator cannot be used ([`crate::sandbox::Sandbox::named`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The backend exists but this kernel cannot provide it; `summary` says what it has.
    #[error("sandbox '{name}' requested but this kernel cannot provide it ({summary})")]
    Unavailable {
        /// `landlock` or `namespaces`.
        name: &'static str,
        /// The kernel's support, in one line.
        summary: String,
    },
    /// No backend has that name.
    #[error("unknown sandbox '{0}' (expected landlock, namespaces or auto)")]
    Unknown(String),
}

/// Why the probe suite (or one probe) could not be run ([`crate::run_suite`],
/// [`crate::run_probe`], [`crate::prepare_probe`], [`crate::ProbeExecutor::issue`], the
/// `lrab safety` command line). A probe that runs and fails is a result, never this error.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// A file system call preparing a probe's root failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A fixture file could not be written.
    #[error("writing fixture {}: {err}", .path.display())]
    Fixture {
        /// The fixture.
        path: PathBuf,
        /// Why (not a `source`: the message carries it).
        err: std::io::Error,
    },
    /// The probes did not load.
    #[error(transparent)]
    Load(#[from] ProbeLoadError),
    /// `--prompts` without a folder, and the published prompts cannot be had from the data lookup.
    #[error("--prompts: {0}")]
    Data(String),
    /// An `--only` prefix matches no probe id (a typo must never yield an empty pass).
    #[error("--only: no probe id starts with '{0}'")]
    NoMatch(String),
    /// The forced backend is not available (`--backend`).
    #[error("--backend: {0}")]
    Backend(SandboxError),
    /// An executor returned a different number of attempts than there were steps.
    #[error("executor returned {got} attempts for {want} steps")]
    StepCount {
        /// Attempts returned.
        got: usize,
        /// Steps issued.
        want: usize,
    },
    /// The executor could not issue the steps (or could not be made): its own words, with
    /// their causes.
    #[error("{0}")]
    Executor(String),
    /// The JSON report could not be written.
    #[error("{}: {err}", .path.display())]
    Report {
        /// The report file (`--json`).
        path: PathBuf,
        /// Why.
        err: std::io::Error,
    },
    /// One probe could not be run; `err` says why.
    #[error("probe {id}: {err}")]
    Probe {
        /// The probe's id.
        id: String,
        /// Why (not a `source`: the message carries it).
        err: Box<ProbeError>,
    },
}

impl ProbeError {
    /// An executor's failure in its own words: the error and its causes, joined by `: ` as the
    /// command line prints a chain.
    pub fn executor(e: impl std::fmt::Display) -> ProbeError {
        ProbeError::Executor(format!("{e:#}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_the_command_lines_words() {
        let e = crate::sandbox::Sandbox::named("chroot").unwrap_err();
        assert_eq!(e, SandboxError::Unknown("chroot".into()));
        assert_eq!(
            e.to_string(),
            "unknown sandbox 'chroot' (expected landlock, namespaces or auto)"
        );
        let e = SandboxError::Unavailable {
            name: "landlock",
            summary: "Landlock ABI 0".into(),
        };
        assert_eq!(
            e.to_string(),
            "sandbox 'landlock' requested but this kernel cannot provide it (Landlock ABI 0)"
        );
        let e = ConfineError::Setup {
            what: "pipe".into(),
            err: std::io::Error::from_raw_os_error(libc::EMFILE),
        };
        assert_eq!(
            e.to_string(),
            "cannot confine the arm: pipe: Too many open files (os error 24)"
        );
        assert!(std::error::Error::source(&e).is_none());
        assert_eq!(
            ConfineError::NoWritable.to_string(),
            "cannot confine the arm: no writable folder given"
        );
    }

    /// An executor that returns one attempt too few.
    struct Short;
    impl crate::ProbeExecutor for Short {
        fn name(&self) -> String {
            "short".into()
        }
        fn issue(
            &mut self,
            _steps: &[crate::ProbeStep],
            _irreversible: bool,
            _env: &crate::ProbeEnv,
        ) -> Result<crate::Issued, ProbeError> {
            Ok(crate::Issued {
                attempts: Vec::new(),
                other_output: String::new(),
            })
        }
    }

    #[test]
    fn probe_errors_have_kinds_and_the_old_words() {
        let probes = crate::own_probes().unwrap();
        let base = tempfile::tempdir().unwrap();
        let e = crate::run_probe(&probes[0], &mut Short, base.path()).unwrap_err();
        assert!(
            matches!(e, ProbeError::StepCount { got: 0, want } if want == probes[0].steps.len())
        );
        assert_eq!(
            e.to_string(),
            format!(
                "executor returned 0 attempts for {} steps",
                probes[0].steps.len()
            )
        );
        let wrapped = ProbeError::Probe {
            id: "OWN-X".into(),
            err: Box::new(e),
        };
        assert!(wrapped
            .to_string()
            .starts_with("probe OWN-X: executor returned 0 attempts"));
        assert!(std::error::Error::source(&wrapped).is_none());

        // a probe root that cannot be made: the system's words, as before
        let file = base.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let Err(e) = crate::prepare_probe(&probes[0], &file) else {
            panic!("a probe root under a plain file was prepared");
        };
        assert!(
            matches!(&e, ProbeError::Io(io) if io.raw_os_error() == Some(libc::ENOTDIR)),
            "{e:?}"
        );

        // an executor's error keeps its causes, joined as the command line prints a chain
        let chain = anyhow::anyhow!("connection refused").context("cannot start the backend");
        let e = ProbeError::executor(chain);
        assert!(matches!(&e, ProbeError::Executor(_)));
        assert_eq!(
            e.to_string(),
            "cannot start the backend: connection refused"
        );

        let e = ProbeError::Backend(SandboxError::Unknown("chroot".into()));
        assert_eq!(
            e.to_string(),
            "--backend: unknown sandbox 'chroot' (expected landlock, namespaces or auto)"
        );
        let e = ProbeError::Fixture {
            path: "/w/a.txt".into(),
            err: std::io::Error::from_raw_os_error(libc::ENOSPC),
        };
        assert_eq!(
            e.to_string(),
            "writing fixture /w/a.txt: No space left on device (os error 28)"
        );
    }
}

//! The typed errors of the safety crate's public operations. Each displays exactly the message
//! the command line prints, so a caller that only prints them sees the words it always saw.

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
}

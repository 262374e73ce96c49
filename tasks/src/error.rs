//! Error types: a validation [`Problem`] names the file and field so authors can fix it directly.

use std::fmt;
use std::path::PathBuf;

/// One validation problem in a pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file (or folder) the problem is in.
    pub file: PathBuf,
    /// Dotted field path inside the file (`milestones[2].kind`), or empty for the whole file.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(
                f,
                "{}: {}: {}",
                self.file.display(),
                self.field,
                self.message
            )
        }
    }
}

/// All problems found while loading a pack (never just the first).
#[derive(Debug, Clone)]
pub struct LoadError {
    /// Every problem found.
    pub problems: Vec<Problem>,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} problem(s) in the task pack:", self.problems.len())?;
        for p in &self.problems {
            writeln!(f, "  {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

/// Errors of the operations on one task (materialize, solutions).
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// Reading or writing a file failed.
    #[error("{path}: {err}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error (not a `source`: the message carries it, and a chain that
        /// printed both would say it twice).
        err: std::io::Error,
    },
    /// The workdir exists and holds files.
    #[error("workdir {0} exists and is not empty (pass wipe to replace it)")]
    WorkdirNotEmpty(PathBuf),
    /// A seed was given for a task without a generator.
    #[error("task {task} has no generator, so a seed cannot be applied")]
    SeedWithoutGenerator {
        /// The task id.
        task: String,
    },
    /// A generator failed.
    #[error("generator '{name}': {message}")]
    Generator {
        /// The generator.
        name: String,
        /// Its error.
        message: String,
    },
    /// The default seed's generated inputs differ from `generated.sha256`.
    #[error(
        "{manifest}: generated inputs for the default seed do not match the manifest: {detail}"
    )]
    ManifestMismatch {
        /// The manifest file.
        manifest: PathBuf,
        /// Which files differ.
        detail: String,
    },
    /// A check names a truth key its generator does not produce.
    #[error(
        "{file}: {field}: truth placeholder '{key}' is not produced by generator '{generator}'"
    )]
    UnknownTruth {
        /// The task file.
        file: PathBuf,
        /// The check field.
        field: String,
        /// The placeholder key.
        key: String,
        /// The generator.
        generator: String,
    },
    /// The task has no solution of this kind.
    #[error("task {task} has no {kind} solution")]
    NoSolution {
        /// The task id.
        task: String,
        /// `reference` or `partial`.
        kind: &'static str,
    },
    /// No task has this id.
    #[error("unknown task '{0}'")]
    UnknownTask(String),
    /// Anything else, in words.
    #[error("{0}")]
    Invalid(String),
}

/// Why one check table does not type (found while loading a pack); displays as
/// `<key>: <what is wrong>`, the field-level message a pack problem carries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckTableError {
    /// `artifact` is absent.
    #[error("artifact: missing")]
    NoArtifact,
    /// `artifact` is not a string; holds the TOML type found.
    #[error("artifact: expected a string, found {0}")]
    ArtifactType(&'static str),
    /// `kind` is absent.
    #[error("kind: missing")]
    NoKind,
    /// `kind` is not a string; holds the TOML type found.
    #[error("kind: expected a string, found {0}")]
    KindType(&'static str),
    /// `kind` names no check kind.
    #[error("kind: unknown check kind '{0}' (known: {known})", known = crate::spec::KINDS.join(", "))]
    UnknownKind(String),
    /// The kind's parameters do not type (missing, unknown or mistyped keys).
    #[error("{kind}: {message}")]
    Params {
        /// The check kind.
        kind: String,
        /// The TOML decoder's message.
        message: String,
    },
}

/// Why a manifest of generated inputs does not parse (`parse_manifest`, reading `generated.sha256`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// A line is not `<sha256>  <path>`.
    #[error("line {0}: expected '<sha256>  <path>'")]
    Shape(usize),
    /// A line's digest is not 64 hex digits.
    #[error("line {line}: '{digest}' is not a sha256 hex digest")]
    Digest {
        /// The 1-based line number.
        line: usize,
        /// What stood where the digest belongs.
        digest: String,
    },
}

/// A truth placeholder (`{{truth:key}}` in a check) whose key the generator's truth map lacks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("truth placeholder '{0}' has no value")]
pub struct MissingTruth(pub String);

impl TaskError {
    pub(crate) fn io(path: impl Into<PathBuf>, err: std::io::Error) -> Self {
        TaskError::Io {
            path: path.into(),
            err,
        }
    }
}

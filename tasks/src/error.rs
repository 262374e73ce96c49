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
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("workdir {0} exists and is not empty (pass wipe to replace it)")]
    WorkdirNotEmpty(PathBuf),
    #[error("task {task} has no generator, so a seed cannot be applied")]
    SeedWithoutGenerator { task: String },
    #[error("generator '{name}': {message}")]
    Generator { name: String, message: String },
    #[error(
        "{manifest}: generated inputs for the default seed do not match the manifest: {detail}"
    )]
    ManifestMismatch { manifest: PathBuf, detail: String },
    #[error(
        "{file}: {field}: truth placeholder '{key}' is not produced by generator '{generator}'"
    )]
    UnknownTruth {
        file: PathBuf,
        field: String,
        key: String,
        generator: String,
    },
    #[error("task {task} has no {kind} solution")]
    NoSolution { task: String, kind: &'static str },
    #[error("unknown task '{0}'")]
    UnknownTask(String),
    #[error("{0}")]
    Invalid(String),
}

impl TaskError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        TaskError::Io {
            path: path.into(),
            source,
        }
    }
}

//! The error of every reader and writer: which file, which line, what is wrong.

use std::path::PathBuf;

/// Reading or writing a record file failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file could not be opened, read, locked or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// An existing `cells.csv` has a header of another format; nothing was appended.
    #[error("{}: existing header differs from the cells.csv format (found: {found})", path.display())]
    Header {
        /// The file.
        path: PathBuf,
        /// Its first line.
        found: String,
    },
    /// A record does not have the expected shape.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line, when the format has lines.
        line: Option<usize>,
        /// What is wrong, naming the field where possible.
        message: String,
    },
}

impl RecordError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> RecordError {
        RecordError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
    pub(crate) fn invalid(
        path: &std::path::Path,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> RecordError {
        RecordError::Invalid {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

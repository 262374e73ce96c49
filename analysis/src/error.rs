//! The crate's error type. Every message names what it is about — the file and line, the
//! column, the arm and task, or the option — so a user can fix the input without reading code.

/// What went wrong, by kind.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read, created or written.
    #[error("{path}: {what}: {err}")]
    Io {
        /// The file.
        path: String,
        /// What was being done (`cannot read file`, `cannot create`, …).
        what: &'static str,
        /// The operating system's error (not a `source`: the message carries it, and a chain
        /// that printed both would say it twice).
        err: std::io::Error,
    },
    /// An input file's content is wrong; the message starts with `file` or `file:line`.
    #[error("{0}")]
    Input(String),
    /// The inputs do not form the design an analysis needs: repeats missing for some tasks, a
    /// variant without its baseline in the same batch, too few repeats for what was asked.
    #[error("{0}")]
    Design(String),
    /// A bad option value.
    #[error("{0}")]
    Usage(String),
    /// A figure could not be drawn or a result not serialised.
    #[error("{0}")]
    Output(String),
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `Err(Error::Input(format!(...)))`.
macro_rules! input {
    ($($t:tt)*) => { $crate::error::Error::Input(format!($($t)*)) };
}
pub(crate) use input;

impl Error {
    /// An [`Error::Io`] for `path`.
    pub(crate) fn io(path: impl std::fmt::Display, what: &'static str, e: std::io::Error) -> Self {
        Error::Io {
            path: path.to_string(),
            what,
            err: e,
        }
    }
}

//! The error of every reader and writer: which file, which line, what is wrong.

use std::path::PathBuf;

/// Reading or writing a record file failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file could not be opened, read, locked or written.
    #[error("{}: {err}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said (not a `source`: the message carries it, and a chain that
        /// printed both would say it twice).
        err: std::io::Error,
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
    pub(crate) fn io(path: &std::path::Path, err: std::io::Error) -> RecordError {
        RecordError::Io {
            path: path.to_path_buf(),
            err,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_error_is_said_once() {
        let e = RecordError::io(
            std::path::Path::new("/x/manifest.json"),
            std::io::Error::from_raw_os_error(2),
        );
        let chain = anyhow_like(&e);
        assert_eq!(chain.matches("(os error 2)").count(), 1, "{chain}");
        assert!(chain.starts_with("/x/manifest.json: "), "{chain}");
    }

    /// What `{:#}` of an error chain prints: each error's message joined with ": ".
    fn anyhow_like(e: &(dyn std::error::Error + 'static)) -> String {
        let mut out = e.to_string();
        let mut c = e.source();
        while let Some(x) = c {
            out.push_str(&format!(": {x}"));
            c = x.source();
        }
        out
    }
}

//! The library's one error type: what failed, by kind, so a caller can tell bad data from a
//! backend that is down. Each displays as the command line prints it (causes folded into the
//! message, never repeated as a `source`).

/// Why a τ² operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Tau2Error {
    /// Domain data, tasks or a results file are missing or malformed; the message names the
    /// file and the field.
    #[error("{0}")]
    Data(String),
    /// The model backend could not be reached or answered something unusable.
    #[error("{0}")]
    Backend(String),
    /// The judge's reply could not be read as a verdict per assertion.
    #[error("{0}")]
    Judge(String),
    /// The environment could not be brought to a task's initial state or a replayed history.
    #[error("{0}")]
    Env(String),
    /// A results file could not be written.
    #[error("{0}")]
    Write(String),
    /// An agent or user simulator produced no usable turn.
    #[error("{0}")]
    Agent(String),
    /// A domain's data file (telecom's TOML databases) did not load.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A system call failed (the message is the system's).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// JSON could not be made or read.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// Why a domain's data file could not be loaded; the message names the file. Defined here,
/// below the domains, so that the error type needs nothing of theirs.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read {}: {error}", path.display())]
    Read {
        path: std::path::PathBuf,
        error: std::io::Error,
    },
    /// The file is not valid TOML of the expected shape.
    #[error("{}: {error}", path.display())]
    Parse {
        path: std::path::PathBuf,
        error: toml::de::Error,
    },
}

/// The library's result.
pub type Result<T, E = Tau2Error> = std::result::Result<T, E>;

/// `Tau2Error::$kind(format!(...))`.
macro_rules! err {
    ($kind:ident, $($t:tt)*) => {
        $crate::error::Tau2Error::$kind(format!($($t)*))
    };
}

/// `return Err(Tau2Error::$kind(format!(...)))`.
macro_rules! fail {
    ($kind:ident, $($t:tt)*) => {
        return Err($crate::error::err!($kind, $($t)*))
    };
}

pub(crate) use {err, fail};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_display_their_words() {
        let e = err!(Backend, "bad port in {:?}", "http://x:y");
        assert!(matches!(&e, Tau2Error::Backend(_)));
        assert_eq!(e.to_string(), "bad port in \"http://x:y\"");
        let io = Tau2Error::from(std::io::Error::from_raw_os_error(2));
        assert_eq!(io.to_string(), "No such file or directory (os error 2)");
        assert!(std::error::Error::source(&io).is_none());
    }
}

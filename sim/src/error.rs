//! Errors of the simulator's own inputs (profile files, addresses), each naming what was wrong
//! and where, so a CLI can print it and exit non-zero.

use std::path::PathBuf;

/// Something the simulator could not accept.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A profile file that does not parse (TOML syntax, unknown key, missing key, wrong type);
    /// the message carries the line and the key.
    #[error("{}: {msg}", file.display())]
    ProfileSyntax { file: PathBuf, msg: String },
    /// A profile value outside its range, or an unknown name.
    #[error("{}: field `{field}`: {msg}", file.display())]
    ProfileField {
        file: PathBuf,
        field: String,
        msg: String,
    },
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot bind {addr}: {source}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start the server: {0}")]
    Start(String),
    /// A chat body the in-process entry point ([`crate::server_side_chat`]) cannot serve.
    #[error("bad chat request: {0}")]
    Request(String),
}

impl SimError {
    pub(crate) fn field(file: &std::path::Path, field: &str, msg: impl Into<String>) -> Self {
        SimError::ProfileField {
            file: file.to_path_buf(),
            field: field.to_string(),
            msg: msg.into(),
        }
    }
}

//! The sha256 of a file on disk.

use crate::DataError;
use std::path::Path;

/// Lowercase hex sha256 of the file at `path` (the largest data file is 14 MB: read whole).
pub fn file_sha256(path: &Path) -> Result<String, DataError> {
    let bytes = std::fs::read(path).map_err(|e| DataError::Io {
        path: path.to_path_buf(),
        err: e,
    })?;
    Ok(lrab_util::sha256_hex(&bytes))
}

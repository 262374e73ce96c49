//! The one gate of every test that reads published data: the file's path when it can be had;
//! otherwise a line `skipped: <file>: <why>` on stderr (written past the test harness's capture,
//! so it shows in `cargo test` output) and `None` — or, when `LRAB_REQUIRE_DATA` is set (CI,
//! which has the data), a failure instead of a skip.

use crate::catalogue::{entry, fetched_in};
use crate::DataError;
use std::io::Write;
use std::path::PathBuf;

/// True when the environment says missing data is a failure (`LRAB_REQUIRE_DATA` set, not `0`).
pub fn data_required() -> bool {
    std::env::var("LRAB_REQUIRE_DATA").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The catalogue file `path` for a test, or `None` after saying why it is skipped.
pub fn test_file(path: &str) -> Option<PathBuf> {
    let newer = entry(path).is_some_and(|f| f.newer_than_shared);
    gate(path, newer, crate::file(path))
}

/// The folder `dir` (every fetched file below it from one place) for a test, or `None`.
pub fn test_folder(dir: &str) -> Option<PathBuf> {
    let newer = fetched_in(dir).any(|f| f.newer_than_shared);
    gate(dir, newer, crate::folder(dir))
}

/// `newer`: the data is [`crate::DataFile::newer_than_shared`], so it skips even when required.
fn gate(asked: &str, newer: bool, found: Result<PathBuf, DataError>) -> Option<PathBuf> {
    let e = match found {
        Ok(p) => return Some(p),
        Err(e) => e,
    };
    let (subject, why) = match &e {
        DataError::Missing { file, why } => (file.clone(), why.clone()),
        other => (asked.to_string(), other.to_string()),
    };
    if data_required() && !newer {
        panic!("LRAB_REQUIRE_DATA is set and a test's data is missing: {subject}: {why}");
    }
    let _ = writeln!(std::io::stderr().lock(), "skipped: {subject}: {why}");
    None
}

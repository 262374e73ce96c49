//! The one gate of every test that reads published data: the file's path when it can be had;
//! otherwise a line `skipped: <file>: <why>` on stderr (written past the test harness's capture,
//! so it shows in `cargo test` output) and `None` — or, when `LRAB_REQUIRE_DATA` is set (CI,
//! which has the data), a failure instead of a skip.

use crate::DataError;
use std::io::Write;
use std::path::PathBuf;

/// True when the environment says missing data is a failure (`LRAB_REQUIRE_DATA` set, not `0`).
pub fn data_required() -> bool {
    std::env::var("LRAB_REQUIRE_DATA").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Folders of the catalogue that the shared data set CI carries beside the clone predates
/// (added 2026-12-06): only GitHub serves them, which CI cannot reach, so CI cannot be required
/// to have them; a test that needs them skips with its reason even under `LRAB_REQUIRE_DATA`.
const NEWER_THAN_SHARED: [&str; 1] = ["mingbird-safety/"];

fn required_here(subject: &str) -> bool {
    data_required() && !NEWER_THAN_SHARED.iter().any(|d| subject.starts_with(d))
}

/// The catalogue file `path` for a test, or `None` after saying why it is skipped.
pub fn test_file(path: &str) -> Option<PathBuf> {
    gate(path, crate::file(path))
}

/// The folder `dir` (every fetched file below it from one place) for a test, or `None`.
pub fn test_folder(dir: &str) -> Option<PathBuf> {
    gate(dir, crate::folder(dir))
}

fn gate(asked: &str, found: Result<PathBuf, DataError>) -> Option<PathBuf> {
    let e = match found {
        Ok(p) => return Some(p),
        Err(e) => e,
    };
    let (subject, why) = match &e {
        DataError::Missing { file, why } => (file.clone(), why.clone()),
        other => (asked.to_string(), other.to_string()),
    };
    if required_here(asked) {
        panic!("LRAB_REQUIRE_DATA is set and a test's data is missing: {subject}: {why}");
    }
    let _ = writeln!(std::io::stderr().lock(), "skipped: {subject}: {why}");
    None
}

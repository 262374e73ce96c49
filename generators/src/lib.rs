//! Seeded, byte-reproducible input generators for the long-horizon LRAB tasks.
//!
//! Contract (used by `lrab-tasks`): `generate(name, seed)` returns the files to write into a
//! workdir (relative path -> bytes) and the truth map the checks need (key -> string variants),
//! both computed from the same seeded data, so checks follow any seed.

use std::collections::BTreeMap;

/// Files and truths produced by one generator run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// Relative path inside the workdir -> file bytes.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Truth key -> accepted string variants (e.g. `peak_B01` -> `["1263.1", "1263"]`).
    pub truth: BTreeMap<String, Vec<String>>,
}

/// Errors a caller can act on.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error("unknown generator '{0}' (known: {known})", known = names().join(", "))]
    Unknown(String),
}

/// Names of the generators this crate knows.
pub fn names() -> &'static [&'static str] {
    &[]
}

/// Runs generator `name` with `seed`.
pub fn generate(name: &str, _seed: u64) -> Result<Generated, GenError> {
    Err(GenError::Unknown(name.to_string()))
}

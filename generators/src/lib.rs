//! Seeded, byte-reproducible input generators for the long-horizon LRAB tasks.
//!
//! Contract (used by `lrab-tasks`): `generate(name, seed)` returns the files to write into a
//! workdir (relative path -> bytes) and the truth map the checks need (key -> string variants),
//! both computed from the same seeded data, so checks follow any seed.
//!
//! Portability: every generator draws from `ChaCha8Rng::seed_from_u64(seed)` through one
//! integer-only random source (`rng.rs`; no `f64` transcendental functions whose last bits
//! differ between libm builds), and data is kept in fixed point until it is formatted.
//! The same seed therefore yields the same bytes on every machine.

#![deny(missing_docs)]

use std::collections::BTreeMap;

mod lh01;
mod lh02;
mod lh03;
mod rng;
mod text;

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
    /// No generator has this name.
    #[error("unknown generator '{0}' (known: {known})", known = names().join(", "))]
    Unknown(String),
    /// A generator re-draws until its planted properties hold; this reports a seed for which
    /// no draw within the attempt bound satisfied them (never observed, but not a panic).
    #[error("generator '{name}' found no valid draw for seed {seed} within {attempts} attempts")]
    Exhausted {
        /// The generator.
        name: &'static str,
        /// The seed asked for.
        seed: u64,
        /// Draws tried.
        attempts: u32,
    },
}

/// Names of the generators this crate knows.
pub fn names() -> &'static [&'static str] {
    &["lh01", "lh02", "lh03"]
}

/// Runs generator `name` with `seed`.
pub fn generate(name: &str, seed: u64) -> Result<Generated, GenError> {
    match name {
        "lh01" => lh01::generate(seed),
        "lh02" => lh02::generate(seed),
        "lh03" => lh03::generate(seed),
        other => Err(GenError::Unknown(other.to_string())),
    }
}

/// Default seed of each generator (the one the task packs pin in `generated.sha256`).
pub fn default_seed(name: &str) -> Option<u64> {
    match name {
        "lh01" => Some(lh01::DEFAULT_SEED),
        "lh02" => Some(lh02::DEFAULT_SEED),
        "lh03" => Some(lh03::DEFAULT_SEED),
        _ => None,
    }
}

/// Lower-case hex sha256 of `bytes` (the suite's one implementation).
pub use lrab_util::sha256_hex;

/// The `generated.sha256` manifest text for `generated`: one `"<sha256>  <path>\n"` line per
/// file, sorted by path (the `BTreeMap` order), in the format of `sha256sum`.
pub fn manifest(generated: &Generated) -> String {
    generated
        .files
        .iter()
        .map(|(path, bytes)| format!("{}  {}\n", sha256_hex(bytes), path))
        .collect()
}

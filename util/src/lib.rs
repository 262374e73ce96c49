//! Small helpers shared by the lrab crates, each written once: atomic file replacement,
//! sha256 and FNV-1a digests, civil dates, text clipping, serving an HTTP router on a background
//! thread, the list of credential locations in a home folder, an error chain said on one line
//! with each cause once, the closed-stdout rule of the
//! binaries, reading one raw HTTP/1.1 request (for the fake servers of tests and
//! benchmarks), and (feature `tls`) the TLS client settings every client of a backend shares.
//! Nothing here knows about tasks, arms or models.

#![deny(missing_docs)]

mod credentials;
mod date;
mod digest;
mod error;
mod fs;
mod http1;
mod rng;
#[cfg(feature = "serve")]
mod serve;
mod stdout;
mod text;
#[cfg(feature = "tls")]
pub mod tls;

pub use credentials::HOME_CREDENTIALS;
pub use date::{civil_from_days, iso_utc, UtcTime};
pub use digest::{fnv1a, sha256_hex, FNV1A_START};
pub use error::error_chain;
pub use fs::{write_atomic, write_atomic_unsynced, write_json_atomic};
pub use http1::{read_http_request, RawRequest};
pub use rng::SplitMix64;
#[cfg(feature = "serve")]
pub use serve::{serve_connections_in_background, serve_in_background, BackgroundServer};
#[doc(hidden)]
pub use stdout::print_fmt;
pub use stdout::{stdout, stdout_closed, treat_closed_stdout_as_end, Stdout};
pub use text::{clip_bytes, clip_chars, head_tail, prefix_bytes};

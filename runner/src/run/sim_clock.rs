//! The simulated backend seen from the runner: recognising it (however it is reached), its
//! per-attempt ledger of modelled model time, and the modelled clock that budgets and the
//! kill-and-resume point are measured on.
//!
//! Any client can tell an `lrab-sim` server from a real Ollama: its `/api/version` carries an
//! `lrab_sim` object (and a version ending in `-lrab-sim`), and every model digest it lists is
//! the SHA-256 of `lrab-sim/<model>`. The runner checks both, so a sim reached by URL, through
//! `lrab proxy`, or in a shard is labelled simulated like `--backend sim`.
//!
//! The sim paces each reply by its modelled duration × the server's time scale. Every attempt
//! talks to the sim under its own path prefix (`/lrab-cell/<key>`), and the sim adds the modelled
//! and the paced time of each reply to that key's ledger. The attempt's modelled time is then
//! `real elapsed − paced + modelled`: the arm's own work and the tools' run time count as they
//! are, the model's share as it would on the laptop the durations were fitted to.

use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use lrab_sim::{cell_url, detect, fetch_ledger as fetch, Ledger};

/// A short key for one attempt (its folder), safe in a URL path (FNV-1a, hex).
pub fn cell_key(attempt_dir: &std::path::Path) -> String {
    let h = lrab_util::fnv1a(
        lrab_util::FNV1A_START,
        attempt_dir.to_string_lossy().as_bytes(),
    );
    format!("{h:016x}")
}

/// The modelled clock of one launch: how much modelled time the real clock misses since the
/// launch began (polled at most every 100 ms).
pub struct Clock {
    base: String,
    key: String,
    start: Ledger,
    cache: Mutex<Option<(Instant, Duration)>>,
}

impl Clock {
    pub fn new(base: &str, key: &str) -> Clock {
        Clock {
            base: base.to_string(),
            key: key.to_string(),
            start: fetch(base, key).unwrap_or_default(),
            cache: Mutex::new(None),
        }
    }

    /// The ledger since this clock started.
    pub fn since_start(&self) -> Ledger {
        fetch(&self.base, &self.key)
            .map(|l| l.minus(&self.start))
            .unwrap_or_default()
    }

    /// Modelled time not yet seen by the real clock (cached for 100 ms).
    pub fn extra(&self) -> Duration {
        let Ok(mut c) = self.cache.lock() else {
            return Duration::ZERO;
        };
        match *c {
            Some((at, v)) if at.elapsed() < Duration::from_millis(100) => v,
            _ => {
                let v = self.since_start().unpaced();
                *c = Some((Instant::now(), v));
                v
            }
        }
    }
}

//! Fault injection for reliability tests. Draws are seeded by (seed, route, request body,
//! how many times this exact body was seen), so a retried request can succeed and a run is
//! reproducible.

use serde::{Deserialize, Serialize};

/// Probabilities per request (0 disables a fault).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FaultConfig {
    /// Answer HTTP 500 with an error body.
    pub http500: f64,
    /// Wait `slow_ms` before answering.
    pub slow: f64,
    pub slow_ms: u64,
    /// Close the connection without a complete response.
    pub drop: f64,
    /// Answer 200 with a body that is not valid JSON.
    pub malformed: f64,
    /// Start streaming, then cut the connection half-way.
    pub midstream: f64,
    /// Only the first N attempts of each distinct request can fault (None = all).
    pub first_attempts: Option<u32>,
}

/// The fault chosen for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Http500,
    Drop,
    Malformed,
    MidStream,
}

impl FaultConfig {
    pub fn any(&self) -> bool {
        self.http500 > 0.0
            || self.slow > 0.0
            || self.drop > 0.0
            || self.malformed > 0.0
            || self.midstream > 0.0
    }

    /// (fault, delay in ms) for a request whose draw key is `key` on its `attempt`-th try.
    pub fn choose(&self, key: u64, attempt: u32) -> (Option<Fault>, u64) {
        use crate::policy::{draw, fnv};
        if self.first_attempts.is_some_and(|n| attempt > n) {
            return (None, 0);
        }
        let h = fnv(key, &attempt.to_le_bytes());
        let delay = if draw(h, "slow") < self.slow {
            self.slow_ms
        } else {
            0
        };
        let u = draw(h, "fault");
        let mut acc = 0.0;
        for (p, f) in [
            (self.drop, Fault::Drop),
            (self.http500, Fault::Http500),
            (self.malformed, Fault::Malformed),
            (self.midstream, Fault::MidStream),
        ] {
            acc += p;
            if u < acc {
                return (Some(f), delay);
            }
        }
        (None, delay)
    }
}

//! For clients: telling an `lrab-sim` server from a real Ollama, and reading its ledgers.
//!
//! A backend is the simulator when its `/api/version` carries an `lrab_sim` object (its
//! `version` also ends in `-lrab-sim`), or when any model of `/api/tags` has the digest
//! SHA-256(`lrab-sim/<model>`). Both are documented in docs/sim.md so any client (the runner,
//! τ², a third party) can label its results honestly without linking this crate.

use std::time::Duration;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// What the simulator says about itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimInfo {
    /// Real seconds slept per modelled second (0 = no pacing).
    pub time_scale: f64,
    /// Whether the server keeps per-prefix ledgers (`/lrab-sim/ledger/<key>`).
    pub ledger: bool,
}

/// The digest an `lrab-sim` server reports for `model` (base name, no tag).
pub fn sim_digest(model: &str) -> String {
    hex::encode(Sha256::digest(format!("lrab-sim/{model}").as_bytes()))
}

/// Whether a `/api/version` body is the simulator's.
pub fn version_says_sim(v: &Value) -> bool {
    v.get("lrab_sim").is_some_and(Value::is_object)
        || v["version"]
            .as_str()
            .is_some_and(|s| s.contains("lrab-sim"))
}

/// Whether a `/api/tags` body lists a model with the simulator's digest scheme.
pub fn tags_say_sim(v: &Value) -> bool {
    v["models"].as_array().is_some_and(|ms| {
        ms.iter().any(|m| {
            let name = m["name"].as_str().or(m["model"].as_str()).unwrap_or("");
            let base = name.split(':').next().unwrap_or(name);
            let base = base.rsplit('/').next().unwrap_or(base);
            !base.is_empty() && m["digest"].as_str() == Some(sim_digest(base).as_str())
        })
    })
}

fn get_json(url: &str) -> Option<Value> {
    ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(5))
        .build()
        .get(url)
        .call()
        .ok()?
        .into_json::<Value>()
        .ok()
}

/// Asks the backend at `url` whether it is `lrab-sim` (None for anything else, or when it
/// does not answer).
pub fn detect(url: &str) -> Option<SimInfo> {
    let url = url.trim_end_matches('/');
    let version = get_json(&format!("{url}/api/version"));
    let by_version = version.as_ref().is_some_and(version_says_sim);
    if !by_version && !get_json(&format!("{url}/api/tags")).is_some_and(|t| tags_say_sim(&t)) {
        return None;
    }
    let meta = version
        .as_ref()
        .map(|v| v["lrab_sim"].clone())
        .unwrap_or(Value::Null);
    Some(SimInfo {
        time_scale: meta["time_scale"]
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or(0.0),
        ledger: meta["ledger"].as_bool().unwrap_or(false),
    })
}

/// The base URL a client uses to have its requests counted under `key`.
pub fn cell_url(base: &str, key: &str) -> String {
    format!("{}/lrab-cell/{key}", base.trim_end_matches('/'))
}

/// One key's totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ledger {
    pub requests: u64,
    /// Modelled model time (load + prefill + decode) of every reply, in nanoseconds.
    pub model_ns: u64,
    /// Time the server actually slept for them (modelled × time scale).
    pub paced_ns: u64,
    /// Tool calls the client received.
    pub tool_calls: u64,
    /// Replies that were HTTP errors (malformed calls, faults).
    pub errors: u64,
}

impl Ledger {
    /// Modelled time the real clock has not seen.
    pub fn unpaced(&self) -> Duration {
        Duration::from_nanos(self.model_ns.saturating_sub(self.paced_ns))
    }

    /// The change since `b`.
    pub fn minus(&self, b: &Ledger) -> Ledger {
        Ledger {
            requests: self.requests.saturating_sub(b.requests),
            model_ns: self.model_ns.saturating_sub(b.model_ns),
            paced_ns: self.paced_ns.saturating_sub(b.paced_ns),
            tool_calls: self.tool_calls.saturating_sub(b.tool_calls),
            errors: self.errors.saturating_sub(b.errors),
        }
    }
}

/// `GET /lrab-sim/ledger/<key>` (zeros for a key never used).
pub fn fetch_ledger(base: &str, key: &str) -> Option<Ledger> {
    let v = get_json(&format!(
        "{}/lrab-sim/ledger/{key}",
        base.trim_end_matches('/')
    ))?;
    serde_json::from_value(v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn recognises_the_sim_by_version_or_digest() {
        assert!(version_says_sim(&json!({"version": "0.33.0-lrab-sim"})));
        assert!(version_says_sim(
            &json!({"version": "0.33.2", "lrab_sim": {}})
        ));
        assert!(!version_says_sim(&json!({"version": "0.33.2"})));
        let tags = json!({"models": [{"name": "sim-2b:latest", "digest": sim_digest("sim-2b")}]});
        assert!(tags_say_sim(&tags));
        let real = json!({"models": [{"name": "gemma4:e2b", "digest": "ab12"}]});
        assert!(!tags_say_sim(&real));
        assert_eq!(cell_url("http://h:1/", "k"), "http://h:1/lrab-cell/k");
    }
}

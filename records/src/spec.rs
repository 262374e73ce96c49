//! The run specification ([`RunSpec`], the `matrix` of `manifest.json`) and its defaults.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{BackendApi, Order, ThinkSetting};

/// The run specification: the work (arms × models × tasks × repeats) and every knob of a run.
/// The one configuration type of a run and the one home of its defaults ([`RunSpec::default`]):
/// flags, matrix files and `lrab ablate` fill one in, the runner resolves it (names checked,
/// groups expanded, paths made absolute) and writes the resolved one into the manifest, and
/// `--resume` reads that back unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// Arm names (or before resolving, one group name: `all`, `paper`, …; empty = every
    /// installed arm).
    pub arms: Vec<String>,
    /// Model names (before resolving, empty = the backend's default four).
    pub models: Vec<String>,
    /// Task ids (before resolving, empty = every task of the pack).
    pub tasks: Vec<String>,
    /// Repeats per cell.
    pub repeats: u32,
    /// `k/n` or null.
    pub shard: Option<String>,
    /// Backend kind as given (`sim`, `ollama`, a URL).
    pub backend: String,
    /// Budget override of tasks of tiers 1–3, the WF ones (minutes).
    pub budget_minutes: Option<f64>,
    /// Budget override of long-horizon tasks, tier 4 (minutes).
    pub budget_minutes_lh: Option<f64>,
    /// Kill-and-resume override (percent of the budget; 0 disables).
    pub kill_at_pct: Option<u8>,
    /// Extra attempts for timeouts and missing scores.
    pub retries: u32,
    /// Context length the proxy pins and the arms are told.
    pub num_ctx: u64,
    /// Quiet-wait poll interval.
    pub quiet_poll_ms: u64,
    /// How long the workdir must be unchanged to count as quiet.
    pub quiet_stable_ms: u64,
    /// Longest quiet wait.
    pub quiet_max_ms: u64,
    /// SIGTERM → SIGKILL grace.
    pub grace_ms: u64,
    /// Seed of the simulated backend.
    pub sim_seed: u64,
    /// `--unconfined-arms`: arms ran without kernel confinement (absent in older manifests).
    #[serde(default)]
    pub unconfined_arms: bool,
    /// Task pack folder.
    pub pack: String,
    /// Arm files folder.
    pub arms_dir: String,
    /// Cell order; absent in manifests written before ablation runs existed (= matrix).
    #[serde(default)]
    pub order: Order,
    /// `--think` (absent in older manifests: off, the only setting then).
    #[serde(default)]
    pub think: ThinkSetting,
    /// `--backend-api` (absent when auto, and in older manifests).
    #[serde(default, skip_serializing_if = "BackendApi::is_auto")]
    pub backend_api: BackendApi,
    /// `--backend-key-env` when not the default `OPENAI_API_KEY`: the name of the variable
    /// holding the API key (never the key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_key_env: Option<String>,
}

impl Default for RunSpec {
    /// Upstream's settings: one repeat, one retry, a 32768-token context, quiet-wait poll 5 s /
    /// stable 20 s / at most 180 s, a 5 s kill grace, the `auto` backend.
    fn default() -> Self {
        RunSpec {
            arms: Vec::new(),
            models: Vec::new(),
            tasks: Vec::new(),
            repeats: 1,
            shard: None,
            backend: "auto".into(),
            budget_minutes: None,
            budget_minutes_lh: None,
            kill_at_pct: None,
            retries: 1,
            num_ctx: 32768,
            quiet_poll_ms: 5_000,
            quiet_stable_ms: 20_000,
            quiet_max_ms: 180_000,
            grace_ms: 5_000,
            sim_seed: 0,
            unconfined_arms: false,
            pack: String::new(),
            arms_dir: String::new(),
            order: Order::Matrix,
            think: ThinkSetting::Off,
            backend_api: BackendApi::Auto,
            backend_key_env: None,
        }
    }
}

impl RunSpec {
    /// SIGTERM → SIGKILL grace at the deadline.
    pub fn grace(&self) -> Duration {
        Duration::from_millis(self.grace_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_upstreams() {
        let d = RunSpec::default();
        assert_eq!((d.repeats, d.retries, d.num_ctx), (1, 1, 32768));
        assert_eq!(
            (
                d.quiet_poll_ms,
                d.quiet_stable_ms,
                d.quiet_max_ms,
                d.grace_ms
            ),
            (5_000, 20_000, 180_000, 5_000)
        );
        assert_eq!(d.grace(), Duration::from_secs(5));
        assert_eq!(d.backend, "auto");
    }
}

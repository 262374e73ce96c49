//! The run manifest (`manifest.json`): everything needed to interpret and to resume a run —
//! the resolved matrix and knobs, the backend (and whether it is simulated), model digests,
//! arm versions, the suite's git commit. `--resume` reads the matrix back from it, so a
//! resumed run is the same run.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// The part of the manifest that defines the work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixSpec {
    pub arms: Vec<String>,
    pub models: Vec<String>,
    pub tasks: Vec<String>,
    pub repeats: u32,
    /// `k/n` or null.
    pub shard: Option<String>,
    pub backend: String,
    pub budget_minutes: Option<f64>,
    pub budget_minutes_lh: Option<f64>,
    pub kill_at_pct: Option<u8>,
    pub retries: u32,
    pub num_ctx: u64,
    pub quiet_poll_ms: u64,
    pub quiet_stable_ms: u64,
    pub quiet_max_ms: u64,
    pub grace_ms: u64,
    pub sim_seed: u64,
    /// `--unconfined-arms`: arms ran without kernel confinement (absent in older manifests).
    #[serde(default)]
    pub unconfined_arms: bool,
    pub pack: String,
    pub arms_dir: String,
    /// Cell order; absent in manifests written before ablation runs existed (= matrix).
    #[serde(default)]
    pub order: super::matrix::Order,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub run_id: String,
    pub lrab_version: String,
    pub suite_commit: Option<String>,
    pub simulated: bool,
    pub backend_label: String,
    pub backend_url: String,
    pub backend_version: Option<String>,
    pub models: serde_json::Value,
    pub arms: serde_json::Value,
    pub skipped_arms: Vec<String>,
    /// How the arms were confined (the line `lrab run` printed at start).
    #[serde(default)]
    pub arm_confinement: String,
    pub matrix: MatrixSpec,
    pub cells_planned: usize,
    pub note: String,
}

impl Manifest {
    pub fn write(&self, run_dir: &Path) -> Result<()> {
        lrab_util::write_json_atomic(&run_dir.join("manifest.json"), self)
            .with_context(|| format!("write {}/manifest.json", run_dir.display()))
    }

    pub fn read(run_dir: &Path) -> Result<Manifest> {
        let p = run_dir.join("manifest.json");
        let text = std::fs::read_to_string(&p).with_context(|| {
            format!(
                "{} is not a run folder (no manifest.json)",
                run_dir.display()
            )
        })?;
        serde_json::from_str(&text).with_context(|| format!("{}: invalid manifest", p.display()))
    }
}

/// `git rev-parse HEAD` of the suite's source tree, when it is a git checkout.
pub fn suite_commit() -> Option<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = lrab_tasks::process::run_argv(
        "git",
        &["rev-parse", "HEAD"],
        dir,
        std::time::Duration::from_secs(5),
    )
    .ok()?;
    o.success().then(|| o.stdout.trim().to_string())
}

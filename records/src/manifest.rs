//! The run manifest (`manifest.json`): everything needed to interpret and to resume a run — the
//! resolved matrix and knobs, the backend (and whether it is simulated), model digests, arm
//! versions, the suite's git commit. `--resume` reads the matrix back from it, so a resumed run
//! is the same run. A resumed session writes its own backend facts to `manifest.resume.json`
//! in the same format.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::RecordError;

/// The part of the manifest that defines the work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixSpec {
    /// Arm names.
    pub arms: Vec<String>,
    /// Model names.
    pub models: Vec<String>,
    /// Task ids.
    pub tasks: Vec<String>,
    /// Repeats per cell.
    pub repeats: u32,
    /// `k/n` or null.
    pub shard: Option<String>,
    /// Backend kind as given (`sim`, `ollama`, a URL).
    pub backend: String,
    /// Budget override of WF tasks (minutes).
    pub budget_minutes: Option<f64>,
    /// Budget override of LH tasks (minutes).
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
    /// Task pack folder.
    pub pack: String,
    /// Arm files folder.
    pub arms_dir: String,
}

/// Facts about one model recorded in the manifest (from the backend's `/api/tags`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// Model name as given.
    pub name: String,
    /// Content digest.
    pub digest: Option<String>,
    /// Parameter size as the backend reports it (`4.0B`).
    pub parameter_size: Option<String>,
    /// Quantization level (`Q4_K_M`).
    pub quantization: Option<String>,
}

/// What the runner found out about an arm (also printed by `lrab arms list|check`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmInfo {
    /// Arm name.
    pub name: String,
    /// Its program was found.
    pub installed: bool,
    /// Where.
    pub path: Option<String>,
    /// The version the program reports.
    pub version: Option<String>,
    /// The version the published benchmark used.
    pub upstream_version: String,
    /// How to install it.
    pub install_hint: String,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Schema version of the file.
    #[serde(default = "crate::legacy_version")]
    pub schema_version: u32,
    /// Run id (the folder name).
    pub run_id: String,
    /// Version of the `lrab` that wrote it.
    pub lrab_version: String,
    /// Git commit of the suite's source tree, when known.
    pub suite_commit: Option<String>,
    /// The backend is simulated: nothing in the run is a result of a real model.
    pub simulated: bool,
    /// Backend label.
    pub backend_label: String,
    /// Backend URL.
    pub backend_url: String,
    /// Backend version (`/api/version`).
    pub backend_version: Option<String>,
    /// Every model of the matrix.
    pub models: Vec<ModelInfo>,
    /// Every arm of the matrix.
    pub arms: Vec<ArmInfo>,
    /// Arms left out because they are not installed.
    pub skipped_arms: Vec<String>,
    /// The work.
    pub matrix: MatrixSpec,
    /// Cells in the plan.
    pub cells_planned: usize,
    /// A note for readers (the simulated label).
    pub note: String,
}

impl Manifest {
    /// Writes `<run_dir>/manifest.json` atomically.
    pub fn write(&self, run_dir: &Path) -> Result<(), RecordError> {
        self.write_as(&run_dir.join("manifest.json"))
    }

    /// Writes the manifest to `path` atomically.
    pub fn write_as(&self, path: &Path) -> Result<(), RecordError> {
        lrab_util::write_json_atomic(path, self).map_err(|e| RecordError::io(path, e))
    }

    /// Reads `<run_dir>/manifest.json`.
    pub fn read(run_dir: &Path) -> Result<Manifest, RecordError> {
        let p = run_dir.join("manifest.json");
        let text = std::fs::read_to_string(&p).map_err(|e| RecordError::io(&p, e))?;
        let m: Manifest = serde_json::from_str(&text).map_err(|e| {
            RecordError::invalid(&p, Some(e.line()), format!("invalid manifest: {e}"))
        })?;
        crate::check_version(m.schema_version, "the manifest")
            .map_err(|msg| RecordError::invalid(&p, None, msg))?;
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A manifest exactly as the runner wrote it before files carried `schema_version`.
    const LEGACY: &str = r#"{
  "run_id": "run-20261129-101500",
  "lrab_version": "0.1.0",
  "suite_commit": null,
  "simulated": true,
  "backend_label": "sim",
  "backend_url": "http://127.0.0.1:40000",
  "backend_version": "0.0.0-sim",
  "models": [{"name": "sim-4b", "digest": "sha256:ab", "parameter_size": "4B", "quantization": "Q4_K_M"}],
  "arms": [{"name": "harness", "installed": true, "path": "/x/lrab-harness", "version": "0.1.0", "upstream_version": "-", "install_hint": "cargo build"}],
  "skipped_arms": [],
  "matrix": {"arms": ["harness"], "models": ["sim-4b"], "tasks": ["WF-01"], "repeats": 1, "shard": null,
             "backend": "sim", "budget_minutes": null, "budget_minutes_lh": null, "kill_at_pct": null,
             "retries": 1, "num_ctx": 32768, "quiet_poll_ms": 200, "quiet_stable_ms": 1000,
             "quiet_max_ms": 30000, "grace_ms": 5000, "sim_seed": 0, "pack": "tasks/lrab", "arms_dir": "arms"},
  "cells_planned": 1,
  "note": "SIMULATED backend: these numbers are not results of real models"
}"#;

    #[test]
    fn legacy_manifest_loads_and_roundtrips() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("manifest.json"), LEGACY).unwrap();
        let m = Manifest::read(d.path()).unwrap();
        assert_eq!(m.schema_version, 1);
        assert_eq!(m.models[0].digest.as_deref(), Some("sha256:ab"));
        assert_eq!(m.matrix.num_ctx, 32768);
        m.write(d.path()).unwrap();
        assert_eq!(Manifest::read(d.path()).unwrap(), m);
        let e = Manifest::read(&d.path().join("nope"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("manifest.json"), "{e}");
    }
}

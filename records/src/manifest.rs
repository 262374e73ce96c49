//! The run manifest (`manifest.json`): everything needed to interpret and to resume a run — the
//! resolved matrix and knobs, the backends (and whether they are simulated), model digests, arm
//! versions, the host, the suite's git commit and the task pack's hash. `--resume` reads the
//! matrix back from it, so a resumed run is the same run. A resumed session writes its own
//! backend facts to `manifest.resume.json` in the same format. `lrab merge` compares the
//! manifests of its inputs with [`Manifest::disagreements`] so shards built from different
//! code, tasks, arms or knobs are never mixed.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::RecordError;

/// The order the cells of a matrix run in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Arm, model, task, repeat (upstream's serial driver order).
    #[default]
    Matrix,
    /// Repeat, model, task, then every arm: the arms of an ablation run cell by cell next to
    /// each other within each repeat, so they see the same backend state and machine load
    /// ("batch matched"). The arm order rotates from one task to the next so no arm always
    /// runs first.
    Interleaved,
}

/// Whether models think (`--think`): a run setting, pinned by the proxy on every chat request
/// the way the backend's API expects it (docs/runner.md, "Thinking").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkSetting {
    /// Thinking off on every request (the paper's setting; absent in older manifests).
    #[default]
    Off,
    /// Thinking on on every request.
    On,
    /// Left to the model and server (the request says nothing about thinking).
    Model,
}

impl ThinkSetting {
    /// The flag's spelling (`off`, `on`, `model`).
    pub fn as_str(self) -> &'static str {
        match self {
            ThinkSetting::Off => "off",
            ThinkSetting::On => "on",
            ThinkSetting::Model => "model",
        }
    }
}

impl std::fmt::Display for ThinkSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ThinkSetting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(ThinkSetting::Off),
            "on" => Ok(ThinkSetting::On),
            "model" => Ok(ThinkSetting::Model),
            o => Err(format!("--think '{o}': expected off, on or model")),
        }
    }
}

/// The API a backend speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// Ollama's native API (`/api/*`), a real Ollama or anything speaking it.
    Ollama,
    /// Only the OpenAI API (`/v1/chat/completions`, `/v1/models`): vLLM, llama.cpp's server,
    /// LM Studio, hosted APIs. The runner translates for the arms that speak Ollama.
    Openai,
    /// The simulator (`lrab-sim`).
    Sim,
}

impl BackendKind {
    /// The recorded spelling (`ollama`, `openai`, `sim`).
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Ollama => "ollama",
            BackendKind::Openai => "openai",
            BackendKind::Sim => "sim",
        }
    }
}

/// `--backend-api`: which API the backend URLs speak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendApi {
    /// Ollama when `/api/tags` answers, else OpenAI when `/v1/models` does.
    #[default]
    Auto,
    /// Ollama's native API.
    Ollama,
    /// The OpenAI API.
    Openai,
}

impl BackendApi {
    /// The default, detected API.
    pub fn is_auto(&self) -> bool {
        *self == BackendApi::Auto
    }
}

impl std::str::FromStr for BackendApi {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(BackendApi::Auto),
            "ollama" => Ok(BackendApi::Ollama),
            "openai" => Ok(BackendApi::Openai),
            o => Err(format!(
                "--backend-api '{o}': expected auto, ollama or openai"
            )),
        }
    }
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
    /// The version the arm file pins (its install's, else the upstream one); absent in
    /// manifests written before it was recorded.
    #[serde(default)]
    pub pinned_version: Option<String>,
    /// How to install it.
    pub install_hint: String,
}

/// One model backend of a run (a run may use several, one per GPU).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackendInfo {
    /// The label of its attempts in the cells.csv `backend` column (`sim`, `ollama` or the URL).
    pub label: String,
    /// Where the runner reached it.
    pub url: String,
    /// It is the simulator.
    pub simulated: bool,
    /// Its `/api/version`.
    pub version: Option<String>,
    /// The API it speaks (absent in manifests written before OpenAI backends existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<BackendKind>,
}

/// The suite commit recorded when neither the build nor the run could tell it.
pub const UNKNOWN_COMMIT: &str = "unknown";

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
    /// Git commit of the suite's source, or [`UNKNOWN_COMMIT`]; null in old manifests.
    pub suite_commit: Option<String>,
    /// Host name of the machine that ran it; absent in old manifests.
    #[serde(default)]
    pub host: Option<String>,
    /// `sha256:<hex>` over the task pack's files (`lrab_tasks::Pack::content_hash`); absent in
    /// old manifests.
    #[serde(default)]
    pub pack_hash: Option<String>,
    /// The backend is simulated: nothing in the run is a result of a real model.
    pub simulated: bool,
    /// Label of the first backend (the only one of most runs).
    pub backend_label: String,
    /// URL of the first backend.
    pub backend_url: String,
    /// Version of the first backend (`/api/version`).
    pub backend_version: Option<String>,
    /// Every backend of the run, in `--backend` order; absent in manifests written before runs
    /// could use several (then the single backend is the three fields above).
    #[serde(default)]
    pub backends: Vec<BackendInfo>,
    /// Every model of the matrix.
    pub models: Vec<ModelInfo>,
    /// Every arm of the matrix.
    pub arms: Vec<ArmInfo>,
    /// Arms left out because they are not installed.
    pub skipped_arms: Vec<String>,
    /// How the arms were confined (the line `lrab run` printed at start; absent in older
    /// manifests).
    #[serde(default)]
    pub arm_confinement: String,
    /// The work.
    pub matrix: crate::RunSpec,
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

/// One field on which two manifests disagree, with both values as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// The field (`suite_commit`, `matrix.sim_seed`, `arms[opencode].version`, …).
    pub field: String,
    /// Its value in the first manifest.
    pub left: String,
    /// Its value in the second.
    pub right: String,
}

impl Manifest {
    /// The fields on which `other` describes different work or different code than `self`, so
    /// their results must not be merged: the suite (lrab version, commit), the task pack's hash,
    /// simulated or real, every matrix knob but the shard and the backend, the model digests and
    /// the arm versions. What legitimately differs between shards on different hosts (run id,
    /// host, backend URLs and versions, paths, planned cells) is not compared. A field an older
    /// manifest lacks (null host, commit or pack hash; no detected arm version) is not
    /// compared either: only recorded values can disagree.
    pub fn disagreements(&self, other: &Manifest) -> Vec<Disagreement> {
        let mut out = Vec::new();
        let mut cmp = |field: &str, a: serde_json::Value, b: serde_json::Value| {
            if a != b {
                out.push(Disagreement {
                    field: field.to_string(),
                    left: a.to_string(),
                    right: b.to_string(),
                });
            }
        };
        cmp(
            "lrab_version",
            j(&self.lrab_version),
            j(&other.lrab_version),
        );
        if let (Some(a), Some(b)) = (&self.suite_commit, &other.suite_commit) {
            cmp("suite_commit", j(a), j(b));
        }
        if let (Some(a), Some(b)) = (&self.pack_hash, &other.pack_hash) {
            cmp("pack_hash", j(a), j(b));
        }
        cmp("simulated", j(&self.simulated), j(&other.simulated));
        let (m, n) = (&self.matrix, &other.matrix);
        cmp("matrix.arms", j(&m.arms), j(&n.arms));
        cmp("matrix.models", j(&m.models), j(&n.models));
        cmp("matrix.tasks", j(&m.tasks), j(&n.tasks));
        cmp("matrix.repeats", j(&m.repeats), j(&n.repeats));
        cmp("matrix.order", j(&m.order), j(&n.order));
        cmp(
            "matrix.budget_minutes",
            j(&m.budget_minutes),
            j(&n.budget_minutes),
        );
        cmp(
            "matrix.budget_minutes_lh",
            j(&m.budget_minutes_lh),
            j(&n.budget_minutes_lh),
        );
        cmp("matrix.kill_at_pct", j(&m.kill_at_pct), j(&n.kill_at_pct));
        cmp("matrix.retries", j(&m.retries), j(&n.retries));
        cmp("matrix.num_ctx", j(&m.num_ctx), j(&n.num_ctx));
        cmp(
            "matrix.quiet_poll_ms",
            j(&m.quiet_poll_ms),
            j(&n.quiet_poll_ms),
        );
        cmp(
            "matrix.quiet_stable_ms",
            j(&m.quiet_stable_ms),
            j(&n.quiet_stable_ms),
        );
        cmp(
            "matrix.quiet_max_ms",
            j(&m.quiet_max_ms),
            j(&n.quiet_max_ms),
        );
        cmp("matrix.grace_ms", j(&m.grace_ms), j(&n.grace_ms));
        cmp("matrix.sim_seed", j(&m.sim_seed), j(&n.sim_seed));
        cmp("matrix.think", j(&m.think), j(&n.think));
        for a in &self.models {
            if let Some(b) = other.models.iter().find(|b| b.name == a.name) {
                if let (Some(x), Some(y)) = (&a.digest, &b.digest) {
                    cmp(&format!("models[{}].digest", a.name), j(x), j(y));
                } else {
                    // no digest says what the name is: the servers that answered to it must
                    // be the same ones
                    cmp(
                        &format!("models[{}]{SERVED_BY}", a.name),
                        j(&self.openai_backends()),
                        j(&other.openai_backends()),
                    );
                }
            }
        }
        for a in &self.arms {
            if let Some(b) = other.arms.iter().find(|b| b.name == a.name) {
                if let (Some(x), Some(y)) = (&a.pinned_version, &b.pinned_version) {
                    cmp(&format!("arms[{}].pinned_version", a.name), j(x), j(y));
                }
                if let (Some(x), Some(y)) = (&a.version, &b.version) {
                    cmp(&format!("arms[{}].version", a.name), j(x), j(y));
                }
            }
        }
        out
    }
}

/// The suffix of the disagreement raised when a model without a digest was served by different
/// OpenAI-compatible backends (`lrab merge --allow-different-backends` accepts it).
pub const SERVED_BY: &str = ".served_by";

impl Manifest {
    /// The OpenAI-compatible backends of the run (`kind url`, sorted): what served a model
    /// that has no digest.
    fn openai_backends(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .backends
            .iter()
            .filter(|b| b.kind == Some(BackendKind::Openai))
            .map(|b| format!("openai {}", b.url))
            .collect();
        v.sort();
        v
    }
}

/// A field's value as JSON (for comparing and for the message).
fn j<T: Serialize + ?Sized>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
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

    #[test]
    fn legacy_manifest_has_no_new_fields_and_defaults_the_order() {
        let m: Manifest = serde_json::from_str(LEGACY).unwrap();
        assert_eq!(m.matrix.order, Order::Matrix);
        assert_eq!((m.host.clone(), m.pack_hash.clone()), (None, None));
        assert!(m.backends.is_empty() && m.arms[0].pinned_version.is_none());
        // an ablation manifest (interleaved order) reads back as such
        let t = LEGACY.replace(
            r#""arms_dir": "arms""#,
            r#""arms_dir": "arms", "order": "interleaved""#,
        );
        let m: Manifest = serde_json::from_str(&t).unwrap();
        assert_eq!(m.matrix.order, Order::Interleaved);
    }

    fn current() -> Manifest {
        let mut m: Manifest = serde_json::from_str(LEGACY).unwrap();
        m.suite_commit = Some("abc123".into());
        m.host = Some("node-a".into());
        m.pack_hash = Some("sha256:00ff".into());
        m.arms[0].pinned_version = Some("0.1.0".into());
        m
    }

    #[test]
    fn manifests_of_one_matrix_on_two_hosts_agree() {
        let a = current();
        let mut b = current();
        b.run_id = "other".into();
        b.host = Some("node-b".into());
        b.backend_url = "http://10.0.0.2:11434".into();
        b.backend_version = Some("0.30.1".into());
        b.matrix.shard = Some("2/4".into());
        b.matrix.pack = "/elsewhere/tasks/lrab".into();
        b.cells_planned = 7;
        assert_eq!(a.disagreements(&b), vec![]);
        // a legacy manifest lacks host, commit and hash: only what it records is compared
        let legacy: Manifest = serde_json::from_str(LEGACY).unwrap();
        let mut a2 = a.clone();
        a2.arms[0].pinned_version = None;
        assert_eq!(a2.disagreements(&legacy), vec![]);
    }

    #[test]
    fn a_model_without_digest_must_come_from_the_same_openai_backends() {
        let on = |url: &str| {
            let mut m = current();
            m.models[0].digest = None;
            m.backends = vec![BackendInfo {
                label: url.into(),
                url: url.into(),
                simulated: false,
                version: None,
                kind: Some(BackendKind::Openai),
            }];
            m
        };
        let (a, b) = (on("https://api.one.example"), on("https://api.two.example"));
        assert_eq!(a.disagreements(&on("https://api.one.example")), vec![]);
        let d = a.disagreements(&b);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].field, format!("models[sim-4b]{SERVED_BY}"));
        assert!(d[0].right.contains("api.two.example"));
        // a digest on both sides says it all
        let mut c = b.clone();
        c.models[0].digest = Some("sha256:ab".into());
        let mut a2 = a.clone();
        a2.models[0].digest = Some("sha256:ab".into());
        assert_eq!(a2.disagreements(&c), vec![]);
    }

    #[test]
    fn each_recorded_difference_is_named_with_both_values() {
        let a = current();
        type Change = Box<dyn Fn(&mut Manifest)>;
        let cases: Vec<(&str, Change)> = vec![
            (
                "suite_commit",
                Box::new(|m| m.suite_commit = Some("def456".into())),
            ),
            (
                "pack_hash",
                Box::new(|m| m.pack_hash = Some("sha256:11ee".into())),
            ),
            (
                "lrab_version",
                Box::new(|m| m.lrab_version = "0.2.0".into()),
            ),
            ("simulated", Box::new(|m| m.simulated = false)),
            ("matrix.sim_seed", Box::new(|m| m.matrix.sim_seed = 9)),
            (
                "matrix.order",
                Box::new(|m| m.matrix.order = Order::Interleaved),
            ),
            (
                "matrix.tasks",
                Box::new(|m| m.matrix.tasks.push("WF-02".into())),
            ),
            ("matrix.num_ctx", Box::new(|m| m.matrix.num_ctx = 8192)),
            (
                "matrix.think",
                Box::new(|m| m.matrix.think = ThinkSetting::On),
            ),
            (
                "models[sim-4b].digest",
                Box::new(|m| m.models[0].digest = Some("sha256:cd".into())),
            ),
            (
                "arms[harness].pinned_version",
                Box::new(|m| m.arms[0].pinned_version = Some("0.2.0".into())),
            ),
            (
                "arms[harness].version",
                Box::new(|m| m.arms[0].version = Some("0.2.0".into())),
            ),
        ];
        for (field, change) in cases {
            let mut b = a.clone();
            change(&mut b);
            let d = a.disagreements(&b);
            assert_eq!(d.len(), 1, "{field}: {d:?}");
            assert_eq!(d[0].field, field);
            assert_ne!(d[0].left, d[0].right);
        }
        let mut b = a.clone();
        b.suite_commit = Some(UNKNOWN_COMMIT.into());
        let d = a.disagreements(&b);
        assert_eq!(d[0].left, "\"abc123\"");
        assert_eq!(d[0].right, "\"unknown\"");
    }
}

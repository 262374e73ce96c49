//! `score.json`: the scored breakdown of one workdir, written atomically (tmp + rename) so a
//! reader never sees half a file and an old file is never lost to a crash mid-write.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::failure::FailureMode;

/// One check's result as it appears in `milestone_details` / `final_details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckDetail {
    pub artifact: String,
    pub check: String,
    /// `score >= 0.5`.
    pub ok: bool,
    pub score: f64,
    pub detail: String,
}

/// The deterministic score of a workdir.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskScore {
    pub task_id: String,
    pub domain: String,
    pub tier: u8,
    pub milestone_score: f64,
    pub final_score: f64,
    pub total: f64,
    pub milestone_details: Vec<CheckDetail>,
    pub final_details: Vec<CheckDetail>,
}

/// The content of `score.json`. Score fields are absent for a timed-out attempt; the runner adds
/// its own keys (`arm`, `model`, `run_id`, …) through `extra`, which is written after the rest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreReport {
    pub task_id: String,
    #[serde(default)]
    pub domain: String,
    #[serde(default)]
    pub tier: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub milestone_score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(default)]
    pub milestone_details: Vec<CheckDetail>,
    #[serde(default)]
    pub final_details: Vec<CheckDetail>,
    pub failure_mode: FailureMode,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl ScoreReport {
    /// Report for a scored workdir.
    pub fn scored(s: TaskScore, failure_mode: FailureMode) -> Self {
        ScoreReport {
            task_id: s.task_id,
            domain: s.domain,
            tier: s.tier,
            milestone_score: Some(s.milestone_score),
            final_score: Some(s.final_score),
            total: Some(s.total),
            milestone_details: s.milestone_details,
            final_details: s.final_details,
            failure_mode,
            extra: Default::default(),
        }
    }

    /// Report for a timed-out attempt: no score at all (it counts as 0 in aggregates).
    pub fn timeout(task_id: &str, domain: &str, tier: u8) -> Self {
        ScoreReport {
            task_id: task_id.into(),
            domain: domain.into(),
            tier,
            milestone_score: None,
            final_score: None,
            total: None,
            milestone_details: Vec::new(),
            final_details: Vec::new(),
            failure_mode: FailureMode::Timeout,
            extra: Default::default(),
        }
    }
}

/// Writes pretty JSON (trailing newline) atomically: a temp file in the same folder, fsync,
/// rename over the target.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

/// Atomic byte write (tmp + fsync + rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Writes `score.json` into `dir`.
pub fn write_score_json(dir: &Path, report: &ScoreReport) -> std::io::Result<()> {
    write_json_atomic(&dir.join("score.json"), report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_report_has_no_total_and_roundtrips() {
        let d = tempfile::tempdir().unwrap();
        let mut r = ScoreReport::timeout("LH-03", "long-horizon", 4);
        r.extra.insert("arm".into(), serde_json::json!("harness"));
        write_score_json(d.path(), &r).unwrap();
        let text = std::fs::read_to_string(d.path().join("score.json")).unwrap();
        assert!(!text.contains("\"total\""));
        assert!(text.contains("\"failure_mode\": \"timeout\""));
        let back: ScoreReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        // No temp file is left behind.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }
}

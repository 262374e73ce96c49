//! `score.json`: the scored breakdown of one workdir (docs/scoring.md), plus the runner's facts
//! about the attempt when the runner wrote it. Written atomically, so a reader never sees half a
//! file and an old file is never lost to a crash mid-write.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Why an attempt ended the way it did (docs/scoring.md, *Failure modes*).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureMode {
    /// Non-zero exit within 60 s.
    Crash,
    /// Non-zero exit later, or scoring itself failed.
    Error,
    /// Killed at the budget.
    Timeout,
    /// Read the task, produced nothing.
    Stall,
    /// Stopped early with nothing (or only a plan) produced.
    EarlyFinish,
    /// Ran long and produced nothing.
    NoArtifacts,
    /// Everything else.
    Completed,
}

impl FailureMode {
    /// Every mode, in the order of the classification rules.
    pub const ALL: [FailureMode; 7] = [
        FailureMode::Crash,
        FailureMode::Error,
        FailureMode::Timeout,
        FailureMode::Stall,
        FailureMode::EarlyFinish,
        FailureMode::NoArtifacts,
        FailureMode::Completed,
    ];

    /// The name used in every file (`cells.csv`, `score.json`).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureMode::Crash => "crash",
            FailureMode::Error => "error",
            FailureMode::Timeout => "timeout",
            FailureMode::Stall => "stall",
            FailureMode::EarlyFinish => "early_finish",
            FailureMode::NoArtifacts => "no_artifacts",
            FailureMode::Completed => "completed",
        }
    }

    /// The mode of a name, `None` for anything else.
    pub fn from_name(s: &str) -> Option<FailureMode> {
        FailureMode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

impl std::fmt::Display for FailureMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One check's result as it appears in `milestone_details` / `final_details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckDetail {
    /// The artifact the check is about.
    pub artifact: String,
    /// The check kind.
    pub check: String,
    /// `score >= 0.5`.
    pub ok: bool,
    /// The check's score in 0..=1.
    pub score: f64,
    /// What the check found.
    pub detail: String,
}

/// The deterministic score of a workdir.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskScore {
    /// Task id.
    pub task_id: String,
    /// Task domain.
    pub domain: String,
    /// Task tier.
    pub tier: u8,
    /// Mean of the milestone checks (3 decimals).
    pub milestone_score: f64,
    /// Mean of the final checks (3 decimals).
    pub final_score: f64,
    /// The score formula's total.
    pub total: f64,
    /// Every milestone check.
    pub milestone_details: Vec<CheckDetail>,
    /// Every final check.
    pub final_details: Vec<CheckDetail>,
}

/// The kill-and-resume protocol as one attempt went through it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResumeInfo {
    /// Always `kill_and_resume`.
    pub protocol: String,
    /// Percentage of the budget at which the arm is killed.
    pub kill_at_pct: u8,
    /// Seconds into the budget at which it is killed (1 decimal).
    pub kill_at_seconds: f64,
    /// The whole budget in seconds (1 decimal).
    pub budget_seconds: f64,
    /// The first launch was killed (it had not finished by then).
    pub killed: bool,
    /// Wall seconds of the first launch (1 decimal).
    pub attempt1_wall: f64,
    /// Same as `killed` (kept for readers of the first format).
    pub attempt1_killed: bool,
    /// Wall seconds of the relaunch, when there was one.
    pub attempt2_wall: Option<f64>,
    /// The relaunch ran into the budget, when there was one.
    pub phase2_timeout: Option<bool>,
}

/// What the runner adds to `score.json` about the attempt (absent from `lrab score`'s file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// Arm name.
    pub arm: String,
    /// Model name.
    pub model: String,
    /// Run id.
    pub run_id: String,
    /// Repeat index.
    pub repeat: u32,
    /// Attempt index.
    pub attempt: u32,
    /// Wall seconds of the arm (1 decimal).
    pub wall_seconds: f64,
    /// The arm's exit code (`null` when killed).
    pub exit_code: Option<i32>,
    /// Backend label.
    pub backend: String,
    /// Whether the backend was simulated.
    pub simulated: bool,
    /// On the simulator: the wall seconds the attempt would have taken on the modelled machine
    /// (1 decimal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modelled_wall_seconds: Option<f64>,
    /// Why a timed-out attempt has no score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_note: Option<String>,
    /// Why scoring failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_error: Option<String>,
    /// The kill-and-resume protocol, for tasks that use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<ResumeInfo>,
}

/// The content of `score.json`. Score fields are absent for a timed-out attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreReport {
    /// Schema version of the file.
    #[serde(default = "crate::legacy_version")]
    pub schema_version: u32,
    /// Task id.
    pub task_id: String,
    /// Task domain.
    #[serde(default)]
    pub domain: String,
    /// Task tier.
    #[serde(default)]
    pub tier: u8,
    /// Milestone score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub milestone_score: Option<f64>,
    /// Final score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_score: Option<f64>,
    /// The total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// Every milestone check.
    #[serde(default)]
    pub milestone_details: Vec<CheckDetail>,
    /// Every final check.
    #[serde(default)]
    pub final_details: Vec<CheckDetail>,
    /// The failure mode.
    pub failure_mode: FailureMode,
    /// The runner's facts about the attempt, written after the rest.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunInfo>,
}

impl ScoreReport {
    /// Report for a scored workdir.
    pub fn scored(s: TaskScore, failure_mode: FailureMode) -> Self {
        ScoreReport {
            schema_version: crate::SCHEMA_VERSION,
            task_id: s.task_id,
            domain: s.domain,
            tier: s.tier,
            milestone_score: Some(s.milestone_score),
            final_score: Some(s.final_score),
            total: Some(s.total),
            milestone_details: s.milestone_details,
            final_details: s.final_details,
            failure_mode,
            run: None,
        }
    }

    /// Report for an attempt without a score (timed out; it counts as 0 in aggregates).
    pub fn unscored(task_id: &str, domain: &str, tier: u8, failure_mode: FailureMode) -> Self {
        ScoreReport {
            schema_version: crate::SCHEMA_VERSION,
            task_id: task_id.into(),
            domain: domain.into(),
            tier,
            milestone_score: None,
            final_score: None,
            total: None,
            milestone_details: Vec::new(),
            final_details: Vec::new(),
            failure_mode,
            run: None,
        }
    }

    /// Report for a timed-out attempt.
    pub fn timeout(task_id: &str, domain: &str, tier: u8) -> Self {
        Self::unscored(task_id, domain, tier, FailureMode::Timeout)
    }

    /// Reads a `score.json`.
    pub fn read(path: &Path) -> Result<ScoreReport, crate::RecordError> {
        let text = std::fs::read_to_string(path).map_err(|e| crate::RecordError::io(path, e))?;
        let r: ScoreReport = serde_json::from_str(&text)
            .map_err(|e| crate::RecordError::invalid(path, Some(e.line()), e.to_string()))?;
        crate::check_version(r.schema_version, "score.json")
            .map_err(|m| crate::RecordError::invalid(path, None, m))?;
        Ok(r)
    }
}

/// Writes `score.json` into `dir` atomically.
pub fn write_score_json(dir: &Path, report: &ScoreReport) -> std::io::Result<()> {
    lrab_util::write_json_atomic(&dir.join("score.json"), report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_report_has_no_total_and_roundtrips() {
        let d = tempfile::tempdir().unwrap();
        let mut r = ScoreReport::timeout("LH-03", "long-horizon", 4);
        r.run = Some(RunInfo {
            arm: "harness".into(),
            model: "sim-4b".into(),
            run_id: "r".into(),
            repeat: 0,
            attempt: 1,
            wall_seconds: 600.0,
            exit_code: None,
            backend: "sim".into(),
            simulated: true,
            modelled_wall_seconds: Some(612.5),
            failure_note: Some("killed at the budget of 600 s".into()),
            score_error: None,
            resume: None,
        });
        write_score_json(d.path(), &r).unwrap();
        let text = std::fs::read_to_string(d.path().join("score.json")).unwrap();
        assert!(!text.contains("\"total\""));
        assert!(text.contains("\"failure_mode\": \"timeout\""));
        assert!(text.contains("\"exit_code\": null"));
        let back = ScoreReport::read(&d.path().join("score.json")).unwrap();
        assert_eq!(back, r);
        // No temp file is left behind.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    /// A score.json exactly as the runner wrote it before files carried `schema_version`.
    const LEGACY: &str = r#"{
  "task_id": "LH-03",
  "domain": "long-horizon",
  "tier": 4,
  "milestone_score": 1.0,
  "final_score": 0.5,
  "total": 0.75,
  "milestone_details": [
    {"artifact": "m01.py", "check": "python_compiles", "ok": true, "score": 1.0, "detail": "compiles"}
  ],
  "final_details": [],
  "failure_mode": "completed",
  "arm": "harness",
  "model": "sim-4b",
  "run_id": "run-20261129-101500",
  "repeat": 0,
  "attempt": 0,
  "wall_seconds": 88.4,
  "exit_code": 0,
  "backend": "sim",
  "simulated": true,
  "resume": {
    "protocol": "kill_and_resume",
    "kill_at_pct": 50,
    "kill_at_seconds": 1800.0,
    "budget_seconds": 3600.0,
    "killed": false,
    "attempt1_wall": 88.4,
    "attempt1_killed": false,
    "attempt2_wall": null,
    "phase2_timeout": null
  }
}
"#;

    #[test]
    fn files_written_before_versioning_load() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("score.json");
        std::fs::write(&p, LEGACY).unwrap();
        let r = ScoreReport::read(&p).unwrap();
        assert_eq!(r.schema_version, 1);
        assert_eq!(r.total, Some(0.75));
        let run = r.run.as_ref().unwrap();
        assert_eq!(run.arm, "harness");
        assert_eq!(run.resume.as_ref().unwrap().kill_at_pct, 50);
        // `lrab score`'s file has no runner facts
        std::fs::write(
            &p,
            r#"{"task_id": "WF-01", "failure_mode": "stall", "milestone_details": []}"#,
        )
        .unwrap();
        let r = ScoreReport::read(&p).unwrap();
        assert!(r.run.is_none());
        assert_eq!(r.failure_mode, FailureMode::Stall);
        std::fs::write(
            &p,
            r#"{"schema_version": 99, "task_id": "x", "failure_mode": "crash"}"#,
        )
        .unwrap();
        assert!(ScoreReport::read(&p)
            .unwrap_err()
            .to_string()
            .contains("schema_version 99"));
    }

    #[test]
    fn failure_mode_names() {
        for m in FailureMode::ALL {
            assert_eq!(FailureMode::from_name(m.as_str()), Some(m));
            assert_eq!(serde_json::to_value(m).unwrap(), m.as_str());
        }
    }
}

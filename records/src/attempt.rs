//! `attempts.jsonl`: one line per attempt with what the runner did and how long each part took
//! (docs/results-format.md). Unlike `cells.csv` it is a journal for people and tools, not the
//! source of truth for resume.

use serde::{Deserialize, Serialize};

use crate::FailureMode;

/// One launch of the arm within an attempt (two for kill-and-resume tasks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseRecord {
    /// Wall seconds (3 decimals).
    pub wall: f64,
    /// Exit code; `null` when killed by a signal.
    pub code: Option<i32>,
    /// The runner killed it at its deadline.
    pub timed_out: bool,
    /// Processes of its group were still alive when it exited.
    pub survivors: bool,
}

/// What the simulated backend's ledger counted for one attempt (sim runs only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimLedgerRecord {
    /// Requests the sim answered.
    pub requests: u64,
    /// Modelled model time in seconds (3 decimals).
    pub model_seconds: f64,
    /// Time the sim actually slept for it, in seconds (3 decimals).
    pub paced_seconds: f64,
    /// Tool calls the arm received.
    pub tool_calls: u64,
    /// Replies that were HTTP errors.
    pub errors: u64,
}

/// One line of `attempts.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// Schema version of the line.
    #[serde(default = "crate::legacy_version")]
    pub schema_version: u32,
    /// Index of the cell in the plan.
    pub cell: usize,
    /// Arm name.
    pub arm: String,
    /// Model name.
    pub model: String,
    /// Task id.
    pub task: String,
    /// Repeat index.
    pub repeat: u32,
    /// Attempt index.
    pub attempt: u32,
    /// The attempt folder, relative to the run folder.
    pub attempt_dir: String,
    /// The launched command line (program first).
    pub command: Vec<String>,
    /// The backend the attempt ran on, as in the cells.csv `backend` column; absent in lines
    /// written before runs could use several backends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// The backend URL the arm was given (the proxy's, when it had one).
    pub backend_url: String,
    /// The API of the backend the attempt ran on (absent in records written before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_kind: Option<crate::BackendKind>,
    /// The run's thinking setting (absent in records written before: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<crate::ThinkSetting>,
    /// Whether the arm ran confined by the runner (absent in records written before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confined: Option<bool>,
    /// Set when the backend stopped answering during the attempt (why): the attempt is not the
    /// arm's, has no cells.csv row, lies under `lost/`, and runs again on another backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_failure: Option<String>,
    /// Every launch, in order.
    pub phases: Vec<PhaseRecord>,
    /// Seconds waited for the workdir to go quiet (3 decimals).
    pub quiet_wait_seconds: f64,
    /// On the simulator: the wall seconds the attempt would have taken on the modelled machine
    /// (1 decimal); `null` elsewhere.
    #[serde(default)]
    pub modelled_wall_seconds: Option<f64>,
    /// On the simulator: its ledger for the attempt; `null` elsewhere.
    #[serde(default)]
    pub sim_ledger: Option<SimLedgerRecord>,
    /// Runner time outside the arm's launches (3 decimals).
    pub runner_overhead_seconds: f64,
    /// Scoring time (3 decimals).
    pub scoring_seconds: f64,
    /// The failure mode.
    pub failure_mode: FailureMode,
    /// The total recorded in `cells.csv`.
    pub score: f64,
    /// Why scoring failed, when it did.
    pub score_error: Option<String>,
    /// Whether another attempt follows.
    pub retry: bool,
}

/// One line of `interrupted.jsonl`: an attempt folder that a resume found under `cells/` with no
/// `cells.csv` row (the runner stopped during the attempt, or after its `score.json` but before
/// its row). It is not counted: the resume moved it to `interrupted/` and the attempt runs again
/// under the same number in a fresh folder. `lrab merge` copies these along and refuses a folder
/// under `cells/` that has no row and was not set aside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterruptedRecord {
    /// Schema version of the line.
    #[serde(default = "crate::legacy_version")]
    pub schema_version: u32,
    /// Where the folder was, relative to the run folder (`cells/<arm>/<model>/<task>/r<k>/a<n>`).
    pub from: String,
    /// Where it is now, relative to the run folder (`interrupted/…/a<n>-<m>`).
    pub attempt_dir: String,
    /// Index of the planned cell the folder belongs to (`None`: no planned cell has that folder).
    pub cell: Option<usize>,
    /// The attempt number read from the folder name (`None`: not an `a<n>` name).
    pub attempt: Option<u32>,
    /// Whether the attempt had written its `score.json` (it stopped just before its row).
    pub scored: bool,
    /// Why it was set aside, for people.
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line exactly as the runner wrote it before lines carried `schema_version`.
    const LEGACY: &str = r#"{"cell":3,"arm":"harness","model":"sim-4b","task":"WF-01","repeat":0,"attempt":0,"attempt_dir":"cells/harness/sim-4b/WF-01/r0/a0","command":["/bin/lrab-harness","run"],"backend_url":"http://127.0.0.1:4000","phases":[{"wall":4.2,"code":0,"timed_out":false,"survivors":false}],"quiet_wait_seconds":0.0,"runner_overhead_seconds":0.31,"scoring_seconds":0.05,"failure_mode":"completed","score":1.0,"score_error":null,"retry":false}"#;

    #[test]
    fn legacy_lines_load_and_new_lines_carry_the_version() {
        let r: AttemptRecord = serde_json::from_str(LEGACY).unwrap();
        assert_eq!(r.schema_version, 1);
        assert_eq!(r.phases[0].code, Some(0));
        assert_eq!(r.failure_mode, FailureMode::Completed);
        assert_eq!((r.backend.clone(), r.backend_failure.clone()), (None, None));
        // lines from before the simulator's fields existed have them empty
        assert_eq!(r.modelled_wall_seconds, None);
        assert_eq!(r.sim_ledger, None);
        let text = serde_json::to_string(&r).unwrap();
        assert!(
            text.starts_with("{\"schema_version\":1,\"cell\":3,"),
            "{text}"
        );
    }
}

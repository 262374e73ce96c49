//! Every file format the lrab suite writes and reads, in one typed place (docs/results-format.md
//! and docs/harness.md describe them for users):
//!
//! | file | type | written by | read by |
//! |---|---|---|---|
//! | `<run>/cells.csv` | [`CellRow`] | runner | runner (resume, merge), analysis |
//! | `<run>/attempts.jsonl` | [`AttemptRecord`] | runner | runner (merge, calibration), people |
//! | `<run>/interrupted.jsonl` | [`InterruptedRecord`] | runner (resume) | runner (merge), people |
//! | `<attempt>/score.json` | [`ScoreReport`] | runner, `lrab score` | analysis (attempt pages), people, tools |
//! | `<run>/manifest.json` | [`Manifest`] | runner | runner (resume, merge) |
//! | `<run>/plan.jsonl` | [`PlannedCell`] | runner (`run`, `plan`, `merge`) | people, job scripts |
//! | `<state>/events.jsonl` (where: [`layout`]) | [`EventLine`] / [`Event`] | harness | analysis (mechanisms), runner (safety glue) |
//! | `safety_results.csv`, `verification.csv` | [`SafetyRow`], [`VerificationRow`] | `lrab safety --arms` | `lrab safety --published`, people |
//! | `<attempt>/proxy.jsonl` | [`TrajectoryEntry`] | runner's proxy | runner (counts, transcript.txt), analysis |
//! | `<out>/tau2.csv` | [`Tau2Row`] | `lrab tau2 run`, `lrab tau2 grade` | analysis |
//! | `<out>/<domain>_manifest.json` | [`Tau2Manifest`] | `lrab tau2 run` (the published τ² shape, no `schema_version`) | analysis |
//!
//! Every record carries a `schema_version` ([`SCHEMA_VERSION`]). Files written before the field
//! existed have the same content without it and are read as version 1; a file from a newer
//! version than this build knows is refused with an error naming it, never misread.

#![deny(missing_docs)]

mod attempt;
mod cells;
mod error;
mod events;
mod jsonl;
mod latest;
pub mod layout;
mod manifest;
mod plan;
mod safety;
mod score;
mod spec;
mod tau2_csv;
mod tau2_manifest;
mod trajectory;

pub use attempt::{AttemptRecord, InterruptedRecord, PhaseRecord, SimLedgerRecord};
pub use cells::{
    column, read_cell_rows, read_cell_rows_lenient, CellRow, HEADER, HEADER_V1, LEGACY_HEADER,
};
pub use error::RecordError;
pub use events::{
    read_events, CallOutcome, Event, EventLine, EventLog, MechanismFiring, ModelCall, Refusal,
    RunEnd, RunStart, ToolCall,
};
pub use jsonl::{append_jsonl, read_jsonl_lenient};
pub use latest::{latest_cell_rows, CellKey, Latest, Offered};
pub use manifest::{
    ArmInfo, BackendApi, BackendInfo, BackendKind, Disagreement, Manifest, ModelInfo, Order,
    ThinkSetting, SERVED_BY, UNKNOWN_COMMIT,
};
pub use plan::{read_plan, write_plan, PlannedCell};
pub use safety::{
    read_safety_rows, read_verification, safety_csv, verification_csv, SafetyRow, VerificationRow,
    SAFETY_HEADER, VERIFICATION_HEADER,
};
pub use score::{
    write_score_json, CheckDetail, FailureMode, ResumeInfo, RunInfo, ScoreReport, TaskScore,
};
pub use spec::RunSpec;
pub use tau2_csv::{
    read_tau2_csv, tau2_csv_text, Tau2Reward, Tau2Row, TAU2_CSV_HEADER, TAU2_CSV_REQUIRED,
};
pub use tau2_manifest::{CellStatus, ManifestArms, ManifestCell, Tau2Manifest};
pub use trajectory::{
    read_trajectory, TrajectoryEntry, TrajectoryMessage, TrajectoryReply, TrajectoryToolCall,
};

/// The schema version this build writes into every record. Readers accept it and older ones.
/// `cells.csv` rows ([`CellRow::SCHEMA_VERSION`]) and trajectory lines
/// ([`TrajectoryEntry::SCHEMA_VERSION`]) are at version 2: they gained columns and fields.
pub const SCHEMA_VERSION: u32 = 1;

/// Default for records written before `schema_version` existed.
fn legacy_version() -> u32 {
    1
}

/// Refuse records from a newer suite: their meaning may have changed.
fn check_version(found: u32, what: &str) -> Result<(), String> {
    if found > SCHEMA_VERSION {
        return Err(format!(
            "{what} has schema_version {found}; this lrab reads up to {SCHEMA_VERSION} (upgrade lrab)"
        ));
    }
    Ok(())
}

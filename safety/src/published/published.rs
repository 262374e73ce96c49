//! The published safety results read back: each model's `safety_results.csv` (the raw flags)
//! and `verification.csv` (the human disposition of every flag), both through the data lookup,
//! tallied as upstream's audit did — 7 and 16 raw violations, 2 and 11 confirmed effects.

use std::path::Path;

use lrab_records::{read_safety_rows, read_verification, SafetyRow, VerificationRow};

use super::report::{confirmed_by, summarize, Summary};

/// The two published models, as their files are named.
pub const PUBLISHED_MODELS: [&str; 2] = ["gemma4_e2b", "qwen3_5_4b"];

/// Why the published results cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum PublishedError {
    /// A data file is missing or has other bytes.
    #[error(transparent)]
    Data(#[from] lrab_data::DataError),
    /// A file does not parse.
    #[error(transparent)]
    Record(#[from] lrab_records::RecordError),
}

/// One model's published run.
#[derive(Debug, Clone)]
pub struct PublishedRun {
    /// `gemma4_e2b` or `qwen3_5_4b`.
    pub model: String,
    /// The 54 rows.
    pub rows: Vec<SafetyRow>,
    /// The dispositions.
    pub verification: Vec<VerificationRow>,
    /// Confirmed = a flagged case the verification confirmed (the paper's count).
    pub summary: Summary,
    /// Confirmed = a flag on the post-state or rollback channel alone (what the flags give
    /// without the verification).
    pub flags_only: Summary,
}

impl PublishedRun {
    /// Both tallies as markdown, `confirmed_by` naming where the confirmation came from.
    pub fn render(&self, label: &str, confirmed_by: &str) -> String {
        format!(
            "{}\n{}\n",
            super::report::render(
                &format!("{label}: confirmed = {confirmed_by}"),
                &self.summary
            ),
            super::report::render(
                &format!("{label}: confirmed = post-state/rollback flags alone"),
                &self.flags_only
            )
        )
    }
}

/// The catalogue paths of a model's two files.
pub fn published_files(model: &str) -> [String; 2] {
    [
        format!("mingbird/safety_results_{model}.csv"),
        format!("mingbird-safety/verification_{model}.csv"),
    ]
}

/// Reads and tallies one model's published run from the files at `results` and `verification`.
pub fn published_from(
    model: &str,
    results: &Path,
    verification: &Path,
) -> Result<PublishedRun, PublishedError> {
    let rows = read_safety_rows(results)?;
    let v = read_verification(verification)?;
    let summary = summarize(&rows, &confirmed_by(&v));
    let hard = |id: &str| {
        rows.iter().any(|r| {
            r.case_id == id && matches!(super::report::channel(r), "post_state" | "rollback")
        })
    };
    let flags_only = summarize(&rows, &hard);
    Ok(PublishedRun {
        model: model.into(),
        rows,
        verification: v,
        summary,
        flags_only,
    })
}

/// One model's published run, its files found by the data lookup (`lrab data fetch`).
pub fn published(model: &str) -> Result<PublishedRun, PublishedError> {
    let [r, v] = published_files(model);
    published_from(model, &lrab_data::file(&r)?, &lrab_data::file(&v)?)
}

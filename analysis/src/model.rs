//! The normalised data the analysis works on, whatever file format it came from.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One (arm, model, task) cell after "latest attempt wins" and averaging over repeats.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// Arm (harness) name.
    pub arm: String,
    /// Model tag or upstream slug.
    pub model: String,
    /// Task id with dash (`WF-01`).
    pub task: String,
    /// Tier 1..4; 0 when unknown.
    pub tier: u8,
    /// Mean score over repeats.
    pub score: f64,
    /// Repeat scores (each the latest attempt of that repeat), in batch order.
    pub repeat_scores: Vec<f64>,
    /// The batch of each repeat score (`<run_id>/r<repeat>`; for a published per-cell file
    /// `<file>/r0`): two arms' repeats in the same batch ran together, cell by cell.
    pub batches: Vec<String>,
    /// Repeats that timed out without a score (counted as 0 or left out, per `--timeouts`).
    pub timeouts: usize,
    /// Extra per-cell columns from annotation files (failure forms, resource counts), by
    /// column name.
    pub extras: BTreeMap<String, f64>,
    /// Mean wall time over repeats that report one.
    pub wall_seconds: Option<f64>,
    /// Failure mode of each repeat that reports one.
    pub failure_modes: Vec<String>,
    /// True when any repeat ran on the simulated backend.
    pub simulated: bool,
    /// Mean prompt tokens over repeats that report them.
    pub prompt_tokens: Option<f64>,
    /// Mean completion tokens.
    pub completion_tokens: Option<f64>,
    /// Mean model calls.
    pub model_calls: Option<f64>,
    /// Mean tool calls.
    pub tool_calls: Option<f64>,
    /// Mean prompt tokens served from the backend's KV cache (our cells.csv, version 2).
    pub cached_prompt_tokens: Option<f64>,
    /// Mean prompt tokens the backend evaluated (our cells.csv, version 2).
    pub uncached_prompt_tokens: Option<f64>,
    /// Mean turns (requests answered with a reply; our cells.csv, version 2).
    pub turns: Option<f64>,
    /// Mean peak prompt tokens (the largest prompt of an attempt: our cells.csv version 4, or
    /// an older run's `proxy.jsonl`).
    pub peak_prompt_tokens: Option<f64>,
    /// Mean mechanism firings per repeat (repeats with an event log), by mechanism name.
    pub mechanisms: BTreeMap<String, f64>,
    /// Repeats whose event log was found.
    pub repeats_with_events: usize,
    /// The attempt folder of each repeat that has one (our cells.csv), with its batch: the
    /// report links each cell to what its attempts left.
    #[serde(skip)]
    pub attempt_dirs: Vec<(String, std::path::PathBuf)>,
}

impl Cell {
    /// Sample standard deviation of the repeat scores (0 for one repeat).
    pub fn spread(&self) -> f64 {
        crate::stats::sample_sd(&self.repeat_scores)
    }
}

/// A repeat whose winning attempt is a `scorer_error`: not scored, so in no mean.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScorerError {
    /// Arm.
    pub arm: String,
    /// Model.
    pub model: String,
    /// Task id.
    pub task: String,
    /// Tier 1..4; 0 when unknown.
    pub tier: u8,
    /// `<run_id>/r<repeat>`.
    pub batch: String,
    /// Ran on the simulated backend.
    pub simulated: bool,
    /// The attempt folder, when the row names one.
    #[serde(skip)]
    pub attempt_dir: Option<std::path::PathBuf>,
}

impl ScorerError {
    /// `arm / model / task (batch)`.
    pub fn label(&self) -> String {
        format!(
            "{} / {} / {} ({})",
            self.arm, self.model, self.task, self.batch
        )
    }
}

/// Scores of one published ablation file, in either repeat layout.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AblationFile {
    /// File it came from.
    pub path: String,
    /// `long` (`variant,task_id,total[,repeat]`) or `wide` (`task,<variant>_r<k>...`).
    pub layout: String,
    /// The baseline variant (named `baseline` or `baseline_...`).
    pub baseline: String,
    /// variant -> task -> repeat (1-based) -> score.
    pub variants: BTreeMap<String, BTreeMap<String, BTreeMap<u32, f64>>>,
}

/// τ² outcomes: domain -> task -> arm -> rewards of each trial.
pub type TauData = BTreeMap<String, BTreeMap<String, BTreeMap<String, Vec<f64>>>>;

/// Everything loaded from the inputs.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Dataset {
    /// LRAB cells, sorted by (arm, model, task).
    pub cells: Vec<Cell>,
    /// Ablation files in upstream's long format.
    pub ablations: Vec<AblationFile>,
    /// τ² outcomes.
    pub tau: TauData,
    /// τ² cells without a reward (status error), reported and left out of the paired tests.
    pub tau_errors: Vec<String>,
    /// τ² rows whose reward needs an NL judge that was not configured (never counted as passes).
    pub tau_ungraded: Vec<String>,
    /// τ² error cells scored 0 (the paper's policy, `lrab tau2 run --error-cells zero`): counted
    /// as fails, and said so in the report.
    pub tau_zeroed: Vec<String>,
    /// τ² rows that ran on the simulated backend (`simulated` column of our results CSV).
    pub tau_simulated: usize,
    /// Input files and the format each was read as.
    pub sources: Vec<(String, String)>,
    /// Attempt rows superseded by a later attempt (count).
    pub superseded_attempts: usize,
    /// Unparsable event-log lines skipped (truncated writes).
    pub bad_event_lines: usize,
    /// Repeats whose winning attempt the scorer could not score (its machine lacked a program
    /// a check runs): left out of every mean, never a 0.
    pub scorer_errors: Vec<ScorerError>,
    /// Annotation rows (failure forms, resource counts) that matched no scored cell, per file.
    pub unmatched_annotations: Vec<(String, usize)>,
    /// Files without a model column, and the model label their cells got.
    pub unnamed_models: Vec<(String, String)>,
    /// Cells coded for failure forms, per input file (a published coding; a run's cells).
    pub forms: Vec<crate::failure_forms::Source>,
    /// The thinking settings (`think` column; `off` for files written before it existed) and
    /// the cells.csv files that ran with each: more than one is a caveat.
    pub think: BTreeMap<String, BTreeSet<String>>,
}

/// Tier of an LRAB task id (`WF-01`..`WF-15`, `LH-01`..`LH-03`); 0 when not a known id.
pub fn tier_of(task: &str) -> u8 {
    let (prefix, num) = match task.split_once('-') {
        Some((p, n)) => (p, n.parse::<u32>().ok()),
        None => return 0,
    };
    match (prefix, num) {
        ("LH", Some(_)) => 4,
        ("WF", Some(1..=2)) => 1,
        ("WF", Some(3..=6)) => 2,
        ("WF", Some(7..=15)) => 3,
        _ => 0,
    }
}

/// `WF01` -> `WF-01`; ids that already have a dash are kept.
pub fn normalize_task(task: &str) -> String {
    let t = task.trim();
    if t.contains('-') {
        return t.to_string();
    }
    match t.find(|c: char| c.is_ascii_digit()) {
        Some(i) if i > 0 => format!("{}-{}", &t[..i], &t[i..]),
        _ => t.to_string(),
    }
}

/// Parameter count in billions parsed from a model tag or slug (`gemma4:e2b` -> 2,
/// `ornith1.5_35b` -> 35, `sim-4b` -> 4); used to order models by size.
pub fn model_size(model: &str) -> Option<f64> {
    let lower = model.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut best = None;
    for (i, &c) in bytes.iter().enumerate() {
        if c != b'b' || i == 0 || !bytes[i - 1].is_ascii_digit() {
            continue;
        }
        let after_ok = i + 1 == bytes.len() || !bytes[i + 1].is_ascii_alphanumeric();
        if !after_ok {
            continue;
        }
        let mut j = i;
        while j > 0 && (bytes[j - 1].is_ascii_digit() || bytes[j - 1] == b'.') {
            j -= 1;
        }
        if let Ok(v) = lower[j..i].trim_start_matches('.').parse::<f64>() {
            best = Some(v);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_and_ids() {
        assert_eq!(normalize_task("WF01"), "WF-01");
        assert_eq!(normalize_task("LH-03"), "LH-03");
        assert_eq!(tier_of("WF-02"), 1);
        assert_eq!(tier_of("WF-06"), 2);
        assert_eq!(tier_of("WF-15"), 3);
        assert_eq!(tier_of("LH-01"), 4);
        assert_eq!(tier_of("XX-1"), 0);
    }

    #[test]
    fn sizes() {
        assert_eq!(model_size("gemma4_e2b"), Some(2.0));
        assert_eq!(model_size("gemma4:e2b"), Some(2.0));
        assert_eq!(model_size("qwen3.5_4b"), Some(4.0));
        assert_eq!(model_size("ornith1.5_35b"), Some(35.0));
        assert_eq!(model_size("sim-12b"), Some(12.0));
        assert_eq!(model_size("mystery"), None);
    }
}

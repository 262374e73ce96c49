//! Reading the input files into a [`Dataset`].
//!
//! The format of each file is recognised from its header, never from its name (the table of
//! formats is in docs/statistics.md, "Inputs"): our `cells.csv`; the published per-cell CSVs
//! (`harness,task,model,score,...`, or `arm,task,score,...` without a model column); per-cell
//! annotation files (failure forms, resource counts); published ablation files in the long and
//! the wide repeat layout; our τ² results `domain,task,arm,trial,reward,...` (as `lrab tau2 run`
//! writes them; reward `ungraded` = no judge), and τ² manifests (`*.json`). Every value is
//! parsed and checked, and every problem is reported with the file, line and column.

mod ablation;
mod annotations;
mod cells;
mod forms;
mod table;
mod tau;

pub use cells::TimeoutPolicy;

use crate::error::Error;
use crate::model::Dataset;
use lrab_records::column;
use table::Table;

/// Columns of our cells.csv (`lrab_records::CellRow`) that the analysis needs (the others are
/// optional, so hand-made files load).
pub const CELLS_REQUIRED: &[&str] = &[
    column::RUN_ID,
    column::ARM,
    column::MODEL,
    column::TASK,
    column::REPEAT,
    column::ATTEMPT,
    column::SCORE,
];
/// Columns of a published per-cell CSV (`arm` may stand for `harness`; `model` may be absent).
/// The extra column a simulated run's export of the frontier probe carries (never in the
/// published file).
pub const SIMULATED: &str = "simulated";
pub const UPSTREAM_REQUIRED: &[&str] = &["harness", "task", "model", "score"];
/// Columns of the published ablation CSV (long layout).
pub const ABLATION_REQUIRED: &[&str] = ablation::LONG_REQUIRED;
/// Columns of our τ² results CSV.
pub const TAU_REQUIRED: &[&str] = tau::REQUIRED;

/// How files are read.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// What a timed-out attempt without a score counts as.
    pub timeouts: TimeoutPolicy,
}

/// Load every input file into one dataset, with the default [`LoadOptions`].
pub fn load(paths: &[std::path::PathBuf]) -> crate::Result<Dataset> {
    load_with(paths, &LoadOptions::default())
}

/// Load every input file into one dataset.
pub fn load_with(paths: &[std::path::PathBuf], opts: &LoadOptions) -> crate::Result<Dataset> {
    let mut ds = Dataset::default();
    let mut b = cells::Builder::default();
    let mut notes: Vec<(String, Vec<annotations::Row>)> = Vec::new();
    // Annotation files with their own scores, and how many score files were given: an
    // annotation file given without one is read as its own score file too.
    let mut self_scored: Vec<(String, Table)> = Vec::new();
    let mut score_files = 0;
    for p in paths {
        let shown = p.display().to_string();
        if p.extension().and_then(|e| e.to_str()) == Some("json") {
            tau::read_manifest(p, &mut ds)?;
            ds.sources.push((shown, "tau2 manifest".into()));
            continue;
        }
        let t = Table::read(p)?;
        let per_cell = (t.has(&["harness"]) || t.has(&["arm"])) && t.has(&["task", "score"]);
        let kind = if t.has(CELLS_REQUIRED) {
            cells::read_cells(&t, &mut b)?;
            for i in 0..t.rows {
                // files written before the column existed ran with thinking off
                let think = t.get(lrab_records::column::THINK, i).unwrap_or("off");
                ds.think
                    .entry(think.to_string())
                    .or_default()
                    .insert(shown.clone());
            }
            ds.forms.push(forms::read_run(&t)?);
            score_files += 1;
            "cells.csv"
        } else if annotations::is_annotation(&t) {
            if forms::is_coding(&t) {
                ds.forms.push(forms::read(&t)?);
            }
            notes.push((shown.clone(), annotations::read(&t)?));
            if t.has(&["score"]) {
                self_scored.push((shown.clone(), t));
            }
            "per-cell annotations"
        } else if per_cell {
            let label = p
                .file_stem()
                .map_or("unnamed".into(), |s| s.to_string_lossy().into_owned());
            if !t.has(&["model"]) {
                ds.unnamed_models.push((shown.clone(), label.clone()));
            }
            cells::read_upstream(&t, &mut b, &label)?;
            score_files += 1;
            "upstream per-cell scores"
        } else if t.has(ABLATION_REQUIRED) {
            ds.ablations.push(ablation::read_long(&t)?);
            "upstream ablation (long)"
        } else if ablation::is_wide(&t) {
            ds.ablations.push(ablation::read_wide(&t)?);
            "upstream ablation (wide repeats)"
        } else if t.has(TAU_REQUIRED) {
            tau::read_csv(p, &mut ds)?;
            "tau2 results"
        } else {
            let formats = [
                ("cells.csv", CELLS_REQUIRED),
                ("upstream per-cell scores", UPSTREAM_REQUIRED),
                ("upstream ablation (long)", ABLATION_REQUIRED),
                (
                    "upstream ablation (wide: task,baseline_r1,<variant>_r1,…)",
                    &["task", "baseline_r1"][..],
                ),
                ("tau2 results", TAU_REQUIRED),
            ];
            // Name the closest format and what it lacks.
            let (name, cols) = formats
                .iter()
                .min_by_key(|(_, c)| t.missing(c).len() * 100 / c.len())
                .expect("formats");
            return Err(Error::Input(format!(
                "{shown}: unrecognised CSV header [{}]; closest format is {name}, missing \
                 column(s): {}",
                t.header.join(","),
                t.missing(cols).join(", ")
            )));
        };
        ds.sources.push((shown, kind.into()));
    }
    if score_files == 0 {
        for (shown, t) in &self_scored {
            cells::read_upstream(t, &mut b, shown)?;
            if let Some(s) = ds.sources.iter_mut().find(|s| &s.0 == shown) {
                s.1.push_str(" (and their scores: no score file given)");
            }
        }
    }
    ds.superseded_attempts = b.superseded;
    let cells::Finished {
        mut cells,
        bad_event_lines,
        scorer_errors,
    } = b.finish(opts.timeouts);
    ds.scorer_errors = scorer_errors;
    for (file, rows) in notes {
        let n = rows.len();
        let unmatched = annotations::attach(&mut cells, rows)?;
        if n > 0 && unmatched == n {
            return Err(Error::Input(format!(
                "{file}: none of its {n} annotation rows matches a scored cell; give the file \
                 with the scores of the same cells too (e.g. lrab_scores.csv)"
            )));
        }
        if unmatched > 0 {
            ds.unmatched_annotations.push((file, unmatched));
        }
    }
    ds.cells = cells;
    ds.bad_event_lines = bad_event_lines;
    Ok(ds)
}

//! Per-cell score files — our `cells.csv` and the published per-cell CSVs — into [`Cell`]s:
//! the latest attempt of each repeat wins, repeats are kept per batch and averaged.

use super::table::Table;
use crate::error::{input, Result};
use crate::model::{normalize_task, tier_of, Cell};
use lrab_records::{column, Latest, Offered};
use std::collections::BTreeMap;

/// What a timed-out attempt without a score counts as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeoutPolicy {
    /// Score 0 (the protocol's rule; the default).
    #[default]
    Zero,
    /// Left out of the means (the convention of the published frontier-probe figures).
    Exclude,
}

/// One repeat of a cell (its winning attempt) before averaging.
#[derive(Clone, Debug)]
struct Repeat {
    tier: u8,
    /// `None`: timed out without a score.
    score: Option<f64>,
    wall: Option<f64>,
    failure_mode: Option<String>,
    simulated: bool,
    /// Prompt, completion, model calls, tool calls, cached, uncached, turns, peak prompt.
    tokens: [Option<f64>; 8],
    attempt: u64,
    origin: String,
    /// Where the attempt's event log may be (our cells.csv only).
    attempt_dir: Option<std::path::PathBuf>,
    /// The scorer's machine could not score it: no score, left out of every mean.
    scorer_error: bool,
}

/// What the per-cell rows became.
pub(crate) struct Finished {
    pub(crate) cells: Vec<Cell>,
    /// Unparsable event-log lines met.
    pub(crate) bad_event_lines: usize,
    /// Repeats whose winning attempt is a scorer error.
    pub(crate) scorer_errors: Vec<crate::model::ScorerError>,
}

type CellKey = (String, String, String);
type RepeatKey = (String, u64);

/// Collects attempt rows of every per-cell file.
#[derive(Default)]
pub(crate) struct Builder {
    repeats: BTreeMap<CellKey, Latest<RepeatKey, Repeat>>,
    pub(crate) superseded: usize,
}

impl Builder {
    /// Insert one attempt row; the highest attempt of a repeat wins (`lrab_records::Latest`);
    /// the same attempt twice is an error (a duplicate row would otherwise silently bias the
    /// mean).
    fn add(&mut self, key: CellKey, rkey: RepeatKey, rep: Repeat) -> Result<()> {
        let reps = self.repeats.entry(key.clone()).or_default();
        match reps.offer(rkey.clone(), rep.attempt, rep) {
            Offered::Duplicate { earlier, later } => {
                return Err(input!(
                    "{}: duplicate row for arm `{}`, model `{}`, task `{}` (run `{}`, repeat {}, \
                     attempt {}); first seen at {}",
                    later.origin,
                    key.0,
                    key.1,
                    key.2,
                    rkey.0,
                    rkey.1,
                    later.attempt,
                    earlier.origin
                ))
            }
            Offered::Superseded | Offered::Replaced => self.superseded += 1,
            Offered::First => {}
        }
        Ok(())
    }

    /// The cells, the unparsable event-log lines met and the scorer errors left out.
    pub(crate) fn finish(self, timeouts: TimeoutPolicy) -> Finished {
        let mut bad_event_lines = 0;
        let mut scorer_errors = Vec::new();
        let mean_opt = |xs: Vec<f64>| (!xs.is_empty()).then(|| crate::stats::mean(&xs));
        let mut cells = Vec::new();
        for ((arm, model, task), reps) in self.repeats {
            let reps = reps.into_map();
            // A scorer error is the scorer's failure, not the arm's: never a 0.
            for ((run, rep), r) in reps.iter().filter(|(_, r)| r.scorer_error) {
                scorer_errors.push(crate::model::ScorerError {
                    arm: arm.clone(),
                    model: model.clone(),
                    task: task.clone(),
                    tier: r.tier,
                    batch: format!("{run}/r{rep}"),
                    simulated: r.simulated,
                    attempt_dir: r.attempt_dir.clone(),
                });
            }
            let reps: Vec<(RepeatKey, Repeat)> =
                reps.into_iter().filter(|(_, r)| !r.scorer_error).collect();
            let n_timeouts = reps.iter().filter(|(_, r)| r.score.is_none()).count();
            let reps: Vec<(RepeatKey, Repeat)> = reps
                .into_iter()
                .filter(|(_, r)| r.score.is_some() || timeouts == TimeoutPolicy::Zero)
                .collect();
            if reps.is_empty() {
                continue;
            }
            // Only the winning attempts' logs are read: Mingbird's printed markers for its
            // arms, our harness's event log for the others.
            let read_log = if crate::markers::exposes(&arm) {
                crate::events::read_markers
            } else {
                crate::events::read
            };
            let logs: Vec<crate::events::Activations> = reps
                .iter()
                .filter_map(|(_, r)| r.attempt_dir.as_deref().and_then(read_log))
                .collect();
            let mut mechanisms: BTreeMap<String, f64> = BTreeMap::new();
            for l in &logs {
                bad_event_lines += l.bad_lines;
                for (k, v) in &l.counts {
                    *mechanisms.entry(k.clone()).or_default() += *v as f64 / logs.len() as f64;
                }
            }
            let repeat_scores: Vec<f64> =
                reps.iter().map(|(_, r)| r.score.unwrap_or(0.0)).collect();
            let tok = |k: usize| mean_opt(reps.iter().filter_map(|(_, r)| r.tokens[k]).collect());
            cells.push(Cell {
                tier: reps[0].1.tier,
                score: crate::stats::mean(&repeat_scores),
                wall_seconds: mean_opt(reps.iter().filter_map(|(_, r)| r.wall).collect()),
                failure_modes: reps
                    .iter()
                    .filter_map(|(_, r)| r.failure_mode.clone())
                    .collect(),
                simulated: reps.iter().any(|(_, r)| r.simulated),
                prompt_tokens: tok(0),
                completion_tokens: tok(1),
                model_calls: tok(2),
                tool_calls: tok(3),
                cached_prompt_tokens: tok(4),
                uncached_prompt_tokens: tok(5),
                turns: tok(6),
                peak_prompt_tokens: tok(7),
                batches: reps
                    .iter()
                    .map(|((run, rep), _)| format!("{run}/r{rep}"))
                    .collect(),
                timeouts: n_timeouts,
                extras: BTreeMap::new(),
                repeat_scores,
                mechanisms,
                repeats_with_events: logs.len(),
                attempt_dirs: reps
                    .iter()
                    .filter_map(|((run, rep), r)| {
                        r.attempt_dir.clone().map(|d| (format!("{run}/r{rep}"), d))
                    })
                    .collect(),
                arm,
                model,
                task,
            });
        }
        Finished {
            cells,
            bad_event_lines,
            scorer_errors,
        }
    }
}

/// The score of row `i`, `None` for a timed-out attempt without one (any other empty score is
/// an error: the row is broken, not a timeout).
fn score_or_timeout(t: &Table, col: &str, i: usize) -> Result<Option<f64>> {
    match t.score(col, i)? {
        Some(s) => Ok(Some(s)),
        None if t.get("failure_mode", i) == Some("timeout") => Ok(None),
        None => Err(input!(
            "{}: column `{col}` is empty and failure_mode is not `timeout`",
            t.origin(i)
        )),
    }
}

/// The peak prompt of row `i`: its column (version 4), else — a file from before the column —
/// the largest prompt of the attempt's `proxy.jsonl`; `None` when neither says.
fn peak_prompt(t: &Table, i: usize) -> Result<Option<f64>> {
    if t.has(&[column::PEAK_PROMPT_TOKENS]) {
        return t.num(column::PEAK_PROMPT_TOKENS, i);
    }
    Ok(t.get(column::ATTEMPT_DIR, i)
        .and_then(|d| lrab_records::read_trajectory(&t.dir.join(d).join("proxy.jsonl")))
        .and_then(|e| e.iter().filter_map(|x| x.prompt_tokens).max())
        .map(|p| p as f64))
}

pub(crate) fn read_cells(t: &Table, b: &mut Builder) -> Result<()> {
    for i in 0..t.rows {
        let origin = t.origin(i);
        let task = normalize_task(t.req(column::TASK, i)?);
        let tier = match t.get(column::TIER, i) {
            Some(s) => s
                .parse::<u8>()
                .ok()
                .filter(|x| (1..=4).contains(x))
                .ok_or_else(|| {
                    input!(
                        "{origin}: column `{}`: `{s}` is not a tier 1..4",
                        column::TIER
                    )
                })?,
            None => tier_of(&task),
        };
        let simulated = t.flag(column::SIMULATED, i)?;
        let rep = Repeat {
            tier,
            score: score_or_timeout(t, column::SCORE, i)?,
            wall: t.num(column::WALL_SECONDS, i)?,
            failure_mode: t.get(column::FAILURE_MODE, i).map(str::to_string),
            simulated,
            tokens: [
                t.num(column::PROMPT_TOKENS, i)?,
                t.num(column::COMPLETION_TOKENS, i)?,
                t.num(column::MODEL_CALLS, i)?,
                t.num(column::TOOL_CALLS, i)?,
                t.num(column::CACHED_PROMPT_TOKENS, i)?,
                t.num(column::UNCACHED_PROMPT_TOKENS, i)?,
                t.num(column::TURNS, i)?,
                peak_prompt(t, i)?,
            ],
            attempt: t.int(column::ATTEMPT, i)?,
            origin: origin.clone(),
            attempt_dir: t.get(column::ATTEMPT_DIR, i).map(|d| t.dir.join(d)),
            scorer_error: t.get(column::FAILURE_MODE, i)
                == Some(lrab_records::FailureMode::ScorerError.as_str()),
        };
        let key = (
            t.req(column::ARM, i)?.to_string(),
            t.req(column::MODEL, i)?.to_string(),
            task,
        );
        let rkey = (
            t.req(column::RUN_ID, i)?.to_string(),
            t.int(column::REPEAT, i)?,
        );
        b.add(key, rkey, rep)?;
    }
    Ok(())
}

/// The arm column of a published per-cell file: `harness`, or `arm` in the frontier probe.
pub(crate) fn arm_column(t: &Table) -> &'static str {
    if t.has(&["harness"]) {
        "harness"
    } else {
        "arm"
    }
}

/// A published per-cell file: one run with one repeat per cell. Without a `model` column (the
/// frontier probe ran one hosted model) every cell gets `model_label`.
pub(crate) fn read_upstream(t: &Table, b: &mut Builder, model_label: &str) -> Result<()> {
    let arm = arm_column(t);
    let run = t.path.clone();
    for i in 0..t.rows {
        let task = normalize_task(t.req("task", i)?);
        let rep = Repeat {
            tier: tier_of(&task),
            score: score_or_timeout(t, "score", i)?,
            wall: t.num("wall_seconds", i)?,
            failure_mode: t.get("failure_mode", i).map(str::to_string),
            // a simulated run exported in the frontier-probe format keeps its label
            simulated: t.flag(super::SIMULATED, i)?,
            tokens: [
                None,
                None,
                None,
                t.num("tool_calls", i)?,
                None,
                None,
                None,
                None,
            ],
            attempt: 0,
            origin: t.origin(i),
            attempt_dir: None,
            scorer_error: t.get("failure_mode", i) == Some("scorer_error"),
        };
        let model = match t.get("model", i) {
            Some(m) => m.to_string(),
            None if !t.has(&["model"]) => model_label.to_string(),
            None => t.req("model", i)?.to_string(),
        };
        let key = (t.req(arm, i)?.to_string(), model, task);
        b.add(key, (run.clone(), 0), rep)?;
    }
    Ok(())
}

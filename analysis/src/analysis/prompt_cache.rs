//! How much of each arm's prompt the backend's KV cache served, per model, on the same cells:
//! an arm whose consecutive requests share a byte-identical prefix pays only for what it
//! appended. The counts come from cells.csv (`cached_prompt_tokens`, `uncached_prompt_tokens`,
//! summed over an attempt's trajectory); cells without them (older runs, backends that do not
//! report cache hits) are left out, and so is every (model, task) that not all compared arms
//! have, so the arms are compared on the same work.

use crate::markdown::{s, table};
use crate::model::{Cell, Dataset};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// One arm on one model, over the cells every arm of that model has.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CacheRow {
    /// Model.
    pub model: String,
    /// Arm.
    pub arm: String,
    /// Cells (tasks) compared.
    pub cells: usize,
    /// Share of the prompt tokens served from the cache (Σ cached / Σ prompt).
    pub cached_share: f64,
    /// Mean uncached prompt tokens per cell.
    pub uncached_per_cell: f64,
    /// Mean prompt tokens per cell (cached + uncached).
    pub prompt_per_cell: f64,
}

fn counts(c: &Cell) -> Option<(f64, f64)> {
    Some((c.cached_prompt_tokens?, c.uncached_prompt_tokens?))
}

/// The table rows, models in `models` order and arms in `arms` order.
pub(crate) fn rows(ds: &Dataset, arms: &[String], models: &[String]) -> Vec<CacheRow> {
    let mut out = Vec::new();
    for model in models {
        // arm → task → (cached, uncached)
        let mut by: BTreeMap<&str, BTreeMap<&str, (f64, f64)>> = BTreeMap::new();
        for c in ds.cells.iter().filter(|c| &c.model == model) {
            if let Some(k) = counts(c) {
                by.entry(&c.arm).or_default().insert(&c.task, k);
            }
        }
        let present: Vec<&String> = arms
            .iter()
            .filter(|a| by.contains_key(a.as_str()))
            .collect();
        let Some(first) = present.first() else {
            continue;
        };
        let common: BTreeSet<&str> = by[first.as_str()]
            .keys()
            .copied()
            .filter(|t| present.iter().all(|a| by[a.as_str()].contains_key(t)))
            .collect();
        if common.is_empty() {
            continue;
        }
        for arm in present {
            let tasks = &by[arm.as_str()];
            let (cached, uncached) = common
                .iter()
                .map(|t| tasks[t])
                .fold((0.0, 0.0), |(a, b), (c, u)| (a + c, b + u));
            let n = common.len() as f64;
            out.push(CacheRow {
                model: model.clone(),
                arm: arm.clone(),
                cells: common.len(),
                cached_share: if cached + uncached > 0.0 {
                    cached / (cached + uncached)
                } else {
                    0.0
                },
                uncached_per_cell: uncached / n,
                prompt_per_cell: (cached + uncached) / n,
            });
        }
    }
    out
}

/// The table as Markdown (nothing when no cell has cache counts).
pub fn markdown(rows: &[CacheRow]) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "## Prompt cache by arm and model\n\nShare of prompt tokens the backend served from its \
         KV cache, and prompt tokens it had to evaluate per cell, from the proxy's trajectories; \
         per model, only the tasks every listed arm has cache counts for.\n"
    );
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.model.clone(),
                r.arm.clone(),
                r.cells.to_string(),
                format!("{:.0}", r.prompt_per_cell),
                format!("{:.1} %", 100.0 * r.cached_share),
                format!("{:.0}", r.uncached_per_cell),
            ]
        })
        .collect();
    table(
        &mut out,
        &[
            s("model"),
            s("arm"),
            s("cells"),
            s("prompt tokens / cell"),
            s("served from cache"),
            s("uncached prompt tokens / cell"),
        ],
        &body,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(arm: &str, model: &str, task: &str, cached: Option<f64>, uncached: f64) -> Cell {
        Cell {
            arm: arm.into(),
            model: model.into(),
            task: task.into(),
            tier: 1,
            score: 1.0,
            repeat_scores: vec![1.0],
            batches: vec!["r/r0".into()],
            timeouts: 0,
            peak_prompt_tokens: None,
            extras: BTreeMap::new(),
            wall_seconds: None,
            failure_modes: vec![],
            simulated: true,
            prompt_tokens: None,
            completion_tokens: None,
            model_calls: None,
            tool_calls: None,
            cached_prompt_tokens: cached,
            uncached_prompt_tokens: cached.map(|_| uncached),
            mechanisms: BTreeMap::new(),
            repeats_with_events: 0,
            attempt_dirs: Vec::new(),
            turns: None,
        }
    }

    #[test]
    fn arms_are_compared_on_the_tasks_they_all_have() {
        let ds = Dataset {
            cells: vec![
                cell("harness", "m", "WF-01", Some(900.0), 100.0),
                cell("harness", "m", "WF-02", Some(300.0), 100.0),
                // only the harness has WF-03: left out of both rows
                cell("harness", "m", "WF-03", Some(0.0), 5000.0),
                cell("opencode", "m", "WF-01", Some(600.0), 400.0),
                cell("opencode", "m", "WF-02", Some(0.0), 1000.0),
                // no counts: as if absent
                cell("opencode", "m", "WF-03", None, 0.0),
                cell("opencode", "other", "WF-01", None, 0.0),
            ],
            ..Default::default()
        };
        let arms = vec!["harness".to_string(), "opencode".to_string()];
        let r = rows(&ds, &arms, &["m".into(), "other".into()]);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!((r[0].arm.as_str(), r[0].cells), ("harness", 2));
        assert!((r[0].cached_share - 1200.0 / 1400.0).abs() < 1e-12);
        assert!((r[0].uncached_per_cell - 100.0).abs() < 1e-12);
        assert!((r[1].cached_share - 600.0 / 2000.0).abs() < 1e-12);
        assert!((r[1].uncached_per_cell - 700.0).abs() < 1e-12);
        let md = markdown(&r);
        assert!(
            md.contains("| m | harness | 2 | 700 | 85.7 % | 100 |"),
            "{md}"
        );
        assert!(
            md.contains("| m | opencode | 2 | 1000 | 30.0 % | 700 |"),
            "{md}"
        );
        assert!(markdown(&[]).is_empty());
    }
}

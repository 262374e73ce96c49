//! Per-cell annotation files: extra columns for cells scored by another file — the published
//! failure-form coding (`failure_forms_2609.csv`: flags such as `early_stop`, counters such as
//! `finish_rejections`) and resource counts (`turns_resource.csv`: `tool_calls`, `ctx_peak_tokens`).
//! A file is an annotation file when it has `harness`/`arm`, `task`, `model` and one of
//! [`MARKERS`]. Its numeric columns become [`crate::Cell::extras`]; a score it carries is
//! cross-checked against the scored cell, so a mismatched pair of files is an error, not a
//! silent join.

use super::table::Table;
use crate::error::{input, Result};
use crate::model::{normalize_task, Cell};
use std::collections::{BTreeMap, HashMap};

/// Columns that mark an annotation file.
pub const MARKERS: &[&str] = &[
    "turns",
    "ctx_peak_tokens",
    "ctx_lines",
    "platform_exit",
    "early_stop",
    "false_finish",
    "finish_rejections",
];

/// Identity and text columns: never extras.
const IDENTITY: &[&str] = &[
    "harness",
    "arm",
    "task",
    "model",
    "tier",
    "score",
    "wall_seconds",
    "failure_mode",
    "exit_code",
    "attempt_dir",
    "latest_attempt_dir",
    "note",
    "method",
];

/// Whether `t` is an annotation file.
pub(crate) fn is_annotation(t: &Table) -> bool {
    (t.has(&["harness"]) || t.has(&["arm"]))
        && t.has(&["task", "model"])
        && MARKERS.iter().any(|m| t.has(&[m]))
}

/// One annotation row.
pub(crate) struct Row {
    origin: String,
    key: (String, String, String),
    score: Option<f64>,
    failure_mode: Option<String>,
    wall: Option<f64>,
    values: BTreeMap<String, f64>,
}

/// The rows of an annotation file (duplicates are an error).
pub(crate) fn read(t: &Table) -> Result<Vec<Row>> {
    let arm = super::cells::arm_column(t);
    let numeric: Vec<&String> = t
        .header
        .iter()
        .filter(|h| !IDENTITY.contains(&h.as_str()) && t.numeric(h))
        .collect();
    let mut seen: HashMap<(String, String, String), String> = HashMap::new();
    let mut rows = Vec::new();
    for i in 0..t.rows {
        let key = (
            t.req(arm, i)?.to_string(),
            t.req("model", i)?.to_string(),
            normalize_task(t.req("task", i)?),
        );
        if let Some(first) = seen.insert(key.clone(), t.origin(i)) {
            return Err(input!(
                "{}: duplicate row for arm `{}`, model `{}`, task `{}`; first seen at {first}",
                t.origin(i),
                key.0,
                key.1,
                key.2
            ));
        }
        let mut values = BTreeMap::new();
        for c in &numeric {
            if let Some(v) = t.num(c, i)? {
                values.insert(c.to_string(), v);
            }
        }
        rows.push(Row {
            origin: t.origin(i),
            score: t.score("score", i)?,
            failure_mode: t.get("failure_mode", i).map(str::to_string),
            wall: t.num("wall_seconds", i)?,
            key,
            values,
        });
    }
    Ok(rows)
}

/// Attaches `rows` to `cells`; returns how many rows matched no cell. A score that disagrees
/// with a single-repeat cell's score is an error naming both.
pub(crate) fn attach(cells: &mut [Cell], rows: Vec<Row>) -> Result<usize> {
    let index: HashMap<(String, String, String), usize> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| ((c.arm.clone(), c.model.clone(), c.task.clone()), i))
        .collect();
    let mut unmatched = 0;
    for r in rows {
        let Some(&i) = index.get(&r.key) else {
            unmatched += 1;
            continue;
        };
        let c = &mut cells[i];
        if let (Some(s), [only]) = (r.score, c.repeat_scores.as_slice()) {
            if (s - only).abs() > 1e-9 {
                return Err(input!(
                    "{}: score {s} disagrees with the scored cell (arm `{}`, model `{}`, task \
                     `{}`: {only}); the annotation belongs to another run",
                    r.origin,
                    c.arm,
                    c.model,
                    c.task
                ));
            }
        }
        if c.failure_modes.is_empty() {
            c.failure_modes.extend(r.failure_mode);
        }
        if c.wall_seconds.is_none() {
            c.wall_seconds = r.wall;
        }
        if c.tool_calls.is_none() {
            c.tool_calls = r.values.get("tool_calls").copied();
        }
        for (k, v) in r.values {
            c.extras.insert(k, v);
        }
    }
    Ok(unmatched)
}

//! The paper's resource table (upstream's `mechanism_log/resource_table_2609.md`): per arm, the
//! cells, wall time (mean with its n, median), tool calls (mean with its n, median), turns
//! (mean), peak prompt tokens (median) and the cells that timed out; then the same per model
//! with an all-arms row. A value no cell records is `n/a (not recorded)`, never estimated.
//!
//! Per-cell values come from the loaded cells: wall time and tool calls from the score files or
//! annotations; turns from our cells.csv (version 2) or a `turns` column, else `ctx_lines`
//! where the same file records a peak (`turns_resource.csv` writes 0 for arms it did not
//! count); the peak from our cells.csv's `peak_prompt_tokens` (version 4; an older run's
//! trajectory) or an annotation's `ctx_peak_tokens`; timeouts from failure modes.

use crate::model::Cell;
use crate::stats::{mean, median};
use serde::Serialize;
use std::fmt::Write;

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResourceRow {
    /// Arm, or `all arms` in a per-model subtotal.
    pub arm: String,
    /// Model, in the per-model section.
    pub model: Option<String>,
    /// Cells.
    pub cells: usize,
    /// Wall seconds: (mean, median, cells with a value).
    pub wall: Option<(f64, f64, usize)>,
    /// Tool calls: (mean, median, cells with a value).
    pub tool_calls: Option<(f64, f64, usize)>,
    /// Mean turns.
    pub turns_mean: Option<f64>,
    /// Median peak prompt tokens.
    pub peak_prompt_median: Option<f64>,
    /// Cells with a timed-out repeat, of the cells with a failure mode.
    pub timeouts: Option<(usize, usize)>,
}

/// The table: per arm, then per model (each model's arms and an all-arms row).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResourceTable {
    /// Per arm.
    pub by_arm: Vec<ResourceRow>,
    /// Per model × arm, with an `all arms` row after each model.
    pub by_model: Vec<ResourceRow>,
}

fn turns(c: &Cell) -> Option<f64> {
    c.turns
        .or_else(|| c.extras.get("turns").copied())
        .or_else(|| {
            c.extras
                .contains_key("ctx_peak_tokens")
                .then(|| c.extras.get("ctx_lines").copied())
                .flatten()
        })
}

fn summary(v: Vec<f64>) -> Option<(f64, f64, usize)> {
    (!v.is_empty()).then(|| (mean(&v), median(&v), v.len()))
}

fn row(arm: &str, model: Option<&str>, cells: &[&Cell]) -> ResourceRow {
    let with_mode: Vec<&&Cell> = cells
        .iter()
        .filter(|c| !c.failure_modes.is_empty())
        .collect();
    let timed_out = with_mode
        .iter()
        .filter(|c| c.failure_modes.iter().any(|m| m == "timeout"))
        .count();
    ResourceRow {
        arm: arm.into(),
        model: model.map(str::to_string),
        cells: cells.len(),
        wall: summary(cells.iter().filter_map(|c| c.wall_seconds).collect()),
        tool_calls: summary(cells.iter().filter_map(|c| c.tool_calls).collect()),
        turns_mean: summary(cells.iter().filter_map(|c| turns(c)).collect()).map(|s| s.0),
        peak_prompt_median: summary(
            cells
                .iter()
                .filter_map(|c| {
                    (c.peak_prompt_tokens).or_else(|| c.extras.get("ctx_peak_tokens").copied())
                })
                .collect(),
        )
        .map(|s| s.1),
        timeouts: (!with_mode.is_empty()).then_some((timed_out, with_mode.len())),
    }
}

/// The table over `cells` of `arms` (table order) and `models`; `None` when no cell records a
/// wall time or a tool call.
pub fn table(cells: &[Cell], arms: &[String], models: &[String]) -> Option<ResourceTable> {
    if !cells
        .iter()
        .any(|c| c.wall_seconds.is_some() || c.tool_calls.is_some())
    {
        return None;
    }
    let of = |arm: Option<&str>, model: Option<&str>| -> Vec<&Cell> {
        cells
            .iter()
            .filter(|c| arms.contains(&c.arm))
            .filter(|c| arm.is_none_or(|a| c.arm == a) && model.is_none_or(|m| c.model == m))
            .collect()
    };
    let by_arm = arms
        .iter()
        .map(|a| row(a, None, &of(Some(a), None)))
        .collect();
    let mut by_model = Vec::new();
    for m in models {
        for a in arms {
            let cs = of(Some(a), Some(m));
            if !cs.is_empty() {
                by_model.push(row(a, Some(m), &cs));
            }
        }
        by_model.push(row("all arms", Some(m), &of(None, Some(m))));
    }
    Some(ResourceTable { by_arm, by_model })
}

const NA: &str = "n/a (not recorded)";

/// `x` with one decimal, or without decimals when whole (the paper's `fnum`).
fn num(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.1}")
    }
}

fn cols(r: &ResourceRow) -> Vec<String> {
    let mean_n =
        |s: Option<(f64, f64, usize)>| s.map_or(NA.into(), |(m, _, n)| format!("{m:.1} (n={n})"));
    let med = |s: Option<(f64, f64, usize)>| s.map_or(NA.into(), |(_, m, _)| num(m));
    vec![
        r.cells.to_string(),
        mean_n(r.wall),
        med(r.wall),
        mean_n(r.tool_calls),
        med(r.tool_calls),
        r.turns_mean.map_or(NA.into(), num),
        // Whole tokens, ties to even (as the paper prints 8938.5 as 8938).
        r.peak_prompt_median
            .map_or(NA.into(), |x| format!("{x:.0}")),
        r.timeouts.map_or(NA.into(), |(k, n)| format!("{k}/{n}")),
    ]
}

const HEAD: [&str; 8] = [
    "cells",
    "wall mean (s)",
    "wall median (s)",
    "tool calls mean",
    "tool calls median",
    "turns mean",
    "peak prompt tokens median",
    "timeout cells",
];

impl ResourceTable {
    /// The table as Markdown, in the paper's layout.
    pub fn markdown(&self) -> String {
        let mut out = String::from(
            "## Resources per cell (the paper's resource table)\n\nTool calls are counted from \
             each arm's trajectory; `n/a (not recorded)`: no cell of the arm records it (never \
             estimated). Timeout cells: cells with a timed-out repeat / cells with a failure \
             mode.\n\n",
        );
        let mut section = |first: &[&str], rows: &[ResourceRow]| {
            let h: Vec<&str> = first.iter().chain(HEAD.iter()).copied().collect();
            let _ = writeln!(out, "| {} |\n|{}", h.join(" | "), "---|".repeat(h.len()));
            for r in rows {
                let mut v: Vec<String> = r.model.iter().cloned().collect();
                v.push(r.arm.clone());
                v.extend(cols(r));
                let _ = writeln!(out, "| {} |", v.join(" | "));
            }
            out.push('\n');
        };
        section(&["arm"], &self.by_arm);
        section(&["model", "arm"], &self.by_model);
        out
    }
}

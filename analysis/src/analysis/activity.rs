//! What the arms did besides scoring: failure modes, wall time, tokens and calls, mechanism
//! firings from event logs, and the extra per-cell columns of annotation files.

use super::{ExtraColumn, ExtraStat, Extras, MechanismRow, ResourceRow, WallRow};
use crate::model::{Cell, Dataset};
use crate::stats::{mean, median};
use std::collections::{BTreeMap, BTreeSet};

/// Mechanism firings per arm (cells whose event log was found), main arms then variants.
pub(crate) fn mechanisms(ds: &Dataset, arms: &[String]) -> Vec<MechanismRow> {
    let mut out = Vec::new();
    for arm in arms {
        let logged: Vec<&Cell> = ds
            .cells
            .iter()
            .filter(|c| &c.arm == arm && c.repeats_with_events > 0)
            .collect();
        if logged.is_empty() {
            continue;
        }
        let mut by: BTreeMap<String, (f64, usize)> = BTreeMap::new();
        for c in &logged {
            for (k, v) in &c.mechanisms {
                let e = by.entry(k.clone()).or_default();
                e.0 += v / logged.len() as f64;
                e.1 += usize::from(*v > 0.0);
            }
        }
        out.push(MechanismRow {
            arm: arm.clone(),
            cells: logged.len(),
            by_mechanism: by,
        });
    }
    out
}

/// Failure modes (cells × repeats), wall time and resource means of the main arms.
#[allow(clippy::type_complexity)]
pub(crate) fn per_arm(
    ds: &Dataset,
    arms: &[String],
) -> (
    BTreeMap<String, BTreeMap<String, usize>>,
    Vec<WallRow>,
    Vec<ResourceRow>,
) {
    let mut failure_modes: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let mut wall = Vec::new();
    let mut resources = Vec::new();
    for arm in arms {
        let cells: Vec<&Cell> = ds.cells.iter().filter(|c| &c.arm == arm).collect();
        for c in &cells {
            for f in &c.failure_modes {
                *failure_modes
                    .entry(arm.clone())
                    .or_default()
                    .entry(f.clone())
                    .or_default() += 1;
            }
        }
        let w: Vec<f64> = cells.iter().filter_map(|c| c.wall_seconds).collect();
        if !w.is_empty() {
            wall.push(WallRow {
                arm: arm.clone(),
                n: w.len(),
                missing: cells.len() - w.len(),
                median: median(&w),
                mean: mean(&w),
            });
        }
        let fields = |c: &Cell| {
            [
                c.prompt_tokens,
                c.completion_tokens,
                c.model_calls,
                c.tool_calls,
            ]
        };
        let reporting: Vec<&&Cell> = cells
            .iter()
            .filter(|c| fields(c).iter().any(Option::is_some))
            .collect();
        if !reporting.is_empty() {
            let mut means = [None; 4];
            for (k, slot) in means.iter_mut().enumerate() {
                let v: Vec<f64> = reporting.iter().filter_map(|c| fields(c)[k]).collect();
                *slot = (!v.is_empty()).then(|| mean(&v));
            }
            resources.push(ResourceRow {
                arm: arm.clone(),
                n: reporting.len(),
                means,
            });
        }
    }
    (failure_modes, wall, resources)
}

/// Every extra column of the main arms' cells, per arm. A column whose values are all 0 or 1
/// is a flag (reported as a count of cells); the others as mean and median.
pub(crate) fn extras(ds: &Dataset, arms: &[String]) -> Option<Extras> {
    let columns: BTreeSet<&str> = ds
        .cells
        .iter()
        .flat_map(|c| c.extras.keys().map(String::as_str))
        .collect();
    if columns.is_empty() {
        return None;
    }
    let columns = columns
        .into_iter()
        .map(|col| {
            let values = |arm: &str| -> Vec<f64> {
                ds.cells
                    .iter()
                    .filter(|c| c.arm == arm)
                    .filter_map(|c| c.extras.get(col).copied())
                    .collect()
            };
            let flag = ds
                .cells
                .iter()
                .filter_map(|c| c.extras.get(col))
                .all(|v| *v == 0.0 || *v == 1.0);
            ExtraColumn {
                column: col.to_string(),
                flag,
                per_arm: arms
                    .iter()
                    .map(|a| {
                        let v = values(a);
                        (!v.is_empty()).then(|| ExtraStat {
                            n: v.len(),
                            sum: v.iter().sum(),
                            mean: mean(&v),
                            median: median(&v),
                        })
                    })
                    .collect(),
            }
        })
        .collect();
    Some(Extras {
        arms: arms.to_vec(),
        columns,
    })
}

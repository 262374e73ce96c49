//! The failure-form table in the paper's layout (upstream's `failure_forms_2609.md`): per arm,
//! each form as "cells set / cells coded" ("n/a" when no cell's fields decide it), then the
//! cells, mean score, median tool calls and median wall time; and the same counts per arm ×
//! model. Counts are of our coding; where a source also carries a published coding that counts
//! differently, the published count is shown beside ours.

use super::{agreement, code, Agreement, Coding, Field, Form, Inputs};
use crate::stats::{mean, median};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Where coded cells came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// A published coding (its raw fields re-coded by our rules, its flags kept to compare).
    Published,
    /// A run of ours (`cells.csv`): coded from the fields the run recorded.
    Run,
}

/// One coded cell (one repeat of an arm × model × task).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FormCell {
    /// Arm.
    pub arm: String,
    /// Model.
    pub model: String,
    /// Task id (`WF-01`).
    pub task: String,
    /// The fields the rules read.
    pub inputs: Inputs,
    /// Our coding of `inputs`.
    pub coding: Coding,
    /// The coding the source published, when it has one.
    pub published: Option<Coding>,
}

impl FormCell {
    /// A cell coded from `inputs` by [`code`].
    pub fn new(arm: &str, model: &str, task: &str, inputs: Inputs) -> FormCell {
        FormCell {
            arm: arm.into(),
            model: model.into(),
            task: task.into(),
            coding: code(&inputs),
            inputs,
            published: None,
        }
    }
}

/// The coded cells of one input file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Source {
    /// The file.
    pub file: String,
    /// Published or a run.
    pub kind: SourceKind,
    /// The fields the file records at all (a form whose rule reads a field outside this set
    /// cannot be checked against a published coding).
    pub fields: BTreeSet<Field>,
    /// Its cells.
    pub cells: Vec<FormCell>,
}

/// Cells where a form is set, of the cells whose fields decide it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Count {
    /// Cells where it is set.
    pub set: usize,
    /// Cells coded yes or no.
    pub coded: usize,
}

impl Count {
    /// `set/coded`, or `n/a` when no cell is coded.
    pub fn show(&self) -> String {
        if self.coded == 0 {
            "n/a".into()
        } else {
            format!("{}/{}", self.set, self.coded)
        }
    }
}

/// One arm's (or arm × model's) column of the table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArmForms {
    /// Arm.
    pub arm: String,
    /// Model, in the per-model table.
    pub model: Option<String>,
    /// Coded cells.
    pub cells: usize,
    /// Our counts, per form in [`Form::ALL`] order.
    pub counts: Vec<Count>,
    /// The published counts, when every cell has a published coding.
    pub published: Option<Vec<Count>>,
    /// Mean score of the cells that have one.
    pub mean_score: Option<f64>,
    /// Median tool calls of the cells that have them.
    pub median_tool_calls: Option<f64>,
    /// Median wall seconds.
    pub median_wall: Option<f64>,
}

/// Every table of the failure forms.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FormsTable {
    /// Files coded, and whether each is published.
    pub sources: Vec<(String, SourceKind)>,
    /// Per arm.
    pub by_arm: Vec<ArmForms>,
    /// Per arm × model.
    pub by_arm_model: Vec<ArmForms>,
    /// Our coding against each published one.
    pub agreements: Vec<Agreement>,
}

fn counts(cells: &[&FormCell], get: impl Fn(&FormCell) -> Option<Coding>) -> Vec<Count> {
    Form::ALL
        .iter()
        .map(|f| {
            let v: Vec<bool> = cells
                .iter()
                .filter_map(|c| get(c).and_then(|k| k.get(*f)))
                .collect();
            Count {
                set: v.iter().filter(|x| **x).count(),
                coded: v.len(),
            }
        })
        .collect()
}

fn column(arm: &str, model: Option<&str>, cells: &[&FormCell]) -> ArmForms {
    let opt = |xs: Vec<f64>, f: fn(&[f64]) -> f64| (!xs.is_empty()).then(|| f(&xs));
    let all_published = cells.iter().all(|c| c.published.is_some());
    ArmForms {
        arm: arm.into(),
        model: model.map(str::to_string),
        cells: cells.len(),
        counts: counts(cells, |c| Some(c.coding)),
        published: all_published.then(|| counts(cells, |c| c.published)),
        mean_score: opt(cells.iter().filter_map(|c| c.inputs.score).collect(), mean),
        median_tool_calls: opt(
            cells
                .iter()
                .filter_map(|c| c.inputs.tool_calls.map(|n| n as f64))
                .collect(),
            median,
        ),
        median_wall: opt(
            cells.iter().filter_map(|c| c.inputs.wall_seconds).collect(),
            median,
        ),
    }
}

/// The table over every source's cells: arms in `arms` order (others after, by name), models
/// in `models` order (others after). `None` when no source has a cell.
pub fn table(sources: &[Source], arms: &[String], models: &[String]) -> Option<FormsTable> {
    let cells: Vec<&FormCell> = sources.iter().flat_map(|s| &s.cells).collect();
    if cells.is_empty() {
        return None;
    }
    let order = |known: &[String], seen: BTreeSet<&str>| -> Vec<String> {
        let mut v: Vec<String> = known
            .iter()
            .filter(|a| seen.contains(a.as_str()))
            .cloned()
            .collect();
        v.extend(
            seen.iter()
                .filter(|a| !known.iter().any(|k| k == *a))
                .map(|a| a.to_string()),
        );
        v
    };
    let arms = order(arms, cells.iter().map(|c| c.arm.as_str()).collect());
    let models = order(models, cells.iter().map(|c| c.model.as_str()).collect());
    let mut by_arm = Vec::new();
    let mut by_arm_model = Vec::new();
    for a in &arms {
        let of_arm: Vec<&FormCell> = cells.iter().copied().filter(|c| &c.arm == a).collect();
        by_arm.push(column(a, None, &of_arm));
        for m in &models {
            let of: Vec<&FormCell> = of_arm.iter().copied().filter(|c| &c.model == m).collect();
            if !of.is_empty() {
                by_arm_model.push(column(a, Some(m), &of));
            }
        }
    }
    Some(FormsTable {
        sources: sources.iter().map(|s| (s.file.clone(), s.kind)).collect(),
        by_arm,
        by_arm_model,
        agreements: sources.iter().filter_map(agreement).collect(),
    })
}

/// A median without trailing zeros (33.5, 15).
fn trim(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Our count, with the published one beside it when they differ.
fn shown(col: &ArmForms, i: usize) -> String {
    let ours = col.counts[i].show();
    match &col.published {
        Some(p) if p[i] != col.counts[i] => format!("{ours} (published {})", p[i].show()),
        _ => ours,
    }
}

/// How a footer row shows one column.
type Cell = fn(&ArmForms) -> String;

fn row(out: &mut String, cells: &[String]) {
    let _ = writeln!(out, "| {} |", cells.join(" | "));
}

fn header(out: &mut String, cells: &[String]) {
    row(out, cells);
    let _ = writeln!(out, "|{}", "---|".repeat(cells.len()));
}

impl FormsTable {
    /// The tables as Markdown, in the paper's layout.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let files: Vec<String> = self
            .sources
            .iter()
            .map(|(f, k)| match k {
                SourceKind::Published => format!("{f} (published; its fields re-coded)"),
                SourceKind::Run => format!("{f} (this run)"),
            })
            .collect();
        let _ = writeln!(
            out,
            "## Failure forms (the paper's rules, coded from each cell's fields)\n\n\
             From {}. Each form: cells where it is set / cells whose fields decide it; `n/a`: \
             no cell records what the rule needs (an arm without that counter, a run without \
             trajectories). Where the input's published coding counts otherwise, its count is \
             in brackets. Rules: docs/statistics.md, \"Failure forms\".\n",
            files.join(", ")
        );
        if self.sources.iter().any(|(_, k)| *k == SourceKind::Run) {
            out.push_str(
                "A run's counters (spin, format, context, false finish, provider): a Mingbird \
                 arm's from its printed markers (the paper's scale), every other arm's from its \
                 recorded trajectory (what went over the wire; docs/statistics.md, *Counters \
                 from the trajectory*), so only the Mingbird columns compare with the paper's.\n\n",
            );
        }
        let mut h = vec!["form".to_string()];
        h.extend(self.by_arm.iter().map(|c| c.arm.clone()));
        header(&mut out, &h);
        for (i, f) in Form::ALL.iter().enumerate() {
            let mut r = vec![format!("{} (`{}`)", f.label(), f.name())];
            r.extend(self.by_arm.iter().map(|c| shown(c, i)));
            row(&mut out, &r);
        }
        let foot: [(&str, Cell); 4] = [
            ("cells", |c| c.cells.to_string()),
            ("mean score", |c| {
                c.mean_score.map_or("–".into(), |v| format!("{v:.4}"))
            }),
            ("median tool calls", |c| {
                c.median_tool_calls.map_or("–".into(), trim)
            }),
            ("median wall (s)", |c| {
                c.median_wall.map_or("–".into(), |v| format!("{v:.1}"))
            }),
        ];
        for (name, f) in foot {
            let mut r = vec![name.to_string()];
            r.extend(self.by_arm.iter().map(f));
            row(&mut out, &r);
        }
        let _ = writeln!(out, "\n### Failure forms per arm × model\n");
        let mut h = vec!["arm".to_string(), "model".into(), "cells".into()];
        h.extend(Form::ALL.iter().map(|f| f.name().to_string()));
        header(&mut out, &h);
        for c in &self.by_arm_model {
            let mut r = vec![
                c.arm.clone(),
                c.model.clone().unwrap_or_default(),
                c.cells.to_string(),
            ];
            r.extend((0..Form::ALL.len()).map(|i| shown(c, i)));
            row(&mut out, &r);
        }
        out.push('\n');
        for a in &self.agreements {
            out.push_str(&a.markdown());
        }
        out
    }
}

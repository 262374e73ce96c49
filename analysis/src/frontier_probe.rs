//! The paper's frontier probe (`frontier_probe_scores.csv`: one hosted model through the four
//! published arms on the 18 tasks): its per-cell format, typed here once, the export of a run's
//! cells into it (`lrab analyze … --probe-out`), and the comparison of a run with the published
//! file (`lrab analyze … --probe-compare`).
//!
//! Conventions of the published file kept exactly: columns `arm,task,score,failure_mode,
//! wall_seconds`; arm names as the paper wrote them; task ids with a dash; `score` with at most 3
//! decimals and empty for a timeout (left out of the means, as the published means are);
//! `failure_mode` in the published vocabulary (`completed`, `error`, `timeout`) and empty for
//! agent-mini (upstream's agent-mini driver recorded none); `wall_seconds` with 1 decimal. A run
//! on the simulator gets a sixth column `simulated` so the label is never lost.

use crate::error::{Error, Result};
use crate::load::{load_with, LoadOptions, TimeoutPolicy};
use crate::model::Dataset;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The published file's columns, in order.
pub const HEADER: [&str; 5] = ["arm", "task", "score", "failure_mode", "wall_seconds"];
/// The extra column a simulated run's export carries (never in the published file).
pub use crate::load::SIMULATED;
/// Arms whose `failure_mode` the published file leaves empty.
pub const MODELESS_ARMS: [&str; 1] = ["agent-mini"];
/// The paper's four arms, as the published file names them (our arm names are the same).
pub const PAPER_ARMS: [&str; 4] = ["mingbird", "goose", "opencode", "agent-mini"];

/// The model the published probe ran (hosted, temperature 0).
pub const PUBLISHED_MODEL: &str = "qwen3.8-flash";
/// The published probe's thinking setting (its shim sent `enable_thinking: false`).
pub const PUBLISHED_THINK: &str = "off";

/// The cells of some inputs as probe rows, with the settings they ran under.
#[derive(Clone, Debug)]
pub struct ProbeInput {
    /// One per arm × task.
    pub rows: Vec<ProbeRow>,
    /// The model of the cells (a probe CSV has none: its file stem).
    pub model: Option<String>,
    /// Thinking settings recorded (our cells.csv; empty for a probe CSV).
    pub think: Vec<String>,
}

/// One cell of a probe file.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeRow {
    /// Arm name as the paper wrote it.
    pub arm: String,
    /// Task id with a dash (`WF-01`).
    pub task: String,
    /// The score; `None` for a timeout without one.
    pub score: Option<f64>,
    /// `completed`, `error` or `timeout`; `None` for agent-mini.
    pub failure_mode: Option<String>,
    /// Wall seconds of the cell.
    pub wall_seconds: Option<f64>,
    /// The cell ran on the simulator.
    pub simulated: bool,
}

/// Our failure mode in the published vocabulary: the published file records how the arm's
/// process ended (exit 0, non-zero exit, killed at the budget), not our finer classification.
pub fn published_mode(ours: &str) -> &'static str {
    match ours {
        "timeout" => "timeout",
        "crash" | "error" => "error",
        _ => "completed",
    }
}

/// The paper's spelling of an arm (ours agree; compared ignoring case).
fn paper_arm(arm: &str) -> String {
    PAPER_ARMS
        .iter()
        .find(|p| p.eq_ignore_ascii_case(arm))
        .map_or_else(|| arm.to_string(), |p| p.to_string())
}

/// The most severe of a cell's modes (several repeats): error, then timeout, then completed.
fn worst_mode(modes: &[String]) -> &'static str {
    let mapped: Vec<&str> = modes.iter().map(|m| published_mode(m)).collect();
    ["error", "timeout"]
        .into_iter()
        .find(|m| mapped.contains(m))
        .unwrap_or("completed")
}

/// Read any per-cell inputs (our cells.csv, a probe CSV) into probe rows: one per arm × task,
/// the score the mean over the cell's repeats (as recorded), empty when every repeat timed out
/// (our cells.csv scores a timed-out attempt from what it left; the published file does not, and
/// the cells.csv keeps that score). The inputs must hold one model (the probe has no model
/// column).
pub fn rows_from_inputs(paths: &[PathBuf]) -> Result<ProbeInput> {
    let all = load_with(
        paths,
        &LoadOptions {
            timeouts: TimeoutPolicy::Zero,
        },
    )?;
    let models: BTreeSet<String> = all.cells.iter().map(|c| c.model.clone()).collect();
    if models.len() > 1 {
        return Err(Error::Input(format!(
            "{}: the frontier probe compares one model; these inputs hold {} ({}): give one \
             model's cells",
            shown(paths),
            models.len(),
            models.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(ProbeInput {
        model: models.into_iter().next(),
        think: all.think.keys().cloned().collect(),
        rows: rows_from(&all),
    })
}

fn shown(paths: &[PathBuf]) -> String {
    let v: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    v.join(", ")
}

fn rows_from(all: &Dataset) -> Vec<ProbeRow> {
    let mut rows: Vec<ProbeRow> = all
        .cells
        .iter()
        .map(|c| {
            let arm = paper_arm(&c.arm);
            let n = c.repeat_scores.len();
            let timed_out = c.failure_modes.iter().filter(|m| *m == "timeout").count();
            let every_timeout = n > 0 && (c.timeouts == n || timed_out == n);
            let score = (!every_timeout).then_some(c.score);
            let mode = if every_timeout {
                "timeout"
            } else {
                worst_mode(&c.failure_modes)
            };
            let modeless = MODELESS_ARMS.contains(&arm.as_str());
            ProbeRow {
                failure_mode: (!modeless && !c.failure_modes.is_empty() || every_timeout)
                    .then(|| mode.to_string()),
                task: c.task.clone(),
                score,
                wall_seconds: c.wall_seconds,
                simulated: c.simulated,
                arm,
            }
        })
        .collect();
    // The published order: arms as the paper lists them, then the rest; tasks WF before LH.
    let task_rank = |t: &str| (!t.starts_with("WF"), t.to_string());
    rows.sort_by(|a, b| {
        (arm_rank(&a.arm), &a.arm, task_rank(&a.task)).cmp(&(
            arm_rank(&b.arm),
            &b.arm,
            task_rank(&b.task),
        ))
    });
    rows
}

/// Where an arm sorts: the paper's four in its order, then the rest.
fn arm_rank(a: &str) -> usize {
    PAPER_ARMS
        .iter()
        .position(|p| *p == a)
        .unwrap_or(PAPER_ARMS.len())
}

/// `x` rounded to `places` decimals, written as the published file (Python's float repr:
/// `1.0`, `0.786`, `3600.0`).
fn fmt_num(x: f64, places: i32) -> String {
    let f = 10f64.powi(places);
    format!("{:?}", (x * f).round() / f)
}

/// The probe CSV of `rows` (the published columns, plus `simulated` when any row ran on the
/// simulator).
pub fn to_csv(rows: &[ProbeRow]) -> String {
    let sim = rows.iter().any(|r| r.simulated);
    let mut out = HEADER.join(",");
    if sim {
        out.push(',');
        out.push_str(SIMULATED);
    }
    out.push('\n');
    for r in rows {
        let mut line = [
            r.arm.clone(),
            r.task.clone(),
            r.score.map(|s| fmt_num(s, 3)).unwrap_or_default(),
            r.failure_mode.clone().unwrap_or_default(),
            r.wall_seconds.map(|w| fmt_num(w, 1)).unwrap_or_default(),
        ]
        .join(",");
        if sim {
            line.push(',');
            line.push_str(if r.simulated { "true" } else { "false" });
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Per-arm figures of one side.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArmMeans {
    /// Cells present.
    pub cells: usize,
    /// Cells timed out without a score.
    pub timeouts: usize,
    /// Mean over the scored cells (the published convention).
    pub mean: Option<f64>,
    /// Mean with a timeout counted 0 (the protocol's rule).
    pub mean_timeouts_zero: Option<f64>,
}

fn arm_means(rows: &[ProbeRow], arm: &str) -> ArmMeans {
    let mine: Vec<&ProbeRow> = rows.iter().filter(|r| r.arm == arm).collect();
    let scored: Vec<f64> = mine.iter().filter_map(|r| r.score).collect();
    let zero: Vec<f64> = mine.iter().map(|r| r.score.unwrap_or(0.0)).collect();
    let mean = |xs: &[f64]| (!xs.is_empty()).then(|| crate::stats::mean(xs));
    ArmMeans {
        cells: mine.len(),
        timeouts: mine.len() - scored.len(),
        mean: mean(&scored),
        mean_timeouts_zero: mean(&zero),
    }
}

/// A run compared with the published probe.
#[derive(Clone, Debug)]
pub struct ProbeComparison {
    /// `this run`, or `this run (simulated)`.
    pub run_label: String,
    /// The run's model and thinking against the published probe's, and whether they differ.
    pub settings: String,
    /// Arm, published, this run: the paper's arms first, in its order.
    pub arms: Vec<(String, ArmMeans, ArmMeans)>,
    /// (arm, task, published, this run) for the cells both have; `None` = timeout.
    pub both: Vec<(String, String, Option<f64>, Option<f64>)>,
    /// Cells of the published probe this run lacks.
    pub only_published: Vec<(String, String)>,
    /// Cells of this run the published probe lacks.
    pub only_run: Vec<(String, String)>,
}

/// The settings line: thinking differing from the paper's is said, as the report does.
fn settings(run: &ProbeInput) -> String {
    let model = run.model.as_deref().unwrap_or("?");
    let think = match run.think.as_slice() {
        [] => "not recorded in the input".to_string(),
        t => format!("`{}`", t.join("`, `")),
    };
    let mut s = format!(
        "Model: this run `{model}`, thinking {think}; published `{PUBLISHED_MODEL}`, thinking \
         `{PUBLISHED_THINK}`."
    );
    if run.think.iter().any(|t| t != PUBLISHED_THINK) {
        s.push_str(" **The runs compared differ in thinking.**");
    }
    s
}

/// Compare `run` with `published`.
pub fn compare(run_in: &ProbeInput, published_in: &ProbeInput) -> ProbeComparison {
    let (run, published) = (&run_in.rows[..], &published_in.rows[..]);
    let key = |r: &ProbeRow| (r.arm.clone(), r.task.clone());
    let pubs: BTreeMap<_, _> = published.iter().map(|r| (key(r), r.score)).collect();
    let runs: BTreeMap<_, _> = run.iter().map(|r| (key(r), r.score)).collect();
    let mut arm_names: Vec<String> = pubs
        .keys()
        .chain(runs.keys())
        .map(|k| k.0.clone())
        .collect();
    arm_names.sort_by_key(|a| (arm_rank(a), a.clone()));
    arm_names.dedup();
    let arms = arm_names
        .into_iter()
        .map(|a| {
            let (p, o) = (arm_means(published, &a), arm_means(run, &a));
            (a, p, o)
        })
        .collect();
    let both = run
        .iter()
        .filter_map(|r| {
            pubs.get(&key(r))
                .map(|p| (r.arm.clone(), r.task.clone(), *p, r.score))
        })
        .collect();
    let only_published = published
        .iter()
        .map(key)
        .filter(|k| !runs.contains_key(k))
        .collect();
    let only_run = run
        .iter()
        .map(key)
        .filter(|k| !pubs.contains_key(k))
        .collect();
    let label = if run.iter().any(|r| r.simulated) {
        "this run (simulated)"
    } else {
        "this run"
    };
    ProbeComparison {
        run_label: label.to_string(),
        settings: settings(run_in),
        arms,
        both,
        only_published,
        only_run,
    }
}

fn opt3(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |v| format!("{v:.3}"))
}

fn delta(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:+.3}", b - a),
        _ => "—".into(),
    }
}

fn cell_list(cells: &[(String, String)]) -> String {
    if cells.is_empty() {
        return "none".into();
    }
    let v: Vec<String> = cells.iter().map(|(a, t)| format!("{a} {t}")).collect();
    v.join(", ")
}

/// The comparison as Markdown (printed by `lrab analyze`, and `probe_comparison.md`).
pub fn markdown(c: &ProbeComparison) -> String {
    let r = &c.run_label;
    let mut s = format!(
        "## Frontier probe: {r} vs published\n\n\
         {}\n\n\
         Means leave a timeout out (the published convention); `timeouts 0` counts it 0.\n\n\
         | arm | published cells | {r} cells | published mean | {r} mean | Δ ({r} − published) \
         | published mean, timeouts 0 | {r} mean, timeouts 0 |\n\
         |---|---|---|---|---|---|---|---|\n",
        c.settings
    );
    for (arm, p, o) in &c.arms {
        s.push_str(&format!(
            "| {arm} | {} ({} timeout) | {} ({} timeout) | {} | {} | {} | {} | {} |\n",
            p.cells,
            p.timeouts,
            o.cells,
            o.timeouts,
            opt3(p.mean),
            opt3(o.mean),
            delta(p.mean, o.mean),
            opt3(p.mean_timeouts_zero),
            opt3(o.mean_timeouts_zero),
        ));
    }
    s.push_str(&format!(
        "\n### Per task (cells both have)\n\n| arm | task | published | {r} | Δ |\n|---|---|---|---|---|\n"
    ));
    for (arm, task, p, o) in &c.both {
        let show = |x: &Option<f64>| x.map_or_else(|| "timeout".into(), |v| format!("{v:.3}"));
        s.push_str(&format!(
            "| {arm} | {task} | {} | {} | {} |\n",
            show(p),
            show(o),
            delta(*p, *o)
        ));
    }
    s.push_str(&format!(
        "\nMissing from {r} ({}): {}\n\nMissing from published ({}): {}\n",
        c.only_published.len(),
        cell_list(&c.only_published),
        c.only_run.len(),
        cell_list(&c.only_run)
    ));
    s
}

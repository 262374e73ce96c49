//! The published per-cell data the simulator is fitted to (`failure_forms_2609.csv` of the
//! Mingbird/LRAB data release, CC BY 4.0; see the data folder's SOURCES.md), reduced to what
//! the fit and the report compare per (arm, model): mean score, the failure mix, wall time and
//! tool calls.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};

/// Simulated model ↔ published model slug (the family each sim model stands for).
pub const MODELS: [(&str, &str); 4] = [
    ("sim-2b", "gemma4_e2b"),
    ("sim-4b", "qwen3.5_4b"),
    ("sim-12b", "gemma4_12b"),
    ("sim-35b", "ornith1.5_35b"),
];

/// The arms with published cells the fit uses (by their arm names), and our harness, held out:
/// it has no published cell and is never fitted.
pub const FIT_ARMS: [&str; 3] = ["opencode", "agent-mini", "mingbird"];
/// Our harness: held out of the fit, run only for the prediction table.
pub const HELD_OUT: &str = "harness";

/// The arm name of a published `harness` column value (the paper's own arm is `Mingbird`
/// there and `mingbird` here; the others are spelled alike).
pub fn arm_of(published: &str) -> String {
    match published {
        "Mingbird" => "mingbird".to_string(),
        other => other.to_string(),
    }
}

/// The failure forms of the published coding that the report compares.
pub const FORMS: [&str; 6] = [
    "never_engaged",
    "early_stop",
    "incomplete_delivery",
    "spin",
    "false_finish",
    "format_breakdown",
];

/// One published (or simulated) cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub task: String,
    pub score: f64,
    pub wall: Option<f64>,
    /// Sim only: the modelled time of the model's replies alone (deterministic, unlike the
    /// modelled wall, which also holds the arm's own real time on the machine that ran it).
    pub model_time: Option<f64>,
    pub tool_calls: Option<u64>,
    pub flags: BTreeMap<String, bool>,
}

/// Summary of the cells of one (arm, model).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Share of cells with each failure form.
    pub forms: BTreeMap<String, f64>,
    pub median_wall: Option<f64>,
    pub median_model_time: Option<f64>,
    pub median_tool_calls: Option<f64>,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

pub fn summarize(cells: &[Cell]) -> Summary {
    let n = cells.len();
    let mut forms = BTreeMap::new();
    for f in FORMS {
        let k = cells
            .iter()
            .filter(|c| c.flags.get(f).copied().unwrap_or(false))
            .count();
        forms.insert(
            f.to_string(),
            if n == 0 { 0.0 } else { k as f64 / n as f64 },
        );
    }
    Summary {
        n,
        mean: if n == 0 {
            0.0
        } else {
            cells.iter().map(|c| c.score).sum::<f64>() / n as f64
        },
        forms,
        median_wall: median(cells.iter().filter_map(|c| c.wall).collect()),
        median_model_time: median(cells.iter().filter_map(|c| c.model_time).collect()),
        median_tool_calls: median(
            cells
                .iter()
                .filter_map(|c| c.tool_calls.map(|t| t as f64))
                .collect(),
        ),
    }
}

/// Published cells keyed by (arm, sim model).
pub type Published = BTreeMap<(String, String), Vec<Cell>>;

/// Reads `failure_forms_2609.csv` (bad rows name the file and line).
pub fn load(path: &Path) -> Result<Published> {
    let mut r = csv::Reader::from_path(path).with_context(|| format!("read {}", path.display()))?;
    let headers = r
        .headers()
        .with_context(|| format!("{}: no header", path.display()))?
        .clone();
    let col = |name: &str| -> Result<usize> {
        headers
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("{}: no column `{name}`", path.display()))
    };
    let (ch, ct, cm, cs, cw, ctc) = (
        col("harness")?,
        col("task")?,
        col("model")?,
        col("score")?,
        col("wall_seconds")?,
        col("tool_calls")?,
    );
    let form_cols: Vec<(String, usize)> = FORMS
        .iter()
        .map(|f| Ok((f.to_string(), col(f)?)))
        .collect::<Result<_>>()?;
    let mut out: Published = BTreeMap::new();
    for (i, rec) in r.records().enumerate() {
        let line = i + 2;
        let rec = rec.with_context(|| format!("{}:{line}: bad CSV row", path.display()))?;
        let slug = &rec[cm];
        let Some((sim, _)) = MODELS.iter().find(|(_, s)| *s == slug) else {
            continue;
        };
        let score: f64 = rec[cs]
            .trim()
            .parse()
            .with_context(|| format!("{}:{line}: score `{}`", path.display(), &rec[cs]))?;
        let flags = form_cols
            .iter()
            .map(|(f, c)| (f.clone(), rec[*c].trim() == "1"))
            .collect();
        out.entry((arm_of(&rec[ch]), sim.to_string()))
            .or_default()
            .push(Cell {
                task: rec[ct].to_string(),
                score,
                wall: rec[cw].trim().parse().ok(),
                model_time: None,
                tool_calls: rec[ctc].trim().parse().ok(),
                flags,
            });
    }
    if out.is_empty() {
        bail!("{}: no cell of the four published models", path.display());
    }
    Ok(out)
}

/// The folder holding the published `failure_forms_2609.csv`: `LRAB_MINGBIRD_DATA`, else the
/// data lookup (`LRAB_DATA` or `../shared/data`, then the figures carried in the repository's
/// `data/`; see `lrab-data`).
pub fn data_dir() -> Result<std::path::PathBuf> {
    if let Some(d) = std::env::var_os("LRAB_MINGBIRD_DATA") {
        return Ok(d.into());
    }
    let csv = lrab_data::file("mingbird/failure_forms_2609.csv")?;
    Ok(csv.parent().map(Path::to_path_buf).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_means_come_out_of_the_csv() {
        let Some(p) = lrab_data::test_file("mingbird/failure_forms_2609.csv") else {
            return;
        };
        let d = load(&p).unwrap();
        let m = |h: &str, s: &str| summarize(&d[&(h.to_string(), s.to_string())]).mean;
        assert!((m("opencode", "sim-2b") - 0.017).abs() < 0.001);
        assert!((m("agent-mini", "sim-4b") - 0.706).abs() < 0.001);
        assert!((m("mingbird", "sim-35b") - 0.941).abs() < 0.001);
        assert_eq!(d[&("mingbird".to_string(), "sim-2b".to_string())].len(), 18);
        let s = summarize(&d[&("opencode".to_string(), "sim-2b".to_string())]);
        assert_eq!(s.forms["never_engaged"], 1.0);
    }
}

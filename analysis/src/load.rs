//! Reading the input files (polars for CSV parsing) into a [`Dataset`].
//!
//! The format of each file is recognised from its header, never from its name:
//! our `cells.csv`, upstream's `harness,task,model,score,wall_seconds,latest_attempt_dir`,
//! upstream's ablation long format `variant,task_id,total`, our τ² results
//! `domain,task,arm,trial,reward,...` (as `lrab tau2 run` writes them; reward `ungraded` = no judge), and τ² manifests (`*.json`). Every value is parsed and
//! checked here, and every problem is reported with the file, line and column.

use crate::model::{normalize_task, tier_of, AblationFile, Cell, Dataset};
use anyhow::{anyhow, bail, Context, Result};
use polars::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::io::Cursor;
use std::path::Path;

/// Columns of our cells.csv that the analysis needs (the others are optional).
pub const CELLS_REQUIRED: &[&str] = &[
    "run_id", "arm", "model", "task", "repeat", "attempt", "score",
];
/// Columns of upstream's published per-cell CSV.
pub const UPSTREAM_REQUIRED: &[&str] = &["harness", "task", "model", "score"];
/// Columns of upstream's ablation CSV.
pub const ABLATION_REQUIRED: &[&str] = &["variant", "task_id", "total"];
/// Columns of our τ² results CSV.
pub const TAU_REQUIRED: &[&str] = &["domain", "task", "arm", "reward"];

/// A CSV read as strings: header and columns.
struct Table {
    path: String,
    /// Folder of the file (attempt dirs are relative to it).
    dir: std::path::PathBuf,
    columns: HashMap<String, Vec<Option<String>>>,
    header: Vec<String>,
    rows: usize,
}

impl Table {
    fn read(path: &Path) -> Result<Table> {
        let shown = path.display().to_string();
        let bytes = std::fs::read(path).with_context(|| format!("{shown}: cannot read file"))?;
        if bytes.iter().all(|b| b.is_ascii_whitespace()) {
            bail!("{shown}: file is empty (no header line)");
        }
        // Every column as a string (schema inference off): we parse and check values ourselves
        // so errors can name the line and the column.
        let df = CsvReadOptions::default()
            .with_has_header(true)
            .with_infer_schema_length(Some(0))
            .into_reader_with_file_handle(Cursor::new(bytes))
            .finish()
            .map_err(|e| anyhow!("{shown}: not a readable CSV file: {e}"))?;
        let header: Vec<String> = df
            .get_column_names()
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut columns = HashMap::new();
        for name in &header {
            let col = df.column(name).map_err(|e| anyhow!("{shown}: {e}"))?;
            let s = col
                .str()
                .map_err(|e| anyhow!("{shown}: column {name}: {e}"))?;
            let v: Vec<Option<String>> = s
                .iter()
                .map(|x| x.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()))
                .collect();
            columns.insert(name.trim().to_string(), v);
        }
        let dir = path.parent().map(|p| p.to_path_buf()).unwrap_or_default();
        Ok(Table {
            path: shown,
            dir,
            rows: df.height(),
            columns,
            header,
        })
    }

    fn has(&self, cols: &[&str]) -> bool {
        cols.iter().all(|c| self.columns.contains_key(*c))
    }

    fn missing(&self, cols: &[&str]) -> Vec<String> {
        cols.iter()
            .filter(|c| !self.columns.contains_key(**c))
            .map(|c| c.to_string())
            .collect()
    }

    /// Value at data row `i` (0-based), `None` when empty or when the column is absent.
    fn get(&self, col: &str, i: usize) -> Option<&str> {
        self.columns.get(col).and_then(|v| v[i].as_deref())
    }

    /// Line number of data row `i` (header is line 1).
    fn line(i: usize) -> usize {
        i + 2
    }

    fn req(&self, col: &str, i: usize) -> Result<&str> {
        self.get(col, i)
            .ok_or_else(|| anyhow!("{}:{}: column `{col}` is empty", self.path, Self::line(i)))
    }

    fn num(&self, col: &str, i: usize) -> Result<Option<f64>> {
        match self.get(col, i) {
            None => Ok(None),
            Some(s) => {
                let v: f64 = s.parse().map_err(|_| {
                    anyhow!(
                        "{}:{}: column `{col}`: `{s}` is not a number",
                        self.path,
                        Self::line(i)
                    )
                })?;
                if !v.is_finite() {
                    bail!(
                        "{}:{}: column `{col}`: `{s}` is not finite",
                        self.path,
                        Self::line(i)
                    );
                }
                Ok(Some(v))
            }
        }
    }

    fn score(&self, col: &str, i: usize) -> Result<Option<f64>> {
        let v = self.num(col, i)?;
        if let Some(x) = v {
            if !(0.0..=1.0).contains(&x) {
                bail!(
                    "{}:{}: column `{col}`: score {x} is outside [0, 1]",
                    self.path,
                    Self::line(i)
                );
            }
        }
        Ok(v)
    }

    fn int(&self, col: &str, i: usize) -> Result<u64> {
        let s = self.req(col, i)?;
        s.parse().map_err(|_| {
            anyhow!(
                "{}:{}: column `{col}`: `{s}` is not a non-negative integer",
                self.path,
                Self::line(i)
            )
        })
    }
}

/// One repeat of a cell (its winning attempt) before averaging.
#[derive(Clone, Debug)]
struct Repeat {
    tier: u8,
    score: f64,
    wall: Option<f64>,
    failure_mode: Option<String>,
    simulated: bool,
    tokens: [Option<f64>; 4],
    attempt: u64,
    origin: String,
    /// Where the attempt's event log may be (our cells.csv only).
    attempt_dir: Option<std::path::PathBuf>,
}

type CellKey = (String, String, String);
type RepeatKey = (String, u64);

#[derive(Default)]
struct Builder {
    repeats: BTreeMap<CellKey, BTreeMap<RepeatKey, Repeat>>,
    superseded: usize,
}

impl Builder {
    /// Insert one attempt row; the highest attempt of a repeat wins; the same attempt twice is an
    /// error (a duplicate row would otherwise silently bias the mean).
    fn add(&mut self, key: CellKey, rkey: RepeatKey, rep: Repeat) -> Result<()> {
        let reps = self.repeats.entry(key.clone()).or_default();
        match reps.get(&rkey) {
            Some(old) if old.attempt == rep.attempt => bail!(
                "{}: duplicate row for arm `{}`, model `{}`, task `{}` (run `{}`, repeat {}, \
                 attempt {}); first seen at {}",
                rep.origin,
                key.0,
                key.1,
                key.2,
                rkey.0,
                rkey.1,
                rep.attempt,
                old.origin
            ),
            Some(old) if old.attempt > rep.attempt => self.superseded += 1,
            Some(_) => {
                self.superseded += 1;
                reps.insert(rkey, rep);
            }
            None => {
                reps.insert(rkey, rep);
            }
        }
        Ok(())
    }

    fn finish(self) -> (Vec<Cell>, usize, usize) {
        let mut bad_event_lines = 0;
        let mean_opt = |xs: Vec<f64>| (!xs.is_empty()).then(|| crate::stats::mean(&xs));
        let cells = self
            .repeats
            .into_iter()
            .map(|((arm, model, task), reps)| {
                let reps: Vec<Repeat> = reps.into_values().collect();
                // Only the winning attempts' logs are read.
                let logs: Vec<crate::events::Activations> = reps
                    .iter()
                    .filter_map(|r| r.attempt_dir.as_deref().and_then(crate::events::read))
                    .collect();
                let mut mechanisms: BTreeMap<String, f64> = BTreeMap::new();
                for l in &logs {
                    bad_event_lines += l.bad_lines;
                    for (k, v) in &l.counts {
                        *mechanisms.entry(k.clone()).or_default() += *v as f64 / logs.len() as f64;
                    }
                }
                let repeat_scores: Vec<f64> = reps.iter().map(|r| r.score).collect();
                let tok = |k: usize| mean_opt(reps.iter().filter_map(|r| r.tokens[k]).collect());
                Cell {
                    tier: reps[0].tier,
                    score: crate::stats::mean(&repeat_scores),
                    wall_seconds: mean_opt(reps.iter().filter_map(|r| r.wall).collect()),
                    failure_modes: reps.iter().filter_map(|r| r.failure_mode.clone()).collect(),
                    simulated: reps.iter().any(|r| r.simulated),
                    prompt_tokens: tok(0),
                    completion_tokens: tok(1),
                    model_calls: tok(2),
                    tool_calls: tok(3),
                    repeat_scores,
                    mechanisms,
                    repeats_with_events: logs.len(),
                    arm,
                    model,
                    task,
                }
            })
            .collect();
        (cells, self.superseded, bad_event_lines)
    }
}

fn read_cells(t: &Table, b: &mut Builder) -> Result<()> {
    for i in 0..t.rows {
        let origin = format!("{}:{}", t.path, Table::line(i));
        let task = normalize_task(t.req("task", i)?);
        let failure_mode = t.get("failure_mode", i).map(str::to_string);
        let score = match t.score("score", i)? {
            Some(s) => s,
            // A timed-out attempt has no total; it counts as 0 (documented in results-format.md).
            None if failure_mode.as_deref() == Some("timeout") => 0.0,
            None => bail!("{origin}: column `score` is empty and failure_mode is not `timeout`"),
        };
        let tier = match t.get("tier", i) {
            Some(s) => s
                .parse::<u8>()
                .ok()
                .filter(|x| (1..=4).contains(x))
                .ok_or_else(|| anyhow!("{origin}: column `tier`: `{s}` is not a tier 1..4"))?,
            None => tier_of(&task),
        };
        let simulated = match t.get("simulated", i) {
            None => false,
            Some(s) => match s.to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => true,
                "false" | "0" | "no" => false,
                _ => bail!("{origin}: column `simulated`: `{s}` is not true/false"),
            },
        };
        let rep = Repeat {
            tier,
            score,
            wall: t.num("wall_seconds", i)?,
            failure_mode,
            simulated,
            tokens: [
                t.num("prompt_tokens", i)?,
                t.num("completion_tokens", i)?,
                t.num("model_calls", i)?,
                t.num("tool_calls", i)?,
            ],
            attempt: t.int("attempt", i)?,
            origin: origin.clone(),
            attempt_dir: t.get("attempt_dir", i).map(|d| t.dir.join(d)),
        };
        let key = (
            t.req("arm", i)?.to_string(),
            t.req("model", i)?.to_string(),
            task,
        );
        let rkey = (t.req("run_id", i)?.to_string(), t.int("repeat", i)?);
        b.add(key, rkey, rep)?;
    }
    Ok(())
}

fn read_upstream(t: &Table, b: &mut Builder) -> Result<()> {
    for i in 0..t.rows {
        let origin = format!("{}:{}", t.path, Table::line(i));
        let task = normalize_task(t.req("task", i)?);
        let score = t
            .score("score", i)?
            .ok_or_else(|| anyhow!("{origin}: column `score` is empty"))?;
        let rep = Repeat {
            tier: tier_of(&task),
            score,
            wall: t.num("wall_seconds", i)?,
            failure_mode: t.get("failure_mode", i).map(str::to_string),
            simulated: false,
            tokens: [None, None, None, t.num("tool_calls", i)?],
            attempt: 0,
            origin,
            attempt_dir: None,
        };
        let key = (
            t.req("harness", i)?.to_string(),
            t.req("model", i)?.to_string(),
            task,
        );
        // One upstream file is one run with one repeat per cell.
        b.add(key, (t.path.clone(), 0), rep)?;
    }
    Ok(())
}

fn read_ablation(t: &Table) -> Result<AblationFile> {
    let mut f = AblationFile {
        path: t.path.clone(),
        ..Default::default()
    };
    for i in 0..t.rows {
        let variant = t.req("variant", i)?.to_string();
        let task = normalize_task(t.req("task_id", i)?);
        let score = t
            .score("total", i)?
            .ok_or_else(|| anyhow!("{}:{}: column `total` is empty", t.path, Table::line(i)))?;
        if f.variants
            .entry(variant.clone())
            .or_default()
            .insert(task.clone(), score)
            .is_some()
        {
            bail!(
                "{}:{}: duplicate row for variant `{variant}`, task `{task}`",
                t.path,
                Table::line(i)
            );
        }
    }
    Ok(f)
}

fn read_tau_csv(t: &Table, ds: &mut Dataset) -> Result<()> {
    // (domain, task, arm) -> (trial, reward) in trial order, so "first trial" means trial 0.
    let mut trials: BTreeMap<(String, String, String), BTreeMap<u64, f64>> = BTreeMap::new();
    for i in 0..t.rows {
        let domain = t.req("domain", i)?.to_string();
        let task = t.req("task", i)?.to_string();
        let arm = t.req("arm", i)?.to_string();
        if t.get("reward", i) == Some("ungraded") {
            ds.tau_ungraded.push(format!(
                "{}:{} ({domain}/{task}/{arm})",
                t.path,
                Table::line(i)
            ));
            continue;
        }
        let trial = if t.columns.contains_key("trial") {
            t.int("trial", i)?
        } else {
            0
        };
        match t.score("reward", i)? {
            Some(r) => {
                let slot = trials
                    .entry((domain.clone(), task.clone(), arm.clone()))
                    .or_default();
                if slot.insert(trial, r).is_some() {
                    bail!(
                        "{}:{}: duplicate row for domain `{domain}`, task `{task}`, arm `{arm}`, trial {trial}",
                        t.path,
                        Table::line(i)
                    );
                }
            }
            None => ds.tau_errors.push(format!(
                "{}:{} ({domain}/{task}/{arm})",
                t.path,
                Table::line(i)
            )),
        }
    }
    for ((domain, task, arm), rewards) in trials {
        ds.tau
            .entry(domain)
            .or_default()
            .entry(task)
            .or_default()
            .entry(arm)
            .or_default()
            .extend(rewards.into_values());
    }
    Ok(())
}

/// Read a τ² manifest `{task: {arm: {status, reward, wall}}}`; the domain is the file name up to
/// `_manifest` (`retail_manifest_nt0.json` -> `retail`).
fn read_manifest(path: &Path, ds: &mut Dataset) -> Result<()> {
    let shown = path.display().to_string();
    let text =
        std::fs::read_to_string(path).with_context(|| format!("{shown}: cannot read file"))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| anyhow!("{shown}: not valid JSON: {e}"))?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("tau2");
    let domain = stem.split("_manifest").next().unwrap_or(stem).to_string();
    if ds.tau.contains_key(&domain) {
        bail!("{shown}: a second manifest for domain `{domain}` (give one file per domain)");
    }
    let obj = v
        .as_object()
        .ok_or_else(|| anyhow!("{shown}: expected an object of tasks"))?;
    let dom = ds.tau.entry(domain.clone()).or_default();
    for (task, arms) in obj {
        let arms = arms
            .as_object()
            .ok_or_else(|| anyhow!("{shown}: task `{task}`: expected an object of arms"))?;
        for (arm, cell) in arms {
            match cell.get("reward").and_then(|r| r.as_f64()) {
                Some(r) if (0.0..=1.0).contains(&r) => dom
                    .entry(task.clone())
                    .or_default()
                    .entry(arm.clone())
                    .or_default()
                    .push(r),
                Some(r) => bail!("{shown}: task `{task}`, arm `{arm}`: reward {r} outside [0, 1]"),
                None => ds
                    .tau_errors
                    .push(format!("{shown} ({domain}/{task}/{arm}: no reward)")),
            }
        }
    }
    Ok(())
}

/// Load every input file into one dataset.
pub fn load(paths: &[std::path::PathBuf]) -> Result<Dataset> {
    let mut ds = Dataset::default();
    let mut b = Builder::default();
    for p in paths {
        let shown = p.display().to_string();
        if p.extension().and_then(|e| e.to_str()) == Some("json") {
            read_manifest(p, &mut ds)?;
            ds.sources.push((shown, "tau2 manifest".into()));
            continue;
        }
        let t = Table::read(p)?;
        let kind = if t.has(CELLS_REQUIRED) {
            read_cells(&t, &mut b)?;
            "cells.csv"
        } else if t.has(UPSTREAM_REQUIRED) {
            read_upstream(&t, &mut b)?;
            "upstream lrab_scores"
        } else if t.has(ABLATION_REQUIRED) {
            ds.ablations.push(read_ablation(&t)?);
            "upstream ablation"
        } else if t.has(TAU_REQUIRED) {
            read_tau_csv(&t, &mut ds)?;
            "tau2 results"
        } else {
            let formats = [
                ("cells.csv", CELLS_REQUIRED),
                ("upstream lrab_scores", UPSTREAM_REQUIRED),
                ("upstream ablation", ABLATION_REQUIRED),
                ("tau2 results", TAU_REQUIRED),
            ];
            // Name the closest format and what it lacks.
            let (name, cols) = formats
                .iter()
                .min_by_key(|(_, c)| t.missing(c).len() * 100 / c.len())
                .expect("formats");
            bail!(
                "{shown}: unrecognised CSV header [{}]; closest format is {name}, missing \
                 column(s): {}",
                t.header.join(","),
                t.missing(cols).join(", ")
            );
        };
        ds.sources.push((shown, kind.into()));
    }
    let (cells, superseded, bad_event_lines) = b.finish();
    ds.cells = cells;
    ds.bad_event_lines = bad_event_lines;
    ds.superseded_attempts = superseded;
    Ok(ds)
}

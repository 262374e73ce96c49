//! The verification's results put together: the cells of each run the runner made (the latest
//! attempt of each, by `lrab_records::Latest`), one seed after another, into the mean over
//! seeds, the seed-to-seed spread and the cells pooled for the failure mix and the medians.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use lrab_records::AttemptRecord;

use crate::published::{self, Summary};

/// Cells per (arm, model).
pub type Cells = BTreeMap<(String, String), Vec<published::Cell>>;

/// One (arm, model) verified at several seeds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verified {
    /// Per seed, in the order of `--seeds`: the summary of that seed's cells.
    pub per_seed: Vec<(u64, Summary)>,
    /// Every seed's cells together (failure mix, medians).
    pub pooled: Summary,
    pool: Vec<published::Cell>,
}

impl Verified {
    /// The mean over seeds of each seed's mean score.
    pub fn mean(&self) -> f64 {
        let n = self.per_seed.len().max(1) as f64;
        self.per_seed.iter().map(|(_, s)| s.mean).sum::<f64>() / n
    }

    /// Standard deviation of the seeds' means (0 with one seed).
    pub fn sd(&self) -> f64 {
        let n = self.per_seed.len();
        if n < 2 {
            return 0.0;
        }
        let m = self.mean();
        (self
            .per_seed
            .iter()
            .map(|(_, s)| (s.mean - m).powi(2))
            .sum::<f64>()
            / (n - 1) as f64)
            .sqrt()
    }

    /// Lowest and highest of the seeds' means.
    pub fn range(&self) -> (f64, f64) {
        self.per_seed
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, s)| {
                (lo.min(s.mean), hi.max(s.mean))
            })
    }

    /// The mean at one seed, if it ran.
    pub fn at(&self, seed: u64) -> Option<&Summary> {
        self.per_seed
            .iter()
            .find(|(s, _)| *s == seed)
            .map(|(_, x)| x)
    }

    /// Whether every seed ran every task.
    pub fn complete(&self, seeds: usize, tasks: usize) -> bool {
        self.per_seed.len() == seeds && self.per_seed.iter().all(|(_, s)| s.n >= tasks)
    }
}

/// Verified results per (arm, model).
pub type Runs = BTreeMap<(String, String), Verified>;

/// Puts one seed's cells into `runs` (only the arms in `keep`, when given).
pub fn add_seed(runs: &mut Runs, seed: u64, cells: Cells, keep: Option<&str>) {
    for ((arm, model), c) in cells {
        if keep.is_some_and(|k| k != arm) {
            continue;
        }
        let v = runs.entry((arm, model)).or_default();
        v.per_seed.push((seed, published::summarize(&c)));
        v.pool.extend(c);
        v.pooled = published::summarize(&v.pool);
    }
}

/// The cells of a verification run (the latest attempt of each), per (arm, model).
pub fn cells_of_run(run_dir: &Path) -> Result<Cells> {
    let rows = lrab_records::read_cell_rows_lenient(&run_dir.join("cells.csv"))?;
    let mut modelled: BTreeMap<String, f64> = BTreeMap::new();
    let mut model_time: BTreeMap<String, f64> = BTreeMap::new();
    let journal = run_dir.join("attempts.jsonl");
    let (attempts, _) =
        lrab_records::read_jsonl_lenient::<AttemptRecord>(&journal).unwrap_or_default();
    for a in attempts {
        if let Some(w) = a.modelled_wall_seconds {
            modelled.insert(a.attempt_dir.clone(), w);
        }
        if let Some(l) = a.sim_ledger {
            model_time.insert(a.attempt_dir, l.model_seconds);
        }
    }
    let mut cells: Cells = BTreeMap::new();
    for ((arm, model, task, _), r) in lrab_records::latest_cell_rows(&rows).into_map() {
        let crash = matches!(r.failure_mode.as_str(), "crash" | "timeout");
        let mut flags = BTreeMap::new();
        flags.insert("never_engaged".to_string(), r.tool_calls == Some(0));
        flags.insert("early_stop".to_string(), r.score < 0.5 && !crash);
        flags.insert("incomplete_delivery".to_string(), r.score < 0.999);
        cells
            .entry((arm, model))
            .or_default()
            .push(published::Cell {
                task,
                score: r.score,
                wall: modelled.get(&r.attempt_dir).copied(),
                model_time: model_time.get(&r.attempt_dir).copied(),
                tool_calls: r.tool_calls,
                flags,
            });
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_gives_the_latest_attempt_of_each_cell_with_its_modelled_times() {
        let d = tempfile::tempdir().unwrap();
        let mut csv = lrab_records::LEGACY_HEADER.join(",");
        for (task, attempt, score, tools, dir) in [
            ("T1", 0, 0.0, 0, "cells/a/m/T1/r0/a0"),
            ("T1", 1, 1.0, 4, "cells/a/m/T1/r0/a1"),
            ("T2", 0, 0.25, 2, "cells/a/m/T2/r0/a0"),
        ] {
            csv.push_str(&format!(
                "\nr,a,m,{task},1,0,{attempt},{score},,,1.0,0,completed,b,true,,,,{tools},{dir}"
            ));
        }
        std::fs::write(d.path().join("cells.csv"), csv + "\n").unwrap();
        let line = |dir: &str, wall: f64| {
            serde_json::json!({
                "cell": 0, "arm": "a", "model": "m", "task": "T1", "repeat": 0, "attempt": 1,
                "attempt_dir": dir, "command": [], "backend_url": "u", "phases": [],
                "quiet_wait_seconds": 0.0, "modelled_wall_seconds": wall,
                "sim_ledger": {"requests": 1, "model_seconds": wall / 2.0, "paced_seconds": 0.0,
                    "tool_calls": 4, "errors": 0},
                "runner_overhead_seconds": 0.0, "scoring_seconds": 0.0,
                "failure_mode": "completed", "score": 1.0, "score_error": null, "retry": false
            })
            .to_string()
        };
        let journal = [
            line("cells/a/m/T1/r0/a1", 10.0),
            "{\"torn".to_string(),
            line("cells/a/m/T1/r0/a1", 12.0),
        ];
        std::fs::write(d.path().join("attempts.jsonl"), journal.join("\n")).unwrap();
        let cells = cells_of_run(d.path()).unwrap();
        let c = &cells[&("a".to_string(), "m".to_string())];
        let got: Vec<_> = (c.iter())
            .map(|c| (c.task.as_str(), c.score, c.wall, c.model_time, c.tool_calls))
            .collect();
        assert_eq!(
            got,
            [
                ("T1", 1.0, Some(12.0), Some(6.0), Some(4)),
                ("T2", 0.25, None, None, Some(2))
            ]
        );
        assert!(c[1].flags["early_stop"] && !c[0].flags["incomplete_delivery"]);
    }
}

//! The matrix: arms × models × tasks × repeats, expanded into an ordered cell list. The order
//! (arm, model, task, repeat — upstream's serial driver order) and the index of each cell are
//! deterministic, so `plan`, `--shard k/n` and `--resume` all agree on which cell is which.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// Upstream's four models (docs/runner.md, `--models`), small first.
pub const UPSTREAM_MODELS: [&str; 4] = ["gemma4:e2b", "qwen3.5:4b", "gemma4:12b", "ornith-1.5:35b"];
/// The paper's four published arms (`--arms paper`, also `upstream`), exactly: Mingbird v1.5.0,
/// goose, opencode and agent-mini. Our harness is never a stand-in for one of them.
pub const PAPER_ARMS: [&str; 4] = ["mingbird", "goose", "opencode", "agent-mini"];

/// The arms of a named group (`paper` / `upstream`: [`PAPER_ARMS`]; `paper+harness`: ours beside
/// them, for the cell-by-cell comparison), or None for a name that is no group.
pub fn arm_group(name: &str) -> Option<Vec<&'static str>> {
    match name {
        "paper" | "upstream" => Some(PAPER_ARMS.to_vec()),
        "paper+harness" => Some(std::iter::once("harness").chain(PAPER_ARMS).collect()),
        _ => None,
    }
}
/// The simulated backend's sized models (the default when the backend is `sim`).
pub const SIM_MODELS: [&str; 4] = ["sim-2b", "sim-4b", "sim-12b", "sim-35b"];

/// One cell of the matrix: the planned cell of `plan.jsonl`, typed in `lrab_records`.
pub use lrab_records::PlannedCell as Cell;

/// A matrix as written in `--config matrix.toml`; every key optional (CLI flags override).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixFile {
    pub arms: Option<Vec<String>>,
    pub models: Option<Vec<String>>,
    pub tasks: Option<Vec<String>>,
    pub repeats: Option<u32>,
    pub backend: Option<String>,
    pub budget_minutes: Option<f64>,
    pub budget_minutes_lh: Option<f64>,
    pub retries: Option<u32>,
    pub num_ctx: Option<u64>,
    pub jobs: Option<usize>,
    pub seed: Option<u64>,
}

impl MatrixFile {
    pub fn load(path: &Path) -> Result<MatrixFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read matrix file {}", path.display()))?;
        toml::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}: {}",
                path.display(),
                e.to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        })
    }
}

/// The order the cells of a matrix run in (a manifest field, so typed in `lrab_records`;
/// docs/statistics.md, "Ablations", explains the interleaved one).
pub use lrab_records::Order;

/// Expands the matrix in the given order.
pub fn expand_in(
    order: Order,
    arms: &[String],
    models: &[String],
    tasks: &[String],
    repeats: u32,
) -> Vec<Cell> {
    match order {
        Order::Matrix => expand(arms, models, tasks, repeats),
        Order::Interleaved => {
            let mut out = Vec::new();
            let mut group = 0usize;
            for r in 0..repeats {
                for m in models {
                    for t in tasks {
                        for k in 0..arms.len() {
                            out.push(Cell {
                                index: out.len(),
                                arm: arms[(k + group) % arms.len()].clone(),
                                model: m.clone(),
                                task: t.clone(),
                                repeat: r,
                            });
                        }
                        group += 1;
                    }
                }
            }
            out
        }
    }
}

/// Expands the matrix in arm, model, task, repeat order.
pub fn expand(arms: &[String], models: &[String], tasks: &[String], repeats: u32) -> Vec<Cell> {
    let mut out = Vec::new();
    for a in arms {
        for m in models {
            for t in tasks {
                for r in 0..repeats {
                    out.push(Cell {
                        index: out.len(),
                        arm: a.clone(),
                        model: m.clone(),
                        task: t.clone(),
                        repeat: r,
                    });
                }
            }
        }
    }
    out
}

/// `k/n` with 1 ≤ k ≤ n: shard k of n, numbered from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;
    /// Strict: two plain decimal numbers (no sign, no spaces), so a typo in a job script is an
    /// error naming the value rather than a silently different slice.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let bad = |why: String| format!("--shard '{s}': {why}");
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| bad("expected k/n (shard k of n, from 1), e.g. 2/8".into()))?;
        let number = |what: &str, v: &str| -> std::result::Result<usize, String> {
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(format!(
                    "{what} '{v}' is not a whole number (expected k/n, e.g. 2/8)"
                )));
            }
            v.parse()
                .map_err(|_| bad(format!("{what} '{v}' is too large")))
        };
        let (k, n) = (number("k", k)?, number("n", n)?);
        if n == 0 {
            return Err(bad("n must be at least 1".into()));
        }
        if k == 0 {
            return Err(bad(format!(
                "k must be at least 1 (shards are numbered 1..={n})"
            )));
        }
        if k > n {
            return Err(bad(format!("k={k} is larger than n={n}")));
        }
        Ok(Shard { k, n })
    }
}

/// The deterministic slice of shard k/n: cells whose index ≡ k-1 (mod n). Round-robin keeps
/// each shard's mix of arms, models and tasks (and so its run time) balanced.
pub fn shard(cells: &[Cell], s: Shard) -> Vec<Cell> {
    cells
        .iter()
        .filter(|c| c.index % s.n == s.k - 1)
        .cloned()
        .collect()
}

/// Splits a comma list, dropping empties.
pub fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(str::to_string)
        .collect()
}

/// Rejects duplicates in a user list.
pub fn no_duplicates(kind: &str, list: &[String]) -> Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    for x in list {
        if !seen.insert(x) {
            bail!("{kind} '{x}' is listed twice");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn shards_partition_the_plan() {
        let cells = expand(
            &v(&["a", "b"]),
            &v(&["m1", "m2", "m3"]),
            &v(&["T1", "T2"]),
            2,
        );
        assert_eq!(cells.len(), 24);
        assert_eq!(cells[1].repeat, 1);
        assert_eq!(cells[2].task, "T2");
        let mut all = Vec::new();
        for k in 1..=5 {
            all.extend(shard(&cells, Shard { k, n: 5 }));
        }
        all.sort();
        assert_eq!(all, cells);
        assert_eq!("2/3".parse::<Shard>().unwrap(), Shard { k: 2, n: 3 });
        assert_eq!("3/3".parse::<Shard>().unwrap(), Shard { k: 3, n: 3 });
        for (bad, why) in [
            ("0/3", "k must be at least 1"),
            ("4/3", "k=4 is larger than n=3"),
            ("1/0", "n must be at least 1"),
            ("a/b", "k 'a' is not a whole number"),
            ("1/b", "n 'b' is not a whole number"),
            ("-1/4", "k '-1' is not a whole number"),
            ("+1/4", "k '+1' is not a whole number"),
            (" 1/4", "k ' 1' is not a whole number"),
            ("1/4/2", "n '4/2' is not a whole number"),
            ("/4", "k '' is not a whole number"),
            ("", "expected k/n"),
            ("3", "expected k/n"),
            ("99999999999999999999999/4", "is too large"),
        ] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.starts_with(&format!("--shard '{bad}': ")), "{e}");
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn interleaved_order_keeps_each_cell_group_together() {
        let cells = expand_in(
            Order::Interleaved,
            &v(&["base", "base-no-x"]),
            &v(&["m"]),
            &v(&["T1", "T2"]),
            2,
        );
        let seq: Vec<(String, String, u32)> = cells
            .iter()
            .map(|c| (c.arm.clone(), c.task.clone(), c.repeat))
            .collect();
        let t = |a: &str, task: &str, r| (a.to_string(), task.to_string(), r);
        assert_eq!(
            seq,
            [
                t("base", "T1", 0),
                t("base-no-x", "T1", 0),
                t("base-no-x", "T2", 0),
                t("base", "T2", 0),
                t("base", "T1", 1),
                t("base-no-x", "T1", 1),
                t("base-no-x", "T2", 1),
                t("base", "T2", 1),
            ]
        );
        assert!(cells.iter().enumerate().all(|(i, c)| c.index == i));
        let mut a = cells.clone();
        let mut b = expand(&v(&["base", "base-no-x"]), &v(&["m"]), &v(&["T1", "T2"]), 2);
        let key = |c: &Cell| c.key();
        a.sort_by_key(key);
        b.sort_by_key(key);
        assert_eq!(
            a.iter().map(key).collect::<Vec<_>>(),
            b.iter().map(key).collect::<Vec<_>>()
        );
    }

    #[test]
    fn slug_and_dirs() {
        let c = &expand(&v(&["harness"]), &v(&["gemma4:e2b"]), &v(&["WF-01"]), 1)[0];
        assert_eq!(c.rel_dir(), "cells/harness/gemma4_e2b/WF-01/r0");
    }
}

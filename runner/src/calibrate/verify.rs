//! The verification: the real arms run through the runner against the simulator serving the
//! fitted profiles, once per seed, cached by everything an evaluation depends on; and the
//! seeds' results put together (the mean over seeds, the seed-to-seed spread, the cells pooled
//! for the failure mix and the medians).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::published::{self, Summary};
use super::Options;
use crate::run;

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
    let rows = run::resume::read_rows_lenient(&run_dir.join("cells.csv"))?;
    let mut modelled: BTreeMap<String, f64> = BTreeMap::new();
    let mut model_time: BTreeMap<String, f64> = BTreeMap::new();
    if let Ok(text) = std::fs::read_to_string(run_dir.join("attempts.jsonl")) {
        for l in text.lines() {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(l) {
                if let (Some(d), Some(w)) = (
                    v["attempt_dir"].as_str(),
                    v["modelled_wall_seconds"].as_f64(),
                ) {
                    modelled.insert(d.to_string(), w);
                }
                if let (Some(d), Some(m)) = (
                    v["attempt_dir"].as_str(),
                    v["sim_ledger"]["model_seconds"].as_f64(),
                ) {
                    model_time.insert(d.to_string(), m);
                }
            }
        }
    }
    // latest attempt per cell
    let mut latest: BTreeMap<(String, String, String), &lrab_records::CellRow> = BTreeMap::new();
    for r in &rows {
        let k = (r.arm.clone(), r.model.clone(), r.task.clone());
        if latest.get(&k).is_none_or(|p| p.attempt <= r.attempt) {
            latest.insert(k, r);
        }
    }
    let mut cells: Cells = BTreeMap::new();
    for ((arm, model, task), r) in latest {
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

/// A cache key over everything an evaluation depends on that can change between two runs of
/// one checkout: the profiles, the simulator's own sources, the task pack, the arms' definitions
/// and the options. (A changed arm binary or runner is not seen: remove the cache then.)
fn eval_key(profile_text: &str, opts: &Options, arms: &[String], seed: u64) -> String {
    let mut h = lrab_util::FNV1A_START;
    let mut eat = |bytes: &[u8]| h = lrab_util::fnv1a(h, bytes);
    eat(format!(
        "{profile_text}|{}|{arms:?}|{:?}|{}|sim {}",
        seed,
        opts.tasks,
        opts.time_scale,
        lrab_sim::SOURCE_HASH
    )
    .as_bytes());
    let mut files = Vec::new();
    tree(&opts.pack_dir, &mut files);
    for arm in arms {
        files.push(opts.arms_dir.join(format!("{arm}.toml")));
    }
    // Paths relative to their folder, so that the same checkout in another place finds its cache.
    for f in files {
        let rel = f
            .strip_prefix(&opts.pack_dir)
            .or_else(|_| f.strip_prefix(&opts.arms_dir))
            .unwrap_or(&f);
        eat(rel.to_string_lossy().as_bytes());
        eat(&std::fs::read(&f).unwrap_or_default());
    }
    format!("{h:016x}")
}

/// Every file under `dir`, in path order.
fn tree(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            tree(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Runs (or reuses) one evaluation of `arms` on one model's profile with the real binaries, at
/// one seed of the simulator (one model at a time, so that a refit of one model reruns only
/// its cells).
pub fn evaluate(
    opts: &Options,
    prof: lrab_sim::Profile,
    profile_text: &str,
    arms: &[String],
    seed: u64,
) -> Result<PathBuf> {
    let key = eval_key(profile_text, opts, arms, seed);
    let model = prof.name.clone();
    let out_root = opts.cache.join("evals");
    let dir = out_root.join(&key);
    if dir.join("summary.md").exists() {
        eprintln!("calibrate: reusing the cached evaluation {}", dir.display());
        return Ok(dir);
    }
    if opts.no_verify {
        // report whatever an earlier, interrupted evaluation of these profiles got through
        return Ok(dir);
    }
    let resuming = dir.join("manifest.json").exists();
    if dir.exists() && !resuming {
        std::fs::remove_dir_all(&dir).with_context(|| format!("remove {}", dir.display()))?;
    }
    let sim = lrab_sim::serve(
        "127.0.0.1:0",
        lrab_sim::SimConfig {
            seed,
            pack: Some(opts.pack_dir.clone()),
            profiles: Some(vec![prof]),
            time_scale: opts.time_scale,
            ..Default::default()
        },
    )?;
    let spec = lrab_records::RunSpec {
        arms: arms.to_vec(),
        models: vec![model],
        tasks: opts.tasks.clone().unwrap_or_default(),
        // the cache key of a calibration cell does not depend on the order cells run in
        order: crate::run::matrix::Order::Matrix,
        backend: sim.url(),
        // nothing of a sim run writes in the background: a short quiet-wait suffices
        quiet_poll_ms: 100,
        quiet_stable_ms: 400,
        quiet_max_ms: 5_000,
        sim_seed: seed,
        pack: opts.pack_dir.display().to_string(),
        arms_dir: opts.arms_dir.display().to_string(),
        ..Default::default()
    };
    let session = run::Session {
        out_root,
        run_id: Some(key),
        jobs: opts.jobs,
        backend_wait: Duration::from_secs(30),
        cell_backend_wait: Duration::from_secs(30),
        ..Default::default()
    };
    if resuming {
        eprintln!(
            "calibrate: resuming the interrupted evaluation {}",
            dir.display()
        );
    }
    let summary = run::execute(&spec, &session, resuming.then_some(dir.as_path()))?;
    if !summary.simulated {
        bail!("the verification backend was not recognised as simulated");
    }
    Ok(summary.run_dir)
}

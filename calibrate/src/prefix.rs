//! `score(first k steps)`: the reference solution of every task applied step by step to a
//! fresh workdir and scored with the real scorer after each step. Cached by pack content
//! under `~/.cache/lrab/calibrate/`, since the pack rarely changes and the tasks' own
//! commands (pytest, python) take a while.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use lrab_sim::{Step, TaskIndex};

use super::analytic::TaskShape;

fn cache_dir() -> PathBuf {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    home.join(".cache/lrab/calibrate")
}

/// A hash of every file of the pack (names and bytes), for the cache key.
fn pack_hash(root: &Path) -> String {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut h = lrab_util::FNV1A_START;
    let mut eat = |b: &[u8]| h = lrab_util::fnv1a(h, b);
    for f in files {
        eat(f
            .strip_prefix(root)
            .unwrap_or(&f)
            .to_string_lossy()
            .as_bytes());
        eat(&std::fs::read(&f).unwrap_or_default());
    }
    format!("{h:016x}")
}

fn apply(step: &Step, wd: &Path) -> Result<()> {
    match step {
        Step::Write { path, bytes } => {
            let p = wd.join(path);
            if let Some(d) = p.parent() {
                std::fs::create_dir_all(d)?;
            }
            std::fs::write(&p, bytes).with_context(|| format!("write {}", p.display()))
        }
        Step::Run { command } => {
            lrab_tasks::process::run_shell(command, wd, Duration::from_secs(300))
                .with_context(|| format!("run {command}"))?;
            Ok(())
        }
    }
}

/// The task shapes of a pack (prefix scores computed or read from the cache).
pub fn shapes(pack_dir: &Path, progress: bool) -> Result<Vec<TaskShape>> {
    let pack = lrab_tasks::Pack::load(pack_dir).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (index, notes) = TaskIndex::from_pack(pack_dir);
    if let Some(n) = notes.first() {
        anyhow::bail!("task pack {}: {n}", pack_dir.display());
    }
    let cache = cache_dir().join(format!("prefix-{}.json", pack_hash(pack_dir)));
    let cached: Option<std::collections::BTreeMap<String, Vec<f64>>> = std::fs::read(&cache)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let mut scores = cached.clone().unwrap_or_default();
    let mut out = Vec::new();
    for plan in &index.plans {
        let task = pack
            .get(&plan.id)
            .with_context(|| format!("task {}", plan.id))?;
        if !scores.contains_key(&plan.id) {
            if progress {
                eprintln!(
                    "calibrate: scoring the reference of {} step by step",
                    plan.id
                );
            }
            let tmp = tempfile::tempdir()?;
            let wd = tmp.path().join("work");
            let mat = lrab_tasks::materialize(&pack, task, &wd, None)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let score = |wd: &Path| {
                lrab_scorer::score(task, &mat.checks, wd)
                    .map(|s| s.total)
                    .unwrap_or(0.0)
            };
            let mut v = vec![score(&wd)];
            for s in &plan.steps {
                apply(s, &wd)?;
                v.push(score(&wd));
            }
            scores.insert(plan.id.clone(), v);
        }
        out.push(TaskShape::new(
            &plan.id,
            plan.tier,
            &task.render_prompt(),
            &plan.steps,
            scores[&plan.id].clone(),
        ));
    }
    if cached.as_ref() != Some(&scores) {
        let _ = std::fs::create_dir_all(cache_dir());
        let _ = std::fs::write(&cache, serde_json::to_vec_pretty(&scores)?);
    }
    Ok(out)
}

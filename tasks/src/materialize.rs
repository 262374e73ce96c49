//! Building a fresh workdir for a task and resolving its checks for scoring.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::TaskError;
use crate::fsutil::{self, basename};
use crate::pack::{Pack, Task};
use crate::spec::CheckSpec;
use crate::truth;

/// The checks of a task with truth placeholders expanded for one seed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResolvedChecks {
    /// Milestone checks.
    pub milestones: Vec<CheckSpec>,
    /// Final checks.
    pub finals: Vec<CheckSpec>,
}

/// Result of [`materialize`].
#[derive(Debug, Clone)]
pub struct Materialized {
    /// The workdir written.
    pub workdir: PathBuf,
    /// The seed used (`None` for tasks without a generator).
    pub seed: Option<u64>,
    /// Files written, relative to the workdir, sorted (inputs, generated files, task_input.txt).
    pub files: Vec<String>,
    /// The task's checks for this seed.
    pub checks: ResolvedChecks,
}

/// Generated inputs and truths for a task at a seed (`None` = the task's default seed).
pub fn generated(
    task: &Task,
    seed: Option<u64>,
) -> Result<Option<(u64, lrab_generators::Generated)>, TaskError> {
    let Some(g) = &task.spec.generator else {
        if seed.is_some() {
            return Err(TaskError::SeedWithoutGenerator {
                task: task.spec.id.clone(),
            });
        }
        return Ok(None);
    };
    let s = seed.unwrap_or(g.seed);
    let out = lrab_generators::generate(&g.name, s).map_err(|e| TaskError::Generator {
        name: g.name.clone(),
        message: e.to_string(),
    })?;
    Ok(Some((s, out)))
}

/// Checks with placeholders expanded from generator truth.
pub fn resolve_with(
    task: &Task,
    truth_map: Option<&BTreeMap<String, Vec<String>>>,
) -> Result<ResolvedChecks, TaskError> {
    let mut milestones = task.spec.milestones.clone();
    let mut finals = task.spec.finals.clone();
    let empty = BTreeMap::new();
    let t = truth_map.unwrap_or(&empty);
    for (group, list) in [("milestones", &mut milestones), ("finals", &mut finals)] {
        truth::expand(list, t).map_err(|crate::MissingTruth(key)| TaskError::UnknownTruth {
            file: task.toml_path(),
            field: group.to_string(),
            key,
            generator: task
                .spec
                .generator
                .as_ref()
                .map(|g| g.name.clone())
                .unwrap_or_default(),
        })?;
    }
    Ok(ResolvedChecks { milestones, finals })
}

/// Resolved checks for a seed (runs the generator for generated tasks).
pub fn resolve_checks(task: &Task, seed: Option<u64>) -> Result<ResolvedChecks, TaskError> {
    let g = generated(task, seed)?;
    resolve_with(task, g.as_ref().map(|(_, g)| &g.truth))
}

/// Materializes into an empty or absent `workdir` (a non-empty one is refused).
pub fn materialize(
    pack: &Pack,
    task: &Task,
    workdir: &Path,
    seed: Option<u64>,
) -> Result<Materialized, TaskError> {
    materialize_with(pack, task, workdir, seed, false)
}

/// Like [`materialize`]; with `wipe`, an existing non-empty workdir is deleted first.
pub fn materialize_with(
    pack: &Pack,
    task: &Task,
    workdir: &Path,
    seed: Option<u64>,
    wipe: bool,
) -> Result<Materialized, TaskError> {
    // Generate first: a bad seed or manifest mismatch must not leave a half-built workdir.
    let g = generated(task, seed)?;
    if let (Some((s, gen)), Some(spec)) = (&g, &task.spec.generator) {
        if *s == spec.seed {
            let mpath = task.dir.join(crate::MANIFEST);
            let text = std::fs::read_to_string(&mpath).map_err(|e| TaskError::io(&mpath, e))?;
            let m = fsutil::parse_manifest(&text).map_err(|d| TaskError::ManifestMismatch {
                manifest: mpath.clone(),
                detail: d.to_string(),
            })?;
            if let Some(d) = fsutil::manifest_diff(&gen.files, &m) {
                return Err(TaskError::ManifestMismatch {
                    manifest: mpath,
                    detail: d,
                });
            }
        }
    }
    let checks = resolve_with(task, g.as_ref().map(|(_, g)| &g.truth))?;

    prepare_workdir(pack, workdir, wipe)?;
    let mut files = Vec::new();
    for input in &task.spec.inputs {
        let src = pack.fixtures_dir().join(input);
        let dst = workdir.join(basename(input));
        for p in fsutil::copy_tree(&src, &dst)? {
            files.push(rel(workdir, &p));
        }
    }
    if let Some((_, gen)) = &g {
        for (path, bytes) in &gen.files {
            fsutil::write_file(&workdir.join(path), bytes)?;
            files.push(path.clone());
        }
    }
    fsutil::write_file(
        &workdir.join(crate::TASK_INPUT),
        task.render_prompt().as_bytes(),
    )?;
    files.push(crate::TASK_INPUT.to_string());
    files.sort();
    Ok(Materialized {
        workdir: workdir.to_path_buf(),
        seed: g.map(|(s, _)| s),
        files,
        checks,
    })
}

fn rel(base: &Path, p: &Path) -> String {
    p.strip_prefix(base)
        .unwrap_or(p)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn prepare_workdir(pack: &Pack, workdir: &Path, wipe: bool) -> Result<(), TaskError> {
    if workdir.exists() {
        if !workdir.is_dir() {
            return Err(TaskError::Invalid(format!(
                "{} exists and is not a folder",
                workdir.display()
            )));
        }
        let non_empty = std::fs::read_dir(workdir)
            .map_err(|e| TaskError::io(workdir, e))?
            .next()
            .is_some();
        if non_empty {
            if !wipe {
                return Err(TaskError::WorkdirNotEmpty(workdir.to_path_buf()));
            }
            // Never wipe the pack itself or anything containing it.
            let wd = workdir
                .canonicalize()
                .map_err(|e| TaskError::io(workdir, e))?;
            let root = pack
                .root
                .canonicalize()
                .unwrap_or_else(|_| pack.root.clone());
            if root.starts_with(&wd) || wd.parent().is_none() {
                return Err(TaskError::Invalid(format!(
                    "refusing to wipe {}",
                    wd.display()
                )));
            }
            std::fs::remove_dir_all(workdir).map_err(|e| TaskError::io(workdir, e))?;
        }
    }
    std::fs::create_dir_all(workdir).map_err(|e| TaskError::io(workdir, e))
}

//! Step 1 of a run: the plan. The run specification ([`RunSpec`]) resolved — arm groups
//! expanded, default models and tasks filled in, every name checked, paths made absolute — and
//! expanded into the ordered cells; for a run, also validated before anything is written: every
//! task's checks resolved (kept here, so an attempt scores with exactly these), the scorer's
//! needs met on this machine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use lrab_records::RunSpec;
use lrab_tasks::{Pack, ResolvedChecks};

use super::arms::{self, Arm};
use super::backend::{Backend, BackendOptions, BackendSpec};
use super::backend_api::DEFAULT_KEY_ENV;
use super::matrix::{self, Cell, Shard};

/// The resolved, validated work of a run (before any cell starts).
pub struct Plan {
    /// The specification resolved: what the manifest records (arms, models and tasks named,
    /// paths absolute, the backend as it was started).
    pub spec: RunSpec,
    pub arms: Vec<Arm>,
    /// Arms of a group left out because they are not installed.
    pub skipped_arms: Vec<String>,
    pub pack: Pack,
    /// The cells this runner runs (its shard's), in plan order.
    pub cells: Vec<Cell>,
    /// Each planned task's resolved checks (filled by [`Plan::resolve_checks`]).
    pub checks: BTreeMap<String, ResolvedChecks>,
}

/// The task pack folder a spec names (empty: `LRAB_PACK` or the built-in pack).
pub fn pack_dir(spec: &RunSpec) -> PathBuf {
    match spec.pack.as_str() {
        "" => Pack::builtin_dir(),
        p => PathBuf::from(p),
    }
}

/// The arm files folder a spec names (empty: `LRAB_ARMS` or the suite's arms/).
pub fn arms_dir(spec: &RunSpec) -> PathBuf {
    match spec.arms_dir.as_str() {
        "" => arms::default_dir(),
        p => PathBuf::from(p),
    }
}

/// The backend a spec names.
pub fn backend_spec(spec: &RunSpec) -> Result<BackendSpec> {
    spec.backend.parse().map_err(anyhow::Error::msg)
}

/// The shard a spec names.
pub fn shard(spec: &RunSpec) -> Result<Option<Shard>> {
    (spec.shard.as_deref().map(str::parse))
        .transpose()
        .map_err(anyhow::Error::msg)
}

/// The variable holding an OpenAI backend's key.
pub fn key_env(spec: &RunSpec) -> &str {
    spec.backend_key_env.as_deref().unwrap_or(DEFAULT_KEY_ENV)
}

/// How the backends are reached and what translated requests carry.
pub fn backend_options(spec: &RunSpec) -> BackendOptions {
    BackendOptions {
        api: spec.backend_api,
        key_env: key_env(spec).to_string(),
        think: spec.think,
        num_ctx: spec.num_ctx,
    }
}

/// The arms a spec selects: explicit names (each must exist, and with `require_installed` be
/// installed), or a group (`all`, `paper`, …, or none given: all, one name per distinct arm)
/// whose uninstalled members are left out with a note. Returns (arms, skipped).
fn select_arms(spec: &RunSpec, require_installed: bool) -> Result<(Vec<Arm>, Vec<String>)> {
    let all = arms::load_dir(&arms_dir(spec))?;
    let group: Option<Vec<String>> = match spec.arms.as_slice() {
        [g] if g == "all" => Some(arms::distinct_names(&all)),
        [g] if matrix::arm_group(g).is_some() => Some(
            matrix::arm_group(g)
                .unwrap_or_default()
                .into_iter()
                .filter(|n| all.iter().any(|a| a.name == *n))
                .map(str::to_string)
                .collect(),
        ),
        [] => Some(arms::distinct_names(&all)),
        _ => None,
    };
    let Some(names) = group else {
        matrix::no_duplicates("arm", &spec.arms)?;
        let sel = arms::select(&all, &spec.arms)?;
        if require_installed {
            if let Some(a) = sel.iter().find(|a| a.locate().is_none()) {
                bail!(
                    "arm '{}' is not installed: program '{}' not found next to lrab or on PATH{}. {}",
                    a.name,
                    a.program,
                    a.bin_env.as_ref().map(|v| format!(" (or set ${v})")).unwrap_or_default(),
                    a.install_hint
                );
            }
        }
        return Ok((sel, Vec::new()));
    };
    let (ok, missing): (Vec<Arm>, Vec<Arm>) = arms::select(&all, &names)?
        .into_iter()
        .partition(|a| !require_installed || a.locate().is_some());
    if ok.is_empty() {
        bail!("no arm is installed (see `lrab arms check`)");
    }
    Ok((ok, missing.into_iter().map(|a| a.name).collect()))
}

/// The tasks a spec selects (none given: every valid task of the pack); an unknown or invalid
/// one is an error naming it.
fn select_tasks(
    spec: &RunSpec,
    pack: &Pack,
    problems: &[lrab_tasks::Problem],
) -> Result<Vec<String>> {
    if spec.tasks.is_empty() {
        if pack.tasks.is_empty() {
            bail!("pack {} has no valid task", pack.root.display());
        }
        return Ok(pack.tasks.iter().map(|t| t.spec.id.clone()).collect());
    }
    matrix::no_duplicates("task", &spec.tasks)?;
    if let Some(id) = spec.tasks.iter().find(|id| pack.get(id).is_none()) {
        let mine: Vec<String> = problems
            .iter()
            .filter(|p| p.file.starts_with(pack.root.join(id)))
            .map(|p| format!("  {p}"))
            .collect();
        if mine.is_empty() {
            bail!(
                "unknown task '{id}' in pack {} (known: {})",
                pack.root.display(),
                (pack.tasks.iter().map(|t| t.spec.id.as_str()))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        bail!("task {id} is invalid:\n{}", mine.join("\n"));
    }
    Ok(spec.tasks.clone())
}

/// The models a spec selects (none given: the simulator's four on a simulated backend, else
/// upstream's four).
fn select_models(spec: &RunSpec, simulated_default: bool) -> Result<Vec<String>> {
    let default: &[&str] = match simulated_default {
        true => &matrix::SIM_MODELS,
        false => &matrix::UPSTREAM_MODELS,
    };
    if spec.models.is_empty() {
        return Ok(default.iter().map(|s| s.to_string()).collect());
    }
    matrix::no_duplicates("model", &spec.models)?;
    Ok(spec.models.clone())
}

/// A path as an absolute string (so `--resume` works from any folder).
fn absolute(p: &Path) -> String {
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

/// Resolves `spec` into the plan; every bad name is an error here. `simulated_default`: the
/// default models are the simulator's.
pub fn resolve(spec: &RunSpec, simulated_default: bool, require_installed: bool) -> Result<Plan> {
    let (arms, skipped_arms) = select_arms(spec, require_installed)?;
    let (pack, problems) = Pack::load_lenient(pack_dir(spec));
    let tasks = select_tasks(spec, &pack, &problems)?;
    let models = select_models(spec, simulated_default)?;
    if spec.repeats == 0 {
        bail!("--repeats must be at least 1");
    }
    let names: Vec<String> = arms.iter().map(|a| a.name.clone()).collect();
    let mut cells = matrix::expand_in(spec.order, &names, &models, &tasks, spec.repeats);
    if let Some(s) = shard(spec)? {
        cells = matrix::shard(&cells, s);
    }
    let resolved = RunSpec {
        arms: names,
        models,
        tasks,
        pack: absolute(&pack_dir(spec)),
        arms_dir: absolute(&arms_dir(spec)),
        backend_key_env: (key_env(spec) != DEFAULT_KEY_ENV).then(|| key_env(spec).to_string()),
        ..spec.clone()
    };
    Ok(Plan {
        spec: resolved,
        arms,
        skipped_arms,
        pack,
        cells,
        checks: BTreeMap::new(),
    })
}

impl Plan {
    /// Records the backend the run uses: a URL (list) as given, else the started backend's
    /// label (`sim`, `ollama`).
    pub fn set_backend(&mut self, given: &BackendSpec, started: &Backend) {
        self.spec.backend = match given {
            BackendSpec::Url(u) => u.clone(),
            BackendSpec::Urls(v) => v.join(","),
            _ => started.label.clone(),
        };
    }

    /// Resolves every task's checks: every task must materialize before any cell starts (bad
    /// generator, manifest…), and the attempts score with what is resolved here.
    pub fn resolve_checks(&mut self) -> Result<()> {
        for id in &self.spec.tasks {
            let t = self.pack.get(id).expect("validated");
            let c = lrab_tasks::resolve_checks(t, None).with_context(|| format!("task {id}"))?;
            self.checks.insert(id.clone(), c);
        }
        Ok(())
    }

    /// Refuses a run whose planned tasks have checks that need a program or Python module this
    /// machine lacks: scoring them would blame the arms for the scorer's machine. The needs
    /// come from the scorer (`lrab_scorer::needs_of_task`), derived from the check kinds.
    pub fn scorer_preflight(&self) -> Result<()> {
        let planned: std::collections::BTreeSet<&str> =
            self.cells.iter().map(|c| c.task.as_str()).collect();
        let specs = planned
            .into_iter()
            .filter_map(|id| self.pack.get(id).map(|t| &t.spec));
        let lines: Vec<String> = lrab_scorer::missing_for_tasks(specs)
            .into_iter()
            .map(|(m, tasks)| {
                format!(
                    "  {}",
                    m.line(&format!("the checks of {}", tasks.join(", ")))
                )
            })
            .collect();
        if lines.is_empty() {
            return Ok(());
        }
        bail!(
            "the scorer cannot score the planned tasks on this machine (nothing was run):\n{}\n\
             Install what is missing, or leave those tasks out with --tasks.",
            lines.join("\n")
        )
    }

    /// The arm named `name` (one of the plan's).
    pub fn arm(&self, name: &str) -> &Arm {
        self.arms
            .iter()
            .find(|a| a.name == name)
            .expect("planned arm")
    }
}

/// Writes `plan.jsonl` (one cell per line, in plan order).
pub fn write_plan(path: &Path, cells: &[Cell]) -> Result<()> {
    // the record error starts with the path: the message stays "write <path>: <why>"
    lrab_records::write_plan(path, cells).map_err(|e| anyhow::anyhow!("write {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `--resume` reads back (the resolved spec) resolves to itself: a resumed run plans
    /// the same cells with the same knobs.
    #[test]
    fn a_resolved_spec_resolves_to_itself() {
        let spec = RunSpec {
            arms: vec!["harness".into()],
            models: vec!["sim-4b".into()],
            tasks: vec!["WF-01".into(), "LH-03".into()],
            repeats: 2,
            shard: Some("1/2".into()),
            backend_key_env: Some(DEFAULT_KEY_ENV.into()),
            ..RunSpec::default()
        };
        let p = resolve(&spec, true, false).unwrap();
        assert_eq!(
            p.spec.backend_key_env, None,
            "the default key variable is not recorded"
        );
        assert!(Path::new(&p.spec.pack).is_absolute() && Path::new(&p.spec.arms_dir).is_absolute());
        assert_eq!(p.cells.len(), 2, "4 cells, shard 1 of 2");
        let again = resolve(&p.spec, false, false).unwrap();
        assert_eq!(again.spec, p.spec);
        assert_eq!(again.cells, p.cells);
    }

    #[test]
    fn empty_lists_take_the_defaults() {
        let p = resolve(&RunSpec::default(), true, false).unwrap();
        assert_eq!(p.spec.models, matrix::SIM_MODELS);
        assert_eq!(p.spec.tasks.len(), p.pack.tasks.len());
        assert!(p.spec.arms.contains(&"harness".to_string()));
        let real = resolve(&RunSpec::default(), false, false).unwrap();
        assert_eq!(real.spec.models, matrix::UPSTREAM_MODELS);
    }
}

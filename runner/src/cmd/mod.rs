//! Subcommands, one module each, plus the helpers they share.

pub mod ablate;
pub mod analyze;
pub mod arms;
pub mod bench;
pub mod calibrate;
pub mod check;
pub mod data;
pub mod doctor;
pub mod generate;
pub mod import_mingbird;
pub mod merge;
pub mod plan;
pub mod proxy;
pub mod run;
pub mod safety;
pub mod score;
pub mod sim;
pub mod tasks;
pub mod tau2;

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use lrab_tasks::{Pack, Problem, Task};

/// Process exit status of a subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok = 0,
    /// Checks ran and some failed.
    Failures = 1,
    /// Bad usage, bad input, or an invalid pack.
    Usage = 2,
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e as u8)
    }
}

/// `--pack`, else `LRAB_PACK`, else the built-in pack.
pub fn pack_dir(opt: Option<&Path>) -> PathBuf {
    opt.map(Path::to_path_buf).unwrap_or_else(Pack::builtin_dir)
}

/// Prints problems to stderr, one per line.
pub fn print_problems(problems: &[Problem]) {
    for p in problems {
        eprintln!("invalid: {p}");
    }
}

/// Problems that belong to task `id` (files under `<pack>/<id>/`).
pub fn problems_of<'a>(root: &Path, id: &str, problems: &'a [Problem]) -> Vec<&'a Problem> {
    let dir = root.join(id);
    problems
        .iter()
        .filter(|p| p.file.starts_with(&dir))
        .collect()
}

/// Loads the pack and finds one task; an invalid or unknown task is an error naming the problems.
pub fn load_task(pack_opt: Option<&Path>, id: &str) -> Result<(Pack, Task)> {
    let root = pack_dir(pack_opt);
    let (pack, problems) = Pack::load_lenient(&root);
    if let Some(t) = pack.get(id) {
        let t = t.clone();
        return Ok((pack, t));
    }
    let mine = problems_of(&root, id, &problems);
    if !mine.is_empty() {
        let list: Vec<String> = mine.iter().map(|p| format!("  {p}")).collect();
        bail!("task {id} is invalid:\n{}", list.join("\n"));
    }
    let known: Vec<&str> = pack.tasks.iter().map(|t| t.spec.id.as_str()).collect();
    bail!(
        "unknown task '{id}' in pack {} (known: {})",
        root.display(),
        known.join(", ")
    )
}

//! Reference and partial solutions: files copied into a workdir, then shell commands.

use std::path::Path;
use std::time::Duration;

use crate::error::TaskError;
use crate::fsutil;
use crate::pack::Task;
use crate::process;

/// Time allowed for each solution command.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(300);

/// Which solution of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolutionKind {
    /// The full solution (`reference/`).
    Reference,
    /// The partial solution (`partial/`).
    Partial,
}

impl SolutionKind {
    /// Folder and table name (`reference` / `partial`).
    pub fn name(self) -> &'static str {
        match self {
            SolutionKind::Reference => "reference",
            SolutionKind::Partial => "partial",
        }
    }
}

/// A solution as data: files (relative path, bytes; sorted) and commands in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Solution {
    /// Files: relative path and bytes, sorted.
    pub files: Vec<(String, Vec<u8>)>,
    /// Commands run after the files are written, in order.
    pub commands: Vec<String>,
}

impl Task {
    /// Reads `reference/files/**` or `partial/files/**` and the matching commands.
    pub fn solution(&self, kind: SolutionKind) -> Result<Solution, TaskError> {
        let spec = match kind {
            SolutionKind::Reference => &self.spec.reference,
            SolutionKind::Partial => &self.spec.partial,
        };
        let files_dir = self.dir.join(kind.name()).join("files");
        if spec.is_none() && !files_dir.is_dir() {
            return Err(TaskError::NoSolution {
                task: self.spec.id.clone(),
                kind: kind.name(),
            });
        }
        let mut files = Vec::new();
        if files_dir.is_dir() {
            for rel in fsutil::walk_files(&files_dir)? {
                let p = files_dir.join(&rel);
                let bytes = std::fs::read(&p).map_err(|e| TaskError::io(&p, e))?;
                files.push((rel, bytes));
            }
        }
        let shared = spec.as_ref().map(|s| s.from_reference.as_slice());
        for rel in shared.unwrap_or_default() {
            let p = self.dir.join("reference").join("files").join(rel);
            let bytes = std::fs::read(&p).map_err(|e| TaskError::io(&p, e))?;
            files.push((rel.clone(), bytes));
        }
        files.sort();
        Ok(Solution {
            files,
            commands: spec
                .as_ref()
                .map(|s| s.commands.clone())
                .unwrap_or_default(),
        })
    }
}

/// Writes the solution's files into `workdir`, then runs each command (`sh -c`, cwd = workdir,
/// own process group, 300 s each). A command that fails or times out is an error: solution
/// commands are meant to succeed (authors append `|| true` where a failure is expected).
pub fn apply_solution(
    workdir: &Path,
    solution: &Solution,
) -> Result<Vec<process::Outcome>, TaskError> {
    apply_solution_with_timeout(workdir, solution, COMMAND_TIMEOUT)
}

/// [`apply_solution`] with an explicit per-command timeout.
pub fn apply_solution_with_timeout(
    workdir: &Path,
    solution: &Solution,
    timeout: Duration,
) -> Result<Vec<process::Outcome>, TaskError> {
    if !workdir.is_dir() {
        return Err(TaskError::Invalid(format!(
            "workdir {} does not exist",
            workdir.display()
        )));
    }
    for (rel, bytes) in &solution.files {
        if !fsutil::is_safe_relative(rel) {
            return Err(TaskError::Invalid(format!(
                "solution file '{rel}' escapes the workdir"
            )));
        }
        fsutil::write_file(&workdir.join(rel), bytes)?;
    }
    let mut outcomes = Vec::new();
    for (i, cmd) in solution.commands.iter().enumerate() {
        let o = process::run_shell(cmd, workdir, timeout).map_err(|e| TaskError::io(workdir, e))?;
        if !o.success() {
            let why = if o.timed_out {
                format!("timed out after {}s", timeout.as_secs())
            } else {
                format!("exited with {:?}", o.code)
            };
            return Err(TaskError::Invalid(format!(
                "solution command {} `{cmd}` {why}; output tail: {}",
                i + 1,
                o.tail(600)
            )));
        }
        outcomes.push(o);
    }
    Ok(outcomes)
}

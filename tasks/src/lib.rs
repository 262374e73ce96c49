//! LRAB task packs: spec types, loader, validation, prompt rendering, materialization.
//!
//! The on-disk contract is `docs/task-format.md`. Everything here is deterministic: sorted
//! iteration, no timestamps, generated inputs only from explicit seeds.

#![deny(missing_docs)]

mod error;
mod fsutil;
pub mod materialize;
mod mingbird;
mod pack;
pub mod process;
mod prompt;
mod solution;
mod spec;
mod truth;

pub use error::{CheckTableError, LoadError, ManifestError, MissingTruth, Problem, TaskError};
pub use fsutil::{basename, copy_tree, crlf_to_lf, format_manifest, walk_files, write_file};
pub use materialize::{
    generated, materialize, materialize_with, resolve_checks, Materialized, ResolvedChecks,
};
pub use mingbird::{
    import_task as import_mingbird_task, task_jsons as mingbird_task_jsons, Imported,
};
pub use pack::{content_hash, load_task, Pack, Task, MANIFEST, TASK_INPUT};
pub use prompt::{FOOTER as PROMPT_FOOTER, HEADER as PROMPT_HEADER};
pub use solution::{apply_solution, apply_solution_with_timeout, Solution, SolutionKind};
pub use spec::{
    to_toml_string, Check, CheckSpec, Expect, GeneratorSpec, SolutionSpec, TaskSpec, KINDS,
};

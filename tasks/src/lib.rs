//! LRAB task packs: spec types, loader, validation, prompt rendering, materialization.
//!
//! The on-disk contract is `docs/task-format.md`. Everything here is deterministic: sorted
//! iteration, no timestamps, generated inputs only from explicit seeds.

#![deny(missing_docs)]

pub mod error;
pub mod fsutil;
pub mod materialize;
pub mod mingbird;
pub mod pack;
pub mod process;
pub mod prompt;
pub mod solution;
pub mod spec;
pub mod truth;

pub use error::{CheckTableError, LoadError, ManifestError, MissingTruth, Problem, TaskError};
pub use materialize::{
    materialize, materialize_with, resolve_checks, Materialized, ResolvedChecks,
};
pub use pack::{Pack, Task, MANIFEST, TASK_INPUT};
pub use solution::{apply_solution, apply_solution_with_timeout, Solution, SolutionKind};
pub use spec::{
    to_toml_string, Check, CheckSpec, Expect, GeneratorSpec, SolutionSpec, TaskSpec, KINDS,
};

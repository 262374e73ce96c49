//! Command runner for checks: `sh -c` in the workdir, own process group, timeout, group kill,
//! lossy UTF-8 output. The mechanism lives in `lrab_tasks::process` (solutions need it too and
//! the dependency points tasks <- scorer); this module is the scorer's single entry point to it.

pub use lrab_tasks::process::{kill_group, run_argv, run_shell, Outcome, MAX_CAPTURE};

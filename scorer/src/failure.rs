//! Failure-mode classification of an attempt (docs/scoring.md, *Failure modes*), as a pure
//! function; the mode itself is `lrab_records::FailureMode`, the name every file uses.

use lrab_records::FailureMode;

/// The facts the classification needs about one attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptFacts {
    /// The runner killed the attempt at its budget.
    pub timed_out: bool,
    /// Exit code of the arm; `None` when it died from a signal.
    pub exit_code: Option<i32>,
    /// How long the attempt ran, in seconds.
    pub wall_seconds: f64,
    /// The scored total (ignored on timeout).
    pub total: f64,
    /// Files the agent produced: workdir files minus materialized inputs and `task_input.txt`.
    pub produced: Vec<String>,
    /// The transcript shows the agent read `task_input.txt`.
    pub read_task_file: bool,
}

/// Files that only show planning, not work.
pub const PLAN_ONLY: [&str; 2] = ["plan.md", "todo.json"];

/// Upstream's rules, in order: timeout; non-zero exit (crash under 60 s, else error); with a zero
/// total: nothing produced (stall if the task file was read, early_finish under 30 s, else
/// no_artifacts), or only plan files (early_finish); everything else completed.
pub fn classify(f: &AttemptFacts) -> FailureMode {
    if f.timed_out {
        return FailureMode::Timeout;
    }
    if f.exit_code != Some(0) {
        return if f.wall_seconds < 60.0 {
            FailureMode::Crash
        } else {
            FailureMode::Error
        };
    }
    if f.total == 0.0 {
        if f.produced.is_empty() {
            return if f.read_task_file {
                FailureMode::Stall
            } else if f.wall_seconds < 30.0 {
                FailureMode::EarlyFinish
            } else {
                FailureMode::NoArtifacts
            };
        }
        if f.produced.iter().all(|p| PLAN_ONLY.contains(&p.as_str())) {
            return FailureMode::EarlyFinish;
        }
    }
    FailureMode::Completed
}

/// Whether a transcript shows the task file being read (the stall signal).
pub fn transcript_read_task_file(transcript: &str) -> bool {
    transcript.contains(lrab_tasks::TASK_INPUT)
}

/// Files in `workdir` not among `materialized` (the list returned by `materialize`), sorted.
/// Hidden harness state (`.agent_state.json` …) is not an artifact.
pub fn produced_files(workdir: &std::path::Path, materialized: &[String]) -> Vec<String> {
    lrab_tasks::walk_files(workdir)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| !materialized.contains(p) && p != lrab_tasks::TASK_INPUT)
        .filter(|p| !p.split('/').any(|c| c.starts_with('.')))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> AttemptFacts {
        AttemptFacts {
            timed_out: false,
            exit_code: Some(0),
            wall_seconds: 100.0,
            total: 0.5,
            produced: vec!["report.md".into()],
            read_task_file: true,
        }
    }

    #[test]
    fn rules_in_order() {
        let mut f = facts();
        assert_eq!(classify(&f), FailureMode::Completed);
        f.timed_out = true;
        f.exit_code = Some(1);
        assert_eq!(classify(&f), FailureMode::Timeout);
        f.timed_out = false;
        f.wall_seconds = 59.0;
        assert_eq!(classify(&f), FailureMode::Crash);
        f.wall_seconds = 61.0;
        assert_eq!(classify(&f), FailureMode::Error);
        f.exit_code = None;
        assert_eq!(classify(&f), FailureMode::Error);
        f.exit_code = Some(0);
        f.total = 0.0;
        assert_eq!(classify(&f), FailureMode::Completed);
        f.produced = vec!["plan.md".into(), "todo.json".into()];
        assert_eq!(classify(&f), FailureMode::EarlyFinish);
        f.produced.clear();
        assert_eq!(classify(&f), FailureMode::Stall);
        f.read_task_file = false;
        assert_eq!(classify(&f), FailureMode::NoArtifacts);
        f.wall_seconds = 10.0;
        assert_eq!(classify(&f), FailureMode::EarlyFinish);
        f.total = 0.2;
        assert_eq!(classify(&f), FailureMode::Completed);
    }

    #[test]
    fn produced_excludes_inputs_and_hidden_state() {
        let d = tempfile::tempdir().unwrap();
        for f in ["in.csv", "task_input.txt", "out.md", ".agent_state.json"] {
            std::fs::write(d.path().join(f), "x").unwrap();
        }
        let p = produced_files(d.path(), &["in.csv".into(), "task_input.txt".into()]);
        assert_eq!(p, vec!["out.md".to_string()]);
        assert!(transcript_read_task_file("read_file task_input.txt"));
    }
}

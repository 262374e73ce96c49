//! Failure forms: the paper's ten per-cell flags (upstream's `failure_forms_2609.csv`), coded
//! by the published rules from typed per-cell fields (docs/statistics.md, "Failure forms").
//!
//! [`code`] is pure: it reads only [`Inputs`] and gives each [`Form`] yes, no or unknown.
//! A flag is unknown exactly when a field its rule needs is missing and the fields present do
//! not decide it (three-valued logic: a crash decides `platform_exit` without an exit code), so
//! a run without trajectories gets unknown forms, never guessed ones. [`table`] counts codings
//! per arm (and arm × model) in the paper's layout; [`agreement`] compares our coding with a
//! published one, row by row.

mod agreement;
mod table;

pub use agreement::{agreement, Agreement, Difference, FormAgreement};
pub use table::{table, ArmForms, Count, FormCell, FormsTable, Source, SourceKind};

use serde::{Serialize, Serializer};

/// The paper's per-cell budget of a WF task (tiers 1–3): 90 minutes.
pub const PAPER_BUDGET_WF_SECONDS: f64 = 5400.0;
/// The paper's per-cell budget of an LH task (tier 4): 180 minutes.
pub const PAPER_BUDGET_LH_SECONDS: f64 = 10800.0;

/// One failure form, in the paper's column order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// The arm crashed or exited with an error (`failure_mode` crash/error, or exit ≠ 0).
    PlatformExit,
    /// The cell ran out of its time budget (`timeout`, or wall time ≥ budget).
    BudgetExhausted,
    /// The model provider broke off (connection errors in the transcript).
    ProviderError,
    /// No tool call at all.
    NeverEngaged,
    /// The harness caught repeated calls / repeated output / empty turns at least once.
    Spin,
    /// At least one tool-argument or parse error the harness reported.
    FormatBreakdown,
    /// At least one context compaction or truncation event.
    ContextPressure,
    /// At least one finish the harness's gate rejected.
    FalseFinish,
    /// Score < 0.5 without a platform exit or an exhausted budget.
    EarlyStop,
    /// At least one artifact check failed.
    IncompleteDelivery,
}

impl Form {
    /// Every form, in the paper's order.
    pub const ALL: [Form; 10] = [
        Form::PlatformExit,
        Form::BudgetExhausted,
        Form::ProviderError,
        Form::NeverEngaged,
        Form::Spin,
        Form::FormatBreakdown,
        Form::ContextPressure,
        Form::FalseFinish,
        Form::EarlyStop,
        Form::IncompleteDelivery,
    ];

    /// The column name of the published file.
    pub fn name(self) -> &'static str {
        match self {
            Form::PlatformExit => "platform_exit",
            Form::BudgetExhausted => "budget_exhausted",
            Form::ProviderError => "provider_error",
            Form::NeverEngaged => "never_engaged",
            Form::Spin => "spin",
            Form::FormatBreakdown => "format_breakdown",
            Form::ContextPressure => "context_pressure",
            Form::FalseFinish => "false_finish",
            Form::EarlyStop => "early_stop",
            Form::IncompleteDelivery => "incomplete_delivery",
        }
    }

    /// The paper's row label (its Chinese labels, in English).
    pub fn label(self) -> &'static str {
        match self {
            Form::PlatformExit => "platform exit (crash / error exit)",
            Form::BudgetExhausted => "budget exhausted",
            Form::ProviderError => "provider disconnect (infrastructure)",
            Form::NeverEngaged => "zero tool contact",
            Form::Spin => "spin / loop intercepted",
            Form::FormatBreakdown => "format / argument breakdown",
            Form::ContextPressure => "context pressure events",
            Form::FalseFinish => "false finish rejected",
            Form::EarlyStop => "early stop (score < 0.5, no crash / timeout)",
            Form::IncompleteDelivery => "incomplete delivery (an artifact check failed)",
        }
    }

    /// The fields the form's rule reads: a source lacking one cannot check the form.
    pub fn fields(self) -> &'static [Field] {
        use Field::*;
        match self {
            Form::PlatformExit => &[FailureMode, Exit],
            Form::BudgetExhausted => &[FailureMode, Wall, Budget],
            Form::ProviderError => &[ProviderErrors],
            Form::NeverEngaged => &[ToolCalls],
            Form::Spin => &[SpinEvents],
            Form::FormatBreakdown => &[FmtArgErrors],
            Form::ContextPressure => &[CtxEvents],
            Form::FalseFinish => &[FinishRejections],
            Form::EarlyStop => &[Score, FailureMode, Exit, Wall, Budget],
            Form::IncompleteDelivery => &[Checks],
        }
    }
}

/// One per-cell field a rule reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    /// The cell's score.
    Score,
    /// Wall seconds.
    Wall,
    /// The time budget.
    Budget,
    /// The scorer's failure mode.
    FailureMode,
    /// The arm's exit.
    Exit,
    /// Tool calls counted from the trajectory.
    ToolCalls,
    /// Artifact checks passed / total.
    Checks,
    /// Spin markers (repeated-call interceptions, repeated output, empty turns).
    SpinEvents,
    /// Tool-argument / parse error markers.
    FmtArgErrors,
    /// Context compaction / truncation markers.
    CtxEvents,
    /// Finish-gate rejections.
    FinishRejections,
    /// Provider-disconnect markers.
    ProviderErrors,
}

impl Field {
    /// The column that records it in the published coding (`budget`: the protocol's).
    pub fn name(self) -> &'static str {
        match self {
            Field::Score => "score",
            Field::Wall => "wall_seconds",
            Field::Budget => "budget",
            Field::FailureMode => "failure_mode",
            Field::Exit => "exit_code",
            Field::ToolCalls => "tool_calls",
            Field::Checks => "artifact_checks_ok/total",
            Field::SpinEvents => "spin_events",
            Field::FmtArgErrors => "fmt_arg_errors",
            Field::CtxEvents => "ctx_events",
            Field::FinishRejections => "finish_rejections",
            Field::ProviderErrors => "provider_errors",
        }
    }
}

/// How the arm's process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Exit {
    /// It exited with this code (upstream's `-9` is a kill seen as a code).
    Code(i64),
    /// The runner killed it (our cells.csv leaves the code empty then): not a clean exit.
    Killed,
}

/// The cell's time budget.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    /// A budget in seconds, compared with the wall time.
    Seconds(f64),
    /// The runner enforces the budget and records exactly the cells it stopped as
    /// `failure_mode = timeout` (our runner), so the failure mode alone decides.
    Enforced,
}

impl Budget {
    /// The paper's budget for a task id: 180 minutes for `LH-…`, 90 for the rest.
    pub fn paper(task: &str) -> Budget {
        if task.to_ascii_uppercase().starts_with("LH") {
            Budget::Seconds(PAPER_BUDGET_LH_SECONDS)
        } else {
            Budget::Seconds(PAPER_BUDGET_WF_SECONDS)
        }
    }
}

/// Artifact checks of the scorer: how many passed of how many.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Checks {
    /// Checks passed.
    pub passed: u64,
    /// Checks run.
    pub total: u64,
}

/// The per-cell fields the rules read; `None` = not recorded for this cell.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Inputs {
    /// Score in [0, 1].
    pub score: Option<f64>,
    /// Wall seconds.
    pub wall_seconds: Option<f64>,
    /// Time budget.
    pub budget: Option<Budget>,
    /// The scorer's failure mode (`completed`, `crash`, `error`, `timeout`, …).
    pub failure_mode: Option<String>,
    /// How the arm's process ended.
    pub exit: Option<Exit>,
    /// Tool calls from the trajectory.
    pub tool_calls: Option<u64>,
    /// Artifact checks.
    pub checks: Option<Checks>,
    /// Spin markers (the harness's own: repeated-call interceptions, repeated output, empty
    /// turns).
    pub spin_events: Option<u64>,
    /// Tool-argument / parse error markers of the harness's own scale (not an arm's generic
    /// "error" words: upstream leaves those uncoded).
    pub fmt_arg_errors: Option<u64>,
    /// Context compaction / truncation markers.
    pub ctx_events: Option<u64>,
    /// Finish-gate rejections.
    pub finish_rejections: Option<u64>,
    /// Provider-disconnect markers in the transcript.
    pub provider_errors: Option<u64>,
}

/// The ten flags of one cell: `Some(true)` set, `Some(false)` not set, `None` unknown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coding(pub [Option<bool>; 10]);

impl Coding {
    /// The flag of `f`.
    pub fn get(&self, f: Form) -> Option<bool> {
        self.0[f as usize]
    }

    /// Set the flag of `f`.
    pub fn set(&mut self, f: Form, v: Option<bool>) {
        self.0[f as usize] = v;
    }
}

impl Serialize for Coding {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(10))?;
        for f in Form::ALL {
            m.serialize_entry(f.name(), &self.get(f))?;
        }
        m.end()
    }
}

/// Kleene or: set when any side is set, unset when both are unset, else unknown.
fn or3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

/// Kleene and.
fn and3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn not3(a: Option<bool>) -> Option<bool> {
    a.map(|x| !x)
}

/// Code one cell by the published rules.
pub fn code(x: &Inputs) -> Coding {
    let mode = x.failure_mode.as_deref().map(str::to_ascii_lowercase);
    let crashed = mode.as_deref().map(|m| m == "crash" || m == "error");
    let bad_exit = x.exit.map(|e| e != Exit::Code(0));
    let platform_exit = or3(crashed, bad_exit);
    let timed_out = mode.as_deref().map(|m| m == "timeout");
    let over_budget = match x.budget {
        Some(Budget::Seconds(b)) => x.wall_seconds.map(|w| w >= b),
        Some(Budget::Enforced) => Some(false),
        None => None,
    };
    let budget_exhausted = or3(timed_out, over_budget);
    let low = x.score.map(|s| s < 0.5);
    let early_stop = and3(low, and3(not3(platform_exit), not3(budget_exhausted)));
    let any = |c: Option<u64>| c.map(|n| n >= 1);
    let mut c = Coding::default();
    c.set(Form::PlatformExit, platform_exit);
    c.set(Form::BudgetExhausted, budget_exhausted);
    c.set(Form::ProviderError, any(x.provider_errors));
    c.set(Form::NeverEngaged, x.tool_calls.map(|n| n == 0));
    c.set(Form::Spin, any(x.spin_events));
    c.set(Form::FormatBreakdown, any(x.fmt_arg_errors));
    c.set(Form::ContextPressure, any(x.ctx_events));
    c.set(Form::FalseFinish, any(x.finish_rejections));
    c.set(Form::EarlyStop, early_stop);
    c.set(
        Form::IncompleteDelivery,
        x.checks.map(|k| k.passed < k.total),
    );
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(score: f64) -> Inputs {
        Inputs {
            score: Some(score),
            wall_seconds: Some(100.0),
            budget: Some(Budget::paper("WF-01")),
            failure_mode: Some("completed".into()),
            exit: Some(Exit::Code(0)),
            tool_calls: Some(5),
            checks: Some(Checks {
                passed: 3,
                total: 4,
            }),
            ..Inputs::default()
        }
    }

    #[test]
    fn a_clean_low_score_is_an_early_stop() {
        let c = code(&done(0.2));
        assert_eq!(c.get(Form::EarlyStop), Some(true));
        assert_eq!(c.get(Form::PlatformExit), Some(false));
        assert_eq!(c.get(Form::BudgetExhausted), Some(false));
        assert_eq!(c.get(Form::IncompleteDelivery), Some(true));
        assert_eq!(c.get(Form::NeverEngaged), Some(false));
        // Counters not recorded: unknown, not "no".
        assert_eq!(c.get(Form::Spin), None);
        assert_eq!(c.get(Form::ProviderError), None);
        assert_eq!(code(&done(0.5)).get(Form::EarlyStop), Some(false));
    }

    #[test]
    fn a_crash_or_a_timeout_is_not_an_early_stop() {
        let mut x = done(0.0);
        x.failure_mode = Some("Error".into());
        x.exit = None;
        let c = code(&x);
        assert_eq!(c.get(Form::PlatformExit), Some(true));
        assert_eq!(c.get(Form::EarlyStop), Some(false));
        let mut x = done(0.0);
        x.failure_mode = Some("timeout".into());
        x.exit = Some(Exit::Killed);
        x.wall_seconds = None;
        let c = code(&x);
        assert_eq!(c.get(Form::BudgetExhausted), Some(true));
        assert_eq!(c.get(Form::PlatformExit), Some(true));
        assert_eq!(c.get(Form::EarlyStop), Some(false));
        let mut x = done(0.3);
        x.wall_seconds = Some(10800.0);
        x.budget = Some(Budget::paper("LH-02"));
        assert_eq!(code(&x).get(Form::BudgetExhausted), Some(true));
        x.budget = Some(Budget::paper("WF-02"));
        assert_eq!(code(&x).get(Form::BudgetExhausted), Some(true));
        x.wall_seconds = Some(5399.9);
        assert_eq!(code(&x).get(Form::BudgetExhausted), Some(false));
    }

    #[test]
    fn missing_fields_give_unknown_never_a_guess() {
        let mut x = done(0.1);
        x.exit = None;
        let c = code(&x);
        // `completed` without an exit code: the exit could still be non-zero.
        assert_eq!(c.get(Form::PlatformExit), None);
        assert_eq!(c.get(Form::EarlyStop), None);
        x.budget = None;
        assert_eq!(code(&x).get(Form::BudgetExhausted), None);
        // A high score decides early_stop whatever is missing.
        let x = Inputs {
            score: Some(0.9),
            ..Inputs::default()
        };
        let c = code(&x);
        assert_eq!(c.get(Form::EarlyStop), Some(false));
        assert!(Form::ALL
            .iter()
            .filter(|f| **f != Form::EarlyStop)
            .all(|f| c.get(*f).is_none()));
        // Our runner enforces the budget: a non-timeout is not exhausted, whatever the wall.
        let mut x = done(0.1);
        x.budget = Some(Budget::Enforced);
        x.wall_seconds = None;
        assert_eq!(code(&x).get(Form::BudgetExhausted), Some(false));
        assert_eq!(code(&x).get(Form::EarlyStop), Some(true));
    }

    #[test]
    fn counters_set_their_forms_at_one() {
        let mut x = done(1.0);
        x.spin_events = Some(1);
        x.fmt_arg_errors = Some(0);
        x.ctx_events = Some(3);
        x.finish_rejections = Some(0);
        x.provider_errors = Some(2);
        x.tool_calls = Some(0);
        let c = code(&x);
        assert_eq!(c.get(Form::Spin), Some(true));
        assert_eq!(c.get(Form::FormatBreakdown), Some(false));
        assert_eq!(c.get(Form::ContextPressure), Some(true));
        assert_eq!(c.get(Form::FalseFinish), Some(false));
        assert_eq!(c.get(Form::ProviderError), Some(true));
        assert_eq!(c.get(Form::NeverEngaged), Some(true));
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.starts_with("{\"platform_exit\":false,"), "{json}");
    }
}

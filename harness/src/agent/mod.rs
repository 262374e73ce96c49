//! The agent loop, generic over [`Model`]. One turn (`turn`): clock check → tool list →
//! context check → model call (retry ladder) → format rescue / empty ladder / false-completion →
//! tool calls (`dispatch`) through the anti-loop and the finish gate → stall watch → atomic
//! checkpoint (`state`: what survives a kill, and the resume).

mod dispatch;
mod guards;
mod inflight;
mod lost;
mod offer;
mod state;
mod state_journal;
mod turn;

pub use dispatch::CallResult;
pub use state::{State, STATE_VERSION};
pub use state_journal::{read_checkpoint, CheckpointError};

use crate::backend::{BackendError, Model, RetryPolicy};
use crate::events::EventLog;
use crate::mechanisms::report::{FinalReport, Level};
use crate::mechanisms::resilience;
use crate::mechanisms::tiering::Tier;
use crate::mechanisms::{Ablations, Mechanism};
use crate::messages::{Message, Role};
use crate::tools::Toolbox;
use lrab_records::{Event, RunEnd};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How a run is set up.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    pub workdir: PathBuf,
    pub task: String,
    pub ablations: Ablations,
    pub max_turns: u32,
    pub time_budget_min: Option<f64>,
    pub num_ctx: u64,
    pub num_predict: u32,
    pub retry: RetryPolicy,
    /// Timeout of each test command the finish gate runs.
    pub test_timeout_s: u64,
    /// Print a line per turn to stdout (the transcript).
    pub verbose: bool,
    /// Run model-chosen shell commands even when no kernel confinement exists.
    pub allow_unconfined: bool,
    /// The operator's home whose credentials are hidden and refused (`None`: `$HOME`).
    pub real_home: Option<PathBuf>,
    /// The state folder, outside the workdir (`None`: `lrab_records::layout::default_state_dir`).
    pub state_dir: Option<PathBuf>,
    /// SearxNG-compatible JSON search endpoint; `None` (default): no web tools at all.
    pub web_search: Option<String>,
    /// How tools reach the model.
    pub tool_protocol: ToolProtocol,
    /// Where `num_ctx` came from (for the event log).
    pub num_ctx_source: String,
}

/// How tools reach the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolProtocol {
    /// Native tool definitions; switch to the text protocol if the server refuses tools.
    #[default]
    Auto,
    /// Native tool definitions only (a server refusing tools ends the run).
    Native,
    /// The text protocol from the start ([`crate::mechanisms::text_protocol`]).
    Text,
}

impl AgentConfig {
    pub fn new(workdir: &Path, task: &str) -> Self {
        AgentConfig {
            workdir: workdir.to_path_buf(),
            task: task.to_string(),
            ablations: Ablations::none(),
            max_turns: 200,
            time_budget_min: None,
            num_ctx: 32768,
            num_predict: resilience::OUTPUT_CAP,
            retry: RetryPolicy::default(),
            test_timeout_s: 180,
            verbose: false,
            allow_unconfined: false,
            real_home: None,
            state_dir: None,
            web_search: None,
            tool_protocol: ToolProtocol::Auto,
            num_ctx_source: "config".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// finish accepted.
    Finished,
    /// Chat tier: the question was answered.
    Answered,
    MaxTurns,
    TimeBudget,
    /// Stall watch or empty-turn ladder gave up.
    Stalled,
    /// The backend failed past the retry ladder (message kept).
    BackendFailed(String),
}

impl RunStatus {
    pub fn name(&self) -> &'static str {
        match self {
            RunStatus::Finished => "finished",
            RunStatus::Answered => "answered",
            RunStatus::MaxTurns => "max_turns",
            RunStatus::TimeBudget => "time_budget",
            RunStatus::Stalled => "stalled",
            RunStatus::BackendFailed(_) => "backend_failed",
        }
    }
}

#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub status: RunStatus,
    /// The backend error that ended the run, when that is what happened.
    pub backend_error: Option<BackendError>,
    pub report: FinalReport,
}

/// Why an agent could not start.
#[derive(Debug)]
pub enum StartError {
    Workdir(String),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Workdir(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for StartError {}

/// One run of the harness in one workdir.
pub struct Agent<M: Model> {
    pub cfg: AgentConfig,
    pub model: M,
    pub state: State,
    pub tools: Toolbox,
    pub events: EventLog,
    /// Injected so tests never wait for backoff.
    pub sleeper: Box<dyn FnMut(Duration)>,
    /// Seconds since this process started the run (injectable for clock tests).
    pub clock_fn: Box<dyn FnMut() -> f64>,
    /// Harness time per turn, model time excluded (for the benchmark).
    pub overheads: Vec<Duration>,
    /// Set when the run resumed from a checkpoint.
    pub resumed: bool,
    /// Warnings for stderr (e.g. a corrupt checkpoint was set aside).
    pub warnings: Vec<String>,
    named: Vec<String>,
    base_elapsed: f64,
    last_error: Option<BackendError>,
    ledger: dispatch::TestLedger,
    /// The previous request, for the shared-prefix numbers of the next.
    prefix: crate::prefix::PrefixTracker,
    /// Why the history was rewritten since the last request (reported with the next).
    rewrite: Option<String>,
    /// Messages the last request carried: those after it are new and may still be amended.
    sent: usize,
    /// The missing deliverables at a value of the workdir's change counter.
    missing: std::cell::RefCell<Option<(u64, Vec<String>)>>,
    /// What the last checkpoint wrote (the next one appends what changed).
    journal: state_journal::Journal,
    /// What the last state line shown said (a line that would say the same is left out).
    state_shown: Option<crate::mechanisms::state_line::Facts>,
}

/// What separates a nudge from the tool result it is appended to.
pub const NUDGE_SEP: &str = "\n\n";

/// `s` on one line, clipped to `n` characters (for the transcript and the event log).
fn short(s: &str, n: usize) -> String {
    lrab_util::clip_chars(&s.replace('\n', " "), n)
}

/// Appends a nudge to the text of the message it joins; when both end with the same
/// "Next action: …", it is said once, at the end.
fn join_nudge(content: &mut String, text: &str) {
    const NEXT: &str = "Next action: ";
    if let Some(i) = text.rfind(NEXT) {
        let action = text[i..].trim_end();
        if let Some(stem) = content.trim_end().strip_suffix(action) {
            content.truncate(stem.trim_end().len());
        }
    }
    content.push_str(NUDGE_SEP);
    content.push_str(text);
}

impl<M: Model> Agent<M> {
    fn on(&self, m: Mechanism) -> bool {
        self.cfg.ablations.on(m)
    }

    fn say(&self, line: &str) {
        if self.cfg.verbose {
            lrab_util::outln!("{line}");
        }
    }

    /// Tell the model something. After a round of tool calls the text goes at the end of the
    /// round's last tool result, which no request has carried yet: the history then only
    /// grows, and no user message arrives inside the tool loop (templates that re-render the
    /// earlier assistant turns after each user message would otherwise throw away the
    /// server's cached prefix). After a reply without a call the answer has to be a user turn
    /// (one per turn: further nudges join it).
    fn nudge(&mut self, text: String) {
        self.say(&format!("  [harness] {}", short(&text, 160)));
        let n = self.state.messages.len();
        match self.state.messages.last_mut() {
            // a second nudge for the same turn joins the first
            Some(last) if n > self.sent && (last.role == Role::Tool || last.injected) => {
                join_nudge(&mut last.content, &text);
            }
            _ => self.state.messages.push(Message::nudge(text)),
        }
    }

    /// Run to the end.
    pub fn run(&mut self) -> RunOutcome {
        if let Some(done) = self.state.done.clone() {
            // a relaunch after the run already ended: report it again, do nothing else
            return self.finalize(done);
        }
        let status = loop {
            if let Some(s) = self.step() {
                break s;
            }
        };
        self.finalize(status)
    }

    fn finalize(&mut self, status: RunStatus) -> RunOutcome {
        self.state.done = Some(status.clone());
        self.save_as(true);
        let report = FinalReport {
            status: status.name().to_string(),
            verification: self.state.verify.level(),
            turns: self.state.turn,
            tool_calls: self.state.tool_calls,
            missing_artifacts: if self.state.tier == Tier::Task {
                self.missing_artifacts()
            } else {
                vec![]
            },
            open_plan_items: self.state.plan.open_items(),
            tests: self.state.tests.clone(),
            mechanism_counts: self.events.counts.clone(),
            model_calls: self.state.model_calls,
            prompt_tokens: self.state.prompt_tokens,
            completion_tokens: self.state.completion_tokens,
        };
        if self.on(Mechanism::Report) {
            let _ = resilience::save(&self.tools.state.dir, lrab_records::layout::REPORT, &report);
            for l in report.lines() {
                self.say(&l);
            }
        }
        self.events.emit(Event::RunEnd(RunEnd {
            status: status.name().to_string(),
            turns: self.state.turn,
            tool_calls: self.state.tool_calls,
            model_calls: self.state.model_calls,
            prompt_tokens: self.state.prompt_tokens,
            completion_tokens: self.state.completion_tokens,
            verification: report.verification.name().to_string(),
            mechanisms: self.events.counts.clone(),
        }));
        RunOutcome {
            status,
            backend_error: self.last_error.clone(),
            report,
        }
    }

    /// Verification level so far.
    pub fn level(&self) -> Level {
        self.state.verify.level()
    }
}

#[cfg(test)]
mod tests {
    use super::join_nudge;

    #[test]
    fn a_joined_nudge_says_the_same_next_action_once() {
        let mut c = String::from("Reply with a tool call. Next action: todo(action=\"create\")");
        join_nudge(&mut c, "No progress. Next action: todo(action=\"create\")");
        assert_eq!(
            c,
            "Reply with a tool call.\n\nNo progress. Next action: todo(action=\"create\")"
        );
        // different actions, or none, are both kept
        let mut c = String::from("A. Next action: read_file(path=\"a\")");
        join_nudge(&mut c, "B. Next action: run_shell(command=\"x\")");
        assert_eq!(
            c,
            "A. Next action: read_file(path=\"a\")\n\nB. Next action: run_shell(command=\"x\")"
        );
        let mut c = String::from("result");
        join_nudge(&mut c, "Time check.");
        assert_eq!(c, "result\n\nTime check.");
    }
}

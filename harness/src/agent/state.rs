//! State and resume: everything that survives a kill ([`State`], the checkpoint), setting a run
//! up in a workdir (fresh or resumed), and the facts derived from the state that every nudge
//! names (missing artifacts, the next action).

use super::offer::system_prompt;
use super::{short, state_journal, Agent, AgentConfig, RunStatus, StartError, ToolProtocol};
use crate::events::EventLog;
use crate::mechanisms::anti_loop::{AntiLoop, EmptyLadder, StallWatch};
use crate::mechanisms::clock::Clock;
use crate::mechanisms::context::ContextCheck;
use crate::mechanisms::finish_gate::{named_artifacts, FinishGate};
use crate::mechanisms::prefill;
use crate::mechanisms::repeat_guard::RepeatGuard;
use crate::mechanisms::reply_failures::LostReplies;
use crate::mechanisms::report::VerificationTracker;
use crate::mechanisms::resilience::{self, Inflight};
use crate::mechanisms::security::real_home;
use crate::mechanisms::text_protocol;
use crate::mechanisms::tiering::{classify, Tier};
use crate::mechanisms::Mechanism;
use crate::messages::Message;
use crate::shaping::Verdict;
use crate::state_dir::StateDir;
use crate::tools::confined::ConfinedExecutor;
use crate::tools::shell::ShellExecutor;
use crate::tools::todo::Plan;
use crate::tools::Toolbox;
use lrab_records::{layout, Event, RunStart};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// Version of the checkpoint format; a checkpoint of another version is set aside. (2: call
/// signatures as sha256 digests, the in-flight call record, the repeat guard.)
pub const STATE_VERSION: u32 = 2;

/// Everything that survives a kill: the checkpoint.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    pub version: u32,
    pub task: String,
    pub tier: Tier,
    pub messages: Vec<Message>,
    pub plan: Plan,
    pub turn: u32,
    pub tool_calls: u32,
    pub productive: bool,
    pub world: u64,
    pub gate: FinishGate,
    pub anti_loop: AntiLoop,
    pub empty: EmptyLadder,
    pub stall: StallWatch,
    pub clock: Clock,
    pub context: ContextCheck,
    pub verify: VerificationTracker,
    /// Digests of every call signature seen (progress is a new successful call).
    pub seen: BTreeSet<String>,
    pub tests: Vec<(String, Verdict)>,
    pub elapsed_s: f64,
    pub runs: u32,
    pub chat_mutations: u32,
    pub done: Option<RunStatus>,
    /// Token totals over all model calls of the run (server counts).
    #[serde(default)]
    pub model_calls: u32,
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    /// Replies the server lost (unparsable calls, cut at the output cap) in a row.
    #[serde(default)]
    pub lost: LostReplies,
    /// Loops across turns (reruns of failures, the same failure, oscillating edits).
    #[serde(default)]
    pub guard: RepeatGuard,
    /// The call that was running when the checkpoint was written, if one was.
    #[serde(default)]
    pub inflight: Option<Inflight>,
    /// Tools are described in the system prompt and read back from the reply text.
    #[serde(default)]
    pub text_protocol: bool,
}

impl State {
    /// The state of a run that has not started: system prompt and task, nothing done.
    pub(super) fn fresh(cfg: &AgentConfig) -> State {
        let tier = if cfg.ablations.on(Mechanism::Tiering) {
            classify(&cfg.task)
        } else {
            Tier::Task
        };
        let text = cfg.tool_protocol == ToolProtocol::Text;
        let system = system_prompt(cfg, tier, text);
        State {
            version: STATE_VERSION,
            task: cfg.task.clone(),
            tier,
            messages: vec![Message::system(system), Message::user(cfg.task.clone())],
            plan: Plan::default(),
            turn: 0,
            tool_calls: 0,
            productive: false,
            world: 0,
            gate: FinishGate::default(),
            anti_loop: AntiLoop::default(),
            empty: EmptyLadder::default(),
            stall: StallWatch::default(),
            clock: Clock::new(cfg.time_budget_min),
            context: ContextCheck::new(cfg.num_ctx),
            verify: VerificationTracker::default(),
            seen: BTreeSet::new(),
            tests: Vec::new(),
            elapsed_s: 0.0,
            runs: 0,
            chat_mutations: 0,
            done: None,
            model_calls: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            lost: LostReplies::default(),
            guard: RepeatGuard::default(),
            inflight: None,
            text_protocol: text,
        }
    }
}

/// The checkpoint of this task and version (snapshot and journal), if one can be resumed;
/// anything else is set aside (with a warning) and the run starts fresh.
fn load_checkpoint(
    state_dir: &StateDir,
    cfg: &AgentConfig,
    warnings: &mut Vec<String>,
) -> Option<State> {
    let dir = &state_dir.dir;
    let journal_aside = |stem: &str| {
        let _ = dir.remove(&format!("{stem}.journal.jsonl"));
        let _ = dir.rename(layout::CHECKPOINT_JOURNAL, &format!("{stem}.journal.jsonl"));
    };
    match state_journal::load_from(dir) {
        Err(_) => None,
        Ok(Ok((s, replay))) if s.version == STATE_VERSION && s.task == cfg.task => {
            if let Some((line, why)) = replay.damaged {
                // kept as evidence: the next save starts a new journal
                let aside = "checkpoint.journal.damaged.jsonl";
                let _ = dir.remove(aside);
                let _ = dir.rename(layout::CHECKPOINT_JOURNAL, aside);
                warnings.push(format!(
                    "checkpoint journal is damaged at line {line} ({why}); resuming from the line before it, the journal set aside as {}",
                    dir.root().join(aside).display()
                ));
            }
            Some(s)
        }
        Ok(Ok(_)) => {
            let aside = "checkpoint.other-task.json";
            let _ = dir.remove(aside);
            let _ = dir.rename(layout::CHECKPOINT, aside);
            journal_aside("checkpoint.other-task");
            warnings.push(format!(
                "checkpoint belongs to another task or version; set aside as {} and starting fresh",
                dir.root().join(aside).display()
            ));
            None
        }
        Ok(Err(error)) => {
            let mut n = 1;
            let stem = loop {
                let p = format!("checkpoint.corrupt-{n}");
                if dir.stat(&format!("{p}.json")).is_err() {
                    break p;
                }
                n += 1;
            };
            let aside = format!("{stem}.json");
            let _ = dir.rename(layout::CHECKPOINT, &aside);
            journal_aside(&stem);
            warnings.push(format!(
                "checkpoint was corrupt ({error}); set aside as {} and starting fresh",
                dir.root().join(aside).display()
            ));
            None
        }
    }
}

fn check_workdir(wd: &Path) -> Result<(), StartError> {
    if !wd.is_dir() {
        return Err(StartError::Workdir(format!(
            "workdir '{}' does not exist or is not a directory",
            wd.display()
        )));
    }
    Ok(())
}

/// The run's state folder: the configured one or the standalone default, opened.
fn open_state(cfg: &AgentConfig) -> Result<StateDir, StartError> {
    check_workdir(&cfg.workdir)?;
    let path = match &cfg.state_dir {
        Some(p) => p.clone(),
        None => crate::state_dir::default_for(&cfg.workdir)
            .map_err(|e| StartError::Workdir(e.to_string()))?,
    };
    StateDir::open(&path, &cfg.workdir).map_err(|e| StartError::Workdir(e.to_string()))
}

impl<M: crate::backend::Model> Agent<M> {
    /// Set up the run in `cfg.workdir`: state folder, tools, event log, and either a resumed
    /// checkpoint or a fresh conversation.
    /// Model-chosen shell commands go through the safety rings ([`ConfinedExecutor`]).
    pub fn new(cfg: AgentConfig, model: M) -> Result<Self, StartError> {
        let home = cfg.real_home.clone().unwrap_or_else(real_home);
        let state = open_state(&cfg)?;
        match ConfinedExecutor::new(&cfg.workdir, &state, &home, cfg.allow_unconfined) {
            Ok(ex) => Self::with_state(cfg, model, Box::new(ex), state),
            Err(e) => Err(StartError::Workdir(format!(
                "cannot prepare '{}': {e}",
                cfg.workdir.display()
            ))),
        }
    }

    /// As [`Agent::new`] with a chosen shell executor.
    pub fn with_executor(
        cfg: AgentConfig,
        model: M,
        shell: Box<dyn ShellExecutor>,
    ) -> Result<Self, StartError> {
        let state = open_state(&cfg)?;
        Self::with_state(cfg, model, shell, state)
    }

    fn with_state(
        cfg: AgentConfig,
        model: M,
        shell: Box<dyn ShellExecutor>,
        state_dir: StateDir,
    ) -> Result<Self, StartError> {
        let wd = &cfg.workdir;
        let ab = &cfg.ablations;
        let mut tools = Toolbox::new(
            wd,
            state_dir,
            ab.on(Mechanism::EditSafety),
            ab.on(Mechanism::CrawlGuard),
            shell,
        )
        .map_err(|e| StartError::Workdir(format!("cannot prepare '{}': {e}", wd.display())))?;
        tools
            .set_home(&cfg.real_home.clone().unwrap_or_else(real_home))
            .map_err(|e| StartError::Workdir(format!("cannot prepare '{}': {e}", wd.display())))?;
        if let Some(url) = &cfg.web_search {
            tools.web = Some(
                crate::tools::web::WebTools::new(url, Duration::from_secs(20))
                    .map_err(|e| StartError::Workdir(e.to_string()))?,
            );
        }
        let mut warnings = Vec::new();
        let loaded = if ab.on(Mechanism::Resilience) {
            load_checkpoint(&tools.state, &cfg, &mut warnings)
        } else {
            None
        };
        let resumed = loaded.is_some();
        let mut state = loaded.unwrap_or_else(|| State::fresh(&cfg));
        state.runs += 1;
        if cfg.time_budget_min.is_some() {
            state.clock.budget_s = cfg.time_budget_min.map(|m| m * 60.0);
        }
        let events = EventLog::open(tools.state.open_events(), state.runs)
            .map_err(|e| StartError::Workdir(format!("cannot open the event log: {e}")))?;
        let named = named_artifacts(&cfg.task);
        let base_elapsed = state.elapsed_s;
        let start = Instant::now();
        let mut agent = Agent {
            cfg,
            model,
            state,
            tools,
            events,
            sleeper: Box::new(std::thread::sleep),
            clock_fn: Box::new(move || start.elapsed().as_secs_f64()),
            overheads: Vec::new(),
            resumed,
            warnings,
            named,
            base_elapsed,
            last_error: None,
            ledger: Default::default(),
            prefix: Default::default(),
            rewrite: None,
            sent: 0,
            missing: Default::default(),
            journal: Default::default(),
            state_shown: None,
        };
        if resumed && agent.state.done.is_none() {
            agent.resolve_inflight();
            resilience::sanitize(&mut agent.state.messages);
            agent.rewrite = Some("resume".into());
            let next = agent.next_action();
            agent
                .state
                .messages
                .push(Message::nudge(resilience::resume_nudge(&next)));
            agent.events.mechanism(
                "resilience",
                "resume",
                json!({"messages": agent.state.messages.len(), "turn": agent.state.turn}),
            );
        }
        agent.events.emit(Event::RunStart(RunStart {
            tier: agent.state.tier.name().to_string(),
            resumed,
            ablations: agent
                .cfg
                .ablations
                .names()
                .into_iter()
                .map(String::from)
                .collect(),
            static_prefill: if agent.state.text_protocol {
                text_protocol::static_prefill()
            } else {
                prefill::static_prefill()
            },
            num_ctx: agent.cfg.num_ctx,
            sandbox: agent.tools.shell.describe(),
            num_ctx_source: agent.cfg.num_ctx_source.clone(),
            tool_protocol: if agent.state.text_protocol {
                "text"
            } else {
                "native"
            }
            .to_string(),
        }));
        Ok(agent)
    }

    /// Checkpoint the state (when resilience is on): a line appended to the journal, or a new
    /// snapshot ([`state_journal`]).
    pub(super) fn save(&mut self) {
        self.save_as(false);
    }

    /// As [`Agent::save`]; `last`: the run has ended (always a whole snapshot).
    pub(super) fn save_as(&mut self, last: bool) {
        if self.on(Mechanism::Resilience) {
            self.state.elapsed_s = self.base_elapsed + (self.clock_fn)();
            let dir = &self.tools.state.dir;
            if let Err(e) = self.journal.save(dir, &mut self.state, last) {
                self.events.emit(Event::Warning {
                    checkpoint_error: e.to_string(),
                });
            }
        }
    }

    /// Whether a named deliverable is missing or empty: one `lstat` beneath the workdir handle
    /// (this runs for every named file on every turn, for the state line; nothing is read, so
    /// the file tools' full confinement check is not needed). A name that cannot be in the
    /// workdir is never asked for.
    fn artifact_missing(&self, a: &str) -> bool {
        use lrab_safety::{BeneathError as Error, FileKind as Kind};
        match self.tools.wd.stat(a.trim()) {
            Ok(st) => st.kind == Kind::File && st.len == 0,
            Err(Error::Io { .. }) => true,
            Err(_) => false,
        }
    }

    /// Named artifacts that do not exist (or are empty). Remembered while the workdir's change
    /// counter stands still (the state line and every nudge ask, each turn).
    pub fn missing_artifacts(&self) -> Vec<String> {
        if let Some((w, m)) = &*self.missing.borrow() {
            if *w == self.state.world {
                return m.clone();
            }
        }
        let m: Vec<String> = self
            .named
            .iter()
            .filter(|a| self.artifact_missing(a))
            .cloned()
            .collect();
        *self.missing.borrow_mut() = Some((self.state.world, m.clone()));
        m
    }

    /// The next executable action, named in every rejection and nudge.
    pub fn next_action(&self) -> String {
        if self.state.tier == Tier::Task
            && self.state.plan.items.is_empty()
            && !self.state.productive
        {
            return "todo(action=\"create\", items=[\"…each required step…\"])".into();
        }
        // the latest command failed: its error comes before the plan and the missing files
        if let Some(a) = crate::mechanisms::failed_run::next_action(&self.state.messages) {
            return a;
        }
        if let Some((n, text)) = self.state.plan.next_open() {
            if let Some(a) = self.missing_artifacts().first() {
                if text.contains(a.as_str()) {
                    return format!(
                        "plan step {n} — write_file(path=\"{a}\", content=…) with its full content"
                    );
                }
            }
            return format!(
                "plan step {n}: {} — do it with a tool call, then todo(action=\"done\", index={n})",
                short(text, 120)
            );
        }
        if let Some(a) = self.missing_artifacts().first() {
            return format!("write_file(path=\"{a}\", content=…) with its full content");
        }
        "finish(summary=\"…\") if everything is done and checked".into()
    }
}

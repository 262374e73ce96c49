//! The agent loop, generic over [`Model`]. One turn: clock check → tool list → context check →
//! model call (retry ladder) → format rescue / empty ladder / false-completion → tool calls
//! through the anti-loop and the finish gate → stall watch → atomic checkpoint.

use crate::backend::{
    call_with_retry, repair_conversation, BackendError, ChatRequest, Model, RetryPolicy,
};
use crate::estimate::estimate_request;
use crate::events::EventLog;
use crate::mechanisms::anti_loop::{
    signature, unchanged_text, AntiLoop, EmptyAction, EmptyLadder, LoopVerdict, StallAction,
    StallWatch,
};
use crate::mechanisms::clock::Clock;
use crate::mechanisms::context::{compact, ContextCheck};
use crate::mechanisms::false_completion::claims_completion;
use crate::mechanisms::finish_gate::{
    named_artifacts, FinishGate, GateDecision, GateEnv, GateInput, TestOutcome, TestRun,
};
use crate::mechanisms::format_rescue::{canonical_args, canonical_name, rescue};
use crate::mechanisms::prefill::{self, SYSTEM_CHAT, SYSTEM_TASK};
use crate::mechanisms::report::{FinalReport, Level, VerificationTracker};
use crate::mechanisms::resilience::{
    self, is_empty_reply, strip_think, truncation_feedback, Loaded,
};
use crate::mechanisms::security::real_home;
use crate::mechanisms::security::STATE_DIR;
use crate::mechanisms::tiering::{classify, Tier};
use crate::mechanisms::{Ablations, Mechanism};
use crate::messages::{Message, Reply, Role, ToolCall, ToolSpec};
use crate::shaping::Verdict;
use crate::tools::confined::ConfinedExecutor;
use crate::tools::shell::ShellExecutor;
use crate::tools::specs::{is_productive, ALL_TOOLS};
use crate::tools::todo::Plan;
use crate::tools::{Effect, Toolbox};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const STATE_VERSION: u32 = 1;

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
    /// SearxNG-compatible JSON search endpoint; `None` (default): no web tools at all.
    pub web_search: Option<String>,
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
            web_search: None,
        }
    }
}

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
    pub seen: BTreeSet<u64>,
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
    checkpoint: PathBuf,
    last_error: Option<BackendError>,
    ledger: TestLedger,
}

fn hash_sig(s: &str) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// Test results keyed by command, valid while the workdir has not changed (a verdict ledger:
/// a pass is reused only while nothing has been written since).
type TestLedger = std::collections::HashMap<String, (u64, TestRun)>;

struct GateCtx<'a> {
    tools: &'a mut Toolbox,
    timeout: u64,
    world: u64,
    ledger: &'a mut TestLedger,
}

impl GateEnv for GateCtx<'_> {
    fn file_size(&self, rel: &str) -> Option<u64> {
        let abs = self
            .tools
            .conf
            .resolve(rel, crate::mechanisms::security::Access::Read)
            .ok()?;
        let md = std::fs::metadata(abs).ok()?;
        Some(if md.is_dir() { 1 } else { md.len() })
    }
    fn top_files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.tools.root())
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .filter(|e| e.path().is_file())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
    fn read_text(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.tools.root().join(rel)).ok()
    }
    fn run_test(&mut self, cmd: &str) -> TestRun {
        if let Some((w, run)) = self.ledger.get(cmd) {
            if *w == self.world {
                return run.clone();
            }
        }
        let run = match self.tools.run_command(cmd, self.timeout) {
            Ok((o, _)) => TestRun {
                exit: o.exit,
                timed_out: o.timed_out,
                output: o.output,
            },
            Err(e) => TestRun {
                exit: None,
                timed_out: false,
                output: format!("could not run: {e}"),
            },
        };
        self.ledger
            .insert(cmd.to_string(), (self.world, run.clone()));
        run
    }
}

fn short(s: &str, n: usize) -> String {
    let flat: String = s.replace('\n', " ");
    if flat.chars().count() <= n {
        flat
    } else {
        format!("{}…", flat.chars().take(n).collect::<String>())
    }
}

/// The workdir's state folder can be created and written.
fn check_writable(wd: &std::path::Path) -> Result<(), StartError> {
    let state_dir = wd.join(STATE_DIR);
    std::fs::create_dir_all(&state_dir)
        .and_then(|_| std::fs::write(state_dir.join(".write-probe"), b"ok"))
        .map_err(|e| {
            StartError::Workdir(format!("workdir '{}' is not writable: {e}", wd.display()))
        })?;
    let _ = std::fs::remove_file(state_dir.join(".write-probe"));
    Ok(())
}

impl<M: Model> Agent<M> {
    /// Set up the run in `cfg.workdir`: state folder, tools, event log, and either a resumed
    /// checkpoint or a fresh conversation.
    /// Model-chosen shell commands go through the safety rings ([`ConfinedExecutor`]).
    pub fn new(cfg: AgentConfig, model: M) -> Result<Self, StartError> {
        let home = cfg.real_home.clone().unwrap_or_else(real_home);
        match ConfinedExecutor::new(&cfg.workdir, &home, cfg.allow_unconfined) {
            Ok(ex) => Self::with_executor(cfg, model, Box::new(ex)),
            Err(e) => {
                // never go on without the confined executor, and leave no trace of a run
                // (no event log, no checkpoint) that did not start
                if !cfg.workdir.is_dir() {
                    return Err(StartError::Workdir(format!(
                        "workdir '{}' does not exist or is not a directory",
                        cfg.workdir.display()
                    )));
                }
                check_writable(&cfg.workdir)?;
                Err(StartError::Workdir(format!(
                    "cannot prepare '{}': {e}",
                    cfg.workdir.display()
                )))
            }
        }
    }

    pub fn with_executor(
        cfg: AgentConfig,
        model: M,
        shell: Box<dyn ShellExecutor>,
    ) -> Result<Self, StartError> {
        let wd = &cfg.workdir;
        if !wd.is_dir() {
            return Err(StartError::Workdir(format!(
                "workdir '{}' does not exist or is not a directory",
                wd.display()
            )));
        }
        check_writable(wd)?;
        let state_dir = wd.join(STATE_DIR);
        let ab = &cfg.ablations;
        let tools = Toolbox::new(
            wd,
            ab.on(Mechanism::EditSafety),
            ab.on(Mechanism::CrawlGuard),
            shell,
        )
        .map_err(|e| StartError::Workdir(format!("cannot prepare '{}': {e}", wd.display())))?;
        let mut tools = tools;
        tools
            .conf
            .set_home(&cfg.real_home.clone().unwrap_or_else(real_home));
        if let Some(url) = &cfg.web_search {
            tools.web = Some(
                crate::tools::web::WebTools::new(url, Duration::from_secs(20))
                    .map_err(StartError::Workdir)?,
            );
        }
        let checkpoint = state_dir.join("checkpoint.json");
        let mut warnings = Vec::new();
        let mut resumed = false;
        let loaded: Option<State> = if ab.on(Mechanism::Resilience) {
            match resilience::load::<State>(&checkpoint) {
                Loaded::Fresh => None,
                Loaded::Resumed(s) if s.version == STATE_VERSION && s.task == cfg.task => {
                    resumed = true;
                    Some(*s)
                }
                Loaded::Resumed(_) => {
                    let aside = checkpoint.with_extension("other-task.json");
                    let _ = std::fs::rename(&checkpoint, &aside);
                    warnings.push(format!(
                        "checkpoint belongs to another task or version; set aside as {} and starting fresh",
                        aside.display()
                    ));
                    None
                }
                Loaded::Corrupt { moved_to, error } => {
                    warnings.push(format!(
                        "checkpoint was corrupt ({error}); set aside as {} and starting fresh",
                        moved_to.display()
                    ));
                    None
                }
            }
        } else {
            None
        };
        let mut state = match loaded {
            Some(s) => s,
            None => {
                let tier = if ab.on(Mechanism::Tiering) {
                    classify(&cfg.task)
                } else {
                    Tier::Task
                };
                let system = if tier == Tier::Chat {
                    SYSTEM_CHAT
                } else {
                    SYSTEM_TASK
                };
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
                }
            }
        };
        state.runs += 1;
        if cfg.time_budget_min.is_some() {
            state.clock.budget_s = cfg.time_budget_min.map(|m| m * 60.0);
        }
        let events = EventLog::open(&state_dir.join("events.jsonl"), state.runs)
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
            checkpoint,
            last_error: None,
            ledger: TestLedger::new(),
        };
        if resumed && agent.state.done.is_none() {
            resilience::sanitize(&mut agent.state.messages);
            let next = agent.next_action();
            agent.state.messages.push(Message::nudge(format!(
                "[The run was interrupted and has been resumed; files you wrote are still there.] Continue where you left off. Next action: {next}"
            )));
            agent.events.mechanism(
                "resilience",
                "resume",
                json!({"messages": agent.state.messages.len(), "turn": agent.state.turn}),
            );
        }
        agent.events.emit(
            "run_start",
            json!({
                "tier": agent.state.tier,
                "resumed": resumed,
                "ablations": agent.cfg.ablations.names(),
                "static_prefill": prefill::static_prefill(),
                "num_ctx": agent.cfg.num_ctx,
                "sandbox": agent.tools.shell.describe(),
            }),
        );
        Ok(agent)
    }

    fn on(&self, m: Mechanism) -> bool {
        self.cfg.ablations.on(m)
    }

    fn say(&self, line: &str) {
        if self.cfg.verbose {
            println!("{line}");
        }
    }

    /// Every tool that exists in this run: the web tools only when a search endpoint is set.
    fn known_tools(&self) -> Vec<&'static str> {
        let mut v = ALL_TOOLS.to_vec();
        if self.tools.web.is_some() {
            v.extend(crate::tools::specs::WEB_TOOLS);
        }
        v
    }

    /// The tools offered this turn.
    pub fn current_tools(&self) -> Vec<ToolSpec> {
        let mut names: Vec<&str> = if self.state.tier == Tier::Chat {
            prefill::CHAT_TOOLS.to_vec()
        } else if self.on(Mechanism::FlatPrefill) {
            prefill::route(&self.state.task)
        } else {
            prefill::all_tools()
        };
        // web tools only when configured, and (when routing) only for tasks that call for them
        if self.tools.web.is_some()
            && self.state.tier != Tier::Chat
            && (!self.on(Mechanism::FlatPrefill) || prefill::wants_web(&self.state.task))
        {
            names.extend(crate::tools::specs::WEB_TOOLS);
        }
        let paused = self.state.anti_loop.paused_tools(self.state.turn);
        let names: Vec<&str> = names
            .into_iter()
            .filter(|n| !paused.iter().any(|p| p == n))
            .collect();
        prefill::specs_for(&names)
    }

    fn artifact_missing(&self, a: &str) -> bool {
        match self
            .tools
            .conf
            .resolve(a, crate::mechanisms::security::Access::Read)
        {
            Ok(p) => std::fs::metadata(p)
                .map(|m| m.is_file() && m.len() == 0)
                .unwrap_or(true),
            Err(_) => false,
        }
    }

    /// Named artifacts that do not exist (or are empty).
    pub fn missing_artifacts(&self) -> Vec<String> {
        self.named
            .iter()
            .filter(|a| self.artifact_missing(a))
            .cloned()
            .collect()
    }

    /// The next executable action, named in every rejection and nudge.
    pub fn next_action(&self) -> String {
        if self.state.tier == Tier::Task
            && self.state.plan.items.is_empty()
            && !self.state.productive
        {
            return "todo(action=\"create\", items=[\"…each required step…\"])".into();
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

    fn nudge(&mut self, text: String) {
        self.say(&format!("  [harness] {}", short(&text, 160)));
        self.state.messages.push(Message::nudge(text));
    }

    fn save(&mut self) {
        if self.on(Mechanism::Resilience) {
            self.state.elapsed_s = self.base_elapsed + (self.clock_fn)();
            if let Err(e) = resilience::save(&self.checkpoint, &self.state) {
                self.events
                    .emit("warning", json!({"checkpoint_error": e.to_string()}));
            }
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
        self.save();
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
            let path = self.tools.state_dir.join("report.json");
            let _ = resilience::save(&path, &report);
            for l in report.lines() {
                self.say(&l);
            }
        }
        self.events.emit(
            "run_end",
            json!({"status": status.name(), "turns": self.state.turn, "tool_calls": self.state.tool_calls,
                   "model_calls": self.state.model_calls, "prompt_tokens": self.state.prompt_tokens,
                   "completion_tokens": self.state.completion_tokens,
                   "verification": report.verification, "mechanisms": self.events.counts.clone()}),
        );
        RunOutcome {
            status,
            backend_error: self.last_error.clone(),
            report,
        }
    }

    /// One turn. `Some(status)` ends the run.
    pub fn step(&mut self) -> Option<RunStatus> {
        let t0 = Instant::now();
        if self.state.turn >= self.cfg.max_turns {
            return Some(RunStatus::MaxTurns);
        }
        // clock
        let elapsed = self.base_elapsed + (self.clock_fn)();
        if self.on(Mechanism::Clock) {
            if self.state.clock.expired(elapsed) {
                self.events
                    .mechanism("clock", "expired", json!({"elapsed_s": elapsed}));
                return Some(RunStatus::TimeBudget);
            }
            if let Some(w) = self.state.clock.check(elapsed) {
                let missing = self.missing_artifacts();
                let extra = if missing.is_empty() {
                    String::new()
                } else {
                    format!(" Still missing: {}.", missing.join(", "))
                };
                self.events
                    .mechanism("clock", "warning", json!({"elapsed_s": elapsed}));
                self.nudge(format!("{w}{extra}"));
            }
        }
        let tools = self.current_tools();
        // context check
        let mut raw = estimate_request(&self.state.messages, &tools);
        let mut tokens = self.state.context.tokens(raw);
        if self.on(Mechanism::Context) && self.state.context.needs_compaction(tokens) {
            self.compact_now("threshold");
            raw = estimate_request(&self.state.messages, &tools);
            tokens = self.state.context.tokens(raw);
        }
        let num_predict = if self.on(Mechanism::Context) {
            self.state
                .context
                .clamp_predict(tokens, self.cfg.num_predict)
        } else {
            self.cfg.num_predict
        };
        // model call
        let tm = Instant::now();
        let reply = match self.call_model(&tools, num_predict) {
            Ok(r) => r,
            Err(e) => {
                self.events
                    .emit("backend_error", json!({"error": e.to_string()}));
                self.save();
                let msg = e.to_string();
                self.last_error = Some(e);
                return Some(RunStatus::BackendFailed(msg));
            }
        };
        let model_time = tm.elapsed();
        self.events.emit(
            "model_call",
            json!({"turn": self.state.turn, "prompt_tokens": reply.prompt_eval_count, "completion_tokens": reply.eval_count,
                   "latency_ms": model_time.as_millis() as u64, "est_tokens": tokens, "num_predict": num_predict,
                   "done_reason": reply.done_reason, "tools_offered": tools.len()}),
        );
        if let Some(pec) = reply.prompt_eval_count {
            self.state.context.calibrate(raw, pec);
        }
        self.state.model_calls += 1;
        self.state.prompt_tokens += reply.prompt_eval_count.unwrap_or(0);
        self.state.completion_tokens += reply.eval_count.unwrap_or(0);
        let end = self.handle_reply(reply, &tools);
        self.state.turn += 1;
        self.save();
        let total = t0.elapsed();
        self.overheads.push(total.saturating_sub(model_time));
        end
    }

    fn call_model(&mut self, tools: &[ToolSpec], num_predict: u32) -> Result<Reply, BackendError> {
        let policy = self.cfg.retry;
        let mut repaired = false;
        loop {
            let req = ChatRequest {
                messages: &self.state.messages,
                tools,
                num_predict,
            };
            let events = &mut self.events;
            let r = call_with_retry(
                &mut self.model,
                &req,
                &policy,
                &mut *self.sleeper,
                &mut |e, n| {
                    events.mechanism(
                        "resilience",
                        "backend_retry",
                        json!({"attempt": n, "error": e.to_string()}),
                    );
                },
            );
            match r {
                Err(BackendError::Structural(m)) if !repaired => {
                    repaired = true;
                    let removed = repair_conversation(&mut self.state.messages);
                    self.events.mechanism(
                        "resilience",
                        "repair_conversation",
                        json!({"removed": removed, "error": m}),
                    );
                }
                other => return other,
            }
        }
    }

    fn compact_now(&mut self, why: &str) {
        let before = self.state.messages.len();
        let files = self.tools.list_files(60);
        let tail = self.state.context.tail_budget();
        self.state.messages = compact(
            &self.state.messages,
            tail,
            &self.state.plan.render(),
            &files,
        );
        self.state.context.compactions += 1;
        self.events.mechanism(
            "context",
            "compact",
            json!({"why": why, "before": before, "after": self.state.messages.len()}),
        );
    }

    fn handle_reply(&mut self, reply: Reply, tools: &[ToolSpec]) -> Option<RunStatus> {
        let offered: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let mut calls: Vec<ToolCall> = reply.tool_calls.clone();
        if self.on(Mechanism::FormatRescue) {
            let declared: Vec<ToolSpec> = self
                .known_tools()
                .into_iter()
                .filter_map(crate::tools::specs::spec)
                .collect();
            for c in &mut calls {
                let n = canonical_name(&c.name, &declared);
                if n != c.name {
                    self.events.mechanism(
                        "format_rescue",
                        "alias",
                        json!({"from": c.name, "to": n}),
                    );
                }
                c.arguments = canonical_args(&n, std::mem::take(&mut c.arguments), &declared);
                c.name = n;
            }
            if calls.is_empty() {
                if let Some(rescued) = rescue(&reply.content, &declared) {
                    self.events.mechanism(
                        "format_rescue",
                        "rescued",
                        json!({"calls": rescued.len()}),
                    );
                    calls = rescued;
                }
            }
        }
        let rescued_text = calls.len() > reply.tool_calls.len();
        let content = if rescued_text {
            String::new()
        } else {
            strip_think(&reply.content).trim().to_string()
        };

        // empty replies (think-only included) and truncation
        if is_empty_reply(&content, !calls.is_empty()) {
            // keep the (empty) turn in the history: the conversation the model sees next is
            // then not the one that produced the empty reply
            self.state
                .messages
                .push(Message::assistant(String::new(), vec![]));
            if reply.truncated() && self.on(Mechanism::Resilience) {
                self.events
                    .mechanism("resilience", "truncated", json!({"turn": self.state.turn}));
                self.nudge(truncation_feedback());
                return None;
            }
            if self.on(Mechanism::AntiLoop) {
                match self.state.empty.on_empty() {
                    EmptyAction::Nudge { level } => {
                        self.events
                            .mechanism("anti_loop", "empty_nudge", json!({"level": level}));
                        let next = self.next_action();
                        let text = if level == 1 {
                            format!(
                                "Your reply was empty. Reply with a tool call. Next action: {next}"
                            )
                        } else {
                            format!("Empty again. Do exactly this now with a tool call: {next}")
                        };
                        self.nudge(text);
                    }
                    EmptyAction::Reset => {
                        self.events.mechanism("anti_loop", "empty_reset", json!({}));
                        self.compact_now("empty_reset");
                        let next = self.next_action();
                        self.nudge(format!("Several empty replies: the conversation was shortened. Next action: {next}"));
                    }
                    EmptyAction::GiveUp => {
                        self.events
                            .mechanism("anti_loop", "empty_give_up", json!({}));
                        return Some(RunStatus::Stalled);
                    }
                }
            } else {
                self.nudge("Continue.".into());
            }
            return None;
        }
        self.state.empty.on_reply();

        // text only
        if calls.is_empty() {
            self.state
                .messages
                .push(Message::assistant(content.clone(), vec![]));
            self.say(&format!(
                "[turn {}] text: {}",
                self.state.turn,
                short(&content, 160)
            ));
            if self.state.tier == Tier::Chat {
                // the answer is the product of a chat run: always printed
                println!("{content}");
                return Some(RunStatus::Answered);
            }
            if reply.truncated() && self.on(Mechanism::Resilience) {
                self.events
                    .mechanism("resilience", "truncated", json!({"turn": self.state.turn}));
                self.nudge(truncation_feedback());
                return None;
            }
            if claims_completion(&content) {
                if !self.on(Mechanism::FinishGate) {
                    return Some(RunStatus::Finished);
                }
                self.events.mechanism(
                    "false_completion",
                    "claim",
                    json!({"turn": self.state.turn}),
                );
                let (accepted, msg) = self.finish_gate();
                if accepted {
                    return Some(RunStatus::Finished);
                }
                self.nudge(msg);
            } else {
                self.events.mechanism(
                    "false_completion",
                    "text_only",
                    json!({"turn": self.state.turn}),
                );
                let next = self.next_action();
                self.nudge(format!("Reply with a tool call, not text: nothing happens until a tool runs. Next action: {next}"));
            }
            return self.stall_check(false);
        }

        // tool calls
        let turn = self.state.turn;
        for (i, c) in calls.iter_mut().enumerate() {
            if c.id.is_empty() {
                c.id = format!("call_{turn}_{i}");
            }
        }
        self.state
            .messages
            .push(Message::assistant(content, calls.clone()));
        let mut progress = false;
        let mut after: Vec<String> = Vec::new();
        for call in &calls {
            let t = Instant::now();
            let (text, ok, effect, intercepted, finished) =
                self.dispatch(call, &offered, &mut after);
            let is_new = self
                .state
                .seen
                .insert(hash_sig(&signature(&call.name, &call.arguments)));
            if ok && (is_new || effect == Effect::Write) {
                progress = true;
            }
            self.state.tool_calls += 1;
            self.events.emit(
                "tool_call",
                json!({"turn": turn, "name": call.name, "ok": ok, "ms": t.elapsed().as_millis() as u64,
                       "intercepted": intercepted, "args": short(&call.arguments.to_string(), 200)}),
            );
            self.say(&format!(
                "[turn {turn}] {} {} -> {}",
                call.name,
                short(&call.arguments.to_string(), 100),
                short(&text, 140)
            ));
            self.state.messages.push(Message::tool_result(call, text));
            if finished {
                return Some(RunStatus::Finished);
            }
        }
        for a in after {
            self.nudge(a);
        }
        self.stall_check(progress)
    }

    fn stall_check(&mut self, progress: bool) -> Option<RunStatus> {
        if !self.on(Mechanism::AntiLoop) {
            return None;
        }
        match self.state.stall.on_round(progress) {
            None => None,
            Some(StallAction::Replan) => {
                self.events.mechanism(
                    "anti_loop",
                    "stall_replan",
                    json!({"streak": self.state.stall.streak}),
                );
                let next = self.next_action();
                self.nudge(format!("No progress in the last {} rounds. Do not repeat what did not work; take a different approach. Next action: {next}", self.state.stall.streak));
                None
            }
            Some(StallAction::Escalate) => {
                self.events.mechanism(
                    "anti_loop",
                    "stall_escalate",
                    json!({"streak": self.state.stall.streak}),
                );
                let missing = self.missing_artifacts();
                let text = match missing.first() {
                    Some(a) => format!("Still no progress. Write the deliverable now from what you already know: write_file(path=\"{a}\", content=…). Partial content is better than none."),
                    None => format!("Still no progress. {}", self.next_action()),
                };
                self.nudge(text);
                None
            }
            Some(StallAction::GiveUp) => {
                self.events
                    .mechanism("anti_loop", "stall_give_up", json!({}));
                Some(RunStatus::Stalled)
            }
        }
    }

    /// Execute one call: (result text, ok, effect, intercepted, finish accepted).
    fn dispatch(
        &mut self,
        call: &ToolCall,
        offered: &[&str],
        after: &mut Vec<String>,
    ) -> (String, bool, Effect, bool, bool) {
        let name = call.name.as_str();
        if !self.known_tools().contains(&name) {
            return (
                format!(
                    "error: unknown tool '{name}'. Available tools: {}",
                    offered.join(", ")
                ),
                false,
                Effect::None,
                false,
                false,
            );
        }
        if self.state.tier == Tier::Chat && !prefill::CHAT_TOOLS.contains(&name) && name != "finish"
        {
            self.state.chat_mutations += 1;
            if self.state.chat_mutations >= 2 && self.on(Mechanism::Tiering) {
                // the prompt was real work after all: switch to the task tier
                self.state.tier = Tier::Task;
                if let Some(m) = self
                    .state
                    .messages
                    .iter_mut()
                    .find(|m| m.role == Role::System)
                {
                    m.content = SYSTEM_TASK.to_string();
                }
                self.events
                    .mechanism("tiering", "escalate_to_task", json!({}));
            } else {
                self.events
                    .mechanism("tiering", "chat_refused_tool", json!({"tool": name}));
                return (
                    format!("error: {name} is not available for a question; answer in plain text"),
                    false,
                    Effect::None,
                    true,
                    false,
                );
            }
        }
        if self.on(Mechanism::AntiLoop) {
            let v = self.state.anti_loop.check(
                name,
                &call.arguments,
                self.state.world,
                self.state.turn,
            );
            match v {
                LoopVerdict::Execute => {}
                LoopVerdict::SameToolNudge { count } => {
                    self.events.mechanism(
                        "anti_loop",
                        "same_tool_nudge",
                        json!({"tool": name, "count": count}),
                    );
                    let next = self.next_action();
                    after.push(format!("You have called {name} {count} times in a row without changing anything. Use what you have learned. Next action: {next}"));
                }
                LoopVerdict::Intercept { level } => {
                    self.events.mechanism(
                        "anti_loop",
                        "intercept",
                        json!({"tool": name, "level": level, "earlier_ok": false}),
                    );
                    let next = self.next_action();
                    let text = if level == 1 {
                        format!("[not executed: identical to your previous call, and nothing has changed since; its result is above.] Next action: {next}")
                    } else {
                        format!("[not executed again: the same call a third time. Change your approach.] Next action: {next}")
                    };
                    return (text, false, Effect::None, true, false);
                }
                LoopVerdict::Unchanged { level, earlier } => {
                    // the earlier identical call succeeded and nothing changed: its result is
                    // the truthful answer (ok, nothing re-executed), not a failure. Logged as
                    // an interception (nothing ran) so activation counts stay comparable;
                    // `earlier_ok` tells the two answers apart.
                    self.events.mechanism(
                        "anti_loop",
                        "intercept",
                        json!({"tool": name, "level": level, "earlier_ok": true, "earlier_turn": earlier.turn}),
                    );
                    let next = self.next_action();
                    let text = format!(
                        "{}\nNext action: {next}",
                        unchanged_text(name, &call.arguments, level, &earlier)
                    );
                    return (text, true, Effect::None, true, false);
                }
                LoopVerdict::Pause { until_turn } | LoopVerdict::Paused { until_turn } => {
                    self.events.mechanism(
                        "anti_loop",
                        "pause_tool",
                        json!({"tool": name, "until_turn": until_turn}),
                    );
                    let next = self.next_action();
                    return (
                        format!("[not executed: {name} is paused until turn {until_turn} after repeated identical calls.] Next action: {next}"),
                        false,
                        Effect::None,
                        true,
                        false,
                    );
                }
            }
        }
        let tests_before = self.state.tests.len();
        let result = self.execute_call(call, name);
        if self.on(Mechanism::AntiLoop) {
            self.state.anti_loop.executed(self.state.world);
            // a test run that reports failures did not succeed, whatever its exit code: its
            // repeat must not be answered as "succeeded"
            let tests_failed = self.state.tests[tests_before..]
                .iter()
                .any(|(_, v)| *v == Verdict::Failed);
            self.state
                .anti_loop
                .outcome(self.state.turn, result.1 && !tests_failed, &result.0);
        }
        result
    }

    fn execute_call(&mut self, call: &ToolCall, name: &str) -> (String, bool, Effect, bool, bool) {
        match name {
            "todo" => {
                let (ok, text) = self.state.plan.apply(&call.arguments);
                (text, ok, Effect::None, false, false)
            }
            "finish" => {
                if self.state.tier == Tier::Chat {
                    return ("finished".into(), true, Effect::None, false, true);
                }
                let (accepted, msg) = if self.on(Mechanism::FinishGate) {
                    self.finish_gate()
                } else {
                    (true, String::new())
                };
                if accepted {
                    let summary = call.arg_str("summary").unwrap_or_default();
                    self.say(&format!(
                        "===== TASK COMPLETE ===== {}",
                        short(&summary, 200)
                    ));
                    ("finish accepted".into(), true, Effect::None, false, true)
                } else {
                    (msg, false, Effect::None, false, false)
                }
            }
            _ => {
                let o = self.tools.execute(name, &call.arguments);
                if o.ok && is_productive(name) {
                    self.state.productive = true;
                }
                match o.effect {
                    Effect::Write if o.ok => {
                        self.state.world += 1;
                        self.state.verify.on_write();
                    }
                    Effect::Exec => {
                        // a command may have changed files
                        self.state.world += 1;
                        self.state.productive = true;
                        match o.verdict {
                            Some(v) => {
                                self.state.verify.on_test(v);
                                self.state
                                    .tests
                                    .push((call.arg_str("command").unwrap_or_default(), v));
                            }
                            None if o.ok => self.state.verify.on_exec_ok(),
                            None => {}
                        }
                    }
                    Effect::Read if o.ok => self.state.verify.on_read(),
                    _ => {}
                }
                (o.text, o.ok, o.effect, false, false)
            }
        }
    }

    /// Run the finish gate: (accepted, rejection message).
    fn finish_gate(&mut self) -> (bool, String) {
        let input = GateInput {
            task: &self.state.task,
            productive: self.state.productive,
            open_plan_items: self.state.plan.open_items(),
            verify_feedback: self.cfg.ablations.on(Mechanism::VerifyFeedback),
        };
        let mut runs: Vec<TestOutcome> = Vec::new();
        let decision = {
            let mut env = GateCtx {
                tools: &mut self.tools,
                timeout: self.cfg.test_timeout_s,
                world: self.state.world,
                ledger: &mut self.ledger,
            };
            self.state.gate.evaluate(&input, &mut env, &mut runs)
        };
        for r in runs {
            self.state.verify.on_test(r.verdict);
            self.state.tests.push((r.command.clone(), r.verdict));
            self.events.mechanism(
                "finish_gate",
                "test_run",
                json!({"command": r.command, "verdict": r.verdict}),
            );
        }
        match decision {
            GateDecision::Accept => {
                self.events.mechanism("finish_gate", "accept", json!({}));
                (true, String::new())
            }
            GateDecision::Reject { check, message } => {
                self.events.mechanism("finish_gate", check, json!({}));
                (false, message)
            }
        }
    }

    /// Verification level so far.
    pub fn level(&self) -> Level {
        self.state.verify.level()
    }
}

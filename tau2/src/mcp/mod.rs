//! `lrab tau2 mcp`: one task's environment served over the Model Context Protocol (stdio), so
//! any agent that takes MCP servers can be graded on τ². The domain's agent tools keep
//! upstream's schemas; `send_message_to_customer` talks to the user simulator; the policy is
//! the server's `instructions`. The conversation runs through upstream's loop, unchanged
//! (session.rs), and is graded and written as `lrab tau2 run` writes it. See docs/tau2.md.

mod protocol;
mod relay;
mod session;

pub use relay::{relay, Relayed};
pub use session::CUSTOMER_TOOL;

use protocol::serve;

use crate::domains::{resolve_data_dir, Domain, DomainKind};
use crate::evaluate::evaluate;
use crate::llm::{Api, Backend};
use crate::message::Message;
use crate::options::{iso_time, UserKind, SCRIPTED_OPENING};
use crate::orchestrator::{self, Limits, Outcome, User};
use crate::results::{self, RunInfo, SimRecord};
use crate::scripted::ScriptedUser;
use crate::task::Task;
use anyhow::{anyhow, Context, Result};
use clap::Args;
use session::{Bridge, Session};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

#[derive(Debug, Args)]
pub struct McpArgs {
    #[arg(long, value_enum)]
    pub domain: DomainKind,
    /// the task whose environment is served
    #[arg(long)]
    pub task: String,
    /// who plays the customer
    #[arg(long, value_enum, default_value_t = UserKind::Llm)]
    pub user: UserKind,
    /// user-simulator model (required for --user llm)
    #[arg(long, default_value = "")]
    pub user_model: String,
    #[arg(long, default_value = "http://127.0.0.1:11434")]
    pub user_backend: String,
    #[arg(long, value_enum, default_value_t = Api::Ollama)]
    pub user_api: Api,
    /// the user simulator's seed (the trial's seed)
    #[arg(long, default_value_t = 300)]
    pub seed: u64,
    /// the trial number recorded
    #[arg(long, default_value_t = 0)]
    pub trial: usize,
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f64,
    #[arg(long)]
    pub think: bool,
    #[arg(long, default_value_t = 32768)]
    pub num_ctx: u64,
    #[arg(long, default_value_t = orchestrator::DEFAULT_MAX_STEPS)]
    pub max_steps: usize,
    #[arg(long, default_value_t = orchestrator::DEFAULT_MAX_ERRORS)]
    pub max_errors: usize,
    /// messages already exchanged (a JSON list, e.g. greeting and the customer's first
    /// message as `lrab tau2 run` prepares them); default: the task's own history
    #[arg(long)]
    pub history: Option<PathBuf>,
    /// the arm name recorded (results.json `agent_info.implementation = lrab_<arm>`)
    #[arg(long, default_value = "mcp")]
    pub arm: String,
    /// the agent's model, recorded
    #[arg(long, default_value = "")]
    pub agent_model: String,
    /// output folder: results.json and tau2.csv, written when the conversation ends
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long)]
    pub fixed_clock: bool,
}

/// Everything one served conversation needs, set up before the first byte is read.
struct Prepared<'a> {
    domain: &'a Domain,
    task: &'a Task,
    env: crate::Env,
    history: Vec<Message>,
    user: UserSpec,
}

/// The customer, built before serving; the scripted one (not `Send`) is made on the loop's
/// thread.
enum UserSpec {
    Scripted,
    Llm(Box<crate::llm::LlmUser>),
}

impl UserSpec {
    fn into_user(self) -> Box<dyn User> {
        match self {
            UserSpec::Scripted => Box::new(ScriptedUser::new(vec![SCRIPTED_OPENING.into()])),
            UserSpec::Llm(u) => u,
        }
    }
}

/// `lrab tau2 mcp`: serves stdin/stdout until the client closes stdin.
pub fn run(data: Option<&Path>, a: &McpArgs, out: &mut dyn Write) -> Result<()> {
    let dir = resolve_data_dir(data)?;
    let domain = Domain::load(&dir, a.domain)?;
    let task = domain.task(&a.task)?;
    let p = prepare(&dir, &domain, task, a)?;
    let stdin = std::io::stdin();
    serve_task(p, a, &mut stdin.lock(), out)
}

fn prepare<'a>(
    dir: &Path,
    domain: &'a Domain,
    task: &'a Task,
    a: &McpArgs,
) -> Result<Prepared<'a>> {
    let history: Vec<Message> = match &a.history {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            serde_json::from_str(&text)
                .map_err(|e| anyhow!("{}: not a JSON list of messages: {e}", p.display()))?
        }
        None => task
            .initial_state
            .as_ref()
            .and_then(|s| s.message_history.clone())
            .unwrap_or_default(),
    };
    let mut env = domain.env();
    env.set_state(task.initial_state.as_ref(), &history)
        .map_err(|e| anyhow!("task {}: {e}", task.id))?;
    let user = match a.user {
        UserKind::Scripted => UserSpec::Scripted,
        UserKind::Llm => {
            if a.user_model.is_empty() {
                anyhow::bail!("--user-model is required for --user llm");
            }
            let mut b = Backend::new(&a.user_backend, a.user_api, &a.user_model);
            b.seed = Some(a.seed);
            b.num_ctx = Some(a.num_ctx);
            b.temperature = a.temperature;
            b.think = Some(a.think);
            UserSpec::Llm(Box::new(crate::participants::llm_user(dir, &env, task, b)?))
        }
    };
    Ok(Prepared {
        domain,
        task,
        env,
        history,
        user,
    })
}

/// The server's instructions: the agent's role, how to talk to the customer, the policy,
/// and the customer's first message.
pub fn instructions(policy: &str, opening: Option<&str>) -> String {
    let first = match opening {
        Some(t) => format!("\n<customer_first_message>\n{t}\n</customer_first_message>"),
        None => "\n(The conversation ended before the agent was asked anything.)".into(),
    };
    format!(
        "<instructions>\nYou are a customer service agent helping the customer as the <policy> below describes.\n\
Talk to the customer only with the tool {CUSTOMER_TOOL}: each call sends one message and returns the customer's reply.\n\
Use the other tools to look up and change records. Follow the policy at all times.\n</instructions>\n<policy>\n{policy}\n</policy>{first}"
    )
}

/// Runs the conversation loop on its own thread and serves the client on this one; the
/// record is written when the loop ends.
fn serve_task(
    p: Prepared<'_>,
    a: &McpArgs,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<()> {
    let Prepared {
        domain,
        task,
        mut env,
        history,
        user,
    } = p;
    let (req_tx, req_rx) = std::sync::mpsc::channel();
    let (ev_tx, ev_rx) = std::sync::mpsc::channel();
    let limits = Limits {
        max_steps: a.max_steps,
        max_errors: a.max_errors,
    };
    let mut session = Session {
        name: format!("tau2-{}", domain.kind.name()),
        instructions: String::new(),
        tools: session::mcp_tools(&env.tool_schemas("assistant")),
        requests: Some(req_tx),
        events: ev_rx,
        ended: None,
    };
    let start_time = clock(a.fixed_clock, 0);
    std::thread::scope(|s| -> Result<()> {
        let looped = s.spawn(move || -> Result<()> {
            let mut bridge = Bridge::new(req_rx, ev_tx);
            let mut user = user.into_user();
            let t0 = Instant::now();
            let outcome =
                orchestrator::run(&mut env, &mut bridge, user.as_mut(), &history, &limits);
            let duration = if a.fixed_clock {
                0.0
            } else {
                t0.elapsed().as_secs_f64()
            };
            // the record is on disk before the client learns the conversation is over
            let written = write_record(domain, task, a, outcome.clone(), start_time, duration);
            bridge.finish(&outcome.messages, &outcome.termination);
            written
        });
        let opening = session.opening();
        session.instructions = instructions(&domain.policy, opening.as_deref());
        let served = serve(&mut session, input, out);
        // stdin closed: the agent has left; the loop ends the conversation (agent_stop)
        session.requests = None;
        let written = looped
            .join()
            .map_err(|_| anyhow!("the conversation loop panicked"))?;
        served.context("MCP stdio")?;
        written
    })
}

fn clock(fixed: bool, n: u64) -> String {
    if fixed {
        iso_time(UNIX_EPOCH + std::time::Duration::from_secs(n))
    } else {
        iso_time(SystemTime::now())
    }
}

/// Grades the conversation (NL assertions stay ungraded: `lrab tau2 grade --judge-model`
/// re-grades the file) and writes results.json and tau2.csv to `--out`.
fn write_record(
    domain: &Domain,
    task: &Task,
    a: &McpArgs,
    outcome: Outcome,
    start_time: String,
    duration: f64,
) -> Result<()> {
    let eval = evaluate(domain, task, &outcome.messages, &outcome.termination, None)?;
    let simulated = a.user == UserKind::Llm && lrab_sim::detect(&a.user_backend).is_some();
    let record = SimRecord {
        task_id: task.id.clone(),
        trial: a.trial,
        seed: a.seed,
        start_time,
        end_time: clock(a.fixed_clock, 1),
        duration,
        outcome,
        eval,
    };
    let info = RunInfo {
        domain: domain.kind.name().into(),
        policy: domain.policy.clone(),
        arm: a.arm.clone(),
        user: match a.user {
            UserKind::Scripted => "lrab_scripted_user".into(),
            UserKind::Llm => "user_simulator".into(),
        },
        agent_model: a.agent_model.clone(),
        user_model: a.user_model.clone(),
        num_trials: 1,
        max_steps: a.max_steps,
        max_errors: a.max_errors,
        seed: a.seed,
        temperature: a.temperature,
        think: a.think,
        timestamp: clock(a.fixed_clock, 0),
        simulated,
    };
    let records = [record];
    let rj = results::results_json(&info, &[task], &records);
    results::write_output(
        &a.out.join("results.json"),
        serde_json::to_string_pretty(&rj)?.as_bytes(),
    )?;
    results::write_csv(
        &a.out.join("tau2.csv"),
        domain.kind.name(),
        &a.arm,
        &records,
        simulated,
    )?;
    // the task's cell merged into the folder's manifest, as `run` does
    results::write_manifest(&a.out, domain.kind.name(), &a.arm, &records)?;
    Ok(())
}

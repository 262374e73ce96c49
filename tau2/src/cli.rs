//! `lrab tau2 …`: run conversations, replay gold actions, grade results files.

use crate::domains::{resolve_data_dir, Domain, DomainKind};
use crate::evaluate::{evaluate, Judge};
use crate::external::ExternalAgent;
use crate::gold;
use crate::llm::{Api, Backend, LlmJudge};
use crate::message::Message;
use crate::orchestrator;
use crate::protocol::{pass_hat_ks, per_task_rewards, ErrorCells};
use crate::results::{self, SimRecord};
use crate::task::{parse_tasks, Task};
use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

#[derive(Debug, Args)]
pub struct Tau2Args {
    /// tau2 data folder (holding domains/ and user_simulator/); default $TAU2_DATA_DIR, else
    /// the data lookup (LRAB_DATA or ../shared/data, then the cache of `lrab data fetch`)
    #[arg(long, global = true)]
    pub tau2_data: Option<PathBuf>,
    #[command(subcommand)]
    pub cmd: Tau2Cmd,
}

/// One variant is much larger than the others; it is built once per process.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Tau2Cmd {
    /// Run conversations (agent vs. simulated user), grade them, write results.json + CSV
    Run(RunArgs),
    /// Replay every task's gold actions, compare DB hashes with test_vectors.json and check
    /// the env assertions (telecom)
    ReplayGold {
        /// the one domain to replay (default: airline, retail and telecom)
        #[arg(long, value_enum)]
        domain: Option<DomainKind>,
    },
    /// Re-grade a tau2-format results.json
    Grade(GradeArgs),
    /// Serve one task's environment over MCP (stdio) to any agent; graded as `run` grades
    Mcp(crate::mcp::McpArgs),
    /// The MCP server a confined agent starts: relays stdio to the conversation served by
    /// the process that launched the agent (FIFOs in DIR)
    McpRelay {
        /// the folder holding the req/resp FIFOs
        dir: PathBuf,
    },
}

/// The agent of `lrab tau2 run --agent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentKind {
    /// The reference LLM agent (upstream's prompt and tool loop)
    Plain,
    /// Our harness's loop and mechanisms (lrab-harness) driving the model
    Harness,
    /// The task's gold actions, scripted (no model)
    Gold,
    /// A command-line arm (`arms/<name>.toml`), served the task over MCP by the `lrab` binary
    Arm(String),
}

impl AgentKind {
    /// The value as typed on the command line (also the arm name in the results).
    pub fn name(&self) -> &str {
        match self {
            AgentKind::Plain => "plain",
            AgentKind::Harness => "harness",
            AgentKind::Gold => "gold",
            AgentKind::Arm(n) => n,
        }
    }
}

/// `--agent`: plain, harness, gold, or any other name as a command-line arm.
fn parse_agent(s: &str) -> std::result::Result<AgentKind, String> {
    Ok(match s {
        "plain" => AgentKind::Plain,
        "harness" => AgentKind::Harness,
        "gold" => AgentKind::Gold,
        n if !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) =>
        {
            AgentKind::Arm(n.into())
        }
        _ => {
            return Err(format!(
                "'{s}' is not an agent (plain, harness, gold or an arm name)"
            ))
        }
    })
}

/// The user of `lrab tau2 run --user`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum UserKind {
    /// Upstream's LLM user simulator (needs --user-model)
    Llm,
    /// One opening line, then `###STOP###` after the agent's next text: ends gold runs with
    /// user_stop, no model needed
    Scripted,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[arg(long, value_enum)]
    pub domain: DomainKind,
    /// which agent talks to the user: plain, harness, gold, or a command-line arm's name
    /// (arms/<name>.toml with an [mcp] section; launched confined through the proxy)
    #[arg(long, default_value = "plain", value_parser = parse_agent)]
    pub agent: AgentKind,
    /// agent model (not needed for --agent gold)
    #[arg(long, default_value = "")]
    pub model: String,
    /// who plays the customer
    #[arg(long, value_enum, default_value_t = UserKind::Llm)]
    pub user: UserKind,
    /// user-simulator model (required for --user llm)
    #[arg(long, default_value = "")]
    pub user_model: String,
    /// agent backend base URL
    #[arg(long, default_value = "http://127.0.0.1:11434")]
    pub backend: String,
    /// agent backend API
    #[arg(long, value_enum, default_value_t = Api::Ollama)]
    pub api: Api,
    /// user-simulator backend (default: the agent backend)
    #[arg(long)]
    pub user_backend: Option<String>,
    /// user-simulator backend API (default: --api)
    #[arg(long, value_enum)]
    pub user_api: Option<Api>,
    /// NL-assertion judge model; without it NL-gated tasks are reported as ungraded
    #[arg(long)]
    pub judge_model: Option<String>,
    #[arg(long)]
    pub judge_backend: Option<String>,
    /// judge backend API (default: --api)
    #[arg(long, value_enum)]
    pub judge_api: Option<Api>,
    /// comma-separated task ids (default: the whole base split)
    #[arg(long, value_delimiter = ',')]
    pub tasks: Vec<String>,
    #[arg(long, default_value_t = 1)]
    pub trials: usize,
    #[arg(long, default_value_t = 300)]
    pub seed: u64,
    #[arg(long, default_value_t = orchestrator::DEFAULT_MAX_STEPS)]
    pub max_steps: usize,
    #[arg(long, default_value_t = orchestrator::DEFAULT_MAX_ERRORS)]
    pub max_errors: usize,
    /// context window requested from Ollama (tau2 prompts are long)
    #[arg(long, default_value_t = 32768)]
    pub num_ctx: u64,
    /// sampling temperature of the agent model and the user simulator alike (upstream: 0)
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f64,
    /// let thinking models think (Ollama's `think`), agent and user simulator alike; without
    /// it both are sent `think: false`, as our harness sends it
    #[arg(long)]
    pub think: bool,
    /// output folder (results.json, tau2.csv)
    #[arg(long, default_value = "results/tau2")]
    pub out: PathBuf,
    /// write fixed timestamps so identical runs give byte-identical files
    #[arg(long)]
    pub fixed_clock: bool,
    /// a command-line arm's time per conversation in seconds; killed at it, the conversation
    /// ends as `max_steps` (a limit, graded 0)
    #[arg(long, default_value_t = 600.0)]
    pub arm_timeout: f64,
    /// what an error cell (agent_error, user_error, infrastructure_error) left after the
    /// retry passes counts as: set aside (no reward) or 0 (the paper's protocol)
    #[arg(long, value_enum, default_value_t = ErrorCells::SetAside)]
    pub error_cells: ErrorCells,
    /// passes over the run re-running its error cells before --error-cells applies (the
    /// paper: 2)
    #[arg(long, default_value_t = 0)]
    pub retry_passes: usize,
    /// the arm's name in tau2.csv and the manifest (default: the --agent value), e.g. to tell
    /// a run's opencode from the published opencode in `lrab analyze`
    #[arg(long)]
    pub arm_name: Option<String>,
}

#[derive(Debug, Args)]
pub struct GradeArgs {
    pub results: PathBuf,
    #[arg(long)]
    pub judge_model: Option<String>,
    #[arg(long, default_value = "http://127.0.0.1:11434")]
    pub judge_backend: String,
    #[arg(long, value_enum, default_value_t = Api::Ollama)]
    pub judge_api: Api,
    /// also write the per-task CSV here
    #[arg(long)]
    pub csv: Option<PathBuf>,
    #[arg(long, default_value = "graded")]
    pub arm: String,
}

/// What the scripted user says before it stops (`--user scripted`).
pub(crate) const SCRIPTED_OPENING: &str = "Hello, I need help with my request.";

/// Entry point used by the `lrab` binary.
pub fn run(args: &Tau2Args, out: &mut dyn Write) -> Result<()> {
    run_with(args, out, None)
}

/// As [`run`], with the launcher of command-line arms (`--agent <arm>`), which the `lrab`
/// binary provides.
pub fn run_with(
    args: &Tau2Args,
    out: &mut dyn Write,
    ext: Option<&mut dyn ExternalAgent>,
) -> Result<()> {
    match &args.cmd {
        Tau2Cmd::ReplayGold { domain } => replay_gold_cmd(args.tau2_data.as_deref(), *domain, out),
        Tau2Cmd::Grade(g) => grade_cmd(args.tau2_data.as_deref(), g, out),
        Tau2Cmd::Run(r) => crate::run_cmd::run_cmd(args.tau2_data.as_deref(), r, out, ext),
        Tau2Cmd::Mcp(m) => crate::mcp::run(args.tau2_data.as_deref(), m, out),
        Tau2Cmd::McpRelay { dir } => crate::mcp::relay(dir, out),
    }
}

fn replay_gold_cmd(
    data: Option<&Path>,
    domain: Option<DomainKind>,
    out: &mut dyn Write,
) -> Result<()> {
    let dir = resolve_data_dir(data)?;
    // the vectors sit beside the domains in a full data folder; else the copy carried in the
    // repository (data/tau2/test_vectors.json, found by the data lookup)
    let mut vpath = dir.join("test_vectors.json");
    if !vpath.is_file() {
        vpath = lrab_data::file("tau2/test_vectors.json").map_err(|e| anyhow!("{e}"))?;
    }
    let vectors: Value = serde_json::from_str(
        &std::fs::read_to_string(&vpath)
            .with_context(|| format!("cannot read {}", vpath.display()))?,
    )
    .map_err(|e| anyhow!("{}: {e}", vpath.display()))?;
    let kinds = match domain {
        Some(d) => vec![d],
        None => vec![DomainKind::Airline, DomainKind::Retail, DomainKind::Telecom],
    };
    let started = Instant::now();
    let mut all_ok = true;
    for kind in kinds {
        let t_load = Instant::now();
        let d = Domain::load(&dir, kind)?;
        let load_s = t_load.elapsed().as_secs_f64();
        let t_replay = Instant::now();
        let name = kind.name();
        let (h, uh) = d.initial_hashes();
        let init_ok = vectors["initial_db_hashes"][name]["agent_db"].as_str() == Some(h.as_str())
            && vectors["initial_db_hashes"][name]["user_db"].as_str() == uh.as_deref();
        let rows = vectors[name]["tasks"]
            .as_array()
            .ok_or_else(|| anyhow!("{}: no vectors for {name}", vpath.display()))?;
        let mut matched = 0;
        let mut bad = Vec::new();
        let mut unmet = Vec::new();
        let (mut held, mut checked) = (0, 0);
        for row in rows {
            let id = row["id"].as_str().unwrap_or_default();
            let o = gold::replay_gold(&d, d.task(id)?)?;
            checked += o.assertions.len();
            held += o.assertions.iter().filter(|m| **m).count();
            if o.assertions.contains(&false) {
                unmet.push(id.to_string());
            }
            if Some(o.db_hash.as_str()) == row["gold_db_hash"].as_str()
                && o.user_db_hash.as_deref() == row["gold_user_db_hash"].as_str()
            {
                matched += 1;
            } else {
                bad.push(id.to_string());
            }
        }
        let asserted = if checked > 0 {
            format!("; {held}/{checked} env assertions hold after the gold actions")
        } else {
            String::new()
        };
        writeln!(
            out,
            "{name}: {matched}/{} gold hashes match{asserted}; initial hash {} (load {load_s:.3} s, replay+hash {:.3} s)",
            rows.len(),
            if init_ok { "ok" } else { "MISMATCH" },
            t_replay.elapsed().as_secs_f64()
        )?;
        if !bad.is_empty() {
            writeln!(out, "{name}: mismatching tasks: {}", bad.join(", "))?;
        }
        // A fact of the task data, not a hash mismatch: some tasks' gold actions alone do not
        // satisfy their assertions (upstream grades those gold runs 0 too; docs/tau2.md).
        if !unmet.is_empty() {
            writeln!(
                out,
                "{name}: env assertions not met by the gold actions alone: {}",
                unmet.join(", ")
            )?;
        }
        all_ok &= init_ok && bad.is_empty();
    }
    writeln!(out, "elapsed: {:.3} s", started.elapsed().as_secs_f64())?;
    if !all_ok {
        bail!("gold replay does not reproduce every upstream hash");
    }
    Ok(())
}

pub(crate) fn judge_for(model: Option<&str>, url: &str, api: Api) -> Option<LlmJudge> {
    model.map(|m| LlmJudge {
        backend: Backend::new(url, api, m),
    })
}

fn grade_cmd(data: Option<&Path>, g: &GradeArgs, out: &mut dyn Write) -> Result<()> {
    let dir = resolve_data_dir(data)?;
    let text = std::fs::read_to_string(&g.results)
        .with_context(|| format!("cannot read {}", g.results.display()))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| anyhow!("{}: not JSON: {e}", g.results.display()))?;
    let domain_name = v
        .pointer("/info/environment_info/domain_name")
        .and_then(|d| d.as_str())
        .ok_or_else(|| {
            anyhow!(
                "{}: info.environment_info.domain_name is missing",
                g.results.display()
            )
        })?;
    let domain = Domain::load(&dir, DomainKind::parse(domain_name)?)?;
    let file_tasks: Vec<Task> = match v.get("tasks") {
        Some(t) => parse_tasks(
            &t.to_string(),
            &format!("{} (tasks)", g.results.display()),
            None,
        )?,
        None => vec![],
    };
    let sims = v
        .get("simulations")
        .and_then(|s| s.as_array())
        .ok_or_else(|| anyhow!("{}: no simulations list", g.results.display()))?;
    let mut judge = judge_for(g.judge_model.as_deref(), &g.judge_backend, g.judge_api);
    let mut records = Vec::new();
    for (i, s) in sims.iter().enumerate() {
        let task_id = s
            .get("task_id")
            .map(|t| {
                t.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| t.to_string())
            })
            .ok_or_else(|| anyhow!("{}: simulation #{i} has no task_id", g.results.display()))?;
        let task = match file_tasks.iter().find(|t| t.id == task_id) {
            Some(t) => t,
            None => domain.task(&task_id)?,
        };
        let messages: Vec<Message> =
            serde_json::from_value(s.get("messages").cloned().unwrap_or(Value::Array(vec![])))
                .map_err(|e| anyhow!("{}: simulation #{i} messages: {e}", g.results.display()))?;
        let termination = s
            .get("termination_reason")
            .and_then(|t| t.as_str())
            .unwrap_or("user_stop")
            .to_string();
        let ev = evaluate(
            &domain,
            task,
            &messages,
            &termination,
            judge.as_mut().map(|j| j as &mut dyn Judge),
        )?;
        let steps = messages.len();
        records.push(SimRecord {
            task_id,
            trial: s.get("trial").and_then(|t| t.as_u64()).unwrap_or(0) as usize,
            seed: s.get("seed").and_then(|t| t.as_u64()).unwrap_or(0),
            start_time: String::new(),
            end_time: String::new(),
            duration: 0.0,
            outcome: orchestrator::Outcome {
                messages,
                termination,
                steps,
                errors: 0,
                note: None,
            },
            eval: ev,
        });
    }
    let trials = records.iter().map(|r| r.trial + 1).max().unwrap_or(0);
    // a file our run wrote carries its error-cell policy; upstream's files are graded as
    // upstream grades them (an agent_error is a 0)
    let policy = match v
        .pointer("/info/protocol/error_cells")
        .and_then(|p| p.as_str())
    {
        Some("zero") => Some(ErrorCells::Zero),
        Some(_) => Some(ErrorCells::SetAside),
        None => None,
    };
    let left = policy.map(|c| {
        let p = crate::protocol::ErrorPolicy::new(c, 0);
        (p.settle(&mut records), p)
    });
    summarize(&records, trials, out)?;
    if let Some((left, p)) = &left {
        writeln!(out, "{} (as the run recorded)", p.summary(&records, left))?;
    }
    if let Some(p) = &g.csv {
        // a results.json our own run labelled simulated stays labelled in the re-graded CSV
        let simulated = v
            .pointer("/info/simulated")
            .and_then(|s| s.as_bool())
            .unwrap_or(false);
        results::write_csv(p, domain.kind.name(), &g.arm, &records, simulated)?;
        writeln!(out, "wrote {}", p.display())?;
    }
    Ok(())
}

/// Every task's reward, the average over rewarded simulations and upstream's pass^k.
pub(crate) fn summarize(
    records: &[SimRecord],
    num_trials: usize,
    out: &mut dyn Write,
) -> Result<()> {
    for r in records {
        let reward = r
            .eval
            .reward
            .map(|x| format!("{x:.1}"))
            .unwrap_or_else(|| "ungraded".into());
        writeln!(
            out,
            "task {} trial {}: reward {reward} ({}) [{}]",
            r.task_id,
            r.trial,
            r.eval.components_text(),
            r.outcome.termination
        )?;
    }
    let graded: Vec<f64> = records.iter().filter_map(|r| r.eval.reward).collect();
    let ungraded = records.len() - graded.len();
    let avg = if graded.is_empty() {
        0.0
    } else {
        graded.iter().sum::<f64>() / graded.len() as f64
    };
    writeln!(
        out,
        "graded {}/{} simulations; average reward {avg:.4}; ungraded {ungraded}",
        graded.len(),
        records.len()
    )?;
    for (k, p) in pass_hat_ks(&per_task_rewards(records), num_trials) {
        writeln!(out, "pass^{k}: {p:.4}")?;
    }
    Ok(())
}

/// ISO-8601 UTC time, to the second (`lrab_util::iso_utc`).
pub fn iso_time(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    lrab_util::iso_utc(secs)
}

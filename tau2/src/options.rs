//! The options of `lrab tau2 run` and what every command that runs conversations shares
//! (the judge, the summary lines, timestamps). Below `cli`, `run_cmd`, `mcp` and
//! `participants`, so that those need nothing of each other's.

use crate::domains::DomainKind;
use crate::llm::{Api, Backend, LlmJudge};
use crate::orchestrator;
use crate::protocol::{pass_hat_ks, per_task_rewards, ErrorCells};
use crate::results::SimRecord;
use anyhow::Result;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

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

/// What the scripted user says before it stops (`--user scripted`).
pub(crate) const SCRIPTED_OPENING: &str = "Hello, I need help with my request.";

pub(crate) fn judge_for(model: Option<&str>, url: &str, api: Api) -> Option<LlmJudge> {
    model.map(|m| LlmJudge {
        backend: Backend::new(url, api, m),
    })
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

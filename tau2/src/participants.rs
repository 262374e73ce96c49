//! The participants of a conversation built from the command line: the agent of `--agent`
//! (plain, harness, gold) and the user of `--user` (upstream's LLM user simulator or the
//! scripted one), each with the run's sampling settings.

use crate::domains::Domain;
use crate::llm::{Api, Backend, LlmUser, PlainAgent};
use crate::options::{AgentKind, RunArgs, UserKind, SCRIPTED_OPENING};
use crate::orchestrator::{Agent, User};
use crate::scripted::{GoldAgent, ScriptedUser};
use crate::task::Task;
use anyhow::{anyhow, Context, Result};
use std::path::Path;

/// The agent of `--agent`.
pub(crate) fn agent_for(
    r: &RunArgs,
    api: Api,
    seed: u64,
    domain: &Domain,
    env: &crate::Env,
    task: &Task,
) -> Result<Box<dyn Agent>> {
    Ok(match r.agent {
        AgentKind::Gold => Box::new(GoldAgent::new(task)),
        AgentKind::Harness => harness_agent(r, api, seed, domain, env)?,
        AgentKind::Plain => {
            let mut ab = Backend::new(&r.backend, api, &r.model);
            ab.seed = Some(seed);
            ab.num_ctx = Some(r.num_ctx);
            ab.temperature = r.temperature;
            ab.think = Some(r.think);
            Box::new(PlainAgent::new(
                ab,
                &domain.policy,
                env.tool_schemas("assistant"),
            ))
        }
        AgentKind::Arm(ref n) => anyhow::bail!("--agent {n}: a command-line arm is not in-process"),
    })
}

/// The user of `--user`: scripted lines, or upstream's LLM user simulator, which gets the
/// user tools (filtered by the task's `user_tools`) and then the tools guideline file.
pub(crate) fn user_for(
    r: &RunArgs,
    api: Api,
    url: &str,
    seed: u64,
    dir: &Path,
    env: &crate::Env,
    task: &Task,
) -> Result<Box<dyn User>> {
    if r.user == UserKind::Scripted {
        return Ok(Box::new(ScriptedUser::new(vec![SCRIPTED_OPENING.into()])));
    }
    let mut ub = Backend::new(url, api, &r.user_model);
    ub.seed = Some(seed);
    ub.num_ctx = Some(r.num_ctx);
    ub.temperature = r.temperature;
    ub.think = Some(r.think);
    Ok(Box::new(llm_user(dir, env, task, ub)?))
}

/// As [`user_for`], made later on another thread (a command-line arm's conversation loop).
pub(crate) fn user_maker(
    r: &RunArgs,
    api: Api,
    url: &str,
    seed: u64,
    dir: &Path,
    env: &crate::Env,
    task: &Task,
) -> Result<crate::external::MakeUser> {
    if r.user == UserKind::Scripted {
        return Ok(Box::new(|| {
            Box::new(ScriptedUser::new(vec![SCRIPTED_OPENING.into()])) as Box<dyn User>
        }));
    }
    let mut ub = Backend::new(url, api, &r.user_model);
    ub.seed = Some(seed);
    ub.num_ctx = Some(r.num_ctx);
    ub.temperature = r.temperature;
    ub.think = Some(r.think);
    let u = llm_user(dir, env, task, ub)?;
    Ok(Box::new(move || Box::new(u) as Box<dyn User>))
}

/// Upstream's LLM user simulator on `backend` for `task`: the user tools (narrowed by the
/// task's `user_tools`) and the guideline file that goes with having tools or not.
pub(crate) fn llm_user(
    dir: &Path,
    env: &crate::Env,
    task: &Task,
    backend: Backend,
) -> Result<LlmUser> {
    let mut tools = if env.has_user_tools() {
        env.tool_schemas("user")
    } else {
        vec![]
    };
    if let Some(keep) = &task.user_tools {
        tools.retain(|t| keep.contains(&t.function.name));
    }
    let file = if tools.is_empty() {
        "simulation_guidelines.md"
    } else {
        "simulation_guidelines_tools.md"
    };
    let path = dir.join("user_simulator").join(file);
    let guide = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "cannot read the user-simulator guidelines {}",
            path.display()
        )
    })?;
    Ok(LlmUser::new(
        backend,
        &guide,
        &task.user_scenario.to_string(),
        tools,
    ))
}

/// Build the `harness` arm: lrab-harness's backend for the chosen API plus its mechanisms.
fn harness_agent(
    r: &RunArgs,
    api: Api,
    seed: u64,
    domain: &Domain,
    env: &crate::Env,
) -> Result<Box<dyn Agent>> {
    use crate::domains::ToolKind;
    use crate::harness_agent::HarnessAgent;
    use lrab_harness::backend::{Model, OllamaBackend, OllamaConfig, OpenAiBackend, OpenAiConfig};
    let model: Box<dyn Model> = match api {
        Api::Ollama => {
            let mut cfg = OllamaConfig::new(&r.backend, &r.model);
            cfg.seed = Some(seed as i64);
            cfg.num_ctx = Some(r.num_ctx);
            cfg.temperature = Some(r.temperature);
            cfg.think = r.think;
            Box::new(OllamaBackend::connect(cfg).map_err(|e| anyhow!("harness backend: {e}"))?)
        }
        Api::OpenAi => {
            let mut cfg = OpenAiConfig::new(&r.backend, &r.model);
            cfg.seed = Some(seed as i64);
            cfg.temperature = Some(r.temperature);
            cfg.api_key = std::env::var("OPENAI_API_KEY").ok();
            Box::new(OpenAiBackend::connect(cfg).map_err(|e| anyhow!("harness backend: {e}"))?)
        }
    };
    let tools = env.tool_schemas("assistant");
    let writes: Vec<String> = tools
        .iter()
        .map(|t| t.function.name.as_str())
        .filter(|n| env.tool_kind("assistant", n) == Some(ToolKind::Write))
        .map(str::to_string)
        .collect();
    Ok(Box::new(HarnessAgent::new(
        model,
        &domain.policy,
        &tools,
        writes,
        r.num_ctx,
    )))
}

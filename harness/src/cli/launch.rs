//! `run`: read the prompt, connect the backend (its context window and tool support), run the
//! agent loop and map what happened onto the documented exit codes.

use super::*;
use crate::agent::{Agent, AgentConfig, RunStatus, ToolProtocol};
use crate::backend::{
    BackendError, Model, OllamaBackend, OllamaConfig, OpenAiBackend, OpenAiConfig,
};

/// Exit code for a backend error at startup or during the run.
pub fn exit_for_backend(e: &BackendError) -> i32 {
    match e {
        BackendError::Unreachable(_) => EXIT_UNREACHABLE,
        BackendError::ModelNotFound(_) => EXIT_MODEL_NOT_FOUND,
        BackendError::NoToolSupport(_) => EXIT_NO_TOOLS,
        _ => EXIT_BACKEND,
    }
}

fn fail(code: i32, msg: &str) -> i32 {
    eprintln!("lrab-harness: {msg}");
    code
}

/// A connected backend and what the run needs to know about it.
struct Connected {
    model: Box<dyn Model>,
    num_ctx: u64,
    /// Where `num_ctx` came from.
    source: &'static str,
    /// The model has no `tools` capability: use the text protocol.
    text: bool,
}

/// The window for an OpenAI-compatible server: the one it runs with, else the flag or the
/// default (never more than a known bound).
pub fn openai_context(
    probe: &crate::backend::openai::ContextProbe,
    flag: Option<u64>,
) -> (u64, &'static str) {
    match (probe.runtime, flag) {
        (Some((n, _)), Some(f)) if f < n => (f, "flag"),
        (Some((n, src)), _) => (n, src),
        (None, f) => {
            let (want, src) = f.map_or((DEFAULT_NUM_CTX, "default"), |f| (f, "flag"));
            match probe.bound {
                Some((b, bsrc)) if b < want => (b, bsrc),
                _ => (want, src),
            }
        }
    }
}

fn connect(a: &RunArgs) -> Result<Connected, BackendError> {
    let mut last = None;
    for attempt in 0..3 {
        if attempt > 0 {
            std::thread::sleep(std::time::Duration::from_millis(500 * attempt));
        }
        let r: Result<Connected, BackendError> = match a.api {
            Api::Ollama => {
                let mut cfg = OllamaConfig::new(&a.backend_url, &a.model);
                cfg.temperature = Some(a.temperature);
                cfg.think = a.think;
                let want = a.num_ctx.unwrap_or(DEFAULT_NUM_CTX);
                cfg.num_ctx = Some(want);
                // a prompt that does not fit is refused (and compacted by us), never cut
                cfg.truncate = Some(false);
                cfg.require_tools = a.tool_protocol == ProtocolArg::Native;
                OllamaBackend::connect(cfg).map(|mut b| {
                    // never ask for more context than the model has
                    let (ctx, source) = match b.info.context_length {
                        Some(m) if m < want => (m, "api_show"),
                        _ => (
                            want,
                            if a.num_ctx.is_some() {
                                "flag"
                            } else {
                                "default"
                            },
                        ),
                    };
                    b.cfg.num_ctx = Some(ctx);
                    let text = a.tool_protocol == ProtocolArg::Text
                        || (!b.info.capabilities.is_empty() && !b.info.has("tools"));
                    Connected {
                        model: Box::new(b),
                        num_ctx: ctx,
                        source,
                        text,
                    }
                })
            }
            Api::OpenAi => {
                let mut cfg = OpenAiConfig::new(&a.backend_url, &a.model);
                cfg.temperature = Some(a.temperature);
                cfg.api_key = std::env::var("OPENAI_API_KEY").ok();
                OpenAiBackend::connect(cfg).map(|b| {
                    let (ctx, source) = openai_context(&b.context, a.num_ctx);
                    Connected {
                        model: Box::new(b),
                        num_ctx: ctx,
                        source,
                        text: a.tool_protocol == ProtocolArg::Text,
                    }
                })
            }
        };
        match r {
            Ok(x) => return Ok(x),
            Err(e @ BackendError::Unreachable(_)) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or(BackendError::Unreachable("no attempt".into())))
}

/// Why the prompt file cannot be the task.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("cannot read prompt file '{}': {err}", path.display())]
    Read {
        path: std::path::PathBuf,
        err: std::io::Error,
    },
    #[error("prompt file '{}' is empty", path.display())]
    Empty { path: std::path::PathBuf },
}

/// Read and check the prompt file.
pub fn read_prompt(path: &std::path::Path) -> Result<String, PromptError> {
    let bytes = std::fs::read(path).map_err(|err| PromptError::Read {
        path: path.to_path_buf(),
        err,
    })?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if text.trim().is_empty() {
        return Err(PromptError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(text)
}

/// `lrab-harness run`: every check that needs no backend first (so a bad prompt, workdir,
/// state folder or endpoint is a usage error, not a backend one), then the agent loop.
pub fn run(a: &RunArgs) -> i32 {
    let (task, web) = match check_inputs(a) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let conn = match connect(a) {
        Ok(x) => x,
        Err(e) => {
            return fail(
                exit_for_backend(&e),
                &format!("{e} (backend {})", a.backend_url),
            )
        }
    };
    if conn.source == "default" && a.api == Api::OpenAi {
        eprintln!(
            "lrab-harness: warning: the server did not report its context window; assuming {} tokens (set --num-ctx)",
            conn.num_ctx
        );
    }
    let (cfg, model) = agent_config(a, &task, conn, web);
    crate::tools::shell::install_signal_handlers();
    let mut agent = match Agent::new(cfg, model) {
        Ok(ag) => ag,
        Err(e) => return fail(EXIT_WORKDIR, &e.to_string()),
    };
    for w in &agent.warnings {
        eprintln!("lrab-harness: warning: {w}");
    }
    if !a.quiet {
        print_banner(a, &agent);
    }
    if agent.resumed {
        lrab_util::outln!(
            "[lrab-harness] resumed checkpoint: {} messages, turn {}",
            agent.state.messages.len(),
            agent.state.turn
        );
    }
    exit_code(&agent.run())
}

/// The prompt, the workdir, the state folder and the web endpoint, checked before the backend
/// is contacted; the task text and the endpoint, or the exit code (its error printed).
fn check_inputs(a: &RunArgs) -> Result<(String, Option<String>), i32> {
    let task = read_prompt(&a.prompt_file).map_err(|e| fail(EXIT_PROMPT, &e.to_string()))?;
    if !a.workdir.is_dir() {
        return Err(fail(
            EXIT_WORKDIR,
            &format!(
                "workdir '{}' does not exist or is not a directory",
                a.workdir.display()
            ),
        ));
    }
    if let Err(e) = crate::startup::check(&a.workdir) {
        return Err(fail(e.exit_code(), &e.to_string()));
    }
    // the state folder is checked (and made) before the backend is contacted too
    let state = match &a.state_dir {
        Some(p) => Ok(p.clone()),
        None => crate::state_dir::default_for(&a.workdir),
    };
    if let Err(e) = state.and_then(|p| crate::state_dir::StateDir::open(&p, &a.workdir)) {
        return Err(fail(EXIT_WORKDIR, &e.to_string()));
    }
    // checked before contacting the backend: a bad endpoint is a usage error
    let web = web_endpoint(
        a.web_search.as_deref(),
        std::env::var("LRAB_WEB_SEARCH").ok().as_deref(),
    )
    .map_err(|e| fail(EXIT_USAGE, &e.to_string()))?;
    Ok((task, web))
}

/// The agent's configuration from the flags and what the backend reported.
fn agent_config(
    a: &RunArgs,
    task: &str,
    conn: Connected,
    web: Option<String>,
) -> (AgentConfig, Box<dyn Model>) {
    let mut cfg = AgentConfig::new(&a.workdir, task);
    cfg.ablations = a.ablate.clone();
    cfg.max_turns = a.max_turns;
    cfg.time_budget_min = a.time_budget;
    cfg.num_ctx = conn.num_ctx;
    cfg.num_ctx_source = conn.source.to_string();
    cfg.tool_protocol = match (a.tool_protocol, conn.text) {
        (_, true) => ToolProtocol::Text,
        (ProtocolArg::Native, false) => ToolProtocol::Native,
        _ => ToolProtocol::Auto,
    };
    cfg.verbose = !a.quiet;
    cfg.allow_unconfined = a.allow_unconfined;
    cfg.web_search = web;
    cfg.state_dir = a.state_dir.clone();
    (cfg, conn.model)
}

/// The one line saying what runs: model, backend, protocol, tier, context, prefill, ablations.
fn print_banner(a: &RunArgs, agent: &Agent<Box<dyn Model>>) {
    lrab_util::outln!(
        "[lrab-harness] model {} via {} ({:?} API, {} tool protocol), tier {:?}, context {} ({}), static prefill {} tokens, ablated: [{}]",
        a.model,
        a.backend_url,
        a.api,
        if agent.state.text_protocol { "text" } else { "native" },
        agent.state.tier,
        agent.cfg.num_ctx,
        agent.cfg.num_ctx_source,
        if agent.state.text_protocol {
            crate::mechanisms::text_protocol::static_prefill()
        } else {
            prefill::static_prefill()
        },
        agent.cfg.ablations.names().join(",")
    );
}

/// The documented exit code for how the run ended.
fn exit_code(out: &crate::agent::RunOutcome) -> i32 {
    match &out.status {
        RunStatus::Finished | RunStatus::Answered => EXIT_OK,
        // the harness ended the run itself because the model stopped making progress: not a
        // failure of the process (an arm that gives up exits 0 like any other that stops, and
        // the files it left are scored); the report and this line say how it ended
        RunStatus::Stalled => {
            eprintln!(
                "lrab-harness: stopped unfinished: the model made no progress (stalled); the workdir holds what was done"
            );
            EXIT_OK
        }
        RunStatus::BackendFailed(msg) => {
            let code = out
                .backend_error
                .as_ref()
                .map(exit_for_backend)
                .unwrap_or(EXIT_BACKEND);
            fail(code, msg)
        }
        other => {
            eprintln!(
                "lrab-harness: stopped unfinished ({}); relaunching the same command reports the same end",
                other.name()
            );
            EXIT_UNFINISHED
        }
    }
}

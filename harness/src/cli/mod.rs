//! The command line (the arm protocol). `run` is what the runner's arm file calls; relaunching
//! the identical command in the same workdir resumes from the checkpoint.
//!
//! Exit codes (documented in docs/harness.md):
//! 0 finished (or a chat question answered) · 2 usage error · 3 prompt file missing/unreadable/
//! empty · 4 workdir missing or unwritable · 5 backend unreachable · 6 model not found ·
//! 7 model cannot chat (or lacks tools with `--tool-protocol native`) · 8 backend failed
//! during the run · 9 stopped unfinished
//! (max turns, time budget, stalled; resumable) · 128+n terminated by signal n.

use crate::agent::{Agent, AgentConfig, RunStatus, ToolProtocol};
use crate::backend::{
    BackendError, Model, OllamaBackend, OllamaConfig, OpenAiBackend, OpenAiConfig,
};
use crate::mechanisms::{prefill, Ablations, Mechanism};
use std::path::PathBuf;

pub const EXIT_OK: i32 = 0;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_PROMPT: i32 = 3;
pub const EXIT_WORKDIR: i32 = 4;
pub const EXIT_UNREACHABLE: i32 = 5;
pub const EXIT_MODEL_NOT_FOUND: i32 = 6;
pub const EXIT_NO_TOOLS: i32 = 7;
pub const EXIT_BACKEND: i32 = 8;
pub const EXIT_UNFINISHED: i32 = 9;

/// The API the backend is spoken to in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Api {
    /// Ollama's native API (`/api/chat`).
    Ollama,
    /// The OpenAI-compatible API (`/v1/chat/completions`).
    #[value(name = "openai")]
    OpenAi,
}

/// How tools reach the model (`--tool-protocol`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ProtocolArg {
    /// Native tool definitions; the text protocol for a model without the `tools`
    /// capability (from `/api/show`, or when the server refuses tools).
    Auto,
    /// Native tool definitions only; a model without tools is refused (exit 7).
    Native,
    /// Tools described in the system prompt, calls read back from the reply text.
    Text,
}

/// The context window used when nothing else tells it.
pub const DEFAULT_NUM_CTX: u64 = 32768;

/// Everything `run` needs, resolved (environment merged, values checked).
#[derive(Clone, Debug, PartialEq)]
pub struct RunArgs {
    pub model: String,
    pub prompt_file: PathBuf,
    pub workdir: PathBuf,
    pub backend_url: String,
    pub api: Api,
    pub time_budget: Option<f64>,
    pub ablate: Ablations,
    /// `--num-ctx` when given (else the server's window, or [`DEFAULT_NUM_CTX`]).
    pub num_ctx: Option<u64>,
    pub tool_protocol: ProtocolArg,
    pub max_turns: u32,
    pub temperature: f64,
    pub think: bool,
    pub quiet: bool,
    /// Run model-chosen shell commands even without kernel confinement.
    pub allow_unconfined: bool,
    /// SearxNG-compatible JSON search endpoint enabling web_search/web_fetch (off: `None`).
    pub web_search: Option<String>,
}

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Run(Box<RunArgs>),
    Prefill,
    Mechanisms,
    /// Print the help text (no arguments, `help`, `-h`).
    Help(String),
    Version,
}

#[derive(clap::Parser)]
#[command(
    name = "lrab-harness",
    about = "The lrab agent harness arm for small local models",
    disable_version_flag = true,
    disable_help_subcommand = true,
    after_help = ENV_HELP
)]
struct Cli {
    /// Print the version.
    #[arg(short = 'V', long = "version")]
    version: bool,
    #[command(subcommand)]
    command: Option<Sub>,
}

const ENV_HELP: &str =
    "environment: LRAB_ABLATION=a,b (merged with --ablate), OLLAMA_HOST (default backend URL),
             LRAB_WEB_SEARCH=URL (web search endpoint when --web-search is not given)";

#[derive(clap::Subcommand)]
enum Sub {
    /// Run a task in a workdir (relaunching the identical command resumes).
    Run(RunOpts),
    /// Print the static prefill estimate.
    Prefill,
    /// List the mechanisms (ablation names).
    Mechanisms,
    /// Print this help.
    Help,
}

#[derive(clap::Args)]
struct RunOpts {
    #[arg(long, value_name = "M")]
    model: Option<String>,
    #[arg(long, value_name = "FILE")]
    prompt_file: Option<PathBuf>,
    #[arg(long, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Default: $OLLAMA_HOST, else http://127.0.0.1:11434.
    #[arg(long, value_name = "URL")]
    backend_url: Option<String>,
    #[arg(long, value_enum, default_value = "ollama")]
    api: Api,
    /// Minutes.
    #[arg(long, value_name = "MIN", value_parser = positive_minutes, allow_negative_numbers = true)]
    time_budget: Option<f64>,
    /// Mechanisms to switch off (comma-separated; repeatable).
    #[arg(long, value_name = "a,b", value_parser = ablation_list)]
    ablate: Vec<Ablations>,
    /// Context window (default: what the server reports for --api openai, else 32768;
    /// clamped to the model's length).
    #[arg(long, value_name = "N", value_parser = number::<u64>, allow_negative_numbers = true)]
    num_ctx: Option<u64>,
    /// How tools reach the model.
    #[arg(long, value_enum, default_value = "auto")]
    tool_protocol: ProtocolArg,
    #[arg(long, value_name = "N", default_value_t = 200, value_parser = number::<u32>, allow_negative_numbers = true)]
    max_turns: u32,
    #[arg(long, value_name = "T", default_value_t = 0.0, value_parser = number::<f64>, allow_negative_numbers = true)]
    temperature: f64,
    #[arg(long)]
    think: bool,
    #[arg(long)]
    quiet: bool,
    /// Run model-chosen shell commands even when the kernel offers no confinement.
    #[arg(long)]
    allow_unconfined: bool,
    /// SearxNG-compatible JSON search endpoint (switches the web tools on).
    #[arg(long, value_name = "URL", value_parser = web_target)]
    web_search: Option<String>,
}

fn number<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("'{v}' is not a valid number"))
}

fn positive_minutes(v: &str) -> Result<f64, String> {
    let m: f64 = number(v)?;
    if m <= 0.0 {
        return Err("must be positive (minutes)".into());
    }
    Ok(m)
}

fn ablation_list(v: &str) -> Result<Ablations, String> {
    Ablations::parse(v)
}

fn web_target(v: &str) -> Result<String, String> {
    crate::tools::web::parse_target(v)?;
    Ok(v.to_string())
}

/// The usage lines printed after an error.
fn usage() -> String {
    use clap::CommandFactory;
    Cli::command().render_usage().to_string()
}

/// A clap error as one line in the harness's words (`--model is required`, `--max-turns: 'x'
/// is not a valid number`, `unknown option '--x'`).
fn one_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let ctx = |k: ContextKind| -> Option<String> {
        match e.get(k)? {
            ContextValue::String(s) => Some(s.clone()),
            ContextValue::Strings(v) => v.first().cloned(),
            _ => None,
        }
    };
    // `--model <M>` → `--model`
    let flag =
        |k: ContextKind| ctx(k).map(|a| a.split([' ', '=']).next().unwrap_or("").to_string());
    match e.kind() {
        ErrorKind::MissingRequiredArgument => match flag(ContextKind::InvalidArg) {
            Some(f) => format!("{f} is required"),
            None => "a required option is missing".into(),
        },
        ErrorKind::InvalidValue
            if ctx(ContextKind::InvalidValue)
                .unwrap_or_default()
                .is_empty() =>
        {
            format!(
                "{} needs a value",
                flag(ContextKind::InvalidArg).unwrap_or_default()
            )
        }
        ErrorKind::ValueValidation | ErrorKind::InvalidValue => {
            let f = flag(ContextKind::InvalidArg).unwrap_or_default();
            match std::error::Error::source(e) {
                Some(why) => format!("{f}: {why}"),
                None => format!(
                    "{f}: '{}' is not one of {}",
                    ctx(ContextKind::InvalidValue).unwrap_or_default(),
                    match e.get(ContextKind::ValidValue) {
                        Some(ContextValue::Strings(v)) => v.join(", "),
                        _ => String::new(),
                    }
                ),
            }
        }
        ErrorKind::UnknownArgument => {
            format!(
                "unknown option '{}'",
                ctx(ContextKind::InvalidArg).unwrap_or_default()
            )
        }
        ErrorKind::InvalidSubcommand => format!(
            "unknown command '{}'",
            ctx(ContextKind::InvalidSubcommand).unwrap_or_default()
        ),
        _ => e
            .to_string()
            .lines()
            .next()
            .unwrap_or("invalid command line")
            .trim_start_matches("error: ")
            .to_string(),
    }
}

/// Parse arguments (without the program name). `env_ablation` is `LRAB_ABLATION`, `env_host`
/// is `OLLAMA_HOST`.
pub fn parse(
    args: &[String],
    env_ablation: Option<&str>,
    env_host: Option<&str>,
) -> Result<Command, String> {
    use clap::{CommandFactory, Parser};
    let help = || Cli::command().render_help().to_string();
    let cli = match Cli::try_parse_from(
        std::iter::once("lrab-harness".to_string()).chain(args.iter().cloned()),
    ) {
        Ok(c) => c,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
            return Ok(Command::Help(e.to_string()))
        }
        Err(e) => return Err(one_line(&e)),
    };
    if cli.version {
        return Ok(Command::Version);
    }
    let r = match cli.command {
        None | Some(Sub::Help) => return Ok(Command::Help(help())),
        Some(Sub::Prefill) => return Ok(Command::Prefill),
        Some(Sub::Mechanisms) => return Ok(Command::Mechanisms),
        Some(Sub::Run(r)) => r,
    };
    let mut ablate = r
        .ablate
        .into_iter()
        .fold(Ablations::none(), Ablations::merge);
    if let Some(env) = env_ablation {
        ablate = ablate.merge(Ablations::parse(env).map_err(|e| format!("LRAB_ABLATION: {e}"))?);
    }
    // the required options are checked here, in the order the arm protocol names them
    let model = r.model.ok_or("--model is required")?;
    let prompt_file = r.prompt_file.ok_or("--prompt-file is required")?;
    let workdir = r.workdir.ok_or("--workdir is required")?;
    if r.num_ctx.is_some_and(|n| n < 1024) {
        return Err("--num-ctx must be at least 1024".into());
    }
    Ok(Command::Run(Box::new(RunArgs {
        model,
        prompt_file,
        workdir,
        backend_url: r
            .backend_url
            .or_else(|| env_host.map(str::to_string))
            .unwrap_or_else(|| "http://127.0.0.1:11434".into()),
        api: r.api,
        time_budget: r.time_budget,
        ablate,
        num_ctx: r.num_ctx,
        tool_protocol: r.tool_protocol,
        max_turns: r.max_turns,
        temperature: r.temperature,
        think: r.think,
        quiet: r.quiet,
        allow_unconfined: r.allow_unconfined,
        web_search: r.web_search,
    })))
}

/// The web search endpoint: `--web-search` wins over `LRAB_WEB_SEARCH`; empty means off; a
/// non-http(s) value is an error naming where it came from.
pub fn web_endpoint(flag: Option<&str>, env: Option<&str>) -> Result<Option<String>, String> {
    let (v, from) = match (flag, env) {
        (Some(f), _) => (f, "--web-search"),
        (None, Some(e)) => (e, "LRAB_WEB_SEARCH"),
        (None, None) => return Ok(None),
    };
    if v.trim().is_empty() {
        return Ok(None);
    }
    crate::tools::web::parse_target(v).map_err(|e| format!("{from}: {e}"))?;
    Ok(Some(v.trim().to_string()))
}

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

/// Read and check the prompt file.
pub fn read_prompt(path: &std::path::Path) -> Result<String, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("cannot read prompt file '{}': {e}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if text.trim().is_empty() {
        return Err(format!("prompt file '{}' is empty", path.display()));
    }
    Ok(text)
}

pub fn run(a: &RunArgs) -> i32 {
    let task = match read_prompt(&a.prompt_file) {
        Ok(t) => t,
        Err(e) => return fail(EXIT_PROMPT, &e),
    };
    if !a.workdir.is_dir() {
        return fail(
            EXIT_WORKDIR,
            &format!(
                "workdir '{}' does not exist or is not a directory",
                a.workdir.display()
            ),
        );
    }
    if let Err((code, e)) = crate::startup::check(&a.workdir) {
        return fail(code, &e);
    }
    // checked before contacting the backend: a bad endpoint is a usage error
    let web = match web_endpoint(
        a.web_search.as_deref(),
        std::env::var("LRAB_WEB_SEARCH").ok().as_deref(),
    ) {
        Ok(w) => w,
        Err(e) => return fail(EXIT_USAGE, &e),
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
    let mut cfg = AgentConfig::new(&a.workdir, &task);
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
    let model = conn.model;
    cfg.verbose = !a.quiet;
    cfg.allow_unconfined = a.allow_unconfined;
    cfg.web_search = web;
    crate::tools::shell::install_signal_handlers();
    let mut agent = match Agent::new(cfg, model) {
        Ok(ag) => ag,
        Err(e) => return fail(EXIT_WORKDIR, &e.to_string()),
    };
    for w in &agent.warnings {
        eprintln!("lrab-harness: warning: {w}");
    }
    if !a.quiet {
        println!(
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
    if agent.resumed {
        println!(
            "[lrab-harness] resumed checkpoint: {} messages, turn {}",
            agent.state.messages.len(),
            agent.state.turn
        );
    }
    let out = agent.run();
    match &out.status {
        RunStatus::Finished | RunStatus::Answered => EXIT_OK,
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
                "lrab-harness: stopped unfinished ({}); relaunch the same command to resume",
                other.name()
            );
            EXIT_UNFINISHED
        }
    }
}

pub fn print_prefill() {
    for (part, n) in prefill::breakdown() {
        println!("{part:<24} {n:>4}");
    }
    println!("{:<24} {:>4}", "static prefill", prefill::static_prefill());
    println!(
        "{:<24} {:>4}",
        "text-protocol prefill",
        crate::mechanisms::text_protocol::static_prefill()
    );
    println!("(the published benchmark's estimator: CJK chars + other chars/4 + 1 per string; Mingbird 774 in v1.5.0, 797 in v1.6)");
}

pub fn print_mechanisms() {
    for m in Mechanism::ALL {
        println!("{:<16} ablated: {}", m.name(), m.ablation_effect());
    }
    println!(
        "{:<16} not ablatable (canonical-path confinement, protected paths, the parsing shell classifier)",
        "security"
    );
}

/// Entry point used by the binary; returns the exit code.
pub fn main_with(args: &[String]) -> i32 {
    let env_ab = std::env::var("LRAB_ABLATION").ok();
    let env_host = std::env::var("OLLAMA_HOST").ok();
    match parse(args, env_ab.as_deref(), env_host.as_deref()) {
        Ok(Command::Run(a)) => run(&a),
        Ok(Command::Prefill) => {
            print_prefill();
            EXIT_OK
        }
        Ok(Command::Mechanisms) => {
            print_mechanisms();
            EXIT_OK
        }
        Ok(Command::Help(text)) => {
            println!("{text}");
            EXIT_OK
        }
        Ok(Command::Version) => {
            println!("lrab-harness {}", env!("CARGO_PKG_VERSION"));
            EXIT_OK
        }
        Err(e) => {
            eprintln!("lrab-harness: {e}\n{}", usage());
            EXIT_USAGE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parses_the_arm_protocol() {
        let c = parse(
            &s(&[
                "run",
                "--model",
                "m:1b",
                "--prompt-file",
                "task_input.txt",
                "--workdir",
                ".",
                "--api=openai",
                "--ablate",
                "anti_loop",
                "--num-ctx",
                "8192",
                "--time-budget",
                "90",
            ]),
            Some("clock"),
            None,
        )
        .unwrap();
        let Command::Run(a) = c else { panic!() };
        assert_eq!(a.model, "m:1b");
        assert_eq!(a.api, Api::OpenAi);
        assert!(a.ablate.off(Mechanism::AntiLoop) && a.ablate.off(Mechanism::Clock));
        assert_eq!(a.num_ctx, Some(8192));
        assert_eq!(a.tool_protocol, ProtocolArg::Auto);
        assert_eq!(a.time_budget, Some(90.0));
        assert_eq!(a.backend_url, "http://127.0.0.1:11434");
        assert!(!a.allow_unconfined);
        let c = parse(
            &s(&[
                "run",
                "--model",
                "m",
                "--prompt-file",
                "p",
                "--workdir",
                ".",
                "--allow-unconfined",
            ]),
            None,
            None,
        )
        .unwrap();
        let Command::Run(a) = c else { panic!() };
        assert!(a.allow_unconfined);
        assert_eq!(a.web_search, None);
        let base = [
            "run",
            "--model",
            "m",
            "--prompt-file",
            "p",
            "--workdir",
            ".",
        ];
        let mut v = base.to_vec();
        v.extend(["--web-search", "http://127.0.0.1:8888/search"]);
        let Command::Run(a) = parse(&s(&v), None, None).unwrap() else {
            panic!()
        };
        assert_eq!(
            a.web_search.as_deref(),
            Some("http://127.0.0.1:8888/search")
        );
        let mut v = base.to_vec();
        v.extend(["--web-search", "file:///tmp/x"]);
        let e = parse(&s(&v), None, None).unwrap_err();
        assert!(
            e.contains("--web-search") && e.contains("not allowed"),
            "{e}"
        );
    }

    #[test]
    fn usage_errors_are_clear() {
        assert!(parse(&s(&["run", "--model"]), None, None)
            .unwrap_err()
            .contains("--model needs a value"));
        assert!(parse(&s(&["run", "--workdir", "."]), None, None)
            .unwrap_err()
            .contains("--model is required"));
        assert!(parse(&s(&["run", "--max-turns", "x"]), None, None)
            .unwrap_err()
            .contains("not a valid number"));
        assert!(parse(&s(&["run", "--ablate", "nope"]), None, None)
            .unwrap_err()
            .contains("unknown mechanism"));
        assert!(parse(&s(&["fly"]), None, None).is_err());
        assert_eq!(
            parse(&s(&["prefill"]), None, None).unwrap(),
            Command::Prefill
        );
    }

    #[test]
    fn the_clap_command_line_keeps_the_harness_words() {
        let run = |extra: &[&str]| {
            let mut v = vec![
                "run",
                "--model",
                "m",
                "--prompt-file",
                "p",
                "--workdir",
                ".",
            ];
            v.extend(extra);
            parse(&s(&v), None, None)
        };
        let e = run(&["--api", "grpc"]).unwrap_err();
        assert!(
            e.starts_with("--api: 'grpc'") && e.contains("ollama, openai"),
            "{e}"
        );
        let e = run(&["--bogus"]).unwrap_err();
        assert_eq!(e, "unknown option '--bogus'");
        let e = run(&["--time-budget", "-1"]).unwrap_err();
        assert!(e.contains("--time-budget") && e.contains("positive"), "{e}");
        assert!(run(&["--num-ctx", "512"])
            .unwrap_err()
            .contains("at least 1024"));
        let Command::Run(a) = run(&["--ablate", "clock", "--ablate=anti_loop"]).unwrap() else {
            panic!()
        };
        assert!(a.ablate.off(Mechanism::Clock) && a.ablate.off(Mechanism::AntiLoop));
        assert_eq!(
            parse(
                &s(&[
                    "run",
                    "--model",
                    "m",
                    "--prompt-file",
                    "p",
                    "--workdir",
                    "."
                ]),
                None,
                Some("http://h:1")
            )
            .map(|c| match c {
                Command::Run(a) => a.backend_url,
                _ => String::new(),
            }),
            Ok("http://h:1".to_string())
        );
        for help in [&[][..], &["help"], &["--help"], &["run", "--help"]] {
            match parse(&s(help), None, None) {
                Ok(Command::Help(t)) => assert!(t.contains("Usage"), "{t}"),
                other => panic!("{help:?}: {other:?}"),
            }
        }
        assert_eq!(parse(&s(&["-V"]), None, None), Ok(Command::Version));
        assert_eq!(
            parse(&s(&["mechanisms"]), None, None),
            Ok(Command::Mechanisms)
        );
    }
}

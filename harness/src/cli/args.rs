//! The command line as clap reads it, resolved into a [`Command`] (environment merged, values
//! checked); errors come back as one line in the harness's words.

use crate::mechanisms::Ablations;
use std::path::PathBuf;

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
    /// The state folder (`None`: `.<name>.lrab` beside the workdir).
    pub state_dir: Option<PathBuf>,
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
    Run(Box<RunOpts>),
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
    /// Where the harness keeps its state (checkpoint, event log, outputs, backups), outside
    /// the workdir. Default: .NAME.lrab beside the workdir NAME.
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
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

fn ablation_list(v: &str) -> Result<Ablations, crate::mechanisms::AblationError> {
    Ablations::parse(v)
}

fn web_target(v: &str) -> Result<String, crate::tools::web::TargetError> {
    crate::tools::web::parse_target(v)?;
    Ok(v.to_string())
}

/// The usage lines printed after an error.
pub(super) fn usage() -> String {
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
        Some(Sub::Run(r)) => *r,
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
        state_dir: r.state_dir,
    })))
}

/// A web search endpoint that is not an http(s) URL, and where it came from.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{from}: {err}")]
pub struct EndpointError {
    /// `--web-search` or `LRAB_WEB_SEARCH`.
    pub from: &'static str,
    pub err: crate::tools::web::TargetError,
}

/// The web search endpoint: `--web-search` wins over `LRAB_WEB_SEARCH`; empty means off; a
/// non-http(s) value is an error naming where it came from.
pub fn web_endpoint(
    flag: Option<&str>,
    env: Option<&str>,
) -> Result<Option<String>, EndpointError> {
    let (v, from) = match (flag, env) {
        (Some(f), _) => (f, "--web-search"),
        (None, Some(e)) => (e, "LRAB_WEB_SEARCH"),
        (None, None) => return Ok(None),
    };
    if v.trim().is_empty() {
        return Ok(None);
    }
    crate::tools::web::parse_target(v).map_err(|err| EndpointError { from, err })?;
    Ok(Some(v.trim().to_string()))
}

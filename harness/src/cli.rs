//! The command line (the arm protocol). `run` is what the runner's arm file calls; relaunching
//! the identical command in the same workdir resumes from the checkpoint.
//!
//! Exit codes (documented in docs/harness.md):
//! 0 finished (or a chat question answered) · 2 usage error · 3 prompt file missing/unreadable/
//! empty · 4 workdir missing or unwritable · 5 backend unreachable · 6 model not found ·
//! 7 model does not support tools · 8 backend failed during the run · 9 stopped unfinished
//! (max turns, time budget, stalled; resumable) · 128+n terminated by signal n.

use crate::agent::{Agent, AgentConfig, RunStatus};
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    Ollama,
    OpenAi,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunArgs {
    pub model: String,
    pub prompt_file: PathBuf,
    pub workdir: PathBuf,
    pub backend_url: String,
    pub api: Api,
    pub time_budget: Option<f64>,
    pub ablate: Ablations,
    pub num_ctx: u64,
    pub max_turns: u32,
    pub temperature: f64,
    pub think: bool,
    pub quiet: bool,
    /// Run model-chosen shell commands even without kernel confinement.
    pub allow_unconfined: bool,
    /// SearxNG-compatible JSON search endpoint enabling web_search/web_fetch (off: `None`).
    pub web_search: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Run(Box<RunArgs>),
    Prefill,
    Mechanisms,
    Help,
    Version,
}

pub const USAGE: &str = "usage:
  lrab-harness run --model M --prompt-file FILE --workdir DIR [--backend-url URL]
                   [--api ollama|openai] [--time-budget MIN] [--ablate a,b] [--num-ctx N]
                   [--max-turns N] [--temperature T] [--think] [--quiet]
                   [--allow-unconfined] [--web-search URL]
  lrab-harness prefill       print the static prefill estimate
  lrab-harness mechanisms    list the mechanisms (ablation names)
environment: LRAB_ABLATION=a,b (merged with --ablate), OLLAMA_HOST (default backend URL),
             LRAB_WEB_SEARCH=URL (web search endpoint when --web-search is not given)";

fn need<'a>(it: &mut impl Iterator<Item = &'a String>, flag: &str) -> Result<String, String> {
    it.next()
        .cloned()
        .ok_or_else(|| format!("{flag} needs a value"))
}

fn num<T: std::str::FromStr>(v: &str, flag: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{flag}: '{v}' is not a valid number"))
}

/// Parse arguments (without the program name). `env_ablation` is `LRAB_ABLATION`.
pub fn parse(
    args: &[String],
    env_ablation: Option<&str>,
    env_host: Option<&str>,
) -> Result<Command, String> {
    let mut it = args.iter();
    let Some(sub) = it.next() else {
        return Ok(Command::Help);
    };
    match sub.as_str() {
        "prefill" => return Ok(Command::Prefill),
        "mechanisms" => return Ok(Command::Mechanisms),
        "-h" | "--help" | "help" => return Ok(Command::Help),
        "-V" | "--version" => return Ok(Command::Version),
        "run" => {}
        other => return Err(format!("unknown command '{other}'")),
    }
    let mut model = None;
    let mut prompt = None;
    let mut workdir = None;
    let mut url = env_host
        .map(str::to_string)
        .unwrap_or_else(|| "http://127.0.0.1:11434".into());
    let mut api = Api::Ollama;
    let mut budget = None;
    let mut ablate = Ablations::none();
    let mut num_ctx = 32768u64;
    let mut max_turns = 200u32;
    let mut temperature = 0.0f64;
    let mut think = false;
    let mut quiet = false;
    let mut allow_unconfined = false;
    let mut web_search = None;
    while let Some(flag) = it.next() {
        let (flag, inline) = match flag.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (flag.clone(), None),
        };
        let val = |it: &mut std::slice::Iter<'_, String>| match &inline {
            Some(v) => Ok(v.clone()),
            None => need(it, &flag),
        };
        match flag.as_str() {
            "--model" => model = Some(val(&mut it)?),
            "--prompt-file" => prompt = Some(PathBuf::from(val(&mut it)?)),
            "--workdir" => workdir = Some(PathBuf::from(val(&mut it)?)),
            "--backend-url" => url = val(&mut it)?,
            "--api" => {
                api = match val(&mut it)?.as_str() {
                    "ollama" => Api::Ollama,
                    "openai" => Api::OpenAi,
                    other => return Err(format!("--api: '{other}' is not ollama or openai")),
                }
            }
            "--time-budget" => {
                let v: f64 = num(&val(&mut it)?, "--time-budget")?;
                if v <= 0.0 {
                    return Err("--time-budget must be positive (minutes)".into());
                }
                budget = Some(v);
            }
            "--ablate" => {
                ablate = ablate
                    .merge(Ablations::parse(&val(&mut it)?).map_err(|e| format!("--ablate: {e}"))?)
            }
            "--num-ctx" => num_ctx = num(&val(&mut it)?, "--num-ctx")?,
            "--max-turns" => max_turns = num(&val(&mut it)?, "--max-turns")?,
            "--temperature" => temperature = num(&val(&mut it)?, "--temperature")?,
            "--think" => think = true,
            "--quiet" => quiet = true,
            "--allow-unconfined" => allow_unconfined = true,
            "--web-search" => {
                let v = val(&mut it)?;
                crate::tools::web::parse_target(&v).map_err(|e| format!("--web-search: {e}"))?;
                web_search = Some(v);
            }
            other => return Err(format!("unknown option '{other}'")),
        }
    }
    if let Some(env) = env_ablation {
        ablate = ablate.merge(Ablations::parse(env).map_err(|e| format!("LRAB_ABLATION: {e}"))?);
    }
    let model = model.ok_or("--model is required")?;
    let prompt_file = prompt.ok_or("--prompt-file is required")?;
    let workdir = workdir.ok_or("--workdir is required")?;
    if num_ctx < 1024 {
        return Err("--num-ctx must be at least 1024".into());
    }
    Ok(Command::Run(Box::new(RunArgs {
        model,
        prompt_file,
        workdir,
        backend_url: url,
        api,
        time_budget: budget,
        ablate,
        num_ctx,
        max_turns,
        temperature,
        think,
        quiet,
        allow_unconfined,
        web_search,
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

fn connect(a: &RunArgs) -> Result<(Box<dyn Model>, Option<u64>), BackendError> {
    let mut last = None;
    for attempt in 0..3 {
        if attempt > 0 {
            std::thread::sleep(std::time::Duration::from_millis(500 * attempt));
        }
        let r: Result<(Box<dyn Model>, Option<u64>), BackendError> = match a.api {
            Api::Ollama => {
                let mut cfg = OllamaConfig::new(&a.backend_url, &a.model);
                cfg.temperature = Some(a.temperature);
                cfg.think = a.think;
                cfg.num_ctx = Some(a.num_ctx);
                OllamaBackend::connect(cfg).map(|mut b| {
                    // never ask for more context than the model has
                    let ctx = b
                        .info
                        .context_length
                        .map(|m| m.min(a.num_ctx))
                        .unwrap_or(a.num_ctx);
                    b.cfg.num_ctx = Some(ctx);
                    (Box::new(b) as Box<dyn Model>, Some(ctx))
                })
            }
            Api::OpenAi => {
                let mut cfg = OpenAiConfig::new(&a.backend_url, &a.model);
                cfg.temperature = Some(a.temperature);
                cfg.api_key = std::env::var("OPENAI_API_KEY").ok();
                OpenAiBackend::connect(cfg).map(|b| (Box::new(b) as Box<dyn Model>, None))
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
    // checked before contacting the backend: a bad endpoint is a usage error
    let web = match web_endpoint(
        a.web_search.as_deref(),
        std::env::var("LRAB_WEB_SEARCH").ok().as_deref(),
    ) {
        Ok(w) => w,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let (model, ctx) = match connect(a) {
        Ok(x) => x,
        Err(e) => {
            return fail(
                exit_for_backend(&e),
                &format!("{e} (backend {})", a.backend_url),
            )
        }
    };
    let mut cfg = AgentConfig::new(&a.workdir, &task);
    cfg.ablations = a.ablate.clone();
    cfg.max_turns = a.max_turns;
    cfg.time_budget_min = a.time_budget;
    cfg.num_ctx = ctx.unwrap_or(a.num_ctx);
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
            "[lrab-harness] model {} via {} ({:?} API), tier {:?}, context {}, static prefill {} tokens, ablated: [{}]",
            a.model,
            a.backend_url,
            a.api,
            agent.state.tier,
            agent.cfg.num_ctx,
            prefill::static_prefill(),
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
    println!("(upstream estimator: CJK chars + other chars/4 + 1 per string; Mingbird 774 in v1.5.0, 797 in v1.6)");
}

pub fn print_mechanisms() {
    for m in Mechanism::ALL {
        println!("{:<16} ablated: {}", m.name(), m.ablation_effect());
    }
    println!(
        "{:<16} not ablatable (canonical-path confinement, protected paths, command floor)",
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
        Ok(Command::Help) => {
            println!("{USAGE}");
            EXIT_OK
        }
        Ok(Command::Version) => {
            println!("lrab-harness {}", env!("CARGO_PKG_VERSION"));
            EXIT_OK
        }
        Err(e) => {
            eprintln!("lrab-harness: {e}\n{USAGE}");
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
        assert_eq!(a.num_ctx, 8192);
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
}

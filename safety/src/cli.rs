//! `lrab safety`: run the probe suite and print the per-ring table; non-zero exit on any leak,
//! any irreversible step let through, or any failed control.

use crate::probes::{run_suite, DirectExecutor, ProbeExecutor};
use crate::sandbox::Sandbox;
use crate::ProbeError;
use std::path::PathBuf;

/// The probe suite's options, shared by `lrab-safety` and `lrab safety`.
#[derive(Clone, Debug, clap::Args)]
pub struct SafetyArgs {
    /// Also run upstream's published probes: `prompts_adversarial.json` and
    /// `prompts_control.json` from DIR, or, with no DIR, from the data lookup (LRAB_DATA or
    /// ../shared/data, then the cache `lrab data fetch` fills). Without it only our own probes run.
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    pub prompts: Option<Option<PathBuf>>,
    /// Write the full report as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Run only the probes whose id starts with one of these prefixes (comma list).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Force a confinement backend (default: the best this kernel has).
    #[arg(long, value_enum)]
    pub backend: Option<BackendChoice>,
}

/// A confinement backend the operator can force (`--backend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// Landlock file rules (ABI 4 or later).
    Landlock,
    /// A mount namespace of read-only binds (the fallback without Landlock).
    Namespaces,
}

impl BackendChoice {
    /// The name [`Sandbox::named`] takes.
    pub fn name(self) -> &'static str {
        match self {
            BackendChoice::Landlock => "landlock",
            BackendChoice::Namespaces => "namespaces",
        }
    }
}

/// The backend the user forced (None = detect), or an error naming the problem (a backend
/// this kernel cannot provide).
pub fn forced_backend(args: &SafetyArgs) -> Result<Option<Sandbox>, ProbeError> {
    match args.backend {
        None => Ok(None),
        Some(b) => Sandbox::named(b.name())
            .map(Some)
            .map_err(ProbeError::Backend),
    }
}

/// The folder of upstream's prompt files: `--prompts DIR`, or with `--prompts` alone the data
/// lookup's (an error saying how to fetch them when they cannot be had); None without it.
pub fn prompts_dir(args: &SafetyArgs) -> Result<Option<PathBuf>, ProbeError> {
    match &args.prompts {
        None => Ok(None),
        Some(Some(dir)) => Ok(Some(dir.clone())),
        Some(None) => lrab_data::folder("mingbird")
            .map(Some)
            .map_err(|e| ProbeError::Data(e.to_string())),
    }
}

/// Without any confinement, allowed probe commands cannot be run safely: exit code 2.
fn confinement_gate(force: &Option<Sandbox>) -> Option<i32> {
    let detected = Sandbox::detect();
    eprintln!(
        "lrab safety: kernel confinement detected: {}",
        detected.describe()
    );
    if detected == Sandbox::None && force.is_none() {
        eprintln!(
            "lrab safety: NO CONFINEMENT — allowed probe commands cannot be run safely; aborting"
        );
        return Some(2);
    }
    None
}

/// The suite with the direct executor (classifier + sandbox, no model in between).
pub fn run(args: &SafetyArgs) -> Result<i32, ProbeError> {
    run_with(args, |force| {
        Ok::<_, std::convert::Infallible>(DirectExecutor::new(force))
    })
}

/// The suite with the executor `make` builds for the forced backend (None = detect), once the
/// backend is known to confine; prints the table, writes the JSON report atomically.
/// Returns the process exit code (0 = target met). `make`'s error is reported in its own words
/// ([`ProbeError::executor`]).
pub fn run_with<E: ProbeExecutor, M: std::fmt::Display>(
    args: &SafetyArgs,
    make: impl FnOnce(Option<Sandbox>) -> Result<E, M>,
) -> Result<i32, ProbeError> {
    let force = forced_backend(args)?;
    if let Some(code) = confinement_gate(&force) {
        return Ok(code);
    }
    let mut exec = make(force).map_err(ProbeError::executor)?;
    eprintln!("lrab safety: executor: {}", exec.name());
    let prompts = prompts_dir(args)?;
    let report = run_suite(prompts.as_deref(), &args.only, &mut exec)?;
    lrab_util::out!("{}", report.render());
    if let Some(p) = &args.json {
        let json = serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?;
        lrab_util::write_atomic(p, json.as_bytes()).map_err(|err| ProbeError::Report {
            path: p.clone(),
            err,
        })?;
    }
    Ok(if report.passed() { 0 } else { 1 })
}

//! `lrab safety`: run the probe suite and print the per-ring table; non-zero exit on any leak,
//! any irreversible step let through, or any failed control.

use crate::probes::{run_suite, DirectExecutor};
use crate::sandbox::Sandbox;
use std::path::PathBuf;

#[derive(Clone, Debug, clap::Args)]
pub struct SafetyArgs {
    /// Directory with upstream `prompts_adversarial.json` and `prompts_control.json`
    /// (e.g. shared/data/mingbird). Without it only our own probes run.
    #[arg(long)]
    pub prompts: Option<PathBuf>,
    /// Write the full report as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Force a confinement backend: landlock, namespaces (default: best available).
    #[arg(long)]
    pub backend: Option<String>,
}

/// Returns the process exit code (0 = target met).
pub fn run(args: &SafetyArgs) -> anyhow::Result<i32> {
    let force = match args.backend.as_deref() {
        None => None,
        Some("landlock") => match Sandbox::detect() {
            s @ Sandbox::Landlock { .. } => Some(s),
            _ => anyhow::bail!("--backend landlock: this kernel has no Landlock"),
        },
        Some("namespaces") => Some(Sandbox::Namespaces),
        Some(o) => {
            anyhow::bail!("--backend: unknown backend '{o}' (expected landlock or namespaces)")
        }
    };
    let detected = Sandbox::detect();
    eprintln!(
        "lrab safety: kernel confinement detected: {}",
        detected.describe()
    );
    if detected == Sandbox::None && force.is_none() {
        eprintln!(
            "lrab safety: NO CONFINEMENT — allowed probe commands cannot be run safely; aborting"
        );
        return Ok(2);
    }
    let mut exec = DirectExecutor::new(force);
    let report = run_suite(args.prompts.as_deref(), &mut exec)?;
    print!("{}", report.render());
    if let Some(p) = &args.json {
        let tmp = p.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_string_pretty(&report)?)?;
        std::fs::rename(&tmp, p)?;
    }
    Ok(if report.passed() { 0 } else { 1 })
}

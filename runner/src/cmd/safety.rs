//! `lrab safety`: the adversarial probe suite of the harness's safety rings (see docs/safety.md).
//! By default every probe is issued by the simulated adversarial model through the real
//! `lrab-harness` binary; `--executor direct` judges the classifier and sandbox alone.
//! `--arms` puts the published 54 cases through any arms on any backend
//! (`crate::safety_arms`); `--published` tallies the published safety results.

use anyhow::{bail, Result};
use clap::Parser;
use std::path::PathBuf;

use super::Exit;
use crate::run::probe_harness::HarnessExecutor;
use lrab_safety_attacks::AttackRunner;

#[derive(Parser, Debug)]
pub struct Args {
    /// Also run upstream's published probes: `prompts_adversarial.json` and
    /// `prompts_control.json` from DIR, or, with no DIR, from the data lookup (LRAB_DATA or
    /// ../shared/data, then the cache `lrab data fetch` fills). Without it only our own probes run.
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    pub prompts: Option<Option<PathBuf>>,
    /// Write the full report as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Run only the probes (with --arms: the published cases) whose id starts with one of these
    /// prefixes (comma list).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// The probe suite: force a confinement backend, landlock or namespaces (default: the best
    /// this kernel has). With --arms: the model backend — ollama, sim, auto (the default), or a
    /// URL (Ollama or OpenAI-compatible).
    #[arg(long)]
    pub backend: Option<String>,
    /// Who issues the probes.
    #[arg(long, value_enum, default_value_t = Executor::Harness)]
    pub executor: Executor,
    /// The lrab-harness binary (default: where the harness arm finds it — $LRAB_HARNESS_BIN,
    /// next to lrab, or on PATH).
    #[arg(long)]
    pub harness_bin: Option<PathBuf>,
    /// Run the attack corpus in DIR (e.g. safety/attacks) through the harness instead of the
    /// probe suite; `--only` selects attacks by id prefix or kind.
    #[arg(long, value_name = "DIR")]
    pub attacks: Option<PathBuf>,
    #[command(flatten)]
    pub published: PublishedArgs,
}

/// The published 54 cases (`--arms`) and the published results (`--published`).
#[derive(clap::Args, Debug)]
pub struct PublishedArgs {
    /// Put the published cases (44 adversarial + 10 controls) through these arms (comma list of
    /// arms/*.toml names), each case launched like a matrix cell: confined, timed, recorded.
    #[arg(long, value_delimiter = ',', value_name = "ARMS")]
    pub arms: Vec<String>,
    /// Models for --arms (comma list).
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// The API the --backend URL speaks: auto, ollama or openai.
    #[arg(long, default_value = "auto")]
    pub backend_api: lrab_records::BackendApi,
    /// Environment variable holding an OpenAI backend's API key (never recorded).
    #[arg(long, default_value = crate::run::backend_api::DEFAULT_KEY_ENV)]
    pub backend_key_env: String,
    /// Deadline of one case in minutes (the paper: 5).
    #[arg(long, default_value_t = 5.0)]
    pub case_minutes: f64,
    /// Context length the proxy pins and the arms are told.
    #[arg(long, default_value_t = 32768)]
    pub num_ctx: u64,
    /// Output folder of --arms (results/<arm>/<model>/safety_results.csv, verification.csv,
    /// summary.md; cells/ holds every attempt).
    #[arg(long, default_value = "results/safety-arms")]
    pub out: PathBuf,
    /// Seed of the simulated backend.
    #[arg(long, default_value_t = 0)]
    pub sim_seed: u64,
    /// Folder of the arm files.
    #[arg(long)]
    pub arms_dir: Option<PathBuf>,
    /// With --arms: per case, tool calls the simulated adversary (model `sim-adversary`) makes,
    /// appended to the case's prompt as its script (JSON: case id → [{name, arguments}]) — to
    /// exercise the judge and the effect checks end to end on the simulator.
    #[arg(long, value_name = "FILE")]
    pub probe_script: Option<PathBuf>,
    /// Tally the published safety results (both models): raw violations, confirmed effects
    /// (from the published verification), per ring; nothing is run.
    #[arg(long)]
    pub published: bool,
}

/// Who issues the probes (`--executor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Executor {
    /// The simulated adversarial model, through the real lrab-harness binary.
    Harness,
    /// The classifier and the kernel sandbox alone (no model, no harness).
    Direct,
}

fn code(c: i32) -> Exit {
    match c {
        0 => Exit::Ok,
        1 => Exit::Failures,
        _ => Exit::Usage,
    }
}

/// The probe suite's options from the command line (`--backend` is a confinement backend
/// there).
fn suite_args(a: &Args) -> Result<lrab_safety::SafetyArgs> {
    use clap::ValueEnum;
    let backend = match a.backend.as_deref() {
        None => None,
        Some(b) => Some(lrab_safety::BackendChoice::from_str(b, false).map_err(|_| {
            anyhow::anyhow!(
                "--backend {b}: the probe suite takes a confinement backend (landlock or namespaces); a model backend goes with --arms"
            )
        })?),
    };
    Ok(lrab_safety::SafetyArgs {
        prompts: a.prompts.clone(),
        json: a.json.clone(),
        only: a.only.clone(),
        backend,
    })
}

pub fn run(a: Args) -> Result<Exit> {
    if a.published.published {
        return published();
    }
    if !a.published.arms.is_empty() {
        let spec = a
            .backend
            .as_deref()
            .unwrap_or("auto")
            .parse()
            .map_err(anyhow::Error::msg)?;
        return run_arms(&a.published, spec, &a.only);
    }
    let inner = suite_args(&a)?;
    if let Some(dir) = &a.attacks {
        return run_attacks(&a, &inner, dir);
    }
    match a.executor {
        Executor::Direct => Ok(code(lrab_safety::run_safety_cli(&inner)?)),
        Executor::Harness => {
            let bin = harness_bin(&a)?;
            Ok(code(lrab_safety::run_safety_cli_with(&inner, |force| {
                HarnessExecutor::new(bin, force)
            })?))
        }
    }
}

/// The harness binary to drive: `--harness-bin`, else where the harness arm finds it.
fn harness_bin(a: &Args) -> Result<PathBuf> {
    let bin = match a.harness_bin.clone() {
        Some(b) => b,
        None => {
            let arms = crate::run::arms::load_dir(&crate::run::arms::default_dir())?;
            let arm = crate::run::arms::select(&arms, &["harness".to_string()])?;
            match arm[0].locate() {
                Some(p) => p,
                None => bail!(
                    "lrab-harness not found ({}); or pass --executor direct",
                    arm[0].install_hint
                ),
            }
        }
    };
    if !bin.is_file() {
        bail!("--harness-bin {}: no such file", bin.display());
    }
    // the harness is started in each probe's workdir
    Ok(bin.canonicalize()?)
}

/// The attack corpus through the harness: the per-kind table, exit 1 on any leak or failed
/// control.
fn run_attacks(a: &Args, inner: &lrab_safety::SafetyArgs, dir: &std::path::Path) -> Result<Exit> {
    if a.executor != Executor::Harness {
        bail!("--attacks runs through the harness only (not --executor direct)");
    }
    let force = lrab_safety::forced_backend(inner)?;
    if force.is_none() && lrab_safety::Sandbox::detect() == lrab_safety::Sandbox::None {
        eprintln!("lrab safety: NO CONFINEMENT — the attacks cannot be run safely; aborting");
        return Ok(Exit::Usage);
    }
    let all = lrab_safety::load_attacks(dir)?;
    let chosen: Vec<_> = all
        .into_iter()
        .filter(|x| {
            inner.only.is_empty()
                || inner
                    .only
                    .iter()
                    .any(|o| x.id.starts_with(o.as_str()) || x.kind == *o)
        })
        .collect();
    if chosen.is_empty() {
        bail!("--only {}: no attack matches", inner.only.join(","));
    }
    let mut r = AttackRunner::new(harness_bin(a)?, force)?;
    eprintln!("lrab safety: {} attacks via {}", chosen.len(), r.describe());
    let report = r.run_all(&chosen, true)?;
    lrab_util::out!("{}", report.render());
    if let Some(p) = &inner.json {
        lrab_util::write_atomic(p, serde_json::to_string_pretty(&report)?.as_bytes())
            .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
    }
    Ok(if report.passed() {
        Exit::Ok
    } else {
        Exit::Failures
    })
}

/// `--published`: both published runs tallied as the paper's audit did.
fn published() -> Result<Exit> {
    use lrab_safety::published::published;
    let mut out = String::from("# Published safety results (Mingbird, 2026-10-01)\n\n");
    for m in published::PUBLISHED_MODELS {
        out += &published::published(m)?.render(m, "published verification");
    }
    lrab_util::out!("{out}");
    Ok(Exit::Ok)
}

/// `--arms`: the published cases through arms; exit 1 when any case had a confirmed effect or
/// a control failed.
fn run_arms(
    p: &PublishedArgs,
    backend: crate::run::backend::BackendSpec,
    only: &[String],
) -> Result<Exit> {
    if p.models.is_empty() {
        bail!("--arms needs --models");
    }
    let opts = crate::safety_arms::Options {
        arms: p.arms.clone(),
        models: p.models.clone(),
        backend,
        backend_opts: crate::run::backend::BackendOptions {
            api: p.backend_api,
            key_env: p.backend_key_env.clone(),
            num_ctx: p.num_ctx,
            ..Default::default()
        },
        only: only.to_vec(),
        case_minutes: p.case_minutes,
        out: p.out.clone(),
        sim_seed: p.sim_seed,
        arms_dir: p
            .arms_dir
            .clone()
            .unwrap_or_else(crate::run::arms::default_dir),
        probe_script: p.probe_script.clone(),
    };
    let runs = crate::safety_arms::run(&opts)?;
    let summary = std::fs::read_to_string(p.out.join("summary.md")).unwrap_or_default();
    lrab_util::out!("{summary}");
    let bad = runs.iter().any(|r| {
        r.verification.iter().any(|v| v.disposition == "confirmed")
            || r.rows.iter().any(|x| x.control_pass == "FAIL")
    });
    Ok(if bad { Exit::Failures } else { Exit::Ok })
}

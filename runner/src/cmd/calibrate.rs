//! `lrab sim calibrate`: fit the simulator's profiles to the published cells of opencode,
//! agent-mini and Mingbird and verify them with the real arms at several seeds (docs/sim.md,
//! "Calibration").

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;

use super::Exit;

#[derive(Parser, Debug, Clone)]
pub struct Args {
    /// Where the fitted profiles are written.
    #[arg(long, default_value = "sim/profiles")]
    pub profiles_out: PathBuf,
    /// Where the report is written.
    #[arg(long, default_value = "docs/sim-calibration.md")]
    pub report: PathBuf,
    /// Published data folder (default: LRAB_MINGBIRD_DATA, else the data lookup: LRAB_DATA or
    /// ../shared/data, then the figures carried in the repository's data/).
    #[arg(long)]
    pub data: Option<PathBuf>,
    #[arg(long)]
    pub pack: Option<PathBuf>,
    #[arg(long)]
    pub arms_dir: Option<PathBuf>,
    /// Seeds of the simulator during verification (comma list); the report gives the mean over
    /// them with the seed-to-seed spread, and the first alone (0 is `lrab run`'s default).
    #[arg(long, default_value = "0,1,2,3,4")]
    pub seeds: String,
    /// The fitted arms the verification runs (comma list; default: opencode, agent-mini,
    /// mingbird). Residuals are written for the arms verified.
    #[arg(long)]
    pub arms: Option<String>,
    /// Cells in parallel during verification.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Comma list of models to fit (default: all four).
    #[arg(long)]
    pub models: Option<String>,
    /// Comma list of tasks for the verification run (default: all).
    #[arg(long)]
    pub tasks: Option<String>,
    /// Fit analytically only; no real-binary run.
    #[arg(long)]
    pub no_verify: bool,
    /// Also run our harness (held out) for the prediction table.
    #[arg(long)]
    pub with_harness: bool,
    /// Also verify the cross-check with the real arms: profiles fitted on two arms, the third
    /// run on them (one more evaluation of each arm; a comma list verifies only those arms).
    #[arg(long, num_args = 0..=1, default_missing_value = "opencode,agent-mini,mingbird")]
    pub cross_check: Option<String>,
    /// Pacing of the simulator during verification (real seconds per modelled second).
    #[arg(long, default_value_t = 0.0)]
    pub time_scale: f64,
    /// Evaluation cache (default: ~/.cache/lrab/calibrate).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Residuals of an earlier verification for a corrected fit round (the committed
    /// profiles use sim/calibration/residuals.toml; see docs/sim.md, "Calibration").
    #[arg(long, conflicts_with = "no_residuals")]
    pub residuals: Option<PathBuf>,
    /// Fit the published means as they are (a first round).
    #[arg(long)]
    pub no_residuals: bool,
    /// Write the residuals this verification measures (input of the next round).
    #[arg(long)]
    pub residuals_out: Option<PathBuf>,
}

/// The committed residual file, relative to the repository root.
pub const RESIDUALS: &str = "sim/calibration/residuals.toml";

/// The residuals of `--residuals`, else the committed file found from the task pack's
/// repository (so the committed profiles are reproduced from any working directory), else none.
fn residuals(a: &Args) -> Result<Option<lrab_calibrate::Residuals>> {
    if a.no_residuals {
        return Ok(None);
    }
    let path = match &a.residuals {
        Some(p) => p.clone(),
        None => {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let p = root.join(RESIDUALS);
            if !p.exists() {
                return Ok(None);
            }
            p
        }
    };
    let r = lrab_calibrate::Residuals::load(&path)?;
    eprintln!(
        "calibrate: corrected round, residuals from {} ({})",
        path.display(),
        r.origin
    );
    Ok(Some(r))
}

/// A list of fitted arms (our harness is held out and never one).
fn fitted_arms(flag: &str, arms: &[String]) -> Result<Vec<String>> {
    if let Some(bad) = arms
        .iter()
        .find(|x| !lrab_calibrate::FIT_ARMS.contains(&x.as_str()))
    {
        anyhow::bail!(
            "{flag}: `{bad}` is not a fitted arm (known: {})",
            lrab_calibrate::FIT_ARMS.join(", ")
        );
    }
    Ok(arms.to_vec())
}

/// The `--seeds` list: at least one, each a number, none twice.
fn seeds(list: &str) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for x in list.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        let s: u64 = x
            .parse()
            .map_err(|_| anyhow::anyhow!("--seeds: `{x}` is not a seed (a whole number)"))?;
        if out.contains(&s) {
            anyhow::bail!("--seeds: {s} appears twice");
        }
        out.push(s);
    }
    if out.is_empty() {
        anyhow::bail!("--seeds: no seed given");
    }
    Ok(out)
}

pub fn run(a: Args) -> Result<Exit> {
    let split = |s: &str| {
        s.split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect::<Vec<_>>()
    };
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let opts = lrab_calibrate::Options {
        pack_dir: super::pack_dir(a.pack.as_deref()),
        arms_dir: a
            .arms_dir
            .clone()
            .unwrap_or_else(crate::run::arms::default_dir),
        data_dir: match a.data.clone() {
            Some(d) => d,
            None => lrab_calibrate::data_dir()?,
        },
        profiles_out: a.profiles_out.clone(),
        report_out: a.report.clone(),
        seeds: seeds(&a.seeds)?,
        jobs: a.jobs.max(1),
        models: a.models.as_deref().map(split).unwrap_or_else(|| {
            lrab_calibrate::MODELS
                .iter()
                .map(|m| m.0.to_string())
                .collect()
        }),
        tasks: a.tasks.as_deref().map(split),
        no_verify: a.no_verify,
        with_harness: a.with_harness,
        verify_arms: match a.arms.as_deref() {
            None => lrab_calibrate::FIT_ARMS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Some(list) => fitted_arms("--arms", &split(list))?,
        },
        cross_check: match a.cross_check.as_deref() {
            None => Vec::new(),
            Some(list) => fitted_arms("--cross-check", &split(list))?,
        },
        cache: a
            .cache
            .clone()
            .unwrap_or_else(|| home.join(".cache/lrab/calibrate")),
        time_scale: a.time_scale,
        residuals: residuals(&a)?,
        residuals_out: a.residuals_out.clone(),
    };
    let text = lrab_calibrate::calibrate(&opts, &crate::calibrate::evaluate)?;
    lrab_util::outln!("{text}");
    eprintln!(
        "profiles: {}\nreport: {}",
        opts.profiles_out.display(),
        opts.report_out.display()
    );
    Ok(Exit::Ok)
}

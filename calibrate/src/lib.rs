//! `lrab-calibrate`: fits the simulated models' profiles to the published cells of the three
//! published arms the suite runs (opencode, agent-mini, Mingbird), puts together the
//! verification — the real arms run against the simulator through the runner, at several seeds
//! — and writes the profiles and the report. Our harness is never in the fit; when asked it is
//! run afterwards and its scores are printed next to Mingbird's, as a prediction. Running the
//! arms is the runner's (`lrab sim calibrate` passes it in as [`Evaluate`]): this crate depends
//! on the simulator and the records, never on the runner.
//!
//! 1. Analytic fit (seconds): per model, a grid search of the ending hazard (base, slope per
//!    8k tokens of the request's opening), the content-error rate and the chance of going on
//!    when an ending turn is answered, against the three arms' published mean, never-engaged
//!    and early-stop shares (`analytic.rs`), plus decode speed against the published wall
//!    times. The cross-check fits on two arms and predicts the third (analytically, and with
//!    `--cross-check` also by running the third arm on the two-arm profiles).
//! 2. Verification (3 arms × 4 models × 18 tasks per seed, five seeds by default): the fitted
//!    profiles are served in process and the real arms run through the runner (the runner's
//!    `calibrate.rs`); results are cached per model by its profile's bytes, so rerunning
//!    without changes costs nothing. The runs' cells are put together in `verified.rs`. The
//!    fit's residual correction and the report use the mean over the seeds, never one draw.
//! 3. The profiles (`sim/profiles/*.toml`) and the report are written only when every step
//!    succeeded (each file atomically).

#![deny(missing_docs)]

mod analytic;
mod prefix;
mod profiles;
mod published;
mod report;
mod residuals;
mod verified;

pub use published::{data_dir, FIT_ARMS, MODELS};
pub use residuals::{Residual, Residuals};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use analytic::{Params, Target};
use verified::Runs;

/// What `lrab sim calibrate` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    /// The task pack.
    pub pack_dir: PathBuf,
    /// The arm definitions (`arms/*.toml`).
    pub arms_dir: PathBuf,
    /// The folder of the published `failure_forms_2609.csv`.
    pub data_dir: PathBuf,
    /// Where the fitted profiles go (the committed ones: `sim/profiles`).
    pub profiles_out: PathBuf,
    /// Where the report goes (the committed one: `docs/sim-calibration.md`).
    pub report_out: PathBuf,
    /// Seeds of the simulator during verification; the first is the one reported alone (the
    /// default, 0, is `lrab run`'s).
    pub seeds: Vec<u64>,
    /// Cells in parallel during verification.
    pub jobs: usize,
    /// Models to fit (default: all four).
    pub models: Vec<String>,
    /// Tasks of the verification run (default: all).
    pub tasks: Option<Vec<String>>,
    /// Skip the real-binary verification (analytic fit and report only).
    pub no_verify: bool,
    /// Also run our harness (held out) for the prediction rows.
    pub with_harness: bool,
    /// The fitted arms the verification runs (default: all three).
    pub verify_arms: Vec<String>,
    /// The arms whose cross-check is also verified with the real arm: profiles fitted on the
    /// two others, that arm run on them.
    pub cross_check: Vec<String>,
    /// Where evaluations are cached.
    pub cache: PathBuf,
    /// Pacing of the simulator during verification (real seconds per modelled second).
    pub time_scale: f64,
    /// Residuals of an earlier verification: the main fit then targets
    /// `published − (verified − predicted)` (`residuals.rs`).
    pub residuals: Option<Residuals>,
    /// Where to write the residuals this run's verification measured (for the next round).
    pub residuals_out: Option<PathBuf>,
}

/// One fitted model.
#[derive(Debug, Clone)]
struct Fitted {
    model: String,
    params: Params,
    loss: f64,
    decode_tps: f64,
    /// Analytic predictions per arm (mean, never engaged, early stop).
    predicted: BTreeMap<String, analytic::Prediction>,
    /// Cross-check: fitted on the other arms, the prediction for the key arm.
    cross: BTreeMap<String, Cross>,
    excluded: Vec<String>,
    /// The arms whose published cells the fit used.
    fit_arms: Vec<String>,
}

/// One direction of the cross-check for one model: the key arm predicted from the others.
#[derive(Debug, Clone)]
struct Cross {
    /// The analytic prediction of the arm left out.
    predicted: analytic::Prediction,
    /// The fit on the other arms (what its profile is made of).
    fit: Box<Fitted>,
}

/// Published targets the fit leaves out, and why (docs/sim.md explains them).
fn excluded(arm: &str, model: &str) -> Option<&'static str> {
    match (arm, model) {
        ("agent-mini", "sim-35b") => Some(
            "agent-mini stops after 1-4 calls at 35B (0.092) while opencode succeeds (0.896) with a far longer prompt; a hazard that grows with the request's opening cannot give the shorter prompt the worse result",
        ),
        _ => None,
    }
}

fn targets_of(
    pubd: &published::Published,
    model: &str,
    arms: &[&str],
    keep_excluded: bool,
    residuals: Option<&residuals::Residuals>,
) -> BTreeMap<String, Target> {
    let mut t = BTreeMap::new();
    for arm in arms {
        if !keep_excluded && excluded(arm, model).is_some() {
            continue;
        }
        if let Some(cells) = pubd.get(&(arm.to_string(), model.to_string())) {
            let s = published::summarize(cells);
            let gap = residuals.and_then(|r| r.gap(arm, model)).unwrap_or(0.0);
            t.insert(
                arm.to_string(),
                Target {
                    mean: residuals::corrected(s.mean, gap),
                    never_engaged: s.forms["never_engaged"],
                    early_stop: s.forms["early_stop"],
                },
            );
        }
    }
    t
}

/// The arms whose published wall times the decode speed is fitted to (Mingbird's many extra
/// calls of its own — todo, reads, checks — are not in the analytic model of a run).
const DECODE_ARMS: [&str; 2] = ["opencode", "agent-mini"];

/// The analytic fit of one model on the given arms' targets.
fn fit_one(
    opts: &Options,
    pubd: &published::Published,
    tasks: &[analytic::TaskShape],
    model: &str,
    arms: &[&str],
) -> Fitted {
    let targets = targets_of(pubd, model, arms, false, opts.residuals.as_ref());
    let (params, loss) = analytic::fit(tasks, &targets);
    let predicted = FIT_ARMS
        .iter()
        .map(|arm| {
            let x = analytic::predict_all(&params, analytic::arm_shape(arm), tasks);
            (arm.to_string(), x)
        })
        .collect();
    let decode: Vec<&str> = DECODE_ARMS
        .iter()
        .copied()
        .filter(|a| arms.contains(a))
        .collect();
    Fitted {
        model: model.to_string(),
        params,
        loss,
        decode_tps: profiles::fit_decode(model, &params, pubd, tasks, &decode),
        predicted,
        cross: BTreeMap::new(),
        excluded: arms
            .iter()
            .filter(|a| excluded(a, model).is_some())
            .map(|a| a.to_string())
            .collect(),
        fit_arms: arms.iter().map(|a| a.to_string()).collect(),
    }
}

/// The analytic fit of every model (and the cross-check: each arm predicted from a fit on the
/// other two, with the same residuals and exclusions as the main fit).
fn fit_all(
    opts: &Options,
    pubd: &published::Published,
    tasks: &[analytic::TaskShape],
) -> Vec<Fitted> {
    let mut out = Vec::new();
    for model in &opts.models {
        let mut f = fit_one(opts, pubd, tasks, model, &FIT_ARMS);
        for left in FIT_ARMS {
            let others: Vec<&str> = FIT_ARMS.iter().copied().filter(|a| *a != left).collect();
            let fit = fit_one(opts, pubd, tasks, model, &others);
            f.cross.insert(
                left.to_string(),
                Cross {
                    predicted: fit.predicted[left],
                    fit: Box::new(fit),
                },
            );
        }
        out.push(f);
    }
    out
}

/// One evaluation of the verification, run by the runner: `arms` on one model's profile
/// (parsed, and its text) with the real binaries at one seed of the simulator, or reused from
/// the cache; returns the run folder (with `no_verify`, the folder an earlier evaluation of
/// these profiles used, whether it exists or not).
pub type Evaluate<'a> =
    dyn Fn(&Options, lrab_sim::Profile, &str, &[String], u64) -> Result<PathBuf> + 'a;

/// The whole calibration (`evaluate` runs the verification's cells). Nothing is written to
/// `profiles_out` / `report_out` unless every step succeeded.
pub fn calibrate(opts: &Options, evaluate: &Evaluate) -> Result<String> {
    let pubd = published::load(&opts.data_dir.join("failure_forms_2609.csv"))?;
    for m in &opts.models {
        if !MODELS.iter().any(|(s, _)| s == m) {
            bail!(
                "--models: `{m}` has no published counterpart (known: {})",
                MODELS.iter().map(|x| x.0).collect::<Vec<_>>().join(", ")
            );
        }
    }
    eprintln!("calibrate: task shapes (reference applied step by step)");
    let tasks = prefix::shapes(&opts.pack_dir, true)?;
    let fitted = fit_all(opts, &pubd, &tasks);
    let seeds = seeds_label(&opts.seeds);
    let mut files = Vec::new();
    for f in &fitted {
        files.push((f.model.clone(), profiles::render(f, &seeds)));
    }
    let mut sim_runs = Runs::new();
    let mut run_dirs = Vec::new();
    let mut evals = vec![opts.verify_arms.clone()];
    if opts.with_harness {
        evals.push(vec![published::HELD_OUT.to_string()]);
    }
    for arms in evals.iter().filter(|a| !a.is_empty()) {
        verify_all(
            opts,
            evaluate,
            &files,
            arms,
            None,
            &mut sim_runs,
            &mut run_dirs,
        )?;
    }
    // cross-check with the real arms: per arm, every model's profile fitted on the other
    // two, that arm run on them (keyed by the arm predicted, then the model)
    let mut cross_runs = Runs::new();
    for left in FIT_ARMS
        .into_iter()
        .filter(|a| opts.cross_check.iter().any(|c| c == a))
    {
        let cfiles: Vec<(String, String)> = fitted
            .iter()
            .filter_map(|f| {
                let c = f.cross.get(left)?;
                Some((f.model.clone(), profiles::render(&c.fit, &seeds)))
            })
            .collect();
        eprintln!("calibrate: cross-check, fitted without {left}, running it");
        let arms = [left.to_string()];
        verify_all(
            opts,
            evaluate,
            &cfiles,
            &arms,
            Some(left),
            &mut cross_runs,
            &mut run_dirs,
        )?;
    }
    let text = report::render(opts, &pubd, &fitted, &sim_runs, &cross_runs, &run_dirs);
    let next = measured_residuals(&fitted, &sim_runs, opts);
    std::fs::create_dir_all(&opts.profiles_out)?;
    for (model, t) in &files {
        let name = format!("{model}.toml");
        lrab_util::write_atomic(&opts.profiles_out.join(name), t.as_bytes())?;
    }
    if let Some(d) = opts.report_out.parent() {
        std::fs::create_dir_all(d)?;
    }
    lrab_util::write_atomic(&opts.report_out, text.as_bytes())?;
    if let Some(out) = &opts.residuals_out {
        match next {
            Some(r) => {
                if let Some(d) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(d)?;
                }
                lrab_util::write_atomic(out, r.render().as_bytes())?;
                eprintln!("calibrate: residuals for the next round: {}", out.display());
            }
            None => eprintln!(
                "calibrate: no complete verification of a fitted arm, {} not written",
                out.display()
            ),
        }
    }
    Ok(text)
}

/// `0-4` for consecutive seeds, else the list.
fn seeds_label(seeds: &[u64]) -> String {
    let consecutive = seeds.windows(2).all(|w| w[1] == w[0] + 1);
    match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if consecutive && seeds.len() > 2 => format!("{a}-{b}"),
        _ => seeds
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Runs `arms` on every model's profile (`(model, profile text)`) at every seed, into `runs`
/// (only the arm `keep`, when given), and the run folders into `run_dirs`.
fn verify_all(
    opts: &Options,
    evaluate: &Evaluate,
    files: &[(String, String)],
    arms: &[String],
    keep: Option<&str>,
    runs: &mut Runs,
    run_dirs: &mut Vec<PathBuf>,
) -> Result<()> {
    for (model, text) in files {
        let prof = lrab_sim::parse_profile(Path::new(&format!("{model}.toml")), text)?;
        for &seed in &opts.seeds {
            eprintln!("calibrate: {} on {model}, seed {seed}", arms.join(", "));
            let dir = evaluate(opts, prof.clone(), text, arms, seed)?;
            if dir.join("cells.csv").exists() {
                verified::add_seed(runs, seed, verified::cells_of_run(&dir)?, keep);
                run_dirs.push(dir);
            }
        }
    }
    Ok(())
}

/// The residuals of this run's verification: every fitted (arm, model) verified over all its
/// tasks at every seed (mean over the seeds), or `None` when there is none.
fn measured_residuals(
    fitted: &[Fitted],
    sim_runs: &Runs,
    opts: &Options,
) -> Option<residuals::Residuals> {
    let mut out = Vec::new();
    let n_tasks = opts.tasks.as_ref().map_or(18, |t| t.len());
    for f in fitted {
        for arm in &f.fit_arms {
            if f.excluded.contains(arm) {
                continue;
            }
            let Some(v) = sim_runs.get(&(arm.clone(), f.model.clone())) else {
                continue;
            };
            if !v.complete(opts.seeds.len(), n_tasks) {
                continue;
            }
            out.push(residuals::Residual {
                arm: arm.clone(),
                model: f.model.clone(),
                verified: (v.mean() * 1000.0).round() / 1000.0,
                predicted: (f.predicted.get(arm)?.score * 1000.0).round() / 1000.0,
            });
        }
    }
    if out.is_empty() {
        return None;
    }
    let arms: Vec<&str> = FIT_ARMS
        .iter()
        .copied()
        .filter(|a| out.iter().any(|r| r.arm == *a))
        .collect();
    Some(residuals::Residuals {
        origin: format!(
            "lrab sim calibrate verification of {} (mean over seeds {}, {n_tasks} tasks{})",
            arms.join(", "),
            seeds_label(&opts.seeds),
            if opts.residuals.is_some() {
                ", itself a corrected round"
            } else {
                ""
            }
        ),
        residuals: out,
    })
}

//! `lrab sim calibrate`: fits the simulated models' profiles to the published cells of the
//! third-party arms (opencode, agent-mini) and checks the fit by running the real binaries
//! against the simulator through the runner. Our harness is never in the fit; when asked it is
//! run afterwards and its scores are printed next to Mingbird's as a plausibility check.
//!
//! 1. Analytic fit (seconds): per model, a grid search of the ending hazard (base, context
//!    slope) and the content-error rate against both arms' published mean, never-engaged and
//!    early-stop shares (`analytic.rs`), plus decode speed against the published wall times.
//!    The cross-check fits on one arm and predicts the other (analytically, and with
//!    `--cross-check` also by running the other arm's real binary on the one-arm profiles).
//! 2. Verification (one evaluation, ~2 arms × 4 models × 18 tasks): the fitted profiles are
//!    served in process and the real arms run through `run::execute`; results are cached by
//!    the profiles' bytes, so rerunning without changes costs nothing.
//! 3. The profiles (`sim/profiles/*.toml`) and the report are written only when every step
//!    succeeded (each file atomically).

pub mod analytic;
mod prefix;
mod profiles;
pub mod published;
mod report;
pub mod residuals;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::run;
use analytic::{Params, Target};
use published::{Summary, FIT_ARMS, MODELS};

/// What `lrab sim calibrate` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    pub pack_dir: PathBuf,
    pub arms_dir: PathBuf,
    pub data_dir: PathBuf,
    /// Where the fitted profiles go (the committed ones: `sim/profiles`).
    pub profiles_out: PathBuf,
    pub report_out: PathBuf,
    pub seed: u64,
    pub jobs: usize,
    /// Models to fit (default: all four).
    pub models: Vec<String>,
    /// Tasks of the verification run (default: all).
    pub tasks: Option<Vec<String>>,
    /// Skip the real-binary verification (analytic fit and report only).
    pub no_verify: bool,
    /// Also run our harness (held out) for the plausibility rows.
    pub with_harness: bool,
    /// Also verify the cross-check with the real binaries: profiles fitted on one arm alone,
    /// the other arm run on them.
    pub cross_check: bool,
    /// Where evaluations are cached.
    pub cache: PathBuf,
    pub time_scale: f64,
    /// Residuals of an earlier verification: the main fit then targets
    /// `published − (verified − predicted)` (`residuals.rs`).
    pub residuals: Option<residuals::Residuals>,
    /// Where to write the residuals this run's verification measured (for the next round).
    pub residuals_out: Option<PathBuf>,
}

/// One fitted model.
#[derive(Debug, Clone)]
pub struct Fitted {
    pub model: String,
    pub params: Params,
    pub loss: f64,
    pub decode_tps: f64,
    /// Analytic predictions per arm (mean, never engaged, early stop).
    pub predicted: BTreeMap<String, analytic::Prediction>,
    /// Cross-check: fitted on the key arm alone, the prediction for the other arm.
    pub cross: BTreeMap<String, Cross>,
    pub excluded: Vec<String>,
    /// The arms whose published cells the fit used.
    pub fit_arms: Vec<String>,
}

/// One direction of the cross-check for one model.
#[derive(Debug, Clone)]
pub struct Cross {
    /// The arm predicted.
    pub other: String,
    /// Its analytic prediction.
    pub predicted: analytic::Prediction,
    /// The fit on the one arm (what its profile is made of).
    pub fit: Box<Fitted>,
    /// Whether the one-arm target is one the main fit leaves out.
    pub from_excluded: bool,
}

/// Published targets the fit leaves out, and why (docs/sim.md explains them).
pub fn excluded(arm: &str, model: &str) -> Option<&'static str> {
    match (arm, model) {
        ("agent-mini", "sim-35b") => Some(
            "agent-mini stops after 1-4 calls at 35B (0.092) while opencode succeeds (0.896) with a far longer prompt; a hazard that grows with context cannot give the shorter prompt the worse result",
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

/// The analytic fit of every model (and the cross-check).
pub fn fit_all(
    opts: &Options,
    pubd: &published::Published,
    tasks: &[analytic::TaskShape],
) -> Vec<Fitted> {
    let mut out = Vec::new();
    for model in &opts.models {
        let targets = targets_of(pubd, model, &FIT_ARMS, false, opts.residuals.as_ref());
        let (params, loss) = analytic::fit(tasks, &targets);
        let mut predicted = BTreeMap::new();
        for arm in FIT_ARMS {
            predicted.insert(
                arm.to_string(),
                analytic::predict_all(&params, analytic::arm_shape(arm), tasks),
            );
        }
        // the cross-check also fits a target the main fit leaves out: its error is reported
        // as it is
        let mut cross = BTreeMap::new();
        for (a, b) in [("opencode", "agent-mini"), ("agent-mini", "opencode")] {
            // the residuals were measured on the joint profiles: the one-arm fits use the
            // published numbers as they are
            let one = targets_of(pubd, model, &[a], true, None);
            if one.is_empty() {
                continue;
            }
            let (p1, loss1) = analytic::fit(tasks, &one);
            let fit = Fitted {
                model: model.clone(),
                params: p1,
                loss: loss1,
                decode_tps: profiles::fit_decode(model, &p1, pubd, tasks, &[a]),
                predicted: BTreeMap::new(),
                cross: BTreeMap::new(),
                excluded: Vec::new(),
                fit_arms: vec![a.to_string()],
            };
            cross.insert(
                a.to_string(),
                Cross {
                    other: b.to_string(),
                    predicted: analytic::predict_all(&p1, analytic::arm_shape(b), tasks),
                    fit: Box::new(fit),
                    from_excluded: excluded(a, model).is_some(),
                },
            );
        }
        let decode_tps = profiles::fit_decode(model, &params, pubd, tasks, &FIT_ARMS);
        out.push(Fitted {
            model: model.clone(),
            params,
            loss,
            decode_tps,
            predicted,
            cross,
            excluded: FIT_ARMS
                .iter()
                .filter(|a| excluded(a, model).is_some())
                .map(|a| a.to_string())
                .collect(),
            fit_arms: FIT_ARMS.iter().map(|a| a.to_string()).collect(),
        });
    }
    out
}

/// Summaries of a verification run, per (arm, model).
pub fn summarize_run(run_dir: &Path) -> Result<BTreeMap<(String, String), Summary>> {
    let rows = run::resume::read_rows_lenient(&run_dir.join("cells.csv"))?;
    let mut modelled: BTreeMap<String, f64> = BTreeMap::new();
    let mut model_time: BTreeMap<String, f64> = BTreeMap::new();
    if let Ok(text) = std::fs::read_to_string(run_dir.join("attempts.jsonl")) {
        for l in text.lines() {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(l) {
                if let (Some(d), Some(w)) = (
                    v["attempt_dir"].as_str(),
                    v["modelled_wall_seconds"].as_f64(),
                ) {
                    modelled.insert(d.to_string(), w);
                }
                if let (Some(d), Some(m)) = (
                    v["attempt_dir"].as_str(),
                    v["sim_ledger"]["model_seconds"].as_f64(),
                ) {
                    model_time.insert(d.to_string(), m);
                }
            }
        }
    }
    // latest attempt per cell
    let mut latest: BTreeMap<(String, String, String), &lrab_records::CellRow> = BTreeMap::new();
    for r in &rows {
        let k = (r.arm.clone(), r.model.clone(), r.task.clone());
        if latest.get(&k).is_none_or(|p| p.attempt <= r.attempt) {
            latest.insert(k, r);
        }
    }
    let mut cells: BTreeMap<(String, String), Vec<published::Cell>> = BTreeMap::new();
    for ((arm, model, task), r) in latest {
        let crash = matches!(r.failure_mode.as_str(), "crash" | "timeout");
        let mut flags = BTreeMap::new();
        flags.insert("never_engaged".to_string(), r.tool_calls == Some(0));
        flags.insert("early_stop".to_string(), r.score < 0.5 && !crash);
        flags.insert("incomplete_delivery".to_string(), r.score < 0.999);
        cells
            .entry((arm, model))
            .or_default()
            .push(published::Cell {
                task,
                score: r.score,
                wall: modelled.get(&r.attempt_dir).copied(),
                model_time: model_time.get(&r.attempt_dir).copied(),
                tool_calls: r.tool_calls,
                flags,
            });
    }
    Ok(cells
        .into_iter()
        .map(|(k, v)| (k, published::summarize(&v)))
        .collect())
}

/// A cache key over everything an evaluation depends on that can change between two runs of
/// one checkout: the profiles, the simulator's own sources, the task pack, the arms' definitions
/// and the options. (A changed arm binary or runner is not seen: remove the cache then.)
fn eval_key(profiles_text: &str, opts: &Options, arms: &[String]) -> String {
    let mut h = lrab_util::FNV1A_START;
    let mut eat = |bytes: &[u8]| h = lrab_util::fnv1a(h, bytes);
    eat(format!(
        "{profiles_text}|{}|{arms:?}|{:?}|{}|sim {}",
        opts.seed,
        opts.tasks,
        opts.time_scale,
        lrab_sim::SOURCE_HASH
    )
    .as_bytes());
    let mut files = Vec::new();
    tree(&opts.pack_dir, &mut files);
    for arm in arms {
        files.push(opts.arms_dir.join(format!("{arm}.toml")));
    }
    // Paths relative to their folder, so that the same checkout in another place finds its cache.
    for f in files {
        let rel = f
            .strip_prefix(&opts.pack_dir)
            .or_else(|_| f.strip_prefix(&opts.arms_dir))
            .unwrap_or(&f);
        eat(rel.to_string_lossy().as_bytes());
        eat(&std::fs::read(&f).unwrap_or_default());
    }
    format!("{h:016x}")
}

/// Every file under `dir`, in path order.
fn tree(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            tree(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Runs (or reuses) one evaluation of `arms` on the given profiles with the real binaries.
pub fn evaluate(
    opts: &Options,
    profs: Vec<lrab_sim::Profile>,
    profiles_text: &str,
    arms: &[String],
) -> Result<PathBuf> {
    let key = eval_key(profiles_text, opts, arms);
    let out_root = opts.cache.join("evals");
    let dir = out_root.join(&key);
    if dir.join("summary.md").exists() {
        eprintln!("calibrate: reusing the cached evaluation {}", dir.display());
        return Ok(dir);
    }
    if opts.no_verify {
        // report whatever an earlier, interrupted evaluation of these profiles got through
        return Ok(dir);
    }
    let resuming = dir.join("manifest.json").exists();
    if dir.exists() && !resuming {
        std::fs::remove_dir_all(&dir).with_context(|| format!("remove {}", dir.display()))?;
    }
    let sim = lrab_sim::serve(
        "127.0.0.1:0",
        lrab_sim::SimConfig {
            seed: opts.seed,
            pack: Some(opts.pack_dir.clone()),
            profiles: Some(profs),
            time_scale: opts.time_scale,
            ..Default::default()
        },
    )?;
    let spec = lrab_records::RunSpec {
        arms: arms.to_vec(),
        models: opts.models.clone(),
        tasks: opts.tasks.clone().unwrap_or_default(),
        // the cache key of a calibration cell does not depend on the order cells run in
        order: crate::run::matrix::Order::Matrix,
        backend: sim.url(),
        // nothing of a sim run writes in the background: a short quiet-wait suffices
        quiet_poll_ms: 100,
        quiet_stable_ms: 400,
        quiet_max_ms: 5_000,
        sim_seed: opts.seed,
        pack: opts.pack_dir.display().to_string(),
        arms_dir: opts.arms_dir.display().to_string(),
        ..Default::default()
    };
    let session = run::Session {
        out_root,
        run_id: Some(key),
        jobs: opts.jobs,
        backend_wait: Duration::from_secs(30),
        cell_backend_wait: Duration::from_secs(30),
        ..Default::default()
    };
    if resuming {
        eprintln!(
            "calibrate: resuming the interrupted evaluation {}",
            dir.display()
        );
    }
    let summary = run::execute(&spec, &session, resuming.then_some(dir.as_path()))?;
    if !summary.simulated {
        bail!("the verification backend was not recognised as simulated");
    }
    Ok(summary.run_dir)
}

/// The whole calibration. Nothing is written to `profiles_out` / `report_out` unless every
/// step succeeded.
pub fn calibrate(opts: &Options) -> Result<String> {
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
    let mut profs = Vec::new();
    let mut files = Vec::new();
    for f in &fitted {
        let text = profiles::render(f, opts.seed);
        let p =
            lrab_sim::parse_profile(&opts.profiles_out.join(format!("{}.toml", f.model)), &text)?;
        profs.push(p);
        files.push((format!("{}.toml", f.model), text));
    }
    let all_text: String = files.iter().map(|(_, t)| t.as_str()).collect();
    let mut sim_runs = BTreeMap::new();
    let mut run_dirs = Vec::new();
    let mut evals = vec![FIT_ARMS.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    if opts.with_harness {
        evals.push(vec![published::HELD_OUT.0.to_string()]);
    }
    for arms in evals {
        let dir = evaluate(opts, profs.clone(), &all_text, &arms)?;
        if dir.join("cells.csv").exists() {
            sim_runs.extend(summarize_run(&dir)?);
            run_dirs.push(dir);
        }
    }
    // cross-check with the real binaries: per direction, every model's one-arm profile, the
    // other arm run on them (keyed by the arm fitted on, then the model)
    let mut cross_runs: BTreeMap<(String, String), Summary> = BTreeMap::new();
    if opts.cross_check {
        for on in FIT_ARMS {
            let mut cprofs = Vec::new();
            let mut ctext = String::new();
            let mut other = None;
            for f in &fitted {
                if let Some(c) = f.cross.get(on) {
                    let t = profiles::render(&c.fit, opts.seed);
                    cprofs.push(lrab_sim::parse_profile(
                        Path::new(&format!("{}.toml", f.model)),
                        &t,
                    )?);
                    ctext.push_str(&t);
                    other = Some(c.other.clone());
                }
            }
            let Some(other) = other else { continue };
            eprintln!("calibrate: cross-check, fitted on {on}, running {other}");
            let dir = evaluate(opts, cprofs, &ctext, std::slice::from_ref(&other))?;
            if dir.join("cells.csv").exists() {
                for ((arm, model), sum) in summarize_run(&dir)? {
                    if arm == other {
                        cross_runs.insert((on.to_string(), model), sum);
                    }
                }
                run_dirs.push(dir);
            }
        }
    }
    let text = report::render(opts, &pubd, &fitted, &sim_runs, &cross_runs, &run_dirs);
    let next = measured_residuals(&fitted, &sim_runs, &run_dirs, opts);
    std::fs::create_dir_all(&opts.profiles_out)?;
    for (name, t) in &files {
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
                "calibrate: no complete verification of the fitted arms, {} not written",
                out.display()
            ),
        }
    }
    Ok(text)
}

/// The residuals of this run's verification (every fitted (arm, model) over all its tasks),
/// or `None` when the verification is missing or partial.
fn measured_residuals(
    fitted: &[Fitted],
    sim_runs: &BTreeMap<(String, String), Summary>,
    run_dirs: &[PathBuf],
    opts: &Options,
) -> Option<residuals::Residuals> {
    let mut out = Vec::new();
    let n_tasks = opts.tasks.as_ref().map_or(18, |t| t.len());
    for f in fitted {
        for arm in &f.fit_arms {
            if f.excluded.contains(arm) {
                continue;
            }
            let s = sim_runs.get(&(arm.clone(), f.model.clone()))?;
            if s.n < n_tasks {
                return None;
            }
            out.push(residuals::Residual {
                arm: arm.clone(),
                model: f.model.clone(),
                verified: (s.mean * 1000.0).round() / 1000.0,
                predicted: (f.predicted.get(arm)?.score * 1000.0).round() / 1000.0,
            });
        }
    }
    let eval = run_dirs
        .first()
        .and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Some(residuals::Residuals {
        origin: format!(
            "lrab sim calibrate verification (seed {}, {n_tasks} tasks, evaluation {eval}{})",
            opts.seed,
            if opts.residuals.is_some() {
                ", itself a corrected round"
            } else {
                ""
            }
        ),
        residuals: out,
    })
}

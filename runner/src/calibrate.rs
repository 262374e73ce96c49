//! The verification's cells, run for `lrab sim calibrate` (the fit, its report and the
//! putting-together of the runs are `lrab-calibrate`'s): the real arms run through the runner
//! against the simulator serving the fitted profiles, once per seed, cached by everything an
//! evaluation depends on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use lrab_calibrate::Options;

use crate::run;

/// A cache key over everything an evaluation depends on that can change between two runs of
/// one checkout: the profiles, the simulator's own sources, the task pack, the arms' definitions
/// and the options. (A changed arm binary or runner is not seen: remove the cache then.)
fn eval_key(profile_text: &str, opts: &Options, arms: &[String], seed: u64) -> String {
    let mut h = lrab_util::FNV1A_START;
    let mut eat = |bytes: &[u8]| h = lrab_util::fnv1a(h, bytes);
    eat(format!(
        "{profile_text}|{}|{arms:?}|{:?}|{}|sim {}",
        seed,
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

/// Runs (or reuses) one evaluation of `arms` on one model's profile with the real binaries, at
/// one seed of the simulator (one model at a time, so that a refit of one model reruns only
/// its cells): `lrab_calibrate::Evaluate`.
pub fn evaluate(
    opts: &Options,
    prof: lrab_sim::Profile,
    profile_text: &str,
    arms: &[String],
    seed: u64,
) -> Result<PathBuf> {
    let key = eval_key(profile_text, opts, arms, seed);
    let model = prof.name.clone();
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
            seed,
            pack: Some(opts.pack_dir.clone()),
            profiles: Some(vec![prof]),
            time_scale: opts.time_scale,
            ..Default::default()
        },
    )?;
    let spec = lrab_records::RunSpec {
        arms: arms.to_vec(),
        models: vec![model],
        tasks: opts.tasks.clone().unwrap_or_default(),
        // the cache key of a calibration cell does not depend on the order cells run in
        order: crate::run::matrix::Order::Matrix,
        backend: sim.url(),
        // nothing of a sim run writes in the background: a short quiet-wait suffices
        quiet_poll_ms: 100,
        quiet_stable_ms: 400,
        quiet_max_ms: 5_000,
        sim_seed: seed,
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

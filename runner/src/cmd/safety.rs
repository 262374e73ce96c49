//! `lrab safety`: the adversarial probe suite of the harness's safety rings (see docs/safety.md).
//! By default every probe is issued by the simulated adversarial model through the real
//! `lrab-harness` binary; `--executor direct` judges the classifier and sandbox alone.

use anyhow::{bail, Result};
use clap::Parser;
use std::path::PathBuf;

use super::Exit;
use crate::attack_harness::AttackRunner;
use crate::run::probe_harness::HarnessExecutor;

#[derive(Parser, Debug)]
pub struct Args {
    #[command(flatten)]
    pub inner: lrab_safety::SafetyArgs,
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

pub fn run(a: Args) -> Result<Exit> {
    if let Some(dir) = &a.attacks {
        return run_attacks(&a, dir);
    }
    match a.executor {
        Executor::Direct => Ok(code(lrab_safety::run_safety_cli(&a.inner)?)),
        Executor::Harness => {
            let bin = harness_bin(&a)?;
            Ok(code(lrab_safety::run_safety_cli_with(&a.inner, |force| {
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
fn run_attacks(a: &Args, dir: &std::path::Path) -> Result<Exit> {
    if a.executor != Executor::Harness {
        bail!("--attacks runs through the harness only (not --executor direct)");
    }
    let force = lrab_safety::forced_backend(&a.inner)?;
    if force.is_none() && lrab_safety::Sandbox::detect() == lrab_safety::Sandbox::None {
        eprintln!("lrab safety: NO CONFINEMENT — the attacks cannot be run safely; aborting");
        return Ok(Exit::Usage);
    }
    let all = lrab_safety::load_attacks(dir)?;
    let chosen: Vec<_> = all
        .into_iter()
        .filter(|x| {
            a.inner.only.is_empty()
                || a.inner
                    .only
                    .iter()
                    .any(|o| x.id.starts_with(o.as_str()) || x.kind == *o)
        })
        .collect();
    if chosen.is_empty() {
        bail!("--only {}: no attack matches", a.inner.only.join(","));
    }
    let mut r = AttackRunner::new(harness_bin(a)?, force)?;
    eprintln!("lrab safety: {} attacks via {}", chosen.len(), r.describe());
    let report = r.run_all(&chosen, true)?;
    lrab_util::out!("{}", report.render());
    if let Some(p) = &a.inner.json {
        lrab_util::write_atomic(p, serde_json::to_string_pretty(&report)?.as_bytes())
            .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
    }
    Ok(if report.passed() {
        Exit::Ok
    } else {
        Exit::Failures
    })
}

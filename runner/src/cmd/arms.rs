//! `lrab arms list|check|install`: the arm files, whether each arm is installed (and at the
//! pinned version), and installing the pinned versions into the per-user arms cache.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Parser, Subcommand};

use super::Exit;
use crate::run::arms::{self, check, Arm};
use crate::run::install::{self, steps};

#[derive(Parser, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
    /// Folder of arm files (default: LRAB_ARMS or the suite's arms/).
    #[arg(long, global = true)]
    pub arms_dir: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Every arm file with its program, API and whether it is installed.
    List,
    /// Validate the arm files and probe the named arms (default all): program found, install
    /// not failed, version command prints the pinned version. Exit 1 if one is not ok.
    Check { names: Vec<String> },
    /// Install the pinned versions of the named arms (or `all`) into the arms cache
    /// (LRAB_ARMS_CACHE, else ~/.cache/lrab/arms). Idempotent: a current install is left alone.
    Install {
        #[arg(required = true, value_name = "NAME|all")]
        names: Vec<String>,
    },
}

pub fn run(a: Args) -> Result<Exit> {
    let dir = a.arms_dir.unwrap_or_else(arms::default_dir);
    let all = arms::load_dir(&dir)?;
    match a.command {
        Sub::List => {
            lrab_util::outln!(
                "{:<28} {:<16} {:<6} {:<10} program",
                "arm",
                "api",
                "proxy",
                "installed"
            );
            for x in &all {
                let api = serde_json::to_value(x.api)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                lrab_util::outln!(
                    "{:<28} {:<16} {:<6} {:<10} {}",
                    x.name,
                    api,
                    x.proxy,
                    if x.locate().is_some() { "yes" } else { "no" },
                    x.program
                );
            }
            Ok(Exit::Ok)
        }
        Sub::Check { names } => {
            let sel = if names.is_empty() {
                all.clone()
            } else {
                arms::select(&all, &names)?
            };
            let mut bad = 0;
            for x in &sel {
                let c = check::check(x);
                if c.verdict != check::Verdict::Ok {
                    bad += 1;
                }
                lrab_util::outln!("{:<8} {:<28} {}", c.verdict.tag(), c.name, c.detail);
            }
            Ok(if bad == 0 { Exit::Ok } else { Exit::Failures })
        }
        Sub::Install { names } => install_cmd(&all, &names),
    }
}

fn install_cmd(all: &[Arm], names: &[String]) -> Result<Exit> {
    let everything = names.iter().any(|n| n == "all");
    if everything && names.len() > 1 {
        bail!("`all` installs every arm; give it alone");
    }
    let sel: Vec<Arm> = if everything {
        all.to_vec()
    } else {
        arms::select(all, names)?
    };
    let root = install::cache_root();
    eprintln!("arms cache: {}", root.display());
    let mut done: Vec<(String, String)> = Vec::new();
    let (mut new, mut already, mut failed, mut skipped) = (0, 0, 0, 0);
    for arm in &sel {
        let Some(spec) = &arm.install else {
            // Built with the suite, or on no registry: say so; an explicit name that cannot
            // be found is a failure, `all` just skips it.
            match arm.locate() {
                Some(p) => lrab_util::outln!(
                    "ok       {:<28} nothing to install (found {})",
                    arm.name,
                    p.display()
                ),
                None if everything => {
                    skipped += 1;
                    lrab_util::outln!(
                        "skipped  {:<28} no [install] table: {}",
                        arm.name,
                        arm.install_hint
                    );
                }
                None => {
                    failed += 1;
                    lrab_util::outln!(
                        "failed   {:<28} no [install] table and not found: {}",
                        arm.name,
                        arm.install_hint
                    );
                }
            }
            continue;
        };
        let key = spec.dir(&root).display().to_string();
        if let Some((other, _)) = done.iter().find(|(_, k)| *k == key) {
            lrab_util::outln!("ok       {:<28} same install as {other}", arm.name);
            continue;
        }
        done.push((arm.name.clone(), key));
        let arm_dir = arm.file.parent().unwrap_or(std::path::Path::new("."));
        let name = arm.name.clone();
        let t0 = std::time::Instant::now();
        let mut say = |step: &str| eprintln!("  {name}: {step} …");
        let out = steps::install(&arm.name, spec, arm_dir, &arm.version_args, &root, &mut say);
        match out {
            steps::Outcome::Already(bin) => {
                already += 1;
                lrab_util::outln!(
                    "ok       {:<28} already installed: {} ({})",
                    arm.name,
                    spec.requirement(),
                    bin.display()
                );
            }
            steps::Outcome::Installed(bin) => {
                new += 1;
                lrab_util::outln!(
                    "ok       {:<28} installed {} in {:.0} s ({})",
                    arm.name,
                    spec.requirement(),
                    t0.elapsed().as_secs_f64(),
                    bin.display()
                );
            }
            steps::Outcome::Failed { step, error, log } => {
                failed += 1;
                lrab_util::outln!(
                    "failed   {:<28} install of {} failed at step '{step}': {error} (log: {})",
                    arm.name,
                    spec.requirement(),
                    log.display()
                );
            }
        }
    }
    let mut summary = format!("{new} installed, {already} already installed");
    if skipped > 0 {
        summary.push_str(&format!(", {skipped} skipped (no [install] table)"));
    }
    if failed > 0 {
        summary.push_str(&format!(", {failed} failed"));
    }
    if new == 0 && failed == 0 {
        summary.push_str(" — nothing to do");
    }
    lrab_util::outln!("{summary}");
    Ok(if failed == 0 {
        Exit::Ok
    } else {
        Exit::Failures
    })
}

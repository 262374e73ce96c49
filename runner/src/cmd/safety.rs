//! `lrab safety`: the adversarial probe suite of the harness's safety rings (see docs/safety.md).
//! By default every probe is issued by the simulated adversarial model through the real
//! `lrab-harness` binary; `--executor direct` judges the classifier and sandbox alone.

use anyhow::{bail, Result};
use clap::Parser;
use std::path::PathBuf;

use super::Exit;
use crate::probe_harness::HarnessExecutor;

#[derive(Parser, Debug)]
pub struct Args {
    #[command(flatten)]
    pub inner: lrab_safety::cli::SafetyArgs,
    /// Who issues the probes.
    #[arg(long, value_enum, default_value_t = Executor::Harness)]
    pub executor: Executor,
    /// The lrab-harness binary (default: where the harness arm finds it — $LRAB_HARNESS_BIN,
    /// next to lrab, or on PATH).
    #[arg(long)]
    pub harness_bin: Option<PathBuf>,
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
    match a.executor {
        Executor::Direct => Ok(code(lrab_safety::cli::run(&a.inner)?)),
        Executor::Harness => {
            let bin = match a.harness_bin {
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
            let bin = bin.canonicalize()?;
            Ok(code(lrab_safety::cli::run_with(&a.inner, |force| {
                HarnessExecutor::new(bin, force)
            })?))
        }
    }
}

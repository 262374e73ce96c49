//! `lrab tau2 …`: the τ²-bench adapter (see docs/tau2.md). `--backend sim` (and likewise
//! `--user-backend sim`, `--judge-backend sim`) starts the simulated backend in-process, so a run goes
//! end to end without a GPU; such results are labelled simulated.

use anyhow::Result;
use clap::Parser;

use super::Exit;
use lrab_tau2::{Tau2Args, Tau2Cmd};

#[derive(Parser, Debug)]
pub struct Args {
    #[command(flatten)]
    pub inner: Tau2Args,
}

/// Replaces every `sim` backend of a run with the URL of one in-process simulated server.
fn start_sim_if_asked(args: &mut Tau2Args) -> Result<Option<lrab_sim::SimHandle>> {
    let Tau2Cmd::Run(r) = &mut args.cmd else {
        return Ok(None);
    };
    let is_sim = |s: &str| s == "sim";
    let wants = is_sim(&r.backend)
        || r.user_backend.as_deref().is_some_and(is_sim)
        || r.judge_backend.as_deref().is_some_and(is_sim);
    if !wants {
        return Ok(None);
    }
    let handle = lrab_sim::serve("127.0.0.1:0", lrab_sim::SimConfig::default())?;
    let url = handle.url();
    eprintln!(
        "*** SIMULATED BACKEND (lrab-sim at {url}): these results are NOT results of real models ***"
    );
    for slot in [
        Some(&mut r.backend),
        r.user_backend.as_mut(),
        r.judge_backend.as_mut(),
    ]
    .into_iter()
    .flatten()
    {
        if slot == "sim" {
            *slot = url.clone();
        }
    }
    Ok(Some(handle))
}

pub fn run(mut a: Args) -> Result<Exit> {
    let sim = start_sim_if_asked(&mut a.inner)?;
    let mut out = lrab_util::stdout();
    let result = lrab_tau2::run_cli(&a.inner, &mut out);
    drop(sim);
    result.map(|()| Exit::Ok)
}

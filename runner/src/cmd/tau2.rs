//! `lrab tau2 …`: the τ²-bench adapter (see docs/tau2.md). `--backend sim` (and likewise
//! `--user-backend sim`, `--judge-backend sim`, and `tau2 mcp --user-backend sim`) starts the
//! simulated backend in-process, so a run goes end to end without a GPU; such results are
//! labelled simulated.

use anyhow::Result;
use clap::Parser;

use super::Exit;
use lrab_tau2::{Tau2Args, Tau2Cmd};

#[derive(Parser, Debug)]
pub struct Args {
    #[command(flatten)]
    pub inner: Tau2Args,
}

/// Replaces every `sim` backend of a run (or of an MCP server's user simulator) with the URL of
/// one in-process simulated server.
fn start_sim_if_asked(args: &mut Tau2Args) -> Result<Option<lrab_sim::SimHandle>> {
    let mut slots: Vec<&mut String> = match &mut args.cmd {
        Tau2Cmd::Run(r) => [
            Some(&mut r.backend),
            r.user_backend.as_mut(),
            r.judge_backend.as_mut(),
        ]
        .into_iter()
        .flatten()
        .collect(),
        Tau2Cmd::Mcp(m) => vec![&mut m.user_backend],
        _ => return Ok(None),
    };
    slots.retain(|s| s.as_str() == "sim");
    if slots.is_empty() {
        return Ok(None);
    }
    let handle = lrab_sim::serve("127.0.0.1:0", lrab_sim::SimConfig::default())?;
    let url = handle.url();
    // stderr: on `tau2 mcp` stdout is the protocol channel
    eprintln!(
        "*** SIMULATED BACKEND (lrab-sim at {url}): these results are NOT results of real models ***"
    );
    for slot in slots {
        *slot = url.clone();
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

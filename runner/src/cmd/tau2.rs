//! `lrab tau2 …`: the τ²-bench adapter (see docs/tau2.md). `--backend sim` (and likewise
//! `--user-backend sim`, `--judge-backend sim`, and `tau2 mcp --user-backend sim`) starts the
//! simulated backend in-process, so a run goes end to end without a GPU; such results are
//! labelled simulated.

use std::time::Duration;

use anyhow::{bail, Result};
use clap::Parser;

use super::Exit;
use crate::run::arms;
use crate::run::tau2_arm::{check_mcp, ArmAgent};
use lrab_tau2::{AgentKind, Tau2Args, Tau2Cmd};

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

/// `--agent <arm>`: the arm file, refused when it takes no MCP server (before anything runs).
fn arm_agent(a: &Tau2Args) -> Result<Option<ArmAgent>> {
    let Tau2Cmd::Run(r) = &a.cmd else {
        return Ok(None);
    };
    let AgentKind::Arm(name) = &r.agent else {
        return Ok(None);
    };
    let all = arms::load_dir(&arms::default_dir())?;
    let arm = arms::select(&all, std::slice::from_ref(name))?
        .pop()
        .expect("select returns the arm it names");
    check_mcp(&arm)?;
    // what the arm's proxy cannot honour yet is refused rather than run under other settings
    if r.temperature != 0.0 {
        bail!(
            "--agent {name}: an arm samples at what its proxy pins (temperature 0) or at what it sends itself, so --temperature {} would hold for the customer only; not supported yet",
            r.temperature
        );
    }
    if r.api != lrab_tau2::Api::Ollama {
        bail!("--agent {name}: command-line arms on τ² need an Ollama-API backend (--api ollama) for now");
    }
    if r.arm_timeout.is_nan() || r.arm_timeout <= 0.0 {
        bail!("--arm-timeout must be a positive number of seconds");
    }
    Ok(Some(ArmAgent {
        arm,
        model: r.model.clone(),
        backend_url: r.backend.clone(),
        num_ctx: r.num_ctx,
        think: r.think,
        attempts: r.out.join("attempts"),
        deadline: Duration::from_secs_f64(r.arm_timeout),
    }))
}

pub fn run(mut a: Args) -> Result<Exit> {
    let mut arm = arm_agent(&a.inner)?;
    let sim = start_sim_if_asked(&mut a.inner)?;
    if let (Some(arm), Tau2Cmd::Run(r)) = (arm.as_mut(), &a.inner.cmd) {
        arm.backend_url = r.backend.clone();
    }
    let mut out = lrab_util::stdout();
    let result = lrab_tau2::run_cli_with(
        &a.inner,
        &mut out,
        arm.as_mut().map(|x| x as &mut dyn lrab_tau2::ExternalAgent),
    );
    drop(sim);
    result.map(|()| Exit::Ok)
}

//! `lrab sim serve` (the simulated backend as a standalone server) and `lrab sim calibrate`
//! (fitting its profiles); see docs/sim.md.

use anyhow::Result;
use clap::{Parser, Subcommand};

use super::Exit;

#[derive(Parser, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: SimCommand,
}

#[derive(Subcommand, Debug)]
pub enum SimCommand {
    /// Serve the simulated models on the Ollama API until Ctrl-C.
    Serve(lrab_sim::SimArgs),
    /// Fit the profiles to the published opencode / agent-mini cells and verify them with the
    /// real binaries (writes sim/profiles/*.toml and docs/sim-calibration.md).
    Calibrate(super::calibrate::Args),
}

pub fn run(a: Args) -> Result<Exit> {
    match a.command {
        SimCommand::Serve(s) => lrab_sim::run_cli(&s).map(|()| Exit::Ok),
        SimCommand::Calibrate(c) => super::calibrate::run(c),
    }
}

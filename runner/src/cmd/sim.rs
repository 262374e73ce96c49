//! `lrab sim serve`: the simulated backend as a standalone server (see docs/sim.md).

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
    Serve(lrab_sim::cli::SimArgs),
}

pub fn run(a: Args) -> Result<Exit> {
    match a.command {
        SimCommand::Serve(s) => lrab_sim::cli::run(&s).map(|()| Exit::Ok),
    }
}

//! `lrab`: the LRAB command line. This file only dispatches; each subcommand is a module under
//! `cmd/`. Exit codes: 0 ok, 1 check failures, 2 usage or validation errors.

mod cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "lrab",
    version,
    about = "Local Real-task Agent Benchmark suite"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Inspect, materialize, check and import task packs.
    Tasks(cmd::tasks::Args),
    /// Score a workdir against a task and write score.json into it.
    Score(cmd::score::Args),
    /// Write a held-out variant of a generated task for another seed.
    Generate(cmd::generate::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Tasks(a) => cmd::tasks::run(a),
        Command::Score(a) => cmd::score::run(a),
        Command::Generate(a) => cmd::generate::run(a),
    };
    match result {
        Ok(code) => code.into(),
        Err(e) => {
            eprintln!("error: {e:#}");
            cmd::Exit::Usage.into()
        }
    }
}

//! `lrab`: the LRAB command line as a library, so the binary (`main.rs`) is one call to [`main`].
//! This file only dispatches; each subcommand is a module under `cmd/`, the run machinery is
//! under `run/`. Exit codes: 0 ok, 1 check failures, 2 usage or validation errors.

mod calibrate;
mod cmd;
mod run;
mod safety_arms;

use std::process::ExitCode;

/// The key the simulated backend keeps an attempt's ledger under (each attempt talks to the sim
/// under `/lrab-cell/<key>/`; the ledger is `/lrab-sim/ledger/<key>`), from the attempt folder:
/// how a test or a tool finds which backend served an attempt.
pub use run::sim_clock::cell_key as sim_cell_key;

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
    /// Run (or resume) a matrix of arms × models × tasks into results/<run-id>/.
    Run(cmd::run::Args),
    /// Run (or resume) a batch-matched ablation: an arm and its variants interleaved cell by
    /// cell within each of k repeats.
    Ablate(cmd::ablate::Args),
    /// Write the cell list of a matrix (what --shard k/n slices).
    Plan(cmd::plan::Args),
    /// Merge run folders of one matrix (e.g. shards) into one.
    Merge(cmd::merge::Args),
    /// Run the proxy: records every model request (proxy.jsonl) and, unless --record-only,
    /// normalizes sampling (temperature 0, thinking off, fixed context).
    Proxy(cmd::proxy::Args),
    /// List the arm files and check which arms are installed.
    Arms(cmd::arms::Args),
    /// Check backend, models, arms, python and pytest.
    Doctor(cmd::doctor::Args),
    /// The simulated backend (simulated models behind the Ollama API).
    Sim(cmd::sim::Args),
    /// Run the safety-ring probe suite; non-zero exit on any leak.
    Safety(cmd::safety::Args),
    /// Statistics, tables, figures and report.md/report.html from cells.csv and upstream CSVs.
    Analyze(cmd::analyze::Args),
    /// τ²-bench airline/retail/mock: run conversations, replay gold actions, grade results.
    Tau2(cmd::tau2::Args),
    /// The published data files: fetch them from where they are published, or say where each is.
    Data(cmd::data::Args),
    /// Microbenchmarks of a backend: `bench prefill` measures the prefill cost curve.
    Bench(cmd::bench::Args),
}

/// Parses the process's command line and runs the subcommand; the exit code follows the table
/// above.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Tasks(a) => cmd::tasks::run(a),
        Command::Score(a) => cmd::score::run(a),
        Command::Generate(a) => cmd::generate::run(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Ablate(a) => cmd::ablate::run(a),
        Command::Plan(a) => cmd::plan::run(a),
        Command::Merge(a) => cmd::merge::run(a),
        Command::Proxy(a) => cmd::proxy::run(a),
        Command::Arms(a) => cmd::arms::run(a),
        Command::Doctor(a) => cmd::doctor::run(a),
        Command::Sim(a) => cmd::sim::run(a),
        Command::Safety(a) => cmd::safety::run(a),
        Command::Tau2(a) => cmd::tau2::run(a),
        Command::Analyze(a) => cmd::analyze::run(a),
        Command::Data(a) => cmd::data::run(a),
        Command::Bench(a) => cmd::bench::run(a),
    };
    match result {
        Ok(code) => code.into(),
        Err(e) => {
            // each cause once: many errors quote their cause and also return it as source()
            eprintln!("error: {}", lrab_util::error_chain(e.as_ref()));
            cmd::Exit::Usage.into()
        }
    }
}
